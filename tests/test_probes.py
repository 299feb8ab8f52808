"""Single probes on devices built to make them work: stale words that stay
put, wrapping accumulators, IEEE zeros, custom NaN words, f16 outputs,
block scales and sparsity (the last two on stand-in result-mode devices)."""

import numpy as np
import pytest

from tcprobe.devices.base import Device
from tcprobe.devices.sim import SimDevice
from tcprobe.ladder import run_ladder
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot
from tcprobe.models.formats import decode, encode

BASE = {"window_bits": 25, "block_size": 16, "zero_floor": -133, "input_conversion": "truncate",
        "output_rounding": "rz", "zero_sign": "positive", "nan": 0x7FFFFFFF}


def sim(tmp_path, **over):
    text = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in {**BASE, **over}.items())
    path = tmp_path / "p.toml"
    path.write_text(text + "\n")
    return SimDevice.from_toml(path)


class StaleSim(SimDevice):
    """Some non-slice words keep one value across launches (stale, but stable):
    the words past the last D word of the tcgen05 M64N8 dump (D: 512 words
    up to word 895 of 1024)."""

    def launch(self, dp, batch):
        dump = super().launch(dp, batch)
        dump[:, 960:] = 0x3F800000
        return dump


def test_slice_ignores_stable_stale_words():
    dev = StaleSim(SimDevice.builtin("b200").profile)
    dp = dev.datapath("tcgen05", "bf16")
    f = run_ladder(dev, dp, ["slice"]).finding("slice")
    # the documented slice of the canonical A layout: every one of the 512 D words
    assert f.status == "found" and len(f.values["slice"]) == 512 and f.values["documented"]


@pytest.mark.parametrize("window", [10, 17, 30])
def test_internal_finds_the_window(tmp_path, window):
    dev = sim(tmp_path, window_bits=window, block_size=4)
    f = run_ladder(dev, dev.datapath("mma", "bf16"), ["internal"], validate_cases=0).finding(
        "internal")
    assert f.values["window_bits"] == window


def test_carry_finds_a_wrapping_accumulator(tmp_path):
    dev = sim(tmp_path, carry_bits=4)
    r = run_ladder(dev, dev.datapath("tcgen05", "bf16"), validate_cases=3000)
    assert r.finding("carry").values["carry_bits"] == 4
    assert r.fingerprint.carry_bits == 4 and r.validation.mismatches == 0


def test_ieee_zeros_and_a_custom_nan(tmp_path):
    dev = sim(tmp_path, zero_sign="ieee", nan=0xFFC00001)
    r = run_ladder(dev, dev.datapath("mma", "tf32"), ["specials", "zero"], validate_cases=0)
    assert r.finding("zero").values["zero_sign"] == "ieee"
    assert r.finding("specials").values["nan"] == 0xFFC00001
    assert r.finding("specials").values["dropped_payload"] == "inf"


def test_f16_output_visible_precision_and_rounding():
    dev = SimDevice.builtin("h100")
    dp = dev.datapath("wgmma", "f16", "f16")
    r = run_ladder(dev, dp, ["visible", "rounding"], validate_cases=0)
    assert r.finding("visible").values["visible_bits"] == 10
    assert r.finding("rounding").values["output_rounding"] == "rne"


def test_sass_is_skipped_on_simulated_devices():
    dev = SimDevice.builtin("b200")
    f = run_ladder(dev, dev.datapath("tcgen05", "bf16"), ["sass"]).finding("sass")
    assert f.status == "skipped" and "simulated" in f.summary


class StandIn(Device):
    """A result-mode device on the engine for block-scaled and sparse
    datapaths: ue8m0 scales are folded into B exactly (a test double)."""

    name = "stand-in"

    def __init__(self, dp):
        self.dp = dp

    def supports(self, dp):
        return dp == self.dp

    def run(self, dp, cases):
        plain = Datapath(dp.family, dp.kind, dp.a_type, dp.b_type, dp.d_type, dp.k)
        b = cases.b
        if dp.block_scaled:
            d = decode(dp.b_type, b)
            block = np.arange(dp.k) // dp.scale_block
            shift = (cases.scale_a.astype(np.int64) - 127 + cases.scale_b.astype(np.int64) - 127)
            b = np.where(d.cls == 1, encode(dp.b_type, d.sign, d.sig, d.lsb + shift[:, block]), b)
        masked = Cases(cases.a, b, cases.c, active=cases.active)
        return fused_dot(plain, masked, EngineParams(block_size=dp.k))


