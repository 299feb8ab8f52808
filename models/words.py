"""Words as bit facts: exact words of values (powers of two, products of
two factors, maximal significands), words from their fields, and the one
comparison of two result words (ulps apart, NaN-aware).

Everything here is integer arithmetic on raw words with the codecs of
:mod:`.formats`; no host float.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .formats import (
    Class,
    Format,
    Specials,
    decode,
    decode_scalar,
    encode,
    get_format,
    ordered,
    word_int64,
)

# ---------------------------------------------------------------------------
# Exact words of values.


def exp_range(fmt) -> tuple[int, int, int]:
    """(smallest subnormal exponent, smallest normal exponent, largest
    exponent) of a float format: the values 2**e it holds."""
    f = get_format(fmt)
    emin = 1 - f.bias
    top = (1 << f.exp_bits) - 1
    emax = top - f.bias - (1 if f.specials == Specials.IEEE else 0)
    return emin - f.frac_bits, emin, emax


def word(fmt, sign: int, mag: int, q: int) -> int | None:
    """The word of (-1)**sign * mag * 2**q in ``fmt``, or None if inexact."""
    return _word(get_format(fmt).name, int(sign), int(mag), int(q))


@lru_cache(maxsize=65536)
def _word(fmt: str, sign: int, mag: int, q: int) -> int | None:
    f = get_format(fmt)
    if f.kind.name == "INT":  # two's complement (or unsigned) integers
        if q < 0 and mag % (1 << -q):
            return None
        v = (mag << q) if q >= 0 else (mag >> -q)
        v = -v if sign else v
        lo, hi = (-(1 << (f.width - 1)), (1 << (f.width - 1)) - 1) if f.signed else (0, f.word_mask)
        return v & f.word_mask if lo <= v <= hi else None
    if f.kind.name == "E8M0":  # a power-of-two scale: 2**(code - bias)
        if sign or mag <= 0 or mag & (mag - 1):
            return None
        code = q + mag.bit_length() - 1 + f.bias
        return code if 0 <= code < (1 << f.width) - 1 else None
    if mag == 0:
        return (sign << (f.width - 1)) if f.signed else 0
    if mag >> 62:  # past the encoder's 64-bit integers: its low zeros moved into q
        low = (mag & -mag).bit_length() - 1
        mag, q = mag >> low, q + low
        if mag >> 62:  # more significant bits than any format holds
            return None
    w = int(encode(f, sign, mag, q)[()])
    cls, s, sig, lsb, _ = decode_scalar(word_int64(w), f.spec)
    if cls != 1 or s != sign:
        return None
    # exact iff sig * 2**lsb == mag * 2**q
    a, b = (sig, lsb), (mag, q)
    lo = min(a[1], b[1])
    return w if (a[0] << (a[1] - lo)) == (b[0] << (b[1] - lo)) else None


def pow2(fmt, e: int, sign: int = 0) -> int | None:
    return word(fmt, sign, 1, e)


def zero(fmt, sign: int = 0) -> int:
    return word(fmt, sign, 0, 0)


def raw_exp(fmt, w: int) -> int:
    return int(decode_scalar(word_int64(w), get_format(fmt).spec)[4])


def max_sig(fmt) -> int:
    """The largest finite significand (e4m3's all-ones is NaN)."""
    f = get_format(fmt)
    m = (1 << (f.frac_bits + 1)) - 1
    return m - 1 if f.specials == Specials.FN else m


def product(fa, fb, e: int, sign: int = 0, mant: tuple[int, int] = (1, 1),
            frac: tuple[int, int] = (0, 0)) -> tuple[int, int, int] | None:
    return _product(get_format(fa).name, get_format(fb).name, int(e), int(sign),
                    tuple(mant), tuple(frac))


@lru_cache(maxsize=65536)
def _product(fa, fb, e, sign, mant, frac):
    if get_format(fa).kind.name == "INT":
        shift = e - frac[0] - frac[1]
        wa = word(fa, sign, mant[0] << max(shift, 0), min(shift, 0))
        wb = word(fb, 0, mant[1], 0)
        return None if wa is None or wb is None else (wa, wb, 0)
    return _float_product(fa, fb, e, sign, mant, frac)


def _float_product(fa, fb, e, sign, mant, frac):
    """Words (a, b) with a * b = (-1)**sign * mant_a*2**-frac_a * mant_b*2**-frac_b * 2**e,
    normal numbers preferred and the exponent split evenly; also returns the
    raw exponent sum (what the datapath aligns on). None if impossible."""
    sa, na, xa = exp_range(fa)
    sb, nb, xb = exp_range(fb)
    # the best split has both factors normal and the exponents closest: try
    # those first, nearest split first (the smaller ea first on a tie)
    lo, hi = sa - 2, xa + 1
    for ea in sorted(range(max(lo, na), hi), key=lambda x: (abs(2 * x - e), x)):
        eb = e - ea
        if eb < nb:
            continue
        wa = word(fa, sign, mant[0], ea - frac[0])
        wb = word(fb, 0, mant[1], eb - frac[1])
        if wa is not None and wb is not None and raw_exp(fa, wa) == ea and raw_exp(fb, wb) == eb:
            return wa, wb, ea + eb
    best = None
    for ea in range(sa - 2, xa + 1):
        eb = e - ea
        wa = word(fa, sign, mant[0], ea - frac[0])
        wb = word(fb, 0, mant[1], eb - frac[1])
        if wa is None or wb is None:
            continue
        normal = (ea >= na) + (eb >= nb)
        key = (normal, -abs(ea - eb))
        if best is None or key > best[0]:
            best = (key, wa, wb)
    if best is None:
        return None
    _, wa, wb = best
    return wa, wb, raw_exp(fa, wa) + raw_exp(fb, wb)


def product_range(fa, fb) -> tuple[int, int]:
    """Exponents e for which a product of two powers of two equals 2**e."""
    sa, _, xa = exp_range(fa)
    sb, _, xb = exp_range(fb)
    return sa + sb, xa + xb


def home_exponent(fa, fb, prefer: int = 10) -> int:
    """An exponent E with +-2**E products, near ``prefer`` and away from the
    ends of the range (probes stay clear of floors and overflow)."""
    lo, hi = product_range(fa, fb)
    _, na, xa = exp_range(fa)
    _, nb, xb = exp_range(fb)
    top = xa + xb - 1
    return max(min(prefer, top), na + nb)


# ---------------------------------------------------------------------------
# Format fields.


def emax_biased(fmt: Format) -> int:
    """Largest biased exponent of a finite value."""
    emask = (1 << fmt.exp_bits) - 1
    return emask - 1 if fmt.specials == Specials.IEEE else emask


def max_frac(fmt: Format, biased) -> np.ndarray:
    """Largest fraction field of a finite value at each biased exponent."""
    fmask = (1 << fmt.frac_bits) - 1
    biased = np.asarray(biased, np.int64)
    if fmt.specials == Specials.FN:
        top = (1 << fmt.exp_bits) - 1
        return np.where(biased == top, fmask - 1, fmask)
    return np.full(biased.shape, fmask, np.int64)


def pack(fmt: Format, sign, biased, frac) -> np.ndarray:
    """Words (uint32; uint64 for f64) from fields; the dropped low bits (tf32) are zero."""
    sign, biased, frac = np.broadcast_arrays(*(np.asarray(x, np.int64) for x in (sign, biased, frac)))
    word = (biased << fmt.frac_bits) | frac
    if fmt.signed:
        word = word | (sign << (fmt.exp_bits + fmt.frac_bits))
    return (word << fmt.drop_bits).astype(fmt.dtype)


def fields(fmt: Format, words) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sign, biased exponent, fraction) of float words."""
    w = np.asarray(words)
    w = (w.view(np.int64) if w.dtype == np.uint64 else w.astype(np.int64)) >> fmt.drop_bits
    frac = w & ((1 << fmt.frac_bits) - 1)
    biased = (w >> fmt.frac_bits) & ((1 << fmt.exp_bits) - 1)
    sign = (w >> (fmt.exp_bits + fmt.frac_bits)) & 1 if fmt.signed else np.zeros_like(w)
    return sign, biased, frac


# ---------------------------------------------------------------------------
# Comparing result words.


def distance(fmt, got, want) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(got - want in ulps of ``fmt`` along the ordered words, got is a NaN,
    want is a NaN): the one comparison of result words."""
    fmt = get_format(fmt)
    got, want = np.atleast_1d(np.asarray(got)), np.atleast_1d(np.asarray(want))
    return (ordered(fmt, got) - ordered(fmt, want), decode(fmt, got).cls == Class.NAN,
            decode(fmt, want).cls == Class.NAN)


def ulps_apart(fmt, got, want) -> np.ndarray:
    """Signed ulps got - want, 0 where either word is a NaN (tell NaNs apart
    with :func:`either_nan`)."""
    d, nan_got, nan_want = distance(fmt, got, want)
    return np.where(nan_got | nan_want, 0, d)


def either_nan(fmt, got, want) -> np.ndarray:
    _, nan_got, nan_want = distance(fmt, got, want)
    return nan_got | nan_want


def ulps_or_none(fmt, got: int, want: int) -> int | None:
    """Ulps from ``want`` to ``got``; None when a NaN is involved."""
    d, nan_got, nan_want = distance(fmt, [int(got)], [int(want)])
    return None if bool(nan_got[0] or nan_want[0]) else int(d[0])
