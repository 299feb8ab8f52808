"""The ladder on the tcgen05 kinds beyond one engine window: block-scaled
(mxf8f6f4, mxf4, NVFP4), sparse (tf32, bf16, block-scaled) and mixed A/B.
On sim:b200 every fingerprint key the datapath can show equals the sim's
parameters, a key left open makes no difference on a stress set, and the
fingerprint's model matches the device on 10,000 random cases (random
scales and legal masks included); custom TOML profiles with other scaled
parameters and a moved sparse layout are recovered too."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from ladder_helpers import mismatched_keys

from tcprobe.devices.sim import SimDevice
from tcprobe.ladder import run_ladder
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.suites.mix import random_cases

B200 = SimDevice.builtin("b200")


def scaled_stress(result, dp, n=6000):
    """Random cases (random scales), plus tiny scales near the f32 subnormal
    range: the fingerprint's model against the device through the ladder's harness."""
    from tcprobe.probes.scale.floors import tiny_family
    from tcprobe.probes.scale.geometry import Geometry

    ctx = result.context
    parts = [random_cases(dp, n, np.random.default_rng(7))]
    if dp.scale_type == "ue8m0":
        blocks = [list(range(j * dp.scale_block, (j + 1) * dp.scale_block))
                  for j in range(dp.n_scales)]
        parts.append(tiny_family(ctx, Geometry(ctx, blocks), 3000))
    cases = Cases.concat([ctx.complete(c) for c in parts])
    return np.array_equal(ctx.run(cases), result.fingerprint.model(dp).evaluate(cases))


def check_scaled(dev, text):
    dp = Datapath.parse(text)
    r = run_ladder(dev, dp)
    failed = [(f.step, f.summary) for f in r.findings if f.status == "failed"]
    assert not failed, failed
    truth = dev.model(dp).params
    fp = r.fingerprint
    und = fp.undetermined
    assert fp.scale_block == dp.scale_block
    # the two keys of the write-up's floor: each equal to the truth, or open with a
    # bound the truth respects
    if fp.scale_floor_offset is not None:
        assert fp.scale_floor_offset == truth.scale_window
    else:
        assert "scale_floor_offset" in und
    if fp.product_window_bits is not None:
        assert fp.product_window_bits == truth.product_window
    else:
        assert "product_window_bits" in und and fp.assumed["product_window_bits"] <= truth.product_window
    got = fp.scaled
    for key in ("product_group", "q_floor", "group_floor", "zero_c"):
        if f"scaled.{key}" not in und:
            assert got[key] == getattr(truth, key), key
    if "scaled.c_mechanism" not in und:
        for key in ("c_dominant", "per_group_c_merge"):
            assert got[key] == getattr(truth, key), key
        if truth.c_dominant or truth.per_group_c_merge:
            assert got["c_merge_bits"] == truth.c_merge_bits
    assert r.validation.cases == 10_000
    assert r.validation.mismatches == 0, r.validation.examples[:2]
    assert scaled_stress(r, dp)
    return r, fp


@pytest.mark.parametrize("text,block,offset,window,group", [
    ("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1", 32, None, 25, 1),
    ("tcgen05.mxf4.e2m1.f32.k64.ue8m0x2", 32, 35, None, 16),
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", 16, 35, None, 4),
])
@pytest.mark.fast_first(1)
def test_block_scaled_kinds(text, block, offset, window, group):
    r, fp = check_scaled(B200, text)
    assert (fp.scale_block, fp.scale_floor_offset, fp.product_window_bits) == (block, offset, window)
    assert fp.scaled["product_group"] == group
    if window is None:  # e2m1: the scale floor binds before a 39-bit product window can
        assert fp.assumed["product_window_bits"] == 39
        assert "39 bits or more" in fp.undetermined["product_window_bits"]
    f = r.finding("scale")
    assert f.values["scales_exact"] and f.values["scale_blocks"][0] == [0, block - 1]
    if "nvf4" in text:  # NVFP4: the C-dominant merge of whole K=16 blocks, 35 bits below C
        assert fp.scaled["c_dominant"] and fp.scaled["merge_group"] == 16
        assert fp.scaled["c_merge_bits"] == 35
    if "mxf8f6f4" in text:
        assert fp.scaled["c_window"] == 25 and fp.scaled["q_floor"] == -158
    if "mxf4." in text:
        assert fp.scaled["group_floor"] == -174
    # the engine steps skip block-scaled kinds, with the reason
    assert "block-scaled" in r.finding("internal").summary


@pytest.mark.parametrize("text,pattern,width", [
    ("tcgen05.tf32.f32.k16.sparse", "1 of 2", 2),
    ("tcgen05.f16.bf16.f32.k32.sparse", "2 of 4", 4),
])
def test_sparse_float_kinds(text, pattern, width):
    dp = Datapath.parse(text)
    r = run_ladder(B200, dp)
    assert not [f.step for f in r.findings if f.status == "failed"]
    truth = B200.model(dp).params
    assert mismatched_keys(r.fingerprint, dp, truth, oracle=r) == {}
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.output_rounding) == (25, dp.k, "rz")
    assert fp.zero_floor == -133  # tf32 and bf16 products reach the floor
    sp = fp.sparsity
    assert sp["pattern"] == pattern and sp["chunk_width"] == width
    assert sp["selectors_documented"] and sp["disabled_ignored"]
    assert sp["active_counts"] == list(range(dp.k // 2 + 1))
    assert r.validation.mismatches == 0, r.validation.examples[:2]
    lay = r.finding("layout")
    assert lay.status == "found" and lay.values["layout_documented"]


@pytest.mark.slow
def test_sparse_block_scaled_nvfp4():
    r, fp = check_scaled(B200, "tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse")
    # sparse NVFP4: K=32 scale blocks and K=32 C-dominant merge blocks
    assert fp.scale_block == 32 and fp.scaled["merge_group"] == 32
    assert fp.sparsity["pattern"] == "two adjacent pairs of 8"
    assert fp.sparsity["selectors"]["0x9"] == [2, 3, 4, 5]


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("device,text", [("b200", "tcgen05.f8f6f4.e4m3xe2m1.f32.k32"),
                                         ("b200", "tcgen05.f8f6f4.e2m1xe4m3.f16.k32"),
                                         ("h200", "wgmma.e4m3.e4m3xe5m2.f32.k32")])
def test_mixed_pairs(device, text):
    dev = SimDevice.builtin(device)
    dp = Datapath.parse(text)
    r = run_ladder(dev, dp)
    assert not [f.step for f in r.findings if f.status == "failed"]
    truth = dev.model(dp).params
    assert mismatched_keys(r.fingerprint, dp, truth, oracle=r) == {}
    assert r.fingerprint.window_bits == truth.window_bits
    assert r.fingerprint.output_rounding == ("rne" if dp.d_type == "f16" else "rz")
    assert r.validation.mismatches == 0, r.validation.examples[:2]
    t = r.finding("truncation")  # B's words are B's format: every bit of both moves D
    assert t.values["ignored_bits_a"] == [] and t.values["ignored_bits_b"] == []


SCALED_TOML = """
name = "scaled-variant"
families = ["tcgen05"]
window_bits = 25
block_size = 64
zero_floor = -133
input_conversion = "truncate"
output_rounding = "rz"
zero_sign = "positive"
nan = 0x7fffffff

