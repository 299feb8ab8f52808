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

from tcprobe.models.cases import Cases
from tcprobe.models.engine import PARAM
from tcprobe.models.engine import ROUNDINGS as ENGINE_ROUNDINGS
from tcprobe.models.formats import get_format
from tcprobe.models.words import product, product_range, word

from .common import MOST_CARRY_BITS, Batch, Finding, StepInfo, model_window, window
from .narrow_inter import narrow_inters

STEP = StepInfo(
    order=80, title="rounding: fractions of an ulp, carries", needs_layout=True, engine=True,
    fingerprint=True
)

ROUNDINGS = tuple(ENGINE_ROUNDINGS)  # rz, rne, rna: the engine's output roundings


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
    for j in range(1, min(cf, F, max(kappas, default=0)) + 1):
        for cs in (0, 1):
            c = word(ctx.c_fmt, cs, (1 << (j + 1)) - 1, -j)
            if c is None:
                continue
            for (name, s), p in prods.items():
                bt.add(f"C = {'-' if cs else ''}(2 - 2^-{j}), product {'-' if s else '+'}{name}",
                       {lane: p[:2]}, c)
    return bt


def block_cases(ctx, bt, block, F):
    """Sums over every lane of the last block at one exponent: large
    significands of both kinds (odd and even low bits, so the sum carries past
    the output's precision even with a narrow window) and random ones, C zero
    or below the products."""
    from tcprobe.models.words import max_sig

    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    ma, mb = max_sig(fa), max_sig(fb)
    fr = (fa.frac_bits, fb.frac_bits)
    rng = np.random.default_rng(ctx.seed + 3)
    for s in (0, 1):
        p = product(fa, fb, 0, s, (ma, mb), fr)
        q = product(fa, fb, 0, s, (ma - 1, mb), fr)
        if p is None or q is None:
            continue
        lanes = {k: (p if n % 2 else q)[:2] for n, k in enumerate(block)}
        # C's low bits sit at the bottom of the window, below the products' own;
        # C near 1 or 2 of the products' sign carries the sum past the next power
        # of two, so a narrow window's bottom bit falls off the output's precision
        wide = (() if F > 60 else  # a window this wide: C's words cannot span it
                (word(fc, s, (1 << F) + 1, -F), word(fc, s, (1 << F) + 3, -F),
                 word(fc, s, (2 << F) - 1, -F), word(fc, s, (3 << F) + 1, -F)))
        for c in [None] + [c for c in (word(fc, s, 1, -F), word(fc, 1 - s, 3, -F), word(fc, s, 1, 1 - F),
                  word(fc, 1 - s, 1, 1 - F), *wide) if c is not None]:
            bt.add(f"last block: lanes {'-' if s else '+'}max*max and (max-1)*max", lanes, c)
    for _ in range(48):
        lanes = {}
        for k in block:
            x = int(rng.integers(1 << fa.frac_bits, 1 << (fa.frac_bits + 1)))
            y = int(rng.integers(1 << fb.frac_bits, 1 << (fb.frac_bits + 1)))
            p = product(fa, fb, 0, int(rng.random() < 0.1), (x, y), fr)
            if p:
                lanes[k] = p[:2]
        c = None if rng.random() < 0.3 else word(fc, int(rng.integers(0, 2)),
                                                  int(rng.integers(1, 1 << 4)), -F)
        bt.add("last block: random significands at 2^0", lanes, c)
    # ties: big random significands push the sum's top bit up; one lane holds a
    # single bit somewhere below, which may land exactly on half an output ulp
    for _ in range(96):
        if len(block) < 2:
            break
        lanes = {}
        for k in block[1:]:
            x = int(rng.integers(1 << fa.frac_bits, 1 << (fa.frac_bits + 1)))
            y = int(rng.integers(1 << fb.frac_bits, 1 << (fb.frac_bits + 1)))
            p = product(fa, fb, int(rng.integers(0, 2)), 0, (x, y), fr)
            if p:
                lanes[k] = p[:2]
        bit = product(fa, fb, -int(rng.integers(max(1, F - 8), max(F, 1) + 1)), 0)
        if bit:
            lanes[block[0]] = bit[:2]
        bt.add("last block: random significands and one low bit", lanes)


