"""Which models the CUDA GEMM backend computes, and their parameters as the
kernel takes them.

:func:`supports` says yes only for the fixed-point engine's chain with the
formats and parameters ``kernels/tc_gemm_core.cuh`` implements (float inputs
bf16, f16, tf32, e4m3, e5m2, the fp6/fp4 e2m3, e3m2, e2m1 and AMD's fnuz
fp8; the engine's zero signs, alignments, C joins, C conversions and types,
K orders), the integer kinds (s8, u8, s4, u4, b1 .and / .xor into s32,
wrapped or saturated), the block-scaled kinds (kind::mxf8f6f4 as the chain,
the fp4 kinds as scaled_case's groups) and AMD's v_mfma designs
(``kernels/tc_gemm_amd.cuh``), which the tests compare word for word with
:func:`tcprobe.models.gemm.gemm_words` and the plain models; for any other
model it says no and names the parameter (the backend refuses rather than
give a different answer). :func:`pack` builds the kernel's ``TcParams`` as
one int64 array, from the same
:func:`~tcprobe.models.kernels.kernel_params.kernel_params` that the CPU
engine's kernels are built from.
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields

import numpy as np

from tcprobe.models.amd import DESIGNS, MfmaModel, effective
from tcprobe.models.formats import FormatSpec, get_format
from tcprobe.models.kernels.core import NO_FLOOR
from tcprobe.models.kernels.gemm_split import stage_model
from tcprobe.models.kernels.kernel_params import OVERFLOWS, ROUNDINGS, kernel_params
from tcprobe.models.model import FixedPointModel, IntegerModel, ModelError
from tcprobe.models.structures import SplitModel
from tcprobe.models.tcgen05_scaled import BlockScaledModel

INPUT_FORMATS = ("bf16", "f16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "e4m3fnuz",
                 "e5m2fnuz")  # A and B
C_FORMATS = ("f32", "f16", "bf16", "e4m3", "e5m2")  # C's type and c_convert's (read as words)
INTEGER_FORMATS = ("s8", "u8", "s4", "u4", "b1")  # A and B of the integer kinds (D s32)
INT_BLOCK = 32  # products an integer block sums (the instruction's K when it is smaller)
OUTPUT_FORMATS = ("f32", "f16")  # C and D
INTER_FORMATS = ("f32", "f16", "bf16")  # inter_type
MAX_WINDOW = 48  # window_bits: the block's int64 sum holds (L + 1) * 2**(F + 2)
MAX_BLOCK = 64  # TC_MAXL of kernels/tc_gemm.cu: the block one CTA holds
CARRY_WIDTH = 62  # window_bits + carry_bits + 1: the int64 wrap the engine computes
INPUT_CONVERSIONS = {"truncate": 0, "rne": 1, "rna": 2}
# The EngineParams fields this module checks or packs. A field added to the
# engine later, set away from its default, is refused until it is handled here.
HANDLED = frozenset({
    "window_bits", "block_size", "zero_floor", "input_conversion", "output_rounding",
    "output_frac_bits", "zero_sign", "nan", "overflow", "align", "carry_bits", "carry_top",
    "k_order", "c_join", "c_convert", "inter_type", "inter_rounding", "inter_frac_bits",
    "c_add_rounding",
})

# TcParams of kernels/tc_gemm_core.cuh, field by field (a test reads the header).
SPEC_FIELDS = FormatSpec._fields  # kind, width, exp_bits, frac_bits, bias, specials, signed, drop
STAGE_FIELDS = ("spec", "rounding", "keep", "nan", "overflow")
PARAM_FIELDS = ("a", "b", "a_conv", "b_conv", "window", "floor", "carry_bits", "carry_top",
                "block", "per_instr", "inter", "out", "int_mode", "int_xor", "scale",
                "scale_block", "grp_mode", "pw", "cw", "sw", "qf", "pg", "cdom", "mg", "cmb",
                "pgcm", "gf", "amd", "amd_l", "amd_f2", "c", "cc", "c_conv", "cc_nan", "zero_ieee",
                "normalized", "c_last", "c_add", "c_add_ieee", "c_add_window", "c_every", "unpack",
                "u_nan", "ua", "ub", "c_keep")
_SPECS = {"a", "b", "scale", "c", "cc", "ua", "ub"}  # TcSpec fields; TcStage: inter, out, c_add
_STAGES = {"inter", "out", "c_add"}
_SIZE = {f: len(SPEC_FIELDS) if f in _SPECS else
         len(SPEC_FIELDS) + len(STAGE_FIELDS) - 1 if f in _STAGES else 1 for f in PARAM_FIELDS}
_AT = {f: sum(_SIZE[g] for g in PARAM_FIELDS[:i]) for i, f in enumerate(PARAM_FIELDS)}
_AT_INDEX = {f: i for i, f in enumerate(PARAM_FIELDS)}
N_PARAMS = sum(_SIZE.values())
SCALE_FORMATS = ("ue8m0", "ue4m3")  # block scales the kernel folds into the elements
# What the backend says of the models it does not compute, by type (the reason
# each is not the kernel's chain).
NOT_THE_CHAIN = {
    "F64Model": "f64 DMMA is an IEEE FMA chain on 64-bit words; the kernel's words are 32-bit",
}


class Unsupported(ValueError):
    """A model the CUDA backend does not compute (the message names why)."""


def check(mdl) -> None:
    """Unsupported unless the backend computes ``mdl``'s chain exactly."""
    if type(mdl) is IntegerModel:
        _check_integer(mdl)
        return
    if type(mdl) is BlockScaledModel:
        _check_scaled(mdl)
        return
    if type(mdl) is MfmaModel:
        _check_mfma(mdl)
        return
    if type(mdl) is SplitModel:
        _check_split(mdl)
        return
    if type(mdl) is not FixedPointModel:
        kind = type(mdl).__name__
        why = NOT_THE_CHAIN.get(kind, "the CUDA backend computes the fixed-point engine's "
                                      "FixedPointModel, the integer and block-scaled kinds and "
                                      "AMD's MfmaModel only")
        raise Unsupported(f"model {getattr(mdl, 'name', mdl)!r} is a {kind}: {why}")
    dp, p = mdl.datapath, mdl.params
    if dp.block_scaled:
        raise Unsupported(f"{dp.id}: block-scaled datapaths are not in the CUDA backend")
    for role, fmt, allowed in (("a_type", dp.a_type, INPUT_FORMATS),
                               ("b_type", dp.b_type, INPUT_FORMATS),
                               ("d_type", dp.d_type, OUTPUT_FORMATS),
                               ("c_type", dp.c, C_FORMATS)):
        if get_format(fmt).name not in allowed:
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name} is not in the CUDA "
                              f"backend ({', '.join(allowed)})")
    for f in dataclass_fields(p):
        if f.name not in HANDLED and getattr(p, f.name) != f.default:
            raise Unsupported(f"engine parameter {f.name}={getattr(p, f.name)!r} is not in the "
                              "CUDA backend")
    _check_params(dp, p)


