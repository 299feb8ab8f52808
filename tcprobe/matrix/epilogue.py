"""The epilogue of a library GEMM on raw f32 words: D = alpha*acc + beta*C (+ bias).

Every operation is one IEEE f32 operation rounded to nearest even. The
integer reference is the engine (``engine_fma``, ``engine_add``: a K=1 fused
dot with an exact sum and one rounding, so ``x*y + z`` on it is the fused
multiply-add and ``x*y + (-0)`` the product); the default forms use the
host's IEEE floats where they give the same words (the section below and
tests/test_epilogue_host.py), NaN results as the engine's NaN word.

CUTLASS's ``LinearCombination`` computes ``fma(alpha, acc, beta*C)``
(``fused``, ``fma_on='acc'``); cuBLAS's split-K reduction on an H200
computes ``fma(beta, C, alpha*acc)`` (``fma_on='c'``: measured, tf32 with
alpha 0.5 and beta 3, reports/silicon/2026-12-04-h200); the unfused form
rounds ``alpha*acc`` and ``beta*C`` and adds them. C is read only when beta != 0 (cuBLAS and CUTLASS skip the source when
beta is zero, so a NaN in C then never reaches D). The bias is added after,
one f32 add per element (cuBLASLt's BIAS epilogue).
"""

from __future__ import annotations

import os

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot
from tcprobe.models.formats import Overflow, Rounding, convert, get_format
from tcprobe.models.structures import ieee_add

ONE = 0x3F800000  # f32 1.0
NEG_ZERO = 0x80000000
_DP = Datapath("mma", "f32", "f32", "f32", "f32", 1)
_P = EngineParams(window_bits=None, block_size=1, zero_floor=None, output_rounding="rne",
                  zero_sign="ieee", overflow="ieee")


def f32_word(x, what: str) -> int:
    """A Python number at the API edge as its f32 word (RNE)."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)):
        raise ValueError(f"{what} must be a number, not {x!r}")
    try:
        with np.errstate(over="ignore"):
            word = int(np.array([x], np.float32).view(np.uint32)[0])
        finite = bool(np.isfinite(float(x)))
    except OverflowError:  # an int past any float
        word, finite = 0x7F800000, True
    if word & 0x7FFFFFFF == 0x7F800000 and finite:
        raise ValueError(f"{what}: {repr(x):.30} overflows f32 (the epilogue takes it as an f32 "
                         "word)")
    return word


def engine_fma(x, y, z) -> np.ndarray:
    """f32 words of x*y + z rounded once (RNE) by the engine (the integer
    reference every host form below is tested against); arrays broadcast."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (x, y, z)))
    shape = x.shape
    out = fused_dot(_DP, Cases(x.reshape(-1, 1), y.reshape(-1, 1), z.ravel()), _P)
    return np.asarray(out, np.uint32).reshape(shape)


def engine_add(x, y) -> np.ndarray:
    """f32 words of x + y (RNE) by the engine."""
    x, y = np.broadcast_arrays(np.asarray(x, np.uint32), np.asarray(y, np.uint32))
    return np.asarray(ieee_add("f32", x.ravel(), y.ravel()), np.uint32).reshape(x.shape)


# Host IEEE where it gives the engine's words (issue 37): an f32 add or
# product of the host is one IEEE operation rounded to nearest even, with
# subnormals and signed zeros as IEEE says, as long as the FPU neither
# flushes subnormals nor rounds otherwise (checked once, below); NaN results
# become the engine's NaN word (0x7FFFFFFF), which has no payload rule to
# keep. An fma runs in f64: the product of two f32 is exact there, the sum
# is rounded to odd (the double's last bit set where the sum was inexact),
# and the conversion to f32 then rounds once correctly (round-to-odd with
# 29 spare bits). tests/test_epilogue_host.py holds every form to the
# engine on special-heavy words. TCPROBE_EPILOGUE=engine runs the engine.
F32_NAN = np.uint32(0x7FFFFFFF)
_HOST = None


def host_ok() -> bool:
    """Whether host float arithmetic here is IEEE RNE with subnormals (a
    flush-to-zero or directed rounding mode falls back to the engine)."""
    global _HOST
    if _HOST is None:
        tiny = np.array([1, 3], np.uint32).view(np.float32)  # 2^-149, 3 x 2^-149
        half = np.float32(0.5)
        with np.errstate(all="ignore"):
            sums = (tiny + tiny).view(np.uint32).tolist()
            ties = (np.float32(1) + np.float32(2.0 ** -24)).view(np.uint32)
            prod = (tiny * half).view(np.uint32).tolist()
        _HOST = (sums == [2, 6] and int(ties) == 0x3F800000 and prod == [0, 2]
                 and os.environ.get("TCPROBE_EPILOGUE", "host") != "engine")
    return _HOST


def _nan_canonical(words: np.ndarray, nan_word) -> np.ndarray:
    return np.where((words & 0x7FFFFFFF) > 0x7F800000, nan_word, words).astype(np.uint32)


def _f32(words) -> np.ndarray:
    return np.ascontiguousarray(words, np.uint32).view(np.float32)


