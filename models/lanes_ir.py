"""One block's lane passes as explicit vector code: an LLVM intrinsic for
numba, written per block shape, so that the speed of the engine's fast path
does not depend on what LLVM's vectorizers make of scalar loops.

:func:`block_lanes` takes a case's row of A and B words (the block's lanes
side by side in memory), the alignment exponent of the block's addend (C or
the previous block's word; NO_FLOOR for none) and a configuration string
(:func:`block_config`, a literal, so that every constant of the format and
the window folds into the code), and gives, for the L lanes at once:

* the block's flags in :mod:`.core`'s encoding: NONNEG when a product has
  sign + (a zero product too, as the lane decoder counts it), NAN for a NaN
  product (a NaN factor, Inf x 0), POS_INF and NEG_INF for the others with
  a NaN or Inf factor; and STRAY when a word has bits above its format (the
  fast path's scan of the words as it reads them);
* the quantum q = max(anchor, floor) - F (core.quantum), the anchor the
  largest raw exponent sum of a nonzero product or the addend's exponent;
* the sum of the products cut toward zero to 2**q (core.cut), an integer.

Pass one decodes every lane by bit operations (a word's fields, its
significand with the hidden bit, its raw exponent, whether it is zero, NaN
or Inf), multiplies the significands and takes the anchor with one max
reduction; pass two cuts each product with one constant left shift and one
clamped right shift (a nonzero product lies at or below the anchor, the
lane decoder's wide form) and sums them with one add reduction. Lanes are
32-bit integers where the significand products and the sum fit (every
format of 10 fraction bits or fewer, every window up to 29 bits), else
64-bit. Special lanes give meaningless terms: the flags say to discard them.

The caller (:mod:`.lane_kernel`) adds the addend's own cut term, decides
specials and rounds, vectorized over many cases.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .core import NAN, NEG_INF, NO_FLOOR, NONNEG, POS_INF

STRAY = 16  # a flag beside the core's: a word of the block has bits above its format

_I1 = ir.IntType(1)
_I64 = ir.IntType(64)

# The fields of block_config, in order.
_CONFIG_FIELDS = ("across", "cases", "stride", "lanes", "a_width", "a_ebits", "a_fbits", "a_bias", "a_specials", "a_signed",
                  "a_drop", "b_width", "b_ebits", "b_fbits", "b_bias", "b_specials", "b_signed",
                  "b_drop", "bits", "floor")


def block_config(a_spec: tuple, b_spec: tuple, lanes: int, bits: int, floor: int,
                 cases: int = 1, stride: int = 0, across: bool = False) -> str:
    """The configuration string of block_cases: ``lanes`` products of A and B
    words of these formats (Format.spec), a window of ``bits`` fraction bits
    below the anchor and that floor; ``cases`` cases a call, their rows
    ``stride`` words apart, side by side in the vectors or, ``across``, one
    case a vector lane (ACROSS cases, each lane of the block a vector)."""
    a = a_spec[1:]
    b = b_spec[1:]
    return ",".join(str(int(v)) for v in (across, cases, stride, lanes, *a, *b, bits, floor))


ACROSS = 16  # cases a call takes with one case a vector lane
ACROSS_LANES = 8  # the longest block taken that way


def across_applies(config: str) -> bool:
    """Whether block_cases takes ACROSS cases a call, one case a lane:
    32-bit lanes and a power of two of lanes up to ACROSS_LANES (the
    transposition that turns rows of words into a vector per lane; longer
    blocks keep more vectors live than there are registers, and one case a
    call is faster there)."""
    cfg = _parse(config)
    lanes = cfg["lanes"]
    return widths(config)[0] == 32 and lanes <= ACROSS_LANES and lanes & (lanes - 1) == 0


def cases_per_call(lanes: int) -> int:
    """How many cases block_cases takes at once for blocks of ``lanes``: a
    short block shares the vectors with the next cases' blocks, a power of
    two of them, up to 16 lanes in all."""
    cases = 1
    while 2 * cases * lanes <= 16:
        cases *= 2
    return cases


def _parse(config: str) -> dict:
    values = [int(v) for v in config.split(",")]
    if len(values) != len(_CONFIG_FIELDS):
        raise ValueError(f"block_lanes: a configuration of {len(values)} fields, not "
                         f"{len(_CONFIG_FIELDS)}")
    return dict(zip(_CONFIG_FIELDS, values, strict=True))


def _operand(cfg: dict, side: str) -> dict:
    keys = ("width", "ebits", "fbits", "bias", "specials", "signed", "drop")
    return {k: cfg[f"{side}_{k}"] for k in keys}


def widths(config: str) -> tuple[int, int, int]:
    """(lane width, term width, sum width) in bits that block_lanes uses for
    a configuration: 32 where every value provably fits in an int32."""
    cfg = _parse(config)
    fa, fb, bits = cfg["a_fbits"], cfg["b_fbits"], cfg["bits"]
    prod_max = ((1 << (fa + 1)) - 1) * ((1 << (fb + 1)) - 1)
    lane = 32 if prod_max < (1 << 31) else 64
    left = max(bits - fa - fb, 0)
    term_max = prod_max << left
    term = 32 if lane == 32 and term_max < (1 << 31) else 64
    total = 32 if term == 32 and term_max * cfg["lanes"] < (1 << 31) else 64
    return lane, term, total


class _Lanes:
    """Vector operations on L lanes of one integer width (an IRBuilder)."""

    def __init__(self, builder: ir.IRBuilder, lanes: int, width: int):
        self.b = builder
        self.n = lanes
        self.t = ir.IntType(width)
        self.vt = ir.VectorType(self.t, lanes)

    def const(self, value: int):
        return ir.Constant(self.vt, [ir.Constant(self.t, value)] * self.n)

    def splat(self, scalar):
        """A scalar (any integer width) in every lane."""
        b = self.b
        if scalar.type.width > self.t.width:
            scalar = b.trunc(scalar, self.t)
        elif scalar.type.width < self.t.width:
            scalar = b.sext(scalar, self.t)
        one = b.insert_element(ir.Constant(self.vt, ir.Undefined), scalar, ir.Constant(_I64, 0))
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), self.n), [0] * self.n)
        return b.shuffle_vector(one, ir.Constant(self.vt, ir.Undefined), zeros)

    def widen(self, v, other: _Lanes, signed: bool):
        """``v`` as lanes of ``other``'s (wider or equal) width."""
        if other.t.width == self.t.width:
            return v
        return self.b.sext(v, other.vt) if signed else self.b.zext(v, other.vt)

    def smax(self, x, y):
        return self.b.select(self.b.icmp_signed(">", x, y), x, y)

    def smin(self, x, y):
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def field(self, x, shift: int, width: int):
        """Bits shift .. shift+width-1 of every lane."""
        if shift:
            x = self.b.lshr(x, self.const(shift))
        return self.b.and_(x, self.const((1 << width) - 1))

    def reduce(self, op: str, v, lanes: _Lanes | None = None):
        """llvm.vector.reduce.<op> over the lanes of ``v``."""
        lanes = lanes or self
        name = f"llvm.vector.reduce.{op}.v{lanes.n}i{lanes.t.width}"
        fn = cgutils.get_or_insert_function(self.b.module, ir.FunctionType(lanes.t, [lanes.vt]),
                                            name)
        return self.b.call(fn, [v])