# ScaledParams fields at the value the kernel's chain computes kind::mxf8f6f4
# with (the others run scaled_case's groups: tc_groups_step).
SCALED_CHAIN = {"product_group": 1, "c_dominant": False, "per_group_c_merge": False,
                "group_floor": None, "scale_window": None}


def scaled_by_chain(mdl) -> bool:
    """Whether a block-scaled model is the kernel's one-window chain with the
    scales folded into the exponents: each product cut on its own to one window
    F (>= 23, so that a C with only zero products comes back as it is) on the
    largest scaled exponent sum and raw(C), ue8m0 scales, q_floor at or below
    f32's last bit (kind::mxf8f6f4's mx parameters); else tc_groups_step runs it."""
    p, f32 = mdl.params, get_format("f32")
    return (p.zero_c == "positive" and all(getattr(p, k) == v for k, v in SCALED_CHAIN.items())
            and get_format(mdl.datapath.scale_type).name == "ue8m0"
            and p.product_window is not None and p.product_window == p.c_window
            and f32.frac_bits <= p.product_window <= MAX_WINDOW
            and (p.q_floor is None or p.q_floor <= f32.emin - f32.frac_bits))


def _check_scaled(mdl) -> None:
    """Block-scaled models: scaled_case's mechanism (the chain where it is one)."""
    dp = mdl.datapath
    if dp.sparse:
        raise Unsupported(f"{dp.id}: sparse block-scaled datapaths (their masked elements and "
                          "sparse merge blocks) are not in the CUDA backend")
    if get_format(dp.scale_type).name not in SCALE_FORMATS:
        raise Unsupported(f"{dp.id}: {dp.scale_type} block scales are not in the CUDA backend "
                          f"({', '.join(SCALE_FORMATS)})")
    for role, fmt in (("a_type", dp.a_type), ("b_type", dp.b_type)):
        if get_format(fmt).name not in INPUT_FORMATS:
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name} is not in the CUDA "
                              f"backend ({', '.join(INPUT_FORMATS)})")
    if dp.k > MAX_BLOCK or dp.k % dp.scale_block:
        raise Unsupported(f"{dp.id}: K={dp.k} in scale blocks of {dp.scale_block} is not in "
                          "the CUDA backend")


