"""Issue 37 item 3: commands that do no arithmetic start without numba,
ml_dtypes, torch or the models (``tcprobe --help``'s CPU time is
benchmarks/speed_table.py's figure),
and ``tcprobe warm`` compiles the main jobs' kernels with a line a step."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tcprobe.cli import COMMANDS, main

HEAVY = ("numba", "llvmlite", "ml_dtypes", "torch", "cuda", "tcprobe.models", "tcprobe.matrix")
PROBE = """
import json, sys, time
t0 = time.process_time()
from tcprobe.cli import main
try:
    main({args!r})
except SystemExit as e:
    code = e.code
print(json.dumps({{"code": code, "cpu": time.process_time() - t0,
                  "loaded": sorted(m for m in sys.modules
                                   if m.split(".")[0] in {heavy!r} or m.startswith({heavy!r}))}}))
"""


def _probe(args):
    heavy = tuple(h for h in HEAVY)
    code = PROBE.format(args=list(args), heavy=heavy)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["-h"]])
def test_help_imports_nothing_heavy(args):
    got = _probe(args)
    assert got["code"] in (0, None)
    assert got["loaded"] == [], got["loaded"]
    # the time itself is a benchmark's figure, not a test's (a shared machine):
    # benchmarks/speed_table.py's "tcprobe --help" row


def test_the_help_lists_every_command_with_its_own_summary():
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in r.output
    for name, (_module, summary) in COMMANDS.items():
        assert main.commands[name].get_short_help_str(limit=10 ** 6) == summary, name


def test_a_command_still_runs_and_an_unknown_one_is_one_error():
    r = CliRunner().invoke(main, ["targets", "--help"])
    assert r.exit_code == 0 and "Usage: main targets" in r.output or "targets" in r.output
    r = subprocess.run([sys.executable, "-m", "tcprobe", "nosuch"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "nosuch" in r.stderr


def test_warm_lists_its_steps_without_compiling():
    got = _probe(["warm", "--list"])
    assert got["code"] in (0, None)
    assert not any(m.startswith("numba") for m in got["loaded"])


def test_warm_prints_a_line_before_and_after_each_step():
    r = CliRunner().invoke(main, ["warm", "--only", "dot-f64"])
    assert r.exit_code == 0, r.output
    # (a cold kernel cache adds the compile note on stderr, which the runner mixes in)
    lines = [x for x in r.output.splitlines() if not x.startswith("note: compiling")]
    assert lines[1].startswith("[1/1] dot-f64: f64 DMMA ...")
    assert lines[2].startswith("[1/1] dot-f64: ") and "compiled" in lines[2]
    assert lines[-1].startswith("done: ")


def test_every_command_module_is_registered():
    from pathlib import Path

    import tcprobe.commands as pkg

    folder = Path(pkg.__file__).parent
    defined = {p.stem for p in folder.glob("*.py")
               if p.stem != "__init__" and "\ndef command(" in p.read_text()}
    assert defined == {module for module, _ in COMMANDS.values()}


@pytest.mark.parametrize("args", [["gemm", "--help"], ["fit-gemm", "--help"],
                                  ["warm", "--list"]])
def test_command_help_loads_no_numba(args):
    got = _probe(args)
    assert got["code"] in (0, None)
    heavy = [m for m in got["loaded"] if m.split(".")[0] in ("numba", "llvmlite", "ml_dtypes",
                                                             "torch", "cuda")
             or m.startswith("tcprobe.matrix")]
    assert heavy == [], heavy
