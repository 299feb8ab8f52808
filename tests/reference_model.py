"""A slow, independent reference of tcgen05.mma: one case at a time, Python ints.

Written from the stated mechanism (../shared/seeds/tcgen05-blog.txt and
../shared/notes/tcgen05-published-parameters.md), not from the models: it
has its own field decoders, its own truncation and its own f32/f16
conversion, and calls nothing in tcprobe.models. Its constants are the
published parameters; where the sources are silent it makes the choices
documented in tcprobe.models.tcgen05 (zero floors -133/-21, overflow to Inf,
+0 when every product is zero and C is -0).
"""

from __future__ import annotations

from fractions import Fraction

# name: (word width, exponent bits, fraction bits, bias, specials, signed, dropped low bits)
FIELDS = {
    "f32": (32, 8, 23, 127, "ieee", True, 0),
    "tf32": (32, 8, 10, 127, "ieee", True, 13),
    "bf16": (16, 8, 7, 127, "ieee", True, 0),
    "f16": (16, 5, 10, 15, "ieee", True, 0),
    "e4m3": (8, 4, 3, 7, "fn", True, 0),
    "e5m2": (8, 5, 2, 15, "ieee", True, 0),
    "e2m3": (6, 2, 3, 1, "none", True, 0),
    "e3m2": (6, 3, 2, 3, "none", True, 0),
    "e2m1": (4, 2, 1, 1, "none", True, 0),
    "ue4m3": (7, 4, 3, 7, "fn", False, 0),
}
NAN32, INF32 = 0x7FFFFFFF, 0x7F800000
NAN16, INF16 = 0x7FFF, 0x7C00
F32_WINDOW = 25  # blog: quantum = max exponent - 25
ZERO_FLOOR = {"f32": -133, "f16": -21}  # unstated for f32 (MMA-Sim); PR vector for f16
SCALED_PRODUCT_WINDOW = 39  # notes: MXF4 / NVFP4
SCALE_FLOOR = 35
C_MERGE = 35
GROUP_FLOOR = -174


def decode(fmt: str, word: int):
    """('nan',) | ('inf', sign) | ('num', signed significand, lsb exponent, raw exponent)."""
    if fmt == "ue8m0":
        word &= 0xFF
        return ("nan",) if word == 0xFF else ("num", 1, word - 127, word - 127)
    width, ebits, fbits, bias, specials, signed, drop = FIELDS[fmt]
    word &= (1 << width) - 1
    word >>= drop  # tf32: the low 13 bits of the f32 word are cut before anything else
    neg = signed and (word >> (width - drop - 1)) & 1
    exp = (word >> fbits) & ((1 << ebits) - 1)
    frac = word & ((1 << fbits) - 1)
    top = (1 << ebits) - 1
    if specials == "ieee" and exp == top:
        return ("inf", int(neg)) if frac == 0 else ("nan",)
    if specials == "fn" and exp == top and frac == (1 << fbits) - 1:
        return ("nan",)
    raw = exp - bias if exp else 1 - bias
    sig = (frac | (1 << fbits)) if exp else frac
    return ("num", -sig if neg else sig, raw - fbits, raw)


def cut(m: int, e: int, q: int) -> int:
    """m * 2**e in whole units of 2**q, cut toward zero."""
    return int(Fraction(m) * Fraction(2) ** (e - q))


def to_f32_rz(units: int, q: int) -> int:
    """units * 2**q as an f32 word, magnitude truncated, overflow to Inf, +0 for zero."""
    if units == 0:
        return 0
    sign = 0x80000000 if units < 0 else 0
    mag = Fraction(abs(units)) * Fraction(2) ** q
    e = q + abs(units).bit_length() - 1
    if e > 127:
        return sign | INF32
    if e >= -126:
        sig = int(mag / Fraction(2) ** (e - 23))
        return sign | ((e + 127) << 23) | (sig - (1 << 23))
    sub = int(mag / Fraction(2) ** -149)
    return sign | sub if sub else 0


