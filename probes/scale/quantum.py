"""Stage 3: the quantum, from cancellation sweeps: the product window and
the scale floor offset."""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.words import exp_range, pow2

from ..common import Batch
from .geometry import EXACT, consistent, trio_lanes


def quantum(ctx, geo):
    """C = 0 sweeps: +-2**E cancel in two lanes of block 0 (element exponent
    E - S0, scale pair S0), a small 2**y below them; its survival threshold
    t per (E - S0, S0)."""
    dp = ctx.dp
    multi = len(geo.blocks) >= 2
    trio = trio_lanes(ctx, geo.blocks)
    if trio is None:
        return {"ok": False, "cases": Cases(np.zeros((0, dp.k)), np.zeros((0, dp.k)), np.zeros(0)),
                "words": np.zeros(0, np.uint32), "evidence": []}
    i, j, lane = trio
    lo, hi = geo.elem_raw
    rels = sorted({lo, min(max(0, lo), hi), hi, max(lo, hi - 4)})
    s_top = 2 * geo.s_hi
    s0s = sorted({0, min(24, s_top), s_top} if geo.sf.kind.name != "E8M0" else {0, 24})
    rows = Batch(ctx.dp, show_scales=True)
    sweeps = []  # (E, S0 raw, [(y, row, ref)])
    unders = []  # (E, S0 raw, [(c, row, product alone)])
    refs = {}

    def ref(value_exp):
        if value_exp not in refs:
            refs[value_exp] = rows.add(f"C = 2^{value_exp} alone", {},
                                       pow2(ctx.c_fmt, value_exp) if value_exp is not None
                                       else 0)
        return refs[value_exp]

    zero_ref = ref(None)
    osub, _, _ = exp_range(ctx.c_fmt)
    for rel in rels:
        for s0 in s0s:
            plus, minus = geo.elem(rel, 0), geo.elem(rel, 1)
            sc0 = geo.scales(s0)
            if plus is None or minus is None or sc0 is None:
                continue
            s0raw = geo.scale_raw(sc0)
            E = rel + s0
            sweep = []
            for y in range(E - 1, E - 72, -1):
                if y < osub:
                    break
                term = geo.small_term(y, s0, s0raw, sc0, multi)
                if term is None:
                    continue
                el, scale_a, scale_b = term
                r = rows.add(f"lanes {i},{j}: +-2^{E} (scale 2^{s0}), lane {lane}: 2^{y}, C = 0",
                             {i: plus, j: minus, lane: el}, None, scale_a, scale_b)
                sweep.append((y, r, ref(y)))
            if sweep:
                sweeps.append((E, s0raw, sweep, rel, s0))
            # C = -2**c under one product +2**E: kept, D falls below 2**E; cut, D is
            # the product's own word (C is a probe with every bit, any depth)
            alone = rows.add(f"lane {i}: +2^{E} (scale 2^{s0}) alone", {i: plus}, None,
                             {0: sc0[0]}, {0: sc0[1]})
            under = []
            for c in range(E - 1, E - 66, -1):
                cw = pow2(ctx.c_fmt, c, 1)
                if cw is None or c < osub:
                    break
                r = rows.add(f"lane {i}: +2^{E} (scale 2^{s0}), C = -2^{c}", {i: plus}, cw,
                             {0: sc0[0]}, {0: sc0[1]})
                under.append((c, r, alone))
            if under:
                unders.append((E, s0raw, under, rel, s0))
    cases = rows.cases()
    w = ctx.run(cases)
    found = []
    ev = []
    for E, s0raw, under, rel, s0 in unders:
        t = None
        for c, r, alone in under:  # kept (D below the product) down to the threshold
            if w[r] != w[alone]:
                t = c
            else:
                break
        if t is not None and t > under[-1][0]:
            found.append((E, s0raw, t, rel, s0))
            if len(ev) < 2:
                for c, r, alone in under:
                    if c in (t, t - 1):
                        ev.append(rows.evidence(r, [w[r], w[alone]], "C kept: D below the product"
                                                if c == t else "C cut: D = the product alone"))
    for E, s0raw, sweep, rel, s0 in sweeps:
        t = None
        cut_seen = False
        for y, r, rf in sweep:  # y descending
            if w[r] == w[rf]:
                if cut_seen:
                    t = None  # not a threshold: survives again below a cut
                    break
                t = y
            else:
                cut_seen = True
                if w[r] != w[zero_ref]:
                    t = None
                    break
        if t is not None and cut_seen:
            found.append((E, s0raw, t, rel, s0))
            if len(ev) < 4:
                at = [x for x in sweep if x[0] in (t, t - 1)]
                for y, r, rf in at:
                    ev.append(rows.evidence(r, [w[r], w[rf]], "survives (= C alone)" if y == t
                                            else "cut to 0"))
    out = {"cases": cases, "words": w, "evidence": ev, "values": {}, "undetermined": {},
           "assumed": {}, "sweeps": found, "trio": trio}
    p_c = {f[0] - f[2] for f in found}
    o_c = {f[1] - f[2] for f in found}
    p_opts = [None, *sorted(p_c)] + ([] if p_c else list(range(2, 64)))
    o_opts = [None, *sorted(o_c)]
    cands = {(p, o): {"product_window": p, "scale_window": o}
             for p in p_opts for o in o_opts if not (p is None and o is None)}
    ok = consistent(ctx, cases, w, EXACT, cands)
    out["ok"] = bool(ok)
    if not ok:
        return out
    ps = sorted({p for p, _ in ok}, key=lambda x: 10**9 if x is None else x)
    os_ = sorted({o for _, o in ok}, key=lambda x: 10**9 if x is None else x)
    bounds = {}
    # the scale floor: one offset, or none binding (then no offset shows)
    out["O"] = None if None in os_ else os_[0]
    if len(os_) > 1 and None not in os_:
        out["notes"] = [f"scale floor offsets {os_} all fit; taking {os_[0]}"]
    # the product window: one value, or (never binding) the least that agrees
    if len(ps) == 1 and ps[0] is not None:
        out["P"] = ps[0]
    else:
        out["P"] = None
        least = least_agreeing(ctx, cases, w, {"scale_window": out["O"]}, "product_window", p_c)
        bounds["product_window"] = least
        out["undetermined"]["product_window"] = (
            f"any product window of {least} bits or more gives the same words: no product "
            f"here reaches {least} bits below the largest"
            + (", the scale floor binds first" if out["O"] is not None else "")
            if least is not None else "no sweep shows the product window")
        if least is not None:
            out["assumed"]["product_window"] = least
    if out["O"] is None:
        p_used = out["P"] if out["P"] is not None else out["assumed"].get("product_window")
        least = least_agreeing(ctx, cases, w, {"product_window": p_used}, "scale_window", o_c)
        bounds["scale_window"] = least
        out["undetermined"]["scale_window"] = (
            "no scale-anchored floor binds: the quantum follows the products at every scale"
            + (f" (a floor {least} or more bits below the scale pair would not show either)"
               if least is not None else ""))
    out["values"]["product_window_bits"] = out["P"]
    out["values"]["scale_floor_offset"] = out["O"]
    out["values"]["undetermined_bounds"] = bounds
    out["values"]["thresholds"] = [{"E": f[0], "S": f[1], "t": f[2]} for f in found]
    out["P_used"] = out["P"] if out["P"] is not None else out["assumed"].get("product_window")
    return out


def least_agreeing(ctx, cases, w, fixed, key, seeds):
    """The smallest value of ``key`` (from the seeds' minimum up) that agrees."""
    lo = min([x for x in seeds if x is not None] or [10])
    cands = {v: {**fixed, key: v} for v in range(max(1, lo - 8), 96)}
    ok = consistent(ctx, cases, w, EXACT, cands)
    return min(ok) if ok else None
