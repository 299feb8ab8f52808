"""fit-gemm's CPU time on synthetic bf16 captures (cublas preset) on H100
against one product of the same size (warm: the second of two), and the
ratio (issue 37's target: <= 5x): 256x256x1024 and 256x256x4096. CPU time
(``time.process_time``), as the speed table's other rows: a wall clock
counts the other processes of a shared machine.
NUMBA_NUM_THREADS=1 python3 benchmarks/bench_fit_gemm.py [K ...]"""

import sys
import time

import ml_dtypes
import numpy as np

import tcprobe
from tcprobe.matrix import fit_gemm


def words(x):
    return np.ascontiguousarray(x).view({2: np.uint16, 4: np.uint32}[x.dtype.itemsize]).astype(
        np.uint32)


def measure(k: int, m: int = 256, n: int = 256, seed: int = 0) -> dict:
    """fit-gemm on an m x n x k bf16 capture made by the default schedule, and
    one warm product of that size: seconds, their ratio, what the fit found."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    tcprobe.matmul(a, b, gpu="H100", dtype="bfloat16", progress=False)  # compiled
    t0 = time.process_time()
    d = tcprobe.matmul(a, b, gpu="H100", dtype="bfloat16", progress=False)
    t1 = time.process_time()
    f = fit_gemm.fit(words(a), "bf16", words(b), "bf16", None, None, words(d), "bf16",
                     gpu="H100")
    t2 = time.process_time()
    return {"product_s": t1 - t0, "fit_s": t2 - t1, "ratio": (t2 - t1) / (t1 - t0),
            "searched": f.searched, "explained": f.explained, "class": len(f.schedules)}


def main(ks):
    for k in ks:
        r = measure(k)
        print(f"256x256x{k} bf16 H100: one product {r['product_s']:.3f} s, fit-gemm "
              f"{r['fit_s']:.2f} s ({r['ratio']:.1f}x one product), {r['searched']} schedules, "
              f"explained={r['explained']}, class of {r['class']}")


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [1024, 4096])
