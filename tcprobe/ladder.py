"""The probe ladder: named steps that make a device confess its datapath.

Each step is a module in ``probes/`` with ``run(ctx) -> Finding``. Steps run
in ladder order; a step that needs an earlier finding asks for it with
:meth:`Context.require`, which runs that step first (marked a
prerequisite). The findings reduce to a :class:`Fingerprint` (the sim-profile
keys: window_bits, block_size, zero_floor, input_conversion,
output_rounding, zero_sign, nan, plus the output precision, K order, slice
and layout; block-scaled kinds: the scale step's keys; sparse kinds: the
sparsity step's; a split datapath: its sub-MMAs); the fingerprint builds a
Model (the engine's, the block-scaled one, or a SplitModel), which is
checked on 10,000 random cases against the same device.

Every case a probe builds is completed the same way for the device and for
the models (:meth:`Context.complete`): unit scales on block-scaled kinds,
and on sparse kinds a legal mask that keeps the lanes the probe uses.

A probe never computes an expected word: it compares device words with each
other, or asks a Model (:meth:`Context.model`) which parameter values agree
with the device.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

import numpy as np

from tcprobe.devices.base import Device, PhysicalBatch, RawModeUnsupported
from tcprobe.harness import Harness, HarnessError, harness_for
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams
from tcprobe.models.formats import Class, decode, get_format
from tcprobe.models.model import FixedPointModel
from tcprobe.probes.common import Finding

STEPS = ("sass", "slice", "lanes", "layout", "truncation", "visible", "internal", "rounding",
         "specials", "block", "zero", "carry", "scale", "sparsity")
TITLES = {
    "sass": "SASS check: the real tensor-core opcode",
    "slice": "output slice: which dump words carry D",
    "lanes": "lane isolation: every lane and C alone, position independence",
    "layout": "operand layout: what each slot feeds",
    "truncation": "input truncation: which input bits are ignored",
    "visible": "visible precision: C + a product below C's ulp",
    "internal": "internal precision: the window F below the largest exponent",
    "rounding": "rounding: fractions of an ulp, carries",
    "specials": "special values: NaN word, Inf*0, Inf-Inf, payloads",
    "block": "block size: products fused before a rounding",
    "zero": "zero: the sign of an exact zero, the zero floor",
    "carry": "carries into the top of the accumulator",
    "scale": "block scales",
    "sparsity": "sparsity metadata",
}
FINGERPRINT_KEYS = ("window_bits", "block_size", "zero_floor", "input_conversion",
                    "output_rounding", "zero_sign", "nan")
VALIDATION_CASES = 10_000


class LadderError(ValueError):
    """A step name that does not exist, or a datapath the device cannot run."""


def parse_steps(text: str | None) -> tuple[str, ...]:
    if not text:
        return STEPS
    steps = tuple(s.strip().lower() for s in text.split(",") if s.strip())
    bad = [s for s in steps if s not in STEPS]
    if bad:
        raise LadderError(f"unknown step(s) {', '.join(bad)} (steps: {', '.join(STEPS)})")
    return tuple(s for s in STEPS if s in steps)


class Context:
    """What the steps share: the device, the datapath, the harness in use,
    the findings so far and the cases each step spends."""

    def __init__(self, device: Device, dp: Datapath, seed: int = 0):
        self.device = device
        self.dp = dp
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.findings: dict[str, Finding] = {}
        self.order: list[str] = []
        self.spent: dict[str, int] = {}
        self._stack: list[str] = []
        self.a_fmt = get_format(dp.a_type)
        self.b_fmt = get_format(dp.b_type)
        self.c_fmt = get_format(dp.c)
        self.d_fmt = get_format(dp.d_type)
        self.raw = False
        self.nominal: Harness | None = None
        try:
            device.tile(dp)
            self.nominal = harness_for(dp)
            self.raw = True
        except RawModeUnsupported:
            pass
        except HarnessError:
            pass
        self.harness: Harness | None = self.nominal

    # -- running cases ----------------------------------------------------------
    @property
    def step(self) -> str:
        return self._stack[-1] if self._stack else "ladder"

    def _count(self, n: int) -> None:
        self.spent[self.step] = self.spent.get(self.step, 0) + int(n)

    def complete(self, cases: Cases) -> Cases:
        """Unit scales and legal sparse masks where a probe left them out."""
        from tcprobe.probes.common import complete

        return complete(self.dp, cases)

    def together(self, n: int, among=None) -> list[int] | None:
        """n lanes that can be active in one case (sparse datapaths keep only
        legal selections), taken from ``among`` in its order."""
        from tcprobe.probes.common import together

        return together(self.dp, n, among)

    def co_active(self, lanes) -> bool:
        from tcprobe.probes.common import co_active

        return co_active(self.dp, lanes)

    def run(self, cases: Cases) -> np.ndarray:
        """Result words of logical cases: through the harness in use (raw
        devices) or the device's result mode."""
        cases = self.complete(cases)
        self._count(len(cases))
        if self.raw and self.harness is not None:
            out = np.empty(len(cases), np.uint32)
            step = 2048
            for lo in range(0, len(cases), step):
                part = cases.take(slice(lo, lo + step))
                dump = self.device.launch(self.dp, self.harness.pack(part))
                out[lo:lo + len(part)] = self.harness.unpack(dump)
            return out
        return np.asarray(self.device.run(self.dp, cases), np.uint32)

    def run_checked(self, cases: Cases) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`run`, without insisting that the slice agrees: (the
        first slice word of each case, whether all slice words agreed)."""
        if not (self.raw and self.harness is not None):
            return self.run(cases), np.ones(len(cases), bool)
        cases = self.complete(cases)
        self._count(len(cases))
        dump = self.device.launch(self.dp, self.harness.pack(cases))
        el = self.harness.elements(dump)[:, self.harness.elems]
        return el[:, 0].copy(), (el == el[:, :1]).all(axis=1)

    def launch(self, batch: PhysicalBatch) -> np.ndarray:
        """Raw dumps of physical tiles (counted as cases of the step), as
        accumulator elements (an f16 register's two halves apart)."""
        self._count(len(batch))
        return self.nominal.elements(np.asarray(self.device.launch(self.dp, batch), np.uint32))

    @property
    def n_elements(self) -> int:
        return self.nominal.n_elements

    def physical(self, a, b, c, scale_a=None, scale_b=None, meta=None) -> PhysicalBatch:
        """Physical tiles from A, B and C slot arrays; every scale byte 1
        (block-scaled) and every lane's metadata the first legal selector of
        each chunk (sparse) unless given."""
        a = np.asarray(a, np.uint32)
        n = len(a)
        t = self.tile()
        if self.dp.block_scaled and scale_a is None:
            from tcprobe.probes.common import pow2

            unit = np.uint32(pow2(self.dp.scale_type, 0))
            word = unit | (unit << np.uint32(8)) | (unit << np.uint32(16)) | (unit << np.uint32(24))
            scale_a = np.full((n, t.scale_slots), word, np.uint32)
            scale_b = scale_a.copy()
        if self.dp.sparse and meta is None:
            meta = self.meta_fill(np.zeros(self.dp.k, bool), n)
        return PhysicalBatch(a, np.asarray(b, np.uint32), np.asarray(c, np.uint32), scale_a,
                             scale_b, meta)

    def meta_fill(self, wanted, n: int = 1) -> np.ndarray:
        """(n, meta_slots): the metadata of the legal mask keeping ``wanted``
        (K,) in every lane's metadata words."""
        from tcprobe.harness import sparse_encode
        from tcprobe.probes.common import legal_mask

        words, _ = sparse_encode(self.dp, legal_mask(self.dp, wanted))
        return self.meta_words(np.repeat(words, n, axis=0))

    def meta_words(self, words) -> np.ndarray:
        """(T, meta_slots) from metadata words (T, words): every lane the same."""
        from tcprobe.harness import META_COLS

        words = np.atleast_2d(np.asarray(words, np.uint32))
        t = self.tile()
        out = np.zeros((len(words), t.meta_slots), np.uint32)
        for j in range(words.shape[1]):
            out[:, j::META_COLS] = words[:, j:j + 1]
        return out

    def c_fill(self, values) -> np.ndarray:
        """(T, c_slots) C words with value i of ``values`` in every element of tile i."""
        w = self.nominal.c_words(np.asarray(values, np.uint32))
        return np.repeat(w[:, None], self.tile().c_slots, axis=1)

    def c_one_hot(self, value: int, zero: int) -> np.ndarray:
        """One tile per C element: that element ``value``, every other ``zero``."""
        t, h = self.tile(), self.nominal
        n = t.c_slots * h.halves
        el = np.full((n, n), zero, np.uint32)
        np.fill_diagonal(el, value)
        if h.halves == 2:
            return (el[:, 0::2] | (el[:, 1::2] << np.uint32(16))).astype(np.uint32)
        return el

    def tile(self):
        """The device's tile, its A and B buffers wide enough for the documented
        layouts (the published tcgen05 offsets leave gaps)."""
        from dataclasses import replace

        t = self.device.tile(self.dp)
        if self.nominal is not None:
            t = replace(t, a_slots=max(t.a_slots, self.nominal.tile.a_slots),
                        b_slots=max(t.b_slots, self.nominal.tile.b_slots))
        return t

    # -- what is known ----------------------------------------------------------
    def value(self, key: str, default=None):
        """The latest finding's value for ``key`` (later steps win)."""
        for step in reversed(self.order):
            f = self.findings[step]
            if key in f.values and f.values[key] is not None:
                return f.values[key]
        return default

    def params(self, **override) -> EngineParams:
        """Engine parameters from the findings so far (defaults elsewhere)."""
        d_f16 = self.d_fmt.name == "f16"
        guess = {}
        for step in self.order:  # model values steps chose among indistinguishable ones
            guess.update(self.findings[step].values.get("assumed", {}))
        p = {
            "window_bits": self.value("window_bits", 25),
            "block_size": self.value("block_size", self.dp.k),
            "k_order": self.value("k_order"),
            "zero_floor": self.value("zero_floor"),
            "input_conversion": self.value("input_conversion", "truncate"),
            "output_rounding": self.value("output_rounding",
                                          guess.get("output_rounding", "rne" if d_f16 else "rz")),
            "output_frac_bits": self.value("output_frac_bits"),
            "zero_sign": self.value("zero_sign", "positive"),
            "nan": self.value("nan"),
            "overflow": self.value("overflow", "inf"),
            "carry_bits": self.value("carry_bits"),
        }
        if p["k_order"] is not None:
            p["k_order"] = tuple(int(x) for x in p["k_order"])
        p.update(override)
        return EngineParams(**p)

    def model(self, **override):
        """The engine model of the findings (with ``override``); where the
        block step found sub-MMAs with C added after, their SplitModel."""
        split = self.value("split")
        c_add = override.pop("c_add_rounding", None)
        if split:

            stage = self.params(**{**override, "k_order": None,
                                   "block_size": len(split["parts"][0])})
            return _LadderSplit("ladder", self.dp, "ladder findings",
                                parts=tuple(tuple(p) for p in split["parts"]), stage=stage,
                                c_entry="last", c_add_rounding=c_add or split["c_add_rounding"],
                                unpack=split["unpack"])
        return _LadderModel("ladder", self.dp, "ladder findings", self.params(**override))

    def consistent(self, cases: Cases, words: np.ndarray, candidates: dict, make=None) -> list:
        """The candidate names whose model reproduces ``words`` on ``cases``
        (each is first tried on a sample, then on every case). A candidate is
        a dict of parameter changes; ``make(changes)`` builds its model
        (default: this ladder's engine model with those changes)."""
        make = make or (lambda over: self.model(**over))
        words = np.asarray(words, np.uint32)
        cases = self.complete(cases)
        sample = None
        if len(cases) > 96:
            sample = np.random.default_rng(0).choice(len(cases), 64, replace=False)
            small, small_words = cases.take(sample), words[sample]
        ok = []
        for name, over in candidates.items():
            try:
                model = make(over)
                if sample is not None and not np.array_equal(model.evaluate(small), small_words):
                    continue
                got = model.evaluate(cases)
            except ValueError:
                continue
            if np.array_equal(got, words):
                ok.append(name)
        return ok

    def require(self, step: str) -> Finding:
        """The finding of ``step``, running it first if it has not run."""
        if step not in self.findings:
            run_step(self, step, prerequisite=True)
        return self.findings[step]

    # -- reading words -----------------------------------------------------------
    def is_nan(self, words) -> np.ndarray:
        return decode(self.d_fmt, np.asarray(words)).cls == Class.NAN

    def is_neg_zero(self, words) -> np.ndarray:
        d = decode(self.d_fmt, np.asarray(words))
        return (d.cls == Class.ZERO) & (d.sign == 1)


@dataclass
class _LadderModel(FixedPointModel):
    """The findings' engine model; it completes cases the way Context.run
    does (unit scales, legal sparse masks), so both see the same cases."""

    def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
        from tcprobe.probes.common import complete

        return super().evaluate(complete(self.datapath, cases), speed)


def _ladder_split():
    from tcprobe.models.structures import SplitModel

    @dataclass
    class LadderSplit(SplitModel):
        def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
            from tcprobe.probes.common import complete

            return super().evaluate(complete(self.datapath, cases), speed)

    return LadderSplit


_LadderSplit = _ladder_split()


# Steps that run logical cases through the harness: on a raw device they need
# the measured slice and layout first.
NEEDS_LAYOUT = ("truncation", "visible", "internal", "rounding", "specials", "block", "zero",
                "carry", "scale", "sparsity")


# Steps whose probes are unscaled float dot products with an engine model
# (sparse datapaths run them with legal masks: the arithmetic of the kept lanes).
ENGINE_STEPS = ("lanes", "truncation", "visible", "internal", "rounding", "specials", "block",
                "zero", "carry")


def _not_engine(dp: Datapath) -> str | None:
    """Why the engine-model steps do not apply to ``dp`` (None: they do)."""
    if dp.is_integer:
        return "an integer datapath is an exact sum (no window, rounding or floor to find)"
    if dp.block_scaled:
        return ("block-scaled arithmetic is not one engine window (a scale-anchored floor, "
                "product groups, C merges: models/tcgen05_scaled.py); the scale step measures it")
    return None


def run_step(ctx: Context, step: str, prerequisite: bool = False) -> Finding:
    """Run one step (its module in probes/) and record its finding."""
    if step not in STEPS:
        raise LadderError(f"unknown step {step!r}")
    why = _not_engine(ctx.dp) if step in ENGINE_STEPS else None
    if why and ctx.dp.is_integer and step in ("lanes", "carry"):
        why = None  # integer lanes and the wrap-or-saturate test run
    if why and ctx.dp.block_scaled and step == "lanes":
        why = None  # with unit scales every lane alone is still its exact product
    if why:
        finding = Finding(step, "skipped", why, prerequisite=prerequisite)
        ctx.findings[step] = finding
        ctx.order.append(step)
        return finding
    if step in NEEDS_LAYOUT and ctx.raw and "layout" not in ctx.findings:
        ctx.require("layout")
    mod = importlib.import_module(f"tcprobe.probes.{step}")
    ctx._stack.append(step)
    t0 = time.perf_counter()
    try:
        finding = mod.run(ctx)
    finally:
        ctx._stack.pop()
    finding.seconds = time.perf_counter() - t0
    finding.cases = ctx.spent.get(step, 0)
    finding.prerequisite = prerequisite
    ctx.findings[step] = finding
    if step in ctx.order:
        ctx.order.remove(step)
    ctx.order.append(step)
    return finding


# ---------------------------------------------------------------------------
# The fingerprint and its model.


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

    @classmethod
    def from_context(cls, ctx: Context) -> Fingerprint:
        if ctx.dp.block_scaled:
            return cls._scaled(ctx)
        fp = cls(ctx.dp.id)
        for key in ("window_bits", "block_size", "zero_floor", "input_conversion",
                    "output_rounding", "zero_sign", "nan", "output_frac_bits", "k_order",
                    "overflow", "carry_bits"):
            setattr(fp, key, ctx.value(key))
        fp.split = ctx.value("split")
        for step in ctx.order:
            f = ctx.findings[step]
            for key, why in f.values.get("undetermined", {}).items():
                if getattr(fp, key, None) is None:
                    fp.undetermined[key] = why
            for key, value in f.values.get("assumed", {}).items():
                if getattr(fp, key, None) is None:
                    fp.assumed[key] = value
        for key in FINGERPRINT_KEYS:
            if getattr(fp, key) is None and key not in fp.undetermined:
                fp.undetermined[key] = "its step did not run or found nothing"
        fp._common(ctx)
        return fp

    def _common(self, ctx: Context) -> None:
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
    def _scaled(cls, ctx: Context) -> Fingerprint:
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

    def params(self, dp: Datapath) -> EngineParams:
        """Engine parameters; undetermined keys take values that make no
        difference on this datapath (that is why they are undetermined)."""
        f16_out = get_format(dp.d_type).name == "f16"
        guess = self.assumed
        return EngineParams(
            window_bits=25 if self.window_bits is None else self.window_bits,
            block_size=dp.k if self.block_size is None else self.block_size,
            zero_floor=self.zero_floor,
            input_conversion=self.input_conversion or "truncate",
            output_rounding=self.output_rounding or guess.get("output_rounding")
            or ("rne" if f16_out else "rz"),
            output_frac_bits=self.output_frac_bits,
            zero_sign=self.zero_sign or "positive",
            nan=self.nan,
            k_order=None if self.k_order is None else tuple(self.k_order),
            overflow=self.overflow or "inf",
            carry_bits=self.carry_bits,
        )

    def model(self, dp: Datapath):
        """The engine model (the block-scaled one for block-scaled kinds; a
        SplitModel where the block step found sub-MMAs with C added after)."""
        if self.split:
            from tcprobe.models.structures import SplitModel

            return SplitModel("fingerprint", dp, "tcprobe ladder",
                              parts=tuple(tuple(p) for p in self.split["parts"]),
                              stage=self.params(dp), c_entry="last",
                              c_add_rounding=self.split["c_add_rounding"],
                              unpack=self.split["unpack"])
        if dp.block_scaled:
            from tcprobe.models.tcgen05_scaled import BlockScaledModel, ScaledParams

            if not self.scaled:
                raise LadderError(f"{dp.id}: the scale step found no block-scaled parameters")
            return BlockScaledModel("fingerprint", dp, "tcprobe ladder", ScaledParams(**self.scaled))
        return FixedPointModel("fingerprint", dp, "tcprobe ladder", self.params(dp))

    def as_dict(self) -> dict:
        out = {"datapath": self.datapath}
        for key in (*FINGERPRINT_KEYS, "output_frac_bits", "k_order", "overflow", "carry_bits"):
            out[key] = getattr(self, key)
        if self.scaled is not None:
            out.update({"scale_block": self.scale_block,
                        "product_window_bits": self.product_window_bits,
                        "scale_floor_offset": self.scale_floor_offset, "scaled": dict(self.scaled)})
        if self.sparsity is not None:
            out["sparsity"] = dict(self.sparsity)
        if self.split is not None:
            out["split"] = dict(self.split)
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


@dataclass
class Validation:
    cases: int
    mismatches: int
    examples: list = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"cases": self.cases, "mismatches": self.mismatches,
                "examples": self.examples, "seconds": round(self.seconds, 4)}


