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


HEARD = False  # a Ctrl-C came after restore() (tcprobe.cli reads it)
TERMINATED = False  # and it was SIGTERM's (tcprobe.cli: exit 143, not 130)


def _noted(signum, frame):
    """Python's own Ctrl-C (KeyboardInterrupt), noted first: a C extension's import
    that it lands in can turn it into another error (numpy's import_array: an
    ImportError, "numpy._core.multiarray failed to import"), which the command
    line then still ends as Ctrl-C, not as an internal error (campaign 12)."""
    global HEARD
    HEARD = True
    raise KeyboardInterrupt


def _terminated(signum, frame):
    """SIGTERM (``kill``, ``timeout``, a batch scheduler) ends a command as
    Ctrl-C does: the command stops at once and says so in one line, with
    everything it finished on disk (validate's chunks, a capture), and the
    process exits 143 (128 + 15), where Python would die of the signal with
    no word and no clean-up. A second SIGTERM is the signal's own: at once."""
    global HEARD, TERMINATED
    HEARD = TERMINATED = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    """Python prints an exception it cannot raise (one leaving a ``__del__``, a
    weakref callback, a ctypes callback such as llvmlite's object-cache notice
    while numba loads kernels) as "Exception ignored in ..." and a traceback.
    A Ctrl-C that lands there is noted, not printed: the command still ends as
    interrupted (cli._no_ctrl_c_lost). Any other such exception is Python's
    own hook's to print."""
    global HEARD
    if isinstance(unraisable.exc_value, KeyboardInterrupt) or \
            unraisable.exc_type is KeyboardInterrupt:
        HEARD = True
        return
    _HOOK_BEFORE(unraisable)


_HOOK_BEFORE = sys.unraisablehook


def restore() -> None:
    """Ctrl-C raises KeyboardInterrupt again (the command line's invoke says it),
    noted in :data:`HEARD`, also where it lands in code whose exceptions
    Python only prints (:func:`_unraisable`); started as the command line,
    SIGTERM does too (:func:`_terminated`)."""
    global _BEFORE, _HOOK_BEFORE
    cli = getattr(sys.modules.get("tcprobe"), "_AS_CLI", False)
    if _BEFORE is not None and signal.getsignal(signal.SIGINT) is _interrupted:
        # the command line notes it; a library import gets Python's own handler back
        signal.signal(signal.SIGINT, _noted if cli else _BEFORE)
    _BEFORE = None
    if not cli:
        return
    if sys.unraisablehook is not _unraisable:
        _HOOK_BEFORE, sys.unraisablehook = sys.unraisablehook, _unraisable
    try:  # also where Ctrl-C is ignored (a background job): SIGTERM is still heard
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:  # not where it is ignored
            signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread
        pass
