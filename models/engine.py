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

from dataclasses import asdict, dataclass, field, make_dataclass, replace
from typing import Any

import numpy as np
from numba import njit

from tcprobe.models import isa
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, field_hash, state_without_hash
from tcprobe.models.formats import FORMATS

from . import fastpath, kernel_cache
from .fastpath import Speed
from .kernels.core import new_terms
from .kernels.core_loop import case_word, prepare
from .kernels.kernel_params import CARRY_TOPS, OVERFLOWS, ROUNDINGS, ParamError

__all__ = ["CARRY_TOPS", "FOUND_KEYS", "OVERFLOWS", "PARAMS", "PROFILE_KEYS", "ROUNDINGS",
           "EngineParams", "Param", "ParamError", "Speed", "fdp_kernel", "fused_dot"]


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


FLOOR_LIMIT = 1 << 31  # |zero_floor| the engine's 64-bit exponent arithmetic holds


@dataclass(frozen=True)
class Param:
    """One engine parameter: its name, the kind of value, what it may be, its
    default and what it means. ``kind``: int (lo..hi), choice (one of
    ``choices``), word (a raw word of the output format), order (a
    permutation of the K positions) or format (a format name, one of
    ``choices`` where given)."""

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple = ()
    lo: int | None = None
    hi: int | None = None
    null: str | None = None  # what None means (None: the parameter always has a value)
    null_words: tuple = ("none",)  # how a TOML profile spells None
    profile: bool = False  # a key every TOML profile sets and every fingerprint reports
    found: bool = False  # a key a ladder finding may set
    unset: str = ""  # what a fingerprint that leaves the key at None means

    @property
    def nullable(self) -> bool:
        return self.null is not None


_ROUNDINGS = tuple(ROUNDINGS)
# C is converted only to a signed float format (no integer, scale or unsigned
# type holds a negative C); a block result passed on needs a NaN word
_C_TYPES = tuple(sorted({f.name for f in FORMATS.values() if f.kind.name == "FLOAT" and f.signed}))
_INTER_TYPES = tuple(n for n in _C_TYPES if FORMATS[n].canonical_nan is not None)
# The engine's parameters, in EngineParams' order (the dataclass is made from
# this table; the TOML schema, the fingerprint, the sim profiles and the
# ladder report read it too). Defaults: the Hopper/Blackwell HMMA datapath
# for f32 output (F=25, L=16, floor -133, RZ, +0).
PARAMS = (
    Param("window_bits", "int", isa.DEFAULT_WINDOW_BITS, "F: fraction bits kept below the anchor",
          lo=0, hi=56, null="exact (no cut)", null_words=("exact", "none"), profile=True,
          found=True),
    Param("block_size", "int", 16, "L: products fused per block", lo=1, hi=1024, profile=True,
          found=True),
    Param("zero_floor", "int", isa.output_defaults("f32").zero_floor, "the anchor never below this",
          lo=-FLOOR_LIMIT, hi=FLOOR_LIMIT, null="no floor", profile=True, found=True),
    Param("input_conversion", "choice", "truncate", "A/B words wider than their format (tf32)",
          choices=("truncate", "rne", "rna"), profile=True, found=True),
    Param("output_rounding", "choice", "rz", "rounding into the output", choices=_ROUNDINGS,
          profile=True, found=True),
    Param("output_frac_bits", "int", None, "fraction bits kept in the output", lo=0, hi=64,
          null="the output format's own", found=True, unset="the output format's own"),
    Param("zero_sign", "choice", "positive", "the sign of an exact zero",
          choices=("positive", "ieee"), profile=True, found=True),
    Param("nan", "word", None, "canonical NaN word of the output", null="the format's",
          profile=True, found=True),
    Param("overflow", "choice", "inf", "a finite sum past the output (unmeasured on silicon; "
          "MMA-Sim gives Inf)", choices=tuple(OVERFLOWS), found=True),
    Param("align", "choice", "raw", "the alignment exponent: raw exponent sums | normalized "
          "products", choices=("raw", "normalized"), found=True, unset="raw exponent sums"),
    Param("carry_bits", "int", None, "integer bits of the accumulator above the anchor", lo=0,
          hi=64, null="no limit", found=True, unset="no wrap"),
    Param("carry_top", "choice", "wrap", "a sum past carry_bits", choices=tuple(CARRY_TOPS),
          found=True, unset="no carry limit"),
    Param("k_order", "order", None, "order the K positions are consumed in", null="K in order",
          found=True, unset="K in order"),
    Param("c_join", "choice", "first", "first: C is the first block's addend | last: added after",
          choices=("first", "last"), found=True, unset="C is the first block's addend"),
    Param("c_convert", "format", None, "convert C (RNE) to this type before the MMA",
          choices=_C_TYPES, null="C as it is", found=True, unset="C as it is"),
    Param("inter_type", "format", None, "type of a block result passed on", null="the output's",
          choices=_INTER_TYPES, found=True, unset="the output's"),
    Param("inter_rounding", "choice", None, "rounding of a block result passed on",
          choices=_ROUNDINGS, null="output_rounding", found=True, unset="output_rounding"),
    Param("inter_frac_bits", "int", None, "fraction bits of a block result passed on", lo=0,
          hi=64, null="output_frac_bits, if the types agree", found=True,
          unset="output_frac_bits, if the types agree"),
    Param("c_add_rounding", "choice", "rne", "rounding of the final add when c_join='last'",
          choices=_ROUNDINGS, found=True, unset="rne (used only with c_join='last')"),
)
PARAM = {p.name: p for p in PARAMS}
PROFILE_KEYS = tuple(p.name for p in PARAMS if p.profile)  # every TOML profile sets these
FOUND_KEYS = tuple(p.name for p in PARAMS if p.found)  # a ladder finding may set these
_TYPES = {"int": "int", "choice": "str", "word": "int", "order": "tuple[int, ...]",
          "format": "str"}


