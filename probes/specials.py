"""specials: the NaN word, Inf*0, Inf-Inf, payloads, overflow.

NaN inputs in A, B and C (several payloads and signs), Inf*0 and 0*Inf,
+Inf and -Inf products in two lanes and against C, an infinity with finite
terms, a NaN whose payload lies only in bits the input conversion drops
(tf32), and products past the largest finite output. The NaN word is read
from the device; a model with that word (and overflow to Inf, or
saturation) must then reproduce every case.
"""

from __future__ import annotations

from tcprobe.models.formats import Specials
from tcprobe.models.words import exp_range, max_sig, pow2, product, word

from .common import MOST_CARRY_BITS, Batch, Finding, StepInfo, open_keeps

STEP = StepInfo(
    order=90, title="special values: NaN word, Inf*0, Inf-Inf, payloads", needs_layout=True,
    engine=True, fingerprint=True
)


def _nans(f):
    """A few NaN words of format f (none for formats without NaN)."""
    if f.specials == Specials.FINITE or f.kind.name == "INT":
        return []
    if f.specials == Specials.FNUZ:  # the one NaN: negative zero's word
        return [1 << (f.width - 1)]
    top = ((1 << f.exp_bits) - 1) << (f.frac_bits + f.drop_bits)
    sign = 1 << (f.width - 1)
    if f.specials == Specials.FN:
        full = top | (((1 << f.frac_bits) - 1) << f.drop_bits)
        return [full, full | sign]
    quiet = 1 << (f.frac_bits - 1 + f.drop_bits)
    return [top | quiet, top | quiet | sign, top | (1 << f.drop_bits), top | quiet | (3 << f.drop_bits)]


def _inf(f, sign=0):
    if f.specials != Specials.IEEE:
        return None
    return (sign << (f.width - 1)) | (((1 << f.exp_bits) - 1) << (f.frac_bits + f.drop_bits))


