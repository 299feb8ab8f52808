"""Number formats as raw bit patterns: decode to exact integers, encode back.

A format's word is an unsigned integer of ``width`` bits. Decoding gives the
exact value as (class, sign, integer significand, exponent of its last bit,
raw exponent); encoding takes an exact ``mag * 2**q`` (plus a sticky flag for
anything below ``2**q``) and rounds it into the format. No host float is used.

The raw exponent is the unbiased exponent field, with the minimum normal
exponent standing in for subnormals and zero (the exponent the tensor-core
datapaths align on; tcgen05 write-up and MMA-Sim both use it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from .bits import bit_length, low_bits, mask, shl


class Kind(IntEnum):
    FLOAT = 0
    INT = 1
    E8M0 = 2  # unsigned power-of-two scale: 2**(code - bias); all-ones is NaN


class Specials(IntEnum):
    IEEE = 0  # exponent all ones: Inf (fraction 0) or NaN
    FN = 1  # only exponent and fraction all ones is NaN; no Inf (e4m3, ue4m3)
    FINITE = 2  # every code is a finite number (fp6, fp4)
    NONE = 3  # integers
    FNUZ = 4  # AMD fnuz fp8: the one word 0x80 (negative zero's) is NaN; no Inf, no -0


class Class(IntEnum):
    ZERO = 0
    FINITE = 1
    INF = 2
    NAN = 3


class Rounding(IntEnum):
    RZ = 0  # toward zero (truncate the magnitude)
    RNE = 1  # to nearest, ties to even
    RNA = 2  # to nearest, ties away from zero


class Overflow(IntEnum):
    IEEE = 0  # RNE/RNA overflow to Inf, RZ to the largest finite value
    INF = 1  # always Inf (or NaN where the format has no Inf)
    SATURATE = 2  # always the largest finite value


class FormatSpec(NamedTuple):
    """A format as the numba kernels take it: integers only, each named
    (kind, specials and signed as the ints of Kind, Specials and bool)."""

    kind: int
    width: int
    exp_bits: int
    frac_bits: int
    bias: int
    specials: int
    signed: int
    drop: int  # bits below the format in its container word (tf32's 13)


class FormatError(ValueError):
    """An unknown format name or a word that does not fit its format."""


@dataclass(frozen=True)
class Format:
    """A number format: field widths, bias, and how it spells specials."""

    name: str
    width: int
    exp_bits: int
    frac_bits: int
    bias: int
    specials: Specials
    signed: bool = True
    kind: Kind = Kind.FLOAT
    drop_bits: int = 0  # low bits of the word that the format does not keep (tf32: 13)
    canonical_nan: int | None = None  # NaN word the GPU datapaths write

    @property
    def spec(self) -> FormatSpec:
        """The format as a named tuple of ints, the form numba kernels take."""
        return FormatSpec(
            int(self.kind),
            self.width,
            self.exp_bits,
            self.frac_bits,
            self.bias,
            int(self.specials),
            int(self.signed),
            self.drop_bits,
        )

    @property
    def is_float(self) -> bool:
        return self.kind != Kind.INT

    @property
    def word_mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number (raw exponent of subnormals)."""
        return 1 - self.bias

    @property
    def dtype(self) -> type:
        """The numpy type that holds a word: uint64 for the 64-bit f64, else uint32."""
        return np.uint64 if self.width > 32 else np.uint32

    @property
    def precision(self) -> int:
        return self.frac_bits + 1

    @property
    def hex_digits(self) -> int:
        return (self.width + 3) // 4

    def words(self) -> np.ndarray:
        """Every word of the format, in order (only for widths of 16 or less)."""
        if self.width > 16:
            raise FormatError(f"{self.name} has too many words to list")
        return np.arange(1 << self.width, dtype=np.uint32)

    def __str__(self) -> str:
        return self.name