def _load(v: _Lanes, ptr, fmt: dict):
    """The L words at ``ptr`` (uint32) as lanes of ``v``, cut to their
    format's width, and the i1 mask of the words with bits above it (None
    for a 32-bit format, which has none)."""
    b = v.b
    words = _Lanes(b, v.n, 32)
    x = b.load(b.bitcast(ptr, words.vt.as_pointer()), align=4)
    stray = None
    width = fmt["width"]
    if width < 32:
        high = ((1 << 32) - 1) ^ ((1 << width) - 1)
        stray = b.icmp_unsigned("!=", b.and_(x, words.const(high)), words.const(0))
        x = b.and_(x, words.const((1 << width) - 1))
    if v.t.width < 32:
        return b.trunc(x, v.vt), stray
    return words.widen(x, v, signed=False), stray


def _decode(v: _Lanes, x, fmt: dict):
    """Lane fields of words ``x`` in format ``fmt`` (a spec as a dict, the
    words cut to its width by _load): (sign, significand, biased raw
    exponent, zero, special, NaN), the last three i1 masks (the lane
    decoder's core_loop.fields and lane classes)."""
    b = v.b
    width, ebits, fbits, drop = fmt["width"], fmt["ebits"], fmt["fbits"], fmt["drop"]
    sign = v.field(x, width - 1, 1) if fmt["signed"] else v.const(0)
    mag = v.field(x, drop, ebits + fbits)  # exponent and fraction fields
    e = b.lshr(mag, v.const(fbits))
    frac = b.and_(mag, v.const((1 << fbits) - 1))
    normal = b.icmp_unsigned("!=", e, v.const(0))
    sig = b.or_(frac, b.select(normal, v.const(1 << fbits), v.const(0)))
    raw = b.select(normal, e, v.const(1))
    zero = b.icmp_unsigned("==", mag, v.const(0))
    inf_code = ((1 << ebits) - 1) << fbits
    if fmt["specials"] == 0:  # IEEE: exponent all ones
        special = b.icmp_unsigned(">=", mag, v.const(inf_code))
        nan = b.icmp_unsigned(">", mag, v.const(inf_code))
    elif fmt["specials"] == 1:  # only the all-ones code, a NaN (e4m3, ue4m3)
        special = nan = b.icmp_unsigned("==", mag, v.const((1 << (ebits + fbits)) - 1))
    else:
        special = nan = None
    return sign, sig, raw, zero, special, nan


