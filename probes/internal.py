"""internal: the window, -1 + 1 + 2**-e.

Products +2**E and -2**E in lanes i and j cancel; C = 2**(E-e) survives only
while it lies inside the window of F fraction bits below the block's anchor
E. D is compared with the D of C alone: F is the largest e for which every
e' <= e survives. If i and j sit in different blocks, the first block rounds
2**E + C into the output format and the survivor is lost beyond the output's
precision, so a pair is tried in every candidate position (adjacent pairs
first; every pair once, at e = F + 1, when the best so far does not exceed
the visible precision). Where C survives as far down as it shows alone (an
output keeping few bits), the run goes on with C's last bit breaking an
output tie (tie_run).
"""

from __future__ import annotations

from tcprobe.models.engine import PARAM
from tcprobe.models.formats import get_format
from tcprobe.models.words import exp_range, home_exponent, pow2, product, product_range, word

from . import internal_products
from .common import Batch, Finding, StepInfo
from .internal_products import c_limited

STEP = StepInfo(
    order=70, title="internal precision: the window F below the largest exponent",
    needs_layout=True, engine=True, fingerprint=True
)


def sweep(ctx, pairs, E, emax):
    """(per pair: the survival run length, rows for evidence, and the largest
    e at which C alone still shows in the output)."""
    bt = Batch(ctx.dp)
    plus = product(ctx.a_fmt, ctx.b_fmt, E, 0)
    minus = product(ctx.a_fmt, ctx.b_fmt, E, 1)
    refs = {}
    for e in range(1, emax + 1):
        refs[e] = bt.add(f"C = 2^{E - e} alone", {}, pow2(ctx.c_fmt, E - e))
    rows = {}
    for i, j in pairs:
        for e in range(1, emax + 1):
            rows[(i, j, e)] = bt.add(f"lane {i}: +2^{E}, lane {j}: -2^{E}, C = 2^{E - e}",
                                     {i: plus[:2], j: minus[:2]}, pow2(ctx.c_fmt, E - e))
    w = ctx.run(bt.cases())
    # C alone must show (an output keeping few bits rounds a tiny C to zero):
    # a cut C and a C that does not show give the same word
    shown = [e for e in range(1, emax + 1) if int(w[refs[e]]) & ((1 << (ctx.d_fmt.width - 1)) - 1)]
    emax = max(shown, default=0)
    runs = {}
    for i, j in pairs:
        n = 0
        for e in range(1, emax + 1):
            if w[rows[(i, j, e)]] != w[refs[e]]:
                break
            n = e
        runs[(i, j)] = n
    return runs, bt, w, rows, refs, emax


def _top_exponent(ctx) -> int:
    """The largest E with +-2**E products that the output still holds."""
    _, na, _ = exp_range(ctx.a_fmt)
    _, nb, _ = exp_range(ctx.b_fmt)
    _, _, xd = exp_range(ctx.d_fmt)
    return max(min(product_range(ctx.a_fmt, ctx.b_fmt)[1], xd - 1), na + nb)


def _span(ctx) -> int:
    """How far below a block's anchor any term's last bit can lie: products
    anchored at the largest raw exponent sum over C's smallest step, or C at
    its largest over the smallest product's last bit."""
    pa, _, xa = exp_range(ctx.a_fmt)
    pb, _, xb = exp_range(ctx.b_fmt)
    csub, _, xc = exp_range(ctx.c_fmt)
    return max(xa + xb - min(csub, pa + pb), xc - (pa + pb))


def at(ctx, pairs, E, e):
    """Which pairs keep C = 2**(E-e) (one case per pair)."""
    bt = Batch(ctx.dp)
    plus = product(ctx.a_fmt, ctx.b_fmt, E, 0)
    minus = product(ctx.a_fmt, ctx.b_fmt, E, 1)
    ref = bt.add(f"C = 2^{E - e} alone", {}, pow2(ctx.c_fmt, E - e))
    rows = {p: bt.add("", {p[0]: plus[:2], p[1]: minus[:2]}, pow2(ctx.c_fmt, E - e)) for p in pairs}
    w = ctx.run(bt.cases())
    return [p for p, r in rows.items() if w[r] == w[ref]]


