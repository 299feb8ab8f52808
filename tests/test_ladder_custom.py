"""The ladder on TOML profiles it has not seen: windows of 10 to 30 bits,
blocks of 2 to 64, RZ or RNE output, truncating or rounding input
conversion, other zero floors, IEEE zero signs, other NaN words, permuted
dumps and operand layouts. Every key the datapath can show must come back;
a key the ladder leaves open must make no difference to the device."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ladder_helpers import mismatched_keys, unobservable

from tcprobe.devices.sim import SimDevice
from tcprobe.devices.sim_layout import _order
from tcprobe.ladder import run_ladder


def write(tmp_path, name, params, layout=None):
    lines = [f"{k} = {v!r}".replace("'", '"') for k, v in params.items()]
    if layout:
        lines.append("[layout]")
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in layout.items()]
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return SimDevice.from_toml(path)


def check(dev, family, fmt, cases=3000):
    dp = dev.datapath(family, fmt)
    assert dev.supports(dp)
    result = run_ladder(dev, dp, validate_cases=cases)
    failed = [f.step for f in result.findings if f.status == "failed"]
    assert not failed, [(f.step, f.summary) for f in result.findings if f.status == "failed"]
    truth = dev.model(dp).params
    assert mismatched_keys(result.fingerprint, dp, truth, oracle=result) == {}
    assert result.validation.mismatches == 0, result.validation.examples[:2]
    assert unobservable(result, dp, 12_000)  # the model matches a stress set too
    return result, dp, truth


PARAMS = st.fixed_dictionaries({
    "window_bits": st.integers(10, 30),
    "block_size": st.sampled_from([2, 3, 4, 5, 7, 8, 16, 32, 64]),
    "zero_floor": st.integers(-152, -110),
    "input_conversion": st.sampled_from(["truncate", "rne"]),
    "output_rounding": st.sampled_from(["rz", "rne"]),
    "zero_sign": st.sampled_from(["positive", "ieee"]),
    "nan": st.sampled_from([0x7FFFFFFF, 0x7FC00000, 0xFFFFFFFF]),
})
LAYOUT = st.fixed_dictionaries({}, optional={
    "a_k_order": st.sampled_from(["reverse", "shuffle:3", "rotate:5"]),
    "b_k_order": st.sampled_from(["reverse", "shuffle:9"]),
    "dump_permutation": st.sampled_from(["reverse", "shuffle:1", "shuffle:7"]),
})


@pytest.mark.slow
@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=PARAMS, layout=LAYOUT, where=st.sampled_from(
    [("mma", "bf16"), ("mma", "tf32"), ("mma", "f16"), ("wgmma", "bf16"), ("wgmma", "tf32"),
     ("tcgen05", "bf16"), ("tcgen05", "tf32"), ("tcgen05", "f16")]))
# found by CI: a 21-bit window with blocks of 2 keeps the output's 24 bits
# unless C carries the last block's sum past a power of two (RZ left open)
@example(params={"window_bits": 21, "block_size": 2, "zero_floor": -110,
                 "input_conversion": "truncate", "output_rounding": "rz", "zero_sign": "positive",
                 "nan": 0x7FFFFFFF}, layout={}, where=("mma", "bf16"))
@example(params={"window_bits": 21, "block_size": 2, "zero_floor": -110,
                 "input_conversion": "truncate", "output_rounding": "rz", "zero_sign": "positive",
                 "nan": 0x7FFFFFFF}, layout={}, where=("mma", "tf32"))
# found by CI: a 10-bit window with blocks of 2 leaves the kept width open at
# the rounding step; the validation cases settle it at the output's own 23
# bits, which the fingerprint writes as None (as every step does)
@example(params={"window_bits": 10, "block_size": 2, "zero_floor": -139,
                 "input_conversion": "truncate", "output_rounding": "rz", "zero_sign": "positive",
                 "nan": 0x7FFFFFFF}, layout={}, where=("mma", "bf16"))
def test_random_profiles_are_recovered(tmp_path, params, layout, where):
    dev = write(tmp_path, "random", params, layout)
    result, dp, truth = check(dev, *where)
    fp = result.fingerprint
    # bf16 and tf32 reach every scalar key; tf32 also shows the input conversion
    if where[1] in ("bf16", "tf32"):
        assert fp.window_bits == params["window_bits"]
        assert fp.block_size == min(params["block_size"], dp.k)
        assert fp.zero_sign == params["zero_sign"] and fp.nan == params["nan"]
    if where[1] == "tf32":
        assert fp.input_conversion == params["input_conversion"]


# row groups one core matrix apart, K blocks after all of them (a layout of
# its own slot for every (row, k), unlike the documented K-blocks-first one)
@pytest.mark.parametrize("family,lbo,sbo", [("wgmma", 512, 64), ("tcgen05", 512, 64)])
def test_permuted_shared_memory_layout_and_dump(tmp_path, family, lbo, sbo):
    params = {"window_bits": 27, "block_size": 4, "zero_floor": -140,
              "input_conversion": "truncate", "output_rounding": "rne", "zero_sign": "ieee",
              "nan": 0x7FC00000}
    layout = {"a_lbo": lbo, "a_sbo": sbo, "b_k_order": "reverse", "dump_permutation": "shuffle:2"}
    dev = write(tmp_path, "moved", params, layout)
    result, dp, _ = check(dev, family, "bf16")
    truth = dev.harness(dp)
    found = result.context.harness
    # the measured slice is the device's, and every lane is placed where the device reads it
    assert np.array_equal(np.sort(found.slice), np.sort(truth.slice))
    assert sorted(map(tuple, (np.sort(x) for x in found.a_lanes))) == \
        sorted(map(tuple, (np.sort(x) for x in truth.a_lanes)))
    lay = result.finding("layout").values
    assert f"LBO={lbo}, SBO={sbo}" in lay["layout_A"]
    fp = result.fingerprint
    assert (fp.window_bits, fp.block_size, fp.zero_floor, fp.output_rounding, fp.zero_sign,
            fp.nan) == (27, 4, -140, "rne", "ieee", 0x7FC00000)


def test_shared_k_permutation_becomes_the_k_order(tmp_path):
    """A K order shared by A and B cannot be told from a datapath that consumes
    K in that order: the ladder reports it as the K order, in the documented
    lane names, and its blocks are the device's."""
    params = {"window_bits": 25, "block_size": 4, "zero_floor": -133,
              "input_conversion": "truncate", "output_rounding": "rz", "zero_sign": "positive",
              "nan": 0x7FFFFFFF}
    dev = write(tmp_path, "kperm", params, {"a_k_order": "shuffle:11", "b_k_order": "shuffle:11"})
    result, dp, _ = check(dev, "tcgen05", "bf16")
    perm = _order("shuffle:11", dp.k, "", 0).table
    blocks = [sorted(perm[i:i + 4].tolist()) for i in range(0, dp.k, 4)]
    assert result.finding("block").values["blocks"] == blocks
    assert result.finding("layout").values["layout_documented"]


