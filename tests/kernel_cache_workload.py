"""Run one configuration of every compiled kernel form and print how many
functions numba compiled in this process (``compiles N``), then the words'
digest (``words HEX``): tests/test_kernel_cache.py runs it in two fresh
processes, and the second must compile nothing and give the same words.

    python3 tests/kernel_cache_workload.py
"""

import hashlib
from dataclasses import replace

import numpy as np
from numba.core import event

with event.install_recorder("numba:compile") as recorder:
    import ml_dtypes

    import tcprobe
    from tcprobe.models.datapath import Datapath
    from tcprobe.models.engine import fused_dot
    from tcprobe.models.profiles import PROFILES

    rng = np.random.default_rng(7)
    digest = hashlib.sha256()

    def keep(words):
        digest.update(np.ascontiguousarray(np.asarray(words).view(np.uint8)).tobytes())

    def normal(shape, dtype):
        return rng.standard_normal(shape).astype(dtype)

    # the GEMM kernel (fixed point) and the integer GEMM kernel
    keep(tcprobe.matmul(normal((8, 64), ml_dtypes.bfloat16), normal((64, 8), ml_dtypes.bfloat16),
                        gpu="H100"))
    keep(tcprobe.matmul(rng.integers(-128, 128, (8, 64)).astype(np.int8),
                        rng.integers(-128, 128, (64, 8)).astype(np.int8), gpu="H100"))
    # block-scaled kinds (tile by tile on the scaled kernels): mxf8f6f4 and mxf4
    scale = lambda shape: np.full(shape, 127, np.uint8).view(ml_dtypes.float8_e8m0fnu)  # noqa: E731
    keep(tcprobe.matmul(normal((4, 64), ml_dtypes.float8_e4m3fn),
                        normal((64, 4), ml_dtypes.float8_e4m3fn), gpu="B200",
                        scale_a=scale((4, 2)), scale_b=scale((2, 4))))
    keep(tcprobe.matmul(normal((4, 64), ml_dtypes.float4_e2m1fn),
                        normal((64, 4), ml_dtypes.float4_e2m1fn), gpu="B200",
                        scale_a=scale((4, 2)), scale_b=scale((2, 4))))
    # the engine: lane kernel, the core loop's block kernel, the plain kernel
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
    words = lambda n, k, mask: rng.integers(0, mask + 1, (n, k), dtype=np.uint64).astype(np.uint32)  # noqa: E731
    from tcprobe.models.cases import Cases

    cases = Cases(words(64, 16, 0xFFFF), words(64, 16, 0xFFFF), words(64, 1, 0xFFFFFFFF)[:, 0])
    params = PROFILES["h100"].params(dp)
    keep(fused_dot(dp, cases, params, fast=True))
    keep(fused_dot(dp, cases, replace(params, align="normalized"), fast=True))  # core loop
    keep(fused_dot(dp, cases, params, fast=False))
    # f64 DMMA
    f64 = rng.integers(0, 1 << 63, (4, 4), dtype=np.uint64)
    keep(tcprobe.dot(f64, f64, rng.integers(0, 1 << 63, 4, dtype=np.uint64),
                     datapath="mma.f64.f64.k4", gpu="H100"))

starts = [ev for _when, ev in recorder.buffer if ev.is_start]
print("compiles", len(starts))
for data in starts:
    print("compiled", data.data["dispatcher"].py_func.__qualname__)
print("words", digest.hexdigest())
