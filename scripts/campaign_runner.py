"""The case loop campaigns 11 and 12 share: each CLI case through campaign 10's
runner and verdict, each API case executed after the campaign's prelude, one
tab-separated row per case (id, class, expected, verdict, command or code,
what happened), and the table written with its counts by class."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from campaign10 import _visible, api_verdict, cli_verdict, run_cli, run_proc


class Rows:
    """The rows of one campaign run, ids ``PREFIX-NNN``."""

    def __init__(self, prefix: str, width: int = 100):
        self.prefix, self.width, self.rows = prefix, width, []

    def add(self, n: int, cls: str, exp: str, shown: str, what: str, verdict: str) -> None:
        flat = _visible(shown.replace("\t", " ").replace("\n", "\\n"))
        self.rows.append(f"{self.prefix}-{n:03d}\t{cls}\t{exp}\t{verdict}\t{flat}\t"
                         f"{_visible(what.replace(chr(9), ' ').replace(chr(10), ' '))}")
        print(self.rows[-1].split("\t")[0], f"{verdict:14s}", cls, flat[:self.width], "->",
              what[:self.width + 60], flush=True)

    def run_cli(self, root: Path, cases, first: int = 1) -> None:
        """(class, expected, args, check) cases as ``tcprobe ARGS`` from ``root``;
        an ``err`` case's check reads its one error line (a reason: unclear)."""
        for n, (cls, exp, args, check) in enumerate(cases, first):
            os.chdir(root)
            res = run_cli(root, args, None if exp == "err" else check)
            what, v = cli_verdict(exp, res)
            if exp == "err" and check is not None and v == "kept":  # the error line's words
                bad = check(res[2][0])
                if bad:
                    what, v = what + "; " + bad, "unclear"
            self.add(n, cls, exp, "tcprobe " + " ".join(args), what, v)

    def run_proc(self, root: Path, cases, first: int) -> None:
        """(class, expected, args, env, check) cases as real ``tcprobe ARGS``
        processes from ``root``, ``env`` added to the environment."""
        for n, (cls, exp, args, env, check) in enumerate(cases, first):
            what, v = run_proc(root, exp, args, root, env, check)
            shown = " ".join(f"{k}={v!r}" for k, v in env.items())
            self.add(n, cls, exp, f"{shown} tcprobe " + " ".join(args), what, v)

    def run_api(self, root: Path, cases, prelude: str, first: int, trace_env: str) -> None:
        """(class, expected, code) cases, each run in a copy of the prelude's
        namespace (``trace_env`` set in the environment prints tracebacks)."""
        ns: dict = {"ROOT": root}
        exec(prelude, ns)
        for n, (cls, exp, code) in enumerate(cases, first):
            os.chdir(root)
            exc = None
            try:
                exec(code, dict(ns))
            except BaseException as e:  # noqa: BLE001 - the verdict names it
                exc = e
                if os.environ.get(trace_env):
                    traceback.print_exc()
            v, what = api_verdict(exp, exc)
            self.add(n, cls, exp, code, what, v)

    def write(self, out: Path) -> None:
        """The table to ``out`` and the counts of verdicts by class to stdout."""
        with open(out, "w", errors="backslashreplace") as fh:
            fh.write("id\tclass\texpected\tverdict\tcommand or code\twhat happened\n"
                     + "\n".join(self.rows) + "\n")
        counts: dict = {}
        for r in self.rows:
            f = r.split("\t")
            counts.setdefault(f[1], {}).setdefault(f[3], 0)
            counts[f[1]][f[3]] += 1
        for c, d in counts.items():
            print(c, d)
        print("total", len(self.rows))


def shown_proc(argv, env, cwd) -> str:
    """A process case as its table shows it: the folder, the environment, the command."""
    where = f"(in {cwd}/) " if cwd else ""
    return where + " ".join(f"{k}={v!r}" for k, v in env.items()) + (" " if env else "") + " ".join(argv)


def new_only(cli, proc, api, seen: set):
    """The cases whose command or code is not in ``seen`` (the earlier
    campaigns' tables); prints how many were dropped."""
    flat = lambda s: _visible(s.replace("\t", " ").replace("\n", "\\n")).strip()  # noqa: E731
    c = [x for x in cli if flat("tcprobe " + " ".join(x[2])) not in seen]
    p = [x for x in proc if flat(shown_proc(x[2], x[3], x[4])) not in seen]
    a = [x for x in api if flat(x[2]) not in seen]
    print(f"dropped as repeats: {len(cli) - len(c)} CLI, {len(proc) - len(p)} processes, "
          f"{len(api) - len(a)} API", flush=True)
    return c, p, a
