"""Building blocks of the explicit vector code that the fast kernels' LLVM
intrinsics emit (:mod:`.lanes_ir`, :mod:`.groups_ir`): vectors of integer
lanes with their operations, words loaded and decoded into lane fields
(the lane decoder's lane_decoder.fields and classes, by bit operations), the
special masks of products, flags per case, segmented reductions, rows
transposed into lanes, prefetches. Nothing here is a kernel: each function
appends instructions to an IRBuilder.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types

from ..numba_internals import declared_function
from .core import NAN, NEG_INF, POS_INF

I1 = ir.IntType(1)
I64 = ir.IntType(64)


def parse_config(config: str, fields: tuple, who: str) -> dict:
    """An intrinsic's configuration string (comma-separated integers) as a
    dict of ``fields``; a malformed one is a ValueError naming ``who``."""
    values = [int(v) for v in config.split(",")]
    if len(values) != len(fields):
        raise ValueError(f"{who}: a configuration of {len(values)} fields, not {len(fields)}")
    return dict(zip(fields, values, strict=True))


# The fields of a float Format.spec after its kind, as a configuration
# string holds them for each operand (OPERAND_FIELDS: A's, then B's).
_SPEC_KEYS = ("width", "ebits", "fbits", "bias", "specials", "signed", "drop")
OPERAND_FIELDS = tuple(f"{side}_{k}" for side in "ab" for k in _SPEC_KEYS)


def operand(cfg: dict, side: str) -> dict:
    """The format of operand ``side`` ('a' or 'b') of a parsed configuration,
    as a dict of its spec's fields (Format.spec without the kind)."""
    return {k: cfg[f"{side}_{k}"] for k in _SPEC_KEYS}


def spec_of(fmt: dict) -> tuple:
    """The Format.spec of a float format given as operand() gives it."""
    return (0, fmt["width"], fmt["ebits"], fmt["fbits"], fmt["bias"], fmt["specials"],
            fmt["signed"], fmt["drop"])


def largest_product(fa: dict, fb: dict) -> int:
    """The largest product of two significands (hidden bit included) of
    formats ``fa`` and ``fb`` (operand() dicts): the bound the lane widths
    of the intrinsics are chosen by."""
    return ((1 << (fa["fbits"] + 1)) - 1) * ((1 << (fb["fbits"] + 1)) - 1)


class Lanes:
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
        one = b.insert_element(ir.Constant(self.vt, ir.Undefined), scalar, ir.Constant(I64, 0))
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), self.n), [0] * self.n)
        return b.shuffle_vector(one, ir.Constant(self.vt, ir.Undefined), zeros)

    def widen(self, v, other: Lanes, signed: bool):
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

    def reduce(self, op: str, v, lanes: Lanes | None = None):
        """llvm.vector.reduce.<op> over the lanes of ``v``."""
        lanes = lanes or self
        name = f"llvm.vector.reduce.{op}.v{lanes.n}i{lanes.t.width}"
        fn = declared_function(self.b.module, ir.FunctionType(lanes.t, [lanes.vt]),
                                            name)
        return self.b.call(fn, [v])


def load_words(v: Lanes, ptr, fmt: dict):
    """The L words at ``ptr`` (uint32) as lanes of ``v``, cut to their
    format's width, and the i1 mask of the words with bits above it (None
    for a 32-bit format, which has none)."""
    b = v.b
    words = Lanes(b, v.n, 32)
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


def decode_lanes(v: Lanes, x, fmt: dict):
    """Lane fields of words ``x`` in format ``fmt`` (a spec as a dict, the
    words cut to its width by load_words): (sign, significand, biased raw
    exponent, zero, special, NaN), the last three i1 masks (the lane
    decoder's lane_decoder.fields and lane classes)."""
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


def either(b: ir.IRBuilder, x, y):
    """The OR of two i1 lane masks, either of which may be None (no mask)."""
    if x is None or y is None:
        return y if x is None else x
    return b.or_(x, y)


def special_pairs(v: Lanes, s, a, b_) -> list:
    """(i1 lane mask, flag) of the products' NaN, +Inf and -Inf (case_flags)."""
    masks = special_masks(v, s, a, b_)
    return [] if masks is None else list(zip(masks, (NAN, POS_INF, NEG_INF), strict=True))


