"""Campaign 7 (issue 36, docs/campaign-7.md): hostile CLI options, files and
the Python API, in one process. Each case: an id, a surface, what the promise
asks (ok: exit 0 or 1 with an answer; err: exit 2 and one `error:` line; a
Python case: a clear ValueError/TypeError or the right words), and what it did.

    python3 scripts/campaign7.py OUT.tsv      # from the repository root
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path

import ml_dtypes
import numpy as np
from click.testing import CliRunner

from tcprobe.cli import main

BF = ml_dtypes.bfloat16
CASES: list[tuple] = []
ROOT = Path(tempfile.mkdtemp(prefix="c7-"))


def case(surface, expect, *args, check=None):
    CASES.append(("cli", surface, expect, [str(a) for a in args], check))


def api(surface, expect, code):
    CASES.append(("api", surface, expect, code, None))


def files():
    os.chdir(ROOT)
    rng = np.random.default_rng(7)
    np.save("a.npy", rng.standard_normal((8, 16)).astype(np.float16))
    np.save("b.npy", rng.standard_normal((16, 8)).astype(np.float16))
    np.save("c.npy", np.zeros((8, 8), np.float32))
    np.save("d.npy", (np.load("a.npy").astype(np.float32) @ np.load("b.npy").astype(np.float32)))
    Path("empty.npy").write_bytes(b"")
    Path("garbage.npy").write_bytes(bytes(rng.integers(0, 256, 300, dtype=np.uint8)))
    Path("text.npy").write_text("1 2 3\n")
    os.mkdir("dir.npy")
    os.symlink("a.npy", "link.npy")
    os.symlink("nowhere.npy", "dangling.npy")
    os.link("a.npy", "hard.npy")
    np.save("\u00e4\u20ac\U0001f600.npy", np.load("a.npy"))
    np.save("x" * 200 + ".npy", np.load("a.npy"))
    np.save("a1d.npy", np.ones(16, np.float16))
    np.save("a3d.npy", np.ones((2, 8, 16), np.float16))
    np.save("a0d.npy", np.float16(1))
    np.save("a0.npy", np.ones((0, 16), np.float16))
    np.save("b0.npy", np.ones((16, 0), np.float16))
    np.save("k0a.npy", np.ones((8, 0), np.float16))
    np.save("k0b.npy", np.ones((0, 8), np.float16))
    np.save("c64.npy", np.ones((8, 16), np.complex64))
    np.save("bool.npy", np.ones((8, 16), bool))
    np.save("i64.npy", np.ones((8, 16), np.int64))
    np.save("f64.npy", np.ones((8, 16), np.float64))
    np.save("obj.npy", np.array([[1, 2]], object), allow_pickle=True)
    np.save("fort.npy", np.asfortranarray(np.load("a.npy")))
    np.save("be.npy", np.load("a.npy").astype(">f2"))
    np.save("nan.npy", np.full((8, 16), np.nan, np.float16))
    np.save("bshape.npy", np.ones((15, 8), np.float16))
    np.save("c_bad.npy", np.zeros((7, 8), np.float32))
    np.save("c_f64.npy", np.zeros((8, 8), np.float64))
    np.save("bf16raw.npy", np.ones((8, 16), BF))  # saved as |V2
    os.mkfifo("fifo.npy")
    Path("sched_empty.json").write_text("")
    Path("sched_list.json").write_text("[1, 2]")
    Path("sched_bad.json").write_text("{\"split_k\": ")
    Path("sched_nan.json").write_text("{\"split_k\": NaN}")
    Path("sched_big.json").write_text("{\"split_k\": 1e400}")
    Path("sched_unk.json").write_text("{\"splitk\": 2}")
    Path("sched_str.json").write_text("{\"split_k\": \"2\"}")
    Path("sched_bool.json").write_text("{\"split_k\": true}")
    Path("sched_bom.json").write_bytes(b"\xef\xbb\xbf{\"split_k\": 2}")
    Path("utf16.json").write_bytes("{\"split_k\": 2}".encode("utf-16"))
    Path("model_empty.json").write_text("{}")
    Path("prof_empty.toml").write_text("")
    Path("prof_bin.toml").write_bytes(b"\x00\xff\xfe")
    Path("prof_dup.toml").write_text("name='t'\nname='u'\n")


G = ["--gpu", "H100"]
AB = ["--a", "a.npy", "--b", "b.npy"]


def cli_cases():
    # numbers: every numeric option given hostile values
    odd = ["nan", "inf", "-inf", "-0", "1e400", "99999999999999999999999", "0x10", "1_0", "", " 1",
           "1e-400", "+1", "0b1", "1e2"]
    for v in odd:
        case("numbers", "err" if v in ("nan", "inf", "-inf", "1e400", "") else "any",
             "gemm", *AB, *G, "--alpha", v)
        case("numbers", "err" if v in ("nan", "inf", "-inf", "1e400", "") else "any",
             "gemm", *AB, "--c", "c.npy", *G, "--beta", v)
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "1e2") else "any",
             "gemm", *AB, *G, "--split-k", v)
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "-0", "1e2") else "any",
             "gemm", "--random", "8x8x16", "--format", "bf16", *G, "--seed", v)
        case("numbers", "err" if v not in ("-0", " 1", "+1", "1e2", "1e-400", "1_0") else "any",
             "gemm", *AB, *G, "--compare", "A100", "--verdict-seconds", v)
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "1e2") else "any",
             "validate", "--format", "bf16", "--device", "sim:h100", "--cases", v, "--out", "v_" + str(len(CASES)))
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "1e2") else "any",
             "gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "p_" + str(len(CASES)), "--k", v)
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "1e2") else "any",
             "batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", v, "-k", "64")
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "1e2", "-0") else "any",
             "fit-gemm", *AB, "--d", "d.npy", *G, "--alpha", v)
        case("numbers", "err" if v not in ("1_0", " 1", "+1", "1e2") else "any",
             "score", "--capture", "/work/shared/hwdata/khattak-mikaitis-2025/H200/bf16", "--show", v)
    for shape in ["0x8x16", "8x8x-16", "1e3x8x16", "8x8x99999999999", "8X8X16", " 8x8x16", "8x8",
                  "8x8x16x2", "8x8x0x10", "0x10x8x16", "8*8*16", "8x8x16 ", "\uff18x8x16", "8x8x1e1"]:
        case("numbers", "any", "gemm", "--random", shape, "--format", "bf16", *G)
    for sh in ["0/8", "9/8", "1/0", "nan/8", "-1/8", "8/8", "1/8/2", "1 / 8", "0x1/8", "\u0661/8"]:
        case("numbers", "err" if sh not in ("8/8", "1 / 8") else "any",
             "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100", "--shard", sh,
             "--out", "s_" + str(len(CASES)))
    # files of every wrong kind to every file input
    bad_in = ["empty.npy", "garbage.npy", "text.npy", "dir.npy", "dangling.npy", "nope.npy",
              "a1d.npy", "a3d.npy", "a0d.npy", "c64.npy", "bool.npy", "obj.npy", "nan.npy", "-",
              "f64.npy", "i64.npy", "be.npy", "fort.npy", "bf16raw.npy", "a0.npy"]
    for f in bad_in:
        exp = "ok" if f in ("nan.npy", "be.npy", "fort.npy") else (
            "any" if f in ("f64.npy", "i64.npy", "bf16raw.npy", "a0.npy") else "err")
        case("files", exp, "gemm", "--a", f, "--b", "b.npy", *G)
        case("files", exp if f not in ("a0.npy",) else "any", "fit-gemm", "--a", f, "--b", "b.npy",
             "--d", "d.npy", *G)
        case("files", "err" if f not in ("nan.npy", "be.npy", "fort.npy", "bf16raw.npy", "f64.npy",
                                          "i64.npy") else "any", "gemm", *AB, "--c", f, *G)
        case("files", "err" if f not in ("nan.npy", "be.npy", "fort.npy", "f64.npy", "i64.npy",
                                          "bf16raw.npy") else "any",
             "fit-gemm", *AB, "--d", f, *G)
    for f in ["link.npy", "hard.npy", "\u00e4\u20ac\U0001f600.npy", "x" * 200 + ".npy", "./a.npy",
              "dir.npy/../a.npy", str(ROOT / "a.npy"), "file:a.npy", "~/a.npy", "a.npy\n"]:
        case("files", "ok" if "file:" not in f and "~" not in f and "\n" not in f else "err",
             "gemm", "--a", f, "--b", "b.npy", *G)
    for f in ["b0.npy", "bshape.npy"]:
        case("files", "any", "gemm", "--a", "a.npy", "--b", f, *G)
    case("files", "any", "gemm", "--a", "k0a.npy", "--b", "k0b.npy", *G)
    case("files", "err", "gemm", *AB, "--c", "c_bad.npy", *G)
    case("files", "any", "gemm", *AB, "--c", "c_f64.npy", *G)
    for s in ["sched_empty.json", "sched_list.json", "sched_bad.json", "sched_nan.json",
              "sched_big.json", "sched_unk.json", "sched_str.json", "sched_bool.json",
              "sched_bom.json", "utf16.json", "dir.npy", "empty.npy", "garbage.npy", "fifo.npy"]:
        if s != "fifo.npy":
            case("files", "err" if s != "sched_bom.json" else "any", "gemm", *AB, *G, "--schedule", s)
        case("files", "err" if s != "sched_bom.json" else "any", "gemm", *AB, *G, "--model", s)
    for p in ["prof_empty.toml", "prof_bin.toml", "prof_dup.toml", "dir.npy", "nope.toml", "a.npy"]:
        case("files", "err", "run-case", "--device", f"sim:{p}", "--datapath", "mma.bf16.f32.k16")
        case("files", "err", "smoke", "--device", f"sim:{p}")
    for cap in ["empty.npy", "garbage.npy", "dir.npy", "nope", "a.npy", "-", "text.npy"]:
        case("files", "err" if cap != "dir.npy" else "any", "score", "--capture", cap)
        case("files", "err" if cap != "dir.npy" else "any", "replay", "--capture", cap, "--device",
             "sim:h100")
        case("files", "err" if cap != "dir.npy" else "any", "fit", "--capture", cap)
    # outputs: where they may and may not go
    outs = ["dir.npy", "nodir/x.npy", "a.npy/x.npy", "-", "/dev/full", "fifo.npy", "dangling.npy",
            "link.npy", "hard.npy", "\u00e4\u20ac\U0001f600-out.npy", "y" * 300 + ".npy", ".", "..",
            "/", "out.npy/"]
    for o in outs:
        exp = "ok" if o in ("-", "dangling.npy", "link.npy", "hard.npy", "\u00e4\u20ac\U0001f600-out.npy") else "err"
        case("outputs", exp, "gemm", *AB, *G, "--out", o)
        case("outputs", exp if o != "-" else "ok", "targets", "--json", o)
        case("outputs", exp, "gemm", *AB, *G, "--compare", "A100", "--verdict-seconds", "0",
             "--picture", o if o != "-" else "pic-", check=None)
    for o in ["a.npy", "b.npy", "link.npy", "./a.npy", "dir.npy/../a.npy", str(ROOT / "a.npy")]:
        case("outputs", "err", "gemm", *AB, *G, "--out", o)
        case("outputs", "err", "fit-gemm", *AB, "--d", "d.npy", *G, "--json", o)
    case("outputs", "err", "gemm", *AB, *G, "--json", "j.json", "--out", "./j.json")
    case("outputs", "err", "gemm", *AB, *G, "--compare", "A100", "--picture", "p.png", "--json", "p.png")
    case("outputs", "err", "gemm", *AB, *G, "--out", "-", "--json", "-")
    case("outputs", "any", "gemm", *AB, *G, "--picture", "p.png")
    for o in ["a.npy", "nodir/deeper/x", "", "-", "fifo.npy", "/dev/null", "dangling.npy"]:
        case("outputs", "ok" if o in ("nodir/deeper/x", "dangling.npy") else "err",
             "gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", o)
        case("outputs", "ok" if o in ("nodir/deeper/x",) else "err",
             "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100", "--out", o + ("v" if o == "nodir/deeper/x" else ""))
    # one rule for output files: their folder must exist
    for cmd in (["ladder", "--format", "bf16", "--device", "sim:h100", "--steps", "slice"],
                ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100", "--out", "vj"],
                ["sass-check", "--arch", "sm_90", "--instr", "wgmma"], ["targets"], ["devices"],
                ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16"]):
        case("outputs", "err", *cmd, "--json", f"nd_{len(CASES)}/x.json")
    case("outputs", "err", "targets", "--json", "a.npy/x/t.json")
    case("strings", "err", "sass-check", "--arch", "sm_90", "--instr", "wgmma")
    case("strings", "err", "sass-check", "--arch", "sm_80", "--instr", "tcgen05", "--format", "bf16")
    # --json - : stdout holds the JSON alone (the tables go to stderr)
    for cmd in (["targets"], ["devices"], ["score", "--capture",
                                           "/work/shared/hwdata/khattak-mikaitis-2025/H200/bf16"],
                ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a",
                 "0x3f80", "--b", "0x3f80"],
                ["ladder", "--format", "bf16", "--device", "sim:h100", "--steps", "slice"],
                ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100", "--out",
                 "vjs"],
                ["gemm", *AB, *G], ["gemm", *AB, *G, "--compare", "A100", "--verdict-seconds", "1"],
                ["fit-gemm", *AB, "--d", "d.npy", *G],
                ["batch-invariance", "--gpu", "H200", "--dtype", "bf16", "-n", "64", "-k", "64"],
                ["replay", "--capture", "/work/shared/hwdata/khattak-mikaitis-2025/H200/bf16",
                 "--device", "sim:h200", "--limit", "100"],
                ["mfma-check", "--arch", "gfx942"], ["smoke", "--device", "sim:h100", "--format",
                                                       "bf16", "--no-sass", "--cases", "50"]):
        case("json stdout", "ok", *cmd, "--json", "-", check="json-stdout")
    # `-` where it is and is not taken
    for opt, cmd in [("--a", ["gemm", "--b", "b.npy", *G]), ("--d", ["fit-gemm", *AB, *G]),
                     ("--schedule", ["gemm", *AB, *G]), ("--model", ["gemm", *AB, *G]),
                     ("--splits", ["fit-gemm", *AB, "--d", "d.npy", *G]),
                     ("--capture", ["score"]), ("--scale-a", ["gemm", *AB, *G])]:
        case("dash", "err", *cmd, opt, "-")
    # unicode / long / control values in string options
    weird = ["H\u0131\u0307100", "\uff28100", "h100", "H100 ", "H100\x00", "H" * 5000, "sm_90a", "\u200bH100"]
    for w in weird:
        case("strings", "ok" if w in ("h100", "H100 ") else "err", "gemm", *AB, "--gpu", w)
        case("strings", "ok" if w in ("h100", "H100 ") else "err", "batch-invariance", "--gpu", w,
             "--dtype", "bf16", "-n", "64", "-k", "64")
    for w in ["BF16", "bf16 ", "bfloat16", "\uff42f16", "f16,bf16", "bf16\x00", "fp8", "e4m3fn"]:
        case("strings", "any", "ladder", "--format", w, "--device", "sim:h100", "--steps", "nope")
        case("strings", "any", "gemm", "--random", "8x8x16", "--format", w, *G)
    for d in ["sim:H100", "sim:", "sim", "SIM:h100", "cuda:99", "cuda:-1", "cuda:x", "sim:h100:0",
              "sim:../../etc/passwd", "host"]:
        case("strings", "any", "run-case", "--device", d, "--datapath", "mma.bf16.f32.k16")
    # run-case word lists and numbers
    rc = ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16"]
    for w, exp in [("0x3f80,nan", "err"), ("1e400", "err"), ("0x", "err"), ("0b1", "any"),
                   ("\uff10x3f80", "err"), ("0x3f80 0x3f80", "err"), ("-1", "err"),
                   ("0x10000", "err"), ("0x3f80," * 17, "err"), ("+0x3f80", "any"),
                   ("0X3F80", "ok"), ("1.0", "err"), ("0x3f80;0x3f80", "err")]:
        case("run-case words", exp, *rc, "--a", w)
    for w, exp in [("-1", "err"), ("0x1ffffffff", "err"), ("nan", "err"), ("0x7fc00000", "ok"),
                   ("", "err"), ("0x3f800000,0x3f800000", "err"), ("4294967295", "ok")]:
        case("run-case words", exp, *rc, "--c", w)
    # ladder, smoke, validate numbers
    for opt, v, exp in [("--validate", "nan", "err"), ("--validate", "-1", "err"),
                        ("--validate", "1e400", "err"), ("--evidence", "-1", "err"),
                        ("--evidence", "nan", "err"), ("--steps", "sass,sass", "any"),
                        ("--steps", "SASS", "any"), ("--seed", "-1", "err")]:
        case("ladder options", exp, "ladder", "--format", "bf16", "--device", "sim:h100",
             "--steps", "slice", opt, v) if opt != "--steps" else \
            case("ladder options", exp, "ladder", "--format", "bf16", "--device", "sim:h100", opt, v,
                 "--validate", "0")
    for v, exp in [("nan", "err"), ("0", "err"), ("-5", "err"), ("1e400", "err"), ("0x10", "err")]:
        case("validate options", exp, "validate", "--format", "bf16", "--device", "sim:h100",
             "--cases", "100", "--shrink", v, "--out", f"sh_{len(CASES)}")
    # report merge of the wrong folders
    for args, exp in [(["a.npy"], "err"), (["dir.npy"], "err"), (["nope"], "err"),
                      (["dir.npy", "dir.npy"], "err"), (["."], "err")]:
        case("report merge", exp, "report", "merge", *args, "--out", f"m_{len(CASES)}")
    # gemm-probe shapes
    for opt, v, exp in [("--m", "0", "err"), ("--n", "-1", "err"), ("--m", "1e3", "err"),
                        ("--n", "99999999999", "err"), ("--m", "nan", "err")]:
        case("gemm-probe", exp, "gemm-probe", "--gpu", "H100", "--format", "bf16",
             "--out", f"gp_{len(CASES)}", opt, v)
    # help of every command and subcommand
    for c in ["batch-invariance", "devices", "fit", "fit-gemm", "gemm", "gemm-probe", "ladder",
              "mfma-check", "replay", "report", "report merge", "run-case", "sass-check", "score",
              "smoke", "targets", "validate", "warm"]:
        case("help", "ok", *c.split(), "--help")
        case("help", "ok", *c.split(), "-h")
        case("help", "err", *c.split(), "--no-such-option")
    case("help", "err", "nosuch")
    case("help", "err", "report", "nosuch")
    case("help", "ok", "--version")


def api_cases():
    a = "np.ones((8, 16), np.float16)"
    b = "np.ones((16, 8), np.float16)"
    for code, exp in [
        (f"tcprobe.matmul({a}, {b}, gpu='H100')", "ok"),
        ("tcprobe.matmul(np.ones((0, 16), np.float16), np.ones((16, 8), np.float16), gpu='H100')", "any"),
        ("tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 0), np.float16), gpu='H100')", "any"),
        ("tcprobe.matmul(np.ones(16, np.float16), np.ones(16, np.float16), gpu='H100')", "any"),
        ("tcprobe.matmul(np.ones((2, 8, 16), np.float16), np.ones((2, 16, 8), np.float16), gpu='H100')", "any"),
        (f"tcprobe.matmul({a}[:, ::-1], {b}[::-1], gpu='H100')", "ok"),
        (f"tcprobe.matmul({a}[::-1], {b}[:, ::-1], gpu='H100')", "ok"),
        ("tcprobe.matmul(np.ones((8, 32), np.float16)[:, ::2], np.ones((16, 8), np.float16), gpu='H100')", "ok"),
        ("tcprobe.matmul(np.lib.stride_tricks.as_strided(np.ones(1, np.float16), (8, 16), (0, 0)), np.ones((16, 8), np.float16), gpu='H100')", "ok"),
        (f"tcprobe.matmul({a}.astype(np.complex64), {b}, gpu='H100')", "err"),
        (f"tcprobe.matmul({a}.astype(bool), {b}, gpu='H100')", "err"),
        (f"tcprobe.matmul({a}.astype(np.int64), {b}.astype(np.int64), gpu='H100')", "err"),
        (f"tcprobe.matmul({a}.astype(np.float64), {b}.astype(np.float64), gpu='H100')", "err"),
        (f"tcprobe.matmul({a}.astype('>f2'), {b}, gpu='H100')", "ok"),
        (f"tcprobe.matmul({a}.astype(object), {b}, gpu='H100')", "err"),
        (f"tcprobe.matmul({a}.tolist(), {b}.tolist(), gpu='H100')", "any"),
        (f"tcprobe.matmul({a}, {b}, gpu='h100')", "ok"),
        (f"tcprobe.matmul({a}, {b}, gpu='')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu=None)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu=100)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', split_k=0)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', split_k=-1)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', split_k=2.0)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', split_k=True)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', split_k=10**30)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', split_k=17)", "any"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=float('nan'))", "any"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=1e400)", "any"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=complex(1, 1))", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha='2')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=None)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=np.float16(2))", "ok"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=np.array([2.0]))", "ok"),  # one element: the number (campaign 10)
        (f"tcprobe.matmul({a}, {b}, gpu='H100', alpha=10**400)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', beta=2)", "any"),
        (f"tcprobe.matmul({a}, {b}, np.ones((8, 8), np.float32), gpu='H100', beta=-0.0)", "ok"),
        (f"tcprobe.matmul({a}, {b}, np.ones((8, 1), np.float32), gpu='H100')", "any"),
        (f"tcprobe.matmul({a}, {b}, np.ones(8, np.float32), gpu='H100')", "any"),
        (f"tcprobe.matmul({a}, {b}, np.float32(1), gpu='H100')", "any"),
        (f"tcprobe.matmul({a}, {b}, np.ones((8, 8), np.float64), gpu='H100')", "any"),
        (f"tcprobe.matmul({a}, {b}, np.ones((8, 8), np.complex64), gpu='H100')", "err"),
        (f"tcprobe.matmul({a}, {b}, np.ones((8, 8), bool), gpu='H100')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', dtype='float16')", "ok"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', dtype=np.float64)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', dtype=np.complex64)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', dtype='nope')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', dtype=bool)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', bias=np.ones(8, np.float32))", "ok"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', bias=np.ones(7, np.float32))", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', bias=np.ones((8, 8), np.float32))", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', bias=np.ones(8, np.complex64))", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', jobs=0)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', jobs=-1)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', jobs=1.5)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', backend='nope')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', fast='yes')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', out=np.empty((8, 8), np.float32))", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', schedule='')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', schedule=[])", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', schedule={{'split_k': float('nan')}})", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', schedule={{'split_k': 2}}, split_k=3)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', model='')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', model=42)", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', instr='')", "err"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', instr='MMA')", "any"),
        (f"tcprobe.matmul({a}, {b}, gpu='H100', scale_a=np.ones((8, 1), np.float32))", "err"),
        ("tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), ml_dtypes.bfloat16), gpu='H100')", "err"),
        ("tcprobe.matmul(np.ones((8, 16), np.float32), np.ones((16, 8), np.float32), gpu='V100')", "err"),
        ("tcprobe.matmul(np.full((8, 16), np.nan, np.float16), np.ones((16, 8), np.float16), gpu='H100')", "ok"),
        ("tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((17, 8), np.float16), gpu='H100')", "err"),
        ("tcprobe.matmul(np.ones((8, 16), ml_dtypes.int4), np.ones((16, 8), ml_dtypes.int4), gpu='H100')", "any"),
        ("tcprobe.matmul(np.ones((8, 16), ml_dtypes.float8_e8m0fnu), np.ones((16, 8), ml_dtypes.float8_e8m0fnu), gpu='B200')", "err"),
        ("tcprobe.matmul(np.ones((8, 16), ml_dtypes.float4_e2m1fn), np.ones((16, 8), ml_dtypes.float4_e2m1fn), gpu='B200')", "any"),
        ("tcprobe.matmul(np.ones((8, 16), np.uint16), np.ones((16, 8), np.uint16), gpu='H100')", "err"),
        ("tcprobe.matmul(np.ma.masked_array(np.ones((8, 16), np.float16), mask=True), np.ones((16, 8), np.float16), gpu='H100')", "any"),
        ("tcprobe.matmul(np.matrix(np.ones((8, 16), np.float16)), np.ones((16, 8), np.float16), gpu='H100')", "any"),
        ("tcprobe.matmul(np.memmap(os.path.join(ROOT, 'mm.bin'), np.float16, 'w+', shape=(8, 16)), np.ones((16, 8), np.float16), gpu='H100')", "ok"),
        # dot
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0x3F800000, datapath='mma.bf16.f32.k16')", "ok"),
        ("tcprobe.dot([0x3F80] * 15, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "any"),
        ("tcprobe.dot([0x3F80] * 17, [0x3F80] * 17, 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot([-1] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot([0x10000] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot([1.5] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot(['0x3f80'] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 2**32, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, -1, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, None, datapath='mma.bf16.f32.k16')", "any"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='')", "err"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='nope')", "err"),
        ("tcprobe.dot([], [], 0, datapath='mma.bf16.f32.k16')", "any"),
        ("tcprobe.dot(np.ones((0, 16), np.uint16), np.ones((0, 16), np.uint16), np.zeros(0, np.uint32), datapath='mma.bf16.f32.k16')", "any"),
        ("tcprobe.dot(np.ones((2, 16), np.uint16), np.ones((3, 16), np.uint16), 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot(np.ones((2, 16), np.float32), np.ones((2, 16), np.uint16), 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot(np.ones(16, np.uint16)[::-1], np.ones(16, np.uint16), 0, datapath='mma.bf16.f32.k16')", "ok"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', active=[0, 1])", "err"),
        ("tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', model='')", "err"),
        ("tcprobe.dot([True] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "err"),
        ("tcprobe.dot(np.ones(16, np.uint64) * 2**40, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')", "err"),
    ]:
        api("api", exp, code)
    # torch
    T = "torch.ones(8, 16, dtype=torch.float16)"
    U = "torch.ones(16, 8, dtype=torch.float16)"
    for code, exp in [
        (f"tcprobe.matmul({T}, {U}, gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.to('meta'), {U}, gpu='H100')", "err"),
        (f"tcprobe.matmul({T}.requires_grad_(), {U}, gpu='H100')", "any"),
        (f"tcprobe.matmul({T}.to(torch.complex64), {U}, gpu='H100')", "err"),
        (f"tcprobe.matmul({T}.bool(), {U}, gpu='H100')", "err"),
        (f"tcprobe.matmul({T}.flip(0), {U}.flip(1), gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.t().contiguous().t(), {U}, gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}, {U}.numpy(), gpu='H100')", "any"),
        (f"tcprobe.matmul({T}.to(torch.float8_e4m3fn), {U}.to(torch.float8_e4m3fn), gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.to(torch.float8_e4m3fn), {U}.to(torch.float8_e5m2), gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.to(torch.float8_e4m3fnuz), {U}.to(torch.float8_e4m3fnuz), gpu='H100')", "err"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', dtype=torch.bfloat16)", "any"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', dtype=torch.float64)", "err"),
        (f"tcprobe.matmul({T}, {U}, torch.zeros(8, 8, dtype=torch.float64), gpu='H100')", "any"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', alpha=torch.tensor(2.0))", "any"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', split_k=torch.tensor(2))", "any"),
        (f"tcprobe.matmul({T}.unsqueeze(0), {U}.unsqueeze(0), gpu='H100')", "any"),
        (f"tcprobe.matmul({T}[:0], {U}, gpu='H100')", "any"),
        ("tcprobe.matmul(torch.ones(8, 16, dtype=torch.uint8), torch.ones(16, 8, dtype=torch.int8), gpu='H100')", "ok"),
        ("tcprobe.matmul(torch.ones(8, 16, dtype=torch.int16), torch.ones(16, 8, dtype=torch.int16), gpu='H100')", "err"),
        ("tcprobe.matmul(torch.ones(8, 16, dtype=torch.uint16), torch.ones(16, 8, dtype=torch.uint16), gpu='H100')", "err"),
        (f"tcprobe.matmul({T}.to(torch.float32), {U}.to(torch.float32), gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.to(torch.float64), {U}.to(torch.float64), gpu='H100')", "err"),
        ("_em(lambda: torch.mm(torch.ones(8, 16, dtype=torch.float16), torch.ones(16, 8, dtype=torch.float16)))", "ok"),
        ("_em(lambda: torch.mm(torch.ones(8, 16, dtype=torch.float16, device='meta'), torch.ones(16, 8, dtype=torch.float16, device='meta')))", "any"),
        ("_em(lambda: torch.mm(torch.ones(8, 16, dtype=torch.complex64), torch.ones(16, 8, dtype=torch.complex64)))", "any"),
        ("_em(lambda: torch.mm(torch.ones(8, 16, dtype=torch.float64), torch.ones(16, 8, dtype=torch.float64)))", "any"),
        ("_em(lambda: torch.mm(torch.ones(8, 16, dtype=torch.int32), torch.ones(16, 8, dtype=torch.int32)))", "any"),
        ("_em(lambda: torch.mm(torch.ones(8, 16, dtype=torch.float16, requires_grad=True), torch.ones(16, 8, dtype=torch.float16)).sum().backward())", "any"),
        ("_em(lambda: torch.ones(8, 16, dtype=torch.float16) @ torch.ones(16, dtype=torch.float16))", "any"),
        ("_em(lambda: torch.ones(16, dtype=torch.float16) @ torch.ones(16, dtype=torch.float16))", "any"),
        ("_em(lambda: torch.einsum('ik,kj->ij', torch.ones(8, 16, dtype=torch.float16), torch.ones(16, 8, dtype=torch.float16)))", "any"),
        ("_em(lambda: torch.ones(0, 16, dtype=torch.float16) @ torch.ones(16, 8, dtype=torch.float16))", "any"),
        ("_em(lambda: torch.ones(8, 0, dtype=torch.float16) @ torch.ones(0, 8, dtype=torch.float16))", "any"),
        ("_em(lambda: torch.ones(8, 16, dtype=torch.float16).flip(1) @ torch.ones(16, 8, dtype=torch.float16))", "ok"),
        ("_em(lambda: None, gpu='')", "err"),
        ("_em(lambda: None, gpu=None)", "err"),
        ("_em(lambda: None, gpu='H100', strict='yes')", "err"),
        ("_em(lambda: None, gpu='H100', backend='nope')", "err"),
        ("_em(lambda: None, gpu='H100', report='x')", "err"),
        ("_em(lambda: None, gpu='H100', model='')", "err"),
        ("_em(lambda: None, gpu='H100', schedule='nope')", "err"),
        ("tcprobe.torch.Report(compare=1)", "err"),
        *[(f"_emr({op!r}, {strict})", "ok") for op in
          ["f64", "c64", "i32", "i8", "meta", "mixdev", "f32highest", "mv", "dot", "einsum", "k0",
           "m0", "bf16big"] for strict in (False, True)],
        ("tcprobe.torch.Report(record=None)", "any"),
    ]:
        api("torch", exp, code)


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout("no answer in 90 s")


def run_cli(args):
    import signal
    before = set(os.listdir(ROOT))
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(90)
    try:
        r = CliRunner().invoke(main, args)
    finally:
        signal.alarm(0)
    after = set(os.listdir(ROOT))
    return r, sorted(after - before)


def classify_cli(expect, args, check=None):
    if any(a in ("fifo.npy",) for a in args) and "--picture" not in args and "--out" not in args \
            and "--json" not in args:
        return "skipped (a FIFO as input: blocks; run in a subprocess)", "n/a"
    r, made = run_cli(args)
    out = r.output
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    tb = "Traceback" in out or (r.exception is not None and not isinstance(r.exception, SystemExit))
    what = f"exit {r.exit_code}; " + (errs[0][:160] if errs else (out.strip().splitlines() or [""])[-1][:120])
    if made:
        what += f"; made {made[:3]}"
    if tb:
        return what + f" ({type(r.exception).__name__})", "traceback"
    if check == "json-stdout" and r.exit_code in (0, 1):
        import json
        try:
            json.loads(r.stdout)
        except ValueError as e:
            return what + f"; stdout is not JSON alone ({e})", "silent"
        return what + "; stdout: JSON alone", "kept"
    if r.exit_code == 3:
        return what, "exit 3"
    if expect == "err":
        if r.exit_code == 2 and len(errs) == 1:
            return what, "kept"
        if r.exit_code == 2:
            return what, "unclear"
        return what, "silent"
    if expect == "ok":
        return what, "kept" if r.exit_code in (0, 1) else "refused"
    if r.exit_code == 2 and len(errs) != 1:
        return what, "unclear"
    return what, "review"


def _em(fn, **kw):
    import torch  # noqa: F401

    import tcprobe.torch as tt
    kw.setdefault("gpu", "H100")
    with tt.emulate(**kw):
        return fn()


EMR = {
    "f64": "torch.ones(8,16,dtype=torch.float64) @ torch.ones(16,8,dtype=torch.float64)",
    "c64": "torch.ones(8,16,dtype=torch.complex64) @ torch.ones(16,8,dtype=torch.complex64)",
    "i32": "torch.ones(8,16,dtype=torch.int32) @ torch.ones(16,8,dtype=torch.int32)",
    "i8": "torch.ones(8,16,dtype=torch.int8) @ torch.ones(16,8,dtype=torch.int8)",
    "meta": "torch.ones(8,16,dtype=torch.float16,device='meta') @ torch.ones(16,8,dtype=torch.float16,device='meta')",
    "mixdev": "torch.ones(8,16,dtype=torch.float16,device='meta') @ torch.ones(16,8,dtype=torch.float16)",
    "f32highest": "torch.ones(8,16) @ torch.ones(16,8)",
    "mv": "torch.ones(8,16,dtype=torch.float16) @ torch.ones(16,dtype=torch.float16)",
    "dot": "torch.ones(16,dtype=torch.float16) @ torch.ones(16,dtype=torch.float16)",
    "einsum": "torch.einsum('ik,kj->ij', torch.ones(8,16,dtype=torch.float16), torch.ones(16,8,dtype=torch.float16))",
    "k0": "torch.ones(8,0,dtype=torch.float16) @ torch.ones(0,8,dtype=torch.float16)",
    "m0": "torch.ones(0,16,dtype=torch.float16) @ torch.ones(16,8,dtype=torch.float16)",
    "bf16big": "torch.full((1,16),3e38,dtype=torch.bfloat16) @ torch.full((16,1),2,dtype=torch.bfloat16)",
}


def _emr(op, strict):
    """An op under emulate: routed, or a counted fallback with its reason
    (strict=True: refused with it, or routed); anything else raises."""
    import torch

    import tcprobe.torch as tt
    rep = tt.Report()
    try:
        with tt.emulate(gpu="H100", strict=strict, report=rep):
            y = eval(EMR[op], {"torch": torch})
    except ValueError as e:
        if strict and "strict" in str(e):
            return f"refused: {str(e)[:90]}"
        raise
    routed = sum(s.routed for s in rep.ops.values())
    fallbacks = [why for _, why in rep.fallbacks]
    if not routed and not fallbacks:
        raise AssertionError("neither routed nor a counted fallback")
    return f"{tuple(y.shape)} routed={routed} fallbacks={fallbacks[:1]}"


def classify_api(expect, code):
    import torch

    import tcprobe.torch  # noqa: F401
    env = {"np": np, "ml_dtypes": ml_dtypes, "tcprobe": tcprobe, "torch": torch, "os": os,
           "ROOT": str(ROOT), "_em": _em, "_emr": _emr}
    try:
        v = eval(code, env)
    except (ValueError, TypeError) as e:
        msg = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        if type(e).__module__.startswith(("numba", "numpy", "torch")) or not str(e):
            return msg, "unclear"
        return msg, "kept" if expect in ("err", "any") else "refused"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e)[:160]} @ {traceback.extract_tb(e.__traceback__)[-1].name}", "traceback"
    shown = v if isinstance(v, str) else \
        f"{type(v).__name__} {getattr(v, 'shape', '')} {getattr(v, 'dtype', '')}"
    if expect == "err":
        return shown, "silent"
    return shown, "kept" if expect == "ok" else "review"


def main_():
    files()
    cli_cases()
    api_cases()
    rows = []
    only = os.environ.get("C7_ONLY")  # one surface, to try the harness itself
    for i, (kind, surface, expect, what, check) in enumerate(CASES, 1):
        if only and surface != only:
            continue
        if kind == "cli":
            got, verdict = classify_cli(expect, what, check)
            shown = "tcprobe " + " ".join(what)
        else:
            got, verdict = classify_api(expect, what)
            shown = what
        rows.append((f"G{i:03d}", surface, expect, verdict, shown.replace("\t", " ").replace("\n", "\\n"),
                     got.replace("\t", " ").replace("\n", "\\n")))
        print(rows[-1][0], verdict, shown[:100], "->", got[:140], flush=True, file=sys.stderr)
    with open(sys.argv[1], "w") as fh:
        fh.write("id\tsurface\texpected\tverdict\tcommand or code\twhat happened\n")
        for r in rows:
            fh.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main_()
