"""Campaign 8 (issue 36, docs/campaign-8.md): hostile cases no earlier campaign
sent. In one process through click's runner (option combinations, odd
numbers and strings, new kinds of file, TOML profiles, the Python API), and in
real processes (environment variables, locales, non-UTF-8 arguments, the
first line piped, signals mid-write, concurrent writers of one file).

    python3 scripts/campaign8.py OUT.tsv [GROUP ...]   # from the repository root

Each case: an id, a class, what the promise asks (ok: exit 0 or 1 with an
answer; err: exit 2 and one `error:` line; any: either, reviewed), the
verdict and what happened. Groups: cli api env first signals concurrent.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from campaign8_cases import api_cases, cli_cases  # noqa: E402
from timestamped import run as timed  # noqa: E402

ROOT = Path(tempfile.mkdtemp(prefix="c8-"))
TCPROBE = str(Path(sys.executable).with_name("tcprobe"))
BF = ml_dtypes.bfloat16


def npy_header(descr: str, shape: tuple, version=(1, 0), fortran=False, extra="") -> bytes:
    d = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape!r}, {extra}}}"
    major = version[0]
    hl = 2 if major == 1 else 4
    pre = b"\x93NUMPY" + bytes(version)
    pad = 64 - (len(pre) + hl + len(d) + 1) % 64
    body = (d + " " * pad + "\n").encode("latin1" if major < 3 else "utf8")
    return pre + len(body).to_bytes(hl, "little") + body


def files():
    os.chdir(ROOT)
    rng = np.random.default_rng(8)
    a = rng.standard_normal((8, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    np.save("a.npy", a)
    np.save("b.npy", b)
    np.save("c.npy", np.zeros((8, 8), np.float32))
    np.save("a64.npy", rng.standard_normal((8, 64)).astype(np.float16))
    np.save("b64.npy", rng.standard_normal((64, 8)).astype(np.float16))
    for name in ("oloop1.json", "oloop2", "oloop3.json", "oloop4"):
        os.symlink(name, name)  # a loop where an output goes
    Path("realdir").mkdir()
    os.symlink("realdir", "dirlink")
    np.save("d.npy", a.astype(np.float32) @ b.astype(np.float32))
    np.save("bias.npy", np.zeros(8, np.float32))
    np.save("ba.npy", a.astype(BF).view(np.uint16))
    os.symlink("loop.npy", "loop.npy")
    os.symlink("loop2.npy", "loop1.npy")
    os.symlink("loop1.npy", "loop2.npy")
    np.savez("z.npz", a=a)
    Path("p.pkl").write_bytes(pickle.dumps(a))
    Path("gz.npy").write_bytes(gzip.compress(Path("a.npy").read_bytes()))
    Path("v2.npy").write_bytes(npy_header("<f2", (8, 16), (2, 0)) + a.tobytes())
    Path("v3.npy").write_bytes(npy_header("<f2", (8, 16), (3, 0)) + a.tobytes())
    Path("v9.npy").write_bytes(npy_header("<f2", (8, 16), (9, 0)) + a.tobytes())
    Path("extra.npy").write_bytes(npy_header("<f2", (8, 16), extra="'x': 1,") + a.tobytes())
    Path("long.npy").write_bytes(Path("a.npy").read_bytes() + b"\0" * 64)
    Path("negshape.npy").write_bytes(npy_header("<f2", (-8, 16)) + a.tobytes())
    Path("floatshape.npy").write_bytes(npy_header("<f2", (8.0, 16)) + a.tobytes())
    Path("nodescr.npy").write_bytes(npy_header("", (8, 16)) + a.tobytes())
    Path("f2x.npy").write_bytes(npy_header("<f2", (8, 16), fortran="'yes'") + a.tobytes())
    np.save("struct.npy", np.zeros((8, 16), [("x", "<f2")]))
    np.save("sub.npy", np.zeros((8, 4), ("<f2", (4,))))
    np.save("u1.npy", np.zeros((8, 16), np.uint8))
    np.save("dt.npy", np.zeros((8, 16), "datetime64[s]"))
    np.save("str.npy", np.full((8, 16), "x"))
    np.save("f8e.npy", np.ones((8, 16), ml_dtypes.float8_e4m3fn))
    np.save("i4.npy", np.ones((8, 16), ml_dtypes.int4))
    np.save("half16.npy", np.ones((16, 16), np.float16))
    np.save("-x.npy", a)
    np.save("sp ace.npy", a)
    np.save("nl\nname.npy", a)
    np.save("tab\tname.npy", a)
    np.save("\u202eypn.a.npy", a)
    np.save("big.npy", np.ones((8, 16), np.float16))
    np.save("d16.npy", (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
    np.save("splits.npy", np.array([8], np.int64))
    np.save("splits_neg.npy", np.array([-8, 24], np.int64))
    np.save("splits_f.npy", np.array([8.5], np.float64))
    np.save("splits_nan.npy", np.array([np.nan]))
    np.save("scale.npy", np.ones((8, 1), np.uint8))
    Path("ro").mkdir()
    os.symlink("/proc/self/status", "proc.npy")
    os.symlink("/dev/null", "null.npy")
    os.symlink("/", "rootlink.npy")
    Path("crlf.json").write_bytes(b'{"split_k": 2}\r\n')
    Path("sched_neg0.json").write_text('{"split_k": -0}')
    Path("sched_float.json").write_text('{"split_k": 2.0}')
    Path("sched_huge.json").write_text('{"split_k": 100000000000000000000000000}')
    Path("sched_uni.json").write_text('{"split_\u212a": 2}')
    Path("sched_null.json").write_text("null")
    Path("sched_arr.json").write_text("[]")
    Path("sched_nested.json").write_text('{"split_k": {"split_k": 2}}')
    Path("sched_trailing.json").write_text('{"split_k": 2} {"split_k": 3}')
    Path("sched_comment.json").write_text('{"split_k": 2 // two\n}')
    Path("sched_nul.json").write_bytes(b'{"split_k": 2}\x00')
    Path("sched_utf32.json").write_bytes('{"split_k": 2}'.encode("utf-32"))
    Path("sched_latin1.json").write_bytes('{"n\xe4me": 2}'.encode("latin1"))
    # TOML sim profiles of kinds no earlier campaign wrote
    toml = {
        "t_inf.toml": "name = 'x'\ngpu = 'H100'\nwindow_bits = inf\n",
        "t_nan.toml": "name = 'x'\ngpu = 'H100'\nwindow_bits = nan\n",
        "t_date.toml": "name = 1979-05-27T07:32:00Z\ngpu = 'H100'\n",
        "t_hugeint.toml": "name = 'x'\ngpu = 'H100'\nwindow_bits = 99999999999999999999\n",
        "t_neg0.toml": "name = 'x'\ngpu = 'H100'\nwindow_bits = -0\n",
        "t_unikey.toml": "name = 'x'\ngpu = 'H100'\n'\u00e9' = 1\n",
        "t_dotted.toml": "name = 'x'\ngpu.name = 'H100'\n",
        "t_aot.toml": "[[name]]\nx = 1\n",
        "t_bom.toml": "\ufeffname = 'x'\ngpu = 'H100'\n",
        "t_crlf.toml": "name = 'x'\r\ngpu = 'H100'\r\n",
        "t_famempty.toml": "name = 'x'\ngpu = 'H100'\nfamilies = []\n",
        "t_gpublank.toml": "name = 'x'\ngpu = ''\n",
        "t_namelong.toml": "name = '" + "x" * 5000 + "'\ngpu = 'H100'\n",
        "t_nameuni.toml": "name = '\u202eevil'\ngpu = 'H100'\n",
        "t_lowgpu.toml": "name = 'x'\ngpu = 'h100'\n",
        "t_amdgpu.toml": "name = 'x'\ngpu = 'MI300X'\nfamilies = ['mma']\n",
        "t_mixfam.toml": "name = 'x'\ngpu = 'H100'\nfamilies = ['mma', 'mfma']\n",
        "t_famdup.toml": "name = 'x'\ngpu = 'H100'\nfamilies = ['mma', 'mma']\n",
        "t_famcase.toml": "name = 'x'\ngpu = 'H100'\nfamilies = ['MMA']\n",
        "t_table.toml": "name = 'x'\ngpu = 'H100'\n[nosuch]\nx = 1\n",
    }
    base = ("block_size = 4\nzero_floor = -133\ninput_conversion = 'truncate'\n"
            "output_rounding = 'rz'\nzero_sign = 'positive'\nnan = 0x7fffffff\n")
    for name, text in toml.items():
        bom = text.startswith("\ufeff")
        text = text.lstrip("\ufeff")
        if not text.startswith("[["):
            text = base + ("" if "window_bits" in text else "window_bits = 24\n") + text
        if name == "t_crlf.toml":
            text = text.replace("\n", "\r\n").replace("\r\r", "\r")
        Path(name).write_text(("\ufeff" if bom else "") + text, encoding="utf-8")
    Path("t_dir.toml").mkdir()
    # inputs an output must never replace (the class "outputs over inputs")
    Path("sched_keep.json").write_text('{"split_k": 1}')
    Path("p_keep.toml").write_text(Path("t_crlf.toml").read_text())
    import shutil
    shutil.copytree(HERE.parent / "tests/data/khattak-mikaitis-2025/H200/bf16", "cap_in/H200/bf16")
    subprocess.run([TCPROBE, "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100",
                    "--out", "v_keep"], capture_output=True)


# ---------------------------------------------------------------- in process


def run_cli(args):
    from click.testing import CliRunner

    from tcprobe.cli import main

    def _alarm(*_):
        raise TimeoutError("no answer in 120 s")
    before = set(os.listdir(ROOT))
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(120)
    try:
        r = CliRunner().invoke(main, args)
    finally:
        signal.alarm(0)
    return r, sorted(set(os.listdir(ROOT)) - before)


def _verdict(what, code, errs, bad, expect, unclear_other=False):
    """One case's (what happened, class): a check's finding is silent wrong,
    exit 3 is exit 3, an expected error must be one error line and exit 2, an
    expected success exit 0 or 1; ``unclear_other``: exit 2 without exactly
    one error line is unclear whatever was expected."""
    if bad:
        return what + "; " + bad, "silent"
    if code == 3:
        return what, "exit 3"
    if expect == "err":
        if code == 2 and len(errs) == 1:
            return what, "kept"
        return what, "unclear" if code == 2 else "silent"
    if expect == "ok":
        return what, "kept" if code in (0, 1) else "refused"
    if unclear_other and code == 2 and len(errs) != 1:
        return what, "unclear"
    return what, "review"


def classify_cli(expect, args, check=None):
    r, made = run_cli(args)
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    tb = "Traceback" in r.output or (r.exception is not None and not isinstance(r.exception, SystemExit))
    what = f"exit {r.exit_code}; " + (errs[0][:200] if errs else (r.output.strip().splitlines() or [""])[-1][:150])
    if made:
        what += f"; made {made[:3]}"
    if tb:
        return what + f" ({type(r.exception).__name__}: {str(r.exception)[:80]})", "traceback"
    bad = check(r, made) if check and r.exit_code in (0, 1) else None
    return _verdict(what, r.exit_code, errs, bad, expect, unclear_other=True)


def classify_api(expect, code):
    import torch
    from campaign8_cases import API_HELPERS

    import tcprobe
    import tcprobe.capture
    import tcprobe.torch  # noqa: F401
    env = {"np": np, "ml_dtypes": ml_dtypes, "tcprobe": tcprobe, "torch": torch, "os": os,
           "ROOT": str(ROOT), "Path": Path, **API_HELPERS}
    try:
        v = eval(code, env)
    except (ValueError, TypeError) as e:
        msg = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        if type(e).__module__.startswith(("numba", "numpy", "torch")) or not str(e):
            return msg, "unclear"
        return msg, "kept" if expect in ("err", "any") else "refused"
    except Exception as e:  # noqa: BLE001
        if type(e).__module__.startswith("tcprobe") and str(e) and "Error" in type(e).__name__:
            msg = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"  # the project's own error
            return msg, "kept" if expect in ("err", "any") else "refused"
        where = traceback.extract_tb(e.__traceback__)[-1]
        return f"{type(e).__name__}: {str(e)[:160]} @ {where.name}", "traceback"
    shown = v if isinstance(v, str) else \
        f"{type(v).__name__} {getattr(v, 'shape', '')} {getattr(v, 'dtype', '')}"
    if isinstance(v, str) and v.startswith("WRONG"):
        return shown, "silent"
    if expect == "err":
        return shown, "silent"
    return shown, "kept" if expect == "ok" else "review"


# ---------------------------------------------------------------- processes


def proc(args, env=None, timeout=120, stdin=None):
    e = dict(os.environ)
    e.pop("COLUMNS", None)
    e.update(env or {})
    r = subprocess.run(args, capture_output=True, env=e, timeout=timeout, cwd=ROOT,
                       stdin=stdin if stdin is not None else subprocess.DEVNULL)
    return r


def classify_proc(expect, args, env=None, check=None):
    r = proc([TCPROBE, *args], env)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    errs = [ln for ln in err.splitlines() if ln.startswith("error:")]
    what = f"exit {r.returncode}; " + (errs[0][:200] if errs else (
        (out + err).strip().splitlines() or [""])[-1][:150])
    if "Traceback" in out + err:
        return what + "; " + [ln for ln in (out + err).splitlines() if ln.strip()][-1][:120], "traceback"
    bad = check(r, out, err) if check else None
    return _verdict(what, r.returncode, errs, bad, expect)


def _no_traceback(r, o, e):
    return "a traceback for bad input" if "Traceback" in o + e else None


def env_cases():
    G = ["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100"]
    cases = []

    def c(expect, args, env, check=None):
        cases.append(("env", expect, args, env, check))
    Path("cachefile").write_text("")

    def table_whole(r, out, err):  # a row of targets' table keeps its eight columns
        rows = [ln for ln in out.splitlines() if ln.startswith("\u2502")]
        n = rows[0].count("\u2502") - 1 if rows else 0
        return f"columns lost: {n} of 8 shown" if n != 8 else None
    for cols in ["5", "0", "-1", "abc", "40", "60", "99999", "1e3", " 80 ", ""]:
        c("ok", ["targets"], {"COLUMNS": cols}, table_whole)
    for cols in ["5", "20"]:
        c("ok", [*G, "--compare", "A100", "--verdict-seconds", "0"], {"COLUMNS": cols},
          lambda r, o, e: None if "differ" in o + e else "no comparison shown")
    for k, v in [("NO_COLOR", "1"), ("NO_COLOR", ""), ("FORCE_COLOR", "1"), ("TERM", "dumb"),
                 ("TERM", ""), ("LANG", "C"), ("LC_ALL", "C"), ("LC_ALL", "tr_TR.UTF-8"),
                 ("PYTHONIOENCODING", "ascii"), ("PYTHONIOENCODING", "latin-1"),
                 ("PYTHONUTF8", "0"), ("PYTHONHASHSEED", "12345")]:
        def esc(r, o, e, forced=k == "FORCE_COLOR"):  # FORCE_COLOR asks for colour
            return None if forced or "\x1b[" not in o + e else "colour escapes in piped output"
        c("ok", ["targets"], {k: v}, esc)
        c("ok", [*G, "--compare", "A100", "--verdict-seconds", "0"], {k: v}, esc)
        c("err", [*G[:-1], "H\u20ac100"], {k: v})
    for k, v, exp in [("TCPROBE_CACHE", "cachefile", "ok"), ("TCPROBE_CACHE", "", "ok"),
                      ("TCPROBE_CACHE", "rel/cache", "ok"), ("TCPROBE_CACHE", "/proc/x", "ok"),
                      ("TCPROBE_KERNEL", "nope", "err"), ("TCPROBE_KERNEL", "", "any"),
                      ("TCPROBE_EPILOGUE", "nope", "err"), ("TCPROBE_EPILOGUE", "ENGINE", "any"),
                      ("TCPROBE_EPILOGUE", "", "any"),
                      ("TCPROBE_CUDA_DRIVER", "nope", "any"), ("TCPROBE_DEBUG", "0", "err"),
                      ("TCPROBE_HEARTBEAT", "On", "ok"), ("TCPROBE_HEARTBEAT", " off ", "ok"),
                      ("TCPROBE_NVDISASM", "/nonexistent", "any"), ("XDG_CACHE_HOME", "/dev/null", "ok"),
                      ("HOME", "/nonexistent", "ok"), ("NUMBA_CACHE_DIR", "/dev/null", "ok"),
                      ("NUMBA_DISABLE_JIT", "1", "any"), ("NUMBA_NUM_THREADS", "0", "any"),
                      ("NUMBA_NUM_THREADS", "999", "any"), ("OMP_NUM_THREADS", "x", "ok")]:
        args = [*G, "--seed", "-1"] if exp == "err" and k == "TCPROBE_DEBUG" else G
        c(exp, args, {k: v}, _no_traceback if k == "TCPROBE_DEBUG" else None)
    for k, v in [("TCPROBE_KERNEL", "nope"), ("TCPROBE_EPILOGUE", "nope"), ("TCPROBE_HEARTBEAT", "maybe")]:
        c("err", ["targets"], {k: v})
        c("err", ["devices"], {k: v})
    # bytes that are not UTF-8, in arguments (the shell passes them; Python escapes them)
    for args in ([*G[:2], "\udcff.npy", *G[3:]], [*G[:-1], "H\udcff"],
                 ["run-case", "--device", "sim:\udcff", "--datapath", "mma.bf16.f32.k16"],
                 ["ladder", "--format", "bf\udcff", "--device", "sim:h100"],
                 ["targets", "--json", "\udcff/x.json"],
                 ["score", "--capture", "\udcffnope"]):
        c("err", args, {},
          lambda r, o, e: "the name is shown other than as written" if "\\udcff" in e else None)
    return cases


FIRST = [
    ["targets"], ["devices"], ["warm", "--list"], ["mfma-check", "--arch", "gfx942"],
    ["sass-check", "--arch", "sm_90a", "--instr", "wgmma", "--format", "bf16"],
    ["score", "--capture", str(HERE.parent.parent / "shared/hwdata/khattak-mikaitis-2025/H200/bf16")],
    ["fit", "--capture", str(HERE.parent / "tests/data/khattak-mikaitis-2025/H200/bf16"), "--quick"],
    ["replay", "--capture", str(HERE.parent / "tests/data/khattak-mikaitis-2025/H200/bf16"),
     "--device", "sim:h200", "--limit", "50"],
    ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16"],
    ["ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0"],
    ["smoke", "--device", "sim:h100", "--format", "bf16", "--no-sass", "--cases", "50"],
    ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "2000", "--out", "first_v"],
    ["report", "merge", "first_v", "--out", "first_m"],
    ["gemm", "--random", "256x256x256", "--format", "bf16", "--gpu", "H100"],
    ["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--compare", "A100"],
    ["fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "H100"],
    ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "first_gp"],
    ["batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", "4096", "-k", "4096"],
    ["--help"], ["gemm", "--help"],
]


def first_cases():
    out = []
    for args in FIRST:
        r = timed([TCPROBE, *args], 300)
        t = r["first_output_s"]
        verdict = "kept" if t is not None and t <= 2.0 and not r["traceback"] else (
            "traceback" if r["traceback"] else "blank screen")
        what = f"exit {r['rc']}; first line at {t} s, longest silence {r['longest_silence_s']} s, " \
               f"wall {r['wall_s']} s; first: {(r['head'] or [''])[0][:80]}"
        out.append(("first line piped", "ok", "tcprobe " + " ".join(args), what, verdict))
    return out


def _kill_mid(args, sig, after, target):
    """Start a writer, send ``sig`` after ``after`` s; what is at ``target``."""
    # SIGINT back to its default in the child: a job started with & from a script
    # inherits SIGINT ignored, and Python then keeps ignoring it (Ctrl-C would)
    p = subprocess.Popen([TCPROBE, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after)
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return f"exit {p.returncode}; still running 60 s after the signal", "silent"
    err = err.decode(errors="replace")
    t = ROOT / target
    temps = [f for f in os.listdir(ROOT) if f.startswith((".tmp", "tmp")) or ".tmp" in f]
    state = "absent"
    if t.is_file():
        data = t.read_bytes()
        state = f"{len(data)} bytes"
        try:
            if target.endswith(".npy"):
                np.load(t)
            elif target.endswith(".json"):
                json.loads(data)
            state += ", whole"
        except Exception as e:  # noqa: BLE001
            state += f", HALF WRITTEN ({type(e).__name__})"
    elif t.is_dir():
        state = f"folder of {len(os.listdir(t))}"
    what = f"exit {p.returncode}; {target}: {state}; temps {temps[:3]}; " + \
        ((err.strip().splitlines() or [""])[-1][:120])
    bad = "HALF" in state or temps or "Traceback" in err
    return what, "silent" if bad else "kept"


def signal_cases():
    out = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = signal.Signals(sig).name
        for after in (0.2, 0.8, 2.0):
            for args, target in [
                (["gemm", "--random", "512x512x2048", "--format", "bf16", "--gpu", "H100",
                  "--out", f"s_{name}{after}.npy"], f"s_{name}{after}.npy"),
                (["fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "H100",
                  "--json", f"f_{name}{after}.json"], f"f_{name}{after}.json"),
                (["batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", "4096", "-k", "4096",
                  "--json", f"bi_{name}{after}.json"], f"bi_{name}{after}.json"),
                (["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "2000000",
                  "--out", f"v_{name}{after}", "--json", f"vj_{name}{after}.json"], f"vj_{name}{after}.json"),
            ]:
                what, verdict = _kill_mid(args, sig, after, target)
                out.append(("signals", "ok", f"{name} after {after} s: tcprobe " + " ".join(args), what, verdict))
    # an earlier output stays whole (or is replaced whole) when a rerun is stopped
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = signal.Signals(sig).name
        for after in (1.0, 2.5):
            old = f"old_{name}{after}.npy"
            np.save(ROOT / old, np.arange(4, dtype=np.float32))
            what, verdict = _kill_mid(["gemm", "--random", "512x512x2048", "--format", "bf16", "--gpu",
                                       "H100", "--out", old], sig, after, old)
            kept = np.load(ROOT / old) if (ROOT / old).is_file() else None
            if kept is None or kept.shape not in ((4,), (512, 512)):
                verdict, what = "silent", what + "; the earlier file is lost"
            out.append(("signals", "ok", f"{name} after {after} s over an earlier file: tcprobe gemm "
                        f"--random 512x512x2048 ... --out {old}", what, verdict))
            gp = f"gp_{name}{after}"
            subprocess.run([TCPROBE, "gemm-probe", "--gpu", "H100", "--format", "bf16", "--seed", "1",
                            "--out", gp], cwd=ROOT, capture_output=True)
            what, verdict = _kill_mid(["gemm-probe", "--gpu", "H100", "--format", "bf16", "--seed", "2",
                                       "--k", "16384", "--out", gp], sig, after, gp)
            out.append(("signals", "ok", f"{name} after {after} s over an earlier probe: tcprobe "
                        f"gemm-probe --seed 2 --k 16384 --out {gp}", *_probe_whole(gp, what, verdict)))
    return out


def _probe_whole(gp: str, what: str, verdict: str) -> tuple[str, str]:
    """A gemm-probe folder with a manifest holds exactly that manifest's run."""
    man = ROOT / gp / "manifest.json"
    if not man.is_file():
        return what + "; no manifest (the runner refuses the folder)", verdict
    m = json.loads(man.read_text())
    ref = ROOT / f"{gp}_ref"
    subprocess.run([TCPROBE, "gemm-probe", "--gpu", "H100", "--format", m["format"], "--seed",
                    str(m["seed"]), "--k", str(m["k"]), "--out", ref.name], cwd=ROOT, capture_output=True)
    differ = [f for f in os.listdir(ref) if (ROOT / gp / f).read_bytes() != (ref / f).read_bytes()]
    if differ:
        return what + f"; manifest seed {m['seed']} over other words: {differ[:3]}", "silent"
    return what + f"; manifest seed {m['seed']}, every file of that run", verdict


