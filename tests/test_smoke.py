"""tcprobe smoke: passes on a sim device that computes as its profile says,
fails when the datapath changed."""

import json

from click.testing import CliRunner

from tcprobe.cli import main


def test_smoke_on_sim_h200_passes(tmp_path):
    out = tmp_path / "smoke.json"
    r = CliRunner().invoke(main, ["smoke", "--device", "sim:h200", "--cases", "3000", "--json", str(out)])
    assert r.exit_code == 0, r.output
    rep = json.loads(out.read_text())
    assert rep["ok"] and rep["simulated"] and rep["arch"] == "sm_90a"
    names = [s["name"] for s in rep["steps"]]
    assert names == ["sass", "ladder:mma", "validate:mma", "ladder:wgmma", "validate:wgmma"]
    assert rep["steps"][0]["status"] in ("passed", "skipped")
    assert all(s["status"] == "passed" for s in rep["steps"][1:])
    fp = rep["steps"][1]["data"]["fingerprint"]
    assert (fp["window_bits"], fp["block_size"], fp["zero_floor"]) == (25, 16, -133)


def test_smoke_catches_a_changed_datapath(tmp_path):
    # an 'H200' whose window lost a bit: the ladder fingerprints it, but the
    # H200 profile no longer validates
    prof = tmp_path / "drifted.toml"
    prof.write_text('name = "drifted-h200"\ngpu = "H200"\nfamilies = ["mma"]\n'
                    'window_bits = 24\nblock_size = 16\nzero_floor = -133\n'
                    'input_conversion = "truncate"\noutput_rounding = "rz"\n'
                    'zero_sign = "positive"\nnan = 0x7fffffff\n')
    out = tmp_path / "smoke.json"
    r = CliRunner().invoke(main, ["smoke", "--device", f"sim:{prof}", "--cases", "20000",
                                  "--no-sass", "--json", str(out)])
    assert r.exit_code == 1, r.output
    rep = json.loads(out.read_text())
    steps = {s["name"]: s for s in rep["steps"]}
    assert steps["ladder:mma"]["status"] == "passed"
    assert steps["ladder:mma"]["data"]["fingerprint"]["window_bits"] == 24
    assert steps["validate:mma"]["status"] == "failed" and steps["validate:mma"]["data"]["mismatches"] > 0
