"""cinput: does C enter as given, or converted first to a narrower type
(the engine's ``c_convert``: rounded to nearest even before the MMA)?

Precision. C = -(2^e + 2^(e-j)) with one product 2^e on lane L leaves
-2^(e-j) where C kept its bit j and L shares C's block (some lane does:
the block C is the addend of, or, with C added after the blocks, every
lane). It is compared with the D of C = -2^(e-j) alone, which no conversion
changes; a row counts only where that D is not zero (no floor hides it).
Two anchors are tried, e = 0 (inside every format's range) and a large e
(clear of floors near zero); a bit kept at either is kept. The first bit
lost, j0, gives p = j0 - 1 kept fraction bits, if every deeper bit is lost
too.

A window of p bits loses the same bits, so a conversion must also round:
C = -(2^e + 2^(e-p-1) + 2^(e-p-2)) (above half an ulp of p bits) leaves
-2^(e-p) only if C was rounded up to 2^e + 2^(e-p) before the product met
it; a window cuts those bits instead and leaves 0.

Range. Among the formats with p fraction bits, C = +-2^k (k from 0 up to
C's largest exponent), +-Inf and NaN alone tell which one C passes
through (overflow to Inf or NaN, no Inf); each candidate's model is asked,
comparing NaNs as NaNs (the NaN word is the specials step's).

When C passes through a format X whose every value C holds exactly, the
later steps see C as X (``Context.view_c``): the words they build for C
are X's, which the conversion keeps, and the models they ask take C as X.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import FORMATS, Class, decode, get_format
from tcprobe.models.words import exp_range, pow2, product, product_range, word

from .common import Batch, Finding, StepInfo
from .specials import _inf

STEP = StepInfo(
    order=55, title="C on entry: kept as given, or converted to a narrower type first",
    needs_layout=True, engine=True, fingerprint=True
)

DEEPEST = 11  # bits of C read: every narrower float format keeps at most 10


def _candidates(c_fmt, p: int) -> list[str]:
    """The float formats with p fraction bits that do not hold every C word."""
    out = []
    for name, f in FORMATS.items():
        if name != f.name or f.kind.name != "FLOAT" or f.frac_bits != p:
            continue
        if holds(f, c_fmt):
            continue
        out.append(f.name)
    return sorted(set(out))


def holds(outer, inner) -> bool:
    """Whether every finite value of ``inner`` is a value of ``outer``."""
    outer, inner = get_format(outer), get_format(inner)
    lo_o, _, hi_o = exp_range(outer)
    lo_i, _, hi_i = exp_range(inner)
    return (outer.frac_bits >= inner.frac_bits and lo_o <= lo_i and hi_o >= hi_i
            and (outer.signed or not inner.signed))


def _anchors(ctx) -> list[int]:
    """e = 0, and the largest e with a 2^e product that C and D both hold (floors)."""
    _, _, cmax = exp_range(ctx.c_fmt)
    _, _, dmax = exp_range(ctx.d_fmt)
    _, pmax = product_range(ctx.a_fmt, ctx.b_fmt)
    big = min(cmax - 2, dmax - 2, pmax - 1, DEEPEST + 2)
    return [0] if big <= 0 else [0, big]


def _lanes(ctx) -> list[int]:
    """Every lane that can carry a product alone."""
    return [k for k in range(ctx.dp.k) if ctx.co_active([k])]


def run(ctx) -> Finding:
    dp, cf = ctx.dp, ctx.c_fmt
    deepest = min(cf.frac_bits, DEEPEST)
    bt = Batch(dp)
    lanes = _lanes(ctx)
    rows = {}  # (e, j) -> (lane rows, the row of -2^(e-j) alone)
    for e in _anchors(ctx):
        p = product(ctx.a_fmt, ctx.b_fmt, e)
        if p is None:
            continue
        for j in range(1, deepest + 1):
            c = word(cf, 1, (1 << j) + 1, e - j)
            ref = pow2(cf, e - j, 1)
            if c is None or ref is None:
                continue
            rows[e, j] = ([bt.add(f"C = -(2^{e} + 2^{e - j}), product 2^{e} on lane {k}",
                                  {k: p[:2]}, c) for k in lanes],
                          bt.add(f"C = -2^{e - j} alone", {}, ref))
    zero_row = bt.add("C = +0 alone", {}, None)
    if not rows:
        return Finding("cinput", "skipped", "no product 2^e reaches C's range: C's entry is "
                       "not probed", {})
    w = ctx.run(bt.cases())
    plain = _finite_nonzero(ctx, w)
    kept, lost, ev = {}, {}, []
    for (e, j), (lane_rows, ref) in rows.items():
        if w[ref] == w[zero_row] or not plain[ref]:  # a floor or C's range hides it
            continue
        hit = [r for r in lane_rows if w[r] == w[ref]]
        if hit:
            kept[j] = (e, hit[0], ref)
        else:
            lost.setdefault(j, (e, lane_rows[0], ref))
    lost = {j: x for j, x in lost.items() if j not in kept}
    values = {"c_bits_kept": sorted(kept), "c_bits_lost": sorted(lost)}
    if not lost:
        shown = max(kept, default=0)
        return Finding("cinput", "found",
                       f"C enters as given: each of its top {shown} fraction bits cancels against a "
                       f"product as it should", values, _evidence(bt, w, kept, lost))
    j0 = min(lost)
    p = j0 - 1
    ev = _evidence(bt, w, kept, lost)
    if any(j > j0 for j in kept) or p < 0:
        why = f"C's bits are kept at {sorted(kept)} but lost at {sorted(lost)}: no single precision"
        values["undetermined"] = {**values.get("undetermined", {}), "c_convert": why}
        return Finding("cinput", "failed", why, values, ev)
    rounds, rev = _rounds_up(ctx, p, lanes)
    ev += rev
    if not rounds:
        return Finding("cinput", "found",
                       f"C's bits past {p} fraction bits are cut, not rounded: a narrow window "
                       "(the internal step), not a conversion of C", values, ev)
    fits, range_ev = _range(ctx, p)
    ev += range_ev
    if not fits:
        why = (f"C is rounded to {p} fraction bits, but no format with {p} fraction bits "
               "gives the device's words for C alone")
        values["undetermined"] = {**values.get("undetermined", {}), "c_convert": why}
        return Finding("cinput", "failed", why, values, ev)
    values["c_convert"] = fits[0]
    if len(fits) > 1:
        values["undetermined"] = {"c_convert": (
            f"C is rounded to nearest even to {p} fraction bits; {', '.join(fits)} give the same "
            "words for every C probed")}
        values["candidates"] = {"c_convert": list(fits)}
        values["assumed"] = {"c_convert": fits[0]}
        values["c_convert"] = None
    if holds(cf, fits[0]) and len(fits) == 1:
        ctx.view_c(fits[0])
    return Finding("cinput", "found" if len(fits) == 1 else "partial",
                   f"C is converted to {' or '.join(fits)} (rounded to nearest even, {p} fraction "
                   "bits) before the products meet it", values, ev)


def _finite_nonzero(ctx, words) -> np.ndarray:
    """Which device words are finite and not zero (a C out of the range of
    the type it is converted to gives a NaN or an Inf: no reading)."""
    cls = decode(ctx.d_fmt, words).cls
    return (cls != Class.NAN) & (cls != Class.INF) & (cls != Class.ZERO)


def _evidence(bt, w, kept, lost) -> list:
    ev = []
    for tag, rows in (("kept", kept), ("lost", lost)):
        for j in sorted(rows)[-1:] if tag == "kept" else sorted(rows)[:1]:
            _, r, ref = rows[j]
            ev.append(bt.evidence(r, [w[r], w[ref]], f"C's bit {j} {tag}"))
    return ev


def _rounds_up(ctx, p: int, lanes) -> tuple[bool, list]:
    """Whether C's bits below p fraction bits round C up (a conversion to
    nearest) rather than being cut (a window): C = -(2^e + 2^(e-p-1) +
    2^(e-p-2)), product 2^e, against C = -2^(e-p) alone."""
    cf = ctx.c_fmt
    bt = Batch(ctx.dp)
    rows = []
    for e in _anchors(ctx):
        prod = product(ctx.a_fmt, ctx.b_fmt, e)
        c = word(cf, 1, (1 << (p + 2)) + 3, e - p - 2)
        ref = pow2(cf, e - p, 1)
        if prod is None or c is None or ref is None:
            continue
        rows.append(([bt.add(f"C = -(2^{e} + 2^{e - p - 1} + 2^{e - p - 2}), product 2^{e} on "
                             f"lane {k}", {k: prod[:2]}, c) for k in lanes],
                     bt.add(f"C = -2^{e - p} alone", {}, ref)))
    if not rows:
        return False, []
    w = ctx.run(bt.cases())
    plain = _finite_nonzero(ctx, w)
    for lane_rows, ref in rows:
        hit = [r for r in lane_rows if w[r] == w[ref] and plain[ref]]
        if hit:
            return True, [bt.evidence(hit[0], [w[hit[0]], w[ref]],
                                      "C rounded up to p bits before the product met it")]
    return False, [bt.evidence(rows[0][0][0], [w[rows[0][0][0]], w[rows[0][1]]],
                               "C's low bits cut, not rounded up")]


def _range(ctx, p: int) -> tuple[list[str], list]:
    """The formats with p fraction bits whose conversion gives the device's
    words for C alone (+-2^k, +-Inf, NaN; NaNs compared as NaNs)."""
    cf, df = ctx.c_fmt, ctx.d_fmt
    _, _, cmax = exp_range(cf)
    bt = Batch(ctx.dp)
    for s in (0, 1):
        for k in range(0, cmax + 1):
            bt.add(f"C = {'-' if s else ''}2^{k} alone", {}, pow2(cf, k, s))
    specials = [w for w in (_inf(cf, 0), _inf(cf, 1), cf.canonical_nan) if w is not None]
    for x in specials:
        bt.add(f"C = {x:#x} alone", {}, x)
    cases = bt.cases()
    words = ctx.run(cases)
    got_nan = decode(df, words).cls == Class.NAN
    fits = []
    for name in _candidates(cf, p):
        try:
            want = ctx.model(c_convert=name, window_bits=None, zero_floor=None,
                             output_frac_bits=None).evaluate(ctx.complete(cases))
        except ValueError:
            continue
        want_nan = decode(df, want).cls == Class.NAN
        if np.array_equal(want_nan, got_nan) and np.array_equal(
                np.where(got_nan, 0, words), np.where(want_nan, 0, want)):
            fits.append(name)
    ev = [bt.evidence(i, [words[i]], "C alone") for i in (cmax, len(cases) - 1)]
    return fits, ev
