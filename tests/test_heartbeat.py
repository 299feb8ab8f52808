"""The heartbeat of a slow step: a line on stderr once the step has run
past its first delay, then one a period; a quick step prints nothing."""

import time

from tcprobe.console import Heartbeat


def test_a_quick_block_prints_nothing(capsys):
    with Heartbeat(lambda s: f"busy {s:.0f} s", first=2.0):
        pass
    assert capsys.readouterr().err == ""


def test_a_slow_block_says_it_is_running_until_it_ends(capsys):
    with Heartbeat(lambda s: f"busy {s:.2f} s", first=0.05, every=0.05):
        time.sleep(0.4)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and all(x.startswith("busy ") for x in lines)
    time.sleep(0.15)  # none after the block
    assert capsys.readouterr().err == ""
