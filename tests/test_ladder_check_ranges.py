"""The validation step's range check (tcprobe.ladder.validation.check_ranges):
a key only one value of its range fits is settled only where that does not
hang on another open key's assumed value, and the quick matcher it runs its
thousands of models through gives the verdict a comparison on every case
gives. The device here is the engine itself at known parameters; every
precondition (which windows fit under which alignment) is checked in the test
by evaluating the models directly."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tcprobe.ladder.fingerprint import Fingerprint, build_model, engine_params
from tcprobe.ladder.validation import _Matcher, check_ranges
from tcprobe.models.datapath import default_datapath
from tcprobe.models.formats import get_format
from tcprobe.suites.mix import random_cases

WINDOWS = list(range(12, 30))
DP = default_datapath("mma", "f16", "f16")


def _model(**keys):
    return build_model(DP, engine_params(DP, {"block_size": 4, "output_rounding": "rz", **keys}))


def _device():
    """Twelve cases of f16 -> f16 in blocks of 4 and their words from a design
    with a 20-bit window over normalized products."""
    cases = random_cases(DP, 12, np.random.default_rng(12))
    return cases, _model(window_bits=20, align="normalized").evaluate(cases)


def _windows_fitting(cases, words, align):
    return [w for w in WINDOWS
            if np.array_equal(_model(window_bits=w, align=align).evaluate(cases), words)]


def _ladder(cases, words, **fp_keys):
    """A fingerprint whose window a step left open over WINDOWS, and the
    context check_ranges reads."""
    fp = Fingerprint(DP.id, block_size=4, output_rounding="rz", **fp_keys)
    fp.undetermined["window_bits"] = "the design step could not tell the windows apart"
    step = SimpleNamespace(values={"candidates": {"window_bits": WINDOWS}})
    ctx = SimpleNamespace(dp=DP, d_fmt=get_format(DP.d_type), order=["design"],
                          findings={"design": step}, ranges={}, validation_words=(cases, words))
    return ctx, fp


def test_a_window_that_fits_only_under_an_assumed_alignment_stays_open():
    cases, words = _device()
    # the preconditions, from the models alone: raw products fit only a 19-bit
    # window on these cases, normalized ones only the true 20
    assert _windows_fitting(cases, words, "raw") == [19]
    assert _windows_fitting(cases, words, "normalized") == [20]
    ctx, fp = _ladder(cases, words)
    fp.undetermined["align"] = "the alignment step did not run"
    fp.assumed["align"] = "raw"
    check_ranges(ctx, fp, cases, words)
    assert fp.window_bits is None and "window_bits" in fp.undetermined
    why = fp.undetermined["window_bits"]
    assert "align" in why and "normalized" in why and "20" in why, why
    assert fp.assumed["window_bits"] == 19  # the model still gives every word
    assert np.array_equal(fp.model(DP).evaluate(cases), words)


def test_the_window_is_settled_where_the_alignment_is_found():
    cases, words = _device()
    ctx, fp = _ladder(cases, words, align="normalized")
    check_ranges(ctx, fp, cases, words)
    assert fp.window_bits == 20 and "window_bits" not in fp.undetermined
    assert ctx.ranges["window_bits"] == [20]


@pytest.mark.parametrize("fmt,d", [("bf16", "f32"), ("f16", "f16"), ("e4m3", "f32")])
def test_the_matcher_gives_the_verdict_of_every_case(fmt, d):
    dp = default_datapath("mma", fmt, d)
    cases = random_cases(dp, 3000, np.random.default_rng(7))
    keys = {"block_size": 4, "output_rounding": "rz"}
    words = build_model(dp, engine_params(dp, {**keys, "window_bits": 22})).evaluate(cases)
    matches = _Matcher(cases, words)
    verdicts = []
    for w in [*range(14, 30), 22, 23, 21]:
        for rounding in ("rz", "rne"):
            model = build_model(dp, engine_params(dp, {**keys, "window_bits": w,
                                                       "output_rounding": rounding}))
            full = bool(np.array_equal(model.evaluate(cases), words))
            assert matches(model) == full, (w, rounding)
            verdicts.append(full)
    assert any(verdicts) and not all(verdicts)
    assert len(matches.probe) <= _Matcher.MOST