def _either(b: ir.IRBuilder, x, y):
    """The OR of two i1 lane masks, either of which may be None (no mask)."""
    if x is None or y is None:
        return y if x is None else x
    return b.or_(x, y)


def _special_pairs(v: _Lanes, s, a, b_) -> list:
    """(i1 lane mask, flag) of the products' NaN, +Inf and -Inf (_flags)."""
    masks = _special_masks(v, s, a, b_)
    return [] if masks is None else list(zip(masks, (NAN, POS_INF, NEG_INF), strict=True))


def _special_masks(v: _Lanes, s, a, b_):
    """The i1 lane masks (NaN, +Inf, -Inf) of the products from the lane
    masks of A and B (_decode's zero, special, NaN) and the product signs
    ``s``; None where neither format has a NaN or Inf."""
    b = v.b
    a_zero, a_special, a_nan = a
    b_zero, b_special, b_nan = b_
    if a_special is None and b_special is None:
        return None
    parts_nan, parts_special = [], []
    if a_special is not None:
        parts_nan += [a_nan, b.and_(a_special, b_zero)]
        parts_special.append(a_special)
    if b_special is not None:
        parts_nan += [b_nan, b.and_(b_special, a_zero)]
        parts_special.append(b_special)
    nan = parts_nan[0]
    for p in parts_nan[1:]:
        nan = b.or_(nan, p)
    special = parts_special[0]
    for p in parts_special[1:]:
        special = b.or_(special, p)
    inf = b.and_(special, b.not_(nan))
    neg = b.icmp_unsigned("!=", s, v.const(0))
    return nan, b.and_(inf, b.not_(neg)), b.and_(inf, neg)


def _flags(v: _Lanes, cases: int, masks: list) -> list:
    """Each case's flags (i64) from (i1 lane mask, flag) pairs: a flag is set
    where any of the case's lanes is (cases side by side, v.n // cases lanes
    each). None masks are skipped."""
    b = v.b
    size = v.n // cases
    out = [ir.Constant(_I64, 0)] * cases
    for mask, flag in masks:
        if mask is None:
            continue
        bits = b.bitcast(mask, ir.IntType(v.n))
        for p in range(cases):
            part = b.lshr(bits, ir.Constant(bits.type, p * size)) if p else bits
            part = b.and_(part, ir.Constant(bits.type, (1 << size) - 1))
            hit = b.icmp_unsigned("!=", part, ir.Constant(bits.type, 0))
            out[p] = b.or_(out[p], b.select(hit, ir.Constant(_I64, flag), ir.Constant(_I64, 0)))
    return out


def _spread(v: _Lanes, scalars: list):
    """A vector whose lanes of case p (v.n // len(scalars) lanes each) all
    hold scalars[p]."""
    b = v.b
    if len(scalars) == 1:
        return v.splat(scalars[0])
    size = v.n // len(scalars)
    small = ir.VectorType(v.t, len(scalars))
    vec = ir.Constant(small, ir.Undefined)
    for p, x in enumerate(scalars):
        if x.type.width != v.t.width:
            x = b.trunc(x, v.t) if x.type.width > v.t.width else b.sext(x, v.t)
        vec = b.insert_element(vec, x, ir.Constant(ir.IntType(32), p))
    idx = ir.Constant(ir.VectorType(ir.IntType(32), v.n), [p for p in range(len(scalars))
                                                            for _ in range(size)])
    return b.shuffle_vector(vec, ir.Constant(small, ir.Undefined), idx)


def _load_cases(v: _Lanes, ptr, fmt: dict, cases: int, stride: int):
    """_load of ``cases`` rows of v.n // cases words, ``stride`` words apart,
    side by side in one vector of lanes."""
    size = v.n // cases
    if cases == 1 or stride == size:
        return _load(v, ptr, fmt)
    one = _Lanes(v.b, size, v.t.width)
    parts = [_load(one, v.b.gep(ptr, [ir.Constant(_I64, p * stride)]), fmt) for p in range(cases)]
    xs = [x for x, _ in parts]
    strays = [m for _, m in parts]
    while len(xs) > 1:  # concatenate pairwise
        width = xs[0].type.count
        idx = ir.Constant(ir.VectorType(ir.IntType(32), 2 * width), list(range(2 * width)))
        xs = [v.b.shuffle_vector(xs[i], xs[i + 1], idx) for i in range(0, len(xs), 2)]
        if strays[0] is not None:
            strays = [v.b.shuffle_vector(strays[i], strays[i + 1], idx)
                      for i in range(0, len(strays), 2)]
        else:
            strays = strays[::2]
    return xs[0], strays[0]


