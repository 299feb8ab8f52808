"""The heartbeat of slow work: a line on stderr once nothing has been shown
for its quiet time, then one a period; a quick block, or one that keeps
printing, gets none; TCPROBE_HEARTBEAT=0 turns it off; the command line
wears one around every command."""

import os
import subprocess
import sys
import time

import pytest

from tcprobe import activity
from tcprobe.console import Heartbeat, err_console


@pytest.fixture(autouse=True)
def heartbeat_on(monkeypatch):
    monkeypatch.setenv("TCPROBE_HEARTBEAT", "1")  # conftest turns it off for the other tests


def test_a_quick_block_prints_nothing(capsys):
    with Heartbeat(lambda s: f"busy {s:.0f} s", quiet=2.0):
        pass
    assert capsys.readouterr().err == ""


def test_a_slow_silent_block_says_it_is_running_until_it_ends(capsys):
    with Heartbeat(lambda s: f"busy {s:.2f} s", quiet=0.3, every=0.6):
        time.sleep(1.7)
    lines = capsys.readouterr().err.splitlines()
    assert 2 <= len(lines) <= 3 and all(x.startswith("busy ") for x in lines)
    time.sleep(0.7)  # none after the block
    assert capsys.readouterr().err == ""


def test_a_block_that_keeps_printing_is_not_interrupted(capsys):
    with Heartbeat(lambda s: "busy", quiet=0.5):
        for i in range(8):
            err_console.print(f"line {i}")
            time.sleep(0.2)
    assert "busy" not in capsys.readouterr().err


def test_an_inner_heartbeat_holds_the_outer_one_off(capsys):
    with Heartbeat(lambda s: "outer", quiet=1.2, every=1.2), \
            Heartbeat(lambda s: "inner", quiet=0.3, every=0.8):
        time.sleep(2.0)
    lines = capsys.readouterr().err.splitlines()
    assert lines and set(lines) == {"inner"}


def test_switched_off(monkeypatch, capsys):
    monkeypatch.setenv("TCPROBE_HEARTBEAT", "0")
    with Heartbeat(lambda s: "busy", quiet=0.1):
        time.sleep(0.5)
    assert capsys.readouterr().err == ""
    assert activity.idle() > -1


def test_a_quiet_command_says_it_is_working(tmp_path):
    """A command whose work is silent for seconds shows a line meanwhile
    (the command line's own heartbeat, around every command)."""
    env = {**os.environ, "TCPROBE_HEARTBEAT": "1"}
    r = subprocess.run([sys.executable, "-c",
                        "import time, click\n"
                        "from tcprobe.cli import main\n"
                        "@main.command('nap', hidden=True)\n"
                        "def nap():\n"
                        "    time.sleep(3.0)\n"
                        "    click.echo('done')\n"
                        "main(['nap'])\n"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert any(f"tcprobe nap: working ({n} s)" in r.stderr for n in (1, 2, 3)), r.stderr
