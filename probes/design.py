"""design: how products align and what a block's result is passed on as.

Two engine keys no earlier probe moves (their probes are powers of two, one
product a block, or sums an output of the block's own type holds):

- ``align``: a product of significands 1.5 x 1.5 = 2.25 has its leading bit
  one above its raw exponent sum. Beside -(the same product) and a term
  2**(E-e) at the window's edge in one block, a datapath that anchors on raw
  exponent sums keeps the term one bit deeper than one that anchors on the
  products' true leading bit (``normalized``).
- ``inter_type``, ``inter_rounding`` and ``inter_frac_bits``: +-2**E with
  terms below it in the blocks consumed first and -+2**E in the last block:
  what the intermediate rounds off survives the cancellation, so its bits,
  rounding and range show in D (rounding._chain_cases and _type_cases here:
  ties at every type's bits, X over every exponent the products reach above
  the window's home, C and the products at their largest).

The step tries each reading (raw or normalized alignment, with a window one
bit wider or exact where the internal step read only a lower bound; blocks
chained through each type engine.PARAMS allows for ``inter_type``, the
output's first, with each rounding and each number of kept bits up to the
type's own) with every key found so far, on these cases and on random sums,
and keeps those that give the device's words (several types: those that
also do with C alone over its whole range): one value is found, several
are named open (the model takes the one found so far, or the plainest);
types that fit with the same rounding and kept bits are the range the
validation checks; none leaves the keys as they were. An earlier step's
intermediate keys the readings leave open are reopened (``reopened``).
Blocks passed on in f64 under an f32 D reach here from the block step (its
split branch's deeper term, or products alone) and the rounding step.
Blocks chained through a type keeping fewer bits than the output (fp8)
reach here from the rounding step (its last designs), which the visible
step's reading of the chain's bits as the output's sends there. Known gap:
where such a type's range cuts C alone (e4m3fnuz's smallest 2**-10 under
an f16 D) the internal step reads no window, and no reading fits here.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.engine import PARAM
from tcprobe.models.engine import ROUNDINGS as ENGINE_ROUNDINGS
from tcprobe.models.formats import get_format
from tcprobe.models.words import product

from .common import MOST_CARRY_BITS, Batch, Finding, StepInfo, window
from .rounding import _chain_cases, random_sums

STEP = StepInfo(
    order=105, title="design: alignment of products, the type blocks are chained through",
    needs_layout=True, engine=True, fingerprint=True
)
ROUNDINGS = tuple(ENGINE_ROUNDINGS)
INTER_TYPES = PARAM["inter_type"].choices


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


def _type_cases(ctx, blocks) -> Cases:
    """+X in a lane consumed first, X * (2**-d1 + ...) beside it (more
    products, or C where C is the first block's addend), -X in the last
    block: what the intermediate keeps of the first sum (its fraction bits,
    its rounding, its range: an overflow past its largest value, a
    subnormal or a flush below its smallest) survives the cancellation. X
    runs over every exponent a product reaches; the depths sit at the ties
    of every type an intermediate can be (models/engine.PARAMS)."""
    from tcprobe.models.words import product_range, word

    order = [i for b in blocks for i in b]
    last = set(blocks[-1])
    early = [i for i in order if i not in last][:3]
    bt = Batch(ctx.dp)
    if not early or not last or ctx.value("split"):
        return bt.cases()
    fa, fb = ctx.a_fmt, ctx.b_fmt
    end = sorted(last)[0]
    c_first = ctx.value("c_join") != "last"
    F = window(ctx)
    bits = {0, 1, 2, 3} | {get_format(t).frac_bits for t in INTER_TYPES}
    found = ctx.value("inter_frac_bits")
    if found is not None:
        bits.add(found)
    pats = sorted({d for p in bits for d in ((p + 1,), (p + 1, p + 2), (p, p + 1), (p + 2,))
                   if min(d) >= 1 and (F is None or max(d) <= F + 2)})
    lo, hi = product_range(fa, fb)
    top, big = product(fa, fb, hi, 0), word(ctx.c_fmt, 0, *_largest(ctx.c_fmt))
    if c_first and top is not None and big is not None:
        # C at its largest and the largest products: past a narrow type's range
        for s in (0, 1):
            x, neg = product(fa, fb, hi, s), product(fa, fb, hi, 1 - s)
            bt.add(f"C = +-largest, +-largest products passed on, -+2^{hi} last",
                   {**{i: x[:2] for i in early}, end: neg[:2]}, big | (s << (ctx.c_fmt.width - 1)))
    home = ctx.findings["internal"].values.get("home", lo) if "internal" in ctx.findings else lo
    for E in range(hi, max(lo, home) - 1, -1):  # above any floor the window was read over
        for s in (0, 1):
            x, neg = product(fa, fb, E, s), product(fa, fb, E, 1 - s)
            if x is None or neg is None:
                continue
            for depths in pats:
                terms = [product(fa, fb, E - d, s) for d in depths]
                if len(depths) < len(early) and all(t is not None for t in terms):
                    lanes = {early[n + 1]: t[:2] for n, t in enumerate(terms)}
                    lanes.update({early[0]: x[:2], end: neg[:2]})
                    bt.add(f"+-2^{E}, 2^-{depths} of it passed on, -+2^{E} last", lanes)
                elif c_first:
                    deep = max(depths)
                    c = word(ctx.c_fmt, s, sum(1 << (deep - d) for d in depths), E - deep)
                    if c is not None:
                        bt.add(f"+-2^{E} and C = 2^-{depths} of it passed on, -+2^{E} last",
                               {early[0]: x[:2], end: neg[:2]}, c)
    return bt.cases()


def _c_alone_fits(ctx, ok: list, cands: dict) -> list:
    """The readings of ``ok`` that also give the device's words where every
    product is zero and C, over its whole range, passes each block alone
    (D = the output's rounding of the intermediate's of C: the
    intermediate's range and bits at C's smallest). Where no reading does
    (a floor, measured later, binds there), ``ok`` as it is."""
    from tcprobe.models.words import exp_range, max_sig, word

    c = ctx.c_fmt
    lo, _, hi = exp_range(c)
    rng = np.random.default_rng(ctx.seed + 105)
    bt = Batch(ctx.dp)
    for e in range(lo, hi + 1):
        q = max(e - c.frac_bits, lo)  # C's last bit (a subnormal's: the smallest)
        top = 1 << (e - q)  # C's leading bit, in units of its last
        for s in (0, 1):
            for m in {min(2 * top - 1, max_sig(c)), *(int(x) for x in rng.integers(top, 2 * top, 3))}:
                w = word(c, s, m, q)
                if w is not None:
                    bt.add(f"C = {'-' if s else ''}{m} * 2^{q} alone", {}, w)
    cs = ctx.complete(bt.cases())
    if not len(cs):
        return ok
    fits = ctx.consistent(cs, ctx.run(cs), {x: cands[x] for x in ok})
    return fits or ok


def _largest(fmt) -> tuple[int, int]:
    """(significand, exponent) of a format's largest finite value."""
    from tcprobe.models.words import exp_range, max_sig

    return max_sig(fmt), exp_range(fmt)[2] - get_format(fmt).frac_bits


def _inters(ctx, own_only: bool = False) -> list[dict]:
    """Every reading of a block result passed on: each type engine.PARAMS
    allows (the output's first), each rounding, the type's own fraction bits
    or fewer (``own_only``: the type's own, and the kept bits found so far)."""
    d = ctx.d_fmt
    found = ctx.params()
    out_keep = d.frac_bits if found.output_frac_bits is None else found.output_frac_bits
    have = found.inter_frac_bits
    # the plain reading first: a block result passed on as the steps so far
    # read it (as the output is written where none did), preferred where it fits
    out = [{}]
    for t in [d.name] + [t for t in INTER_TYPES if t != d.name]:
        own = out_keep if t == d.name else get_format(t).frac_bits
        keeps = range(own, -1, -1) if not own_only else [own] + (
            [have] if have is not None and have < own else [])
        out += [{"inter_type": t, "inter_rounding": r, "inter_frac_bits": k}
                for k in keeps for r in ROUNDINGS]
    return out


def _own(ctx, t) -> int:
    """A type's own kept bits as a block result (the output's: its kept bits)."""
    if t != ctx.d_fmt.name:
        return get_format(t).frac_bits
    keep = ctx.params().output_frac_bits
    return ctx.d_fmt.frac_bits if keep is None else keep


def run(ctx) -> Finding:
    ctx.require("rounding")  # the window, the blocks and the rounding first
    ctx.require("specials")
    blocks = ctx.value("blocks") or [list(range(ctx.dp.k))]
    F = window(ctx)
    one = _one_block(ctx, blocks)
    chained = len(blocks) > 1 and not one
    parts = [_align_cases(ctx, blocks, F)]
    if chained:
        parts += [_chain_cases(ctx, blocks), _type_cases(ctx, blocks)]
    parts.append(random_sums(ctx, 24 if F is None else F, 600))
    cases = Cases.concat([ctx.complete(p) for p in parts if len(p)])
    words = ctx.run(cases)
    found = ctx.params()
    d = ctx.d_fmt.name
    # a window read as "at least F" (every wider one fits) may be F + 1 or
    # exact under products aligned on their true leading bit
    windows = [()]
    if ctx.value("window_bits") is None and F is not None:
        windows += [(("window_bits", G),) for G in (F + 1, None)
                    if G is None or G <= PARAM["window_bits"].hi]

    # the plain reading ({}) is the one found so far: its type, rounding and
    # kept bits (the output's own where no step read them)
    own_d = _own(ctx, d)

    def readings(inters):
        out = {}
        for align in ("raw", "normalized"):
            for inter in inters:
                for w in windows if align == "normalized" else [()]:
                    key = (align, inter.get("inter_type", found.inter_type or d),
                           inter.get("inter_rounding", found.inter_rounding),
                           inter.get("inter_frac_bits", own_d if found.inter_frac_bits is None
                                     else found.inter_frac_bits), w)
                    out[key] = {"align": align, **inter, **dict(w)}
        return out

    if ctx.value("split"):  # sub-MMAs: the block step read their chain; f32 or not
        legacy = [{}] + [{"inter_type": "f32", "inter_rounding": r} for r in ROUNDINGS
                         if ctx.d_fmt.width < 32]
        cands = readings(legacy if chained else [{}])
    else:
        cands = readings(_inters(ctx) if chained else [{}])
    ok = ctx.consistent(cases, words, cands)
    values = {"undetermined": dict(one)}
    notes = []
    if not ok and ctx.value("carry_bits") is None:
        # large sums may wrap, saturate or normalize in a narrow accumulator
        # (the carry step, later, measures it): each reading with each top
        few = (cands if ctx.value("split") or not chained
               else readings(_inters(ctx, own_only=True)))
        wide = {(*key, b, top): {**c, "carry_bits": b, "carry_top": top}
                for key, c in few.items() for b in range(0, MOST_CARRY_BITS + 1)
                for top in ("wrap", "saturate", "normalize")}
        ok = list(dict.fromkeys(x[:5] for x in ctx.consistent(cases, words, wide)))
        if ok:
            notes.append("these sums fit only with an accumulator of a few carry bits (the "
                         "carry step measures it)")
    if len({x[1] for x in ok}) > 1 and all(x in cands for x in ok):
        ok = _c_alone_fits(ctx, ok, cands)
    if not ok:
        why = (f"no alignment or intermediate type fits these {len(cases)} cases with the "
               "keys found so far")
        values["undetermined"]["align"] = why
        if chained:
            for key in ("inter_type", "inter_rounding", "inter_frac_bits"):
                values["undetermined"][key] = why
        return Finding("design", "partial", f"{why}; they stay as they were (named open)",
                       values)
    t0 = found.inter_type or d
    here = (found.align, t0, found.inter_rounding or found.output_rounding,
            _own(ctx, t0) if found.inter_frac_bits is None else found.inter_frac_bits)
    # the reading found so far where it fits, else the plainest
    # (an output-type reading rounded as the output, x[2] None, before one
    # with a rounding of its own: the model never pairs two guessed roundings)
    assumed = min(ok, key=lambda x: (sum(a not in (b, None) for a, b in zip(x[:4], here, strict=True)),
                                     x[1] != d, x[2] is not None, x[4] != ()))
    aligns = sorted({x[0] for x in ok})
    # a default reading is written out only over an earlier step's other one
    if len(aligns) == 1:
        values["align"] = aligns[0] if aligns[0] != "raw" or ctx.value("align") else None
    else:
        values["undetermined"]["align"] = (
            "raw exponent sums and the products' true leading bit give the same words on every "
            "case here (no term reached the window's edge one bit apart"
            + (", or a window one bit wider or exact does as well" if len(windows) > 1 else "")
            + ")")
        values.setdefault("assumed", {})["align"] = assumed[0]
    if assumed[4]:  # the window the reading that fits needs
        values.setdefault("assumed", {}).update(dict(assumed[4]))
    if chained:
        _name_inter(ctx, ok, assumed, values)
    if len(aligns) > 1 and len(windows) == 1:
        # the validation cases may tell them apart (ladder.validation), each tried
        # at the window found; beside a window left open ("at least F") they are
        # not: an alignment that misses at the assumed F may fit one bit wider
        # or exact (seed 44 design 5 of tests/test_ladder_inter_types.py)
        values.setdefault("candidates", {})["align"] = aligns
        # settled there where one fits; where both do, no range is claimed (the
        # validation cases may miss the terms at the window's edge that tell them
        # apart: test_ladder_designs' random design 14 differs on held-out cases)
        values["settle_only"] = ["align"]
    how = {"normalized": "their true leading bit", "raw": "raw exponent sums"}
    through = sorted({x[1] for x in ok}) if chained else [d]
    summary = (f"products align on {how[aligns[0]] if len(aligns) == 1 else 'either'}; blocks "
               f"chain through {' or '.join(through)} ({len(cases)} cases)")
    status = "found" if not values["undetermined"] else "partial"
    return Finding("design", status, summary, values,
                   notes=notes + ([f"{len(ok)} readings fit"] if len(ok) > 1 else []))


def _name_inter(ctx, ok, assumed, values) -> None:
    """The intermediate's type, rounding and kept bits from the readings
    that fit (``ok``): one value found, several named open (the model takes
    ``assumed``'s), a type open with its rounding and kept bits."""
    d = ctx.d_fmt.name
    und, guess = values["undetermined"], values.setdefault("assumed", {})
    types = sorted({x[1] for x in ok})
    reopen = [k for k in ("inter_type", "inter_rounding", "inter_frac_bits")
              if ctx.value(k) is not None]
    if len(types) > 1:
        # the types that fit with the assumed rounding and kept bits: the range
        # the validation checks; the others need other kept bits
        same = [t for t in types if any(x[1] == t and x[2] == assumed[2] and x[3] == assumed[3]
                                        for x in ok)]
        und["inter_type"] = (
            f"blocks chained through {', '.join(types)} give the same words on every case here "
            f"(with {assumed[3]} kept fraction bits: {', '.join(same)})")
        und["inter_rounding"] = "open with the intermediate type"
        guess.update(inter_type=assumed[1], inter_rounding=assumed[2])
        keeps = {x[3] for x in ok}
        if len(keeps) == 1 and None not in keeps and all(_own(ctx, t) not in keeps
                                                         for t in types):
            # fewer bits than any of these types holds: the same kept bits in each
            values["inter_frac_bits"] = assumed[3]
            reopen = [k for k in reopen if k != "inter_frac_bits"]
        else:
            und["inter_frac_bits"] = "open with the intermediate type"
            guess["inter_frac_bits"] = assumed[3]
        if len(same) > 1:
            values["candidates"] = {"inter_type": same}
        if reopen:
            values["reopened"] = reopen
        return
    t = types[0]
    own = _own(ctx, t)
    values["inter_type"] = None if t == d and not ctx.value("inter_type") else t
    keeps = sorted({x[3] for x in ok})
    rounds = sorted({x[2] for x in ok if x[2] is not None})
    if len(keeps) == 1:
        keep = keeps[0]
        values["inter_frac_bits"] = (keep if keep != own or ctx.value("inter_frac_bits")
                                     is not None else None)
    else:
        und["inter_frac_bits"] = (
            f"keeping {keeps[0]} to {keeps[-1]} fraction bits of a block result passed on in "
            f"{t} gives the same words on every case here")
        guess["inter_frac_bits"] = assumed[3]
        if ctx.value("inter_frac_bits") is not None:
            values["reopened"] = ["inter_frac_bits"]
    out_round = ctx.params().output_rounding
    if len(rounds) == 1 and len(rounds) == len({x[2] for x in ok}):
        if rounds[0] != out_round or t != d or ctx.value("inter_rounding"):
            values["inter_rounding"] = rounds[0]
    elif len({x[2] for x in ok}) > 1:  # None: the output's own rounding
        names = rounds + (["the output's rounding"] if len(rounds) < len({x[2] for x in ok})
                          else [])
        und["inter_rounding"] = (
            f"{' and '.join(names)} agree on every case here: no sum passed on had more "
            f"bits than {t} keeps")
        if assumed[2] is not None:  # (None: the model rounds it as the output)
            guess["inter_rounding"] = assumed[2]
        if ctx.value("inter_rounding") is not None:
            values["reopened"] = [*values.get("reopened", []), "inter_rounding"]