def _emit(builder: ir.IRBuilder, a_ptr, b_ptr, acc_sig: list, acc_raw: list, config: str):
    """The IR of block_cases: a list of (flags, q, sum) i64 triples, a case each."""
    cfg = _parse(config)
    cases, size, bits, floor = cfg["cases"], cfg["lanes"], cfg["bits"], cfg["floor"]
    fa, fb = _operand(cfg, "a"), _operand(cfg, "b")
    lane_w, term_w, sum_w = widths(config)
    v = _Lanes(builder, cases * size, lane_w)
    b = builder

    xa, stray_a = _load_cases(v, a_ptr, fa, cases, cfg["stride"])
    xb, stray_b = _load_cases(v, b_ptr, fb, cases, cfg["stride"])
    sa, ma, ra, za, spa, na = _decode(v, xa, fa)
    sb, mb, rb, zb, spb, nb = _decode(v, xb, fb)
    s = b.xor(sa, sb)
    prod = b.mul(ma, mb)
    rsum = b.add(ra, rb)  # biased exponent sum
    nonzero = b.icmp_unsigned("!=", prod, v.const(0))
    # the flags: NONNEG (a product of sign +), the specials, stray bits
    positive = b.icmp_unsigned("==", s, v.const(0))
    flags = _flags(v, cases, [(positive, NONNEG), *_special_pairs(v, s, (za, spa, na), (zb, spb, nb)),
                              (_either(b, stray_a, stray_b), STRAY)])
    # the anchor: the largest exponent sum of a nonzero product, the addend's
    # exponent and the floor, all biased by A's and B's biases, in one vector
    # max (the addend and the floor joined lane-wise before the reduction)
    bias = fa["bias"] + fb["bias"]
    low = -(1 << 31) if lane_w == 32 else NO_FLOOR  # below every biased exponent
    accs = []
    for sig_p, raw_p in zip(acc_sig, acc_raw, strict=True):
        acc_b = b.select(b.icmp_unsigned("!=", sig_p, ir.Constant(_I64, 0)),
                         b.add(raw_p, ir.Constant(_I64, bias)), ir.Constant(_I64, low))
        if floor != NO_FLOOR:
            floor_b = ir.Constant(_I64, floor + bias)
            acc_b = b.select(b.icmp_signed(">", acc_b, floor_b), acc_b, floor_b)
        accs.append(acc_b)
    tops = v.smax(b.select(nonzero, rsum, v.const(low)), _spread(v, accs))
    homes = _segments(v, tops, cases, size, "smax")  # each anchor, never below the floor
    wide = (lambda x: b.sext(x, _I64)) if lane_w < 64 else (lambda x: x)
    qs = [b.sub(wide(h), ir.Constant(_I64, bias + bits)) for h in homes]
    # pass two: each product cut to 2**q (the lane decoder's wide form)
    shift = fa["fbits"] + fb["fbits"]
    left = max(bits - shift, 0)
    right = max(shift - bits, 0)
    d = v.smax(b.sub(_spread(v, homes), rsum), v.const(0))
    t = _Lanes(b, v.n, term_w)
    d = v.widen(d, t, signed=True)
    if right:
        d = b.add(d, t.const(right))
    d = t.smin(d, t.const(term_w - 1))
    term = b.lshr(b.shl(v.widen(prod, t, signed=False), t.const(left)), d)
    neg = v.widen(s, t, signed=False)
    term = b.add(b.xor(term, b.sub(t.const(0), neg)), neg)
    total_lanes = _Lanes(b, v.n, sum_w)
    totals = _segments(total_lanes, t.widen(term, total_lanes, signed=True), cases, size, "add")
    if sum_w < 64:
        totals = [b.sext(x, _I64) for x in totals]
    return list(zip(flags, qs, totals, strict=True))


