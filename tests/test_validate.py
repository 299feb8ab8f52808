"""tcprobe validate: case counts, resume equals an uninterrupted run (also
after a real kill), exit statuses, reproducers that rerun, reports."""

import json
import os
import re
import shlex
import signal
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import one_error, sigint_at_default
from click.testing import CliRunner
from model_device import altered

from tcprobe import suites
from tcprobe.capture import binary, load
from tcprobe.cli import main
from tcprobe.devices.registry import open_device
from tcprobe.models import registry
from tcprobe.models.datapath import Datapath
from tcprobe.models.profiles import PROFILES
from tcprobe.reports.validate import html, markdown, report
from tcprobe.validation import validate as v

BF16 = Datapath.parse("mma.bf16.f32.k16")


@pytest.mark.parametrize("text,n", [("1e6", 1_000_000), ("1_000_000", 1_000_000),
                                    ("1000000", 1_000_000), ("1,000,000", 1_000_000),
                                    ("10_0", 100), ("12,345", 12_345), ("1,000k", 10**6),
                                    ("2.5e3", 2500), ("1E5", 100_000), (" 42 ", 42), (7, 7)])
def test_case_counts(text, n):
    assert v.parse_count(text) == n


@pytest.mark.parametrize("text", ["1e-3", "2.5", "abc", "0", "-5", "1e", "e6", "1.2.3e4", "",
                                  "1_0_", "_10", "1__0", "1,5", "1,0000", "10,000,00", ",100",
                                  "1_e6"])
def test_bad_case_counts(text):
    from tcprobe.validation.counts import CountError

    with pytest.raises(CountError):
        v.parse_count(text)


def counts(result):
    return {t.model.name: (t.total, dict(t.by_suite), dict(t.by_generator), t.first,
                           dict(t.first_by_suite)) for t in result.tallies}


def models_for(dev):
    return [registry.auto(BF16, dev.info()["gpu"]), registry.resolve("ieee", BF16)]


def test_resume_equals_an_uninterrupted_run(tmp_path):
    dev = open_device("sim:h200", "mma")
    plan = suites.Plan(suites.SUITES, 30_000, chunk=4096)
    whole = v.run(BF16, dev, models_for(dev), plan, 7, capture=tmp_path / "whole.tcap")
    assert whole.complete and whole.cases_run == 30_000

    stop_at = 4 * 4096  # interrupted after four chunks, as Ctrl-C would

    def interrupt(done, total):
        if done >= stop_at:
            raise KeyboardInterrupt

    part = tmp_path / "part.tcap"
    with pytest.raises(KeyboardInterrupt):
        v.run(BF16, dev, models_for(dev), plan, 7, capture=part, progress=interrupt)
    assert len(load(part)[0]) == stop_at
    resumed = v.run(BF16, dev, models_for(dev), plan, 7, capture=part, resume=True)
    assert resumed.resumed_cases == stop_at and resumed.complete
    assert counts(resumed) == counts(whole)
    assert resumed.suite_cases == whole.suite_cases
    assert part.read_bytes() == (tmp_path / "whole.tcap").read_bytes()


