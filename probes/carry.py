"""carry: how many integer bits the accumulator holds above the anchor, and
what its top does with a sum that needs more (wrap, saturate, normalize).

It runs before the zero step, at home exponents where no zero floor binds,
so that no later step's candidates are broken by an unknown carry limit.
Three sets of cases, all in the lanes of the last block (its sum is D):

* counts: n lanes (n = 1 .. the block) of 1*1, max*max (the all-ones
  significands where the home exponent holds them) or (1+ulp)*max at one
  exponent, C = 0, C = max at it or at the next exponent, both signs: the
  sums walk through 1 .. 4L + 2 times the anchor's unit, so the first n
  that wraps (or clamps) tells the carry bits, whatever the rounding; where
  blocks chain, the same in the first block with C whole (all its fraction
  bits), the largest sum of any block;
* the Khattak-Mikaitis enumeration (the test their A100 study could not
  run, arXiv 2512.07004 footnote 3): A exponents over [-14, 15] (what the
  format holds), B's paired to land the product at one of a few home
  exponents, boundary significands 1.0, the largest and 1 + 2**-f in every
  pair of A and B, all lanes of the block, and C the largest value at the
  anchor (the largest aligned sum);
* normalize probes: n ones past the top plus half an output ulp and the
  window's last bit: a normalizing top drops that bit and leaves a tie.

Candidate models (carry bits none or 0 .. 8, each top, the rounding and zero
sign where still open) run on every case; the ones that reproduce every
device word remain, and what they cannot tell apart is named.
"""

from __future__ import annotations

from tcprobe.models.words import exp_range, max_sig, word

from .common import Batch, Finding, StepInfo, open_keeps, window

STEP = StepInfo(
    order=110, title="carries into the top of the accumulator", needs_layout=True, engine=True,
    fingerprint=True, also_on=("integer",)
)

TOPS = ("wrap", "saturate", "normalize")
MAX_BITS = 8


def _last_block(ctx) -> list[int]:
    """The last of the largest blocks: where K is no multiple of the block
    size the last block is short (blocks of 5 in K = 32 end with 2), and its
    sums never reach the carry bits a full block needs; a full block's sum
    passes through the later ones (their lanes zero) to the output."""
    blocks = ctx.value("blocks") or [list(range(ctx.dp.k))]
    most = max(len(b) for b in blocks)
    return list([b for b in blocks if len(b) == most][-1])


def _pair(fa, fb, ea, eb, sign, ma, mb):
    """(a, b) words of (-1)**sign * ma*2**(ea-fa) * mb*2**(eb-fb), or None."""
    wa = word(fa, sign, ma, ea - fa.frac_bits)
    wb = word(fb, 0, mb, eb - fb.frac_bits)
    return None if wa is None or wb is None else (wa, wb)


def _split(fa, fb, t):
    """Normal exponents (ea, eb) with ea + eb = t, split evenly, or None."""
    _, na, xa = exp_range(fa)
    _, nb, xb = exp_range(fb)
    for ea in sorted(range(na, xa + 1), key=lambda x: (abs(2 * x - t), x)):
        if nb <= t - ea <= xb:
            return ea, t - ea
    return None