@dataclass
class LadderResult:
    device: dict
    datapath: str
    simulated: bool
    findings: list
    fingerprint: Fingerprint | None
    validation: Validation | None
    seconds: float = 0.0
    context: Context | None = field(default=None, repr=False)  # to run more cases the same way

    def finding(self, step: str) -> Finding | None:
        return next((f for f in self.findings if f.step == step), None)

    def as_dict(self) -> dict:
        return {
            "tool": "tcprobe ladder",
            "simulated": self.simulated,
            "device": self.device,
            "datapath": self.datapath,
            "steps": [f.as_dict() for f in self.findings],
            "cases_per_step": {f.step: f.cases for f in self.findings},
            "fingerprint": None if self.fingerprint is None else self.fingerprint.as_dict(),
            "validation": None if self.validation is None else self.validation.as_dict(),
            "seconds": round(self.seconds, 3),
        }


def random_cases(dp: Datapath, n: int, rng: np.random.Generator) -> Cases:
    """A validation mix, built from random bit fields: a quarter raw random
    words (NaN, Inf, subnormals), a quarter finite values near 1, a quarter
    near cancellation (every odd lane the negated even one, C small), a
    quarter with small exponents (subnormal sums, floors)."""
    k = dp.k
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)

    def raw_words(f, shape):
        return rng.integers(0, f.word_mask + 1, shape, dtype=np.uint64).astype(np.uint32) & \
            np.uint32(f.word_mask & ~((1 << f.drop_bits) - 1))

    def finite(f, shape, lo, hi):
        bias = f.bias
        top = (1 << f.exp_bits) - 1 - (1 if f.specials == 0 else 0)
        e = np.clip(rng.integers(lo, hi + 1, shape) + bias, 0, top)
        frac = rng.integers(0, 1 << f.frac_bits, shape)
        if f.specials == 1:  # e4m3: all-ones exponent and fraction is NaN
            frac = np.where((e == (1 << f.exp_bits) - 1) & (frac == (1 << f.frac_bits) - 1),
                            frac - 1, frac)
        sign = rng.integers(0, 2, shape) if f.signed else np.zeros(shape, np.int64)
        w = (sign << (f.width - 1)) | (e << f.frac_bits + f.drop_bits) | (frac << f.drop_bits)
        return w.astype(np.uint32)

    q = n // 4
    parts = []
    parts.append(Cases(raw_words(fa, (q, k)), raw_words(fb, (q, k)), raw_words(fc, (q,))))
    parts.append(Cases(finite(fa, (q, k), -4, 4), finite(fb, (q, k), -4, 4),
                       finite(fc, (q,), -2, 10)))
    a = finite(fa, (q, k), -3, 3)
    b = finite(fb, (q, k), -3, 3)
    if k > 1:
        a[:, 1::2] = a[:, 0:k - k % 2:2]
        sign_b = np.uint32(1 << (fb.width - 1))
        b[:, 1::2] = b[:, 0:k - k % 2:2] ^ sign_b
        # nudge one lane so the cancellation is not always exact
        b[:, 1] ^= rng.integers(0, 4, q).astype(np.uint32) << np.uint32(fb.drop_bits)
    parts.append(Cases(a, b, finite(fc, (q,), -30, 0)))
    r = n - 3 * q
    parts.append(Cases(finite(fa, (r, k), 1 - fa.bias - 1, 1 - fa.bias + 6),
                       finite(fb, (r, k), 1 - fb.bias - 1, 1 - fb.bias + 6),
                       np.where(rng.integers(0, 2, r) == 0, 0,
                                finite(fc, (r,), 1 - fc.bias - 1, 1 - fc.bias + 6)).astype(np.uint32)))
    out = Cases.concat(parts)
    if dp.block_scaled:
        out.scale_a, out.scale_b = random_scales(dp, n, rng), random_scales(dp, n, rng)
    if dp.sparse:
        from tcprobe.harness import sparse_decode
        from tcprobe.models.sparsity import random_metadata

        out.active = sparse_decode(dp, random_metadata(dp, n, rng))[0]
    return out