# AMD v_mfma (models/amd.py): the inputs the designs take here (32-bit words
# at most: f64 is refused), D and C f32; design codes of kernels/tc_gemm_amd.cuh.
AMD_INPUTS = ("f32", "tf32", "f16", "bf16", "e4m3fnuz", "e5m2fnuz")
AMD_DESIGN = {d: i + 1 for i, d in enumerate(DESIGNS)}  # fma 1, exact 2, ftz 3, truncated 4, grouped 5
AMD_MAX_F2 = 48  # F2 (window2): the joined sum is below 2**(F2 + 9) in an int64


def _check_mfma(mdl) -> None:
    """AMD designs: every parameter value models/amd.py computes without error (L past
    K as K, F and F2 past the exact bound as the bound: the same words)."""
    dp = mdl.datapath
    p = effective(mdl.params, dp) if mdl.params.design != "fma" else mdl.params
    for role, fmt, allowed in (("a_type", dp.a_type, AMD_INPUTS), ("b_type", dp.b_type, AMD_INPUTS),
                               ("d_type", dp.d_type, ("f32",)), ("c_type", dp.c, ("f32",))):
        if get_format(fmt).name not in allowed:
            why = ("f64 MFMA is an FMA chain on 64-bit words; the kernel's words are 32-bit"
                   if get_format(fmt).name == "f64" else f"the CUDA backend takes {', '.join(allowed)}")
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name}: {why}")
    if p.design not in AMD_DESIGN:
        raise Unsupported(f"{dp.id}: AMD design {p.design!r} is not one of {', '.join(DESIGNS)}")
    if dp.k > MAX_BLOCK:
        raise Unsupported(f"{dp.id}: K={dp.k}: the CUDA backend holds at most {MAX_BLOCK} "
                          "products an instruction")
    if p.design == "fma":
        return
    if p.design == "ftz":
        if p.block not in (2, 4) or dp.k % p.block:
            raise Unsupported(f"{dp.id}: ftz pairs of P={p.block}: the CUDA backend takes P = 2 "
                              "or 4 dividing K")
        return
    if not isinstance(p.block, int) or p.block < 1:
        raise Unsupported(f"{dp.id}: {p.design} blocks of L={p.block!r} products")
    if p.design == "grouped" and (p.block < 2 or dp.k % p.block == 1):
        raise Unsupported(f"{dp.id}: grouped blocks of L={p.block} leave a block of one product "
                          "(no odd position: models/amd.py computes no such block)")
    if p.design in ("truncated", "grouped") and not (
            0 <= p.window <= p.window2 + 1 and p.window2 <= AMD_MAX_F2):
        raise Unsupported(f"{dp.id}: F={mdl.params.window}, F2={mdl.params.window2}: the CUDA backend takes "
                          f"0 <= F <= F2 + 1, F2 <= {AMD_MAX_F2}")