def special_masks(v: Lanes, s, a, b_):
    """The i1 lane masks (NaN, +Inf, -Inf) of the products from the lane
    masks of A and B (decode_lanes's zero, special, NaN) and the product signs
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


def case_flags(v: Lanes, cases: int, masks: list) -> list:
    """Each case's flags (i64) from (i1 lane mask, flag) pairs: a flag is set
    where any of the case's lanes is (cases side by side, v.n // cases lanes
    each). None masks are skipped."""
    b = v.b
    size = v.n // cases
    out = [ir.Constant(I64, 0)] * cases
    for mask, flag in masks:
        if mask is None:
            continue
        bits = b.bitcast(mask, ir.IntType(v.n))
        for p in range(cases):
            part = b.lshr(bits, ir.Constant(bits.type, p * size)) if p else bits
            part = b.and_(part, ir.Constant(bits.type, (1 << size) - 1))
            hit = b.icmp_unsigned("!=", part, ir.Constant(bits.type, 0))
            out[p] = b.or_(out[p], b.select(hit, ir.Constant(I64, flag), ir.Constant(I64, 0)))
    return out


def spread(v: Lanes, scalars: list):
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


def segments(v: Lanes, x, groups: int, size: int, op: str):
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
        v = Lanes(b, groups * half, v.t.width)
        size = half
    out = []
    for g in range(groups):
        if size == 1:
            out.append(b.extract_element(x, ir.Constant(ir.IntType(32), g)))
            continue
        run = Lanes(b, size, v.t.width)
        idx = ir.Constant(ir.VectorType(ir.IntType(32), size),
                          list(range(g * size, (g + 1) * size)))
        part = b.shuffle_vector(x, ir.Constant(x.type, ir.Undefined), idx)
        out.append(run.reduce("add" if op == "add" else "smax", part))
    return out


def transpose_rows(b: ir.IRBuilder, rows: list, width: int) -> list:
    """``width`` rows of L words (<L x i32> each, L a power of two up to
    ``width``) as L vectors of ``width`` words, lane k's words of every row:
    the rows concatenated into L registers of ``width``, then log2(L) passes
    that each deinterleave pairs of registers (evens first, odds after),
    which rotates the bits of an element's index right by one: after log2(L)
    of them the element of row v, lane k (index v * L + k) sits at
    k * width + v."""
    regs = rows
    while regs[0].type.count < width:  # concatenate pairwise
        have = regs[0].type.count
        idx = ir.Constant(ir.VectorType(ir.IntType(32), 2 * have), list(range(2 * have)))
        regs = [b.shuffle_vector(regs[i], regs[i + 1], idx) for i in range(0, len(regs), 2)]
    count = len(regs)
    evens = ir.Constant(ir.VectorType(ir.IntType(32), width), list(range(0, 2 * width, 2)))
    odds = ir.Constant(ir.VectorType(ir.IntType(32), width), list(range(1, 2 * width, 2)))
    for _ in range(count.bit_length() - 1):
        pairs = [(regs[2 * p], regs[2 * p + 1]) for p in range(count // 2)]
        regs = ([b.shuffle_vector(x, y, evens) for x, y in pairs]
                + [b.shuffle_vector(x, y, odds) for x, y in pairs])
    return regs


def prefetch(b: ir.IRBuilder, ptr, ahead: int, words: int) -> None:
    """Prefetch ``words`` uint32 words from ``ahead`` words past ``ptr``, a
    cache line (16 words) at a time: a call's loads come in one burst before
    a long stretch of arithmetic, too far apart for the core to run ahead to
    the next call's loads by itself. A prefetch never faults."""
    i8p = ir.IntType(8).as_pointer()
    fn = declared_function(
        b.module, ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(32), ir.IntType(32),
                                                  ir.IntType(32)]), "llvm.prefetch.p0i8")
    for line in range(0, words, 16):
        at = b.bitcast(b.gep(ptr, [ir.Constant(I64, ahead + line)]), i8p)
        b.call(fn, [at, ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 3),
                    ir.Constant(ir.IntType(32), 1)])


def vector_at(b: ir.IRBuilder, ptr, vt):
    """A pointer to a vector of type ``vt`` at element pointer ``ptr``."""
    return b.bitcast(ptr, vt.as_pointer())


def is_int64_vector(arr) -> bool:
    return isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1 \
        and arr.layout == "C"
