"""block: which products are fused in one window before a rounding, and in
which order the blocks are consumed.

With E the probe exponent and F the window:

- same(i, j) when F is at least two bits past the visible precision: +2**E in lane i,
  -2**E in lane j, C = 2**(E-F). Fused, they cancel and C survives at the
  window's edge; in two blocks the first one rounds 2**E + C into the output
  and C is lost. (Where the output rounds 2**(E-F) alone to zero, C is the
  deepest power of two that it shows, still inside the window.)
- first(P, Q), to order those blocks: +2**E in P, -2**E in Q and C half an
  output ulp of 2**E; +2**E + C ties (or is cut) back to 2**E, -2**E + C is
  exact, so C survives exactly when Q's block comes first.
- before(i, j) when the window is no wider than the output: C = 2**(E-3) +
  2**(E-2-F), -2**(E-2) in lane i, +2**E in lane j. If i's block comes first
  C joins a negative sum exactly, and the later cut at 2**(E-F) rounds that
  sum toward zero (C up); otherwise C alone is cut (down).
- where(i; j, l), a fallback order test with C = 2**s (s = E-F-1), 2**s in
  lane i and +-2**E in a pair j, l of one block: before -> 2**(s+1), after
  -> 2**s.

The blocks, in order, give the block size L and the K order (in the lane
names of the measured layout); every later step's model runs with them.

Where the internal step found C outside the window (C survives every
cancellation), C cannot probe blocks: :mod:`.split` probes with products
instead and finds the sub-MMAs and the add of C (fp8 mma.sync emulation).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcprobe.models.engine import PARAM
from tcprobe.models.words import pow2, product, word

from .common import Batch, Finding, StepInfo, window
from .internal import setup

STEP = StepInfo(
    order=100, title="block size: products fused before a rounding", needs_layout=True,
    engine=True, fingerprint=True
)


def run(ctx) -> Finding:
    K = ctx.dp.k
    notes = []
    if ctx.require("internal").values.get("c_outside_window"):
        from .split import run as split_run  # C never meets the products: sub-MMAs

        found = split_run(ctx)
        if (("block_size" in found.values and not _contradicts(ctx, found))
                or "probe_window" in found.values or not _c_inside(ctx)):
            return found
        notes.append(f"{found.summary}: C is taken inside a window as deep as it survives")
        notes += [f"(the split branch left {key} open: {why})"
                  for key, why in found.values.get("undetermined", {}).items()
                  if key in ("k_order", "block_size")]
    ctx.require("internal")
    F = window(ctx)
    # a D word shows at most its format's fraction bits: one more visible bit
    # is a tie rounded away (RNA), and the edge bit 2**(E-F) of F >= frac + 2
    # stays hidden in both orders there too
    seen = ctx.require("visible")
    vis = min(seen.values.get("visible_bits", 0), ctx.d_fmt.frac_bits)
    if seen.status == "partial" and F is not None:
        # the visible probe ran out of products (C small, products large: a
        # narrow C type): every bit it reached showed, and the output shows
        # the window's bits as far as it keeps them
        vis = max(vis, min(F, ctx.d_fmt.frac_bits))
    if F is None:
        return Finding("block", "skipped", "the window is not known, so no block probe can be "
                       "placed at its edge", {"undetermined": {"block_size": "window unknown"}})
    if K == 1:
        return Finding("block", "found", "K = 1: one product per instruction", {"block_size": 1})
    E, _ = setup(ctx)
    s = E - F - 1
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    plus, minus = product(fa, fb, E, 0), product(fa, fb, E, 1)
    small = product(fa, fb, s, 0)
    c_s, c_s1 = pow2(fc, s), pow2(fc, s + 1)
    # 2**E + 2**(E-F) shows at the output when F is within the visible precision
    # (vis); 2**E - 2**(E-F) needs one bit less, below a power of two. same() needs
    # neither to show (F >= vis + 2); before() needs the window's last bit to show.
    # the internal step's deepest C that shows alone (an output keeping few
    # bits rounds a C at the window's edge to zero)
    depth = min(F, ctx.require("internal").values.get("c_shown", F))
    # one bit past the output's (C's type goes no deeper): +2**E first drops
    # or doubles C, -2**E first keeps it (one more bit below a power of two),
    # so a pair shares a block only where both signs keep C
    both = depth == vis + 1 and depth == F and ctx.model_dp is not ctx.dp
    c_edge = pow2(fc, E - depth) if depth >= vis + 2 or both else None
    t1_ok = c_edge is not None and (F >= vis + 2 or both)
    t2_ok = small is not None and c_s is not None and c_s1 is not None
    ev = []
    values = {"undetermined": {}}

    if t1_ok:
        blocks, ev1 = _partition_same(ctx, K, E, F, plus, minus, c_edge, both)
        ev += ev1[:4]
        method = "cancellation at the window's edge"
        order_known = len(blocks) == 1
        # C half an output ulp of 2**E; where RNA rounds a tie away, one more
        # bit shows than the output keeps, and half its ulp is 2**(E - vis)
        for c_exp in (E - vis - 1, E - vis):
            c_tie = pow2(fc, c_exp)
            if len(blocks) > 1 and not order_known and c_tie is not None:
                tied, order_known, ev2 = _order_tie(ctx, blocks, E, c_exp, plus, minus, c_tie)
                if order_known:
                    blocks = tied
                    ev += ev2
        if len(blocks) > 1 and not order_known and t2_ok:
            blocks, order_known, ev2 = _order(ctx, blocks, E, s, plus, minus, small, c_s, c_s1)
            ev += ev2
    elif 2 <= F <= vis + 1 and product(fa, fb, E - 2, 1) is not None and \
            word(fc, 0, (1 << (F - 1)) + 1, E - 2 - F) is not None:
        blocks, order_known, ev2 = _partition_cut(ctx, K, E, F)
        ev += ev2
        method = "which sum the window cuts: C before or after a larger negative term"
    elif K >= 3 and (split := _partition_products(ctx, K, E, F, plus, minus)) is not None:
        # C cannot carry the probe (a C converted to a narrow type holds too
        # few bits): products alone, a term below the window
        blocks, order_known, ev2 = split
        ev += ev2
        method = ("products alone: a term below the window, kept only where its block runs "
                  "after the cancelling pair's")
    else:
        why = f"no probe fits F = {F} with {fa.name} x {fb.name} products and a {fc.name} C"
        # no probe met C with the products either: where C joins them (in
        # the first block or added after the last) is as open as the blocks
        for key in ("block_size", "k_order", "c_join", "c_add_rounding"):
            values["undetermined"][key] = why
        return Finding("block", "partial", f"block structure not observable: {why}", values)

    if len(blocks) == 1 and K >= 3 and t1_ok and (
            ctx.d_fmt.width < 32 or ctx.d_fmt.width == 32 and _later_block(ctx, K, E, F, plus)):
        # an intermediate wider than the output (f32 under f16, f64 under
        # f32) holds C at the window's edge across blocks: products alone,
        # cut below the window (under an f32 D, K^3 cases only where K^2
        # show a term that outlasts a cancellation)
        split = _partition_products(ctx, K, E, F, plus, minus)
        if split is not None and len(split[0]) > 1:
            blocks, order_known, ev2 = split
            ev += ev2
            method = ("a product below the window, kept only where its block runs after the "
                      "cancelling pair's")
    if not order_known:
        blocks = sorted(blocks, key=min)
        values["undetermined"]["k_order"] = "the order of the blocks is not observable here"
        notes.append("the order of the blocks is not observable here; assumed by lane index")
    sizes = [len(b) for b in blocks]
    L = sizes[0]
    k_order = [k for b in blocks for k in sorted(b)]
    regular = all(x == L for x in sizes[:-1]) and sizes[-1] <= L
    if not regular:
        notes.append(f"blocks of unequal size {sizes}: the engine's blocks cannot express this")
    values["block_size"] = L
    values["k_order"] = None if k_order == list(range(K)) else k_order
    values["blocks"] = [sorted(b) for b in blocks]
    if values["k_order"] is None:
        where = "in K order"
    else:
        where = f"K consumed in the order {k_order}"
    if len(blocks) == 1:
        summary = f"all {K} products are fused in one block ({method})"
    else:
        summary = (f"{len(blocks)} blocks of {L} products, chained through the output format, "
                   f"{where} ({method})")
    return Finding("block", "found" if regular else "partial", summary, values, ev, notes)


def _contradicts(ctx, found) -> bool:
    """Whether the split branch's reading contradicts the internal step's
    pairs that lose C (C meets the products, and those pairs sit in two
    blocks): C added after the products, or such a pair in one block."""
    pairs = ctx.findings["internal"].values.get("straddling_pairs")
    if not pairs:
        return False
    if found.values.get("split") or found.values.get("c_join") == "last":
        return True
    blocks = found.values.get("blocks") or []
    return any(i in b and j in b for i, j in pairs for b in blocks)


def _c_inside(ctx) -> bool:
    """Where no split of K into sub-MMAs fits, the other reading of a C that
    survives every cancellation: the window is at least as deep as C shows,
    C in its first block. The internal step's finding is rebuilt to say so
    (its values, summary and notes agree from here on; the window stays named
    open). False where the depth is unknown."""
    internal = ctx.findings["internal"]
    depth = internal.values.get("c_survives")
    if depth is None:
        return False
    hi = PARAM["window_bits"].hi
    values = {**internal.values, "c_outside_window": False,
              "assumed": {**internal.values.get("assumed", {}),
                          "window_bits": depth if depth <= hi else None},
              "probe_window": min(depth, hi), "c_taken_inside": True}
    F = internal.values.get("window_bits")
    if internal.values.get("products_window") and F is not None and depth > F:
        # products alone are cut at F bits, C survives deeper: C inside their
        # window contradicts that, and C added after fits no split either
        why = (f"C survives {depth} bits below a cancelling pair where products alone are cut "
               f"at {F}, yet no split with C added after reproduces the products' sums")
        values["undetermined"] = {**values.get("undetermined", {}),
                                  "c_join": why, "c_add_rounding": why}
    head = internal.summary.split(": the window")[0]
    ctx.findings["internal"] = replace(
        internal, values=values,
        summary=(f"{head}: no split of K into sub-MMAs reproduces the products' sums (block "
                 f"step), so C is in the first block of a window of at least {depth} bits"),
        notes=[*internal.notes, "no split of K into sub-MMAs reproduces the products' sums "
               f"(block step): C is taken inside a window of at least {depth} bits"])
    return True


def _partition_same(ctx, K, E, F, plus, minus, c_edge, both=False):
    """Blocks by same(i, j): lane 0's block, then the next unplaced lane's, ...
    (a lane that can never be active with i, such as the other half of a
    sparse tf32 pair, is tested against another lane of i's block)."""
    left = list(range(K))
    blocks, ev = [], []
    while left:
        i = left[0]
        direct = [j for j in left[1:] if ctx.co_active((i, j))]
        block, w, rows, bt, ref = _same_rows(ctx, [(i, j) for j in direct], E, F, plus, minus,
                                             c_edge, both)
        block = [i] + [j for (_, j) in block]
        rest = [j for j in left[1:] if j not in direct]
        if rest:
            pairs = []
            for j in rest:
                m = next((m for m in block[1:] if ctx.co_active((m, j))), None)
                if m is not None:
                    pairs.append((m, j))
            more, *_ = _same_rows(ctx, pairs, E, F, plus, minus, c_edge, both)
            block += [j for (_, j) in more]
        blocks.append(block)
        same = [r for (_, j), r in rows.items() if j in block][:1]
        other = [r for (_, j), r in rows.items() if j not in block][:1]
        for r in same:
            ev.append(bt.evidence(r, [w[r], w[ref]], "same block: C survives (= C alone)"))
        for r in other:
            ev.append(bt.evidence(r, [w[r], w[ref]], "different blocks: C is lost"))
        left = [x for x in left if x not in block]
    return blocks, ev


def _same_rows(ctx, pairs, E, F, plus, minus, c_edge, both=False):
    """The pairs (i, j) whose cancellation keeps C = 2**(E-F): one block
    (``both``: with +2**E in i and in j, each)."""
    bt = Batch(ctx.dp)
    ref = bt.add(f"C = 2^{E - F} alone", {}, c_edge)
    rows = {(i, j): bt.add(f"lane {i}: +2^{E}, lane {j}: -2^{E}, C = 2^{E - F}",
                           {i: plus[:2], j: minus[:2]}, c_edge) for i, j in pairs}
    swapped = {(i, j): bt.add(f"lane {i}: -2^{E}, lane {j}: +2^{E}, C = 2^{E - F}",
                              {i: minus[:2], j: plus[:2]}, c_edge) for i, j in pairs} if both else {}
    w = ctx.run(bt.cases())
    return ([p for p, r in rows.items() if w[r] == w[ref] and (not both or w[swapped[p]] == w[ref])],
            w, rows, bt, ref)


def _later_block(ctx, K, E, F, plus) -> bool:
    """Whether a term outlasts a cancellation, products beside C alone:
    C = -2**E, +2**E in lane j and 2**(E-F-2) in lane x. In one block (or
    wherever x runs with or before j) the window cuts x; x is kept only
    where its block runs after j's (a block result passed on in a type wider
    than the output). True where some x shows, or where C cannot be -2**E."""
    small = product(ctx.a_fmt, ctx.b_fmt, E - F - 2, 0)
    c = pow2(ctx.c_fmt, E, 1)
    if small is None or plus is None or c is None:
        return True
    bt = Batch(ctx.dp)
    for j in range(K):
        for x in range(K):
            if x != j and ctx.co_active((j, x)):
                bt.add(f"C = -2^{E}, lane {j}: +2^{E}, lane {x}: 2^{E - F - 2}",
                       {j: plus[:2], x: small[:2]}, c)
    if not len(bt):
        return True
    w = ctx.run(ctx.complete(bt.cases()))
    return bool(((w != 0) & ~ctx.is_neg_zero(w)).any())


def _partition_products(ctx, K, E, F, plus, minus):
    """Blocks from products alone (C = 0): +2**E in lane j, -2**E in lane m and
    2**(E-F-2) in lane x. x is cut wherever it shares a window with the
    +-2**E anchor (in j's or m's block, or in a block before both, whose
    result the later anchor cuts) and kept only where its block runs after
    both (the sum is then exactly 0). Lanes ranked by how many pairs they
    outlast are in block order; the blocks, in order, must predict every
    case. Where x never survives, one block (with two or more, x outlasts a
    pair of the first). None where no term shows alone or the ranking
    predicts some case wrong."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    small = product(fa, fb, E - F - 2, 0)
    if small is None or plus is None or minus is None:
        return None
    bt = Batch(ctx.dp)
    alone = {x: bt.add(f"lane {x}: 2^{E - F - 2} alone", {x: small[:2]}) for x in range(K)}
    rows = {(j, m, x): bt.add(f"lane {j}: +2^{E}, lane {m}: -2^{E}, lane {x}: 2^{E - F - 2}",
                              {j: plus[:2], m: minus[:2], x: small[:2]})
            for j in range(K) for m in range(j + 1, K) for x in range(K)
            if x not in (j, m) and ctx.co_active((j, m, x))}
    w = ctx.run(ctx.complete(bt.cases()))
    mask = (1 << (ctx.d_fmt.width - 1)) - 1
    if not all(int(w[r]) & mask for r in alone.values()):
        return None
    kept = {t: bool(w[r] == w[alone[t[2]]]) for t, r in rows.items()}
    if not any(kept.values()):  # (two blocks or more keep it after a pair of the first)
        r = next(iter(rows.values()))
        return [list(range(K))], True, [bt.evidence(r, [w[r]], "cut: one block")]
    count = dict.fromkeys(range(K), 0)
    for (_, _, x), k in kept.items():
        count[x] += k
    ranks = sorted(set(count.values()))
    blocks = [[x for x in range(K) if count[x] == c] for c in ranks]
    pos = {x: n for n, b in enumerate(blocks) for x in b}
    if any(k != (pos[x] > max(pos[j], pos[m])) for (j, m, x), k in kept.items()):
        return None
    if len(blocks) > 2 and len(blocks[0]) == 2 and all(len(b) == 1 for b in blocks[1:]):
        # blocks of 1: no pair runs before either of the first two lanes, so
        # no count tells them apart; [2, 1, 1, ...] is no engine's blocks
        blocks = _first_two(ctx, [[blocks[0][0]], [blocks[0][1]], *blocks[1:]], E, F)
    ev = [bt.evidence(r, [w[r], w[alone[t[2]]]], "kept: its block runs after both"
                      if kept[t] else "cut: it meets the +-2^E anchor")
          for t, r in ([x for x in rows.items() if kept[x[0]]][:1]
                       + [x for x in rows.items() if not kept[x[0]]][:1])]
    return blocks, True, ev


def _first_two(ctx, blocks, E, F) -> list:
    """Blocks of 1 whose first two lanes no count tells apart: the order the
    words of two products alone in them give (a product of significand 2 or
    more, aligned on its raw exponent sum, anchors one bit below the same
    value passed on as a block result, so a term at the window's edge is
    kept in one order and cut in the other): each order with every output
    rounding, kept bits and alignment; the other order where only it fits,
    else lane order."""
    from tcprobe.models.words import max_sig

    fa, fb = ctx.a_fmt, ctx.b_fmt
    a, b = blocks[0][0], blocks[1][0]
    first = _c_block(ctx, a, b)
    if first is not None:
        return blocks if first == a else [[b], [a], *blocks[2:]]
    rng = np.random.default_rng(ctx.seed + 23)
    bt = Batch(ctx.dp)
    for _ in range(400):
        big, small = (a, b) if rng.random() < 0.5 else (b, a)
        x = int(rng.integers(1 << fa.frac_bits, max_sig(fa) + 1))
        y = int(rng.integers(1 << fb.frac_bits, max_sig(fb) + 1))
        p = product(fa, fb, E - 1, int(rng.random() < 0.5), (x, y), (fa.frac_bits, fb.frac_bits))
        q = product(fa, fb, E - 1 - int(rng.integers(max(0, F - 3), F + 4)),
                    int(rng.random() < 0.5))
        if p is not None and q is not None:
            bt.add(f"lanes {big}, {small}: a product and a term near the window's edge",
                   {big: p[:2], small: q[:2]})
    if not len(bt):
        return blocks
    cs = bt.cases()
    words = ctx.run(cs)
    rest = [k for blk in blocks[2:] for k in blk]
    out = ctx.d_fmt.frac_bits
    vis = ctx.value("visible_bits", out)
    keeps = {None} | {v for v in (vis - 1, vis) if 0 <= v < out}
    cands = {(n, r, kb, al): {"block_size": 1, "k_order": tuple(order + rest),
                              "output_rounding": r, "output_frac_bits": kb, "align": al,
                              "window_bits": F}
             for n, order in enumerate(([a, b], [b, a])) for r in ("rz", "rne", "rna")
             for kb in keeps for al in ("raw", "normalized")}
    fits = {n for n, *_ in ctx.consistent(cs, words, cands)}
    return [[b], [a], *blocks[2:]] if fits == {1} else blocks


def _c_block(ctx, a, b):
    """Which of lanes a, b shares C's block (C first): C = 1, -1 in one lane
    and 2**-d in the other, d past the output's bits. The lane with -1 in
    C's block cancels C exactly and 2**-d survives; the other way, C + 2**-d
    rounds to 1 first and -1 then leaves 0 (or a rounded-up ulp). None where
    neither or both orders keep it (C added after the blocks)."""
    fa, fb = ctx.a_fmt, ctx.b_fmt
    one, minus = pow2(ctx.c_fmt, 0), product(fa, fb, 0, 1)
    d = ctx.d_fmt.frac_bits + 3
    tiny = product(fa, fb, -d, 0)
    if one is None or minus is None or tiny is None or not ctx.co_active((a, b)):
        return None
    bt = Batch(ctx.dp)
    ref = bt.add(f"lane {b}: 2^-{d} alone", {b: tiny[:2]})
    ref2 = bt.add(f"lane {a}: 2^-{d} alone", {a: tiny[:2]})
    ab = bt.add(f"C = 1, lane {a}: -1, lane {b}: 2^-{d}", {a: minus[:2], b: tiny[:2]}, one)
    ba = bt.add(f"C = 1, lane {b}: -1, lane {a}: 2^-{d}", {b: minus[:2], a: tiny[:2]}, one)
    w = ctx.run(bt.cases())
    kept_a, kept_b = bool(w[ab] == w[ref]), bool(w[ba] == w[ref2])
    return None if kept_a == kept_b else a if kept_a else b


def _partition_cut(ctx, K, E, F):
    """before(i, j) from where C's low bit is cut: C = 2**(E-3) + 2**(E-2-F),
    -2**(E-2) in lane i, +2**E in lane j. If i's block comes first, C joins a
    negative sum exactly and the later cut at 2**(E-F) rounds that sum toward
    zero, i.e. C up; otherwise C itself is cut down. The reference C = 2**(E-3)
    has no bit to cut, so its D is the same in any order."""
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    big = product(fa, fb, E, 0)
    neg = product(fa, fb, E - 2, 1)
    c = word(fc, 0, (1 << (F - 1)) + 1, E - 2 - F)
    c0 = pow2(fc, E - 3)
    bt = Batch(ctx.dp)
    rows = {}
    for i in range(K):
        for j in range(K):
            if i != j and ctx.co_active((i, j)):  # (sparse tf32 pairs never meet)
                lanes = {i: neg[:2], j: big[:2]}
                rows[(i, j)] = (bt.add(f"C = 2^{E - 3} + 2^{E - 2 - F}, lane {i}: -2^{E - 2}, "
                                       f"lane {j}: +2^{E}", lanes, c),
                                bt.add(f"C = 2^{E - 3}, lane {i}: -2^{E - 2}, lane {j}: +2^{E}",
                                       lanes, c0))
    w = ctx.run(bt.cases())
    before = np.zeros((K, K), bool)
    for (i, j), (r, ref) in rows.items():
        before[i, j] = w[r] != w[ref]
    blocks, consistent = _blocks_from_before(before, K)
    ev = []
    shown = [p for p in rows if before[p]][:1] + [p for p in rows if not before[p]][:1]
    for p in shown:
        r, ref = rows[p]
        ev.append(bt.evidence(r, [w[r], w[ref]], "lane i's block first: C rounds up"
                              if before[p] else "not first: C is cut down (= reference)"))
    return blocks, consistent, ev


def _blocks_from_before(before, K):
    """Blocks (classes of lanes neither before the other), in order."""
    same = ~before & ~before.T
    blocks, seen = [], set()
    for i in range(K):
        if i in seen:
            continue
        b = [j for j in range(K) if same[i, j]]
        seen.update(b)
        blocks.append(b)
    rank = {id(b): sum(before[b[0], c[0]] for c in blocks if c is not b) for b in blocks}
    blocks.sort(key=lambda b: -rank[id(b)])
    consistent = all(before[b[0], c[0]] for n, b in enumerate(blocks) for c in blocks[n + 1:])
    return blocks, consistent


def _order_tie(ctx, blocks, E, c_exp, plus, minus, c_tie):
    """first(P, Q) with +2**E in a lane of P, -2**E in a lane of Q and C =
    2**c_exp half an output ulp of 2**E: if P comes first, 2**E + C is a tie
    (or a cut) that lands on 2**E (the sum is 0) or, rounded away, on the
    next word (the sum is one ulp); if Q comes first, -2**E + C is exact (one
    bit more below a power of two) and C survives. Known where the pairs
    give one order."""
    bt = Batch(ctx.dp)
    ref = bt.add(f"C = 2^{c_exp} alone", {}, c_tie)
    rows = {}
    for n, p in enumerate(blocks):
        for q, b in enumerate(blocks):
            if n != q:
                x, y = next(((x, y) for x in p for y in b if ctx.co_active((x, y))), (p[0], b[0]))
                rows[(n, q)] = bt.add(f"lane {x}: +2^{E}, lane {y}: -2^{E}, "
                                      f"C = 2^{c_exp}", {x: plus[:2], y: minus[:2]},
                                      c_tie)
    w = ctx.run(bt.cases())
    first = {(n, q): bool(w[r] != w[ref]) for (n, q), r in rows.items()}  # else Q's came first
    nb = len(blocks)
    pre = {n: {q for q in range(nb) if q != n and first.get((n, q)) is False} for n in range(nb)}
    order = sorted(range(nb), key=lambda n: (len(pre[n]), min(blocks[n])))
    pos = {n: x for x, n in enumerate(order)}
    known = (len(first) == len(rows)
             and all(first[(n, q)] == (pos[n] < pos[q]) for (n, q) in rows))
    ev = []
    for (n, q), r in list(rows.items())[:2]:
        ev.append(bt.evidence(r, [w[r], w[ref]], "+ block first: the tie cuts C" if first.get((n, q))
                              else "- block first: C survives"))
    return [blocks[n] for n in order], known, ev


def _order(ctx, blocks, E, s, plus, minus, small, c_s, c_s1):
    """Order blocks with where(i; j, l) against every block of two or more lanes."""
    pairs = {n: tuple(ctx.together(2, b)) for n, b in enumerate(blocks)
             if len(b) >= 2 and ctx.together(2, b)}
    if not pairs:
        return blocks, False, []
    bt = Batch(ctx.dp)
    r_s1 = bt.add(f"C = 2^{s + 1} alone", {}, c_s1)
    r_s = bt.add(f"C = 2^{s} alone", {}, c_s)
    rows = {}
    for q, (j, m) in pairs.items():
        for n, b in enumerate(blocks):
            if n != q:
                i = next((x for x in b if ctx.co_active((x, j, m))), b[0])
                rows[(n, q)] = bt.add(f"C = 2^{s}, lane {i}: 2^{s}, lanes {j},{m}: +-2^{E}",
                                      {i: small[:2], j: plus[:2], m: minus[:2]}, c_s)
    w = ctx.run(bt.cases())
    before = {}
    for (n, q), r in rows.items():
        if w[r] == w[r_s1]:
            before[(n, q)] = True
        elif w[r] == w[r_s]:
            before[(n, q)] = False
    nb = len(blocks)
    # the blocks known to come before each block; sort by how many there are
    pre = {n: set() for n in range(nb)}
    for (n, q), b in before.items():
        if b:
            pre[q].add(n)
        else:
            pre[n].add(q)
    order = sorted(range(nb), key=lambda n: (len(pre[n]), min(blocks[n])))
    pos = {n: x for x, n in enumerate(order)}
    counts = sorted(len(v) for v in pre.values())
    known = (len(before) == len(rows) and counts == list(range(nb))
             and all(pos[m] < pos[n] for n in pre for m in pre[n]))
    ev = []
    for (n, q), r in list(rows.items())[:2]:
        ev.append(bt.evidence(r, [w[r]], "lane's block first" if before.get((n, q))
                              else "lane's block later"))
    return [blocks[n] for n in order], known, ev
