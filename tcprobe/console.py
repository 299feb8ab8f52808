"""The shared rich console and the one-line error convention of the CLI.

Every message and every user-supplied string is printed as plain text:
:func:`say`, :func:`fail` and :func:`note` never read console markup in
what they are given, and :func:`plain` escapes a string for a rich table
cell, so a word such as ``[/x]`` or ``tcprobe[cuda]`` prints as written.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

PIPED_WIDTH = 140  # page width when output goes to a file or a pipe and COLUMNS is unset


def _width(stream) -> int | None:
    """The terminal's width on a terminal; COLUMNS, else a wide page, when piped."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if stream.isatty() else PIPED_WIDTH


console = Console(highlight=False, width=_width(sys.stdout))
err_console = Console(stderr=True, highlight=False, width=_width(sys.stderr))


class UsageError(ValueError):
    """Bad input from the user: printed as one line, exit status 2."""


def plain(text) -> str:
    """``text`` escaped so that a rich table or markup string shows it as written."""
    return escape(str(text))


def styled(*parts) -> Text:
    """A line of plain strings and (string, style) pairs; no markup is read."""
    return Text.assemble(*[(str(p[0]), p[1]) if isinstance(p, tuple) else str(p) for p in parts])


def say(*parts, err: bool = False) -> None:
    """Print one line of plain strings and (string, style) pairs."""
    (err_console if err else console).print(styled(*parts), soft_wrap=True)


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` (plain text) on stderr and exit with ``code``."""
    one_line = " ".join(str(message).split())
    say(("error:", "bold red"), " ", one_line, err=True)
    sys.exit(code)


def note(message: str) -> None:
    """A one-line remark on stderr (for example: no GPU, using a sim device)."""
    say(("note:", "yellow"), " ", str(message), err=True)


def send_output_to_stderr(on: bool = True) -> None:
    """Human output goes to stderr (stdout carries JSON, ``--json -``);
    ``on=False`` sends it back to stdout (each command starts so)."""
    console.stderr = on


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
            print(f"note: compiling kernels for {label} (first run only; later runs load "
                  f"them from {kernel_cache.FOLDER})", file=sys.stderr, flush=True)
        live["depth"] += 1
        live["count"] += 1
        if terminal and not quiet:  # a status line that moves: compiles take minutes cold
            sys.stderr.write(f"\r\033[K  compiling ({live['count']}) {name}"[:100])
            sys.stderr.flush()
            live["shown"] = True

    def done():
        live["depth"] = max(0, live["depth"] - 1)
        if live["depth"] == 0:
            _clear(live)

    # when numba loads (a command that only reads the models' tables never loads it)
    numba_internals.when_numba_loaded(lambda: numba_internals.on_compile_start(announce, done))


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


class ProgressBar:
    """A transient progress bar on stderr, used as a ``progress(done, total)``
    callback (a context manager: it starts and stops the bar)."""

    def __init__(self, label: str):
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self.label = label
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.percentage:>3.0f}%"), TimeRemainingColumn(),
                            console=err_console, transient=True)
        self.task = None

    def __enter__(self):
        self.bar.start()
        return self

    def __call__(self, done: int, total: int) -> None:
        if self.task is None:
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def __exit__(self, *exc):
        self.bar.stop()
        return False


def write_json(path: str | Path, payload: dict) -> None:
    """Write ``payload`` as indented JSON (``-``: to stdout), creating parent
    folders: to a temporary file beside ``path`` renamed over it, so a link
    planted there is replaced, never written through, and on a full disk
    the old file stays whole (:func:`tcprobe.outfiles.write_atomic`)."""
    from tcprobe.outfiles import write_atomic

    text = json_text(payload)
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, text)


def json_text(payload) -> str:
    """``payload`` as indented JSON text, numpy values as plain ones."""
    return json.dumps(payload, indent=2, default=_jsonable) + "\n"


def _jsonable(x):
    import numpy as np

    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (set, tuple)):
        return list(x)
    raise TypeError(f"cannot write {type(x).__name__} as JSON")
