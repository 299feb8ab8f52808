"""A slow, independent reference of the engine's mechanism, one case at a
time, in Python integers and Fractions. Written from the stated mechanism
(models/engine.py module docstring), not from the kernel."""

from __future__ import annotations

from fractions import Fraction

from tcprobe.models.formats import get_format

NAN, INF = "nan", "inf"


def value(fmt, word):
    """(kind, sign, Fraction magnitude, raw exponent, msb exponent)."""
    f = get_format(fmt)
    w = int(word) & f.word_mask
    if f.drop_bits:
        w &= ~((1 << f.drop_bits) - 1)
    sign = (w >> (f.width - 1)) & 1 if f.signed else 0
    e = (w >> (f.frac_bits + f.drop_bits)) & ((1 << f.exp_bits) - 1)
    m = (w >> f.drop_bits) & ((1 << f.frac_bits) - 1)
    top = (1 << f.exp_bits) - 1
    if f.specials.name == "IEEE" and e == top:
        return (INF if m == 0 else NAN), sign, None, None, None
    if f.specials.name == "FN" and e == top and m == (1 << f.frac_bits) - 1:
        return NAN, sign, None, None, None
    raw = (e if e else 1) - f.bias
    sig = m | (1 << f.frac_bits) if e else m
    mag = Fraction(sig) * Fraction(2) ** (raw - f.frac_bits)
    msb = None if sig == 0 else raw - f.frac_bits + sig.bit_length() - 1
    return "num", sign, mag, raw, msb


def floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def round_to(fmt, x: Fraction, rounding: str, keep: int | None = None, overflow: str = "inf"):
    """Round the exact non-negative magnitude x into fmt: (biased, frac) fields or 'inf'/'max'."""
    f = get_format(fmt)
    keep = f.frac_bits if keep is None else keep
    emin = 1 - f.bias
    if x == 0:
        return 0
    e = max(floor_log2(x), emin)
    ulp = Fraction(2) ** (e - keep)
    q, r = divmod(x, ulp)
    q = int(q)
    if rounding == "rne" and (r > ulp / 2 or (r == ulp / 2 and q & 1)):
        q += 1
    elif rounding == "rna" and r >= ulp / 2:
        q += 1
    if q >> (keep + 1):
        q >>= 1
        e += 1
    if q >> keep:
        biased, frac = e + f.bias, q - (1 << keep)
    else:
        biased, frac = 0, q
    maxb = (1 << f.exp_bits) - 2 if f.specials.name == "IEEE" else (1 << f.exp_bits) - 1
    if biased > maxb:
        if overflow == "saturate" or (overflow == "ieee" and rounding == "rz"):
            return (maxb << f.frac_bits) | (((1 << keep) - 1) << (f.frac_bits - keep))
        return "inf"
    return (biased << f.frac_bits) | (frac << (f.frac_bits - keep))


def encode(fmt, neg: bool, x: Fraction, rounding, keep, overflow, zero_positive):
    f = get_format(fmt)
    body = round_to(fmt, x, rounding, keep, overflow)
    sbit = (1 << (f.width - 1)) if neg else 0
    if body == "inf":
        return sbit | (((1 << f.exp_bits) - 1) << f.frac_bits)
    if body == 0 and zero_positive:
        return 0
    return (sbit | body) << f.drop_bits


def block(terms, specials, out_fmt, p, rounding, keep, nan_word, window, floor):
    """One fused block: terms are (sign, magnitude, align exponent)."""
    f = get_format(out_fmt)
    if NAN in specials or ({("inf", 0), ("inf", 1)} <= specials):
        return nan_word
    infs = [s for k, s in specials if k == "inf"]
    if infs:
        return ((1 << (f.width - 1)) if infs[0] else 0) | (((1 << f.exp_bits) - 1) << f.frac_bits)
    nonzero = [t for t in terms if t[1] != 0]
    all_neg = all(t[0] == 1 for t in terms)
    zero_pos = p.zero_sign == "positive"
    if not nonzero:
        return encode(out_fmt, all_neg and not zero_pos, Fraction(0), rounding, keep, p.overflow, zero_pos)
    total = Fraction(0)
    if window is None:
        total = sum((-m if s else m) for s, m, _ in nonzero)
    else:
        anchor = max(a for _, _, a in nonzero)
        if floor is not None:
            anchor = max(anchor, floor)
        quantum = Fraction(2) ** (anchor - window)
        for s, m, _ in nonzero:
            units = int(m / quantum)  # toward zero
            total += (-units if s else units) * quantum
    if total == 0:
        return encode(out_fmt, all_neg and not zero_pos, Fraction(0), rounding, keep, p.overflow, zero_pos)
    return encode(out_fmt, total < 0, abs(total), rounding, keep, p.overflow, zero_pos)


def addend_term(fmt, word, p, terms, specials):
    kind, s, mag, raw, msb = value(fmt, word)
    if kind == NAN:
        specials.add(NAN)
    elif kind == INF:
        specials.add(("inf", s))
    else:
        terms.append((s, mag, msb if p.align == "normalized" and msb is not None else raw))


def reference_dot(dp, a_words, b_words, c_word, p):
    """The output word for one case under EngineParams p (no input conversion
    beyond truncation, no c_convert, no carry_bits)."""
    out = get_format(dp.d_type)
    inter = get_format(p.inter_type) if p.inter_type else out
    d_keep = p.output_frac_bits
    i_keep = p.inter_frac_bits if p.inter_frac_bits is not None else (d_keep if inter == out else None)
    d_nan = p.nan if p.nan is not None else out.canonical_nan
    i_nan = d_nan if inter == out else inter.canonical_nan
    order = list(p.k_order) if p.k_order else list(range(dp.k))
    blocks = [order[i:i + p.block_size] for i in range(0, dp.k, p.block_size)]
    acc_fmt, acc_word, have = dp.c, c_word, p.c_join == "first"
    for bi, positions in enumerate(blocks):
        last = bi == len(blocks) - 1 and p.c_join == "first"
        terms, specials = [], set()
        if have:
            addend_term(acc_fmt, acc_word, p, terms, specials)
        for k in positions:
            ka, sa, ma, ra, xa = value(dp.a_type, a_words[k])
            kb, sb, mb, rb, xb = value(dp.b_type, b_words[k])
            s = sa ^ sb
            if NAN in (ka, kb):
                specials.add(NAN)
            elif INF in (ka, kb):
                other = mb if ka == INF else ma
                if other == 0 and other is not None:
                    specials.add(NAN)
                else:
                    specials.add(("inf", s))
            else:
                prod = ma * mb
                align = (floor_log2(prod) if prod else 0) if p.align == "normalized" else ra + rb
                terms.append((s, prod, align))
        fmt = out if last else inter
        acc_word = block(terms, specials, fmt, p, p.output_rounding if last else
                         (p.inter_rounding or p.output_rounding), d_keep if last else i_keep,
                         d_nan if last else i_nan, p.window_bits, p.zero_floor)
        acc_fmt, have = fmt, True
    if p.c_join == "last":
        terms, specials = [], set()
        addend_term(acc_fmt, acc_word, p, terms, specials)
        addend_term(dp.c, c_word, p, terms, specials)
        acc_word = block(terms, specials, out, p, p.c_add_rounding, d_keep, d_nan, None, None)
    return acc_word
