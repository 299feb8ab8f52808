"""The engine's dot product, block after block (engine module doc, steps 2-4),
as one compiled loop that the plain kernel and the fast path both run.

:func:`kernel_params` turns an EngineParams and a datapath into one named
structure, :class:`KernelParams` (formats as specs, each stage's rounding,
kept bits and NaN word, the window), built here and nowhere else.
:func:`case_word` walks one case's K positions in blocks and hands each
block to :func:`.core.block_word`, its products decoded by the classed
decoder (``decode_scalar`` on every word): the plain kernel, and the fast
path's configurations that the lane kernel does not take.

The lane decoder's pieces live here too: :func:`fields`, a float word's
fields by bit operations alone, with no class and no branch, and the
special counts (:func:`product_count`, :func:`counts_word`: the NaN, +Inf
and -Inf products of a block by bit operations). The fast path's lane
kernel (:mod:`.lane_kernel`, windowed, raw-aligned float configurations:
:func:`lane_decoder_applies`) and the block-scaled fast kernel read words
through them; a block that holds a NaN or Inf word gives NaN or an Inf
whatever its finite terms are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .core import (
    EXACT,
    NO_FLOOR,
    NORMALIZE,
    SATURATE,
    WRAP,
    Stage,
    Window,
    add_term,
    add_word,
    block_word,
    product_term,
)
from .formats import (
    Overflow,
    Rounding,
    convert,
    convert_input,
    decode_scalar,
    get_format,
    inf_word,
)

ROUNDINGS = {"rz": Rounding.RZ, "rne": Rounding.RNE, "rna": Rounding.RNA}
CARRY_TOPS = {"wrap": WRAP, "saturate": SATURATE, "normalize": NORMALIZE}
OVERFLOWS = {"ieee": Overflow.IEEE, "inf": Overflow.INF, "saturate": Overflow.SATURATE}


class ParamError(ValueError):
    """A parameter value the engine does not know."""


class KernelParams(NamedTuple):
    """Every parameter of the engine's kernels, named (see kernel_params)."""

    k: int  # products of one dot product
    block: int  # products fused per block (at most K)
    ordered: bool  # K positions consumed in the order array (else 0..K-1)
    a_spec: tuple
    b_spec: tuple
    c_spec: tuple  # C's format (after c_convert)
    normalized: bool  # terms align on their leading bit, not raw exponent sums
    window: Window
    inter: Stage  # a block result passed on to the next block
    out: Stage  # the last block's result, the output word
    c_last: bool  # C is added after the blocks (c_join='last')
    c_add: Stage  # that final add (exact, rounded by c_add_rounding)


