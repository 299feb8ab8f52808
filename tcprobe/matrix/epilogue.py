"""The epilogue of a library GEMM on raw f32 words: D = alpha*acc + beta*C (+ bias).

Every operation is one IEEE f32 operation rounded to nearest even, computed
on words by the engine the way :func:`tcprobe.models.structures.ieee_add`
computes an add: a K=1 fused dot with an exact sum and one rounding, so
``x*y + z`` on it is the fused multiply-add and ``x*y + (-0)`` the product
(a -0 addend leaves every product, -0 included, unchanged).

Host IEEE where it is exact (issue 37): ``add`` and ``mul`` run as numpy
float32 operations and ``fma`` as a float64 product (exact: 24 + 24 bits),
a float64 sum rounded to odd (TwoSum's error term decides the last bit)
and one RNE conversion to float32, which rounds as the single rounding of
the exact sum does (Boldo and Melquiond, "Emulation of FMA and correctly
rounded sums: proved algorithms using rounding to odd", IEEE TC 2008: odd
rounding to p + 2 or more bits, then to nearest, is one rounding to
nearest; 53 >= 24 + 2). A NaN result is written 0x7FFFFFFF, the engine's
NaN word for every NaN operand and invalid operation (its payload rule).
The host path runs only while the FPU rounds to nearest even with
subnormals kept (:func:`host_exact` checks, each call: a library may have
set flush-to-zero); else the engine computes. ``tests/test_epilogue_host.py``
holds the two paths word for word, specials and 10^6 random words each;
``to_f32`` and ``convert_out`` widen and round bf16 and f16 on the host too
(tests/test_epilogue_conversions.py: every 16-bit word, both overflow
forms). TCPROBE_EPILOGUE=engine runs the engine for all of them.

CUTLASS's ``LinearCombination`` computes ``fma(alpha, acc, beta*C)``
(``fused``, ``fma_on='acc'``); cuBLAS's split-K reduction on an H200
computes ``fma(beta, C, alpha*acc)`` (``fma_on='c'``: measured, tf32 with
alpha 0.5 and beta 3, reports/silicon/2026-12-04-h200); the unfused form
rounds ``alpha*acc`` and ``beta*C`` and adds them. C is read only when beta != 0 (cuBLAS and CUTLASS skip the source when
beta is zero, so a NaN in C then never reaches D). The bias is added after,
one f32 add per element (cuBLASLt's BIAS epilogue).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from decimal import Decimal
from numbers import Rational

import numpy as np

from tcprobe.models import host_ieee
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


def _scalar(x):
    """An array or tensor (numpy's, torch's) of exactly one element, 0-d or
    of shape (1,) or (1, 1), as the number it holds (the one rule for alpha
    and beta on every surface: tcprobe.matmul, fit_gemm.fit, emulate); any
    other value as it is, for the caller to refuse."""
    shape = getattr(x, "shape", None)
    if isinstance(shape, tuple) and all(s == 1 for s in shape) and callable(getattr(x, "item", None)):
        return x.item()
    return x


def _exact_float(x, what: str):
    """A Fraction or Decimal as the float it equals exactly (then rounded to
    f32 once, as a float is); one no float holds is refused, never rounded
    twice. Anything else as it is."""
    if isinstance(x, Rational | Decimal) and not isinstance(x, int | np.integer):
        try:
            f = float(x)
        except (OverflowError, ValueError):  # past any float; a signalling NaN
            f = None
        if f is None or (f != x and f == f):
            raise MatmulError(f"{what}: {repr(x):.40} is no binary float: give a float (the "
                              "epilogue rounds it to an f32 word)")
        return f
    return x


def f32_word(x, what: str) -> int:
    """A Python number at the API edge as its f32 word (RNE); a 0-d array or
    tensor as the number it holds."""
    x = _exact_float(_scalar(x), what)
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
    if word & 0x7FFFFFFF == 0 and finite and float(x) != 0:  # 1e-50 would scale by a silent 0
        raise MatmulError(f"{what}: {repr(x):.30} underflows f32 to zero (the epilogue takes it as "
                         "an f32 word; give 0 for zero)")
    return word


S32_MIN, S32_MAX = -(2 ** 31), 2 ** 31 - 1


def s32_scalar(x, what: str) -> int:
    """An integer alpha or beta as the s32 value the integer epilogue holds;
    one outside s32 is refused (never wrapped silently)."""
    x = _scalar(x)
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise MatmulError(f"{what} must be an integer for an integer product, not {x!r}")
    if not S32_MIN <= int(x) <= S32_MAX:
        raise MatmulError(f"{what}: {int(x)} does not fit s32 ({S32_MIN} .. {S32_MAX}), the "
                          "integer epilogue's type")
    return int(x)


def beta_given(beta, c_given: bool, integer: bool, what: str = "beta", partner: str = "C"):
    """beta's number, one rule for tcprobe.matmul, fit-gemm's fit and the
    command line: unset (None), 1 with C and 0 without; a beta that is no
    number is refused as such; a nonzero beta (NaN too) with no C is refused,
    since C is then +0 and never read: the beta would multiply nothing."""
    if beta is None:
        return 1 if c_given else 0
    (s32_scalar if integer else f32_word)(beta, what)
    beta = _scalar(beta)  # a one-element array as its number, as f32_word reads it
    if not c_given and beta != 0:  # NaN != 0 too
        raise MatmulError(f"{what}: a nonzero beta needs {partner} (with no C it would multiply "
                          "nothing)")
    return beta


NAN_WORD = 0x7FFFFFFF  # the engine's NaN (EngineParams' default nan_word)
_F32 = np.float32


_SCOPE = threading.local()  # host_exact's answer inside a checked() block, per thread


@contextmanager
def checked():
    """A block (one pipeline run) in which host_exact() is probed once, on
    entry, and its answer reused: nothing in the block changes the FPU's
    mode, and dispatch to the host or the engine stays one choice per run."""
    outer = getattr(_SCOPE, "exact", None)
    _SCOPE.exact = host_ieee.exact() if outer is None else outer
    try:
        yield
    finally:
        _SCOPE.exact = outer


def host_exact() -> bool:
    """Whether the host's float32/float64 arithmetic rounds to nearest even
    and keeps subnormals (no flush-to-zero, no denormals-are-zero) now
    (TCPROBE_EPILOGUE=engine: never, the engine computes). Probed on every
    call outside a checked() block, since a library loaded later may set FTZ."""
    known = getattr(_SCOPE, "exact", None)
    return host_ieee.exact() if known is None else known


def _nan_word(r: np.ndarray) -> np.ndarray:
    return np.where((r & 0x7FFFFFFF) > 0x7F800000, np.uint32(NAN_WORD), r)


def _words(*vs):
    """The operands as uint32 arrays of one shape (broadcast where they differ)."""
    first = vs[0]
    if all(type(v) is np.ndarray and v.dtype == np.uint32 and v.shape == first.shape
           for v in vs):
        return vs
    return np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in vs))


def fma(x, y, z) -> np.ndarray:
    """f32 words of x*y + z rounded once (RNE); arrays broadcast."""
    for one, other in ((x, y), (y, x)):  # 1 * v + z is exact v + z, one rounding: an add
        if np.ndim(one) == 0 and int(one) == ONE:
            return add(other, z)
    x, y, z = _words(x, y, z)
    if not host_exact():
        return engine_fma(x, y, z)
    shape = x.shape
    out = np.empty(x.size, np.uint32)
    # writeable copies (a broadcast view's flags warn when read)
    flat = [np.array(v, np.uint32, copy=True).reshape(-1) for v in (x, y, z)]
    _fma_kernel()(*(v.view(np.float32) for v in flat), out)
    return out.reshape(shape)


_FMA_KERNEL = None


def _fma_kernel():
    """The host fma, one element at a time (compiled on first use, cached):
    p = x*y in float64 (exact: 24 + 24 bits), s = p + z rounded to nearest,
    then rounded to odd with TwoSum's error term, then RNE into float32,
    which rounds as the one rounding of the exact sum does (module doc); a
    NaN is written as the engine's NaN word."""
    global _FMA_KERNEL
    if _FMA_KERNEL is None:
        from numba import njit

        @njit(cache=True, nogil=True, error_model="numpy")
        def kernel(x, y, z, out):
            d = np.empty(1, np.float64)
            di = d.view(np.int64)
            f = np.empty(1, np.float32)
            fu = f.view(np.uint32)
            for i in range(x.size):
                p = np.float64(x[i]) * np.float64(y[i])
                c = np.float64(z[i])
                s = p + c
                bb = s - p
                err = (p - (s - bb)) + (c - bb)  # p + c - s exactly (NaN: s not finite)
                d[0] = s
                bits = di[0]
                if bits & 1 == 0 and (err > 0 or err < 0):
                    if (err > 0) == (bits >= 0):
                        di[0] = bits + 1  # one step away from zero
                    else:
                        di[0] = bits - 1
                f[0] = np.float32(d[0])
                w = fu[0]
                if w & 0x7FFFFFFF > 0x7F800000:
                    w = np.uint32(NAN_WORD)
                out[i] = w

        _FMA_KERNEL = kernel
    return _FMA_KERNEL