def cases(ctx) -> tuple[Batch, int]:
    """The step's cases, and how many of them are the Khattak-Mikaitis enumeration."""
    dp = ctx.dp
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    lanes = _last_block(ctx)
    L = len(lanes)
    one_a, one_b = 1 << fa.frac_bits, 1 << fb.frac_bits
    sigs_a = (one_a, max_sig(fa), one_a + 1)
    sigs_b = (one_b, max_sig(fb), one_b + 1)
    # every fraction bit set: larger than max_sig where only the top exponent
    # lacks it (e4m3's 1.875, whose top code is NaN), and legal at home exponents
    full_a, full_b = 2 * one_a - 1, 2 * one_b - 1
    largest = [(sigs_a[1], sigs_b[1])]
    if (full_a, full_b) != largest[0]:
        largest.insert(0, (full_a, full_b))
    bt = Batch(dp)
    homes = [t for t in (0, -1, 2) if _split(fa, fb, t)]

    # C the largest value at an exponent; where blocks chain, C passes the
    # earlier blocks rounded into the output, so it keeps no more fraction
    # bits than the output (else it rounds up to the next power of two there)
    keep = fc.frac_bits
    if len(ctx.value("blocks") or [0]) > 1:
        keep = min(keep, ctx.params().output_frac_bits or keep, *open_keeps(ctx))
    c_sig = max_sig(fc) >> (fc.frac_bits - keep)

    def c_words(sign, t):
        out = [None]
        for ce in (t, t + 1):
            c = word(fc, sign, c_sig, ce - keep)
            if c is not None:
                out.append(c)
        return out

    # -- counts ------------------------------------------------------------
    for t in homes[:1]:
        ea, eb = _split(fa, fb, t)
        for sign in (0, 1):
            for ma, mb in ((one_a, one_b), *largest, (sigs_a[2], sigs_b[1])):
                p = _pair(fa, fb, ea, eb, sign, ma, mb)
                if p is None:
                    continue
                for n in range(1, L + 1):
                    for c in c_words(sign, t):
                        bt.add(f"{n} lanes {'-' if sign else '+'}{ma}*{mb} at 2^{t}",
                               {k: p for k in lanes[:n]}, c)
    # -- counts in the first block, where blocks chain: C arrives there whole
    # (every fraction bit of its format), so its largest value beside the
    # largest products can need one carry bit more than the last block's C,
    # which earlier blocks rounded into the output, ever does
    blocks = ctx.value("blocks") or [list(range(dp.k))]
    if len(blocks) > 1 and keep < fc.frac_bits:
        first = list(blocks[0])
        for t in homes[:1]:
            ea, eb = _split(fa, fb, t)
            for sign in (0, 1):
                p = next((q for q in (_pair(fa, fb, ea, eb, sign, ma, mb) for ma, mb in largest)
                          if q is not None), None)
                if p is None:
                    continue
                for ce in (t, t + 1):
                    c = word(fc, sign, max_sig(fc), ce - fc.frac_bits)
                    if c is None:
                        continue
                    for n in range(1, len(first) + 1):
                        bt.add(f"first block: {n} lanes of {'-' if sign else '+'}max*max at 2^{t}, "
                               f"the whole largest C at 2^{ce}", {k: p for k in first[:n]}, c)
    # -- counts on a chained sum: the block before holds 1 + 1/2 + 1/4 + ...
    # at the home exponent (just under twice it, the largest addend that
    # keeps the anchor there), this one n of the largest products: where C
    # is added after the blocks, only such an addend carries a full block
    # past its top
    run_order = [list(b) for b in blocks]
    at = run_order.index(lanes) if lanes in run_order else 0
    if at > 0 and homes:
        t = homes[0]
        ea, eb = _split(fa, fb, t)
        for sign in (0, 1):
            rows = {}
            for i, k in enumerate(run_order[at - 1]):
                e = _split(fa, fb, t - i)
                p = None if e is None else _pair(fa, fb, *e, sign, one_a, one_b)
                if p is not None:
                    rows[k] = p
            big = next((q for q in (_pair(fa, fb, ea, eb, sign, ma, mb) for ma, mb in largest)
                        if q is not None), None)
            if not rows or big is None:
                continue
            for n in range(1, L + 1):
                bt.add(f"block before: {len(rows)} ones at 2^{t} down, {n} lanes "
                       f"{'-' if sign else '+'}max*max at 2^{t}",
                       {**rows, **dict.fromkeys(lanes[:n], big)})
    # -- normalize probes: n ones, half an output ulp, the window's last bit --
    F = window(ctx)
    keep = ctx.value("output_frac_bits") or ctx.d_fmt.frac_bits
    if F is not None and homes and L >= 3:
        t = homes[0]
        ea, eb = _split(fa, fb, t)
        for n in range(1, L - 1):
            j = n.bit_length() - 1
            one = _pair(fa, fb, ea, eb, 0, one_a, one_b)
            half = _split(fa, fb, j + t - keep - 1)
            last = _split(fa, fb, t - F)
            if one is None or half is None or last is None:
                continue
            ph = _pair(fa, fb, *half, 0, one_a, one_b)
            pl = _pair(fa, fb, *last, 0, one_a, one_b)
            if ph is None or pl is None:
                continue
            rows = {k: one for k in lanes[:n]}
            rows[lanes[n]] = ph
            rows[lanes[n + 1]] = pl
            bt.add(f"{n} ones at 2^{t}, half an ulp and 2^{t - F}", rows)
    # -- normalize probes through C: the largest products on n lanes carry the
    # sum past the top; a bit near the output's rounding position and the
    # window's last bit (in C, or the last bit in one more lane) leave a tie
    # where a normalizing top drops that last bit
    if F is not None and homes:
        _normalize_through_c(bt, ctx, lanes, homes[0], F, keep, sigs_a, sigs_b)
        blocks = ctx.value("blocks") or [lanes]
        if len(blocks) > 1:  # C meets the first block unrounded: its two bits survive
            _normalize_through_c(bt, ctx, list(blocks[0]), homes[0], F, keep, sigs_a, sigs_b)
        # a product can hold the window's last bit only where 2**(t-F) is a
        # product too: the lowest such home (narrow formats need a high one)
        _, _, dmax = exp_range(ctx.d_fmt)
        up = [u for u in range(homes[0] + 1, homes[0] + 48)
              if _split(fa, fb, u) and _split(fa, fb, u - F)
              and u + L.bit_length() + 3 < dmax]
        if up and not _split(fa, fb, homes[0] - F):
            _normalize_through_c(bt, ctx, lanes, up[0], F, keep, sigs_a, sigs_b)
    # -- the Khattak-Mikaitis enumeration ----------------------------------
    start = len(bt)
    _, na, xa = exp_range(fa)
    for ea in range(max(-14, na), min(15, xa) + 1):
        for t in homes:
            eb = t - ea
            if _split(fa, fb, t) is None or not exp_range(fb)[1] <= eb <= exp_range(fb)[2]:
                continue
            for sign in (0, 1):
                pats = [_pair(fa, fb, ea, eb, sign, ma, mb) for ma in sigs_a for mb in sigs_b]
                pats = [p for p in pats if p is not None]
                c = c_words(sign, t)[1] if len(c_words(sign, t)) > 1 else None
                for p in pats:
                    bt.add(f"KM: all {L} lanes at 2^{ea} x 2^{eb}, C = max at 2^{t}",
                           {k: p for k in lanes}, c)
                for n in range(1, L):  # the largest products on n lanes, 1*1 on the rest
                    rows = {k: pats[4 % len(pats)] for k in lanes[:n]}
                    rows.update({k: pats[0] for k in lanes[n:]})
                    bt.add(f"KM: {n} lanes max*max, {L - n} lanes 1*1 at 2^{ea} x 2^{eb}",
                           rows, c)
    return bt, len(bt) - start


