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

from tcprobe.models.cases import Cases
from tcprobe.models.words import exp_range, max_sig, pow2, product, word, zero

from .carry import at_floor
from .common import MOST_CARRY_BITS, Batch, Finding, StepInfo, lone_ties, open_keeps, window

STEP = StepInfo(
    order=120, title="zero: the sign of an exact zero, the zero floor", needs_layout=True,
    engine=True, fingerprint=True
)


def _lanes(ctx, n: int = 2):
    """n lanes of the last block that has n (a small result carried into a
    later block re-anchors on the output's smallest normal exponent)."""
    blocks = ctx.value("blocks") or [list(range(ctx.dp.k))]
    for b in reversed(blocks):
        lanes = ctx.together(n, b)  # (sparse: lanes a legal selection keeps together)
        if lanes:
            return tuple(lanes)
    return None


def run(ctx) -> Finding:
    ctx.require("block")
    ctx.require("rounding")
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    lane0 = (ctx.value("blocks") or [[0]])[-1][0]  # the last block: its sum is the output
    values = {"undetermined": {}}
    ev, notes = [], []
    osub = _last_step(ctx)
    nzp = (zero(fa, 1), zero(fb))  # a (-0)(+0) product: the lanes a case leaves idle
    cs, w = _sign_cases(ctx, lane0, osub, nzp, ev)
    # -- the zero floor --------------------------------------------------------
    pair = _lanes(ctx)
    F = window(ctx)
    F = 25 if F is None else F
    rnd_known = ctx.value("output_rounding") is not None
    _, na, _ = exp_range(fa)
    _, nb, _ = exp_range(fb)
    lowest_raw = na + nb  # subnormal inputs align on the smallest normal exponent
    fsub = exp_range(fc)[0]
    bt2 = Batch(dp)
    _pair_sweeps(ctx, bt2, pair, F, osub)
    _tie_trios(ctx, bt2, F, osub)
    _signed_pairs(ctx, bt2, pair, osub, lowest_raw, lane0, nzp)
    _block_sums(ctx, bt2, osub, lowest_raw)
    keeps = {ctx.params().output_frac_bits or ctx.d_fmt.frac_bits, *open_keeps(ctx)}
    c_rows = _c_rows(ctx, bt2, pair, F, keeps, lowest_raw)
    _near_subnormal(ctx, bt2, osub, lane0)
    _lone_tie_rows(ctx, bt2, osub, keeps, lane0, nzp)
    _floor_edges(ctx, bt2, F, keeps, nzp)
    tiny = _tiny_sums(ctx, osub)
    if not len(bt2) and not _reaches(tiny, fa, fb, lowest_raw, osub):  # (never: C rows)
        ok = ctx.consistent(cs, w, {z: {"zero_sign": z, "zero_floor": None}
                                    for z in ("positive", "ieee")})
        _sign(values, ok, notes)
        values["undetermined"]["zero_floor"] = (
            f"{fa.name} x {fb.name} products never anchor below 2^{lowest_raw} and none reaches "
            f"the output's smallest steps (2^{osub}): any floor at or below {lowest_raw} gives "
            "the same words")
        return Finding("zero", "found" if values.get("zero_sign") else "partial",
                       f"{_sign_text(values)}; zero floor not observable (<= {lowest_raw})",
                       values, ev, notes)
    cs2 = Cases.concat([bt2.cases(), tiny]) if len(bt2) else tiny
    w2 = ctx.run(cs2)
    # floors below every anchor in these cases act like no floor: try them once (None)
    from tcprobe.models.formats import decode

    da, db = decode(fa, cs2.a), decode(fb, cs2.b)
    nonzero = (da.cls == 1) & (db.cls == 1)
    low = int((da.raw + db.raw)[nonzero].min()) if nonzero.any() else lowest_raw
    lo_f = max(low, lowest_raw - 2)
    if c_rows:  # C alone anchors as low as C's smallest normal exponent
        lo_f = min(lo_f, fsub)
    floors = [None] + list(range(lo_f, HIGHEST_FLOOR + 1))
    roundings = [ctx.value("output_rounding")] if rnd_known else ["rz", "rne", "rna"]
    # the sign of zero, the floor (and the rounding, if still open) together:
    # a floor can cut a tiny term that would otherwise decide a zero's sign
    both = Cases.concat([cs, cs2])
    words = np.concatenate([w, w2])
    # where the rounding step saw RZ at the output's width that a normalizing
    # top under RNE or RNA explains too, those roundings come with that top
    top = _narrow_top(ctx) if not rnd_known else {}
    cands = {(f, r, z): {"zero_floor": f, "output_rounding": r, "zero_sign": z,
                         **(top if r != "rz" else {})}
             for f in floors for r in roundings for z in ("positive", "ieee")}
    ok2 = ctx.consistent(both, words, cands)
    if not ok2:
        ok2 = _retry(ctx, both, words, cands, values, notes)
        rnd_known = rnd_known or "output_rounding" in values
    _sign(values, sorted({z for _, _, z in ok2}), notes)
    ok_floors = sorted({f for f, _, _ in ok2}, key=lambda f: -10**9 if f is None else f)
    ok_round = sorted({r for _, r, _ in ok2})
    if not rnd_known and len(ok_round) == 1:
        values["output_rounding"] = ok_round[0]
        notes.append(f"outputs in the subnormal range settle the rounding: {ok_round[0]}")
        if top and ok_round[0] != "rz":
            values.update(top)
            values["settled"] = [*values.get("settled", []), "carry_bits"]
            notes.append(f"so the top is the one that rounding needs: it normalizes at "
                         f"{top['carry_bits']} carry bits")
    if not ok2:
        return Finding("zero", "failed", f"{_sign_text(values)}; no zero floor reproduces the "
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
    status, floor_text = _floor_verdict(values, ok_floors, lo_f, F, fa, fb, lowest_raw, osub)
    if "carry_bits" not in values:  # the carry step's reading, at the floor found here
        again = at_floor(ctx, values.get("zero_floor", values.get("assumed", {}).get("zero_floor")))
        if again:
            values["reopened"] = again["reopened"]
            values.setdefault("assumed", {}).update(again["assumed"])
            values["undetermined"].update(again["undetermined"])
    if "zero_sign" not in values:
        status = "partial"
    return Finding("zero", status, f"{_sign_text(values)}; {floor_text}", values, ev, notes)


def _sign_cases(ctx, lane0: int, osub: int, nzp, ev):
    """The sign of zero: C = -0 with -0 products, C = -0 alone, exact
    cancellations of either sign, a negative product below the output's last
    step; run, their evidence appended to ``ev``."""
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    bt = Batch(dp)
    one = product(fa, fb, 0, 0)
    mone = product(fa, fb, 0, 1)
    nz_a = zero(fa, 1)
    bt.add("C = -0, every product (-0)(+0)", {k: (nz_a, zero(fb)) for k in range(dp.k)},
           zero(fc, 1))
    bt.add("C = -0 alone", {}, zero(fc, 1))
    bt.add("C = -1, product +1", {lane0: one[:2]}, word(fc, 1, 1, 0))
    bt.add("C = +1, product -1", {lane0: mone[:2]}, word(fc, 0, 1, 0))
    tiny = product(fa, fb, osub - 3, 1)
    if tiny is not None:
        bt.add(f"C = -0, product -2^{osub - 3} (below the output's last step)",
               _fill({lane0: tiny[:2]}, dp.k, nzp), zero(fc, 1))
        bt.add(f"C = +0, product -2^{osub - 3}", _fill({lane0: tiny[:2]}, dp.k, nzp), zero(fc, 0))
    cs = bt.cases()
    w = ctx.run(cs)
    negs = ctx.is_neg_zero(w)
    for i in range(len(bt)):
        ev.append(bt.evidence(i, [w[i]], "-0" if negs[i] else ("+0" if int(w[i]) == 0 else "")))
    return cs, w


def _pair_sweeps(ctx, bt2, pair, F: int, osub: int) -> None:
    """A product 2**t and a second one +-2**y swept below it (two lanes)."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    if pair is not None:
        i, j = pair
        # p1 at 2**t (several significands), p2 = +-2**y below it: p2 counts
        # while y >= max(t, floor) - F, so each t pins floors in (t, t + F]; t
        # runs from the output's last steps up in strides below F
        _, _, cmax = exp_range(ctx.d_fmt)
        fine = list(range(osub - 2, osub + 5))
        coarse = list(range(osub + 6, min(0, cmax - F - 2), max(2, F // 2)))
        for t in fine + coarse:
            mants = ((((1, 1), (0, 0)), ((3, 1), (1, 0)), ((3, 3), (1, 1)), ((15, 15), (3, 3)))
                     if t in fine else (((1, 1), (0, 0)), ((3, 1), (1, 0))))
            for mant, frac in mants:
                p1 = product(fa, fb, t, 0, mant, frac)
                if p1 is None or p1[2] != t:
                    continue  # subnormal inputs: the raw exponent is not t
                for y in range(t - F - (40 if t in fine else 2), t):
                    for s2 in (0, 1):
                        p2 = product(fa, fb, y, s2)
                        if p2 is None:
                            continue
                        bt2.add(f"C = 0, {mant[0] * mant[1]}/{1 << (frac[0] + frac[1])}*2^{t} "
                                f"and {'-' if s2 else '+'}2^{y}", {i: p1[:2], j: p2[:2]})


def _tie_trios(ctx, bt2, F: int, osub: int) -> None:
    """Ties at the output's last step broken by a third lane."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    # ties at the output's last step: 2**t + 2**t (two lanes) is exactly half a
    # step for t = osub - 2 and friends; a third lane +-2**y breaks the tie while
    # it reaches the window
    trio = _lanes(ctx, 3)
    if trio is not None:
        i3, j3, l3 = trio
        for t in range(osub - 6, osub + 3):
            p = product(fa, fb, t, 0)
            if p is None or p[2] != t:
                continue
            for y in range(t - F - 12, t):
                for s2 in (0, 1):
                    p2 = product(fa, fb, y, s2)
                    if p2 is not None:
                        bt2.add(f"C = 0, 2^{t} + 2^{t} and {'-' if s2 else '+'}2^{y}",
                                {i3: p[:2], j3: p[:2], l3: p2[:2]})


def _signed_pairs(ctx, bt2, pair, osub: int, lowest_raw: int, lane0: int, nzp) -> None:
    """Pairs of opposite sign (normal and subnormal inputs) and lone negative
    products: tiny values whose zero's sign shows the floor."""
    dp = ctx.dp
    fa, fb = ctx.a_fmt, ctx.b_fmt
    sa, sb = exp_range(fa)[0], exp_range(fb)[0]
    # IEEE zeros: -2**t and +2**(t-1) sum to a negative tiny value (-0) unless
    # both fall below the window (an exact zero of mixed signs, +0)
    # (C = -0 too where C is added after the blocks: beside C = +0 any zero
    # comes out +0)
    cz = [(zero(ctx.c_fmt), "+0")] + ([(zero(ctx.c_fmt, 1), "-0")]
                                      if ctx.value("c_join") == "last" else [])
    if pair is not None:
        i, j = pair
        for t in range(osub - 1, max(lowest_raw, osub - 160) - 1, -1):
            pn, pp = product(fa, fb, t, 1), product(fa, fb, t - 1, 0)
            if pn is not None and pp is not None and pn[2] == t:
                for c, name in cz:
                    bt2.add(f"C = {name}, -2^{t} and +2^{t - 1}",
                            _fill({i: pn[:2], j: pp[:2]}, dp.k, nzp), c)
        # the same pair from subnormal inputs: values below every raw exponent
        # (2^-29 to 2^-48 for f16), so a floor whose window ends above them
        # cuts both (+0) where a lower one keeps them (-0)
        for t in range(lowest_raw - 1, sa + sb, -1):
            pn, pp = product(fa, fb, t, 1), product(fa, fb, t - 1, 0)
            if pn is not None and pp is not None:
                bt2.add(f"C = +0, -2^{t} and +2^{t - 1} (subnormal inputs)",
                        _fill({i: pn[:2], j: pp[:2]}, dp.k, nzp))
    # one lane (blocks of 1 have no pair): C = +0 beside a lone -2^t is a
    # negative tiny value (-0 under IEEE zeros) while the window keeps it and
    # an exact zero once a floor-held anchor's window cuts it
    for t in range(osub - 1, max(sa + sb, osub - 200) - 1, -1):
        pn = product(fa, fb, t, 1)
        if pn is not None:
            for c, name in cz:
                bt2.add(f"C = {name}, a lone -2^{t}", _fill({lane0: pn[:2]}, dp.k, nzp), c)


def _block_sums(ctx, bt2, osub: int, lowest_raw: int) -> None:
    """Every lane of the last block tiny, or the largest product at 2**t."""
    dp = ctx.dp
    fa, fb = ctx.a_fmt, ctx.b_fmt
    # every lane of the last block tiny: the sum shows what a lone product cannot
    last = (ctx.value("blocks") or [list(range(dp.k))])[-1]
    for t in range(osub - 9, osub + 1):
        for s in (0, 1):
            p = product(fa, fb, t, s, (15, 15), (3, 3))
            if p is not None and p[2] == t:
                bt2.add(f"C = 0, every lane of the last block 225/64*2^{t}",
                        {k: p[:2] for k in last})
    # every lane of the last block the largest product at raw exponent t, from
    # the lowest anchor up: with few carry bits the sum passes the top of an
    # accumulator anchored at t (it wraps or saturates) but not of one the
    # floor holds higher, so where that starts tells the floor
    ma, mb = max_sig(fa), max_sig(fb)
    for t in range(lowest_raw, min(osub + 12, lowest_raw + 60)):
        for s in (0, 1):
            p = product(fa, fb, t, s, (ma, mb), (fa.frac_bits, fb.frac_bits))
            if p is not None and p[2] == t:
                bt2.add(f"C = 0, every lane of the last block the largest product at 2^{t}",
                        {k: p[:2] for k in last})


HIGHEST_FLOOR = 20  # the highest zero floor the step tries


def _c_rows(ctx, bt2, pair, F: int, keeps, lowest_raw: int) -> int:
    """C alone (and beside products that cancel) over C's exponents; the count
    of C-alone rows."""
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    # C alone in a block (every product a zero), and C beside products that
    # cancel exactly: a floor that binds only through C (fp6/fp4 products
    # never anchor that low) shows where C's last bits fall below floor - F
    _, fmin, _ = exp_range(fc)
    c_rows = 0
    # a tie at the kept width plus one bit near the end of C's own window:
    # under a nearest rounding the sum rounds up while that bit is inside the
    # window and sits on the tie (to even, down) once a floor-held anchor's
    # window (floor - F) cuts it, so the sweep over C's exponent shows the floor
    ties = {(1 << (fc.frac_bits - k - 1)) | (1 << (fc.frac_bits - d))
            for k in keeps for d in (F - 2, F - 1, F)
            if 0 <= k < fc.frac_bits - 1 and k + 1 < d <= fc.frac_bits}
    # a subnormal C (biased exponent 0) holds its bits at fixed places: the
    # tie beside one bit at every depth below it, down to C's last, so a floor
    # whose window ends anywhere among them cuts the bit (a window deeper than
    # C's fraction reaches them only there)
    sub_ties = {(1 << (fc.frac_bits - k - 1)) | (1 << (fc.frac_bits - d))
                for k in keeps for d in range(k + 2, fc.frac_bits + 1)
                if 0 <= k < fc.frac_bits - 1}
    # C's exponents from its subnormals up to where the highest floor tried
    # cuts a whole C (HIGHEST_FLOOR - F): a wide window under a high floor
    # keeps every C below 2^-64 from no floor at all
    top_be = max(64, HIGHEST_FLOOR - F + fc.bias + 2)
    for be in range(0, min(top_be, (1 << fc.exp_bits) - 1)):
        for frac in sorted({1, (1 << fc.frac_bits) - 1, 1 << (fc.frac_bits - 1),
                            (1 << fc.frac_bits) // 3, *ties, *(sub_ties if be == 0 else ())}):
            for s in (0, 1):
                cw = (s << (fc.width - 1)) | (be << fc.frac_bits) | frac
                bt2.add(f"C alone, biased exponent {be}", {}, cw)
                c_rows += 1
                if pair is not None and be % 4 == 0:
                    t = max(lowest_raw, fmin - 2)
                    pp, pn = product(fa, fb, t, 0), product(fa, fb, t, 1)
                    if pp is not None and pn is not None:
                        bt2.add(f"C (biased exponent {be}) beside +2^{t} - 2^{t}",
                                {pair[0]: pp[:2], pair[1]: pn[:2]}, cw)
    return c_rows


def _near_subnormal(ctx, bt2, osub: int, lane0: int) -> None:
    """Single random products landing in the output's subnormal steps."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    # single products landing in the output's subnormal steps (rounding there)
    # (only the last block's sum can show a subnormal result: a later block
    # re-anchors it on the output's smallest normal exponent and cuts it)
    rng = np.random.default_rng(ctx.seed + 7)
    for n in range(1500):
        t = int(rng.integers(osub - 4, osub + 2)) if n >= 200 else int(rng.integers(osub - 4,
                                                                                   osub + 12))
        ma = int(rng.integers(1 << fa.frac_bits, 1 << (fa.frac_bits + 1)))
        mb = int(rng.integers(1 << fb.frac_bits, 1 << (fb.frac_bits + 1)))
        p = product(fa, fb, t, int(rng.integers(0, 2)), (ma, mb), (fa.frac_bits, fb.frac_bits))
        if p is not None:
            bt2.add(f"C = 0, one product near 2^{t}", {lane0: p[:2]})


def _lone_tie_rows(ctx, bt2, osub: int, keeps, lane0: int, nzp) -> None:
    """A lone product that is an exact tie to even plus a bit z + 1 deeper."""
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    # a lone product whose top bit is half a last step above zero (an exact tie
    # to even) and whose next set bit sits z + 1 bits deeper (lone_ties): it
    # rounds up while the window keeps that bit and to zero once a floor-held
    # anchor's window (floor - F) cuts it, so each depth pins a floor (blocks
    # of 1 have no pair of lanes for the sweeps above)
    _, emin, _ = exp_range(ctx.d_fmt)
    for last in sorted({max(osub, emin - k) for k in keeps}):
        for z, (m1, m2, top) in sorted(lone_ties(fa.name, fb.name).items()):
            e = last - 1 - top + fa.frac_bits + fb.frac_bits
            for s in (0, 1):
                p = product(fa, fb, e, s, (m1, m2), (fa.frac_bits, fb.frac_bits))
                if p is None:
                    continue
                for cz in (0, 1):
                    bt2.add(f"C = {'-' if cz else '+'}0, one product: a tie at 2^{last - 1} "
                            f"and a bit at 2^{last - 2 - z}", _fill({lane0: p[:2]}, dp.k, nzp),
                            zero(fc, cz))


def _tiny_sums(ctx, osub: int) -> Cases:
    """Random sums landing near the output's last steps."""
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    # random sums landing near the output's last steps
    from tcprobe.suites.mix import random_finite

    rng2 = np.random.default_rng(ctx.seed + 13)
    m = 600
    ea = rng2.integers(osub // 2 - 12, osub // 2 + 12, (m, 1))
    eb = osub - ea + rng2.integers(-10, 10, (m, 1))
    tiny_c = np.where(rng2.random(m) < 0.5,
                      (rng2.random(m) < 0.5).astype(np.uint32) << np.uint32(fc.width - 1),
                      random_finite(fc, rng2.integers(osub, osub + 24, m), (m,), rng2))
    tiny = Cases(random_finite(fa, ea, (m, dp.k), rng2), random_finite(fb, eb, (m, dp.k), rng2),
                 tiny_c.astype(np.uint32), names=["random tiny sum"] * m)
    return tiny


def _floor_verdict(values, ok_floors, lo_f: int, F: int, fa, fb, lowest_raw: int,
                   osub: int) -> tuple[str, str]:
    """The zero floor from the floors that fit (written into ``values``):
    the status and the summary's text."""
    numeric = [f for f in ok_floors if f is not None]
    if None in ok_floors:
        # the floors from the lowest tried up that all fit (a true range)
        bound = lo_f - 1
        while bound + 1 in numeric:
            bound += 1
        values["undetermined"]["zero_floor"] = (
            f"any floor at or below {bound} fits: nothing lower changes a visible output bit "
            f"({fa.name} x {fb.name} products anchor as low as 2^{lowest_raw}, the output's "
            f"last step is 2^{osub})")
        floor_text = f"zero floor not observable (<= {bound})"
        values["candidates"] = {"zero_floor": [None] + list(range(lo_f, bound + 1))}
        status = "partial" if not values.get("zero_sign") else "found"
    elif len(numeric) == 1:
        values["zero_floor"] = numeric[0]
        floor_text = (f"the anchor never drops below 2^{numeric[0]} (zero floor {numeric[0]}): "
                      f"with C = 0 a term below 2^{numeric[0] - F} is cut")
        status = "found"
    else:
        # several floors fit and none of them is "no floor": the model takes
        # the highest, and the key stays open with the range
        values["undetermined"]["zero_floor"] = (
            f"floors from {numeric[0]} to {numeric[-1]} give the same words on every case here "
            f"(the window's last bit sits below any visible output bit for all of them)")
        values.setdefault("assumed", {})["zero_floor"] = numeric[-1]
        values["candidates"] = {"zero_floor": numeric}
        floor_text = f"zero floor between {numeric[0]} and {numeric[-1]}"
        status = "partial"
    return status, floor_text


def _floor_edges(ctx, bt, F: int, keeps, nzp) -> None:
    """Cases at each floor's edge, where C itself lies below the floor (so
    the floor, not C, anchors the block): for a floor f, C = 2^(f-1) and a
    lone term one bit past the window that f leaves (f - F - 1), cut by f
    and kept by f - 1. The term decides the rounding at a kept width k: C
    plain (RZ: a borrow), C with the tie bit at k + 1 (RNA: the term tips
    it below the tie) or with bits k and k + 1 (RNE: an odd tie) beside
    -2^(f-F-1); or, where C cannot hold the tie (k as wide as C's own
    fraction), a lone-tie product whose top bit is C's half step and whose
    next bit is the one past the window (:func:`lone_ties`). The product
    sits in the first block, with C."""
    dp, fa, fb, fc = ctx.dp, ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    lane = (ctx.value("blocks") or [[0]])[0][0]
    fsub, _, _ = exp_range(fc)
    ties = lone_ties(fa.name, fb.name)
    for f in range(fsub + 1, 21):
        y = f - F - 1
        tip = product(fa, fb, y, 1)
        for k in sorted(keeps):
            for bits in ((), (k + 1,), (k, k + 1)):
                if any(b > fc.frac_bits or b < 1 for b in bits) or tip is None:
                    continue
                mag = (1 << fc.frac_bits) | sum(1 << (fc.frac_bits - b) for b in bits)
                cw = word(fc, 0, mag, f - 1 - fc.frac_bits)
                if cw is not None:
                    bt.add(f"C = 2^{f - 1} (tie bits {list(bits)}), product -2^{y}",
                           _fill({lane: tip[:2]}, dp.k, nzp), cw)
            # C = 2^x below f, a lone tie product: top at x - k - 1, next bit at y
            zs = [z for z in ties if f - F + z + k + 1 < f]
            if not zs:
                continue
            z = max(zs)
            m1, m2, top = ties[z]
            x = f - F + z + k + 1
            cw = pow2(fc, x)
            for s in (0, 1):
                p = product(fa, fb, x - k - 1 - top + fa.frac_bits + fb.frac_bits, s, (m1, m2),
                            (fa.frac_bits, fb.frac_bits))
                if p is not None and cw is not None:
                    bt.add(f"C = 2^{x}, a lone tie at 2^{x - k - 1} with a bit at 2^{y}",
                           _fill({lane: p[:2]}, dp.k, nzp), cw)


def _retry(ctx, cases, words, cands, values, notes) -> list:
    """The (floor, rounding, sign) candidates that fit once what earlier steps
    could not tell apart is tried too: every rounding, the kept widths the
    rounding step left open, and beside the carry step's reading a
    normalizing top at the output's width (an RZ reading at the output's own
    width fits it in the normal range; subnormal results below the window's
    last bit tell them apart). What settles is recorded in ``values``."""
    out = ctx.d_fmt.frac_bits
    keeps = open_keeps(ctx) or [ctx.params().output_frac_bits or out]
    tops = {"found": {}}
    F = window(ctx)
    narrow = None if F is None else out + 1 - F
    if ctx.value("output_rounding") == "rz" and ctx.params().output_frac_bits in (None, out) \
            and narrow is not None and 0 <= narrow <= MOST_CARRY_BITS and ctx.value("carry_bits") is None:
        tops["normalize"] = {"carry_bits": narrow, "carry_top": "normalize"}
    # the carry widths the carry step could not tell apart (it assumed the
    # widest): a sum near the floor, cut by fewer bits, may need a narrower one
    top = ctx.params().carry_top
    for b in (ctx.findings["carry"].values.get("carry_widths", []) if "carry" in ctx.findings
              else []):
        if b != ctx.params().carry_bits:
            tops[f"carry {b}"] = {"carry_bits": b, "carry_top": top}
    base = {(f, z): {"zero_floor": f, "zero_sign": z} for f, _, z in cands}
    fits = ctx.consistent(cases, words, {
        (f, r, z, k, t): {**over, "output_rounding": r, **tops[t],
                          "output_frac_bits": None if k == out else k}
        for (f, z), over in base.items() for r in ("rz", "rne", "rna") for k in keeps
        for t in tops})
    if "normalize" in tops:  # the rounding step's sums allow another rounding only with that top
        fits = [x for x in fits if x[1] == "rz" or x[4] == "normalize"]
    kept = sorted({x[3] for x in fits})
    if len(kept) == 1 and len(keeps) > 1:
        values["output_frac_bits"] = None if kept[0] == out else kept[0]
        values["settled"] = ["output_frac_bits"]
        notes.append(f"subnormal results settle the kept width: {kept[0]} fraction bits")
    elif len(kept) > 1:
        values["assumed"] = {"output_frac_bits": None if kept[-1] == out else kept[-1]}
        values["undetermined"]["output_frac_bits"] = (
            f"keeping {kept[0]} to {kept[-1]} fraction bits gives the same words on every "
            "case here, subnormal results included")
    rounds = sorted({x[1] for x in fits})
    if len(rounds) == 1 and rounds[0] != ctx.value("output_rounding"):
        values["output_rounding"] = rounds[0]
        values["settled"] = [*values.get("settled", []), "output_rounding"]
        notes.append(f"outputs in the subnormal range settle the rounding: {rounds[0]}")
    widths = {x[4] for x in fits}
    if fits and len(widths) == 1 and next(iter(widths)).startswith("carry "):
        values.update(tops[next(iter(widths))])
        values["settled"] = [*values.get("settled", []), "carry_bits"]
        notes.append(f"the small sums settle the carry width the carry step left open: "
                     f"{values['carry_bits']} carry bits")
    if fits and {x[4] for x in fits} == {"normalize"}:
        values.update(tops["normalize"])
        values["settled"] = [*values.get("settled", []), "carry_bits"]
        notes.append(f"only a normalizing top at {narrow} carry bits (F + {narrow} = {F + narrow} "
                     f"bits, the output's precision) fits the subnormal results: in the normal "
                     f"range it gives the words of an RZ output")
    return [x[:3] for x in fits]


def _narrow_top(ctx) -> dict:
    """The normalizing top under which RNE or RNA fit the rounding step's sums
    (its ``narrow`` reading: an RZ output that such a top explains too), where
    the carry step did not measure the top; else {}."""
    narrow = ctx.value("narrow")
    if not narrow or ctx.value("carry_bits") is not None:
        return {}
    return {"carry_bits": narrow["carry_bits"], "carry_top": "normalize"}


def _last_step(ctx) -> int:
    """The exponent of the output's smallest step: an output that keeps fewer
    fraction bits than its format steps by 2**(emin - keep) in the subnormal
    range too (the kept width the earlier steps found or assume)."""
    osub, emin, _ = exp_range(ctx.d_fmt)
    keep = ctx.params().output_frac_bits
    return osub if keep is None else max(osub, emin - keep)


def _fill(lanes: dict, k: int, neg_zero) -> dict:
    """The other lanes hold (-0)(+0): a zero product that keeps an IEEE -0
    alive through later blocks (+0 products would turn it into +0)."""
    return {**{j: neg_zero for j in range(k)}, **lanes}


def _reaches(tiny, fa, fb, lowest_raw, osub) -> bool:
    """Whether products can come near the output's last steps at all."""
    from tcprobe.models.formats import decode

    da, db = decode(fa, tiny.a), decode(fb, tiny.b)
    return bool(((da.raw + db.raw) < osub + 40).any())


def _sign(values, ok, notes):
    if len(ok) == 1:
        values["zero_sign"] = ok[0]
    elif len(ok) == 2:
        values["undetermined"]["zero_sign"] = "no case here tells +0 from the IEEE sign"
    else:
        notes.append("neither +0 for every zero nor the IEEE rule explains the zero signs")


def _sign_text(values) -> str:
    return {"positive": "every exact or underflowed zero is +0",
            "ieee": "zeros follow IEEE 754 (-0 when every term is negative)"}.get(
        values.get("zero_sign"), "the zero sign is not settled")