class _EngineParams(ParamRecord):
    """Every knob of the engine, named (:data:`PARAMS`: each one's meaning,
    values and default)."""

    @classmethod
    def from_dict(cls, d: dict) -> EngineParams:
        extra = set(d) - set(PARAM)
        if extra:
            raise ParamError(f"unknown engine parameter(s): {', '.join(sorted(extra))}")
        d = dict(d)
        if d.get("k_order") is not None:
            d["k_order"] = tuple(int(x) for x in d["k_order"])
        return cls(**d)

    def check(self) -> None:
        """ParamError unless every value is one :data:`PARAMS` allows (a NaN
        word is the output format's to check)."""
        for p in PARAMS:
            v = getattr(self, p.name)
            if v is None and p.nullable:
                continue
            if p.kind == "choice" and v not in p.choices:
                raise ParamError(f"{p.name} must be one of {', '.join(p.choices)}, not {v!r}")
            if p.kind == "int" and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                    or not p.lo <= v <= p.hi):
                raise ParamError(f"{p.name} must be a whole number in {p.lo}..{p.hi}"
                                 + (f" (or None: {p.null})" if p.nullable else "") + f", not {v!r}")


EngineParams = make_dataclass(
    "EngineParams",
    [(p.name, _TYPES[p.kind] + (" | None" if p.nullable else ""), field(default=p.default))
     for p in PARAMS],
    bases=(_EngineParams,), frozen=True,
    namespace={"__module__": __name__, "__doc__": _EngineParams.__doc__,
               "__hash__": field_hash, "__getstate__": state_without_hash})
EngineParams.__qualname__ = "EngineParams"


# ---------------------------------------------------------------------------
# The plain kernel: the block loop of core_loop, its parameters at run time.


_CHECKED: set = set()  # EngineParams that passed check() in this process


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
    if p not in _CHECKED:  # a loop of small batches checks its parameters once
        p.check()
        _CHECKED.add(p)
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