def _normalize_through_c(bt, ctx, lanes, t, F, keep, sigs_a, sigs_b):
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    ea, eb = _split(fa, fb, t)
    unit = t - fa.frac_bits - fb.frac_bits  # the exponent of one product's last bit
    low = _split(fa, fb, t - F)
    for sign in (0, 1):
        tiny = None if low is None else _pair(fa, fb, *low, sign, 1 << fa.frac_bits,
                                              1 << fb.frac_bits)
        for ma, mb in ((sigs_a[1], sigs_b[1]), (sigs_a[1] - 1, sigs_b[1])):
            p = _pair(fa, fb, ea, eb, sign, ma, mb)
            if p is None:
                continue
            for n in range(1, len(lanes) + 1):
                top = (n * ma * mb).bit_length() - 1 + unit
                for h in range(top - keep - 2, top - keep + 1):
                    if h <= t - F:
                        continue
                    rows = {k: p for k in lanes[:n]}
                    both = word(fc, sign, (1 << (h - t + F)) + 1, t - F)
                    if both is not None:
                        bt.add(f"{n} lanes {ma}*{mb} at 2^{t}, C = 2^{h} + 2^{t - F}", rows, both)
                    half = word(fc, sign, 1, h)
                    if tiny is not None and n < len(lanes) and half is not None:
                        bt.add(f"{n} lanes {ma}*{mb} at 2^{t}, 2^{t - F} in one more, C = 2^{h}",
                               {**rows, lanes[n]: tiny}, half)
                    # the mirror: the bit near the rounding position in one more
                    # lane, the window's last bit in C (where no product reaches
                    # it and C cannot hold both bits)
                    at_h = _split(fa, fb, h)
                    last = word(fc, sign, 1, t - F)
                    if at_h is not None and last is not None and n < len(lanes):
                        ph = _pair(fa, fb, *at_h, sign, 1 << fa.frac_bits, 1 << fb.frac_bits)
                        if ph is not None:
                            bt.add(f"{n} lanes {ma}*{mb} at 2^{t}, 2^{h} in one more, "
                                   f"C = 2^{t - F}", {**rows, lanes[n]: ph}, last)