def test_scale_step_finds_the_scale_blocks():
    """The stand-in folds the scales into B's e4m3 words, which cannot hold
    2**-40 times an element: the blocks are found, and so is the inexactness."""
    dp = Datapath.parse("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    r = run_ladder(StandIn(dp), dp, ["scale"], validate_cases=0)
    f = r.finding("scale")
    assert f.values["scale_block"] == 32 and f.values["scale_blocks"] == [[0, 31]]
    assert f.status == "failed" and f.values["scales_exact"] is False
    assert "exactly" in f.summary


def test_sparsity_step_sees_disabled_lanes_ignored():
    dp = Datapath.parse("tcgen05.f16.bf16.f32.k32.sparse")
    f = run_ladder(StandIn(dp), dp, ["sparsity"], validate_cases=0).finding("sparsity")
    assert f.status == "found" and f.values["disabled_ignored"]
    plain = Datapath.parse("tcgen05.f16.bf16.f32.k16")
    assert run_ladder(StandIn(plain), plain, ["sparsity", "scale"]).finding(
        "sparsity").status == "skipped"


@pytest.mark.slow
def test_engine_steps_skip_block_scaled_datapaths_and_run_sparse_ones():
    dp = Datapath.parse("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    r = run_ladder(SimDevice.builtin("b200"), dp, ["internal", "block", "scale"],
                   validate_cases=2000)
    assert r.finding("internal").status == "skipped" and "block-scaled" in r.finding(
        "internal").summary
    assert r.finding("scale").status == "found"
    fp = r.fingerprint  # the scale step's keys and a block-scaled model
    assert fp.scaled is not None and fp.product_window_bits == 25 and fp.window_bits is None
    assert r.validation.mismatches == 0
    # a sparse datapath runs the engine steps with legal masks (a result-mode stand-in)
    sp = Datapath.parse("tcgen05.f16.bf16.f32.k32.sparse")
    r = run_ladder(StandIn(sp), sp, ["internal"], validate_cases=0)
    assert r.finding("internal").status == "found"
    assert r.finding("internal").values["window_bits"] == EngineParams().window_bits


def test_missing_mmasim_is_one_line(monkeypatch):
    import sys

    from tcprobe.devices.base import DeviceError
    from tcprobe.devices.registry import open_device

    monkeypatch.setitem(sys.modules, "mmasim", None)
    with pytest.raises(DeviceError, match="MMA-Sim is not installed"):
        open_device("mmasim:Hopper:wgmma.m64n8k16.f32.bf16.bf16")


@pytest.mark.parametrize("text,saturate", [("mma.s8.s32.k32", False), ("mma.s8xu8.s32.k32.sat", True),
                                           ("mma.u8.s32.k32", False)])
def test_integer_datapaths_wrap_or_saturate(text, saturate):
    dev = SimDevice.builtin("a100")
    dp = Datapath.parse(text)
    r = run_ladder(dev, dp)
    assert r.finding("layout").status == "found" and r.finding("lanes").status == "found"
    assert r.finding("carry").values["saturate"] is saturate
    assert r.finding("internal").status == "skipped"
    assert r.validation.mismatches == 0 and r.fingerprint is None


class NoInfSim(SimDevice):
    """Every +Inf D word comes back as 2^127 (0x7f000000): neither Inf nor
    the largest finite word, so no overflow mode of the engine explains it."""

    def launch(self, dp, batch):
        dump = super().launch(dp, batch)
        dump[dump == 0x7F800000] = 0x7F000000
        return dump


def test_specials_name_the_overflow_open_where_no_model_fits(tmp_path):
    dev = NoInfSim(sim(tmp_path).profile)
    f = run_ladder(dev, dev.datapath("mma", "bf16"), ["specials"], validate_cases=0).finding(
        "specials")
    assert "overflow" not in f.values
    assert "neither is read here" in f.values["undetermined"]["overflow"]
    assert f.status == "partial"