def product_cases(ctx, bt, blocks, kappas, F):
    """Where C's type (converted on entry) cannot carry the ulp cases: the
    same sums from products alone. A value 2**(kap+2) (1 + m 2**-kap) is two
    products (2**(kap+2) and m 2**2) in lanes other than the last block's
    first, which holds the fraction of its ulp (an earlier block passes the
    value on; the candidates' models judge every case as the device ran it);
    2 - 2**-j is 2 and -2**-j."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    lane = blocks[-1][0]
    others = [k for k in blocks[-1][1:]] + [k for b in blocks[:-1] for k in b]
    others = [k for k in others if ctx.co_active((lane, k))]
    if len(others) < 2 or not ctx.co_active((lane, others[0], others[1])):
        return
    hi, lo = others[0], others[1]
    fracs = [(product(fa, fb, 0, s, (mant, 1), (frac, 0)), s) for mant, frac in
             ((1, 0), (1, 1), (3, 1), (3, 2)) for s in (0, 1)]
    fracs = [(p, s) for p, s in fracs if p]
    for kap in kappas:
        for m in (0, 1):
            for cs in (0, 1):
                big, odd = product(fa, fb, kap + 2, cs), product(fa, fb, 2, cs)
                if big is None or (m and odd is None):
                    continue
                lanes = {hi: big[:2], **({lo: odd[:2]} if m else {})}
                for p, s in fracs:
                    bt.add(f"products {'-' if cs else ''}2^{kap + 2}(1 + {m}*2^-{kap}) and "
                           f"{'-' if s else '+'}a fraction of its ulp", {**lanes, lane: p[:2]})
    # the last block's largest significands and, in its first lane, a low bit
    # at the window's bottom (block_cases puts it in C): the sum carries past
    # the output's precision even under a narrow window
    from tcprobe.models.words import max_sig

    ma, mb = max_sig(fa), max_sig(fb)
    fr = (fa.frac_bits, fb.frac_bits)
    for sg in (0, 1):
        p = product(fa, fb, 0, sg, (ma, mb), fr)
        q = product(fa, fb, 0, sg, (ma - 1, mb), fr)
        if p is None or q is None:
            continue
        full = {k: (p if n % 2 else q)[:2] for n, k in enumerate(blocks[-1])}
        for m, e in ((1, -F), (3, -F), (1, 1 - F), (3, 1 - F)):
            low = product(fa, fb, e, sg, (m, 1), (0, 0))
            if low is not None:
                bt.add("last block: largest significands and a low bit at the window's bottom",
                       {**full, lane: low[:2]})
    # random sums with products as deep as a random C of random_sums reaches
    # (down to the window's bottom): block results with bits at every depth
    # carry past the output's bits (blocks of 1 chain nothing else)
    rng = np.random.default_rng(ctx.seed + 13)
    for _ in range(300):
        lanes = {}
        for k in range(ctx.dp.k):
            x = int(rng.integers(1 << fa.frac_bits, 1 << (fa.frac_bits + 1)))
            y = int(rng.integers(1 << fb.frac_bits, 1 << (fb.frac_bits + 1)))
            deep = rng.random() < (0.7 if k == lane else 0.3)
            e = int(rng.integers(-F - 3, 1)) if deep else int(rng.integers(-2, 3))
            q = product(fa, fb, e, int(rng.random() < 0.2), (x, y), fr)
            if q is not None and ctx.co_active([*lanes, k]):
                lanes[k] = q[:2]
        bt.add("random products, some as deep as the window", lanes)
    for j in range(1, min(F, max(kappas, default=0)) + 1):
        for cs in (0, 1):
            two, bit = product(fa, fb, 1, cs), product(fa, fb, -j, 1 - cs)
            if two is None or bit is None:
                continue
            for p, s in fracs:
                bt.add(f"products {'-' if cs else ''}(2 - 2^-{j}) and {'-' if s else '+'}a product",
                       {hi: two[:2], lo: bit[:2], lane: p[:2]})


def random_sums(ctx, F, n):
    """Random significands in every lane near 2**0 and a random C down to the
    window's bottom: where blocks chain, a rounding shows only through carries
    that random sums reach now and then (no zeros, far above any floor)."""
    from tcprobe.suites.mix import random_finite

    rng = np.random.default_rng(ctx.seed + 11)
    k = ctx.dp.k
    half = n // 2
    a = np.vstack([random_finite(ctx.a_fmt, 0, (half, k), rng, 0.1),
                   random_finite(ctx.a_fmt, rng.integers(-2, 3, (n - half, k)), (n - half, k), rng)])
    b = np.vstack([random_finite(ctx.b_fmt, 0, (half, k), rng, 0.1),
                   random_finite(ctx.b_fmt, rng.integers(-2, 3, (n - half, k)), (n - half, k), rng)])
    c = random_finite(ctx.c_fmt, rng.integers(-F - 3, 4, n), (n,), rng)
    return Cases(a, b, c, names=["random sum"] * n)


def run(ctx) -> Finding:
    vis = ctx.require("visible").values.get("visible_bits", 0)
    ctx.require("internal")
    # The product sits in the last block, so the sum that must round is the
    # output's; C passes any earlier block alone, unchanged as long as it has no
    # more bits than the output visibly keeps (hence C's precision <= visible).
    blocks = ctx.require("block").values.get("blocks") or [[0]]
    F = window(ctx)  # (a split datapath's window is the block step's)
    F = 56 if F is None else F
    lane = blocks[-1][0]
    out = ctx.d_fmt.frac_bits
    kappas = list(range(max(0, vis - 2), out + 1))
    bt = cases(ctx, [k for k in kappas if k <= vis], F, lane)
    if ctx.model_dp is not ctx.dp and word(ctx.c_fmt, 0, (1 << vis) + 1, 2) is None:
        product_cases(ctx, bt, blocks, [k for k in kappas if k <= vis], F)
    bvals = ctx.findings["block"].values
    structure_known = not ({"block_size", "k_order"} & set(bvals.get("undetermined", {})))
    if structure_known:
        # every block's sum rounds (an early block's rounding carries into later
        # ones, unless a narrow window cuts it there): the last block, whose
        # rounding is the output's, and the largest others
        others = sorted(blocks[:-1], key=len, reverse=True)
        for b in [blocks[-1], *others[:2]]:
            block_cases(ctx, bt, b, F)
    cs = Cases.concat([bt.cases(), random_sums(ctx, F, 400)]) if structure_known else bt.cases()
    words = ctx.run(cs)
    cands = {}
    for r in ROUNDINGS:
        for kap in kappas:
            cands[(r, kap)] = {"output_rounding": r, "window_bits": model_window(ctx, F),
                               "output_frac_bits": None if kap == out else kap}
    ok = ctx.consistent(cs, words, cands)
    notes = []
    if not ok:
        # large sums may wrap in a narrow accumulator (the carry step's subject)
        wide = {(r, kap, bits, top): {**over, "carry_bits": bits, "carry_top": top}
                for (r, kap), over in cands.items() for bits in range(0, MOST_CARRY_BITS + 1)
                for top in ("wrap", "saturate", "normalize")}
        okw = ctx.consistent(cs, words, wide)
        if okw:
            ok = sorted({(r, kap) for r, kap, _, _ in okw})
            bits, top = min((b, t) for _, _, b, t in okw)
            cands = {key: {**over, "carry_bits": bits, "carry_top": top}
                     for key, over in cands.items()}
            notes.append("only an accumulator that wraps (a few carry bits) fits these sums; "
                         "the carry step measures it")
    design = {}
    if not ok:
        # the other designs the engine runs: products aligned on their true
        # leading bit, blocks chained through a wider intermediate type with a
        # rounding of its own (the block step reads such a chain's blocks too
        # large: a cut the intermediate keeps looks like one block)
        ok, design = _designs(ctx, cs, words, cands)
        if ok:
            keys = {k: v for k, v in design.items()
                    if k not in ("undetermined", "assumed", "candidates")}
            model_keys = {**keys, **design.get("assumed", {})}
            cands = {key: {**over, **model_keys} for key, over in cands.items()}
            notes.append("only " + ", ".join(f"{k} = {v}" for k, v in model_keys.items())
                         + " fits these sums" + (" (the internal step read the window under raw "
                                                 "alignment)" if "window_bits" in model_keys
                                                 else ""))
            if design.get("k_order") not in (None, ctx.params().k_order):
                # the blocks in another order: the last block's sums again, on
                # the block that now runs last (the output's own rounding)
                cs, words, ok = _last_again(ctx, design, cs, words, cands, ok, F)
    floor = {}
    if not ok:
        # last, a floor near the products (after every other design: a floor
        # can stand in for one of them on these sums)
        ok, cands, note = _high_floor(ctx, cs, words, cands)
        notes += note
        if ok:  # the carry step runs before the zero step, at home exponents it lifts
            floor = {"zero_floor": next(iter(cands.values()))["zero_floor"]}
    narrow = _narrow(ctx, cs, words, F, kappas, ok, out) if ok else None
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
                ev.append(bt.evidence(i, [words[i]], f"{r.upper()} would give {int(other[i]):#x}",
                                      cs))
        del best
    if not ok:
        why = ("no candidate (RZ, RNE, RNA with any output precision) reproduces these "
               f"{len(cs)} cases with F = {F}")
        # the kept bits stay open with the rounding (the model keeps the format's own)
        values = {"undetermined": {"output_rounding": why, "output_frac_bits": why}}
        if ctx.findings["internal"].values.get("c_taken_inside"):
            # C was read inside a window as deep as it survives only because
            # no split with C added after fitted: no rounding fits that
            # reading either, so C's place and the blocks found under it
            # are named open (the model keeps them)
            values["unsure"] = dict.fromkeys(
                ("c_join", "c_add_rounding", "block_size", "k_order"),
                f"C read inside a window as deep as it survives, yet {why}")
        return Finding("rounding", "failed", why, values, ev)
    values = {**design, "undetermined": dict(design.get("undetermined", {}))}
    if floor:
        values["assumed"] = {**values.get("assumed", {}), **floor}
    if "block_size" in design:
        values["blocks"] = [sorted(b) for b in _blocks_of(ctx, design)]
        if design.get("k_order") is not None:
            values["k_order"] = list(design["k_order"])
    if narrow:
        ok = sorted(set(ok) | set(narrow[1]))
    rounds = sorted({r for r, _ in ok}, key=ROUNDINGS.index)
    keeps = sorted({k for _, k in ok})
    if len(rounds) == 1:
        values["output_rounding"] = rounds[0]
    else:
        values["undetermined"]["output_rounding"] = (
            f"{' and '.join(rounds)} agree on every case here (F = {F}: "
            + ("no sum reached a tie" if "rz" not in rounds else
               "no sum has more significant bits than the output keeps")
            + "); later steps try subnormal results and carries")
        values.setdefault("assumed", {})["output_rounding"] = \
            "rne" if "rne" in rounds else rounds[0]
    if narrow:
        bits, fits = narrow
        values["narrow"] = {"carry_bits": bits, "rz_keep": keeps[0]}
        values["undetermined"]["output_rounding"] = (
            f"RZ keeping {keeps[0]} fraction bits, and a normalizing top at {bits} carry bits "
            f"under {' or '.join(r.upper() for r in rounds if r != 'rz')} keeping "
            + (f"{keeps[0]} to {keeps[-1]}" if keeps[-1] > keeps[0] else f"{keeps[0]}")
            + ", give the same words on every case here: such an accumulator holds at most "
            f"F + {bits} = {F + bits} significant bits, no more than the output keeps, so the "
            "output rounding never acts on a sum in the normal range (subnormal results and "
            "overflow are the zero and specials steps')")
        notes.append(f"a normalizing top at {bits} carry bits (F + {bits} = {F + bits} bits) "
                     "looks like an RZ output" + (" with fewer kept bits" if keeps[0] < out else "")
                     + "; the carry step measures it")
    keep = max(keeps)
    values["output_frac_bits"] = None if keep == out else keep
    if len(keeps) > 1:
        # a narrow window's sums have fewer bits than any of these keeps: open
        values["output_frac_bits"] = None
        values["undetermined"]["output_frac_bits"] = (
            f"keeping {keeps[0]} to {keeps[-1]} fraction bits of the output gives the same "
            f"words on every case here (F = {F}: no sum had more significant bits)")
        if keep != out:
            values.setdefault("assumed", {})["output_frac_bits"] = keep
        values["open_keeps"] = keeps  # the zero step's subnormal results may settle it
        # checked after validation
        values.setdefault("candidates", {})["output_frac_bits"] = list(keeps)
        if narrow:
            values["undetermined"]["output_frac_bits"] = (
                f"keeping {keeps[0]} to {keeps[-1]} fraction bits of the output gives the same "
                f"words on every case here (sums of at most F + {narrow[0]} = {F + narrow[0]} "
                "significant bits never need more)")
        notes.append(f"output fraction bits {keeps[0]}..{keeps[-1]} all agree; taking {keep}")
    name = {"rz": "cut toward zero (RZ)", "rne": "rounded to nearest even (RNE)",
            "rna": "rounded to nearest, ties away (RNA)"}
    head = (name[rounds[0]] if len(rounds) == 1 else f"rounding not observable ({'/'.join(rounds)})")
    kept = (f"{keep} fraction bits" + (" (the format's own)" if keep == out else f" of {out}")
            if len(keeps) == 1 else f"{keeps[0]} to {keeps[-1]} fraction bits (not observable)")
    summary = (f"{head}; the output keeps {kept}"
               + f" ({len(cs)} cases: fractions of an ulp of both signs, even and odd, carries)")
    return Finding("rounding", "found" if len(rounds) == 1 else "partial", summary, values, ev,
                   notes)


def _high_floor(ctx, cs, words, cands) -> tuple[list, dict, list]:
    """Where no candidate fits, a zero floor near or above the products' own
    exponents (the zero step measures it later): these sums anchor near 2^0
    (products down to 2^-3), so a floor of -4 or above lifts the anchor of
    some of them, which moves the window's cut and the carry bits' top. Each
    floor from the highest down, alone and with every carry width and top;
    the candidates that fit take the highest floor that fits (the model's
    until the zero step measures the floor)."""
    tops = [{}] + [{"carry_bits": b, "carry_top": t} for b in range(0, MOST_CARRY_BITS + 1)
                   for t in ("wrap", "saturate", "normalize")]
    for top in tops:
        for floor in range(HIGH_FLOORS[1], HIGH_FLOORS[0] - 1, -1):
            over = {**top, "zero_floor": floor}
            ok = ctx.consistent(cs, words, {key: {**c, **over} for key, c in cands.items()})
            if ok:
                text = ", ".join(f"{k} = {v}" for k, v in over.items())
                return ok, {key: {**c, **over} for key, c in cands.items()}, [
                    f"only a zero floor near the products' exponents fits these sums ({text}); "
                    "the zero and carry steps measure them"]
    return [], cands, []


HIGH_FLOORS = (-4, 8)  # the floors _high_floor tries (the rounding cases anchor near 2^0)


def _narrow(ctx, cs, words, F, kappas, ok, out):
    """Whether a normalizing top explains an RZ reading with fewer kept bits
    than the output's: an accumulator of F + c bits that shifts a larger sum
    right cuts it toward zero, like an RZ output keeping F + c - 1 fraction
    bits, and then holds no more bits than the output keeps, so any rounding
    gives the same words. Returns (c, the (rounding, keep) pairs that fit
    that way) or None."""
    if {r for r, _ in ok} != {"rz"} or F >= 56:
        return None
    kmin = min(k for _, k in ok)
    bits = kmin + 1 - F
    if kmin > out or not 2 <= bits <= MOST_CARRY_BITS:
        # RZ at the output's own width, or keeping just the window's F bits (the
        # fp8 paths of Ada and Hopper measured in the Khattak-Mikaitis captures,
        # ../shared/hwdata: one carry bit would look the same): the plainer
        # reading is kept
        return None
    alt = {(r, kap): {"output_rounding": r, "window_bits": model_window(ctx, F), "carry_bits": bits,
                      "carry_top": "normalize", "output_frac_bits": None if kap == out else kap}
           for r in ROUNDINGS if r != "rz" for kap in kappas if kap >= kmin}
    fits = ctx.consistent(cs, words, alt)
    return (bits, fits) if fits else None


def _blocks_of(ctx, over) -> list:
    order = over.get("k_order") or list(range(ctx.dp.k))
    size = over["block_size"]
    return [list(order[i:i + size]) for i in range(0, ctx.dp.k, size)]


def _designs(ctx, cs, words, cands) -> tuple[list, dict]:
    """The (rounding, kept bits) candidates some other design of the engine
    makes fit (normalized alignment, with the window found or one bit either
    side; blocks, of any size that divides K, in
    the found order, chained through f32 with any rounding where D is
    narrower, else through D's own type with any rounding, and last through
    f64 under an f32 D), and that design's keys: the fewest changes first."""
    k = ctx.dp.k
    found = ctx.params()
    sizes = [found.block_size] + [L for L in (1, 2, 4, 8, 16, 32, 64)
                                  if L < k and k % L == 0 and L != found.block_size]
    inters = [{}]
    if ctx.d_fmt.width < 32:
        inters += [{"inter_type": "f32", "inter_rounding": r} for r in ROUNDINGS]
    elif len(ctx.value("blocks") or [0]) > 1:
        # blocks chained through the output's own type with a rounding of their
        # own (an f32 intermediate rounded RNA under an RZ f32 output)
        inters += [{"inter_rounding": r} for r in ROUNDINGS]
    # C added after the blocks: the add's rounding the block step left open
    adds = [{}]
    if found.c_join == "last":
        sizes = [found.block_size]  # the block step's sub-sums
        adds += [{"c_add_rounding": r} for r in ROUNDINGS if r != found.c_add_rounding]
    designs = []
    for align in ("raw", "normalized"):
        for inter in inters:
            for size in sizes:
                for add in adds:
                    over = {**({"align": align} if align != "raw" else {}), **inter, **add}
                    if size != found.block_size:
                        over["block_size"] = size
                    if over:
                        designs.append(over)
    # the internal step read the window on products of significand 1 under raw
    # alignment; products aligned on their true leading bit can shift it a bit
    # where the internal step left the window open (C beside one product: a
    # range), every window of that range, and one bit either side of it under
    # normalized alignment
    windows = _other_windows(ctx)
    designs += [{**over, "window_bits": G} for over in [{}, *designs]
                if "block_size" not in over for G in windows[over.get("align", "raw")]]
    designs.sort(key=len)
    if ctx.d_fmt.width < 32:  # sums an f32 intermediate must round, passed on and cancelled
        chain = _chain_cases(ctx, ctx.value("blocks") or [list(range(k))])
        if len(chain):
            cs = Cases.concat([ctx.complete(cs), ctx.complete(chain)])
            words = np.concatenate([np.asarray(words, np.uint32),
                                    np.asarray(ctx.run(chain), np.uint32)])
    # then with an accumulator of a few carry bits too (a wrap or a saturated top)
    tops = [{"carry_bits": b, "carry_top": t} for b in range(0, MOST_CARRY_BITS + 1)
            for t in ("wrap", "saturate", "normalize")]
    designs += [{**over, **top} for top in tops for over in designs if "block_size" not in over]
    if ctx.value("overflow") is None:
        # the chain cases' 2**E may pass the output's largest finite value in a
        # design that chains through it: saturated there (the specials step,
        # later, measures the overflow)
        designs += [{**over, "overflow": "saturate"} for over in designs]
    # last, a block result passed on with fewer fraction bits than its type holds
    # (inter_frac_bits), in the found blocks, with a rounding of its own
    if found.block_size < k:
        for inter in inters:
            i_fmt = get_format(inter.get("inter_type") or ctx.d_fmt.name)
            designs += [{**inter, **align, "inter_frac_bits": b, "inter_rounding": r}
                        for align in ({}, {"align": "normalized"})
                        for b in range(1, i_fmt.frac_bits) for r in ROUNDINGS]
        if ctx.d_fmt.width == 32:  # last, through f64, wider than D (as f32 under f16)
            wide = [{"inter_type": "f64", "inter_rounding": r, **align} for r in ROUNDINGS
                    for align in ({}, {"align": "normalized"})]
            designs += wide + [{**over, **top} for top in tops for over in wide]
        designs += narrow_inters(ctx, inters)
    for over in designs:
        ok = ctx.consistent(cs, words, {key: {**c, **over} for key, c in cands.items()})
        if ok:
            if "block_size" in over:
                over.setdefault("k_order", found.k_order)
            if "window_bits" in over:
                _windows_that_fit(ctx, cs, words, cands, over, windows)
            if "inter_rounding" in over:  # the other roundings of the chain that fit as well
                fits = [r for r in ROUNDINGS if r == over["inter_rounding"] or ctx.consistent(
                    cs, words, {key: {**c, **over, "inter_rounding": r}
                                for key, c in cands.items()})]
                if len(fits) > 1:
                    over["undetermined"] = {"inter_rounding": (
                        f"{' and '.join(fits)} agree on every case here: no block's sum "
                        "passed on has more bits than the intermediate keeps")}
                    over["assumed"] = {"inter_rounding": over.pop("inter_rounding")}
            return ok, over
    return [], {}


