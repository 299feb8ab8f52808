"""scale: block scales and the block-scaled accumulator (block-scaled kinds).

The engine steps see one window; a block-scaled datapath folds each scale
pair into its products and anchors the quantum on two things (tcgen05
write-up, "Block-scaled: the shared window grows a floor"):
q = max(R - product window, S - scale floor offset), R the largest scaled
product raw exponent, S the largest scale-pair raw exponent. This step:

1. blocks: each scale factor of A and of B set to 2 alone, with one lane
   holding 1*1: the lanes whose product doubles are that scale's block;
2. exactness: scale codes over the format's range (every ue4m3 significand)
   times a product 1.5 give exactly the word of C alone = that value;
3. the quantum: +-2**E cancel in two lanes of one scale block (scale pair
   2**S), a third product 2**y sits in a lower-scale block (or lower in the
   same one) and C = 0; 2**y survives exactly while y >= q. The thresholds
   over several (E - S, S) give the product window and the scale floor;
4. product groups: pairs of half-quantum products at lane distances 1, 2,
   4, ... sum to one quantum only where the datapath adds them exactly
   before the cut;
5. C: C = 2**c cancelled by products at, or just below, its exponent (C
   outranks every product), or C between the products (it outranks some
   groups), a small survivor swept below: C's own window, a C-dominant
   merge of whole blocks, or a C-relative cut of the groups C outranks;
6. floors at tiny scales (a lowest quantum, a floor on lower-scale groups
   of a subnormal result); specials, the zero of C = -0, overflow.

Stages 3-6 make candidate values from the thresholds and keep those whose
block-scaled model (models/tcgen05_scaled.py, ScaledParams) reproduces every
device word; a key no case can tell is reported as undetermined with the
reason (and the value the model uses). The words are compared with device
words of C alone, or with a model's; the step never computes one itself.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.formats import Specials, decode_scalar, get_format
from tcprobe.models.tcgen05_scaled import BlockScaledModel, ScaledParams

from .common import Evidence, Finding, complete, exp_range, max_sig, pow2, product, word, zero

# The quantum of the stages before C is set: no cut at all until told.
EXACT = ScaledParams(product_window=None, c_window=None, scale_window=None, q_floor=None,
                     product_group=1)


class Rows:
    """Cases with per-block scales: lanes {k: (a, b)}, scales {block: code}."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.dp = ctx.dp
        self.unit = pow2(self.dp.scale_type, 0)
        self.rows = []

    def add(self, label, lanes=None, c=None, sa=None, sb=None) -> int:
        self.rows.append((label, dict(lanes or {}), 0 if c is None else int(c),
                          dict(sa or {}), dict(sb or {})))
        return len(self.rows) - 1

    def __len__(self):
        return len(self.rows)

    def cases(self) -> Cases:
        dp, n = self.dp, len(self.rows)
        za, zb = zero(dp.a_type), zero(dp.b_type)
        a = np.full((n, dp.k), za, np.uint32)
        b = np.full((n, dp.k), zb, np.uint32)
        c = np.zeros(n, np.uint32)
        sa = np.full((n, dp.n_scales), self.unit, np.uint32)
        sb = sa.copy()
        named = np.zeros((n, dp.k), bool)
        for i, (_, lanes, cw, xa, xb) in enumerate(self.rows):
            for k, (wa, wb) in lanes.items():
                a[i, k], b[i, k] = wa, wb
                named[i, k] = True
            c[i] = cw
            for j, v in xa.items():
                sa[i, j] = v
            for j, v in xb.items():
                sb[i, j] = v
        active = None
        if dp.sparse:
            from .common import legal_mask

            active = legal_mask(dp, named)
        return Cases(a, b, c, sa, sb, active, names=[r[0] for r in self.rows])

    def evidence(self, i, words, note="") -> Evidence:
        label, lanes, c, xa, xb = self.rows[i]
        unit = self.unit
        sa = [xa.get(j, unit) for j in range(self.dp.n_scales)]
        sb = [xb.get(j, unit) for j in range(self.dp.n_scales)]
        return Evidence(label, {k: v[0] for k, v in lanes.items()},
                        {k: v[1] for k, v in lanes.items()}, c,
                        [int(w) for w in np.atleast_1d(words)], note, sa, sb)


