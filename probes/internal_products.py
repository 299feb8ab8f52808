"""The internal step's window from products alone, where C cannot carry the
probe: C converted on entry to a narrow type (fp4, fp6, fp8: the cinput
step's view) holds no 2**(E-e) for the depths a window spans.

+2**E and -2**E in lanes i and j cancel; a third product 2**(E-e) in lane x
(C = 0) survives only while it lies inside the window of F fraction bits
below the anchor E, wherever the cancelling pair's anchor meets it: in the
pair's block, or in a block before the pair's (whose result, x itself, is
the next block's addend), or between the two lanes (the first block's 2**E
is x's addend, and its rounding keeps x only as deep as the output does).
Where x runs in a block after the pair, the pair has cancelled exactly and
x survives every depth. So every run that ends is at most F, and a run of
a pair sharing a block, or of an x before the pair, is F: the window is the
longest run that ends. Where no run ends, the window is at least as deep as
x reached (every wider window gives the same words, where that depth is as
far below an anchor as any term reaches).
"""

from __future__ import annotations

from tcprobe.models.engine import PARAM
from tcprobe.models.words import exp_range, pow2, product, product_range

from .common import Batch, Finding

# depths tried: past the engine's widest window (engine.PARAMS) and one more
MOST = PARAM["window_bits"].hi + 2


def c_limited(ctx, E: int, emax: int) -> bool:
    """Whether C's type (the cinput step's view) lacks 2**(E-e) for some depth
    e the internal sweep needs (a missing C word would be read as +0)."""
    return ctx.model_dp is not ctx.dp and any(
        pow2(ctx.c_fmt, E - e) is None for e in range(1, emax + 1))