def run(ctx) -> Finding:
    if ctx.dp.is_integer:
        return _integer(ctx)
    ctx.require("block")
    ctx.require("rounding")
    bt, n_km = cases(ctx)
    if not len(bt):
        return Finding("carry", "skipped", "no home-exponent products in these formats")
    cs = bt.cases()
    w = ctx.run(cs)
    rnd = ctx.value("output_rounding")
    roundings = [rnd] if rnd else ["rz", "rne", "rna"]
    zs = ctx.value("zero_sign")
    signs = [zs] if zs else ["positive", "ieee"]
    # with the block size unknown (no probe fits the window), a carry limit
    # makes it show: each block's sum wraps on its own
    known = ctx.value("block_size") is not None or ctx.value("blocks") is not None
    sizes = [None] if known else list(range(1, ctx.dp.k + 1))
    cands = {}
    for r in roundings:
        for z in signs:
            for b in sizes:
                same = {"output_rounding": r, "zero_sign": z}
                if b is not None:
                    same["block_size"] = b
                cands[(None, "wrap", r, z, b)] = {"carry_bits": None, **same}
                for bits in range(0, MAX_BITS + 1):
                    for top in TOPS:
                        cands[(bits, top, r, z, b)] = {"carry_bits": bits, "carry_top": top,
                                                       **same}
    found = ctx.consistent(cs, w, cands)
    finding = _finding(ctx, bt, cs, w, [x[:4] for x in found], rnd, n_km)
    finding.values["floor_used"] = ctx.params().zero_floor  # at_floor checks it again
    limited = [x for x in found if x[0] is not None]
    blocks = sorted({x[4] for x in limited})
    if not known and finding.ok and blocks and None not in {x[0] for x in found}:
        if len(blocks) == 1:
            finding.values["block_size"] = blocks[0]
            finding.notes.append(f"the wraps show the blocks: {blocks[0]} products a block")
        else:
            finding.values["block_size"] = blocks[-1]
            finding.values["undetermined"]["block_size"] = (
                f"block sizes {blocks} give the same words on every carry case")
    return finding


def at_floor(ctx, floor) -> dict:
    """The carry step's reading checked again at the zero floor the zero step
    measured (values for the zero step's finding; {} where it stands). The
    carry step runs before the floor is known, at home exponents where a
    floor of -4 or more lifts the anchor: its sums, cut by a deeper window
    below a lower anchor, can fit a narrow top (0 carry bits that normalize)
    that only imitates the floor's cut. Its cases run again with the floor,
    and where other widths (or an unbounded accumulator) fit them too the
    key is named open, the model taking the widest that fits."""
    carry = ctx.findings.get("carry")
    claimed = ctx.value("carry_bits")
    if (carry is None or not carry.ok or claimed is None or floor is None
            or floor == carry.values.get("floor_used") or ctx.dp.is_integer):
        return {}
    bt, _ = cases(ctx)
    if not len(bt):
        return {}
    cs = bt.cases()
    w = ctx.run(cs)
    cands = {(None, "wrap"): {"carry_bits": None, "zero_floor": floor}}
    cands.update({(b, t): {"carry_bits": b, "carry_top": t, "zero_floor": floor}
                  for b in range(MAX_BITS + 1) for t in TOPS})
    found = ctx.consistent(cs, w, cands)
    if found == [(claimed, ctx.value("carry_top"))] or not found:
        return {}
    widest = None if (None, "wrap") in found else max(b for b, _ in found)
    top = "wrap" if widest is None else sorted(t for b, t in found if b == widest)[0]
    shown = sorted({"none" if b is None else str(b) for b, _ in found}, key=lambda x: (len(x), x))
    return {"reopened": ["carry_bits", "carry_top"],
            "assumed": {"carry_bits": widest, "carry_top": top},
            "undetermined": {"carry_bits": (
                f"at the zero floor {floor} the carry step's sums fit carry bits {shown} alike "
                f"(its reading, {claimed} bits, came from sums below a lower anchor, whose "
                f"deeper cut a narrow top imitated); the model takes "
                f"{'an unbounded accumulator' if widest is None else widest}")}}


