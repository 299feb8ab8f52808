"""Where a truncated or grouped design's words stop changing with F or F2, case
by case (the judge of tests/amd_designs.py proves an open range on its rows
with it).

models/amd.py reads F only where it cuts: each product truncated (or a
group's sum floored) to units 2**(e_dot - F), C floored to units 2**(e_max - F),
and grouped's drop of a C more than F + 1 binades below. Once F reaches, for
every block, the depth of the lowest set bit of each product and of the
accumulator below the exponent they align on (and grouped's C is no longer
dropped), every cut is exact: the block's sum and C are the same for every
larger F. F2 cuts twice: the sum floored to units 2**(e_max - F2 - 1), and the
joined total to F2 bits below its leading bit; past the lowest set bits of
those two (exact) values the cuts are exact too. So, run at the limit (the key
at models/amd.exact_bound), block by block with the limit's accumulator, each
case gives a value S from which every larger value gives the limit's words: by
induction over the blocks, each one sees the limit's accumulator and cuts
nothing, so it writes the limit's word. A value below S is tried on the case
itself."""

from __future__ import annotations

import numpy as np

from tcprobe.models import amd
from tcprobe.models.formats import Class, get_format


def _low(x: int) -> int:
    """The exponent of the lowest set bit of a nonzero integer."""
    return (x & -x).bit_length() - 1


def _sums(prods, p, grouped: bool):
    """(s_dot, e_dot) of a block as models/amd.py sums it under ``p``."""
    if not grouped:
        return amd._fused(prods, p.window)
    (se, ee), (so, eo) = amd._fused(prods[0::2], p.window), amd._fused(prods[1::2], p.window)
    e_dot = max(ee, eo)
    return amd._floor_shift(se, ee - e_dot) + amd._floor_shift(so, eo - e_dot), e_dot


def _f_depth(prods, d, grouped: bool) -> int:
    """F from which this block cuts nothing (products, C, grouped's drop)."""
    live = [q for q in prods if q[1]]
    e_dot = max((q[3] for q in live), default=amd.ZERO_E)
    t = max((e_dot - (q[2] + _low(abs(q[1]))) for q in live), default=0)
    if d.cls in (Class.NAN, Class.INF):  # grouped drops it below e_dot - 2 (truncated: special)
        return max(t, e_dot + 1 if live else 0)
    if d.sig:
        e_max = max(e_dot, d.raw)
        t = max(t, e_max - (d.lsb + _low(d.sig)))
        if grouped:
            t = max(t, e_max - d.raw - 1)
    return max(t, 0)


def _f2_depth(prods, d, p, grouped: bool) -> int:
    """F2 from which this block (under ``p``'s F) cuts nothing: the sum's floor and
    the total's floor to F2 bits below its leading bit."""
    F = p.window
    s, e_dot = _sums(prods, p, grouped)
    if d.cls in (Class.NAN, Class.INF):
        if not (grouped and e_dot > amd.ZERO_E and -1 < e_dot - F - 1):
            return 0  # a special word whatever F2 is
        d = amd._val(amd.F32, 0)  # grouped: the NaN or Inf C dropped, the sum alone
    e_max = max(e_dot, d.raw)
    cq = amd._floor_shift(d.signed, d.lsb - (e_max - F))  # units 2**(e_max - F)
    if grouped and d.raw < e_max - F - 1:
        cq = 0
    t = 0
    if s:
        t = e_max - (e_dot - F + _low(abs(s))) - 1
    # the total, exact, in units 2**(e_max - F - (e_max - e_dot)) = 2**(e_dot - F) or finer
    q = min(e_dot - F, e_max - F)
    total = (s << (e_dot - F - q)) + (cq << (e_max - F - q))
    if total:
        e_norm = max(abs(total).bit_length() - 1 + q, -126)
        t = max(t, e_norm - (q + _low(abs(total))))
    return max(t, 0)


def stable_from(dp, p: amd.MfmaParams, key: str, cases, coupled: bool = False) -> np.ndarray:
    """Per case, S: every value of ``key`` ("window" or "window2") from S on gives
    the words of the limit (``p`` with the key at exact_bound; ``coupled``: F2 moved
    with F as F - 1, both open). ``p``: a truncated or grouped design."""
    grouped = p.design == "grouped"
    bound = amd.exact_bound(dp)
    lim = amd.MfmaParams(p.design, p.block, bound if key == "window" else p.window,
                         bound if key == "window2" else (bound - 1 if coupled else p.window2))
    lim = amd.effective(lim, dp)
    fa, fb, fc = (get_format(t) for t in (dp.a_type, dp.b_type, dp.c))
    A, B, C = amd._vals(fa, cases.a), amd._vals(fb, cases.b), amd._vals(fc, cases.c)
    out = np.zeros(len(C), np.int64)
    run = amd._grouped if grouped else amd._truncated
    for i, (a, b, c) in enumerate(zip(A, B, C, strict=True)):
        d, s = c, 0
        for lo in range(0, len(a), lim.block):
            ab, bb = a[lo:lo + lim.block], b[lo:lo + lim.block]
            prods = amd._products(ab, bb, overflow=not grouped)
            if any(q[0] is not None for q in prods) or not grouped and amd._special(prods, d):
                d = amd._val(amd.F32, run(ab, bb, d, lim))
                continue
            if key == "window":
                s = max(s, _f_depth(prods, d, grouped))
                if coupled:
                    s = max(s, _f2_depth(prods, d, lim, grouped) + 1)
            else:
                s = max(s, _f2_depth(prods, d, lim, grouped))
            d = amd._val(amd.F32, run(ab, bb, d, lim))
        out[i] = s
    return out
