"""One block of the GEMM kernel's columns as explicit vector code: int32 lanes.

:func:`panel_block` takes one row of A and LANES columns of a decoded panel
of B (:func:`tcprobe.models.gemm.decode_operand`: signed significands, raw
exponents, ZERO_EXP for zeros and specials; B's significands split by
:func:`split_panel` into magnitudes shifted to the window and sign masks)
over one block of K, and each column's addend exponent (C's, or the
previous block's word's; ZERO_EXP for none), and writes per column

* ``top``: max(anchor, floor), the anchor the largest raw exponent sum of the
  block's products and the addend (core.quantum's q is top - F), and
* ``sums``: the sum of the products cut toward zero to 2**q (core.cut),

in 32-bit lanes: a product's magnitude, shifted left by F - (fraction bits
of A + B), lies below 2**31 / block, so the block's sum fits (the caller
checks :func:`fits`; :func:`chunk` products a sum where a block's do not,
the partial sums joined in int64 by panel_words). A nonzero product lies
at or below the anchor, so each cut is one right shift by top minus its
exponent sum, clamped to 31 (a zero product, whose exponents are ZERO_EXP,
shifts out entirely; its significand is 0 anyway).

:func:`panel_words` does the whole block where C, the block results and D
are one IEEE-like format with one rounding (:func:`words_apply`): the
addends' fields (lane_decoder.fields), the products as above, the addend's
cut term, and the sum rounded as core.window_word and formats.encode_scalar
round it (the leading bit from a double's exponent, exact below 2**52),
giving the result words; it says whether an addend was a NaN or Inf, and
the caller gives the columns so flagged the core's specials rule.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .vector_ir import I64, Lanes, parse_config, vector_at

ZERO_EXP = -(1 << 24)  # gemm.ZERO_EXP: the exponent of a zero or special word
LANES = 16  # columns a call: one AVX-512 vector of int32, two AVX2 ones
I32_FLOOR = -(1 << 30)  # a floor no exponent sum reaches (ZERO_EXP sums are -2**25)
_FIELDS = ("lanes", "block", "shift", "floor", "chunk")


def chunk(a_frac_bits: int, b_frac_bits: int, window_bits: int, block: int) -> int:
    """How many cut products of a block are summed in one int32 lane before
    the partial sums join in int64 (0: not even one product fits)."""
    shift = window_bits - a_frac_bits - b_frac_bits
    largest = ((1 << (a_frac_bits + 1)) - 1) * ((1 << (b_frac_bits + 1)) - 1)
    if window_bits < 0:
        return 0
    return min(block, ((1 << 31) - 1) // (largest << max(shift, 0)))


def fits(a_frac_bits: int, b_frac_bits: int, window_bits: int, block: int) -> bool:
    """Whether a block's cut products and their whole sum fit int32 lanes."""
    return chunk(a_frac_bits, b_frac_bits, window_bits, block) == block


def config(a_frac_bits: int, b_frac_bits: int, window_bits: int, floor: int, block: int) -> str:
    """panel_block's configuration string (a literal of the kernel)."""
    return ",".join(str(v) for v in (LANES, block, window_bits - a_frac_bits - b_frac_bits,
                                     max(floor, I32_FLOOR),
                                     max(1, chunk(a_frac_bits, b_frac_bits, window_bits, block))))


def block_config(kp) -> str:
    """panel_block's configuration of a KernelParams (one int32 sum a block:
    a kernel runs it only where :func:`fits`)."""
    text = config(kp.a_spec.frac_bits, kp.b_spec.frac_bits, max(kp.window.bits, 0),
                  kp.window.floor, kp.block)
    return text.rsplit(",", 1)[0] + f",{kp.block}"


@njit(inline="always")
def split_panel(b_sig, shift, lo, hi, b_mag, b_neg):
    """Rows lo .. hi of a panel's signed significands as the intrinsics read
    them: magnitudes shifted left by ``shift`` (:func:`magnitudes`) and
    sign masks (-1 for a negative significand, else 0), int32."""
    for t in range(lo, hi):
        for j in range(b_sig.shape[1]):
            x = b_sig[t, j]
            b_mag[t, j] = np.int32((x if x >= 0 else -x) << shift)
            b_neg[t, j] = np.int32(-1 if x < 0 else 0)


def _is_i32(arr, ndim: int) -> bool:
    return (isinstance(arr, types.Array) and arr.dtype == types.int32 and arr.ndim == ndim
            and arr.layout == "C")


