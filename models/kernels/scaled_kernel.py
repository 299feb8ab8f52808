"""The block-scaled kernel (tcgen05_scaled module doc, steps 1-7), on the
core's block routine, and its compiled-per-configuration fast path.

:func:`scaled_case` is the mechanism for one case; :func:`scaled_kernel`
(the plain kernel, parameters at run time) runs it on every case. The fast
path (:func:`fast_kernel`, one kernel per :class:`ScaledKernelParams`, a
compile-time constant as in :mod:`.fastpath`) computes the same words with
the scales folded into the exponents once per scale block and every element
read by the lane decoder's branch-free :func:`~.lane_decoder.fields`: one pass
for the quantum (the largest term quantum of the nonzero products and C),
one that cuts each product, or each group's exact sum, to it and sums them
(core.cut, core.quantum, core.window_word: the core's own steps). A case
with a NaN or Inf element, a NaN scale or a special C is decided by its
special counts alone (lane_decoder.product_count, counts_word: a branch-free
walk, the words specials_word gives). Configurations with the C-dominant
merge, the per-group C cut or the group floor, or a quantum set by no
window, run on the plain kernel (:func:`fast_applies`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from ..bits import bit_length
from ..formats import Rounding, decode_scalar, get_format
from .core import (
    ALIGN,
    FINITE,
    LSB,
    NAN_CLASS,
    NO_FLOOR,
    NONNEG,
    SIG,
    SIGN,
    WRAP,
    ZERO,
    Stage,
    Window,
    anchor,
    block_word,
    cut,
    mul_class,
    new_terms,
    quantum,
    specials_word,
    term_flags,
    window_word,
)
from .kernel_params import OVERFLOWS
from .kernel_stamp import SOURCE_STAMP
from .lane_decoder import (
    addend_count,
    counts_word,
    fields,
    holds_special,
    lane_class,
    magnitude,
    nan_counts,
    product_count,
    stray_pair,
    stray_word,
    widest_tells,
)

UNSET = NO_FLOOR  # an absent term of the quantum


class ScaledKernelParams(NamedTuple):
    """Every parameter of scaled_kernel, named (built by kernel_params)."""

    k: int  # K positions of one dot product
    a_spec: tuple
    b_spec: tuple
    s_spec: tuple  # the scale type
    c_spec: tuple  # f32
    scale_block: int  # K positions one scale covers
    product_window: int  # UNSET: not a term of the quantum
    c_window: int
    scale_window: int
    product_group: int
    c_dominant: bool
    merge_group: int
    c_merge_bits: int
    per_group_c_merge: bool
    group_floor: int  # UNSET: no group floor
    zero_c_keep: bool
    window: Window  # Window(0, q_floor, -1): q is the largest term quantum and the floor
    dominant: Window  # the C-dominant merge: q is C's own
    stage: Stage  # truncation into f32, +0 for an exact zero


def _opt(v: int | None) -> int:
    return UNSET if v is None else int(v)


def kernel_params(dp, p) -> ScaledKernelParams:
    """The kernel parameters of ScaledParams ``p`` on block-scaled datapath ``dp``."""
    f32 = get_format("f32")
    stage = Stage(f32.spec, int(Rounding.RZ), f32.frac_bits, int(f32.canonical_nan),
                  int(OVERFLOWS[p.overflow]), True)
    return ScaledKernelParams(
        dp.k, get_format(dp.a_type).spec, get_format(dp.b_type).spec, get_format(dp.scale_type).spec,
        f32.spec, dp.scale_block, _opt(p.product_window), _opt(p.c_window),
        _opt(p.scale_window), p.product_group, p.c_dominant, p.merge_group, p.c_merge_bits,
        p.per_group_c_merge, _opt(p.group_floor), p.zero_c == "keep",
        Window(0, _opt(p.q_floor), -1, WRAP), Window(0, UNSET, -1, WRAP), stage)


@njit(cache=True)
def _group_sum(psign, psig, plsb, lo, hi):
    """Exact sum of the products lo..hi-1: (signed integer, exponent of its unit)."""
    base = 1 << 40
    for k in range(lo, hi):
        if psig[k] != 0 and plsb[k] < base:
            base = plsb[k]
    total = 0
    for k in range(lo, hi):
        if psig[k] != 0:
            v = psig[k] << (plsb[k] - base)
            total += -v if psign[k] else v
    return total, base


@njit(cache=True)
def _add_sum(t, n, total, base, align):
    """Store the exact sum total * 2**base as term n (a zero sum cuts to 0)."""
    t[SIGN, n] = 1 if total < 0 else 0
    t[SIG, n] = -total if total < 0 else total
    t[LSB, n] = base
    t[ALIGN, n] = align
    return n + 1




@njit(cache=True)
def scaled_scratch(kp):
    """Scratch of scaled_case: product rows (sign, sig, lsb, raw, scale
    exponent), block terms, and the scale exponent of each group term."""
    n_groups = (kp.k + kp.product_group - 1) // kp.product_group
    prod = np.zeros((5, kp.k), np.int64)
    t = new_terms(n_groups + kp.k // kp.merge_group + 2)
    tscale = np.zeros(n_groups + 1, np.int64)
    return prod, t, tscale


@njit(cache=True)
def scaled_case(a, b, c, sa, sb, i, kp, prod, t, tscale):
    """Case i's result word (tcgen05_scaled module doc, steps 1-7)."""
    k = kp.k
    pg = kp.product_group
    n_groups = (k + pg - 1) // pg
    psign, psig, plsb, praw, pscale = prod[0], prod[1], prod[2], prod[3], prod[4]
    # step 1 and 2: classify and fold the scales into each product
    flags = 0
    have = False
    big_r = UNSET
    big_s = UNSET
    for kk in range(k):
        j = kk // kp.scale_block
        ca, sga, ma, la, ra = decode_scalar(np.int64(a[i, kk]), kp.a_spec)
        cb, sgb, mb, lb, rb = decode_scalar(np.int64(b[i, kk]), kp.b_spec)
        cx, _sx, mx, lx, rx = decode_scalar(np.int64(sa[i, j]), kp.s_spec)
        cy, _sy, my, ly, ry = decode_scalar(np.int64(sb[i, j]), kp.s_spec)
        cls = mul_class(mul_class(ca, cb), mul_class(cx, cy))
        flags |= term_flags(cls, sga ^ sgb)
        psig[kk] = 0
        if cls != FINITE:
            continue
        psign[kk] = sga ^ sgb
        psig[kk] = ma * mb * mx * my
        plsb[kk] = la + lb + lx + ly
        praw[kk] = ra + rb + rx + ry
        pscale[kk] = rx + ry
        if not have or praw[kk] > big_r:
            big_r = praw[kk]
        if not have or pscale[kk] > big_s:
            big_s = pscale[kk]
        have = True
    cc, csg, cm, cl, cr = decode_scalar(np.int64(c[i]), kp.c_spec)
    flags |= term_flags(cc, csg)
    special, word = specials_word(flags, kp.stage)
    if special:
        return word
    if not have:
        return 0 if (cc == ZERO and not kp.zero_c_keep) else np.int64(c[i])
    c_nonzero = cc == FINITE
    if kp.c_dominant and c_nonzero and cr >= big_r:  # step 5
        n = _add_sum(t, 0, -cm if csg else cm, cl, cr - kp.c_merge_bits)
        for lo in range(0, k, kp.merge_group):
            total, base = _group_sum(psign, psig, plsb, lo, min(lo + kp.merge_group, k))
            n = _add_sum(t, n, total, base, UNSET)
        return block_word(t, n, flags, kp.dominant, kp.stage)
    # step 3 and 4: each term's quantum, the group sums
    n = 0
    if c_nonzero:
        c_align = cr - kp.c_window if kp.c_window != UNSET else UNSET
        n = _add_sum(t, 0, -cm if csg else cm, cl, c_align)
    first = n
    for g in range(n_groups):
        lo = g * pg
        hi = min(lo + pg, k)
        total, base = _group_sum(psign, psig, plsb, lo, hi)
        g_raw = UNSET
        g_scale = UNSET
        for kk in range(lo, hi):
            if psig[kk] != 0:
                if praw[kk] > g_raw:
                    g_raw = praw[kk]
                if pscale[kk] > g_scale:
                    g_scale = pscale[kk]
        align = UNSET
        if g_raw != UNSET:
            if kp.product_window != UNSET and g_raw - kp.product_window > align:
                align = g_raw - kp.product_window
            if kp.scale_window != UNSET and g_scale - kp.scale_window > align:
                align = g_scale - kp.scale_window
        if kp.per_group_c_merge and c_nonzero and g_raw != UNSET and cr >= g_raw:
            # cut to raw(C) - c_merge_bits first: truncations nest, so a
            # second cut to q gives the cut to the coarser of the two
            x = cr - kp.c_merge_bits
            if x > base:
                total = cut(-total if total < 0 else total, base - x, 1 if total < 0 else 0)
                base = x
        tscale[n - first] = g_scale
        n = _add_sum(t, n, total, base, align)
    word = block_word(t, n, flags, kp.window, kp.stage)
    mag = word & 0x7FFFFFFF
    if kp.group_floor != UNSET and mag != 0 and mag < (1 << 23):  # step 6
        q = quantum(anchor(t, n), kp.window)
        limit = kp.group_floor - q if q < kp.group_floor else 0  # |units| < 2**limit drop
        kept = first
        for j in range(first, n):
            units = cut(t[SIG, j], t[LSB, j] - q, 0)
            g_scale = tscale[j - first]
            if g_scale != UNSET and g_scale < big_s and bit_length(units) <= limit:
                continue
            for row in range(4):
                t[row, kept] = t[row, j]
            kept += 1
        word = block_word(t, kept, flags, Window(0, q, -1, WRAP), kp.stage)
    return word


