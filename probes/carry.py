"""carry: K products at the largest significand, a targeted test for what
random inputs never reach.

Every lane holds the largest finite significand at one exponent (all
positive, all negative, and with C of the same size), so the block sum
carries log2(K) + 2 bits above the anchor. The model of the findings so
far must reproduce these words; models whose accumulator keeps only a few
integer bits above the anchor (and wraps) are the alternatives.
"""

from __future__ import annotations

from tcprobe.models.words import exp_range, home_exponent, max_sig, product, word

from .common import Batch, Finding


def run(ctx) -> Finding:
    if ctx.dp.is_integer:
        return _integer(ctx)
    ctx.require("zero")
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    E = home_exponent(fa, fb, 4)
    ma, mb = max_sig(fa), max_sig(fb)
    bt = Batch(dp)
    for sign in (0, 1):
        p = product(fa, fb, E, sign, (ma, mb), (fa.frac_bits, fb.frac_bits))
        if p is None:
            continue
        lanes = {k: p[:2] for k in range(dp.k)}
        bt.add(f"every lane {'-' if sign else '+'}max*max at 2^{E}, C = 0", lanes)
        _, _, xc = exp_range(fc)
        for ce in (E, E + 2, E + max(1, dp.k.bit_length())):
            c = word(fc, sign, max_sig(fc), ce - fc.frac_bits)
            if c is not None:
                bt.add(f"every lane {'-' if sign else '+'}max*max, C = "
                       f"{'-' if sign else '+'}max at 2^{ce}", lanes, c)
        half = {k: p[:2] for k in range(0, dp.k, 2)}
        bt.add(f"every other lane {'-' if sign else '+'}max*max", half)
    if not len(bt):
        return Finding("carry", "skipped", "no largest-significand product in these formats")
    cs = bt.cases()
    w = ctx.run(cs)
    # where the rounding is still open, these sums (which do round) may settle it
    rnd = ctx.value("output_rounding")
    roundings = [rnd] if rnd else ["rz", "rne", "rna"]
    cands = {}
    for r in roundings:
        cands[("no wrap", r)] = {"output_rounding": r}
        for bits in range(0, 9):
            cands[(f"{bits} carry bits", r)] = {"carry_bits": bits, "output_rounding": r}
    found = ctx.consistent(cs, w, cands)
    ok = sorted({k for k, _ in found})
    values_extra = {}
    rs = sorted({r for _, r in found})
    if rnd is None and len(rs) == 1:
        values_extra["output_rounding"] = rs[0]
    ev = [bt.evidence(i, [w[i]]) for i in range(min(4, len(bt)))]
    if "no wrap" in ok:
        wrap = [x for x in ok if x != "no wrap"]
        need = min(int(x.split()[0]) for x in wrap) if wrap else None
        text = (f"{dp.k} products at the largest significand carry into the top without wrapping"
                + ("" if need is None else f" (any accumulator with {need}+ carry bits agrees)"))
        return Finding("carry", "found", text,
                       {"carry_bits": None, "carries_ok": True, **values_extra}, ev,
                       [f"these sums round: output rounding {values_extra['output_rounding']}"]
                       if values_extra else [])
    if ok:
        bits = min(int(x.split()[0]) for x in ok)
        return Finding("carry", "found", f"the accumulator wraps above {bits} carry bits",
                       {"carry_bits": bits, **values_extra}, ev)
    return Finding("carry", "failed", "the model of the findings does not reproduce the "
                   "largest-significand sums", {}, ev)


def _integer(ctx) -> Finding:
    """Integer MMA: every lane at the largest product, C near the ends of
    s32: does the sum wrap modulo 2**32 or saturate once? (And random cases
    must be the exact sum.)"""
    import numpy as np

    from tcprobe.models.cases import Cases
    from tcprobe.models.model import IntegerModel

    dp = ctx.dp
    fa, fb = ctx.a_fmt, ctx.b_fmt
    hi_a = (1 << (fa.width - 1)) - 1 if fa.signed else fa.word_mask
    hi_b = (1 << (fb.width - 1)) - 1 if fb.signed else fb.word_mask
    lo_a = (1 << (fa.width - 1)) if fa.signed else 0  # the most negative code
    bt = Batch(dp)
    top = (1 << 31) - 1
    for c in (top, top - 1000, 0, (1 << 31), (1 << 31) + 5):
        bt.add(f"every lane {hi_a}*{hi_b}, C = {c:#x}", {k: (hi_a, hi_b) for k in range(dp.k)}, c)
        if fa.signed:
            bt.add(f"every lane (-{1 << (fa.width - 1)})*{hi_b}, C = {c:#x}",
                   {k: (lo_a, hi_b) for k in range(dp.k)}, c)
    rng = np.random.default_rng(ctx.seed + 17)
    n = 200
    rand = Cases(rng.integers(0, fa.word_mask + 1, (n, dp.k)),
                 rng.integers(0, fb.word_mask + 1, (n, dp.k)),
                 rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
    cs = Cases.concat([bt.cases(), rand])
    w = ctx.run(cs)
    ok = [sat for sat in (False, True)
          if np.array_equal(IntegerModel("c", dp, "", saturate=sat).evaluate(cs), w)]
    ev = [bt.evidence(i, [w[i]]) for i in range(min(4, len(bt)))]
    if len(ok) == 1:
        text = "saturates once to the s32 range" if ok[0] else "wraps modulo 2^32"
        return Finding("carry", "found", f"the exact integer sum {text} ({len(cs)} cases, "
                       f"{n} of them random)", {"saturate": ok[0], "exact": True}, ev)
    return Finding("carry", "failed", "neither the wrapped nor the saturated exact sum "
                   "reproduces these cases", {}, ev)