def run(ctx) -> Finding:
    ctx.require("rounding")  # the model check needs the window and the output rounding
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    one_a, one_b, one_c = pow2(fa, 0), pow2(fb, 0), pow2(fc, 0)
    za, zb = pow2(fa, 0) * 0, pow2(fb, 0) * 0
    bt = Batch(ctx.dp)
    l0, l1 = ctx.together(2) or (0, 1)  # two lanes active together (sparse: a legal pair)
    nan_rows = []
    for w in _nans(fa):
        nan_rows.append(bt.add(f"A = NaN {w:#x}", {0: (w, one_b)}, one_c))
    for w in _nans(fb):
        nan_rows.append(bt.add(f"B = NaN {w:#x}", {l1: (one_a, w)}, one_c))
    for w in _nans(fc):
        nan_rows.append(bt.add(f"C = NaN {w:#x}", {0: (one_a, one_b)}, w))
    inf_a, inf_b, inf_c = _inf(fa), _inf(fb), _inf(fc)
    ninf_a, ninf_c = _inf(fa, 1), _inf(fc, 1)
    special_rows = {}
    if inf_a is not None:
        special_rows["Inf*0"] = bt.add("Inf * 0", {0: (inf_a, zb)}, one_c)
        special_rows["Inf-Inf (lanes)"] = bt.add("+Inf*1 and -Inf*1 in two lanes",
                                                 {l0: (inf_a, one_b), l1: (ninf_a, one_b)})
        special_rows["Inf+finite"] = bt.add("+Inf*1 + finite", {0: (inf_a, one_b)}, one_c)
        special_rows["-Inf+finite"] = bt.add("-Inf*1 + finite", {0: (ninf_a, one_b)}, one_c)
    if inf_b is not None:
        special_rows["0*Inf"] = bt.add("0 * Inf", {0: (za, inf_b)}, one_c)
    if inf_c is not None:
        special_rows["Inf+finite (C)"] = bt.add("C = +Inf, product 1", {0: (one_a, one_b)}, inf_c)
        if inf_a is not None:
            special_rows["Inf-Inf (C)"] = bt.add("+Inf*1 + (C = -Inf)", {0: (inf_a, one_b)}, ninf_c)
    dropped = None
    if fa.drop_bits and fa.specials == Specials.IEEE:
        top = ((1 << fa.exp_bits) - 1) << (fa.frac_bits + fa.drop_bits)
        dropped = bt.add(f"A = {top | 1:#x}: NaN payload only in dropped bits", {0: (top | 1, one_b)})
        dropped_ref = bt.add("A = +Inf", {0: (top, one_b)})
    # overflow: the largest products of every lane
    _, _, xa = exp_range(fa)
    _, _, xb = exp_range(fb)
    big = product(fa, fb, xa + xb, 0, (max_sig(fa), max_sig(fb)), (fa.frac_bits, fb.frac_bits))
    over_rows = []
    if big:
        lanes = {k: big[:2] for k in range(ctx.dp.k)}
        _, _, xc = exp_range(fc)
        cmax = word(fc, 0, max_sig(fc), xc - fc.frac_bits)
        over_rows.append(bt.add("every lane the largest product, C = max", lanes, cmax))
        neg = product(fa, fb, xa + xb, 1, (max_sig(fa), max_sig(fb)), (fa.frac_bits, fb.frac_bits))
        over_rows.append(bt.add("every lane minus the largest product, C = -max",
                                {k: neg[:2] for k in range(ctx.dp.k)},
                                word(fc, 1, max_sig(fc), xc - fc.frac_bits)))
    cs = bt.cases()
    w = ctx.run(cs)
    ev, notes, values = [], [], {"undetermined": {}}
    expect_nan = nan_rows + [special_rows[k] for k in special_rows if "Inf-Inf" in k or "*" in k]
    all_nan = [int(w[r]) for r in expect_nan]
    for r in nan_rows[:3]:
        ev.append(bt.evidence(r, [w[r]]))
    for name, r in special_rows.items():
        ev.append(bt.evidence(r, [w[r]], name))
    canonical = None
    if all_nan:
        words_seen = sorted(set(all_nan))
        if len(words_seen) == 1 and ctx.is_nan(words_seen)[0]:
            canonical = words_seen[0]
            values["nan"] = canonical
        else:
            notes.append(f"NaN-producing cases return {len(words_seen)} different words: "
                         + ", ".join(f"{x:#x}" for x in words_seen[:6]))
    else:
        values["undetermined"]["nan"] = (f"{fa.name} x {fb.name} with a {fc.name} C has no NaN "
                                        "input and no Inf to make one")
    if dropped is not None:
        kind = ("Inf (classified after the conversion)" if w[dropped] == w[dropped_ref]
                else f"{int(w[dropped]):#x}")
        values["dropped_payload"] = "inf" if w[dropped] == w[dropped_ref] else "nan"
        ev.append(bt.evidence(dropped, [w[dropped]], f"behaves like {kind}"))
    for r in over_rows:
        ev.append(bt.evidence(r, [w[r]], "overflow"))
    # which model explains every case: the NaN word, and overflow to Inf or saturation
    # (a profile's IEEE overflow is one of them: Inf under RNE and RNA, the
    # largest finite value under RZ, models/formats.Overflow)
    cands = {ov: {"nan": canonical, "overflow": ov} for ov in ("inf", "saturate")}
    ok = ctx.consistent(cs, w, cands)
    if not ok:  # the largest sums may wrap in a narrow accumulator (see carry)
        wide = {(ov, b, top): {**c, "carry_bits": b, "carry_top": top}
                for ov, c in cands.items() for b in range(0, MOST_CARRY_BITS + 1)
                for top in ("wrap", "saturate", "normalize")}
        ok = sorted({ov for ov, _, _ in ctx.consistent(cs, w, wide)})
    if not ok:
        ok = _open_output(ctx, cs, w, cands, values, notes)
    if not ok:  # both: a narrow accumulator and an open rounding or kept width
        ok = _open_output(ctx, cs, w, wide, values, notes)
    if len(ok) == 1:
        values["overflow"] = ok[0]
    elif len(ok) == 2:
        values["undetermined"]["overflow"] = _overflow_hidden(ctx)
    elif not ok:  # named open, never left silently unset
        notes.append("no model with one canonical NaN reproduces every special case")
        values["undetermined"]["overflow"] = (
            "no model with Inf or saturation on overflow (and the keys found so far) reproduces "
            "every special case, so neither is read here")
    parts = []
    if canonical is not None:
        which = [x for x, on in (("A", _nans(fa)), ("B", _nans(fb)), ("C", _nans(fc))) if on]
        made = [k for k in ("Inf*0", "0*Inf", "Inf-Inf (lanes)", "Inf-Inf (C)") if k in special_rows]
        parts.append(f"every NaN result is {canonical:#x} (NaN in {', '.join(which)} of any "
                     f"payload{''.join(', ' + m for m in made)})")
    if "dropped_payload" in values:
        parts.append("a NaN whose payload is only in dropped bits becomes "
                     + ("Inf: specials are classified after the input conversion"
                        if values["dropped_payload"] == "inf" else "NaN"))
    if "overflow" in values:
        parts.append("overflow gives " + ("Inf" if values["overflow"] == "inf"
                                          else "the largest finite value"))
    status = "found" if ok else "partial"
    return Finding("specials", status, "; ".join(parts) or "no special inputs in these formats",
                   values, ev, notes)


