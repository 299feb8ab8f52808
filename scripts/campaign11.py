"""Campaign 11 (docs/campaign-11.md): names in any case on every surface,
Ctrl-C as the command line starts, processes inside emulate, _int_mm's
shapes, and combinations of options earlier campaigns sent one at a time.
The harness is campaign 10's (scripts/campaign10.py: its runners and
verdicts); the cases are scripts/campaign11_cases.py.

    python3 scripts/campaign11.py OUT.tsv [cli|api|sigint]   # from the repository root
    python3 scripts/campaign11.py --merge BEFORE AFTER OUT

Verdicts as campaign 10's. A Ctrl-C case is kept when the process ends
130 with the one line ``interrupted`` and no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10_cli import fixtures  # noqa: E402
from campaign11_cases import API, CLI, PRELUDE, fixtures11, sigint_cases  # noqa: E402
from campaign_runner import Rows  # noqa: E402

TCPROBE = str(Path(sys.executable).with_name("tcprobe"))


def earlier_cases() -> set[str]:
    """Every command and code of campaigns 6 to 10's tables (a repeat is not run)."""
    seen: set[str] = set()
    for n in (6, 7, 8, 9, 10):
        path = HERE.parent / f"docs/campaign-{n}-cases.tsv"
        for line in path.read_text(errors="replace").splitlines()[1:]:
            seen.update(x.strip() for x in line.split("\t"))
    return seen


def run_sigint(root: Path, delay: float, argv: list[str]) -> tuple[str, str]:
    p = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(2)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return "no end in 120 s after Ctrl-C", "unclear"
    err_t = err.decode(errors="replace")
    lines = [ln for ln in err_t.splitlines() if ln.strip()]
    what = f"exit {p.returncode}; " + (lines[-1][:150] if lines else "")
    if "Traceback" in err_t:
        return what, "traceback"
    if p.returncode in (0, 1):  # it had answered: the signal came as it ended (cli._ending)
        return what + " (had answered; its own status)", "kept"
    if p.returncode == 130 and lines and lines[-1].startswith("interrupted"):
        return what, "kept"
    return what, "unclear"


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    root = Path(tempfile.mkdtemp(prefix="c11-"))
    os.chdir(root)
    fixtures(root)
    fixtures11(root)
    old = earlier_cases()
    cli = [c for c in CLI if ("tcprobe " + " ".join(c[2])).strip() not in old]
    api = [c for c in API if c[2].replace("\n", " ; ").strip() not in old
           and c[2].replace("\n", "\\n").strip() not in old]
    sig = sigint_cases(sys.executable, TCPROBE)
    print(f"{len(CLI) - len(cli) + len(API) - len(api)} cases of earlier campaigns left out", flush=True)
    rows = Rows("c11", 100)
    if not only or "cli" in only:
        rows.run_cli(root, cli)
    if not only or "api" in only:
        rows.run_api(root, api, PRELUDE, len(cli) + 1, "C11_TRACE")
    if not only or "sigint" in only:
        for n, (cls, delay, args) in enumerate(sig, len(cli) + len(api) + 1):
            what, v = run_sigint(root, delay, args)
            shown = f"Ctrl-C after {delay} s: " + " ".join(Path(args[0]).name if i == 0 else a
                                                         for i, a in enumerate(args))
            rows.add(n, cls, "130", shown, what, v)
    rows.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