def magnitudes(fab: int, window_bits: int) -> int:
    """The left shift of B's magnitudes in a panel (:func:`split_panel`):
    F minus the fraction bits of the product, where positive."""
    return max(window_bits - fab, 0)


def _products(b, v: Lanes, ptrs, offs, cfg: dict, anchor):
    """(top, partial sums) of one block of LANES columns from the addends'
    exponents ``anchor`` (the module doc's two passes): one int32 sum of
    each ``chunk`` products. B comes as split_panel gives it: magnitudes
    shifted left by F - fab where positive, sign masks, exponents."""
    as_, ae, bm, bn, be = ptrs
    a_off, b_off, stride, j = offs

    def element(ptr, t):
        return b.load(b.gep(ptr, [b.add(a_off, ir.Constant(I64, t))]))

    def row(ptr, t):
        at = b.add(b_off, b.mul(stride, ir.Constant(I64, t)))
        return b.load(vector_at(b, b.gep(ptr, [b.add(at, j)]), v.vt), align=4)

    for t in range(cfg["block"]):
        anchor = v.smax(anchor, b.add(v.splat(element(ae, t)), row(be, t)))
    high = v.smax(anchor, v.const(cfg["floor"]))
    shift = cfg["shift"]
    sums = []
    i32 = v.t
    for t in range(cfg["block"]):
        if t % cfg["chunk"] == 0:
            sums.append(v.const(0))
        sa = element(as_, t)
        a_neg = b.ashr(sa, ir.Constant(i32, 31))
        a_mag = b.sub(b.xor(sa, a_neg), a_neg)
        u = b.mul(v.splat(a_mag), row(bm, t))  # the product's magnitude, shifted
        neg = b.xor(row(bn, t), v.splat(a_neg))
        r = b.sub(b.sub(high, v.splat(element(ae, t))), row(be, t))
        if shift < 0:
            r = b.add(r, v.const(-shift))
        r = b.select(b.icmp_unsigned("<", r, v.const(31)), r, v.const(31))
        sums[-1] = b.add(sums[-1], b.sub(b.xor(b.lshr(u, r), neg), neg))
    return high, sums


@intrinsic
def panel_block(typingctx, a_sig, a_exp, b_mag, b_neg, b_exp, a_off, b_off, stride, ctop, top,
                sums, j, config):
    """Columns j .. j + LANES of one block (module doc): A's significands
    and exponents at a_sig.flat[a_off:][:block], B's at
    b_mag.flat[b_off + t * stride:][:LANES] for t < block (split_panel's
    form, b_neg and b_exp alike); ``ctop``, ``top``
    and ``sums`` int32 vectors read and written at j."""
    if not isinstance(config, types.StringLiteral):
        return None
    if not all(_is_i32(x, 2) for x in (a_sig, a_exp, b_mag, b_neg, b_exp)):
        return None
    if not all(_is_i32(x, 1) for x in (ctop, top, sums)):
        return None
    cfg = parse_config(config.literal_value, _FIELDS, "panel_block")
    sig = types.none(a_sig, a_exp, b_mag, b_neg, b_exp, types.int64, types.int64, types.int64,
                     ctop, top, sums, types.int64, config)

    def codegen(context, builder, signature, args):
        arrs = [context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args, args, strict=True) if isinstance(t, types.Array)]
        as_, ae, bm, bn, be, ct, tp, sm = (x.data for x in arrs)
        j = args[11]
        v = Lanes(builder, cfg["lanes"], 32)
        b = builder
        anchor = b.load(vector_at(b, b.gep(ct, [j]), v.vt), align=4)
        high, (total,) = _products(b, v, (as_, ae, bm, bn, be), (args[5], args[6], args[7], j),
                                   cfg, anchor)
        b.store(high, vector_at(b, b.gep(tp, [j]), v.vt), align=4)
        b.store(total, vector_at(b, b.gep(sm, [j]), v.vt), align=4)
        return context.get_dummy_value()

    return sig, codegen


# ---------------------------------------------------------------------------
# The whole block: the addends read, the products, the rounding, in lanes

_WORD_FIELDS = (*_FIELDS, "bits", "width", "ebits", "fbits", "bias", "rounding", "keep",
                "to_inf", "zero_pos")


def words_fit(kp) -> bool:
    """Whether panel_words computes this configuration's blocks: one cut
    product fits an int32 lane, and the rounding is words_apply's."""
    return words_apply(kp) and chunk(kp.a_spec.frac_bits, kp.b_spec.frac_bits, kp.window.bits,
                                     kp.block) > 0


