"""The fingerprint: a ladder's findings reduced to the sim-profile keys,
and the one way findings become engine parameters and a Model.

:func:`engine_params` turns key values (a finding's or a fingerprint's)
into EngineParams, with the defaults for keys nothing determined;
:func:`build_model` makes the Model of those parameters (the engine's, the
block-scaled one, or a SplitModel of sub-MMAs with C added after). The
ladder's context and the :class:`Fingerprint` both go through these two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.amd import MfmaModel, MfmaParams, check_params
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import FOUND_KEYS, PARAM, PROFILE_KEYS, EngineParams
from tcprobe.models.f64 import ChainParams, F64Model, is_f64
from tcprobe.models.formats import get_format
from tcprobe.models.isa import output_defaults
from tcprobe.models.model import FixedPointModel
from tcprobe.models.structures import SplitModel
from tcprobe.models.tcgen05_scaled import BlockScaledModel, ScaledParams
from tcprobe.probes.common import complete

# The sim-profile keys every fingerprint reports, and every engine parameter a
# finding may set (the engine's table of its parameters, models/engine.PARAMS).
FINGERPRINT_KEYS = PROFILE_KEYS
ENGINE_KEYS = FOUND_KEYS


class FingerprintError(ValueError):
    """Findings that make no model (a block-scaled datapath without its scale step)."""


def engine_params(dp: Datapath, values: dict, assumed: dict | None = None,
                  **override) -> EngineParams:
    """EngineParams from key values (None: not determined): what a step
    assumed, else the engine's default (models/engine.PARAMS: the ISA's
    window, truncated inputs, +0 for exact zeros, Inf on overflow), except
    one block of K, no zero floor and the output type's rounding (models/isa.py)."""
    assumed = assumed or {}
    out = output_defaults(get_format(dp.d_type).name)
    here = {"block_size": dp.k, "zero_floor": None, "output_rounding": out.rounding}
    p = {}
    for key in FOUND_KEYS:
        v = values.get(key)
        if v is None:  # an assumed None stands where None is a value (window_bits: exact)
            v = assumed.get(key)
            if v is None and (key not in assumed or not PARAM[key].nullable):
                v = here.get(key, PARAM[key].default)
        p[key] = v
    if p["k_order"] is not None:
        p["k_order"] = tuple(int(x) for x in p["k_order"])
    p.update(override)
    return EngineParams(**p)


@dataclass
class CompletingModel(FixedPointModel):
    """An engine model that completes cases as the ladder runs them (unit
    scales, legal sparse masks), so device and model see the same cases."""

    def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
        return super().evaluate(complete(self.datapath, cases), speed)


@dataclass
class CompletingSplit(SplitModel):
    """A SplitModel that completes cases as the ladder runs them."""

    def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
        return super().evaluate(complete(self.datapath, cases), speed)


def build_model(dp: Datapath, params: EngineParams, *, split: dict | None = None,
                scaled: dict | None = None, c_add_rounding: str | None = None,
                name: str = "ladder", source: str = "ladder findings", completing: bool = False):
    """The Model of findings: sub-MMAs with C added after (``split``: their
    parts, C's rounding, the unpacking), else the block-scaled model of
    ``scaled`` (block-scaled kinds), else the engine model of ``params``.
    ``completing``: the model completes cases as the ladder runs them."""
    if split:
        cls = CompletingSplit if completing else SplitModel
        return cls(name, dp, source, parts=tuple(tuple(p) for p in split["parts"]), stage=params,
                   c_entry="last", c_add_rounding=c_add_rounding or split["c_add_rounding"],
                   unpack=split["unpack"])
    if dp.block_scaled and scaled:
        return BlockScaledModel(name, dp, source, ScaledParams(**scaled))
    return (CompletingModel if completing else FixedPointModel)(name, dp, source, params)


def measured_harness(dp: Datapath, layout: dict | None):
    """The harness a fingerprint's ``layout`` names (the slice and the A and
    B lane slots the ladder measured, on the documented tile), or None where
    it names none. A GPU harness that ran the ladder
    reads through this; so must anything that checks the fingerprint."""
    from dataclasses import replace

    from tcprobe.tiles.harness import HarnessError
    from tcprobe.tiles.tables import harness_for

    if not layout:
        return None
    try:
        nominal = harness_for(dp)
        lanes = lambda key: tuple(np.asarray(x, np.int64) for x in layout[key])  # noqa: E731
        return replace(nominal.with_slice(layout["slice_elements"]), a_lanes=lanes("a_lanes"),
                       b_lanes=lanes("b_lanes"), source="measured")
    except (HarnessError, KeyError, TypeError, ValueError) as e:
        raise FingerprintError(f"layout: not a usable measured layout ({e})") from None