def test_window_and_rounding_of_f16_output(tmp_path):
    params = {"window_bits": 22, "block_size": 8, "zero_floor": -22,
              "input_conversion": "truncate", "output_rounding": "rz", "zero_sign": "positive",
              "nan": 0x7E00}
    dev = write(tmp_path, "f16out", params)
    dp = dev.datapath("mma", "f16", "f16")
    result = run_ladder(dev, dp, validate_cases=3000)
    fp = result.fingerprint
    assert (fp.window_bits, fp.block_size, fp.output_rounding, fp.nan) == (22, 8, "rz", 0x7E00)
    assert fp.zero_floor == -22
    assert result.validation.mismatches == 0


@pytest.mark.parametrize("conv", ["truncate", "rne"])
def test_tf32_input_conversion(tmp_path, conv):
    params = {"window_bits": 24, "block_size": 4, "zero_floor": -132, "input_conversion": conv,
              "output_rounding": "rz", "zero_sign": "positive", "nan": 0x7FFFFFFF}
    dev = write(tmp_path, f"tf32{conv}", params)
    result, dp, _ = check(dev, "mma", "tf32")
    f = result.finding("truncation")
    assert f.values["dropped_bits"] == 13 and f.values["input_conversion"] == conv


def test_formats_without_dropped_bits_say_so(tmp_path):
    params = {"window_bits": 24, "block_size": 8, "zero_floor": -132, "input_conversion": "rne",
              "output_rounding": "rz", "zero_sign": "positive", "nan": 0x7FFFFFFF}
    dev = write(tmp_path, "bf16rne", params)
    result, dp, _ = check(dev, "mma", "bf16")
    assert result.fingerprint.input_conversion is None
    assert "no dropped bits" in result.fingerprint.undetermined["input_conversion"]


@pytest.mark.parametrize("conversion", ["truncate", "rne"])
@pytest.mark.parametrize("keep", [5, 7])
def test_input_conversion_shows_through_few_kept_output_bits(tmp_path, conversion, keep):
    """tf32 inputs cut or rounded to 10 fraction bits, D keeping only 5 or 7:
    the truncation step cancels the 1.0 with C, so the kept LSB still shows
    (found by a sweep: the step failed, 'fits no conversion')."""
    params = {"window_bits": 24, "block_size": 8, "zero_floor": -131,
              "input_conversion": conversion, "output_rounding": "rna", "zero_sign": "positive",
              "nan": 0x7FFFFFFF, "output_frac_bits": keep}
    dev = write(tmp_path, f"keep{keep}", params)
    dp = dev.datapath("mma", "tf32")
    result = run_ladder(dev, dp, steps=["truncation"], validate_cases=1000)
    f = result.finding("truncation")
    assert f.status == "found", f.summary
    assert f.values["input_conversion"] == conversion and f.values["dropped_bits"] == 13
