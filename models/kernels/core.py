"""The arithmetic core: one block of a fused dot product, from decoded terms to
its result word, written once for every accumulator kernel.

A block is handed over as *terms* and *flags*. A term is one exact finite
value ``(-1)**sign * sig * 2**lsb`` (a product, an addend, or a group sum
formed by the caller) with an *alignment exponent*; the flags say what the
block's words were (:data:`NAN`, :data:`POS_INF`, :data:`NEG_INF`, and
:data:`NONNEG` once a term or a zero product of sign + was seen).
:func:`block_word` then takes five steps, in this order:

1. specials first (:func:`specials_word`): the NAN flag, or both infinities,
   give the stage's NaN word; one infinity gives that Inf;
2. anchor: the largest alignment exponent of the terms, never below the
   window's ``floor``; the quantum is ``q = anchor - window.bits``;
3. cut: every term toward zero to a multiple of ``2**q`` (:func:`cut`);
4. exact sum of the cut terms, an integer, held in ``carry_bits`` integer
   bits above the anchor when set (``carry_top``: wrapped, saturated or
   normalized); with no window (``bits < 0``) the terms
   are summed uncut in a wide exact accumulator instead of steps 2-4;
5. round the sum into the stage's format (:func:`round_word`); an exact zero
   is +0 (``stage.zero_pos``) or, under IEEE zero signs, -0 when no NONNEG.

The kernels built on it differ only in how they decode products into terms
and in the quantum rule they state through alignment exponents and window:

* the engine's plain kernel and its fast path (:mod:`.engine`,
  :mod:`.fastpath`): a term aligns on its raw exponent sum (or its leading
  bit, ``align='normalized'``); ``Window(F, floor, carry_bits)``;
* the block-scaled kernel (:mod:`.tcgen05_scaled`): a term is a product with
  its scales folded in, or an exact group sum; its alignment exponent is the
  quantum it asks for (``R_k - product_window``, ...), and
  ``Window(0, q_floor, -1)`` makes ``q`` the largest of those and the floor.

Interface for a kernel with pre-decoded products (a matrix product that
decodes every row of A and column of B once with
:func:`~tcprobe.models.formats.decode_scalar`, giving ``(cls, sign, sig,
lsb, raw)`` per element): per output element and per block, inside numba,

    t = new_terms(block_size + 2)            # once per kernel: rows SIGN .. WIDE
    n, flags = 0, 0
    n, flags = add_word(t, n, flags, acc_word, acc_spec, normalized)  # C / previous block
    for k in the block:
        cls, s, sig, lsb, al = product_term(*a_dec[i, k], *b_dec[k, j], normalized)
        n, flags = add_term(t, n, flags, cls, s, sig, lsb, al)
    word = block_word(t, n, flags, window, stage)

``window`` is a :class:`Window`, ``stage`` a :class:`Stage` (both named
tuples of ints, built once on the host: :func:`tcprobe.models.engine.kernel_params`
builds them from an EngineParams). Every function here is compiled inline,
so a kernel that holds its Window and Stage as constants folds them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..bits import bit_length, low_bits, shl
from ..formats import decode_scalar, encode_scalar, inf_word

# Word classes, as decode_scalar gives them (formats.Class).
ZERO, FINITE, INF, NAN_CLASS = 0, 1, 2, 3
# Block flags.
NAN = 1  # a NaN word, Inf x 0, or (with both Inf flags) +Inf + -Inf
POS_INF = 2
NEG_INF = 4
NONNEG = 8  # a finite term or a zero product of sign +
NO_FLOOR = -(1 << 40)  # an alignment exponent or floor that bounds nothing


class Window(NamedTuple):
    """How a block's terms are aligned and cut (steps 2-4)."""

    bits: int  # F: fraction bits kept below the anchor; -1: exact sum, no cut
    floor: int  # the anchor is never below this (NO_FLOOR: no floor)
    carry_bits: int  # integer bits of the sum above the anchor; -1: unbounded
    carry_top: int = 0  # a sum past the carry bits: WRAP, SATURATE or NORMALIZE


EXACT = Window(-1, NO_FLOOR, -1)
# What the accumulator's top does with a sum that needs more than carry_bits
# (Window.carry_top): drop the bits above (two's complement), clamp to the
# largest magnitude it holds, or shift right (the anchor moves up, low bits go).
WRAP, SATURATE, NORMALIZE = 0, 1, 2


class Stage(NamedTuple):
    """How a block's sum becomes a word (steps 1 and 5)."""

    spec: tuple  # the format it is written in (Format.spec)
    rounding: int  # formats.Rounding
    keep: int  # fraction bits kept
    nan: int  # the NaN word
    overflow: int  # formats.Overflow
    zero_pos: bool  # an exact zero is +0 (else -0 when every term was negative)