def _pack_mfma(mdl) -> np.ndarray:
    """An AMD design's TcParams: A and B formats (tf32 truncated from its f32
    word), one block of K products an instruction, F in window; the stages
    name f32 (the designs round into f32 themselves)."""
    dp = mdl.datapath
    p = effective(mdl.params, dp) if mdl.params.design != "fma" else mdl.params
    f32 = get_format("f32")
    stage = [*_spec(f32.spec), 1, f32.frac_bits, int(f32.canonical_nan), 0]
    return _assemble("f32", a=_spec(get_format(dp.a_type).spec),
                     b=_spec(get_format(dp.b_type).spec), window=int(p.window), block=dp.k,
                     per_instr=1, inter=stage, out=stage, amd=AMD_DESIGN[p.design],
                     amd_l=1 if p.design == "fma" else int(p.block), amd_f2=int(p.window2))


def _split_block(mdl) -> int:
    return min(mdl.stage.block_size, len(mdl.parts[0]))


def _check_split(mdl) -> None:
    """A split model (the fp8 mma.sync emulation of sm_90/sm_100): sub-MMAs of
    equal size, the first from +0, each later one from the one before, C added
    last by an exact add (models/kernels/gemm_split.py's conditions), A and B
    unpacked exactly; the stage a chain this backend computes."""
    dp = mdl.datapath
    acc = get_format(mdl.acc_type or dp.d_type).name
    why = None
    if mdl.c_entry != "last":
        why = f"c_entry={mdl.c_entry!r} (C in the first sub-MMA)"
    elif mdl.c_add_window is not None and not 0 <= mdl.c_add_window <= MAX_WINDOW:
        why = f"c_add_window={mdl.c_add_window} (C merged in a window past {MAX_WINDOW} bits)"
    elif mdl.c_convert or acc != get_format(dp.d_type).name or dp.c != dp.d_type:
        why = "C or the sub-MMAs' accumulator of another type than D"
    elif dp.block_scaled or dp.sparse:
        why = "block-scaled or sparse"
    elif len({len(p) for p in mdl.parts}) != 1:
        why = "sub-MMAs of unequal sizes"
    if why is None:
        try:
            mdl.check_parts(dp.k)
        except ModelError as e:
            why = str(e)
    if why is None and _split_block(mdl) and len(mdl.parts[0]) % _split_block(mdl):
        why = f"stage blocks of {mdl.stage.block_size} do not divide the sub-MMA"
    if why:
        raise Unsupported(f"split model {mdl.name!r} ({dp.id}): {why} is not in the CUDA backend")
    for role, fmt in (("a_type", dp.a_type), ("b_type", dp.b_type)):
        if get_format(fmt).name not in INPUT_FORMATS:
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name} is not in the CUDA "
                              f"backend ({', '.join(INPUT_FORMATS)})")
    check(stage_model(mdl))


def _pack_split(mdl) -> np.ndarray:
    """A split model's TcParams: the stage's chain on the unpacked A and B
    (ua, ub the words' formats, a, b the stage's), one kernel instruction a
    sub-MMA (per_instr its blocks), C saved at each split instruction's start
    (c_every blocks), the first sub-MMA from +0 (c_last 2), then the IEEE add
    of C in D's type (c_add: c_add_rounding, D's bits and NaN, IEEE overflow
    and zero signs; with c_add_window the merge in that window, overflow to
    Inf: structures.ieee_add)."""
    dp = mdl.datapath
    out = pack(stage_model(mdl))
    d_fmt = get_format(dp.d_type)
    block = _split_block(mdl)
    u = get_format(mdl.unpack or dp.a_type)
    window = mdl.c_add_window
    vals = {"c_last": 2, "c_every": dp.k // block, "c_add_ieee": 1,
            "c_add_window": -1 if window is None else int(window),
            "unpack": int(mdl.unpack is not None), "u_nan": int(u.canonical_nan or 0),
            "ua": _spec(get_format(dp.a_type).spec), "ub": _spec(get_format(dp.b_type).spec),
            "c_add": [*_spec(d_fmt.spec), int(ROUNDINGS[mdl.c_add_rounding]), d_fmt.frac_bits,
                      int(d_fmt.canonical_nan), 0 if window is None else int(OVERFLOWS["inf"])]}
    for name, v in vals.items():
        _put(out, name, v)
    return out


