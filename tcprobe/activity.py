"""When the command line last showed the user something.

The consoles mark every line they print (a render hook), the compile note
marks its lines, and a :class:`tcprobe.console.Heartbeat` speaks only after
a silence: so a command that is printing is never interrupted, and one that
works quietly never leaves a blank screen for long.
"""

from __future__ import annotations

import os
import time

from tcprobe.speaker import shown as _tell_speaker


def _process_start() -> float:
    """The monotonic time this process started (Linux: its age from /proc,
    so the interpreter's and the imports' start-up count); elsewhere: now."""
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22: starttime
        with open("/proc/uptime") as fh:
            age = float(fh.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()
    return time.monotonic() - age if 0.0 <= age < 60.0 else time.monotonic()


# when the process started: the command line's blank screen is counted from here
START = _process_start()
_LAST = [START]


def mark(hold: float = 0.0) -> None:
    """Something was shown now (``hold``: count the next ``hold`` seconds as
    shown too: a heartbeat's line holds the others off until its next)."""
    _LAST[0] = max(_LAST[0], time.monotonic() + hold)
    _tell_speaker(_LAST[0])


def last_shown() -> float:
    """The monotonic time something was last shown (or is held until)."""
    return _LAST[0]


def idle() -> float:
    """Seconds since something was last shown (negative while held)."""
    return time.monotonic() - _LAST[0]
