"""mfma's narrow windows: a truncated or grouped design whose F is below C's
24 bits. A helper of probes/mfma.py (not a step of its own).

Every join floors C to F bits below the larger of C and the products, so a
block's result loses its bits below F at the next block: the step's group
probe (C moved by one ulp) and its join probe (a tie broken upward) are
floored away unless they sit in the last block. Here:

* C alone, 24 bits set (:func:`c_alone_row`), no products: every block
  floors it, to min(F, F2) fraction bits (F2 >= 24 in a profile: F). Its
  word reads F directly; C whole means F >= 23 and the usual probes apply.
* groups (:func:`group_rows`): C = 2**(e + 1 + F) and products of 5/8 of u =
  2**(e + 1) (one unit of C's floor) each. A lane alone leaves less than u
  (5/8 of it, or 1/2 after the rounding into f32): the next block floors it
  away, the last block keeps it. Two lanes of one block leave at least u,
  which every later floor keeps. So lanes i < j are rounded together exactly
  when the pair's word differs from lane j's alone (:func:`groups`).

The window and join probes then use the last group of two or more lanes,
and one product's tail the last lane.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.words import pow2, product, word


def c_alone_row(bt, plan) -> tuple[int, int] | tuple[None, None]:
    """(row, C's word): C = 2**E (2 - 2**-23), all 24 bits set, no products."""
    c = word(plan.fd, 0, (1 << 24) - 1, plan.e_groups - 23) if plan.fd.frac_bits == 23 else None
    if c is None:
        return None, None
    return bt.add("C alone, 24 bits set", {}, c), c


def kept_bits(w: int, c: int) -> int | None:
    """The fraction bits a floored C kept (None: C came back whole)."""
    if w == c or (w >> 23) & 0xFF != (c >> 23) & 0xFF:
        return None
    sig = (w & 0x7FFFFF) | 0x800000
    return 23 - ((sig & -sig).bit_length() - 1)


def group_rows(bt, plan, q: int) -> dict:
    """Every lane alone and every pair of lanes, products 5/8 of C's floor unit."""
    e = plan.t
    p = product(plan.fa, plan.fb, e, 0, (5, 1), (2, 0))  # 1.25 * 2**e = 5/8 * 2**(e + 1)
    c = pow2(plan.fd, e + 1 + q)
    if not p or c is None:
        return {}
    rows = {(i,): bt.add(f"lane {i}: 5/8 of C's floor unit", {i: p[:2]}, c) for i in range(plan.k)}
    for i in range(plan.k):
        for j in range(i + 1, plan.k):
            rows[i, j] = bt.add(f"lanes {i}, {j}: 5/8 of C's floor unit each",
                                {i: p[:2], j: p[:2]}, c)
    return rows


def ulp_groups(ctx, plan, seen: list) -> tuple[list, list, np.ndarray]:
    """(groups, rows, words) where no pair of 3/8 ulp moved C: F2 = 23 floors the
    sum to whole ulps (C keeps its 24 bits, so C alone reads no narrow F). Products of
    5/8 ulp: a lane alone floored away in every block, two in one block 5/4 ulp,
    floored to one. Only where every lane alone leaves C (else ``seen`` stands: a
    rounding keeps 5/8 ulp alone, and a pair of blocks of one would read together)."""
    from .common import Batch

    bt = Batch(ctx.dp)
    q = plan.fd.frac_bits
    rows = group_rows(bt, plan, q)
    words = ctx.run(bt.cases()) if rows else np.zeros(0, np.uint64)
    c = pow2(plan.fd, plan.t + 1 + q)
    if rows and all(int(words[rows[(i,)]]) == c for i in range(plan.k)):
        return groups(plan.k, rows, words), bt.rows, words
    return seen, bt.rows, words


def groups(k: int, rows: dict, words) -> list[tuple[int, ...]]:
    """The partition of K into the lanes rounded together (the pair's word
    differs from the later lane's alone)."""
    together = {key for key, r in rows.items()
                if len(key) == 2 and int(words[r]) != int(words[rows[(key[1],)]])}
    return partition(k, together)


def partition(k: int, together: set) -> list[tuple[int, ...]]:
    """Lanes 0..k-1 grouped: each lane with the later lanes it was seen rounded
    together with (``together`` holds the pairs (i, j), i < j)."""
    out, seen = [], set()
    for i in range(k):
        if i in seen:
            continue
        g = tuple([i] + [j for j in range(i + 1, k) if (i, j) in together])
        seen.update(g)
        out.append(g)
    return out


def coarse_join_rows(bt, plan) -> dict:
    """{k: (row, C + 2**(E - k))}: C = 2**E and one product 2**(E - k) in the last
    lane, k from 1 to 23: the sum keeps it while k <= F2 (the join floors the
    products to F2 + 1 bits, the total to F2), whatever F (one product is its
    block's largest; C = 2**E loses nothing to its floor)."""
    e = min(plan.e_groups, plan.p_hi + 1)  # every product 2**(e - k) in the formats' range
    c = pow2(plan.fd, e)
    out = {}
    for k in range(1, plan.fd.frac_bits + 1):
        p = product(plan.fa, plan.fb, e - k)
        up = word(plan.fd, 0, (1 << k) + 1, e - k)
        if p and c is not None and up is not None:
            out[k] = (bt.add(f"C = 2^{e}, one product 2^{e - k} in the last lane",
                             {plan.k - 1: p[:2]}, c), up)
    return out


def windows(q: int, f2: int | None, f2_max: int) -> tuple[tuple[int, ...], int | None]:
    """(F values, F2) from C alone's min(F, F2) = q and the coarse join's F2
    (``f2`` read below ``f2_max``; None: F2 >= f2_max, the usual join reads it).
    F <= F2 + 1, so q = F2 leaves F = F2 or F2 + 1."""
    if f2 is None or f2 >= f2_max or q < f2:
        return (q,), None if f2 is None or f2 >= f2_max else f2
    return (q, q + 1), f2


def deep_join_rows(bt, plan) -> list:
    """Rows for the fit only: C = -2**E beside one product 1.75**2 * 2**(E - k)
    (3 after F = 0 truncation: two bits) in the last lane, k from 24 to 30: a
    tie against 2**E's ulp that F2 = 23, 24 and 25 or more break differently,
    where one product's tail (cut by F) reaches no deeper."""
    e = min(plan.e_groups, plan.p_hi + 1)
    c = pow2(plan.fd, e, 1)
    rows = []
    for k in range(plan.fd.frac_bits + 1, plan.fd.frac_bits + 8):
        p = product(plan.fa, plan.fb, e - k, 0, (7, 7), (2, 2))
        if p and c is not None:
            rows.append(bt.add(f"C = -2^{e}, one product 1.75^2 * 2^{e - k} in the last lane",
                               {plan.k - 1: p[:2]}, c))
    return rows