def _last_again(ctx, design, cs, words, cands, ok, F):
    """The last block's cases (``block_cases``) on the last block of a
    design that consumes the blocks in another order, added to ``cs``: the
    candidates of ``ok`` that still fit (``ok`` itself where none does)."""
    last = _blocks_of(ctx, design)[-1]
    bt = Batch(ctx.dp)
    block_cases(ctx, bt, last, F)
    more = bt.cases()
    if not len(more):
        return cs, words, ok
    cs2 = Cases.concat([ctx.complete(cs), ctx.complete(more)])
    words2 = np.concatenate([np.asarray(words, np.uint32), np.asarray(ctx.run(more), np.uint32)])
    fits = ctx.consistent(cs2, words2, {key: cands[key] for key in ok})
    return (cs2, words2, fits) if fits else (cs, words, ok)


def _other_windows(ctx) -> dict:
    """The windows :func:`_designs` tries besides the one the cases ran with,
    by alignment: under raw alignment the rest of the internal step's open
    range (C beside one product: ``one_term_fits``), under normalized
    alignment that range and one bit either side of it (the internal step
    read the window on products of significand 1 under raw alignment)."""
    F = ctx.value("window_bits")
    found = [F] if F is not None else [
        f for f in ctx.findings["internal"].values.get("one_term_fits") or () if f is not None]
    here = window(ctx)
    lo, hi = PARAM["window_bits"].lo, PARAM["window_bits"].hi
    near = sorted({g for f in found for g in (f - 1, f, f + 1) if lo <= g <= hi} - {here})
    return {"raw": [g for g in near if g in found], "normalized": near}


