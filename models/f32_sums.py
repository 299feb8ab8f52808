"""Exact sums of a few terms rounded once into f32, on int64 words, compiled.

What every v_mfma design of models/amd_fast.py ends in: the f32 word read
into (class, sign, significand, last bit, raw exponent) and written back
from an exact value with round to nearest even, and the exact sum of two or
more terms (sign, significand, last bit) rounded once, terms far below the
largest entering as their floor and a sticky bit (:func:`exact_sum`). The
same words as ``models/formats.py``'s decode_scalar and encode_scalar on f32
(RNE, IEEE overflow), which the scalar path uses; written out for f32 alone
so that they inline into the compiled loops (the generic codec's calls cost
the GEMM form most of its time). tests/test_amd_fast.py holds the compiled
designs built on them to the scalar path's words.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bits import bit_length, shl
from .formats import get_format

_F32 = get_format("f32")
KEEP = _F32.frac_bits  # f32's fraction bits,
EMIN = 1 - _F32.bias  # its least normal exponent,
EXP_FIELD = (1 << _F32.exp_bits) - 1  # its exponent field's mask (all ones: Inf, NaN),
_FRAC_MASK = (1 << KEEP) - 1  # its fraction field's,
_BIAS = _F32.bias  # its exponent bias
ROUND_BITS = KEEP + 3  # and the bits encode32 needs beside a sticky bit


@njit(cache=True, inline="always")
def floor_shift(x, sh):
    """floor(x * 2**sh) for an int64 x (any shift)."""
    if sh >= 0:
        return x << sh
    sh = -sh
    if sh >= 63:
        return -1 if x < 0 else 0
    return x >> sh


@njit(cache=True, inline="always")
def trunc_shift(x, sh):
    """trunc(x * 2**sh): toward zero (any shift)."""
    m = shl(-x if x < 0 else x, sh)
    return -m if x < 0 else m


@njit(cache=True, inline="always")
def flush32(w):
    """An f32 word flushed to a zero of its sign when subnormal."""
    return w & 0x80000000 if (w >> KEEP) & EXP_FIELD == 0 else w


@njit(cache=True, inline="always")
def decode32(w):
    """An f32 word as formats.decode_scalar reads it (class, sign, significand,
    exponent of its last bit, raw exponent), inlined: every design's
    accumulator is f32, and the generic decoder's call cost the GEMM form
    most of its time."""
    sign = (w >> 31) & 1
    e = (w >> KEEP) & EXP_FIELD
    f = w & _FRAC_MASK
    if e == EXP_FIELD:
        return (2 if f == 0 else 3), sign, 0, 0, 0
    raw = EMIN if e == 0 else e - _BIAS
    sig = f if e == 0 else f | (1 << KEEP)
    return (0 if sig == 0 else 1), sign, sig, raw - KEEP, raw


@njit(cache=True, inline="always")
def encode32(neg, mag, q, sticky):
    """(-1)**neg * (mag + d) * 2**q, 0 <= d < 1 and d > 0 exactly when
    ``sticky``, rounded to nearest even into an f32 word, Inf past the largest
    finite: formats.encode_scalar's f32 RNE/IEEE case, inlined (its contract:
    with ``sticky`` set, ``mag`` carries the rounding bit)."""
    sbit = np.int64(neg) << 31
    if mag == 0:
        return sbit
    msb = q + bit_length(mag) - 1
    e = msb if msb > EMIN else EMIN
    sh = (e - KEEP) - q
    if sh <= 0:
        kept = mag << -sh
    else:
        kept = mag >> sh if sh < 63 else np.int64(0)
        if sh <= 63:
            rem = mag & ((np.int64(1) << sh) - 1) if sh < 63 else mag
            half = np.int64(1) << (sh - 1)
            if rem > half or (rem == half and (sticky or (kept & 1) == 1)):
                kept += 1
                if kept >> (KEEP + 1):
                    kept >>= 1
                    e += 1
    if kept >> KEEP:
        biased = e + _BIAS
        if biased >= EXP_FIELD:
            return sbit | (np.int64(EXP_FIELD) << KEEP)
        return sbit | (np.int64(biased) << KEEP) | (kept & _FRAC_MASK)
    return sbit | kept


@njit(cache=True, inline="always")
def join_far(big, unit, small, small_q):
    """(word, ok) of big * 2**unit + small * 2**small_q (small_q < unit), the
    small part entering as its floor at ``unit`` and a sticky bit, rounded
    to nearest even into f32; ok False where the sum keeps fewer than
    ROUND_BITS bits at ``unit`` (the rounding bit might lie below it)."""
    sh = unit - small_q  # small * 2**small_q = (low + f) * 2**unit, 0 <= f < 1
    low = floor_shift(small, -sh)
    frac = small != 0 if sh >= 63 else small != (low << sh)
    total = big + low
    if total >= 0:
        neg, mag, sticky = 0, total, frac
    elif frac:  # -(|total| - f) = -((|total| - 1) + (1 - f))
        neg, mag, sticky = 1, -total - 1, True
    else:
        neg, mag, sticky = 1, -total, False
    if bit_length(mag) < ROUND_BITS:
        return np.int64(0), False
    return encode32(neg, mag, unit, sticky), True


@njit(cache=True, inline="always")
def sum2(s1, g1, l1, s2, g2, l2):
    """:func:`exact_sum` of two terms (sign, significand, last bit), without
    scratch arrays: the FMA chain's and ftz's f32 additions."""
    if g2 == 0:
        return (encode32(s1, g1, l1, False) if g1 != 0 else np.int64(0)), True
    if g1 == 0:
        return encode32(s2, g2, l2, False), True
    top1, top2 = l1 + bit_length(g1), l2 + bit_length(g2)
    v1, v2 = (-g1 if s1 else g1), (-g2 if s2 else g2)
    q = l1 if l1 < l2 else l2
    top = top1 if top1 > top2 else top2
    if top - q + 2 <= 62:  # room: bit_length(2) = 2, as exact_sum's
        total = (v1 << (l1 - q)) + (v2 << (l2 - q))
        if total == 0:
            return np.int64(0), True
        return encode32(1 if total < 0 else 0, -total if total < 0 else total, q, False), True
    unit = top + 2 - 62
    if top1 < top2:  # the term of the larger top first
        v1, l1, v2, l2 = v2, l2, v1, l1
    if l1 < unit or l2 >= unit:
        return np.int64(0), False  # a term wider than the window: the scalar path
    return join_far(v1 << (l1 - unit), unit, v2, l2)


@njit(cache=True, inline="always")
def exact_sum(n_terms, signs, sigs, lsbs):
    """(word, ok): the exact sum of the nonzero terms rounded once to nearest
    even into f32, +0 for an exact zero (models/amd.py ``_sum_words``). Terms
    within 62 bits of each other are added exactly; otherwise those below a
    62-bit window under the largest are added apart and enter as their floor
    and a sticky bit. ok False (the scalar path's): the terms below the
    window spread over more than 62 bits themselves, or the sum keeps fewer
    than ROUND_BITS (26) bits in the window (the rounding bit might lie below it)."""
    q, top = 1 << 20, -(1 << 20)
    for t in range(n_terms):
        if sigs[t] != 0:
            q = min(q, lsbs[t])
            top = max(top, lsbs[t] + bit_length(sigs[t]))
    if top == -(1 << 20):
        return np.int64(0), True
    room = bit_length(n_terms)
    if top - q + room <= 62:
        total = 0
        for t in range(n_terms):
            if sigs[t] != 0:
                v = sigs[t] << (lsbs[t] - q)
                total += -v if signs[t] else v
        if total == 0:
            return np.int64(0), True
        return encode32(1 if total < 0 else 0, -total if total < 0 else total, q, False), True
    unit = top + room - 62  # the window's last bit
    big, small_q, small_top = 0, 1 << 20, -(1 << 20)
    for t in range(n_terms):
        if sigs[t] != 0:
            if lsbs[t] >= unit:
                v = sigs[t] << (lsbs[t] - unit)
                big += -v if signs[t] else v
            else:
                small_q = min(small_q, lsbs[t])
                small_top = max(small_top, lsbs[t] + bit_length(sigs[t]))
    if small_top - small_q + room > 62:
        return np.int64(0), False
    small = 0
    for t in range(n_terms):
        if sigs[t] != 0 and lsbs[t] < unit:
            v = sigs[t] << (lsbs[t] - small_q)
            small += -v if signs[t] else v
    return join_far(big, unit, small, small_q)


@njit(cache=True)
def add32(x, y):
    """(x + y rounded to nearest even, ok) for finite f32 words (models/amd.py
    ``_add``): two zeros keep a sign only where both have it."""
    x_cls, x_sign, x_sig, x_lsb, _ = decode32(x)
    y_cls, y_sign, y_sig, y_lsb, _ = decode32(y)
    if x_cls >= 2 or y_cls >= 2:
        return np.int64(0), False
    if x_sig == 0 and y_sig == 0:
        return np.int64(x_sign & y_sign) << 31, True
    return sum2(x_sign, x_sig, x_lsb, y_sign, y_sig, y_lsb)
