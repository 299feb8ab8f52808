"""mfma: an AMD v_mfma datapath's design, measured from exact words.

NVIDIA's steps assume one fixed-point window over a block of products with
C inside it; MMA-Sim's measurements of AMD's CDNA matrix cores show other
designs (models/amd.py): an FMA chain, an exact sum of L products rounded
once, a tree of pairs with each sum rounded and subnormals flushed, blocks
truncated to F bits joined with C at F2 + 1 bits, and fp8's even/odd groups.
This step measures what tells them apart, each reading one device word
against another, then asks which design with the measured parameters
reproduces every word the step saw:

* groups: C = 2**E and two products of 3/8 of C's ulp each. Alone, or in
  separate roundings, each is lost (3/8 < 1/2); summed before one rounding
  they make 3/4 of an ulp and C moves up. Every pair of lanes, so the
  rounding groups (blocks) come out as a partition of K.
* window: two lanes of one group, C = -2**h, products 2**h and 2**(h-k): the
  small one survives as long as the group keeps k bits below its largest
  product (F for a truncated block; a rounded pair sum keeps its precision).
* join: C = 2**E, a product of exactly half C's ulp (a tie) and one of
  2**(E-k): the tie breaks upward as long as the small one reaches the final
  rounding (F2 + 1 bits below the larger of C and the products, in a
  truncated design); also through one product of a with its low bit set.
* join, deeper: 2**m products making the tie beside the small one carry a
  block's sum m bits past a pair (m = floor(log2(L - 1))).
* one-product blocks (probes/mfma_one.py: C's depth beside a tie, a product
  that is itself a tie, a NaN C that grouped drops), windows below C's 24
  bits (probes/mfma_narrow.py: C alone floored, groups through 5/8 of C's
  floor unit, a coarse join) and F past C's floor (probes/mfma_far.py: a
  negative product far below a block's largest) have helpers of their own.
* subnormals: a subnormal C, input and result (flushed or kept), and the
  specials: NaN in A, B, C, Inf * 0, Inf - Inf, an overflowing product.
* random: the validation mix from the probes' seed.

The models of the designs (models/amd.py, MMA-Sim's designs) are the
candidates; the ones that reproduce every word are reported. The ladder
then validates the one found on cases from another seed.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.amd import MfmaModel, MfmaParams, exact_bound
from tcprobe.models.cases import Cases
from tcprobe.models.words import exp_range, pow2, product, word
from tcprobe.suites.mix import random_cases

from . import mfma_far as far
from . import mfma_narrow as narrow
from . import mfma_one as one
from . import mfma_special as special
from .common import Batch, Finding, StepInfo

STEP = StepInfo(
    order=160,
    title="AMD v_mfma: the design (FMA chain, exact blocks, pair tree, truncated blocks)"
)

RANDOM = 160


def run(ctx) -> Finding:
    dp = ctx.dp
    if dp.family != "mfma":
        return Finding("mfma", "skipped", f"{dp.id} is not an AMD v_mfma datapath (the engine "
                       "steps measure NVIDIA's fixed-point window)")
    bt = Batch(dp)
    plan = _Plan(ctx)
    g_rows = _group_rows(bt, plan)
    alone_row, c_alone = narrow.c_alone_row(bt, plan)
    words = ctx.run(bt.cases())
    groups, alone_lost = _groups(dp.k, g_rows, words, plan.c_groups)
    plan.narrow = None if alone_row is None else narrow.kept_bits(int(words[alone_row]), c_alone)
    if plan.narrow is not None:  # F below C's 24 bits: blocks show through a coarser C
        bt_n = Batch(dp)
        n_groups = narrow.group_rows(bt_n, plan, plan.narrow)
        words_n = ctx.run(bt_n.cases())
        groups, alone_lost = narrow.groups(dp.k, n_groups, words_n), True
        bt.rows.extend(bt_n.rows)
        words = np.concatenate([words, words_n])
    elif alone_lost and dp.k > 1 and max(map(len, groups)) == 1:  # F2 = 23 floors 3/4 ulp too
        groups, rows_u, words_u = narrow.ulp_groups(ctx, plan, groups)
        bt.rows.extend(rows_u)
        words = np.concatenate([words, words_u])
    blocks = _blocks(groups, dp.k)
    bt2 = Batch(dp)
    w_rows = _window_rows(bt2, plan, groups)
    c_rows = _c_window_rows(bt2, plan, groups)
    # grouped's products reach past f32 (no Inf before the sum): C's depth below the largest
    c_far = _c_window_rows(bt2, plan, groups, plan.p_hi) if plan.p_hi > plan.h else {}
    f_rows = far.rows(bt2, plan, groups)  # a negative product far below: F past C's floor
    t_rows = one.c_tie_rows(bt2, plan)
    tc_rows = _tie_c_rows(bt2, plan, groups)
    tp_rows = one.tie_product_rows(bt2, plan)
    n_rows = one.nan_c_rows(bt2, plan, special.nan_word(plan.fd, 3))
    j_rows = _join_rows(bt2, plan, groups)
    s_rows = special.special_rows(bt2, plan)
    cj_rows = narrow.coarse_join_rows(bt2, plan) if plan.narrow is not None else {}
    if plan.narrow is not None:
        narrow.deep_join_rows(bt2, plan)
    probe = bt2.cases()
    rnd = random_cases(dp, RANDOM, ctx.rng)
    w2 = ctx.run(Cases.concat([probe, rnd]))
    sign = 1 << (plan.fd.width - 1)
    window_p = _depth(w_rows, w2, lambda w: w & ~sign != 0)  # the small product is left
    window_c = _depth({k: r for k, (r, _) in c_rows.items()}, w2, None,
                      {r: want for r, want in c_rows.values()})  # C is left whole
    window = window_c if c_rows else window_p
    if c_far and window_c is not None and window_c >= max(c_rows):
        far_c = _depth({k: r for k, (r, _) in c_far.items()}, w2, None,
                       {r: want for r, want in c_far.values()})
        if far_c is not None and far_c > window_c:
            window, c_rows = far_c, c_far
    # C's depth stopped by F2's floor (a subnormal C): a negative product far below reads F
    c_next = c_rows[window + 1][1] if window is not None and window + 1 in c_rows else 0
    c_normal = (c_next >> plan.fd.frac_bits) & ((1 << plan.fd.exp_bits) - 1) != 0
    window, f_used, f_tries = far.window(window, f_rows, w2, max(map(len, groups)) == 2,
                                         c_normal)
    if f_used is not None:
        c_rows = {k: (r, None) for k, r in f_used.items()}
    windows, f2_narrow = (f_tries if len(f_tries) > 1 else None), None
    if plan.narrow is not None:  # C alone kept min(F, F2) bits, the coarse join F2 below 23
        f2c = _depth({k: r for k, (r, _) in cj_rows.items()}, w2, None,
                     {r: want for r, want in cj_rows.values()})
        if f2c is None and min(cj_rows, default=0) == 1:  # not even 2**(E - 1): F2 = 0
            f2c = 0
        windows, f2_narrow = narrow.windows(plan.narrow, f2c, max(cj_rows, default=0))
        if len(windows) > 1 and window_c is not None and window_c >= windows[0]:
            windows = (window_c,)  # C alone stopped at F2's floor: C's depth read F itself
        if f_used is not None and window > windows[0]:
            windows = f_tries  # and C's depth at F2's floor too: the far product read F
        window = windows[0]
    f_floor = None
    if f_used is None and window == window_c and blocks and blocks > 1:
        h_c = plan.p_hi if c_rows is c_far else plan.h  # C's depth at F2's floor: F or more
        f_floor = far.floor_tries(window, window is not None and window + 1 in c_rows, c_normal,
                                  h_c, plan)
        windows = f_floor or windows
    join2 = _depth(j_rows["two"], w2, lambda w: w == plan.c_join_up)
    join_m = _depth(j_rows["many"], w2, lambda w: w == plan.c_join_up)
    two_reach = None if window is None or not j_rows["two"] else \
        min(max(j_rows["two"]), window + plan.fd.frac_bits + 1)
    if join_m is not None and join2 is not None and join2 >= two_reach:
        join2 = join_m  # the pair's tiny product reached no deeper: the many-product sum does
        plan.join_extra = j_rows["many_m"]
    join1 = _depth(j_rows["one"], w2, lambda w: w == plan.c_join_up)
    if windows is not None and f2_narrow is not None:  # F2 below 23: read by the coarse join
        join2 = join1 = f2_narrow
    values = {"groups": [list(g) for g in groups], "block": blocks, "window_kept": window,
              "window_kept_products": window_p, "join_kept": join2,
              "join_kept_one_product": join1, "join_kept_many": join_m,
              "subnormals": {label: f"{int(w2[r]):#x}" for label, r in s_rows.items()}}
    opened = _reach(plan, c_rows or w_rows, window,
                    j_rows["many"] if plan.join_extra else j_rows["two"], join2)
    if join2 is None and join1 is not None and window is not None and blocks and blocks > 1:
        join2 = join1  # the pair's join floored by a later block: one product's tail, last lane
        if join1 >= min(max(j_rows["one"]), window + plan.fd.frac_bits + 1):
            opened["window2"] = ((join1, None), f"one product's tail was kept down to 2^-{join1} "
                                 "below C, its block's F reaches no deeper; any larger F2 agrees")
    tie_c = _depth({k: r for k, (r, _) in tc_rows.items()}, w2, None,
                   {r: want for r, want in tc_rows.values()})
    values["tie_kept_c"] = tie_c
    if tie_c is not None and join2 is not None and tie_c > join2 and blocks and blocks > 1:
        # a tie of two products breaks on C far below: min(F, F2), deeper than the join
        if tie_c >= max(tc_rows):
            opened["window2"] = ((tie_c, None), f"a tie of two products broke on C down to "
                                 f"2^-{tie_c} below them, C's last bit; any larger F2 agrees")
        elif "window" in opened or tie_c < window:
            opened.pop("window2", None)
    else:
        tie_c = None
    single = None
    if blocks == 1:  # one product a block: no pair; C's depth and one product's tail instead
        window_t = _depth({k: r for k, (r, _) in t_rows.items()}, w2, None,
                          {r: want for r, want in t_rows.values()})
        tie = _depth({k: r for k, (r, _) in tp_rows.items()}, w2, None,
                     {r: want for r, want in tp_rows.values()})
        reads = {"window_t": window_t, "join1": join1, "tie": tie, "windows": windows,
                 "drop": one.nan_drop(n_rows, w2)}
        single = one.single(plan, reads, {"t": t_rows, "one": j_rows["one"], "tie": tp_rows})
        f2 = single[1] if single[1] is not None else join1
        if f2 is None and window_t is not None and plan.narrow is None:
            f2 = window_t - 1  # no tail kept past the tie: C's depth stopped at F2's floor
        f2 = min(f2) if isinstance(f2, tuple) else f2
        bt3 = Batch(dp)
        tail_rows = one.tail_rows(bt3, plan, f2) if f2 is not None else {}
        # C's depth beside a tie stopped at F2's floor and no tail reaches below it
        wide = not tail_rows and f2 is not None and reads["drop"] is None and \
            "window2" not in single[2] and (window_t is not None and window_t >= f2 + 1
                                            or plan.narrow is not None and plan.narrow >= f2)
        if tail_rows or wide:  # F past F2 + 1: one negative product's tail below F2's floor
            one.lift_rows(bt3, plan, f2)
            w3 = ctx.run(bt3.cases())
            bt.rows.extend(bt3.rows)
            words = np.concatenate([words, w3])
            tail = _depth(tail_rows, w3, lambda w: w & ~sign != 0) if tail_rows else f2 + 2
            fs, deep_open = one.deep(single[0], single[2], tail, tail_rows or {f2 + 2: None},
                                     f2, reads["drop"], plan.reach)
            if wide:  # every F from F2 + 1 a candidate, the lift rows the evidence
                fs = tuple(sorted(set(single[0]) | set(range(f2, plan.reach + 1))))
            single = (fs, single[1] if single[1] is not None else f2, deep_open)
            values["one_product_tail_kept"] = tail
        values["window_kept_c_tie"] = window_t
        values["one_product_reads"] = reads
        opened.update(single[2])
    ev = _evidence(bt, bt2, g_rows, w_rows, j_rows, s_rows, words, w2, groups)
    if not alone_lost:
        return Finding("mfma", "failed", "a product of 3/8 of C's ulp alone moves C: not a "
                       "round-to-nearest result, no AMD design of the model", values, ev)
    cases = Cases.concat([bt.cases(), probe, rnd])
    seen = np.concatenate([words, w2])
    ctx.mfma_words = (cases, seen)  # the step's cases and words (a judge proves open ranges on them)
    # F2 = 23 (F <= 24) drops the tie 24 bits below C that the join's first probe
    # breaks: a first depth read (24) leaves F2 = 23 or 24 to the fit
    f2_23 = join2 == plan.fd.frac_bits + 1 and (window or 0) <= 24
    joins = (join2,)
    if join2 is not None and "window2" in opened:  # read to its reach: a sum of more
        lo = max(join2, join1 or 0)  # bits (one f32 product, a tie against -2^E) may go deeper
        joins = tuple(range(lo, min(lo + 3, plan.reach + 1))) if lo <= plan.reach else (join2,)
    if tie_c is not None:  # the tie broken by C far below: F2 about it
        joins = tuple(dict.fromkeys(joins + tuple(range(tie_c - 1, min(tie_c + 2, plan.reach + 1)))))
    cands = _candidates(dp, blocks, windows or (window,),
                        joins + ((join2 - 1,) if f2_23 else ()), single)
    deep_f = _join_windows(cands, plan, blocks, window, join2, opened)
    verdicts = one.verdicts(cands, cases, seen, lambda p, c, w: _fits(ctx, p, c, w),
                            lambda p, c: MfmaModel("ladder", ctx.dp, "mfma step", p).evaluate(c))
    close = [v for v in verdicts.values() if v is not None]
    fits = [name for name, v in verdicts.items() if close and v == min(close)]
    fits = _open_window(cands, fits, opened, plan.reach)
    same = {(cands[f].design, cands[f].block, cands[f].window) for f in fits}
    if fits and cands[fits[0]].window in deep_f:  # F read by the join, F2 past it
        opened.pop("window", None)
        opened.pop("window2", None)
        f2s = sorted(cands[f].window2 for f in fits if cands[f].window == cands[fits[0]].window)
        if len(f2s) > 1 and f2s[-1] == plan.reach:
            opened["window2"] = ((f2s[0], None), deep_f[cands[fits[0]].window])
    if f_floor and fits:  # F from C's depth at F2's floor: the lowest F that fits
        fits = far.open_floor(cands, fits, opened, plan.reach)
    if len(fits) > 1 and len(same) == 1 and "window2" in opened:
        fits = fits[:1]  # F2 values the open range names: the lowest is the model's
    values["candidates"] = list(cands)
    values["fits"] = fits
    where = (f"blocks of {blocks}" if blocks else
             f"rounding groups {', '.join(_span(g) for g in groups[:4])}")
    if not fits:
        return Finding("mfma", "failed",
                       f"{where}; no AMD design with the measured parameters reproduces the "
                       f"device's words (tried {', '.join(cands) or 'none: the groups are no blocks'})",
                       values, ev)
    params = cands[fits[0]]
    keys = {"fma": ("design",), "exact": ("design", "block"), "ftz": ("design", "block")}
    values["params"] = {k: v for k, v in vars(params).items()
                        if k in keys.get(params.design, vars(params))}
    values["design"] = params.design
    text = _describe(params, window, join2)
    if blocks == dp.k and "block" in values["params"] and params.design != "ftz":  # P: 2 or 4
        opened["block"] = ((dp.k, None), f"all K = {dp.k} products are one block here; "
                           "any larger block gives the same words")
    # a range opens at the value the model takes (F2 + 1 < F is a design too)
    opened = {k: ((max(lo, values["params"][k]), hi), why)
              for k, ((lo, hi), why) in opened.items()
              if k in values["params"] and values["params"][k] >= lo}  # below lo: read exactly
    # hi None: every value from lo on (past models/amd.exact_bound nothing changes)
    opened = {k: v for k, v in opened.items() if v[0][1] is None or v[0][0] < v[0][1]}
    if opened:  # a key the probes read to the end of their reach: every value beyond agrees
        values["undetermined"] = {k: why for k, (_, why) in opened.items()}
        values["open"] = {k: rng for k, (rng, _) in opened.items()}
    nan_off = verdicts[fits[0]]
    if nan_off:
        values["nan_words_differ"] = nan_off
        values.setdefault("undetermined", {})["nan"] = (f"the design gives every word but {nan_off} NaN "
                                                        "results, whose NaN word differs from "
                                                        "the device's")
        return Finding("mfma", "partial", f"{where}: {text}, but its NaN words differ from the "
                       f"device's on {nan_off} NaN results (validation will show them)", values, ev)
    if len(fits) > 1:
        values.setdefault("undetermined", {})["design"] = (
            f"{', '.join(fits)} all give the step's {len(cases):,} words; the model takes {fits[0]}")
        return Finding("mfma", "partial", f"{where}: {text}; also fits: {', '.join(fits[1:])}",
                       values, ev)
    return Finding("mfma", "found", f"{where}: {text} (the only design of {len(cands)} tried that "
                   f"gives all {len(cases):,} words)", values, ev)


class _Plan:
    """The exponents the probes use for this datapath's formats."""

    def __init__(self, ctx):
        dp = ctx.dp
        self.fa, self.fb, self.fd = ctx.a_fmt, ctx.b_fmt, ctx.d_fmt
        sa, na, xa = exp_range(self.fa)
        sb, nb, xb = exp_range(self.fb)
        _, nd, xd = exp_range(self.fd)
        fd = self.fd.frac_bits
        self.k = dp.k
        # the deepest bit a probe reads: past it every F, F2 gives the same words
        self.reach = exact_bound(dp)
        self.narrow = None  # F below 24: the bits C alone kept (mfma_narrow)
        self.join_extra = 0  # the many-product join probe's m (F2 read past F + fd + 1)
        self.p_lo, self.p_hi = sa + sb, xa + xb
        # groups: products of 1.5 * 2**t, C = 2**(t + fd + 2): 3/8 of C's ulp
        self.t = max(min(0, self.p_hi - 1, xd - fd - 3), na + nb)
        self.e_groups = self.t + fd + 2
        self.c_groups = pow2(self.fd, self.e_groups)
        self.p_groups = product(self.fa, self.fb, self.t, 0, (3, 1), (1, 0))
        # window: C = -2**h, products 2**h and 2**(h - k)
        self.h = min(self.p_hi - 1, xd - 2)
        self.k_window = max(0, min(self.reach, self.h - max(self.p_lo, nd + 2)))
        # join: C = 2**E, a half-ulp product and 2**(E - k)
        self.e_join = min(self.p_hi + fd + 1, xd - 1)
        self.k_join = (fd + 1, max(fd + 1, min(fd + 1 + self.reach, self.e_join - self.p_lo)))
        self.c_join = pow2(self.fd, self.e_join)
        self.c_join_up = word(self.fd, 0, (1 << fd) + 1, self.e_join - fd)