def fma(x, y, z) -> np.ndarray:
    """f32 words of x*y + z rounded once (RNE); arrays broadcast."""
    if not host_ok():
        return engine_fma(x, y, z)
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (x, y, z)))
    with np.errstate(all="ignore"):
        p = _f32(x).astype(np.float64) * _f32(y).astype(np.float64)  # exact
        zz = _f32(z).astype(np.float64)
        s = p + zz
        bb = s - p  # TwoSum: err is the exact sum minus s
        err = (p - (s - bb)) + (zz - bb)
        bits = s.view(np.uint64)
        inexact = np.isfinite(s) & (err != 0)
        # round to odd: truncate toward zero (step back where s rounded away),
        # then set the last bit where the sum was inexact
        away = inexact & ((err < 0) != (s < 0)) & (s != 0)
        bits = np.where(away, bits - np.uint64(1), bits)
        bits = np.where(inexact, bits | np.uint64(1), bits)
        out = bits.view(np.float64).astype(np.float32).view(np.uint32)
    return _nan_canonical(out, F32_NAN)


def mul(x, y) -> np.ndarray:
    """f32 words of x*y (RNE)."""
    if not host_ok():
        return engine_fma(x, y, NEG_ZERO)
    x, y = np.broadcast_arrays(np.asarray(x, np.uint32), np.asarray(y, np.uint32))
    with np.errstate(all="ignore"):
        out = (_f32(x) * _f32(y)).view(np.uint32)
    return _nan_canonical(out, F32_NAN)


def add(x, y) -> np.ndarray:
    """f32 words of x + y (RNE)."""
    if not host_ok():
        return engine_add(x, y)
    x, y = np.broadcast_arrays(np.asarray(x, np.uint32), np.asarray(y, np.uint32))
    with np.errstate(all="ignore"):
        out = (_f32(x) + _f32(y)).view(np.uint32)
    return _nan_canonical(out, F32_NAN)


_HALF_NAN = {"bf16": np.uint32(0x7FFF), "f16": np.uint32(0x7FFF)}


def to_f32(words: np.ndarray, fmt: str) -> np.ndarray:
    """Words of ``fmt`` as f32 words (exact for every narrower float; a NaN
    becomes the engine's NaN word)."""
    name = get_format(fmt).name
    if name == "f32":
        return words
    w = np.asarray(words, np.uint32)
    if host_ok() and name == "bf16":
        out = w << np.uint32(16)
        return _nan_canonical(out, F32_NAN)
    if host_ok() and name == "f16":
        out = w.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
        return _nan_canonical(out, F32_NAN)
    return convert(w, fmt, "f32").astype(np.uint32)


def linear(acc: np.ndarray, c: np.ndarray | None, alpha: int, beta: int, fused: bool,
           bias: np.ndarray | None = None, fma_on: str = "acc") -> np.ndarray:
    """f32 words of alpha*acc + beta*C (+ bias), all f32 words (module doc).
    ``c`` None or beta +-0: C is not read. alpha 1.0 multiplies exactly.
    ``fma_on``: the product the fused form keeps exact (``acc`` or ``c``)."""
    if c is None or beta & 0x7FFFFFFF == 0:
        d = acc if alpha == ONE else mul(alpha, acc)
    elif fused and fma_on == "c":
        d = fma(beta, c, acc if alpha == ONE else mul(alpha, acc))
    elif fused:
        d = fma(alpha, acc, c if beta == ONE else mul(beta, c))
    else:
        d = add(acc if alpha == ONE else mul(alpha, acc), c if beta == ONE else mul(beta, c))
    return d if bias is None else add(d, bias)


def convert_out(words: np.ndarray, fmt: str, saturate: bool) -> np.ndarray:
    """f32 words converted to the output format, RNE (saturating to the
    largest finite value where ``saturate``, NaN staying NaN)."""
    name = get_format(fmt).name
    if name == "f32":
        return words
    if host_ok() and name == "bf16":  # RNE on the 16 dropped bits, in integers
        w = np.asarray(words, np.uint32).astype(np.uint64)
        out = ((w + np.uint64(0x7FFF) + ((w >> np.uint64(16)) & np.uint64(1)))
               >> np.uint64(16)).astype(np.uint32)
        if saturate:  # past the largest finite value: the largest finite value
            out = np.where((out & 0x7FFF) == 0x7F80, (out & 0x8000) | 0x7F7F, out)
        return np.where((w & 0x7FFFFFFF) > 0x7F800000, _HALF_NAN["bf16"],
                        np.where((w & 0x7FFFFFFF) == 0x7F800000, w >> np.uint64(16), out)
                        ).astype(np.uint32)
    if host_ok() and name == "f16" and not saturate:  # numpy's f32 -> f16 is RNE, IEEE
        w = np.asarray(words, np.uint32)
        with np.errstate(all="ignore"):
            out = _f32(w).astype(np.float16).view(np.uint16).astype(np.uint32)
        return np.where((w & 0x7FFFFFFF) > 0x7F800000, _HALF_NAN["f16"], out)
    over = Overflow.SATURATE if saturate else Overflow.IEEE
    return convert(words, "f32", fmt, Rounding.RNE, overflow=over).astype(np.uint32)


def integer_linear(acc: np.ndarray, c: np.ndarray | None, alpha: int, beta: int,
                   bias: np.ndarray | None = None) -> np.ndarray:
    """s32 words of alpha*acc + beta*C (+ bias) modulo 2**32 (integer alpha, beta)."""
    def signed(w):
        return w.astype(np.int64) - ((w.astype(np.int64) >> 31) << 32)
    d = alpha * signed(acc)
    if c is not None and beta:
        d = d + beta * signed(c)
    if bias is not None:
        d = d + signed(bias)
    return (d & 0xFFFFFFFF).astype(np.uint32)