def tie_run(ctx, pair, E, emax, vis):
    """Below the last C that shows alone: C = 2**c * (1 + 2**-u + last bit),
    its last bit at 2**(E-e), u a candidate tie bit of an output keeping
    about ``vis`` fraction bits; with +-2**E cancelling in ``pair``. A window
    that cuts the last bit leaves a tie that RNE rounds to even, unlike C
    alone, so the first e where some u differs is one bit past the window.
    RZ rounds a cut C as it rounds C itself; for it, a borrow: +2**E and
    -2**(E-1) in ``pair`` leave 2**(E-1), C = -2**(E-e), against 2**(E-1)
    alone in the pair's first lane (its anchor one bit lower keeps C one bit
    deeper): 2**(E-1) minus a kept C truncates to the word below 2**(E-1),
    a cut one leaves 2**(E-1), so the first e where they differ is one bit
    past the window. (RNA rounds both as it rounds the tie-free C: no e
    differs there.) Returns (the survival run, the deepest e tried), or None
    when C cannot carry such a pattern."""
    c_fmt = ctx.c_fmt
    fbits = c_fmt.frac_bits
    csub, cmin, _ = exp_range(c_fmt)
    us = [u for u in (vis, vis + 1, vis + 2) if 1 <= u < fbits]
    deepest = E - csub
    if not us or deepest <= emax:
        return None
    bt = Batch(ctx.dp)
    plus = product(ctx.a_fmt, ctx.b_fmt, E, 0)
    minus = product(ctx.a_fmt, ctx.b_fmt, E, 1)
    rows = {}
    for e in range(emax + 1, deepest + 1):
        last = E - e
        c_exp = last + fbits  # C's leading bit, its last bit at 2**last
        if c_exp < cmin:
            break
        for u in us:
            mag = (1 << fbits) | (1 << (fbits - u)) | 1
            cw = word(c_fmt, 0, mag, last)
            if cw is None:
                continue
            rows[(e, u)] = (bt.add(f"C = 2^{c_exp} (1 + 2^-{u}) + 2^{last} alone", {}, cw),
                            bt.add(f"lane {pair[0]}: +2^{E}, lane {pair[1]}: -2^{E}, "
                                   f"C = 2^{c_exp} (1 + 2^-{u}) + 2^{last}",
                                   {pair[0]: plus[:2], pair[1]: minus[:2]}, cw))
    below = product(ctx.a_fmt, ctx.b_fmt, E - 1, 1)
    half = product(ctx.a_fmt, ctx.b_fmt, E - 1, 0)
    for e in range(emax + 1, deepest + 1):
        cw = pow2(c_fmt, E - e, 1)
        if below is None or half is None or cw is None or (e, 0) in rows:
            continue
        rows[(e, 0)] = (bt.add(f"lane {pair[0]}: +2^{E - 1}, C = -2^{E - e}",
                               {pair[0]: half[:2]}, cw),
                        bt.add(f"lane {pair[0]}: +2^{E}, lane {pair[1]}: -2^{E - 1}, "
                               f"C = -2^{E - e}", {pair[0]: plus[:2], pair[1]: below[:2]}, cw))
    if not rows:
        return None
    w = ctx.run(bt.cases())
    tried = sorted({e for e, _ in rows})
    run = emax
    for e in tried:
        if any(w[a] != w[b] for (ee, _), (a, b) in rows.items() if ee == e):
            break
        run = e
    return run, tried[-1]