def random_scales(dp: Datapath, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, n_scales) scale codes: a quarter of the cases unit scales, half
    near 1 (exponents within +-12), the rest anywhere in the format (NaN
    codes, and ue4m3 zeros, now and then)."""
    from tcprobe.probes.common import pow2

    f = get_format(dp.scale_type)
    unit = pow2(f, 0)
    top = int(f.canonical_nan)  # the NaN code ends the finite range (0xff, 0x7f)
    shape = (n, dp.n_scales)
    style = rng.integers(0, 4, n)[:, None]
    near = np.clip(unit + rng.integers(-12, 13, shape) * (1 << f.frac_bits)
                   + rng.integers(0, 1 << f.frac_bits, shape), 0, top - 1)
    wide = rng.integers(0, top, shape)
    codes = np.where(style == 0, unit, np.where(style == 3, wide, near))
    codes = np.where(rng.random(shape) < 0.003, top, codes)  # the NaN code (ue8m0 0xff, ue4m3 0x7f)
    return codes.astype(np.uint32)


def validate(ctx: Context, model, n: int = VALIDATION_CASES) -> Validation:
    """Run ``n`` random cases on the device and the model; count mismatches."""
    from tcprobe.models.formats import describe

    t0 = time.perf_counter()
    rng = np.random.default_rng(ctx.seed + 1)
    cases = random_cases(ctx.dp, n, rng)
    ctx._stack.append("validation")
    try:
        got = ctx.run(cases)
    finally:
        ctx._stack.pop()
    want = model.evaluate(cases)
    bad = np.flatnonzero(got != want)
    examples = []
    for i in bad[:5]:
        examples.append({
            "a": [f"{int(w):#x}" for w in cases.a[i]], "b": [f"{int(w):#x}" for w in cases.b[i]],
            "c": f"{int(cases.c[i]):#x}", "device": describe(ctx.d_fmt, int(got[i])),
            "model": describe(ctx.d_fmt, int(want[i]))})
        if cases.scale_a is not None:
            examples[-1]["scale_a"] = [f"{int(w):#x}" for w in cases.scale_a[i]]
            examples[-1]["scale_b"] = [f"{int(w):#x}" for w in cases.scale_b[i]]
        if cases.active is not None:
            examples[-1]["active"] = np.flatnonzero(cases.active[i]).tolist()
    return Validation(len(cases), int(len(bad)), examples, time.perf_counter() - t0)


def run_ladder(device: Device, dp: Datapath, steps=None, *, validate_cases: int = VALIDATION_CASES,
               seed: int = 0, on_finding=None) -> LadderResult:
    """Run the ladder (all steps, or ``steps``) on ``device`` for ``dp``."""
    if not device.supports(dp):
        reason = ""
        try:
            device.tile(dp)
        except Exception as e:  # the device's own words say why
            reason = f": {e}"
        raise LadderError(f"{device.name} does not run {dp.id}{reason}")
    t0 = time.perf_counter()
    ctx = Context(device, dp, seed)
    wanted = tuple(steps) if steps else STEPS
    for step in wanted:
        if step in ctx.findings:  # already run as a prerequisite
            continue
        f = run_step(ctx, step)
        if on_finding:
            on_finding(f)
    findings = [ctx.findings[s] for s in ctx.order]
    fp = None
    val = None
    numeric = set(wanted) & {"truncation", "visible", "internal", "rounding", "specials",
                             "block", "zero", "carry"}
    scaled = dp.block_scaled and "scale" in ctx.findings and ctx.findings["scale"].ok and \
        ctx.findings["scale"].values.get("params")
    if (numeric and _not_engine(dp) is None) or scaled:
        fp = Fingerprint.from_context(ctx)
        if validate_cases:
            val = validate(ctx, fp.model(dp), validate_cases)
    elif dp.is_integer and "carry" in ctx.findings and validate_cases:
        from tcprobe.models.model import IntegerModel

        sat = bool(ctx.value("saturate", False))
        val = validate(ctx, IntegerModel("ladder", dp, "ladder: exact integer sum",
                                         saturate=sat), validate_cases)
    info = device.info()
    return LadderResult(info, dp.id, bool(getattr(device, "simulated", True)), findings, fp, val,
                        time.perf_counter() - t0, ctx)
