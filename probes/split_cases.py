"""Cases of the split branch (probes/split.py): the products' own K order,
special words, the sums that read the roundings, the cases of blocks of
one or two products, a term past f64's bits, and which readings give the
words (up to what the roundings do not decide)."""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.engine import ROUNDINGS as ENGINE_ROUNDINGS
from tcprobe.models.formats import Class, Specials, decode
from tcprobe.models.words import (
    emax_biased,
    exp_range,
    max_sig,
    pow2,
    product,
    product_range,
    word,
)
from tcprobe.suites.mix import random_cases

from .common import Batch

MEASURED_MAX_K = 32  # K up to which the products' own order is measured (K^3 cases)
RANDOM_SUMS = 800  # random sums closing the rounding step's cases
F64_DEPTH = 55  # a term this far below 2**E: lost from a sum kept in f64 (53 bits)


def _same(ctx, got, words) -> bool:
    """Whether ``got`` gives ``words`` up to what the roundings do not decide:
    the sign of a zero, which NaN word, and whether a sum past the output is
    an Inf or a finite word of the top binade (saturated); the specials and
    zero steps measure those on the model found here."""
    fd = ctx.d_fmt
    top = emax_biased(fd)

    def fold(w):
        w = np.asarray(w, np.int64)
        d = decode(fd, np.asarray(w, np.uint32))
        field = (w >> (fd.frac_bits + fd.drop_bits)) & ((1 << fd.exp_bits) - 1)
        out = np.where(d.cls == Class.ZERO, 0, w)
        out = np.where(d.cls == Class.NAN, -1, out)
        big = (d.cls == Class.INF) | ((d.cls != Class.NAN) & (field == top))
        return np.where(big, -2 - d.sign.astype(np.int64), out)

    return bool(np.array_equal(fold(got), fold(words)))


def agree(models: dict, cases: Cases, words, ctx=None) -> list:
    """The names whose model gives every one of ``words`` (with ``ctx``: up
    to zero signs, NaN words and overflow, :func:`_same`)."""
    words = np.asarray(words, np.uint32)
    ok = []
    for name, m in models.items():
        try:
            got = m.evaluate(cases)
        except ValueError:
            continue
        if np.array_equal(got, words) or ctx is not None and _same(ctx, got, words):
            ok.append(name)
    return ok


def ieee_specials(ctx, m) -> bool:
    """Whether model ``m`` gives the device's words on special cases: NaN in
    A and in C, +Inf and -Inf products, Inf * 0, and the largest products in
    every lane with C at the largest finite value of each sign."""
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    one_a, one_b, one_c = pow2(fa, 0), pow2(fb, 0), pow2(fc, 0)
    bt = Batch(ctx.dp)
    for f, put in ((fa, lambda w: ({0: (w, one_b)}, one_c)), (fc, lambda w: ({0: (one_a, one_b)}, w))):
        if f.specials == Specials.IEEE:
            top = ((1 << f.exp_bits) - 1) << (f.frac_bits + f.drop_bits)
            nan = top | (1 << (f.frac_bits - 1 + f.drop_bits))
            for x, name in ((nan, "NaN"), (top, "+Inf"), (top | 1 << (f.width - 1), "-Inf")):
                bt.add(f"{f.name} {name}", *put(x))
    if fa.specials == Specials.IEEE:
        inf = ((1 << fa.exp_bits) - 1) << (fa.frac_bits + fa.drop_bits)
        bt.add("Inf * 0", {0: (inf, pow2(fb, 0) * 0)}, one_c)
        if ctx.co_active((0, 1)):
            bt.add("+Inf and -Inf", {0: (inf, one_b), 1: (inf | 1 << (fa.width - 1), one_b)})
    xa, xb, xc = exp_range(fa)[2], exp_range(fb)[2], exp_range(fc)[2]
    for s in (0, 1):
        big = product(fa, fb, xa + xb, s, (max_sig(fa), max_sig(fb)), (fa.frac_bits, fb.frac_bits))
        cmax = word(fc, s, max_sig(fc), xc - fc.frac_bits)
        if big is not None and cmax is not None:
            bt.add("the largest products, C = max", {j: big[:2] for j in range(ctx.dp.k)}, cmax)
    if not len(bt):
        return True
    cs = ctx.complete(bt.cases())
    try:
        return bool(np.array_equal(m.evaluate(cs), ctx.run(cs)))
    except ValueError:
        return False