def _group_rows(bt, plan) -> dict:
    """Every lane alone and every pair of lanes with 3/8 of C's ulp each."""
    p = plan.p_groups[:2]
    rows = {(i,): bt.add(f"lane {i}: 3/8 ulp of C", {i: p}, plan.c_groups) for i in range(plan.k)}
    for i in range(plan.k):
        for j in range(i + 1, plan.k):
            rows[i, j] = bt.add(f"lanes {i}, {j}: 3/8 ulp of C each", {i: p, j: p}, plan.c_groups)
    return rows


def _groups(k, rows, words, c) -> tuple[list[tuple[int, ...]], bool]:
    """The partition of K into the lanes rounded together (a pair moved C)."""
    alone_lost = all(int(words[rows[(i,)]]) == c for i in range(k))
    together = {key for key, r in rows.items() if len(key) == 2 and int(words[r]) != c}
    return narrow.partition(k, together), alone_lost


def _blocks(groups, k) -> int | None:
    """L when the groups are consecutive blocks of L lanes (the last one shorter
    where L does not divide K, as the designs run them), else None."""
    size = len(groups[0])
    want = [tuple(range(lo, min(lo + size, k))) for lo in range(0, k, size)]
    return size if groups == want else None


def _pair(groups, last: bool = False) -> tuple[int, int] | None:
    """Two lanes of the first group of two or more (``last``: of the last one)."""
    g = next((g for g in (groups[::-1] if last else groups) if len(g) >= 2), None)
    return (g[0], g[1]) if g else None