[scaled.mx]
product_window = 21
c_window = 23
q_floor = -150

[scaled.mxf4]
scale_window = 31
product_window = 34
product_group = 8
group_floor = -170

[scaled.nvfp4]
scale_window = 33
c_merge_bits = 30
product_group = 2
"""


@pytest.mark.slow
def test_custom_scaled_parameters_are_recovered(tmp_path):
    path = tmp_path / "scaled.toml"
    path.write_text(SCALED_TOML)
    dev = SimDevice.from_toml(path)
    _, fp = check_scaled(dev, "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    assert fp.product_window_bits == 21 and fp.scaled["c_window"] == 23
    assert fp.scaled["q_floor"] == -150
    _, fp = check_scaled(dev, "tcgen05.mxf4.e2m1.f32.k64.ue8m0x2")
    # 34 < 31 + 4: the product window binds for the largest elements and shows
    assert (fp.scale_floor_offset, fp.product_window_bits) == (31, 34)
    assert fp.scaled["product_group"] == 8 and fp.scaled["group_floor"] == -170
    _, fp = check_scaled(dev, "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4")
    assert fp.scale_floor_offset == 33 and fp.scaled["product_group"] == 2
    assert fp.scaled["c_merge_bits"] == 30


def test_custom_sparse_profile_with_a_moved_layout(tmp_path):
    path = tmp_path / "sparse.toml"
    path.write_text("\n".join([
        'families = ["tcgen05"]', "window_bits = 21", "block_size = 8", "zero_floor = -140",
        'input_conversion = "rne"', 'output_rounding = "rne"', 'zero_sign = "ieee"',
        "nan = 0x7fc00000", "[layout]", "a_lbo = 256", "a_sbo = 32", 'a_k_order = "rotate:3"',
        'dump_permutation = "shuffle:4"']) + "\n")
    dev = SimDevice.from_toml(path)
    dp = Datapath.parse("tcgen05.tf32.f32.k16.sparse")
    r = run_ladder(dev, dp, validate_cases=4000)
    assert not [f.step for f in r.findings if f.status == "failed"]
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.zero_floor, fp.input_conversion,
            fp.output_rounding, fp.zero_sign, fp.nan) == (21, 8, -140, "rne", "rne", "ieee",
                                                          0x7FC00000)
    lay = r.finding("layout")
    assert lay.status == "found" and not lay.values["layout_documented"]
    assert "LBO=256, SBO=32" in lay.values["layout_A"]
    assert r.validation.mismatches == 0, r.validation.examples[:2]


@pytest.mark.slow
def test_cli_datapath_json(tmp_path):
    from tcprobe.cli import main

    out = tmp_path / "l.json"
    res = CliRunner().invoke(main, ["ladder", "--datapath", "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4",
                                    "--device", "sim:b200", "--json", str(out), "--validate",
                                    "2000"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "scale_floor_offset" in res.output and "(simulated)" in res.output
    data = json.loads(out.read_text())
    fp = data["fingerprint"]
    assert fp["scale_floor_offset"] == 35 and fp["product_window_bits"] is None
    assert fp["scaled"]["product_group"] == 4 and "product_window_bits" in fp["undetermined"]
    assert data["validation"]["mismatches"] == 0 and data["cases_per_step"]["scale"] > 0
    ev = next(s for s in data["steps"] if s["step"] == "scale")["evidence"]
    assert ev and "scale_a" in ev[0]