_WIDE_LIMBS = 26  # 32-bit limbs of the exact accumulator: exponents -352 .. 480
_WIDE_BASE = -352
_M32 = (1 << 32) - 1


# Rows of the terms array (one int64 array, so that no reference is counted
# in the loops): sign, significand, exponent of its last bit, alignment
# exponent; the last row holds the limbs of the exact accumulator.
SIGN, SIG, LSB, ALIGN, WIDE = 0, 1, 2, 3, 4


@njit(inline="always")
def new_terms(size):
    """Scratch for blocks of up to ``size`` terms (rows SIGN .. WIDE)."""
    return np.zeros((5, max(size, _WIDE_LIMBS)), np.int64)


# ---------------------------------------------------------------------------
# Classifying words and products (the flags of step 1)


@njit(inline="always")
def mul_class(x, y):
    """Class of a product of factors of classes x and y: NaN if either is,
    Inf x 0 is NaN, else Inf if either is, else zero if either is."""
    if x == NAN_CLASS or y == NAN_CLASS:
        return NAN_CLASS
    if x == INF or y == INF:
        return NAN_CLASS if (x == ZERO or y == ZERO) else INF
    if x == ZERO or y == ZERO:
        return ZERO
    return FINITE


@njit(inline="always")
def term_flags(cls, sign):
    """The flags one term or product of class ``cls`` and ``sign`` sets."""
    if cls == NAN_CLASS:
        return NAN
    if cls == INF:
        return NEG_INF if sign else POS_INF
    return 0 if sign else NONNEG


@njit(inline="always")
def add_term(t, n, flags, cls, sign, sig, lsb, align):
    """Record one term of class ``cls``; only a finite nonzero one is stored."""
    flags |= term_flags(cls, sign)
    if cls == FINITE:
        t[SIGN, n] = sign
        t[SIG, n] = sig
        t[LSB, n] = lsb
        t[ALIGN, n] = align
        n += 1
    return n, flags


@njit(inline="always")
def product_term(ca, sa, ma, la, ra, cb, sb, mb, lb, rb, normalized):
    """(cls, sign, sig, lsb, align) of the product of two decoded words."""
    sig = ma * mb
    lsb = la + lb
    align = (lsb + bit_length(sig) - 1) if normalized else ra + rb
    return mul_class(ca, cb), sa ^ sb, sig, lsb, align


@njit(inline="always")
def add_word(t, n, flags, word, spec, normalized):
    """Decode one addend word (C, or the previous block's result) into a term."""
    cls, s, sig, lsb, raw = decode_scalar(word, spec)
    align = (lsb + bit_length(sig) - 1) if normalized else raw
    return add_term(t, n, flags, cls, s, sig, lsb, align)


# ---------------------------------------------------------------------------
# The block


@njit(cache=True)
def specials_word(flags, stage):
    """Step 1: (True, word) when a special decides the block, else (False, 0)."""
    if (flags & NAN) or (flags & (POS_INF | NEG_INF)) == (POS_INF | NEG_INF):
        return True, np.int64(stage.nan)
    if flags & (POS_INF | NEG_INF):
        return True, np.int64(inf_word(1 if flags & NEG_INF else 0, stage.spec))
    return False, np.int64(0)


@njit(inline="always")
def cut(sig, sh, sign):
    """(-1)**sign * bits.shl(sig, sh), without branches: a term cut toward
    zero to the quantum. Equal to shl for every shift a term of less than
    2**63 allows; the left shift is clamped to 62 so that a zero term never
    makes an undefined shift."""
    left = sh if sh < 62 else 62
    left = left if left > 0 else 0
    right = -sh if -sh < 63 else 63
    right = right if right > 0 else 0
    u = (sig << left) >> right
    return (u ^ -sign) + sign


@njit(inline="always")
def anchor(t, n):
    """The largest alignment exponent of the n terms (NO_FLOOR for none)."""
    top = NO_FLOOR
    for j in range(n):
        top = t[ALIGN, j] if t[ALIGN, j] > top else top
    return top


@njit(cache=True)
def quantum(anchor, window):
    """Step 2: q = max(floor, anchor) - bits, ``anchor`` the largest alignment
    exponent of the block's terms (NO_FLOOR when it has none)."""
    return (anchor if anchor > window.floor else window.floor) - window.bits


