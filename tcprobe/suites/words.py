"""Random bits that reproduce anywhere, and words built from format fields.

Every random draw of the suites comes from :class:`Bits`: the raw 64-bit
output of a PCG64 bit generator seeded with a SeedSequence of integers. The
bit generator's stream is fixed by numpy's compatibility policy (unlike the
distribution methods of ``Generator``, which may change between numpy
versions), and everything else here is integer arithmetic on those bits, so
a seed gives the same cases on any machine and numpy version.

Words are built from fields (sign, biased exponent, fraction) of a
:class:`~tcprobe.models.formats.Format`, vectorized over numpy arrays; no
host float is used.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import Format, Kind, Specials
from tcprobe.models.words import emax_biased, fields, max_frac, pack  # noqa: F401 (the suites' word vocabulary)


class Bits:
    """Reproducible integer draws from one seed sequence."""

    def __init__(self, *entropy: int):
        seq = np.random.SeedSequence([int(e) & 0xFFFFFFFF for e in entropy])
        self._gen = np.random.PCG64(seq)

    def u64(self, shape) -> np.ndarray:
        n = int(np.prod(shape)) if np.ndim(shape) else int(shape)
        return self._gen.random_raw(n).astype(np.uint64).reshape(shape)

    def bits(self, shape, width: int) -> np.ndarray:
        """Uniform integers of ``width`` bits (width <= 64) as int64 (uint64 above 62)."""
        raw = self.u64(shape)
        if width >= 64:
            return raw
        return (raw >> np.uint64(64 - width)).astype(np.int64) if width else np.zeros(shape, np.int64)

    def below(self, shape, bound) -> np.ndarray:
        """Integers in [0, bound) (bound an int or an array, below 2**32):
        the top 32 bits scaled by the bound (bias under 2**-32 * bound)."""
        top = (self.u64(shape) >> np.uint64(32)).astype(np.int64)
        return (top * np.asarray(bound, np.int64)) >> 32

    def between(self, shape, lo, hi) -> np.ndarray:
        """Integers in [lo, hi] inclusive."""
        lo = np.asarray(lo, np.int64)
        return lo + self.below(shape, np.asarray(hi, np.int64) - lo + 1)

    def chance(self, shape, num: int, den: int) -> np.ndarray:
        """True with probability num/den."""
        return self.below(shape, den) < num

    def pick(self, shape, options) -> np.ndarray:
        options = np.asarray(options)
        return options[self.below(shape, len(options))]


def finite(fmt: Format, bits: Bits, shape, *, sign=None, biased=None, frac=None) -> np.ndarray:
    """Random finite words; fields given are kept (clipped to finite values)."""
    if fmt.kind == Kind.INT:
        return integer(fmt, bits, shape)
    if fmt.kind == Kind.E8M0:
        b = bits.below(shape, (1 << fmt.width) - 1) if biased is None else np.clip(biased, 0, 254)
        return np.asarray(b, np.int64).astype(np.uint32)
    if sign is None:
        sign = bits.bits(shape, 1) if fmt.signed else 0
    if biased is None:
        biased = bits.below(shape, emax_biased(fmt) + 1)
    biased = np.clip(np.broadcast_to(np.asarray(biased, np.int64), shape), 0, emax_biased(fmt))
    if frac is None:
        frac = bits.bits(shape, fmt.frac_bits)
    frac = np.minimum(np.broadcast_to(np.asarray(frac, np.int64), shape), max_frac(fmt, biased))
    return pack(fmt, sign, biased, frac)


def integer(fmt: Format, bits: Bits, shape, lo=None, hi=None) -> np.ndarray:
    """Random words of an integer format (two's complement for signed)."""
    if lo is None:
        return bits.bits(shape, fmt.width).astype(fmt.dtype)
    v = bits.between(shape, lo, hi)
    return (v & fmt.word_mask).astype(np.uint32)


def raw(fmt: Format, bits: Bits, shape) -> np.ndarray:
    """Uniform words over the whole container (dropped bits included)."""
    return bits.bits(shape, fmt.width).astype(fmt.dtype)


def zero(fmt: Format, shape, sign=0) -> np.ndarray:
    if fmt.kind != Kind.FLOAT:
        return np.zeros(shape, fmt.dtype)
    return pack(fmt, np.broadcast_to(np.asarray(sign, np.int64), shape), 0, 0)


def one(fmt: Format, shape=(), sign=0) -> np.ndarray:
    """The word of 1 (-1 with sign) in a float, integer or scale format."""
    if fmt.kind == Kind.INT:
        return np.full(shape, 1, np.uint32)
    if fmt.kind == Kind.E8M0:
        return np.full(shape, fmt.bias, np.uint32)
    return pack(fmt, np.broadcast_to(np.asarray(sign, np.int64), shape), fmt.bias, 0)


def with_exponent(fmt: Format, raw_exp, sign=0, frac=0) -> np.ndarray:
    """Normal (or, below emin, subnormal) words with value
    (-1)**sign * (1 + frac/2**f) * 2**raw_exp, clipped to the finite range;
    below the normal range the significand is shifted into a subnormal (cut
    toward zero)."""
    raw_exp = np.asarray(raw_exp, np.int64)
    shape = np.broadcast_shapes(raw_exp.shape, np.shape(sign), np.shape(frac))
    raw_exp = np.broadcast_to(raw_exp, shape)
    frac = np.broadcast_to(np.asarray(frac, np.int64), shape)
    biased = raw_exp + fmt.bias
    sub = biased < 1
    shift = np.clip(1 - biased, 0, 62)
    sig = (frac | (1 << fmt.frac_bits)) >> shift
    frac_out = np.where(sub, sig, frac)
    biased = np.where(sub, 0, biased)
    top = emax_biased(fmt)
    over = biased > top
    biased = np.where(over, top, biased)
    frac_out = np.minimum(frac_out, max_frac(fmt, biased))
    return pack(fmt, np.broadcast_to(np.asarray(sign, np.int64), shape), biased, frac_out)


def specials(fmt: Format) -> dict[str, int]:
    """Named edge words of a float format: zeros, the smallest and largest
    subnormal, the smallest normal, one, the largest finite, the infinities
    and NaNs with payloads in different bits (where the format has them)."""
    if fmt.kind == Kind.INT:
        top = 1 << (fmt.width - 1)
        out = {"zero": 0, "one": 1, "max": (top - 1) if fmt.signed else fmt.word_mask}
        if fmt.signed:
            out |= {"minus-one": fmt.word_mask, "min": top}
        return out
    if fmt.kind == Kind.E8M0:
        return {"one": fmt.bias, "smallest": 0, "largest": 254, "nan": 0xFF}
    emask = (1 << fmt.exp_bits) - 1
    fmask = (1 << fmt.frac_bits) - 1
    top = emax_biased(fmt)
    p = lambda s, e, f: int(pack(fmt, s, e, f))  # noqa: E731
    out = {
        "+0": p(0, 0, 0), "min-subnormal": p(0, 0, 1), "max-subnormal": p(0, 0, fmask),
        "min-normal": p(0, 1, 0), "one": p(0, fmt.bias, 0),
        "max-finite": p(0, top, int(max_frac(fmt, np.array(top)))),
        "-max-finite": p(1, top, int(max_frac(fmt, np.array(top)))),
    }
    if fmt.signed:
        out["-0"] = p(1, 0, 0)
        out["-min-subnormal"] = p(1, 0, 1)
    if fmt.frac_bits == 0:
        out.pop("min-subnormal")
        out.pop("max-subnormal")
        out.pop("-min-subnormal", None)
    if fmt.specials == Specials.IEEE:
        out["+inf"] = p(0, emask, 0)
        out["-inf"] = p(1, emask, 0)
        out["nan-quiet"] = p(0, emask, 1 << (fmt.frac_bits - 1))
        if fmt.frac_bits > 1:
            out["nan-low-payload"] = p(1, emask, 1)
        if fmt.drop_bits:
            # a NaN whose payload lies only in the dropped bits: an Inf once
            # the input is cut to its container
            out["nan-dropped-payload"] = p(0, emask, 0) | 1
    elif fmt.specials == Specials.FN:
        out["nan"] = p(0, emask, fmask)
        out["-nan"] = p(1, emask, fmask)
    return out
