"""The CUDA backend's GPU check (run by scripts/gpu-cuda-backend.sh; unrun so far).

    python scripts/gpu_cuda_backend.py --out DIR [--size 4096] [--budget 420]

Steps, each recorded in DIR/results.json (and a line of DIR/summary.tsv):

1. compile: kernels/tc_gemm.cu by NVRTC for the GPU's architecture.
2. equal-small: every covered profile (tests/cuda_backend_support.py's
   COVERED list, 38 rows, restated here) on special-heavy and raw random words, 48 x
   40 x 4 instructions: the kernel's words against the host build's and the
   CPU engine's (tcprobe.models.gemm.gemm_words).
3. product-<model>: a SIZE^3 bf16 product (randn operands, C = +0) under
   the B200 tcgen05 and H100 wgmma bf16 -> f32 models: the kernel's time
   (CUDA events, best of up to 3 after a warm-up), its rate in multiply-adds
   per second, torch's native bf16 matmul (cuBLAS) on the same operands,
   and the kernel's words on two 64 x 64 sub-blocks of D (corner and far
   corner) against the CPU engine's on the same rows and columns.

Stops starting new steps past --budget seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import traceback
from pathlib import Path

import numpy as np

ROWS = [  # (GPU, arch, family, input, D): tests/cuda_backend_support.py's COVERED, restated
    *[("A100", "sm_80", "mma", f, d) for f in ("bf16", "f16", "tf32") for d in ("f32", "f16")],
    *[("H100", "sm_90", "mma", f, d) for f in ("bf16", "f16", "tf32") for d in ("f32", "f16")],
    *[("H100", "sm_90", "wgmma", f, d) for f in ("bf16", "f16", "tf32", "e4m3", "e5m2")
      for d in ("f32", "f16")],
    *[("B200", "sm_100a", "mma", f, d) for f in ("bf16", "f16", "tf32") for d in ("f32", "f16")],
    ("B200", "sm_100a", "tcgen05", "bf16", "f32"), ("B200", "sm_100a", "tcgen05", "f16", "f32"),
    ("B200", "sm_100a", "tcgen05", "f16", "f16"), ("B200", "sm_100a", "tcgen05", "tf32", "f32"),
    *[("B200", "sm_100a", "tcgen05", f, d) for f in ("e4m3", "e5m2") for d in ("f32", "f16")],
    ("H100", "sm_90", "wgmma", "e4m3xe5m2", "f32"), ("B200", "sm_100a", "tcgen05", "e4m3xe5m2", "f16"),
]
PRODUCT_MODELS = [("B200", "sm_100a", "tcgen05"), ("H100", "sm_90", "wgmma")]


def model_of(gpu, arch, family, fmt, d):
    from tcprobe.models import registry
    from tcprobe.models.datapath import datapath_for

    a, _, b = fmt.partition("x")
    return registry.auto(datapath_for(arch, family, a, b or a, d), gpu)


def raw_words(rng, fmt, shape):
    from tcprobe.models.formats import get_format

    return rng.integers(0, 1 << get_format(fmt).width, shape, dtype=np.uint64).astype(np.uint32)


def special_words(rng, fmt, shape):
    """Finite words near one with a tenth NaN, +-Inf, +-0 and subnormals."""
    from tcprobe.models.formats import get_format

    f = get_format(fmt)
    e = rng.integers(f.bias - 6, f.bias + 7, shape)
    w = (rng.integers(0, 2, shape) << (f.width - 1)) | (e << (f.frac_bits + f.drop_bits)) | (
        rng.integers(0, 1 << f.frac_bits, shape) << f.drop_bits)
    top = (1 << f.exp_bits) - 1
    pool = [0, 1 << (f.width - 1), 1 << f.drop_bits, (top << (f.frac_bits + f.drop_bits)),
            (top << (f.frac_bits + f.drop_bits)) | (1 << (f.width - 1)),
            ((top << f.frac_bits) | ((1 << f.frac_bits) - 1)) << f.drop_bits]
    hit = rng.random(shape) < 0.1
    w[hit] = rng.choice(pool, int(hit.sum()))
    return w.astype(np.uint32)


def to_torch(torch, words, dev):
    return torch.from_numpy(words.view(np.int32)).to(dev)


def step_equal_small(torch, dev) -> dict:
    from tcprobe.backends import cuda_gemm
    from tcprobe.models import gemm

    rng = np.random.default_rng(38)
    rows = []
    try:  # the host build needs g++; without it the kernel is compared with the engine only
        from tcprobe.backends import host_build

        host_build.build()
        have_host = True
    except Exception:
        have_host = False
    for row in ROWS:
        mdl = model_of(*row)
        dp = mdl.datapath
        for kind, gen in (("special", special_words), ("raw", raw_words)):
            a = gen(rng, dp.a_type, (48, 4 * dp.k))
            b = gen(rng, dp.b_type, (4 * dp.k, 40))
            c = gen(rng, dp.d_type, (48, 40))
            gpu = cuda_gemm.gemm_words_cuda(mdl, *(to_torch(torch, x, dev) for x in (a, b, c)),
                                            0, 4)
            torch.cuda.synchronize()
            gpu = gpu.cpu().numpy().view(np.uint32)
            cpu = gemm.gemm_words(mdl, a, b, c, (0, 4))
            host = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 4) if have_host else cpu
            rows.append({"model": mdl.name, "datapath": dp.id, "operands": kind,
                         "words": int(cpu.size), "gpu_vs_engine_differ": int((gpu != cpu).sum()),
                         "host_vs_engine_differ": int((host != cpu).sum()) if have_host else None})
    ok = all(r["gpu_vs_engine_differ"] == 0 and not r["host_vs_engine_differ"] for r in rows)
    return {"status": "ok" if ok else "fail", "rows": rows,
            "figure": f"{sum(r['gpu_vs_engine_differ'] for r in rows)} of "
                      f"{sum(r['words'] for r in rows)} words differ"}


def cuda_time(torch, fn, repeat: int, limit_s: float) -> list[float]:
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
        if sum(times) > limit_s:
            break
    return times


def step_product(torch, dev, gpu, arch, family, size: int, jobs: int) -> dict:
    from tcprobe.backends import cuda_gemm
    from tcprobe.models import gemm

    mdl = model_of(gpu, arch, family, "bf16", "f32")
    dp = mdl.datapath
    g = torch.Generator(device=dev).manual_seed(4096)
    a16 = torch.randn(size, size, device=dev, dtype=torch.bfloat16, generator=g)
    b16 = torch.randn(size, size, device=dev, dtype=torch.bfloat16, generator=g)
    a = a16.view(torch.int16).to(torch.int32) & 0xFFFF
    b = b16.view(torch.int16).to(torch.int32) & 0xFFFF
    c = torch.zeros(size, size, device=dev, dtype=torch.int32)
    tiles = size // dp.k
    run = lambda: cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles)  # noqa: E731
    t0 = time.perf_counter()
    d = run()  # warm-up (loads the module)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    times = cuda_time(torch, run, 3, 60.0)
    native = cuda_time(torch, lambda: a16 @ b16, 10, 10.0)
    macs = float(size) ** 3
    best = min(times)
    checks = []
    a_np, b_np = (x.cpu().numpy().astype(np.uint32) for x in (a, b))
    for r0, c0 in ((0, 0), (size - 64, size - 64)):
        want = gemm.gemm_words(mdl, a_np[r0:r0 + 64], b_np[:, c0:c0 + 64],
                               np.zeros((64, 64), np.uint32), (0, tiles), jobs=jobs)
        got = d[r0:r0 + 64, c0:c0 + 64].cpu().numpy().view(np.uint32)
        checks.append({"rows": [r0, r0 + 64], "cols": [c0, c0 + 64],
                       "differ": int((got != want).sum()), "words": 64 * 64})
    ok = all(x["differ"] == 0 for x in checks)
    return {"status": "ok" if ok else "fail", "model": mdl.name, "datapath": dp.id,
            "size": size, "first_call_s": first, "kernel_s": times, "native_bf16_matmul_s": native,
            "emulated_macs_per_s": macs / best, "native_over_kernel": min(native) / best,
            "subblocks": checks,
            "figure": f"{best:.3f} s ({macs / best / 1e9:.1f} G MAC/s), cuBLAS bf16 "
                      f"{min(native) * 1e3:.2f} ms; sub-blocks: "
                      f"{sum(x['differ'] for x in checks)} of {64 * 64 * len(checks)} differ"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--budget", type=float, default=420.0)
    ap.add_argument("--jobs", type=int, default=16)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    results: dict = {"machine": platform.node(), "steps": {}}
    summary = []

    def record(name, fn):
        if time.perf_counter() - t_start > args.budget:
            res = {"status": "skipped", "figure": "past the time budget"}
        else:
            t0 = time.perf_counter()
            try:
                res = fn()
            except Exception as e:  # recorded, and the next step runs
                res = {"status": "error", "figure": f"{type(e).__name__}: {e}",
                       "trace": traceback.format_exc()}
            res["seconds"] = time.perf_counter() - t0
        results["steps"][name] = res
        summary.append(f"{name}\t{res['status']}\t{res.get('seconds', 0):.1f}\t{res['figure']}")
        (args.out / "results.json").write_text(json.dumps(results, indent=1))
        (args.out / "summary.tsv").write_text("\n".join(summary) + "\n")
        print(summary[-1], flush=True)

    import torch

    from tcprobe.backends import cuda_gemm
    from tcprobe.devices.cuda import nvrtc

    dev = torch.device("cuda", 0)
    major, minor = torch.cuda.get_device_capability(dev)
    results.update(gpu=torch.cuda.get_device_name(dev), capability=f"sm_{major}{minor}",
                   torch=torch.__version__, nvrtc=".".join(map(str, nvrtc.version())))

    def compile_step():
        cub = cuda_gemm.compile_kernel(f"sm_{major}{minor}", use_cache=False)
        return {"status": "ok", "cubin_sha256": cub.sha256, "figure": f"{cub.seconds:.2f} s"}

    record("compile", compile_step)
    record("equal-small", lambda: step_equal_small(torch, dev))
    for gpu, arch, family in PRODUCT_MODELS:
        record(f"product-{gpu.lower()}-{family}",
               lambda g=gpu, a=arch, f=family: step_product(torch, dev, g, a, f, args.size,
                                                            args.jobs))


if __name__ == "__main__":
    main()
