"""The fixed-point accumulator engine: one parameterized fused dot-product-add.

What it computes, for each case (the mechanism the Khattak-Mikaitis models
and the tcgen05 write-up both measured, in integer arithmetic only):

1. Inputs are decoded to exact (sign, integer significand, exponent); a
   product is the exact integer product of significands.
2. K is walked in ``k_order`` and cut into blocks of ``block_size`` products.
   A block's terms are its products plus the addend (C for the first block,
   else the previous block's result word).
3. The block aligns on one exponent: the largest alignment exponent of its
   nonzero terms (raw exponent sums, or the products' true leading bit when
   ``align='normalized'``), never below ``zero_floor``. Every term is cut
   toward zero to ``window_bits`` fraction bits below it and the integers are
   summed exactly (``window_bits=None``: no cut, an exact sum). With
   ``carry_bits`` set, the accumulator holds that many integer bits above
   the anchor and a sum that needs more wraps, saturates or normalizes
   (``carry_top``).
4. The sum is rounded into the stage's format: intermediate blocks into
   ``inter_type``, the last into the output type, each with its rounding and
   kept fraction bits.

Specials come first in every block: a NaN input, Inf*0 or +Inf + -Inf give
the canonical NaN; otherwise an Inf gives that Inf. The sign of an exact
zero is +0 (``zero_sign='positive'``) or follows IEEE 754 (``'ieee'``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import numpy as np
from numba import njit

from tcprobe.models import isa
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

from . import fastpath, kernel_cache
from .core import new_terms
from .core_loop import case_word, prepare
from .fastpath import Speed
from .kernel_params import CARRY_TOPS, OVERFLOWS, ROUNDINGS, ParamError

__all__ = ["CARRY_TOPS", "OVERFLOWS", "ROUNDINGS", "EngineParams", "ParamError", "Speed", "fdp_kernel",
           "fused_dot"]


class ParamRecord:
    """What every frozen parameter record of a model does: a changed copy, and
    a plain dict (a K order as a list) for JSON."""

    def replace(self, **changes):
        return replace(self, **changes)

    def as_dict(self) -> dict:
        d = asdict(self)
        if d.get("k_order") is not None:
            d["k_order"] = list(d["k_order"])
        return d


@dataclass(frozen=True)
class EngineParams(ParamRecord):
    """Every knob of the engine, named. Defaults are the Hopper/Blackwell
    HMMA datapath for f32 output (F=25, L=16, floor -133, RZ, +0)."""

    window_bits: int | None = isa.DEFAULT_WINDOW_BITS  # F: fraction bits kept below the anchor
    block_size: int = 16  # L: products fused per block
    zero_floor: int | None = isa.output_defaults("f32").zero_floor  # anchor never below this
    input_conversion: str = "truncate"  # A/B words wider than their format (tf32)
    output_rounding: str = "rz"  # rz | rne | rna
    output_frac_bits: int | None = None  # None: the output format's own
    zero_sign: str = "positive"  # positive | ieee
    nan: int | None = None  # canonical NaN word of the output (None: the format's)
    overflow: str = "inf"  # inf | saturate | ieee (unmeasured on silicon; MMA-Sim gives Inf)
    align: str = "raw"  # raw exponent sums | normalized products
    carry_bits: int | None = None  # integer bits of the accumulator above the anchor
    carry_top: str = "wrap"  # a sum past carry_bits: wrap | saturate | normalize
    k_order: tuple[int, ...] | None = None  # order the K positions are consumed in
    c_join: str = "first"  # first: C is the first block's addend | last: added after
    c_convert: str | None = None  # convert C (RNE) to this type before the MMA
    inter_type: str | None = None  # type of a block result passed on (None: output)
    inter_rounding: str | None = None  # None: output_rounding
    inter_frac_bits: int | None = None  # None: output_frac_bits, if the types agree
    c_add_rounding: str = "rne"  # rounding of the final add when c_join='last'

    @classmethod
    def from_dict(cls, d: dict) -> EngineParams:
        known = {f.name for f in fields(cls)}
        extra = set(d) - known
        if extra:
            raise ParamError(f"unknown engine parameter(s): {', '.join(sorted(extra))}")
        d = dict(d)
        if d.get("k_order") is not None:
            d["k_order"] = tuple(int(x) for x in d["k_order"])
        return cls(**d)

    def check(self) -> None:
        for name, value, table in (
            ("output_rounding", self.output_rounding, ROUNDINGS),
            ("inter_rounding", self.inter_rounding or "rz", ROUNDINGS),
            ("c_add_rounding", self.c_add_rounding, ROUNDINGS),
            ("overflow", self.overflow, OVERFLOWS),
        ):
            if value not in table:
                raise ParamError(f"{name} must be one of {', '.join(table)}, not {value!r}")
        choices = (("zero_sign", self.zero_sign, ("positive", "ieee")),
                   ("align", self.align, ("raw", "normalized")),
                   ("c_join", self.c_join, ("first", "last")),
                   ("carry_top", self.carry_top, tuple(CARRY_TOPS)),
                   ("input_conversion", self.input_conversion, ("truncate", "rne", "rna")))
        for name, value, allowed in choices:
            if value not in allowed:
                raise ParamError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.block_size < 1:
            raise ParamError("block_size must be at least 1")
        if self.window_bits is not None and not 0 <= self.window_bits <= 56:
            raise ParamError("window_bits must be between 0 and 56 (or None for exact)")


# ---------------------------------------------------------------------------
# The plain kernel: the block loop of core_loop, its parameters at run time.


@njit(cache=True)
def fdp_kernel(a, b, c, order, kp, out):
    """The blocked fused dot product over every case (see the module doc)."""
    t = new_terms(kp.block + 2)
    for i in range(a.shape[0]):
        out[i] = case_word(a, b, i, np.int64(c[i]), order, kp, t)


def fused_dot(dp: Datapath, cases: Cases, p: EngineParams, *,
              fast: bool | None = None, speed: Speed | None = None,
              scan_words: bool = False) -> np.ndarray:
    """Output words (uint32) of the blocked fixed-point dot product for every case.

    The same words come from two kernels: this module's plain one, and the
    compiled-per-configuration, multi-threaded one of :mod:`.fastpath`.
    ``fast=None`` lets ``speed`` decide (its policy: large batches, or a
    configuration already run; and its thread count), True takes the fast
    path wherever it applies, False forces the plain kernel (the reference
    the fast one is tested against). ``scan_words``: raise CasesError for a
    word with bits above its format (the fast kernel scans as it reads)."""
    p.check()
    kernel_cache.working_on(dp.id)
    speed = speed or Speed()
    if fast is not False and fastpath.supports(dp, p) and (
            fast or speed.worthwhile(dp, p, len(cases))):
        return fastpath.fast_dot(dp, cases, p, speed.jobs, scan_words)
    if scan_words:
        cases.check(dp)
    k = prepare(dp, cases, p)
    out = np.empty(len(cases), np.int64)
    fdp_kernel(np.ascontiguousarray(k.a, dtype=np.int64), np.ascontiguousarray(k.b, dtype=np.int64),
               k.c, k.order, k.params, out)
    return out.astype(np.uint32)
