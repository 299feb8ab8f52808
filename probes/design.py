"""design: how products align and what a block's result is passed on as.

Two engine keys no earlier probe moves (their probes are powers of two, one
product a block, or sums an output of the block's own type holds):

- ``align``: a product of significands 1.5 x 1.5 = 2.25 has its leading bit
  one above its raw exponent sum. Beside -(the same product) and a term
  2**(E-e) at the window's edge in one block, a datapath that anchors on raw
  exponent sums keeps the term one bit deeper than one that anchors on the
  products' true leading bit (``normalized``).
- ``inter_type`` and ``inter_rounding``: under a D narrower than f32, +-2**E
  with terms about 24 bits below it in the blocks consumed first and -+2**E
  in the last block: what an f32 intermediate rounds off survives the
  cancellation, and how it rounded shows in D (rounding._chain_cases).

The step tries each reading (raw or normalized alignment; blocks chained
through the output type, or through f32 with each rounding) with every key
found so far, on these cases and on random sums, and keeps those that give
the device's words: one value is found, several are named open (the model
takes the one found so far), none leaves the keys as they were.
"""

from __future__ import annotations

from tcprobe.models.cases import Cases
from tcprobe.models.engine import ROUNDINGS as ENGINE_ROUNDINGS

from .common import MOST_CARRY_BITS, Batch, Finding, StepInfo, window
from .rounding import _chain_cases, random_sums

STEP = StepInfo(
    order=105, title="design: alignment of products, the type blocks are chained through",
    needs_layout=True, engine=True, fingerprint=True
)
ROUNDINGS = tuple(ENGINE_ROUNDINGS)


def _align_cases(ctx, blocks, F) -> Cases:
    """+P, -P (P = 1.5 x 1.5 x 2**E, its leading bit at E+1) and 2**(E-e)
    for e around the window's edge, in one block; C = 0."""
    from tcprobe.models.words import home_exponent, pow2, product

    fa, fb = ctx.a_fmt, ctx.b_fmt
    bt = Batch(ctx.dp)
    if F is None or fa.frac_bits < 1 or fb.frac_bits < 1:
        return bt.cases()
    big = next((b for b in blocks if len(b) >= 3), None)
    # C as the deep term too, beside +-P in the first block (products of few
    # bits may not reach the window's edge): C = 2**(E-e), a C added after the
    # blocks moves nothing here
    first = blocks[0] if len(blocks[0]) >= 2 else None
    homes = {home_exponent(fa, fb), home_exponent(fa, fb, 0)}
    if "internal" in ctx.findings:  # where the internal step read the window
        homes.add(ctx.findings["internal"].values.get("home", home_exponent(fa, fb)))
    for E in sorted(homes):
        for s in (0, 1):
            p = product(fa, fb, E, s, (3, 3), (1, 1))
            q = product(fa, fb, E, 1 - s, (3, 3), (1, 1))
            if p is None or q is None:
                continue
            for e in range(max(1, F - 3), F + 4):
                t = product(fa, fb, E - e, s)
                if t is not None and big is not None:
                    i, j, lane = big[0], big[1], big[2]
                    bt.add(f"lanes {i}, {j}: +-2.25 * 2^{E}, lane {lane}: 2^{E - e}",
                           {i: p[:2], j: q[:2], lane: t[:2]})
                c = pow2(ctx.c_fmt, E - e, s)
                if c is not None and first is not None:
                    i, j = first[0], first[1]
                    bt.add(f"lanes {i}, {j}: +-2.25 * 2^{E}, C = 2^{E - e}",
                           {i: p[:2], j: q[:2]}, c)
    return bt.cases()


def _one_block(ctx, blocks) -> dict:
    """Where every product runs in one block, no block result is passed on:
    the intermediate's type, rounding and kept bits give the same words
    whatever they are (named open, the model keeps the output's)."""
    bvals = ctx.findings["block"].values if "block" in ctx.findings else {}
    if len(blocks) != 1 or {"block_size", "k_order"} & set(bvals.get("undetermined", {})) \
            or ctx.value("split"):
        return {}
    why = (f"one block of all K = {ctx.dp.k} products: no block result is passed on, so any "
           "{} gives the same words")
    return {key: why.format(what) for key, what in (
        ("inter_type", "intermediate type"), ("inter_rounding", "intermediate rounding"),
        ("inter_frac_bits", "kept bits of an intermediate"))}


