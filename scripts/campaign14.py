"""Campaign 14 (docs/campaign-14.md): where checks not yet seen will go:
tcprobe.torch's emulate (out= and in-place forms, fused paths, threads,
nested Reports, strict, instr), the AMD datapaths through every surface,
gemm/fit-gemm/gemm-probe options and their --json/--out targets, schedule
files, malformed .npy files and gemm-probe manifests, atlas lookups,
ladder, validate, replay, campaigns and sass-check options, TCPROBE_*
variables, and the documents' lines run from another folder. The harness
is campaign 10's (runners and verdicts, scripts/campaign_runner.py); real
processes run any argv ("tcprobe ..." or "python ...") from a folder under
the root. The cases are scripts/campaign14_cases.py.

    python3 scripts/campaign14.py OUT.tsv [cli|proc|api]   # from the repository root
    python3 scripts/campaign14.py --merge BEFORE AFTER OUT

Verdicts as campaign 10's. C14_TRACE=1 prints the API cases' tracebacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10 import TCPROBE, cli_verdict  # noqa: E402
from campaign10_cli import fixtures  # noqa: E402
from campaign12_cases import fixtures12  # noqa: E402
from campaign13_cases import fixtures13  # noqa: E402
from campaign14_cases import API, CLI, PRELUDE, PROC, fixtures14  # noqa: E402
from campaign_runner import Rows, new_only, shown_proc  # noqa: E402


def earlier() -> set[str]:
    """Every command and code of campaigns 6 to 13's tables: a case of this
    campaign with the same text is a repeat."""
    seen: set[str] = set()
    for n in range(6, 14):
        path = HERE.parent / f"docs/campaign-{n}-cases.tsv"
        for line in path.read_text(errors="replace").splitlines()[1:]:
            f = line.split("\t")
            if len(f) > 4:
                seen.add(f[4].strip())
    return seen


def run_any(root: Path, rows: Rows, cases, first: int) -> None:
    """(class, expected, argv, env, cwd, check) as real processes from root/cwd."""
    for n, (cls, exp, argv, env, cwd, check) in enumerate(cases, first):
        e = dict(os.environ)
        e.update(env)
        cmd = [TCPROBE if argv[0] == "tcprobe" else sys.executable if argv[0] == "python" else argv[0], *argv[1:]]
        try:
            r = subprocess.run(cmd, capture_output=True, cwd=root / cwd, env=e, timeout=600,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            rows.add(n, cls, exp, shown_proc(argv, env, cwd), "no answer in 600 s", "timeout")
            continue
        out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        errs = [ln for ln in err.splitlines() if ln.startswith("error:")]
        what = f"exit {r.returncode}; " + (errs[0][:220] if errs else ((out + err).strip().splitlines() or [""])[-1][:150])
        if "Traceback" in out + err:
            v = "traceback"
        else:
            os.chdir(root / cwd)
            bad = check(r, out, err) if check else None
            os.chdir(root)
            if exp == "err" and bad and r.returncode == 2 and len(errs) == 1:
                what, v = what + "; " + bad, "unclear"  # the error line's words
            else:
                what, v = cli_verdict(exp, (what, r.returncode, errs, bad, []))
        rows.add(n, cls, exp, shown_proc(argv, env, cwd), what, v)


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    root = Path(tempfile.mkdtemp(prefix="c14-"))
    os.chdir(root)
    fixtures(root)
    fixtures12(root)
    fixtures13(root)
    fixtures14(root)
    cli, proc, api = new_only(CLI, PROC, API, earlier())
    rows = Rows("c14", 110)
    if not only or "cli" in only:
        rows.run_cli(root, cli)
    if not only or "proc" in only:
        run_any(root, rows, proc, len(cli) + 1)
    if not only or "api" in only:
        rows.run_api(root, api, PRELUDE, len(cli) + len(proc) + 1, "C14_TRACE")
    rows.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
