"""Campaign 9 (issue 36, docs/campaign-9.md): the Python surfaces with cases no
earlier campaign sent: every aten GEMM form under ``tcprobe.torch.emulate``
(overloads, out= and in-place, views, zero sizes, dtypes, autocast, compile,
nesting, threads, grad), ``tcprobe.matmul``/``dot`` keyword arguments and
array kinds, schedules, fit_gemm and capture loading.

    python3 scripts/campaign9.py [OUT.tsv]   # from the repository root
    python3 scripts/campaign9.py --merge BEFORE.tsv AFTER.tsv [OUT.tsv]

The before-run puts the branch's start on PYTHONPATH ahead of the editable
install (``git archive 924260e tcprobe models probes reports kernels``);
``--merge`` writes docs/campaign-9-cases.tsv (both verdicts, case by case).

Each case: a class, what the promise asks and Python code run in one
namespace. ``ok``: no exception (the code's own asserts check the words:
an assert that fails is a silent wrong answer); ``err``: tcprobe's own
ValueError (or a subclass) with a message; ``torch``: the error plain torch
raises for the same call (emulate must not change it). Anything else is a
traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign9_cases import CASES, PRELUDE  # noqa: E402


def verdict(exp: str, exc: BaseException | None) -> tuple[str, str]:
    if exc is None:
        return ("kept", "ran") if exp in ("ok", "any") else ("silent wrong", "no error")
    what = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    if isinstance(exc, AssertionError):
        return "silent wrong", what
    if exp == "torch" and isinstance(exc, RuntimeError | TypeError | ValueError | IndexError):
        return "kept", what
    if isinstance(exc, ValueError) and type(exc).__module__.startswith(("tcprobe", "builtins")):
        if not str(exc).strip():
            return "unclear", what
        return ("kept", what) if exp in ("err", "any") else ("wrongly refused", what)
    return "traceback", what


def merge(before: Path, after: Path, out: Path) -> None:
    def rows(p):
        lines = p.read_text().splitlines()[1:]
        return {r.split("\t")[0]: r.split("\t") for r in lines}
    b, a = rows(before), rows(after)
    head = "id\tclass\texpected\tbefore\tafter\tcode\tbefore: what happened\tafter: what happened"
    body = [f"{i}\t{r[1]}\t{r[2]}\t{b[i][3] if i in b else ''}\t{r[3]}\t{r[4]}\t"
            f"{b[i][5] if i in b else ''}\t{r[5]}" for i, r in a.items()]
    out.write_text(head + "\n" + "\n".join(body) + "\n")
    table: dict = {}
    for line in body:
        f = line.split("\t")
        t = table.setdefault(f[1], {})
        for when, v in (("before", f[3]), ("after", f[4])):
            t[(when, v)] = t.get((when, v), 0) + 1
    for cls, t in table.items():
        print(cls, sorted(t.items()))


def main(argv):
    if argv and argv[0] == "--merge":
        out = Path(argv[3]) if len(argv) > 3 else Path("docs/campaign-9-cases.tsv")
        return merge(Path(argv[1]), Path(argv[2]), out)
    out = Path(argv[0]) if argv else Path("docs/campaign-9-cases.tsv")
    out = out.resolve()
    os.chdir(tempfile.mkdtemp(prefix="c9-"))
    ns: dict = {}
    exec(PRELUDE, ns)
    rows = []
    for i, (cls, exp, code) in enumerate(CASES, 1):
        exc = None
        try:
            exec(code, dict(ns))
        except BaseException as e:  # noqa: BLE001 - the verdict names it
            exc = e
            if os.environ.get("C9_TRACE"):
                traceback.print_exc()
        v, what = verdict(exp, exc)
        flat = code.replace("\n", " ; ").replace("\t", " ")
        rows.append(f"c9-{i:03d}\t{cls}\t{exp}\t{v}\t{flat}\t{what}")
        print(f"c9-{i:03d} {v:14s} {cls}: {flat[:90]} -> {what[:120]}", flush=True)
    out.write_text("id\tclass\texpected\tverdict\tcode\twhat happened\n" + "\n".join(rows) + "\n")
    counts: dict = {}
    for r in rows:
        c, v = r.split("\t")[1], r.split("\t")[3]
        counts.setdefault(c, {}).setdefault(v, 0)
        counts[c][v] += 1
    for c, d in counts.items():
        print(c, d)


if __name__ == "__main__":
    main(sys.argv[1:])