def measured(ctx, E, plus, minus, small, known) -> dict:
    """Candidate splits in the order the products themselves show, for K
    orders no dealing of runs expresses (pairs swapped, a permutation): +2**E
    in lane j, -2**E in lane m (each way round) and 2**(E-v-1) in lane x, C
    = 0. x survives both ways round where its block runs after both of j's
    and m's (where the positive one comes first, x meets it in a rounding
    and is lost), so the lanes ranked by how many pairs they survive are in
    block order (lanes of one block tie; so do the first two of blocks of
    one, taken both ways). Cut into blocks of every size from 1 to K; the products'
    words decide which (if any) fits."""
    k = ctx.dp.k
    lanes = range(k)
    if k < 3 or k > MEASURED_MAX_K:
        return {}
    bt = Batch(ctx.dp)
    alone = {x: bt.add(f"lane {x}: 2^{E - ctx.d_fmt.frac_bits - 1} alone", {x: small[:2]})
             for x in lanes}
    rows = {}
    for j in lanes:
        for m in lanes:
            if j == m:
                continue
            for x in lanes:
                if x not in (j, m) and ctx.co_active((j, m, x)):
                    rows[(j, m, x)] = bt.add(f"lane {j}: +2^{E}, lane {m}: -2^{E}, lane {x}: "
                                             "a small term", {j: plus[:2], m: minus[:2],
                                                              x: small[:2]})
    w = ctx.run(ctx.complete(bt.cases()))
    count = dict.fromkeys(lanes, 0)
    for (j, m, x), r in rows.items():
        back = rows.get((m, j, x))
        if j < m and back is not None and w[r] == w[alone[x]] == w[back]:
            count[x] += 1
    out, seen = {}, set(known.values())
    for tie in (1, -1):
        order = sorted(lanes, key=lambda x: (count[x], tie * x))
        # every block size (the engine's blocks of 3 or 5 too, the last one short)
        for size in range(1, k + 1):
            parts = tuple(tuple(sorted(order[i:i + size])) for i in range(0, k, size))
            if parts not in seen:
                seen.add(parts)
                out[f"blocks of {size} in the order the products show ({show_part(order)})"] = parts
    return out


def rounding_cases(ctx, parts, E) -> Cases:
    """C = +-1 plus one product of 1/4 .. 3/4 of C's ulp; two products of one
    sub-MMA (of the first two, blocks of one) whose sum is inexact in the
    output; random cases (subnormal inputs too)."""
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    kap = ctx.d_fmt.frac_bits
    bt = Batch(dp)
    lane = parts[-1][0]
    for cs in (0, 1):
        c = word(fc, cs, 1, 0)
        for m, sh in ((1, 2), (1, 1), (3, 2), (5, 3)):
            for s in (0, 1):
                p = product(fa, fb, -kap - sh, s, (m, 1), (0, 0))
                if p is not None and c is not None:
                    bt.add(f"C = {'-' if cs else ''}1, product {m}/2^{sh} of its ulp", {lane: p[:2]}, c)
    # (blocks of one: the first two blocks)
    a, b = (parts[0][0], parts[0][1]) if len(parts[0]) > 1 else (parts[0][0], parts[1][0])
    for m, sh in ((1, 2), (1, 1), (3, 2)):
        for s in (0, 1):
            one = product(fa, fb, 0, s)
            p = product(fa, fb, -kap - sh, s, (m, 1), (0, 0))
            if one is not None and p is not None:
                bt.add(f"one sub-MMA: 1 and {m}/2^{sh} of its ulp", {a: one[:2], b: p[:2]})
    rng = np.random.default_rng(ctx.seed + 53)
    return Cases.concat([bt.cases(), random_cases(dp, RANDOM_SUMS, rng)])


