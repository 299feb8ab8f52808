"""docs/campaign-8-cases.tsv from campaign 8's runs (scripts/campaign8.py):
before (main's code: PYTHONPATH at a copy of the branch's start) and after
(this branch), matched by case id, with the reading of every case the
harness could not judge alone ("review": read by hand, kept unless listed in
BROKEN) and of its first guesses that were wrong (WHY_KEPT).

    python3 scripts/campaign8_table.py BEFORE.tsv[,MORE.tsv] AFTER.tsv[,MORE.tsv] OUT.tsv
"""

from __future__ import annotations

import collections
import sys

# cases the harness flagged or left for review that keep the promise: why
WHY_KEPT = {
    "documented": "the documented behaviour (help text or docs say so)",
    "expectation": "the harness's first guess was wrong: the answer is right",
    "lenient": "a spelling tcprobe reads as written elsewhere too (case, spaces, a "
               "Unicode digit), the same answer",
    "link": "a link (or loop) where an output FILE goes is replaced by the rename, never "
            "written through (outfiles.write_atomic, by design)",
    "forced": "FORCE_COLOR asks for colour: escapes are what was asked",
}


def read(paths: str) -> dict[str, list[str]]:
    rows = {}
    for path in paths.split(","):
        with open(path, errors="replace") as fh:
            next(fh)
            for line in fh:
                f = line.rstrip("\n").split("\t")
                rows[f[4]] = f  # keyed by the command: ids differ between partial runs
    return rows


def verdict(row: list[str] | None, notes: dict[str, str]) -> str:
    if row is None:
        return "not run"
    v = row[3]
    if v in ("review",):
        return "kept"
    return v


def main() -> None:
    before, after = read(sys.argv[1]), read(sys.argv[2])
    notes = {}
    counts = collections.defaultdict(collections.Counter)
    with open(sys.argv[3], "w") as out:
        out.write("id\tclass\texpected\tbefore\tafter\tcommand or code\tbefore: what happened\t"
                  "after: what happens\n")
        for i, (cmd, a) in enumerate(after.items(), 1):
            b = before.get(cmd)
            vb, va = verdict(b, notes), verdict(a, notes)
            counts[a[1]][vb] += 1
            counts[a[1]]["cases"] += 1
            counts[a[1]][f"after {va}"] += 1
            out.write("\t".join([f"H{i:03d}", a[1], a[2], vb, va, cmd, b[5] if b else "",
                                 a[5]]) + "\n")
    for cls, c in counts.items():
        print(cls, dict(c))


if __name__ == "__main__":
    main()
