"""Stage 5: how C joins: its own window, a C-dominant merge of whole
blocks, or a C-relative cut of the groups C outranks."""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.words import exp_range, pow2

from ..common import Batch
from .geometry import consistent


def c_mechanism(ctx, geo, q, base):
    """Cases with C: C = 2**c cancelled by products at c (C equal to the
    largest product) or at c-1 twice (C above every product), or C between
    a cancelling pair at E > c and a product -2**c in another group; a
    survivor 2**y swept below. Candidates: C's own window, a C-dominant merge
    of aligned blocks, a C-relative cut of the groups C outranks."""
    out = {"evidence": [], "values": {}, "undetermined": {}, "assumed": {}, "notes": [],
           "params": None, "text": ""}
    blocks = geo.blocks
    B = len(blocks[0])
    group = base.product_group
    rows = Batch(ctx.dp, show_scales=True)
    osub, _, _ = exp_range(ctx.c_fmt)
    refs = {}

    def ref(e):
        if e not in refs:
            refs[e] = rows.add(f"C = 2^{e} alone", {}, pow2(ctx.c_fmt, e) if e is not None else 0)
        return refs[e]

    zero_ref = ref(None)
    sweeps = _sweeps(ctx, geo, rows, ref, osub, group)
    lone, c_lone = _lone(ctx, geo, rows, ref)
    cases = rows.cases()
    w = ctx.run(cases)
    found = _thresholds(rows, w, lone, c_lone, sweeps, zero_ref, out["evidence"])
    cands, p_used = _candidates(found, q, group, B)
    # C-dominant carries: two half quanta of the C-relative cut in one merge block
    extra = c_carries(ctx, geo, found, base)
    if extra is not None:
        ecases, ewords = extra
        cases = Cases.concat([cases, ecases])
        w = np.concatenate([w, ewords])
    ok = consistent(ctx, cases, w, base, cands)
    out["cases"], out["words"] = cases, w
    out["values"]["c_thresholds"] = [{"case": f[0], "c": f[1], "t": f[3]} for f in found]
    if not ok:
        return out
    _conclude(out, ok, cands, p_used)
    return out


def _sweeps(ctx, geo, rows, ref, osub: int, group: int) -> list:
    """C = 2**c against products that cancel it (equal, above, between), a
    survivor 2**y swept below: (kind, c, s0raw, [(y, row, C-alone row)], s0) each."""
    blocks = geo.blocks
    multi = len(blocks) >= 2
    B = len(blocks[0])
    sweeps = []
    lo, hi = geo.elem_raw
    for s0 in (0, 12):
        sc0 = geo.scales(s0)
        if sc0 is None:
            continue
        s0raw = geo.scale_raw(sc0)
        for kind in ("equal", "above", "between"):
            for rel in sorted({hi, max(lo, hi - 2)}):
                if kind == "between":
                    if rel - 2 < lo:
                        continue
                    E, c = rel + s0, rel + s0 - 2
                    lanes = between_lanes(ctx, blocks, group, B)
                    if lanes is None:
                        continue
                    li, lj, lm, ll = lanes
                    pe, me, mc = geo.elem(rel, 0), geo.elem(rel, 1), geo.elem(rel - 2, 1)
                    if None in (pe, me, mc):
                        continue
                    fixed = {li: pe, lj: me, lm: mc}
                    label = f"C = 2^{c}, lanes {li},{lj}: +-2^{E}, lane {lm}: -2^{c}"
                elif kind == "equal":
                    c = rel + s0
                    lanes = c_lanes(ctx, blocks, 1)
                    me = geo.elem(rel, 1)
                    if lanes is None or me is None:
                        continue
                    lm, ll = lanes
                    fixed = {lm: me}
                    label = f"C = 2^{c}, lane {lm}: -2^{c}"
                else:
                    c = rel + s0 + 1
                    lanes = c_lanes(ctx, blocks, 2)
                    me = geo.elem(rel, 1)
                    if lanes is None or me is None:
                        continue
                    lm1, lm2, ll = lanes
                    fixed = {lm1: me, lm2: me}
                    label = f"C = 2^{c}, lanes {lm1},{lm2}: -2^{c - 1}"
                cw = pow2(ctx.c_fmt, c)
                if cw is None:
                    continue
                sweep = []
                for y in range(c - 1, c - 60, -1):
                    if y < osub:
                        break
                    term = geo.small_term(y, s0, s0raw, sc0, multi)
                    if term is None:
                        continue
                    el, sa, sb = term
                    r = rows.add(f"{label}, lane {ll}: 2^{y}", {**fixed, ll: el}, cw, sa, sb)
                    sweep.append((y, r, ref(y)))
                if sweep:
                    sweeps.append((kind, c, s0raw, sweep, s0))
    return sweeps


