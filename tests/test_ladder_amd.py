"""The ladder on the AMD sim devices (sim:mi100, sim:mi250x, sim:mi300x).

The mfma step must recover the design MMA-Sim 2.1.1 documents for each
generation and type (written out here from docs/amd.md's table, not read
from the profiles under test), and the ladder must never call a wrong model
validated: a device no AMD design describes fails the step, one that
differs from its design only where the step did not look fails validation.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import invoke as cli
from cli_helpers import one_error

from tcprobe.devices.base import Device, RawModeUnsupported
from tcprobe.devices.sim import SimDevice
from tcprobe.ladder import run_ladder, validate
from tcprobe.models.amd import MfmaModel, MfmaParams
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.model import ModelError

# MMA-Sim 2.1.1 (mmasim/amd/sim.py), as docs/amd.md tabulates it.
TRUNC8 = {"design": "truncated", "block": 8, "window": 24, "window2": 31}
EXPECTED = [
    ("mi300x", "mfma.f16.f32.k16", TRUNC8, 10_000),
    ("mi300x", "mfma.bf16.f32.k16", TRUNC8, 2_000),
    ("mi300x", "mfma.xf32.tf32.f32.k8", {**TRUNC8, "block": 4}, 2_000),
    ("mi300x", "mfma.fp8.e4m3fnuz.f32.k32",
     {"design": "grouped", "block": 16, "window": 24, "window2": 31}, 2_000),
    ("mi300x", "mfma.f32.f32.k4", {"design": "fma"}, 2_000),
    ("mi300x", "mfma.f64.f64.k4", {"design": "fma"}, 1_000),
    ("mi300x", "mfma.f32.f32.k1", {"design": "fma"}, 1_000),  # v_mfma_f32_32x32x1_2b_f32
    ("mi300x", "mfma.f16.f32.k4", {**TRUNC8, "block": 4}, 1_000),  # L = 8 > K: one block
    ("mi250x", "mfma.f16.f32.k16", {"design": "ftz", "block": 4}, 1_000),
    ("mi250x", "mfma.bf16.f32.k8", {"design": "ftz", "block": 2}, 1_000),
    ("mi100", "mfma.f16.f32.k16", {"design": "exact", "block": 4}, 2_000),
    ("mi100", "mfma.bf16.f32.k8", {"design": "exact", "block": 2}, 2_000),
]


@pytest.mark.fast_first(2)
@pytest.mark.parametrize("name,dp_id,want,n", EXPECTED, ids=[f"{e[0]}-{e[1]}" for e in EXPECTED])
def test_the_mfma_step_recovers_the_design(name, dp_id, want, n):
    dev = SimDevice.builtin(name)
    result = run_ladder(dev, Datapath.parse(dp_id), validate_cases=n)
    step = result.finding("mfma")
    assert step.status == "found", step.summary
    assert result.fingerprint.mfma == want
    assert (result.validation.cases, result.validation.mismatches) == (n, 0)
    assert result.validated
    if dp_id == "mfma.f16.f32.k4":
        assert "any larger block" in result.fingerprint.undetermined["mfma.block"]
    engine = [f.step for f in result.findings if f.step in ("internal", "block", "rounding")]
    assert all(result.finding(s).status == "skipped" for s in engine)


def test_sim_devices_pick_the_blas_instruction_and_refuse_others():
    dev = SimDevice.builtin("mi300x")
    assert dev.preferred_family("f16") == "mfma"
    assert dev.datapath("mfma", "f16").id == "mfma.f16.f32.k16"  # v_mfma_f32_16x16x16_f16
    assert dev.datapath("mfma", "e4m3fnuz").id == "mfma.fp8.e4m3fnuz.f32.k32"
    assert dev.datapath("mfma", "f32").id == "mfma.f32.f32.k4"  # v_mfma_f32_16x16x4_f32
    assert SimDevice.builtin("mi250x").datapath("mfma", "bf16").id == "mfma.bf16_1k.bf16.f32.k16"
    with pytest.raises(RawModeUnsupported, match="64 lanes"):
        dev.tile(dev.datapath("mfma", "f16"))
    assert not dev.supports(Datapath.parse("mfma.f16.f32.k7"))
    assert not SimDevice.builtin("mi100").supports(Datapath.parse("mfma.xf32.tf32.f32.k8"))
    with pytest.raises(ModelError, match="e4m3"):
        dev.datapath("mfma", "e4m3")  # MI300X's fp8 is fnuz


class _Twisted(Device):
    """sim:mi300x with a twist no AMD design of the model has."""

    simulated = True

    def __init__(self, twist):
        self.inner = SimDevice.builtin("mi300x")
        self.name = "twisted:mi300x"
        self.twist = twist

    def supports(self, dp):
        return self.inner.supports(dp)

    def run(self, dp, cases):
        return self.twist(self.inner, dp, cases)


def _interleaved(inner, dp, cases):
    """K positions dealt round-robin: the blocks are every other lane."""
    order = np.r_[0:dp.k:2, 1:dp.k:2]
    return inner.run(dp, Cases(cases.a[:, order], cases.b[:, order], cases.c))


def _one_ulp_off_on_rare_inputs(inner, dp, cases):
    """The design, but one ulp down where lane 5 holds a word ending in 0b10111."""
    out = np.asarray(inner.run(dp, cases)).copy()
    odd = ((cases.a[:, 5] & 0x1F) == 0x17) & ((out & 0x7F800000) != 0x7F800000) & \
        ((out & 0x7FFFFFFF) > 1)
    out[odd] -= 1
    return out


def test_a_device_no_design_describes_fails_the_step():
    dp = Datapath.parse("mfma.f16.f32.k16")
    result = run_ladder(_Twisted(_interleaved), dp, validate_cases=500)
    step = result.finding("mfma")
    assert step.status == "failed"
    assert step.values["block"] is None and step.values["groups"][0] == [0, 2, 4, 6, 8, 10, 12, 14]
    assert result.fingerprint is None or result.fingerprint.mfma is None
    assert not result.validated


def test_a_wrong_model_is_never_validated():
    dp = Datapath.parse("mfma.f16.f32.k16")
    result = run_ladder(_Twisted(_one_ulp_off_on_rare_inputs), dp, validate_cases=4000)
    step = result.finding("mfma")
    caught_by_step = step.status == "failed"
    caught_by_validation = result.validation is not None and result.validation.mismatches > 0
    assert caught_by_step or caught_by_validation
    assert not result.validated


NEIGHBOURS = [("truncated", 8, 23, 31), ("truncated", 8, 25, 31), ("truncated", 8, 24, 30),
              ("truncated", 8, 24, 32), ("truncated", 4, 24, 31), ("truncated", 16, 24, 31),
              ("grouped", 8, 24, 31), ("exact", 8, 24, 31), ("ftz", 4, 24, 31)]


@pytest.mark.slow
def test_validation_catches_every_neighbouring_model():
    """MI300X f16 is truncated L=8, F=24, F2=31: the ladder's validation cases
    (the ties part included) tell every design one parameter away from it."""
    dp = Datapath.parse("mfma.f16.f32.k16")
    result = run_ladder(SimDevice.builtin("mi300x"), dp, validate_cases=0)
    for p in NEIGHBOURS:
        v = validate(result.context, MfmaModel("neighbour", dp, "", MfmaParams(*p)), 5000)
        assert v.mismatches > 0, p
    right = validate(result.context, MfmaModel("right", dp, "", MfmaParams("truncated", 8, 24, 31)),
                     5000)
    assert right.mismatches == 0 and right.parts["mfma-ties"][0] > 500


def test_the_mfma_step_skips_nvidia_datapaths():
    dev = SimDevice.builtin("h100")
    result = run_ladder(dev, dev.datapath("mma", "bf16"), ["mfma"], validate_cases=0)
    assert result.finding("mfma").status == "skipped"


def test_cli_ladder_and_validate_on_sim_mi300x(tmp_path):
    fp = tmp_path / "fp.json"
    r = cli("ladder", "--device", "sim:mi300x", "--format", "f16", "--validate", "1000",
            "--json", fp)
    assert r.exit_code == 0, r.output
    assert "mfma.design" in r.output and "truncated" in r.output
    data = json.loads(fp.read_text())
    assert data["validated"] and data["fingerprint"]["mfma"] == TRUNC8
    for model, code in (("auto", 0), (fp, 0), ("mi250x", 1), ("mi100", 1)):
        r = cli("validate", "--device", "sim:mi300x", "--format", "f16", "--model", model,
                "--cases", "600", "--out", tmp_path / f"v-{code}-{str(model)[-6:]}")
        assert r.exit_code == code, (model, r.output[-800:])


@pytest.mark.parametrize("args,needle", [
    (("ladder", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k7"), "no v_mfma runs"),
    (("ladder", "--device", "sim:mi100", "--datapath", "mfma.xf32.tf32.f32.k8"), "MI100 (CDNA1)"),
    (("ladder", "--device", "sim:mi300x", "--format", "e4m3"), "no v_mfma taking e4m3"),
    (("ladder", "--device", "sim:mi400", "--format", "f16"), "unknown sim profile"),
])
def test_bad_amd_input_is_one_error_line(args, needle):
    r = cli(*args)
    one_error(r, needle)
