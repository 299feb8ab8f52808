"""Operand sets that separate a library GEMM's schedule candidates.

As the ladder's probes separate datapaths, each case here makes one axis
visible in D (values as numpy/ml_dtypes arrays; the runner,
:mod:`tcprobe.capture.torch_gemm`, saves what the library computes):

* ``random``: normal values, K long enough to split many ways;
* ``cancel``: the second half of K repeats the first with B negated, plus a
  few small terms: the exact sum is small, so a split at the half (or a
  reversed K order) rounds the large halves differently;
* ``narrow``: one large product and many small ones: a narrow accumulator
  drops the small ones, a promotion interval keeps them in f32;
* ``c_epilogue``: C of the size of the products, beta = 1: C in the
  epilogue or as the first accumulator round differently;
* ``nan_c``: C holds NaN and beta = 0: a library that reads C only when
  beta != 0 writes finite words;
* ``alpha_beta``: alpha = 0.5, beta = 3: fused or unfused epilogues;
* ``c_beta2`` and ``c_alpha2``: (alpha, beta) = (1, 2) and (2, 1): where a
  library takes another path for alpha = beta = 1 (torch's addmm on H200
  rounds the product to the output type before it adds C there);
* ``bias``: C whose rows are all one row, alpha = beta = 1: the runner gives
  it to torch as a 1-D bias (``addmm(bias, A, B)``, ``F.linear(x, W, bias)``),
  the cuBLASLt bias epilogue; fit-gemm reads it as the full C;
* ``splits`` (bf16, f16, tf32): every element of D shows whether a split of K
  starts at one unit boundary (:mod:`.split_probe`), so a kernel's split and
  stream-K boundaries are read off D, not searched for.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import split_probe
from .operands import MatmulError
from .resolve import available_memory

FP8_FORMATS = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
               "e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "e5m2fnuz": ml_dtypes.float8_e5m2fnuz}
FORMATS = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "tf32": np.float32, **FP8_FORMATS}
# C's type per format; the runner's fp8 op (torch._scaled_mm, f32 out) takes no C
C_DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "tf32": np.float32,
            **dict.fromkeys(FP8_FORMATS, np.float32)}
CASES = ("random", "cancel", "narrow", "c_epilogue", "nan_c", "alpha_beta", "c_beta2", "c_alpha2",
         "bias", "splits")


def bytes_needed(m: int, n: int, k: int) -> int:
    """About the memory :func:`cases` takes at its peak: every case's operands
    in float32 and in their format, and a float64 draw."""
    return len(CASES) * (6 * (m * k + k * n) + 8 * m * n) + 16 * max(m * k, k * n)


def cases(fmt: str, m: int = 128, n: int = 128, k: int = 4096, seed: int = 0) -> list[dict]:
    """The probe cases for ``fmt`` (module doc): dicts of name, A, B, C (or
    None), alpha, beta."""
    if fmt not in FORMATS:
        raise MatmulError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    for what, v in (("m", m), ("n", n), ("k", k)):
        if not isinstance(v, int) or v < 1:
            raise MatmulError(f"{what} must be a positive integer, not {v!r}")
    if k < 64 or k % 2:
        raise MatmulError(f"k must be even and at least 64, not {k}")
    need, have = bytes_needed(m, n, k), available_memory()
    if have is not None and need > have:
        raise MatmulError(f"m={m}, n={n}, k={k}: the {len(CASES)} cases of {m}x{k} and "
                          f"{k}x{n} operands take about "
                          f"{need / 1e9:,.1f} GB of memory, and this machine has "
                          f"{have / 1e9:,.1f} GB available: ask for a smaller m, n or k")
    rng = np.random.default_rng(seed)
    dt, ct = FORMATS[fmt], C_DTYPES[fmt]
    def normal(shape, s=1.0):
        return (rng.standard_normal(shape) * s).astype(np.float32)
    out = []
    a, b = normal((m, k)), normal((k, n))
    out.append(("random", a, b, None, 1.0, 0.0))
    h = k // 2
    a2, b2 = normal((m, k)), normal((k, n))
    a2[:, h:] = a2[:, :h]
    b2[h:] = -b2[:h]
    small = rng.random((m, k)) < 4.0 / k
    a2[:, h:][small[:, h:]] *= 1.5
    out.append(("cancel", a2, b2, None, 1.0, 0.0))
    a3 = np.abs(normal((m, k))) * (1 / 16)
    b3 = np.abs(normal((k, n))) * (1 / 16)
    a3[:, 0], b3[0] = 16.0, 16.0
    out.append(("narrow", a3, b3, None, 1.0, 0.0))
    c = normal((m, n), np.sqrt(k))
    out.append(("c_epilogue", normal((m, k)), normal((k, n)), c, 1.0, 1.0))
    cn = np.full((m, n), np.nan, np.float32)
    out.append(("nan_c", normal((m, k)), normal((k, n)), cn, 1.0, 0.0))
    out.append(("alpha_beta", normal((m, k)), normal((k, n)), normal((m, n), np.sqrt(k)), 0.5,
                3.0))
    out.append(("c_beta2", normal((m, k)), normal((k, n)), normal((m, n), np.sqrt(k)), 1.0, 2.0))
    out.append(("c_alpha2", normal((m, k)), normal((k, n)), normal((m, n), np.sqrt(k)), 2.0, 1.0))
    row = normal((1, n), np.sqrt(k))
    out.append(("bias", normal((m, k)), normal((k, n)), np.repeat(row, m, axis=0), 1.0, 1.0))
    if fmt in split_probe.VALUES:
        try:
            out.append(("splits", *split_probe.operands(fmt, m, n, k), None, 1.0, 0.0))
        except MatmulError:
            pass  # a shape the split probe cannot cover (n < 2, K of one unit)
    return [{"name": name, "a": x.astype(dt), "b": y.astype(dt),
             "c": None if z is None else z.astype(ct), "alpha": al, "beta": be}
            for name, x, y, z, al, be in out]
