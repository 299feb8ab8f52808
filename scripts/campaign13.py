"""Campaign 13 (docs/campaign-13.md): the AMD compiled path at its edges,
the names rule, emulate's odd torch calls, the atlas for unmeasured shapes,
gemm --compare, fit-gemm and gemm-probe options, odd TOML profiles, output
files and links, damaged inputs, TCPROBE_* variables, every --help and the
documents' example lines. The harness is campaign 10's (its runners and
verdicts, through scripts/campaign_runner.py); the cases are
scripts/campaign13_cases.py.

    python3 scripts/campaign13.py OUT.tsv [cli|proc|api]   # from the repository root
    python3 scripts/campaign13.py --merge BEFORE AFTER OUT

Verdicts as campaign 10's (kept, traceback, exit 3, silent wrong, unclear,
wrongly refused, unsafe). C13_TRACE=1 prints the API cases' tracebacks.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10_cli import fixtures  # noqa: E402
from campaign12_cases import fixtures12  # noqa: E402
from campaign13_cases import API, CLI, PRELUDE, PROC, fixtures13  # noqa: E402
from campaign_runner import Rows  # noqa: E402


def earlier() -> set[str]:
    """Every command and code of campaigns 6 to 12's tables (as the tables
    write them): a case of this campaign with the same text is a repeat."""
    seen: set[str] = set()
    for n in range(6, 13):
        path = HERE.parent / f"docs/campaign-{n}-cases.tsv"
        for line in path.read_text(errors="replace").splitlines()[1:]:
            f = line.split("\t")
            if len(f) > 4:
                seen.add(f[4].strip())
    return seen


def new_only(cli, proc, api):
    """The cases no earlier table holds; prints how many were dropped."""
    from campaign10 import _visible
    seen = earlier()
    flat = lambda s: _visible(s.replace("\t", " ").replace("\n", "\\n")).strip()  # noqa: E731
    c = [x for x in cli if flat("tcprobe " + " ".join(x[2])) not in seen]
    a = [x for x in api if flat(x[2]) not in seen]
    print(f"dropped as repeats: {len(cli) - len(c)} CLI, {len(api) - len(a)} API", flush=True)
    return c, proc, a


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    root = Path(tempfile.mkdtemp(prefix="c13-"))
    os.chdir(root)
    fixtures(root)
    fixtures12(root)
    fixtures13(root)
    cli, proc, api = new_only(CLI, PROC, API)
    rows = Rows("c13", 110)
    if not only or "cli" in only:
        rows.run_cli(root, cli)
    if not only or "proc" in only:
        rows.run_proc(root, proc, len(cli) + 1)
    if not only or "api" in only:
        rows.run_api(root, api, PRELUDE, len(cli) + len(proc) + 1, "C13_TRACE")
    rows.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