def _lone(ctx, geo, rows, ref) -> tuple[list, int]:
    """C alone above one negative product -2**y swept down: ([(y, row, C row)], c)."""
    blocks = geo.blocks
    B = len(blocks[0])
    # C alone above one negative product -2**y: kept, it pulls D below C
    # (the word below C's); cut, D is C's own word
    lone = []
    lane1 = ctx.together(1, blocks[-1])
    c_lone = 10 if geo.sf.kind.name == "E8M0" else 2 * geo.s_hi + geo.elem_value[1] + 2
    cw = pow2(ctx.c_fmt, c_lone)
    if lane1 and cw is not None:
        c_ref = ref(c_lone)
        for y in range(c_lone - 1, c_lone - 64, -1):
            sm = geo.small(y, 10**6)
            if sm is None:
                continue
            el, sc = sm
            neg = (el[0] ^ (1 << (geo.fa.width - 1)), el[1])
            j = lane1[0] // B
            r = rows.add(f"C = 2^{c_lone}, lane {lane1[0]}: -2^{y}", {lane1[0]: neg}, cw,
                         {j: sc[0]}, {j: sc[1]})
            lone.append((y, r, c_ref))
    return lone, c_lone


def _thresholds(rows, w, lone, c_lone: int, sweeps, zero_ref: int, evidence) -> list:
    """Where each sweep's survivor stops counting: (kind, c, s0raw, t, s0) each;
    the proving rows appended to ``evidence``."""
    found = []
    if lone:
        t = None
        for y, r, rf in lone:  # y descending: kept (D below C) down to the threshold
            if w[r] != w[rf]:
                t = y
            else:
                break
        if t is not None and t > lone[-1][0]:
            found.append(("lone", c_lone, None, t, None))
            for y, r, rf in lone:
                if y in (t, t - 1) and len(evidence) < 6:
                    evidence.append(rows.evidence(
                        r, [w[r], w[rf]], "kept: D below C" if y == t else "cut: D = C alone"))
    for kind, c, s0raw, sweep, s0 in sweeps:
        t, cut = None, False
        for y, r, rf in sweep:
            if w[r] == w[rf] and not cut:
                t = y
            elif w[r] == w[zero_ref]:
                cut = True
            else:
                t, cut = None, False
                break
        if t is not None and cut:
            found.append((kind, c, s0raw, t, s0))
            if len(evidence) < 4:
                for y, r, rf in sweep:
                    if y in (t, t - 1):
                        evidence.append(rows.evidence(
                            r, [w[r], w[rf]], "survives" if y == t else "cut to 0"))
    return found


def _candidates(found, q, group: int, B: int) -> tuple[dict, int | None]:
    """The C mechanisms the thresholds allow, as model parameters; and the
    product window the quantum stage used."""
    windows = sorted({f[1] - f[3] for f in found})
    p_used = q.get("P_used")
    fcs = [None, *sorted(set(windows) | ({p_used} if p_used else set()))]
    mgs = sorted({g for g in (group, 4, 8, 16, 32, 64, B) if g and g <= B and B % g == 0
                  and g >= group})
    cands = {}
    for fc in fcs:
        cands[("plain", fc, None, None)] = {"c_window": fc}
        for cm in windows:
            cands[("groups", fc, cm, None)] = {"c_window": fc, "per_group_c_merge": True,
                                               "c_merge_bits": cm}
            for mg in mgs:
                cands[("dominant", fc, cm, mg)] = {"c_window": fc, "c_dominant": True,
                                                   "c_merge_bits": cm, "merge_group": mg}
    return cands, p_used


