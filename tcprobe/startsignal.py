"""Ctrl-C while the command line imports (its first 0.3 s, before its own
handling is in place) prints the line every interrupted command prints and
exits 130, not an import's traceback. Imported first by tcprobe.cli, which
calls :func:`restore` once its imports are done; only where Ctrl-C raises
KeyboardInterrupt (not ignored, the main thread). Python's own start-up
before this module (about 0.1 s) is outside its reach."""

from __future__ import annotations

import signal
import sys


def _interrupted(signum, frame):
    sys.stderr.write("interrupted\n")
    sys.exit(130)


try:
    _BEFORE = (signal.signal(signal.SIGINT, _interrupted)
               if signal.getsignal(signal.SIGINT) is signal.default_int_handler else None)
except ValueError:  # not the main thread
    _BEFORE = None


def restore() -> None:
    """Ctrl-C raises KeyboardInterrupt again (the command line's invoke says it)."""
    global _BEFORE
    if _BEFORE is not None and signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, _BEFORE)
    _BEFORE = None
