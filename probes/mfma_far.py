"""mfma's F past C's reach: a negative product far below a block's largest.
A helper of probes/mfma.py (not a step of its own).

C's depth beside a cancelled pair (probes/mfma.py) reads F while C =
2**(h - k) outlives the final floor. Past 2**(-126 - F2) (a subnormal C under
a small F2) every C is floored away whatever F is, so the depth read there is
F2's, not F's (seed 3704's xf32 truncated F = 533, F2 = 2 read F = 253).

A product is truncated toward zero instead (models/amd.py ``_fused``): in one
group, 2**H, -2**H and -2**(H - k) (the small one in the big one's parity, a
group of three or more lanes) beside C = +0 sum to nothing while k > F (the
small product cut away: +0) and to a negative value while k <= F, floored to
F2 bits but never to +0 (-0 at the least): the word's sign reads F whatever
F2 is. A group of two holds 2**H and -2**(H - k) beside C = -2**H: the same
for truncated (grouped sums those two lanes apart, each whole, so every depth
reads kept; the fit tells the designs apart). Read down to the smallest
product: H the largest power of two below 2**128 (truncated makes a product
of 2**128 an Inf), and the largest product where it is larger (grouped sums
products past f32's range).
"""

from __future__ import annotations

from tcprobe.models.words import pow2, product, zero

F32_TOP = 127  # the largest 2**H a truncated block sums (2**128 is an Inf)


def rows(bt, plan, groups) -> dict:
    """{H: [(rows {k: row}, kept)]}: the small negative product -2**(H - k) beside
    2**H (and -2**H, or C = -2**H in a group of two; or in a group of four beside
    a tie), k from 1 to the smallest product; ``kept(word)``: the small product
    reached the sum. Each in the last group of its size (no later join: a -0
    result turns +0 in the next block)."""
    def last(n):
        return next((g for g in reversed(groups) if len(g) >= n), None)

    g3, g4 = last(3), last(4)
    g = g3 or next((g for g in reversed(groups) if len(g) == 2), None)
    if g is None:
        return {}
    fd = plan.fd.frac_bits
    out = {}
    for h in sorted({min(plan.p_hi, F32_TOP), plan.p_hi}):
        big, neg = product(plan.fa, plan.fb, h), product(plan.fa, plan.fb, h, 1)
        if not big or not neg or big[2] != h:
            continue
        if len(g) >= 3:
            lanes, c = {g[0]: big[:2], g[1]: neg[:2]}, zero(plan.fd)
            small_lane, what = g[2], f"2^{h} - 2^{h} in one group, C = +0"
        else:
            lanes, c = {g[0]: big[:2]}, pow2(plan.fd, h, 1)
            small_lane, what = g[1], f"2^{h} in one group, C = -2^{h}"
            if c is None:
                continue
        reads = [({}, lambda w: bool(w >> (plan.fd.width - 1)))]  # negative: -0 at the least
        for k in range(1, h - plan.p_lo + 1):
            tiny = product(plan.fa, plan.fb, h - k, 1)
            if tiny:
                reads[0][0][k] = bt.add(f"{what}, and -2^{h - k}", {**lanes, small_lane: tiny[:2]}, c)
        # a tie above an odd last bit (2**H + 2**(H - fd) + 2**(H - fd - 1)) rounds up
        # unless the small product lowers it: a normal word whatever F2 (F2 >= fd + 1),
        # where the negative sum above would round to -0
        odd, half = product(plan.fa, plan.fb, h - fd), product(plan.fa, plan.fb, h - fd - 1)
        if g4 is not None and h <= F32_TOP and odd and half:
            tie = {g4[0]: big[:2], g4[1]: odd[:2], g4[3]: half[:2]}
            ref = bt.add(f"2^{h} + 2^{h - fd} + 2^{h - fd - 1} in one group (a tie)", tie,
                         zero(plan.fd))
            rows_t = {}
            for k in range(fd + 2, h - plan.p_lo + 1):
                tiny = product(plan.fa, plan.fb, h - k, 1)
                if tiny:
                    rows_t[k] = bt.add(f"a tie 2^{h} + 2^{h - fd} + 2^{h - fd - 1} and -2^{h - k}",
                                       {**tie, g4[2]: tiny[:2]}, zero(plan.fd))
            reads.append((rows_t, ref))
        out[h] = reads
    return out


def depth(rows_h: dict, words, kept) -> int | None:
    """The deepest k up to which every small product was kept (``kept(word)``, or a
    word other than the reference row's: the tie's); None: not at the first k."""
    if not callable(kept):
        ref = int(words[kept])
        kept = lambda w: w != ref  # noqa: E731 - the small product moved the tie
    d = None
    for k in sorted(rows_h):
        if not kept(int(words[rows_h[k]])):
            return d
        d = k
    return d


def window(window, far: dict, words, pair_only: bool, c_normal: bool):
    """(F, its rows {k: row} or None, F values to try): the far products' depth
    where it reads deeper than ``window``, C's depth, and C's depth may have
    stopped at F2's floor (not ``c_normal``: the C one bit deeper is subnormal
    or absent; a C still normal there was floored by F). Of H, the largest read only when
    the lower one kept every depth. ``pair_only`` (a group of two): grouped sums
    the two lanes apart (each truncated to F bits below its own exponent), so
    the window read before is tried too."""
    got, got_rows = None, None
    for h in sorted(far):  # each read stops short at worst (a kept product moves the word)
        reads = [(depth(r, words, kept), r) for r, kept in far[h] if r]
        reads = [(d, r) for d, r in reads if d is not None]
        if not reads:
            break
        d, r = max(reads, key=lambda x: x[0])
        got, got_rows = d, r
        if d < max(r):
            break
    if got is None or window is not None and (got <= window or c_normal):
        return window, None, (window,)
    return got, got_rows, (got, window) if pair_only and window is not None else (got,)


def floor_tries(window, c_next_row: bool, c_normal: bool, h: int, plan) -> tuple | None:
    """F values to fit where C's depth stopped at F2's floor (the C one bit deeper
    subnormal, ``c_next_row``: a row there) and no product read deeper: F is the
    depth read or more. C's floor to F bits below the largest product (2**top) binds
    until its unit reaches F2's floor below 2**-126, top - h bits past the read at
    2**h: the read and those after it, and the reach (every larger F)."""
    if window is None or c_normal or not c_next_row or window >= plan.reach:
        return None
    top = min(plan.p_hi, F32_TOP)
    last = min(window + max(top - h, 0) + 2, plan.reach)
    return tuple(range(window, last + 1)) + ((plan.reach,) if last < plan.reach else ())


def open_floor(cands, fits, opened, reach) -> list:
    """The fits of :func:`floor_tries`' F values with the lowest F; where the reach
    fits too, F named open from that lowest one (in ``opened``)."""
    fs = sorted({cands[f].window for f in fits})
    if fs[-1] == reach:
        opened["window"] = ((fs[0], None), f"C's depth stopped at F2's floor; every F from "
                            f"{fs[0]} tried, to the reach, gives the step's words")
    return [f for f in fits if cands[f].window == fs[0]]
