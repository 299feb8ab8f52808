"""The model space that ``tcprobe fit`` searches: one point is a :class:`Recipe`.

A recipe names every choice of a blocked fixed-point datapath as one
coordinate each, so a search can change one at a time:

========== ==============================================================
dimension  values
========== ==============================================================
window     F, fraction bits kept below a block's anchor (None: exact sum)
floor      the zero floor of the anchor exponent (None: none)
rounding   rounding into the output (rz, rne, rna)
frac_bits  fraction bits kept in the output (None: all of its own)
zero_sign  positive (+0 for every exact zero) or ieee
align      raw exponent sums or normalized products
input      conversion of inputs wider than their format (tf32): truncate, rne
split      (block, unit, reverse): K cut into K/block blocks by dealing runs
           of ``unit`` positions round robin (contiguous, interleaved
           single positions, pairs, quads...), run in order or reversed
inter      type:rounding of a block result passed to the next block
           (None: the output type and rounding)
acc        type:rounding of sub-MMAs that each compute one block, the
           chain converted to the output at the end (None: one engine)
c_entry    first (C is the first block's addend) or last:RND (added after
           by an ordinary add rounded RND)
c_convert  C converted (RNE) to this type before the MMA (None: as given)
========== ==============================================================

A recipe builds a :class:`~tcprobe.models.model.FixedPointModel` (one engine
call) or, with ``acc`` set, a :class:`~tcprobe.models.structures.SplitModel`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import ROUNDINGS as ENGINE_ROUNDINGS
from tcprobe.models.engine import EngineParams
from tcprobe.models.formats import get_format
from tcprobe.models.isa import DEFAULT_WINDOW_BITS, output_defaults
from tcprobe.models.model import FixedPointModel, Model
from tcprobe.models.structures import SplitModel, deal, split_name

DIMS = ("c_entry", "rounding", "window", "split", "floor", "zero_sign", "frac_bits", "inter",
        "acc", "c_convert", "align", "input", "carry", "overflow")
# Tried one change at a time, never in pairs (they rarely interact with the rest).
SINGLE_DIMS = ("carry", "overflow")
CARRY_TOPS = ("wrap", "saturate", "normalize")
OVERFLOWS = ("inf", "saturate", "ieee")
MAX_CARRY_BITS = 8  # widths tried for the accumulator's top (None: unbounded)
ROUNDINGS = tuple(ENGINE_ROUNDINGS)  # rz, rne, rna: the engine's output roundings
# Types a block result or a sub-MMA accumulator may be kept in.
WIDE_TYPES = ("f32", "f16", "bf16")
# Distances tried from the current value: every one near it, then growing.
STEPS = tuple(range(1, 17)) + (24, 32)
FLOOR_STEPS = tuple(range(1, 17)) + (24, 32, 64, 128)


F32_OUT = output_defaults("f32")  # a Recipe starts from the ISA's conversion into an f32 D

@dataclass(frozen=True)
class Recipe:
    """One candidate datapath (see the module doc for each field)."""

    window: int | None = DEFAULT_WINDOW_BITS
    block: int = 16
    floor: int | None = F32_OUT.zero_floor
    rounding: str = F32_OUT.rounding
    frac_bits: int | None = None
    zero_sign: str = "positive"
    align: str = "raw"
    input: str = "truncate"
    unit: int = 1 << 30  # >= block: contiguous
    reverse: bool = False
    inter: str | None = None
    acc: str | None = None
    c_entry: str = "first"
    c_convert: str | None = None
    carry_bits: int | None = None  # integer bits above the anchor (None: unbounded)
    carry_top: str = "wrap"  # past carry_bits: wrap | saturate | normalize
    overflow: str = "inf"
    # Carried from the seed, not searched (random captures cannot pin it).
    nan: int | None = None

    # -- building ----------------------------------------------------------
    @classmethod
    def from_params(cls, p: EngineParams) -> Recipe:
        """The recipe of a plain engine profile (natural K order, C first)."""
        inter = None
        if p.inter_type:
            inter = f"{get_format(p.inter_type).name}:{p.inter_rounding or p.output_rounding}"
        c_entry = "first" if p.c_join == "first" else f"last:{p.c_add_rounding}"
        return cls(window=p.window_bits, block=p.block_size, floor=p.zero_floor,
                   rounding=p.output_rounding, frac_bits=p.output_frac_bits,
                   zero_sign=p.zero_sign, align=p.align, input=p.input_conversion,
                   inter=inter, c_entry=c_entry, c_convert=p.c_convert,
                   carry_bits=p.carry_bits, carry_top=p.carry_top, overflow=p.overflow,
                   nan=p.nan)

    def with_(self, **changes) -> Recipe:
        return replace(self, **changes)

    @property
    def split(self) -> tuple[int, int, bool]:
        return (self.block, self.unit, self.reverse)

    def get(self, dim: str):
        if dim == "carry":
            return (self.carry_bits, self.carry_top if self.carry_bits is not None else "wrap")
        return self.split if dim == "split" else getattr(self, dim)

    def set(self, dim: str, value) -> Recipe:
        if dim == "carry":
            return replace(self, carry_bits=value[0], carry_top=value[1])
        if dim == "split":
            block, unit, reverse = value
            return replace(self, block=block, unit=unit, reverse=reverse)
        return replace(self, **{dim: value})

    def parts(self, k: int) -> int:
        return max(1, k // self.block)

    def canonical(self, dp: Datapath) -> Recipe:
        """The same model spelled one way, so equal models compare equal."""
        k, d = dp.k, get_format(dp.d_type)
        r = self
        block = min(r.block, k)
        if k % block:
            block = k
        r = replace(r, block=block)
        size = block
        if r.parts(k) == 1:
            r = replace(r, unit=k, reverse=False, inter=None)
        else:
            unit = min(r.unit, size)
            r = replace(r, unit=unit)
        if r.frac_bits is not None and r.frac_bits >= d.frac_bits:
            r = replace(r, frac_bits=None)
        if r.inter is not None:
            t, rnd = r.inter.split(":")
            if t == d.name and rnd == r.rounding and r.frac_bits is None:
                r = replace(r, inter=None)
        if r.acc is not None:
            r = replace(r, inter=None)
            if r.acc.split(":")[0] == d.name:
                r = replace(r, acc=None)
        if r.c_convert is not None and get_format(r.c_convert).name == get_format(dp.c).name:
            r = replace(r, c_convert=None)
        if get_format(dp.a_type).drop_bits == 0 and get_format(dp.b_type).drop_bits == 0:
            r = replace(r, input="truncate")
        if r.carry_bits is None:
            r = replace(r, carry_top="wrap")
        return r

    def order(self, k: int) -> tuple[int, ...] | None:
        parts = self.parts(k)
        if parts == 1 or (self.unit >= self.block and not self.reverse):
            return None
        return tuple(i for part in deal(k, parts, self.unit, self.reverse) for i in part)

    def params(self, dp: Datapath) -> EngineParams:
        """The engine parameters of this recipe (without ``acc``)."""
        inter_type = inter_rounding = None
        if self.inter:
            inter_type, inter_rounding = self.inter.split(":")
        c_join, _, c_add = self.c_entry.partition(":")
        return EngineParams(
            window_bits=self.window, block_size=self.block, zero_floor=self.floor,
            input_conversion=self.input, output_rounding=self.rounding,
            output_frac_bits=self.frac_bits, zero_sign=self.zero_sign, nan=self.nan,
            overflow=self.overflow, align=self.align, carry_bits=self.carry_bits,
            carry_top=self.carry_top, k_order=self.order(dp.k), c_join=c_join, c_convert=self.c_convert,
            inter_type=inter_type, inter_rounding=inter_rounding,
            c_add_rounding=c_add or "rne",
        )

    def model(self, dp: Datapath, name: str = "fit", evidence: str = "") -> Model:
        """The model this recipe describes, for datapath ``dp``."""
        if self.acc is None:
            return FixedPointModel(name, dp, evidence, self.params(dp))
        acc_type, acc_rounding = self.acc.split(":")
        c_join, _, c_add = self.c_entry.partition(":")
        stage = EngineParams(
            window_bits=self.window, block_size=self.block, zero_floor=self.floor,
            input_conversion=self.input, output_rounding=acc_rounding, zero_sign=self.zero_sign,
            overflow=self.overflow, align=self.align, carry_bits=self.carry_bits,
            carry_top=self.carry_top)
        parts = deal(dp.k, self.parts(dp.k), self.unit, self.reverse)
        return SplitModel(name, dp, evidence, parts=parts, stage=stage, acc_type=acc_type,
                          c_entry=c_join, c_add_rounding=c_add or "rne",
                          out_rounding=self.rounding, c_convert=self.c_convert)

    # -- words -----------------------------------------------------------------
    def describe(self, dp: Datapath) -> str:
        """One line for people."""
        k = dp.k
        window = "exact" if self.window is None else f"F={self.window}"
        floor = "no floor" if self.floor is None else f"floor {self.floor}"
        text = [f"{split_name(k, self.parts(k), self.unit, self.reverse)} of L={self.block}",
                f"{window}, {floor}" + (", normalized products" if self.align == "normalized" else "")]
        if self.acc:
            t, rnd = self.acc.split(":")
            text.append(f"each block a sub-MMA accumulating in {t} {rnd.upper()}, "
                        f"then to {dp.d_type} {self.rounding.upper()}")
        else:
            keep = "" if self.frac_bits is None else f" keeping {self.frac_bits} fraction bits"
            text.append(f"{self.rounding.upper()} to {dp.d_type}{keep}")
            if self.inter and self.parts(k) > 1:
                t, rnd = self.inter.split(":")
                text.append(f"block results passed on in {t} {rnd.upper()}")
        if self.c_convert:
            text.append(f"C converted to {self.c_convert} first")
        if self.c_entry == "first":
            text.append("C in the first block")
        else:
            text.append(f"C added after ({self.c_entry.split(':')[1].upper()})")
        if self.zero_sign != "positive":
            text.append("IEEE zero signs")
        if self.input != "truncate":
            text.append(f"inputs {self.input.upper()}")
        if self.carry_bits is not None:
            text.append(f"{self.carry_bits} carry bits ({self.carry_top} past them)")
        if self.overflow != "inf":
            text.append(f"overflow {self.overflow}")
        return "; ".join(text)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def changed(self, other: Recipe) -> list[str]:
        """The dimensions in which this recipe differs from ``other``."""
        return [d for d in DIMS if self.get(d) != other.get(d)]


# ---------------------------------------------------------------------------
# Neighbours: the values a search tries for one dimension, nearest first.


def _numeric(current: int | None, lo: int, hi: int, up_first: bool, steps, none_value: int):
    """Values at growing distance from ``current`` (direction first), then None."""
    base = none_value if current is None else current
    ups = [base + s for s in steps if base + s <= hi]
    downs = [base - s for s in steps if base - s >= lo]
    out = []
    first, second = (ups, downs) if up_first else (downs, ups)
    for i in range(max(len(first), len(second))):
        if i < len(first):
            out.append(first[i])
        if i < len(second):
            out.append(second[i])
    if current is not None:
        out.append(None)
    return out


def split_values(k: int, current: tuple[int, int, bool]) -> list[tuple[int, int, bool]]:
    """Every split of K: blocks of each power-of-two size, each interleave,
    each order; the current block size first."""
    blocks = [b for b in (1 << i for i in range(0, 12)) if b <= k and k % b == 0]
    cur_block = current[0]
    blocks.sort(key=lambda b: (b != cur_block, abs(b.bit_length() - cur_block.bit_length()), -b))
    out = []
    for b in blocks:
        parts = k // b
        if parts == 1:
            out.append((b, k, False))
            continue
        units = [u for u in (1 << i for i in range(0, 12)) if u < b and b % u == 0] + [b]
        for u in sorted(units, reverse=True):
            for rev in (False, True):
                out.append((b, u, rev))
    return out


def values(r: Recipe, dim: str, dp: Datapath, up: bool = True, floors=()) -> list:
    """Candidate values of ``dim`` around recipe ``r`` (``up``: try larger
    windows, more kept bits and lower floors first; ``floors``: floor
    values the failing cases point at, tried first)."""
    d = get_format(dp.d_type)
    if dim == "window":
        return _numeric(r.window, 0, 56, up, STEPS, 40)
    if dim == "floor":
        near = _numeric(r.floor, -400, 40, not up, FLOOR_STEPS, -149)
        hinted = [f for f in floors if f != r.floor]
        return hinted + [f for f in near if f not in hinted]
    if dim == "frac_bits":
        return _numeric(r.frac_bits, 1, d.frac_bits, up, STEPS, d.frac_bits)
    if dim == "rounding":
        return [x for x in ROUNDINGS if x != r.rounding]
    if dim == "zero_sign":
        return ["ieee" if r.zero_sign == "positive" else "positive"]
    if dim == "align":
        return ["normalized" if r.align == "raw" else "raw"]
    if dim == "input":
        if get_format(dp.a_type).drop_bits == 0:
            return []
        return [x for x in ("truncate", "rne", "rna") if x != r.input]
    if dim == "split":
        return [s for s in split_values(dp.k, r.split) if s != r.split]
    if dim == "carry":  # (carry bits, top) together: one move reaches a saturating top
        opts = [(None, "wrap")] + [(b, t) for b in range(0, MAX_CARRY_BITS + 1) for t in CARRY_TOPS]
        return [x for x in opts if x != r.get("carry")]
    if dim == "overflow":
        return [x for x in OVERFLOWS if x != r.overflow]
    if dim == "inter":
        if r.parts(dp.k) == 1 or r.acc:
            return []
        opts = [None] + [f"{t}:{rnd}" for t in WIDE_TYPES for rnd in ("rz", "rne")]
        return [x for x in opts if x != r.inter]
    if dim == "acc":
        opts = [None] + [f"{t}:{rnd}" for t in WIDE_TYPES if t != d.name for rnd in ("rz", "rne")]
        return [x for x in opts if x != r.acc]
    if dim == "c_entry":
        return [x for x in ("first", "last:rne", "last:rz", "last:rna") if x != r.c_entry]
    if dim == "c_convert":
        c = get_format(dp.c)
        opts = [None] + [t for t in ("f16", "bf16") if get_format(t).width < c.width]
        return [x for x in opts if x != r.c_convert]
    raise ValueError(f"unknown dimension {dim!r}")


def moves(r: Recipe, dim: str, dp: Datapath, up: bool = True, floors=()) -> list:
    """(value, recipe) for each change of ``dim``. Splitting one block into
    several also tries each with its block results kept in f32 (RZ, RNE):
    how results pass between blocks only exists once there are blocks."""
    out = []
    wide = get_format(dp.d_type).name != "f32" and r.acc is None
    for v in values(r, dim, dp, up, floors):
        cand = r.set(dim, v)
        out.append((v, cand))
        if dim == "split" and wide and r.parts(dp.k) == 1 and cand.parts(dp.k) > 1:
            out.extend((v, cand.with_(inter=i)) for i in ("f32:rz", "f32:rne") if i != r.inter)
    return out


# ---------------------------------------------------------------------------
# Families: the structural classes a report rules in or out.


def family_of(r: Recipe, dim: str, k: int) -> str:
    """The family of ``r`` along a structural dimension (words)."""
    if dim == "split":
        parts = r.parts(k)
        if parts == 1:
            return "one block"
        size = k // parts
        if r.unit >= size:
            name = "contiguous blocks"
        else:
            name = {1: "interleaved single positions", 2: "interleaved pairs",
                    4: "interleaved quads"}.get(r.unit, f"interleaved runs of {r.unit}")
        return name + (", last first" if r.reverse else "")
    if dim == "c_entry":
        return "C in the first block" if r.c_entry == "first" else "C added after"
    if dim == "inter":
        if r.inter is None:
            return "block results in the output format"
        t, rnd = r.inter.split(":")
        return f"block results in {t} {rnd.upper()}"
    if dim == "acc":
        if r.acc is None:
            return "one engine"
        t, rnd = r.acc.split(":")
        return f"sub-MMAs accumulating in {t} {rnd.upper()}"
    if dim == "c_convert":
        return "C as given" if r.c_convert is None else f"C converted to {r.c_convert}"
    if dim == "align":
        return f"{r.align} alignment"
    if dim == "rounding":
        return f"output {r.rounding.upper()}"
    raise ValueError(dim)


FAMILY_DIMS = ("split", "c_entry", "inter", "acc", "c_convert", "align", "rounding")


def family_members(r: Recipe, dim: str, dp: Datapath) -> dict[str, Recipe]:
    """For each family of ``dim`` other than ``r``'s: its member nearest ``r``
    (``r`` changed in ``dim`` only; for a split, the same block size where
    there is more than one block)."""
    k = dp.k
    mine = family_of(r, dim, k)
    out: dict[str, Recipe] = {}
    cands = values(r, dim, dp)
    if dim == "split":
        # Prefer r's block (or K/2 when r has one block).
        pref = r.block if r.parts(k) > 1 else max(1, k // 2)
        cands = sorted(cands, key=lambda s: s[0] != pref)
    for v in cands:
        m = r.set(dim, v).canonical(dp)
        fam = family_of(m, dim, k)
        if fam != mine and fam not in out:
            out[fam] = m
    return out
