"""Campaign 12 (docs/campaign-12.md): the AMD surfaces (gemm, fit-gemm,
gemm-probe, sim:mi* ladder/validate/run-case, mfma-check, AMD TOML profiles,
tcprobe.matmul/dot on MI300X, MI250X and MI100, emulate on AMD). The harness
is campaign 10's (scripts/campaign10.py: its runners and verdicts); the cases
are scripts/campaign12_cases.py.

    python3 scripts/campaign12.py OUT.tsv [cli|api]   # from the repository root
    python3 scripts/campaign12.py --merge BEFORE AFTER OUT

Verdicts as campaign 10's (kept, traceback, exit 3, silent wrong, unclear,
wrongly refused, unsafe).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10_cli import fixtures  # noqa: E402
from campaign12_cases import API, CLI, PRELUDE, fixtures12  # noqa: E402
from campaign_runner import Rows  # noqa: E402


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    root = Path(tempfile.mkdtemp(prefix="c12-"))
    os.chdir(root)
    fixtures(root)
    fixtures12(root)
    rows = Rows("c12", 110)
    if not only or "cli" in only:
        rows.run_cli(root, CLI)
    if not only or "api" in only:
        rows.run_api(root, API, PRELUDE, len(CLI) + 1, "C12_TRACE")
    rows.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