def one_term(ctx, E, vis):
    """Where no two lanes share a block (blocks of 1), a block holds C and
    one product: +2**E in lane 0 beside a C the output holds exactly (so a
    C rounded alone first is unchanged): C = -2**(E-e) (a borrow: RZ shows
    a kept C as the word below 2**E), C = 2**(E-vis-1) (1 + 2**-m) (an
    output tie broken by C's last bit at depth e: RNE) and C = -(2**(E-vis-2)
    + 2**(E-e)) (a tie of the binade below, broken: RNE and RNA). The
    windows F (0-56) that reproduce every word under some output rounding
    (the rounding step has not run) are returned, sorted, with the batch and
    its words for evidence."""
    c_fmt = ctx.c_fmt
    fbits = c_fmt.frac_bits
    bt = Batch(ctx.dp)
    plus = product(ctx.a_fmt, ctx.b_fmt, E, 0)
    if plus is None:
        return [], bt, None
    lane = {0: plus[:2]}
    bt.add(f"lane 0: +2^{E} alone", lane)
    # as deep as C reaches: a window of up to 56 bits and none (exact) differ there
    deepest = max(60, E - exp_range(c_fmt)[0])
    for e in range(1, deepest + 1):
        cw = pow2(c_fmt, E - e, 1)
        if cw is not None:
            bt.add(f"lane 0: +2^{E}, C = -2^{E - e}", lane, cw)
    # an RNA output shows one bit more than it keeps: ties at both depths
    for v in sorted({vis - 1, vis}):
        for e in range(1, 61):
            m = e - v - 1
            if 1 <= m <= min(v, fbits):
                cw = word(c_fmt, 0, (1 << m) | 1, E - e)
                if cw is not None:
                    bt.add(f"lane 0: +2^{E}, C = 2^{E - v - 1} (1 + 2^-{m})", lane, cw)
            m = e - v - 2
            if 1 <= m <= min(v, fbits):
                cw = word(c_fmt, 1, (1 << m) | 1, E - e)
                if cw is not None:
                    bt.add(f"lane 0: +2^{E}, C = -(2^{E - v - 2} + 2^{E - e})", lane, cw)
    # the tie in the product itself (kept bits even, and odd: RNE rounds the
    # odd one up), C = -2**(E-e) a single bit at any depth that tips it below
    # the tie while the window keeps it: for an output keeping few bits, a
    # depth C's own significand cannot span
    for v in sorted({vis - 1, vis}):
        for odd in (0, 1):
            mant = (1 << (v + 1)) | (odd << 1) | 1
            tie = product(ctx.a_fmt, ctx.b_fmt, E, 0, (mant, 1), (v + 1, 0)) if v >= 1 else None
            if tie is None:
                continue
            for e in range(v + 2, deepest + 1):
                cw = pow2(c_fmt, E - e, 1)
                if cw is not None:
                    bt.add(f"lane 0: +2^{E} (1 + {'2^-' + str(v) + ' + ' if odd else ''}"
                           f"2^-{v + 1}), C = -2^{E - e}", {0: tie[:2]}, cw)
    cases = bt.cases()
    words = ctx.run(cases)
    full = ctx.d_fmt.frac_bits
    keeps = sorted({None if v >= full else v for v in (vis - 1, vis) if v >= 0},
                   key=lambda x: full if x is None else x)
    cands = {(f, r, kb): {"window_bits": f, "output_rounding": r, "output_frac_bits": kb}
             for f in [*range(0, 57), None] for r in ("rz", "rne", "rna") for kb in keeps}
    ok = ctx.consistent(cases, words, cands)
    fits = {f for f, *_ in ok}
    fits = sorted(f for f in fits if f is not None) + ([None] if None in fits else [])
    if len(fits) > 1:
        run, tried = tie_breaks(ctx, vis)
        if run is not None:
            narrow = [f for f in fits if (f is None or f >= run) and (run >= tried or f == run)]
            fits = narrow or fits
    return fits, bt, words


