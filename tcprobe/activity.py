"""When the command line last showed the user something.

The consoles mark every line they print (a render hook), the compile note
marks its lines, and a :class:`tcprobe.console.Heartbeat` speaks only after
a silence: so a command that is printing is never interrupted, and one that
works quietly never leaves a blank screen for long.
"""

from __future__ import annotations

import time

_LAST = [time.monotonic()]


def mark(hold: float = 0.0) -> None:
    """Something was shown now (``hold``: count the next ``hold`` seconds as
    shown too: a heartbeat's line holds the others off until its next)."""
    _LAST[0] = max(_LAST[0], time.monotonic() + hold)


def idle() -> float:
    """Seconds since something was last shown (negative while held)."""
    return time.monotonic() - _LAST[0]