@dataclass
class Fingerprint:
    """The findings reduced to the sim-profile keys (None: not determined
    on this datapath, with the reason in ``undetermined``)."""

    datapath: str
    window_bits: int | None = None
    block_size: int | None = None
    zero_floor: int | None = None
    input_conversion: str | None = None
    output_rounding: str | None = None
    zero_sign: str | None = None
    nan: int | None = None
    output_frac_bits: int | None = None  # None: the output format's own
    k_order: list | None = None  # None: K in order
    overflow: str | None = None
    carry_bits: int | None = None
    carry_top: str | None = None  # wrap | saturate | normalize (with carry_bits)
    align: str | None = None  # None: raw exponent sums
    c_join: str | None = None  # None: C is the first block's addend (last: added after)
    c_convert: str | None = None  # None: C as it is (else rounded to this type on entry)
    inter_type: str | None = None  # None: blocks chain through the output type
    inter_rounding: str | None = None  # None: the output rounding
    inter_frac_bits: int | None = None  # None: the output's kept bits (types agreeing)
    c_add_rounding: str | None = None  # the add of C after the blocks (c_join = "last")
    slice: list | None = None
    layout: dict | None = None
    undetermined: dict = field(default_factory=dict)
    assumed: dict = field(default_factory=dict)  # model values for undetermined keys
    # block-scaled kinds (the scale step): q = max(R - product window, S - offset)
    scale_block: int | None = None
    product_window_bits: int | None = None
    scale_floor_offset: int | None = None
    scaled: dict | None = None  # every ScaledParams field the model runs with
    sparsity: dict | None = None  # sparse kinds: pattern, selectors, disabled positions
    split: dict | None = None  # sub-MMAs with C added after (the block step found them)
    chain: dict | None = None  # f64: the chain step's ChainParams (order, C entry, NaN rule)
    mfma: dict | None = None  # AMD v_mfma: the mfma step's MfmaParams (design, L/P, F, F2)

    @classmethod
    def from_context(cls, ctx) -> Fingerprint:
        if ctx.dp.block_scaled:
            return cls._scaled(ctx)
        if ctx.dp.family == "mfma":
            return cls._mfma(ctx)
        if is_f64(ctx.dp):
            return cls._chain(ctx)
        fp = cls(ctx.dp.id)
        for key in ENGINE_KEYS:
            setattr(fp, key, ctx.value(key))
        fp.split = ctx.value("split")
        for step in ctx.order:
            f = ctx.findings[step]
            for key, why in f.values.get("undetermined", {}).items():
                if getattr(fp, key, None) is None:
                    fp.undetermined[key] = why
            for key in f.values.get("settled", ()):  # a later step found it (None: the default)
                fp.undetermined.pop(key, None)
            for key, value in f.values.get("assumed", {}).items():
                if getattr(fp, key, None) is None:
                    fp.assumed[key] = value
            for key, why in f.values.get("unsure", {}).items():
                # a value its step could not check: the model takes it, the
                # fingerprint names it open
                if getattr(fp, key, None) is not None:
                    fp.assumed[key] = getattr(fp, key)
                    setattr(fp, key, None)
                fp.undetermined[key] = why
        fp._carry_with_rounding(ctx.value("narrow"))
        for key in FINGERPRINT_KEYS:
            if getattr(fp, key) is None and key not in fp.undetermined:
                fp.undetermined[key] = "its step did not run or found nothing"
        fp._common(ctx)
        return fp

    def _carry_with_rounding(self, narrow) -> None:
        """Where the output rounding stayed open between a normalizing top at
        the rounding step's carry bits under RNE or RNA and a wider
        accumulator under an RZ output (its ``narrow`` reading), the carry
        bits stay open with it: the model takes the normalizing top."""
        if (narrow and self.output_rounding is None and self.carry_top == "normalize"
                and self.carry_bits == narrow["carry_bits"]):
            bits = self.carry_bits
            self.assumed["carry_bits"] = bits
            self.carry_bits = None
            self.undetermined["carry_bits"] = (
                f"open with the output rounding: a top normalizing past {bits} carry bits under "
                f"RNE or RNA and a wider accumulator under an RZ output keeping "
                f"{narrow['rz_keep']} fraction bits give the same words in the normal range "
                f"(output_rounding); the model takes {bits}")

    def _common(self, ctx) -> None:
        if ctx.harness is not None and ctx.raw:
            self.slice = [int(i) for i in ctx.harness.elems]
            self.layout = ctx.harness.describe()
        f = ctx.findings.get("sparsity")
        if ctx.dp.sparse and f is not None and f.ok:
            keys = ("pattern", "chunk_width", "kept_per_chunk", "selectors",
                    "selectors_documented", "disabled_ignored", "active_counts")
            self.sparsity = {k: f.values[k] for k in keys if k in f.values}
            for key, why in f.values.get("undetermined", {}).items():
                self.undetermined[f"sparsity.{key}"] = why

    @classmethod
    def _scaled(cls, ctx) -> Fingerprint:
        """A block-scaled datapath: the scale step's keys and model parameters;
        the engine keys do not apply (the quantum is not one engine window)."""
        fp = cls(ctx.dp.id)
        f = ctx.findings.get("scale")
        v = f.values if f is not None else {}
        fp.scale_block = v.get("scale_block")
        fp.product_window_bits = v.get("product_window_bits")
        fp.scale_floor_offset = v.get("scale_floor_offset")
        fp.scaled = dict(v["params"]) if v.get("params") else None
        why = ("block-scaled: the quantum is max(R - product window, S - scale floor offset), "
               "see product_window_bits, scale_floor_offset and scaled")
        for key in FINGERPRINT_KEYS:
            fp.undetermined[key] = why
        fp.nan = v.get("nan")
        if fp.nan is not None:
            fp.undetermined.pop("nan")
        names = {"product_window": "product_window_bits", "scale_window": "scale_floor_offset"}
        for key, text in v.get("undetermined", {}).items():
            fp.undetermined[names.get(key, f"scaled.{key}")] = text
        for key, value in v.get("assumed", {}).items():
            fp.assumed[names.get(key, f"scaled.{key}")] = value
        fp._common(ctx)
        return fp

    @classmethod
    def _chain(cls, ctx) -> Fingerprint:
        """An f64 datapath: the chain step's parameters; the engine keys do not apply."""
        fp = cls(ctx.dp.id)
        f = ctx.findings.get("chain")
        if f is not None and f.values.get("params"):
            fp.chain = dict(f.values["params"])
        for key in FINGERPRINT_KEYS:
            fp.undetermined[key] = "f64: fp64 FMAs, not a fixed-point window (see chain)"
        return fp

    @classmethod
    def _mfma(cls, ctx) -> Fingerprint:
        """An AMD v_mfma datapath: the mfma step's design; the engine keys do not apply."""
        fp = cls(ctx.dp.id)
        f = ctx.findings.get("mfma")
        v = f.values if f is not None else {}
        if v.get("params"):
            fp.mfma = dict(v["params"])
        else:
            fp.undetermined["mfma"] = (f.summary if f is not None else
                                       "the mfma step did not run")
        for key, why in v.get("undetermined", {}).items():
            fp.undetermined[f"mfma.{key}"] = why
        for key in FINGERPRINT_KEYS:
            fp.undetermined[key] = "AMD v_mfma: not one fixed-point window (see mfma)"
        return fp

    def params(self, dp: Datapath) -> EngineParams:
        """Engine parameters; undetermined keys take values that make no
        difference on this datapath (that is why they are undetermined)."""
        return engine_params(dp, {key: getattr(self, key) for key in ENGINE_KEYS}, self.assumed)

    def model(self, dp: Datapath):
        """The engine model (the block-scaled one for block-scaled kinds; a
        SplitModel where the block step found sub-MMAs with C added after)."""
        if self.mfma is not None:
            unknown = sorted(set(self.mfma) - {"design", "block", "window", "window2"})
            if unknown:
                raise FingerprintError(f"mfma: unknown key {unknown[0]} (an AMD design has design, "
                                       "block, window, window2)")
            p = MfmaParams(**self.mfma)
            check_params(p, dp)  # a hand-edited design fails here, not in evaluate
            return MfmaModel("fingerprint", dp, "tcprobe ladder", p)
        if dp.family == "mfma":
            raise FingerprintError(f"{dp.id}: the mfma step found no AMD design")
        if self.chain is not None:
            params = dict(self.chain)
            if params.get("k_order") is not None:
                params["k_order"] = tuple(params["k_order"])
            return F64Model("fingerprint", dp, "tcprobe ladder", ChainParams(**params))
        if dp.block_scaled and not self.split and not self.scaled:
            raise FingerprintError(f"{dp.id}: the scale step found no block-scaled parameters")
        return build_model(dp, self.params(dp), split=self.split, scaled=self.scaled,
                           name="fingerprint", source="tcprobe ladder")

    def as_dict(self) -> dict:
        out = {"datapath": self.datapath}
        for key in ENGINE_KEYS:
            out[key] = getattr(self, key)
        if self.scaled is not None:
            out.update({"scale_block": self.scale_block,
                        "product_window_bits": self.product_window_bits,
                        "scale_floor_offset": self.scale_floor_offset, "scaled": dict(self.scaled)})
        if self.sparsity is not None:
            out["sparsity"] = dict(self.sparsity)
        if self.split is not None:
            out["split"] = dict(self.split)
        if self.chain is not None:
            out["chain"] = dict(self.chain)
        if self.mfma is not None:
            out["mfma"] = dict(self.mfma)
        if self.nan is not None:
            out["nan_hex"] = f"{self.nan:#x}"
        out["undetermined"] = dict(self.undetermined)
        if self.assumed:
            out["assumed"] = dict(self.assumed)
        if self.slice is not None:
            out["slice"] = self.slice
        if self.layout is not None:
            out["layout"] = self.layout
        return out