def _consistent(ctx, cases, words, base: ScaledParams, cands: dict) -> list:
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


# ---------------------------------------------------------------------------
# The step.


def run(ctx) -> Finding:
    dp = ctx.dp
    if not dp.block_scaled:
        return Finding("scale", "skipped", f"{dp.id} is not block-scaled")
    values, ev, notes = {"undetermined": {}}, [], []
    all_cases, all_words = [], []

    # 1. blocks
    blocks, bev, why = _blocks(ctx)
    ev += bev
    if blocks is None:
        return Finding("scale", "failed", why, values, ev)
    B = len(blocks[0])
    values["scale_block"] = B
    values["scale_blocks"] = [[b[0], b[-1]] for b in blocks]

    # 2. exactness
    ok, n_codes, xev, xnote = _exact(ctx, blocks)
    ev += xev
    values["scales_exact"] = ok
    if not ok:
        return Finding("scale", "failed", f"a scale does not multiply its products exactly ({xnote})",
                       values, ev)

    geo = Geometry(ctx, blocks)
    base = EXACT

    # 3. the quantum: product window and scale floor
    q = _quantum(ctx, geo)
    all_cases.append(q["cases"])
    all_words.append(q["words"])
    ev += q["evidence"]
    if not q["ok"]:
        return Finding("scale", "failed", "no product window and scale floor reproduce the "
                       f"{len(q['cases'])} cancellation sweeps", values, ev, notes)
    P, floor = q["P"], q["O"]
    values.update({k: v for k, v in q["values"].items()})
    values["undetermined"].update(q["undetermined"])
    assumed = dict(q["assumed"])
    base = base.replace(product_window=P if P is not None else assumed.get("product_window"),
                        scale_window=floor)

    # 4. product groups
    g = _groups(ctx, geo, q, base)
    if g["cases"] is not None:
        all_cases.append(g["cases"])
        all_words.append(g["words"])
        ev += g["evidence"]
    values["undetermined"].update(g["undetermined"])
    assumed.update(g["assumed"])
    if g["group"] is None and not g["assumed"]:
        return Finding("scale", "failed", "no product group size reproduces the carry pairs",
                       values, ev, notes)
    values["product_group"] = g["group"]
    base = base.replace(product_group=g["group"] or g["assumed"]["product_group"])

    # 5. C
    cres = _c_mechanism(ctx, geo, q, base)
    all_cases.append(cres["cases"])
    all_words.append(cres["words"])
    ev += cres["evidence"]
    if cres["params"] is None:
        return Finding("scale", "failed", "no C window, C-dominant merge or C-relative group cut "
                       "reproduces the cases with C", values, ev, notes + cres["notes"])
    values.update(cres["values"])
    values["undetermined"].update(cres["undetermined"])
    assumed.update(cres["assumed"])
    notes += cres["notes"]
    base = base.replace(**cres["params"])

    # 6. floors, specials, zero of C, overflow
    fl = _floors(ctx, geo, base)
    if fl["cases"] is not None:
        all_cases.append(fl["cases"])
        all_words.append(fl["words"])
    values.update(fl["values"])
    values["undetermined"].update(fl["undetermined"])
    notes += fl["notes"]
    base = base.replace(**fl["params"])
    sp = _specials(ctx, geo, blocks, base)
    all_cases.append(sp["cases"])
    all_words.append(sp["words"])
    ev += sp["evidence"]
    values.update(sp["values"])
    values["undetermined"].update(sp["undetermined"])
    base = base.replace(**sp["params"])

    # every case of the step against the assembled model
    cs = Cases.concat([complete(dp, c) for c in all_cases])
    words = np.concatenate(all_words)
    values["params"] = base.as_dict()
    if assumed:
        values["assumed"] = assumed
    good = _consistent(ctx, cs, words, base, {"all": {}})
    status = "found" if good else "partial"
    if not good:
        notes.append("the assembled block-scaled model misses some of this step's cases")
    bnd = values["undetermined_bounds"]
    pw = ("product window " + (f"{P} bits" if P is not None else
                               f"at least {bnd.get('product_window')} bits (not observable beyond)"))
    sf = ("scale floor " + (f"S - {floor}" if floor is not None else
                            "none" + (f" (an offset of {bnd['scale_window']}+ would not show)"
                                      if bnd.get("scale_window") else "")))
    summary = (f"each of the {dp.n_scales} scale factors of A and of B covers {B} K positions and "
               f"multiplies their products exactly ({n_codes} codes); quantum = max(R - window, "
               f"S - offset): {pw}, {sf}; product groups of {base.product_group}; "
               f"{cres['text']}; {len(cs)} cases")
    return Finding("scale", status, summary, values, ev, notes)


