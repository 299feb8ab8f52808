"""One block's lane passes as explicit vector code: an LLVM intrinsic for
numba, written per block shape, so that the speed of the engine's fast path
does not depend on what LLVM's vectorizers make of scalar loops.

:func:`block_cases` takes the rows of A and B words of one or more cases
(a block's lanes side by side in memory, rows K words apart), each case's
addend (the significand and raw exponent of C or of the previous block's
word) and a configuration string (:func:`block_config`, a literal, so that
every constant of the formats and the window folds into the code), and
writes, for each case:

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
or Inf), multiplies the significands and takes the anchor; pass two cuts
each product with one constant left shift and one clamped right shift (a
nonzero product lies at or below the anchor, the lane decoder's wide form)
and sums them. Two layouts: a case's lanes side by side in one vector (one
case a call, or a few where blocks are short; anchors and sums by
reductions over each case's lanes), or, for blocks of up to ACROSS_LANES
lanes, ACROSS cases a call with one case a vector lane (the rows transposed
so that each lane of the block is a vector over the cases: no reductions).
Lanes are 32-bit integers where the significand products and the sums fit
(every format of 10 fraction bits or fewer, windows up to 29 bits), else
64-bit. Special lanes give meaningless terms: the flags say to discard them.

The caller (:mod:`.lane_kernel`) adds the addend's own cut term, decides
specials and rounds, vectorized over many cases.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .core import NAN, NEG_INF, NO_FLOOR, NONNEG, POS_INF
from .vector_ir import (
    I1,
    I64,
    OPERAND_FIELDS,
    Lanes,
    case_flags,
    decode_lanes,
    either,
    is_int64_vector,
    largest_product,
    load_words,
    operand,
    parse_config,
    prefetch,
    segments,
    special_masks,
    special_pairs,
    spread,
    transpose_rows,
    vector_at,
)

STRAY = 16  # a flag beside the core's: a word of the block has bits above its format


# The fields of block_config, in order.
_CONFIG_FIELDS = ("across", "cases", "stride", "lanes", *OPERAND_FIELDS, "bits", "floor")


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
    return parse_config(config, _CONFIG_FIELDS, "block_cases")


def _cut(v: Lanes, t: Lanes, prod, rsum, s, home, left: int, right: int):
    """Each lane's product cut toward zero to its case's quantum and signed
    (core.cut in the lane decoder's wide form): (prod << left) >> d with
    d = home - rsum + right (>= 0 for a nonzero product, clamped below the
    term width), ``home`` the biased anchor; lanes of ``v``, terms of ``t``."""
    b = v.b
    d = v.widen(v.smax(b.sub(home, rsum), v.const(0)), t, signed=True)
    if right:
        d = b.add(d, t.const(right))
    d = t.smin(d, t.const(t.t.width - 1))
    term = b.lshr(b.shl(v.widen(prod, t, signed=False), t.const(left)), d)
    neg = v.widen(s, t, signed=False)
    return b.add(b.xor(term, b.sub(t.const(0), neg)), neg)




def widths(config: str) -> tuple[int, int, int]:
    """(lane width, term width, sum width) in bits that block_cases uses for
    a configuration: 32 where every value provably fits in an int32."""
    cfg = _parse(config)
    fa, fb, bits = cfg["a_fbits"], cfg["b_fbits"], cfg["bits"]
    prod_max = largest_product(operand(cfg, "a"), operand(cfg, "b"))
    lane = 32 if prod_max < (1 << 31) else 64
    left = max(bits - fa - fb, 0)
    term_max = prod_max << left
    term = 32 if lane == 32 and term_max < (1 << 31) else 64
    total = 32 if term == 32 and term_max * cfg["lanes"] < (1 << 31) else 64
    return lane, term, total


def _load_cases(v: Lanes, ptr, fmt: dict, cases: int, stride: int):
    """load_words of ``cases`` rows of v.n // cases words, ``stride`` words apart,
    side by side in one vector of lanes."""
    size = v.n // cases
    if cases == 1 or stride == size:
        return load_words(v, ptr, fmt)
    one = Lanes(v.b, size, v.t.width)
    parts = [load_words(one, v.b.gep(ptr, [ir.Constant(I64, p * stride)]), fmt)
             for p in range(cases)]
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
    fa, fb = operand(cfg, "a"), operand(cfg, "b")
    lane_w, term_w, sum_w = widths(config)
    v = Lanes(builder, cases * size, lane_w)
    b = builder

    xa, stray_a = _load_cases(v, a_ptr, fa, cases, cfg["stride"])
    xb, stray_b = _load_cases(v, b_ptr, fb, cases, cfg["stride"])
    sa, ma, ra, za, spa, na = decode_lanes(v, xa, fa)
    sb, mb, rb, zb, spb, nb = decode_lanes(v, xb, fb)
    s = b.xor(sa, sb)
    prod = b.mul(ma, mb)
    rsum = b.add(ra, rb)  # biased exponent sum
    nonzero = b.icmp_unsigned("!=", prod, v.const(0))
    # the flags: NONNEG (a product of sign +), the specials, stray bits
    positive = b.icmp_unsigned("==", s, v.const(0))
    specials = special_pairs(v, s, (za, spa, na), (zb, spb, nb))
    flags = case_flags(v, cases, [(positive, NONNEG), *specials,
                              (either(b, stray_a, stray_b), STRAY)])
    # the anchor: the largest exponent sum of a nonzero product, the addend's
    # exponent and the floor, all biased by A's and B's biases, in one vector
    # max (the addend and the floor joined lane-wise before the reduction)
    bias = fa["bias"] + fb["bias"]
    low = -(1 << 31) if lane_w == 32 else NO_FLOOR  # below every biased exponent
    accs = []
    for sig_p, raw_p in zip(acc_sig, acc_raw, strict=True):
        acc_b = b.select(b.icmp_unsigned("!=", sig_p, ir.Constant(I64, 0)),
                         b.add(raw_p, ir.Constant(I64, bias)), ir.Constant(I64, low))
        if floor != NO_FLOOR:
            floor_b = ir.Constant(I64, floor + bias)
            acc_b = b.select(b.icmp_signed(">", acc_b, floor_b), acc_b, floor_b)
        accs.append(acc_b)
    tops = v.smax(b.select(nonzero, rsum, v.const(low)), spread(v, accs))
    homes = segments(v, tops, cases, size, "smax")  # each anchor, never below the floor
    wide = (lambda x: b.sext(x, I64)) if lane_w < 64 else (lambda x: x)
    qs = [b.sub(wide(h), ir.Constant(I64, bias + bits)) for h in homes]
    # pass two: each product cut to 2**q (the lane decoder's wide form)
    shift = fa["fbits"] + fb["fbits"]
    left = max(bits - shift, 0)
    right = max(shift - bits, 0)
    t = Lanes(b, v.n, term_w)
    term = _cut(v, t, prod, rsum, s, spread(v, homes), left, right)
    total_lanes = Lanes(b, v.n, sum_w)
    totals = segments(total_lanes, t.widen(term, total_lanes, signed=True), cases, size, "add")
    if sum_w < 64:
        totals = [b.sext(x, I64) for x in totals]
    return list(zip(flags, qs, totals, strict=True))


PREFETCH_CALLS = 2  # block_cases (across) prefetches the rows of the call this many ahead


def _emit_across(builder: ir.IRBuilder, ptrs: dict, config: str) -> None:
    """The IR of block_cases for ACROSS cases a call, one case a vector lane
    (block_config's ``across``): the same steps as _emit, each lane of the
    block one vector over the cases, so that anchors, sums and flags need
    no reduction across lanes. ``ptrs``: element pointers of a, b, acc_sig,
    acc_raw, flags, qs and sums at the call's first case."""
    cfg = _parse(config)
    size, stride, bits, floor = cfg["lanes"], cfg["stride"], cfg["bits"], cfg["floor"]
    fa, fb = operand(cfg, "a"), operand(cfg, "b")
    _lane_w, term_w, sum_w = widths(config)
    b = builder
    v = Lanes(b, ACROSS, 32)
    row = Lanes(b, size, 32)

    def lanes_of(ptr, fmt):
        prefetch(b, ptr, PREFETCH_CALLS * ACROSS * stride, ACROSS * stride)
        rows = [b.load(vector_at(b, b.gep(ptr, [ir.Constant(I64, c * stride)]), row.vt),
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
        lanes = transpose_rows(b, rows, ACROSS)
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
    no = ir.Constant(ir.VectorType(I1, ACROSS), [0] * ACROSS)
    positive_any, nan_any, pos_any, neg_any = no, no, no, no
    kept = []
    for k in range(size):
        sa, ma, ra, za, spa, na = decode_lanes(v, xa[k], fa)
        sb, mb, rb, zb, spb, nb = decode_lanes(v, xb[k], fb)
        s = b.xor(sa, sb)
        prod = b.mul(ma, mb)
        rsum = b.add(ra, rb)  # biased exponent sum
        top = v.smax(top, b.select(b.icmp_unsigned("!=", prod, v.const(0)), rsum, v.const(low)))
        positive_any = b.or_(positive_any, b.icmp_unsigned("==", s, v.const(0)))
        masks = special_masks(v, s, (za, spa, na), (zb, spb, nb))
        if masks is not None:
            nan_any, pos_any, neg_any = (b.or_(x, m) for x, m in zip((nan_any, pos_any, neg_any),
                                                                        masks, strict=True))
        kept.append(pack(prod, rsum, s))
    # the anchor of each case: its products' and its addend's, never below the floor
    bias = fa["bias"] + fb["bias"]
    wide = ir.VectorType(I64, ACROSS)
    sig = b.load(vector_at(b, ptrs["acc_sig"], wide), align=8)
    raw = b.load(vector_at(b, ptrs["acc_raw"], wide), align=8)
    v64 = Lanes(b, ACROSS, 64)
    acc_b = b.select(b.icmp_unsigned("!=", sig, v64.const(0)), b.add(raw, v64.const(bias)),
                     v64.const(low))
    if floor != NO_FLOOR:
        acc_b = v64.smax(acc_b, v64.const(floor + bias))
    home = v.smax(top, b.trunc(acc_b, v.vt))
    q = b.sub(b.sext(home, wide), v64.const(bias + bits))
    b.store(q, vector_at(b, ptrs["qs"], wide), align=8)
    # pass two: each lane's products cut to 2**q and summed, case by case
    shift = fa["fbits"] + fb["fbits"]
    left, right = max(bits - shift, 0), max(shift - bits, 0)
    t = Lanes(b, ACROSS, term_w)
    acc = Lanes(b, ACROSS, sum_w)
    total = acc.const(0)
    for kept_lane in kept:
        prod, rsum, s = unpack(kept_lane)
        term = _cut(v, t, prod, rsum, s, home, left, right)
        total = b.add(total, t.widen(term, acc, signed=True))
    b.store(acc.widen(total, v64, signed=True), vector_at(b, ptrs["sums"], wide), align=8)
    flags = v64.const(0)
    for mask, flag in ((positive_any, NONNEG), (nan_any, NAN), (pos_any, POS_INF),
                       (neg_any, NEG_INF)):
        flags = b.or_(flags, b.select(mask, v64.const(flag), v64.const(0)))
    stray = either(b, stray_a, stray_b)
    if stray is not None:
        flags = b.or_(flags, b.select(stray, v64.const(STRAY), v64.const(0)))
    b.store(flags, vector_at(b, ptrs["flags"], wide), align=8)


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
    if not all(is_int64_vector(x) for x in (acc_sig, acc_raw, flags, qs, sums)):
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
        at = [builder.add(args[8], ir.Constant(I64, p)) for p in range(cases)]
        acc_sig = [builder.load(builder.gep(sig_arr.data, [x])) for x in at]
        acc_raw = [builder.load(builder.gep(raw_arr.data, [x])) for x in at]
        results = _emit(builder, ptrs[0], ptrs[1], acc_sig, acc_raw, text)
        for x, (f, q, total) in zip(at, results, strict=True):
            builder.store(f, builder.gep(flags_arr.data, [x]))
            builder.store(q, builder.gep(q_arr.data, [x]))
            builder.store(total, builder.gep(sum_arr.data, [x]))
        return context.get_dummy_value()

    return sig, codegen