@njit(cache=True)
def scaled_kernel(a, b, c, sa, sb, kp, out):
    """The block-scaled fused dot product over every case (the plain kernel)."""
    prod, t, tscale = scaled_scratch(kp)
    for i in range(a.shape[0]):
        out[i] = scaled_case(a, b, c, sa, sb, i, kp, prod, t, tscale)



# ---------------------------------------------------------------------------
# The fast path


def fast_applies(kp: ScaledKernelParams) -> bool:
    """Whether the fast kernel computes this configuration: float elements,
    a product or scale window (so that no cut shifts past 62 bits), none of
    the C-dominant merge, the per-group C cut or the group floor."""
    return (kp.a_spec.kind == 0 and kp.b_spec.kind == 0 and not kp.c_dominant
            and not kp.per_group_c_merge and kp.group_floor == UNSET
            and (kp.product_window != UNSET or kp.scale_window != UNSET)
            and kp.k % kp.scale_block == 0 and kp.scale_block % kp.product_group == 0)


@njit(inline="always")
def scale_fields(x, spec):
    """(class, significand, lsb, raw exponent) of a scale word; a float
    scale (ue4m3) by the lane decoder's branch-free fields."""
    if spec.kind == 0:
        special, _sign, sig, raw = fields(x, spec)
        return lane_class(special, sig, spec), sig, raw - spec.frac_bits, raw
    cls, _sign, sig, lsb, raw = decode_scalar(x, spec)
    return cls, sig, lsb, raw


