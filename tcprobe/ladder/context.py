"""What the ladder's steps share: the device, the datapath, the harness in
use, the findings so far and the cases each step spends (:class:`Context`).

Every case a probe builds is completed the same way for the device and for
the models (:meth:`Context.complete`): unit scales on block-scaled kinds,
and on sparse kinds a legal mask that keeps the lanes the probe uses. A
probe never computes an expected word: it compares device words with each
other, or asks a Model (:meth:`Context.model`) which parameter values agree
with the device.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcprobe.devices.base import Device, RawModeUnsupported
from tcprobe.models import sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams
from tcprobe.models.formats import Class, convert, decode, get_format
from tcprobe.models.words import pow2
from tcprobe.probes.common import Finding, co_active, complete, legal_mask, together
from tcprobe.tiles.harness import Harness, HarnessError
from tcprobe.tiles.spec import PhysicalBatch
from tcprobe.tiles.tables import harness_for
from tcprobe.tiles.tmem import META_COLS

from .fingerprint import ENGINE_KEYS, build_model, engine_params


class Context:
    """What the steps share: the device, the datapath, the harness in use,
    the findings so far and the cases each step spends."""

    def __init__(self, device: Device, dp: Datapath, seed: int = 0, run_step=None):
        self.device = device
        self._run_step = run_step  # the ladder's runner: require() runs a step through it
        self.dp = dp
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.findings: dict[str, Finding] = {}
        self.order: list[str] = []
        self.spent: dict[str, int] = {}
        self._stack: list[str] = []
        # key -> the values of a range left open that the validation cases fit
        # (with every reading of the other open keys): ladder.validation.check_ranges
        self.ranges: dict[str, list] = {}
        self.a_fmt = get_format(dp.a_type)
        self.b_fmt = get_format(dp.b_type)
        self.c_fmt = get_format(dp.c)
        self.d_fmt = get_format(dp.d_type)
        # the type the steps see C in: C's own, or the narrower type the cinput
        # step found C converted to, where C holds its every value (view_c)
        self.model_dp = dp
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
        return complete(self.dp, cases)

    def together(self, n: int, among=None) -> list[int] | None:
        """n lanes that can be active in one case (sparse datapaths keep only
        legal selections), taken from ``among`` in its order."""
        return together(self.dp, n, among)

    def co_active(self, lanes) -> bool:
        return co_active(self.dp, lanes)

    def view_c(self, fmt: str) -> None:
        """From now on the steps see C as ``fmt`` (a type C is converted to on
        entry and that holds only values of C's type): the C words they build
        are ``fmt``'s, widened exactly to C's type for the device, and the
        models they ask take C as ``fmt`` (the conversion then changes nothing)."""
        self.c_fmt = get_format(fmt)
        self.model_dp = replace(self.dp, c_type=self.c_fmt.name)

    def end_view(self) -> None:
        """The steps are done: C's words are C's own type again (validation)."""
        self.c_fmt = get_format(self.dp.c)
        self.model_dp = self.dp

    def _device_cases(self, cases: Cases) -> Cases:
        """``cases`` as the device takes them: C widened from the view (view_c)."""
        cases = self.complete(cases)
        if self.model_dp is self.dp:
            return cases
        c = convert(np.asarray(cases.c), self.c_fmt, self.dp.c).astype(cases.c.dtype)
        return Cases(cases.a, cases.b, c, cases.scale_a, cases.scale_b, cases.active,
                     cases.names)

    def run(self, cases: Cases) -> np.ndarray:
        """Result words of logical cases: through the harness in use (raw
        devices) or the device's result mode."""
        cases = self._device_cases(cases)
        self._count(len(cases))
        if self.raw and self.harness is not None:
            return self.harness.run(lambda batch: self.device.launch(self.dp, batch), cases)
        return np.asarray(self.device.run(self.dp, cases)).astype(self.d_fmt.dtype, copy=False)

    def run_checked(self, cases: Cases) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`run`, without insisting that the slice agrees: (the
        first slice word of each case, whether all slice words agreed)."""
        if not (self.raw and self.harness is not None):
            return self.run(cases), np.ones(len(cases), bool)
        cases = self._device_cases(cases)
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
        words, _ = sparsity.encode(self.dp, legal_mask(self.dp, wanted))
        return self.meta_words(np.repeat(words, n, axis=0))

    def meta_words(self, words) -> np.ndarray:
        """(T, meta_slots) from metadata words (T, words): every lane the same."""
        words = np.atleast_2d(np.asarray(words, np.uint32))
        t = self.tile()
        out = np.zeros((len(words), t.meta_slots), np.uint32)
        # tcgen05: a tensor-memory lane's columns; mma/wgmma (sim harness): a row's words
        stride = META_COLS if self.dp.family == "tcgen05" else words.shape[1]
        for j in range(words.shape[1]):
            out[:, j::stride] = words[:, j:j + 1]
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
            if key in f.values.get("reopened", ()):  # open again: earlier values stand no more
                return default
        return default

    def params(self, **override) -> EngineParams:
        """Engine parameters from the findings so far (defaults elsewhere)."""
        guess = {}
        for step in self.order:  # model values steps chose among indistinguishable ones
            guess.update(self.findings[step].values.get("assumed", {}))
        return engine_params(self.dp, {key: self.value(key) for key in ENGINE_KEYS}, guess,
                             **override)

    def model(self, **override):
        """The engine model of the findings (with ``override``); where the
        block step found sub-MMAs with C added after, their SplitModel."""
        split = self.value("split")
        c_add = override.pop("c_add_rounding", None) if split else None  # else the engine's
        if split:
            override = {**override, "k_order": None, "block_size": len(split["parts"][0])}
        if self.model_dp is not self.dp:  # C is already in the type it is converted to
            override = {**override, "c_convert": None}
        return build_model(self.model_dp, self.params(**override), split=split,
                           c_add_rounding=c_add, completing=True)

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
        # before the zero step measures it, the sign of a zero result is no
        # evidence against a candidate that does not set it
        sign_open = self.value("zero_sign") is None
        folded = self._zeros_unsigned(words) if sign_open else words
        ok = []
        for name, over in candidates.items():
            fold = self._zeros_unsigned if sign_open and "zero_sign" not in over else None
            want = folded if fold else words
            try:
                model = make(over)
                if sample is not None:
                    got = model.evaluate(cases.take(sample))
                    if not np.array_equal(fold(got) if fold else got, want[sample]):
                        continue
                got = model.evaluate(cases)
            except ValueError:
                continue
            if np.array_equal(fold(got) if fold else got, want):
                ok.append(name)
        return ok

    def _zeros_unsigned(self, words) -> np.ndarray:
        """The words with -0 read as +0 (every other word as it is)."""
        words = np.asarray(words, np.uint32)
        sign = np.uint32(1 << (self.d_fmt.width - 1))
        return np.where(words == sign, np.uint32(0), words)

    def require(self, step: str) -> Finding:
        """The finding of ``step``, running it first if it has not run."""
        if step not in self.findings:
            self._run_step(self, step, prerequisite=True)
        return self.findings[step]

    # -- reading words -----------------------------------------------------------
    def is_nan(self, words) -> np.ndarray:
        return decode(self.d_fmt, np.asarray(words)).cls == Class.NAN

    def is_neg_zero(self, words) -> np.ndarray:
        d = decode(self.d_fmt, np.asarray(words))
        return (d.cls == Class.ZERO) & (d.sign == 1)
