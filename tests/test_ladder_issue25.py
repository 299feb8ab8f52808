"""Issue 25: the ladder never calls a wrong model validated.

Small sim profiles of the issue's items (a tf32 input rounded RNA, blocks
of 1 under a window wider than the output, a floor that binds only through
C, a K-moving layout checked by ``validate --model``), the ladder's own
validation failing on a wrong key, and the misses of
``benchmarks/ladder_sweep.py --seed 2525 --count 20 --judge 100000``
pinned (xfail until the ladder recovers them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcprobe.cli import main as cli
from tcprobe.fingerprint import Fingerprint
from tcprobe.ladder import run_ladder, validate

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
# before issue 25's fixes; only profile 4 is still missed (xfail)
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


RECOVERED = {0, 2, 7, 9, 13, 15, 19}  # missed by the old tree, recovered on this one


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
