"""rounding: fractions of an ulp, and carries.

C = 2**Ec (1 + m 2**-p) with an even or odd last bit, plus one product of
1/4, 1/2 or 3/4 of that ulp, of either sign (for each candidate output
precision p near the visible one); then carries: C with all-ones
significands plus products that push the sum over a power of two. Every
case has one product, so blocks do not matter. Candidate models (RZ, RNE,
RNA, times the output's fraction bits) run on the same cases with the
window found so far; the ones that reproduce every device word remain.
"""

from __future__ import annotations

import numpy as np

from .common import Batch, Finding, product, word

ROUNDINGS = ("rz", "rne", "rna")


def cases(ctx, kappas, F, lane):
    bt = Batch(ctx.dp)
    cf = ctx.c_fmt.frac_bits
    prods = {}
    for mant, frac, name in ((1, 0, "1"), (1, 1, "1/2"), (3, 1, "3/2"), (3, 2, "3/4")):
        for s in (0, 1):
            p = product(ctx.a_fmt, ctx.b_fmt, 0, s, (mant, 1), (frac, 0))
            if p:
                prods[(name, s)] = p
    for kap in kappas:
        if kap > cf:
            continue
        for m in (0, 1):  # last kept bit even / odd
            for cs in (0, 1):
                # C's ulp is 2**(Ec - kap); the products 1/4, 1/2, 3/4 ulp sit at 2**0
                c = word(ctx.c_fmt, cs, (1 << kap) + m, 2)
                if c is None:
                    continue
                for (name, s), p in prods.items():
                    frac = {"1": "1/4", "1/2": "1/8", "3/2": "3/8", "3/4": "3/16"}[name]
                    bt.add(f"C = {'-' if cs else ''}2^{kap + 2}(1 + {m}*2^-{kap}), "
                           f"product {'-' if s else '+'}{frac} of its ulp", {lane: p[:2]}, c)
    # carries: C with j fraction bits all ones (value just below 2), products around 1
    for j in range(1, min(cf, F, max(kappas)) + 1):
        for cs in (0, 1):
            c = word(ctx.c_fmt, cs, (1 << (j + 1)) - 1, -j)
            if c is None:
                continue
            for (name, s), p in prods.items():
                bt.add(f"C = {'-' if cs else ''}(2 - 2^-{j}), product {'-' if s else '+'}{name}",
                       {lane: p[:2]}, c)
    return bt


def run(ctx) -> Finding:
    vis = ctx.require("visible").values.get("visible_bits", 0)
    F = ctx.require("internal").values.get("window_bits") or 56
    # The product sits in the last block, so the sum that must round is the
    # output's; C passes any earlier block alone, unchanged as long as it has no
    # more bits than the output visibly keeps (hence C's precision <= visible).
    blocks = ctx.require("block").values.get("blocks") or [[0]]
    lane = blocks[-1][0]
    out = ctx.d_fmt.frac_bits
    kappas = list(range(max(1, vis - 2), out + 1))
    bt = cases(ctx, [k for k in kappas if k <= vis], F, lane)
    cs = bt.cases()
    words = ctx.run(cs)
    cands = {}
    for r in ROUNDINGS:
        for kap in kappas:
            cands[(r, kap)] = {"output_rounding": r, "window_bits": F,
                               "output_frac_bits": None if kap == out else kap}
    ok = ctx.consistent(cs, words, cands)
    ev = []
    # evidence: the cases that tell the survivors from the others
    if ok:
        best = ctx.model(**cands[ok[0]]).evaluate(cs)
        for r in ROUNDINGS:
            if any(o[0] == r for o in ok):
                continue
            other = ctx.model(**cands[(r, ok[0][1])]).evaluate(cs)
            diff = np.flatnonzero(other != words)
            if len(diff):
                i = int(diff[0])
                ev.append(bt.evidence(i, [words[i]], f"{r.upper()} would give {int(other[i]):#x}"))
        del best
    if not ok:
        return Finding("rounding", "failed",
                       "no candidate (RZ, RNE, RNA with any output precision) reproduces these "
                       f"{len(cs)} cases with F = {F}", {}, ev)
    rounds = sorted({r for r, _ in ok}, key=ROUNDINGS.index)
    keeps = sorted({k for _, k in ok})
    values = {"undetermined": {}}
    notes = []
    if len(rounds) == 1:
        values["output_rounding"] = rounds[0]
    else:
        values["undetermined"]["output_rounding"] = (
            f"{' and '.join(rounds)} agree on every normal result: no sum here has more "
            f"significant bits than the output keeps (F = {F}); the zero step tries subnormal results")
    keep = max(keeps)
    values["output_frac_bits"] = None if keep == out else keep
    if len(keeps) > 1:
        notes.append(f"output fraction bits {keeps[0]}..{keeps[-1]} all agree; taking {keep}")
    name = {"rz": "cut toward zero (RZ)", "rne": "rounded to nearest even (RNE)",
            "rna": "rounded to nearest, ties away (RNA)"}
    head = (name[rounds[0]] if len(rounds) == 1 else f"rounding not observable ({'/'.join(rounds)})")
    summary = (f"{head}; the output keeps {keep} fraction bits"
               + (" (the format's own)" if keep == out else f" of {out}")
               + f" ({len(cs)} cases: fractions of an ulp of both signs, even and odd, carries)")
    return Finding("rounding", "found" if len(rounds) == 1 else "partial", summary, values, ev,
                   notes)
