"""Ctrl-C while the command line imports (its first 0.3 s, before its own
handling is in place) prints the line every interrupted command prints and
exits 130, not an import's traceback. Imported first by tcprobe.cli, which
calls :func:`restore` once its imports are done; only where Ctrl-C raises
KeyboardInterrupt (not ignored, the main thread). The package's
own first lines install the same handler where Python was started as the
command line; Python's start-up before them (its site module and the
environment's .pth files, runpy finding the package) is outside any
package's reach (docs/campaign-11.md)."""

from __future__ import annotations

import signal
import sys


def _interrupted(signum, frame):
    sys.stderr.write("interrupted\n")
    sys.exit(130)


# tcprobe/__init__.py puts the same handler in place first where Python was
# started as the command line (python -m tcprobe, the tcprobe script).
_EARLY = getattr(sys.modules.get("tcprobe"), "_interrupted", None)
try:
    _NOW = signal.getsignal(signal.SIGINT)
    _BEFORE = None
    if _NOW is signal.default_int_handler or (_EARLY is not None and _NOW is _EARLY):
        signal.signal(signal.SIGINT, _interrupted)
        _BEFORE = signal.default_int_handler
except ValueError:  # not the main thread
    _BEFORE = None


def restore() -> None:
    """Ctrl-C raises KeyboardInterrupt again (the command line's invoke says it)."""
    global _BEFORE
    if _BEFORE is not None and signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, _BEFORE)
    _BEFORE = None