def _windows_that_fit(ctx, cs, words, cands, over, windows) -> None:
    """Where a design fits with another window than the one found, every
    window tried with that design that fits too: more than one is named
    open (the model takes the first; validation checks the range)."""
    rest = {k: v for k, v in over.items() if k != "window_bits"}
    fits = [G for G in windows[over.get("align", "raw")] if G == over["window_bits"]
            or ctx.consistent(cs, words, {key: {**c, **rest, "window_bits": G}
                                          for key, c in cands.items()})]
    if len(fits) > 1:
        over.pop("window_bits")
        with_ = ", ".join(f"{k} = {v}" for k, v in rest.items())
        over.setdefault("undetermined", {})["window_bits"] = (
            f"{fits[0]} to {fits[-1]}: " + (f"with {with_}, " if with_ else "")
            + "each of these windows gives the same words on every case here")
        over.setdefault("assumed", {})["window_bits"] = fits[0]
        over["candidates"] = {"window_bits": fits}


def _chain_cases(ctx, blocks) -> Cases:
    """+2**E and small terms 2**(E-d) (d around f32's 24 bits: a tie, a tie
    and a bit below, an odd last kept bit and a tie) in the lanes consumed
    first, -2**E in the last block, C = 0: what an f32 intermediate rounds
    off survives the cancellation, so its rounding shows in D."""
    order = [i for b in blocks for i in b]
    last = set(blocks[-1])
    early = [i for i in order if i not in last][:3]
    bt = Batch(ctx.dp)
    if len(early) < 2 or not last:
        return bt.cases()
    fa, fb = ctx.a_fmt, ctx.b_fmt
    end = sorted(last)[0]
    patterns = {"a tie": (24,), "a tie and a bit below": (24, 25), "odd and a tie": (23, 24),
                "below a tie": (25,), "a deep tie": (24, 26)}
    for E in range(product_range(fa, fb)[1], product_range(fa, fb)[0] - 1, -1):
        for s in (0, 1):
            for name, depths in patterns.items():
                if len(depths) + 1 > len(early):
                    continue
                terms = [product(fa, fb, E, s)] + [product(fa, fb, E - d, s) for d in depths]
                neg = product(fa, fb, E, 1 - s)
                if neg is None or any(t is None for t in terms):
                    continue
                lanes = {early[n]: t[:2] for n, t in enumerate(terms)}
                lanes[end] = neg[:2]
                bt.add(f"+-2^{E} and {name} passed on, -+2^{E} last", lanes)
        if len(bt) >= 40:
            break
    return bt.cases()
