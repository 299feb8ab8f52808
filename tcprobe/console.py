"""The shared rich console and the one-line error convention of the CLI.

Every message and every user-supplied string is printed as plain text:
:func:`say`, :func:`fail` and :func:`note` never read console markup in
what they are given, and :func:`plain` escapes a string for a rich table
cell, so a word such as ``[/x]`` or ``tcprobe[cuda]`` prints as written.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from rich.console import Console, RenderHook
from rich.markup import escape
from rich.text import Text

from tcprobe.activity import idle as _idle
from tcprobe.activity import mark as _mark

PIPED_WIDTH = 140  # page width when output goes to a file or a pipe and COLUMNS is unset
# The narrowest page: below it a table has no room for its columns and rich
# drops them whole (COLUMNS=40 showed one of targets' eight columns, COLUMNS=5
# none), so a narrower COLUMNS or terminal gets this width and wraps its lines.
MIN_WIDTH = 80


def _width(stream) -> int | None:
    """The terminal's width on a terminal (None: rich follows it); COLUMNS,
    else a wide page, when piped; never below MIN_WIDTH."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    if not stream.isatty():
        return PIPED_WIDTH
    try:
        return None if os.get_terminal_size(stream.fileno()).columns >= MIN_WIDTH else MIN_WIDTH
    except (OSError, ValueError, AttributeError):
        return None


EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell shows for a tool whose reader left


def closed_pipe() -> None:
    """The reader of stdout went away (``tcprobe ... | head -1``): nothing more is
    written there, no error line, exit 141 as a tool killed by SIGPIPE. One rule
    for rich's consoles and the command line's own writes (``gemm --out -`` ended
    in exit 3, "internal error (OSError: 4096 requested and 0 written)")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    raise SystemExit(EXIT_CLOSED_PIPE)


class _Console(Console):
    def on_broken_pipe(self) -> None:  # rich's default: SystemExit(1), a tcprobe "mismatch"
        self.quiet = True
        closed_pipe()


console = _Console(highlight=False, width=_width(sys.stdout))
err_console = _Console(stderr=True, highlight=False, width=_width(sys.stderr))


class _MarkShown(RenderHook):
    """Marks every print of a console as something shown (tcprobe.activity)."""

    def process_renderables(self, renderables):
        _mark()
        return renderables


console.push_render_hook(_MarkShown())
err_console.push_render_hook(_MarkShown())


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


def as_written(text: str) -> str:
    """``text`` with the bytes of a name that are not UTF-8 shown as the bytes
    the user wrote (``\\xff``), not as Python's stand-ins for them
    (``\\udcff``, as ``repr`` of an argument or path shows them, or the lone
    surrogate itself)."""
    import re

    text = re.sub(r"\\udc([89a-fA-F][0-9a-fA-F])", r"\\x\1", text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` (plain text) on stderr and exit with ``code``;
    a name's bytes that are not UTF-8 are shown as written (:func:`as_written`)."""
    one_line = as_written(" ".join(str(message).split()))
    say(("error:", "bold red"), " ", one_line, err=True)
    sys.exit(code)


def note(message: str) -> None:
    """A one-line remark on stderr (for example: no GPU, using a sim device)."""
    say(("note:", "yellow"), " ", str(message), err=True)


def send_output_to_stderr(on: bool = True) -> None:
    """Human output goes to stderr (stdout carries JSON, ``--json -``);
    ``on=False`` sends it back to stdout (each command starts so)."""
    console.stderr = on


def progress(*columns, **kw):
    """rich's Progress on stderr that, off a terminal, stops without the empty
    line rich writes there (a piped validate or campaign printed one above its
    table); the heartbeat and the commands' own lines speak there instead."""
    from rich.progress import Progress

    class _Progress(Progress):
        def stop(self) -> None:
            self.live.stop()

    return _Progress(*columns, console=err_console, transient=True, **kw)


class ProgressBar:
    """A transient progress bar on stderr, used as a ``progress(done, total)``
    callback (a context manager: it starts and stops the bar). Where stderr is
    not a terminal it shows nothing (rich's bar wrote one empty line there when
    it stopped, a command's first line in a pipe); the heartbeat speaks instead."""

    def __init__(self, label: str):
        from rich.progress import BarColumn, TextColumn, TimeRemainingColumn

        self.label = label
        self.task = None
        if not err_console.is_terminal:
            self.bar = None
            return
        self.bar = progress(TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.percentage:>3.0f}%"), TimeRemainingColumn())

    def __enter__(self):
        if self.bar is not None:
            self.bar.start()
        return self

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def __exit__(self, *exc):
        if self.bar is not None:
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