def _float(name, width, e, f, specials, *, signed=True, drop=0, nan=None):
    return Format(name, width, e, f, (1 << (e - 1)) - 1, specials, signed, Kind.FLOAT, drop, nan)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        # f64 (DMMA): the IEEE default quiet NaN stands in here; what DMMA writes is
        # unmeasured, and the f64 model propagates NaN operands (models/f64.py)
        _float("f64", 64, 11, 52, Specials.IEEE, nan=0x7FF8000000000000),
        _float("f32", 32, 8, 23, Specials.IEEE, nan=0x7FFFFFFF),
        _float("tf32", 32, 8, 10, Specials.IEEE, drop=13, nan=0x7FFFFFFF),
        _float("bf16", 16, 8, 7, Specials.IEEE, nan=0x7FFF),
        _float("f16", 16, 5, 10, Specials.IEEE, nan=0x7FFF),
        _float("e4m3", 8, 4, 3, Specials.FN, nan=0x7F),
        _float("e5m2", 8, 5, 2, Specials.IEEE, nan=0x7F),
        # AMD CDNA3 fp8/bf8 (OCP-draft "fnuz": finite, NaN, unsigned zero): bias 8 and
        # 16, one more than e4m3/e5m2's; 0x80 is the only NaN, 0x00 the only zero
        Format("e4m3fnuz", 8, 4, 3, 8, Specials.FNUZ, True, Kind.FLOAT, 0, 0x80),
        Format("e5m2fnuz", 8, 5, 2, 16, Specials.FNUZ, True, Kind.FLOAT, 0, 0x80),
        _float("e2m3", 6, 2, 3, Specials.FINITE),
        _float("e3m2", 6, 3, 2, Specials.FINITE),
        _float("e2m1", 4, 2, 1, Specials.FINITE),
        Format("ue8m0", 8, 8, 0, 127, Specials.IEEE, False, Kind.E8M0, 0, 0xFF),
        _float("ue4m3", 8, 4, 3, Specials.FN, signed=False, nan=0x7F),
        Format("s8", 8, 0, 0, 0, Specials.NONE, True, Kind.INT),
        Format("u8", 8, 0, 0, 0, Specials.NONE, False, Kind.INT),
        Format("s4", 4, 0, 0, 0, Specials.NONE, True, Kind.INT),  # eight a 32-bit register
        Format("u4", 4, 0, 0, 0, Specials.NONE, False, Kind.INT),
        Format("b1", 1, 0, 0, 0, Specials.NONE, False, Kind.INT),  # 32 a register; mma .and/.xor
        Format("s32", 32, 0, 0, 0, Specials.NONE, True, Kind.INT),
    )
}

_ALIASES = {
    "fp64": "f64",
    "float64": "f64",
    "double": "f64",
    "fp32": "f32",
    "float32": "f32",
    "fp16": "f16",
    "half": "f16",
    "float16": "f16",
    "bfloat16": "bf16",
    "fp8_e4m3": "e4m3",
    "e4m3fn": "e4m3",
    "fp8_e5m2": "e5m2",
    "fp6_e2m3": "e2m3",
    "fp6_e3m2": "e3m2",
    "fp4": "e2m1",
    "fp4_e2m1": "e2m1",
    "nvfp4": "e2m1",
    "int8": "s8",
    "uint8": "u8",
    "int4": "s4",
    "uint4": "u4",
    "int32": "s32",
    "fp8_e4m3fnuz": "e4m3fnuz",
    "fp8_e5m2fnuz": "e5m2fnuz",
    "float8_e4m3fnuz": "e4m3fnuz",
    "float8_e5m2fnuz": "e5m2fnuz",
    "xf32": "tf32",  # AMD CDNA3 xf32: an f32 word of which 1+8+10 bits count (MMA-Sim)
}


def get_format(name: str | Format) -> Format:
    """The format called ``name`` (PTX spelling, case-insensitive, common aliases)."""
    if isinstance(name, Format):
        return name
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return FORMATS[key]
    except KeyError:
        known = ", ".join(FORMATS)
        raise FormatError(f"unknown format {name!r} (known: {known})") from None


# ---------------------------------------------------------------------------
# Scalar kernels (numba): the one implementation every batch path calls.


@njit(cache=True)
def decode_scalar(code, spec):
    """Decode one word: (class, sign, significand, exponent of the last
    significand bit, raw exponent). The value is (-1)**sign * sig * 2**lsb."""
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    code = code & mask(width)
    if kind == 1:  # integer
        v = code
        if signed and (code >> (width - 1)) & 1:
            v = code - (1 << width)
        sign = 1 if v < 0 else 0
        sig = -v if v < 0 else v
        cls = 0 if v == 0 else 1
        return cls, sign, sig, 0, bit_length(sig) - 1
    if kind == 2:  # e8m0 scale
        if code == mask(width):
            return 3, 0, 0, 0, 0
        return 1, 0, 1, code - bias, code - bias
    sign = 0
    if signed:
        sign = (code >> (width - 1)) & 1
    e = (code >> (fbits + drop)) & mask(ebits)
    f = (code >> drop) & mask(fbits)
    if specials == 0 and e == mask(ebits):
        return (2 if f == 0 else 3), sign, 0, 0, 0
    if specials == 1 and e == mask(ebits) and f == mask(fbits):
        return 3, sign, 0, 0, 0
    if specials == 4 and code == (1 << (width - 1)):
        return 3, 0, 0, 0, 0
    if e == 0:
        raw = 1 - bias
        sig = f
    else:
        raw = e - bias
        sig = f | (1 << fbits)
    cls = 0 if sig == 0 else 1
    return cls, sign, sig, raw - fbits, raw


