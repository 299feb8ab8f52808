"""The engine's kernel parameters: :class:`KernelParams`, one named
structure of everything a kernel of the engine needs (formats as specs,
each stage's rounding, kept bits and NaN word, the window), and
:func:`kernel_params`, which builds it from an EngineParams and a datapath,
here and nowhere else."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ..formats import FormatSpec, Overflow, Rounding, get_format
from .core import NO_FLOOR, NORMALIZE, SATURATE, WRAP, Stage, Window

ROUNDINGS = {"rz": Rounding.RZ, "rne": Rounding.RNE, "rna": Rounding.RNA}
CARRY_TOPS = {"wrap": WRAP, "saturate": SATURATE, "normalize": NORMALIZE}
OVERFLOWS = {"ieee": Overflow.IEEE, "inf": Overflow.INF, "saturate": Overflow.SATURATE}


class ParamError(ValueError):
    """A parameter value the engine does not know."""


class KernelParams(NamedTuple):
    """Every parameter of the engine's kernels, named (see kernel_params)."""

    k: int  # products of one dot product
    block: int  # products fused per block (at most K)
    ordered: bool  # K positions consumed in the order array (else 0..K-1)
    a_spec: FormatSpec
    b_spec: FormatSpec
    c_spec: FormatSpec  # C's format (after c_convert)
    normalized: bool  # terms align on their leading bit, not raw exponent sums
    window: Window
    inter: Stage  # a block result passed on to the next block
    out: Stage  # the last block's result, the output word
    c_last: bool  # C is added after the blocks (c_join='last')
    c_add: Stage  # that final add (exact, rounded by c_add_rounding)


def _nan_word(fmt, override: int | None) -> int:
    if override is not None:
        return int(override)
    if fmt.canonical_nan is None:
        raise ParamError(f"{fmt.name} has no NaN")
    return fmt.canonical_nan


@lru_cache(maxsize=256)
def kernel_params(dp, p, k: int, c_fmt=None) -> KernelParams:
    """The KernelParams of EngineParams ``p`` on datapath ``dp`` with K=k
    (``c_fmt``: C's format when c_convert changed it); built once per
    configuration, since a loop of small batches asks for the same one on
    every call."""
    d_fmt = get_format(dp.d_type)
    c_fmt = c_fmt or get_format(dp.c)
    i_fmt = get_format(p.inter_type) if p.inter_type else d_fmt
    d_keep = d_fmt.frac_bits if p.output_frac_bits is None else p.output_frac_bits
    if p.inter_frac_bits is not None:
        i_keep = p.inter_frac_bits
    elif i_fmt == d_fmt:
        i_keep = d_keep
    else:
        i_keep = i_fmt.frac_bits
    overflow = int(OVERFLOWS[p.overflow])
    zero_pos = p.zero_sign == "positive"
    d_nan = _nan_word(d_fmt, p.nan)
    out = Stage(d_fmt.spec, int(ROUNDINGS[p.output_rounding]), d_keep, d_nan, overflow, zero_pos)
    inter = Stage(i_fmt.spec, int(ROUNDINGS[p.inter_rounding or p.output_rounding]), i_keep,
                  _nan_word(i_fmt, p.nan if i_fmt == d_fmt else None), overflow, zero_pos)
    c_add = Stage(d_fmt.spec, int(ROUNDINGS[p.c_add_rounding]), d_keep, d_nan, overflow,
                  zero_pos)
    window = Window(-1 if p.window_bits is None else int(p.window_bits),
                    NO_FLOOR if p.zero_floor is None else int(p.zero_floor),
                    -1 if p.carry_bits is None else int(p.carry_bits),
                    CARRY_TOPS[p.carry_top])
    return KernelParams(k, min(p.block_size, max(k, 1)), p.k_order is not None,
                        get_format(dp.a_type).spec, get_format(dp.b_type).spec, c_fmt.spec,
                        p.align == "normalized", window, inter, out, p.c_join == "last", c_add)


