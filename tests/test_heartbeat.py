"""The heartbeat of slow work: a line on stderr once nothing has been shown
for its quiet time, then one a period; a quick block, or one that keeps
printing, gets none; TCPROBE_HEARTBEAT=0 turns it off; the command line
wears one around every command. Where stderr is a real file the lines come
from a child process (tcprobe.speaker), so work that holds the interpreter
lock cannot hold them up; elsewhere from a thread: both are tested."""

import os
import subprocess
import sys
import time

import pytest

from tcprobe import activity, speaker
from tcprobe.console import Heartbeat, err_console


@pytest.fixture(autouse=True)
def heartbeat_on(monkeypatch):
    monkeypatch.setenv("TCPROBE_HEARTBEAT", "1")  # conftest turns it off for the other tests


@pytest.fixture(params=["speaker", "thread"])
def captured(request):
    """stderr as a real file (capfd: the speaker process writes to it) or as
    a Python stream with no descriptor (capsys: the thread)."""
    cap = request.getfixturevalue("capfd" if request.param == "speaker" else "capsys")
    yield cap
    assert speaker._STATE["speaker"] is None  # every speaker ended with its block


def _lines(cap) -> list[str]:
    return cap.readouterr().err.splitlines()


def test_the_speaker_is_used_where_stderr_is_a_file(capfd):
    with Heartbeat("busy", quiet=5.0) as beat:
        assert beat._key is not None and speaker._STATE["speaker"] is not None
        assert not beat._thread.is_alive()
    assert speaker._STATE["speaker"] is None


def test_a_quick_block_prints_nothing(captured):
    with Heartbeat("busy {s} s", quiet=2.0):
        pass
    assert captured.readouterr().err == ""


def test_a_slow_silent_block_says_it_is_running_until_it_ends(captured):
    with Heartbeat("busy {s} s", quiet=0.3, every=0.6):
        time.sleep(1.7)
    lines = _lines(captured)
    assert 2 <= len(lines) <= 3 and all(x.startswith("busy ") for x in lines), lines
    assert lines[0] in ("busy 0 s", "busy 1 s")  # whole seconds since the block began
    time.sleep(0.7)  # none after the block
    assert captured.readouterr().err == ""


def test_a_block_that_keeps_printing_is_not_interrupted(captured):
    with Heartbeat("busy", quiet=0.5):
        for i in range(8):
            err_console.print(f"line {i}")
            time.sleep(0.2)
    assert "busy" not in captured.readouterr().err


def test_an_inner_heartbeat_holds_the_outer_one_off(captured):
    with Heartbeat("outer", quiet=1.2, every=1.2), \
            Heartbeat("inner", quiet=0.3, every=0.8):
        time.sleep(2.0)
    lines = _lines(captured)
    assert lines and set(lines) == {"inner"}


def test_the_outer_heartbeat_speaks_again_after_the_inner_one_ends(captured):
    with Heartbeat("outer", quiet=0.4, every=0.4):
        with Heartbeat("inner", quiet=0.2, every=0.5):
            time.sleep(0.9)
        inner = _lines(captured)
        time.sleep(1.0)
    assert inner and set(inner) == {"inner"}
    assert "outer" in _lines(captured)


def test_the_count_starts_where_asked(captured):
    with Heartbeat("since {s} s", quiet=0.2, every=5.0, since=time.monotonic() - 30.0):
        time.sleep(0.6)
    assert _lines(captured) == ["since 30 s"]


def test_switched_off(monkeypatch, captured):
    monkeypatch.setenv("TCPROBE_HEARTBEAT", "0")
    before = activity.last_shown()
    with Heartbeat("busy", quiet=0.1):
        time.sleep(0.5)
    assert captured.readouterr().err == ""
    assert activity.last_shown() == before  # not even the block's start is marked


def _nap(body: str, tmp_path):
    env = {**os.environ, "TCPROBE_HEARTBEAT": "1"}
    return subprocess.run([sys.executable, "-c",
                           "import time, ctypes, click\n"
                           "from tcprobe.cli import main\n"
                           "@main.command('nap', hidden=True)\n"
                           "def nap():\n"
                           f"    {body}\n"
                           "    click.echo('done')\n"
                           "main(['nap'])\n"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)


def test_a_quiet_command_says_it_is_working(tmp_path):
    """A command whose work is silent for seconds shows a line meanwhile
    (the command line's own heartbeat, around every command)."""
    r = _nap("time.sleep(3.0)", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert any(f"tcprobe nap: working ({n} s)" in r.stderr for n in (1, 2, 3)), r.stderr


def test_work_holding_the_interpreter_lock_does_not_hold_the_heartbeat(tmp_path):
    """libc's sleep called through ctypes.PyDLL keeps the interpreter lock
    for 4 s, as a long numba compile does: a thread could not speak until it
    returns (its first line would say 4 s or more); the speaker does."""
    r = _nap("ctypes.PyDLL(None).sleep(4)", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    early = [n for n in (1, 2, 3) if f"tcprobe nap: working ({n} s)" in r.stderr]
    assert early, r.stderr


def test_the_heartbeat_speaks_while_the_command_module_loads(tmp_path):
    """The heartbeat opens before the command's module is imported (its
    import, numba's included, took the first line past 2 s on a loaded
    machine): a load that takes 3 s shows the line, named after the
    command, during it."""
    env = {**os.environ, "TCPROBE_HEARTBEAT": "1"}
    code = ("import time, click\n"
            "from tcprobe import cli\n"
            "@click.command('nap')\n"
            "def nap():\n"
            "    click.echo('done')\n"
            "def slow_load(name):\n"
            "    time.sleep(3.0)\n"
            "    return nap\n"
            "cli._load_command = slow_load\n"
            "cli.COMMANDS['nap'] = ('nap', 'a nap')\n"
            "cli.main(['nap'])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert any(f"tcprobe nap: working ({n} s)" in r.stderr for n in (1, 2, 3)), r.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_a_killed_command_leaves_no_speaker_behind(tmp_path):
    """The speaker ends with its command, even one killed outright (the
    pipe's end of file)."""
    env = {**os.environ, "TCPROBE_HEARTBEAT": "1"}
    code = ("import os, time\n"
            "from tcprobe.console import Heartbeat\n"
            "from tcprobe import speaker\n"
            "with Heartbeat('busy', quiet=0.2):\n"
            "    print(speaker._STATE['speaker'].proc.pid, flush=True)\n"
            "    time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    child = int(proc.stdout.readline())
    time.sleep(0.5)
    proc.kill()
    proc.wait()
    for _ in range(40):  # the speaker notices the end of file within a tick
        try:
            with open(f"/proc/{child}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    break  # ended; a container's init may be slow to reap it
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the speaker outlived its command")
    assert "busy" in proc.stderr.read()
