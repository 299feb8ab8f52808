"""Stage 6a: floors at tiny scales (a lowest quantum, a floor on
lower-scale groups of a subnormal result)."""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.formats import Specials
from tcprobe.models.words import max_sig, product

from ..common import Batch, complete, legal_mask
from .geometry import consistent, trio_lanes


def floors(ctx, geo, base):
    """At tiny scales: +X in block 0 and -2**y swept below it in a
    lower-scale block (or lower in block 0): a lowest quantum (q_floor), and
    lower-scale groups dropped from a subnormal result (group_floor)."""
    out = {"cases": None, "words": None, "values": {}, "undetermined": {}, "notes": [],
           "params": {}}
    if geo.sf.kind.name != "E8M0":
        why = (f"{geo.sf.name} scales keep products above 2^{2 * geo.s_lo + geo.elem_value[0]}: "
               "no quantum reaches the f32 subnormal range")
        out["undetermined"]["q_floor"] = why
        out["undetermined"]["group_floor"] = why
        return out
    multi = len(geo.blocks) >= 2
    trio = trio_lanes(ctx, geo.blocks)
    if trio is None:
        return out
    i, _, lane = trio
    rows = Batch(ctx.dp, show_scales=True)
    rel = geo.elem_raw[1]
    big = (geo.elem(rel, 0, (max_sig(geo.fa), max_sig(geo.fb)),
                    (geo.fa.frac_bits, geo.fb.frac_bits)) or geo.elem(rel, 0))
    for s0 in (-100, -140, -150, -160, -175, -200, -230):
        sc0 = geo.scales(s0)
        if sc0 is None:
            continue
        s0raw = geo.scale_raw(sc0)
        E = rel + s0
        for y in range(E - 1, E - 80, -1):
            if multi:
                sm = geo.small(y, s0raw)
                if sm is None:
                    continue
                el, sc1 = sm
                sa, sb = {0: sc0[0], 1: sc1[0]}, {0: sc0[1], 1: sc1[1]}
            else:
                e = y - s0
                el = product(geo.fa, geo.fb, e, 1)
                el = None if el is None else el[:2]
                if el is None:
                    continue
                sa, sb = {0: sc0[0]}, {0: sc0[1]}
            neg = (el[0] ^ (1 << (geo.fa.width - 1)), el[1]) if multi else el
            rows.add(f"lane {i}: big at 2^{E}, lane {lane}: -2^{y} (scale 2^{s0})",
                     {i: big, lane: neg}, None, sa, sb)
    tiny = tiny_family(ctx, geo)
    parts = [c for c in (rows.cases() if len(rows) else None, tiny) if c is not None]
    if not parts:
        return out
    cases = Cases.concat([complete(ctx.dp, c) for c in parts])
    w = ctx.run(cases)
    out["cases"], out["words"] = cases, w
    cands = {("none",): {"q_floor": None, "group_floor": None}}
    for f in range(-200, -119):
        cands[("q", f)] = {"q_floor": f, "group_floor": None}
    if len(geo.blocks) >= 2:
        for g in range(-200, -149):
            cands[("g", g)] = {"q_floor": None, "group_floor": g}
    ok = consistent(ctx, cases, w, base, cands)
    if not ok:
        qs = [None, *range(-200, -119, 2)]
        both = {("qg", f, g): {"q_floor": f, "group_floor": g} for f in qs
                for g in range(-200, -149)}
        ok = consistent(ctx, cases, w, base, both)
    if not ok:
        out["notes"].append("no lowest quantum or group floor reproduces the tiny-scale cases")
        return out
    pick = ok[0]
    out["params"] = dict({**cands, **({} if pick in cands else {pick: {
        "q_floor": pick[1], "group_floor": pick[2]}})}[pick])
    kinds = sorted({k[0] for k in ok})
    qv = sorted({out_f for k in ok for out_f in [floor_params(k)["q_floor"]] if out_f is not None})
    gv = sorted({g for k in ok for g in [floor_params(k)["group_floor"]] if g is not None})
    if kinds == ["none"]:
        out["undetermined"]["q_floor"] = "no lowest quantum binds in these cases"
        out["undetermined"]["group_floor"] = "no lower-scale group is dropped in these cases"
    elif len(kinds) == 1 and len(ok) == 1:
        for key, v in out["params"].items():
            if v is not None:
                out["values"][key] = v
            elif key == "group_floor" and len(geo.blocks) < 2:
                out["undetermined"][key] = "one scale block: no lower-scale group to drop"
            else:
                out["undetermined"][key] = (f"the {'lowest quantum' if key == 'group_floor' else 'group floor'} "
                                            "alone explains the tiny-scale cases")
    else:
        what = []
        if qv:
            what.append(f"a lowest quantum 2^{qv[0]}" + (f"..2^{qv[-1]}" if len(qv) > 1 else ""))
        if gv:
            what.append(f"a group floor 2^{gv[0]}" + (f"..2^{gv[-1]}" if len(gv) > 1 else ""))
        if "none" in kinds:
            what.append("no floor")
        why = f"{' or '.join(what)} all reproduce the tiny-scale cases"
        for key in ("q_floor", "group_floor"):
            out["undetermined"][key] = why
        out["notes"].append(why + f"; the model takes {out['params']}")
    return out


def floor_params(key):
    if key[0] == "none":
        return {"q_floor": None, "group_floor": None}
    if key[0] == "q":
        return {"q_floor": key[1], "group_floor": None}
    if key[0] == "g":
        return {"q_floor": None, "group_floor": key[1]}
    return {"q_floor": key[1], "group_floor": key[2]}


def tiny_family(ctx, geo, n: int = 2000):
    """Random cases at scales near the f32 subnormal range: a few nonzero
    lanes a block, block 0's scale pair 2**S0 (S0 in -150..-137), the other
    blocks 30-43 binades lower; subnormal results where lower-scale groups
    sit just around 2**-174 (ue8m0 only)."""
    dp = ctx.dp
    rng = np.random.default_rng(ctx.seed + 29)
    a = np.zeros((n, dp.k), np.uint32)
    b = np.zeros((n, dp.k), np.uint32)
    named = np.zeros((n, dp.k), bool)
    fa, fb = geo.fa, geo.fb

    def codes(f, m):
        top = f.canonical_nan if f.specials != Specials.FINITE else f.word_mask
        out = rng.integers(1, (1 << (f.width - 1)) if f.signed else top, m)
        if f.specials != Specials.FINITE:  # no NaN or Inf codes
            inf_or_nan = ((out >> f.frac_bits) & ((1 << f.exp_bits) - 1)) == (1 << f.exp_bits) - 1
            out = np.where(inf_or_nan, 1, out)
        return (out | (rng.integers(0, 2, m) << (f.width - 1))).astype(np.uint32)

    for i in range(n):
        for blk in geo.blocks:
            m = int(rng.integers(1, 4))
            lanes = rng.choice(blk, m, replace=False)
            a[i, lanes], b[i, lanes] = codes(fa, m), codes(fb, m)
            named[i, lanes] = True
    s0 = rng.integers(-150, -136, n)
    sc = np.zeros((n, dp.n_scales), np.int64)
    sc[:, 0] = s0
    for j in range(1, dp.n_scales):
        sc[:, j] = s0 - rng.integers(30, 44, n)
    sa = (127 + sc // 2).astype(np.uint32)
    sb = (127 + sc - sc // 2).astype(np.uint32)
    active = None
    if dp.sparse:
        active = legal_mask(dp, named)
    return Cases(a, b, np.zeros(n, np.uint32), sa, sb, active, names=["tiny scales"] * n)
