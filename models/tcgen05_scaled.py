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
from typing import NamedTuple

import numpy as np
from numba import njit

from tcprobe.models.cases import Cases

from .bits import bit_length
from .core import (
    ALIGN,
    FINITE,
    LSB,
    NO_FLOOR,
    SIG,
    SIGN,
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
)
from .core_loop import OVERFLOWS
from .formats import Rounding, decode_scalar, get_format
from .model import Model, ModelError

UNSET = NO_FLOOR  # an absent term of the quantum
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
# The compiled kernel: its own product decoder and quantum rule, the core's
# block routine (core.block_word: specials first, anchor, cut, sum, round).


class ScaledKernelParams(NamedTuple):
    """Every parameter of scaled_kernel, named (built by kernel_params)."""

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


def kernel_params(dp, p: ScaledParams) -> ScaledKernelParams:
    """The kernel parameters of ``p`` on block-scaled datapath ``dp``."""
    f32 = get_format("f32")
    stage = Stage(f32.spec, int(Rounding.RZ), f32.frac_bits, int(f32.canonical_nan),
                  int(OVERFLOWS[p.overflow]), True)
    return ScaledKernelParams(
        get_format(dp.a_type).spec, get_format(dp.b_type).spec, get_format(dp.scale_type).spec,
        f32.spec, dp.scale_block, _opt(p.product_window), _opt(p.c_window),
        _opt(p.scale_window), p.product_group, p.c_dominant, p.merge_group, p.c_merge_bits,
        p.per_group_c_merge, _opt(p.group_floor), p.zero_c == "keep",
        Window(0, _opt(p.q_floor), -1), Window(0, UNSET, -1), stage)


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
def scaled_kernel(a, b, c, sa, sb, kp, out):
    """The block-scaled fused dot product over every case (see the module doc)."""
    n_cases, k = a.shape
    pg = kp.product_group
    n_groups = (k + pg - 1) // pg
    psign = np.zeros(k, np.int64)
    psig = np.zeros(k, np.int64)
    plsb = np.zeros(k, np.int64)
    praw = np.zeros(k, np.int64)
    pscale = np.zeros(k, np.int64)
    t = new_terms(n_groups + k // kp.merge_group + 2)
    tscale = np.zeros(n_groups + 1, np.int64)  # the scale exponent of each group term
    for i in range(n_cases):
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
            out[i] = word
            continue
        if not have:
            out[i] = 0 if (cc == ZERO and not kp.zero_c_keep) else c[i]
            continue
        c_nonzero = cc == FINITE
        if kp.c_dominant and c_nonzero and cr >= big_r:  # step 5
            n = _add_sum(t, 0, -cm if csg else cm, cl, cr - kp.c_merge_bits)
            for lo in range(0, k, kp.merge_group):
                total, base = _group_sum(psign, psig, plsb, lo, min(lo + kp.merge_group, k))
                n = _add_sum(t, n, total, base, UNSET)
            out[i] = block_word(t, n, flags, kp.dominant, kp.stage)
            continue
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
            word = block_word(t, kept, flags, Window(0, q, -1), kp.stage)
        out[i] = word


# ---------------------------------------------------------------------------
# The model.


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
        dp = self.datapath
        cases.check(dp)
        a, b = cases.masked()
        out = np.empty(len(cases), np.int64)
        scaled_kernel(
            np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64),
            np.asarray(cases.c, np.int64),
            np.ascontiguousarray(cases.scale_a, dtype=np.int64),
            np.ascontiguousarray(cases.scale_b, dtype=np.int64),
            kernel_params(dp, self.params), out)
        return out.astype(np.uint32)

    def describe(self) -> dict:
        return {**super().describe(), "params": self.params.as_dict()}

