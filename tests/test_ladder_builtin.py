"""The ladder on every built-in sim profile and every format it runs: the
fingerprint equals the profile's parameters (where the datapath can show
them at all) and its model matches the device on 10,000 random cases."""

import pytest
from ladder_helpers import datapaths, mismatched_keys

from tcprobe.devices.sim import BUILTIN, SimDevice
from tcprobe.ladder import run_ladder
from tcprobe.models.model import FixedPointModel


def _engine(name, dp):
    return isinstance(SimDevice.builtin(name).model(dp), FixedPointModel)


ALL = [(name, fam, fmt, dp) for name in BUILTIN for fam, fmt, dp in datapaths(SimDevice.builtin(name))]
CASES = [(n, f, x) for n, f, x, dp in ALL if _engine(n, dp)]
# fp8 mma.sync on Hopper and Blackwell is a compiler emulation (two HMMAs, C
# added after: models/emulated.py), not one fixed-point window
SPLIT = [(n, f, x) for n, f, x, dp in ALL if not _engine(n, dp)]


def test_every_profile_runs_formats():
    names = {c[0] for c in CASES}
    assert names == set(BUILTIN)
    assert {(n, x) for n, f, x in SPLIT} == {(n, x) for n in ("h100", "h200", "b200")
                                           for x in ("e4m3", "e5m2")}
    assert ("b200", "tcgen05", "e2m1") in CASES and ("h100", "wgmma", "e4m3") in CASES
    assert ("v100", "mma", "f16") in CASES


@pytest.mark.slow
@pytest.mark.parametrize("name,fam,fmt", CASES, ids=[f"{n}-{f}-{x}" for n, f, x in CASES])
def test_fingerprint_matches_profile(name, fam, fmt):
    dev = SimDevice.builtin(name)
    dp = dev.datapath(fam, fmt)
    result = run_ladder(dev, dp)
    failed = [f.step for f in result.findings if f.status == "failed"]
    assert not failed, failed
    truth = dev.model(dp).params
    assert mismatched_keys(result.fingerprint, dp, truth) == {}
    assert result.validation.cases == 10_000
    assert result.validation.mismatches == 0, result.validation.examples[:2]
    assert result.simulated
    # bf16 and tf32 reach every parameter; f16 and narrower formats cannot show the floor
    if fmt in ("bf16", "tf32"):
        assert result.fingerprint.zero_floor == truth.zero_floor
    if fmt == "tf32":
        assert result.fingerprint.input_conversion == "truncate"


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("name,fam,fmt,out", [(*x, "f32") for x in SPLIT] + [("h200", "mma", "e4m3", "f16")],
                         ids=[f"{n}-{f}-{x}" for n, f, x in SPLIT] + ["h200-mma-e4m3-f16"])
def test_emulated_fp8_mma_is_found_as_two_sub_mmas(name, fam, fmt, out):
    """fp8 mma.sync on Hopper and Blackwell is no single window: the internal
    step sees C never cut, and the block step then finds the emulation's
    structure from products alone: C added after by an ordinary add, K split
    into two sub-MMAs (which positions, which runs first), each sub-MMA's
    window and rounding; its SplitModel validates."""
    dev = SimDevice.builtin(name)
    dp = dev.datapath(fam, fmt, out)
    result = run_ladder(dev, dp, validate_cases=4000)
    assert result.finding("internal").values.get("c_outside_window")
    failed = [f.step for f in result.findings if f.status == "failed"]
    assert not failed, failed
    truth = dev.model(dp)  # the emulation profile's SplitModel
    split = result.finding("block").values["split"]
    assert [tuple(p) for p in split["parts"]] == [tuple(p) for p in truth.parts]
    assert split["c_entry"] == truth.c_entry == "last"
    assert split["c_add_rounding"] == truth.c_add_rounding
    assert split["window_bits"] == truth.stage.window_bits
    assert split["output_rounding"] == truth.stage.output_rounding
    assert "added after the products" in result.finding("block").summary
    assert result.fingerprint.split == split
    assert result.validation.mismatches == 0, result.validation.examples[:2]
