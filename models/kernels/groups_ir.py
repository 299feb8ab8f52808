"""Product groups' exact sums as explicit vector code: an LLVM intrinsic
for numba (the block-scaled kinds that sum their products in groups before
the scales, kind::mxf4 and mxf4nvf4 in MMA-Sim's reading, G = 16).

:func:`groups_lanes` takes all K lanes of a case at once and gives each
group's exact signed sum of products (in units of the smallest product's
last bit, in lanes as narrow as the sums allow: 16 bits for e2m1), each
group's largest exponent sum, which products are nonzero, and the case's
flags as :func:`.lanes_ir.block_cases` gives them. The caller
(:mod:`.scaled_groups`) folds in the scales, cuts and rounds.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..formats import max_finite_fields
from .core import NO_FLOOR, NONNEG
from .lanes_ir import STRAY
from .vector_ir import (
    I64,
    OPERAND_FIELDS,
    Lanes,
    case_flags,
    decode_lanes,
    either,
    largest_product,
    load_words,
    operand,
    parse_config,
    segments,
    spec_of,
    special_pairs,
)

_GROUPS_FIELDS = ("groups", "lanes", *OPERAND_FIELDS, "tops")


def groups_config(a_spec: tuple, b_spec: tuple, groups: int, lanes: int, tops: bool) -> str:
    """The configuration string of groups_lanes: ``groups`` groups of
    ``lanes`` products of A and B words of these formats (Format.spec), side
    by side; ``tops``: give each group's largest exponent sum too."""
    return ",".join(str(int(v)) for v in (groups, lanes, *a_spec[1:], *b_spec[1:], tops))


def _parse_groups(config: str) -> dict:
    return parse_config(config, _GROUPS_FIELDS, "groups_lanes")


def _largest_biased_exponent(fmt: dict) -> int:
    """The largest biased exponent of a finite word of the format."""
    return int(max_finite_fields(spec_of(fmt), fmt["fbits"])[0])


def groups_width(config: str) -> int | None:
    """The lane width in bits (16, 32 or 64) that holds a group's exact sum
    in units of its smallest product's last bit, or None where none does (or
    where the groups hold more than 64 lanes)."""
    cfg = _parse_groups(config)
    fa, fb = operand(cfg, "a"), operand(cfg, "b")
    if cfg["groups"] * cfg["lanes"] > 64:
        return None
    prod_max = largest_product(fa, fb)
    shift = _largest_biased_exponent(fa) + _largest_biased_exponent(fb) - 2
    total_max = cfg["lanes"] * (prod_max << shift)
    for width in (16, 32, 64):
        fits = total_max < (1 << (width - 1)) and shift < width
        if fits and max(fa["width"], fb["width"]) <= width:
            return width
    return None


def _emit_groups(builder: ir.IRBuilder, a_ptr, b_ptr, config: str):
    """The IR of groups_lanes: its 2 + 2 * groups i64 values."""
    cfg = _parse_groups(config)
    fa, fb = operand(cfg, "a"), operand(cfg, "b")
    groups, size = cfg["groups"], cfg["lanes"]
    width = groups_width(config)
    v = Lanes(builder, groups * size, width)
    b = builder
    xa, stray_a = load_words(v, a_ptr, fa)
    xb, stray_b = load_words(v, b_ptr, fb)
    sa, ma, ra, za, spa, na = decode_lanes(v, xa, fa)
    sb, mb, rb, zb, spb, nb = decode_lanes(v, xb, fb)
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
    sums = segments(v, value, groups, size, "add")
    nonzero = b.icmp_unsigned("!=", prod, v.const(0))
    positive = b.icmp_unsigned("==", s, v.const(0))
    specials = special_pairs(v, s, (za, spa, na), (zb, spb, nb))
    flags = case_flags(v, 1, [(positive, NONNEG), *specials,
                              (either(b, stray_a, stray_b), STRAY)])[0]
    nonzero_bits = b.zext(b.bitcast(nonzero, ir.IntType(groups * size)), I64)
    wide = (lambda x: b.sext(x, I64)) if width < 64 else (lambda x: x)
    tops = [ir.Constant(I64, NO_FLOOR)] * groups
    if cfg["tops"]:
        low = -(1 << (width - 1))
        tops = []
        for top in segments(v, b.select(nonzero, rsum, v.const(low)), groups, size, "smax"):
            top = wide(top)
            tops.append(b.select(b.icmp_signed("==", top, ir.Constant(I64, low)),
                                 ir.Constant(I64, NO_FLOOR),
                                 b.sub(top, ir.Constant(I64, fa["bias"] + fb["bias"]))))
    return [flags, nonzero_bits, *(wide(x) for x in sums), *tops]


@intrinsic
def groups_lanes(typingctx, a, b, offset, config):
    """The product groups whose lanes are the words a.flat[offset : offset +
    G * L] and b.flat[offset : offset + G * L], G groups of L: (flags, nonzero,
    sum_0 .. sum_G-1, top_0 .. top_G-1). The flags as lanes_ir.block_cases
    gives them, ``nonzero`` a bit per lane (its product is nonzero), each group's exact
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