# ---------------------------------------------------------------------------
# 1-2: blocks and exactness (device words against device words)


def _blocks(ctx):
    dp = ctx.dp
    fa, fb = ctx.a_fmt, ctx.b_fmt
    one = product(fa, fb, 0)
    n = dp.n_scales
    two = pow2(dp.scale_type, 1)
    rows = Rows(ctx)
    labels = []
    for k in range(dp.k):  # lane k alone, one scale factor 2
        for j in range(n):
            for side in ("a", "b"):
                s = {j: two}
                rows.add(f"lane {k} = 1*1, scale_{side}[{j}] = 2", {k: one[:2]},
                         None, s if side == "a" else None, s if side == "b" else None)
                labels.append((k, j, side))
    r1 = rows.add("C = 1 alone", {}, word(ctx.c_fmt, 0, 1, 0))
    r2 = rows.add("C = 2 alone", {}, word(ctx.c_fmt, 0, 1, 1))
    w = ctx.run(rows.cases())
    cover = {}
    odd = []
    for (k, j, side), x in zip(labels, w[:len(labels)], strict=True):
        if x == w[r2]:
            cover.setdefault((side, j), []).append(k)
        elif x != w[r1]:
            odd.append((k, j, side))
    ev = [rows.evidence(r1, [w[r1]]), rows.evidence(r2, [w[r2]])]
    for i in range(min(2 * n, len(labels))):
        ev.append(rows.evidence(i, [w[i]], "doubled: lane in the block" if w[i] == w[r2]
                                else "unchanged: lane outside the block"))
    if odd:
        return None, ev, f"{len(odd)} lane/scale cases are neither 1 nor 2 (first: {odd[0]})"
    blocks = [cover.get(("a", j), []) for j in range(n)]
    if any(cover.get(("b", j), []) != blocks[j] for j in range(n)):
        return None, ev, "the scales of A and of B cover different lanes"
    size = len(blocks[0])
    ok = (size > 0 and all(b == list(range(j * size, (j + 1) * size)) for j, b in enumerate(blocks))
          and size * n == dp.k)
    if not ok:
        return None, ev, f"the scale blocks are not aligned runs of K: {blocks}"
    return blocks, ev, ""


