"""The probe ladder: named steps that make a device confess its datapath.

Each step is a module in ``probes/`` with ``run(ctx) -> Finding`` and its own
metadata, ``STEP`` (a :class:`~tcprobe.probes.common.StepInfo`: its order,
title and what it needs); the ladder finds the steps by it. Steps run
in ladder order; a step that needs an earlier finding asks for it with
:meth:`Context.require`, which runs that step first (marked a
prerequisite). The findings reduce to a :class:`Fingerprint` (the sim-profile
keys: window_bits, block_size, zero_floor, input_conversion,
output_rounding, zero_sign, nan, plus the output precision, K order, slice
and layout; block-scaled kinds: the scale step's keys; sparse kinds: the
sparsity step's; a split datapath: its sub-MMAs); the fingerprint builds a
Model (the engine's, the block-scaled one, or a SplitModel), which is
checked on 10,000 validation cases against the same device (:mod:`.validation`).

This module is the runner: the steps in order, their prerequisites, the
fingerprint and the validation. What the steps share is the
:class:`~tcprobe.ladder.context.Context`; the fingerprint and its model are
:mod:`.fingerprint`; the random validation mix is
:mod:`tcprobe.suites.mix`.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field

import numpy as np

from tcprobe import probes as probes_pkg
from tcprobe.devices.base import Device
from tcprobe.models.datapath import Datapath
from tcprobe.models.f64 import is_f64
from tcprobe.models.formats import describe
from tcprobe.models.model import IntegerModel
from tcprobe.optiontext import comma_names
from tcprobe.probes.common import Finding, StepInfo

from .context import Context
from .fingerprint import Fingerprint
from .validation import (
    check_ranges,
    confirm_unsure,
    refit_ranges,
    validation_cases,
    validation_seed,
)


def _declared_steps() -> dict:
    """Every module of ``probes/`` that declares ``STEP`` (a
    :class:`~tcprobe.probes.common.StepInfo`), in its declared order: a new
    step is one module, and nothing here lists steps."""
    found = {}
    for m in pkgutil.iter_modules(probes_pkg.__path__):
        info = getattr(importlib.import_module(f"{probes_pkg.__name__}.{m.name}"), "STEP", None)
        if isinstance(info, StepInfo):
            found[m.name] = info
    return dict(sorted(found.items(), key=lambda kv: kv[1].order))


STEP_INFO = _declared_steps()
STEPS = tuple(STEP_INFO)
TITLES = {name: info.title for name, info in STEP_INFO.items()}
VALIDATION_CASES = 10_000


class LadderError(ValueError):
    """A step name that does not exist, or a datapath the device cannot run."""


def parse_steps(text: str | None) -> tuple[str, ...]:
    if text is None:
        return STEPS
    steps = comma_names(text.lower())
    if not steps:  # '' or ' , ' names nothing: an error, never every step
        raise LadderError(f"--steps names no step (leave it out for all: {', '.join(STEPS)})")
    bad = [s for s in steps if s not in STEPS]
    if bad:
        raise LadderError(f"unknown step(s) {', '.join(bad)} (steps: {', '.join(STEPS)})")
    return tuple(s for s in STEPS if s in steps)


def _traits(dp: Datapath) -> set:
    """The datapath traits a step's ``also_on``/``skip_on`` name."""
    return {t for t, on in (("mfma", dp.family == "mfma"), ("integer", dp.is_integer),
                            ("f64", is_f64(dp)), ("block_scaled", dp.block_scaled)) if on}


def _not_engine(dp: Datapath) -> str | None:
    """Why the engine-model steps do not apply to ``dp`` (None: they do)."""
    if dp.family == "mfma":
        return ("an AMD v_mfma datapath is not one fixed-point window with C inside (an FMA "
                "chain, exact or truncated blocks, a pair tree: models/amd.py); the mfma step "
                "measures its design")
    if dp.is_integer:
        return "an integer datapath is an exact sum (no window, rounding or floor to find)"
    if is_f64(dp):
        return ("an f64 datapath is fp64 FMAs on 64-bit words, not one fixed-point window "
                "(models/f64.py); the chain step measures it")
    if dp.block_scaled:
        return ("block-scaled arithmetic is not one engine window (a scale-anchored floor, "
                "product groups, C merges: models/tcgen05_scaled.py); the scale step measures it")
    return None


def run_step(ctx: Context, step: str, prerequisite: bool = False) -> Finding:
    """Run one step (its module in probes/) and record its finding."""
    if step not in STEPS:
        raise LadderError(f"unknown step {step!r}")
    info = STEP_INFO[step]
    # An engine step (unscaled float dot products with an engine model; sparse
    # datapaths run them with legal masks) is skipped where the engine does not
    # apply, unless the step runs on one of the datapath's traits anyway (every
    # lane alone is its exact product on any design, with unit scales too;
    # integer lanes and the wrap-or-saturate test run); a step may also be
    # skipped as an engine step on some traits (the f64 chain on AMD).
    traits = _traits(ctx.dp)
    why = None
    if (info.engine and not traits & set(info.also_on)) or traits & set(info.skip_on):
        why = _not_engine(ctx.dp)
    if ctx.dp.bitop == "xor" and info.xor_unprobed:  # it assumes a lane adds a * b
        why = ("the slice, lane and layout probes light lanes with products (a AND b); "
               "under .xor a lane with a = b = 1 adds 0, so they measure the .and form of the "
               "same fragments (PTX ISA) and this run keeps the documented harness")
    if why:
        finding = Finding(step, "skipped", why, prerequisite=prerequisite)
        ctx.findings[step] = finding
        ctx.order.append(step)
        return finding
    # Logical cases through the harness: on a raw device, the measured layout first.
    if info.needs_layout and ctx.raw and "layout" not in ctx.findings:
        ctx.require("layout")
    mod = importlib.import_module(f"{probes_pkg.__name__}.{step}")
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