def mul(x, y) -> np.ndarray:
    """f32 words of x*y (RNE)."""
    x, y = _words(x, y)
    if not host_exact():
        return engine_fma(x, y, np.full(x.shape, NEG_ZERO, np.uint32))
    with np.errstate(all="ignore"):
        r = (x.view(np.float32) * y.view(np.float32)).view(np.uint32)
    return _nan_word(r)


def add(x, y) -> np.ndarray:
    """f32 words of x + y (RNE)."""
    x, y = _words(x, y)
    if not host_exact():
        return engine_add(x, y)
    return host_ieee.add_f32(x, y)


def engine_fma(x, y, z) -> np.ndarray:
    """fma on the integer engine (a K=1 fused dot): what the host path must equal."""
    x, y, z = _words(x, y, z)
    shape = x.shape
    out = fused_dot(_DP, Cases(x.reshape(-1, 1), y.reshape(-1, 1), z.ravel()), _P)
    return np.asarray(out, np.uint32).reshape(shape)


def engine_add(x, y) -> np.ndarray:
    """add on the integer engine."""
    x, y = _words(x, y)
    return np.asarray(ieee_add("f32", x.ravel(), y.ravel(), host=False),
                      np.uint32).reshape(x.shape)


_HALF_NAN = np.uint32(0x7FFF)  # the engine's NaN word in bf16 and f16


