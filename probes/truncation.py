"""truncation: flip each input bit; which low bits does the datapath ignore,
and are they cut (truncation) or rounded away?

A = 1.0 with bit j flipped, B = 1.0, C = -1 (and the same for B): a bit
whose flip leaves D unchanged is ignored (C cancels the 1.0, so a low bit
shows whatever D's precision). Where the word is wider than the format
(tf32 in an f32 word) the ignored low bits are then set to just below,
exactly at and just above half of the kept LSB, from an even and an odd
kept value, and each D is compared with the D of the exact neighbours: the
same as the lower neighbour everywhere is truncation; ties to the even one
is round-to-nearest-even; ties up is round-to-nearest-away. Under RNA the
half bit alone moves D, so the flips count one bit fewer: both counts are
tried, a count counts only where its neighbours 1, 1+ulp, 1+2ulp give three
words, and exactly one (count, conversion) must fit.
"""

from __future__ import annotations

from tcprobe.models.words import pow2

from .common import Batch, Finding, StepInfo

STEP = StepInfo(
    order=50, title="input truncation: which input bits are ignored", needs_layout=True,
    engine=True, fingerprint=True
)


def _flips(ctx, bt, fmt, other_one, op):
    """C = -1 cancels the 1.0, so a flipped low bit is all of D: it shows
    even where D keeps fewer fraction bits than the input."""
    base = pow2(fmt, 0)
    minus_one = pow2(ctx.c_fmt, 0, 1)
    rows = {}
    for j in range(fmt.width):
        w = base ^ (1 << j)
        lanes = {0: (w, other_one) if op == "a" else (other_one, w)}
        rows[j] = bt.add(f"{op.upper()} = 1.0 with bit {j} flipped, C = -1", lanes, minus_one)
    ref = bt.add(f"{op.upper()} = 1.0, C = -1",
                 {0: (base, other_one) if op == "a" else (other_one, base)}, minus_one)
    return rows, ref


def run(ctx) -> Finding:
    dp = ctx.dp
    one_a, one_b = pow2(ctx.a_fmt, 0), pow2(ctx.b_fmt, 0)
    bt = Batch(dp)
    ra, ref_a = _flips(ctx, bt, ctx.a_fmt, one_b, "a")
    rb, ref_b = _flips(ctx, bt, ctx.b_fmt, one_a, "b")
    words = ctx.run(bt.cases())
    ign_a = [j for j, r in ra.items() if words[r] == words[ref_a]]
    ign_b = [j for j, r in rb.items() if words[r] == words[ref_b]]
    ev = [bt.evidence(ref_a, [words[ref_a]])]
    for j in (ign_a[-1:] if ign_a else []) + [max(ign_a, default=-1) + 1]:
        if j in ra:
            ev.append(bt.evidence(ra[j], [words[ra[j]]],
                                  "ignored" if j in ign_a else "moves D"))
    values = {"ignored_bits_a": ign_a, "ignored_bits_b": ign_b}
    if (ign_a or ign_b) and not ctx.a_fmt.drop_bits and not ctx.b_fmt.drop_bits:
        # the words are the formats: a low bit ignored is cut by the window
        # (a window narrower than the product's bits), never by a conversion
        values["undetermined"] = {"input_conversion": (
            f"the {dp.a_type} and {dp.b_type} words are the formats (no dropped bits to cut or "
            "round); the low bits ignored here are below the window (the internal step's)")}
        return Finding("truncation", "found",
                       f"bits {_bits(ign_a)} of A and {_bits(ign_b)} of B are ignored, but the "
                       f"{dp.a_type} word carries nothing below the format: the window cuts "
                       "them, and input conversion does not apply", values, ev)
    if not ign_a and not ign_b:
        values["undetermined"] = {"input_conversion": (
            f"every bit of the {ctx.a_fmt.width}-bit {dp.a_type} word moves D: the word is the "
            "format, there are no dropped bits to cut or round")}
        return Finding("truncation", "found",
                       f"no input bit is ignored: the {dp.a_type} word carries nothing below the "
                       "format, so input conversion does not apply", values, ev)
    low = lambda ign: ign == list(range(len(ign)))  # noqa: E731
    if not (low(ign_a) and low(ign_b)) or len(ign_a) != len(ign_b):
        return Finding("truncation", "failed",
                       f"ignored bits are not the same low bits of A and B (A {ign_a}, B {ign_b})",
                       values, ev)
    values["undetermined"] = {}
    drop = min(ctx.a_fmt.drop_bits, ctx.b_fmt.drop_bits)
    if drop and len(ign_a) > drop:
        return _past_container(ctx, ign_a, drop, one_b, values, ev)
    # rounding away from zero moves D at the half bit too (so only d - 1 bits
    # look ignored): every dropped-bit count the flips allow is tried, and the
    # conversion must fit exactly one (count, mode), its references distinct
    fits = []
    like = {}
    for d in (len(ign_a), len(ign_a) + 1):
        found, ev2, like_d = _conversion(ctx, d, one_b)
        ev += ev2
        like[d] = like_d
        fits += [(d, m) for m in found]
    if len(fits) == 1:
        (d, mode), = fits
        found = [mode]
    else:
        found = [m for _, m in fits]
    if len(fits) != 1:
        return Finding("truncation", "failed", f"{len(ign_a)} low bits are ignored, but their "
                       f"effect fits no single conversion (fits {fits}; {like})", values, ev)
    values["dropped_bits"] = d
    f = ctx.a_fmt
    mode = found[0]
    values["input_conversion"] = mode
    text = {"truncate": "cut (truncated toward zero)", "rne": "rounded to nearest even",
            "rna": "rounded to nearest, ties away"}[mode]
    note = []
    return Finding("truncation", "found",
                   f"bits 0-{d - 1} of each {dp.a_type} word are dropped: the input is {text} to "
                   f"the {f.name} container (sign, exponent, top {f.frac_bits} fraction bits)",
                   values, ev, note)


