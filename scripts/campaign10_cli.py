"""Campaign 10's command-line cases (scripts/campaign10.py runs them) and the
fixtures they read. CLI: (class, expected, args, check or None), run in one
process; PROC: (class, expected, args, cwd, env, check), real processes."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import ml_dtypes
import numpy as np

REPO = Path(__file__).resolve().parent.parent
BF = ml_dtypes.bfloat16
G = ["--gpu", "H100"]
GEMM = ["gemm", "--a", "a.npy", "--b", "b.npy", *G]
FIT = ["fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G]
VAL = ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "50"]
RC = ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16"]
LAD = ["ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0", "--steps", "slice"]
CAP = str(REPO / "tests/data/khattak-mikaitis-2025/H200/bf16")


def _hdr(descr, shape, fortran=False, pad_to=64, version=(1, 0)):
    d = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape!r}, }}"
    hl = 2 if version[0] == 1 else 4
    pre = b"\x93NUMPY" + bytes(version)
    pad = pad_to - (len(pre) + hl + len(d) + 1) % pad_to
    body = (d + " " * pad + "\n").encode("latin1")
    return pre + len(body).to_bytes(hl, "little") + body


def fixtures(root: Path) -> None:
    import tcprobe
    os.chdir(root)
    rng = np.random.default_rng(10)
    a = rng.standard_normal((8, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    np.save("a.npy", a)
    np.save("b.npy", b)
    np.save("c.npy", np.zeros((8, 8), np.float32))
    d = tcprobe.matmul(a, b, gpu="H100")
    np.save("d.npy", d)  # D of the API: the CLI must give the same words
    np.save("ba.npy", a.astype(BF).view(np.uint16))
    np.save("bb.npy", b.astype(BF).view(np.uint16))
    Path("empty.npy").write_bytes(b"")
    Path("trunc.npy").write_bytes(Path("a.npy").read_bytes()[:150])
    Path("hdronly.npy").write_bytes(Path("a.npy").read_bytes()[:128])
    Path("garbage.npy").write_bytes(bytes(rng.integers(0, 256, 4096, dtype=np.uint8)))
    Path("magic_only.npy").write_bytes(b"\x93NUMPY")
    Path("bighdr.npy").write_bytes(_hdr("<f2", (8, 16), pad_to=20032) + a.tobytes())
    Path("hdrlen.npy").write_bytes(b"\x93NUMPY\x02\x00" + (0xFFFFFFF0).to_bytes(4, "little") + b"{")
    Path("hugeshape.npy").write_bytes(_hdr("<f2", (100000, 100000)) + a.tobytes())
    Path("zeroshape.npy").write_bytes(_hdr("<f2", (0, 16)))
    Path("dir.npy").mkdir()
    os.symlink("missing_target.npy", "dangling.npy")
    os.symlink(str(root / "a.npy"), "abslink.npy")
    np.save("a_i8.npy", rng.integers(-128, 128, (8, 16)).astype(np.int8))
    np.save("b_i8.npy", rng.integers(-128, 128, (16, 8)).astype(np.int8))
    np.save("a_f64.npy", a.astype(np.float64))
    np.save("a_bool.npy", a > 0)
    np.save("a_c64.npy", a.astype(np.complex64))
    np.save("a_obj.npy", a.astype(object), allow_pickle=True)
    np.save("a_1d.npy", a[0])
    np.save("a_3d.npy", np.stack([a, a]))
    np.save("a_0d.npy", np.float16(1))
    np.save("a_nan.npy", np.full((8, 16), np.nan, np.float16))
    np.save("a_be.npy", a.astype(">f2"))
    np.save("a_fort.npy", np.asfortranarray(a))
    np.save("a_i16.npy", a.view(np.int16))
    np.save("a_k15.npy", a[:, :15])
    np.save("a_f32.npy", a.astype(np.float32))
    np.save("b_f32.npy", b.astype(np.float32))
    np.save("a_e4.npy", a.astype(ml_dtypes.float8_e4m3fn))
    np.save("b_e4.npy", b.astype(ml_dtypes.float8_e4m3fn))
    for name in ("\u00e4\u20ac.npy", "\u65e5\u672c.npy", "\U0001f642.npy", "a b\u00a0c.npy"):
        np.save(name, a)
    np.save("c16.npy", np.zeros((8, 8), np.float16))
    np.save("c_i32.npy", np.zeros((8, 8), np.int32))
    np.save("c_bad.npy", np.zeros((8, 9), np.float32))
    np.save("c_row.npy", np.zeros((1, 8), np.float32))
    np.save("d_nan.npy", np.full((8, 8), np.nan, np.float32))
    np.save("d_bad.npy", np.zeros((8, 9), np.float32))
    np.save("d16.npy", d.astype(np.float16))
    np.save("bias9.npy", np.zeros(9, np.float32))
    np.save("bias2d.npy", np.zeros((1, 8), np.float32))
    np.save("bias_i.npy", np.zeros(8, np.int64))
    Path("ro_dir").mkdir()
    Path("file_not_dir").write_text("x")
    Path("s_true.json").write_text('{"split_k": true}')
    Path("s_zero.json").write_text('{"split_k": 0}')
    Path("s_str.json").write_text('{"split_k": "2"}')
    Path("s_tc05.json").write_text('{"instr": "tcgen05"}')
    Path("s_dup.json").write_text('{"split_k": 2, "split_k": 4}')
    Path("s_unknown.json").write_text('{"splitk": 2}')
    Path("s_order.json").write_text('{"k_order": "backwards"}')
    Path("s_starts.json").write_text('{"split_starts": [8]}')
    Path("s_starts_bad.json").write_text('{"split_starts": [8, 4]}')
    Path("s_starts_out.json").write_text('{"split_starts": [99]}')
    Path("s_acc.json").write_text('{"acc": "s32"}')
    Path("s_out.json").write_text('{"out": "e2m1"}')
    Path("s_fused.json").write_text('{"fused": "yes"}')
    Path("s_kblock0.json").write_text('{"k_block": 0}')
    Path("s_tile.json").write_text('{"tile_m": -1}')
    Path("s_lanes.json").write_text('{"lanes": 1e3}')
    Path("s_empty.json").write_text("{}")
    Path("s_bigfile.json").write_text('{"split_k": 2' + " " * 3_000_000 + "}")
    Path("s_deep.json").write_text("[" * 100 + "]" * 100)
    Path("s.txt").write_text('{"split_k": 2}')
    np.save("splits_2d.npy", np.zeros((2, 2), np.int64))
    np.save("splits_empty.npy", np.zeros(0, np.int64))
    # TOML profiles: every key's bounds and types
    base = {"window_bits": "24", "block_size": "4", "zero_floor": "-133",
            "input_conversion": "'truncate'", "output_rounding": "'rz'",
            "zero_sign": "'positive'", "nan": "0x7fffffff"}
    for name, change in PROFILES.items():
        kv = dict(base)
        extra = ""
        for k, v in change.items():
            if k == "_extra":
                extra = v
            elif v is None:
                kv.pop(k)
            else:
                kv[k] = v
        text = "".join(f"{k} = {v}\n" for k, v in kv.items()) + extra
        Path(f"p_{name}.toml").write_text(text)
    Path("p_dupkey.toml").write_text("window_bits = 24\nwindow_bits = 25\n")
    Path("p_bin.toml").write_bytes(b"\x00\xff\xfe" * 50)
    Path("p_empty.toml").write_text("")
    Path("p_nottoml.json").write_text("window_bits = 24\n")


PROFILES = {
    "wb57": {"window_bits": "57"}, "wbneg": {"window_bits": "-1"}, "wbexact": {"window_bits": "'exact'"},
    "wbstr": {"window_bits": "'24'"}, "wbfloat": {"window_bits": "24.0"}, "bs0": {"block_size": "0"},
    "bs1025": {"block_size": "1025"}, "bs1024": {"block_size": "1024"}, "bsbool": {"block_size": "true"},
    "zfnone": {"zero_floor": "'none'"}, "zfhuge": {"zero_floor": "-99999999999"},
    "icrnd": {"input_conversion": "'rnd'"}, "icrna": {"input_conversion": "'RNA'"},
    "orrd": {"output_rounding": "'rd'"}, "zsneg": {"zero_sign": "'negative'"},
    "nanneg": {"nan": "-1"}, "nan1": {"nan": "0x3f800000"}, "nanstr": {"nan": "'0x7fc00000'"},
    "nanbadstr": {"nan": "'NaN'"}, "nowb": {"window_bits": None}, "nonan": {"nan": None},
    "ofb65": {"_extra": "output_frac_bits = 65\n"}, "ovsat": {"_extra": "overflow = 'saturate'\n"},
    "ovbad": {"_extra": "overflow = 'wrap'\n"}, "cb": {"_extra": "carry_bits = 3\ncarry_top = 'saturate'\n"},
    "ctbad": {"_extra": "carry_top = 'clamp'\n"}, "korder": {"_extra": "k_order = 'reverse'\n"},
    "cconv_s32": {"_extra": "c_convert = 's32'\n"}, "inter_ue": {"_extra": "inter_type = 'ue8m0'\n"},
    "seedneg": {"_extra": "seed = -1\n"}, "seedstr": {"_extra": "seed = 'x'\n"},
    "famnope": {"_extra": "families = ['nope']\n"}, "gpunope": {"_extra": "gpu = 'H999'\n"},
    "name123": {"_extra": "name = 123\n"}, "unknownkey": {"_extra": "windowbits = 3\n"},
    "fmtnope": {"_extra": "[format.nosuch]\nwindow_bits = 3\n"},
    "outf16": {"_extra": "[output.f16]\nnan = 0x7e00\n"},
    "fmtbad": {"_extra": "[format.bf16]\nblock_size = 0\n"},
    "layout": {"_extra": "[layout]\na_lbo = 'x'\n"}, "align": {"_extra": "align = 'normalized'\n"},
    "cjoin": {"_extra": "c_join = 'middle'\n"}, "interround": {"_extra": "inter_rounding = 'rne'\n"},
}


def _npy_stdout(r, made):
    data = r.stdout_bytes
    if not data.startswith(b"\x93NUMPY"):
        return "stdout is no .npy"
    got = np.load(io.BytesIO(data))
    ref = np.load("d.npy")
    return None if got.view(np.uint32).tolist() == ref.view(np.uint32).tolist() else "D differs from the API's"


def _same_d(name, scale=1.0):
    def check(r, made):
        got = np.load(name)
        ref = np.load("d.npy").astype(np.float32) * np.float32(scale)
        if got.dtype != np.float32 or got.view(np.uint32).tolist() != ref.view(np.uint32).tolist():
            return f"{name} differs from tcprobe.matmul's D (x{scale})"
        return None
    return check


def _json_stdout(r, made):
    try:
        json.loads(r.stdout)
    except ValueError:
        return "stdout is not JSON"
    return None


def _says(word):
    def check(r, made):
        return None if word in r.output else f"no {word!r} in the output"
    return check


def cli_cases():
    out = []

    def c(cls, exp, *args, check=None):
        out.append((cls, exp, [str(x) for x in args], check))
    F = "CLI files"
    for name in ("empty.npy", "trunc.npy", "hdronly.npy", "garbage.npy", "magic_only.npy",
                 "bighdr.npy", "hdrlen.npy", "hugeshape.npy", "dir.npy", "dangling.npy",
                 "a_f64.npy", "a_bool.npy", "a_c64.npy", "a_obj.npy", "a_1d.npy", "a_3d.npy",
                 "a_0d.npy", "a_k15.npy"):
        c(F, "err", "gemm", "--a", name, "--b", "b.npy", *G)
    c(F, "any", "gemm", "--a", "zeroshape.npy", "--b", "b.npy", *G)
    c(F, "ok", "gemm", "--a", "abslink.npy", "--b", "b.npy", *G, "--out", "o_link.npy", check=_same_d("o_link.npy"))
    c(F, "ok", "gemm", "--a", "a_be.npy", "--b", "b.npy", *G, "--out", "o_be.npy", check=_same_d("o_be.npy"))
    c(F, "ok", "gemm", "--a", "a_fort.npy", "--b", "b.npy", *G, "--out", "o_fort.npy", check=_same_d("o_fort.npy"))
    for i, name in enumerate(("\u00e4\u20ac.npy", "\u65e5\u672c.npy", "\U0001f642.npy", "a b\u00a0c.npy")):
        c(F, "ok", "gemm", "--a", name, "--b", "b.npy", *G, "--out", f"o_u{i}.npy", check=_same_d(f"o_u{i}.npy"))
    c(F, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *G, "--out", "\u00e9t\u00e9.npy", check=_same_d("\u00e9t\u00e9.npy"))
    c(F, "ok", *GEMM, "--out", "-", check=_npy_stdout)
    c(F, "ok", *GEMM, "--json", "-", check=_json_stdout)
    c(F, "err", *GEMM, "--out", "-", "--json", "-")
    c(F, "err", *GEMM, "--out", "")
    c(F, "err", *GEMM, "--json", "")
    c(F, "err", *GEMM, "--out", "nodir/x.npy")
    c(F, "err", *GEMM, "--out", "ro_dir")
    c(F, "err", *GEMM, "--out", "file_not_dir/x.npy")
    c(F, "err", *GEMM, "--json", "ro_dir")
    c(F, "err", *GEMM, "--json", "/proc/version")
    c(F, "any", *GEMM, "--out", "o.txt")  # reviewed: written where asked
    c(F, "err", *GEMM, "--out", "a.npy")
    c(F, "err", *GEMM, "--out", "abslink.npy")
    c(F, "any", *GEMM, "--out", "dangling.npy")  # reviewed: the name is written
    c(F, "any", *GEMM, "--out", "o_npy")
    c(F, "err", *GEMM, "--c", "c_bad.npy")
    c(F, "err", *GEMM, "--c", "c_row.npy")
    c(F, "err", "gemm", "--a", "a_i8.npy", "--b", "b.npy", *G)
    c(F, "ok", "gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", *G, "--out", "o_i8.npy",
      check=lambda r, m: None if np.array_equal(np.load("o_i8.npy"), np.load("a_i8.npy").astype(np.int64)
                                                 @ np.load("b_i8.npy").astype(np.int64)) else "int8 D wrong")
    c(F, "err", "gemm", "--a", "a_i16.npy", "--b", "b.npy", *G)
    c(F, "err", "gemm", "--a", "a_i16.npy", "--b", "b.npy", *G, "--format", "f16")
    c(F, "err", "gemm", "--a", "a_e4.npy", "--b", "b.npy", *G)
    c(F, "err", "gemm", "--a", "a_e4.npy", "--b", "b_e4.npy", *G)  # np.save drops the name
    c(F, "err", "gemm", "--a", "a_f32.npy", "--b", "b.npy", *G)
    c(F, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "")
    c(F, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100\x00")
    c(F, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100\x1b[31m")
    c(F, "any", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "h100 ")
    c(F, "err", "gemm", "--a", "-", "--b", "b.npy", *G)
    c(F, "err", "gemm", "--a", "a.npy", *G)
    c(F, "err", "gemm", "--random", "8x8x16", *G)
    c(F, "err", "gemm", "--random", "8x8x0", "--format", "bf16", *G)
    c(F, "err", "gemm", "--random", "8x8", "--format", "bf16", *G)
    c(F, "err", "gemm", "--random", "8X8X16", "--format", "nope", *G)
    c(F, "any", "gemm", "--random", "8X8X16", "--format", "bf16", *G)
    c(F, "err", "gemm", "--random", "-8x8x16", "--format", "bf16", *G)
    c(F, "err", "gemm", "--random", "100000x100000x100000", "--format", "bf16", *G)
    c(F, "err", "gemm", "--random", "8x8x16", "--format", "bf16", *G, "--seed", "-1")
    c(F, "err", "gemm", "--random", "8x8x16", "--format", "e2m1", "--gpu", "B200")  # documented
    c(F, "err", "gemm", "--random", "8x8x16", "--format", "e2m1", *G)
    # option values and combinations
    OPT = "CLI options"
    c(OPT, "ok", *GEMM, "--alpha", "2", "--out", "o_a2.npy", check=_same_d("o_a2.npy", 2.0))
    c(OPT, "ok", *GEMM, "--alpha", "0.5", "--out", "o_a05.npy", check=_same_d("o_a05.npy", 0.5))
    c(OPT, "err", *GEMM, "--alpha", "")
    c(OPT, "err", *GEMM, "--alpha", "two")
    c(OPT, "err", *GEMM, "--split-k", "0")
    c(OPT, "err", *GEMM, "--split-k", "-2")
    c(OPT, "err", *GEMM, "--split-k", "2.5")
    c(OPT, "err", *GEMM, "--schedule", "")
    c(OPT, "err", *GEMM, "--schedule", "nosuch")
    c(OPT, "err", *GEMM, "--schedule", "s.txt")
    for s in ("s_true", "s_zero", "s_str", "s_tc05", "s_unknown", "s_order", "s_starts_bad",
              "s_starts_out", "s_acc", "s_out", "s_fused", "s_kblock0", "s_tile", "s_lanes", "s_deep"):
        c("schedules", "err", *GEMM, "--schedule", f"{s}.json")
    c("schedules", "any", *GEMM, "--schedule", "s_dup.json")
    c("schedules", "ok", *GEMM, "--schedule", "s_empty.json", "--out", "o_se.npy", check=_same_d("o_se.npy"))
    c("schedules", "err", *GEMM, "--schedule", "s_starts.json")  # 8 is no multiple of the block
    c("schedules", "any", *GEMM, "--schedule", "s_bigfile.json")
    c("schedules", "err", *GEMM, "--schedule", "dir.npy")
    c("schedules", "err", *GEMM, "--schedule", "dangling.npy")
    c("schedules", "err", *GEMM, "--schedule", "empty.npy")
    c(OPT, "err", *GEMM, "--instr", "")
    c(OPT, "err", *GEMM, "--instr", "mma.bf16.f32.k16")
    c(OPT, "err", *GEMM, "--instr", "mfma")
    c(OPT, "err", *GEMM, "--instr", "wgmma.f16.f32.k16", "--compare", "A100", "--compare-instr", "tcgen05")
    c(OPT, "err", *GEMM, "--model", "")
    c(OPT, "err", *GEMM, "--model", "p_wb57.toml")
    c(OPT, "err", *GEMM, "--model", "mi300x")
    c(OPT, "err", *GEMM, "--dtype", "s32")
    c(OPT, "err", *GEMM, "--dtype", "f64")
    c(OPT, "err", *GEMM, "--dtype", "")
    c(OPT, "any", *GEMM, "--dtype", "F16")
    c(OPT, "err", *GEMM, "--scale-a", "a.npy")
    c(OPT, "err", *GEMM, "--scale-format", "ue8m0", "--scale-a", "a.npy", "--scale-b", "b.npy")
    c(OPT, "err", *GEMM, "--compare", "")
    c(OPT, "err", *GEMM, "--compare", "H999")
    c(OPT, "err", *GEMM, "--compare", "A100", "--verdict-seconds", "-1")
    c(OPT, "err", *GEMM, "--compare", "A100", "--verdict-seconds", "nan")
    c(OPT, "err", *GEMM, "--compare", "A100", "--verdict-seconds", "3601")
    c(OPT, "any", *GEMM, "--compare", "A100", "--verdict-seconds", "0", "--picture", "pic.txt")  # written where asked
    c(OPT, "err", *GEMM, "--compare", "A100", "--verdict-seconds", "0", "--picture", "ro_dir")
    c(OPT, "err", *GEMM, "--compare", "A100", "--verdict-seconds", "0", "--picture", "a.npy")
    c(OPT, "ok", *GEMM, "--compare", "MI300X", "--verdict-seconds", "0")
    c(OPT, "err", *GEMM, "--compare", "MI300X", "--compare-instr", "wgmma")
    c(OPT, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X")
    c(OPT, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--instr", "wgmma")
    c(OPT, "any", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--instr", "mfma.f16.f32.k16")
    c(OPT, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--instr", "mfma.f16.f32.k15")
    c(OPT, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--schedule", "deepgemm-fp8")
    c(OPT, "any", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "mi300x")
    c(OPT, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "gfx942")
    c(OPT, "err", "gemm", "--a", "a_e4.npy", "--b", "b_e4.npy", "--gpu", "MI100")
    # fit-gemm
    FG = "CLI fit-gemm"
    c(FG, "ok", *FIT)
    c(FG, "err", *FIT, "--c", "c_bad.npy")
    c(FG, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d_nan.npy", *G)
    c(FG, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d_bad.npy", *G)
    c(FG, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "empty.npy", *G)
    c(FG, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "dir.npy", *G)
    c(FG, "any", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d16.npy", *G)
    c(FG, "err", *FIT, "--bias", "bias9.npy")
    c(FG, "err", *FIT, "--bias", "bias2d.npy")
    c(FG, "err", *FIT, "--bias", "bias_i.npy")
    c(FG, "err", *FIT, "--splits", "splits_2d.npy")
    c(FG, "err", *FIT, "--splits", "splits_empty.npy")
    c(FG, "err", *FIT, "--bounds", "")
    c(FG, "err", *FIT, "--bounds", "x")
    c(FG, "any", *FIT[:-2], "--gpu", "MI300X")
    c(FG, "any", *FIT, "--alpha", "inf")
    c(FG, "ok", *FIT, "--json", "fit\u00e9.json", check=lambda r, m: None if Path("fit\u00e9.json").is_file() else "not written")
    c(FG, "err", *FIT, "--json", "ro_dir")
    c(FG, "err", *FIT, "--json", "d.npy")
    # other commands
    X = "CLI other commands"
    c(X, "err", *RC, "--a", "0x3f80,zz")
    c(X, "err", *RC, "--a", "0x1ffff")
    c(X, "err", *RC, "--a", ",".join(["0x3f80"] * 17))
    c(X, "err", *RC, "--c", "0x1ffffffff")
    c(X, "err", *RC, "--c", "")
    c(X, "ok", *RC, "--a", "0x3F80", "--b", "0X3f80", check=_says("0x3f800000"))
    c(X, "err", *RC, "--active", "0,1")
    c(X, "err", *RC, "--scale-a", "0x7f")
    c(X, "err", *RC, "--model", "")
    c(X, "err", *RC, "--model", "p_bs0.toml")
    c(X, "err", "run-case", "--device", "sim:mi300x", "--datapath", "mma.bf16.f32.k16")
    c(X, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00",
      check=_says("0x3f800000"))
    c(X, "err", "run-case", "--device", "sim:h100", "--datapath", "mfma.f16.f32.k16")
    c(X, "err", "run-case", "--device", "sim:mi300x", "--format", "f16", "--instr", "wgmma")
    c(X, "err", "run-case", "--device", "sim:mi100", "--datapath", "mfma.xf32.tf32.f32.k8")
    c(X, "err", "run-case", "--device", "sim:", "--datapath", "mma.bf16.f32.k16")
    c(X, "err", "run-case", "--device", "cuda:x", "--datapath", "mma.bf16.f32.k16")
    c(X, "err", "run-case", "--device", "cuda:-1", "--datapath", "mma.bf16.f32.k16")
    c(X, "err", *RC, "--json", "ro_dir")
    c(X, "ok", *RC, "--json", "-", check=_json_stdout)
    for p in ("wb57", "wbneg", "wbstr", "wbfloat", "bs0", "bs1025", "bsbool", "icrnd", "orrd",
              "zsneg", "nanneg", "nan1", "nanbadstr", "nowb", "nonan", "ofb65", "ovbad", "ctbad",
              "cconv_s32", "inter_ue", "seedneg", "seedstr", "famnope", "gpunope", "name123",
              "unknownkey", "fmtnope", "fmtbad", "layout", "cjoin", "korder", "zfhuge"):
        c("TOML profiles", "err", "run-case", "--device", f"sim:p_{p}.toml", "--datapath", "mma.bf16.f32.k16")
    for p in ("wbexact", "bs1024", "zfnone", "icrna", "nanstr", "ovsat", "cb", "outf16", "align",
              "interround"):
        c("TOML profiles", "ok", "run-case", "--device", f"sim:p_{p}.toml", "--datapath", "mma.bf16.f32.k16",
          "--model", "h100")
    for p in ("p_dupkey.toml", "p_bin.toml", "p_empty.toml", "p_nottoml.json", "P_WB57.TOML",
              "dir.npy"):
        c("TOML profiles", "err", "run-case", "--device", f"sim:{p}", "--datapath", "mma.bf16.f32.k16")
    c("TOML profiles", "err", *VAL[:3], "--device", "sim:p_bs0.toml", "--cases", "10")
    c("TOML profiles", "err", "ladder", "--format", "bf16", "--device", "sim:p_nan1.toml", "--validate", "0")
    c("TOML profiles", "err", *GEMM, "--model", "p_icrnd.toml")
    c(X, "err", *VAL, "--cases", "0")
    c(X, "err", *VAL, "--cases", "-5")
    c(X, "err", *VAL, "--cases", "1e99")
    c(X, "err", *VAL, "--cases", "1.5")
    c(X, "err", *VAL, "--suite", "raw=0")
    c(X, "err", *VAL, "--suite", "raw=-1")
    c(X, "any", *VAL, "--suite", "raw,raw")  # documented: each name once
    c(X, "err", *VAL, "--targets", "nosuch")
    c(X, "err", *VAL, "--targets", "")
    c(X, "err", *VAL, "--out", "ro_dir/\x00x")
    c(X, "err", *VAL, "--out", "a.npy/sub")
    c(X, "err", *VAL, "--json", "-", "--out", "-")
    c(X, "ok", "validate", "--format", "bf16", "--device", "sim:mi300x", "--cases", "10")
    c(X, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "20", "--model", "auto")
    c(X, "err", "validate", "--datapath", "mfma.f16.f32.k16", "--device", "sim:h100", "--cases", "10")
    c(X, "err", *LAD, "--steps", "")
    c(X, "err", *LAD, "--steps", "nosuch")
    c(X, "err", *LAD, "--validate", "-1")
    c(X, "err", *LAD, "--json", "ro_dir")
    c(X, "err", "ladder", "--format", "", "--device", "sim:h100")
    c(X, "err", "ladder", "--format", "bf16", "--device", "sim:h100", "--instr", "mfma", "--validate", "0")
    c(X, "err", "ladder", "--datapath", "mfma.f16.f32.k16", "--device", "sim:h100", "--validate", "0")
    c(X, "err", "score", "--capture", "")
    c(X, "err", "score", "--capture", "empty.npy")
    c(X, "err", "score", "--capture", "dir.npy")
    c(X, "err", "score", "--capture", CAP, "--model", "")
    c(X, "err", "score", "--capture", CAP, "--model", "p_bs0.toml")
    c(X, "err", "score", "--capture", CAP, "--show", "-1")
    c(X, "err", "fit", "--capture", "dir.npy")
    c(X, "err", "fit", "--capture", CAP, "--budget", "0")
    c(X, "err", "fit", "--capture", CAP, "--start", "nosuch")
    c(X, "err", "fit", "--capture", CAP, "--only", "nothing-matches-this")
    c(X, "err", "replay", "--capture", CAP, "--device", "sim:h100", "--limit", "0")
    c(X, "err", "replay", "--capture", CAP, "--device", "sim:mi300x", "--limit", "5")
    c(X, "err", "replay", "--capture", CAP, "--device", "nope", "--limit", "5")
    c(X, "err", "gemm-probe", *G, "--format", "bf16", "--out", "gp1", "--m", "0")
    c(X, "err", "gemm-probe", *G, "--format", "bf16", "--out", "gp2", "--k", "-16")
    c(X, "err", "gemm-probe", *G, "--format", "bf16", "--out", "a.npy")
    c(X, "any", "gemm-probe", "--gpu", "MI300X", "--format", "bf16", "--out", "gp3")
    c(X, "err", "gemm-probe", *G, "--format", "bf16", "--out", "")
    c(X, "err", "batch-invariance", *G, "--dtype", "bf16", "-n", "0", "-k", "64")
    c(X, "err", "batch-invariance", *G, "--dtype", "bf16", "-n", "64", "-k", "-1")
    c(X, "err", "batch-invariance", *G, "--dtype", "bf16", "-n", "64", "-k", "64", "--m", "5:1")
    c(X, "err", "batch-invariance", *G, "--dtype", "bf16", "-n", "64", "-k", "64", "--m", "0:4")
    c(X, "err", "batch-invariance", *G, "--dtype", "bf16", "-n", "64", "-k", "64", "--m", "a:b")
    c(X, "err", "batch-invariance", *G, "--dtype", "bf16", "-n", "64", "-k", "64", "--ref", "0")
    c(X, "any", "batch-invariance", "--gpu", "MI300X", "--dtype", "bf16", "-n", "64", "-k", "64")
    c(X, "err", "sass-check", "--instr", "mfma")
    c(X, "err", "sass-check", "--arch", "sm_1000")
    c(X, "err", "sass-check", "--format", "nope")
    c(X, "err", "mfma-check", "--arch", "gfx9999")
    c(X, "err", "mfma-check", "--arch", "")
    c(X, "err", "mfma-check", "--arch", "sm_90a")
    c(X, "err", "targets", "--json", "ro_dir")
    c(X, "ok", "targets", "--json", "-", check=_json_stdout)
    c(X, "err", "devices", "--json", "ro_dir")
    c(X, "err", "report", "merge", "--out", "rm1")
    c(X, "err", "report", "merge", "dir.npy", "--out", "rm2")
    c(X, "err", "report", "merge", "nosuchdir", "--out", "rm3")
    c(X, "err", "smoke", "--device", "sim:h100", "--format", "nope", "--no-sass", "--cases", "10")
    c(X, "err", "smoke", "--device", "sim:p_bs0.toml", "--no-sass", "--cases", "10")
    c(X, "err", "warm", "--only", "nope")
    c(X, "err", "nosuchcommand")
    c(X, "err", "gemm", "--nosuch")
    N = "CLI NUL and control bytes in paths"
    c(N, "err", "gemm", "--a", "a\x00.npy", "--b", "b.npy", *G)
    c(N, "err", *GEMM, "--out", "o\x00.npy")
    c(N, "err", *GEMM, "--json", "o\x00.json")
    c(N, "err", *GEMM, "--schedule", "s\x00.json")
    c(N, "err", *GEMM, "--model", "m\x00.json")
    c(N, "err", *GEMM, "--compare", "A100", "--verdict-seconds", "0", "--picture", "p\x00.png")
    c(N, "err", "run-case", "--device", "sim:p\x00.toml", "--datapath", "mma.bf16.f32.k16")
    c(N, "err", "score", "--capture", "c\x00ap")
    c(N, "err", "fit", "--capture", "c\x00ap")
    c(N, "err", "replay", "--capture", "c\x00ap", "--device", "sim:h100")
    c(N, "err", "gemm-probe", *G, "--format", "bf16", "--out", "g\x00p")
    c(N, "err", "targets", "--json", "t\x00.json")
    c(N, "err", "report", "merge", "r\x00", "--out", "rm4")
    c(N, "err", *FIT, "--splits", "s\x00.npy")
    c(N, "err", *LAD, "--json", "l\x00.json")
    return out


def _first_line_ok(r, out, err):
    return None if "Traceback" not in out + err else "traceback"


def proc_cases():
    out = []
    elsewhere = "/tmp"
    R = "README from another folder"
    out.append((R, "err", ["score", "--capture", "../shared/hwdata/khattak-mikaitis-2025"], elsewhere, {}, None))
    out.append((R, "err", ["gemm", "--a", "A.npy", "--b", "B.npy", "--gpu", "H100"], elsewhere, {}, None))
    out.append((R, "err", ["gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "A100",
                           "--compare", "H100", "--exact"], elsewhere, {}, None))
    out.append((R, "ok", ["gemm", "--random", "64x64x64", "--format", "bf16", "--gpu", "A100",
                          "--compare", "H100", "--verdict-seconds", "0"], elsewhere, {}, None))
    out.append((R, "ok", ["batch-invariance", "--gpu", "H200", "--dtype", "bf16", "-n", "256", "-k", "4096",
                          "--m", "1:4096"], elsewhere, {}, None))
    out.append((R, "ok", ["validate", "--format", "bf16", "--device", "sim:b200", "--cases", "1e3"], elsewhere, {}, None))
    out.append((R, "err", ["fit", "--capture", "../shared/hwdata/khattak-mikaitis-2025", "--json", "fit.json"],
                elsewhere, {}, None))
    out.append((R, "err", ["report", "merge", "out/s1", "out/s2", "--out", "out/all"], elsewhere, {}, None))
    out.append((R, "ok", ["--version"], elsewhere, {}, None))
    out.append((R, "ok", ["gemm", "--help"], "/", {}, None))
    return out


CLI = cli_cases()
PROC = proc_cases()