def _check_integer(mdl) -> None:
    dp = mdl.datapath
    for role, fmt in (("a_type", dp.a_type), ("b_type", dp.b_type)):
        if get_format(fmt).name not in INTEGER_FORMATS:
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name} is not an integer "
                              f"input of the CUDA backend ({', '.join(INTEGER_FORMATS)})")
    for role, fmt in (("d_type", dp.d_type), ("c_type", dp.c)):
        if get_format(fmt).name != "s32":
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name}: the integer kinds of "
                              "the CUDA backend accumulate into s32")
    if _int_block(dp.k) > MAX_BLOCK:
        raise Unsupported(f"{dp.id}: K={dp.k} is no multiple of {INT_BLOCK} and above "
                          f"{MAX_BLOCK}, the block one CTA holds")
    if dp.bitop not in (None, "and", "xor"):
        raise Unsupported(f"{dp.id}: b1 .{dp.bitop} is not in the CUDA backend")


def _check_params(dp, p) -> None:
    d_fmt = get_format(dp.d_type)
    if p.window_bits is not None and p.window_bits > MAX_WINDOW:
        raise Unsupported(f"window_bits={p.window_bits}: the CUDA backend takes at most "
                          f"{MAX_WINDOW}")
    block = min(p.block_size, dp.k)
    if dp.k % block:
        raise Unsupported(f"block_size={p.block_size} does not divide K={dp.k}")
    if block > MAX_BLOCK:
        raise Unsupported(f"block_size={p.block_size}: the CUDA backend takes at most "
                          f"{MAX_BLOCK} products a block")
    if p.k_order is not None and sorted(p.k_order) != list(range(dp.k)):
        raise Unsupported(f"k_order must be a permutation of 0..{dp.k - 1}")
    if p.c_convert is not None and get_format(p.c_convert).name not in C_FORMATS:
        raise Unsupported(f"c_convert={p.c_convert!r} is not in the CUDA backend "
                          f"({', '.join(C_FORMATS)})")
    if p.input_conversion not in INPUT_CONVERSIONS:
        raise Unsupported(f"input_conversion={p.input_conversion!r} is not in the CUDA backend")
    if p.output_frac_bits is not None and p.output_frac_bits > d_fmt.frac_bits:
        raise Unsupported(f"output_frac_bits={p.output_frac_bits} is more than "
                          f"{d_fmt.name} holds ({d_fmt.frac_bits})")
    i_fmt = get_format(p.inter_type) if p.inter_type else d_fmt
    if i_fmt.name not in INTER_FORMATS:
        raise Unsupported(f"inter_type={p.inter_type!r} is not in the CUDA backend "
                          f"({', '.join(INTER_FORMATS)})")
    if p.inter_frac_bits is not None and p.inter_frac_bits > i_fmt.frac_bits:
        raise Unsupported(f"inter_frac_bits={p.inter_frac_bits} is more than "
                          f"{i_fmt.name} holds ({i_fmt.frac_bits})")
    if (p.carry_bits is not None and p.window_bits is not None
            and p.window_bits + p.carry_bits + 1 > CARRY_WIDTH):
        raise Unsupported(f"carry_bits={p.carry_bits}: window_bits + carry_bits + 1 must be at "
                          f"most {CARRY_WIDTH}")
    if p.nan is not None and not 0 <= p.nan < (1 << d_fmt.width):
        raise Unsupported(f"nan={p.nan:#x} is not a {d_fmt.name} word")


def supports(mdl) -> tuple[bool, str]:
    """(True, '') when the backend computes ``mdl``'s chain, else (False, why)."""
    try:
        check(mdl)
    except Unsupported as e:
        return False, str(e)
    return True, ""


def _spec(spec: FormatSpec) -> list[int]:
    return [int(x) for x in spec]


# The fields every packer names; _unused gives the others.
_NAMED_BY_EVERY_PACKER = frozenset({"a", "b", "window", "block", "per_instr", "inter", "out"})