def _past_container(ctx, ign, drop, one_b, values, ev) -> Finding:
    """Bits the container keeps are ignored too: something after the products
    cuts them (a narrow window, a block rounded to few bits before C is
    added). Only a conversion that carries out of the significand still
    shows through such a cut: A = 1.11..1 (every kept bit set) with the
    dropped bits just below or just above half becomes 2.0 when rounded to
    nearest and stays under 2 when cut. Truncation is read where neither
    carries; round to nearest (even or away: a tie at an odd value rounds up
    under both) where only the one above half does; else it stays open."""
    f = ctx.a_fmt
    top = pow2(f, 0) | (((1 << f.frac_bits) - 1) << drop)  # 1.11..1, dropped bits clear
    half = 1 << (drop - 1)
    bt = Batch(ctx.dp)
    sign = 1 << (f.width - 1)
    rows = {}
    for neg in (0, sign):
        for name, w in (("1.11..1", top), ("2", pow2(f, 1)), ("below half", top | (half - 1)),
                        ("above half", top | half | 1)):
            rows[(neg, name)] = bt.add(f"A = {'-' if neg else ''}{name} (dropped bits of "
                                       f"1.11..1), B = 1, C = 0", {0: (w | neg, one_b)}, 0)
    w = ctx.run(bt.cases())
    got = {key: int(w[r]) for key, r in rows.items()}
    ev += [bt.evidence(r, [w[r]]) for r in rows.values()]
    reads = set()
    for neg in (0, sign):
        lo, up = got[(neg, "1.11..1")], got[(neg, "2")]
        below, above = got[(neg, "below half")], got[(neg, "above half")]
        if lo == up or below != lo or above not in (lo, up):
            reads.add(None)
        else:
            reads.add("truncate" if above == lo else "nearest")
    cut = (f"bits {_bits(ign)} of A and B are ignored, past the {drop} low bits the "
           f"{f.name} container drops: a cut after the products")
    if reads == {"truncate"}:
        values["input_conversion"] = "truncate"
        values["dropped_bits"] = drop
        return Finding("truncation", "found", f"{cut}; 1.11..1 with its dropped bits above "
                       "half stays under 2: the input is cut (truncated toward zero)", values, ev)
    if reads == {"nearest"}:
        why = (f"{cut}; 1.11..1 with its dropped bits above half becomes 2 (rounded to "
               "nearest), and the ties that tell even from away do not show through the cut")
        values["undetermined"]["input_conversion"] = why
        values["assumed"] = {"input_conversion": "rne"}
        values["candidates"] = {"input_conversion": ["rne", "rna"]}
        values["dropped_bits"] = drop
        return Finding("truncation", "partial", f"{cut}; rounded to nearest (even or away)",
                       values, ev)
    why = f"{cut}, and no carry out of 1.11..1 shows how the dropped bits went"
    values["undetermined"]["input_conversion"] = why
    return Finding("truncation", "partial", why, values, ev)