def _home(ctx) -> tuple[int, list[int]] | None:
    """(E, the depths e with a product 2**(E-e) the output shows alone): the
    E with +-2**E products that reaches deepest."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    lo, hi = product_range(fa, fb)
    dsub, _, dmax = exp_range(ctx.d_fmt)
    best = None
    for E in range(min(hi, dmax - 1), lo, -1):
        if product(fa, fb, E, 0) is None or product(fa, fb, E, 1) is None:
            continue
        depths = [e for e in range(1, MOST + 1) if E - e >= max(lo, dsub)
                  and product(fa, fb, E - e, 0) is not None]
        if best is None or len(depths) > len(best[1]):
            best = (E, depths)
        if len(depths) >= MOST:
            break
    return best


def run(ctx, pairs, vis: int, span: int) -> Finding | None:
    """The internal step's finding from products alone (None where no product
    lies below another)."""
    home = _home(ctx)
    if home is None or not home[1] or ctx.dp.k < 3:
        return None
    E, depths = home
    fa, fb = ctx.a_fmt, ctx.b_fmt
    plus, minus = product(fa, fb, E, 0), product(fa, fb, E, 1)
    k = ctx.dp.k
    triples = list(dict.fromkeys((i, j, x) for i, j in pairs for x in range(k)
                                 if x not in (i, j) and ctx.co_active((i, j, x))))
    if not triples:
        return None
    bt = Batch(ctx.dp)
    small = {e: product(fa, fb, E - e, 0)[:2] for e in depths}
    refs = {(x, e): bt.add(f"lane {x}: 2^{E - e} alone", {x: small[e]})
            for x in sorted({t[2] for t in triples}) for e in depths}
    rows = {(t, e): bt.add(f"lane {t[0]}: +2^{E}, lane {t[1]}: -2^{E}, lane {t[2]}: 2^{E - e}",
                           {t[0]: plus[:2], t[1]: minus[:2], t[2]: small[e]})
            for t in triples for e in depths}
    w = ctx.run(bt.cases())
    mask = (1 << (ctx.d_fmt.width - 1)) - 1
    shown = [e for e in depths if all(int(w[refs[(x, e)]]) & mask for x in {t[2] for t in triples})]
    if not shown or shown[0] != 1:
        return None
    deepest = 0
    for e in shown:  # the run of depths every x shows alone at
        if e != deepest + 1:
            break
        deepest = e
    runs = {}
    for t in triples:
        n = 0
        for e in range(1, deepest + 1):
            if w[rows[(t, e)]] != w[refs[(t[2], e)]]:
                break
            n = e
        runs[t] = n
    ended = {t: n for t, n in runs.items() if n < deepest}
    values = {"home": E, "c_shown": deepest, "products_window": True,
              "triple_runs": {",".join(map(str, t)): n for t, n in runs.items()}}
    notes = [f"C's type ({ctx.c_fmt.name}) holds no 2^({E}-e) deep enough: the window is read "
             "from products alone (C = 0), a third product below a cancelling pair"]
    t0 = max(ended, key=ended.get) if ended else triples[0]
    e0 = min(runs[t0] + 1, deepest)
    ev = [bt.evidence(rows[(t0, e0)], [w[rows[(t0, e0)]], w[refs[(t0[2], e0)]]],
                      "a third product below +-2^E: kept (D = it alone) or cut")]
    if ended:
        F = max(ended.values())
        values["window_bits"] = F
        values["same_block_pairs"] = [list(p) for p in sorted({t[:2] for t, n in ended.items()
                                                               if n == F})]
        after = _c_after(ctx, [t[:2] for t, n in ended.items() if n == F], F)
        if after is not None:
            values["c_outside_window"] = True
            values["c_survives"] = after
            notes.append(f"C = 1 survives +-2^e cancelling in a pair that cuts a product "
                         f"2^(E-{F + 1}), down to e = {after}: C is not in the products' window")
        return Finding("internal", "found",
                       f"+2^{E} - 2^{E} + 2^({E}-e) from products alone (C's type is too narrow) "
                       f"keeps the small product for e <= {F}: the accumulator keeps F = {F} "
                       "fraction bits below the largest exponent"
                       + (f" ({F - vis} more than the output shows)" if F > vis else ""),
                       values, ev, notes)
    values["window_bits"] = None
    reach = ("as far below an anchor as any term reaches" if deepest >= span else
             "as deep as a product the output shows alone reaches")
    values["undetermined"] = {"window_bits": (
        f"at least {deepest}: a product 2^({E}-e) below a cancelling pair survives every depth "
        f"e <= {deepest}, {reach} (C's type, {ctx.c_fmt.name}, cannot go deeper)")}
    values["assumed"] = {"window_bits": deepest if deepest <= 56 else None}
    values["probe_window"] = min(deepest, 56)
    return Finding("internal", "partial",
                   f"a product 2^({E}-e) survives the cancellation of +-2^{E} for every e up to "
                   f"{deepest}: the window is at least {deepest} bits", values, ev, notes)


def _c_after(ctx, pairs, F: int) -> int | None:
    """Whether C escapes the window that cuts a third product: C = 1 (every
    float type holds it) beside +-2**e in pairs whose blocks cut 2**(E-F-1),
    for e = F+1 .. F+4; the deepest e where C survives in every pair, if C
    survives past F (C added after the products), else None."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    one = pow2(ctx.c_fmt, 0)
    depths = [e for e in range(F + 1, F + 5) if product(fa, fb, e, 0) is not None
              and product(fa, fb, e, 1) is not None]
    if one is None or not depths or not pairs:
        return None
    bt = Batch(ctx.dp)
    ref = bt.add("C = 1 alone", {}, one)
    rows = {(p, e): bt.add(f"lane {p[0]}: +2^{e}, lane {p[1]}: -2^{e}, C = 1",
                           {p[0]: product(fa, fb, e, 0)[:2], p[1]: product(fa, fb, e, 1)[:2]},
                           one) for p in sorted(set(pairs))[:4] for e in depths}
    w = ctx.run(bt.cases())
    kept = [e for e in depths if all(w[r] == w[ref] for (_, ee), r in rows.items() if ee == e)]
    return max(kept) if kept and kept == depths[:len(kept)] else None