def _unused(fmt: str) -> dict:
    """The fields a packer need not name, at the values that leave their part
    of the kernel unused: no input conversion, no floor or carry bits, no
    integer mode, ue8m0 scales of no block, no fp4 groups (grp_mode .. gf), no
    AMD design, and the chain's C read as ``fmt`` unconverted (+0 zeros, raw
    alignment, C in the first block, no c_add, no unpacking)."""
    spec = _spec(get_format(fmt).spec)
    groups = PARAM_FIELDS[_AT_INDEX["grp_mode"]:_AT_INDEX["gf"] + 1]
    out = {"a_conv": 0, "b_conv": 0, "floor": NO_FLOOR, "carry_bits": -1, "carry_top": 0,
           "int_mode": 0, "int_xor": 0, "scale": _spec(get_format("ue8m0").spec),
           "scale_block": 0, **dict.fromkeys(groups, 0), "amd": 0, "amd_l": 0, "amd_f2": 0,
           "c": spec, "cc": spec, "c_conv": 0, "cc_nan": 0, "zero_ieee": 0, "normalized": 0,
           "c_last": 0, "c_add": [*spec, 0, 0, 0, 0], "c_add_ieee": 0, "c_add_window": -1,
           "c_every": 0, "unpack": 0, "u_nan": 0, "ua": spec, "ub": spec, "c_keep": 0}
    assert out.keys() | _NAMED_BY_EVERY_PACKER == set(PARAM_FIELDS)
    return out


def _put(out: np.ndarray, name: str, value) -> None:
    """Write TcParams field ``name`` (a number, or a spec's or stage's list)."""
    value = value if isinstance(value, list) else [value]
    if len(value) != _SIZE[name]:
        raise AssertionError(f"TcParams.{name} takes {_SIZE[name]} numbers, not {len(value)}")
    out[_AT[name]:_AT[name] + _SIZE[name]] = value


def _assemble(plain_c: str, **named) -> np.ndarray:
    """TcParams as one int64 array, field by field by name: the fields every
    packer names, any others it sets, the rest at their unused values
    (``_unused(plain_c)``)."""
    unknown = named.keys() - set(PARAM_FIELDS)
    missing = _NAMED_BY_EVERY_PACKER - named.keys()
    if unknown or missing:
        raise AssertionError(f"TcParams: unknown {sorted(unknown)}, missing {sorted(missing)}")
    out = np.zeros(N_PARAMS, np.int64)
    for name, value in {**_unused(plain_c), **named}.items():
        _put(out, name, value)
    return out


def _stage(stage) -> list[int]:
    return [*_spec(stage.spec), int(stage.rounding), int(stage.keep), int(stage.nan),
            int(stage.overflow)]


def pack(mdl) -> np.ndarray:
    """The kernel's TcParams for ``mdl`` (checked): one int64 array."""
    check(mdl)
    if type(mdl) is IntegerModel:
        return _pack_integer(mdl)
    if type(mdl) is BlockScaledModel:
        return _pack_scaled(mdl)
    if type(mdl) is MfmaModel:
        return _pack_mfma(mdl)
    if type(mdl) is SplitModel:
        return _pack_split(mdl)
    dp, p = mdl.datapath, mdl.params
    c_fmt = get_format(p.c_convert or dp.c)
    kp = kernel_params(dp, p, dp.k, c_fmt)
    w = kp.window
    conv = INPUT_CONVERSIONS[p.input_conversion]
    nan = c_fmt.canonical_nan
    return _assemble(
        dp.c, a=_spec(kp.a_spec), b=_spec(kp.b_spec), a_conv=conv, b_conv=conv,
        window=int(w.bits), floor=int(w.floor) if w.floor != NO_FLOOR else NO_FLOOR,
        carry_bits=int(w.carry_bits), carry_top=int(w.carry_top), block=int(kp.block),
        per_instr=dp.k // kp.block, inter=_stage(kp.inter), out=_stage(kp.out),
        cc=_spec(kp.c_spec), c_conv=int(p.c_convert is not None),
        cc_nan=int(nan if nan is not None else 0), zero_ieee=int(not kp.out.zero_pos),
        normalized=int(kp.normalized), c_last=int(kp.c_last), c_add=_stage(kp.c_add),
        c_add_ieee=int(not kp.c_add.zero_pos), ua=_spec(kp.a_spec), ub=_spec(kp.b_spec))