def _transpose_rows(b: ir.IRBuilder, rows: list) -> list:
    """ACROSS rows of L words (<L x i32> each, L a power of two up to 16) as
    L vectors of ACROSS words, lane k's words of every row: the rows
    concatenated into L registers of 16, then log2(L) passes that each
    deinterleave pairs of registers (evens first, odds after), which rotates
    the bits of an element's index right by one: after log2(L) of them the
    element of row v, lane k (index v * L + k) sits at k * 16 + v."""
    regs = rows
    while regs[0].type.count < ACROSS:  # concatenate pairwise
        width = regs[0].type.count
        idx = ir.Constant(ir.VectorType(ir.IntType(32), 2 * width), list(range(2 * width)))
        regs = [b.shuffle_vector(regs[i], regs[i + 1], idx) for i in range(0, len(regs), 2)]
    count = len(regs)
    evens = ir.Constant(ir.VectorType(ir.IntType(32), ACROSS), list(range(0, 2 * ACROSS, 2)))
    odds = ir.Constant(ir.VectorType(ir.IntType(32), ACROSS), list(range(1, 2 * ACROSS, 2)))
    for _ in range(count.bit_length() - 1):
        pairs = [(regs[2 * p], regs[2 * p + 1]) for p in range(count // 2)]
        regs = ([b.shuffle_vector(x, y, evens) for x, y in pairs]
                + [b.shuffle_vector(x, y, odds) for x, y in pairs])
    return regs


PREFETCH_CALLS = 2  # block_cases (across) prefetches the rows of the call this many ahead


def _prefetch(b: ir.IRBuilder, ptr, ahead: int, words: int) -> None:
    """Prefetch ``words`` uint32 words from ``ahead`` words past ``ptr``, a
    cache line (16 words) at a time: a call's loads come in one burst before
    a long stretch of arithmetic, too far apart for the core to run ahead to
    the next call's loads by itself. A prefetch never faults."""
    i8p = ir.IntType(8).as_pointer()
    fn = cgutils.get_or_insert_function(
        b.module, ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(32), ir.IntType(32),
                                                  ir.IntType(32)]), "llvm.prefetch.p0i8")
    for line in range(0, words, 16):
        at = b.bitcast(b.gep(ptr, [ir.Constant(_I64, ahead + line)]), i8p)
        b.call(fn, [at, ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 3),
                    ir.Constant(ir.IntType(32), 1)])


def _vector_at(b: ir.IRBuilder, ptr, vt):
    """A pointer to a vector of type ``vt`` at element pointer ``ptr``."""
    return b.bitcast(ptr, vt.as_pointer())