def run(ctx) -> Finding:
    ctx.require("rounding")  # the window, the blocks and the rounding first
    ctx.require("specials")
    blocks = ctx.value("blocks") or [list(range(ctx.dp.k))]
    F = window(ctx)
    parts = [_align_cases(ctx, blocks, F)]
    narrow = ctx.d_fmt.width < 32
    if narrow:
        parts.append(_chain_cases(ctx, blocks))
    parts.append(random_sums(ctx, 24 if F is None else F, 600))
    cases = Cases.concat([ctx.complete(p) for p in parts if len(p)])
    words = ctx.run(cases)
    found = ctx.params()
    inters = [{"inter_type": None, "inter_rounding": None}]
    if narrow:
        inters += [{"inter_type": "f32", "inter_rounding": r} for r in ROUNDINGS]
    cands = {}
    for align in ("raw", "normalized"):
        for inter in inters:
            key = (align, inter["inter_type"], inter["inter_rounding"])
            cands[key] = {"align": align, **inter}
    ok = ctx.consistent(cases, words, cands)
    values = {"undetermined": _one_block(ctx, blocks)}
    notes = []
    if not ok and ctx.value("carry_bits") is None:
        # large sums may wrap, saturate or normalize in a narrow accumulator
        # (the carry step, later, measures it): each reading with each top
        wide = {(*key, b, top): {**c, "carry_bits": b, "carry_top": top}
                for key, c in cands.items() for b in range(0, MOST_CARRY_BITS + 1)
                for top in ("wrap", "saturate", "normalize")}
        ok = list(dict.fromkeys(x[:3] for x in ctx.consistent(cases, words, wide)))
        if ok:
            notes.append("these sums fit only with an accumulator of a few carry bits (the "
                         "carry step measures it)")
    if not ok:
        why = (f"no alignment or intermediate type fits these {len(cases)} cases with the "
               "keys found so far")
        values["undetermined"]["align"] = why
        if narrow:
            values["undetermined"]["inter_type"] = why
            values["undetermined"]["inter_rounding"] = why
        return Finding("design", "partial", f"{why}; they stay as they were (named open)",
                       values)
    here = (found.align, found.inter_type, found.inter_rounding)
    assumed = here if here in ok else ok[0]
    aligns = sorted({a for a, _, _ in ok})
    inter_types = sorted({str(t) for _, t, _ in ok})
    # a default reading is written out only over an earlier step's other one
    if len(aligns) == 1:
        values["align"] = aligns[0] if aligns[0] != "raw" or ctx.value("align") else None
    else:
        values["undetermined"]["align"] = (
            "raw exponent sums and the products' true leading bit give the same words on every "
            "case here (no term reached the window's edge one bit apart)")
        values.setdefault("assumed", {})["align"] = assumed[0]
    if len(inter_types) == 1 and "inter_type" in values["undetermined"]:
        pass  # one block: nothing chains
    elif len(inter_types) == 1:
        chained = None if inter_types[0] == "None" else inter_types[0]
        values["inter_type"] = chained or (ctx.d_fmt.name if ctx.value("inter_type") else None)
        rounds = sorted({r for _, _, r in ok if r is not None})
        if len(rounds) == 1:
            values["inter_rounding"] = rounds[0]
        elif rounds:
            values["undetermined"]["inter_rounding"] = (
                f"{' and '.join(rounds)} agree on every case here: no sum passed on had more "
                "bits than f32 keeps")
            values.setdefault("assumed", {})["inter_rounding"] = assumed[2]
    else:
        values["undetermined"]["inter_type"] = (
            f"blocks chained through {ctx.d_fmt.name} or f32 give the same words on every case "
            "here")
        rounds = sorted({str(r) for _, t, r in ok if t is not None})
        values["undetermined"]["inter_rounding"] = (
            f"an f32 intermediate's rounding ({' or '.join(rounds)} fit) is open with the "
            "intermediate type itself")
        values.setdefault("assumed", {}).update(inter_type=assumed[1], inter_rounding=assumed[2])
    how = {"normalized": "their true leading bit", "raw": "raw exponent sums"}
    through = [ctx.d_fmt.name if t == "None" else t for t in inter_types]
    summary = (f"products align on {how[aligns[0]] if len(aligns) == 1 else 'either'}; blocks "
               f"chain through {through[0] if len(through) == 1 else ' or '.join(through)} "
               f"({len(cases)} cases)")
    status = "found" if not values["undetermined"] else "partial"
    return Finding("design", status, summary, values,
                   notes=notes + ([f"fits: {ok}"] if len(ok) > 1 else []))