def concurrent_cases():
    out = []
    runs = [
        (["gemm", "--random", "128x128x256", "--format", "bf16", "--gpu", "H100", "--seed", "{i}",
          "--out", "same.npy"], "same.npy"),
        (["fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "H100",
          "--json", "same_fit.json"], "same_fit.json"),
        (["targets", "--json", "same_t.json"], "same_t.json"),
        (["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--json",
          "same_rc.json"], "same_rc.json"),
        (["gemm-probe", "--gpu", "H100", "--format", "bf16", "--seed", "{i}", "--out", "same_gp"], "same_gp"),
        (["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "3000", "--seed", "{i}",
          "--out", "same_v"], "same_v"),
        (["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "3000", "--out",
          "same_vr", "--resume"], "same_vr"),
    ]
    for args, target in runs:
        ps = [subprocess.Popen([TCPROBE, *[a.replace("{i}", str(i)) for a in args]], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(3)]
        res = [(p.wait(timeout=300), p.stderr.read().decode(errors="replace")) for p in ps]
        codes = [rc for rc, _ in res]
        errs = [next((ln for ln in e.splitlines() if ln.startswith("error:")), "") for _, e in res]
        tb = any("Traceback" in e for _, e in res)
        t = ROOT / target
        state = "absent"
        if t.is_file():
            try:
                np.load(t) if target.endswith(".npy") else json.loads(t.read_text())
                state = "whole"
            except Exception as e:  # noqa: BLE001
                state = f"HALF WRITTEN ({type(e).__name__})"
        elif t.is_dir():
            state = f"folder: {sorted(os.listdir(t))[:6]}"
        what = f"exits {codes}; {target}: {state}; errors {[e[:90] for e in errs if e]}"
        bad = tb or "HALF" in state or any(c == 3 for c in codes) or any(
            c == 2 and not e for c, e in zip(codes, errs, strict=True))
        out.append(("concurrent writers", "ok", "3 at once: tcprobe " + " ".join(args), what,
                    "traceback" if tb else ("silent" if bad else "kept")))
    return out


def main_():
    files()
    groups = sys.argv[2:] or ["cli", "api", "env", "first", "signals", "concurrent"]
    rows = []

    def add(surface, expect, shown, got, verdict):
        rows.append((f"H{len(rows) + 1:03d}", surface, expect, verdict,
                     shown.replace("\t", " ").replace("\n", "\\n"),
                     got.replace("\t", " ").replace("\n", "\\n")))
        print(rows[-1][0], verdict, shown[:110], "->", got[:150], flush=True, file=sys.stderr)
    only = os.environ.get("C8_ONLY")  # one class (a rerun of the cases added last)
    if "cli" in groups:
        for surface, expect, args, check in cli_cases():
            if only and surface != only:
                continue
            got, verdict = classify_cli(expect, args, check)
            add(surface, expect, "tcprobe " + " ".join(args), got, verdict)
    if "api" in groups:
        for surface, expect, code in api_cases():
            if only and surface != only:
                continue
            got, verdict = classify_api(expect, code)
            add(surface, expect, code, got, verdict)
    if "env" in groups:
        for surface, expect, args, env, check in env_cases():
            got, verdict = classify_proc(expect, args, env, check)
            shown = " ".join(f"{k}={v!r}" for k, v in env.items()) + " tcprobe " + " ".join(args)
            add(surface, expect, shown, got, verdict)
    for g, fn in (("first", first_cases), ("signals", signal_cases), ("concurrent", concurrent_cases)):
        if g in groups:
            for surface, expect, shown, got, verdict in fn():
                add(surface, expect, shown, got, verdict)
    with open(sys.argv[1], "w", errors="backslashreplace") as fh:
        fh.write("id\tclass\texpected\tverdict\tcommand or code\twhat happened\n")
        for r in rows:
            fh.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main_()