def _emit_across(builder: ir.IRBuilder, ptrs: dict, config: str) -> None:
    """The IR of block_cases for ACROSS cases a call, one case a vector lane
    (block_config's ``across``): the same steps as _emit, each lane of the
    block one vector over the cases, so that anchors, sums and flags need
    no reduction across lanes. ``ptrs``: element pointers of a, b, acc_sig,
    acc_raw, flags, qs and sums at the call's first case."""
    cfg = _parse(config)
    size, stride, bits, floor = cfg["lanes"], cfg["stride"], cfg["bits"], cfg["floor"]
    fa, fb = _operand(cfg, "a"), _operand(cfg, "b")
    _lane_w, term_w, sum_w = widths(config)
    b = builder
    v = _Lanes(b, ACROSS, 32)
    row = _Lanes(b, size, 32)

    def lanes_of(ptr, fmt):
        _prefetch(b, ptr, PREFETCH_CALLS * ACROSS * stride, ACROSS * stride)
        rows = [b.load(_vector_at(b, b.gep(ptr, [ir.Constant(_I64, c * stride)]), row.vt),
                       align=4) for c in range(ACROSS)]
        stray = None
        if fmt["width"] < 32:
            every = rows[0]
            for r in rows[1:]:
                every = b.or_(every, r)
            high = ((1 << 32) - 1) ^ ((1 << fmt["width"]) - 1)
            hit = b.icmp_unsigned("!=", b.and_(every, row.const(high)), row.const(0))
            stray = b.icmp_unsigned("!=", b.bitcast(hit, ir.IntType(size)),
                                    ir.Constant(ir.IntType(size), 0))
        lanes = _transpose_rows(b, rows)
        if fmt["width"] < 32:
            lanes = [b.and_(x, v.const((1 << fmt["width"]) - 1)) for x in lanes]
        return lanes, stray

    xa, stray_a = lanes_of(ptrs["a"], fa)
    xb, stray_b = lanes_of(ptrs["b"], fb)
    # a lane's product, exponent sum and sign wait for pass two packed in one
    # 32-bit word where they fit (fewer live vectors than registers)
    prod_bits = fa["fbits"] + fb["fbits"] + 2
    rsum_bits = max(fa["ebits"], fb["ebits"]) + 1
    packed = prod_bits + rsum_bits + 1 <= 32

    def pack(prod, rsum, s):
        if not packed:
            return prod, rsum, s
        word = b.or_(b.shl(prod, v.const(rsum_bits + 1)), b.shl(rsum, v.const(1)))
        return (b.or_(word, s),)

    def unpack(kept_lane):
        if not packed:
            return kept_lane
        (word,) = kept_lane
        return (b.lshr(word, v.const(rsum_bits + 1)),
                b.and_(b.lshr(word, v.const(1)), v.const((1 << rsum_bits) - 1)),
                b.and_(word, v.const(1)))

    low = -(1 << 31)
    top = v.const(low)
    no = ir.Constant(ir.VectorType(_I1, ACROSS), [0] * ACROSS)
    positive_any, nan_any, pos_any, neg_any = no, no, no, no
    kept = []
    for k in range(size):
        sa, ma, ra, za, spa, na = _decode(v, xa[k], fa)
        sb, mb, rb, zb, spb, nb = _decode(v, xb[k], fb)
        s = b.xor(sa, sb)
        prod = b.mul(ma, mb)
        rsum = b.add(ra, rb)  # biased exponent sum
        top = v.smax(top, b.select(b.icmp_unsigned("!=", prod, v.const(0)), rsum, v.const(low)))
        positive_any = b.or_(positive_any, b.icmp_unsigned("==", s, v.const(0)))
        masks = _special_masks(v, s, (za, spa, na), (zb, spb, nb))
        if masks is not None:
            nan_any, pos_any, neg_any = (b.or_(x, m) for x, m in zip((nan_any, pos_any, neg_any),
                                                                        masks, strict=True))
        kept.append(pack(prod, rsum, s))
    # the anchor of each case: its products' and its addend's, never below the floor
    bias = fa["bias"] + fb["bias"]
    wide = ir.VectorType(_I64, ACROSS)
    sig = b.load(_vector_at(b, ptrs["acc_sig"], wide), align=8)
    raw = b.load(_vector_at(b, ptrs["acc_raw"], wide), align=8)
    v64 = _Lanes(b, ACROSS, 64)
    acc_b = b.select(b.icmp_unsigned("!=", sig, v64.const(0)), b.add(raw, v64.const(bias)),
                     v64.const(low))
    if floor != NO_FLOOR:
        acc_b = v64.smax(acc_b, v64.const(floor + bias))
    home = v.smax(top, b.trunc(acc_b, v.vt))
    q = b.sub(b.sext(home, wide), v64.const(bias + bits))
    b.store(q, _vector_at(b, ptrs["qs"], wide), align=8)
    # pass two: each lane's products cut to 2**q and summed, case by case
    shift = fa["fbits"] + fb["fbits"]
    left, right = max(bits - shift, 0), max(shift - bits, 0)
    t = _Lanes(b, ACROSS, term_w)
    acc = _Lanes(b, ACROSS, sum_w)
    total = acc.const(0)
    for kept_lane in kept:
        prod, rsum, s = unpack(kept_lane)
        d = v.widen(v.smax(b.sub(home, rsum), v.const(0)), t, signed=True)
        if right:
            d = b.add(d, t.const(right))
        d = t.smin(d, t.const(term_w - 1))
        term = b.lshr(b.shl(v.widen(prod, t, signed=False), t.const(left)), d)
        neg = v.widen(s, t, signed=False)
        term = b.add(b.xor(term, b.sub(t.const(0), neg)), neg)
        total = b.add(total, t.widen(term, acc, signed=True))
    b.store(acc.widen(total, v64, signed=True), _vector_at(b, ptrs["sums"], wide), align=8)
    flags = v64.const(0)
    for mask, flag in ((positive_any, NONNEG), (nan_any, NAN), (pos_any, POS_INF),
                       (neg_any, NEG_INF)):
        flags = b.or_(flags, b.select(mask, v64.const(flag), v64.const(0)))
    stray = _either(b, stray_a, stray_b)
    if stray is not None:
        flags = b.or_(flags, b.select(stray, v64.const(STRAY), v64.const(0)))
    b.store(flags, _vector_at(b, ptrs["flags"], wide), align=8)


def _int64_array(arr) -> bool:
    return isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1 \
        and arr.layout == "C"