# Seconds of silence before a heartbeat line: the command line's own (with the
# start-up, its first line within 2 s) and a step's inside it, which speaks first
# and so holds the command's off.
COMMAND_QUIET_S = 1.5
STEP_QUIET_S = 1.0


# TCPROBE_HEARTBEAT's values: off or on (unset: on); anything else is refused
# by the command line before a command runs (heartbeat_wanted(strict=True)).
HEARTBEAT_OFF = ("0", "no", "off", "false")
HEARTBEAT_ON = ("1", "yes", "on", "true")


def heartbeat_wanted(strict: bool = False) -> bool:
    """Whether TCPROBE_HEARTBEAT lets heartbeat lines be shown (unset: yes).
    ``strict``: a value that is neither off (0, no, off, false) nor on (1,
    yes, on, true), a blank one included, is a UsageError naming it, never
    silently read as on."""
    value = os.environ.get("TCPROBE_HEARTBEAT")
    if value is None:
        return True
    text = value.strip().lower()
    if text in HEARTBEAT_OFF:
        return False
    if strict and text not in HEARTBEAT_ON:
        raise UsageError(f"TCPROBE_HEARTBEAT={value!r} is neither off (0, no, off, false) nor on "
                         "(1, yes, on, true): set one of those, or unset it (on)")
    return True


def debug_wanted(strict: bool = False) -> bool:
    """Whether TCPROBE_DEBUG asks for a traceback instead of a one-line error
    (unset or blank: no), in TCPROBE_HEARTBEAT's words. ``strict``: a value
    that is neither off (0, no, off, false) nor on (1, yes, on, true) is a
    UsageError naming it, never silently read as on (which would show a
    traceback for every bad input); not strict, such a value is off."""
    value = os.environ.get("TCPROBE_DEBUG", "")
    text = value.strip().lower()
    if strict and text not in ("", *HEARTBEAT_OFF, *HEARTBEAT_ON):
        raise UsageError(f"TCPROBE_DEBUG={value!r} is neither off (0, no, off, false) nor on "
                         "(1, yes, on, true): set one of those, or unset it (off)")
    return text in HEARTBEAT_ON


class Heartbeat:
    """While a long piece of work runs, a line on stderr whenever nothing has
    been shown for ``quiet`` seconds, then every ``every`` seconds of
    silence: a slow step never leaves a blank screen, piped or not, and a
    command that is printing is never interrupted (tcprobe.activity). A
    context manager; no line comes after the block ends.

    ``line``: the line's text, ``{s}`` standing for the whole seconds since
    ``since`` (a monotonic time; unset: ``start``, else the block's start).
    ``start``: a monotonic time the silence is counted from (the process's
    start); unset, the block's start counts as shown. The lines come from a
    child process (tcprobe.speaker), so work that holds the interpreter (a
    numba compile) cannot hold them up; where stderr is no real file, from a
    thread. ``TCPROBE_HEARTBEAT=0`` turns every heartbeat off."""

    def __init__(self, line: str, quiet: float = 2.0, every: float = 5.0,
                 start: float | None = None, since: float | None = None):
        import threading

        self.line, self.quiet, self.every = line, quiet, max(every, quiet)
        self.start, self.since = start, since
        self.on = heartbeat_wanted()
        self._key = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _text(self, now: float) -> str:
        return self.line.replace("{s}", f"{now - self._since:.0f}")

    def _run(self) -> None:
        import time

        while not self._stop.wait(0.1 if self.start is not None else 0.25):
            if _idle() >= self.quiet:
                err_console.print(self._text(time.monotonic()), markup=False, highlight=False)
                _mark(self.every - self.quiet)  # the next line: `every` s on

    def __enter__(self):
        import time

        from tcprobe.activity import last_shown
        from tcprobe.speaker import open_beat

        if self.on:
            if self.start is None:
                _mark()  # the block's start counts as shown
            begun = time.monotonic() if self.start is None else self.start
            self._since = begun if self.since is None else self.since
            self._key = open_beat(self.line, self.quiet, self.every, self._since,
                                          last_shown())
            if self._key is None:
                self._thread.start()
        return self

    def __exit__(self, *exc):
        from tcprobe.speaker import close_beat

        if self._key is not None:
            close_beat(self._key)
            self._key = None
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return False
