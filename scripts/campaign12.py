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
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10 import _visible, api_verdict, cli_verdict, run_cli  # noqa: E402
from campaign10_cli import fixtures  # noqa: E402
from campaign12_cases import API, CLI, PRELUDE, fixtures12  # noqa: E402


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
    rows = []

    def add(n, cls, exp, shown, what, v):
        flat = _visible(shown.replace("\t", " ").replace("\n", "\\n"))
        rows.append(f"c12-{n:03d}\t{cls}\t{exp}\t{v}\t{flat}\t"
                    f"{_visible(what.replace(chr(9), ' ').replace(chr(10), ' '))}")
        print(rows[-1].split("\t")[0], f"{v:14s}", cls, flat[:110], "->", what[:170], flush=True)
    if not only or "cli" in only:
        for n, (cls, exp, args, check) in enumerate(CLI, 1):
            os.chdir(root)
            what, v = cli_verdict(exp, run_cli(root, args, check))
            add(n, cls, exp, "tcprobe " + " ".join(args), what, v)
    if not only or "api" in only:
        ns: dict = {"ROOT": root}
        exec(PRELUDE, ns)
        for n, (cls, exp, code) in enumerate(API, len(CLI) + 1):
            os.chdir(root)
            exc = None
            try:
                exec(code, dict(ns))
            except BaseException as e:  # noqa: BLE001 - the verdict names it
                exc = e
                if os.environ.get("C12_TRACE"):
                    traceback.print_exc()
            v, what = api_verdict(exp, exc)
            add(n, cls, exp, code, what, v)
    with open(out, "w", errors="backslashreplace") as fh:
        fh.write("id\tclass\texpected\tverdict\tcommand or code\twhat happened\n" + "\n".join(rows) + "\n")
    counts: dict = {}
    for r in rows:
        f = r.split("\t")
        counts.setdefault(f[1], {}).setdefault(f[3], 0)
        counts[f[1]][f[3]] += 1
    for c, d in counts.items():
        print(c, d)
    print("total", len(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