@intrinsic
def block_cases(typingctx, a, b, offset, acc_sig, acc_raw, flags, qs, sums, j, config):
    """One block of P cases (block_config's ``cases``) at once: case p's
    lanes are the words a.flat[offset + p * stride :][:L] and the same of
    b, its addend has significand acc_sig[j + p] (0: none, or a zero) and
    raw exponent acc_raw[j + p]; its flags, quantum and cut sum (module doc)
    go to flags[j + p], qs[j + p] and sums[j + p]. ``a`` and ``b``:
    C-contiguous uint32 arrays; the others int64 vectors; ``config``: a
    literal of block_config."""
    if not isinstance(config, types.StringLiteral):
        return None
    for arr in (a, b):
        if not (isinstance(arr, types.Array) and arr.dtype == types.uint32 and arr.layout == "C"):
            return None
    if not all(_int64_array(x) for x in (acc_sig, acc_raw, flags, qs, sums)):
        return None
    text = config.literal_value
    cfg = _parse(text)  # a malformed configuration fails at typing
    cases = cfg["cases"]
    if cfg["across"] and (cases != ACROSS or not across_applies(text)):
        return None
    sig = types.none(a, b, types.int64, acc_sig, acc_raw, flags, qs, sums, types.int64, config)

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, v)
                  for t, v in zip(signature.args[:8], args[:8], strict=True)
                  if isinstance(t, types.Array)]
        a_arr, b_arr, sig_arr, raw_arr, flags_arr, q_arr, sum_arr = arrays
        ptrs = [builder.gep(arr.data, [args[2]]) for arr in (a_arr, b_arr)]
        if cfg["across"]:
            at = {name: builder.gep(arr.data, [args[8]]) for name, arr in (
                ("acc_sig", sig_arr), ("acc_raw", raw_arr), ("flags", flags_arr), ("qs", q_arr),
                ("sums", sum_arr))}
            _emit_across(builder, {"a": ptrs[0], "b": ptrs[1], **at}, text)
            return context.get_dummy_value()
        at = [builder.add(args[8], ir.Constant(_I64, p)) for p in range(cases)]
        acc_sig = [builder.load(builder.gep(sig_arr.data, [x])) for x in at]
        acc_raw = [builder.load(builder.gep(raw_arr.data, [x])) for x in at]
        results = _emit(builder, ptrs[0], ptrs[1], acc_sig, acc_raw, text)
        for x, (f, q, total) in zip(at, results, strict=True):
            builder.store(f, builder.gep(flags_arr.data, [x]))
            builder.store(q, builder.gep(q_arr.data, [x]))
            builder.store(total, builder.gep(sum_arr.data, [x]))
        return context.get_dummy_value()

    return sig, codegen


# ---------------------------------------------------------------------------
# Product groups' exact sums (the block-scaled kinds' groups of products)

_GROUPS_FIELDS = ("groups", "lanes", "a_width", "a_ebits", "a_fbits", "a_bias", "a_specials",
                  "a_signed", "a_drop", "b_width", "b_ebits", "b_fbits", "b_bias", "b_specials",
                  "b_signed", "b_drop", "tops")


def groups_config(a_spec: tuple, b_spec: tuple, groups: int, lanes: int, tops: bool) -> str:
    """The configuration string of groups_lanes: ``groups`` groups of
    ``lanes`` products of A and B words of these formats (Format.spec), side
    by side; ``tops``: give each group's largest exponent sum too."""
    return ",".join(str(int(v)) for v in (groups, lanes, *a_spec[1:], *b_spec[1:], tops))


def _parse_groups(config: str) -> dict:
    values = [int(v) for v in config.split(",")]
    if len(values) != len(_GROUPS_FIELDS):
        raise ValueError(f"groups_lanes: a configuration of {len(values)} fields, not "
                         f"{len(_GROUPS_FIELDS)}")
    return dict(zip(_GROUPS_FIELDS, values, strict=True))


def _largest_biased_exponent(fmt: dict) -> int:
    """The largest biased exponent of a finite word of the format."""
    top = (1 << fmt["ebits"]) - 1
    return top - 1 if fmt["specials"] == 0 else top


def groups_width(config: str) -> int | None:
    """The lane width in bits (16, 32 or 64) that holds a group's exact sum
    in units of its smallest product's last bit, or None where none does (or
    where the groups hold more than 64 lanes)."""
    cfg = _parse_groups(config)
    fa, fb = _operand(cfg, "a"), _operand(cfg, "b")
    if cfg["groups"] * cfg["lanes"] > 64:
        return None
    prod_max = ((1 << (fa["fbits"] + 1)) - 1) * ((1 << (fb["fbits"] + 1)) - 1)
    shift = _largest_biased_exponent(fa) + _largest_biased_exponent(fb) - 2
    total_max = cfg["lanes"] * (prod_max << shift)
    for width in (16, 32, 64):
        if total_max < (1 << (width - 1)) and shift < width and max(fa["width"], fb["width"]) <= width:
            return width
    return None


def _segments(v: _Lanes, x, groups: int, size: int, op: str):
    """The ``op`` (add or smax) of each of ``groups`` runs of ``size`` lanes
    of ``x``, as a list of scalars: a tree of lane-halving shuffles over all
    runs at once where ``size`` is a power of two."""
    b = v.b
    combine = b.add if op == "add" else (lambda p, q: v.smax(p, q))
    while size > 1 and size % 2 == 0:
        half = size // 2
        lo = [g * size + t for g in range(groups) for t in range(half)]
        hi = [g * size + half + t for g in range(groups) for t in range(half)]
        undef = ir.Constant(x.type, ir.Undefined)
        mask = lambda idx: ir.Constant(ir.VectorType(ir.IntType(32), len(idx)), idx)  # noqa: E731
        x = combine(b.shuffle_vector(x, undef, mask(lo)), b.shuffle_vector(x, undef, mask(hi)))
        v = _Lanes(b, groups * half, v.t.width)
        size = half
    out = []
    for g in range(groups):
        if size == 1:
            out.append(b.extract_element(x, ir.Constant(ir.IntType(32), g)))
            continue
        run = _Lanes(b, size, v.t.width)
        idx = ir.Constant(ir.VectorType(ir.IntType(32), size), list(range(g * size, (g + 1) * size)))
        part = b.shuffle_vector(x, ir.Constant(x.type, ir.Undefined), idx)
        out.append(run.reduce("add" if op == "add" else "smax", part))
    return out