def _window_rows(bt, plan, groups) -> dict:
    pair = _pair(groups, plan.narrow is not None)
    if pair is None:
        return {}
    i, j = pair
    big = product(plan.fa, plan.fb, plan.h)
    c = pow2(plan.fd, plan.h, 1)
    out = {}
    for k in range(1, plan.k_window + 1):
        tiny = product(plan.fa, plan.fb, plan.h - k)
        if big and tiny and c is not None:
            out[k] = bt.add(f"C = -2^{plan.h}, 2^{plan.h} and 2^{plan.h - k} in one group",
                            {i: big[:2], j: tiny[:2]}, c)
    return out


def _c_window_rows(bt, plan, groups, h=None) -> dict:
    """C's depth: 2**h and -2**h in one group (a zero sum whose largest product
    is 2**h) beside C = 2**(h - k); C is left whole as long as the join keeps k
    bits below the largest product (F), down to C's own smallest subnormal (``h``:
    plan.h, or products past f32's range, which only grouped sums)."""
    h = plan.h if h is None else h
    pair = _pair(groups, plan.narrow is not None)
    big, neg = product(plan.fa, plan.fb, h), product(plan.fa, plan.fb, h, 1)
    if pair is None or not big or not neg:
        return {}
    i, j = pair
    out = {}
    for k in range(1, plan.reach + 2):
        c, c_neg = pow2(plan.fd, h - k), pow2(plan.fd, h - k, 1)
        if c is not None:
            out[k] = (bt.add(f"2^{h} - 2^{h} in one group, C = 2^{h - k}",
                             {i: big[:2], j: neg[:2]}, c), c)
        if c_neg is not None:  # floored to -2**(h - F), or dropped (grouped: far below)
            bt.add(f"2^{h} - 2^{h} in one group, C = -2^{h - k}",
                   {i: big[:2], j: neg[:2]}, c_neg)
    return out