@njit(cache=True)
def max_finite_fields(spec, keep):
    """(biased exponent, kept fraction) of the largest finite value."""
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    if specials == 0:
        return mask(ebits) - 1, mask(keep)
    if specials == 1:
        return mask(ebits), (mask(fbits) - 1) >> (fbits - keep)
    return mask(ebits), mask(keep)  # FINITE, FNUZ: every exponent is finite


@njit(cache=True)
def inf_word(sign, spec):
    """The infinity of that sign, or NaN where the format has none."""
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    sbit = (sign << (width - 1)) if signed else 0
    if specials == 0:
        return sbit | (mask(ebits) << (fbits + drop))
    if specials == 4:
        return 1 << (width - 1)  # fnuz: the NaN
    return sbit | (mask(width - 1) if signed else mask(width))


@njit(cache=True)
def encode_scalar(sign, mag, q, sticky, spec, rounding, keep, overflow):
    """Round (-1)**sign * (mag + d) * 2**q, with 0 <= d < 1 and d > 0 exactly
    when ``sticky``, into the format; ``keep`` fraction bits are kept (the
    rest of the field is zero), ``rounding`` and ``overflow`` are the enums'
    values. A zero magnitude gives a zero of that sign. When ``sticky`` is
    set, ``mag`` must carry at least keep + 3 bits so the rounding bit is in it."""
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    sbit = (sign << (width - 1)) if signed else 0
    if mag == 0:
        return 0 if specials == 4 else sbit  # fnuz: no -0 (0x80 is the NaN)
    emin = 1 - bias
    msb = q + bit_length(mag) - 1
    e = msb if msb > emin else emin
    sh = (e - keep) - q
    kept = shl(mag, -sh)
    if sh > 0 and rounding != 0:
        rem = low_bits(mag, sh)
        up = False
        if sh <= 63:
            half = 1 << (sh - 1)
            if rounding == 1:
                up = rem > half or (rem == half and (sticky or (kept & 1) == 1))
            else:
                up = rem >= half
        if up:
            kept += 1
            if kept >> (keep + 1):
                kept >>= 1
                e += 1
    if kept >> keep:
        biased = e + bias
        frac = kept & mask(keep)
    else:
        biased = 0
        frac = kept
    maxb, maxf = max_finite_fields(spec, keep)
    if biased > maxb or (biased == maxb and frac > maxf):
        if overflow == 2 or (overflow == 0 and rounding == 0) or specials == 2:
            biased = maxb
            frac = maxf
        else:
            return inf_word(sign, spec)
    if specials == 4 and biased == 0 and frac == 0:
        return 0  # fnuz: a result rounded to zero is +0 (0x80 is the NaN)
    return sbit | (((biased << fbits) | (frac << (fbits - keep))) << drop)


@njit(cache=True)
def _decode_batch(codes, spec, cls, sign, sig, lsb, raw):
    flat = codes.ravel()
    for i in range(flat.size):
        c, s, m, e, r = decode_scalar(np.int64(flat[i]), spec)
        cls[i] = c
        sign[i] = s
        sig[i] = m
        lsb[i] = e
        raw[i] = r


@njit(cache=True)
def _encode_batch(sign, mag, q, sticky, spec, rounding, keep, overflow, out):
    for i in range(out.size):
        out[i] = encode_scalar(sign[i], mag[i], q[i], sticky[i], spec, rounding, keep, overflow)


# ---------------------------------------------------------------------------
# Batch API on numpy arrays of words.


class Decoded(NamedTuple):
    """Exact decoded values: value = (-1)**sign * sig * 2**lsb for FINITE."""

    cls: np.ndarray
    sign: np.ndarray
    sig: np.ndarray
    lsb: np.ndarray
    raw: np.ndarray