def _overflow_hidden(ctx) -> str:
    """Why Inf and saturation give the same words on every overflow case."""
    fa, fb, fc = ctx.a_fmt, ctx.b_fmt, ctx.c_fmt
    _, _, xa = exp_range(fa)
    _, _, xb = exp_range(fb)
    _, _, xd = exp_range(ctx.d_fmt)
    top = xa + xb + 2 + (ctx.dp.k - 1).bit_length()  # K products below 2^top
    if top <= xd:
        return (f"{fa.name} x {fb.name} products stay below 2^{top} even summed over K = "
                f"{ctx.dp.k}, far under the {ctx.d_fmt.name} D's largest exponent {xd}; with C at "
                f"the {fc.name} maximum they fall below its window and are cut, so no sum "
                "passes the largest finite value: Inf and saturation cannot show")
    return ("Inf and saturation give the same word on every overflow case tried (the "
            "largest products with C = +-max)")


def _open_output(ctx, cs, w, cands, values, notes) -> list:
    """The overflows of the candidates (``cands``: by overflow, or by overflow,
    carry bits and top) that fit once the rounding and kept width the
    rounding step left open are tried too (a saturated word keeps only the
    output's kept bits; under RZ an overflow gives the largest value too)."""
    keeps = open_keeps(ctx) or [ctx.value("output_frac_bits")]
    rnd = ctx.value("output_rounding")
    out = ctx.d_fmt.frac_bits
    tries = {(name, r, k): {**c, "output_rounding": r,
                            "output_frac_bits": None if k == out else k}
             for name, c in cands.items() for r in ([rnd] if rnd else ("rz", "rne", "rna"))
             for k in keeps}
    fits = ctx.consistent(cs, w, tries)
    kept = sorted({k for _, _, k in fits if k is not None})
    if len(kept) == 1 and len(keeps) > 1:
        values["output_frac_bits"] = None if kept[0] == out else kept[0]
        values["settled"] = ["output_frac_bits"]
        notes.append(f"the largest finite word keeps {kept[0]} fraction bits")
    # a candidate's name is its overflow, or (overflow, carry bits, top)
    return sorted({name[0] if isinstance(name, tuple) else name for name, _, _ in fits})
