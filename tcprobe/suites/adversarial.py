"""The adversarial suite: one named generator per mechanism.

Random inputs almost never reach these corners (the review of the
Khattak-Mikaitis paper in ``../shared/seeds``: carries into the top bits,
ties, subnormal swarms, extreme exponents). Each generator builds its cases
from exponents and fractions chosen to put terms exactly where one
mechanism decides the result; none assumes the parameters of any model (it
spreads its offsets over every plausible window, floor and block size).

Exponents here are *raw* exponents (value = 1.f * 2**e for normal words);
a product's exponent is the sum of its operands'.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import Format, Kind

from .basic import moderate
from .registry import Ctx, register
from .words import Bits, emax_biased, finite, one, with_exponent, zero

# ---------------------------------------------------------------------------
# Helpers.


def is_float(ctx: Ctx) -> bool:
    return not ctx.is_integer


def erange(fmt: Format, subnormal: bool = True) -> tuple[int, int]:
    """Smallest and largest raw exponent of a nonzero finite word
    (the smallest subnormal's leading bit when ``subnormal``)."""
    emin = 1 - fmt.bias
    lo = emin - fmt.frac_bits if subnormal else emin
    return lo, emax_biased(fmt) - fmt.bias


def prange_(ctx: Ctx) -> tuple[int, int]:
    """Smallest and largest exponent of a product A*B."""
    la, ha = erange(ctx.fa)
    lb, hb = erange(ctx.fb)
    return la + lb, ha + hb


def product(ctx: Ctx, bits: Bits, t, sign=0, frac_a=None, frac_b=None,
            normal: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(A word, B word) whose product has exponent ``t`` (clipped to what the
    formats reach) and sign ``sign``; the split of t between A and B is
    random. Fractions default to random. ``normal`` (the default): split so
    that both operands are normal where t allows it (a subnormal operand aligns on
    its format's smallest normal exponent, which lifts the product's raw
    exponent above its value)."""
    t = np.asarray(t, np.int64)
    shape = t.shape
    la, ha = erange(ctx.fa)
    lb, hb = erange(ctx.fb)
    t = np.clip(t, la + lb, ha + hb)
    lo = np.maximum(la, t - hb)
    hi = np.minimum(ha, t - lb)
    if normal:
        na, nb = erange(ctx.fa, False)[0], erange(ctx.fb, False)[0]
        lo_n, hi_n = np.maximum(lo, na), np.minimum(hi, t - nb)
        ok = lo_n <= hi_n
        lo, hi = np.where(ok, lo_n, lo), np.where(ok, hi_n, hi)
    ea = bits.between(shape, lo, hi)
    eb = t - ea
    fa = bits.bits(shape, ctx.fa.frac_bits) if frac_a is None else frac_a
    fb = bits.bits(shape, ctx.fb.frac_bits) if frac_b is None else frac_b
    a = with_exponent(ctx.fa, ea, sign if ctx.fa.signed else 0, fa)
    b = with_exponent(ctx.fb, eb, 0, fb)
    return a, b


def shared_value(ctx: Ctx, bits: Bits, e, sign) -> tuple[np.ndarray, np.ndarray]:
    """The same value as an A word and a C word (normal in both, exponent
    ``e`` clipped to both ranges, a fraction both keep)."""
    e = np.clip(np.asarray(e, np.int64), max(erange(ctx.fa, False)[0], erange(ctx.fc, False)[0]),
                min(erange(ctx.fa)[1], erange(ctx.fc)[1]))
    p = min(ctx.fa.frac_bits, ctx.fc.frac_bits)
    f = bits.bits(e.shape, p)
    a = with_exponent(ctx.fa, e, sign, f << (ctx.fa.frac_bits - p))
    c = with_exponent(ctx.fc, e, sign, f << (ctx.fc.frac_bits - p))
    return a, c


def c_word(ctx: Ctx, bits: Bits, e, sign, frac=None) -> np.ndarray:
    frac = bits.bits(np.shape(e), ctx.fc.frac_bits) if frac is None else frac
    return with_exponent(ctx.fc, e, sign if ctx.fc.signed else 0, frac)


def sign_bit(fmt: Format):
    return fmt.dtype(1 << (fmt.width - 1))


def negate(ctx: Ctx, a, b):
    """The words of -(a*b): A's sign flipped (B's where A has none)."""
    if ctx.fa.signed:
        return a ^ sign_bit(ctx.fa), b
    return a, b ^ sign_bit(ctx.fb)


def signed_zero(fmt: Format, bits: Bits, shape) -> np.ndarray:
    if fmt.kind != Kind.FLOAT or not fmt.signed:
        return zero(fmt, shape)
    return zero(fmt, shape, bits.bits(shape, 1))


def empty(ctx: Ctx, bits: Bits, n: int):
    """All products +-0 (A zeros of random sign times B ones), C = +0."""
    k = ctx.k
    return (signed_zero(ctx.fa, bits, (n, k)), one(ctx.fb, (n, k)), zero(ctx.fc, n))


def lanes(bits: Bits, n: int, k: int, m: int) -> np.ndarray:
    """(n, m) distinct random lanes per case."""
    return np.argsort(bits.u64((n, k)), axis=1)[:, :m]


def place(a, b, rows, cols, pa, pb):
    a[rows, cols] = pa
    b[rows, cols] = pb


# ---------------------------------------------------------------------------
# Generators.


@register("adversarial", "cancel-chain", applies=is_float)
def gen_cancel_chain(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """C cancels one product exactly and pairs of products cancel each other;
    what is left are a few small terms 1 .. 3p+12 binades below (p the
    output precision): the result shows every bit the window keeps."""
    n, k = len(idx), ctx.k
    a, b, _ = empty(ctx, bits, n)
    e = bits.between(n, -8, 8)
    s = bits.bits(n, 1) if ctx.fc.signed else np.zeros(n, np.int64)
    va, vc = shared_value(ctx, bits, e, s)
    pick = lanes(bits, n, k, k)
    rows = np.arange(n)
    neg_one = one(ctx.fb, n, 1) if ctx.fb.signed else one(ctx.fb, n)
    place(a, b, rows, pick[:, 0], va, neg_one)  # C + (-C) = 0
    n_pairs = bits.below(n, max(1, (k - 2) // 2) + 1)
    col = 1
    for p in range(max(0, (k - 2) // 2)):
        use = p < n_pairs
        y, _ = shared_value(ctx, bits, e - bits.between(n, 0, 4), bits.bits(n, 1))
        i, j = pick[:, col], pick[:, col + 1]
        a[rows[use], i[use]] = y[use]
        b[rows[use], i[use]] = one(ctx.fb, int(use.sum()))
        a[rows[use], j[use]] = y[use]
        b[rows[use], j[use]] = neg_one[use]
        col += 2
    p_out = ctx.fd.frac_bits + 1
    n_res = 1 + bits.below(n, 3)
    for r in range(3):
        use = r < n_res
        d = bits.between(n, 1, 3 * p_out + 12)
        pa, pb = product(ctx, bits, e - d, bits.bits(n, 1))
        lane = pick[:, k - 1 - r] if k - 1 - r >= col else pick[:, min(col, k - 1)]
        a[rows[use], lane[use]] = pa[use]
        b[rows[use], lane[use]] = pb[use]
    return {"a": a, "b": b, "c": vc}


@register("adversarial", "below-window", applies=is_float)
def gen_below_window(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """One large term anchors the block; every other product sits d binades
    below it, d spread over p-2 .. 3p+8 (p the output precision), so each is
    cut by the window somewhere in its bits; half the cases cancel the
    anchor with C, leaving only the cut terms."""
    n, k = len(idx), ctx.k
    t0 = bits.between(n, -6, 6)
    p_out = ctx.fd.frac_bits + 1
    d = bits.between((n, k), p_out - 2, 3 * p_out + 8)
    same_d = bits.chance(n, 1, 2)  # all terms at one offset: their cut bits add up
    d = np.where(same_d[:, None], d[:, :1], d)
    sign = bits.bits((n, k), 1)
    sign = np.where(bits.chance(n, 1, 2)[:, None], 0, sign)
    a, b = product(ctx, bits, t0[:, None] - d, sign)
    big_a, c = shared_value(ctx, bits, t0, 0)
    a[:, 0] = big_a
    b[:, 0] = np.where(bits.chance(n, 1, 2), one(ctx.fb, n), one(ctx.fb, n, 1) if ctx.fb.signed
                       else one(ctx.fb, n))
    c = np.where(bits.chance(n, 1, 2), c, zero(ctx.fc, n))
    perm = lanes(bits, n, k, k)
    rows = np.arange(n)[:, None]
    return {"a": a[rows, perm], "b": b[rows, perm], "c": c}


@register("adversarial", "carry-top", applies=is_float)
def gen_carry_top(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """All K products at the largest significands and one exponent, one sign,
    with C at the largest significand too: the sum carries log2(K)+2 bits
    above the anchor (the accumulator's top bits), at exponents from moderate
    up to the overflow of the output."""
    n, k = len(idx), ctx.k
    _, tmax = prange_(ctx)
    _, cmax = erange(ctx.fc)
    near_top = bits.chance(n, 1, 3)
    t = np.where(near_top, tmax - bits.between(n, 0, 6), bits.between(n, -10, 10))
    fa_max = (1 << ctx.fa.frac_bits) - 1
    fb_max = (1 << ctx.fb.frac_bits) - 1
    sign = np.broadcast_to(bits.bits(n, 1)[:, None], (n, k))
    tt = np.broadcast_to(t[:, None], (n, k))
    a, b = product(ctx, bits, tt, sign, np.full((n, k), fa_max), np.full((n, k), fb_max))
    # a few cases flip one lane so the carry chain is broken once
    flip = bits.chance(n, 1, 4)
    lane = bits.below(n, k)
    rows = np.arange(n)
    if ctx.fa.signed:
        a[rows[flip], lane[flip]] ^= sign_bit(ctx.fa)
    ce = np.minimum(t + bits.between(n, -2, 6), cmax)
    c = c_word(ctx, bits, ce, sign[:, 0], np.full(n, (1 << ctx.fc.frac_bits) - 1))
    c = np.where(bits.chance(n, 1, 5), zero(ctx.fc, n), c)
    return {"a": a, "b": b, "c": c}


@register("adversarial", "round-tie", applies=is_float)
def gen_round_tie(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """C plus a product of exactly 1/2 (or 1/4, 3/4, 1/2 +- a sticky bit) of
    the output's last place at C: the ties and near-ties that tell RZ, RNE
    and RNA apart, with odd and even C."""
    n, k = len(idx), ctx.k
    a, b, _ = empty(ctx, bits, n)
    fd = ctx.fd.frac_bits
    ec = bits.between(n, -6, 6)
    sign = bits.bits(n, 1) if ctx.fc.signed else np.zeros(n, np.int64)
    # C with a fraction the output keeps (odd or even last kept bit)
    keep = min(fd, ctx.fc.frac_bits)
    fc = bits.bits(n, keep) << (ctx.fc.frac_bits - keep)
    c = c_word(ctx, bits, ec, sign, fc)
    kind = idx % 6
    half = ec - fd - 1
    t = np.where(kind == 4, half - 1, half)  # 4: a quarter
    frac_a = np.zeros(n, np.int64)
    frac_a = np.where(kind == 3, 1 << (ctx.fa.frac_bits - 1) if ctx.fa.frac_bits else 0, frac_a)
    psign = np.where(kind == 5, 1 - sign, sign)
    pa, pb = product(ctx, bits, t, psign, frac_a, np.zeros(n, np.int64))
    pick = lanes(bits, n, k, 2)
    rows = np.arange(n)
    place(a, b, rows, pick[:, 0], pa, pb)
    sticky = (kind == 1) | (kind == 2)
    ta, tb = product(ctx, bits, half - bits.between(n, 1, 30), np.where(kind == 2, 1 - sign, sign))
    if k > 1:  # a K = 1 instruction (AMD's v_mfma_f32_32x32x1f32) has no second lane
        a[rows[sticky], pick[sticky, 1]] = ta[sticky]
        b[rows[sticky], pick[sticky, 1]] = tb[sticky]
    return {"a": a, "b": b, "c": c}


@register("adversarial", "subnormal-swarm", applies=is_float)
def gen_subnormal_swarm(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Every product tiny: exponents from 20 binades below the output's
    smallest normal up to 2 above (subnormal inputs among them), random
    signs; C zero, subnormal or tiny. Here the anchor meets its zero floor
    and the output its subnormal range."""
    n, k = len(idx), ctx.k
    emin_d = 1 - ctx.fd.bias
    t = bits.between((n, k), emin_d - 20, emin_d + 2)
    top = bits.between(n, emin_d - 14, emin_d + 2)  # the largest term of the case
    t = np.minimum(t, top[:, None])
    a, b = product(ctx, bits, t, bits.bits((n, k), 1), normal=False)
    lo_c, _ = erange(ctx.fc)
    kind = bits.below(n, 4)
    c = np.where(kind == 0, signed_zero(ctx.fc, bits, n),
                 c_word(ctx, bits, np.clip(emin_d - bits.between(n, -2, 12), lo_c, None),
                        bits.bits(n, 1)))
    c = np.where(kind == 1, zero(ctx.fc, n), c)
    return {"a": a, "b": b, "c": c}


@register("adversarial", "exp-spread", applies=is_float)
def gen_exp_spread(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Products spread over the whole exponent range with one near the top;
    C anywhere in its range; a quarter of the cases cancel the two largest
    terms so only the smallest are left."""
    n, k = len(idx), ctx.k
    tmin, tmax = prange_(ctx)
    t = bits.between((n, k), tmin, tmax)
    t[:, 0] = tmax - bits.between(n, 0, 8)
    a, b = product(ctx, bits, t, bits.bits((n, k), 1), normal=False)
    cancel = bits.chance(n, 1, 4)
    if k > 1:  # a K = 1 instruction has nothing to cancel against
        a[cancel, 1], b[cancel, 1] = negate(ctx, a[cancel, 0], b[cancel, 0])
    c = finite(ctx.fc, bits, n)
    perm = lanes(bits, n, k, k)
    rows = np.arange(n)[:, None]
    return {"a": a[rows, perm], "b": b[rows, perm], "c": c}


@register("adversarial", "block-split", applies=lambda ctx: is_float(ctx) and ctx.k > 1)
def gen_block_split(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """+X and -X in two lanes (any distance apart), one small term d binades
    below X in a third, C zero or small: a datapath that rounds between
    blocks (or walks K in another order) loses the small term when the
    cancelling pair lies in different blocks."""
    n, k = len(idx), ctx.k
    a, b, _ = empty(ctx, bits, n)
    pick = lanes(bits, n, k, min(3, k))
    rows = np.arange(n)
    e = bits.between(n, -6, 6)
    xa, xb = product(ctx, bits, e, 0)
    place(a, b, rows, pick[:, 0], xa, xb)
    place(a, b, rows, pick[:, 1], *negate(ctx, xa, xb))
    if k > 2:
        d = bits.between(n, 1, 2 * (ctx.fd.frac_bits + 1) + 4)
        sa, sb = product(ctx, bits, e - d, bits.bits(n, 1))
        place(a, b, rows, pick[:, 2], sa, sb)
    c = np.where(bits.chance(n, 1, 2), zero(ctx.fc, n),
                 c_word(ctx, bits, e - bits.between(n, 0, 30), bits.bits(n, 1)))
    return {"a": a, "b": b, "c": c}


@register("adversarial", "overflow", applies=is_float)
def gen_overflow(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """C at or near the largest finite output and products of the same or
    the other sign around it: sums just past and just below the overflow
    threshold (Inf or saturation, and the carry that crosses it)."""
    n, k = len(idx), ctx.k
    _, cmax = erange(ctx.fc)
    _, dmax = erange(ctx.fd)
    top = min(cmax, dmax)
    sign = bits.bits(n, 1) if ctx.fc.signed else np.zeros(n, np.int64)
    c = c_word(ctx, bits, top - bits.between(n, 0, 2), sign,
               np.where(bits.chance(n, 1, 2), (1 << ctx.fc.frac_bits) - 1,
                        bits.bits(n, ctx.fc.frac_bits)))
    t = top - bits.between((n, k), 0, ctx.fd.frac_bits + 4)
    psign = np.where(bits.chance((n, k), 1, 4), 1 - sign[:, None], sign[:, None])
    a, b = product(ctx, bits, t, psign)
    few = bits.below(n, k) + 1
    live = np.argsort(bits.u64((n, k)), axis=1) < few[:, None]
    a = np.where(live, a, signed_zero(ctx.fa, bits, (n, k)))
    return {"a": a, "b": b, "c": c}


@register("adversarial", "scale-floor", applies=lambda ctx: ctx.fs is not None and is_float(ctx))
def gen_scale_floor(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Block scales far apart (one block's scale large, another's small) on
    products of mixed sizes: the block-scaled window's floor anchored on
    the largest scale pair decides which small products survive."""
    n, k = len(idx), ctx.k
    fs = ctx.fs
    lo, hi = 0, emax_biased(fs)
    sa = bits.between((n, ctx.n_scales), lo, hi)
    sb = bits.between((n, ctx.n_scales), lo, hi)
    if fs.kind == Kind.E8M0:
        scale_a, scale_b = sa.astype(np.uint32), sb.astype(np.uint32)
    else:
        scale_a = with_exponent(fs, sa - fs.bias, 0, bits.bits(sa.shape, fs.frac_bits))
        scale_b = with_exponent(fs, sb - fs.bias, 0, bits.bits(sb.shape, fs.frac_bits))
    tmin, tmax = prange_(ctx)
    t = bits.between((n, k), tmin, tmax)
    a, b = product(ctx, bits, t, bits.bits((n, k), 1))
    c = np.where(bits.chance(n, 2, 3), zero(ctx.fc, n), moderate(ctx, ctx.fc, bits, n))
    return {"a": a, "b": b, "c": c, "scale_a": scale_a, "scale_b": scale_b}


@register("adversarial", "int-extremes", applies=lambda ctx: ctx.is_integer)
def gen_int_extremes(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Integer datapaths: every product at the largest magnitude of one sign
    (127*127, -128*-128, 255*255), C near the int32 limits: the exact sum
    wraps or saturates."""
    n, k = len(idx), ctx.k
    fa, fb = ctx.fa, ctx.fb

    def extreme(fmt, shape):
        if not fmt.signed:
            return np.full(shape, fmt.word_mask, np.uint32)
        lo = 1 << (fmt.width - 1)
        return np.where(bits.chance(shape, 1, 2), lo, lo - 1).astype(np.uint32)

    a, b = extreme(fa, (n, k)), extreme(fb, (n, k))
    span = bits.between(n, 0, 1 << 20)
    c = np.where(bits.chance(n, 1, 2), (1 << 31) - 1 - span, (1 << 31) + span) & 0xFFFFFFFF
    return {"a": a, "b": b, "c": c.astype(np.uint32)}


@register("adversarial", "zero-floor", applies=is_float)
def gen_zero_floor(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """C = +-0 and every product below the output's normal range: one main
    term of m (or m + 1/2) units of the output's smallest subnormal, and
    tiny terms within 4 binades of one exponent 1 .. 34 binades below that
    unit (all against the main term's sign, or random signs). With no
    term above the anchor's floor, the floor sets the window; whether a tiny
    term survives decides the last bit (RZ) or the tie (RNE)."""
    n, k = len(idx), ctx.k
    a, b, _ = empty(ctx, bits, n)
    unit = 1 - ctx.fd.bias - ctx.fd.frac_bits  # exponent of the smallest subnormal
    width = min(ctx.fa.frac_bits, 1)
    m = bits.between(n, 1, (1 << (width + 1)) - 1)  # 1 .. 3: the main term stays low
    half = bits.chance(n, 1, 2)
    m = np.where(half, 2 * m + 1, m)  # m + 1/2 units, at one binade lower
    lead = np.zeros(n, np.int64)  # the leading bit of m
    for j in range(1, width + 2):
        lead = np.where(m >> j, j, lead)
    e_main = unit - half.astype(np.int64) + lead
    frac = (m - (1 << lead)) << np.maximum(ctx.fa.frac_bits - lead, 0)
    frac = np.where(lead > ctx.fa.frac_bits, 0, frac)
    s = bits.bits(n, 1)
    pa, pb = product(ctx, bits, e_main, s, frac, np.zeros(n, np.int64))
    rows = np.arange(n)
    a[:, 0], b[:, 0] = pa, pb
    top = unit - bits.between(n, 1, 34)  # the tiny terms lie just below this
    t = top[:, None] - bits.between((n, k), 0, 3)
    ts = np.where(bits.chance(n, 1, 2)[:, None], 1 - s[:, None], bits.bits((n, k), 1))
    ta, tb = product(ctx, bits, t, ts)
    count = np.where(bits.chance(n, 1, 4), 1, k - 1)
    live = (np.arange(k)[None, :] >= 1) & (np.arange(k)[None, :] <= count[:, None])
    a = np.where(live, ta, a)
    b = np.where(live, tb, b)
    perm = lanes(bits, n, k, k)
    rows = rows[:, None]
    return {"a": a[rows, perm], "b": b[rows, perm], "c": signed_zero(ctx.fc, bits, n)}
