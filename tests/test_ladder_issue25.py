"""Issue 25: the ladder never calls a wrong model validated.

Small sim profiles of the issue's items (a tf32 input rounded RNA, blocks
of 1 under a window wider than the output, a floor that binds only through
C, a K-moving layout checked by ``validate --model``), the ladder's own
validation failing on a wrong key, and the misses of
``benchmarks/ladder_sweep.py --seed 2525 --count 20 --judge 100000``
pinned (a strict xfail while the ladder does not recover one; all are now)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcprobe.cli import main as cli
from tcprobe.ladder import run_ladder, validate
from tcprobe.ladder.fingerprint import Fingerprint

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_ladder_carry import BASE, write  # noqa: E402


def ladder(tmp_path, name, fam, fmt, d, **extra):
    dev = write(tmp_path, name, {**BASE, **extra}, families=(fam,))
    dp = dev.datapath(fam, fmt, d)
    return dev, dp, run_ladder(dev, dp)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["rna", "rne", "truncate"])
def test_tf32_input_conversion_is_told_apart(tmp_path, mode):
    _, dp, res = ladder(tmp_path, f"ic-{mode}", "tcgen05", "tf32", "f32", input_conversion=mode)
    assert res.fingerprint.input_conversion == mode
    assert res.finding("truncation").values["dropped_bits"] == 13
    assert res.validated and res.validation.mismatches == 0


@pytest.mark.slow
def test_the_ladders_validation_fails_a_wrong_input_conversion(tmp_path):
    _, dp, res = ladder(tmp_path, "ic-rna", "tcgen05", "tf32", "f32", input_conversion="rna")
    fp = res.fingerprint.as_dict()
    fp["input_conversion"] = "truncate"
    known = {k: v for k, v in fp.items() if k in Fingerprint.__dataclass_fields__}
    v = validate(res.context, Fingerprint(**known).model(dp))
    assert v.parts["dropped-bits"][1] > 0 and v.mismatches > 0


@pytest.mark.slow
@pytest.mark.parametrize("rounding", ["rz", "rne", "rna"])
def test_blocks_of_one_with_a_window_wider_than_the_output(tmp_path, rounding):
    _, dp, res = ladder(tmp_path, f"l1-{rounding}", "mma", "bf16", "f32", window_bits=30,
                        block_size=1, output_rounding=rounding)
    fp = res.fingerprint
    assert not [f.step for f in res.findings if f.status == "failed"]
    assert (fp.window_bits, fp.block_size, fp.output_rounding) == (30, 1, rounding)
    assert res.validation.mismatches == 0


@pytest.mark.slow
def test_a_floor_that_binds_only_through_c(tmp_path):
    _, dp, res = ladder(tmp_path, "floor", "tcgen05", "e2m1", "f32", zero_floor=-118)
    assert res.fingerprint.zero_floor == -118
    assert res.validation.mismatches == 0 and res.validation.parts["c-alone"][0] > 0


@pytest.mark.slow
def test_validate_model_runs_through_the_measured_layout(tmp_path):
    prof = tmp_path / "lay.toml"
    prof.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in
                              {**BASE, "block_size": 4, "output_rounding": "rne"}.items())
                    + '\nfamilies = ["wgmma"]\n[layout]\na_k_order = "shuffle:3"\n'
                    'b_k_order = "shuffle:3"\ndump_permutation = "shuffle:5"\n')
    fp = tmp_path / "fp.json"
    r = CliRunner().invoke(cli, ["ladder", "--device", f"sim:{prof}", "--format", "bf16",
                                 "--json", str(fp), "--evidence", "0"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["validate", "--device", f"sim:{prof}", "--format", "bf16",
                                 "--model", str(fp), "--cases", "20000", "--seed", "77",
                                 "--out", str(tmp_path / "v")])
    assert r.exit_code == 0, r.output
    assert "measured" in r.output


# profiles the sweep (seed 2525, 20 profiles, judged on 100,000 cases) missed
# before issue 25's fixes; profile 4 (f16 D keeping 4 bits, RNA, F = 25 in
# blocks of 1) since the internal step's ties in the product itself
SWEEP_MISSES = {
    0: ("tcgen05", "e4m3", "f32", {"window_bits": 16, "block_size": 1, "input_conversion": "rne", "output_rounding": "rna", "zero_floor": -99, "nan": 2147483647, "zero_sign": "ieee", "carry_bits": 2, "carry_top": "saturate", "overflow": "saturate"}),  # noqa: E501
    2: ("wgmma", "e4m3", "f32", {"window_bits": 26, "block_size": 8, "input_conversion": "truncate", "output_rounding": "rna", "zero_floor": -111, "nan": 2143289344, "zero_sign": "ieee", "overflow": "inf"}),  # noqa: E501
    4: ("mma", "f16", "f16", {"window_bits": 25, "block_size": 1, "input_conversion": "truncate", "output_rounding": "rna", "zero_floor": -21, "nan": 32256, "output_frac_bits": 4, "zero_sign": "positive", "carry_bits": 4, "carry_top": "saturate", "overflow": "saturate", "k_order": "reversed"}),  # noqa: E501
    7: ("mma", "e5m2", "f32", {"window_bits": 18, "block_size": 8, "input_conversion": "rna", "output_rounding": "rz", "zero_floor": -98, "nan": 2147483647, "zero_sign": "ieee", "overflow": "inf"}),  # noqa: E501
    9: ("tcgen05", "e4m3", "f32", {"window_bits": 30, "block_size": 4, "input_conversion": "truncate", "output_rounding": "rz", "zero_floor": -98, "nan": 2147483647, "zero_sign": "positive", "overflow": "inf", "k_order": "pairs"}),  # noqa: E501
    13: ("tcgen05", "f16", "f32", {"window_bits": 14, "block_size": 32, "input_conversion": "truncate", "output_rounding": "rne", "zero_floor": -115, "nan": 2143289344, "zero_sign": "ieee", "carry_bits": 5, "carry_top": "normalize", "overflow": "inf"}),  # noqa: E501
    15: ("mma", "f16", "f32", {"window_bits": 18, "block_size": 2, "input_conversion": "truncate", "output_rounding": "rz", "zero_floor": -120, "nan": 2143289344, "zero_sign": "positive", "carry_bits": 4, "carry_top": "wrap", "overflow": "inf"}),  # noqa: E501
    19: ("wgmma", "e4m3", "f32", {"window_bits": 21, "block_size": 8, "input_conversion": "rne", "output_rounding": "rz", "zero_floor": -111, "nan": 2143289344, "zero_sign": "positive", "overflow": "saturate"}),  # noqa: E501
}


RECOVERED = {0, 2, 4, 7, 9, 13, 15, 19}  # missed by the old tree, recovered on this one


@pytest.mark.slow
@pytest.mark.parametrize("idx", [
    i if i in RECOVERED else pytest.param(i, marks=pytest.mark.xfail(
        strict=True, reason="sweep miss of issue 25 not yet recovered"))
    for i in sorted(SWEEP_MISSES)])
def test_sweep_miss(tmp_path, idx):
    import ladder_sweep as ls

    fam, fmt, d, p = SWEEP_MISSES[idx]
    dev = ls.device(tmp_path / f"p{idx}.toml", fam, fmt, d, p, 2525 * 1000 + idx)
    dp = dev.datapath(fam, fmt, d)
    ok, why = ls.check(dev, dp, 100_000)
    assert ok, why


# -- the issue's items, checked again on its own profiles --------------------

# (family, A/B format, D, keys over BASE): item 1's tf32 RNA input with 2
# saturating carry bits and an RNA output keeping 20 bits; item 2's F = 30 in
# blocks of 1 under RNE; item 3's e2m3 on sm_120a with a floor only C reaches
ISSUE_PROFILES = {
    "tf32-rna-input-keep20": ("tcgen05", "tf32", "f32",
                              {"window_bits": 17, "block_size": 4, "carry_bits": 2,
                               "carry_top": "saturate", "output_rounding": "rna",
                               "output_frac_bits": 20, "input_conversion": "rna"}),
    "bf16-f30-blocks-of-1-rne": ("mma", "bf16", "f32",
                                 {"window_bits": 30, "block_size": 1, "output_rounding": "rne"}),
    "e2m3-sm120a-floor-100": ("mma", "e2m3", "f32", {"zero_floor": -100, "gpu": "rtx5090"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ISSUE_PROFILES))
def test_the_issues_profiles_pass_an_independent_judge(tmp_path, name):
    """Every key found or left open with a true range, 0 validation
    mismatches, 0 of 100,000 judge cases of another seed, and every range
    left open holding on stress cases and lone tiny products."""
    import ladder_sweep as ls

    fam, fmt, d, p = ISSUE_PROFILES[name]
    dev = ls.device(tmp_path / f"{name}.toml", fam, fmt, d, p, 0)
    ok, why = ls.check(dev, dev.datapath(fam, fmt, d), 100_000)
    assert ok, why


def test_lone_ties_are_a_top_bit_zeros_and_one_more_bit():
    from tcprobe.models.formats import get_format
    from tcprobe.probes.common import lone_ties

    for name in ("bf16", "tf32", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"):
        f = get_format(name)
        ties = lone_ties(name, name)
        assert ties, name
        for z, (m1, m2, top) in ties.items():
            assert 1 << f.frac_bits <= m1 < 2 << f.frac_bits
            assert 1 << f.frac_bits <= m2 < 2 << f.frac_bits
            text = bin(m1 * m2)[2:]
            assert len(text) == top + 1 and text.startswith("1" + "0" * z + "1"), (name, z)
    # bf16: 145 x 226 = 2^15 + 2 (the deepest lone bit 8-bit significands reach)
    assert max(lone_ties("bf16", "bf16")) == 13


TIE_FLOOR = ("tcgen05", "tf32", "f32", {"window_bits": 26, "block_size": 1,
                                         "output_rounding": "rne", "input_conversion": "rne"})


@pytest.mark.slow
def test_a_floor_only_a_lone_tie_shows(tmp_path):
    """Blocks of 1: no two lanes share a block, so only a lone product that is
    a tie at 2^-150 but for a bit 2^-160 (kept by a floor of -134, cut by
    -133) tells the floor; the step and the validation find -133."""
    fam, fmt, d, p = TIE_FLOOR
    _, dp, res = ladder(tmp_path, "tie-floor", fam, fmt, d, **p)
    assert res.fingerprint.zero_floor == -133 and "zero_floor" not in res.fingerprint.undetermined
    assert res.validation.mismatches == 0 and res.validation.parts["ties"][0] > 0


@pytest.mark.slow
def test_the_ladders_validation_fails_a_floor_one_below(tmp_path):
    fam, fmt, d, p = TIE_FLOOR
    _, dp, res = ladder(tmp_path, "tie-floor", fam, fmt, d, **p)
    fp = res.fingerprint.as_dict()
    fp["zero_floor"] = -134
    known = {k: v for k, v in fp.items() if k in Fingerprint.__dataclass_fields__}
    v = validate(res.context, Fingerprint(**known).model(dp))
    assert v.parts["ties"][1] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name,fam,fmt,d,extra", [
    ("bf16-f30-l1-rne", "mma", "bf16", "f32",
     {"window_bits": 30, "block_size": 1, "output_rounding": "rne"}),
    ("f16-f14-c3-rna", "mma", "f16", "f32",
     {"window_bits": 14, "zero_floor": -143, "input_conversion": "rne", "output_rounding": "rna",
      "carry_bits": 3, "carry_top": "normalize"}),
    ("e4m3-f16d", "mma", "e4m3", "f16", {"zero_floor": -18, "nan": 0x7FFF, "window_bits": 14}),
])
def test_undetermined_ranges_hold_on_cases_of_their_own(tmp_path, name, fam, fmt, d, extra):
    """A range named undetermined is one the device cannot tell apart: each
    value in it gives the device's words on stress cases, lone tiny products
    and the validate suites of seeds the ladder never used; the profile's own
    value is in it."""
    from ladder_helpers import false_ranges, stress_cases, tiny_product_cases

    from tcprobe import suites
    from tcprobe.models.cases import Cases

    dev, dp, res = ladder(tmp_path, name, fam, fmt, d, **extra)
    ranges = res.context.ranges
    assert ranges  # these profiles leave a range open
    truth = dev.model(dp).params
    for key, values in ranges.items():
        assert getattr(truth, key) in values, (key, getattr(truth, key), values)
    parts = [stress_cases(dp, 20_000, 11), tiny_product_cases(dp, 30_000, 12)]
    parts += [suites.generate(dp, s, 0xBEEF, 0, 5000)[0]
              for s in ("raw", "finite", "edge", "adversarial") if suites.generators(dp, s)]
    assert false_ranges(res, dp, res.context.complete(Cases.concat(parts))) == {}


def test_gpu_sets_the_architecture(tmp_path):
    """docs/sim-profiles.md: ``gpu`` sets which datapaths exist (sm_120a runs
    kind::f8f6f4 e2m3 on mma.sync); it is not informational."""
    from tcprobe.devices.sim import SimDevice
    from tcprobe.models.datapath import DatapathError

    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in BASE.items()) + '\nfamilies = ["mma"]\n'
    (tmp_path / "plain.toml").write_text(body)
    (tmp_path / "rtx.toml").write_text('gpu = "rtx5090"\n' + body)
    with pytest.raises(DatapathError):
        SimDevice.from_toml(tmp_path / "plain.toml").datapath("mma", "e2m3", "f32")
    dev = SimDevice.from_toml(tmp_path / "rtx.toml")
    assert dev.supports(dev.datapath("mma", "e2m3", "f32"))
    doc = (Path(__file__).resolve().parents[1] / "docs" / "sim-profiles.md").read_text()
    assert "| `gpu` | none | informational |" not in doc


@pytest.mark.slow
def test_validate_model_tells_a_wrong_fingerprint_through_moved_k_orders(tmp_path):
    """A and B moved by K orders of their own (the issue's held-back profile):
    the ladder's fingerprint scores 0 under ``validate --model``, the same
    fingerprint with a window one bit short does not."""
    prof = tmp_path / "lay.toml"
    prof.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in
                              {**BASE, "block_size": 4, "output_rounding": "rne"}.items())
                    + '\nfamilies = ["tcgen05"]\n[layout]\na_k_order = "shuffle:3"\n'
                    'b_k_order = "shuffle:9"\ndump_permutation = "shuffle:5"\n')
    fp = tmp_path / "fp.json"
    r = CliRunner().invoke(cli, ["ladder", "--device", f"sim:{prof}", "--format", "bf16",
                                 "--json", str(fp), "--evidence", "0"])
    assert r.exit_code == 0, r.output
    doc = json.loads(fp.read_text())
    doc["fingerprint"]["window_bits"] -= 1
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(doc))
    for path, code in ((fp, 0), (wrong, 1)):
        r = CliRunner().invoke(cli, ["validate", "--device", f"sim:{prof}", "--format", "bf16",
                                     "--model", str(path), "--cases", "20000", "--seed", "78",
                                     "--out", str(tmp_path / f"v{code}")])
        assert r.exit_code == code, r.output


# misses of later sweeps (--count 20 --judge 100000), recovered: (seed, index) ->
# (family, A/B format, D, profile keys)
LATER_MISSES = {
    # blocks of 1, IEEE zeros, RZ: only the sign of a lone tiny negative
    # product beside C = +0 shows the floor (the ladder took floors -170 to
    # -138 alike; its validation and the judge found -0 read as +0)
    (9140, 10): ("tcgen05", "tf32", "f32", {"window_bits": 21, "block_size": 1, "input_conversion": "rne", "output_rounding": "rz", "zero_floor": -143, "nan": 2147483647, "zero_sign": "ieee", "carry_bits": 5, "carry_top": "wrap", "overflow": "inf"}),  # noqa: E501
    # 4 carry bits that only wrap at e4m3's all-ones significand (1.875: the
    # carry step's largest was 1.75, e4m3's largest at its top exponent) or
    # with C whole in the first of chained blocks (the last block's C keeps 4
    # fraction bits): the ladder took an unbounded accumulator, and its
    # validation failed it (13 of 10,000), so it was never called validated
    (9143, 34): ("tcgen05", "e4m3", "f16", {"window_bits": 14, "block_size": 4, "input_conversion": "rna", "output_rounding": "rne", "zero_floor": -19, "nan": 32767, "output_frac_bits": 4, "zero_sign": "positive", "carry_bits": 4, "carry_top": "wrap", "overflow": "inf"}),  # noqa: E501
}


@pytest.mark.slow
@pytest.mark.parametrize("seed,idx", sorted(LATER_MISSES))
def test_later_sweep_miss(tmp_path, seed, idx):
    import ladder_sweep as ls

    fam, fmt, d, p = LATER_MISSES[(seed, idx)]
    dev = ls.device(tmp_path / f"p{idx}.toml", fam, fmt, d, p, seed * 1000 + idx)
    ok, why = ls.check(dev, dev.datapath(fam, fmt, d), 100_000)
    assert ok, why