@dataclass
class Validation:
    cases: int
    mismatches: int
    examples: list = field(default_factory=list)
    seconds: float = 0.0
    seed: int | None = None  # the validation cases' seed (never the probes')
    parts: dict = field(default_factory=dict)  # part name -> [cases, mismatches]

    def as_dict(self) -> dict:
        return {"cases": self.cases, "mismatches": self.mismatches,
                "examples": self.examples, "seconds": round(self.seconds, 4),
                "seed": self.seed, "parts": self.parts}


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
    skipped_steps: tuple = ()  # ladder steps not asked for (a partial ladder)

    @property
    def validated(self) -> bool:
        """The fingerprint is validated: the whole ladder ran, no step failed
        and its model matched the device on every validation case."""
        return (self.validation is not None and self.validation.mismatches == 0
                and not self.skipped_steps
                and not any(f.status == "failed" for f in self.findings))

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
            "validated": self.validated,
            "skipped_steps": list(self.skipped_steps),
            "seconds": round(self.seconds, 3),
        }


def validate(ctx: Context, model, n: int = VALIDATION_CASES) -> Validation:
    """Run about ``n`` validation cases (:mod:`.validation`: the random mix,
    dropped input bits live, the raw, finite, edge and adversarial suites, C
    alone and beside cancelling products, from a seed the probes do not
    use) on the device and the model; count mismatches, per part too."""
    t0 = time.perf_counter()
    cases, which, names = validation_cases(ctx.dp, n, ctx.seed)
    ctx._stack.append("validation")
    try:
        got = ctx.run(cases)
    finally:
        ctx._stack.pop()
    want = model.evaluate(cases)
    ctx.validation_words = (cases, got)  # for check_ranges
    miss = got != want
    bad = np.flatnonzero(miss)
    parts = {name: [int((which == i).sum()), int(miss[which == i].sum())]
             for i, name in enumerate(names)}
    examples = []
    for i in bad[:5]:
        examples.append({
            "a": [f"{int(w):#x}" for w in cases.a[i]], "b": [f"{int(w):#x}" for w in cases.b[i]],
            "c": f"{int(cases.c[i]):#x}", "device": describe(ctx.d_fmt, int(got[i])),
            "model": describe(ctx.d_fmt, int(want[i])), "part": names[which[i]]})
        if cases.scale_a is not None:
            examples[-1]["scale_a"] = [f"{int(w):#x}" for w in cases.scale_a[i]]
            examples[-1]["scale_b"] = [f"{int(w):#x}" for w in cases.scale_b[i]]
        if cases.active is not None:
            examples[-1]["active"] = np.flatnonzero(cases.active[i]).tolist()
    return Validation(len(cases), int(len(bad)), examples, time.perf_counter() - t0,
                      validation_seed(ctx.seed), parts)


def run_ladder(device: Device, dp: Datapath, steps=None, *, validate_cases: int = VALIDATION_CASES,
               seed: int = 0, on_finding=None, around_step=None) -> LadderResult:
    """Run the ladder (all steps, or ``steps``) on ``device`` for ``dp``:
    ``on_finding(finding)`` after each step, ``around_step(step)`` a context
    manager the step runs in (the CLI's heartbeat); the validation of the
    fingerprint's model runs in ``around_step("validation")``."""
    import contextlib

    around_step = around_step or (lambda _step: contextlib.nullcontext())
    if not device.supports(dp):
        reason = ""
        try:
            device.tile(dp)
        except Exception as e:  # the device's own words say why
            reason = f": {e}"
        raise LadderError(f"{device.name} does not run {dp.id}{reason}")
    t0 = time.perf_counter()
    ctx = Context(device, dp, seed, run_step)
    wanted = tuple(steps) if steps else STEPS
    for step in wanted:
        if step in ctx.findings:  # already run as a prerequisite
            continue
        with around_step(step):
            f = run_step(ctx, step)
        if on_finding:
            on_finding(f)
    ctx.end_view()  # the validation's C words are C's own
    findings = [ctx.findings[s] for s in ctx.order]
    fp = None
    val = None
    numeric = [s for s in wanted if STEP_INFO[s].fingerprint]
    scaled = dp.block_scaled and "scale" in ctx.findings and ctx.findings["scale"].ok and \
        ctx.findings["scale"].values.get("params")
    chained = is_f64(dp) and "chain" in ctx.findings and ctx.findings["chain"].status == "found"
    amd = "mfma" in ctx.findings and bool(ctx.findings["mfma"].values.get("params"))
    if (numeric and _not_engine(dp) is None) or scaled or chained or amd:
        fp = Fingerprint.from_context(ctx)
        if validate_cases:
            with around_step("validation"):
                val = validate(ctx, fp.model(dp), validate_cases)
                engine = not scaled and not chained and not amd
                if val.mismatches and engine and refit_ranges(ctx, fp, *ctx.validation_words):
                    val = validate(ctx, fp.model(dp), validate_cases)  # a value of an open range
                if val.mismatches == 0 and engine:
                    confirm_unsure(ctx, fp)
                    check_ranges(ctx, fp, *ctx.validation_words)
    elif dp.is_integer and "carry" in ctx.findings and validate_cases:
        sat = bool(ctx.value("saturate", False))
        val = validate(ctx, IntegerModel("ladder", dp, "ladder: exact integer sum",
                                         saturate=sat), validate_cases)
    info = device.info()
    skipped = tuple(s for s in STEPS if s not in ctx.findings)
    return LadderResult(info, dp.id, bool(getattr(device, "simulated", True)), findings, fp, val,
                        time.perf_counter() - t0, ctx, skipped)
