"""Campaign 16 (docs/campaign-16.md): tcprobe.torch.emulate under the torch
a real model runs, and fit-gemm and the torch capture with odd manifests.
The harness is campaign 15's (scripts/campaign_runner.py for the API cases,
campaign 15's timed runner for the processes); the cases are
scripts/campaign16_cases.py, each new (none in campaigns 6 to 15's tables).

    python3 scripts/campaign16.py OUT.tsv [api|proc]   # from the repository root
    python3 scripts/campaign16.py --merge BEFORE AFTER OUT

C16_TRACE=1 prints the API cases' tracebacks.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10 import _visible  # noqa: E402
from campaign15 import _shown_proc, run_timed  # noqa: E402
from campaign16_cases import API, PRELUDE, PROC, fixtures16  # noqa: E402
from campaign_runner import Rows  # noqa: E402


def earlier() -> set[str]:
    """Every command and code of campaigns 6 to 15's tables."""
    seen: set[str] = set()
    for n in range(6, 16):
        for line in (HERE.parent / f"docs/campaign-{n}-cases.tsv").read_text(
                errors="replace").splitlines()[1:]:
            f = line.split("\t")
            if len(f) > 4:
                seen.update(x.strip() for x in f[4:6])
    return seen


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    root = Path(tempfile.mkdtemp(prefix="c16-"))
    os.chdir(root)
    fixtures16(root)
    seen = earlier()
    flat = lambda s: _visible(s.replace("\t", " ").replace("\n", "\\n")).strip()  # noqa: E731
    api = [c for c in API if flat(c[2]) not in seen]
    proc = [c for c in PROC if flat(_shown_proc(c[2], c[3], c[4])) not in seen]
    print(f"dropped as repeats: {len(API) - len(api)} API, {len(PROC) - len(proc)} processes",
          flush=True)
    rows = Rows("c16", 110)
    if not only or "api" in only:
        rows.run_api(root, api, PRELUDE, 1, "C16_TRACE")
    if not only or "proc" in only:
        run_timed(root, rows, proc, len(api) + 1)
    rows.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