def _conclude(out, ok, cands, p_used) -> None:
    """The mechanism (and C's window, merge bits and group) the consistent
    candidates ``ok`` settle, written into ``out``."""
    kinds = sorted({k[0] for k in ok})
    pick = min(ok, key=lambda k: (["plain", "groups", "dominant"].index(k[0]),
                                  -1 if k[1] is None else 0, k[1] or 0, k[2] or 0, k[3] or 0))
    kind, fc, cm, mg = pick
    params = dict(cands[pick])
    fcs_ok = sorted({k[1] for k in ok if k[0] == kind}, key=lambda x: -1 if x is None else x)
    if len(fcs_ok) > 1 or fc is None:
        # C's own window never showed: the model takes the product window's
        params["c_window"] = p_used
        out["undetermined"]["c_window"] = (
            "C's own window never sets the quantum in these cases"
            + (" (C above the products goes through the C-relative cut)" if kind != "plain"
               else ""))
        out["assumed"]["c_window"] = p_used
    else:
        out["values"]["c_window_bits"] = fc
    below = fc if kind == "plain" else cm  # how far below C its cut lies
    names = {"plain": "C in the window", "groups": "a C-relative cut of the groups C outranks",
             "dominant": "a C-dominant merge of whole blocks"}
    if kind == "plain":
        out["text"] = f"C sets the quantum {params['c_window']} bits below itself"
    elif kind == "groups":
        out["text"] = f"groups that C outranks are first cut {cm} bits below C"
    else:
        mgs_ok = sorted({k[3] for k in ok if k[0] == "dominant" and k[2] == cm})
        out["text"] = (f"when C reaches the largest product, blocks of {mg} products are cut "
                       f"{cm} bits below C (C-dominant merge)")
        out["values"]["merge_group"] = mg
        if len(mgs_ok) > 1:
            out["undetermined"]["merge_group"] = f"merge blocks of {mgs_ok} all agree"
            out["assumed"]["merge_group"] = mg
    if kind != "plain":
        out["values"]["c_merge_bits"] = cm
    if below is not None:
        out["values"]["c_window_bits"] = below
    if len(kinds) > 1:
        why = (f"{', '.join(names[k] for k in kinds)} give the same words here; the model takes "
               f"{names[kind]}")
        out["undetermined"]["c_mechanism"] = why
        out["assumed"]["c_mechanism"] = kind
        out["text"] = (f"products are cut {below} bits below a C that outranks them "
                       f"({' / '.join(names[k] for k in kinds)}: not told apart here)")
        kind = None
    out["values"]["c_mechanism"] = kind
    out["params"] = params




def c_lanes(ctx, blocks, n):
    """n lanes of block 0 and a survivor lane (block 1 if any), active together."""
    first = ctx.together(n, blocks[0])
    if first is None:
        return None
    rest = blocks[1] if len(blocks) >= 2 else [k for k in blocks[0] if k not in first]
    lane = next((k for k in rest if ctx.co_active((*first, k))), None)
    return None if lane is None else (*first, lane)


def between_lanes(ctx, blocks, group, B):
    """A pair in block 0's first group, a lane of another group of block 0
    (or block 1), a survivor lane in the last block."""
    b0 = blocks[0]
    pair = ctx.together(2, b0[:max(2, group)])
    if pair is None:
        return None
    others = [k for k in b0 if k // max(group, 1) != pair[0] // max(group, 1) and k not in pair]
    if len(blocks) >= 3:
        others += blocks[1]
    last = blocks[-1] if len(blocks) >= 2 else b0
    for m in others:
        for ll in last:
            if ll not in (*pair, m) and ctx.co_active((*pair, m, ll)):
                return pair[0], pair[1], m, ll
    return None


def c_carries(ctx, geo, found, base):
    """C above every product: two products of half the C-relative quantum in
    lanes of the low block at distances 1, 4, 16: one merge block sums them."""
    if not found or len(geo.blocks) < 2:
        return None
    kind, c, s0raw, t, s0 = next((f for f in found if f[0] == "equal"), found[0])
    if kind != "equal" or s0 is None:
        return None
    rows = Batch(ctx.dp, show_scales=True)
    sc0 = geo.scales(s0)
    rel = c - s0
    me = geo.elem(rel, 1)
    lanes = c_lanes(ctx, geo.blocks, 1)
    if me is None or lanes is None:
        return None
    lm, ll = lanes
    sm = geo.small(t - 1, s0raw)
    if sm is None:
        return None
    el, sc1 = sm
    low = geo.blocks[1]
    for d in (1, 2, 4, 8, 16):
        pair = [low[0], low[0] + d]
        if pair[1] > low[-1] or not ctx.co_active((lm, *pair)):
            continue
        rows.add(f"C = 2^{c}, lane {lm}: -2^{c}, lanes {pair}: 2^{t - 1} each",
                 {lm: me, pair[0]: el, pair[1]: el}, pow2(ctx.c_fmt, c),
                 {0: sc0[0], 1: sc1[0]}, {0: sc0[1], 1: sc1[1]})
    if not len(rows):
        return None
    cases = rows.cases()
    return cases, ctx.run(cases)
