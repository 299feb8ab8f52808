"""The CUDA backend's host build against the numba engine on one product.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_cuda_backend.py [--m 256 --n 256 --k 1024]

The same random finite bf16 product (f32 C and D) under one model (default
the H100 wgmma profile; ``--gpu B200 --family tcgen05`` for B200), one
thread each: through the host build of kernels/tc_gemm.cu
(:func:`tcprobe.backends.cuda_gemm.gemm_words_cuda` on NumPy arrays) and
through the numba GEMM kernel (:func:`tcprobe.models.gemm.gemm_words`, the
operands decoded inside the timing as the flow does). Prints each one's ns
per K=16 block of one output element (time / (M * N * K / 16)), their ratio,
and whether the words agree. Times are the best of ``--repeat`` runs after a
warm-up call (which builds, loads or compiles the kernels).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from tcprobe.backends import cuda_gemm  # noqa: E402
from tcprobe.models import gemm, registry  # noqa: E402
from tcprobe.models.datapath import datapath_for  # noqa: E402

ARCH = {"A100": "sm_80", "H100": "sm_90", "B200": "sm_100a"}


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def finite_bf16(rng, shape) -> np.ndarray:
    sign = rng.integers(0, 2, shape) << 15
    exp = rng.integers(120, 134, shape) << 7
    return (sign | exp | rng.integers(0, 128, shape)).astype(np.uint32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--gpu", default="H100", choices=sorted(ARCH))
    ap.add_argument("--family", default="wgmma", choices=("mma", "wgmma", "tcgen05"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    mdl = registry.auto(datapath_for(ARCH[args.gpu], args.family, "bf16", "bf16", "f32"),
                        args.gpu)
    dp = mdl.datapath
    if args.k % dp.k:
        ap.error(f"--k must be a multiple of {dp.k}")
    rng = np.random.default_rng(0)
    a = finite_bf16(rng, (args.m, args.k))
    b = finite_bf16(rng, (args.k, args.n))
    c = np.zeros((args.m, args.n), np.uint32)
    tiles = args.k // dp.k
    blocks = args.m * args.n * args.k / 16

    host = lambda: cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles)  # noqa: E731
    engine = lambda: gemm.gemm_words(mdl, a, b, c, (0, tiles))  # noqa: E731
    same = np.array_equal(host(), engine())
    t_host, t_engine = best(host, args.repeat), best(engine, args.repeat)
    print(f"{dp.id} ({mdl.name}), M={args.m} N={args.n} K={args.k}, one thread each")
    print(f"host build (kernels/tc_gemm.cu, g++ -O3): {t_host * 1e9 / blocks:8.1f} ns per K=16 block"
          f"  ({t_host:.3f} s)")
    print(f"numba engine (models/gemm.py):           {t_engine * 1e9 / blocks:8.1f} ns per K=16 block"
          f"  ({t_engine:.3f} s)")
    print(f"host / engine: {t_host / t_engine:.2f}x   words equal: {same}")


if __name__ == "__main__":
    main()