def _finding(ctx, bt, cs, w, found, rnd, n_km) -> Finding:
    L = len(_last_block(ctx))
    values = {"undetermined": {}}
    notes = []
    rs = sorted({r for _, _, r, _ in found})
    narrow = ctx.value("narrow")
    if (narrow and rnd is None and "rz" in rs and not any(
            b == narrow["carry_bits"] and t == "normalize" and r != "rz" for b, t, r, _ in found)):
        # the rounding step's other reading (a normalizing top at its carry bits
        # under RNE or RNA) gives other words on these sums: the output is RZ
        found = [x for x in found if x[2] == "rz"]
        rs = ["rz"]
        values["settled"] = ["output_rounding"]
        notes.append(f"no normalizing top at {narrow['carry_bits']} carry bits under RNE or RNA "
                     "fits these sums: the rounding step's RZ reading holds")
    if rnd is None and len(rs) == 1:
        values["output_rounding"] = rs[0]
        notes.append(f"these sums round: output rounding {rs[0]}")
    ev = [bt.evidence(i, [w[i]]) for i in range(0, len(bt), max(1, len(bt) // 4))][:4]
    km = f"the Khattak-Mikaitis enumeration ({n_km} cases, K = {L} block)"
    if not found:
        # the accumulator stays open (the model keeps no carry limit): a
        # failed step states no width, not even "none"
        why = f"no accumulator width or top reproduces the {len(cs)} largest-sum cases"
        values["undetermined"]["carry_bits"] = why
        return Finding("carry", "failed", why, values, ev, notes)
    numeric = sorted({b for b, _, _, _ in found if b is not None})
    unbounded = None in {b for b, _, _, _ in found}
    reading = {r for b, _, r, _ in found if b == (None if unbounded else numeric[0])}
    if rnd is None and len(rs) > 1:
        # the rounding stays open; the model takes one that fits the reading reported
        guess = ctx.params().output_rounding
        values["assumed"] = {"output_rounding": guess if guess in reading else
                             sorted(reading, key=("rne", "rna", "rz").index)[0]}
        if narrow and unbounded and "rz" in reading:
            # the rounding step's readings: RZ with an unbounded accumulator, or
            # RNE/RNA with a normalizing top at its carry bits; unbounded here
            values["assumed"]["output_rounding"] = "rz"
    if unbounded:
        wraps = sorted({b for b, t, _, _ in found if b is not None and t == "wrap"})
        need = wraps[0] if wraps else None
        values["carry_bits"] = None
        values["carries_ok"] = True
        same = [t for b, t, _, _ in found if b is not None and b < MAX_BITS]
        why = (f"no sum of {L} products and C reaches past {need} carry bits above the anchor: "
               f"{need} to {MAX_BITS} carry bits and an unbounded accumulator give the same "
               f"words on every such input" if need is not None else
               "every width up to 8 bits wraps some case; only an unbounded one fits")
        if "normalize" in same and ctx.value("output_rounding", rnd) == "rz":
            why += ("; a normalizing top at fewer bits also fits: it drops low bits that an RZ "
                    "output truncates anyway, so it cannot show here")
        values["undetermined"]["carry_bits"] = why
        return Finding("carry", "found", f"{L} products at the largest significands carry "
                       f"into the top without wrapping; {km}: at least {need} carry bits",
                       values, ev, notes)
    # several widths fit: the widest of them (the least a top can drop) is the
    # model's, and the key stays open
    bits = numeric[-1]
    tops = sorted({t for b, t, _, _ in found if b == bits})
    values["carry_bits"] = bits
    if len(numeric) > 1:
        values["carry_bits"] = None
        values.setdefault("assumed", {})["carry_bits"] = bits
        values["carry_widths"] = numeric  # the zero step's subnormal sums may settle it
        values["undetermined"]["carry_bits"] = (
            f"{numeric} carry bits give the same words on every case here (the bits a top "
            f"drops there lie below the output's rounding); the model takes {bits}")
    if len(tops) == 1:
        values["carry_top"] = tops[0]
        top_text = {"wrap": "wraps", "saturate": "saturates",
                    "normalize": "normalizes (shifts right)"}[tops[0]]
    else:
        values["carry_top"] = tops[0]
        values.setdefault("assumed", {})["carry_top"] = tops[0]
        values["undetermined"]["carry_top"] = (f"{' and '.join(tops)} give the same words on "
                                               "every case here")
        top_text = " or ".join(tops)
    narrow = ctx.value("narrow")
    if narrow and bits == narrow["carry_bits"] and values["carry_top"] == "normalize":
        notes.append(f"in the normal range an unbounded accumulator under an RZ output keeping "
                     f"{narrow['rz_keep']} fraction bits gives the same words (the rounding "
                     "step's other reading); subnormal results tell them apart")
    others = [b for b in numeric if b != bits]
    text = (f"the accumulator holds {bits} carry bits above the anchor and {top_text} past "
            f"them; {km}: {bits} fits"
            + (f" (so do {others})" if others else f", {bits - 1} and {bits + 1} do not"))
    if others:
        text = (f"the accumulator's top {top_text} past {numeric[0]} to {bits} carry bits, "
                f"which give the same words here; {km}: wider ones and an unbounded one do not")
    return Finding("carry", "found", text, values, ev, notes)


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
    if dp.bitop == "xor":  # b1 .xor: a lane adds a ^ b, so 1 ^ 0 is the largest
        hi_b = 0
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
    if dp.sparse:
        from tcprobe.models import sparsity

        rand.active = sparsity.decode(dp, sparsity.random_metadata(dp, n, rng))[0]
    # signedness: the top-bit code of A (B) alone against 1 (C = 0)
    top_a, top_b = 1 << (fa.width - 1), 1 << (fb.width - 1)
    one_b = 0 if dp.bitop == "xor" else 1
    n_sign = len(bt)
    bt.add(f"lane 0: {top_a:#x} * {one_b}", {0: (top_a, one_b)}, 0)
    bt.add(f"lane 0: 1 * {top_b:#x}", {0: (1, top_b if dp.bitop != "xor" else 0)}, 0)
    cs = Cases.concat([bt.cases(), rand])
    w = ctx.run(cs)
    as_s32 = lambda x: int(x) - (1 << 32) if int(x) >> 31 else int(x)  # noqa: E731
    signed_a = as_s32(w[n_sign]) < 0
    signed_b = as_s32(w[n_sign + 1]) < 0
    ok = [sat for sat in (False, True)
          if np.array_equal(IntegerModel("c", dp, "", saturate=sat).evaluate(cs), w)]
    ev = [bt.evidence(i, [w[i]]) for i in range(min(4, len(bt)))]
    if len(ok) == 1:
        text = "saturates once to the s32 range" if ok[0] else "wraps modulo 2^32"
        sign = "signed" if signed_a else "unsigned"
        sign_b = "signed" if signed_b else "unsigned"
        return Finding("carry", "found", f"the exact integer sum {text}; A read as {sign}, "
                       f"B as {sign_b} ({len(cs)} cases, {n} of them random)",
                       {"saturate": ok[0], "exact": True, "a_signed": signed_a,
                        "b_signed": signed_b}, ev)
    return Finding("carry", "failed", "neither the wrapped nor the saturated exact sum "
                   "reproduces these cases", {}, ev)
