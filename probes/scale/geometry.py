"""What the block-scale stages share: the exact starting parameters, the
candidate check with a block-scaled model, and what the formats can build."""

from __future__ import annotations

from tcprobe.models.formats import decode_scalar, get_format
from tcprobe.models.tcgen05_scaled import BlockScaledModel, ScaledParams
from tcprobe.models.words import exp_range, pow2, product

# The quantum of the stages before C is set: no cut at all until told.
EXACT = ScaledParams(product_window=None, c_window=None, scale_window=None, q_floor=None,
                     product_group=1)


def consistent(ctx, cases, words, base: ScaledParams, cands: dict) -> list:
    """Candidate names whose block-scaled model (``base`` with the
    candidate's changes) reproduces ``words`` (a sample first, then all)."""
    return ctx.consistent(cases, words, cands, make=lambda over: BlockScaledModel(
        "ladder", ctx.dp, "ladder findings", base.replace(**over)))


# ---------------------------------------------------------------------------
# Exponent ranges: what the element and scale formats can make.


class Geometry:
    """What the probes can build on this datapath: element product
    exponents, scale-pair exponents and the lanes of each scale block."""

    def __init__(self, ctx, blocks):
        dp = ctx.dp
        self.ctx, self.dp = ctx, dp
        self.fa, self.fb = ctx.a_fmt, ctx.b_fmt
        self.sf = get_format(dp.scale_type)
        self.blocks = blocks
        sa_, na, xa = exp_range(self.fa)
        sb_, nb, xb = exp_range(self.fb)
        self.elem_raw = (na + nb, xa + xb)  # normal element products
        self.elem_value = (sa_ + sb_, xa + xb)
        if self.sf.kind.name == "E8M0":
            self.s_lo, self.s_hi, self.s_norm = -127, 127, -127
        else:
            lo, norm, hi = exp_range(self.sf)
            self.s_lo, self.s_hi, self.s_norm = lo, hi, norm

    def elem(self, e, sign=0, mant=(1, 1), frac=(0, 0), normal=True):
        """Element words (a, b) with a*b = +-mant*2**e (normal factors if asked)."""
        p = product(self.fa, self.fb, e, sign, mant, frac)
        if p is None or (normal and p[2] != e):
            return None
        return p[:2]

    def scales(self, s, normal=True):
        """Scale codes (A, B) whose values multiply to 2**s (each normal if asked)."""
        lo = self.s_norm if normal else self.s_lo
        for x in sorted(range(lo, self.s_hi + 1), key=lambda x: (abs(2 * x - s), x)):
            y = s - x
            if lo <= y <= self.s_hi:
                wa, wb = pow2(self.sf, x), pow2(self.sf, y)
                if wa is not None and wb is not None:
                    return wa, wb
        return None

    def small(self, y, s_max):
        """(element words, scale codes) of a product 2**y whose scale pair
        is below 2**s_max (a raw exponent sum), preferring an element 1*1."""
        for e in sorted(range(self.elem_value[0], self.elem_value[1] + 1), key=abs):
            el = self.elem(e, normal=False)
            if el is None:
                continue
            for normal in (True, False):
                sc = self.scales(y - e, normal)
                if sc is not None and self.scale_raw(sc) < s_max:
                    return el, sc
        return None

    def small_term(self, y, s0, s0raw, sc0, multi):
        """(element words, scale A by block, scale B by block) of a small
        product 2**y: in the second scale block under a smaller scale pair
        when there are two blocks, else in block 0 under the scales ``sc0``
        (2**s0); None when the formats cannot make it."""
        if multi:
            sm = self.small(y, s0raw)
            if sm is None:
                return None
            el, sc1 = sm
            return el, {0: sc0[0], 1: sc1[0]}, {0: sc0[1], 1: sc1[1]}
        el = self.elem(y - s0, normal=False)
        if el is None:
            return None
        return el, {0: sc0[0]}, {0: sc0[1]}

    def scale_raw(self, codes) -> int:
        return sum(int(decode_scalar(int(c), self.sf.spec)[4]) for c in codes)



def trio_lanes(ctx, blocks):
    """Lanes i, j of block 0 and a third lane (block 1 if there is one), active together."""
    pair = ctx.together(2, blocks[0])
    if pair is None:
        return None
    rest = blocks[1] if len(blocks) >= 2 else [k for k in blocks[0] if k not in pair]
    lane = next((k for k in rest if ctx.co_active((*pair, k))), None)
    return None if lane is None else (pair[0], pair[1], lane)
