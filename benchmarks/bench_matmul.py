"""tcprobe.matmul against MMA-Sim's instruction chained over K, one thread each.

    NUMBA_NUM_THREADS=1 python3 benchmarks/bench_matmul.py [--m 192 --n 192 --k 512]
    python3 benchmarks/bench_matmul.py --large 4096    # also 4096^3 on every core

Multiplies random bf16 matrices (f32 C) for the H100's mma.sync
(m16n8k16.f32.bf16.bf16.f32) with both, checks that every word is equal and
prints both times and their ratio. The tcprobe time is the best of
``--repeat`` runs after one warm-up call (which compiles or loads the kernel
from numba's cache); MMA-Sim's is one run (it has no warm-up to speak of).
Set NUMBA_NUM_THREADS=1 for the one-thread comparison (the script warns when
numba has more threads). ``--large N`` then multiplies an N x N x N bf16 product on
every core (a separate process would be fairer to numba's thread pool; the
threads are set back to all cores here).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _bf16(rng, shape) -> np.ndarray:
    import ml_dtypes

    return rng.standard_normal(shape).astype(np.float32).astype(ml_dtypes.bfloat16)


def mmasim_chain(a_bf16, b_bf16, c_f32):
    """MMA-Sim's D of the H100 mma chain over K tiles of 16."""
    import torch
    from mmasim.nv_ptx import MMA

    sim = MMA("Hopper", "m16n8k16.f32.bf16.bf16.f32")
    A = torch.from_numpy(a_bf16.view(np.int16).copy()).view(torch.bfloat16)
    B = torch.from_numpy(b_bf16.view(np.int16).copy()).view(torch.bfloat16)
    d = torch.from_numpy(c_f32.copy())
    for t in range(0, A.shape[1], 16):
        d = sim(A[:, t:t + 16], B[t:t + 16, :], d)
    return d.numpy()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=192)
    ap.add_argument("--n", type=int, default=192)
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--large", type=int, default=0, help="also an N x N x N product on every core")
    ap.add_argument("--no-mmasim", action="store_true", help="time tcprobe alone")
    args = ap.parse_args(argv)

    import numba

    import tcprobe

    threads = numba.get_num_threads()
    if threads != 1:
        print(f"warning: numba runs {threads} threads; set NUMBA_NUM_THREADS=1 for the "
              "one-thread comparison", file=sys.stderr)
    rng = np.random.default_rng(args.seed)
    a, b = _bf16(rng, (args.m, args.k)), _bf16(rng, (args.k, args.n))
    c = rng.standard_normal((args.m, args.n)).astype(np.float32)
    run = lambda: tcprobe.matmul(a, b, c, gpu="H100", instr="mma", schedule="chain")  # noqa: E731
    t0 = time.perf_counter()
    ours = run()
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ours = run()
        best = min(best, time.perf_counter() - t0)
    dots = args.m * args.n * (args.k // 16)
    print(f"{args.m}x{args.n}x{args.k} bf16, H100 mma.m16n8k16 chained over K "
          f"({dots:,} K=16 dots), numba threads {threads}")
    print(f"tcprobe : {best * 1e3:9.2f} ms  (first call {first:.2f} s: compile or cache load)")
    if not args.no_mmasim:
        import torch

        torch.set_num_threads(1)
        t0 = time.perf_counter()
        theirs = mmasim_chain(a, b, c)
        sim_t = time.perf_counter() - t0
        differ = int((ours.view(np.uint32) != theirs.view(np.uint32)).sum())
        print(f"MMA-Sim : {sim_t * 1e3:9.2f} ms  ({sim_t / dots * 1e6:.2f} us a K=16 dot), "
              "torch threads 1")
        print(f"words   : {differ} of {args.m * args.n} differ")
        print(f"ratio   : {sim_t / best:9.1f}x")
        if differ:
            return 1
    if args.large:
        n = args.large
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        a, b = _bf16(rng, (n, n)), _bf16(rng, (n, n))
        done = [0.0]

        def progress(d, total):
            if d / total >= done[0] + 0.1:
                done[0] = d / total
                print(f"  {100 * done[0]:.0f}% after {time.perf_counter() - t0:.1f} s",
                      flush=True)

        t0 = time.perf_counter()
        tcprobe.matmul(a, b, gpu="H100", instr="mma", progress=progress)
        print(f"{n}x{n}x{n} bf16 on {numba.get_num_threads()} threads "
              f"({os.cpu_count()} cores): {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
