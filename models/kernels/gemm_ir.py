"""One block of the GEMM kernel's columns as explicit vector code: int32 lanes.

:func:`panel_block` takes one row of A and LANES columns of a decoded panel
of B (:func:`tcprobe.models.gemm.decode_operand`: signed significands, raw
exponents, ZERO_EXP for zeros and specials) over one block of K, and each
column's addend exponent (C's, or the previous block's word's; ZERO_EXP for
none), and writes per column

* ``top``: max(anchor, floor), the anchor the largest raw exponent sum of the
  block's products and the addend (core.quantum's q is top - F), and
* ``sums``: the sum of the products cut toward zero to 2**q (core.cut),

in 32-bit lanes: a product's significand, shifted left by F - (fraction bits
of A + B), lies below 2**31 / block, so the block's sum fits (the caller
checks :func:`fits` before it builds the kernel). A nonzero product lies at
or below the anchor, so each cut is one constant left shift and one right
shift by top minus its exponent sum, clamped to 31 (a zero product, whose
exponents are ZERO_EXP, shifts out entirely; its significand is 0 anyway).
The caller adds the addend's own cut term, decides specials and rounds.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .vector_ir import I64, Lanes, parse_config, vector_at

LANES = 16  # columns a call: one AVX-512 vector of int32, two AVX2 ones
I32_FLOOR = -(1 << 30)  # a floor no exponent sum reaches (ZERO_EXP sums are -2**25)
_FIELDS = ("lanes", "block", "shift", "floor")


def fits(a_frac_bits: int, b_frac_bits: int, window_bits: int, block: int) -> bool:
    """Whether a block's cut products and their sum fit int32 lanes."""
    shift = window_bits - a_frac_bits - b_frac_bits
    largest = ((1 << (a_frac_bits + 1)) - 1) * ((1 << (b_frac_bits + 1)) - 1)
    return window_bits >= 0 and block * (largest << max(shift, 0)) < (1 << 31)


def config(a_frac_bits: int, b_frac_bits: int, window_bits: int, floor: int, block: int) -> str:
    """panel_block's configuration string (a literal of the kernel)."""
    return ",".join(str(v) for v in (LANES, block, window_bits - a_frac_bits - b_frac_bits,
                                     max(floor, I32_FLOOR)))


def _is_i32(arr, ndim: int) -> bool:
    return (isinstance(arr, types.Array) and arr.dtype == types.int32 and arr.ndim == ndim
            and arr.layout == "C")


@intrinsic
def panel_block(typingctx, a_sig, a_exp, b_sig, b_exp, a_off, b_off, stride, ctop, top, sums, j,
                config):
    """Columns j .. j + LANES of one block (module doc): A's significands
    and exponents at a_sig.flat[a_off:][:block], B's at
    b_sig.flat[b_off + t * stride:][:LANES] for t < block; ``ctop``, ``top``
    and ``sums`` int32 vectors read and written at j."""
    if not isinstance(config, types.StringLiteral):
        return None
    if not all(_is_i32(x, 2) for x in (a_sig, a_exp, b_sig, b_exp)):
        return None
    if not all(_is_i32(x, 1) for x in (ctop, top, sums)):
        return None
    cfg = parse_config(config.literal_value, _FIELDS, "panel_block")
    sig = types.none(a_sig, a_exp, b_sig, b_exp, types.int64, types.int64, types.int64, ctop, top,
                     sums, types.int64, config)

    def codegen(context, builder, signature, args):
        arrs = [context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args, args, strict=True) if isinstance(t, types.Array)]
        as_, ae, bs, be, ct, tp, sm = (x.data for x in arrs)
        a_off, b_off, stride, j = args[4], args[5], args[6], args[10]
        v = Lanes(builder, cfg["lanes"], 32)
        b = builder

        def scalar(ptr, t):
            return v.splat(b.load(b.gep(ptr, [b.add(a_off, ir.Constant(I64, t))])))

        def row(ptr, t):
            at = b.add(b_off, b.mul(stride, ir.Constant(I64, t)))
            return b.load(vector_at(b, b.gep(ptr, [b.add(at, j)]), v.vt), align=4)

        anchor = b.load(vector_at(b, b.gep(ct, [j]), v.vt), align=4)
        for t in range(cfg["block"]):
            anchor = v.smax(anchor, b.add(scalar(ae, t), row(be, t)))
        high = v.smax(anchor, v.const(cfg["floor"]))
        b.store(high, vector_at(b, b.gep(tp, [j]), v.vt), align=4)
        shift = cfg["shift"]
        total = v.const(0)
        for t in range(cfg["block"]):
            p = b.mul(scalar(as_, t), row(bs, t))
            neg = b.ashr(p, v.const(31))
            u = b.sub(b.xor(p, neg), neg)
            r = b.sub(b.sub(high, scalar(ae, t)), row(be, t))
            if shift > 0:
                u = b.shl(u, v.const(shift))
            elif shift < 0:
                r = b.add(r, v.const(-shift))
            r = b.select(b.icmp_unsigned("<", r, v.const(31)), r, v.const(31))
            total = b.add(total, b.sub(b.xor(b.lshr(u, r), neg), neg))
        b.store(total, vector_at(b, b.gep(sm, [j]), v.vt), align=4)
        return context.get_dummy_value()

    return sig, codegen
