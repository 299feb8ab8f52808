"""The ladder on MMA-Sim 2.1.1's AMD instructions (a simulator nobody here
wrote): the mfma step recovers the designs its paper documents on CDNA3, and
where MMA-Sim's NaN words are no fixed function of the inputs (CDNA1 f16:
torch's CPU sum decides which NaN wins, and the same case alone and in a
batch differ) the fingerprint is not called validated. CDNA2's NaN words
follow one rule (of two NaNs the second operand's, quieted: models/amd.py)
and validate."""

import pytest

from tcprobe.devices.registry import open_device
from tcprobe.ladder import run_ladder

pytestmark = [pytest.mark.peer, pytest.mark.usefixtures("mmasim_peer")]

TRUNC = {"design": "truncated", "window": 24, "window2": 31}


@pytest.mark.parametrize("instr,want", [
    ("CDNA3:v_mfma_f32_16x16x16_f16", {**TRUNC, "block": 8}),
    ("CDNA3:v_mfma_f32_16x16x8_xf32", {**TRUNC, "block": 4}),
    ("CDNA3:v_mfma_f32_16x16x32_fp8_bf8", {**TRUNC, "design": "grouped", "block": 16}),
    ("CDNA3:v_mfma_f32_16x16x4_f32", {"design": "fma"}),
    ("CDNA2:v_mfma_f64_16x16x4f64", {"design": "fma"}),
])
def test_cdna_designs_recovered_and_validated(instr, want):
    dev = open_device(f"mmasim:{instr}")
    r = run_ladder(dev, dev.fixed_datapath(), validate_cases=2000)
    assert r.finding("mfma").status == "found", r.finding("mfma").summary
    assert r.fingerprint.mfma == want
    assert r.validation.mismatches == 0 and r.validated


def test_cdna2_nan_words_match_and_validate():
    dev = open_device("mmasim:CDNA2:v_mfma_f32_16x16x16f16")
    r = run_ladder(dev, dev.fixed_datapath(), validate_cases=2000)
    assert r.finding("mfma").status == "found", r.finding("mfma").summary
    assert r.fingerprint.mfma == {"design": "ftz", "block": 4}
    assert r.validation.mismatches == 0 and r.validated


def test_cdna1_nan_words_keep_the_fingerprint_unvalidated():
    dev = open_device("mmasim:CDNA1:v_mfma_f32_16x16x16f16")
    r = run_ladder(dev, dev.fixed_datapath(), validate_cases=2000)
    step = r.finding("mfma")
    assert step.status == "partial" and step.values["nan_words_differ"] > 0
    assert r.fingerprint.mfma == {"design": "exact", "block": 4}
    cases, got = r.context.validation_words
    want = r.fingerprint.model(r.context.dp).evaluate(cases)
    off = got != want
    assert off.any() and (r.context.is_nan(got) & r.context.is_nan(want))[off].all()
    assert not r.validated