def to_f16_rne(units: int, q: int) -> int:
    """units * 2**q rounded to nearest even into f16, overflow to Inf, +0 for zero."""
    if units == 0:
        return 0
    sign = 0x8000 if units < 0 else 0
    mag = Fraction(abs(units)) * Fraction(2) ** q
    e = max(q + abs(units).bit_length() - 1, -14)
    n = round(mag / Fraction(2) ** (e - 10))  # Fraction rounds half to even
    if n >= 1 << 11:
        n >>= 1
        e += 1
    if e > 15:
        return sign | INF16
    if n == 0:
        return 0
    if n < 1 << 10:
        return sign | n
    return sign | ((e + 15) << 10) | (n - (1 << 10))


def _specials(items):
    """Fold ('nan'|'+inf'|'-inf'|None) flags: 'nan', '+inf', '-inf' or None."""
    if "nan" in items or ("+inf" in items and "-inf" in items):
        return "nan"
    if "+inf" in items:
        return "+inf"
    return "-inf" if "-inf" in items else None


def _product_special(x, y, extra_zero=False):
    if x[0] == "nan" or y[0] == "nan":
        return "nan"
    if x[0] == "inf" or y[0] == "inf":
        zero = extra_zero or (x[0] == "num" and x[1] == 0) or (y[0] == "num" and y[1] == 0)
        if zero:
            return "nan"
        neg = (x[1] if x[0] == "inf" else int(x[1] < 0)) ^ (y[1] if y[0] == "inf" else int(y[1] < 0))
        return "-inf" if neg else "+inf"
    return None


def unscaled(a_fmt, b_fmt, d_fmt, a, b, c, active=None):
    """Unscaled tcgen05 float MMA word (kinds tf32, f16, f8f6f4)."""
    flags, terms = [], []
    for k in range(len(a)):
        if active is not None and not active[k]:
            continue  # removed before classification
        x, y = decode(a_fmt, a[k]), decode(b_fmt, b[k])
        s = _product_special(x, y)
        if s:
            flags.append(s)
        elif x[1] and y[1]:
            terms.append((x[1] * y[1], x[2] + y[2], x[3] + y[3]))
    z = decode(d_fmt, c)
    if z[0] == "nan":
        flags.append("nan")
    elif z[0] == "inf":
        flags.append("-inf" if z[1] else "+inf")
    elif z[1]:
        terms.append(z[1:])
    f16 = d_fmt == "f16"
    special = _specials(flags)
    if special:
        return {"nan": NAN16 if f16 else NAN32, "+inf": INF16 if f16 else INF32,
                "-inf": (0x8000 | INF16) if f16 else (0x80000000 | INF32)}[special]
    if not terms:
        return 0
    q = max(max(t[2] for t in terms), ZERO_FLOOR[d_fmt]) - F32_WINDOW
    units = sum(cut(m, e, q) for m, e, _ in terms)
    return to_f16_rne(units, q) if f16 else to_f32_rz(units, q)


def integer(a_fmt, b_fmt, a, b, c, saturate, active=None):
    """kind::i8 word: the exact sum, wrapped or clamped once."""
    def val(fmt, w):
        w &= 0xFF
        return w - 256 if fmt == "s8" and w >= 128 else w
    cv = c - (1 << 32) if c >= 1 << 31 else c
    total = cv + sum(val(a_fmt, a[k]) * val(b_fmt, b[k]) for k in range(len(a))
                     if active is None or active[k])
    if saturate:
        total = max(-(1 << 31), min((1 << 31) - 1, total))
    return total & 0xFFFFFFFF