def tie_breaks(ctx, vis):
    """C the anchor and one product the deep term (blocks of 1): C = 2**Ec
    (1 + 2**-(v+1)), a tie of an output keeping v bits, beside +-2**(Ec-e)
    in any one lane (RNE and RNA round the broken tie otherwise than the
    tie), and C = 1.5 * 2**Ec beside -2**(Ec-e) (RZ: a borrow gives the word
    below). C's exponent sits as far above the smallest products as the
    engine's widest window and more, so the product's bit reaches depths a
    C the output holds cannot carry. Returns (the largest e up to which
    every depth moves D away from C alone, the deepest e tried), or (None,
    None)."""
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    lo_p, _ = product_range(fa, fb)
    _, cmin, cmax = exp_range(fc)
    top = PARAM["window_bits"].hi + 4
    ec = min(cmax - 1, lo_p + top)
    if ec < cmin + 1:
        return None, None
    depths = [e for e in range(1, top + 1) if product(fa, fb, ec - e, 0) is not None]
    full = ctx.d_fmt.frac_bits
    cs = [(word(fc, 0, 3, ec - 1), (1,))]  # 1.5 * 2**Ec and a borrow
    for v in sorted({min(vis - 1, full), min(vis, full)}):
        if 0 <= v and v + 1 <= fc.frac_bits:
            cs.append((word(fc, 0, (1 << (v + 1)) | 1, ec - v - 1), (0, 1)))
    cs = [(c, signs) for c, signs in cs if c is not None]
    if not depths or not cs:
        return None, None
    bt = Batch(ctx.dp)
    refs = [bt.add(f"C = {c:#x} alone", {}, c) for c, _ in cs]
    rows = {}
    for n, (c, signs) in enumerate(cs):
        for e in depths:
            for sg in signs:
                p = product(fa, fb, ec - e, sg)
                for lane in range(ctx.dp.k):
                    rows.setdefault(e, []).append((n, bt.add(
                        f"C = {c:#x}, lane {lane}: {'-' if sg else '+'}2^{ec - e}", {lane: p[:2]}, c)))
    w = ctx.run(bt.cases())
    run = 0
    for e in range(1, depths[-1] + 1):
        if e in rows and not any(w[r] != w[refs[n]] for n, r in rows[e]):
            break
        run = e
    return run, depths[-1]


def _chain_bits(ctx, vis) -> int:
    """The most fraction bits a block result passed on to the next block can
    keep: the output's visible bits, or an f32 intermediate's under a
    narrower output (models/engine.py's inter_type)."""
    f32 = get_format("f32").frac_bits
    return vis if ctx.d_fmt.frac_bits >= f32 else max(vis, f32)


