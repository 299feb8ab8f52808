"""zero: the sign of an exact zero, and the zero floor of the anchor.

Sign: C = -0 with a -0 product, C = -0 alone, exact cancellations of either
sign, and a negative product too small for the output. IEEE 754 keeps -0
where every term is negative; the measured tensor cores give +0 for all.

Floor: with C = 0 the anchor is the largest product's raw exponent, but
never below the floor. Products near the output's smallest step (a power
of two, or a tie at 1.5 steps) meet a second product +-2**y for y sweeping
down: that term stops mattering once it falls below the window of the
anchor, and where that happens tells the anchor, hence the floor.
Candidate floors (and, where the rounding step could not tell, roundings)
run as models; the ones that reproduce every device word remain.
"""

from __future__ import annotations

import numpy as np

from .common import Batch, Finding, exp_range, product, word, zero


def _lanes(ctx):
    """Two lanes of the last block that has two (a small result carried into
    a later block re-anchors on the output's smallest normal exponent)."""
    blocks = ctx.value("blocks") or [list(range(ctx.dp.k))]
    for b in reversed(blocks):
        if len(b) >= 2:
            return b[0], b[1]
    return None


def run(ctx) -> Finding:
    ctx.require("block")
    ctx.require("rounding")
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    lane0 = (ctx.value("blocks") or [[0]])[-1][0]  # the last block: its sum is the output
    values = {"undetermined": {}}
    ev, notes = [], []

    # -- the sign of zero ----------------------------------------------------
    bt = Batch(dp)
    one = product(fa, fb, 0, 0)
    mone = product(fa, fb, 0, 1)
    nz_a = zero(fa, 1)
    bt.add("C = -0, every product (-0)(+0)", {k: (nz_a, zero(fb)) for k in range(dp.k)},
           zero(fc, 1))
    bt.add("C = -0 alone", {}, zero(fc, 1))
    bt.add("C = -1, product +1", {lane0: one[:2]}, word(fc, 1, 1, 0))
    bt.add("C = +1, product -1", {lane0: mone[:2]}, word(fc, 0, 1, 0))
    osub, _, _ = exp_range(ctx.d_fmt)
    tiny = product(fa, fb, osub - 3, 1)
    if tiny is not None:
        bt.add(f"C = -0, product -2^{osub - 3} (below the output's last step)",
               {lane0: tiny[:2]}, zero(fc, 1))
        bt.add(f"C = +0, product -2^{osub - 3}", {lane0: tiny[:2]}, zero(fc, 0))
    cs = bt.cases()
    w = ctx.run(cs)
    negs = ctx.is_neg_zero(w)
    for i in range(len(bt)):
        ev.append(bt.evidence(i, [w[i]], "-0" if negs[i] else ("+0" if int(w[i]) == 0 else "")))
    ok = ctx.consistent(cs, w, {z: {"zero_sign": z, "zero_floor": None}
                                for z in ("positive", "ieee")})
    if len(ok) == 1:
        values["zero_sign"] = ok[0]
    elif len(ok) == 2:
        values["undetermined"]["zero_sign"] = "no case here tells +0 from the IEEE sign"
    else:
        notes.append("neither +0 for every zero nor the IEEE rule explains the zero signs")
    sign_text = {"positive": "every exact or underflowed zero is +0",
                 "ieee": "zeros follow IEEE 754 (-0 when every term is negative)"}.get(
        values.get("zero_sign"), "the zero sign fits no rule")

    # -- the zero floor --------------------------------------------------------
    pair = _lanes(ctx)
    F = ctx.value("window_bits") or 25
    rnd_known = ctx.value("output_rounding") is not None
    sa, na, _ = exp_range(fa)
    sb, nb, _ = exp_range(fb)
    lowest_raw = na + nb  # subnormal inputs align on the smallest normal exponent
    bt2 = Batch(dp)
    if pair is not None:
        i, j = pair
        for t in (osub, osub + 1, osub + 4):
            for mant, frac in ((1, 0), (3, 1)):
                p1 = product(fa, fb, t, 0, (mant, 1), (frac, 0))
                if p1 is None:
                    continue
                for y in range(t - F - 40, t):
                    for s2 in (0, 1):
                        p2 = product(fa, fb, y, s2)
                        if p2 is None:
                            continue
                        bt2.add(f"C = 0, {'3/2*' if mant == 3 else ''}2^{t} and "
                                f"{'-' if s2 else '+'}2^{y}", {i: p1[:2], j: p2[:2]})
    # single products landing in the output's subnormal steps (rounding there)
    rng = np.random.default_rng(ctx.seed + 7)
    for _ in range(200):
        t = int(rng.integers(osub - 4, osub + 12))
        ma = int(rng.integers(1 << fa.frac_bits, 1 << (fa.frac_bits + 1)))
        mb = int(rng.integers(1 << fb.frac_bits, 1 << (fb.frac_bits + 1)))
        p = product(fa, fb, t, int(rng.integers(0, 2)), (ma, mb), (fa.frac_bits, fb.frac_bits))
        if p is not None:
            bt2.add(f"C = 0, one product near 2^{t}", {lane0: p[:2]})
    if not len(bt2):
        values["undetermined"]["zero_floor"] = (
            f"{fa.name} x {fb.name} products never anchor below 2^{lowest_raw} and none reaches "
            f"the output's smallest steps (2^{osub}): any floor at or below {lowest_raw} gives "
            "the same words")
        return Finding("zero", "found" if values.get("zero_sign") else "partial",
                       f"{sign_text}; zero floor not observable (<= {lowest_raw})", values, ev, notes)
    cs2 = bt2.cases()
    w2 = ctx.run(cs2)
    zs = values.get("zero_sign", "positive")
    # floors below every anchor in these cases act like no floor: try them once (None)
    from tcprobe.models.formats import decode

    da, db = decode(fa, cs2.a), decode(fb, cs2.b)
    nonzero = (da.cls == 1) & (db.cls == 1)
    low = int((da.raw + db.raw)[nonzero].min()) if nonzero.any() else lowest_raw
    floors = [None] + list(range(max(low, lowest_raw - 2), 21))
    roundings = [ctx.value("output_rounding")] if rnd_known else ["rz", "rne", "rna"]
    cands = {(f, r): {"zero_floor": f, "output_rounding": r, "zero_sign": zs}
             for f in floors for r in roundings}
    ok2 = ctx.consistent(cs2, w2, cands)
    ok_floors = sorted({f for f, _ in ok2}, key=lambda f: -10**9 if f is None else f)
    ok_round = sorted({r for _, r in ok2})
    if not rnd_known and len(ok_round) == 1:
        values["output_rounding"] = ok_round[0]
        notes.append(f"outputs in the subnormal range settle the rounding: {ok_round[0]}")
    if not ok2:
        return Finding("zero", "failed", f"{sign_text}; no zero floor reproduces the "
                       f"{len(cs2)} small-product cases", values, ev, notes)
    # evidence: the sweep where the second product stops mattering
    if pair is not None:
        rows = [r for r in range(len(bt2)) if "and -2^" in bt2.rows[r][0]][:200]
        prev = None
        for r in rows:
            if prev is not None and w2[r] != w2[prev] and bt2.rows[r][0].split(" and")[0] == \
                    bt2.rows[prev][0].split(" and")[0]:
                ev.append(bt2.evidence(prev, [w2[prev]], "the small term is cut"))
                ev.append(bt2.evidence(r, [w2[r]], "the small term counts"))
                break
            prev = r
    numeric = [f for f in ok_floors if f is not None]
    if None in ok_floors:
        bound = max(numeric) if numeric else low
        values["undetermined"]["zero_floor"] = (
            f"any floor at or below {bound} fits: {fa.name} x {fb.name} products never anchor "
            f"below 2^{lowest_raw}")
        floor_text = f"zero floor not observable (<= {bound})"
        status = "partial" if not values.get("zero_sign") else "found"
    elif len(numeric) == 1:
        values["zero_floor"] = numeric[0]
        floor_text = (f"the anchor never drops below 2^{numeric[0]} (zero floor {numeric[0]}): "
                      f"with C = 0 a term below 2^{numeric[0] - F} is cut")
        status = "found"
    else:
        values["zero_floor"] = numeric[-1]
        floor_text = f"zero floor between {numeric[0]} and {numeric[-1]}"
        status = "partial"
    return Finding("zero", status, f"{sign_text}; {floor_text}", values, ev, notes)
