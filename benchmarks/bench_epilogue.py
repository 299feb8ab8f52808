"""The epilogue's f32 operations: host IEEE against the integer engine.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_epilogue.py [--n 299008] [--repeat 5]

``fma(1, acc, C)`` (the default schedule's epilogue), ``add`` and ``mul``
of tcprobe/matrix/epilogue.py on N random f32 words (a fifth special or
boundary words, NaNs, Infs and subnormals included), one thread: the host
path (numpy float32, and for fma a float64 product and a sum rounded to
odd) against the engine path it replaced (a K=1 fused dot on integers).
Prints ns per element of each, their ratio, and whether the words agree.
Times are the best of ``--repeat`` runs after a warm-up call.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from epilogue_cases import random_words  # noqa: E402

from tcprobe.matrix import epilogue  # noqa: E402


def best(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=299_008)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    acc, c, x = (random_words(rng, args.n) for _ in range(3))
    one = np.uint32(0x3F800000)
    neg0 = np.full(args.n, 0x80000000, np.uint32)
    ones = np.full(args.n, one, np.uint32)
    normal = [rng.standard_normal(args.n).astype(np.float32).view(np.uint32) for _ in range(3)]
    rows = [
        ("fma(a, acc, C) *", lambda: epilogue.fma(normal[0], normal[1], normal[2]),
         lambda: epilogue.engine_fma(*normal)),
        ("fma(1, acc, C)", lambda: epilogue.fma(one, acc, c),
         lambda: epilogue.engine_fma(ones, acc, c)),
        ("fma(x, acc, C)", lambda: epilogue.fma(x, acc, c),
         lambda: epilogue.engine_fma(x, acc, c)),
        ("add(acc, C)", lambda: epilogue.add(acc, c), lambda: epilogue.engine_add(acc, c)),
        ("mul(x, acc)", lambda: epilogue.mul(x, acc), lambda: epilogue.engine_fma(x, acc, neg0)),
    ]
    print(f"{args.n:,} elements, one thread, best of {args.repeat}; host exact: "
          f"{epilogue.host_exact()}")
    print(f"{'operation':<16} {'host ns/elem':>13} {'engine ns/elem':>15} {'speed-up':>9}  words")
    ok = True
    for name, host, engine in rows:
        same = bool(np.array_equal(host(), engine()))
        ok &= same
        th, te = best(host, args.repeat), best(engine, args.repeat)
        print(f"{name:<16} {th / args.n * 1e9:>13.2f} {te / args.n * 1e9:>15.2f} "
              f"{te / th:>8.1f}x  {'same' if same else 'DIFFER'}")
    print("* normal values (a GEMM's accumulators); the other rows: special-heavy words")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