def products_cut(ctx, pairs, E, chain, kept=()):
    """Where C survives every depth, whether products alone show a window: +2**E
    and -2**E in a pair and 2**(E-e) in a third lane l, C = 0, against
    2**(E-e) alone. A run that keeps the small product past what any block
    result passed on keeps (``chain`` bits: a run straddling blocks is cut by
    that rounding, at most one bit past it) and then loses it deeper is a
    window cutting a term that C, at every depth, escaped: C is added after
    the products. ``kept``: pairs that kept C at every depth while no pair
    lost it; a third product lost beside one of them already at the first
    depth past the chain (a block of the pair rounded it away, or a window
    cut it, where C at every depth survived) is the same evidence (blocks of
    1 under a narrow window, C added after them). Returns (the run, or None
    for that loss, the triple) or None."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    plus, minus = product(fa, fb, E, 0), product(fa, fb, E, 1)
    thr = chain + 2
    if plus is None or minus is None or ctx.dp.k < 3:
        return None
    deep_e = [e for e in range(thr, E - product_range(fa, fb)[0] + 1)
              if product(fa, fb, E - e, 0) is not None]
    if not deep_e:
        return None
    mask = (1 << (ctx.d_fmt.width - 1)) - 1
    k = ctx.dp.k
    triples = list(dict.fromkeys((i, j, m) for i, j in pairs for m in range(k)
                                 if m not in (i, j) and ctx.co_active((i, j, m))))[:96]
    if not triples:
        return None
    bt = Batch(ctx.dp)
    refs = {e: bt.add(f"2^{E - e} alone", {triples[0][2]: product(fa, fb, E - e, 0)[:2]})
            for e in deep_e}
    w = ctx.run(bt.cases())
    shown = [e for e in deep_e if int(w[refs[e]]) & mask]
    if not shown or shown[0] != thr:
        return None
    if len(shown) < 2:
        return _lost_beside(ctx, kept, E, thr, w[refs[thr]])
    deepest = shown[-1]
    bt = Batch(ctx.dp)
    rows = {}
    for t in triples:
        for e in (thr, deepest):
            rows[(t, e)] = bt.add("", {t[0]: plus[:2], t[1]: minus[:2],
                                       t[2]: product(fa, fb, E - e, 0)[:2]})
    w2 = ctx.run(bt.cases())
    ref = {thr: w[refs[thr]], deepest: w[refs[deepest]]}
    found = [t for t in triples if w2[rows[(t, thr)]] == ref[thr]
             and w2[rows[(t, deepest)]] != ref[deepest]]
    if not found:
        return _lost_beside(ctx, kept, E, thr, ref[thr])
    t = found[0]
    bt = Batch(ctx.dp)
    rows = {e: bt.add("", {t[0]: plus[:2], t[1]: minus[:2], t[2]: product(fa, fb, E - e, 0)[:2]})
            for e in shown}
    w3 = ctx.run(bt.cases())
    run = thr
    for e in shown:
        if w3[rows[e]] != w[refs[e]]:
            break
        run = e
    return run, t


def _lost_beside(ctx, kept, E, e, ref):
    """(None, a triple) where 2**(E-e) beside a pair of ``kept`` (+2**E,
    -2**E) gives other words than it alone (``ref``), else None."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    plus, minus, small = product(fa, fb, E, 0), product(fa, fb, E, 1), product(fa, fb, E - e, 0)
    triples = list(dict.fromkeys((i, j, m) for i, j in kept for m in range(ctx.dp.k)
                                 if m not in (i, j) and ctx.co_active((i, j, m))))[:96]
    if not triples or None in (plus, minus, small):
        return None
    bt = Batch(ctx.dp)
    for i, j, m in triples:
        bt.add("", {i: plus[:2], j: minus[:2], m: small[:2]})
    w = ctx.run(bt.cases())
    lost = [t for t, x in zip(triples, w, strict=True) if x != ref]
    return (None, lost[0]) if lost else None


