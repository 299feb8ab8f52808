"""Campaign 10 (docs/campaign-10.md): cases no earlier campaign sent, on every
surface: each CLI command and option (through click's runner, in one
process; every file a case made is listed), the Python API, emulate,
TOML profiles and schedules, AMD ids, and the README's own lines run from
another folder (real processes).

    python3 scripts/campaign10.py OUT.tsv                 # from the repository root
    python3 scripts/campaign10.py --merge BEFORE AFTER OUT

Expected: ``ok`` (exit 0 or 1 / no exception; a case's own check or assert
failing is a silent wrong answer), ``err`` (exit 2 and exactly one
``error:`` line / tcprobe's own ValueError with a message), ``torch`` (the
error plain torch raises for the same call), ``any`` (either, reviewed), ``py`` (Python's own TypeError for a call's
signature: an unknown keyword, too many arguments).
An ``err`` case that wrote a file is unsafe. Anything else is a traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign10_api import API, PRELUDE  # noqa: E402
from campaign10_cli import CLI, PROC, fixtures  # noqa: E402

TCPROBE = str(Path(sys.executable).with_name("tcprobe"))


def _listing(root: Path) -> set:
    return {str(p.relative_to(root)) for p in root.rglob("*")} if root.exists() else set()


def run_cli(root: Path, args: list[str], check):
    from click.testing import CliRunner

    from tcprobe.cli import main

    def _alarm(*_):
        raise TimeoutError("no answer in 120 s")
    before = _listing(root)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(120)
    try:
        r = CliRunner().invoke(main, args)
    finally:
        signal.alarm(0)
    made = sorted(_listing(root) - before)
    stderr = r.stderr
    errs = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    tb = "Traceback" in r.output or (r.exception is not None and not isinstance(r.exception, SystemExit))
    what = f"exit {r.exit_code}; " + (errs[0][:220] if errs else (r.output.strip().splitlines() or [""])[-1][:150])
    if made:
        what += f"; made {made[:3]}"
    if tb:
        return what + f" ({type(r.exception).__name__}: {str(r.exception)[:100]})", "traceback"
    bad = None
    if check is not None and r.exit_code in (0, 1):
        try:
            bad = check(r, made)
        except Exception as e:  # noqa: BLE001 - a check that fails is the case's finding
            bad = f"check raised {type(e).__name__}: {e}"
    return what, r.exit_code, errs, bad, made


def cli_verdict(expect, res):
    if isinstance(res[1], str):
        return res
    what, code, errs, bad, made = res
    if bad:
        return what + "; " + bad, "silent wrong"
    if code == 3:
        return what, "exit 3"
    if expect == "err":
        if code == 2 and len(errs) == 1:
            return what, ("unsafe" if made else "kept")
        return what, ("unclear" if code == 2 else "silent wrong")
    if code == 2 and len(errs) != 1:
        return what, "unclear"
    if expect == "ok":
        return what, "kept" if code in (0, 1) else "wrongly refused"
    return what, "kept"


def api_verdict(exp: str, exc: BaseException | None) -> tuple[str, str]:
    if exc is None:
        return ("kept", "ran") if exp in ("ok", "any") else ("silent wrong", "no error")
    what = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
    if isinstance(exc, AssertionError):
        return "silent wrong", what
    if exp == "torch" and isinstance(exc, RuntimeError | TypeError | ValueError | IndexError):
        return "kept", what
    if exp == "py" and isinstance(exc, TypeError) and "argument" in str(exc):
        return "kept", what  # Python's own refusal of a call's signature
    own = type(exc).__module__.startswith("tcprobe") and type(exc).__name__.endswith("Error")
    if (isinstance(exc, ValueError) and type(exc).__module__.startswith(("tcprobe", "builtins"))) or own:
        if not str(exc).strip():
            return "unclear", what
        return ("kept", what) if exp in ("err", "any") else ("wrongly refused", what)
    return "traceback", what


def run_proc(root: Path, expect, args, cwd, env, check):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([TCPROBE, *args], capture_output=True, cwd=cwd or root, env=e, timeout=300,
                       stdin=subprocess.DEVNULL)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    errs = [ln for ln in err.splitlines() if ln.startswith("error:")]
    what = f"exit {r.returncode}; " + (errs[0][:220] if errs else ((out + err).strip().splitlines() or [""])[-1][:150])
    if "Traceback" in out + err:
        return what, "traceback"
    bad = check(r, out, err) if check else None
    return cli_verdict(expect, (what, r.returncode, errs, bad, []))


def _visible(text: str) -> str:
    """``text`` with its control characters (a NUL, an escape) written as \\xNN."""
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch for ch in text)


def earlier_cases() -> set[str]:
    """Every command and code of campaigns 6 to 9's tables: a case of this
    campaign with the same text is a repeat and is not run."""
    seen: set[str] = set()
    for n in (6, 7, 8, 9):
        path = HERE.parent / f"docs/campaign-{n}-cases.tsv"
        for line in path.read_text(errors="replace").splitlines()[1:]:
            seen.update(x.strip() for x in line.split("\t"))
    return seen


def main(argv):
    if argv and argv[0] == "--merge":
        from campaign10_table import merge
        return merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    out = Path(argv[0]).resolve()
    only = set(argv[1:])
    import tempfile
    root = Path(tempfile.mkdtemp(prefix="c10-"))
    os.chdir(root)
    fixtures(root)
    old = earlier_cases()
    cli = [c for c in CLI if ("tcprobe " + " ".join(c[2])).strip() not in old]
    api = [c for c in API if c[2].replace("\n", " ; ").strip() not in old
           and c[2].replace("\n", "\\n").strip() not in old]
    proc = PROC
    print(f"{len(CLI) - len(cli) + len(API) - len(api)} cases of earlier campaigns left out",
          flush=True)
    rows = []
    pick = os.environ.get("C10_CLASS", "")  # a rerun of one class while fixing

    def add(n, cls, exp, shown, what, v):  # n: the case's place in CLI + API + PROC
        flat = _visible(shown.replace("\t", " ").replace("\n", "\\n"))
        rows.append(f"c10-{n:03d}\t{cls}\t{exp}\t{v}\t{flat}\t{_visible(what.replace(chr(9), ' ').replace(chr(10), ' '))}")
        print(rows[-1].split("\t")[0], f"{v:14s}", cls, flat[:100], "->", what[:160], flush=True)
    if not only or "cli" in only:
        for n, (cls, exp, args, check) in enumerate(cli, 1):
            if pick not in cls:
                continue
            os.chdir(root)
            what, v = cli_verdict(exp, run_cli(root, args, check))
            add(n, cls, exp, "tcprobe " + " ".join(args), what, v)
    if not only or "api" in only:
        ns: dict = {"ROOT": root}
        exec(PRELUDE, ns)
        for n, (cls, exp, code) in enumerate(api, len(cli) + 1):
            if pick not in cls:
                continue
            os.chdir(root)
            exc = None
            try:
                exec(code, dict(ns))
            except BaseException as e:  # noqa: BLE001 - the verdict names it
                exc = e
                if os.environ.get("C10_TRACE"):
                    traceback.print_exc()
            v, what = api_verdict(exp, exc)
            add(n, cls, exp, code, what, v)
    if not only or "proc" in only:
        for n, (cls, exp, args, cwd, env, check) in enumerate(proc, len(cli) + len(api) + 1):
            what, v = run_proc(root, exp, args, cwd, env, check)
            shown = " ".join(f"{k}={val}" for k, val in (env or {}).items()) + \
                (f" (in {cwd}) " if cwd else " ") + "tcprobe " + " ".join(args)
            add(n, cls, exp, shown.strip(), what, v)
    with open(out, "w", errors="backslashreplace") as fh:
        fh.write("id\tclass\texpected\tverdict\tcommand or code\twhat happened\n" + "\n".join(rows) + "\n")
    counts: dict = {}
    for r in rows:
        f = r.split("\t")
        counts.setdefault(f[1], {}).setdefault(f[3], 0)
        counts[f[1]][f[3]] += 1
    for c, d in counts.items():
        print(c, d)


if __name__ == "__main__":
    main(sys.argv[1:])
