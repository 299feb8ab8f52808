"""SIGTERM (``kill``, ``timeout``, a batch scheduler) ends a command as Ctrl-C
does: one ``interrupted`` line, what the command finished kept, and exit 143
(128 + 15), where Python alone dies of the signal with no line and no
clean-up (campaign 15's open item). A parent that ignores SIGTERM is obeyed.
Ctrl-C's own cases are in test_boundary_campaign11."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

_BODY = """
@click.command("stop")
def stop():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)
    click.echo("finished")
"""


def _run_as_cli(ignore_sigterm: bool) -> subprocess.CompletedProcess:
    """The command above added to tcprobe's and run in a child started as the
    command line (SIGINT ignored, as in a background job: SIGTERM is heard all
    the same)."""
    code = ("import os, signal, sys, time\nsys.argv = ['tcprobe', 'stop']\nimport click\n"
            f"import tcprobe\nfrom tcprobe import cli\n{_BODY}\ncli.main.add_command(stop)\n"
            "cli.main()\n")

    def preexec():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore_sigterm else signal.SIG_DFL)

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, preexec_fn=preexec, cwd=tempfile.gettempdir())


def test_sigterm_ends_a_command_with_one_line_and_143():
    r = _run_as_cli(ignore_sigterm=False)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 143, (r.returncode, r.stderr)
    assert lines == ["interrupted"], r.stderr
    assert "finished" not in r.stdout


def test_a_sigterm_the_parent_ignores_stays_ignored():
    r = _run_as_cli(ignore_sigterm=True)
    assert (r.returncode, r.stdout.strip(), r.stderr.strip()) == (0, "finished", "")


def test_the_library_leaves_sigterm_alone():
    code = ("import signal\nimport tcprobe, tcprobe.cli\n"
            "print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=tempfile.gettempdir())
    assert r.stdout.strip() == "True", r.stderr


@pytest.mark.slow
def test_validate_stopped_by_sigterm_keeps_its_chunks_and_resumes(tmp_path):
    cmd = [sys.executable, "-m", "tcprobe", "validate", "--format", "bf16", "--device",
           "sim:h100", "--cases", "400000", "--out", str(tmp_path / "v")]
    p = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    capture = tmp_path / "v" / "capture.tcap"
    deadline = time.monotonic() + 300
    while p.poll() is None and time.monotonic() < deadline and not (
            capture.exists() and capture.stat().st_size > 0):
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=300)
    err = err.decode()
    if p.returncode == 0:
        pytest.skip("the run finished before the signal (a fast machine)")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert p.returncode == 143 and lines[-1].startswith("interrupted"), err
    assert "Traceback" not in err and "--resume" in lines[-1]
    assert os.path.getsize(capture) > 0
    r = subprocess.run([*cmd, "--resume"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "400,000" in r.stdout + r.stderr or "400000" in r.stdout + r.stderr, r.stdout[-2000:]