def _pack_integer(mdl) -> np.ndarray:
    """An integer kind's TcParams: the A and B formats, the block and the
    instruction, int_mode (1 wrap, 2 saturate) and int_xor; the float
    fields are unused (zeros; the stages name s32)."""
    dp = mdl.datapath
    block = _int_block(dp.k)
    zero_stage = [*_spec(get_format("s32").spec), 0, 0, 0, 0]
    return _assemble("s32", a=_spec(get_format(dp.a_type).spec),
                     b=_spec(get_format(dp.b_type).spec), window=0, block=block,
                     per_instr=dp.k // block, inter=zero_stage, out=zero_stage,
                     int_mode=2 if mdl.saturate else 1, int_xor=int(dp.bitop == "xor"))


def _opt(v) -> int:
    return NO_FLOOR if v is None else int(v)


def _pack_scaled(mdl) -> np.ndarray:
    """A block-scaled kind's TcParams: one block of K products, truncation into
    f32 with the canonical NaN, the scales' format and block; then either the
    chain (scaled_by_chain: the window F on the scaled raw exponent sums and
    raw(C), the anchor floored at q_floor + F, so that q = max(R - F, raw(C) -
    F, q_floor)) or tc_groups_step with the model's ScaledParams."""
    dp, p = mdl.datapath, mdl.params
    f32 = get_format("f32")
    chain = scaled_by_chain(mdl)
    window = int(p.product_window) if chain else 0
    floor = NO_FLOOR if (p.q_floor is None or not chain) else int(p.q_floor) + window
    stage = [*_spec(f32.spec), 0, f32.frac_bits, int(f32.canonical_nan),
             int(OVERFLOWS[p.overflow])]
    groups = {} if chain else {
        "grp_mode": 1, "pw": _opt(p.product_window), "cw": _opt(p.c_window),
        "sw": _opt(p.scale_window), "qf": _opt(p.q_floor), "pg": int(p.product_group),
        "cdom": int(p.c_dominant), "mg": int(p.merge_group), "cmb": int(p.c_merge_bits),
        "pgcm": int(p.per_group_c_merge), "gf": _opt(p.group_floor)}
    return _assemble("f32", a=_spec(get_format(dp.a_type).spec),
                     b=_spec(get_format(dp.b_type).spec), window=window, floor=floor,
                     block=dp.k, per_instr=1, inter=stage, out=stage,
                     scale=_spec(get_format(dp.scale_type).spec),
                     scale_block=int(dp.scale_block), **groups,
                     c_keep=int(p.zero_c == "keep"))


def scale_blocks(mdl) -> int:
    """K positions one block scale covers (0: the model has none)."""
    return int(mdl.datapath.scale_block) if type(mdl) is BlockScaledModel else 0


def scale_one(mdl) -> int:
    """The scale word of one (2**0) of a block-scaled model's scale format."""
    f = get_format(mdl.datapath.scale_type)
    return f.bias << f.frac_bits


def _int_block(k: int) -> int:
    return INT_BLOCK if k % INT_BLOCK == 0 else k


def per_instr(mdl) -> int:
    """Blocks of L products one instruction of ``mdl``'s datapath runs."""
    dp = mdl.datapath
    if type(mdl) is IntegerModel:
        return dp.k // _int_block(dp.k)
    if type(mdl) in (BlockScaledModel, MfmaModel):
        return 1
    if type(mdl) is SplitModel:
        return dp.k // _split_block(mdl)
    return dp.k // min(mdl.params.block_size, dp.k)


def k_order(mdl) -> tuple[int, ...] | None:
    """The order an instruction consumes its K positions in (None: 0..K-1):
    a FixedPointModel's ``k_order``, a split model's parts one after another."""
    if type(mdl) is SplitModel:
        return tuple(int(i) for part in mdl.parts for i in part)
    return getattr(getattr(mdl, "params", None), "k_order", None)


def kernel_name(params: np.ndarray) -> str:
    """The kernel of tc_gemm.cu that runs these TcParams: tc_gemm_wide for an
    AMD design or an exact sum (no window), else tc_gemm_chain."""
    wide = int(params[_AT["amd"]]) or int(params[_AT["window"]]) < 0
    return "tc_gemm_wide" if wide else "tc_gemm_chain"