def decode(fmt: str | Format, codes) -> Decoded:
    """Decode an array of words of ``fmt`` (any shape) into exact parts."""
    fmt = get_format(fmt)
    codes = np.asarray(codes)
    # a 64-bit word keeps its bits in an int64 (the sign bit wraps to negative)
    codes = np.ascontiguousarray(codes.view(np.int64) if codes.dtype == np.uint64
                                 else codes.astype(np.int64, copy=False))
    shape = codes.shape
    n = codes.size
    cls = np.empty(n, np.int8)
    sign = np.empty(n, np.int8)
    sig = np.empty(n, np.int64)
    lsb = np.empty(n, np.int64)
    raw = np.empty(n, np.int64)
    _decode_batch(codes, fmt.spec, cls, sign, sig, lsb, raw)
    return Decoded(*(x.reshape(shape) for x in (cls, sign, sig, lsb, raw)))


def encode(
    fmt: str | Format,
    sign,
    mag,
    q,
    rounding: Rounding = Rounding.RNE,
    *,
    keep: int | None = None,
    sticky=None,
    overflow: Overflow = Overflow.IEEE,
) -> np.ndarray:
    """Round the exact values (-1)**sign * mag * 2**q into words of ``fmt``."""
    fmt = get_format(fmt)
    if fmt.kind != Kind.FLOAT:
        raise FormatError(f"cannot encode into {fmt.name}: not a floating-point format")
    sign, mag, q = np.broadcast_arrays(
        np.asarray(sign, np.int64), np.asarray(mag, np.int64), np.asarray(q, np.int64)
    )
    shape = sign.shape
    st = np.zeros(shape, np.bool_) if sticky is None else np.broadcast_to(sticky, shape)
    out = np.empty(sign.size, np.int64)
    _encode_batch(
        np.ascontiguousarray(sign).ravel(),
        np.ascontiguousarray(mag).ravel(),
        np.ascontiguousarray(q).ravel(),
        np.ascontiguousarray(st).ravel(),
        fmt.spec,
        int(rounding),
        fmt.frac_bits if keep is None else int(keep),
        int(overflow),
        out,
    )
    return out.reshape(shape).astype(fmt.dtype)


def convert(codes, src: str | Format, dst: str | Format, rounding=Rounding.RNE, *,
            overflow: Overflow = Overflow.IEEE) -> np.ndarray:
    """Convert words of ``src`` to ``dst`` (NaN becomes dst's canonical NaN).
    Words of 8 bits or fewer read a table of every word's conversion (made
    once, by the same arithmetic) where the batch is larger than the table."""
    src, dst = get_format(src), get_format(dst)
    if src.word_mask <= 0xFF:
        arr = np.asarray(codes)
        if arr.size > src.word_mask + 1 and arr.dtype.kind in "iu" and (
                int(arr.min()) >= 0 and int(arr.max()) <= src.word_mask):
            return _conversion_table(src.name, dst.name, rounding, overflow)[arr]
    return _convert(codes, src, dst, rounding, overflow)


@lru_cache(maxsize=256)
def _conversion_table(src: str, dst: str, rounding, overflow) -> np.ndarray:
    """Every word of the (8-bit or narrower) format ``src`` converted to ``dst``."""
    fmt = get_format(src)
    table = _convert(np.arange(fmt.word_mask + 1, dtype=np.int64), fmt, get_format(dst),
                     rounding, overflow)
    table.setflags(write=False)
    return table


def _convert(codes, src: Format, dst: Format, rounding, overflow) -> np.ndarray:
    d = decode(src, codes)
    out = encode(dst, d.sign, d.sig, d.lsb, rounding, overflow=overflow)
    inf = d.cls == Class.INF
    if inf.any():
        out[inf] = [int(inf_word(int(s), dst.spec)) & dst.word_mask for s in d.sign[inf]]
    nan = d.cls == Class.NAN
    out[nan] = dst.canonical_nan if dst.canonical_nan is not None else inf_word(0, dst.spec)
    return out


