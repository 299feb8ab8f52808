"""Datapaths composed of other datapaths: an MMA that runs as several smaller MMAs.

The compiler emulates some instructions with narrower tensor-core ops. On
sm_90 and sm_100 an fp8 ``mma.sync.m16n8k32`` becomes F2FP unpacks of the
fp8 registers to f16 and two ``HMMA.16816``, each consuming 16 of the 32 K
positions, the second taking the first's result as its accumulator (SASS
facts of issue 7). :class:`SplitModel` reproduces such a chain by running the
engine (:func:`~tcprobe.models.engine.fused_dot`) once per sub-MMA on the K
positions it consumes, then an ordinary IEEE add of C where C enters after.

:func:`deal` names the ways K can be split: runs of ``unit`` consecutive
positions dealt round robin to the sub-MMAs. How fp8 register halves unpack
gives the runs: a 32-bit register holds 4 consecutive K positions, and an
unpack of its low (high) 16 bits gives positions 0,1 (2,3) as one f16 pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

from . import host_ieee
from .engine import ROUNDINGS, EngineParams, Speed, fused_dot
from .formats import convert, get_format
from .model import Model, ModelError


def deal(k: int, parts: int, unit: int, reverse: bool = False) -> tuple[tuple[int, ...], ...]:
    """Split positions 0..k-1 into ``parts`` groups by dealing runs of
    ``unit`` consecutive positions round robin (``unit >= k // parts``: the
    contiguous split). ``reverse``: the groups run last to first."""
    if parts < 1 or unit < 1 or k % parts:
        raise ModelError(f"cannot split K={k} into {parts} equal parts")
    size = k // parts
    unit = min(unit, size)
    if size % unit:
        raise ModelError(f"runs of {unit} do not fill {parts} parts of {size}")
    groups: list[list[int]] = [[] for _ in range(parts)]
    for i, start in enumerate(range(0, k, unit)):
        groups[i % parts].extend(range(start, start + unit))
    out = tuple(tuple(g) for g in groups)
    return out[::-1] if reverse else out


def split_name(k: int, parts: int, unit: int, reverse: bool = False) -> str:
    """Words for a split: 'one block', '2 contiguous blocks', '2 blocks of interleaved pairs'."""
    if parts == 1:
        return "one block"
    size = k // parts
    unit = min(unit, size)
    if unit >= size:
        text = f"{parts} contiguous blocks"
    else:
        run = {1: "single positions", 2: "pairs", 4: "quads"}.get(unit, f"runs of {unit}")
        text = f"{parts} blocks of interleaved {run}"
    return text + (", last first" if reverse else "")


def _one(fmt: str) -> int:
    """The word of 1.0 in ``fmt``."""
    f = get_format(fmt)
    return (f.bias << f.frac_bits) << f.drop_bits


def ieee_add(d_type: str, x: np.ndarray, y: np.ndarray, rounding: str = "rne",
             window: int | None = None, host: bool = True) -> np.ndarray:
    """x + y in ``d_type`` as an ordinary IEEE add (exact sum, one rounding,
    IEEE zero signs and overflow): the engine on x*1 + y, which is exact.
    ``window``: both cut toward zero into that many fraction bits below the
    larger raw exponent first (a fixed-point merge), and Inf past the range.
    An f32 RNE add runs on the host's float32 where that gives the same words
    (:mod:`.host_ieee`); ``host=False`` always runs the engine."""
    if (host and window is None and rounding == "rne" and get_format(d_type).name == "f32"
            and host_ieee.exact()):  # the same words (models/host_ieee.py)
        return host_ieee.add_f32(x, y)
    dp = Datapath("mma", d_type, d_type, d_type, d_type, 1)
    p = EngineParams(window_bits=window, block_size=1, zero_floor=None, output_rounding=rounding,
                     zero_sign="ieee", overflow="ieee" if window is None else "inf")
    x = np.asarray(x, np.uint32).reshape(-1, 1)
    one = np.full_like(x, _one(d_type))
    return fused_dot(dp, Cases(x, one, np.asarray(y, np.uint32)), p)


@dataclass
class SplitModel(Model):
    """An MMA computed as a chain of sub-MMAs, each on its own K positions.

    ``parts`` are the K positions of each sub-MMA, in the order they run;
    ``stage`` the engine of one sub-MMA (its window, block, floor and
    rounding into ``acc_type``). The first sub-MMA's accumulator is C
    (``c_entry='first'``; C converted to ``acc_type`` by RNE where the types
    differ) or +0 (``'last'``: C is added after, in the output type, by an
    ordinary add rounded ``c_add_rounding``, or with ``c_add_window`` bits by
    a fixed-point merge: :func:`ieee_add`). Each later sub-MMA takes the
    previous result as its accumulator. A result in ``acc_type`` other than
    the output type is converted to it rounding ``out_rounding``. ``unpack``
    converts A and B first (F2FP: fp8 to f16, exact); ``c_convert`` converts
    C (RNE) before anything else."""

    parts: tuple[tuple[int, ...], ...] = ()
    stage: EngineParams = field(default_factory=EngineParams)
    acc_type: str | None = None  # None: the output type
    c_entry: str = "first"  # first | last
    c_add_rounding: str = "rne"
    c_add_window: int | None = None  # None: an exact add; else a merge in this window
    out_rounding: str = "rne"
    unpack: str | None = None
    c_convert: str | None = None  # C converted (RNE) to this type before the MMA

    def __post_init__(self):
        if self.c_entry not in ("first", "last"):
            raise ModelError(f"c_entry must be first or last, not {self.c_entry!r}")
        for name in ("c_add_rounding", "out_rounding"):
            if getattr(self, name) not in ROUNDINGS:
                raise ModelError(f"{name} must be one of {', '.join(ROUNDINGS)}")
        if self.stage.k_order is not None or self.stage.c_join != "first":
            raise ModelError("a sub-MMA's engine takes its K positions in order, C first")

    def check_parts(self, k: int) -> None:
        flat = sorted(i for part in self.parts for i in part)
        if flat != list(range(k)):
            raise ModelError(f"{self.name}: the parts do not cover K=0..{k - 1} once each")

    def evaluate(self, cases: Cases, speed: Speed | None = None) -> np.ndarray:
        dp = self.datapath
        cases.check(dp)
        self.check_parts(dp.k)
        a, b = cases.masked()
        a_t, b_t = dp.a_type, dp.b_type
        if self.unpack:
            a, b = convert(a, a_t, self.unpack), convert(b, b_t, self.unpack)
            a_t = b_t = self.unpack
        acc_t = get_format(self.acc_type or dp.d_type).name
        c, c_t = cases.c, get_format(dp.c).name
        if self.c_convert:
            c, c_t = convert(c, c_t, self.c_convert), get_format(self.c_convert).name
        if self.c_entry == "first":
            acc = c if c_t == acc_t else convert(c, c_t, acc_t)
        else:
            acc = np.zeros(len(cases), np.uint32)
        for part in self.parts:
            sub = Datapath(dp.family, a_t, a_t, b_t, acc_t, len(part))
            idx = list(part)
            acc = fused_dot(sub, Cases(a[:, idx], b[:, idx], acc), self.stage, speed=speed)
        d_t = get_format(dp.d_type).name
        if acc_t != d_t:
            acc = convert(acc, acc_t, d_t, ROUNDINGS[self.out_rounding])
        if self.c_entry == "last":
            if c_t != d_t:
                c = convert(c, c_t, d_t)
            acc = ieee_add(d_t, acc, c, self.c_add_rounding, self.c_add_window)
        return np.asarray(acc, np.uint32)

    def describe(self) -> dict:
        return {**super().describe(), "parts": [list(p) for p in self.parts],
                "stage": self.stage.as_dict(), "acc_type": self.acc_type or self.datapath.d_type,
                "c_entry": self.c_entry, "c_add_rounding": self.c_add_rounding,
                "c_add_window": self.c_add_window,
                "out_rounding": self.out_rounding, "unpack": self.unpack,
                "c_convert": self.c_convert}