def _products_reach(ctx, E, chain) -> bool:
    """Whether some product lies as far below 2**E as :func:`products_cut`
    needs (past what a chained block result keeps)."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    return any(product(fa, fb, E - e, 0) is not None
               for e in range(chain + 2, E - product_range(fa, fb)[0] + 1))


def setup(ctx):
    """(E, emax): the probes' product exponent (the internal step's, once it
    moved to the largest products) and how far below it C reaches."""
    E = home_exponent(ctx.a_fmt, ctx.b_fmt)
    if "internal" in ctx.findings:
        E = ctx.findings["internal"].values.get("home", E)
    _, cmin, _ = exp_range(ctx.c_fmt)
    csub, _, _ = exp_range(ctx.c_fmt)
    emax = min(60, E - csub)
    return E, emax


def _one_term_finding(ctx, E, fits, bt, w, vis, shown) -> Finding:
    ev = [bt.evidence(i, [w[i]]) for i in range(min(len(bt), 4))]
    notes = [f"no two lanes keep C = 2^(E-e) past the output's {vis} bits: every pair straddles "
             "blocks (blocks of 1); the window is read from C beside one product"]
    values = {"home": E, "same_block_pairs": [], "one_term_fits": fits, "c_shown": shown}
    lo, hi = fits[0], fits[-1]
    if fits == [None]:
        values["window_bits"] = None
        values["undetermined"] = {"window_bits": (
            "exact: no cut; C beside one product keeps its last bit at every depth C reaches "
            "(no window of 0 to 56 bits gives these words)")}
        values["assumed"] = {"window_bits": None}
        values["probe_window"] = PARAM["window_bits"].hi
        return Finding("internal", "found", f"C beside one +2^{E} product (blocks of 1): no "
                       "window cuts C at any depth: the sum is exact", values, ev, notes)
    if lo == hi:
        values["window_bits"] = lo
        return Finding("internal", "found",
                       f"C beside one +2^{E} product (blocks of 1): the accumulator keeps F = {lo} "
                       "fraction bits below the block's anchor", values, ev, notes)
    values["window_bits"] = None
    span = (f"{lo} to {hi}" if hi is not None and hi < 56 else f"at least {lo}"
            + (" (or exact)" if hi is None else ""))
    values["undetermined"] = {"window_bits": (
        f"{span}: with C beside one product (blocks of 1) every window in {fits} gives "
        "the same words on the step's cases (C at every depth against +2^E, as a borrow and as "
        "output ties)")}
    values["assumed"] = {"window_bits": lo}
    return Finding("internal", "partial", f"C beside one +2^{E} product (blocks of 1): the window "
                   f"is {span} fraction bits", values, ev, notes)


def run(ctx) -> Finding:
    dp = ctx.dp
    k = dp.k
    seen = ctx.require("visible").values
    vis = max(seen.get("visible_bits", 0), seen.get("visible_bits_neg", 0))
    E, emax = setup(ctx)
    if k < 2:
        return Finding("internal", "skipped", "K = 1: no two products to cancel")
    pairs = [(i, i + 1) for i in range(0, min(k - 1, 8), 2)]
    pairs += [(0, k - 1), (k // 2 - 1, k // 2)]
    pairs = list(dict.fromkeys(p for p in pairs if p[0] != p[1]))
    if ctx.dp.sparse:  # pairs that can be active together (sparse tf32 keeps one of each pair)
        pairs = [(i, j + 1 if not ctx.co_active((i, j)) and j + 1 < k else j) for i, j in pairs]
        pairs = list(dict.fromkeys(p for p in pairs if ctx.co_active(p)))
    if c_limited(ctx, E, emax):  # C's type (converted on entry) holds too few exponents
        found = internal_products.run(ctx, pairs, seen.get("visible_bits", vis), _span(ctx))
        shows = seen.get("visible_bits", vis)
        if found is not None and found.values.get("window_bits") is not None \
                and shows - 1 <= found.values["window_bits"] <= vis:
            # every run ended where the output's own bits end: the pairs may
            # straddle blocks (blocks of 1 round 2**E alone to the output); C
            # beside one product, or a block result passed on to a later
            # block, as deep as a borrow or a tie shows
            F = found.values["window_bits"]
            v = seen.get("visible_bits", vis)
            fits, bt1, w1 = one_term(ctx, found.values["home"], v)
            how = "C beside one product reaches deeper"
            chained = internal_products.chained_run(ctx, v)
            if chained is not None and chained[0] > F + 1:
                run, tried, bt1, w1 = chained
                hi = PARAM["window_bits"].hi
                fits = ([None] if run > hi else [run] if run < tried
                        else [*range(run, hi + 1), None])
                how = (f"a block result passed on to +2^E in a later block keeps a borrow or a "
                       f"broken tie to depth {run}" + ("" if run < tried else " (as deep as "
                                                       "such a sum reaches)"))
            if fits and all(f is None or f > F for f in fits):
                one = _one_term_finding(ctx, found.values["home"], fits, bt1, w1, vis, emax)
                one.notes = [f"products alone: a third product below a cancelling pair is cut "
                             f"at {F} bits, no deeper than the output shows (every pair "
                             f"straddles blocks: blocks of 1); {how}"]
                if how.startswith("a block result"):
                    one.summary = one.summary.replace(
                        f"C beside one +2^{found.values['home']} product", "a block result "
                        "passed on to a later product")
                return one
        if found is not None:
            return found
    runs, bt, w, rows, refs, emax = sweep(ctx, pairs, E, emax)
    best = max(runs.values())
    notes = []
    if best <= vis:
        every = [(i, j) for i in range(k) for j in range(i + 1, k) if ctx.co_active((i, j))]
        more = at(ctx, every, E, best + 1)
        if not more and k > 1:
            # no two lanes share a block: measure the window with C and one product
            fits, bt1, w1 = one_term(ctx, E, seen.get("visible_bits", vis))
            if fits:
                return _one_term_finding(ctx, E, fits, bt1, w1, vis, emax)
        if more:
            r2, bt, w, rows, refs, emax = sweep(ctx, more[:4], E, emax)
            runs.update(r2)
            best = max(runs.values())
            notes.append(f"adjacent pairs straddle blocks; pairs {more[:4]} share one")
    # where C is added after the products, every pair keeps it as deep as C
    # shows (blocks cancel exactly, then C joins); a pair that loses it earlier
    # straddles blocks that C runs through: C meets the products
    straddle = best >= emax and min(runs.values()) < best
    first_runs = dict(runs)
    if best >= emax:
        # C survived at its smallest: the largest products set a higher anchor,
        # and C's smallest step may then fall below the window
        E2 = _top_exponent(ctx)
        emax2 = min(60, E2 - exp_range(ctx.c_fmt)[0])
        if E2 > E:
            notes.append(f"C at its smallest survives under +-2^{E} products; the largest, "
                         f"+-2^{E2}, anchor the window {E2 - E} bits higher")
            E = E2
            # the pairs that kept C at its smallest share a block (adjacent ones may not)
            kept = [p for p, n in runs.items() if n == best]
            runs, bt, w, rows, refs, emax = sweep(ctx, kept, E, emax2)
            best = max(runs.values())
            if best >= emax and min(runs.values()) < best:
                # C's smallest step one bit deeper: pairs that lose it here
                # straddle blocks C runs through (C meets the products)
                straddle, first_runs = True, dict(runs)
    same = sorted(p for p, n in runs.items() if n == best)
    i, j = same[0]
    shown = emax  # the deepest e whose C = 2**(E-e) alone shows in the output
    if best >= emax and emax < _span(ctx):
        ties = tie_run(ctx, (i, j), E, emax, seen.get("visible_bits", 0))
        if ties is not None and ties[0] > best:
            notes.append(f"C alone shows no bit below 2^{E - emax}; C's last bit breaking an "
                         f"output tie (RNE) or a borrow (RZ) survives to e = {ties[0]}")
            best, emax = ties  # found where the run stops short of C's last step
    ev = []
    for e in (best, best + 1):
        if (i, j, e) in rows:
            ev.append(bt.evidence(rows[(i, j, e)], [w[rows[(i, j, e)]], w[refs[e]]],
                                  "C survives (D = C alone)" if w[rows[(i, j, e)]] == w[refs[e]]
                                  else "C is cut (D differs from C alone)"))
    values = {"window_bits": best, "home": E, "same_block_pairs": [list(p) for p in same],
              "pair_runs": {f"{a},{b}": n for (a, b), n in runs.items()}, "c_shown": shown}
    cut = None
    if best >= emax:
        cut = products_cut(ctx, pairs, E, _chain_bits(ctx, seen.get("visible_bits", vis)),
                           () if straddle else same)
    if cut is not None:
        depth, triple = cut
        notes.append(f"products alone are cut: +-2^{E} in lanes {triple[0]}, {triple[1]} and "
                     f"2^({E}-e) in lane {triple[2]} keep it for e <= {depth} only, deeper than "
                     "a chained block's rounding keeps, while C survives every depth: C is not "
                     "in the products' window" if depth is not None else
                     f"products alone are cut: 2^({E}-e) in lane {triple[2]} beside +-2^{E} in "
                     f"lanes {triple[0]}, {triple[1]} (a pair that keeps C at every depth) is "
                     "lost past the chain's bits: C is not in the products' window")
    # (C in the blocks as deep as the widest window and more: the exact sum; a
    # shallower C leaves the window open, and the block step's split branch
    # tries an exact sum with C first among its readings)
    deep = emax > PARAM["window_bits"].hi
    # products spanning too few binades to show a cut (fp4 x fp4): C either
    # joins an exact sum or is added after the products; the block step's
    # split branch tells them apart on sums of products alone
    blind = (best >= emax and cut is None and not straddle
             and not _products_reach(ctx, E, _chain_bits(ctx, seen.get("visible_bits", vis))))
    if best >= emax and (emax >= _span(ctx) or straddle and deep) and cut is None and not blind:
        # no term of any case has a bit further below the anchor than this
        values["window_bits"] = None
        values["undetermined"] = {"window_bits": (
            f"at least {emax}: C's format cannot go lower, and no term has a bit more than "
            f"{_span(ctx)} bits below its block's anchor, so this window and every wider one "
            "give the same words on every input")}
        if emax < _span(ctx):
            values["undetermined"] = {"window_bits": (
                f"at least {emax}: C's format cannot go lower; C is in the products' blocks "
                f"(pairs {sorted(p for p, n in first_runs.items() if n < max(first_runs.values()))} "
                "lose it: they straddle blocks C runs through)")}
            notes.append("pairs in different blocks lose C: C meets the products (a C added "
                         "after them survives every cancellation)")
        # past the engine's widest window, the exact sum (the same words)
        values["assumed"] = {"window_bits": emax if emax <= PARAM["window_bits"].hi else None}
        values["probe_window"] = min(emax, PARAM["window_bits"].hi)
        where = "as far as any term reaches" if emax >= _span(ctx) else "in its block"
        return Finding("internal", "partial",
                       f"C = 2^-e survives the cancellation of +-2^{E} for every e up to {emax}, "
                       f"{where}: the window is at least {emax} bits", values, ev, notes)
    if best >= emax:
        values["undetermined"] = {"window_bits": f"at least {emax}: C's format cannot go lower"}
        values["window_bits"] = None
        # every window from here on (and the exact sum): where the model's
        # misses validation words, one that gives them all is taken
        # (ladder.validation.refit_ranges); never a range named checked, which
        # could hang on other open ranges (a floor)
        values["candidates"] = {"window_bits": [*range(emax, PARAM["window_bits"].hi + 1), None]}
        values["refit_only"] = ["window_bits"]
        values["c_outside_window"] = True
        values["c_survives"] = emax
        if straddle:  # C meets the products: these pairs straddle blocks C runs through
            values["straddling_pairs"] = sorted(
                list(p) for p, n in first_runs.items() if n < max(first_runs.values()))
        notes.append("a C this far below the products is never cut: either the window is that "
                     "wide, or C is added after the products (as in the compiler's split of "
                     "fp8 mma.sync into two HMMAs and an add); a single-window fingerprint "
                     "does not describe the latter")
        return Finding("internal", "partial",
                       f"C = 2^-e survives the cancellation of +-2^{E} for every e up to {emax}: "
                       f"the window is at least {emax} bits, or C is not in it", values, ev, notes)
    summary = (f"-2^{E} + 2^{E} + 2^({E}-e) keeps C for e <= {best}: the accumulator keeps "
               f"F = {best} fraction bits below the largest exponent"
               + (f" ({best - vis} more than the output shows)" if best > vis else ""))
    return Finding("internal", "found", summary, values, ev, notes)