def _exact(ctx, blocks):
    """Scale codes times a product 1.5 (lane 0 of each block) against C alone."""
    dp = ctx.dp
    sf = get_format(dp.scale_type)
    p = product(ctx.a_fmt, ctx.b_fmt, 0, 0, (3, 1), (1, 0)) or product(ctx.a_fmt, ctx.b_fmt, 0)
    m = 3 if p == product(ctx.a_fmt, ctx.b_fmt, 0, 0, (3, 1), (1, 0)) else 2
    codes = []
    if sf.kind.name == "E8M0":
        codes = [pow2(sf, e) for e in (-40, -17, -5, -1, 1, 3, 9, 23, 40)]
    else:  # every significand at 2**0, a few exponents, a subnormal
        codes = [word(sf, 0, 8 + f, -3) for f in range(8)]
        codes += [word(sf, 0, 13, e) for e in (-6, -2, 4, 7)] + [word(sf, 0, 5, -9)]
    codes = [c for c in codes if c is not None]
    rows = Rows(ctx)
    pairs = []
    for j, blk in enumerate(blocks[:2]):
        lane = blk[0]
        for code in codes:
            _, _, sig, lsb, _ = decode_scalar(int(code), sf.spec)
            want = word(ctx.c_fmt, 0, m * sig, lsb - 1)
            if want is None:
                continue
            for side in ("a", "b"):
                s = {j: code}
                r = rows.add(f"lane {lane} = {m}/2, scale_{side}[{j}] = {code:#x}", {lane: p[:2]},
                             None, s if side == "a" else None, s if side == "b" else None)
                pairs.append((r, rows.add("C alone = the scaled product", {}, want)))
        # both scales at once: their product multiplies
        code_a, code_b = codes[len(codes) // 2], codes[-1]
        _, _, s1, l1, _ = decode_scalar(int(code_a), sf.spec)
        _, _, s2, l2, _ = decode_scalar(int(code_b), sf.spec)
        want = word(ctx.c_fmt, 0, m * s1 * s2, l1 + l2 - 1)
        if want is not None:
            r = rows.add(f"lane {lane} = {m}/2, scale_a = {code_a:#x}, scale_b = {code_b:#x}",
                         {lane: p[:2]}, None, {j: code_a}, {j: code_b})
            pairs.append((r, rows.add("C alone = the scaled product", {}, want)))
    w = ctx.run(rows.cases())
    bad = [(r, ref) for r, ref in pairs if w[r] != w[ref]]
    ev = []
    for r, ref in (bad or pairs)[:3]:
        ev.append(rows.evidence(r, [w[r], w[ref]], "= C alone" if w[r] == w[ref] else "differs"))
    note = "" if not bad else rows.rows[bad[0][0]][0]
    return not bad, len(codes), ev, note


# ---------------------------------------------------------------------------
# 3: the quantum


def _quantum(ctx, geo):
    """C = 0 sweeps: +-2**E cancel in two lanes of block 0 (element exponent
    E - S0, scale pair S0), a small 2**y below them; its survival threshold
    t per (E - S0, S0)."""
    dp = ctx.dp
    multi = len(geo.blocks) >= 2
    trio = _trio(ctx, geo.blocks)
    if trio is None:
        return {"ok": False, "cases": Cases(np.zeros((0, dp.k)), np.zeros((0, dp.k)), np.zeros(0)),
                "words": np.zeros(0, np.uint32), "evidence": []}
    i, j, lane = trio
    lo, hi = geo.elem_raw
    rels = sorted({lo, min(max(0, lo), hi), hi, max(lo, hi - 4)})
    s_top = 2 * geo.s_hi
    s0s = sorted({0, min(24, s_top), s_top} if geo.sf.kind.name != "E8M0" else {0, 24})
    rows = Rows(ctx)
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
    ok = _consistent(ctx, cases, w, EXACT, cands)
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
        least = _least(ctx, cases, w, {"scale_window": out["O"]}, "product_window", p_c)
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
        least = _least(ctx, cases, w, {"product_window": p_used}, "scale_window", o_c)
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


def _least(ctx, cases, w, fixed, key, seeds):
    """The smallest value of ``key`` (from the seeds' minimum up) that agrees."""
    lo = min([x for x in seeds if x is not None] or [10])
    cands = {v: {**fixed, key: v} for v in range(max(1, lo - 8), 96)}
    ok = _consistent(ctx, cases, w, EXACT, cands)
    return min(ok) if ok else None


def _trio(ctx, blocks):
    """Lanes i, j of block 0 and a third lane (block 1 if there is one), active together."""
    pair = ctx.together(2, blocks[0])
    if pair is None:
        return None
    rest = blocks[1] if len(blocks) >= 2 else [k for k in blocks[0] if k not in pair]
    lane = next((k for k in rest if ctx.co_active((*pair, k))), None)
    return None if lane is None else (pair[0], pair[1], lane)


# ---------------------------------------------------------------------------
# 4: product groups


def _groups(ctx, geo, q, base):
    """Pairs of half-quantum products (a quantum together) at lane distances
    1, 2, 4, ...: they survive only where a group sums them exactly first."""
    out = {"cases": None, "words": None, "evidence": [], "undetermined": {}, "assumed": {},
           "group": None}
    B = len(geo.blocks[0])
    sizes = [g for g in (1, 2, 4, 8, 16, 32, 64) if g <= B and B % g == 0]
    small_elems = all(f.name in ("e2m1",) for f in (geo.fa, geo.fb))
    if not small_elems:
        out["assumed"] = {"product_group": 1}
        out["undetermined"]["product_group"] = (
            f"{geo.fa.name} x {geo.fb.name}: the block-scaled model sums groups exactly only for "
            "e2m1 elements; products are cut one by one")
        return out
    if not q["sweeps"]:
        out["assumed"] = {"product_group": 1}
        out["undetermined"]["product_group"] = "no quantum threshold to place half quanta at"
        return out
    i, j, _ = q["trio"]
    rows = Rows(ctx)
    multi = len(geo.blocks) >= 2
    low = geo.blocks[1] if multi else geo.blocks[0]
    for E, s0raw, t, rel, s0 in q["sweeps"]:
        plus, minus, sc0 = geo.elem(rel, 0), geo.elem(rel, 1), geo.scales(s0)
        for parts, y in ((2, t - 1), (4, t - 2)):
            term = geo.small_term(y, s0, s0raw, sc0, multi)
            if term is None:
                continue
            el, scale_a, scale_b = term
            for d in sizes:
                lanes_ = [low[0] + n * d for n in range(parts)]
                if lanes_[-1] >= low[0] + B or lanes_[-1] > low[-1]:
                    continue
                if (not multi) and (i in lanes_ or j in lanes_):
                    continue
                if not ctx.co_active((i, j, *lanes_)):
                    continue
                rows.add(f"lanes {i},{j}: +-2^{E}; lanes {lanes_}: 2^{y} each ({parts} make 2^{t})",
                         {i: plus, j: minus, **{k: el for k in lanes_}}, None, scale_a, scale_b)
        if len(rows) >= 12:
            break
    if not len(rows):
        out["assumed"] = {"product_group": 1}
        out["undetermined"]["product_group"] = "no lanes hold half quanta below the threshold"
        return out
    cases = rows.cases()
    w = ctx.run(cases)
    ok = _consistent(ctx, cases, w, base, {g: {"product_group": g} for g in sizes})
    out["cases"], out["words"] = cases, w
    for r in range(min(3, len(rows))):
        out["evidence"].append(rows.evidence(r, [w[r]]))
    if len(ok) == 1:
        out["group"] = ok[0]
    elif ok:
        out["undetermined"]["product_group"] = (
            f"product groups of {', '.join(map(str, ok))} agree on every case here")
        out["assumed"] = {"product_group": ok[0]}
    return out


# ---------------------------------------------------------------------------
# 5: C


def _c_mechanism(ctx, geo, q, base):
    """Cases with C: C = 2**c cancelled by products at c (C equal to the
    largest product) or at c-1 twice (C above every product), or C between
    a cancelling pair at E > c and a product -2**c in another group; a
    survivor 2**y swept below. Candidates: C's own window, a C-dominant merge
    of aligned blocks, a C-relative cut of the groups C outranks."""
    out = {"evidence": [], "values": {}, "undetermined": {}, "assumed": {}, "notes": [],
           "params": None, "text": ""}
    blocks = geo.blocks
    multi = len(blocks) >= 2
    B = len(blocks[0])
    group = base.product_group
    rows = Rows(ctx)
    osub, _, _ = exp_range(ctx.c_fmt)
    refs = {}

    def ref(e):
        if e not in refs:
            refs[e] = rows.add(f"C = 2^{e} alone", {}, pow2(ctx.c_fmt, e) if e is not None else 0)
        return refs[e]

    zero_ref = ref(None)
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
                    lanes = _between_lanes(ctx, blocks, group, B)
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
                    lanes = _c_lanes(ctx, blocks, 1)
                    me = geo.elem(rel, 1)
                    if lanes is None or me is None:
                        continue
                    lm, ll = lanes
                    fixed = {lm: me}
                    label = f"C = 2^{c}, lane {lm}: -2^{c}"
                else:
                    c = rel + s0 + 1
                    lanes = _c_lanes(ctx, blocks, 2)
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
    cases = rows.cases()
    w = ctx.run(cases)
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
                if y in (t, t - 1) and len(out["evidence"]) < 6:
                    out["evidence"].append(rows.evidence(
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
            if len(out["evidence"]) < 4:
                for y, r, rf in sweep:
                    if y in (t, t - 1):
                        out["evidence"].append(rows.evidence(
                            r, [w[r], w[rf]], "survives" if y == t else "cut to 0"))
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
    # C-dominant carries: two half quanta of the C-relative cut in one merge block
    extra = _c_carries(ctx, geo, found, base)
    if extra is not None:
        ecases, ewords = extra
        cases = Cases.concat([cases, ecases])
        w = np.concatenate([w, ewords])
    ok = _consistent(ctx, cases, w, base, cands)
    out["cases"], out["words"] = cases, w
    out["values"]["c_thresholds"] = [{"case": f[0], "c": f[1], "t": f[3]} for f in found]
    if not ok:
        return out
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
    return out


def _c_lanes(ctx, blocks, n):
    """n lanes of block 0 and a survivor lane (block 1 if any), active together."""
    first = ctx.together(n, blocks[0])
    if first is None:
        return None
    rest = blocks[1] if len(blocks) >= 2 else [k for k in blocks[0] if k not in first]
    lane = next((k for k in rest if ctx.co_active((*first, k))), None)
    return None if lane is None else (*first, lane)


def _between_lanes(ctx, blocks, group, B):
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


def _c_carries(ctx, geo, found, base):
    """C above every product: two products of half the C-relative quantum in
    lanes of the low block at distances 1, 4, 16: one merge block sums them."""
    if not found or len(geo.blocks) < 2:
        return None
    kind, c, s0raw, t, s0 = next((f for f in found if f[0] == "equal"), found[0])
    if kind != "equal" or s0 is None:
        return None
    rows = Rows(ctx)
    sc0 = geo.scales(s0)
    rel = c - s0
    me = geo.elem(rel, 1)
    lanes = _c_lanes(ctx, geo.blocks, 1)
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


# ---------------------------------------------------------------------------
# 6: floors and specials


def _floors(ctx, geo, base):
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
    trio = _trio(ctx, geo.blocks)
    if trio is None:
        return out
    i, _, lane = trio
    rows = Rows(ctx)
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
    tiny = _tiny_family(ctx, geo)
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
    ok = _consistent(ctx, cases, w, base, cands)
    if not ok:
        qs = [None, *range(-200, -119, 2)]
        both = {("qg", f, g): {"q_floor": f, "group_floor": g} for f in qs
                for g in range(-200, -149)}
        ok = _consistent(ctx, cases, w, base, both)
    if not ok:
        out["notes"].append("no lowest quantum or group floor reproduces the tiny-scale cases")
        return out
    pick = ok[0]
    out["params"] = dict({**cands, **({} if pick in cands else {pick: {
        "q_floor": pick[1], "group_floor": pick[2]}})}[pick])
    kinds = sorted({k[0] for k in ok})
    qv = sorted({out_f for k in ok for out_f in [_cand(k)["q_floor"]] if out_f is not None})
    gv = sorted({g for k in ok for g in [_cand(k)["group_floor"]] if g is not None})
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


def _cand(key):
    if key[0] == "none":
        return {"q_floor": None, "group_floor": None}
    if key[0] == "q":
        return {"q_floor": key[1], "group_floor": None}
    if key[0] == "g":
        return {"q_floor": None, "group_floor": key[1]}
    return {"q_floor": key[1], "group_floor": key[2]}


def _tiny_family(ctx, geo, n: int = 2000):
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
        from .common import legal_mask

        active = legal_mask(dp, named)
    return Cases(a, b, np.zeros(n, np.uint32), sa, sb, active, names=["tiny scales"] * n)


def _specials(ctx, geo, blocks, base):
    """NaN elements, scales and C; infinities; Inf x 0; C = -0 with zero
    products; the largest products at the largest scales."""
    dp = ctx.dp
    rows = Rows(ctx)
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
    ok = _consistent(ctx, cases, w, base, cands)
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