def _bits(ign) -> str:
    return "none" if not ign else f"{ign[0]}-{ign[-1]}" if len(ign) > 1 else str(ign[0])


def _conversion(ctx, d, one_b):
    """Which conversions explain D for dropped-bit patterns of a d-bit field."""
    dp, f = ctx.dp, ctx.a_fmt
    ulp = 1 << d
    even, odd = pow2(f, 0), pow2(f, 0) + ulp
    half = 1 << (d - 1)
    bt = Batch(dp)
    # C = -1 (+1 for the negative rows) cancels the 1.0, so the kept LSB shows
    # however few fraction bits D keeps (as in the flips)
    c_neg, c_pos = pow2(ctx.c_fmt, 0, 1), pow2(ctx.c_fmt, 0, 0)
    refs = {name: bt.add(f"A = {name}, C = -1", {0: (w, one_b)}, c_neg)
            for name, w in (("1", even), ("1+ulp", odd), ("1+2ulp", odd + ulp))}
    probes = {  # name: (word, truncate, rne, rna)
        "below half, even": (even | (half - 1), "1", "1", "1"),
        "half, even (tie)": (even | half, "1", "1", "1+ulp"),
        "above half, even": (even | half | 1, "1", "1+ulp", "1+ulp"),
        "half, odd (tie)": (odd | half, "1+ulp", "1+2ulp", "1+2ulp"),
    }
    sign = 1 << (f.width - 1)
    rows = {name: bt.add(f"A = 1.0 + {name} of the kept LSB (bit {d}), C = -1",
                         {0: (w, one_b)}, c_neg)
            for name, (w, *_) in probes.items()}
    neg = {name: bt.add(f"A = -(1.0 + {name}), C = 1", {0: (w | sign, one_b)}, c_pos)
           for name, (w, *_) in probes.items()}
    neg_refs = {name: bt.add(f"A = -{name}, C = 1", {0: (w | sign, one_b)}, c_pos)
                for name, w in (("1", even), ("1+ulp", odd), ("1+2ulp", odd + ulp))}
    w = ctx.run(bt.cases())
    like, ev = {}, []
    # bit d is the kept LSB only if 1, 1+ulp and 1+2ulp are three words (an
    # input rounded at the half bit merges 1+ulp into 1+2ulp one bit too low)
    for r in [*refs.values(), *neg_refs.values()]:
        ev.append(bt.evidence(r, [w[r]], "reference"))
    distinct = len({int(w[r]) for r in refs.values()}) == 3 and \
        len({int(w[r]) for r in neg_refs.values()}) == 3
    if not distinct:
        return [], ev, {"references": f"A = 1, 1+2^{d}, 1+2^{d + 1} do not give three words: "
                                      f"bit {d} is not the kept LSB"}
    for name, r in rows.items():
        match = [ref for ref, rr in refs.items() if w[rr] == w[r]]
        like[name] = match[0] if match else None
        ev.append(bt.evidence(r, [w[r]], f"behaves like A = {like[name]}"))
    mirrored = all(like[n] is not None and w[neg[n]] == w[neg_refs[like[n]]] for n in rows)
    modes = {"truncate": 1, "rne": 2, "rna": 3}
    found = [m for m, col in modes.items()
             if mirrored and all(like[n] == spec[col] for n, spec in probes.items())]
    return found, ev, like