def _tie_c_rows(bt, plan, groups) -> dict:
    """{k: (row, the word rounded up)}: 2**e and 2**(e - fd - 1) in one group (a
    tie of D; e the largest product D holds), C = 2**(e - k): the tie breaks upward
    while C reaches the rounding (k <= F and F2), down to C's last bit."""
    pair, fd = _pair(groups, plan.narrow is not None), plan.fd.frac_bits
    e = min(plan.p_hi, exp_range(plan.fd)[2] - 1)
    big, half = product(plan.fa, plan.fb, e), product(plan.fa, plan.fb, e - fd - 1)
    up = word(plan.fd, 0, (1 << fd) + 1, e - fd)
    if pair is None or not big or not half or up is None or big[2] != e:
        return {}
    out = {}
    for k in range(fd + 2, plan.reach + 3):
        c = pow2(plan.fd, e - k)
        if c is not None:
            out[k] = (bt.add(f"2^{e} + 2^{e - fd - 1} (a tie) in one group, C = 2^{e - k}",
                             {pair[0]: big[:2], pair[1]: half[:2]}, c), up)
    return out


def _reach(plan, w_rows, window, j_rows, join) -> dict:
    """Keys read to the last depth the probes reach: {key: ((low, high), why)}.
    The join's tiny product sits in one block with a tie fd + 1 bits below C,
    so no bit deeper than F + fd + 1 reaches the join through it."""
    out = {}
    if window is not None and w_rows and window >= max(w_rows):
        out["window"] = ((window, None), f"every probe down to 2^-{window} below the "
                         "largest product was kept; no deeper bit reaches the sum here")
    if join is not None and j_rows:
        reach = max(j_rows) if window is None else min(max(j_rows), window + plan.fd.frac_bits + 1
                                                       + plan.join_extra)
        if join >= reach:
            out["window2"] = ((join, None), f"the tie was broken by every product down to "
                              f"2^-{join} below C, the deepest a block truncated to F bits "
                              "carries to the join here; any larger F2 gives the same words")
    return out


