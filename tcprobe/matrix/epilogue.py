"""The epilogue of a library GEMM on raw f32 words: D = alpha*acc + beta*C (+ bias).

Every operation is one IEEE f32 operation rounded to nearest even, computed
on words by the engine the way :func:`tcprobe.models.structures.ieee_add`
computes an add: a K=1 fused dot with an exact sum and one rounding, so
``x*y + z`` on it is the fused multiply-add and ``x*y + (-0)`` the product
(a -0 addend leaves every product, -0 included, unchanged). No host float
touches a word.

CUTLASS's ``LinearCombination`` computes ``fma(alpha, acc, beta*C)``
(``fused``, ``fma_on='acc'``); cuBLAS's split-K reduction on an H200
computes ``fma(beta, C, alpha*acc)`` (``fma_on='c'``: measured, tf32 with
alpha 0.5 and beta 3, reports/silicon/2026-12-04-h200); the unfused form
rounds ``alpha*acc`` and ``beta*C`` and adds them. C is read only when beta != 0 (cuBLAS and CUTLASS skip the source when
beta is zero, so a NaN in C then never reaches D). The bias is added after,
one f32 add per element (cuBLASLt's BIAS epilogue).
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot
from tcprobe.models.formats import Overflow, Rounding, convert, get_format
from tcprobe.models.structures import ieee_add

from .operands import MatmulError

ONE = 0x3F800000  # f32 1.0
NEG_ZERO = 0x80000000
_DP = Datapath("mma", "f32", "f32", "f32", "f32", 1)
_P = EngineParams(window_bits=None, block_size=1, zero_floor=None, output_rounding="rne",
                  zero_sign="ieee", overflow="ieee")


def f32_word(x, what: str) -> int:
    """A Python number at the API edge as its f32 word (RNE)."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)):
        raise MatmulError(f"{what} must be a number, not {x!r}")
    try:
        with np.errstate(over="ignore"):
            word = int(np.array([x], np.float32).view(np.uint32)[0])
        finite = bool(np.isfinite(float(x)))
    except OverflowError:  # an int past any float
        word, finite = 0x7F800000, True
    if word & 0x7FFFFFFF == 0x7F800000 and finite:
        raise MatmulError(f"{what}: {repr(x):.30} overflows f32 (the epilogue takes it as an f32 "
                         "word)")
    return word


S32_MIN, S32_MAX = -(2 ** 31), 2 ** 31 - 1


def s32_scalar(x, what: str) -> int:
    """An integer alpha or beta as the s32 value the integer epilogue holds;
    one outside s32 is refused (never wrapped silently)."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise MatmulError(f"{what} must be an integer for an integer product, not {x!r}")
    if not S32_MIN <= int(x) <= S32_MAX:
        raise MatmulError(f"{what}: {int(x)} does not fit s32 ({S32_MIN} .. {S32_MAX}), the "
                          "integer epilogue's type")
    return int(x)


def fma(x, y, z) -> np.ndarray:
    """f32 words of x*y + z rounded once (RNE); arrays broadcast."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (x, y, z)))
    shape = x.shape
    out = fused_dot(_DP, Cases(x.reshape(-1, 1), y.reshape(-1, 1), z.ravel()), _P)
    return np.asarray(out, np.uint32).reshape(shape)


def mul(x, y) -> np.ndarray:
    """f32 words of x*y (RNE)."""
    return fma(x, y, NEG_ZERO)


def add(x, y) -> np.ndarray:
    """f32 words of x + y (RNE)."""
    x, y = np.broadcast_arrays(np.asarray(x, np.uint32), np.asarray(y, np.uint32))
    return np.asarray(ieee_add("f32", x.ravel(), y.ravel()), np.uint32).reshape(x.shape)


def to_f32(words: np.ndarray, fmt: str) -> np.ndarray:
    """Words of ``fmt`` as f32 words (exact for every narrower float)."""
    return words if get_format(fmt).name == "f32" else convert(words, fmt, "f32").astype(np.uint32)


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
    if get_format(fmt).name == "f32":
        return words
    over = Overflow.SATURATE if saturate else Overflow.IEEE
    return convert(words, "f32", fmt, Rounding.RNE, overflow=over).astype(np.uint32)


def integer_linear(acc: np.ndarray, c: np.ndarray | None, alpha: int, beta: int,
                   bias: np.ndarray | None = None) -> np.ndarray:
    """s32 words of alpha*acc + beta*C (+ bias) modulo 2**32 (integer alpha,
    beta: s32 values, as the integer epilogue holds them)."""
    s32_scalar(alpha, "alpha")
    s32_scalar(beta, "beta")
    def signed(w):
        return w.astype(np.int64) - ((w.astype(np.int64) >> 31) << 32)
    d = alpha * signed(acc)
    if c is not None and beta:
        d = d + beta * signed(c)
    if bias is not None:
        d = d + signed(bias)
    return (d & 0xFFFFFFFF).astype(np.uint32)