def _emit_groups(builder: ir.IRBuilder, a_ptr, b_ptr, config: str):
    """The IR of groups_lanes: its 2 + 2 * groups i64 values."""
    cfg = _parse_groups(config)
    fa, fb = _operand(cfg, "a"), _operand(cfg, "b")
    groups, size = cfg["groups"], cfg["lanes"]
    width = groups_width(config)
    v = _Lanes(builder, groups * size, width)
    b = builder
    xa, stray_a = _load(v, a_ptr, fa)
    xb, stray_b = _load(v, b_ptr, fb)
    sa, ma, ra, za, spa, na = _decode(v, xa, fa)
    sb, mb, rb, zb, spb, nb = _decode(v, xb, fb)
    s = b.xor(sa, sb)
    prod = b.mul(ma, mb)
    rsum = b.add(ra, rb)  # biased; 2 is the smallest, the unit of the sums
    # each product exactly, in units of the smallest product's last bit (a
    # special lane's shift is clamped: its value is discarded by the flags)
    shift = b.sub(rsum, v.const(2))
    if fa["specials"] == 0 or fb["specials"] == 0:
        shift = v.smin(shift, v.const(width - 1))
    value = b.shl(prod, shift)
    value = b.add(b.xor(value, b.sub(v.const(0), s)), s)
    sums = _segments(v, value, groups, size, "add")
    nonzero = b.icmp_unsigned("!=", prod, v.const(0))
    positive = b.icmp_unsigned("==", s, v.const(0))
    flags = _flags(v, 1, [(positive, NONNEG), *_special_pairs(v, s, (za, spa, na), (zb, spb, nb)),
                          (_either(b, stray_a, stray_b), STRAY)])[0]
    nonzero_bits = b.zext(b.bitcast(nonzero, ir.IntType(groups * size)), _I64)
    wide = (lambda x: b.sext(x, _I64)) if width < 64 else (lambda x: x)
    tops = [ir.Constant(_I64, NO_FLOOR)] * groups
    if cfg["tops"]:
        low = -(1 << (width - 1))
        tops = []
        for top in _segments(v, b.select(nonzero, rsum, v.const(low)), groups, size, "smax"):
            top = wide(top)
            tops.append(b.select(b.icmp_signed("==", top, ir.Constant(_I64, low)),
                                 ir.Constant(_I64, NO_FLOOR),
                                 b.sub(top, ir.Constant(_I64, fa["bias"] + fb["bias"]))))
    return [flags, nonzero_bits, *(wide(x) for x in sums), *tops]


@intrinsic
def groups_lanes(typingctx, a, b, offset, config):
    """The product groups whose lanes are the words a.flat[offset : offset +
    G * L] and b.flat[offset : offset + G * L], G groups of L: (flags, nonzero,
    sum_0 .. sum_G-1, top_0 .. top_G-1). The flags as block_lanes gives them,
    ``nonzero`` a bit per lane (its product is nonzero), each group's exact
    signed sum of products in units of 2**unit (the last bit of the smallest
    product of the formats: (1 - bias - fraction bits) of A plus that of B),
    and each group's largest raw exponent sum of a nonzero product (NO_FLOOR
    for none, or where the configuration does not ask for them). ``config``:
    a literal of groups_config whose groups_width is not None."""
    if not isinstance(config, types.StringLiteral):
        return None
    for arr in (a, b):
        if not (isinstance(arr, types.Array) and arr.dtype == types.uint32 and arr.layout == "C"):
            return None
    text = config.literal_value
    if groups_width(text) is None:
        return None
    n_out = 2 + 2 * _parse_groups(text)["groups"]
    sig = types.UniTuple(types.int64, n_out)(a, b, types.int64, config)

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, v)
                  for t, v in zip(signature.args[:2], args[:2], strict=True)]
        ptrs = [builder.gep(arr.data, [args[2]]) for arr in arrays]
        values = _emit_groups(builder, ptrs[0], ptrs[1], text)
        return context.make_tuple(builder, signature.return_type, values)

    return sig, codegen
