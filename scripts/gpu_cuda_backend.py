"""The CUDA backend's GPU check (run by scripts/gpu-cuda-backend.sh; unrun on a GPU so far).

    python scripts/gpu_cuda_backend.py --out DIR [--size 4096] [--budget 420]
    python scripts/gpu_cuda_backend.py --out DIR --host --rows 3 --size 128 --tiny

Steps, each recorded in DIR/results.json (and a line of DIR/summary.tsv):

1. compile: kernels/tc_gemm.cu by NVRTC for the GPU's architecture.
2. engine-refs: the CPU engine's words for every small case below, computed
   in worker processes (each numba configuration compiles once there):
   models.gemm.gemm_words for the float and integer rows, the
   BlockScaledModel's and MfmaModel's own evaluate, tile by tile, for the
   block-scaled and AMD rows (the sparse rows with models.gemm's masked decoders).
3. equal-small: every covered row (tests/cuda_backend_support.py's COVERED,
   INTEGER, SCALED, SPARSE and SPLIT lists, restated here, and the first AMD
   row of each design: the tc_gemm_wide kernel) on special-heavy and raw
   random words (integer: the smallest and largest values, and raw;
   block-scaled: special scales and raw scales; sparse: half of K kept),
   48 x 40 x 4 instructions: the kernel's words against the host build's
   and the CPU engine's.
4. product-<model>: a SIZE^3 bf16 product (randn operands, C = +0) under
   the B200 tcgen05 and H100 wgmma bf16 -> f32 models: the kernel's time
   (CUDA events, best of up to 3 after a warm-up), its rate in multiply-adds
   per second, torch's native bf16 matmul (cuBLAS) on the same operands,
   and the kernel's words on two 64 x 64 sub-blocks of D (corner and far
   corner) against the CPU engine's on the same rows and columns.
5. transformer: a small pre-LN transformer of torch's own modules
   (nn.Embedding, nn.LayerNorm, nn.MultiheadAttention with need_weights=True
   so that attention is bmm products, nn.Linear, nn.GELU), bf16, random
   weights, one forward and backward (cross-entropy) a step: the time per
   step under emulate(gpu="B200", backend="cuda") (its tensors on the CPU,
   the chains on the GPU), natively on the CPU and natively on the GPU;
   every routed 2-D product recorded and redone by the CPU engine (backend
   None), its words compared.
6. transformer-on-gpu: the same model with its weights and tokens on the GPU
   under emulate(gpu="B200", backend="cuda") (the words read on the host, D
   written back to the GPU), its products compared the same way.

``--host``: no GPU; the host build stands in for the kernel (steps 1 and the
GPU timings are skipped, the figures are the host build's, labelled so).
This is how the tests run the script (tests/test_cuda_backend_script.py).
Stops starting new steps past --budget seconds.
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
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
    *[("B200", "sm_100a", "tcgen05", f, d) for f in ("e2m3", "e3m2", "e2m1") for d in ("f32", "f16")],
    *[("B200", "sm_100a", "tcgen05", f, d) for f, d in (
        ("e4m3xe2m1", "f32"), ("e2m1xe5m2", "f16"), ("e2m3xe3m2", "f32"), ("e3m2xe2m1", "f16"),
        ("e2m1xe2m3", "f32"))],
    ("RTX5090", "sm_120a", "mma", "e2m1", "f32"), ("RTX5090", "sm_120a", "mma", "e2m3xe4m3", "f16"),
]
# (GPU, datapath id): the integer and block-scaled rows the tests hold the host
# build to (tests/cuda_backend_support.py, in the tree the GPU run is given),
# one list in one place
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from cuda_backend_support import AMD, model_chain  # noqa: E402
from cuda_backend_support import INTEGER as INTEGER_ROWS  # noqa: E402
from cuda_backend_support import SCALED as SCALED_ROWS  # noqa: E402
from cuda_backend_support import SPARSE as SPARSE_ROWS  # noqa: E402
from cuda_backend_support import SPLIT as SPLIT_ROWS  # noqa: E402

AMD_ROWS = AMD[:5]  # the first row of each of the 5 AMD designs (amd.DESIGNS)

PRODUCT_MODELS = [("B200", "sm_100a", "tcgen05"), ("H100", "sm_90", "wgmma")]
SMALL = (48, 40, 4)  # M, N and instructions of the small cases
# (d_model, heads, d_ff, layers, sequence, batch, vocabulary) of the transformer
TRANSFORMER = {"small": (256, 4, 1024, 2, 128, 4, 512), "tiny": (32, 2, 64, 1, 8, 2, 64)}


# ---------------------------------------------------------------------------
# Models and words (importable by the worker processes)


def model_for(row):
    """The default model of a row: (GPU, arch, family, input, D) or (GPU, datapath id)."""
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath, datapath_for

    if len(row) == 2 and row[1].startswith("mfma."):  # AMD: its GPU's profile
        from tcprobe.models import amd_profiles

        return amd_profiles.model_for(Datapath.parse(row[1]), row[0])
    if len(row) == 2:
        return registry.auto(Datapath.parse(row[1]), row[0])
    gpu, arch, family, fmt, d = row
    a, _, b = fmt.partition("x")
    return registry.auto(datapath_for(arch, family, a, b or a, d), gpu)


def raw_words(rng, fmt, shape):
    from tcprobe.models.formats import get_format

    return rng.integers(0, 1 << get_format(fmt).width, shape, dtype=np.uint64).astype(np.uint32)


def special_words(rng, fmt, shape):
    """Finite words near one with a tenth NaN, +-Inf, +-0 and subnormals
    (integers: the smallest and largest values)."""
    from tcprobe.models.formats import get_format

    f = get_format(fmt)
    if not f.is_float:
        top = 1 << (f.width - 1)
        ends = (top, top - 1) if f.signed else (0, (1 << f.width) - 1)
        return rng.choice(np.array(ends, np.uint32), shape)
    e = rng.integers(max(0, f.bias - 6), min(f.bias + 7, 1 << f.exp_bits), shape)
    w = (rng.integers(0, 2, shape) << (f.width - 1)) | (e << (f.frac_bits + f.drop_bits)) | (
        rng.integers(0, 1 << f.frac_bits, shape) << f.drop_bits)
    top = (1 << f.exp_bits) - 1
    pool = [0, 1 << (f.width - 1), 1 << f.drop_bits, (top << (f.frac_bits + f.drop_bits)),
            (top << (f.frac_bits + f.drop_bits)) | (1 << (f.width - 1)),
            ((top << f.frac_bits) | ((1 << f.frac_bits) - 1)) << f.drop_bits]
    hit = rng.random(shape) < 0.1
    w[hit] = rng.choice(pool, int(hit.sum()))
    return w.astype(np.uint32)


def scale_words(rng, kind, shape, fmt):
    """Scales: raw (every word: ue8m0 8 bits, ue4m3 7), else near one with NaN,
    zero (ue4m3), the smallest and the largest mixed in."""
    ue4 = fmt == "ue4m3"
    if kind == "raw":
        return rng.integers(0, 128 if ue4 else 256, shape).astype(np.uint32)
    s = rng.integers(*((0x30, 0x48) if ue4 else (110, 140)), shape).astype(np.uint32)
    hit = rng.random(shape) < 0.15
    pool = [0x7F, 0, 1, 0x7E] if ue4 else [0xFF, 0, 1, 0xFE]
    s[hit] = rng.choice(np.array(pool, np.uint32), int(hit.sum()))
    return s


def small_cases(limit: int | None = None) -> list[dict]:
    """Every small case: row, kind and words (deterministic)."""
    rng = np.random.default_rng(38)
    m, n, tiles = SMALL
    out = []
    rows = [*ROWS, *INTEGER_ROWS, *SCALED_ROWS, *SPARSE_ROWS, *AMD_ROWS, *SPLIT_ROWS]
    if limit:  # one of each kind of row first
        rows = [ROWS[0], INTEGER_ROWS[0], SCALED_ROWS[0], SPARSE_ROWS[0], AMD_ROWS[0],
                *rows][:limit]
    for row in rows:
        dp = model_for(row).datapath
        c_fmt = dp.c
        for kind, gen in (("special", special_words), ("raw", raw_words)):
            k = tiles * dp.k
            case = {"row": row, "kind": kind, "a": gen(rng, dp.a_type, (m, k)),
                    "b": gen(rng, dp.b_type, (k, n)), "c": gen(rng, c_fmt, (m, n)),
                    "sa": None, "sb": None, "active": None}
            if dp.sparse:  # half of every 4 K positions kept (1 of 2 for tf32); A zero elsewhere
                g = 2 if dp.a_type == "tf32" else 4
                keys = rng.random((m, k // g, g))
                keep = keys <= np.sort(keys, axis=2)[:, :, g // 2 - 1:g // 2]
                case["active"] = keep.reshape(m, k)
                case["a"] = np.where(case["active"], case["a"], np.uint32(0)).astype(np.uint32)
            if dp.block_scaled:
                blocks = tiles * dp.n_scales
                case["sa"] = scale_words(rng, kind, (m, blocks), dp.scale_type)
                case["sb"] = scale_words(rng, kind, (n, blocks), dp.scale_type)
            out.append(case)
    return out


def engine_words(case: dict) -> np.ndarray:
    """The CPU model's words of one case (run in a worker process): the
    model's own evaluate tile by tile, each instruction's D the next one's C,
    with the case's sparse metadata and block scales (the tests' model_chain)."""
    return model_chain(model_for(case["row"]), case["a"], case["b"], case["c"], 0, SMALL[2],
                       case["active"], case["sa"], case["sb"])


# ---------------------------------------------------------------------------
# Where the kernel runs: the GPU (torch CUDA tensors) or, with --host, the host build


class Runner:
    """The kernel on ``dev`` (a torch CUDA device) or, where ``dev`` is None,
    the host build standing in for it."""

    def __init__(self, torch, dev):
        self.torch, self.dev = torch, dev

    @property
    def name(self) -> str:
        return "host build (no GPU)" if self.dev is None else "GPU kernel"

    def words(self, mdl, a, b, c, lo, hi, sa=None, sb=None, active=None) -> np.ndarray:
        from tcprobe.backends import cuda_gemm

        if self.dev is None:
            return cuda_gemm.gemm_words_cuda(mdl, a, b, c, lo, hi, sa=sa, sb=sb, active=active,
                                             jobs=os.cpu_count() or 1)
        t = self.torch
        dev = [None if x is None else t.from_numpy(x.view(np.int32)).to(self.dev)
               for x in (a, b, c, sa, sb)]
        act = None if active is None else t.from_numpy(active.astype(np.uint8)).to(self.dev)
        out = cuda_gemm.gemm_words_cuda(mdl, *dev[:3], lo, hi, sa=dev[3], sb=dev[4], active=act)
        t.cuda.synchronize()
        return out.cpu().numpy().view(np.uint32)


# ---------------------------------------------------------------------------
# Steps


def engine_row(cases: list[dict]) -> list[np.ndarray]:
    """engine_words of one row's cases (one worker compiles the row's kernel once)."""
    return [engine_words(c) for c in cases]


def step_engine_refs(cases: list[dict], jobs: int, refs: list) -> dict:
    t0 = time.perf_counter()
    by_row: dict = {}
    order = []  # (row, its case's place in the row)
    for case in cases:
        row = by_row.setdefault(case["row"], [])
        order.append((case["row"], len(row)))
        row.append(case)
    # spawned workers: the parent holds torch's threads (and a CUDA context)
    with ProcessPoolExecutor(max(1, jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        words = dict(zip(by_row, pool.map(engine_row, by_row.values()), strict=True))
    refs.extend(words[row][i] for row, i in order)
    return {"status": "ok", "cases": len(cases),
            "figure": f"{len(cases)} cases in {time.perf_counter() - t0:.1f} s ({jobs} workers)"}


def step_equal_small(runner: Runner, cases: list[dict], refs: list) -> dict:
    from tcprobe.backends import cuda_gemm, host_build

    rows = []
    tiles = SMALL[2]
    try:  # the host build needs g++; without it the kernel is compared with the engine only
        host_build.build()
        have_host = True
    except host_build.HostBuildError:
        have_host = False
    for case, want in zip(cases, refs, strict=False):
        mdl = model_for(case["row"])
        args = (case["a"], case["b"], case["c"], 0, tiles)
        extra = {"sa": case["sa"], "sb": case["sb"], "active": case["active"]}
        got = runner.words(mdl, *args, **extra)
        host = cuda_gemm.gemm_words_cuda(mdl, *args, **extra) if have_host else None
        rows.append({"model": mdl.name, "datapath": mdl.datapath.id, "operands": case["kind"],
                     "words": int(want.size), "kernel_vs_engine_differ": int((got != want).sum()),
                     "host_vs_engine_differ": None if host is None else int((host != want).sum())})
    ok = len(rows) == len(cases) and all(
        r["kernel_vs_engine_differ"] == 0 and not r["host_vs_engine_differ"] for r in rows)
    return {"status": "ok" if ok else "fail", "runner": runner.name, "rows": rows,
            "figure": f"{runner.name}: {sum(r['kernel_vs_engine_differ'] for r in rows)} of "
                      f"{sum(r['words'] for r in rows)} words differ ({len(rows)} cases)"}


def best_time(torch, fn, repeat: int, limit_s: float, gpu: bool) -> list[float]:
    times = []
    for _ in range(repeat):
        if gpu:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        if sum(times) > limit_s:
            break
    return times


def step_product(runner: Runner, gpu, arch, family, size: int, jobs: int) -> dict:
    from tcprobe.backends import cuda_gemm
    from tcprobe.models import gemm

    torch, dev = runner.torch, runner.dev
    on_gpu = dev is not None
    mdl = model_for((gpu, arch, family, "bf16", "f32"))
    dp = mdl.datapath
    g = torch.Generator(device=dev or "cpu").manual_seed(4096)
    a16 = torch.randn(size, size, device=dev or "cpu", dtype=torch.bfloat16, generator=g)
    b16 = torch.randn(size, size, device=dev or "cpu", dtype=torch.bfloat16, generator=g)
    a = a16.view(torch.int16).to(torch.int32) & 0xFFFF
    b = b16.view(torch.int16).to(torch.int32) & 0xFFFF
    c = torch.zeros(size, size, device=dev or "cpu", dtype=torch.int32)
    tiles = size // dp.k
    if on_gpu:
        run = lambda: cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles)  # noqa: E731
    else:
        host = [x.numpy().view(np.uint32) for x in (a, b, c)]
        run = lambda: cuda_gemm.gemm_words_cuda(mdl, *host, 0, tiles, jobs=jobs)  # noqa: E731
    t0 = time.perf_counter()
    d = run()  # warm-up (loads the module)
    if on_gpu:
        torch.cuda.synchronize()
    first = time.perf_counter() - t0
    times = best_time(torch, run, 3, 60.0, on_gpu)
    native = best_time(torch, lambda: a16 @ b16, 10, 10.0, on_gpu)
    macs = float(size) ** 3
    best = min(times)
    checks = []
    a_np, b_np = (x.cpu().numpy().astype(np.uint32) for x in (a, b))
    d_np = d.cpu().numpy().view(np.uint32) if on_gpu else d
    s = min(64, size)
    for r0, c0 in ((0, 0), (size - s, size - s)):
        want = gemm.gemm_words(mdl, a_np[r0:r0 + s], b_np[:, c0:c0 + s],
                               np.zeros((s, s), np.uint32), (0, tiles), jobs=jobs)
        got = d_np[r0:r0 + s, c0:c0 + s]
        checks.append({"rows": [r0, r0 + s], "cols": [c0, c0 + s],
                       "differ": int((got != want).sum()), "words": s * s})
    ok = all(x["differ"] == 0 for x in checks)
    native_name = "cuBLAS bf16" if on_gpu else "torch CPU bf16"
    return {"status": "ok" if ok else "fail", "runner": runner.name, "model": mdl.name,
            "datapath": dp.id, "size": size, "first_call_s": first, "kernel_s": times,
            "native_bf16_matmul_s": native, "native": native_name,
            "emulated_macs_per_s": macs / best, "native_over_kernel": min(native) / best,
            "subblocks": checks,
            "figure": f"{runner.name}: {best:.3f} s ({macs / best / 1e9:.1f} G MAC/s), "
                      f"{native_name} {min(native) * 1e3:.2f} ms; sub-blocks: "
                      f"{sum(x['differ'] for x in checks)} of {s * s * len(checks)} differ"}


def transformer(torch, size: str):
    """(model, tokens, targets): the pre-LN transformer of the module doc, bf16."""
    nn = torch.nn
    d, heads, ff, layers, seq, batch, vocab = TRANSFORMER[size]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

        def forward(self, x):
            h = self.ln1(x)  # need_weights: attention as bmm products, not a fused kernel
            x = x + self.attn(h, h, h, need_weights=True, average_attn_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    torch.manual_seed(38)
    model = nn.Sequential(nn.Embedding(vocab, d), *[Block() for _ in range(layers)],
                          nn.LayerNorm(d), nn.Linear(d, vocab)).to(torch.bfloat16)
    tokens = torch.randint(0, vocab, (batch, seq))
    targets = torch.randint(0, vocab, (batch, seq))
    return model, tokens, targets


def train_step(torch, model, tokens, targets):
    model.zero_grad(set_to_none=True)
    logits = model(tokens)
    loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
    loss.backward()
    return loss


def step_transformer(runner: Runner, size: str, steps: int, on_gpu: bool = False) -> dict:
    """Forward and backward under emulate(gpu="B200", backend=...) against the
    CPU engine product by product, and the time per step against native.
    ``on_gpu``: the model and its tensors live on the GPU (emulate reads
    their words on the host and writes D back there)."""
    from tcprobe.torch import Report, emulate
    from tcprobe.torch.adapter import gemm

    torch, dev = runner.torch, runner.dev
    backend = "host" if dev is None else "cuda"
    model, tokens, targets = transformer(torch, size)
    if on_gpu:
        if dev is None:
            return {"status": "skipped", "figure": "no GPU (--host)"}
        model, tokens, targets = model.to(dev), tokens.to(dev), targets.to(dev)
    rep = Report(record=True)
    with emulate("B200", backend=backend, report=rep):  # warm-up: compiles, loads, records
        train_step(torch, copy.deepcopy(model), tokens, targets)
    timed = []
    for _ in range(steps):
        m = copy.deepcopy(model)
        t0 = time.perf_counter()
        with emulate("B200", backend=backend):
            train_step(torch, m, tokens, targets)
        timed.append(time.perf_counter() - t0)
    differ = words = 0
    t0 = time.perf_counter()
    for r in rep.records:  # each routed product again on the CPU engine (backend None)
        # D in the dtype the route wrote it in (a bf16 product's partial D is bf16)
        want = gemm(r.a, r.b, r.c, gpu="B200", schedule=r.schedule or None, alpha=r.alpha,
                    beta=r.beta, bias=r.bias, out_dtype=r.out_dtype)
        got = r.d.contiguous().view(torch.int32).numpy().view(np.uint32)
        differ += int((got != want).sum())
        words += int(want.size)
    engine_s = time.perf_counter() - t0
    native_cpu = []
    for _ in range(0 if on_gpu else steps):
        m = copy.deepcopy(model)
        t0 = time.perf_counter()
        train_step(torch, m, tokens, targets)
        native_cpu.append(time.perf_counter() - t0)
    native_gpu = []
    if dev is not None:
        m, tk, tg = copy.deepcopy(model).to(dev), tokens.to(dev), targets.to(dev)
        train_step(torch, m, tk, tg)  # warm-up
        native_gpu = best_time(torch, lambda: train_step(torch, m, tk, tg), steps + 2, 30.0,
                               True)
    fallbacks = sorted({op for op, _ in rep.fallbacks})
    ok = differ == 0 and rep.routed > 0 and not rep.fallback
    best = min(timed)
    figure = (f"{runner.name}: {best:.3f} s a step emulated ({rep.routed} routed ops, "
              f"{len(rep.records)} products, {rep.fallback} fallbacks"
              + (", tensors on the GPU)" if on_gpu else ")")
              + (f", native CPU {min(native_cpu) * 1e3:.1f} ms" if native_cpu else "")
              + (f", native GPU {min(native_gpu) * 1e3:.2f} ms" if native_gpu else "")
              + f"; {differ} of {words} product words differ from the CPU engine")
    return {"status": "ok" if ok else "fail", "runner": runner.name, "backend": backend,
            "tensors": "gpu" if on_gpu else "cpu",
            "size": dict(zip(("d_model", "heads", "d_ff", "layers", "sequence", "batch",
                              "vocabulary"), TRANSFORMER[size], strict=True)),
            "emulated_step_s": timed, "native_cpu_step_s": native_cpu,
            "native_gpu_step_s": native_gpu, "engine_redo_s": engine_s,
            "routed": rep.routed, "products": len(rep.records), "fallback": rep.fallback,
            "fallback_ops": fallbacks, "provenance": rep.provenance(),
            "words": words, "differ": differ, "figure": figure}


# ---------------------------------------------------------------------------


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--budget", type=float, default=420.0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--host", action="store_true",
                    help="no GPU: the host build stands in for the kernel (plumbing only)")
    ap.add_argument("--rows", type=int, default=0, help="only this many small cases' rows")
    ap.add_argument("--tiny", action="store_true", help="the tiny transformer")
    ap.add_argument("--steps", type=int, default=3, help="timed transformer steps")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    results: dict = {"machine": platform.node(), "steps": {},
                     "mode": "host build, no GPU (not a GPU figure)" if args.host else "GPU"}
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

    try:
        import torch
    except ImportError as e:
        print(f"error: torch is not importable ({e}): this check needs torch with CUDA",
              file=sys.stderr)
        sys.exit(2)
    if not args.host and not torch.cuda.is_available():
        print(f"error: no CUDA GPU visible to torch {torch.__version__} (CUDA "
              f"{torch.version.cuda or 'none: a CPU build'}): this check needs one; --host "
              "runs it on the host build, no GPU (plumbing only)", file=sys.stderr)
        sys.exit(2)

    from tcprobe.backends import cuda_gemm
    from tcprobe.devices.cuda import nvrtc

    dev = None
    if not args.host:
        dev = torch.device("cuda", 0)
        major, minor = torch.cuda.get_device_capability(dev)
        results.update(gpu=torch.cuda.get_device_name(dev), capability=f"sm_{major}{minor}",
                       torch=torch.__version__, nvrtc=".".join(map(str, nvrtc.version())))

        def compile_step():
            cub = cuda_gemm.compile_kernel(f"sm_{major}{minor}", use_cache=False)
            return {"status": "ok", "cubin_sha256": cub.sha256, "figure": f"{cub.seconds:.2f} s"}

        record("compile", compile_step)
    runner = Runner(torch, dev)
    cases = small_cases(args.rows or None)
    refs: list = []
    record("engine-refs", lambda: step_engine_refs(cases, args.jobs, refs))
    record("equal-small", lambda: step_equal_small(runner, cases, refs))
    for gpu, arch, family in PRODUCT_MODELS:
        record(f"product-{gpu.lower()}-{family}",
               lambda g=gpu, a=arch, f=family: step_product(runner, g, a, f, args.size,
                                                            args.jobs))
    record("transformer", lambda: step_transformer(runner, "tiny" if args.tiny else "small",
                                                   args.steps))
    record("transformer-on-gpu", lambda: step_transformer(
        runner, "tiny" if args.tiny else "small", args.steps, on_gpu=True))
    return results


if __name__ == "__main__":
    main()
