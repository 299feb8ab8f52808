"""Stage 6b: specials: NaN elements, scales and C, infinities, Inf x 0, the
zero of C = -0, overflow at the largest scales."""

from __future__ import annotations

from tcprobe.models.formats import Specials
from tcprobe.models.words import max_sig, pow2, product

from ..common import Batch
from .geometry import consistent


def specials(ctx, geo, blocks, base):
    """NaN elements, scales and C; infinities; Inf x 0; C = -0 with zero
    products; the largest products at the largest scales."""
    dp = ctx.dp
    rows = Batch(ctx.dp, show_scales=True)
    fa, fb, fc = geo.fa, geo.fb, ctx.c_fmt
    one = geo.elem(0) or product(fa, fb, 0)[:2]
    nan_s = int(geo.sf.canonical_nan)
    lane = blocks[0][0]
    rows.add("scale_a NaN code", {lane: one}, None, {0: nan_s}, None)
    rows.add("scale_b NaN code, lane zero", {}, None, None, {0: nan_s})
    for f, side in ((fa, 0), (fb, 1)):
        if f.specials != Specials.FINITE:
            top = ((1 << f.exp_bits) - 1) << f.frac_bits
            nan = top | ((1 << f.frac_bits) - 1) if f.specials == Specials.FN else top | 1
            lanes = {lane: (nan, one[1]) if side == 0 else (one[0], nan)}
            rows.add(f"{'A' if side == 0 else 'B'} NaN", lanes)
            if f.specials == Specials.IEEE:
                lanes = {lane: (top, one[1]) if side == 0 else (one[0], top)}
                rows.add(f"{'A' if side == 0 else 'B'} = Inf", lanes, pow2(fc, 0))
                zero_other = {lane: (top, 0) if side == 0 else (0, top)}
                rows.add("Inf x 0", zero_other)
    nanc = fc.canonical_nan
    rows.add("C NaN", {lane: one}, nanc)
    rows.add("C = +Inf", {lane: one}, 0x7F800000)
    rows.add("C = -Inf", {lane: one}, 0xFF800000)
    rows.add("C = -0, every product 0", {}, 0x80000000)
    rows.add("C = -1, product +1", {lane: one}, 0xBF800000)
    big = geo.elem(geo.elem_raw[1], 0, (max_sig(fa), max_sig(fb)), (fa.frac_bits, fb.frac_bits))
    top_s = geo.scales(2 * geo.s_hi)
    if big is not None and top_s is not None:
        all_lanes = {k: big for k in range(dp.k)}
        s_all = {j: top_s[0] for j in range(dp.n_scales)}
        t_all = {j: top_s[1] for j in range(dp.n_scales)}
        rows.add("every lane the largest product, largest scales", all_lanes, None, s_all, t_all)
        rows.add("the same, C = -max", all_lanes, 0xFF7FFFFF, s_all, t_all)
    cases = rows.cases()
    w = ctx.run(cases)
    cands = {(z, o): {"zero_c": z, "overflow": o} for z in ("positive", "keep")
             for o in ("inf", "saturate")}
    ok = consistent(ctx, cases, w, base, cands)
    out = {"cases": cases, "words": w, "values": {}, "undetermined": {}, "params": {},
           "evidence": [rows.evidence(r, [w[r]]) for r in range(min(4, len(rows)))]}
    if not ok:
        out["values"]["specials_ok"] = False
        return out
    zs = sorted({z for z, _ in ok})
    ovs = sorted({o for _, o in ok})
    out["params"] = {"zero_c": ok[0][0], "overflow": ok[0][1]}
    out["values"]["specials_ok"] = True
    out["values"]["zero_c"] = zs[0] if len(zs) == 1 else None
    out["values"]["overflow"] = ovs[0] if len(ovs) == 1 else None
    if len(zs) > 1:
        out["undetermined"]["zero_c"] = "C = -0 with zero products is not told apart"
    if len(ovs) > 1:
        out["undetermined"]["overflow"] = "no case overflows f32"
    nan_words = sorted({int(w[r]) for r in range(3)})
    out["values"]["nan"] = nan_words[0] if len(nan_words) == 1 else None
    return out