def block_scaled(kind, a_fmt, b_fmt, scale_fmt, scale_block, sparse, a, b, c, sa, sb,
                 active=None):
    """Block-scaled tcgen05 word (mxf8f6f4, mxf4, mxf4nvf4), f32 C/D."""
    flags, prods = [], [None] * len(a)
    for k in range(len(a)):
        j = k // scale_block
        x, y = decode(a_fmt, a[k]), decode(b_fmt, b[k])
        u, v = decode(scale_fmt, sa[j]), decode(scale_fmt, sb[j])
        if u[0] == "nan" or v[0] == "nan":
            flags.append("nan")  # a NaN scale poisons even a disabled or zero product
            continue
        if active is not None and not active[k]:
            continue
        s = _product_special(x, y, extra_zero=u[1] == 0 or v[1] == 0)
        if s:
            flags.append(s)
            continue
        m = x[1] * y[1] * u[1] * v[1]
        if m:
            prods[k] = (m, x[2] + y[2] + u[2] + v[2], x[3] + y[3] + u[3] + v[3], u[3] + v[3])
    z = decode("f32", c)
    if z[0] == "nan":
        flags.append("nan")
    elif z[0] == "inf":
        flags.append("-inf" if z[1] else "+inf")
    special = _specials(flags)
    if special:
        return {"nan": NAN32, "+inf": INF32, "-inf": 0x80000000 | INF32}[special]
    live = [p for p in prods if p]
    if not live:
        return c if z[1] else 0  # C alone; -0 becomes +0
    big_r, big_s = max(p[2] for p in live), max(p[3] for p in live)
    c_raw = z[3] if z[1] else None

    def group_value(lo, hi):
        return sum((Fraction(p[0]) * Fraction(2) ** p[1] for p in prods[lo:hi] if p), Fraction(0))

    def cut_value(v, q):
        return int(v / Fraction(2) ** q)

    if kind == "mxf8f6f4":  # the unscaled 25-bit window, product by product
        anchor = max(big_r, c_raw if c_raw is not None else big_r, ZERO_FLOOR["f32"])
        q = anchor - F32_WINDOW
        units = sum(cut(p[0], p[1], q) for p in live) + (cut(z[1], z[2], q) if z[1] else 0)
        return to_f32_rz(units, q)
    nvfp4 = scale_fmt == "ue4m3"
    merge = 32 if sparse else 16
    if nvfp4 and c_raw is not None and c_raw >= big_r:  # C-dominant: K=16 blocks cut below C
        q = c_raw - C_MERGE
        units = cut(z[1], z[2], q) + sum(cut_value(group_value(lo, lo + merge), q)
                                          for lo in range(0, len(a), merge))
        return to_f32_rz(units, q)
    q = max(big_r - SCALED_PRODUCT_WINDOW, big_s - SCALE_FLOOR)
    if c_raw is not None:
        q = max(q, c_raw - SCALED_PRODUCT_WINDOW)
    c_units = cut(z[1], z[2], q) if z[1] else 0
    group = 4 if nvfp4 else 16
    parts = []  # (units of 2**q, group scale exponent)
    for lo in range(0, len(a), group):
        members = [p for p in prods[lo:lo + group] if p]
        gq = q
        if not nvfp4 and c_raw is not None and members and c_raw >= max(p[2] for p in members):
            gq = max(q, c_raw - C_MERGE)  # MXF4: C outranks this group
        units = cut_value(group_value(lo, lo + group), gq) * 2 ** (gq - q)
        parts.append((units, max((p[3] for p in members), default=None)))
    word = to_f32_rz(c_units + sum(u for u, _ in parts), q)
    if not nvfp4 and 0 < word & 0x7FFFFFFF < 1 << 23:  # MXF4 subnormal group floor
        kept = [u for u, s in parts
                if s is None or s >= big_s or Fraction(abs(u)) * Fraction(2) ** q >= Fraction(2) ** GROUP_FLOOR]
        word = to_f32_rz(c_units + sum(kept), q)
    return word


def reference_word(dp, a, b, c, sa=None, sb=None, active=None) -> int:
    """The reference output word of one case of datapath ``dp`` (ints in, int out)."""
    if dp.kind == "i8":
        return integer(dp.a_type, dp.b_type, a, b, c, dp.saturate, active)
    if dp.scale_type:
        return block_scaled(dp.kind, dp.a_type, dp.b_type, dp.scale_type, dp.scale_block,
                            dp.sparse, a, b, c, sa, sb, active)
    return unscaled(dp.a_type, dp.b_type, dp.d_type, a, b, c, active)


def reference_words(dp, cases) -> list[int]:
    """Reference words of a whole Cases batch, one case at a time."""
    out = []
    for i in range(len(cases)):
        a = [int(x) for x in cases.a[i]]
        b = [int(x) for x in cases.b[i]]
        sa = None if cases.scale_a is None else [int(x) for x in cases.scale_a[i]]
        sb = None if cases.scale_b is None else [int(x) for x in cases.scale_b[i]]
        act = None if cases.active is None else [bool(x) for x in cases.active[i]]
        out.append(reference_word(dp, a, b, int(cases.c[i]), sa, sb, act))
    return out
