"""Campaign 15 (docs/campaign-15.md): a new user's and a hostile user's
command lines and calls: every subcommand's help, option names a user would
guess, numbers in other shapes, paths that are FIFOs, devices, folders and
link loops, files with a BOM, CRLF or cut short, outputs over existing files
and into folders, the Python API with odd types, and the AMD datapaths on
every surface against sim:mi300x. The harness is campaign 10's (runners and
verdicts, scripts/campaign_runner.py); the README lines run as real
processes from a folder outside the checkout through scripts/timestamped.py,
and a first output later than 2 s is a blank screen (verdict "unclear").
The cases are scripts/campaign15_cases.py.

    python3 scripts/campaign15.py OUT.tsv [cli|proc|api|int]   # from the repository root
    python3 scripts/campaign15.py --merge BEFORE AFTER OUT

Verdicts as campaign 10's. C15_TRACE=1 prints the API cases' tracebacks.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10 import TCPROBE, cli_verdict  # noqa: E402
from campaign10_cli import fixtures  # noqa: E402
from campaign15_cases import API, CLI, INTERRUPTS, PRELUDE, PROC, fixtures15  # noqa: E402
from campaign_runner import Rows, new_only, shown_proc  # noqa: E402
from timestamped import run as timed  # noqa: E402

BLANK_S = 2.0  # the promise: a new user sees a line within 2 s
HANG_S = 60    # a command-line case with no answer in 60 s hangs (campaign 10's runner: 120 s)


class Hang(RuntimeError):
    """No answer in HANG_S: raised by the alarm. Not campaign 10's
    TimeoutError, an OSError that a reader's ``except OSError`` would take
    for a clean refusal ("cannot read fifo.json: no answer in 120 s")."""


def _hang(*_):
    raise Hang(f"no answer in {HANG_S} s (a hang)")


class _Alarm:
    """campaign10's signal module, its alarm capped at HANG_S (a FIFO case
    that blocks would otherwise hold the run for 120 s) raising Hang."""

    def __getattr__(self, name):
        return getattr(signal, name)

    @staticmethod
    def signal(num, handler):
        return signal.signal(num, _hang if num == signal.SIGALRM else handler)

    @staticmethod
    def alarm(seconds):
        return signal.alarm(min(seconds, HANG_S) if seconds else 0)


import campaign10  # noqa: E402

campaign10.signal = _Alarm()


def earlier() -> set[str]:
    """Every command and code of campaigns 6 to 14's tables: a case of this
    campaign with the same text is a repeat."""
    seen: set[str] = set()
    for n in range(6, 15):
        path = HERE.parent / f"docs/campaign-{n}-cases.tsv"
        for line in path.read_text(errors="replace").splitlines()[1:]:
            f = line.split("\t")
            if len(f) > 4:
                seen.update(x.strip() for x in f[4:6])
    return seen


def run_timed(root: Path, rows: Rows, cases, first: int) -> None:
    """(class, expected, argv, env, cwd, check) as real processes from root/cwd,
    timed: the first output must come within BLANK_S."""
    for n, (cls, exp, argv, env, cwd, check) in enumerate(cases, first):
        cmd = [TCPROBE if argv[0] == "tcprobe" else sys.executable, *argv[1:]]
        here = os.getcwd()
        os.chdir(root / cwd)
        old = dict(os.environ)
        os.environ.update(env)
        try:
            t = timed(cmd, 600)
        finally:
            os.environ.clear()
            os.environ.update(old)
            os.chdir(here)
        lines = t["head"] + (t["tail"] if t["lines"] > len(t["head"]) + len(t["tail"]) else
                             t["tail"][len(t["head"]) + len(t["tail"]) - t["lines"]:])
        errs = [ln[2:] for ln in lines if ln.startswith("! error:")]
        first_s = t["first_output_s"]
        what = (f"exit {t['rc']}; first output {first_s} s, wall {t['wall_s']} s; "
                + (errs[0][:200] if errs else (t["tail"] or [""])[-1][:120]))
        if t["traceback"]:
            v = "traceback"
        elif t["rc"] == "timeout":
            v = "timeout"
        elif first_s is None or first_s > BLANK_S:
            v = "unclear"
            what += f" (blank screen over {BLANK_S} s)"
        else:
            bad = check(errs[0]) if (check and errs) else None
            what, v = cli_verdict(exp, (what, t["rc"], errs, bad, []))
        rows.add(n, cls, exp, shown_proc(argv, env, cwd), what, v)


def run_interrupts(root: Path, rows: Rows, cases, first: int) -> None:
    """(class, argv, signal, seconds, check) as real processes from root: the
    signal sent ``seconds`` in; kept when no traceback was printed, the exit
    is the signal's (130 for SIGINT, 143 or -15 for SIGTERM) or the run had
    ended, and check(root) finds nothing half-made."""
    import subprocess
    import time
    for n, (cls, argv, sig, after, check) in enumerate(cases, first):
        p = subprocess.Popen([TCPROBE, *argv], cwd=root, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        time.sleep(after)
        ended = p.poll() is not None
        if not ended:
            p.send_signal(getattr(signal, sig))
        out, err = p.communicate(timeout=600)
        text = (out + err).decode(errors="replace")
        last = (text.strip().splitlines() or [""])[-1][:150]
        what = f"{sig} at {after} s{' (had ended)' if ended else ''}: exit {p.returncode}; {last}"
        bad = check(root)
        if "Traceback" in text:
            v = "traceback"
        elif bad:
            v, what = "unsafe", what + "; " + bad
        elif p.returncode == 3:
            v = "exit 3"
        else:
            v = "kept"
        rows.add(n, cls, "int", f"{sig} after {after} s: tcprobe " + " ".join(argv), what, v)


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    import resource
    # a read without end (/dev/zero as a file) stops at 8 GiB with MemoryError, not the OOM killer
    resource.setrlimit(resource.RLIMIT_DATA, (8 << 30, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    root = Path(tempfile.mkdtemp(prefix="c15-"))
    os.chdir(root)
    fixtures(root)
    fixtures15(root)
    (root / "away").mkdir(exist_ok=True)
    cli, proc, api = new_only(CLI, PROC, API, earlier())
    rows = Rows("c15", 110)
    if not only or "cli" in only:
        rows.run_cli(root, cli)
    if not only or "proc" in only:
        run_timed(root, rows, proc, len(cli) + 1)
    if not only or "api" in only:
        rows.run_api(root, api, PRELUDE, len(cli) + len(proc) + 1, "C15_TRACE")
    if not only or "int" in only:
        run_interrupts(root, rows, INTERRUPTS, len(cli) + len(proc) + len(api) + 1)
    rows.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