def words_apply(kp) -> bool:
    """Whether :func:`panel_words` rounds this configuration's blocks: one
    IEEE-like format (NaN and Inf, a sign, no dropped bits, 32 bits at most)
    for C, the block results and the output, one stage for all blocks, no
    carry bits, the truncation or a round-to-nearest."""
    spec = kp.out.spec
    return (kp.inter == kp.out and kp.c_spec == spec and spec.kind == 0 and spec.specials == 0
            and spec.signed == 1 and spec.drop == 0 and spec.width <= 32
            and kp.window.carry_bits < 0 and kp.window.bits >= 0 and 0 <= kp.out.keep
            <= spec.frac_bits and not kp.c_last and not kp.normalized)


def words_config(kp) -> str:
    """panel_words' configuration string."""
    st, spec = kp.out, kp.out.spec
    to_inf = not (st.overflow == 2 or (st.overflow == 0 and st.rounding == 0))
    return ",".join(str(v) for v in (
        config(kp.a_spec.frac_bits, kp.b_spec.frac_bits, max(kp.window.bits, 0), kp.window.floor,
               kp.block),
        kp.window.bits, spec.width, spec.exp_bits, spec.frac_bits, spec.bias, st.rounding,
        st.keep, int(to_inf), int(st.zero_pos)))


def _is_i64(arr) -> bool:
    return (isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1
            and arr.layout == "C")


