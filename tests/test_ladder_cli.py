"""tcprobe ladder on the command line: tables, JSON, labels, errors."""

import json

from cli_helpers import one_error
from click.testing import CliRunner

from tcprobe.cli import main


def run(*args):
    return CliRunner().invoke(main, ["ladder", *args], catch_exceptions=False)


def test_default_device_runs_the_whole_ladder_on_a_labelled_sim(tmp_path):
    out = tmp_path / "l.json"
    r = run("--format", "bf16", "--json", str(out), "--validate", "2000")
    assert r.exit_code == 0, r.output
    assert "sim:b200" in r.output and "(simulated)" in r.output
    for step in ("slice", "layout", "internal", "block", "zero", "fingerprint"):
        assert step in r.output
    data = json.loads(out.read_text())
    assert data["simulated"] is True and data["device"]["simulated"] is True
    assert data["datapath"] == "tcgen05.f16.bf16.f32.k16"
    assert data["fingerprint"]["window_bits"] == 25 and data["fingerprint"]["zero_floor"] == -133
    assert data["validation"]["mismatches"] == 0 and data["validation"]["cases"] == 2000
    assert set(data["cases_per_step"]) >= {"slice", "layout", "zero"}
    assert data["cases_per_step"]["layout"] > 0
    ev = next(s for s in data["steps"] if s["step"] == "internal")["evidence"]
    assert ev and ev[0]["words"] and ev[0]["c"].startswith("0x")


def test_steps_run_alone_with_their_prerequisites(tmp_path):
    out = tmp_path / "b.json"
    r = run("--format", "tf32", "--device", "sim:a100", "--steps", "block", "--json", str(out))
    assert r.exit_code == 0, r.output
    steps = {s["step"]: s for s in json.loads(out.read_text())["steps"]}
    assert steps["block"]["values"]["block_size"] == 4 and not steps["block"]["prerequisite"]
    assert steps["internal"]["prerequisite"] and steps["layout"]["prerequisite"]


def test_bad_input_is_one_line_and_exit_2():
    for args, msg in ((["--format", "bf17"], "unknown format"),
                      (["--format", "bf16", "--steps", "slice,nope"], "unknown step"),
                      (["--format", "bf16", "--device", "sim:zz"], "unknown sim profile"),
                      (["--format", "bf16", "--device", "sim:v100"], "does not run"),
                      (["--format", "e2m1", "--instr", "wgmma", "--device", "sim:h100"], "tcgen05")):
        r = run(*args)
        one_error(r, msg, notes=True)