def chained_run(ctx, vis: int):
    """Blocks of 1 from products alone (C = 0): a block result passed on
    meets +2**E in a later block, whose window cuts its deep bits. A borrow:
    -2**(E-d) beside +2**E (in either order), which an RZ output shows as the
    word below 2**E while the window keeps it (against 2**E alone). Where no
    borrow shows (RNE, RNA), a broken tie: with the output keeping p bits (p
    of vis - 1, vis), -2**(E-2-p) and -2**(E-2-p-k), k <= p (the output
    passes their sum on exactly), in two lanes and +2**E in a third, x: a
    tie of the binade below 2**E broken by a bit at depth d = p+2+k, shown
    only while the window keeps it (against the tie alone), and only where x
    runs after the other two (every other order rounds the tie to 2**E
    first), so the longest run over x counts. Returns (the largest d up to
    which every depth past vis + 1 shows, the deepest d tried, the batch,
    its words) or None where no product reaches."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    k = ctx.dp.k
    lo, hi = product_range(fa, fb)
    if k < 3:
        return None
    E = min(hi, exp_range(ctx.d_fmt)[2] - 1)
    while E > lo and (product(fa, fb, E, 0) is None or product(fa, fb, E, 1) is None):
        E -= 1
    depths = [d for d in range(vis + 2, MOST + 1) if product(fa, fb, E - d, 1) is not None]
    if product(fa, fb, E, 0) is None or not depths:
        return None
    plus = product(fa, fb, E, 0)[:2]
    bt = Batch(ctx.dp)
    borrow, tie_rows = {}, {}  # depth -> [(row, reference row)]
    reach, first = {}, {}  # p -> the deepest d its rows go to; its rows at d = p + 3
    for x in range(k):
        i, j = [n for n in range(k) if n != x][:2]
        if not ctx.co_active((i, j, x)):
            continue
        ref = bt.add(f"lane {x}: +2^{E} alone", {x: plus})
        for d in depths:
            borrow.setdefault(d, []).append((bt.add(
                f"lane {i}: -2^{E - d}, lane {x}: +2^{E}",
                {i: product(fa, fb, E - d, 1)[:2], x: plus}), ref))
        for p in sorted({vis - 1, vis}):
            half = product(fa, fb, E - 2 - p, 1)
            if p < 1 or half is None:
                continue
            tie = bt.add(f"lane {i}: -2^{E - 2 - p}, lane {x}: +2^{E}", {i: half[:2], x: plus})
            for d in depths:
                deep = product(fa, fb, E - d, 1)
                if p + 2 < d <= 2 * p + 2 and deep is not None:
                    reach[p] = max(reach.get(p, d), d)
                    tie_rows.setdefault(d, []).append((bt.add(
                        f"lane {i}: -2^{E - 2 - p}, lane {j}: -2^{E - d}, lane {x}: +2^{E}",
                        {i: half[:2], j: deep[:2], x: plus}), tie))
                    if d == p + 3:
                        first.setdefault(p, []).append(tie_rows[d][-1])
    if not borrow:
        return None
    w = ctx.run(bt.cases())

    def longest(rows, first):
        """The deepest d of an unbroken run of depths that show, from first."""
        run = first - 1
        for d in range(first, max(rows) + 1):
            if d not in rows or not any(w[r] != w[ref] for r, ref in rows[d]):
                break
            run = d
        return run

    run = longest(borrow, vis + 2)
    if run > vis + 1:
        return run, max(borrow), bt, w
    # a tie broken at depth p + 3 first (k = 1): p is vis - 1 or vis
    shows = [d for d in (vis + 2, vis + 3) if d in tie_rows and longest(tie_rows, d) >= d]
    if not shows:
        return None
    # the depths tried are those of a p whose tie breaks at all: rows of a
    # p past the output's half ulp never show, and a run that ends where
    # the working p's rows end is as deep as the probe reaches, not a cut
    works = [reach[p] for p in reach if any(w[r] != w[ref] for r, ref in first.get(p, ()))]
    return longest(tie_rows, shows[0]), max(works or tie_rows), bt, w
