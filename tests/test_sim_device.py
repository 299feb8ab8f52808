"""Simulated silicon: raw dumps like a harness, result mode on top, TOML
profiles, the default device, and MMA-Sim as a black box."""

import numpy as np
import pytest

from tcprobe.devices.base import DeviceError, RawModeUnsupported
from tcprobe.devices.registry import open_device
from tcprobe.devices.sim import SimDevice
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import default_datapath
from tcprobe.suites.mix import random_cases
from tcprobe.tiles.tables import harness_for

BASE = """window_bits = 18
block_size = 4
zero_floor = -140
input_conversion = "truncate"
output_rounding = "rne"
zero_sign = "ieee"
nan = 0x7fc00000
"""


def profile(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name,family,fmt", [("b200", "tcgen05", "bf16"), ("h200", "wgmma", "e4m3"),
                                             ("a100", "mma", "tf32"), ("v100", "mma", "f16"),
                                             ("b200", "tcgen05", "e3m2")])
def test_result_mode_is_the_model_through_the_harness(name, family, fmt):
    dev = SimDevice.builtin(name)
    dp = dev.datapath(family, fmt)
    cases = random_cases(dp, 1200, np.random.default_rng(1))
    # every case replicated across a tile through the device's own layout,
    # launched and read from the slice: the datapath's word
    assert np.array_equal(dev.run_through_tiles(dp, cases), dev.model(dp).evaluate(cases))


def test_result_mode_through_a_moved_layout_is_still_the_datapath(tmp_path):
    text = BASE + '[layout]\na_k_order = "shuffle:2"\nb_k_order = "shuffle:2"\n' \
        'dump_permutation = "shuffle:4"\n'
    dev = SimDevice.from_toml(profile(tmp_path, text))
    dp = dev.datapath("tcgen05", "bf16")
    cases = random_cases(dp, 600, np.random.default_rng(3))
    assert np.array_equal(dev.run_through_tiles(dp, cases), dev.run(dp, cases))


def test_raw_dump_carries_d_only_in_the_slice():
    dev = SimDevice.builtin("b200")
    dp = default_datapath("tcgen05", "bf16")
    h = harness_for(dp)
    cases = random_cases(dp, 8, np.random.default_rng(2))
    batch = h.pack(cases)
    one, two = dev.launch(dp, batch), dev.launch(dp, batch)
    assert np.array_equal(h.unpack(one), dev.model(dp).evaluate(cases))
    others = np.setdiff1d(np.arange(h.tile.dump_words), h.slice)
    assert np.array_equal(one[:, h.slice], two[:, h.slice])
    assert (one[:, others] != two[:, others]).mean() > 0.99  # stale words change


def test_distinct_rows_are_computed_word_by_word():
    """A tile whose rows hold different K-vectors gives each slice word its own D."""
    dev = SimDevice.builtin("h100")
    dp = default_datapath("wgmma", "bf16")
    h = harness_for(dp)
    rng = np.random.default_rng(3)
    t = dev.tile(dp)
    a = (rng.integers(0x3f00, 0x4000, (1, t.a_slots))).astype(np.uint32)
    b = (rng.integers(0x3f00, 0x4000, (1, t.b_slots))).astype(np.uint32)
    from tcprobe.tiles.spec import PhysicalBatch

    dump = dev.launch(dp, PhysicalBatch(a, b, np.zeros((1, t.c_slots), np.uint32)))
    want = dev.model(dp).evaluate(Cases(a[0][h.a_read], b[0][h.b_read], np.zeros(len(h.slice))))
    assert np.array_equal(dump[0, h.slice], want)


def test_toml_profile_sets_the_datapath(tmp_path):
    dev = open_device("sim:" + profile(tmp_path, BASE))
    dp = dev.datapath("mma", "bf16")
    p = dev.model(dp).params
    assert (p.window_bits, p.block_size, p.zero_floor, p.output_rounding, p.zero_sign, p.nan) == \
        (18, 4, -140, "rne", "ieee", 0x7fc00000)
    assert dev.simulated and dev.info()["params"]["window_bits"] == 18


def test_toml_layout_moves_the_device_harness(tmp_path):
    # row groups one core matrix apart, K blocks after all eight: row group 1
    # reads the slots the documented layout gives row group 0's K block 1
    text = BASE + '[layout]\na_k_order = "reverse"\na_lbo = 512\na_sbo = 64\n' \
        'dump_permutation = "shuffle:4"\n'
    dev = SimDevice.from_toml(profile(tmp_path, text))
    dp = dev.datapath("tcgen05", "bf16")
    nominal, truth = harness_for(dp), dev.harness(dp)
    assert not truth.same_placement(nominal)
    assert not np.array_equal(np.sort(truth.slice), np.sort(nominal.slice))
    # the documented harness no longer gives one word across the slice
    cases = random_cases(dp, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="disagree"):
        truth.unpack(dev.launch(dp, nominal.pack(cases)))
    # mma reads registers: shared-memory strides do not apply, the K order does
    assert dev.supports(dev.datapath("mma", "bf16"))


@pytest.mark.parametrize("text,msg", [
    ("window_bits = 20\n", "missing key"),
    (BASE + "colour = 3\n", "unknown key"),
    (BASE.replace('"rne"', '"rn"'), "output_rounding"),
    (BASE + "[layout]\nflip = 1\n", "unknown key"),
    ("window_bits = [", "not a TOML"),
])
def test_bad_toml_profiles_are_one_line_errors(tmp_path, text, msg):
    with pytest.raises(DeviceError, match=msg):
        SimDevice.from_toml(profile(tmp_path, text))


def test_unknown_devices():
    with pytest.raises(DeviceError, match="unknown sim profile"):
        open_device("sim:h999")
    with pytest.raises(DeviceError, match="unknown device"):
        open_device("tpu:0")
    with pytest.raises(DeviceError, match="no sim profile"):
        open_device("sim:/nonexistent/x.toml")


def test_default_device_is_a_labelled_sim(capsys):
    from tcprobe.devices.registry import choose_device

    dev, notes = choose_device(None, "wgmma")
    assert dev.name == "sim:h200" and dev.simulated
    assert "sim:h200" in " ".join(notes)
    assert capsys.readouterr().err == ""  # a device prints nothing; the CLI prints the notes
    assert open_device(None, "tcgen05").name == "sim:b200"


def test_mmasim_has_no_raw_mode_and_matches_the_profiles():
    pytest.importorskip("mmasim")
    dev = open_device("mmasim:Hopper:wgmma.m64n8k16.f32.bf16.bf16")
    dp = dev.dp
    assert dp.id == "wgmma.bf16.f32.k16"
    with pytest.raises(RawModeUnsupported):
        dev.tile(dp)
    cases = random_cases(dp, 4000, np.random.default_rng(5))
    assert np.array_equal(dev.run(dp, cases), SimDevice.builtin("h200").model(dp).evaluate(cases))
    f4 = open_device("mmasim:Blackwell:tcgen05.m64n8k32.kind::f8f6f4.f32.e2m1.e2m1")
    dp4 = f4.dp
    cases = random_cases(dp4, 2000, np.random.default_rng(6))
    assert np.array_equal(f4.run(dp4, cases), SimDevice.builtin("b200").model(dp4).evaluate(cases))


def test_mmasim_bad_spellings():
    pytest.importorskip("mmasim")
    with pytest.raises(DeviceError, match="ARCH:INSTRUCTION"):
        open_device("mmasim:Hopper")
    with pytest.raises(DeviceError, match="refuses"):
        open_device("mmasim:Ampere:wgmma.m64n8k16.f32.bf16.bf16")
