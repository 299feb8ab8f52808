"""The notes the library itself prints on stderr (the CLI prints the rest):
the one a cold run prints while numba compiles (a kernel cache that is
empty for a datapath), with on a terminal a status line that moves, and the
one ``import tcprobe.torch`` says before it starts torch's own import. Apart from :mod:`tcprobe.console` so that the library's calls
(``tcprobe.matmul``, ``emulate``) turn it on without importing rich."""

from __future__ import annotations

import contextlib
import contextvars
import sys

from tcprobe.activity import mark as _mark

_COMPILE_NOTES = {"listening": False, "shown": set(), "quiet": contextvars.ContextVar(
    "tcprobe_quiet_compiles", default=False)}


def announce_compiles() -> None:
    """From now on in this process: one ``note: compiling kernels for
    DATAPATH (first run only ...)`` line on stderr the first time numba
    compiles for a datapath, so that a cold run never sits on a blank screen
    (numba's compile events; the datapath is the one the engine named last).
    The CLI turns it on for every command, tcprobe.matmul and emulate on
    their first call; quiet_compiles() silences it for a block."""
    if _COMPILE_NOTES["listening"]:
        return
    _COMPILE_NOTES["listening"] = True
    from tcprobe.models import kernel_cache, numba_internals

    live = {"depth": 0, "count": 0, "shown": False}
    terminal = sys.stderr.isatty()

    def announce(name):
        quiet = _COMPILE_NOTES["quiet"].get()
        label = kernel_cache.WORKING_ON or "this run"
        if label not in _COMPILE_NOTES["shown"] and not quiet:
            _COMPILE_NOTES["shown"].add(label)
            _clear(live)
            say(f"note: compiling kernels for {label} (first run only; later runs load "
                 f"them from {kernel_cache.FOLDER})")
        live["depth"] += 1
        live["count"] += 1
        if terminal and not quiet:  # a status line that moves: compiles take minutes cold
            sys.stderr.write(f"\r\033[K  compiling ({live['count']}) {name}"[:100])
            sys.stderr.flush()
            _mark()
            live["shown"] = True

    def done():
        live["depth"] = max(0, live["depth"] - 1)
        if live["depth"] == 0:
            _clear(live)

    # when numba loads (a command that only reads the models' tables never loads it)
    numba_internals.when_numba_loaded(lambda: numba_internals.on_compile_start(announce, done))


def say(line: str) -> None:
    """One note line on stderr: the library's one way to speak (the CLI prints the rest)."""
    print(line, file=sys.stderr, flush=True)
    _mark()


def _clear(live: dict) -> None:
    """Erase the compile status line, if one is showing."""
    if live["shown"]:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
        live["shown"] = False


@contextlib.contextmanager
def quiet_compiles(quiet: bool = True):
    """A block in which announce_compiles() says nothing (``progress=False``)."""
    token = _COMPILE_NOTES["quiet"].set(quiet)
    try:
        yield
    finally:
        _COMPILE_NOTES["quiet"].reset(token)
