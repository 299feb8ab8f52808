"""sparsity: what the metadata selects, and what disabled positions do
(sparse kinds only).

1. selectors (raw devices): every chunk's metadata nibble set to one legal
   selector; stored A value j alone is 1 and B holds 1 at the positions
   whose index has bit b set (C = 0), so the count that comes back spells,
   bit by bit, the K position value j meets. That gives the chunk width,
   how many values a chunk keeps and which positions each selector keeps,
   in storage order: 1 of 2 (tf32), 2 of 4, or two adjacent pairs of 8
   (mxf4, mxf4nvf4).
2. disabled positions: legal random masks, finite products at the kept
   positions, NaN (or Inf, or the largest value) at the disabled ones; D
   must equal D of the same cases with +0 there: the disabled positions are
   removed before special values are classified. (Through a raw harness a
   disabled A value is never stored; B's are.)
3. every active-lane count: 0 to K/2 nonzero products among the kept
   positions, random values; the model of the findings (the engine's, or
   the scale step's block-scaled one) must give every word.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models import sparsity as meta_rules
from tcprobe.models.cases import Cases
from tcprobe.models.formats import Specials
from tcprobe.models.words import exp_range, max_sig, pow2, word, zero
from tcprobe.suites.mix import random_finite, random_scales

from .common import Evidence, Finding, StepInfo, case_evidence

STEP = StepInfo(order=140, title="sparsity metadata", needs_layout=True)

PATTERN_NAMES = {(2, 1): "1 of 2", (4, 2): "2 of 4", (8, 4): "two adjacent pairs of 8"}


def run(ctx) -> Finding:
    dp = ctx.dp
    if not dp.sparse:
        return Finding("sparsity", "skipped", f"{dp.id} is not sparse")
    values, ev, notes = {"undetermined": {}}, [], []
    parts = []

    # 1. selectors
    if ctx.raw and ctx.harness is not None:
        sel = _selectors(ctx)
        if isinstance(sel, str):
            return Finding("sparsity", "failed", sel, values, ev)
        values.update(sel["values"])
        ev += sel["evidence"]
        parts.append(sel["text"])
    else:
        values["undetermined"]["selectors"] = (f"{ctx.device.name} has no raw mode: cases go in "
                                               "as masks, the metadata words are its own")
        parts.append("selectors not probed (no raw mode)")

    # 2. disabled positions
    cs, clean = _disabled_cases(ctx)
    w = ctx.run(cs)
    w0 = ctx.run(clean)
    same = w == w0
    values["disabled_ignored"] = bool(same.all())
    for i in [*np.flatnonzero(~same)[:2], 0, 1]:
        ev.append(case_evidence(cs, int(i), [w[i], w0[i]], "= the same with +0 there"
                                if same[i] else "differs from the same with +0 there",
                                zero(dp.a_type), zero(dp.b_type)))
        if len(ev) > 8:
            break
    if not same.all():
        return Finding("sparsity", "failed", f"a value at a disabled position changes D in "
                       f"{int((~same).sum())} of {len(cs)} cases", values, ev, notes)
    parts.append(f"NaN, Inf and large values at disabled positions never reach D ({len(cs)} cases "
                 "against the same with +0 there): they are removed before specials")

    # 3. every active-lane count against the model of the findings
    counts = _counts(ctx)
    wc = ctx.run(counts)
    ok = _model_agrees(ctx, counts, wc)
    n_max = dp.k // 2
    if ok is None:
        values["undetermined"]["active_counts"] = "no model of the findings to compare with"
        parts.append("active-lane counts not checked (no model)")
    elif ok:
        values["active_counts"] = list(range(n_max + 1))
        parts.append(f"the findings' model gives every word with 0 to {n_max} active lanes "
                     f"({len(counts)} cases)")
    else:
        notes.append("the model of the findings misses some active-lane-count cases")
        values["active_counts"] = None
    status = "found" if ok is not False else "partial"
    return Finding("sparsity", status, "; ".join(parts), values, ev, notes)


# ---------------------------------------------------------------------------


def _selectors(ctx):
    """Which K position stored value j meets, per legal selector (see the module doc)."""
    dp, h = ctx.dp, ctx.harness
    t = ctx.tile()
    ka, k = dp.stored_k, dp.k
    one_a, one_b = pow2(ctx.a_fmt, 0), pow2(ctx.b_fmt, 0)
    za, zb, zc = zero(ctx.a_fmt), zero(ctx.b_fmt), zero(ctx.c_fmt)
    legal = meta_rules.legal_selectors(dp)
    nbits = max(1, (k - 1).bit_length())
    js = sorted(set(range(min(ka, 8))) | {ka - 1})
    words_per = meta_rules.n_words(dp)
    chunks = 8 * words_per
    rows_a, rows_b, metas, labels = [], [], [], []
    for sel in legal:
        mw = np.zeros(words_per, np.uint32)
        for c in range(chunks):
            mw[c // 8] |= np.uint32(sel << (4 * (c % 8)))
        for j in js:
            a = np.full(t.a_slots, za, np.uint32)
            a[h.a_lanes[j]] = one_a
            for bit in range(nbits):
                b = np.full(t.b_slots, zb, np.uint32)
                for p in range(k):
                    if (p >> bit) & 1:
                        b[h.b_lanes[p]] = one_b
                rows_a.append(a)
                rows_b.append(b)
                metas.append(mw)
                labels.append((sel, j, bit))
    n = len(rows_a)
    c_ref = [word(ctx.c_fmt, 0, x, 0) for x in (0, 1)]
    batch = ctx.physical(np.array(rows_a + [np.full(t.a_slots, za, np.uint32)] * 2),
                         np.array(rows_b + [np.full(t.b_slots, zb, np.uint32)] * 2),
                         np.vstack([np.full((n, t.c_slots), zc, np.uint32), ctx.c_fill(c_ref)]),
                         meta=ctx.meta_words(np.array(metas + [metas[0]] * 2)))
    el = ctx.launch(batch)[:, h.elems]
    d = el[:, 0]
    if not (el == el[:, :1]).all():
        return "the slice words disagree on a selector probe"
    zero_w, one_w = d[n], d[n + 1]
    pos = {}
    for (sel, j, bit), x in zip(labels, d[:n], strict=True):
        if x == one_w:
            pos[(sel, j)] = pos.get((sel, j), 0) | (1 << bit)
        elif x != zero_w:
            return (f"selector {sel:#x}, stored value {j}: a count other than 0 or 1 "
                    f"({int(x):#x})")
        else:
            pos.setdefault((sel, j), 0)
    # the chunk width: the smallest w with every value in chunk j // (w/2) at one offset
    found = None
    for w in (2, 4, 8, 16, 32):
        per = w * ka // k
        if per < 1:
            continue
        offs = {}
        good = True
        for sel in legal:
            table = {}
            for j in js:
                p = pos[(sel, j)]
                if p // w != j // per:
                    good = False
                    break
                table.setdefault(j % per, set()).add(p % w)
            if not good or any(len(v) != 1 for v in table.values()):
                good = False
                break
            offs[sel] = tuple(table[i].pop() for i in range(per) if i in table)
        if good:
            found = (w, per, offs)
            break
    if found is None:
        return "the stored values meet positions that repeat with no chunk width"
    w, per, offs = found
    documented = all(tuple(meta_rules.kept_positions(dp, s)) == offs[s] for s in legal)
    name = PATTERN_NAMES.get((w, per), f"{per} of {w}")
    if (w, per) == (8, 4) and not all(o[0] % 2 == 0 and o[1] == o[0] + 1 and o[3] == o[2] + 1
                                      for o in offs.values()):
        name = "4 of 8"
    table = ", ".join(f"{s:#x}->{list(offs[s])}" for s in legal)
    values = {"pattern": name, "chunk_width": w, "kept_per_chunk": per,
              "selectors": {f"{s:#x}": list(offs[s]) for s in legal},
              "selectors_documented": documented}
    text = (f"metadata keeps {name}: {per} of every {w} positions, selector -> kept positions in "
            f"storage order: {table}" + (" (as documented)" if documented else
                                         " (differs from the documented selectors)"))
    evs = []
    for sel in legal[:2]:
        for j in js[:2]:
            bits = [int(d[i]) for i, lab in enumerate(labels) if lab[0] == sel and lab[1] == j]
            evs.append(Evidence(f"selector {sel:#x} everywhere, stored A value {j} = 1, B = 1 "
                                "where bit b of the position is set", {f"stored {j}": one_a},
                                {"bit b": one_b}, zc, bits[:nbits],
                                f"bits spell position {pos[(sel, j)]}"))
    return {"values": values, "evidence": evs, "text": text}


def _disabled_cases(ctx):
    """Random legal masks; finite products at kept positions; NaN / Inf /
    the largest value at the disabled ones; and the same with +0 there."""
    dp = ctx.dp
    rng = np.random.default_rng(ctx.seed + 41)
    n = 96
    active = _random_masks(dp, n, rng)
    fa, fb = ctx.a_fmt, ctx.b_fmt
    a = random_finite(fa, rng.integers(-2, 2, (n, dp.k)), (n, dp.k), rng)
    b = random_finite(fb, rng.integers(-2, 2, (n, dp.k)), (n, dp.k), rng)
    bad_a, bad_b = _poison(fa), _poison(fb)
    pick_a = bad_a[rng.integers(0, len(bad_a), (n, dp.k))]
    pick_b = bad_b[rng.integers(0, len(bad_b), (n, dp.k))]
    a_bad = np.where(active, a, pick_a)
    b_bad = np.where(active, b, pick_b)
    c = random_finite(ctx.c_fmt, rng.integers(-3, 3, n), (n,), rng)
    sa = sb = None
    if dp.block_scaled:
        from .common import unit_scales

        sa, sb = unit_scales(dp, n)
    za, zb = zero(fa), zero(fb)
    names = ["disabled positions poisoned"] * n
    return (Cases(a_bad, b_bad, c, sa, sb, active, names),
            Cases(np.where(active, a, za), np.where(active, b, zb), c, sa, sb, active, names))


def _poison(f) -> np.ndarray:
    """Words that would change any sum: NaNs, infinities, the largest values."""
    out = []
    top = ((1 << f.exp_bits) - 1) << (f.frac_bits + f.drop_bits)
    sign = 1 << (f.width - 1)
    if f.specials == Specials.IEEE:
        out += [top | (1 << (f.frac_bits - 1 + f.drop_bits)), top, top | sign]
    elif f.specials == Specials.FN:
        out += [top | (((1 << f.frac_bits) - 1) << f.drop_bits)]
    mx = word(f, 0, max_sig(f), _max_exp(f) - f.frac_bits)
    if mx is not None:
        out += [mx, mx | sign]
    return np.array(out, np.uint32)


def _max_exp(f) -> int:
    return exp_range(f)[2]


def _random_masks(dp, n, rng) -> np.ndarray:
    from tcprobe.models.sparsity import decode

    return decode(dp, meta_rules.random_metadata(dp, n, rng))[0]


def _counts(ctx) -> Cases:
    """For every n in 0..K/2: cases with n nonzero products among the kept
    positions (random values near 1, both signs), C small or zero."""
    dp = ctx.dp
    rng = np.random.default_rng(ctx.seed + 43)
    per = 24
    parts = []
    fa, fb = ctx.a_fmt, ctx.b_fmt
    for nact in range(dp.k // 2 + 1):
        active = _random_masks(dp, per, rng)
        a = random_finite(fa, rng.integers(-3, 3, (per, dp.k)), (per, dp.k), rng)
        b = random_finite(fb, rng.integers(-3, 3, (per, dp.k)), (per, dp.k), rng)
        keep = np.zeros((per, dp.k), bool)
        for i in range(per):
            on = np.flatnonzero(active[i])
            keep[i, rng.choice(on, nact, replace=False)] = True
        a = np.where(keep, a, zero(fa)).astype(np.uint32)
        b = np.where(keep, b, zero(fb)).astype(np.uint32)
        c = np.where(rng.random(per) < 0.3, 0,
                     random_finite(ctx.c_fmt, rng.integers(-6, 2, per), (per,), rng))
        sa = sb = None
        if dp.block_scaled:
            sa, sb = random_scales(dp, per, rng), random_scales(dp, per, rng)
        parts.append(Cases(a, b, c.astype(np.uint32), sa, sb, active,
                           [f"{nact} active lanes"] * per))
    return Cases.concat(parts)


def _model_agrees(ctx, cases, words):
    """Whether the model of the findings gives ``words`` (None: no model)."""
    dp = ctx.dp
    if dp.block_scaled:
        f = ctx.require("scale")
        params = f.values.get("params")
        if not params:
            return None
        from tcprobe.models.tcgen05_scaled import ScaledParams

        from .scale.geometry import consistent

        return bool(consistent(ctx, cases, words, ScaledParams(**params), {"findings": {}}))
    if dp.is_integer:
        return None
    for step in ("rounding", "zero", "carry"):
        ctx.require(step)
    return bool(ctx.consistent(cases, words, {"findings": {}}))