def _join_windows(cands, plan, blocks, window, join, opened) -> dict:
    """F past the window's reach (C's last bit): the join's tiny product shares its
    block with a tie fd + 1 bits below C, so a join read short of its own reach may
    be F + fd + 1 rather than F2 + 1. Adds those F (F2 from the read, or any: the
    reach) to ``cands``; {F: why F2 is open} for the F added."""
    if "window" not in opened or join is None or not blocks or blocks < 2:
        return {}
    fd, out = plan.fd.frac_bits, {}
    for f in range(max(window + 1, join - fd - 3), join - fd + 1):
        for f2 in (*range(join - 1, join + 2), plan.reach):
            for design in ("truncated", "grouped"):
                cands[f"{design} L={blocks} F={f} F2={f2}"] = MfmaParams(design, blocks, f, f2)
        out[f] = (f"the join's tiny product was kept down to 2^-{join} below C, F + {fd} + 1 "
                  f"with F = {f} (past C's reach); no probe tells a larger F2 apart")
    return out


def _join_rows(bt, plan, groups) -> dict:
    fd = plan.fd.frac_bits
    half = product(plan.fa, plan.fb, plan.e_join - fd - 1)
    out = {"two": {}, "one": {}}
    pair = _pair(groups, plan.narrow is not None)
    if half and plan.c_join is not None and pair:
        i, j = pair
        for k in range(plan.k_join[0], plan.k_join[1] + 1):
            tiny = product(plan.fa, plan.fb, plan.e_join - k)
            if tiny:
                out["two"][k] = bt.add(f"C = 2^{plan.e_join}, a tie and 2^{plan.e_join - k}",
                                       {i: half[:2], j: tiny[:2]}, plan.c_join)
    # many: 2**m products of 2**-m of the tie each (a sum of m more bits than
    # one product) beside the tiny one: a block of n lanes carries the sum's
    # bits down to F + fd + 1 + m, m = floor(log2(n - 1))
    g = next((g for g in (groups[::-1] if plan.narrow is not None else groups) if len(g) >= 3), None)
    m = (len(g) - 1).bit_length() - 1 if g else 0
    part = product(plan.fa, plan.fb, plan.e_join - fd - 1 - m)
    out["many"], out["many_m"] = {}, m
    if g and part and plan.c_join is not None:
        lanes = {x: part[:2] for x in g[:1 << m]}
        for k in range(fd + 1 + m, fd + 2 + m + plan.reach):
            tiny = product(plan.fa, plan.fb, plan.e_join - k)
            if tiny:
                out["many"][k] = bt.add(f"C = 2^{plan.e_join}, {1 << m} products making a tie "
                                        f"and 2^{plan.e_join - k}", {**lanes, g[-1]: tiny[:2]},
                                        plan.c_join)
    lane = plan.k - 1 if plan.narrow is not None else 0  # narrow: no later block floors it
    for m in range(1, plan.fa.frac_bits + plan.fb.frac_bits + 2):
        sig = _tie_tail(plan.fa.frac_bits, plan.fb.frac_bits, m)
        p = sig and product(plan.fa, plan.fb, plan.e_join - fd - 1, 0, sig[:2], sig[2:])
        if p and plan.c_join is not None:
            out["one"][fd + 1 + m] = bt.add(f"C = 2^{plan.e_join}, one product: a tie + "
                                            f"2^{plan.e_join - fd - 1 - m} and below",
                                            {lane: p[:2]}, plan.c_join)
    return out


