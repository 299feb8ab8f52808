"""Write the README's measured figures from the commands that measure them.

    python3 scripts/readme_figures.py          # measure, rewrite the marked spans
    python3 scripts/readme_figures.py --check  # measure, exit 1 where the README differs

A figure in the README sits between ``<!-- fig:NAME -->`` and ``<!-- /fig -->``;
each NAME is measured here by running the project's own command, so the
figure cannot go stale unnoticed:

- ``tests``: the number of tests in the whole suite (``pytest --collect-only -q --tier all``);
- ``tests_fast``: the number in the fast tier (``pytest --collect-only -q``);
- ``sass``: the SASS check over its default architectures
  (``tcprobe sass-check --json -``): native, emulated and missing harnesses;
- ``gpus``, ``gpus_mmasim``, ``sims``: the GPU catalogue (``models/gpus.py``): the
  GPUs the measured profiles name, the ones MMA-Sim's parameters name, and the
  built-in ``sim:`` devices of NVIDIA GPUs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SPAN = re.compile(r"<!-- fig:(\w+) -->(.*?)<!-- /fig -->", re.S)


def _run(*args: str) -> str:
    r = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=3600)
    if r.returncode not in (0, 1):
        raise SystemExit(f"error: {' '.join(args)} exited {r.returncode}: {r.stderr.strip()[-300:]}")
    return r.stdout


def _collected(*tier: str) -> str:
    last = _run("-m", "pytest", "--collect-only", "-q", *tier).strip().splitlines()[-1]
    m = re.match(r"(\d+)(?:/\d+)? tests? collected", last)
    if not m:
        raise SystemExit(f"error: pytest's collection said {last!r}")
    return f"{int(m.group(1)):,} tests"


def tests() -> str:
    return _collected("--tier", "all")


def tests_fast() -> str:
    return _collected()


def sass() -> str:
    summary = json.loads(_run("-m", "tcprobe", "sass-check", "--json", "-"))["summary"]
    return (f"{summary.get('ok', 0):,} native, {summary.get('emulated', 0):,} emulated (flagged) "
            f"and {summary.get('missing', 0):,} missing")


def _catalogue(expr: str) -> str:
    code = ("from tcprobe.models import gpus; from tcprobe.models.profiles import PROFILES as P; "
            f"print({expr})")
    return _run("-c", code).strip()


def gpus() -> str:
    return _catalogue("', '.join(n for g in gpus.gpus() if P[g.profile].measured "
                      "for n in (g.name, *g.also))")


def gpus_mmasim() -> str:
    return _catalogue("', '.join(n for g in gpus.gpus() if not P[g.profile].measured "
                      "for n in (g.name, *g.also))")


def sims() -> str:
    return _catalogue("', '.join(f'`{n}`' for n in gpus.builtin_sims())")


FIGURES = {"tests": tests, "tests_fast": tests_fast, "sass": sass, "gpus": gpus,
           "gpus_mmasim": gpus_mmasim, "sims": sims}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    text = README.read_text()
    names = sorted({m.group(1) for m in SPAN.finditer(text)})
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise SystemExit(f"error: README.md marks figures nobody measures: {', '.join(unknown)}")
    values = {n: FIGURES[n]() for n in names}
    new = SPAN.sub(lambda m: f"<!-- fig:{m.group(1)} -->{values[m.group(1)]}<!-- /fig -->", text)
    for n in names:
        print(f"{n}: {values[n]}")
    if new == text:
        return 0
    if check:
        print("README.md differs from what was measured (run scripts/readme_figures.py)")
        return 1
    README.write_text(new)
    print("README.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
