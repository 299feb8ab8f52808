"""Campaign 15's cases (scripts/campaign15.py runs them; docs/campaign-15.md):
a new user's and a hostile user's command lines and calls. Every subcommand's
help in its other spellings; option names a user would guess (near misses,
other case, ``=`` forms, repeats); numbers in other shapes (negative, huge,
NaN, float for int, full-width digits, hex, underscores, empty); paths that
are folders, FIFOs, character devices, link loops, unicode or newline names;
TOML and JSON files with a BOM, CRLF, cut short; outputs over existing
files, into folders, to ``-``; the Python API with odd types (numpy scalars,
0-d arrays, strided, Fortran, big-endian, bool/complex/object arrays,
memmaps, torch meta/requires_grad/views/bf16/fp8, lists of lists) into
tcprobe.matmul, tcprobe.dot, atlas.lookup and tcprobe.torch.emulate; the
AMD datapaths through every surface against sim:mi300x.

CLI: (class, expected, args, check) through click's runner; PROC: (class,
expected, argv, env, cwd, check) as real processes; API: (class, expected,
code) in a copy of PRELUDE's namespace. Expected words are worked out by
hand: ones times ones over K = 16 is 16.0 = 2^4 = 0x41800000, with a C of
ones 17.0 = 0x41880000, K = 32 gives 32.0 = 0x42000000, f16 16.0 = 0x4C00;
run-case's one word a side (the others +0) with C = 1 gives 1 + 1 = 2.0 =
0x40000000."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

W16, W17, W32, W8 = 0x41800000, 0x41880000, 0x42000000, 0x41000000
H16, H17 = 0x4C00, 0x4C40      # f16 16.0 = 2^4: exponent 15 + 4 = 19 -> 0x4C00; 17.0 adds 1/16
assert int(np.float32(16).view(np.uint32)) == W16 and int(np.float32(17).view(np.uint32)) == W17
assert int(np.float32(32).view(np.uint32)) == W32 and int(np.float16(16).view(np.uint16)) == H16
assert int(np.float16(17).view(np.uint16)) == H17
REPO = Path(__file__).resolve().parents[1]
SUBCOMMANDS = ("batch-invariance", "devices", "fit", "fit-gemm", "gemm", "gemm-probe", "ladder",
               "mfma-check", "replay", "report", "run-case", "sass-check", "score", "smoke",
               "targets", "validate", "warm")


def fixtures15(root: Path) -> None:
    """The files this campaign's cases read (campaign 10's fixtures are beside them)."""
    sv = lambda n, x: np.save(root / n, x)  # noqa: E731
    f16 = np.float16
    sv("A16.npy", np.ones((8, 16), f16))
    sv("B16.npy", np.ones((16, 8), f16))
    sv("C8.npy", np.ones((8, 8), np.float32))
    sv("A32.npy", np.ones((16, 32), f16))
    sv("B32.npy", np.ones((32, 16), f16))
    sv("Ä é.npy", np.ones((8, 16), f16))
    sv("ünï ☃.npy", np.ones((16, 8), f16))
    (root / "new\nline.npy").write_bytes((root / "A16.npy").read_bytes())
    for name in ("fifo.npy", "fifo.json", "fifo.jsonl", "fifo.toml", "fifo.tcap"):
        os.mkfifo(root / name)
    (root / "dirnpy.npy").mkdir()
    (root / "dirjson.json").mkdir()
    os.symlink("loopb.npy", root / "loopa.npy")
    os.symlink("loopa.npy", root / "loopb.npy")
    os.symlink("/dev/zero", root / "zero.npy")
    os.symlink("/dev/zero", root / "zero.json")
    # TOML profiles: BOM, CRLF, cut short, NUL, tab-indented, duplicate key
    prof = ('name = "p15"\ngpu = "H100"\nwindow_bits = 24\nblock_size = 4\nzero_floor = -133\n'
            'input_conversion = "truncate"\noutput_rounding = "rz"\nzero_sign = "positive"\nnan = 0x7fffffff\n')
    (root / "p_bom.toml").write_bytes(b"\xef\xbb\xbf" + prof.encode())
    (root / "p_crlf.toml").write_bytes(prof.replace("\n", "\r\n").encode())
    (root / "p_cut.toml").write_text(prof[:40])
    (root / "p_nul.toml").write_bytes(b'name = "p15"\x00\ngpu = "H100"\n')
    (root / "p_dup.toml").write_text(prof + 'gpu = "A100"\n')
    (root / "p_utf16.toml").write_bytes(prof.encode("utf-16"))
    (root / "p_ok.toml").write_text(prof)
    (root / "p_mi.toml").write_text('name = "p15m"\ngpu = "MI300X"\nfamilies = ["mfma"]\n')
    (root / "p_mi_crlf.toml").write_bytes(b'name = "p15m"\r\ngpu = "MI300X"\r\nfamilies = ["mfma"]\r\n')
    # JSON schedules: CRLF, cut short, BOM + CRLF, a lone BOM, whitespace only
    (root / "s_crlf.json").write_bytes(b'{\r\n  "split_k": 2\r\n}\r\n')
    (root / "s_cut.json").write_text('{"split_k": 2')
    (root / "s_bomcrlf.json").write_bytes(b'\xef\xbb\xbf{"split_k": 2}\r\n')
    (root / "s_bom_only.json").write_bytes(b"\xef\xbb\xbf")
    (root / "s_ws.json").write_text("   \n\t\n")
    (root / "s_ok.json").write_text('{"split_k": 2}')
    # model files (fit JSON) damaged
    (root / "m_cut.json").write_text('{"params": {"')
    (root / "m_crlf.json").write_bytes(b'{\r\n}\r\n')
    # jsonl captures damaged
    (root / "v_cut.jsonl").write_text('{"datapath": "mma.bf16.f32.k16", "a": [1')
    (root / "v_crlf.jsonl").write_bytes(b'\r\n\r\n')
    (root / "v_bom.jsonl").write_bytes(b"\xef\xbb\xbf\n")
    (root / "plain.txt").write_text("hello\n")
    (root / "keep_D.npy").write_bytes(b"keep")
    (root / "keep.json").write_text("keep")
    (root / "outdir").mkdir()
    ro = root / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    (root / "cap_fifo_dir").mkdir()
    os.mkfifo(root / "cap_fifo_dir" / "capture.tcap")


def _say(*words):
    """The error line (or the output) names each of ``words``."""
    def check(line):
        text = line if isinstance(line, str) else line.output
        missing = [w for w in words if w.lower() not in text.lower()]
        return f"does not name {missing}" if missing else None
    return check


def _out(*words):
    def check(r, made):
        missing = [w for w in words if w not in r.output]
        return f"no {missing} in the output" if missing else None
    return check


def _d(name, word, shape=(8, 8)):
    def check(r, made):
        got = np.load(name)
        if got.shape != shape:
            return f"{name} is {got.shape}, not {shape}"
        bits = np.ascontiguousarray(got).view(np.uint32 if got.itemsize == 4 else np.uint16)
        ws = sorted(set(bits.ravel().tolist()))
        return None if ws == [word] else f"{name} holds {[hex(w) for w in ws[:3]]}, not {hex(word)}"
    return check


def _absent(*names):
    def check(r, made):
        there = [n for n in names if os.path.lexists(n)]
        return f"made {there}" if there else None
    return check


def _json(name):
    def check(r, made):
        import json
        json.loads(Path(name).read_text())
        return None
    return check


def _relinked(name, word):
    """``name`` was a link to /dev/zero: now a regular file of D (a rename
    replaces a link, outfiles' rule), /dev/zero still the device."""
    def check(r, made):
        import stat
        if os.path.islink(name) or not stat.S_ISCHR(os.stat("/dev/zero").st_mode):
            return f"{name} still a link, or /dev/zero changed"
        return _d(name, word)(r, made)
    return check


def _kept(name, text):
    def check(r, made):
        return None if Path(name).read_text() == text else f"{name} was changed"
    return check


GEMM = ["gemm", "--a", "A16.npy", "--b", "B16.npy"]


def _help_cases():
    """Every subcommand's help in the spellings a user tries."""
    out = []
    C = "help: every subcommand, every spelling"
    for cmd in SUBCOMMANDS:
        out.append((C, "ok", [cmd, "-h"], _out("Usage:", cmd)))
        # an unknown option beside --help is refused (click parses before --help acts): named
        out.append((C, "err", [cmd, "--help", "--nosuch"], _say("--nosuch", "--help")))
    out += [
        (C, "ok", ["report", "merge", "-h"], _out("Usage:", "merge")),
        (C, "err", ["help"], _say("help")),
        (C, "err", ["gemm", "help"], _say("help")),
        (C, "err", ["--Help"], _say("--Help")),
        (C, "err", ["gemm", "-help"], _say("-help")),
        (C, "err", ["-H"], _say("-H")),
        (C, "ok", ["--version", "gemm"], _out("tcprobe")),
        (C, "err", ["GEMM", "-h"], _say("GEMM")),
        (C, "err", ["gem", "-h"], _say("gem")),
        (C, "err", ["fit_gemm", "-h"], _say("fit_gemm")),
        (C, "err", ["runcase", "-h"], _say("runcase")),
        (C, "err", ["report", "mrege", "a", "b"], _say("mrege")),
    ]
    return out


def _option_cases():
    """Option names a user would guess, in other case, with =, repeated."""
    OP = "options: near misses, case, = forms, repeats"
    V = ["validate", "--format", "bf16", "--device", "sim:h100"]
    L = ["ladder", "--device", "sim:h100", "--steps", "nosuch"]
    out = [
        (OP, "err", [*GEMM, "--gpu", "H100", "--fromat", "f16"], _say("--fromat")),
        (OP, "err", [*GEMM, "--GPU", "H100"], _say("--GPU")),
        (OP, "err", [*GEMM, "--gpus", "H100"], _say("--gpus")),
        (OP, "err", [*GEMM, "--device", "sim:h100"], _say("--device")),
        (OP, "err", [*GEMM, "--gpu", "H100", "--output", "D.npy"], _say("--output")),
        (OP, "err", [*GEMM, "--gpu", "H100", "--splitk", "2"], _say("--splitk")),
        (OP, "err", [*GEMM, "--gpu", "H100", "--split_k", "2"], _say("--split_k")),
        (OP, "ok", [*GEMM, "--gpu=H100", "--out=o_eq.npy"], _d("o_eq.npy", W16)),
        (OP, "ok", ["gemm", "--a=A16.npy", "--b=B16.npy", "--gpu=h100", "--out", "o_eq2.npy"], _d("o_eq2.npy", W16)),
        (OP, "err", [*GEMM, "--gpu", "H100", "--gpu=H100 "], _say("--gpu")),
        (OP, "err", [*GEMM, "--gpu=", "--out", "o_x.npy"], _say("--gpu")),
        (OP, "err", [*GEMM, "--gpu", "H100", "--out", "o_r1.npy", "--out", "o_r2.npy"], _say("--out")),
        (OP, "err", [*GEMM, "--gpu", "H100", "--c", "C8.npy", "--c", "C8.npy"], _say("--c")),
        (OP, "err", [*GEMM, "--gpu", "H100", "--alpha", "1", "--alpha", "2"], _say("--alpha")),
        (OP, "err", ["gemm", "--a", "A16.npy", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "H100"], _say("--a")),
        (OP, "err", [*V, "--cases", "10", "--cases", "20"], _say("--cases")),
        (OP, "err", [*V, "--cases", "10", "--seed", "1", "--seed", "2"], _say("--seed")),
        (OP, "err", [*V, "--case", "10"], _say("--case")),
        (OP, "err", [*V, "--Cases", "10"], _say("--Cases")),
        (OP, "ok", ["validate", "--format=BF16", "--device=SIM:H100", "--cases=50"], None),
        (OP, "err", [*V, "--cases", "10", "--jobs", "2", "--jobs", "3"], _say("--jobs")),
        (OP, "err", [*V, "--cases", "10", "--out", "o_v1", "--out", "o_v2"], _say("--out")),
        (OP, "err", [*L, "--format", "bf16", "--json", "o_l1.json", "--json", "o_l2.json"], _say("--json")),
        (OP, "err", [*L, "--format", "bf16", "--jsn", "o_l1.json"], _say("--jsn")),
        (OP, "err", ["ladder", "--format", "bf16", "--gpu", "H100"], _say("--gpu")),
        (OP, "err", ["run-case", "--gpu", "H100", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0"], _say("--gpu")),
        (OP, "err", ["run-case", "--device", "sim:h100", "--dp", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0"], _say("--dp")),
        (OP, "err", ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--a", "0x3f81", "--b", "0x3f80", "--c", "0"], _say("--a")),
        (OP, "err", ["score", "--captures", "tests/data/khattak-mikaitis-2025"], _say("--captures")),
        (OP, "err", ["score", "--capture", REPO.as_posix() + "/tests/data/khattak-mikaitis-2025", "--capture", "x"], _say("x")),  # several captures: the missing one named
        (OP, "err", ["targets", "--sets", "blog"], _say("--sets")),
        (OP, "err", ["targets", "--set=BLOG,,"], _say("set")),
        (OP, "ok", ["targets", "--set=MFMA"], _out("mfma")),
        (OP, "err", ["batch-invariance", "--gpu", "H100", "--format", "bf16", "--n", "256", "--k", "256", "--M", "1:8"], _say("--M")),
        (OP, "err", ["batch-invariance", "--gpu", "H100", "--format", "bf16", "--n", "256", "--k", "256", "--m", "8:1"], _say("M range", "8:1")),
        (OP, "err", ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "o_gp1", "--out", "o_gp2"], _say("--out")),
        (OP, "err", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--D", "A16.npy", "--gpu", "H100"], _say("--D")),
        (OP, "err", ["warm", "--step", "f16"], _say("--step")),
        (OP, "ok", ["warm", "--list", "--list"], None),
        (OP, "err", ["devices", "--all"], _say("--all")),
        (OP, "err", ["smoke", "--device", "sim:h100", "--device", "sim:a100"], _say("--device")),
        (OP, "ok", ["sass-check", "--arch", "sm_90a", "--arch", "sm_80"], None),  # several: a list
        (OP, "ok", ["mfma-check", "--arch", "gfx942", "--arch", "gfx90a"], None),
        (OP, "err", ["replay", "--capture", "plain.txt", "--device", "sim:h100", "--device", "sim:a100"], _say("--device")),
        (OP, "err", ["fit", "--capture", "plain.txt", "--json", "o_f1.json", "--json", "o_f2.json"], _say("--json")),
    ]
    return out


def _number_cases():
    """Numbers in shapes a user (or a script) sends."""
    N = "numbers: negative, huge, NaN, float for int, other digits"
    V = ["validate", "--format", "bf16", "--device", "sim:h100"]
    out = []
    for val in ("-1", "1e400", "nan", "inf", "-inf", "1.5", "1e1.5", "0x20", "0b11", "1_0_", "", " ", "10 20", "１０", "٣", "1e-3", "+5", "2**4", "1M"):
        exp = "ok" if val in ("１０", "٣", "+5", "1_0_", "1M") else "err"  # 1_0_: 10, leniently
        out.append((N, exp, [*V, "--cases", val], None if exp == "ok" else _say("--cases")))
    for val in ("-2", "2.5", "nan", "1e3", "", "0x2", "２", "99999999999999999999999", "-0"):
        exp = "ok" if val in ("２", "-0") else "err"
        if val == "-0":
            exp = "err"  # split 0 pieces: no split count
        chk = _d("o_sk.npy", W32, (16, 16)) if exp == "ok" else _say("split")
        out.append((N, exp, ["gemm", "--a", "A32.npy", "--b", "B32.npy", "--gpu", "H100", "--out", "o_sk.npy", "--split-k", val], chk))
    for val, exp, word in (("2", "ok", W32), ("2.0", "ok", W32), ("0x1p1", "err", None), ("2e0", "ok", W32),
                           ("２", "ok", W32), ("1e999", "err", None), ("nan ", "ok", None), ("", "err", None),
                           ("two", "err", None), ("2,0", "err", None), ("0,5", "err", None), ("--1", "err", None)):
        chk = (_d("o_al.npy", word) if word else None) if exp == "ok" else _say("alpha")
        out.append((N, exp, [*GEMM, "--gpu", "H100", "--out", "o_al.npy", "--alpha", val], chk))
    for opt, val in (("--m", "8.0"), ("--m", "1e1"), ("--n", "-8"), ("--k", "nan"), ("--k", "１６"), ("--m", "99999999999"), ("--m", "0x10")):
        exp = "ok" if val == "１６" else "err"
        args = ["gemm", "--m", "8", "--n", "8", "--k", "16", "--format", "f16", "--gpu", "H100", "--out", "o_mnk.npy"]
        i = args.index(opt)
        args[i + 1] = val
        out.append((N, exp, args, None if exp == "ok" else _say(opt if val != "99999999999" else val)))
    for opt, val in (("--seed", "-5"), ("--seed", "1.0"), ("--seed", "2**64"), ("--seed", "18446744073709551616"),
                     ("--jobs", "-1"), ("--jobs", "1.5"), ("--jobs", "100000"), ("--shrink", "nan")):
        exp = "err"
        out.append((N, exp, [*V, "--cases", "10", opt, val], None if exp == "ok" else _say(opt)))
    out += [
        (N, "err", ["ladder", "--format", "bf16", "--device", "sim:h100", "--show", "nan", "--steps", "nosuch"], _say("--show")),
        (N, "err", ["ladder", "--format", "bf16", "--device", "sim:h100", "--cases", "-1e3", "--steps", "nosuch"], _say("--cases")),
        (N, "err", ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "nan"], _say("--c")),
        (N, "err", ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a", "-0x3f80", "--b", "0x3f80", "--c", "0"], _say("--a")),
        (N, "err", ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a", "0x1_0000", "--b", "0x3f80", "--c", "0"], _say("--a")),
        (N, "err", ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a", "", "--b", "0x3f80", "--c", "0"], _say("--a")),
        (N, "err", ["batch-invariance", "--gpu", "H100", "--format", "bf16", "--n", "nan", "--k", "256"], _say("--n")),
        (N, "err", ["batch-invariance", "--gpu", "H100", "--format", "bf16", "--n", "256", "--k", "256", "--m", "1:1e400"], _say("--m")),
        (N, "err", ["batch-invariance", "--gpu", "H100", "--format", "bf16", "--n", "256", "--k", "256", "--ref", "-1"], _say("--ref")),
        (N, "err", ["replay", "--capture", REPO.as_posix() + "/tests/data/khattak-mikaitis-2025", "--device", "sim:h100", "--limit", "1.5"], _say("--limit")),
        (N, "err", ["score", "--capture", REPO.as_posix() + "/tests/data/khattak-mikaitis-2025", "--show", "1e9999"], _say("--show")),
        (N, "err", ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "o_gpk", "--k", "nan"], _say("--k")),
        (N, "err", ["validate", "--targets", "blog", "--device", "sim:b200", "--cases", "10", "--shard", "1/nan"], _say("--shard")),
        (N, "err", ["validate", "--targets", "blog", "--device", "sim:b200", "--cases", "10", "--shard", "½"], _say("--shard")),
    ]
    return out


def _path_cases():
    """Paths that are not what they seem: folders, FIFOs, devices, loops, unicode, newlines."""
    P = "paths: folders, FIFOs, devices, link loops, unicode names"
    K = REPO.as_posix() + "/tests/data/khattak-mikaitis-2025"
    out = [
        (P, "err", ["gemm", "--a", "fifo.npy", "--b", "B16.npy", "--gpu", "H100"], _say("fifo.npy")),
        (P, "err", ["gemm", "--a", "A16.npy", "--b", "fifo.npy", "--gpu", "H100"], _say("fifo.npy")),
        (P, "err", [*GEMM, "--gpu", "H100", "--c", "fifo.npy"], _say("fifo.npy")),
        (P, "err", ["gemm", "--a", "zero.npy", "--b", "B16.npy", "--gpu", "H100"], _say("zero.npy")),
        (P, "err", ["gemm", "--a", "loopa.npy", "--b", "B16.npy", "--gpu", "H100"], _say("loopa.npy")),
        (P, "err", ["gemm", "--a", "dirnpy.npy", "--b", "B16.npy", "--gpu", "H100"], _say("dirnpy.npy")),
        (P, "ok", ["gemm", "--a", "Ä é.npy", "--b", "ünï ☃.npy", "--gpu", "H100", "--out", "Ö ☃ out.npy"], _d("Ö ☃ out.npy", W16)),
        (P, "ok", ["gemm", "--a", "new\nline.npy", "--b", "B16.npy", "--gpu", "H100", "--out", "o_nl.npy"], _d("o_nl.npy", W16)),
        (P, "err", ["gemm", "--a", "A16.npy\x00x", "--b", "B16.npy", "--gpu", "H100"], _say("--a")),
        (P, "err", [*GEMM, "--gpu", "H100", "--schedule", "fifo.json"], _say("fifo.json")),
        (P, "err", [*GEMM, "--gpu", "H100", "--schedule", "zero.json"], _say("zero.json")),
        (P, "err", [*GEMM, "--gpu", "H100", "--schedule", "dirjson.json"], _say("dirjson.json")),
        (P, "err", [*GEMM, "--gpu", "H100", "--model", "fifo.json"], _say("fifo.json")),
        (P, "err", [*GEMM, "--gpu", "H100", "--model", "zero.json"], _say("zero.json")),
        (P, "err", [*GEMM, "--gpu", "H100", "--model", "dirjson.json"], _say("dirjson.json")),
        (P, "err", ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model", "fifo.json"], _say("fifo.json")),
        (P, "err", ["score", "--capture", "fifo.jsonl"], _say("fifo.jsonl")),
        (P, "err", ["score", "--capture", "fifo.tcap"], _say("fifo.tcap")),
        (P, "err", ["score", "--capture", "/dev/zero"], _say("/dev/zero")),
        (P, "err", ["score", "--capture", "/dev/stdin"], _say("/dev/stdin")),
        (P, "err", ["fit", "--capture", "fifo.jsonl"], _say("fifo.jsonl")),
        (P, "err", ["replay", "--capture", "fifo.tcap", "--device", "sim:h100"], _say("fifo.tcap")),
        (P, "err", ["score", "--capture", "loopa.npy"], _say("loopa.npy")),
        (P, "err", ["score", "--capture", "cap_fifo_dir"], _say("cap_fifo_dir")),
        (P, "err", ["score", "--capture", K, "--json", "fifo.json"], _say("fifo.json")),
        (P, "ok", ["score", "--capture", K, "--json", "zero.json"], None),  # the link is replaced (outfiles), /dev/zero untouched
        (P, "err", ["validate", "--format", "bf16", "--device", "sim:fifo.toml", "--cases", "10"], _say("fifo.toml")),
        (P, "err", ["validate", "--format", "bf16", "--device", "sim:dirjson.json", "--cases", "10"], _say("dirjson.json")),
        (P, "err", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "zero.npy", "--gpu", "H100"], _say("zero.npy")),
        (P, "err", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "C8.npy", "--gpu", "H100", "--splits", "fifo.npy"], _say("fifo.npy")),
        (P, "err", ["report", "merge", "fifo.npy", "dirnpy.npy", "--out", "o_rm"], _say("fifo.npy")),
        (P, "err", ["score", "--capture", "Ä é.npy"], _say("Ä é.npy")),
        (P, "err", ["score", "--capture", "v_cut.jsonl"], _say("v_cut.jsonl")),
        (P, "err", ["score", "--capture", "v_crlf.jsonl"], _say("v_crlf.jsonl")),
        (P, "err", ["score", "--capture", "v_bom.jsonl"], _say("v_bom.jsonl")),
        (P, "err", ["score", "--capture", "plain.txt"], _say("plain.txt")),
    ]
    return out


def _file_cases():
    """TOML and JSON files with a BOM, CRLF, cut short; outputs over files, in folders, to -."""
    F = "files: BOM, CRLF, cut short"
    RC = ["run-case", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0x3f800000"]
    out = [
        (F, "ok", [*RC, "--device", "sim:p_bom.toml"], _out("0x40000000")),
        (F, "ok", [*RC, "--device", "sim:p_crlf.toml"], _out("0x40000000")),
        (F, "err", [*RC, "--device", "sim:p_cut.toml"], _say("p_cut.toml")),
        (F, "err", [*RC, "--device", "sim:p_nul.toml"], _say("p_nul.toml")),
        (F, "err", [*RC, "--device", "sim:p_dup.toml"], _say("p_dup.toml", "line 10")),
        (F, "err", [*RC, "--device", "sim:p_utf16.toml"], _say("p_utf16.toml")),
        (F, "ok", [*RC, "--device", "sim:./p_ok.toml"], _out("0x40000000")),
        (F, "ok", ["run-case", "--device", "sim:p_mi_crlf.toml", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0x3f800000"], _out("0x40000000")),
        (F, "ok", ["gemm", "--a", "A32.npy", "--b", "B32.npy", "--gpu", "H100", "--schedule", "s_crlf.json", "--out", "o_s1.npy"], _d("o_s1.npy", W32, (16, 16))),
        (F, "ok", ["gemm", "--a", "A32.npy", "--b", "B32.npy", "--gpu", "H100", "--schedule", "s_bomcrlf.json", "--out", "o_s2.npy"], _d("o_s2.npy", W32, (16, 16))),
        (F, "err", [*GEMM, "--gpu", "H100", "--schedule", "s_cut.json", "--out", "o_s3.npy"], _say("s_cut.json")),
        (F, "err", [*GEMM, "--gpu", "H100", "--schedule", "s_bom_only.json", "--out", "o_s4.npy"], _say("s_bom_only.json")),
        (F, "err", [*GEMM, "--gpu", "H100", "--schedule", "s_ws.json", "--out", "o_s5.npy"], _say("s_ws.json")),
        (F, "err", [*GEMM, "--gpu", "H100", "--model", "m_cut.json"], _say("m_cut.json")),
        (F, "err", [*GEMM, "--gpu", "H100", "--model", "m_crlf.json"], _say("m_crlf.json")),
        (F, "err", ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model", "m_cut.json"], _say("m_cut.json")),
        (F, "ok", ["validate", "--format", "f16", "--device", "sim:p_mi.toml", "--cases", "50"], None),
        (F, "ok", ["validate", "--device", "sim:p_bom.toml", "--format", "bf16", "--cases", "50"], None),
    ]
    F2 = "outputs: existing files, folders, -, read-only"
    out += [
        (F2, "ok", [*GEMM, "--gpu", "H100", "--out", "keep_D.npy"], _d("keep_D.npy", W16)),
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", "outdir"], _say("outdir")),
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", "plain.txt/D.npy"], _say("plain.txt")),
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", "A16.npy"], _say("A16.npy")),
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", "./B16.npy"], _say("B16.npy")),
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", ""], _say("--out")),
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", "o_dx.npy", "--json", "o_dx.npy"], _say("o_dx.npy")),
        (F2, "ok", [*GEMM, "--gpu", "H100", "--out", "zero.npy"], _relinked("zero.npy", W16)),  # the link replaced (outfiles)
        (F2, "err", [*GEMM, "--gpu", "H100", "--out", "fifo.npy"], _say("fifo.npy")),
        (F2, "any", [*GEMM, "--gpu", "H100", "--out", "ro/D.npy"], None),
        (F2, "any", ["ladder", "--device", "sim:h100", "--format", "bf16", "--steps", "nosuch", "--json", "ro/l.json"], None),
        (F2, "ok", ["score", "--capture", REPO.as_posix() + "/tests/data/khattak-mikaitis-2025", "--json", "keep.json"], _json("keep.json")),
        (F2, "err", ["ladder", "--device", "sim:h100", "--format", "bf16", "--steps", "nosuch", "--json", "outdir"], _say("outdir")),
        (F2, "err", ["ladder", "--device", "sim:h100", "--format", "bf16", "--steps", "nosuch", "--json", ""], _say("--json")),
        (F2, "err", ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--out", "plain.txt"], _say("plain.txt")),
        (F2, "err", ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--out", "fifo.npy"], _say("fifo.npy")),
        (F2, "err", ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--out", ""], _say("--out")),
        (F2, "err", ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "plain.txt"], _say("plain.txt")),
        (F2, "err", ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "-"], _say("--out")),
        (F2, "err", ["report", "merge", "outdir", "outdir", "--out", "-"], _say("-")),
        (F2, "ok", ["score", "--capture", REPO.as_posix() + "/tests/data/khattak-mikaitis-2025", "--json", "-"], _out('"')),
        (F2, "ok", ["targets", "--set", "mfma", "--json", "-"] if False else ["targets", "--set", "mfma"], _out("mfma")),
        (F2, "err", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "C8.npy", "--gpu", "H100", "--json", "C8.npy"], _say("C8.npy")),
        (F2, "ok", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "C8.npy", "--gpu", "H100", "--json", "keep.json"], None),
    ]
    return out


def _amd_cases():
    """The AMD datapaths through every command, against sim:mi300x."""
    A = "AMD: every surface against sim:mi300x"
    RC = ["run-case", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0x3f800000"]
    out = [
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300X", "--out", "o_mi1.npy"], _d("o_mi1.npy", W16)),
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "mi300x", "--c", "C8.npy", "--out", "o_mi2.npy"], _d("o_mi2.npy", W17)),
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "Mi300X", "--dtype", "f16", "--out", "o_mi3.npy"], _d("o_mi3.npy", H16)),
        (A, "err", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300"], _say("MI300")),
        (A, "err", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "sim:mi300x"], _say("sim:mi300x")),
        (A, "err", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "gfx942"], _say("gfx942")),
        (A, "err", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300X", "--instr", "wgmma"], _say("wgmma")),
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300X", "--instr", "MFMA", "--out", "o_mi4.npy"], _d("o_mi4.npy", W16)),
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300X", "--instr", "mfma.f16.f32.k8", "--out", "o_mi5.npy"], _d("o_mi5.npy", W16)),
        (A, "err", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300X", "--instr", "mfma.bf16.f32.k16"], _say("bf16")),
        (A, "ok", ["gemm", "--m", "8", "--n", "8", "--k", "32", "--format", "e4m3fnuz", "--gpu", "MI300X", "--out", "o_mi6.npy"], None),
        (A, "err", ["gemm", "--m", "8", "--n", "8", "--k", "32", "--format", "e4m3", "--gpu", "MI300X"], _say("e4m3")),
        (A, "err", ["gemm", "--m", "8", "--n", "8", "--k", "32", "--format", "e4m3fnuz", "--gpu", "H100"], _say("e4m3fnuz")),
        (A, "ok", [*RC, "--device", "sim:mi300x"], _out("0x40000000")),
        (A, "ok", [*RC, "--device", "SIM:MI300X"], _out("0x40000000")),
        (A, "err", [*RC, "--device", "sim:mi300"], _say("mi300")),
        (A, "err", [*RC, "--device", "sim: mi300x"], _say("mi300x")),
        (A, "err", [*RC, "--device", "mi300x"], _say("mi300x")),
        (A, "err", [*RC, "--device", "hip:0"], _say("hip")),
        (A, "err", [*RC, "--device", "rocm"], _say("rocm")),
        (A, "err", ["run-case", "--device", "sim:mi300x", "--datapath", "mma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0"], _say("mma.f16.f32.k16")),
        (A, "ok", ["run-case", "--device", "sim:mi300x", "--datapath", "MFMA.F16.F32.K16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0x3f800000"], _out("0x40000000")),
        (A, "ok", ["validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "200"], None),
        (A, "ok", ["validate", "--format", "F16", "--device", "SIM:MI300X", "--cases", "2e2", "--instr", "MFMA"], None),
        (A, "err", ["validate", "--format", "e4m3", "--device", "sim:mi300x", "--cases", "10"], _say("e4m3")),
        (A, "err", ["validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "10", "--instr", "tcgen05"], _say("tcgen05")),
        (A, "ok", ["validate", "--datapath", "mfma.fp8.e4m3fnuzxe5m2fnuz.f32.k32", "--device", "sim:mi300x", "--cases", "100"], None),
        (A, "err", ["validate", "--datapath", "mfma.fp8.e4m3fnuzxe5m2fnuz.f32.k32", "--device", "sim:mi250x", "--cases", "100"], _say("mi250x")),
        (A, "ok", ["ladder", "--device", "sim:mi300x", "--format", "f16", "--steps", "nosuch"] if False else ["ladder", "--device", "sim:mi300x", "--datapath", "mfma.f32.f32.k1", "--cases", "0"], None),
        (A, "err", ["ladder", "--device", "sim:mi300x", "--format", "e4m3"], _say("e4m3")),
        (A, "err", ["ladder", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k17"], _say("mfma.f16.f32.k17")),
        (A, "ok", ["targets", "--set", "MFMA"], _out("mfma.f16.f32.k16")),
        (A, "ok", ["batch-invariance", "--gpu", "MI300X", "--format", "f16", "--n", "256", "--k", "256", "--m", "1:8"], None),
        (A, "err", ["batch-invariance", "--gpu", "MI300X", "--format", "e4m3", "--n", "256", "--k", "256", "--m", "1:8"], _say("e4m3")),
        (A, "ok", ["gemm-probe", "--gpu", "MI300X", "--format", "f16", "--out", "o_gpmi"], None),
        (A, "ok", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "o_mi1.npy", "--gpu", "MI300X"], _out("16")),
        (A, "err", ["fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "o_mi1.npy", "--gpu", "MI300"], _say("MI300")),
        (A, "ok", ["smoke", "--device", "sim:mi300x"], None),
        (A, "err", ["sass-check", "--instr", "mfma"], _say("mfma")),
        (A, "err", ["mfma-check", "--arch", "sm_90a"], _say("sm_90a")),
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI300X", "--compare", "MI250X", "--out", "o_mi7.npy"], _d("o_mi7.npy", W16)),
        (A, "ok", ["gemm", "--a", "A16.npy", "--b", "B16.npy", "--gpu", "MI100", "--compare", "H100", "--exact", "--out", "o_mi8.npy"], _d("o_mi8.npy", W16)),
    ]
    return out


CLI = _help_cases() + _option_cases() + _number_cases() + _path_cases() + _file_cases() + _amd_cases()


def _timed(r, out, err):
    return None


R = "README lines from /tmp: first output"
PROC = [
    (R, "ok", ["tcprobe", "--version"], {}, "away", None),
    (R, "ok", ["tcprobe", "targets"], {}, "away", None),
    (R, "ok", ["tcprobe", "devices"], {}, "away", None),
    (R, "ok", ["tcprobe", "warm", "--list"], {}, "away", None),
    (R, "ok", ["tcprobe", "score", "--capture", str(REPO / "tests/data/khattak-mikaitis-2025")], {}, "away", None),
    (R, "ok", ["tcprobe", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0"], {}, "away", None),
    (R, "ok", ["tcprobe", "batch-invariance", "--gpu", "H200", "--format", "bf16", "--n", "256", "--k", "4096", "--m", "1:64"], {}, "away", None),
    (R, "ok", ["tcprobe", "validate", "--format", "bf16", "--device", "sim:b200", "--cases", "1e4"], {}, "away", None),
    (R, "ok", ["tcprobe", "gemm", "--m", "128", "--n", "128", "--k", "128", "--format", "bf16", "--gpu", "A100", "--compare", "H100"], {}, "away", None),
    (R, "ok", ["tcprobe", "ladder", "--format", "f16", "--device", "sim:mi300x", "--steps", "slice", "--cases", "0"], {}, "away", None),
    (R, "err", ["tcprobe", "gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "H100"], {}, "away", _say("A.npy")),
    (R, "ok", ["tcprobe", "smoke", "--device", "sim:h200"], {}, "away", None),
]


PRELUDE = r'''
import numpy as np, ml_dtypes, torch, tcprobe, tcprobe.torch as tt
import torch.nn.functional as F
from tcprobe import atlas
A = np.ones((8, 16), np.float16); B = np.ones((16, 8), np.float16); C = np.ones((8, 8), np.float32)
def words(x):
    x = np.asarray(x.detach().float() if hasattr(x, "detach") else x, np.float32)
    return sorted(set(np.ascontiguousarray(x).view(np.uint32).ravel().tolist()))
def is_(x, w):
    got = words(x)
    assert got == [w], f"words {[hex(v) for v in got[:3]]}, not {hex(w)}"
def E(fn, gpu="H100", **kw):
    rep = tt.Report()
    with tt.emulate(gpu=gpu, report=rep, **kw):
        out = fn()
    return out, rep
def h(*s, dt=torch.float16, **kw):
    return torch.ones(*s, dtype=dt, **kw)
W16, W17, W32, W8 = 0x41800000, 0x41880000, 0x42000000, 0x41000000
'''

M = "API matmul: odd types"
D = "API dot: odd types"
L = "API atlas.lookup: odd types"
T = "API emulate: ops and odd tensors"
X = "API: AMD through every surface"

API = [
    (M, "ok", "is_(tcprobe.matmul(A.astype('>f2'), B, gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(A.astype('>f4'), B.astype('>f4'), gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(A, B, C.astype('>f4'), gpu='H100'), W17)"),
    (M, "ok", "is_(tcprobe.matmul(np.asfortranarray(A), np.asfortranarray(B), gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(np.ones((8, 32), np.float16)[:, ::2], np.ones((32, 8), np.float16)[::2], gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(A[::-1, ::-1], B[::-1], gpu='H100'), W16)"),
    (M, "ok", "mm = np.lib.format.open_memmap('mm15.npy', mode='w+', dtype=np.float16, shape=(8, 16)); mm[:] = 1\nis_(tcprobe.matmul(mm, B, gpu='H100'), W16)"),
    (M, "ok", "mm = np.memmap('mm15.raw', dtype=np.float16, mode='w+', shape=(16, 8)); mm[:] = 1\nis_(tcprobe.matmul(A, mm, gpu='MI300X'), W16)"),
    (M, "err", "tcprobe.matmul(np.float16(1), B, gpu='H100')"),
    (M, "err", "tcprobe.matmul(np.array(np.float16(1)), B, gpu='H100')"),
    (M, "err", "tcprobe.matmul([[1.0] * 16] * 8, [[1.0] * 8] * 16, gpu='H100')"),
    (M, "err", "tcprobe.matmul(A.astype(bool), B, gpu='H100')"),
    (M, "err", "tcprobe.matmul(A.astype(np.complex64), B, gpu='H100')"),
    (M, "err", "tcprobe.matmul(A.astype(object), B, gpu='H100')"),
    (M, "err", "tcprobe.matmul(A.astype(np.float64), B, gpu='H100')"),
    (M, "err", "tcprobe.matmul(A.view(np.uint16), B.view(np.uint16), gpu='H100')"),
    (M, "err", "tcprobe.matmul(np.ma.masked_array(A, mask=np.eye(8, 16, dtype=bool)), B, gpu='H100')"),
    (M, "ok", "is_(tcprobe.matmul(np.ma.masked_array(A), B, gpu='H100'), W16)"),
    (M, "err", "tcprobe.matmul(A, B, np.float32(1), gpu='H100')"),
    (M, "err", "tcprobe.matmul(A, B, np.ones((1, 8), np.float32), gpu='H100')"),
    (M, "ok", "is_(tcprobe.matmul(A, B, np.broadcast_to(np.float32(1), (8, 8)), gpu='H100'), W17)"),
    (M, "ok", "is_(tcprobe.matmul(A, B, gpu='H100', alpha=np.float16(2)), W32)"),
    (M, "ok", "is_(tcprobe.matmul(A, B, gpu='H100', alpha=np.array([[2.0]])[0, 0]), W32)"),
    (M, "ok", "is_(tcprobe.matmul(A, B, gpu='H100', alpha=torch.tensor(2.0)), W32)"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', alpha=torch.tensor([2.0, 3.0]))"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', alpha=1 + 0j)"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', alpha=np.bool_(True))"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', alpha='2')"),
    (M, "ok", "is_(tcprobe.matmul(np.ones((8, 64), np.float16), np.ones((64, 8), np.float16), gpu='H100', split_k=np.uint8(2)), 0x42800000)"),
    (M, "err", "tcprobe.matmul(np.ones((8, 64), np.float16), np.ones((64, 8), np.float16), gpu='H100', split_k=np.float64(2))"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', split_k=np.bool_(True))"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', jobs=np.int64(-2))"),
    (M, "ok", "is_(tcprobe.matmul(A, B, gpu='H100', jobs=np.int64(1)), W16)"),
    (M, "ok", "is_(tcprobe.matmul(A, B, gpu=np.str_('h100')), W16)"),
    (M, "err", "tcprobe.matmul(A, B, gpu=b'H100')"),
    (M, "err", "tcprobe.matmul(A, B, gpu=['H100'])"),
    (M, "ok", "r = tcprobe.matmul(A, B, gpu='H100', dtype=np.dtype('>f2')); assert r.dtype == np.float16; assert set(r.view(np.uint16).ravel().tolist()) == {0x4C00}"),
    (M, "ok", "r = tcprobe.matmul(A, B, gpu='H100', dtype=torch.float16); assert set(np.asarray(r).view(np.uint16).ravel().tolist()) == {0x4C00}"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', dtype=np.complex64)"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', dtype='')"),
    (M, "ok", "r = tcprobe.matmul(torch.ones(8, 16, requires_grad=True), torch.ones(16, 8), gpu='H100'); assert isinstance(r, torch.Tensor) and not r.requires_grad; is_(r, W16)"),
    (M, "ok", "is_(tcprobe.matmul(h(16, 8).t(), h(16, 8), gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(h(8, 32)[:, ::2], h(16, 8), gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(h(8, 16, dt=torch.bfloat16), h(16, 8, dt=torch.bfloat16), gpu='MI300X'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(torch.ones(16, 32).to(torch.float8_e4m3fn), torch.ones(32, 16).to(torch.float8_e4m3fn), gpu='H100'), W32)"),
    (M, "ok", "is_(tcprobe.matmul(torch.ones(16, 32).to(torch.float8_e5m2fnuz), torch.ones(32, 16).to(torch.float8_e5m2fnuz), gpu='MI300X'), W32)"),
    (M, "err", "tcprobe.matmul(torch.ones(16, 32).to(torch.float8_e4m3fn), torch.ones(32, 16).to(torch.float8_e4m3fn), gpu='MI300X')"),
    (M, "err", "tcprobe.matmul(torch.ones(16, 32).to(torch.float8_e4m3fnuz), torch.ones(32, 16).to(torch.float8_e4m3fnuz), gpu='H100')"),
    (M, "err", "tcprobe.matmul(h(8, 16, device='meta'), h(16, 8), gpu='H100')"),
    (M, "ok", "r = tcprobe.matmul(h(0, 16), h(16, 8), gpu='H100'); assert tuple(r.shape) == (0, 8)"),
    (M, "ok", "r = tcprobe.matmul(h(8, 0), h(0, 8), gpu='MI300X'); is_(r, 0)"),
    (M, "err", "tcprobe.matmul(h(2, 8, 16), h(16, 8), gpu='H100')"),
    (M, "err", "tcprobe.matmul(torch.ones(8, 16, dtype=torch.complex64), torch.ones(16, 8, dtype=torch.complex64), gpu='H100')"),
    (M, "err", "tcprobe.matmul(torch.ones(8, 16, dtype=torch.bool), torch.ones(16, 8, dtype=torch.bool), gpu='H100')"),
    (M, "err", "tcprobe.matmul(torch.ones(8, 16, dtype=torch.float16).to_sparse(), h(16, 8), gpu='H100')"),  # refused: to_dense() named
    (M, "ok", "x = h(8, 16); is_(tcprobe.matmul(x.expand(8, 16), h(1, 8).expand(16, 8), gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(torch.ones(8, 16, dtype=torch.float16).neg().neg(), h(16, 8), gpu='H100'), W16)"),
    (M, "ok", "is_(tcprobe.matmul(A, B, gpu='H100', bias=np.ones(8, '>f4')), W17)"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', bias=np.ones(8, bool))"),
    (M, "err", "tcprobe.matmul(A, B, gpu='H100', bias=[1.0] * 8)"),
    (D, "ok", "assert int(tcprobe.dot(np.full(16, 0x3F80, '>u2'), np.full(16, 0x3F80, '>u2'), np.uint32(0x3F800000), datapath='mma.bf16.f32.k16', gpu='H100')) == W17"),
    (D, "ok", "assert int(tcprobe.dot(np.full(16, 0x3F80, np.int32), np.full(16, 0x3F80, np.int64), np.int64(0x3F800000), datapath='mma.bf16.f32.k16', gpu='H100')) == W17"),
    (D, "ok", "assert int(tcprobe.dot(torch.full((16,), 0x3F80), torch.full((16,), 0x3F80), torch.tensor(0x3F800000), datapath='mma.bf16.f32.k16', gpu='H100')) == W17"),
    (D, "ok", "r = tcprobe.dot(np.full((4, 32), 0x3F80, np.uint16)[:, ::2], np.asfortranarray(np.full((4, 16), 0x3F80, np.uint16)), np.full(4, 0x3F800000, np.uint32), datapath='mma.bf16.f32.k16', gpu='H100'); assert list(map(int, r)) == [W17] * 4"),
    (D, "ok", "assert int(tcprobe.dot([[0x3F80] * 16], [[0x3F80] * 16], [0x3F800000], datapath='mma.bf16.f32.k16', gpu='H100')[0]) == W17"),
    (D, "ok", "assert int(tcprobe.dot(np.full(16, 0x3C00, np.uint16), np.full(16, 0x3C00, np.uint16), np.uint32(0x3F800000), datapath='mfma.f16.f32.k16', gpu='MI300X')) == W17"),
    (D, "ok", "assert int(tcprobe.dot(np.full(16, 0x3C00, np.uint16), np.full(16, 0x3C00, np.uint16), 0x3F800000, datapath='MFMA.F16.F32.K16', gpu='mi300x')) == W17"),
    (D, "err", "tcprobe.dot(np.ones(16, ml_dtypes.bfloat16), np.ones(16, ml_dtypes.bfloat16), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot(np.ones(16, bool), np.ones(16, bool), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot(np.full(16, 0x3F80, object), np.full(16, 0x3F80, object), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot(np.full(16, 0x3F80, np.complex64), np.full(16, 0x3F80, np.uint16), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot(np.full(16, 0x3F80, np.uint16), np.full(16, 0x3F80, np.uint16), np.float32(1.0), datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot(np.full(16, 0x3F80, np.uint16), np.full(16, 0x3F80, np.uint16), 0, datapath='mma.bf16.f32.k16', gpu='H100', active=np.ones(16, np.float32))"),
    (D, "err", "tcprobe.dot(np.full(15, 0x3F80, np.uint16), np.full(16, 0x3F80, np.uint16), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot(np.full(16, 0x13F80, np.uint32), np.full(16, 0x3F80, np.uint16), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath=b'mma.bf16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100', model='h100')"),
    (D, "err", "tcprobe.dot(h(16, device='meta').view(torch.int16), h(16).view(torch.int16), 0, datapath='mma.f16.f32.k16', gpu='H100')"),
    (D, "ok", "r = tcprobe.dot(np.zeros((0, 16), np.uint16), np.zeros((0, 16), np.uint16), np.zeros(0, np.uint32), datapath='mma.bf16.f32.k16', gpu='H100'); assert len(r) == 0"),
    (D, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mfma.f16.f32.k16', gpu='H100')"),
    (D, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='MI300X')"),
    (L, "ok", "assert atlas.lookup(np.str_('H100'), 'mm', 'bf16', 256, 256, 256).schedule is not None"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', torch.bfloat16, 256, 256, 256) == atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', ml_dtypes.bfloat16, 256, 256, 256) == atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', np.dtype(np.float16), 256, 256, 256) == atlas.lookup('H100', 'mm', 'f16', 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', np.float16, 256, 256, 256) == atlas.lookup('H100', 'mm', 'f16', 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', (torch.float16, torch.float16), 256, 256, 256) == atlas.lookup('H100', 'mm', 'f16', 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('MI300X', 'mm', torch.bfloat16, 256, 256, 256) == atlas.lookup('MI300X', 'mm', 'bf16', 256, 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', 3, 256, 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', None, 256, 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', torch.complex64, 256, 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', np.float64, 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', 'bf16', np.array(256), 256, 256) == atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256)"),
    (L, "ok", "assert atlas.lookup('H100', 'mm', 'bf16', torch.tensor(256), 256, 256) == atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', 'bf16', np.array(256.0), 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', 'bf16', np.array([256]), 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256, batch=np.bool_(True))"),
    (L, "err", "atlas.lookup('H100', b'mm', 'bf16', 256, 256, 256)"),
    (L, "err", "atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256, layout=3)"),
    (L, "err", "atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256, form=b'plain')"),
    (L, "err", "atlas.lookup('H100', 'mm', 'bf16', 256, 256, 256, layout='ROW/COL/ROW')"),
    (L, "err", "atlas.lookup('MI300X', 'scaled_mm', torch.float8_e4m3fn, 256, 256, 256)"),
    (T, "ok", "out, rep = E(lambda: torch.einsum('ik,kj->ij', h(8, 16), h(16, 8))); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.einsum('bik,bkj->bij', h(2, 8, 16), h(2, 16, 8)), gpu='MI300X'); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.einsum('i,i->', h(16), h(16))); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.einsum('ij,ij->i', h(8, 16), h(8, 16))); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: F.linear(h(16), h(8, 16))); assert out.shape == (8,); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: F.linear(h(2, 3, 16), h(8, 16), h(8))); assert out.shape == (2, 3, 8); is_(out, W17)"),
    (T, "ok", "out, rep = E(lambda: F.linear(h(2, 3, 4, 16), h(8, 16)), gpu='MI300X'); assert out.shape == (2, 3, 4, 8); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.matmul(h(2, 1, 8, 16), h(3, 16, 8))); assert out.shape == (2, 3, 8, 8); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.matmul(h(16), h(2, 16, 8))); assert out.shape == (2, 8); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.matmul(h(2, 8, 16), h(16))); assert out.shape == (2, 8); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: h(0, 8, 16) @ h(0, 16, 8)); assert out.shape == (0, 8, 8)"),
    (T, "ok", "out, rep = E(lambda: h(2, 8, 0) @ h(2, 0, 8), gpu='MI300X'); assert out.shape == (2, 8, 8); is_(out, 0)"),
    (T, "ok", "out, rep = E(lambda: h(3, 0, 16) @ h(3, 16, 8)); assert out.shape == (3, 0, 8)"),
    (T, "ok", "out, rep = E(lambda: h(8, 16, device='meta') @ h(16, 8, device='meta')); assert out.device.type == 'meta' and out.shape == (8, 8)"),
    (T, "ok", "x = torch.ones(8, 16, requires_grad=True)\nout, rep = E(lambda: (x @ torch.ones(16, 8)).sum().backward() or x.grad); is_(out, W8)"),
    (T, "ok", "out, rep = E(lambda: h(16, 8).t() @ h(16, 8)); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: h(8, 32, dt=torch.bfloat16)[:, ::2] @ h(16, 8, dt=torch.bfloat16), gpu='MI300X'); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch._scaled_mm(torch.ones(16, 32).to(torch.float8_e4m3fnuz), torch.ones(16, 32).to(torch.float8_e4m3fnuz).t(), torch.tensor(1.0), torch.tensor(1.0), out_dtype=torch.float32), gpu='MI300X'); is_(out, W32)"),
    (T, "ok", "f = torch.compile(lambda x, y: x @ y, backend='eager')\nout, rep = E(lambda: f(h(8, 16), h(16, 8))); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.ones(8, 16, dtype=torch.complex64) @ torch.ones(16, 8, dtype=torch.complex64)); assert (out == 16).all()"),
    (T, "ok", "out, rep = E(lambda: torch.ones(8, 16, dtype=torch.int64) @ torch.ones(16, 8, dtype=torch.int64)); assert (out == 16).all()"),
    (T, "ok", "out, rep = E(lambda: torch.ones(8, 16, dtype=torch.float64) @ torch.ones(16, 8, dtype=torch.float64)); assert (out == 16).all()"),
    (T, "err", "E(lambda: h(8, 16) @ h(16, 8), gpu=np.bytes_(b'H100'))"),
    (T, "ok", "out, rep = E(lambda: h(8, 16) @ h(16, 8), gpu=np.str_('mi300x')); is_(out, W16)"),
    (T, "err", "E(lambda: h(8, 16) @ h(16, 8), gpu='')"),
    (T, "err", "E(lambda: h(8, 16) @ h(16, 8), gpu='MI300X', instr='wgmma')"),
    (T, "err", "E(lambda: h(8, 16) @ h(16, 8), gpu='H100', instr='mfma')"),
    (T, "ok", "out, rep = E(lambda: torch.nn.functional.bilinear(h(2, 16), h(2, 16), h(8, 16, 16))); assert (out == 256).all()"),
    (T, "ok", "out, rep = E(lambda: torch.tensordot(h(8, 4, 4), h(4, 4, 8), dims=2)); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.inner(h(8, 16), h(8, 16))); is_(out, W16)"),
    (T, "ok", "out, rep = E(lambda: torch.outer(h(8), h(8))); is_(out, 0x3F800000)"),
    (T, "ok", "out, rep = E(lambda: torch.linalg.multi_dot([h(8, 16), h(16, 8), h(8, 8)])); is_(out, 0x43000000)"),
    (T, "ok", "out, rep = E(lambda: torch.baddbmm(h(2, 8, 8), h(2, 8, 16), h(2, 16, 8), beta=0.5, alpha=2)); assert float(out.float().unique()) == 32.5"),
    (X, "ok", "is_(tcprobe.matmul(A, B, C, gpu='MI300X'), W17)"),
    (X, "ok", "out, rep = E(lambda: torch.addmm(torch.ones(8, 8), torch.from_numpy(A).float(), torch.from_numpy(B).float()), gpu='MI300X'); is_(out, W17)"),
    (X, "ok", "d = tcprobe.dot(np.full(16, 0x3C00, np.uint16), np.full(16, 0x3C00, np.uint16), 0x3F800000, datapath='mfma.f16.f32.k16', gpu='MI300X'); assert int(d) == int(np.asarray(tcprobe.matmul(A, B, C, gpu='MI300X', instr='mfma.f16.f32.k16')).view(np.uint32)[0, 0])"),
    (X, "ok", "assert atlas.lookup('MI300X', 'mm', 'f16', 8, 8, 16).schedule is not None"),
    (X, "err", "atlas.lookup('MI300X', 'mm', 'e4m3', 256, 256, 256)"),
    (X, "err", "tcprobe.matmul(np.ones((8, 32), ml_dtypes.float8_e4m3fn), np.ones((32, 8), ml_dtypes.float8_e4m3fn), gpu='MI300X')"),
    (X, "err", "tcprobe.dot([0x38] * 32, [0x38] * 32, 0, datapath='mfma.fp8.e4m3fnuz.f32.k32', gpu='MI250X')"),
    (X, "ok", "out, rep = E(lambda: torch.ones(8, 32).to(torch.float8_e4m3fn).float() @ torch.ones(32, 8), gpu='MI300X'); is_(out, W32)"),
    (X, "ok", "is_(tcprobe.matmul(A.astype(np.float32), B.astype(np.float32), gpu='MI300X'), W16)"),
    (X, "ok", "is_(tcprobe.matmul(A.astype(ml_dtypes.float8_e5m2fnuz), B.astype(ml_dtypes.float8_e5m2fnuz), gpu='MI300X'), W16)"),
    (X, "ok", "is_(tcprobe.matmul(A.astype(np.float32), B.astype(np.float32), gpu='MI100'), W16)"),
    (X, "err", "tcprobe.matmul(A.astype(np.int8), B.astype(np.int8), gpu='MI300X')"),
]


def _no_file(*names):
    """No half file: each of ``names`` absent or whole (a .npy that loads, a
    JSON that parses: written before the signal came), and no temporary file
    beside one (``.NAME.*``)."""
    def check(root: Path):
        import json
        bad = [p.name for n in names for p in root.glob(f".{Path(n).name}.*")]
        for n in names:
            if not os.path.lexists(root / n):
                continue
            try:
                np.load(root / n) if n.endswith(".npy") else json.loads((root / n).read_text())
            except Exception:  # noqa: BLE001 - any failure to read it back is a half file
                bad.append(n)
        return f"half-made {bad}" if bad else None
    return check


def _resumes(folder, *args):
    """The interrupted capture continues with --resume to its end (exit 0 or 1)."""
    def check(root: Path):
        import subprocess
        import sys
        tcprobe = str(Path(sys.executable).with_name("tcprobe"))
        cap = root / folder / "capture.tcap"
        held = cap.stat().st_size if cap.exists() else 0  # cases on disk when it stopped
        r = subprocess.run([tcprobe, *args, "--out", folder, "--resume"], cwd=root,
                           capture_output=True, text=True, timeout=600)
        if r.returncode not in (0, 1) or (held > 1 << 20 and "from the capture" not in r.stderr + r.stdout):
            return f"--resume: exit {r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1][:150]}"
        return None
    return check


I_ = "interrupted runs: SIGTERM and SIGINT mid-run"
VAL = ["validate", "--format", "bf16", "--device", "sim:b200", "--cases", "2e6"]
# (class, argv, signal name, seconds before it, check(root))
INTERRUPTS = [
    (I_, ["gemm", "--random", "512x512x4096", "--format", "bf16", "--gpu", "H100", "--out", "i_d1.npy"], "SIGTERM", 2.5, _no_file("i_d1.npy")),
    (I_, ["gemm", "--random", "512x512x4096", "--format", "bf16", "--gpu", "MI300X", "--out", "i_d2.npy"], "SIGINT", 2.5, _no_file("i_d2.npy")),
    (I_, ["gemm", "--random", "256x256x8192", "--format", "f16", "--gpu", "H100", "--out", "i_d3.npy", "--json", "i_d3.json"], "SIGTERM", 3.0, _no_file("i_d3.npy", "i_d3.json")),
    (I_, [*VAL, "--out", "i_v1"], "SIGTERM", 15.0, _resumes("i_v1", *VAL)),
    (I_, [*VAL, "--out", "i_v2"], "SIGINT", 15.0, _resumes("i_v2", *VAL)),
    (I_, ["ladder", "--format", "bf16", "--device", "sim:h100", "--json", "i_l.json"], "SIGTERM", 3.0, _no_file("i_l.json")),
    (I_, ["fit", "--capture", str(REPO / "tests/data/khattak-mikaitis-2025"), "--json", "i_f.json"], "SIGTERM", 4.0, _no_file("i_f.json")),
    (I_, ["fit", "--capture", str(REPO / "tests/data/khattak-mikaitis-2025"), "--json", "i_f2.json"], "SIGINT", 4.0, _no_file("i_f2.json")),
]
