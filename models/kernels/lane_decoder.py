"""The lane decoder: a float word's fields by bit operations alone, with
no class and no branch (:func:`fields`), and a block's special counts
(:func:`product_count`, :func:`counts_word`: its NaN, +Inf and -Inf
products by bit operations), with the fast kernels' scan of the words for
bits above their format (:func:`word_pairs`, :func:`stray_pair`).

The fast path's lane kernel (:mod:`.lane_kernel`, windowed, raw-aligned
float configurations: :func:`lane_decoder_applies`), the GEMM kernel and
the block-scaled fast kernels read words through them; a block that holds
a NaN or Inf word gives NaN or an Inf whatever its finite terms are.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..formats import inf_word
from .kernel_params import KernelParams


def lane_decoder_applies(kp: KernelParams) -> bool:
    """Whether the lane decoder computes this configuration: a window, raw
    alignment, float formats for A, B, C and the block results."""
    return (kp.window.bits >= 0 and not kp.normalized
            and all(spec.kind == 0 for spec in (kp.a_spec, kp.b_spec, kp.c_spec, kp.inter.spec)))


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
        return 3 if (spec.specials == 1 or (sig & ((1 << spec.frac_bits) - 1)) != 0) else 2
    return 0 if sig == 0 else 1


@njit(inline="always")
def magnitude(x, spec):
    """The exponent and fraction fields of a float word, as one integer."""
    return (x >> spec.drop) & ((1 << (spec.exp_bits + spec.frac_bits)) - 1)


@njit(inline="always")
def _sign(x, spec):
    """The sign bit of a float word (0 for an unsigned format)."""
    return (x >> (spec.width - 1)) & 1 if spec.signed else 0


@njit(inline="always")
def _special_masks(u, spec):
    """(special, NaN) of a word with magnitude fields ``u`` as masks (-1 or
    0), from a difference's sign: a NaN or Inf word is special, and NaN when
    it has a fraction or its format has no Inf (lane_class's classes)."""
    ebits, fbits, specials = spec.exp_bits, spec.frac_bits, spec.specials
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
    return a_spec == b_spec and a_spec.specials != 2


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
        if a_spec.specials == 0:
            nan |= special & ((min(ua, ub) - 1) >> 63)
    else:
        sp_a, nan_a = _special_masks(ua, a_spec)
        sp_b, nan_b = _special_masks(ub, b_spec)
        special = sp_a | sp_b
        nan = nan_a | nan_b | (sp_a & ((ub - 1) >> 63)) | (sp_b & ((ua - 1) >> 63))
    if a_spec.specials != 0 and b_spec.specials != 0:  # neither format has an Inf
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