@njit(inline="always")
def round_word(neg, mag, q, sticky, flags, stage):
    """Step 5: (-1)**neg * (mag + d) * 2**q into the stage's format (d > 0
    exactly when sticky); a zero sum gets the block's zero sign."""
    if mag == 0 and not sticky:
        all_neg = (flags & NONNEG) == 0
        return encode_scalar(1 if (all_neg and not stage.zero_pos) else 0, 0, 0, False,
                             stage.spec, stage.rounding, stage.keep, stage.overflow)
    word = encode_scalar(1 if neg else 0, mag, q, sticky, stage.spec, stage.rounding,
                         stage.keep, stage.overflow)
    if stage.zero_pos and (word & ((1 << (stage.spec.width - 1)) - 1)) == 0:
        word = 0
    return word


@njit(inline="always")
def window_word(m, q, flags, window, stage):
    """Steps 4-5 for a window: the exact sum ``m`` of the terms cut to 2**q,
    held in the carry bits (wrapped, saturated or normalized: ``carry_top``),
    rounded into the stage's format."""
    width = window.bits + window.carry_bits + 1
    # an int64 sum never needs 64 bits or more: a wider accumulator (a
    # 56-bit window beside 64 carry bits) holds every sum, and a shift by 64
    # or more would wrap at the shift count modulo 64
    if window.carry_bits >= 0 and width < 64:
        if window.carry_top == WRAP:
            m = ((m + (1 << (width - 1))) & ((1 << width) - 1)) - (1 << (width - 1))
        else:
            top = (1 << (width - 1)) - 1  # the largest magnitude it holds
            mag = -m if m < 0 else m
            if mag > top:
                if window.carry_top == SATURATE:
                    mag = top
                else:
                    sh = bit_length(mag) - (width - 1)
                    mag >>= sh
                    q += sh
                m = -mag if m < 0 else mag
    neg = m < 0
    return round_word(neg, -m if neg else m, q, False, flags, stage)


@njit(inline="always")
def block_word(t, n, flags, window, stage):
    """The block's result word: the five steps of the module doc. A decoder
    that does not store its terms (core_loop's lane decoder) takes the same
    steps through specials_word, quantum, cut and window_word."""
    special, word = specials_word(flags, stage)
    if special:
        return word
    if window.bits < 0:
        neg, mag, q, sticky = exact_sum(t, n)
        return round_word(neg, mag, q, sticky, flags, stage)
    q = quantum(anchor(t, n), window)
    m = 0
    for j in range(n):
        m += cut(t[SIG, j], t[LSB, j] - q, t[SIGN, j])
    return window_word(m, q, flags, window, stage)


# ---------------------------------------------------------------------------
# The exact sum (no window)


@njit(cache=True)
def _wide_add(acc, sign, sig, lsb):
    """Add (-1)**sign * sig * 2**lsb into the limbs (sig < 2**63)."""
    off = lsb - _WIDE_BASE
    li = off >> 5
    bi = off & 31
    parts0 = sig & _M32
    parts1 = sig >> 32
    s = -1 if sign else 1
    v0 = parts0 << bi
    v1 = parts1 << bi
    acc[li] += s * (v0 & _M32)
    acc[li + 1] += s * ((v0 >> 32) + (v1 & _M32))
    acc[li + 2] += s * (v1 >> 32)


@njit(cache=True)
def _wide_result(acc):
    """Normalize the limbs: (negative, mag, q, sticky) with the value
    (mag + d) * 2**q, mag holding up to 62 bits, d in [0, 1) and d > 0 iff sticky."""
    carry = 0
    for j in range(_WIDE_LIMBS):
        v = acc[j] + carry
        acc[j] = v & _M32
        carry = v >> 32
    neg = carry < 0
    if neg:
        borrow = 0
        for j in range(_WIDE_LIMBS):
            v = -acc[j] + borrow
            acc[j] = v & _M32
            borrow = v >> 32
    top = -1
    for j in range(_WIDE_LIMBS - 1, -1, -1):
        if acc[j] != 0:
            top = j
            break
    if top < 0:
        return neg, 0, 0, False
    top_bit = top * 32 + bit_length(acc[top]) - 1
    start = top_bit - 61
    if start < 0:
        start = 0
    mag = 0
    sticky = False
    for j in range(top, -1, -1):
        lo = j * 32
        if lo + 32 <= start:
            if acc[j] != 0:
                sticky = True
            continue
        mag += shl(acc[j], lo - start)
        if lo < start and low_bits(acc[j], start - lo) != 0:
            sticky = True
    return neg, mag, start + _WIDE_BASE, sticky


@njit(cache=True)
def exact_sum(t, n):
    """The exact sum of the n terms: (negative, mag, q, sticky) as _wide_result."""
    acc = t[WIDE]
    for j in range(_WIDE_LIMBS):
        acc[j] = 0
    for j in range(n):
        _wide_add(acc, t[SIGN, j], t[SIG, j], t[LSB, j])
    return _wide_result(acc)
