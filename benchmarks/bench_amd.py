"""The AMD designs' speed: the compiled path (models/amd_fast.py) against the
scalar one (models/amd.py) on the same cases, and whether their words agree.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_amd.py [--cases 4000] [--scalar-cases 400]

Random f16 / bf16 / xf32 / fp8 / f32 dot products (Gaussian operands, as a
GEMM's are, with a Gaussian C of the dot's size) on MI300X's datapaths under
its profile, and on MI250X's (ftz) and MI100's (exact). Prints, per datapath,
microseconds per dot on each path, the ratio, and the number of differing
words on the scalar path's cases. Times are the best of ``--repeat`` runs after a warm-up call
(which loads or compiles the kernels).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from bench_epilogue import best  # noqa: E402  (this folder: the best of repeated runs)

from tcprobe.models import amd_profiles  # noqa: E402
from tcprobe.models.cases import Cases  # noqa: E402
from tcprobe.models.datapath import Datapath  # noqa: E402
from tcprobe.models.formats import Rounding, convert  # noqa: E402

DATAPATHS = (("MI300X", "mfma.f16.f32.k16"), ("MI300X", "mfma.bf16.f32.k16"),
             ("MI300X", "mfma.xf32.tf32.f32.k8"), ("MI300X", "mfma.fp8.e4m3fnuz.f32.k32"),
             ("MI300X", "mfma.f32.f32.k4"), ("MI250X", "mfma.f16.f32.k16"),
             ("MI250X", "mfma.bf16.f32.k8"), ("MI100", "mfma.f16.f32.k16"),
             ("MI100", "mfma.bf16.f32.k8"))


def _cases(dp: Datapath, n: int, seed: int) -> Cases:
    """Gaussian operands rounded into the datapath's types; C a Gaussian f32 of
    the dot's size."""
    rng = np.random.default_rng(seed)
    f32 = rng.standard_normal((2, n, dp.k)).astype(np.float32).view(np.uint32)
    a = convert(f32[0], "f32", dp.a_type, Rounding.RNE) if dp.a_type not in ("f32", "tf32") else f32[0]
    b = convert(f32[1], "f32", dp.b_type, Rounding.RNE) if dp.b_type not in ("f32", "tf32") else f32[1]
    c = (rng.standard_normal(n) * np.sqrt(dp.k)).astype(np.float32).view(np.uint32)
    return Cases(a, b, c)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=4000)
    ap.add_argument("--scalar-cases", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gemm", default="128x256x128", help="MxKxN of the matmul rows")
    args = ap.parse_args()
    print(f"{'gpu':7} {'datapath':26} {'compiled us/dot':>16} {'scalar us/dot':>14} {'ratio':>7} differ")
    for gpu, dp_id in DATAPATHS:
        dp = Datapath.parse(dp_id)
        model = amd_profiles.model_for(dp, gpu)
        big, small = _cases(dp, args.cases, 1), _cases(dp, args.scalar_cases, 2)
        fast = best(lambda m=model, c=big: m.evaluate(c), args.repeat) / args.cases
        slow = best(lambda m=model, c=small: m.scalar_words(c), 1) / args.scalar_cases
        differ = int((model.evaluate(small) != model.scalar_words(small)).sum())
        print(f"{gpu:7} {dp_id:26} {fast * 1e6:16.2f} {slow * 1e6:14.1f} {slow / fast:6.0f}x {differ}",
              flush=True)

    _gemm_rows(args)


def _gemm_rows(args) -> None:
    try:
        import torch
    except ImportError:
        print("matmul rows: torch is not installed")
        return
    import tcprobe

    m, k, n = (int(x) for x in args.gemm.lower().split("x"))
    print(f"\n{'gpu':7} {'dtype':9} {'gemm form s':>12} {'tile chain s':>13} {'ratio':>7} same")
    g = torch.Generator().manual_seed(0)
    for gpu, dt in (("MI300X", torch.bfloat16), ("MI300X", torch.float32),
                    ("MI250X", torch.float16), ("MI100", torch.bfloat16)):
        a = torch.randn(m, k, generator=g).to(dt)
        b = torch.randn(k, n, generator=g).to(dt)
        fast = best(lambda a=a, b=b, gpu=gpu: tcprobe.matmul(a, b, gpu=gpu), args.repeat)
        tiles = best(lambda a=a, b=b, gpu=gpu: tcprobe.matmul(a, b, gpu=gpu, fast=False), 1)
        same = torch.equal(tcprobe.matmul(a, b, gpu=gpu).view(torch.int32),
                           tcprobe.matmul(a, b, gpu=gpu, fast=False).view(torch.int32))
        print(f"{gpu:7} {str(dt)[6:]:9} {fast:12.3f} {tiles:13.3f} {tiles / fast:6.1f}x {same}",
              flush=True)


if __name__ == "__main__":
    main()
