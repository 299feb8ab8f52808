"""Which models the CUDA GEMM backend computes, and their parameters as the
kernel takes them.

:func:`supports` says yes only for the fixed-point engine's chain with the
formats and parameters ``kernels/tc_gemm_core.cuh`` implements and the tests
compare word for word with :func:`tcprobe.models.gemm.gemm_words`; for any
other model it says no and names the parameter (the backend refuses rather
than give a different answer). :func:`pack` builds the kernel's ``TcParams``
as one int64 array, from the same :func:`~tcprobe.models.kernels.kernel_params.kernel_params`
that the CPU engine's kernels are built from.
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields

import numpy as np

from tcprobe.models import gemm
from tcprobe.models.formats import FormatSpec, get_format
from tcprobe.models.kernels.core import NO_FLOOR
from tcprobe.models.kernels.kernel_params import kernel_params
from tcprobe.models.model import FixedPointModel

INPUT_FORMATS = ("bf16", "f16", "tf32", "e4m3", "e5m2")  # A and B
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
                "block", "per_instr", "inter", "out")
N_PARAMS = 2 * len(SPEC_FIELDS) + 8 + 2 * (len(SPEC_FIELDS) + len(STAGE_FIELDS) - 1)


class Unsupported(ValueError):
    """A model the CUDA backend does not compute (the message names why)."""


def check(mdl) -> None:
    """Unsupported unless the backend computes ``mdl``'s chain exactly."""
    if type(mdl) is not FixedPointModel:
        raise Unsupported(f"model {getattr(mdl, 'name', mdl)!r} is a {type(mdl).__name__}; the "
                          "CUDA backend computes the fixed-point engine's FixedPointModel only "
                          "(no integer, block-scaled, split fp8 mma.sync or f64 models)")
    dp, p = mdl.datapath, mdl.params
    if dp.block_scaled:
        raise Unsupported(f"{dp.id}: block-scaled datapaths are not in the CUDA backend")
    if dp.sparse:
        raise Unsupported(f"{dp.id}: sparse datapaths are not in the CUDA backend")
    for role, fmt, allowed in (("a_type", dp.a_type, INPUT_FORMATS),
                               ("b_type", dp.b_type, INPUT_FORMATS),
                               ("d_type", dp.d_type, OUTPUT_FORMATS)):
        if get_format(fmt).name not in allowed:
            raise Unsupported(f"{dp.id}: {role} {get_format(fmt).name} is not in the CUDA "
                              f"backend ({', '.join(allowed)})")
    if get_format(dp.c).name != get_format(dp.d_type).name:
        raise Unsupported(f"{dp.id}: C of another type than D (c_type {dp.c})")
    for f in dataclass_fields(p):
        if f.name not in HANDLED and getattr(p, f.name) != f.default:
            raise Unsupported(f"engine parameter {f.name}={getattr(p, f.name)!r} is not in the "
                              "CUDA backend")
    _check_params(dp, p)
    if not gemm.supports(mdl):  # the reference the tests compare with must compute it too
        raise Unsupported(f"{dp.id}: models.gemm does not compute this chain")


def _check_params(dp, p) -> None:
    d_fmt = get_format(dp.d_type)
    if p.window_bits is None:
        raise Unsupported("window_bits=None (an exact sum) is not in the CUDA backend")
    if p.window_bits > MAX_WINDOW:
        raise Unsupported(f"window_bits={p.window_bits}: the CUDA backend takes at most "
                          f"{MAX_WINDOW}")
    block = min(p.block_size, dp.k)
    if dp.k % block:
        raise Unsupported(f"block_size={p.block_size} does not divide K={dp.k}")
    if block > MAX_BLOCK:
        raise Unsupported(f"block_size={p.block_size}: the CUDA backend takes at most "
                          f"{MAX_BLOCK} products a block")
    if p.zero_sign != "positive":
        raise Unsupported(f"zero_sign={p.zero_sign!r}: the CUDA backend models +0 only")
    if p.align != "raw":
        raise Unsupported(f"align={p.align!r}: the CUDA backend aligns on raw exponent sums")
    if p.k_order is not None:
        raise Unsupported("k_order: the CUDA backend consumes K in order")
    if p.c_join != "first":
        raise Unsupported(f"c_join={p.c_join!r}: the CUDA backend joins C in the first block")
    if p.c_convert is not None:
        raise Unsupported(f"c_convert={p.c_convert!r} is not in the CUDA backend")
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
    if p.carry_bits is not None and p.window_bits + p.carry_bits + 1 > CARRY_WIDTH:
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


def _stage(stage) -> list[int]:
    return [*_spec(stage.spec), int(stage.rounding), int(stage.keep), int(stage.nan),
            int(stage.overflow)]


def pack(mdl) -> np.ndarray:
    """The kernel's TcParams for ``mdl`` (checked): one int64 array."""
    check(mdl)
    dp, p = mdl.datapath, mdl.params
    kp = kernel_params(dp, p, dp.k)
    w = kp.window
    conv = INPUT_CONVERSIONS[p.input_conversion]
    values = [*_spec(kp.a_spec), *_spec(kp.b_spec), conv, conv, int(w.bits),
              int(w.floor) if w.floor != NO_FLOOR else NO_FLOOR, int(w.carry_bits),
              int(w.carry_top), int(kp.block), dp.k // kp.block, *_stage(kp.inter),
              *_stage(kp.out)]
    out = np.array(values, np.int64)
    assert out.size == N_PARAMS
    return out


def per_instr(mdl) -> int:
    """Blocks of L products one instruction of ``mdl``'s datapath runs."""
    dp = mdl.datapath
    return dp.k // min(mdl.params.block_size, dp.k)
