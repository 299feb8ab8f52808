"""split: a datapath whose C never meets the products' window (the block
step's branch for it, not a step of its own).

The internal step can find that C = 2**(E-e) survives the cancellation of
+-2**E for every e: C is not in the window. The compiler's fp8 mma.sync on
sm_90/sm_100 is such a datapath: two f16 HMMAs over two halves of K, the
second starting from the first's result, then C added by an ordinary add
(models/emulated.py, SplitModel in models/structures.py). Here C is no
probe, so products probe each other:

1. which K positions run together, and in what order: +2**E in lane i,
   -2**E in lane j and 2**(E-v-1) (half an output ulp of 2**E) in lane l,
   C = 0. Where i and j sit in different sub-MMAs, the small term survives
   unless it sits in the one that runs first with one of them (that one
   rounds 2**E + small back to 2**E). Every (j, l) against lane 0, and the
   candidate splits (runs of 1, 2, 4, ... positions dealt to 1, 2, 4, ...
   sub-MMAs, either order) whose model gives the same words remain; where
   none does (a K order no dealing expresses: pairs swapped, a
   permutation), the order the products themselves show (every pair
   against every lane, split_cases.measured) gives the candidates; a split
   that gives every word under the reading found names the K order open;
   where every small term survives (one block read as the output's type),
   one past f64's 53 bits tells blocks passed on in f64 (wide_chain);
2. the window of one sub-MMA: +-2**E and 2**(E-e) in one of them;
3. how each sub-MMA rounds into the output type, how C is added (the
   rounding of 1 + a fraction of its ulp), and whether the inputs are
   unpacked to f16 first (subnormal fp8 inputs anchor differently):
   candidates against fractions, sums and random cases.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.engine import PARAM, EngineParams
from tcprobe.models.engine import ROUNDINGS as ENGINE_ROUNDINGS
from tcprobe.models.isa import DEFAULT_WINDOW_BITS, output_defaults
from tcprobe.models.model import FixedPointModel, ModelError
from tcprobe.models.structures import SplitModel, deal, split_name
from tcprobe.models.words import (
    exp_range,
    home_exponent,
    product,
    product_range,
)

from .common import Batch, Finding
from .split_cases import (
    MEASURED_MAX_K,
    RANDOM_SUMS,
    agree,
    ieee_specials,
    keeps_to_try,
    measured,
    narrow_block_cases,
    product_sums,
    rounding_cases,
    show_part,
    stage_keys,
    sums_with_c,
    wide_chain,
    window_text,
)

ROUNDINGS = tuple(ENGINE_ROUNDINGS)  # rz, rne, rna: the engine's output roundings
OVERFLOWS = ("inf", "saturate", "ieee")  # the engine's overflow modes (models/engine.PARAMS)
# the designs a C outside every window cut can be: sub-MMAs of inputs unpacked
# to f16 and an IEEE add of C | the engine with C after its blocks | the
# engine with C in its first block under an exact window (no cut at all)
UNPACKS = ("f16", None, "first")


def splits(k: int) -> dict:
    """Candidate splits of K: name -> parts (deduplicated)."""
    out, seen = {}, set()
    for parts in (1, 2, 4, 8, 16, 32, 64):  # up to blocks of one product
        if k % parts or parts > k:
            continue
        for unit in (1, 2, 4, 8, 16, 32, 64):
            if unit > k // parts and unit != 1:
                continue
            for rev in (False, True):
                try:
                    p = deal(k, parts, unit, rev)
                except ModelError:
                    continue
                if p not in seen:
                    seen.add(p)
                    out[split_name(k, parts, unit, rev)] = p
    return out


def model(ctx, parts, *, window=DEFAULT_WINDOW_BITS, rounding=None, c_add="rne", unpack="f16",
          **stage):
    """The split model of this datapath with one stage engine: sub-MMAs and
    an ordinary IEEE add of C (``unpack``: the inputs unpacked to that type
    first), or with ``unpack=None`` the engine itself with C added after its
    blocks (``c_join = "last"``: the add's zero sign, NaN word and overflow
    are the design's, which the later steps measure)."""
    dp = ctx.model_dp  # C as the steps see it (Context.view_c)
    p = EngineParams(window_bits=window, block_size=len(parts[0]), zero_floor=None,
                     output_rounding=rounding or output_defaults(ctx.d_fmt.name).rounding,
                     **stage)
    if unpack in (None, "first"):
        return FixedPointModel("split", dp, "ladder findings",
                               p.replace(k_order=_order(dp.k, parts),
                                         c_join="first" if unpack else "last",
                                         c_add_rounding=c_add))
    return SplitModel("split", dp, "ladder findings", parts=tuple(tuple(x) for x in parts),
                      stage=p, c_entry="last", c_add_rounding=c_add, unpack=unpack)


def _order(k: int, parts) -> tuple | None:
    """The K order of blocks that are ``parts`` (None: K in order)."""
    order = tuple(int(i) for part in parts for i in part)
    return None if order == tuple(range(k)) else order


def run(ctx) -> Finding:
    dp, k = ctx.dp, ctx.dp.k
    fa, fb = ctx.a_fmt, ctx.b_fmt
    vis = ctx.require("visible").values.get("visible_bits", ctx.d_fmt.frac_bits)
    E = home_exponent(fa, fb)
    plus, minus = product(fa, fb, E, 0), product(fa, fb, E, 1)
    small = product(fa, fb, E - vis - 1, 0)
    values = {"undetermined": {}, "c_outside_window": True}
    ev, notes = [], []
    # products spanning too few binades for one to sit half an output ulp
    # below another (fp4 x fp4): random sums of products alone (C = 0) read
    # the split, each candidate's model against their words
    sums_only = small is None and None not in (plus, minus) and k >= 2
    if not sums_only and (None in (plus, minus, small) or k < 3):
        # the model takes C in an exact sum (C survives every cut it can make)
        values["assumed"] = {"window_bits": None}
        values["probe_window"] = 56
        values["undetermined"] = {
            "window_bits": "C survives every depth: an exact sum, or C added after the products",
            "c_join": "no products can probe whether C is added after them here; the model "
                      "takes C in the first block of an exact sum"}
        return Finding("block", "partial", "C is not in the window, and no products can probe "
                       "the split here", values)

    # 1. which lanes run together, and which run first
    bt = Batch(dp)
    if sums_only:
        cs = product_sums(ctx)
        notes.append(f"no {fa.name} x {fb.name} product lies half an output ulp below another: "
                     f"the split is read from {len(cs)} random sums of products alone (C = 0)")
    else:
        for j in range(1, k):
            for lane in range(1, k):
                if lane != j:
                    bt.add(f"lane 0: +2^{E}, lane {j}: -2^{E}, lane {lane}: 2^{E - vis - 1}, "
                           "C = 0", {0: plus[:2], j: minus[:2], lane: small[:2]})
        cs = ctx.complete(bt.cases())
    w = ctx.run(cs)
    # sub-MMAs of unpacked inputs, or the engine with C after; a window that
    # keeps the small term, or one that cuts it (narrower than the output);
    # the output's own width or the visible one (fewer kept bits)
    keeps = keeps_to_try(ctx, vis)
    table = splits(k)
    chains = {}  # split -> the intermediate types (stage keys) it fits with
    # the output's own rounding first; where nothing fits, the others (a tie
    # rounded away shows the small term) and an exact sum
    wins = (max(DEFAULT_WINDOW_BITS, vis + 1), vis)
    others = [x for x in ROUNDINGS if x != output_defaults(ctx.d_fmt.name).rounding]
    ok = _fit(ctx, table, cs, w, wins, (None,), keeps, chains)
    shown = {}
    if not ok and not sums_only:
        # K orders no dealing of runs expresses: the order the products show,
        # for the engine with C after its blocks (the one reading the block
        # step cannot probe with C; C in the first block it can)
        shown = measured(ctx, E, plus, minus, small, table)
        ok = _fit(ctx, shown, cs, w, wins, (None,), keeps, chains, (None,))
    if not ok:
        ok = _fit(ctx, table, cs, w, (*wins, None), others, keeps, chains)
    if not ok and shown:
        ok = _fit(ctx, shown, cs, w, (*wins, None), others, keeps, chains, (None,))
    table = {**table, **shown}
    if not ok:  # blocks of one under a window narrower than the output (C added after)
        ok = _fit(ctx, {n: p for n, p in table.items() if len(p[0]) == 1}, cs, w,
                  range(PARAM["window_bits"].lo, vis), ROUNDINGS, keeps, chains, (None,))
    wide = False
    if ok and not sums_only and len(table[ok[0]]) == 1 and (
            deep := wide_chain(ctx, E, plus, minus)) is not None:
        # every term half an output ulp below 2**E survived, but not one past f64's bits
        wide, chains = True, {}
        cs, w = Cases.concat([cs, deep[0]]), np.concatenate([w, deep[1]])
        ok = _fit(ctx, table, cs, w, (*wins, None), (None, *others), keeps, chains, wide=True)
        notes.append(deep[2])
    lost = [r for r in range(len(bt)) if ctx.is_neg_zero(w[r:r + 1])[0] or int(w[r]) == 0]
    for r in lost[:1] + [r for r in range(len(bt)) if r not in lost][:1]:
        ev.append(bt.evidence(r, [w[r]], "the small term is lost: it ran first with one of "
                              "+-2^E" if r in lost else "the small term survives"))
    if not ok:
        why = "no split of K into sub-MMAs reproduces the three-product cases"
        if k > MEASURED_MAX_K and not sums_only:
            # the products' own order costs K^3 cases: not measured past 32
            why = (f"no dealing of runs of K reproduces the three-product cases, and the order "
                   f"the products themselves show is not measured for K = {k} > "
                   f"{MEASURED_MAX_K} (K^3 cases)")
            values["undetermined"]["k_order"] = why
            values["undetermined"]["block_size"] = why
        return Finding("block", "partial", f"C is not in the window, and {why}", values, ev)
    # 2. the window of one sub-MMA, for the first split (in the order found)
    # whose words some window gives (splits that agree so far can differ there)
    name = None
    for cand in ok:
        okF, cs2, w2 = _windows(ctx, table[cand], E, vis, keeps, chains.get(cand),
                                (None,) if cand in shown else UNPACKS,
                                (cs, w) if sums_only else None, wide)
        if okF:
            name = cand
            break
    if name is None:
        return Finding("block", "partial", f"K runs as {ok[0]}, but no window of a sub-MMA "
                       "reproduces the cancellations inside one", values, ev, notes)
    parts = table[name]
    ok = ok[ok.index(name):]
    if len(ok) > 1:
        notes.append(f"splits {ok} all agree; taking {name}")
    F = okF[0]
    if len(okF) > 1:
        top = "an exact sum" if okF[-1] is None else f"{okF[-1]} bits"
        values["undetermined"]["window_bits"] = (f"windows of {okF[0]} bits to {top} agree (the "
                                                 "inputs cannot reach further below)")
        values["assumed"] = {"window_bits": F}
        values["candidates"] = {"window_bits": [G for G in okF if G is not None]}
    elif F is None:  # no cut at any depth the products reach
        values["undetermined"]["window_bits"] = (
            "exact: no cut; a term as deep below the largest products as any reaches keeps its "
            "last bit (no window of up to 56 bits gives these words)")
        values["assumed"] = {"window_bits": None}
        values["probe_window"] = 56

    rivals = ok
    if len(ok) > 1 and F is not None:
        # the splits that agree so far, told apart by two terms each below the
        # window: cut alone in a block with +-2**E, summed first (and kept) in
        # a block of their own
        kept_splits = _refine(ctx, ok, E, F, keeps, chains, table, shown, wide)
        rivals = kept_splits or ok
        if kept_splits and kept_splits[0] != name:
            notes.append(f"two terms below the window, summed in a block of their own or cut "
                         f"beside +-2^{E}: of {ok}, {kept_splits} fit; taking {kept_splits[0]}")
            name = kept_splits[0]
            parts = table[name]
    # 3. roundings and the unpack
    cs3 = ctx.complete(rounding_cases(ctx, parts, E))
    if sums_only:  # (structured: the random sums stay last)
        cs3 = Cases.concat([sums_with_c(ctx, vis), cs3])
    w3 = ctx.run(cs3)
    # the engine with C after its blocks: a block past the output passes Inf or
    # the largest finite value on (the overflow), and the sums after it differ
    stages = {u: dict(enumerate(stage_keys(ctx, u, wide=wide))) for u in UNPACKS}
    reads = (None,) if name in shown else UNPACKS
    grid = _grid(ctx, parts, F, reads, keeps, stages, chains.get(name, {0}))
    allc = Cases.concat([cs, cs2, cs3])
    allw = np.concatenate([w, w2, w3])
    okr = agree(grid, allc, allw, ctx)
    if not okr and F is not None and len(okF) > 1:
        # the sub-MMA's own cases left the window a range: the random sums
        # (the window's last bits under long significands) may pick a wider one
        F, grid, okr = _wider(ctx, parts, okF, reads, keeps, stages, chains.get(name, {0}),
                              allc, allw, values) or (F, grid, okr)
    uncertain = not okr
    if uncertain:
        # random sums reach what no key found yet models (a floor near the
        # products, a carry limit): the structured cases alone read the
        # roundings, and whatever they leave several ways stays open
        n3 = len(cs3) - RANDOM_SUMS
        allc = Cases.concat([cs, cs2, cs3.take(np.arange(n3))])
        allw = np.concatenate([w, w2, w3[:n3]])
        okr = agree(grid, allc, allw, ctx)
        # only the engine's readings take the keys the later steps find
        # (an IEEE add of C after f16 sub-MMAs has no floor or carry limit)
        if any(x[2] == "f16" for x in okr) and any(x[2] != "f16" for x in okr):
            values["undetermined"]["c_join"] = (
                f"the {RANDOM_SUMS} random sums fit no candidate, and the structured sums "
                "fit both f16 sub-MMAs with an IEEE add of C and the engine with C after its "
                "blocks; the model takes the engine (the later steps measure its other keys)")
        okr = [x for x in okr if x[2] != "f16"]
        if okr:
            notes.append(f"no candidate gives the {RANDOM_SUMS} random sums' words: the "
                         "roundings are read from the structured sums alone, and each one "
                         "they leave open is named open (the later steps measure the "
                         "engine's other keys)")
    full = okr
    overflows = sorted({x[3] for x in okr if x[2] != "f16"})
    kept = sorted({x[4] for x in okr}, key=lambda x: -1 if x is None else x)
    chained = {x[5] for x in okr if x[2] != "f16"}
    chain_values = {}  # the engine's readings: blocks passed on as f32
    if len(chained) == 1 and next(iter(chained)):
        chain_values = dict(stages[None][next(iter(chained))])
    elif chained and 0 not in chained:
        chain_values = {"inter_type": "f32"}  # its rounding: the design step's
    okr = list(dict.fromkeys(x[:3] for x in okr))
    if not okr:
        return Finding("block", "partial", f"K runs as {name} with a {F}-bit window, but no "
                       "rounding of the sub-MMAs and of the add of C reproduces the sums",
                       values, ev, notes)
    kinds = {x[2] for x in okr}
    if "f16" in kinds and len(kinds) > 1 and not ieee_specials(ctx, grid[next(
            y for y in full if y[2] == "f16")]):
        # an IEEE add of C has IEEE specials: a device whose NaN words or
        # overflow differ is the engine's reading (the later steps measure them)
        okr = [x for x in okr if x[2] != "f16"]
        kinds.discard("f16")
        notes.append("f16 sub-MMAs with an IEEE add of C fit the sums, but not the device's "
                     "special words (NaN, Inf, overflow): the engine with C after its blocks")
    if len(kinds) > 1:  # one design that fits, the others named
        # the compiler's emulation first (measured on silicon: models/emulated.py); where
        # products alone read the split, C in an exact sum (the internal step's reading)
        prefer = ("first", "f16", None) if sums_only else ("f16", "first", None)
        u = next(x for x in prefer if x in kinds)
        text = {"first": "C in the first block of an exact sum",
                None: "C added after the blocks (the engine)",
                "f16": "sub-MMAs of f16-unpacked inputs and an IEEE add of C"}
        values["undetermined"]["c_join"] = (
            f"{' and '.join(text[x] for x in (u, *sorted(kinds - {u}, key=str)))} give the same "
            "words on every case here; the model takes the first")
        okr = [x for x in okr if x[2] == u]
    r, c, u = okr[0]
    best = next(x for x in full if x[:3] == (r, c, u))
    _same_order(ctx, [x for x in rivals if x != name], table, parts, stages[u][best[5]], best,
                F, allc, allw, values)
    r_open = len({x[0] for x in okr}) > 1  # the rounding step (or none) decides it
    # no reading gave the random sums: what the structured ones decide stands,
    # the rest is named open, and the finding says the reading is uncertain
    status = "partial" if uncertain else "found"
    caveat = (f" (read from the structured sums alone: no reading gives the {RANDOM_SUMS} "
              "random sums' words)" if uncertain else "")
    for key, pos, text in (("output_rounding", 0, "the sub-MMAs' rounding"),
                           ("split.c_add_rounding", 1, "the rounding of the add of C")):
        seen = sorted({str(x[pos]) for x in okr})
        if len(seen) > 1:
            values["undetermined"][key] = f"{' and '.join(seen)} agree on {text}"
    if u in ("first", None):
        values.update(chain_values)
        if uncertain:  # the blocks and C's place are stated for the model only
            why = (f"the split taken from the structured sums ({name}, C "
                   f"{'in the first block' if u == 'first' else 'added after'}) gives no "
                   f"reading of the {RANDOM_SUMS} random sums; the model takes it")
            values["unsure"] = dict.fromkeys(("block_size", "k_order", "c_join", "c_add_rounding"), why)
    if u == "first":
        # C in the first block of an exact sum: no window cuts anything
        if len(overflows) == 1:
            values["overflow"] = overflows[0]
        if len(kept) == 1:
            values["output_frac_bits"] = kept[0]
        values.update({
            "window_bits": None, "block_size": len(parts[0]), "k_order": _order(k, parts),
            "blocks": [list(p) for p in parts], "output_rounding": None if r_open else r})
        values["assumed"] = {**values.get("assumed", {}), "window_bits": None}
        if r_open:
            values["assumed"]["output_rounding"] = r
        values["undetermined"].pop("window_bits", None)
        values["undetermined"]["window_bits"] = (
            "exact: no cut; C and the products are summed exactly in each block (C at every "
            "depth survives, and no window of up to 56 bits gives the sub-sums' words)")
        values["probe_window"] = 56
        return Finding("block", status, f"K runs as {len(parts)} blocks ({name}), each an exact "
                       f"sum rounded {r.upper()} into {ctx.d_fmt.name}, C in the first{caveat}",
                       values, ev, notes)
    if u is None:
        # the engine itself, C added after its blocks: every later step measures
        # its floor, zero sign, NaN word, overflow and carries on this model
        if (key := "split.c_add_rounding") in values["undetermined"]:
            values["undetermined"]["c_add_rounding"] = values["undetermined"].pop(key)
        if len(overflows) == 1:
            values["overflow"] = overflows[0]
        if len(kept) == 1:  # else the rounding step measures the kept bits
            values["output_frac_bits"] = kept[0]
        values.update({
            "window_bits": None if "window_bits" in values["undetermined"] else F,
            "block_size": len(parts[0]), "k_order": _order(k, parts),
            "blocks": [list(p) for p in parts], "output_rounding": None if r_open else r,
            "c_join": "last",
            "c_add_rounding": None if "c_add_rounding" in values["undetermined"] else c})
        if "c_add_rounding" in values["undetermined"]:
            values.setdefault("assumed", {})["c_add_rounding"] = c
        if r_open:
            values.setdefault("assumed", {})["output_rounding"] = r
        summary = (f"C is added after the products' blocks (rounded {c.upper()}): K runs as "
                   f"{len(parts)} blocks ({name}: the first takes {show_part(parts[0])}), each "
                   f"{window_text(F)} rounded {r.upper()} into {ctx.d_fmt.name}, each starting "
                   "from the previous one's result")
        return Finding("block", status, summary + caveat, values, ev, notes)
    values.update({
        "window_bits": None if "window_bits" in values["undetermined"] else F,
        "block_size": len(parts[0]), "k_order": None, "blocks": [list(p) for p in parts],
        "output_rounding": r,
        "split": {"parts": [list(p) for p in parts], "name": name, "window_bits": F,
                  "output_rounding": r, "c_entry": "last", "c_add_rounding": c, "unpack": u},
    })
    summary = (f"C is added after the products by an ordinary add (rounded {c.upper()}); K runs "
               f"as {len(parts)} sub-MMAs ({name}: the first takes "
               f"{show_part(parts[0])}), each {window_text(F)} rounded {r.upper()} into "
               f"{ctx.d_fmt.name}, the second starting from the first's result; inputs "
               f"unpacked to {u} first")
    notes.append("a compiler emulation (models/emulated.py), not one fixed-point window: the "
                 "fingerprint's model is a SplitModel")
    return Finding("block", status, summary + caveat, values, ev, notes)


def _grid(ctx, parts, F, reads, keeps, stages, fits) -> dict:
    """The readings of step 3: (output rounding, add of C's rounding, unpack,
    overflow, kept bits, stage) -> model, with a window of F bits (an exact
    sum for C in the first block)."""
    return {(r, c, u, ov, kb, n): model(ctx, parts, window=None if u == "first" else F,
                                        rounding=r, c_add=c, unpack=u, output_frac_bits=kb,
                                        **stage, **({"overflow": ov} if u != "f16" else {}))
            for r in ROUNDINGS for u in reads for kb in keeps
            for n, stage in stages[u].items() if n in fits
            for c in (ROUNDINGS if u != "first" else ("rne",))
            for ov in (OVERFLOWS if u != "f16" else ("inf",))}


def _wider(ctx, parts, okF, reads, keeps, stages, fits, cases, words, values):
    """The first window of ``okF`` past the narrowest whose readings give every
    word of ``cases`` (random sums included): (F, its grid, the readings that
    fit), the window range the step names rebuilt from the windows the first
    reading gives; None where none does."""
    reads = tuple(u for u in reads if u != "first")  # (an exact sum has no window)
    for F in okF[1:]:
        if F is None or not reads:
            continue
        grid = _grid(ctx, parts, F, reads, keeps, stages, fits)
        okr = agree(grid, cases, words, ctx)
        if not okr:
            continue
        r, c, u, ov, kb, n = okr[0]
        same = {G: model(ctx, parts, window=G, rounding=r, c_add=c, unpack=u,
                         output_frac_bits=kb, **stages[u][n],
                         **({"overflow": ov} if u != "f16" else {}))
                for G in okF if G is None or G >= F}
        wins = agree(same, cases, words, ctx)
        wins = sorted(G for G in wins if G is not None) + ([None] if None in wins else [])
        values["undetermined"].pop("window_bits", None)
        values.pop("assumed", None)
        if len(wins) > 1:
            top = "an exact sum" if wins[-1] is None else f"{wins[-1]} bits"
            values["undetermined"]["window_bits"] = (
                f"windows of {wins[0]} bits to {top} agree (the inputs cannot reach further "
                f"below; narrower ones down to {okF[0]} bits miss the random sums)")
            values["assumed"] = {"window_bits": F}
        return F, grid, okr
    return None


def _fit(ctx, table, cs, w, wins, rounds, keeps, chains, unpacks=UNPACKS, wide=False) -> list:
    """The splits of ``table`` whose model (sub-MMAs of unpacked inputs, or
    the engine with C after its blocks, or C first in an exact sum; each
    intermediate type; a window of ``wins``, a rounding of ``rounds``, kept
    bits of ``keeps``; the readings of ``unpacks``) gives the words;
    ``chains`` gathers the intermediate types each fits with."""
    ok = []
    for unpack in unpacks:
        for n, stage in enumerate(stage_keys(ctx, unpack, wide=wide)):
            for F, r, kb in ((F, r, kb) for F in wins for r in rounds for kb in keeps):
                cands = {name: model(ctx, parts, unpack=unpack, window=F, rounding=r,
                                     output_frac_bits=kb, **stage)
                         for name, parts in table.items() if n not in chains.get(name, ())}
                for x in agree(cands, cs, w, ctx):
                    ok += [x] if x not in ok else []
                    chains.setdefault(x, set()).add(n)
    return ok


def _same_order(ctx, others, table, parts, stage, best, F, cases, words, values):
    """Name the K order (and block size) open where another split that agreed
    so far gives every word of ``cases`` under the reading found (the first
    two blocks of one product, say, whose order no sum may show)."""
    r, c, u, ov, kb, _ = best
    same = []
    for alt in others:
        m = model(ctx, table[alt], window=None if u == "first" else F, rounding=r, c_add=c,
                  unpack=u, output_frac_bits=kb, **stage,
                  **({"overflow": ov} if u != "f16" else {}))
        if agree({alt: m}, cases, words, ctx):
            same.append(alt)
    if not same:
        return
    why = (f"{', '.join(same)} give the same words as the split taken on every case here "
           "(the model takes the first that fits)")
    values["undetermined"]["k_order"] = why
    if any(len(table[alt][0]) != len(parts[0]) for alt in same):
        values["undetermined"]["block_size"] = why


def _windows(ctx, parts, E, vis, keeps, only, unpacks=UNPACKS, also=None, wide=False) -> tuple:
    """(the windows whose model gives the words, the cases, their words) of
    +-2**E and 2**(E-e) in the first sub-MMA, or (blocks of one or two) of
    terms below 2**E and long significands; ``only``: the stage keys the
    split fitted with; ``also``: (cases, words) every window must give too
    (the sums of products alone that read the split)."""
    dp, fa, fb = ctx.dp, ctx.a_fmt, ctx.b_fmt
    first = parts[0]
    bt2 = Batch(dp)
    if len(first) >= 3:
        i, j, lane = first[0], first[1], first[2]
        lo_p, hi_p = product_range(fa, fb)
        # at the largest products too: their terms reach furthest below the anchor
        for Ex in sorted({E, min(hi_p, exp_range(ctx.d_fmt)[2] - 1)}):
            px, mx = product(fa, fb, Ex, 0), product(fa, fb, Ex, 1)
            if px is None or mx is None:
                continue
            half = product(fa, fb, Ex - vis - 1, 0)  # a tie at the output's last bit
            for e in range(1, max(64, Ex - lo_p + 1)):
                p = product(fa, fb, Ex - e, 0)
                if p is None:
                    continue
                bt2.add(f"lanes {i},{j}: +-2^{Ex}, lane {lane}: 2^{Ex - e} (one sub-MMA)",
                        {i: px[:2], j: mx[:2], lane: p[:2]})
                # a term too small to show alone: a borrow (RZ) or a broken tie
                q = product(fa, fb, Ex - e, 1)
                if q is not None:
                    bt2.add(f"lanes {i}, {j}: 2^{Ex}, -2^{Ex - e}", {i: px[:2], j: q[:2]})
                    if half is not None and e > vis + 1:
                        for t in (p, q):
                            bt2.add(f"lanes {i}, {j}, {lane}: 2^{Ex}, a tie, +-2^{Ex - e}",
                                    {i: px[:2], j: half[:2], lane: t[:2]})
        cs2 = ctx.complete(bt2.cases())
    else:  # blocks of one or two products: a term below 2^E, or long significands
        cs2 = ctx.complete(narrow_block_cases(ctx, parts, E))
    w2 = ctx.run(cs2)
    if also is not None:
        cs2, w2 = Cases.concat([cs2, also[0]]), np.concatenate([w2, also[1]])
    okF = []
    # where the cancellation cannot sit in one block, or the term left is
    # subnormal in the output, the rounding into the output acts: every one tried
    roundings = ROUNDINGS  # (a term alone rounds too: below the output's normal range)
    # blocks of one: windows down to 0 bits (a lone product beside the chained result)
    narrow = range(PARAM["window_bits"].lo if len(first) == 1 else 4, 57)
    for unpack in unpacks:
        for stage in stage_keys(ctx, unpack, only, wide):
            for r in roundings:
                for kb in keeps:
                    wins = {F: model(ctx, parts, window=F, unpack=unpack, rounding=r,
                                     output_frac_bits=kb, **stage)
                            for F in [*narrow, None] if F not in okF}
                    okF += [F for F in agree(wins, cs2, w2, ctx) if F not in okF]
    okF = sorted(F for F in okF if F is not None) + ([None] if None in okF else [])
    return okF, cs2, w2


def _refine(ctx, ok, E, F, keeps, chains, table, shown, wide=False) -> list:
    """The splits in ``ok`` whose model (any design, rounding and kept bits)
    gives the words of +2**E and -2**E in lanes 0 and j and -2**(E-e) in
    lanes l and m, e one or two bits past the window F, C = 0."""
    dp, k = ctx.dp, ctx.dp.k
    fa, fb = ctx.a_fmt, ctx.b_fmt
    plus, minus = product(fa, fb, E, 0), product(fa, fb, E, 1)
    bt = Batch(dp)
    for e in (F + 1, F + 2):
        t = product(fa, fb, E - e, 1)
        if t is None or plus is None or minus is None:
            continue
        for j in sorted({1, k // 2, k - 1}):
            for lo in range(k):
                for m in range(lo + 1, k):
                    if len({0, j, lo, m}) == 4 and ctx.co_active((0, j, lo, m)):
                        bt.add(f"lanes 0, {j}: +-2^{E}, lanes {lo}, {m}: -2^{E - e}",
                               {0: plus[:2], j: minus[:2], lo: t[:2], m: t[:2]})
    if not len(bt):
        return []
    cs = ctx.complete(bt.cases())
    w = ctx.run(cs)
    fit = []
    for name in ok:
        parts = table[name]
        cands = {(u, r, kb, n): model(ctx, parts, unpack=u, rounding=r, output_frac_bits=kb,
                                      window=None if u == "first" else F, **stage)
                 for u in ((None,) if name in shown else UNPACKS)
                 for n, stage in enumerate(stage_keys(ctx, u, wide=wide))
                 if n in chains.get(name, {0}) for r in ROUNDINGS for kb in keeps}
        if agree(cands, cs, w, ctx):
            fit.append(name)
    return fit