def to_f32(words: np.ndarray, fmt: str) -> np.ndarray:
    """Words of ``fmt`` as f32 words (exact for every narrower float; a NaN
    becomes the engine's NaN word)."""
    name = get_format(fmt).name
    if name == "f32":
        return words
    w = np.asarray(words, np.uint32)
    if name == "bf16" and host_exact():
        return _nan_word(w << np.uint32(16))
    if name == "f16" and host_exact():
        return _nan_word(w.astype(np.uint16).view(np.float16).astype(np.float32)
                         .view(np.uint32))
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
    if name == "bf16":  # RNE on the 16 dropped bits, in 32-bit integers: a carry out of
        # the top bit comes only from a NaN word (0xFFFF8001 and up), which is replaced;
        # an Inf word rounds to itself (its low half is 0)
        w = np.asarray(words, np.uint32)
        out = (w + (np.uint32(0x7FFF) + ((w >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)
        mag = w & np.uint32(0x7FFFFFFF)
        if saturate:  # a finite value rounded past the largest: the largest (Inf stays Inf)
            out = np.where(((out & 0x7FFF) == 0x7F80) & (mag != 0x7F800000),
                           (out & 0x8000) | 0x7F7F, out)
        nan = mag > np.uint32(0x7F800000)
        out[nan] = _HALF_NAN
        return out.astype(np.uint32, copy=False)
    if name == "f16" and not saturate and host_exact():  # numpy's f32 -> f16: RNE, IEEE
        w = np.asarray(words, np.uint32)
        with np.errstate(all="ignore"):
            out = w.view(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
        return np.where((w & 0x7FFFFFFF) > 0x7F800000, _HALF_NAN, out)
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