def from_container(words, fmt: str | Format, mode: str = "exact") -> np.ndarray:
    """Words of ``fmt`` from f32 container words, as the published captures
    store every input. ``exact`` rejects a word that loses bits; ``truncate``
    keeps the top bits (what tcgen05 does to tf32 and bf16 inputs)."""
    fmt = get_format(fmt)
    words = np.asarray(words, np.uint32)
    if fmt.name in ("f32", "tf32"):
        if mode == "exact" and fmt.drop_bits and (words & ((1 << fmt.drop_bits) - 1)).any():
            raise FormatError(f"an f32 word has bits below the {fmt.name} container")
        return words.copy()
    if fmt.name == "bf16":
        if mode == "exact" and (words & 0xFFFF).any():
            raise FormatError("an f32 word is not exactly a bf16 value")
        return words >> 16
    out = convert(words, "f32", fmt, Rounding.RZ if mode == "truncate" else Rounding.RNE)
    if mode == "exact":
        back = convert(out, fmt, "f32")
        d_in, d_back = decode("f32", words), decode("f32", back)
        same = (d_in.cls == d_back.cls) & ((d_in.cls != Class.FINITE) | (
            (d_in.sign == d_back.sign) & (words == back)))
        if not same.all():
            bad = int(words[~same].ravel()[0])
            raise FormatError(f"f32 word {bad:#010x} is not exactly a {fmt.name} value")
    return out


def convert_input(words, fmt: str | Format, mode: str) -> np.ndarray:
    """Apply an input conversion to words whose container is wider than the
    format (tf32 in an f32 word): ``truncate`` clears the dropped bits,
    ``rne``/``rna`` round the dropped bits away (NaN stays NaN)."""
    fmt = get_format(fmt)
    words = np.asarray(words, np.int64)
    d = fmt.drop_bits
    if d == 0 or mode == "truncate":
        return words & ~((1 << d) - 1) if d else words.copy()
    dec = decode(get_format("f32") if fmt.width == 32 else fmt, words)
    low = words & ((1 << d) - 1)
    keep = words >> d
    half = 1 << (d - 1)
    if mode == "rne":
        up = (low > half) | ((low == half) & ((keep & 1) == 1))
    elif mode == "rna":
        up = low >= half
    else:
        raise FormatError(f"unknown input conversion {mode!r} (truncate, rne, rna)")
    out = (keep + up) << d
    nan = dec.cls == Class.NAN
    out[nan] = (words[nan] | (1 << (d + fmt.frac_bits - 1))) & ~((1 << d) - 1)
    return out


# ---------------------------------------------------------------------------
# Exact values for people and tests (never on an arithmetic path).


def word_int64(code: int) -> int:
    """A word as the int64 the scalar kernels take (a 64-bit word's sign bit wraps)."""
    code = int(code)
    return code - (1 << 64) if code >= 1 << 63 else code


def to_fraction(fmt: str | Format, code: int) -> Fraction | str:
    """The exact value of one word, or 'nan' / '+inf' / '-inf'."""
    fmt = get_format(fmt)
    c, s, m, e, _ = decode_scalar(word_int64(code), fmt.spec)
    if c == Class.NAN:
        return "nan"
    if c == Class.INF:
        return "-inf" if s else "+inf"
    v = Fraction(m) * (Fraction(2) ** e)
    return -v if s else v


def describe(fmt: str | Format, code: int) -> str:
    """A short human rendering of a word: hex and its value."""
    fmt = get_format(fmt)
    v = to_fraction(fmt, code)
    if isinstance(v, str):
        text = v
    elif v == 0:
        c, s, *_ = decode_scalar(word_int64(code), fmt.spec)
        text = "-0" if s else "0"
    else:
        text = f"{float(v):.9g}" if fmt.kind == Kind.FLOAT or fmt.kind == Kind.E8M0 else str(v)
    return f"0x{int(code) & fmt.word_mask:0{fmt.hex_digits}x} ({text})"


def ordered(fmt: str | Format, words) -> np.ndarray:
    """Words mapped to integers that increase with the value (-0 and +0 both
    0), so the difference of two is their distance in units in the last place."""
    fmt = get_format(fmt)
    if fmt.width == 64:  # sign and magnitude in an int64 (the sign bit makes it negative)
        w = np.asarray(words).astype(np.uint64).view(np.int64)
        mag = w & np.int64(0x7FFFFFFFFFFFFFFF)
        return np.where(w < 0, -mag, mag)
    w = np.asarray(words, np.int64) & fmt.word_mask
    if not fmt.signed or fmt.kind != Kind.FLOAT:
        return w
    top = 1 << (fmt.width - 1)
    return np.where(w & top, -(w & (top - 1)), w)


def ulp_distance(fmt: str | Format, got, want) -> np.ndarray:
    """Signed distance got - want in units in the last place of ``fmt``
    (0 where either word is a NaN; callers check NaNs apart)."""
    fmt = get_format(fmt)
    d = ordered(fmt, got) - ordered(fmt, want)
    nan = (decode(fmt, got).cls == Class.NAN) | (decode(fmt, want).cls == Class.NAN)
    return np.where(nan, 0, d)
