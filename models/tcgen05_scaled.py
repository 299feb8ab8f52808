"""The block-scaled tcgen05 accumulator (kind::mxf8f6f4, mxf4, mxf4nvf4).

One parameterized mechanism, in integer arithmetic only (tcgen05 write-up,
section "Block-scaled"; ../shared/notes/tcgen05-published-parameters.md):

1. Specials first: a NaN element or scale (ue8m0 0xff, ue4m3 0x7f) gives the
   canonical NaN; Inf x 0 and +Inf + -Inf give NaN; otherwise an infinite
   product or C gives that infinity.
2. Each product folds the scales in exactly: significand
   a * b * scale_a * scale_b, exponent the sum of the four; its raw exponent
   R_k is the sum of the four raw exponents and its scale exponent S_k the
   sum of the two scale raw exponents (scale_a by A's K block, scale_b by B's).
3. With R and S the largest R_k and S_k over nonzero products, the quantum is
   q = max(R - product_window, raw(C) - c_window [C nonzero],
           S - scale_window, q_floor), each term only where set.
4. Products are summed exactly in aligned groups of ``product_group`` and each
   group sum is cut toward zero to q (1: every product on its own). With
   ``per_group_c_merge`` a group that C outranks (raw(C) >= the group's
   largest R_k) is first cut to raw(C) - c_merge_bits.
5. C-dominant merge (``c_dominant``): when a nonzero C's raw exponent reaches
   R, q = raw(C) - c_merge_bits and the exact sums of the aligned
   ``merge_group`` blocks are each cut to q instead.
6. The group floor (``group_floor``): when the f32 result is a nonzero
   subnormal, groups whose scale exponent is below S and whose cut value is
   smaller than 2**group_floor are dropped and the sum is formed again.
7. The units are summed exactly and converted to f32 by truncation; an exact
   zero is +0. With no nonzero product the result is C (its sign of zero set
   by ``zero_c``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
from numba import njit

from tcprobe.models.cases import Cases

from .bits import bit_length, shl
from .engine import OVERFLOWS
from .formats import decode_scalar, encode_scalar, get_format, inf_word
from .model import Model, ModelError

UNSET = -(1 << 40)  # an absent term of the quantum
SMALL_RANGE = ("e2m1",)  # element formats whose exact group sums fit an int64


@dataclass(frozen=True)
class ScaledParams:
    """Every knob of the block-scaled accumulator, named (see the module doc)."""

    product_window: int | None = 25  # R - F
    c_window: int | None = 25  # raw(C) - F_c (None: C does not set the quantum)
    scale_window: int | None = None  # S - offset: the scale-anchored floor
    q_floor: int | None = None  # the quantum is never below this
    product_group: int = 1  # K positions summed exactly before the cut
    c_dominant: bool = False  # the C-dominant merge of step 5
    merge_group: int = 16  # K positions of one C-dominant merge block
    c_merge_bits: int = 35  # window below raw(C) of the C-relative cuts
    per_group_c_merge: bool = False  # step 4's C-relative cut of outranked groups
    group_floor: int | None = None  # step 6 (-174 for the MXF4 family)
    zero_c: str = "positive"  # positive: all products zero and C = -0 gives +0 | keep
    overflow: str = "inf"  # a finite sum past f32: inf | saturate | ieee

    def replace(self, **changes) -> ScaledParams:
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------
# The compiled kernel.


@njit(cache=True)
def _units(sign, mag, lsb, q):
    """Signed units of 2**q of (-1)**sign * mag * 2**lsb, cut toward zero."""
    u = shl(mag, lsb - q)
    return -u if sign else u


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
def _cut(total, base, q):
    """Units of 2**q of an exact signed integer total * 2**base, cut toward zero."""
    if total == 0:
        return 0
    if total < 0:
        return -shl(-total, base - q)
    return shl(total, base - q)


@njit(cache=True)
def _to_f32(units, q, f32, overflow):
    neg = units < 0
    mag = -units if neg else units
    if mag == 0:
        return 0
    word = encode_scalar(1 if neg else 0, mag, q, False, f32, 0, 23, overflow)
    if (word & 0x7FFFFFFF) == 0:
        return 0
    return word


@njit(cache=True)
def scaled_kernel(a, b, c, sa, sb, a_spec, b_spec, s_spec, f32, scale_block,
                  product_window, c_window, scale_window, q_floor, product_group,
                  c_dominant, merge_group, c_merge_bits, per_group_c_merge, group_floor,
                  zero_c_keep, overflow, nan_word, out):
    """The block-scaled fused dot product over every case (see the module doc)."""
    n_cases, k = a.shape
    n_groups = (k + product_group - 1) // product_group
    psign = np.zeros(k, np.int64)
    psig = np.zeros(k, np.int64)
    plsb = np.zeros(k, np.int64)
    praw = np.zeros(k, np.int64)
    pscale = np.zeros(k, np.int64)
    gunits = np.zeros(n_groups, np.int64)
    gscale = np.zeros(n_groups, np.int64)
    for i in range(n_cases):
        nan = False
        pos_inf = False
        neg_inf = False
        have = False
        big_r = UNSET
        big_s = UNSET
        for kk in range(k):
            j = kk // scale_block
            ca, sga, ma, la, ra = decode_scalar(np.int64(a[i, kk]), a_spec)
            cb, sgb, mb, lb, rb = decode_scalar(np.int64(b[i, kk]), b_spec)
            cx, _sx, mx, lx, rx = decode_scalar(np.int64(sa[i, j]), s_spec)
            cy, _sy, my, ly, ry = decode_scalar(np.int64(sb[i, j]), s_spec)
            psig[kk] = 0
            if ca == 3 or cb == 3 or cx == 3 or cy == 3:
                nan = True
                continue
            s = sga ^ sgb
            if ca == 2 or cb == 2:
                if ca == 0 or cb == 0 or cx == 0 or cy == 0:
                    nan = True
                elif s:
                    neg_inf = True
                else:
                    pos_inf = True
                continue
            m = ma * mb * mx * my
            if m == 0:
                continue
            psign[kk] = s
            psig[kk] = m
            plsb[kk] = la + lb + lx + ly
            praw[kk] = ra + rb + rx + ry
            pscale[kk] = rx + ry
            if not have or praw[kk] > big_r:
                big_r = praw[kk]
            if not have or pscale[kk] > big_s:
                big_s = pscale[kk]
            have = True
        cc, csg, cm, cl, cr = decode_scalar(np.int64(c[i]), f32)
        if cc == 3:
            nan = True
        elif cc == 2:
            if csg:
                neg_inf = True
            else:
                pos_inf = True
        if nan or (pos_inf and neg_inf):
            out[i] = nan_word
            continue
        if pos_inf or neg_inf:
            out[i] = inf_word(1 if neg_inf else 0, f32)
            continue
        if not have:
            if cc == 0 and not zero_c_keep:
                out[i] = 0
            else:
                out[i] = c[i]
            continue
        c_nonzero = cc == 1
        if c_dominant and c_nonzero and cr >= big_r:
            q = cr - c_merge_bits
            units = _units(csg, cm, cl, q)
            for lo in range(0, k, merge_group):
                total, base = _group_sum(psign, psig, plsb, lo, min(lo + merge_group, k))
                units += _cut(total, base, q)
            out[i] = _to_f32(units, q, f32, overflow)
            continue
        q = UNSET
        if product_window != UNSET and big_r - product_window > q:
            q = big_r - product_window
        if c_window != UNSET and c_nonzero and cr - c_window > q:
            q = cr - c_window
        if scale_window != UNSET and big_s - scale_window > q:
            q = big_s - scale_window
        if q_floor != UNSET and q_floor > q:
            q = q_floor
        c_units = _units(csg, cm, cl, q) if c_nonzero else 0
        units = c_units
        for g in range(n_groups):
            lo = g * product_group
            hi = min(lo + product_group, k)
            total, base = _group_sum(psign, psig, plsb, lo, hi)
            g_raw = UNSET
            g_scale = UNSET
            for kk in range(lo, hi):
                if psig[kk] != 0:
                    if praw[kk] > g_raw:
                        g_raw = praw[kk]
                    if pscale[kk] > g_scale:
                        g_scale = pscale[kk]
            gq = q
            if per_group_c_merge and c_nonzero and g_raw != UNSET and cr >= g_raw:
                if cr - c_merge_bits > gq:
                    gq = cr - c_merge_bits
            gu = _cut(total, base, gq)
            if gq > q:
                gu = gu << (gq - q)
            gunits[g] = gu
            gscale[g] = g_scale
            units += gu
        word = _to_f32(units, q, f32, overflow)
        if group_floor != UNSET and (word & 0x7FFFFFFF) != 0 and (word & 0x7FFFFFFF) < (1 << 23):
            limit = group_floor - q if q < group_floor else 0  # |units| < 2**limit is dropped
            units = c_units
            for g in range(n_groups):
                gu = gunits[g]
                small = bit_length(-gu if gu < 0 else gu) <= limit
                if gscale[g] != UNSET and gscale[g] < big_s and small:
                    continue
                units += gu
            word = _to_f32(units, q, f32, overflow)
        out[i] = word


# ---------------------------------------------------------------------------
# The model.


def _opt(v: int | None) -> int:
    return UNSET if v is None else int(v)


@dataclass
class BlockScaledModel(Model):
    """tcgen05 block-scaled MMA with one set of :class:`ScaledParams`."""

    params: ScaledParams = ScaledParams()

    def __post_init__(self):
        dp = self.datapath
        if not dp.block_scaled:
            raise ModelError(f"{dp.id} is not block-scaled")
        if get_format(dp.c).name != "f32" or get_format(dp.d_type).name != "f32":
            raise ModelError(f"{dp.id}: block-scaled tcgen05 kinds accumulate into f32")
        p = self.params
        sizes = [(p.product_group, "product_group")]
        if p.c_dominant:
            sizes.append((p.merge_group, "merge_group"))
        for size, what in sizes:
            if size > 1 and (dp.a_type not in SMALL_RANGE or dp.b_type not in SMALL_RANGE):
                raise ModelError(f"{what} > 1 needs e2m1 elements (exact group sums in int64)")
            if size > 1 and dp.scale_block % size:
                raise ModelError(f"{what} {size} straddles the {dp.scale_block}-wide scale blocks")
        if p.zero_c not in ("positive", "keep"):
            raise ModelError(f"zero_c must be positive or keep, not {p.zero_c!r}")
        if p.overflow not in OVERFLOWS:
            raise ModelError(f"overflow must be one of {', '.join(OVERFLOWS)}")

    def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
        dp, p = self.datapath, self.params
        cases.check(dp)
        a, b = cases.masked()
        f32 = get_format("f32")
        out = np.empty(len(cases), np.int64)
        scaled_kernel(
            np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64),
            np.asarray(cases.c, np.int64),
            np.ascontiguousarray(cases.scale_a, dtype=np.int64),
            np.ascontiguousarray(cases.scale_b, dtype=np.int64),
            get_format(dp.a_type).spec, get_format(dp.b_type).spec,
            get_format(dp.scale_type).spec, f32.spec, dp.scale_block,
            _opt(p.product_window), _opt(p.c_window), _opt(p.scale_window), _opt(p.q_floor),
            p.product_group, p.c_dominant, p.merge_group, p.c_merge_bits,
            p.per_group_c_merge, _opt(p.group_floor), p.zero_c == "keep",
            int(OVERFLOWS[p.overflow]), int(f32.canonical_nan), out,
        )
        return out.astype(np.uint32)

    def describe(self) -> dict:
        return {**super().describe(), "params": self.params.as_dict()}