def test_resume_after_a_torn_chunk(tmp_path):
    dev = open_device("sim:b200", "mma")
    plan = suites.Plan(("raw", "adversarial"), 12_000, chunk=2000)
    whole = v.run(BF16, dev, models_for(dev), plan, 3, capture=tmp_path / "w.tcap")
    data = (tmp_path / "w.tcap").read_bytes()
    torn = tmp_path / "t.tcap"
    torn.write_bytes(data[: len(data) // 2])  # a crash in the middle of a write
    resumed = v.run(BF16, dev, models_for(dev), plan, 3, capture=torn, resume=True)
    assert counts(resumed) == counts(whole)
    assert torn.read_bytes() == data


def test_resume_refuses_other_options(tmp_path):
    dev = open_device("sim:b200", "mma")
    plan = suites.Plan(("raw",), 3000, chunk=1000)
    v.run(BF16, dev, models_for(dev), plan, 3, capture=tmp_path / "c.tcap")
    with pytest.raises(v.ValidateError, match="seed"):
        v.run(BF16, dev, models_for(dev), plan, 4, capture=tmp_path / "c.tcap", resume=True)
    with pytest.raises(v.ValidateError, match="exists"):
        v.run(BF16, dev, models_for(dev), plan, 3, capture=tmp_path / "c.tcap")
    other = open_device("sim:h200", "mma")
    with pytest.raises(v.ValidateError, match="same device"):
        v.run(BF16, other, models_for(other), plan, 3, capture=tmp_path / "c.tcap", resume=True)


def _cmd(out, cases="60000"):
    return [sys.executable, "-m", "tcprobe", "validate", "--format", "bf16", "--device",
            "sim:b200", "--cases", cases, "--out", str(out), "--chunk", "2048", "--shrink", "0",
            "--jobs", "1"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_run_resumes_to_the_same_counts(tmp_path, sig):
    """A real process killed halfway (SIGKILL: a crash; SIGINT: Ctrl-C),
    then --resume: the final report equals an uninterrupted run's. The
    process signals itself once its capture holds 12 chunks (the writer's
    test hook), and starts with SIGINT at its default even where this test
    runs as a background job of a non-interactive shell, which ignores it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop(binary.STOP_HOOK_ENV, None)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(killed, "600000"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**env, binary.STOP_HOOK_ENV: f"12:{sig.name}"},
                            preexec_fn=sigint_at_default)
    cap = killed / "capture.tcap"
    _, err = proc.communicate(timeout=120)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert b"--resume" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    kept = binary.Scan.of(cap, strict=False).n_records
    assert kept == 12 * 2048
    r = subprocess.run(_cmd(killed, "600000") + ["--resume"], capture_output=True, env=env)
    assert r.returncode == 0, r.stderr  # the selected model (auto) never mismatches
    rep_killed = json.loads((killed / "report.json").read_text())
    whole = tmp_path / "whole"
    subprocess.run(_cmd(whole, "600000"), capture_output=True, env=env)
    rep_whole = json.loads((whole / "report.json").read_text())
    strip = lambda rep: [(m["name"], m["mismatches"], m["by_suite"], m["by_generator"])  # noqa: E731
                         for m in rep["models"]]
    assert strip(rep_killed) == strip(rep_whole)
    assert rep_killed["cases"]["resumed"] == kept
    assert (killed / "capture.tcap").read_bytes() == (whole / "capture.tcap").read_bytes()


def test_cli_exit_status_and_files(tmp_path):
    runner = CliRunner()
    out = tmp_path / "ok"
    r = runner.invoke(main, ["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:b200", "--cases",
                             "20_000", "--out", str(out), "--json", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    assert "b200-hmma" in r.output and "ieee" in r.output
    for f in ("capture.tcap", "report.json", "report.md", "report.html"):
        assert (out / f).exists()
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["models"][0]["mismatches"] == 0 and rep["models"][1]["mismatches"] > 0
    assert rep["exit_status"] == 0
    r = runner.invoke(main, ["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:b200", "--cases",
                             "1e4", "--model", "ieee", "--out", str(tmp_path / "bad")])
    assert r.exit_code == 1
    r = runner.invoke(main, ["validate", "--format", "bf17", "--device", "sim:b200"])
    one_error(r, "unknown format")
    r = runner.invoke(main, ["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:b200", "--cases",
                             "1e-2", "--out", str(tmp_path / "x")])
    one_error(r, "whole number")
    r = runner.invoke(main, ["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:b200", "--cases",
                             "20000", "--out", str(out)])
    one_error(r, "--resume")
    r = runner.invoke(main, ["validate", "--format", "bf16", "--instr", "mma", "--device", "sim:b200", "--cases",
                             "20000", "--out", str(out), "--resume"])
    assert r.exit_code == 0 and "20,000 of them from the capture" in r.output


def test_default_device_is_a_sim_with_a_note(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--format", "bf16", "--cases", "3000",
                                  "--out", str(tmp_path / "d"), "--shrink", "0"])
    assert r.exit_code == 0, r.output
    assert "sim:b200" in r.output


def test_reproducers_rerun_and_are_small(tmp_path):
    truth = PROFILES["b200-hmma"].model(BF16)
    dev = open_device("sim:b200", "mma")
    plan = suites.Plan(suites.SUITES, 20_000, chunk=5000)
    ieee = registry.resolve("ieee", BF16)
    res = v.run(BF16, dev, [ieee, truth], plan, 1, capture=None)
    v.make_reproducers(res, dev, per_model=8)
    reps = res.reproducers["ieee"]
    assert len(reps) == 8 and not res.reproducers["b200-hmma"]
    for rep in reps:
        assert rep["lanes"] <= rep["lanes_before"]
        args = shlex.split(rep["command"])
        assert args[:2] == ["tcprobe", "run-case"]
        r = CliRunner().invoke(main, args[1:])
        assert r.exit_code == 1, r.output  # the model still differs from the device
        dev_word = rep["device_word"].split()[0]
        assert dev_word in r.output and rep["model_word"].split()[0] in r.output
    assert min(r["lanes"] for r in reps) <= 2


def test_shrunk_case_still_mismatches_and_is_simpler():
    from tcprobe.validation.shrink import active_lanes, shrink

    truth = PROFILES["b200-hmma"].model(BF16)
    dev = altered(BF16, truth.params, "w24", window_bits=24)
    cases, _ = suites.generate(BF16, "raw", 0, 0, 4000)
    bad = np.flatnonzero(dev.run(BF16, cases) != truth.evaluate(cases))
    assert bad.size
    case = cases.take([int(bad[0])])
    s = shrink(BF16, dev, truth, case)
    assert s.device_word != s.model_word
    assert int(dev.run(BF16, s.case)[0]) == s.device_word
    assert active_lanes(s.case) <= active_lanes(case)
    assert active_lanes(s.case) < 16
    with pytest.raises(ValueError, match="does not mismatch"):
        shrink(BF16, dev, dev.model, case)


def test_run_case_matches(tmp_path):
    r = CliRunner().invoke(main, ["run-case", "--device", "sim:h200", "--datapath",
                                  "mma.bf16.f32.k16", "--a", "0x3f80,0x3f80", "--b", "0x3f80,0xbf80",
                                  "--c", "0x3f800000", "--model", "auto", "--json",
                                  str(tmp_path / "one.json")])
    assert r.exit_code == 0, r.output
    got = json.loads((tmp_path / "one.json").read_text())
    assert got["device_word"] == "0x3f800000" and got["models"][0]["same"]
    r = CliRunner().invoke(main, ["run-case", "--datapath", "mma.bf16.f32.k16", "--a", "0x1ffff"])
    one_error(r, "does not fit", notes=True)


def test_reports(tmp_path):
    dev = open_device("sim:b200", "mma")
    plan = suites.Plan(suites.SUITES, 20_000, chunk=5000)
    res = v.run(BF16, dev, models_for(dev), plan, 2, capture=tmp_path / "c.tcap")
    v.make_reproducers(res, dev, per_model=2)
    rep = report(res)
    for key in ("schema", "datapath", "device", "seed", "suites", "cases", "models",
                "suite_cases", "generator_cases", "generators", "exit_status", "capture"):
        assert key in rep
    json.dumps(rep)
    ieee = rep["models"][1]
    assert ieee["mismatches"] == sum(c["mismatches"] for c in ieee["by_suite"].values())
    assert ieee["mismatches"] == sum(c["mismatches"] for c in ieee["by_generator"].values())
    kept = len(ieee["points"]["spread"])
    assert kept == ieee["points"]["kept"] and 0.9 * min(ieee["mismatches"], v.POINTS_PER_MODEL) \
        <= kept <= v.POINTS_PER_MODEL
    md = markdown(rep)
    assert "| suite | cases |" in md and "tcprobe run-case" in md
    page = html(rep)
    assert "<svg" in page and page.count("<circle") > 100
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # self-contained
    assert "<script" not in page
