"""What the CLI tests share: running a command, and the shape of a bad-input answer.

House rule: bad input is one clear ``error: ...`` line naming the problem and
exit 2; never a traceback, never a silent wrong answer. :func:`one_error`
asserts exactly that.
"""

import signal

from click.testing import CliRunner

from tcprobe.cli import main


def invoke(*args, catch_exceptions: bool = True):
    """``tcprobe ARGS...`` in process (paths and numbers may be given as is)."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=catch_exceptions)


def error_lines(r) -> list[str]:
    """The ``error:`` lines of a result's output (stderr and stdout)."""
    return [ln for ln in r.output.splitlines() if ln.startswith("error:")]


def one_error(r, *needles, notes: bool = False, progress: str | None = None) -> str:
    """Exit 2, stderr one ``error:`` line holding every needle, no traceback;
    the line is returned. ``notes``: ``note:`` lines before it are allowed
    (a sim device chosen for want of a GPU); ``progress``: lines starting
    with it are allowed (a campaign's line a finished piece)."""
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if notes:
        lines = [ln for ln in lines if not ln.startswith("note:")]
    if progress:
        lines = [ln for ln in lines if not ln.startswith(progress)]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def sigint_at_default() -> None:
    """A child process's ``preexec_fn``: SIGINT back to its default, so that
    Python in the child takes Ctrl-C as a terminal would give it. A test run
    started as a background job (``.ci/run`` runs the slow tier with ``&``)
    inherits SIGINT ignored, and so would every process it starts."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