@intrinsic
def panel_words(typingctx, a_sig, a_exp, b_mag, b_neg, b_exp, a_off, b_off, stride, j, acc, acc_at,
                nxt, nxt_at, config):
    """One block of columns j .. j + LANES from their addend words
    acc[acc_at:][:LANES] (C's or the previous block's, int64) to their
    result words nxt[nxt_at:][:LANES]:
    the addend's fields (lane_decoder.fields), the anchor and the cut sum
    (module doc), the addend's cut term (core.cut), the sum rounded
    (core.window_word with no carry bits, formats.encode_scalar). Returns
    1 when an addend is a NaN or Inf word (its result is then meaningless:
    the caller decides the specials of flagged columns), else 0."""
    if not isinstance(config, types.StringLiteral):
        return None
    if not all(_is_i32(x, 2) for x in (a_sig, a_exp, b_mag, b_neg, b_exp)):
        return None
    if not (_is_i64(acc) and _is_i64(nxt)):
        return None
    cfg = parse_config(config.literal_value, _WORD_FIELDS, "panel_words")
    i64 = types.int64
    sig = types.int64(a_sig, a_exp, b_mag, b_neg, b_exp, i64, i64, i64, i64, acc, i64, nxt, i64,
                      config)

    def codegen(context, builder, signature, args):
        arrs = [context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args, args, strict=True) if isinstance(t, types.Array)]
        as_, ae, bm, bn, be, ac, nx = (x.data for x in arrs)
        j, acc_at, nxt_at = args[8], args[10], args[12]
        b = builder
        v = Lanes(b, cfg["lanes"], 32)
        w = Lanes(b, cfg["lanes"], 64)
        width, ebits, fbits, bias = cfg["width"], cfg["ebits"], cfg["fbits"], cfg["bias"]
        emask = (1 << ebits) - 1
        words = b.load(vector_at(b, b.gep(ac, [acc_at]), w.vt), align=8)
        x = b.trunc(words, v.vt)
        if width < 32:
            x = b.and_(x, v.const((1 << width) - 1))
        sign = v.field(x, width - 1, 1)
        e = v.field(x, fbits, ebits)
        f = v.field(x, 0, fbits)
        special = b.icmp_unsigned("==", e, v.const(emask))
        nonzero_e = b.icmp_unsigned("!=", e, v.const(0))
        cm = b.or_(f, b.shl(b.zext(nonzero_e, v.vt), v.const(fbits)))
        cr = b.sub(b.select(nonzero_e, e, v.const(1)), v.const(bias))
        ctop = b.select(b.icmp_unsigned("!=", cm, v.const(0)), cr, v.const(ZERO_EXP))
        high, sums = _products(b, v, (as_, ae, bm, bn, be), (args[5], args[6], args[7], j), cfg,
                               ctop)
        # small integers (exponents, shift counts, the result's fields) in int32
        # lanes, the sums and magnitudes in int64; q >= I32_FLOOR - F
        q = b.sub(high, v.const(cfg["bits"]))

        def amount(x, lo, hi):  # a shift count clamped to lo .. hi, as int64 lanes
            return b.zext(v.smin(v.smax(x, v.const(lo)), v.const(hi)), w.vt)

        # the addend's term: core.cut(cm, cr - fbits - q, sign)
        sh = b.sub(b.sub(cr, v.const(fbits)), q)
        u = b.lshr(b.shl(b.zext(cm, w.vt), amount(sh, 0, 62)),
                   amount(b.sub(v.const(0), sh), 0, 63))
        s64 = b.zext(sign, w.vt)
        m = b.add(b.xor(u, b.sub(w.const(0), s64)), s64)
        for total in sums:
            m = b.add(m, b.sext(total, w.vt))
        neg = b.icmp_signed("<", m, w.const(0))
        mag = b.select(neg, b.sub(w.const(0), m), m)
        # formats.encode_scalar(neg, mag, q, False, spec, rounding, keep, overflow)
        # its leading bit from a double's exponent: mag | 2**52's bits is the
        # double 2**52 + mag (exact: mag < 2**52), minus 2**52 is mag itself
        dbl = ir.VectorType(ir.DoubleType(), cfg["lanes"])
        two52 = ir.Constant(dbl, [ir.Constant(ir.DoubleType(), 2.0 ** 52)] * cfg["lanes"])
        exact = b.fsub(b.bitcast(b.or_(mag, w.const(0x4330000000000000)), dbl), two52)
        top_bit = b.sub(b.trunc(b.lshr(b.bitcast(exact, w.vt), w.const(52)), v.vt),
                        v.const(1023))
        emin = 1 - bias
        ex = v.smax(b.add(q, top_bit), v.const(emin))
        keep = cfg["keep"]
        sh = b.sub(b.sub(ex, v.const(keep)), q)
        kept = b.shl(b.lshr(mag, amount(sh, 0, 63)), amount(b.sub(v.const(0), sh), 0, 63))
        if cfg["rounding"] != 0:
            shc = amount(sh, 1, 63)
            rem = b.and_(mag, b.sub(b.shl(w.const(1), shc), w.const(1)))
            half = b.shl(w.const(1), b.sub(shc, w.const(1)))
            if cfg["rounding"] == 1:
                odd = b.icmp_unsigned("!=", b.and_(kept, w.const(1)), w.const(0))
                up = b.or_(b.icmp_unsigned(">", rem, half),
                           b.and_(b.icmp_unsigned("==", rem, half), odd))
            else:
                up = b.icmp_unsigned(">=", rem, half)
            valid = b.and_(b.icmp_signed(">", sh, v.const(0)),
                           b.icmp_signed("<=", sh, v.const(63)))
            kept = b.add(kept, b.zext(b.and_(up, valid), w.vt))
            carry = b.icmp_unsigned("!=", b.lshr(kept, w.const(keep + 1)), w.const(0))
            kept = b.select(carry, b.lshr(kept, w.const(1)), kept)
            ex = b.select(carry, b.add(ex, v.const(1)), ex)
        kept32 = b.trunc(kept, v.vt)  # below 2**(keep + 1)
        normal = b.icmp_unsigned("!=", b.lshr(kept32, v.const(keep)), v.const(0))
        biased = b.select(normal, b.add(ex, v.const(bias)), v.const(0))
        frac = b.select(normal, b.and_(kept32, v.const((1 << keep) - 1)), kept32)
        field = b.or_(b.shl(biased, v.const(fbits)), b.shl(frac, v.const(fbits - keep)))
        if cfg["to_inf"]:
            largest = emask << fbits
        else:
            largest = ((emask - 1) << fbits) | (((1 << keep) - 1) << (fbits - keep))
        over = b.icmp_signed(">", biased, v.const(emask - 1))  # (a wrapped field is replaced)
        field = b.select(over, v.const(largest), field)
        word = b.or_(field, b.shl(b.zext(neg, v.vt), v.const(width - 1)))
        if cfg["zero_pos"]:
            word = b.select(b.icmp_unsigned("==", field, v.const(0)), v.const(0), word)
        word = b.zext(word, w.vt)
        b.store(word, vector_at(b, b.gep(nx, [nxt_at]), w.vt), align=8)
        bits = b.bitcast(special, ir.IntType(cfg["lanes"]))
        hit = b.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(cfg["lanes"]), 0))
        return b.zext(hit, I64)

    return sig, codegen