@njit(inline="always")
def scale_product(x, y, spec):
    """(class, significand, lsb, raw exponent) of the product of scale words
    ``x`` and ``y`` (mul_class of their scale_fields), with no branch for the
    scale formats, which have no Inf: ue8m0 (a power of two, its all-ones
    code NaN) and float ones whose special code is NaN (ue4m3)."""
    if spec.kind == 2:
        top = (1 << spec.width) - 1
        nan = ((x & top) == top) | ((y & top) == top)
        raw = (x & top) + (y & top) - 2 * spec.bias
        return NAN_CLASS if nan else FINITE, np.int64(1), raw, raw
    if spec.kind != 0 or spec.specials == 0:  # a format with an Inf: the classes decide
        cx, mx, lx, rx = scale_fields(x, spec)
        cy, my, ly, ry = scale_fields(y, spec)
        return mul_class(cx, cy), mx * my, lx + ly, rx + ry
    special_x, _sx, mx, rx = fields(x, spec)
    special_y, _sy, my, ry = fields(y, spec)
    sig = mx * my
    cls = NAN_CLASS if (special_x | special_y) else (ZERO if sig == 0 else FINITE)
    return cls, sig, rx + ry - 2 * spec.frac_bits, rx + ry


def _build_fast(kp: ScaledKernelParams):
    """The fast kernel of one configuration (``kp`` a compile-time constant)."""
    k, block, group = kp.k, kp.scale_block, kp.product_group
    n_scales = k // block
    a_spec, b_spec, s_spec, c_spec = kp.a_spec, kp.b_spec, kp.s_spec, kp.c_spec
    fa, fb, fc = a_spec.frac_bits, b_spec.frac_bits, c_spec.frac_bits
    # the exponent of the last bit of the smallest element product: the
    # unit of a group's exact sum (before its scales)
    unit = (1 - a_spec.bias - fa) + (1 - b_spec.bias - fb)
    pw, cw, sw = kp.product_window, kp.c_window, kp.scale_window
    part = block if group == 1 else group  # the lanes of one first-pass step
    a_stray, b_stray = np.uint64(stray_pair(a_spec.width)), np.uint64(stray_pair(b_spec.width))
    c_stray = np.uint64(stray_word(c_spec.width))
    stamp = SOURCE_STAMP

    @njit(cache=True, nogil=True)
    def kernel(a, b, c, sa, sb, out, a64, b64):
        """Every case's word into ``out``; returns whether an A, B or C word
        has bits above its format (A and B read as pairs: lane_decoder.word_pairs)."""
        assert len(stamp) > 0  # a constant of the cached kernel (kernel_stamp)
        high = np.uint64(0)
        prod, t, tscale = scaled_scratch(kp)
        s_sig = np.zeros(n_scales, np.int64)  # scale_a * scale_b of each block
        s_lsb = np.zeros(n_scales, np.int64)
        s_raw = np.zeros(n_scales, np.int64)
        s_cls = np.zeros(n_scales, np.int64)  # the class of the scale product
        sums = np.zeros(k // part, np.int64)  # each group's exact sum, scales in
        one_format = widest_tells(a_spec, b_spec)
        for i in range(a.shape[0]):
            bad = False
            for j in range(n_scales):
                s_cls[j], s_sig[j], s_lsb[j], s_raw[j] = scale_product(
                    np.int64(sa[i, j]), np.int64(sb[i, j]), s_spec)
                bad |= s_cls[j] == NAN_CLASS
            for j in range(a64.shape[1]):
                high |= (a64[i, j] & a_stray) | (b64[i, j] & b_stray)
            high |= np.uint64(c[i]) & c_stray
            c_special, cs, cm, cr = fields(np.int64(c[i]), c_spec)
            bad |= c_special
            # pass 1, per scale block (products cut one by one) or per group
            # (its exact sum formed here): the specials, the zero sign, the
            # largest term quantum; integer operations only (no early exit)
            top = UNSET
            have = False
            all_neg = cs
            for g in range(k // part):
                j = (g * part) // block
                specials = 0
                nonzero = 0  # a sum of product significands: 0 iff all are zero
                top_raw = UNSET  # the largest raw exponent sum of a nonzero product
                total = 0
                widest = 0  # the largest magnitude field (A and B of one format)
                for kk in range(g * part, (g + 1) * part):
                    xa, xb = np.int64(a[i, kk]), np.int64(b[i, kk])
                    spa, sga, ma, ra = fields(xa, a_spec)
                    spb, sgb, mb, rb = fields(xb, b_spec)
                    if one_format:
                        widest = max(widest, max(magnitude(xa, a_spec), magnitude(xb, b_spec)))
                    else:
                        specials |= np.int64(spa) | np.int64(spb)
                    sig = ma * mb
                    nonzero += sig
                    if pw != UNSET:  # a zero product: below UNSET
                        top_raw = max(top_raw, ra + rb - (np.int64(sig == 0) << 41))
                    all_neg &= sga ^ sgb
                    if group > 1:
                        v = sig << (ra - fa + rb - fb - unit)
                        total += (v ^ -(sga ^ sgb)) + (sga ^ sgb)  # the signed product
                bad |= specials != 0
                if one_format:
                    bad |= holds_special(widest, a_spec)
                sums[g] = total * s_sig[j]
                if nonzero != 0 and s_sig[j] != 0:
                    have = True
                    if pw != UNSET:
                        top = max(top, top_raw + s_raw[j] - pw)
                    if sw != UNSET:
                        top = max(top, s_raw[j] - sw)
            if bad:  # a NaN or Inf decides the word: only the specials matter
                out[i] = special_word(a, b, i, np.int64(c[i]), s_cls, kp)
                continue
            if not have:
                out[i] = 0 if (cm == 0 and not kp.zero_c_keep) else np.int64(c[i])
                continue
            if cm != 0 and cw != UNSET:
                top = max(top, cr - cw)
            q = quantum(top, kp.window)
            # pass 2: each product (or group sum) and C cut to 2**q, summed
            m = cut(cm, cr - fc - q, cs)
            if group == 1:
                for kk in range(k):
                    j = kk // block
                    spa, sga, ma, ra = fields(np.int64(a[i, kk]), a_spec)
                    spb, sgb, mb, rb = fields(np.int64(b[i, kk]), b_spec)
                    m += cut(ma * mb * s_sig[j], ra - fa + rb - fb + s_lsb[j] - q, sga ^ sgb)
            else:
                for g in range(k // group):
                    total = sums[g]
                    neg = total < 0
                    m += cut(-total if neg else total, unit + s_lsb[(g * group) // block] - q,
                             1 if neg else 0)
            out[i] = window_word(m, q, 0 if all_neg == 1 else NONNEG, kp.window, kp.stage)
        return high != 0

    return kernel


@njit(inline="always")
def special_word(a, b, i, c_word, s_cls, kp):
    """The word of a case with a NaN or Inf element, a NaN scale or a special
    C, from special counts alone (lane_decoder.product_count: branch-free):
    each scale block's products' counts, folded with the class of its scale
    product (_scaled_counts), and C's."""
    counts = addend_count(c_word, kp.c_spec)
    for j in range(kp.k // kp.scale_block):
        block = 0
        for kk in range(j * kp.scale_block, (j + 1) * kp.scale_block):
            block += product_count(np.int64(a[i, kk]), np.int64(b[i, kk]), kp.a_spec, kp.b_spec)
        counts += _scaled_counts(block, s_cls[j])
    return counts_word(counts, kp.stage)


@njit(inline="always")
def _scaled_counts(counts, cls):
    """A scale block's special counts once its products meet a scale
    product of class ``cls`` (no Inf: neither scale format has one): a NaN
    scale gives one NaN, a zero one turns each Inf into a NaN (Inf x 0)."""
    if cls == NAN_CLASS:
        return 1
    return nan_counts(counts) if cls == ZERO else counts


@lru_cache(maxsize=32)
def fast_kernel(kp: ScaledKernelParams):
    """The compiled fast kernel of one configuration (built once per process)."""
    return _build_fast(kp)
