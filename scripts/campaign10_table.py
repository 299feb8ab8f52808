"""Campaign 10's table: the before- and after-runs of scripts/campaign10.py
matched by id into docs/campaign-10-cases.tsv (id, class, expected, before,
after, command or code, what each run did), and the counts by class."""

from __future__ import annotations

from pathlib import Path


def _rows(p: Path) -> dict:
    lines = p.read_text(errors="replace").splitlines()[1:]
    return {r.split("\t")[0]: r.split("\t") for r in lines if r.strip()}


def merge(before: Path, after: Path, out: Path) -> None:
    b, a = _rows(before), _rows(after)
    head = ("id\tclass\texpected\tbefore\tafter\tcommand or code\tbefore: what happened\t"
            "after: what happened")
    body = [f"{i}\t{r[1]}\t{r[2]}\t{b[i][3] if i in b else ''}\t{r[3]}\t{r[4]}\t"
            f"{b[i][5] if i in b else ''}\t{r[5]}" for i, r in a.items()]
    out.write_text(head + "\n" + "\n".join(body) + "\n")
    table: dict = {}
    for line in body:
        f = line.split("\t")
        t = table.setdefault(f[1], {"cases": 0})
        t["cases"] += 1
        for when, v in (("before", f[3]), ("after", f[4])):
            t[(when, v)] = t.get((when, v), 0) + 1
    for cls, t in table.items():
        print(cls, t["cases"], sorted((k, v) for k, v in t.items() if k != "cases"))