class Prepared(NamedTuple):
    """Words as the kernels read them, the K order, and the parameters."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: np.ndarray
    params: KernelParams


def _nan_word(fmt, override: int | None) -> int:
    if override is not None:
        return int(override)
    if fmt.canonical_nan is None:
        raise ParamError(f"{fmt.name} has no NaN")
    return fmt.canonical_nan


def kernel_params(dp, p, k: int, c_fmt=None) -> KernelParams:
    """The KernelParams of EngineParams ``p`` on datapath ``dp`` with K=k
    (``c_fmt``: C's format when c_convert changed it)."""
    d_fmt = get_format(dp.d_type)
    c_fmt = c_fmt or get_format(dp.c)
    i_fmt = get_format(p.inter_type) if p.inter_type else d_fmt
    d_keep = d_fmt.frac_bits if p.output_frac_bits is None else p.output_frac_bits
    if p.inter_frac_bits is not None:
        i_keep = p.inter_frac_bits
    elif i_fmt == d_fmt:
        i_keep = d_keep
    else:
        i_keep = i_fmt.frac_bits
    overflow = int(OVERFLOWS[p.overflow])
    zero_pos = p.zero_sign == "positive"
    d_nan = _nan_word(d_fmt, p.nan)
    out = Stage(d_fmt.spec, int(ROUNDINGS[p.output_rounding]), d_keep, d_nan, overflow, zero_pos)
    inter = Stage(i_fmt.spec, int(ROUNDINGS[p.inter_rounding or p.output_rounding]), i_keep,
                  _nan_word(i_fmt, p.nan if i_fmt == d_fmt else None), overflow, zero_pos)
    c_add = Stage(d_fmt.spec, int(ROUNDINGS[p.c_add_rounding]), d_keep, d_nan, overflow,
                  zero_pos)
    window = Window(-1 if p.window_bits is None else int(p.window_bits),
                    NO_FLOOR if p.zero_floor is None else int(p.zero_floor),
                    -1 if p.carry_bits is None else int(p.carry_bits),
                    CARRY_TOPS[p.carry_top])
    return KernelParams(k, min(p.block_size, max(k, 1)), p.k_order is not None,
                        get_format(dp.a_type).spec, get_format(dp.b_type).spec, c_fmt.spec,
                        p.align == "normalized", window, inter, out, p.c_join == "last", c_add)


def prepare(dp, cases, p, convert_inputs=convert_input) -> Prepared:
    """Apply the input and C conversions and build the KernelParams (shared
    by the plain kernel and the fast path)."""
    a_fmt, b_fmt = get_format(dp.a_type), get_format(dp.b_type)
    c_fmt = get_format(dp.c)
    a_words, b_words = cases.masked()
    a_words = convert_inputs(a_words, a_fmt, p.input_conversion)
    b_words = convert_inputs(b_words, b_fmt, p.input_conversion)
    c_words = np.asarray(cases.c, np.int64)
    if p.c_convert:
        c_words = convert(c_words, c_fmt, p.c_convert).astype(np.int64)
        c_fmt = get_format(p.c_convert)
    k = cases.k
    order = np.arange(k, dtype=np.int64) if p.k_order is None else np.asarray(p.k_order, np.int64)
    if sorted(order.tolist()) != list(range(k)):
        raise ParamError(f"k_order must be a permutation of 0..{k - 1}")
    return Prepared(a_words, b_words, c_words, order, kernel_params(dp, p, k, c_fmt))


def lane_decoder_applies(kp: KernelParams) -> bool:
    """Whether the lane decoder computes this configuration: a window, raw
    alignment, float formats for A, B, C and the block results."""
    return (kp.window.bits >= 0 and not kp.normalized
            and all(spec[0] == 0 for spec in (kp.a_spec, kp.b_spec, kp.c_spec, kp.inter.spec)))


# ---------------------------------------------------------------------------
# The fast kernels' scan of the words


def stray_pair(width: int) -> int:
    """The bits of a 64-bit pair of uint32 words that lie above a ``width``-bit
    format in either word (the fast kernels scan A and B rows as such pairs)."""
    word = (1 << width) - 1 if width < 32 else 0xFFFFFFFF
    return ~(word | (word << 32)) & 0xFFFFFFFFFFFFFFFF


def stray_word(width: int) -> int:
    """The bits of one uint32 word above a ``width``-bit format (the C scan)."""
    return stray_pair(width) & 0xFFFFFFFF


def scan_reads_words_as_given(cases) -> bool:
    """Whether a fast kernel's scan of the words (word_pairs and C) covers
    every word Cases.check scans: uint32 words, no sparse mask (which zeroes
    the disabled positions), an even K (whole pairs)."""
    return (cases.active is None and cases.k % 2 == 0
            and all(x.dtype == np.uint32 for x in (cases.a, cases.b, cases.c)))


def word_pairs(a_words: np.ndarray, b_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A and B rows as 64-bit pairs of words for the kernel's scan (an odd K
    gives empty pairs: the caller scans those words on the host)."""
    if a_words.shape[1] % 2:
        empty = np.zeros((len(a_words), 0), np.uint64)
        return empty, empty
    return a_words.view(np.uint64), b_words.view(np.uint64)


# ---------------------------------------------------------------------------
# The two product decoders




@njit(inline="always")
def fields(x, spec):
    """(special, sign, significand, raw exponent) of a float word by bit
    operations alone, as decode_scalar gives them for finite words and zeros;
    ``special`` marks NaN and Inf words, whose other fields mean nothing."""
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    x = x & ((1 << width) - 1)
    sign = (x >> (width - 1)) & 1 if signed else 0
    emask = (1 << ebits) - 1
    fmask = (1 << fbits) - 1
    e = (x >> (fbits + drop)) & emask
    f = (x >> drop) & fmask
    if specials == 0:
        special = e == emask
    elif specials == 1:
        special = (e == emask) & (f == fmask)
    else:
        special = False
    sig = f | ((1 if e != 0 else 0) << fbits)
    raw = (e if e != 0 else 1) - bias
    return special, sign, sig, raw


@njit(cache=True)
def lane_class(special, sig, spec):
    """A word's class from its fields (NaN: a special with a fraction, or any
    special of a format without Inf)."""
    if special:
        return 3 if (spec[5] == 1 or (sig & ((1 << spec[3]) - 1)) != 0) else 2
    return 0 if sig == 0 else 1


@njit(inline="always")
def magnitude(x, spec):
    """The exponent and fraction fields of a float word, as one integer."""
    return (x >> spec[7]) & ((1 << (spec[2] + spec[3])) - 1)


@njit(inline="always")
def _sign(x, spec):
    """The sign bit of a float word (0 for an unsigned format)."""
    return (x >> (spec[1] - 1)) & 1 if spec[6] else 0


@njit(inline="always")
def _special_masks(u, spec):
    """(special, NaN) of a word with magnitude fields ``u`` as masks (-1 or
    0), from a difference's sign: a NaN or Inf word is special, and NaN when
    it has a fraction or its format has no Inf (lane_class's classes)."""
    ebits, fbits, specials = spec[2], spec[3], spec[5]
    if specials == 0:
        inf = ((1 << ebits) - 1) << fbits
        return (inf - 1 - u) >> 63, (inf - u) >> 63
    if specials == 1:
        nan = (1 << (ebits + fbits)) - 2
        return (nan - u) >> 63, (nan - u) >> 63
    return 0, 0


@njit(inline="always")
def widest_tells(a_spec, b_spec):
    """Whether the largest magnitude field of a block's A and B words tells
    whether it holds a NaN or Inf word: A and B of one format, one with such
    words (holds_special)."""
    return a_spec == b_spec and a_spec[5] != 2


@njit(inline="always")
def holds_special(widest, spec):
    """Whether A and B words of one format whose largest magnitude field is
    ``widest`` include a NaN or Inf word."""
    return _special_masks(widest, spec)[0] != 0


# A block's special counts (product_count summed) in one integer: NaN products
# from bit 0, +Inf ones from bit _COUNT_BITS, -Inf ones from 2 * _COUNT_BITS.
_COUNT_BITS = 21


@njit(inline="always")
def _inf_count(special, sign):
    """The count of one NaN-or-Inf term of that sign as _COUNT_BITS lays it
    out (``special`` a mask: -1 or 0)."""
    return special & (1 << (_COUNT_BITS + (_COUNT_BITS & -sign)))


@njit(inline="always")
def product_count(xa, xb, a_spec, b_spec):
    """One product's special counts: 1 for a NaN (a NaN factor, Inf x 0),
    one +Inf or -Inf for a NaN or Inf factor (a NaN decides the block
    whatever the infinities are), by bit operations alone."""
    ua = magnitude(xa, a_spec)
    ub = magnitude(xb, b_spec)
    if a_spec == b_spec:  # one format: the larger field tells, the smaller is the 0
        special, nan = _special_masks(max(ua, ub), a_spec)
        if a_spec[5] == 0:
            nan |= special & ((min(ua, ub) - 1) >> 63)
    else:
        sp_a, nan_a = _special_masks(ua, a_spec)
        sp_b, nan_b = _special_masks(ub, b_spec)
        special = sp_a | sp_b
        nan = nan_a | nan_b | (sp_a & ((ub - 1) >> 63)) | (sp_b & ((ua - 1) >> 63))
    if a_spec[5] != 0 and b_spec[5] != 0:  # neither format has an Inf
        return nan & 1
    return (nan & 1) + _inf_count(special, _sign(xa, a_spec) ^ _sign(xb, b_spec))


@njit(inline="always")
def addend_count(word, spec):
    """An addend word's special counts (_COUNT_BITS): 1 for a NaN, one +Inf
    or -Inf for an Inf, else 0."""
    special, nan = _special_masks(magnitude(word, spec), spec)
    return (nan & 1) + _inf_count(special, _sign(word, spec))


@njit(inline="always")
def nan_counts(counts):
    """Special counts with every product counted as a NaN (each Inf met a zero)."""
    field = (1 << _COUNT_BITS) - 1
    return (counts & field) + ((counts >> _COUNT_BITS) & field) + (counts >> (2 * _COUNT_BITS))


@njit(inline="always")
def counts_word(counts, stage):
    """The word of a block that holds a NaN or Inf word, from its special
    counts, as specials_word gives it: NaN for a NaN product or addend, or
    for both infinities, else the one infinity."""
    field = (1 << _COUNT_BITS) - 1
    pos = (counts >> _COUNT_BITS) & field
    neg = counts >> (2 * _COUNT_BITS)
    if (counts & field) != 0 or (pos != 0 and neg != 0):
        return np.int64(stage.nan)
    return np.int64(inf_word(1 if neg != 0 else 0, stage.spec))


@njit(inline="always")
def _class_terms(a, b, i, lo, hi, order, kp, t, acc_word, acc_spec, have_acc):
    """The classed decoder: finite nonzero products only, every word classed."""
    n = 0
    flags = 0
    if have_acc:
        n, flags = add_word(t, n, flags, acc_word, acc_spec, kp.normalized)
    for j in range(lo, hi):
        kk = order[j] if kp.ordered else j
        ca, sa, ma, la, ra = decode_scalar(np.int64(a[i, kk]), kp.a_spec)
        cb, sb, mb, lb, rb = decode_scalar(np.int64(b[i, kk]), kp.b_spec)
        cls, s, sig, lsb, al = product_term(ca, sa, ma, la, ra, cb, sb, mb, lb, rb,
                                            kp.normalized)
        n, flags = add_term(t, n, flags, cls, s, sig, lsb, al)
    return n, flags


# ---------------------------------------------------------------------------
# The loop


@njit(inline="always")
def case_word(a, b, i, c_word, order, kp, t):
    """Case i through its blocks: C (or nothing, with c_join='last') is the
    first block's addend, each block's result the next one's; returns the
    output word (the classed decoder; the fast path's lane kernel,
    :mod:`.lane_kernel`, walks the same blocks in the same order)."""
    k = kp.k
    block = kp.block
    n_blocks = (k + block - 1) // block
    acc_word = c_word
    acc_spec = kp.c_spec
    for blk in range(n_blocks):
        last = blk == n_blocks - 1 and not kp.c_last
        stage = kp.out if last else kp.inter
        have_acc = blk > 0 or not kp.c_last
        lo = blk * block
        hi = min(lo + block, k)
        n, flags = _class_terms(a, b, i, lo, hi, order, kp, t, acc_word, acc_spec, have_acc)
        acc_word = block_word(t, n, flags, kp.window, stage)
        acc_spec = stage.spec
    if kp.c_last:
        acc_word = c_last_word(t, acc_word, acc_spec, c_word, kp)
    return acc_word


@njit(cache=True)
def c_last_word(t, acc_word, acc_spec, c_word, kp):
    """c_join='last': the blocks' result plus C, summed exactly and rounded once."""
    n, flags = add_word(t, 0, 0, acc_word, acc_spec, kp.normalized)
    n, flags = add_word(t, n, flags, c_word, kp.c_spec, kp.normalized)
    return block_word(t, n, flags, EXACT, kp.c_add)