def _tie_tail(fa: int, fb: int, m: int):
    """Significands (a, b, their fraction bits) of fa and fb fraction bits whose
    product is 1 + t with 2**-m <= t < 2**-(m-1): a tie (the 1) and a tail whose
    top bit is m bits below it. None when no pair makes one."""
    for sa in range(1 << fa, min(1 << (fa + 1), (1 << fa) + 4096)):  # wide formats: a few
        for lo in (fa + fb, fa + fb + 1):  # a * b / 2**lo in [1 + 2**-m, 1 + 2**-(m-1))
            want_lo = (1 << lo) + (1 << lo >> m) if lo >= m else None
            if want_lo is None:
                continue
            sb = -(-want_lo // sa)
            if (1 << fb) <= sb < (1 << (fb + 1)) and sa * sb < (1 << lo) + (1 << lo >> (m - 1)) \
                    and (sa * sb - (1 << lo)) << m >= 1 << lo:
                return sa, sb, fa, lo - fa
    return None


def _depth(rows: dict, words, kept, want: dict | None = None) -> int | None:
    """The deepest k up to which every row's small term was kept (None: no rows;
    the last k tried when all were kept): ``kept(word)``, or the row's word
    equal to ``want[row]``."""
    if not rows:
        return None
    depth = None
    for k in sorted(rows):
        w = int(words[rows[k]])
        if not (kept(w) if want is None else w == want[rows[k]]):
            return depth
        depth = k
    return depth


def _candidates(dp, blocks, window, join, single=None) -> dict[str, MfmaParams]:
    """The designs of models/amd.py with the measured parameters (``window``:
    the F values to try; ``join``: the F2 values; ``single``:
    the F values and F2 of one-product blocks, from :func:`mfma_one.single`)."""
    out = {}
    f64 = dp.d_type == "f64"
    if blocks == 1:
        out["fma"] = MfmaParams("fma")
    if blocks is None or f64:
        return out
    if blocks == 1 and single is not None and single[1] is not None:
        f2s = single[1] if isinstance(single[1], tuple) else (single[1],)
        for w in single[0]:
            for design in ("truncated", "grouped"):
                for f2 in f2s:
                    g = max(f2, w - 1) if "window2" in single[2] else f2  # open: F2 >= F - 1
                    out[f"{design} L=1 F={w} F2={g}"] = MfmaParams(design, 1, w, g)
    out[f"exact L={blocks}"] = MfmaParams("exact", blocks)
    if blocks in (2, 4) and blocks > 1:
        out[f"ftz P={blocks}"] = MfmaParams("ftz", blocks)
    for w in (window if join[0] is not None and blocks > 1 else ()):
        for design in ("truncated", "grouped"):
            for f2 in join:
                if w is not None:
                    out[f"{design} L={blocks} F={w} F2={f2}"] = MfmaParams(design, blocks, w, f2)
    return out


def _open_window(cands, fits, opened, reach) -> list:
    """One-product blocks whose every F from some value to ``reach`` fits (the
    deepest tail reached, C's floor not shown): the lowest, F named open."""
    fs = sorted({cands[f].window for f in fits})
    pairs = {(cands[f].design, cands[f].window2, cands[f].window) for f in fits}
    kinds = {p[:2] for p in pairs}
    if len(fs) < 2 or fs != list(range(fs[0], reach + 1)) or \
            pairs != {(*k, w) for k in kinds for w in fs} or cands[fits[0]].block != 1:
        return fits
    opened["window"] = ((fs[0], None), (
        f"one product a block: every F from {fs[0]} gives the step's words (no product's "
        "tail reaches deeper below F2's floor, and C's floor to F bits, lifted by a "
        "subnormal factor, shows no deeper)"))
    return [f for f in fits if cands[f].window == fs[0]]


def _fits(ctx, params: MfmaParams, cases: Cases, words) -> int | None:
    """None when the design's words differ from ``words`` beyond NaN payloads,
    else how many NaN results carry another NaN word (0: every word equal)."""
    try:  # a candidate outside the design's ranges (models/amd.check_params) fits nothing
        got = MfmaModel("ladder", ctx.dp, "mfma step", params).evaluate(cases)
    except (ValueError, ArithmeticError, IndexError):
        return None
    words = np.asarray(words)
    differ = got != words
    nans = ctx.is_nan(got) & ctx.is_nan(words)
    return None if (differ & ~nans).any() else int((differ & nans).sum())


def _describe(p: MfmaParams, window, join) -> str:
    if p.design == "fma":
        return "every product its own rounding: an FMA chain"
    if p.design == "exact":
        return (f"{p.block} products summed exactly, one rounding to nearest even a block "
                f"(no bit lost down to 2^-{window} below the largest)" if window else
                f"{p.block} products summed exactly, rounded once a block")
    if p.design == "ftz":
        return (f"products rounded in pairs (a tree of {p.block}), each sum rounded to nearest "
                "even, subnormals flushed")
    kind = "even and odd K apart, " if p.design == "grouped" else ""
    return (f"{kind}blocks of {p.block} truncated to F = {p.window} bits below the largest "
            f"product, joined with C at F2 + 1 = {p.window2 + 1} bits, rounded to nearest even")


def _span(g) -> str:
    return f"{{{g[0]}..{g[-1]}}}" if list(g) == list(range(g[0], g[-1] + 1)) else str(set(g))


def _evidence(bt, bt2, g_rows, w_rows, j_rows, s_rows, words, w2, groups):
    ev = []
    pair = _pair(groups)
    if pair and pair in g_rows:
        ev.append(bt.evidence(g_rows[pair], [words[g_rows[pair]]], "rounded together: C moves"))
    far = (0, groups[1][0]) if len(groups) > 1 else None
    if far and far in g_rows:
        ev.append(bt.evidence(g_rows[far], [words[g_rows[far]]], "rounded apart: C stays"))
    for rows, what in ((w_rows, "window"), (j_rows["two"], "join"), (j_rows["one"], "one product")):
        ks = sorted(rows)
        for k in ks[:1] + ks[-1:]:
            ev.append(bt2.evidence(rows[k], [w2[rows[k]]], f"{what}: 2^-{k} below"))
    for label, r in list(s_rows.items())[:6]:
        ev.append(bt2.evidence(r, [w2[r]], label))
    return ev
