"""block: which products are fused in one window before a rounding, and in
which order the blocks are consumed.

With E the probe exponent, F the window and s = E - F - 1 (just below it):

- same(i, j) when F exceeds the output's precision: +2**E in lane i,
  -2**E in lane j, C = 2**(E-F). Fused, they cancel and C survives at the
  window's edge; in two blocks the first one rounds 2**E + C into the output
  and C is lost.
- before(i, j) when it does: C = 2**s, 2**s in lane i, 2**E in lane j.
  If i's block comes first, C and lane i add to 2**(s+1), which reaches the
  window of the later block and shows; otherwise both fall below 2**E's window.
  (Where only 2**E - 2**(E-F) shows, C and lane i are negative.)
- where(i; j, l), to order blocks, given a pair j, l of one block: C = 2**s,
  2**s in lane i, +-2**E in lanes j and l. Lane i's block before -> 2**(s+1),
  after -> 2**s, the same block -> 0.

The blocks, in order, give the block size L and the K order; a model with
them must reproduce every case.
"""

from __future__ import annotations

import numpy as np

from .common import Batch, Finding, pow2, product
from .internal import setup


def run(ctx) -> Finding:
    dp, K = ctx.dp, ctx.dp.k
    F = ctx.require("internal").values.get("window_bits")
    seen = ctx.require("visible").values
    vis = seen.get("visible_bits", 0)
    vneg = seen.get("visible_bits_neg", vis)
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
    c_edge, c_s, c_s1 = pow2(fc, E - F), pow2(fc, s), pow2(fc, s + 1)
    # 2**E + 2**(E-F) shows at the output when F is within the visible precision;
    # 2**E - 2**(E-F) needs one bit less (below a power of two), so same() holds
    # only when neither shows, and before() uses the sign that shows
    t1_ok = c_edge is not None and F > max(vis, vneg)
    sign = 0 if F <= vis else 1
    t2_ok = small is not None and c_s is not None and c_s1 is not None
    ev, notes = [], []
    values = {"undetermined": {}}

    if t1_ok:
        blocks, ev1 = _partition_same(ctx, K, E, F, plus, minus, c_edge)
        ev += ev1[:4]
        method = "cancellation at the window's edge"
        order_known = len(blocks) == 1
        if len(blocks) > 1 and t2_ok:
            blocks, order_known, ev2 = _order(ctx, blocks, E, s, plus, minus, small, c_s, c_s1)
            ev += ev2
    elif t2_ok:
        if sign:
            small, c_s = product(fa, fb, s, 1), pow2(fc, s, 1)
        blocks, order_known, ev2 = _partition_before(ctx, K, E, s, plus, small, c_s)
        ev += ev2
        method = "sums of two terms just below the window"
    else:
        why = (f"the window (F = {F}) is not wider than the {vis} visible bits and "
               f"{fa.name} x {fb.name} products cannot span the {F + 1} bits below it")
        values["undetermined"]["block_size"] = why
        values["undetermined"]["k_order"] = why
        return Finding("block", "partial", f"block structure not observable: {why}", values)

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
    # the model with these blocks must reproduce the cases run above
    return Finding("block", "found" if regular else "partial", summary, values, ev, notes)


def _partition_same(ctx, K, E, F, plus, minus, c_edge):
    """Blocks by same(i, j): lane 0's block, then the next unplaced lane's, ..."""
    left = list(range(K))
    blocks, ev = [], []
    while left:
        i = left[0]
        bt = Batch(ctx.dp)
        ref = bt.add(f"C = 2^{E - F} alone", {}, c_edge)
        rows = {j: bt.add(f"lane {i}: +2^{E}, lane {j}: -2^{E}, C = 2^{E - F}",
                          {i: plus[:2], j: minus[:2]}, c_edge) for j in left[1:]}
        w = ctx.run(bt.cases())
        block = [i] + [j for j, r in rows.items() if w[r] == w[ref]]
        blocks.append(block)
        same = [r for j, r in rows.items() if j in block][:1]
        other = [r for j, r in rows.items() if j not in block][:1]
        for r in same:
            ev.append(bt.evidence(r, [w[r], w[ref]], "same block: C survives (= C alone)"))
        for r in other:
            ev.append(bt.evidence(r, [w[r], w[ref]], "different blocks: C is lost"))
        left = [x for x in left if x not in block]
    return blocks, ev


def _partition_before(ctx, K, E, s, plus, small, c_s):
    """before(i, j) for every ordered pair; blocks are its equivalence classes."""
    bt = Batch(ctx.dp)
    refs = {j: bt.add(f"lane {j}: 2^{E} alone", {j: plus[:2]}) for j in range(K)}
    rows = {}
    for i in range(K):
        for j in range(K):
            if i != j:
                rows[(i, j)] = bt.add(f"C = 2^{s}, lane {i}: 2^{s}, lane {j}: 2^{E}",
                                      {i: small[:2], j: plus[:2]}, c_s)
    w = ctx.run(bt.cases())
    before = np.zeros((K, K), bool)
    for (i, j), r in rows.items():
        before[i, j] = w[r] != w[refs[j]]
    same = ~before & ~before.T
    blocks, seen = [], set()
    for i in range(K):
        if i in seen:
            continue
        b = [j for j in range(K) if same[i, j]]
        seen.update(b)
        blocks.append(b)
    # order: a block comes before every block its lanes precede
    rank = {id(b): sum(before[b[0], c[0]] for c in blocks if c is not b) for b in blocks}
    blocks.sort(key=lambda b: -rank[id(b)])
    consistent = all(before[b[0], c[0]] for n, b in enumerate(blocks) for c in blocks[n + 1:])
    ev = []
    for (i, j), r in list(rows.items())[:1]:
        ev.append(bt.evidence(r, [w[r], w[refs[j]]],
                              "lane i's block first: the pair reaches the window" if before[i, j]
                              else "no earlier block: both cut"))
    pick = [(p, r) for p, r in rows.items() if before[p]][:1]
    for (i, j), r in pick:
        ev.append(bt.evidence(r, [w[r], w[refs[j]]], "lane i's block first: 2^(s+1) survives"))
    return blocks, consistent, ev


def _order(ctx, blocks, E, s, plus, minus, small, c_s, c_s1):
    """Order blocks with where(i; j, l) against every block of two or more lanes."""
    pairs = {n: (b[0], b[1]) for n, b in enumerate(blocks) if len(b) >= 2}
    if not pairs:
        return blocks, False, []
    bt = Batch(ctx.dp)
    r_s1 = bt.add(f"C = 2^{s + 1} alone", {}, c_s1)
    r_s = bt.add(f"C = 2^{s} alone", {}, c_s)
    rows = {}
    for q, (j, l) in pairs.items():
        for n, b in enumerate(blocks):
            if n != q:
                i = b[0]
                rows[(n, q)] = bt.add(f"C = 2^{s}, lane {i}: 2^{s}, lanes {j},{l}: +-2^{E}",
                                      {i: small[:2], j: plus[:2], l: minus[:2]}, c_s)
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