def product_sums(ctx, n: int = 600) -> Cases:
    """Sums of products alone (C = +0), for formats whose products span too
    few binades for one to sit half an output ulp below another (fp4 x fp4,
    say): the validation mix's random products, and the same with every sign
    cleared (large sums, whose chained roundings between blocks cut the
    small products). Where the blocks split, and where C joins, the words
    of candidate models on these decide."""
    rng = np.random.default_rng(ctx.seed + 61)
    cs = random_cases(ctx.dp, n // 2, rng)
    fa, fb = ctx.a_fmt, ctx.b_fmt
    # finite products only (NaN and Inf are the specials step's)
    ok = ~(_special(fa, cs.a).any(axis=1) | _special(fb, cs.b).any(axis=1))
    a, b = cs.a[ok], cs.b[ok]
    c = np.zeros(len(a), cs.c.dtype)
    act = None if cs.active is None else cs.active[ok]
    pos_a = a & a.dtype.type(~(1 << (fa.width - 1)) & fa.word_mask)
    pos_b = b & b.dtype.type(~(1 << (fb.width - 1)) & fb.word_mask)
    return ctx.complete(Cases.concat([Cases(a, b, c, active=act),
                                      Cases(pos_a, pos_b, c, active=act)]))


def sums_with_c(ctx, vis: int, n: int = 400) -> Cases:
    """Large sums of products (every sign cleared) and a C near the output's
    last kept bit of such a sum (random significand and sign): where the
    products' sum has more bits than the output keeps, C added after a
    rounded sum and C in one exact sum round apart."""
    rng = np.random.default_rng(ctx.seed + 67)
    sums = product_sums(ctx, 2 * n)
    pos = sums.take(np.arange(len(sums) // 2, len(sums)))  # the positive half
    pos = pos.take(np.arange(min(n, len(pos))))
    fc = ctx.c_fmt
    hi = product_range(ctx.a_fmt, ctx.b_fmt)[1] + (ctx.dp.k - 1).bit_length()
    _, cmin, cmax = exp_range(fc)
    c = np.zeros(len(pos), pos.c.dtype)
    for i in range(len(pos)):
        e = int(np.clip(rng.integers(hi - vis - 4, hi - vis + 2), cmin, cmax))
        m = int(rng.integers(1 << fc.frac_bits, 1 << (fc.frac_bits + 1)))
        w = word(fc, int(rng.integers(0, 2)), m, e - fc.frac_bits)
        c[i] = 0 if w is None else w
    return ctx.complete(Cases(pos.a, pos.b, c, active=pos.active))


def _special(f, words):
    """Which words of format ``f`` are NaN or Inf."""
    d = decode(f, np.asarray(words))
    return (d.cls == Class.NAN) | (d.cls == Class.INF)


def narrow_block_cases(ctx, parts, E) -> Cases:
    """Blocks of one or two products: +2**E beside +-2**(E-e) in a block of
    two; lone products of long random significands at 2**E (a window cuts
    their low bits) in the block's first lane; under blocks of one, two such
    products in the first two blocks, the second up to 12 binades larger or
    smaller (its window cuts the first one's result); C = 0."""
    dp = ctx.dp
    first = parts[0]
    fa, fb = ctx.a_fmt, ctx.b_fmt
    bt = Batch(dp)
    plus = product(fa, fb, E, 0)
    if len(first) == 2 and plus is not None:
        for e in range(1, 64):
            for s in (0, 1):
                p = product(fa, fb, E - e, s)
                if p is not None:
                    bt.add(f"lanes {first[0]}, {first[1]}: 2^{E}, {'-' if s else ''}2^{E - e}",
                           {first[0]: plus[:2], first[1]: p[:2]})
    rng = np.random.default_rng(ctx.seed + 59)
    fr = (fa.frac_bits, fb.frac_bits)
    for _ in range(200):
        x = int(rng.integers(1 << fa.frac_bits, 1 << (fa.frac_bits + 1)))
        y = int(rng.integers(1 << fb.frac_bits, 1 << (fb.frac_bits + 1)))
        p = product(fa, fb, E, int(rng.integers(0, 2)), (x, y), fr)
        if p is not None:
            bt.add(f"lane {first[0]}: a long significand at 2^{E}", {first[0]: p[:2]})
    if len(first) == 1 and len(parts) > 1:
        i, j = first[0], parts[1][0]
        for _ in range(400):
            d = int(rng.integers(-12, 13))
            x, y, u, v = (int(rng.integers(1 << f.frac_bits, 1 << (f.frac_bits + 1)))
                          for f in (fa, fb, fa, fb))
            p = product(fa, fb, E - max(d, 0), int(rng.integers(0, 2)), (x, y), fr)
            q = product(fa, fb, E + min(d, 0), int(rng.integers(0, 2)), (u, v), fr)
            if p is not None and q is not None:
                bt.add(f"lanes {i}, {j}: long significands {d} binades apart",
                       {i: p[:2], j: q[:2]})
    return bt.cases()


def show_part(part) -> str:
    p = list(part)
    return ", ".join(map(str, p[:6])) + (", ..." if len(p) > 6 else "")


def stage_keys(ctx, unpack, only=None, wide=False) -> list:
    """The stage keys a block result is passed on with: the output's type, and
    under a D narrower than f32, f32 with each rounding; ``wide`` (a term past
    the output's bits crossed blocks, lost past f64's: :func:`deep_cases`),
    f64 with each rounding too, last (the engine's readings only; ``only``:
    the indices some split fitted with)."""
    out = [{}]
    if unpack != "f16" and ctx.d_fmt.width < 32:
        out += [{"inter_type": "f32", "inter_rounding": r} for r in ENGINE_ROUNDINGS]
    if unpack != "f16" and wide:
        out += [{"inter_type": "f64", "inter_rounding": r} for r in ENGINE_ROUNDINGS]
    return [st for n, st in enumerate(out) if only is None or n in only] or [{}]


def wide_chain(ctx, E, plus, minus, depth=F64_DEPTH):
    """+2**E in lane 0, -2**E in lane j and 2**(E - depth) in lane l (C = 0)
    for every j and l, ``depth`` past f64's 53 bits: where every term half an
    output ulp below 2**E survived (one block, read as the output's type), a
    block result passed on in f64 still drops this one where lanes 0 and j
    sit in two blocks. (the cases, their words, a note) where some pairs
    keep the term and some lose it, else None (one block, or the products
    do not reach that deep)."""
    k = ctx.dp.k
    t = product(ctx.a_fmt, ctx.b_fmt, E - depth, 0)
    if t is None or plus is None or minus is None:
        return None
    bt = Batch(ctx.dp)
    for j in range(1, k):
        for lane in range(1, k):
            if lane != j:
                bt.add(f"lane 0: +2^{E}, lane {j}: -2^{E}, lane {lane}: 2^{E - depth}, C = 0",
                       {0: plus[:2], j: minus[:2], lane: t[:2]})
    cs = ctx.complete(bt.cases())
    w = ctx.run(cs)
    gone = ctx.is_neg_zero(w) | (w == 0)
    if not gone.any() or gone.all():
        return None
    return cs, w, (f"a term 2^{E - depth} beside +-2^{E} survives in some pairs of lanes only: "
                   "blocks passed on in a type wider than the output (f64)")


def keeps_to_try(ctx, vis) -> list:
    """The output's kept fraction bits to try: its own (None), and the visible
    ones (and one fewer: RNA shows one bit more than it keeps) where fewer."""
    full = ctx.d_fmt.frac_bits
    return [None] + [kb for kb in sorted({vis, vis - 1}) if 0 < kb < full]


def window_text(F) -> str:
    return "an exact sum" if F is None else f"a {F}-bit window"
