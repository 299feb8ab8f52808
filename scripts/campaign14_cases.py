"""Campaign 14's cases (scripts/campaign14.py runs them; docs/campaign-14.md):
aimed where checks not yet seen will go. tcprobe.torch's emulate (out= and
in-place forms, fused fast paths, threads, nested Reports, strict=True,
instr= names, unmodelled ops counted); the AMD datapaths through every
surface (dot, matmul, gemm, emulate, validate, ladder, run-case, replay,
sim:mi300x/mi250x/mi100 and custom profiles with families = ["mfma"]);
gemm, fit-gemm and gemm-probe options (alpha and beta at their extremes,
schedules, --json to links, to a full disk, to stdout); schedule files;
malformed .npy files and gemm-probe manifests; atlas lookups; ladder,
validate, replay, campaign (--targets, report merge) and sass-check options;
TCPROBE_* variables; and the documents' own lines run as written from
another folder. CLI: (class, expected, args, check) through click's runner;
PROC: (class, expected, argv, env, cwd, check) as real processes (argv[0]
"tcprobe" or "python"); API: (class, expected, code) in a copy of PRELUDE's
namespace. Expected words are worked out by hand (sums of powers of two,
checked against Python's floats below) or come from another surface (the
contiguous copy, tcprobe.matmul for the command line, jobs=1), never from
the surface under test alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import ml_dtypes
import numpy as np
from campaign12_cases import W1, W2, W4, W8, W16, W17, _nan, _says, _w, _words
from campaign13_cases import PRELUDE as PRELUDE13
from campaign13_cases import _absent, _exists

AMD = ("MI300X", "MI250X", "MI100")
INF, NINF = 0x7F800000, 0xFF800000
W33 = 0x42040000       # 33.0 = 2^5 (1 + 1/32)
W15 = 0x41700000       # 15.0 = 2^3 * 1.875
W18 = 0x41900000       # 18.0 = 2^4 * 1.125
W34 = 0x42080000       # 34.0 = 2^5 * 1.0625
W9 = 0x41100000        # 9.0 = 2^3 * 1.125
WD4 = 0x4010000000000000   # f64 4.0: exponent 1023 + 2 = 0x401
WD1 = 0x3FF0000000000000   # f64 1.0
W17SUB = 0x11          # 17 * 2^-149: the f32 subnormal of fraction 17
assert _w(33.0) == W33 and _w(15.0) == W15 and _w(18.0) == W18 and _w(34.0) == W34 and _w(9.0) == W9
assert int(np.float64(4.0).view(np.uint64)) == WD4 and _w(17 * 2.0 ** -149) == W17SUB
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
REPO = Path(__file__).resolve().parents[1]


def _hdr(body: str) -> bytes:
    """A version-1.0 .npy header holding ``body`` (padded to 64 bytes, as numpy pads)."""
    text = body.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text


def fixtures14(root: Path) -> None:
    """The files campaign 14's cases read beyond campaigns 10, 12 and 13's."""
    f16 = np.float16
    sv = lambda n, x: np.save(root / n, x)  # noqa: E731
    ones = np.ones((8, 16), f16).tobytes()
    # malformed .npy files (new shapes of damage)
    (root / "n_noshape.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': False, }") + ones)
    (root / "n_fortstr.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': 'yes', 'shape': (8, 16), }") + ones)
    (root / "n_f3.npy").write_bytes(_hdr("{'descr': '<f3', 'fortran_order': False, 'shape': (8, 16), }") + ones)
    (root / "n_negshape.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': False, 'shape': (-8, 16), }") + ones)
    (root / "n_floatshape.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': False, 'shape': (8.0, 16), }") + ones)
    (root / "n_list.npy").write_bytes(_hdr("['<f2', False, (8, 16)]") + ones)
    (root / "n_v9.npy").write_bytes(b"\x93NUMPY\x09\x00" + _hdr("{'descr': '<f2', 'fortran_order': False, 'shape': (8, 16), }")[8:] + ones)
    (root / "n_void.npy").write_bytes(_hdr("{'descr': '|V2', 'fortran_order': False, 'shape': (8, 16), }") + ones)
    (root / "n_str.npy").write_bytes(_hdr("{'descr': '<U1', 'fortran_order': False, 'shape': (8, 16), }") + ones * 2)
    (root / "n_short1.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': False, 'shape': (8, 16), }") + ones[:-1])
    (root / "n_long.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': False, 'shape': (8, 16), }") + ones + b"\x00" * 64)
    (root / "n_call.npy").write_bytes(_hdr("{'descr': __import__('os').getcwd(), 'fortran_order': False, 'shape': (8, 16), }") + ones)
    (root / "n_extra.npy").write_bytes(_hdr("{'descr': '<f2', 'fortran_order': False, 'shape': (8, 16), 'x': 1, }") + ones)
    (root / "n_struct.npy").write_bytes(_hdr("{'descr': [('a', '<f2')], 'fortran_order': False, 'shape': (8, 16), }") + ones)
    (root / "n_nul.npy").write_bytes(_hdr("{'descr': '<f2\x00', 'fortran_order': False, 'shape': (8, 16), }") + ones)
    (root / "n_zero_k_f32.npy").write_bytes(_hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (8, 0), }"))
    sv("n_b_k0_f32.npy", np.zeros((0, 8), np.float32))
    sv("n_big_endian_f4.npy", np.ones((8, 16), ">f4"))
    sv("n_f16_nan_payload.npy", np.full((8, 16), 0x7E01, np.uint16).view(f16))
    sv("o16a_bf.npy", np.ones((8, 16), ml_dtypes.bfloat16).view(np.uint16))
    sv("o16b_bf.npy", np.ones((16, 8), ml_dtypes.bfloat16).view(np.uint16))
    sv("o32a8.npy", np.full((8, 32), 0x38, np.uint8))   # e4m3fnuz 0.5
    sv("o32b8.npy", np.full((32, 8), 0x38, np.uint8))
    sv("c8_ones.npy", np.ones((8, 8), np.float32))
    sv("c8_nan.npy", np.full((8, 8), np.nan, np.float32))
    sv("c8_neg1.npy", np.full((8, 8), -1.0, np.float32))
    sv("c8_f16.npy", np.ones((8, 8), f16))
    sv("bias8.npy", np.ones(8, np.float32))
    sv("bias8_f16.npy", np.ones(8, f16))
    # schedule files
    sched = {
        "sk2": {"split_k": 2}, "sk2_serial": {"split_k": 2, "split_kind": "serial"}, "chain": {"preset": "chain"},
        "sk_str": {"split_k": "2"}, "sk_float": {"split_k": 2.0}, "sk_neg": {"split_k": -2}, "sk_huge": {"split_k": 2 ** 70},
        "list": [1, 2], "string": "cublas", "null": None, "num": 3, "unknown_axis": {"split_k": 2, "warp_magic": 1},
        "preset_bad": {"preset": "nope"}, "preset_upper": {"preset": " CHAIN "}, "empty_obj": {},
    }
    for name, body in sched.items():
        (root / f"sc_{name}.json").write_text(json.dumps(body))
    (root / "sc_bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"split_k": 2}).encode())
    (root / "sc_utf16.json").write_bytes(json.dumps({"split_k": 2}).encode("utf-16"))
    (root / "sc_nan.json").write_text('{"split_k": NaN}')
    (root / "sc_comment.json").write_text('// a comment\n{"split_k": 2}')
    (root / "sc_dupkey.json").write_text('{"split_k": 2, "split_k": 3}')
    (root / "sc_trailing.json").write_text('{"split_k": 2} garbage')
    (root / "sc_empty.json").write_text("")
    (root / "sc_bin.json").write_bytes(bytes(range(256)))
    (root / "sc_dir.json").mkdir()
    os.symlink("nowhere_sched.json", root / "sc_dangling.json")
    # gemm-probe manifests, damaged
    for name, text in {"m_empty": "", "m_text": "not json", "m_list": "[1, 2]", "m_nokeys": "{}",
                       "m_badfmt": '{"format": "nope", "k": 64, "cases": []}',
                       "m_negk": '{"format": "bf16", "k": -1, "cases": []}'}.items():
        (root / name).mkdir()
        (root / name / "manifest.json").write_text(text)
    (root / "m_none").mkdir()
    # JSON outputs through links
    os.symlink("nowhere_json/x.json", root / "j_dangling.json")
    (root / "j_keep.json").write_text("keep")
    os.symlink("j_keep.json", root / "j_link.json")
    (root / "away").mkdir()  # the documents' lines run from here
    # profiles with families = ["mfma"]
    for name, body in FAM_TOMLS.items():
        (root / f"f_{name}.toml").write_text(body)
    # captures of the AMD sims, for replay and score
    from click.testing import CliRunner

    from tcprobe.cli import main
    for dev, fmt in (("mi250x", "bf16"), ("mi100", "f16")):
        r = CliRunner().invoke(main, ["validate", "--format", fmt, "--device", f"sim:{dev}", "--cases", "64",
                                      "--out", str(root / f"cap_{dev}")])
        assert r.exit_code in (0, 1), r.output


FAM_TOMLS = {
    "plain300": 'name = "f_plain300"\ngpu = "MI300X"\nfamilies = ["mfma"]\n',
    "plain250": 'name = "f_plain250"\ngpu = "MI250X"\nfamilies = ["mfma"]\n',
    "plain100": 'name = "f_plain100"\ngpu = "MI100"\nfamilies = ["mfma"]\n',
    "fam_str": 'name = "f_fam_str"\ngpu = "MI300X"\nfamilies = "mfma"\n',
    "fam_mixed": 'name = "f_fam_mixed"\ngpu = "MI300X"\nfamilies = ["mfma", "wgmma"]\n',
    "fam_trunc": 'name = "f_fam_trunc"\ngpu = "MI300X"\nfamilies = ["mfma"]\n[mfma]\ndesign = "truncated"\nblock = 8\nwindow = 24\nwindow2 = 31\n',
    "gpu_float": 'name = "f"\ngpu = 300.0\nfamilies = ["mfma"]\n',
    "gpu_bool": 'name = "f"\ngpu = true\n[mfma]\ndesign = "fma"\n',
    "gpu_table": 'name = "f"\nfamilies = ["mfma"]\n[gpu]\nx = 1\n',
    "name_list": 'name = ["f"]\ngpu = "MI300X"\nfamilies = ["mfma"]\n',
    "seed_neg": 'name = "f"\ngpu = "MI300X"\nfamilies = ["mfma"]\nseed = -1\n',
    "seed_ok": 'name = "f"\ngpu = "MI300X"\nfamilies = ["mfma"]\nseed = 7\n',
    "fam_nested": 'name = "f"\ngpu = "MI300X"\nfamilies = [["mfma"]]\n',
    "gpu_empty": 'name = "f"\ngpu = ""\nfamilies = ["mfma"]\n',
    "nv_with_mfma_gpu_int": 'name = "f"\ngpu = 100\nfamilies = ["mma"]\n',
}
FAM_EXPECT = {"plain300": "ok", "plain250": "ok", "plain100": "ok", "fam_str": "ok", "fam_mixed": "err",
              "fam_trunc": "ok", "gpu_float": "err", "gpu_bool": "err", "gpu_table": "err", "name_list": "err",
              "seed_neg": "err", "seed_ok": "ok", "fam_nested": "err", "gpu_empty": "err",
              "nv_with_mfma_gpu_int": "err"}
FAM_GPU = {"plain250": "MI250X", "plain100": "MI100"}


def _first_line_names(*words):
    """An err case's check of its error line: it names every one of ``words``."""
    def check(line):
        missing = [w for w in words if w not in line]
        return f"the error does not name {missing}" if missing else None
    return check


def _json_file(name, *keys):
    def check(r, made):
        try:
            data = json.loads(Path(name).read_text())
        except Exception as e:  # noqa: BLE001 - the finding
            return f"{name} is not JSON: {e}"
        missing = [k for k in keys if k not in data]
        return f"{name} lacks {missing}" if missing else None
    return check


def _stdout_json(r, made):
    try:
        json.loads(r.stdout)
    except Exception as e:  # noqa: BLE001 - the finding
        return f"stdout is not JSON: {str(e)[:60]}"
    return None


def cli_cases():
    out = []

    def c(cls, exp, *args, check=None):
        out.append((cls, exp, [str(x) for x in args], check))

    X = ["--gpu", "MI300X"]
    # --- AMD datapaths through the command line ---
    A = "AMD datapaths on the command line"
    RC = ["run-case", "--a", "0x3c00", "--b", "0x3c00", "--c", "0"]
    for dev, dp, a_, c_, want in (
            ("sim:mi300x", "mfma.f32.f32.k1", "0x3f800000", "0x3f800000", "0x40000000"),
            ("sim:mi250x", "mfma.f32.f32.k1", "0x3f800000", "0x3f800000", "0x40000000"),
            ("sim:mi100", "mfma.f32.f32.k1", "0x3f800000", "0x3f800000", "0x40000000"),
            ("sim:mi300x", "mfma.f32.f32.k4", "0x3f800000", "0", "0x3f800000"),
            ("sim:mi250x", "mfma.bf16_1k.bf16.f32.k8", "0x3f80", "0", "0x3f800000"),
            ("sim:mi100", "mfma.bf16.f32.k2", "0x3f80", "0x3f800000", "0x40000000"),
            ("sim:mi300x", "mfma.bf16.f32.k16", "0x3f80", "0", "0x3f800000"),
            ("sim:mi300x", "mfma.fp8.e4m3fnuz.f32.k32", "0x40", "0", "0x3f800000"),  # e4m3fnuz 0x40 = 1.0 (bias 8)
            ("sim:mi300x", "mfma.fp8.e5m2fnuz.f32.k32", "0x40", "0", "0x3f800000"),  # e5m2fnuz 0x40 = 1.0 (bias 16)
            ("sim:mi300x", "mfma.xf32.tf32.f32.k8", "0x3f800400", "0", "0x3f800000"),  # 1 + 2^-13 truncated to 1
            ("sim:mi250x", "mfma.f16.f32.k4", "0x3c00", "0xbf800000", "0x00000000"),  # 1 - 1 = +0
            ("sim:mi300x", "mfma.f64.f64.k4", "0x3ff0000000000000", "0", "0x3ff0000000000000")):
        c(A, "ok", "run-case", "--device", dev, "--datapath", dp, "--a", a_, "--b", a_, "--c", c_, check=_says(want))
    c(A, "err", *RC, "--device", "sim:mi100", "--datapath", "mfma.xf32.tf32.f32.k8")
    c(A, "err", *RC, "--device", "sim:mi100", "--datapath", "mfma.f64.f64.k4")
    c(A, "err", *RC, "--device", "sim:mi250x", "--datapath", "mfma.fp8.e5m2fnuz.f32.k32")
    c(A, "err", *RC, "--device", "sim:mi300x", "--datapath", "mfma.bf16_1k.bf16.f32.k8")
    c(A, "err", *RC, "--device", "sim:h100", "--datapath", "mfma.f16.f32.k16")
    c(A, "err", *RC, "--device", "sim:mi300x", "--datapath", "mma.f16.f32.k16")
    c(A, "err", *RC, "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k32")
    c(A, "err", *RC, "--device", "sim:mi300x", "--datapath", "mfma.f16.f16.k16")
    c(A, "err", *RC, "--device", "sim:mi300x", "--datapath", "v_mfma_f32_16x16x16_f16x")
    c(A, "any", *RC, "--device", "sim:mi300x", "--datapath", "v_mfma_f32_16x16x16_f16", check=_says("0x3f800000"))
    c(A, "err", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x13c00", "--b", "0x3c00", "--c", "0")
    c(A, "err", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.fp8.e4m3fnuz.f32.k32", "--a", "0x100", "--b", "0x40", "--c", "0")
    c(A, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.fp8.e4m3fnuz.f32.k32", "--a", "0x80", "--b", "0x40", "--c", "0", check=_says("0x7fffffff"))
    c(A, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0x7f800000", check=_says("0x7f800000"))
    c(A, "ok", "run-case", "--device", "sim:mi250x", "--datapath", "mfma.f16.f32.k8", "--a", "0x7bff", "--b", "0x7bff", "--c", "0", check=_says(hex(_w(65504.0 ** 2))))
    c(A, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0", "--model", "mi250x", check=_says("0x3f800000"))
    c(A, "err", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0", "--model", "h100")
    VA = "validate on the AMD sims"
    for dev, fmt in (("sim:mi300x", "bf16"), ("sim:mi300x", "e5m2fnuz"), ("sim:mi300x", "tf32"), ("sim:mi250x", "f16"),
                     ("sim:mi100", "bf16"), ("sim:mi100", "f32")):
        c(VA, "ok", "validate", "--format", fmt, "--device", dev, "--cases", "40", "--out", f"va_{dev[4:]}_{fmt}")
    c(VA, "ok", "validate", "--datapath", "mfma.bf16_1k.bf16.f32.k8", "--device", "sim:mi250x", "--cases", "40", "--out", "va_1k")
    c(VA, "ok", "validate", "--datapath", "mfma.f64.f64.k4", "--device", "sim:mi300x", "--cases", "40", "--out", "va_f64")
    c(VA, "err", "validate", "--datapath", "mfma.f64.f64.k4", "--device", "sim:mi100", "--cases", "40", "--out", "va_f64b")
    c(VA, "err", "validate", "--format", "e4m3", "--device", "sim:mi300x", "--cases", "40", "--out", "va_ocp")
    c(VA, "err", "validate", "--format", "bf16", "--instr", "wgmma", "--device", "sim:mi300x", "--cases", "40", "--out", "va_w")
    c(VA, "ok", "validate", "--format", "f16", "--instr", "mfma", "--device", "sim:mi300x", "--cases", "40", "--out", "va_m")
    c(VA, "err", "validate", "--format", "f16", "--instr", "mfma", "--device", "sim:b200", "--cases", "40", "--out", "va_mb")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--model", "mi300x", "--model", "mi100", "--out", "va_2m")
    c(VA, "any", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--model", "ieee", "--out", "va_ieee")  # a baseline
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--suite", "raw", "--out", "va_raw")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--suite", "edge", "--out", "va_edge")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--suite", "sparse", "--out", "va_sp")  # active lanes
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--suite", "nosuch", "--out", "va_ns")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--suite", "", "--out", "va_es")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "0", "--out", "va_0")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "-1", "--out", "va_n1")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--jobs", "0", "--out", "va_j0")  # the default
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--jobs", "1", "--out", "va_j1")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--shrink", "0", "--out", "va_s0")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--shrink", "-1", "--out", "va_sn")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--seed", str(2 ** 63), "--out", "va_sd")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--json", "-", "--out", "va_js", check=_stdout_json)
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--json", "/dev/full", "--out", "va_full")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--out", "/dev/full")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--sparse-lanes", "0,1", "--out", "va_sl")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:f_plain300.toml", "--cases", "40", "--out", "va_prof")
    c(VA, "ok", "validate", "--format", "bf16", "--device", "sim:f_plain250.toml", "--cases", "40", "--out", "va_prof2")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:f_fam_trunc.toml", "--cases", "40", "--model", "auto", "--out", "va_prof3")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--out", "va_resume")
    c(VA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "80", "--out", "va_resume", "--resume")  # other options: refused
    c(VA, "err", "validate", "--format", "bf16", "--device", "sim:mi300x", "--cases", "80", "--out", "va_resume", "--resume")
    c(VA, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "40", "--out", "never_made", "--resume")  # nothing to continue: starts
    CA = "campaigns: --targets, --shard, report merge"
    c(CA, "ok", "validate", "--targets", "mfma.f16.f32.k16,mfma.bf16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--out", "ca1")
    c(CA, "ok", "validate", "--targets", " MFMA.F16.F32.K16 ", "--device", "sim:mi300x", "--cases", "30", "--out", "ca2")
    c(CA, "err", "validate", "--targets", "mfma", "--device", "sim:h100", "--cases", "30", "--out", "ca3")
    c(CA, "err", "validate", "--targets", "hmma", "--device", "sim:mi300x", "--cases", "30", "--out", "ca4")
    c(CA, "err", "validate", "--targets", "mfma.f16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--shard", "0/2", "--out", "ca5")
    c(CA, "err", "validate", "--targets", "mfma.f16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--shard", "3/2", "--out", "ca6")
    c(CA, "err", "validate", "--targets", "mfma.f16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--shard", "1/0", "--out", "ca7")
    c(CA, "err", "validate", "--targets", "mfma.f16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--shard", "x", "--out", "ca8")
    c(CA, "ok", "validate", "--targets", "mfma.f16.f32.k16,mfma.bf16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--shard", "1/2", "--out", "sh1")
    c(CA, "ok", "validate", "--targets", "mfma.f16.f32.k16,mfma.bf16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--shard", "2/2", "--out", "sh2")
    c(CA, "ok", "report", "merge", "sh1", "sh2", "--out", "shm")
    c(CA, "err", "report", "merge", "sh1", "sh1", "--out", "shm2")
    c(CA, "err", "report", "merge", "sh1", "--out", "shm3")
    c(CA, "err", "report", "merge", "sh1", "sh2", "--out", "sh1")
    c(CA, "err", "report", "merge", "sh1", "ca1", "--out", "shm4")
    c(CA, "err", "report", "merge", "sh1", "outdir", "--out", "shm5")
    c(CA, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--preset", "write-up", "--cases", "30", "--out", "ca9")
    c(CA, "err", "validate", "--targets", "", "--device", "sim:mi300x", "--cases", "30", "--out", "ca10")
    c(CA, "err", "validate", "--targets", "mfma.f16.f32.k16", "--format", "bf16", "--device", "sim:mi300x", "--cases", "30", "--out", "ca11")
    c(CA, "ok", "validate", "--targets", "mfma.f16.f32.k16,,mfma.f16.f32.k16", "--device", "sim:mi300x", "--cases", "30", "--out", "ca12")
    L = "ladder options on AMD"
    LD = ["ladder", "--validate", "0"]
    for dev, fmt in (("sim:mi100", "bf16"), ("sim:mi100", "f32"), ("sim:mi250x", "f16"), ("sim:mi300x", "e4m3fnuz"),
                     ("sim:mi300x", "tf32"), ("sim:f_plain100.toml", "f16"), ("sim:f_fam_trunc.toml", "f16")):
        c(L, "ok", *LD, "--format", fmt, "--device", dev, "--steps", "mfma")
    c(L, "ok", "ladder", "--datapath", "mfma.bf16_1k.bf16.f32.k8", "--device", "sim:mi250x", "--validate", "0", "--steps", "mfma")
    c(L, "err", *LD, "--format", "e4m3fnuz", "--device", "sim:mi250x", "--steps", "mfma")
    c(L, "err", *LD, "--format", "f16", "--instr", "wgmma", "--device", "sim:mi300x")
    c(L, "err", *LD, "--format", "f16", "--instr", "mfma", "--device", "sim:h100")
    c(L, "err", *LD, "--format", "f16", "--device", "sim:mi300x", "--steps", "nosuch")
    c(L, "err", *LD, "--format", "f16", "--device", "sim:mi300x", "--dtype", "f16", "--steps", "mfma")
    c(L, "err", *LD, "--format", "f16", "--device", "sim:mi300x", "--show", "-1", "--steps", "mfma")
    c(L, "ok", *LD, "--format", "f16", "--device", "sim:mi300x", "--show", "0", "--steps", "mfma")
    c(L, "err", *LD, "--format", "f16", "--device", "sim:mi300x", "--seed", "-1", "--steps", "mfma")
    c(L, "ok", *LD, "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma", "--json", "ld.json", check=_json_file("ld.json"))
    c(L, "ok", *LD, "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma", "--json", "-", check=_stdout_json)
    c(L, "err", *LD, "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma", "--json", "/dev/full")
    c(L, "err", *LD, "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma", "--json", "outdir")
    c(L, "ok", "ladder", "--format", "f16", "--device", "sim:mi300x", "--cases", "50", "--steps", "mfma")
    c(L, "err", "ladder", "--format", "f16", "--device", "sim:mi300x", "--cases", "-5", "--steps", "mfma")
    c(L, "err", *LD, "--format", "f16", "--datapath", "mfma.f16.f32.k16", "--device", "sim:mi300x")
    c(L, "err", *LD, "--format", "f16", "--device", "cuda", "--steps", "mfma")
    c(L, "err", *LD, "--format", "f16", "--device", "cuda:7", "--steps", "mfma")
    c(L, "err", *LD, "--format", "f16", "--device", "hip", "--steps", "mfma")
    P = "profiles with families = [\"mfma\"]"
    for name, exp in FAM_EXPECT.items():
        g = FAM_GPU.get(name, "MI300X")
        dp = {"MI300X": "mfma.f16.f32.k16", "MI250X": "mfma.f16.f32.k8", "MI100": "mfma.f16.f32.k8"}[g]
        c(P, exp, "run-case", "--device", f"sim:f_{name}.toml", "--datapath", dp, "--a", "0x3c00", "--b", "0x3c00", "--c", "0",
          check=_says("0x3f800000") if exp == "ok" else None)
    c(P, "err", "run-case", "--device", "sim:t_gpu_int.toml", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00",
      "--c", "0", check=_first_line_names("gpu: 300 is not text"))
    c(P, "err", "run-case", "--device", "sim:f_gpu_float.toml", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00",
      "--c", "0", check=_first_line_names("gpu: 300.0 is not text"))
    c(P, "err", "run-case", "--device", "sim:f_plain250.toml", "--datapath", "mfma.fp8.e4m3fnuz.f32.k32", "--a", "0x40", "--b", "0x40", "--c", "0")
    c(P, "ok", "replay", "--capture", "cap_mi250x", "--device", "sim:f_plain250.toml")
    c(P, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--model", "f_plain300.toml")
    c(P, "any", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--model", "mi250x", "--out", "o.npy")
    # --- gemm options ---
    G = "gemm: alpha, beta, dtype at their extremes"
    O17 = ["gemm", "--a", "o17a.npy", "--b", "o17b.npy"]
    for g in AMD:
        gg = ["--gpu", g]
        c(G, "ok", *O17, *gg, "--alpha", "0", "--c", "c8_ones.npy", "--out", "o.npy", check=_words("o.npy", W1))
        c(G, "ok", *O17, *gg, "--alpha", "2", "--c", "c8_ones.npy", "--beta", "0", "--out", "o.npy", check=_words("o.npy", _w(34.0)))
        c(G, "ok", *O17, *gg, "--c", "c8_nan.npy", "--beta", "0", "--out", "o.npy", check=_words("o.npy", W17))
        c(G, "ok", *O17, *gg, "--c", "c8_neg1.npy", "--out", "o.npy", check=_words("o.npy", W16))
        c(G, "ok", *O17, *gg, "--dtype", "f16", "--out", "o.npy", check=_bytes16("o.npy", 0x4C40))  # f16 17.0 = 2^4 * 1.0625
        c(G, "ok", *O17, *gg, "--dtype", "bf16", "--out", "o.npy")
        c(G, "ok", *O17, *gg, "--alpha", "-1", "--out", "o.npy", check=_words("o.npy", _w(-17.0)))
    c(G, "ok", *O17, *X, "--alpha", "3.4028234663852886e38", "--out", "o.npy", check=_words("o.npy", INF))
    c(G, "ok", *O17, *X, "--alpha", "-3.4028234663852886e38", "--out", "o.npy", check=_words("o.npy", NINF))
    c(G, "any", *O17, *X, "--alpha", "1e-45", "--out", "o.npy", check=_words("o.npy", W17SUB))
    c(G, "ok", *O17, *X, "--alpha", "2.0", "--c", "c8_ones.npy", "--beta", "-34", "--out", "o.npy", check=_words("o.npy", 0))
    c(G, "ok", *O17, *X, "--c", "c8_ones.npy", "--beta", "inf", "--out", "o.npy", check=_words("o.npy", INF))
    c(G, "ok", *O17, *X, "--c", "c8_ones.npy", "--beta", "-inf", "--out", "o.npy", check=_words("o.npy", NINF))
    c(G, "ok", *O17, *X, "--c", "c8_ones.npy", "--beta", "nan", "--out", "o.npy", check=_nan("o.npy"))
    c(G, "ok", *O17, *X, "--alpha", "nan", "--out", "o.npy", check=_nan("o.npy"))
    c(G, "err", *O17, *X, "--beta", "1e39", "--c", "c8_ones.npy")
    c(G, "err", *O17, *X, "--beta", "", "--c", "c8_ones.npy")
    c(G, "err", *O17, *X, "--alpha", "1/2")
    c(G, "err", *O17, *X, "--alpha", "½")
    c(G, "ok", *O17, *X, "--alpha", "+.5", "--out", "o.npy", check=_words("o.npy", _w(8.5)))
    c(G, "ok", *O17, *X, "--alpha", " 0.5 ", "--out", "o.npy", check=_words("o.npy", _w(8.5)))
    c(G, "ok", *O17, *X, "--alpha", "5e-1", "--out", "o.npy", check=_words("o.npy", _w(8.5)))
    c(G, "ok", *O17, *X, "--alpha", "0.5", "--c", "c8_f16.npy", "--out", "o.npy")
    c(G, "ok", *O17, *X, "--c", "c8_ones.npy", "--beta", "-0.0", "--out", "o.npy", check=_words("o.npy", W17))
    c(G, "err", *O17, *X, "--beta", "2")
    c(G, "err", *O17, *X, "--dtype", "s32")
    c(G, "err", *O17, *X, "--dtype", "e4m3")
    c(G, "ok", "gemm", "--a", "o32a8.npy", "--b", "o32b8.npy", "--format", "e4m3fnuz", *X, "--alpha", "0.5", "--out", "o.npy", check=_words("o.npy", W4))
    c(G, "ok", "gemm", "--a", "o32a8.npy", "--b", "o32b8.npy", "--format", "e4m3fnuz", *X, "--c", "c8_ones.npy", "--out", "o.npy", check=_words("o.npy", W9))
    c(G, "any", "gemm", "--a", "o32a8.npy", "--b", "o32b8.npy", "--format", "e4m3fnuz", *X, "--dtype", "e4m3fnuz", "--out", "o.npy")
    c(G, "ok", "gemm", "--a", "o16a_bf.npy", "--b", "o16b_bf.npy", "--format", "bf16", "--gpu", "MI250X", "--c", "c8_ones.npy", "--alpha", "2", "--beta", "-1", "--out", "o.npy", check=_words("o.npy", _w(31.0)))
    S = "gemm: schedules and schedule files"
    for name, exp, chk in (("sk2", "ok", W17), ("sk2_serial", "ok", W17), ("chain", "ok", W17), ("sk_str", "err", None),
                           ("sk_float", "err", None), ("sk_neg", "err", None), ("sk_huge", "err", None), ("list", "err", None),
                           ("string", "any", W17), ("null", "err", None), ("num", "err", None), ("unknown_axis", "err", None),
                           ("preset_bad", "err", None), ("preset_upper", "ok", W17), ("empty_obj", "ok", W17), ("bom", "any", W17),
                           ("utf16", "err", None), ("nan", "err", None), ("comment", "err", None), ("dupkey", "err", None),
                           ("trailing", "err", None), ("empty", "err", None), ("bin", "err", None), ("dir", "err", None),
                           ("dangling", "err", None)):
        c(S, exp, *O17, *X, "--schedule", f"sc_{name}.json", "--out", "o.npy", check=_words("o.npy", chk) if chk else None)
    c(S, "ok", *O17, "--gpu", "MI250X", "--schedule", "sc_sk2.json", "--compare", "MI100", "--compare-schedule", "sc_chain.json", "--verdict-seconds", "0")
    c(S, "ok", *O17, *X, "--schedule", "sc_sk2.json", "--split-k", "2")  # the same split twice
    c(S, "err", *O17, *X, "--schedule", "sc_sk2.json", "--compare", "MI250X", "--compare-schedule", "sc_list.json")
    for sch in ("cublas", "chain", "stream-k", " Stream-K ", "deepgemm-fp8", "nope", "", "auto", "serial", "sc_sk2"):
        exp = {"cublas": "ok", "chain": "ok", "stream-k": "ok", " Stream-K ": "ok", "auto": "ok"}.get(sch, "err")
        c(S, exp, *O17, "--gpu", "MI100", "--schedule", sch, "--out", "o.npy", check=_words("o.npy", W17) if exp == "ok" else None)
    c(S, "ok", "gemm", "--m", "8", "--n", "8", "--k", "64", "--format", "f16", *X, "--schedule", "stream-k", "--split-k", "2", "--out", "o.npy")
    c(S, "err", "gemm", "--m", "8", "--n", "8", "--k", "64", "--format", "f16", *X, "--split-k", "5", "--out", "o.npy")
    c(S, "ok", "gemm", "--m", "8", "--n", "8", "--k", "64", "--format", "f16", *X, "--split-k", "4", "--out", "o.npy")
    Z = "gemm: empty products (--m/--n/--k 0)"
    for m, n, k, shape, word in (("0", "8", "8", (0, 8), None), ("8", "0", "8", (8, 0), None), ("8", "8", "0", (8, 8), 0),
                                 ("0", "0", "0", (0, 0), None), ("1", "1", "0", (1, 1), 0)):
        for g in AMD:
            c(Z, "ok", "gemm", "--m", m, "--n", n, "--k", k, "--format", "f16", "--gpu", g, "--out", "o.npy",
              check=_words("o.npy", word, shape) if word is not None else _shape("o.npy", shape))
    c(Z, "ok", "gemm", "--m", "8", "--n", "8", "--k", "0", "--format", "bf16", "--gpu", "H100", "--out", "o.npy", check=_words("o.npy", 0, (8, 8)))
    c(Z, "ok", "gemm", "--m", "8", "--n", "8", "--k", "0", "--format", "e4m3fnuz", *X, "--out", "o.npy", check=_words("o.npy", 0, (8, 8)))
    c(Z, "ok", "gemm", "--random", "4x4x0", "--format", "tf32", "--gpu", "A100", "--out", "o.npy", check=_words("o.npy", 0, (4, 4)))
    c(Z, "ok", "gemm", "--m", "8", "--n", "8", "--k", "0", "--format", "f16", *X, "--c", "c8_ones.npy", "--out", "o.npy", check=_words("o.npy", W1))
    c(Z, "ok", "gemm", "--m", "8", "--n", "8", "--k", "0", "--format", "f16", *X, "--compare", "MI250X", "--verdict-seconds", "0")
    c(Z, "err", "gemm", "--m", "-1", "--n", "8", "--k", "8", "--format", "f16", *X)
    c(Z, "err", "gemm", "--m", "8", "--n", "8", "--k", "", "--format", "f16", *X)
    c(Z, "err", "gemm", "--m", "0", "--n", "8", "--format", "f16", *X)
    c(Z, "ok", "gemm", "--random", "-0x8x8", "--format", "f16", *X, "--out", "o.npy", check=_shape("o.npy", (0, 8)))  # -0 is 0
    c(Z, "err", "gemm", "--m", "100000", "--n", "100000", "--k", "0", "--format", "f16", *X)
    c(Z, "ok", "gemm", "--m", "8", "--n", "8", "--k", "0", "--format", "f16", *X, "--split-k", "1", "--out", "o.npy", check=_words("o.npy", 0, (8, 8)))
    c(Z, "ok", "gemm", "--a", "n_zero_k_f32.npy", "--b", "n_b_k0_f32.npy", *X, "--out", "o.npy", check=_words("o.npy", 0, (8, 8)))
    J = "gemm, fit-gemm, gemm-probe: --json and --out targets"
    GA = ["gemm", "--a", "a.npy", "--b", "b.npy", *X]
    c(J, "err", *GA, "--json", "/dev/full")
    c(J, "err", *GA, "--out", "/dev/full")
    c(J, "ok", *GA, "--json", "-", check=_stdout_json)
    c(J, "any", *GA, "--json", "j_dangling.json", check=_absent("nowhere_json"))
    c(J, "any", *GA, "--json", "j_link.json")
    c(J, "ok", *GA, "--json", "g.json", check=_json_file("g.json"))
    c(J, "ok", *GA, "--json", "g.JSON", check=_exists("g.JSON"))
    c(J, "err", *GA, "--json", "a.npy")
    c(J, "err", *GA, "--json", "nodir2/g.json")
    c(J, "err", *GA, "--out", "o.npy", "--json", "./o.npy")
    c(J, "err", *GA, "--out", "b.npy")
    c(J, "ok", *GA, "--out", "-", "--json", "g2.json", check=_exists("g2.json"))
    FG = ["fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", *X]
    c(J, "ok", *FG, "--json", "fg.json", check=_json_file("fg.json"))
    c(J, "ok", *FG, "--json", "-", check=_stdout_json)
    c(J, "err", *FG, "--json", "/dev/full")
    c(J, "err", *FG, "--json", "a.npy")
    c(J, "err", *FG, "--json", "ref_MI300X.npy")
    c(J, "any", *FG, "--json", "j_dangling.json", check=_absent("nowhere_json"))
    c(J, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI250X.npy", "--gpu", "MI250X", "--json", "fg2.json")
    c(J, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI100.npy", "--gpu", "MI100")
    c(J, "ok", "fit-gemm", "--a", "fr_a.npy", "--b", "fr_b.npy", "--format", "e4m3fnuz", "--d", "fr_d.npy", *X)
    c(J, "any", "fit-gemm", "--a", "fr_a.npy", "--b", "fr_b.npy", "--format", "e4m3fnuz", "--d", "fr_d8.npy", "--d-format", "e4m3fnuz", *X)
    c(J, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_ab.npy", *X, "--c", "c32.npy", "--alpha", "2", "--beta", "0.5")
    c(J, "any", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_ab.npy", *X, "--c", "c32.npy", "--alpha", "inf")
    c(J, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", *X, "--alpha", "1e39")
    c(J, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", *X, "--beta", "1")
    c(J, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", "--gpu", "MI400")
    c(J, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", *X, "--bounds", "0;-8")
    c(J, "any", "fit-gemm", "--a", "a17.npy", "--b", "b17.npy", "--d", "ref_sk2.npy", *X, "--bounds", "0;16")
    GP = ["gemm-probe", "--format", "f16", "--m", "16", "--n", "16", "--k", "64"]
    c(J, "err", *GP, *X, "--out", "/dev/full")
    c(J, "err", *GP, *X, "--out", "a.npy")
    c(J, "any", *GP, *X, "--out", "j_dangling.json", check=_absent("nowhere_json"))
    c(J, "ok", *GP, "--gpu", "MI100", "--out", "gp_m100")
    c(J, "err", "gemm-probe", "--format", "e5m2fnuz", "--m", "16", "--n", "16", "--k", "64", "--gpu", "MI250X", "--out", "gp_x")
    c(J, "ok", "gemm-probe", "--format", "e5m2fnuz", "--m", "16", "--n", "16", "--k", "64", *X, "--out", "gp_e5")
    c(J, "err", "gemm-probe", "--format", "f16", "--m", "16", "--n", "16", "--k", "65", *X, "--out", "gp_odd")
    c(J, "err", "gemm-probe", "--format", "f16", "--m", "16", "--n", "16", "--k", "62", *X, "--out", "gp_62")
    c(J, "err", "gemm-probe", "--format", "f16", "--m", "16", "--n", "-16", "--k", "64", *X, "--out", "gp_nn")
    c(J, "ok", "gemm-probe", "--format", "tf32", "--m", "16", "--n", "16", "--k", "64", *X, "--out", "gp_tf")
    # --- malformed .npy ---
    N = "malformed .npy files"
    for name in ("n_noshape", "n_fortstr", "n_f3", "n_negshape", "n_floatshape", "n_list", "n_v9", "n_void", "n_str",
                 "n_short1", "n_call", "n_struct", "n_nul"):
        c(N, "err", "gemm", "--a", f"{name}.npy", "--b", "ones_b.npy", *X)
    c(N, "any", "gemm", "--a", "n_long.npy", "--b", "ones_b.npy", *X, "--out", "o.npy")
    c(N, "any", "gemm", "--a", "n_extra.npy", "--b", "ones_b.npy", *X, "--out", "o.npy")
    c(N, "err", "fit-gemm", "--a", "n_v9.npy", "--b", "ones_b.npy", "--d", "ref_MI300X.npy", *X)
    c(N, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "n_fortstr.npy", *X)
    c(N, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--c", "n_short1.npy")
    c(N, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--c", "n_call.npy")
    c(N, "ok", "gemm", "--a", "n_big_endian_f4.npy", "--b", "o16b32.npy", *X, "--out", "o.npy", check=_words("o.npy", W16))
    c(N, "ok", "gemm", "--a", "n_f16_nan_payload.npy", "--b", "ones_b.npy", *X, "--out", "o.npy", check=_nan("o.npy", 0x7FFFFFFF))
    # --- replay ---
    R = "replay of AMD captures"
    c(R, "ok", "replay", "--capture", "cap_mi250x", "--device", "sim:mi250x")
    c(R, "any", "replay", "--capture", "cap_mi250x", "--device", "sim:mi300x")
    c(R, "ok", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--limit", "5")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--limit", "0")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--limit", "-1")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--show", "-1")
    c(R, "ok", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--json", "-", check=_stdout_json)
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--json", "/dev/full")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "sim:mi100", "--instr", "tcgen05")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "cuda")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "cuda:0")
    c(R, "err", "replay", "--capture", "cap_mi100", "--device", "sim:b200")
    c(R, "err", "replay", "--capture", "cap_mi250x", "--device", "sim:mi100")
    c(R, "any", "replay", "--capture", "cap_mi100/capture.tcap", "--device", "sim:mi250x")
    c(R, "ok", "score", "--capture", "cap_mi250x", "--model", "mi250x")
    c(R, "any", "score", "--capture", "cap_mi250x", "--model", "mi300x")
    c(R, "err", "score", "--capture", "cap_mi250x", "--model", "h100")
    c(R, "any", "fit", "--capture", "cap_mi100")
    c(R, "err", "replay", "--capture", "m_text", "--device", "sim:mi300x")
    c(R, "err", "replay", "--capture", "", "--device", "sim:mi300x")
    # --- sass-check without tools ---
    SC = "sass-check and mfma-check without tools"
    c(SC, "err", "sass-check", "--instr", "mfma")
    c(SC, "err", "sass-check", "--instr", "nope")
    c(SC, "err", "sass-check", "--arch", "sm_999")
    c(SC, "err", "sass-check", "--arch", "gfx942")
    c(SC, "err", "sass-check", "--format", "nope")
    c(SC, "any", "sass-check", "--json", "-")
    c(SC, "err", "sass-check", "--json", "/dev/full")
    c(SC, "any", "sass-check", "--instr", " MMA ", "--format", "bf16", "--arch", "sm_80")
    c(SC, "ok", "mfma-check", "--arch", "gfx90a", "--json", "mc90a.json")
    c(SC, "ok", "mfma-check", "--arch", "gfx908")
    c(SC, "err", "mfma-check", "--arch", "gfx1100")
    c(SC, "err", "mfma-check", "--arch", "")
    c(SC, "err", "mfma-check", "--json", "/dev/full")
    c(SC, "ok", "mfma-check", "--json", "-", check=_stdout_json)
    return out


def _bytes16(name, word):
    def check(r, made):
        got = set(np.load(name).view(np.uint16).ravel().tolist())
        return None if got == {word} else f"{name} holds {[hex(x) for x in sorted(got)[:3]]}, not {hex(word)}"
    return check


def _shape(name, shape):
    def check(r, made):
        got = np.load(name).shape
        return None if got == shape else f"{name} is {got}, not {shape}"
    return check


def proc_cases():
    """(class, expected, argv, env, cwd (under the root), check(r, out, err)) as real processes."""
    V = "TCPROBE_* variables (real processes)"
    BAD = ["tcprobe", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--alpha", "zz"]
    OK = ["tcprobe", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--gpu", "MI250X", "--out", "po.npy"]
    chk = _proc_words("po.npy", W17)
    out = []
    for k, val, exp in (("TCPROBE_DEBUG", "", "err"), ("TCPROBE_DEBUG", "yes", "any"), ("TCPROBE_DEBUG", " on ", "any"),
                        ("TCPROBE_DEBUG", "0x0", "err"), ("TCPROBE_HEARTBEAT", "", "err"), ("TCPROBE_HEARTBEAT", "nope", "err")):
        out.append((V, exp, BAD, {k: val}, "", None))
    for k, val in (("TCPROBE_HEARTBEAT", "0"), ("TCPROBE_HEARTBEAT", "yes"), ("TCPROBE_EPILOGUE", "ENGINE"), ("TCPROBE_KERNEL", "plain"),
                   ("TCPROBE_CACHE", ""), ("TCPROBE_CACHE", "/proc/self"), ("TCPROBE_CACHE", "a.npy/sub"), ("TCPROBE_CUDA_DRIVER", ""),
                   ("TCPROBE_CUDA_DRIVER", "a.npy"), ("TCPROBE_NVDISASM", ""), ("TCPROBE_FOO", "1"), ("TCPROBE_TEST_STOP_AFTER_CHUNK", "x")):
        out.append((V, "ok", OK, {k: val}, "", chk))
    for k, val in (("TCPROBE_EPILOGUE", ""), ("TCPROBE_EPILOGUE", "engine,fast"), ("TCPROBE_KERNEL", ""), ("TCPROBE_KERNEL", "cuda")):
        out.append((V, "any", OK, {k: val}, "", chk))
    out.append((V, "any", ["tcprobe", "sass-check", "--instr", "mma", "--arch", "sm_80"], {"TCPROBE_NVDISASM": "/nonexistent/nvdisasm", "PATH": "/usr/bin:/bin"}, "", None))
    out.append((V, "any", ["tcprobe", "sass-check"], {"TCPROBE_NVDISASM": "a.npy"}, "", None))
    out.append((V, "ok", ["tcprobe", "devices"], {"TCPROBE_CUDA_DRIVER": "a.npy"}, "", None))
    out.append((V, "ok", ["tcprobe", "devices"], {"TCPROBE_CUDA_DRIVER": "/dev/null"}, "", None))
    out.append((V, "ok", ["tcprobe", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b",
                          "0x3c00", "--c", "0"], {"TCPROBE_CACHE": "/dev/null/sub"}, "", _proc_says("0x3f800000")))
    out.append((V, "ok", ["python", "-c", "import tcprobe, numpy as np; d = tcprobe.matmul(np.ones((8, 17), np.float16), "
                          "np.ones((17, 8), np.float16), gpu='MI300X'); assert (d.view(np.uint32) == 0x41880000).all()"],
                {"TCPROBE_KERNEL": " Plain ", "TCPROBE_EPILOGUE": " Engine "}, "", None))
    # the API raises a ValueError (the script prints it as one error line, exit 2)
    out.append((V, "err", ["python", "-c", "import sys, tcprobe, numpy as np\ntry:\n    tcprobe.matmul(np.ones((8, 16), np.float16), "
                           "np.ones((16, 8), np.float16), gpu='MI300X')\nexcept ValueError as e:\n    print('error:', e, file=sys.stderr); sys.exit(2)"],
                {"TCPROBE_KERNEL": "zzz"}, "", _proc_one_error))
    # the documents' lines, run as written from another folder (README, docs/)
    D = "the documents' lines from another folder"
    W = "away"
    mk = ("import ml_dtypes, numpy as np; r = np.random.default_rng(0); np.save('A.npy', r.standard_normal((256, 512))"
          ".astype(ml_dtypes.bfloat16)); np.save('B.npy', r.standard_normal((512, 128)).astype(ml_dtypes.bfloat16))")
    out.append((D, "ok", ["python", "-c", mk], {}, W, None))
    out.append((D, "ok", ["tcprobe", "gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "H100", "--out", "D.npy"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "H100", "--instr", "wgmma", "--out", "D.npy"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "A100", "--compare", "H100", "--exact"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "H100", "--compare", "H100", "--compare-schedule", "stream-k"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "gemm", "--m", "1024", "--n", "1024", "--k", "1024", "--format", "bf16", "--gpu", "A100", "--compare", "H100"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "gemm", "--a", "A.npy", "--b", "B.npy", "--format", "bf16", "--gpu", "MI300X", "--compare", "MI250X"], {}, W, None))
    out.append((D, "err", ["tcprobe", "score", "--capture", "../shared/hwdata/khattak-mikaitis-2025"], {}, W, _proc_one_error))
    out.append((D, "err", ["tcprobe", "score", "--capture", "tests/data/khattak-mikaitis-2025"], {}, W, _proc_error_says("read from")))
    out.append((D, "ok", ["tcprobe", "score", "--capture", str(REPO / "tests/data/khattak-mikaitis-2025")], {}, W, None))
    out.append((D, "ok", ["tcprobe", "validate", "--format", "bf16", "--device", "sim:b200", "--cases", "1e6"], {}, W, None))
    out.append((D, "any", ["tcprobe", "validate", "--datapath", "tcgen05.f8f6f4.e4m3xe2m1.f32.k32", "--cases", "1e5", "--model", "auto", "--model", "ieee"], {}, W, None))
    out.append((D, "any", ["tcprobe", "validate", "--format", "bf16", "--cases", "1e6", "--out", "run1", "--resume"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "run-case", "--device", "sim:b200", "--datapath", "mma.bf16.f32.k16", "--model", "ieee",
                          "--a", "0x3f80", "--b", "0x3f80", "--c", "0"], {}, W, None))
    out.append((D, "err", ["tcprobe", "report", "merge", "out/s1", "out/s2", "...", "out/s8", "--out", "out/all"], {}, W, _proc_one_error))
    out.append((D, "ok", ["tcprobe", "gemm-probe", "--gpu", "H200", "--format", "bf16", "--out", "DIR"], {}, W, None))
    out.append((D, "any", ["python", "-m", "tcprobe.capture.torch_gemm", "DIR"], {}, W, None))
    out.append((D, "any", ["tcprobe", "ladder", "--format", "bf16"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "ladder", "--format", "f16", "--device", "sim:mi300x"], {}, W, None))
    out.append((D, "ok", ["python", "-c", "import tcprobe.atlas as atlas; f = atlas.lookup('H200', 'gemm', 'bf16', 256, 256, 4096); "
                          "print(f.provenance, f.axes); print(f.evidence[0]); print(atlas.lookup('H200', 'gemm', 'tf32', 64, 64, 2048).describe())"],
                {}, W, _proc_says("measured")))
    out.append((D, "ok", ["python", "-c", "import torch, tcprobe.torch\nrep = tcprobe.torch.Report(compare=True)\n"
                          "model = torch.nn.Linear(16, 8).to(torch.bfloat16); x = torch.randn(4, 16).to(torch.bfloat16)\n"
                          "with tcprobe.torch.emulate(gpu='H200', report=rep):\n    loss = model(x).float().sum(); loss.backward()\n"
                          "for row in rep.rows(): print(row)"], {}, W, None))
    out.append((D, "ok", ["python", "-m", "tcprobe", "--version"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "mfma-check", "--arch", "gfx942"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "targets", "--set", "mfma"], {}, W, None))
    out.append((D, "ok", ["tcprobe", "warm", "--help"], {}, W, None))
    # gemm-probe manifests, damaged, through the capture script (torch's CPU build here)
    M = "gemm-probe manifests, damaged"
    for name in ("m_empty", "m_text", "m_list", "m_nokeys", "m_badfmt", "m_negk", "m_none", "no_such_dir"):
        out.append((M, "err", ["python", "-m", "tcprobe.capture.torch_gemm", name], {}, "", _proc_one_error))
    out.append((M, "err", ["python", "-m", "tcprobe.capture.torch_gemm"], {}, "", None))
    return out


def _proc_words(name, word):
    def check(r, out, err):
        got = set(np.load(name).view(np.uint32).ravel().tolist())
        return None if got == {word} else f"{name} holds {sorted(got)[:3]}, not {hex(word)}"
    return check


def _proc_says(text):
    def check(r, out, err):
        return None if text in out + err else f"no {text!r} in the output"
    return check


def _proc_error_says(text):
    """An err case's check: its one error line says ``text`` (where a relative path was read)."""
    def check(r, out, err):
        errs = [ln for ln in err.splitlines() if ln.startswith("error:")]
        return None if len(errs) == 1 and text in errs[0] else f"the error does not say {text!r}"
    return check


def _proc_one_error(r, out, err):
    n = sum(1 for ln in err.splitlines() if ln.startswith("error:"))
    return None if n == 1 or r.returncode == 0 else f"{n} error lines"


PRELUDE = PRELUDE13 + r'''
import threading, concurrent.futures
from tcprobe.torch import Report
O16 = torch.ones(8, 16, dtype=torch.float16); OB16 = torch.ones(16, 8, dtype=torch.float16)
def dword(x):
    return [int(v) for v in np.asarray(x).ravel().tolist()]
'''

EO = "emulate: out= and in-place forms"
EF = "emulate: fused paths, unmodelled ops, threads"
ES = "emulate: strict, instr, nested Reports"
AD = "API dot on AMD datapaths"
AM = "API matmul on AMD: new combinations"
AT = "API atlas lookups"


def _api():
    out = []
    a = lambda cls, exp, code: out.append((cls, exp, code))  # noqa: E731
    bf, f16 = "torch.bfloat16", "torch.float16"
    for g in AMD:
        G = f"gpu='{g}'"
        a(EO, "ok", f"c = torch.ones(8, 8, dtype={f16}); d, _ = EX(lambda: c.addmm_(O16, OB16), {G}); tall(c, {W17})")
        a(EO, "ok", f"o = torch.empty(8, 8, dtype={f16}); EX(lambda: torch.addmm(torch.ones(8, 8, dtype={f16}), O16, OB16, out=o), {G}); tall(o, {W17})")
        a(EO, "ok", f"o = torch.empty(2, 8, 8, dtype={f16}); EX(lambda: torch.bmm(O16.expand(2, 8, 16), OB16.expand(2, 16, 8), out=o), {G}); tall(o, {W16})")
        a(EO, "ok", f"c = torch.ones(2, 8, 8, dtype={f16}); EX(lambda: c.baddbmm_(O16.expand(2, 8, 16), OB16.expand(2, 16, 8)), {G}); tall(c, {W17})")
        a(EO, "ok", f"o = torch.empty(8, dtype={f16}); EX(lambda: torch.mv(O16, torch.ones(16, dtype={f16}), out=o), {G}); tall(o, {W16})")
        a(EO, "ok", f"c = torch.ones(8, dtype={f16}); EX(lambda: c.addmv_(O16, torch.ones(16, dtype={f16})), {G}); tall(c, {W17})")
        a(EO, "ok", f"c = torch.ones(8, 8, dtype={f16}); EX(lambda: c.addmm_(O16, OB16, beta=2, alpha=0.5), {G}); tall(c, {_w(10.0)})")
        a(EO, "ok", f"d, rep = EX(lambda: torch.mm(O16, OB16, out_dtype=torch.float32), {G}); tall(d, {W16}); assert d.dtype == torch.float32 and rep.routed == 1")
        a(EO, "ok", f"d, rep = EX(lambda: torch.addmm(torch.ones(8, 8, dtype=torch.float32), O16, OB16, out_dtype=torch.float32), {G}); tall(d, {W17})")
        a(EO, "ok", f"d, rep = EX(lambda: torch.bmm(O16.expand(2, 8, 16), OB16.expand(2, 16, 8), out_dtype=torch.float32), {G}); tall(d, {W16})")
        a(EF, "ok", f"d, rep = EX(lambda: torch.softmax(O16 @ OB16, -1), {G}); assert rep.routed == 1 and rep.unmodelled, rep.unmodelled")
        a(EF, "ok", f"def f():\n    t = threading.Thread(target=lambda: O16 @ OB16); t.start(); t.join()\n    return O16 @ OB16\nd, rep = EX(f, {G}); tall(d, {W16}); assert rep.threads == 1 and rep.routed == 1, (rep.threads, rep.routed)")
        a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 17), np.float16), np.ones((17, 8), np.float16), np.ones((8, 8), np.float32), {G}, alpha=2, beta=-1); assert words(d) == [{_w(33.0)}]")
        a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), {G}, bias=np.ones(8, np.float16)); assert words(d) == [{W17}]")
        a(AM, "err", f"o = np.empty((8, 8), np.float32); d = tcprobe.matmul(ones16, ones16b, {G}, out=o); assert words(o) == [{W16}]")  # out= names a type (deprecated)
        a(AM, "err", f"o = np.empty((8, 8), np.float16); tcprobe.matmul(ones16, ones16b, {G}, out=o)")
        a(AM, "err", f"o = np.empty((8, 9), np.float32); tcprobe.matmul(ones16, ones16b, {G}, out=o)")
        a(AM, "ok", f"d = tcprobe.matmul(ones16, ones16b, {G}, dtype='f16'); assert d.dtype == np.float16 and (d == 16).all()")
        a(AM, "ok", f"d = tcprobe.matmul(np.zeros((8, 0), np.float16), np.zeros((0, 8), np.float16), np.full((8, 8), -1.0, np.float32), {G}, alpha=5, beta=2); assert words(d) == [{_w(-2.0)}]")
        a(AM, "ok", f"d = tcprobe.matmul(ones16, ones16b, {G}, backend='host', jobs=2); assert words(d) == [{W16}]")
        a(AM, "ok", f"d = tcprobe.matmul(ones16, ones16b, {G}, fast=True); assert words(d) == [{W16}]")
    # out= and in-place forms with bf16 on MI300X and a float32 out of matching type
    a(EO, "ok", f"o = torch.empty(8, 8, dtype={bf}); EX(lambda: torch.mm(O, OB, out=o)); tall(o, {W16})")
    a(EO, "torch", "o = torch.empty(8, 8, dtype=torch.float32); EX(lambda: torch.mm(O, OB, out=o))")  # torch's own refusal
    # a too-small out= view: torch resizes it (a deprecation warning); emulate writes the same words
    a(EO, "ok", f"o1 = torch.zeros(8, 8, dtype={bf}); v1 = o1[:, :4]; torch.mm(O, OB, out=v1)\no2 = torch.zeros(8, 8, dtype={bf}); v2 = o2[:, :4]; EX(lambda: torch.mm(O, OB, out=v2)); tsame(o1, o2); tsame(v1, v2)")
    a(EO, "ok", f"o = torch.empty(8, 16, dtype={bf}); EX(lambda: torch.mm(O, OB, out=o[:, ::2])); tall(o[:, ::2], {W16})")
    a(EO, "ok", f"o = torch.empty(4, 4, dtype={bf}); EX(lambda: torch.mm(O, OB, out=o)); tall(o, {W16}); assert o.shape == (8, 8)")
    a(EO, "ok", f"c = torch.ones(8, 8, dtype={bf}); EX(lambda: c.addmm_(O, OB, beta=0)); tall(c, {W16})")
    a(EO, "ok", f"c = torch.full((8, 8), float('nan'), dtype={bf}); EX(lambda: c.addmm_(O, OB, beta=0)); tall(c, {W16})")
    a(EO, "ok", f"c = torch.ones(8, 8, dtype={bf}); EX(lambda: c.addmm_(O, OB, alpha=0)); tall(c, {W1})")
    a(EO, "ok", f"c = torch.ones(8, 8, dtype={bf}).t(); EX(lambda: c.addmm_(O, OB)); tall(c, {W17})")
    a(EO, "ok", f"x = torch.ones(8, 8, dtype={bf}); EX(lambda: x.addmm_(x, x)); tall(x, {W9})")
    a(EO, "ok", f"o = torch.empty(2, 8, 8, dtype={bf}); EX(lambda: torch.baddbmm(torch.ones(2, 8, 8, dtype={bf}), O.expand(2, 8, 16), OB.expand(2, 16, 8), out=o)); tall(o, {W17})")
    a(EO, "ok", f"o = torch.empty(8, dtype={bf}); EX(lambda: torch.addmv(torch.ones(8, dtype={bf}), O, torch.ones(16, dtype={bf}), out=o)); tall(o, {W17})")
    a(EO, "ok", f"o = torch.empty(8, 8, dtype=torch.float32); d, rep = EX(lambda: torch.mm(O, OB, out_dtype=torch.float32, out=o)); tall(o, {W16})")
    a(EO, "ok", f"d, rep = EX(lambda: torch.mm(O, OB, out_dtype={bf})); tall(d, {W16})")
    a(EO, "ok", f"c = torch.ones(8, 8, dtype={bf}); d, rep = EX(lambda: torch.addmm(c, O, OB, out_dtype=torch.float32, beta=3)); tall(d, {_w(19.0)})")
    a(EO, "ok", "a8 = torch.ones(32, 32, dtype=torch.int8); o = torch.empty(32, 32, dtype=torch.int32)\nd, rep = EX(lambda: torch._int_mm(a8, a8, out=o)); assert (o == 32).all() and o.dtype == torch.int32")
    a(EO, "ok", "x = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); y = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t(); o = torch.empty(16, 16)\n"
                f"one = torch.tensor(1.0); EX(lambda: torch._scaled_mm(x, y, one, one, out_dtype=torch.float32, out=o)); tall(o, {W8})")
    a(EO, "ok", "x = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); y = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t()\n"
                f"two = torch.tensor(2.0); d, _ = EX(lambda: torch._scaled_mm(x, y, two, two, out_dtype=torch.float32)); tall(d, {_w(32.0)})")
    a(EO, "ok", "x = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); y = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t()\n"
                f"one = torch.tensor(1.0); d, _ = EX(lambda: torch._scaled_mm(x, y, one, one, bias=torch.ones(16), out_dtype=torch.float32)); tall(d, {W9})")
    a(EO, "any", "x = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); y = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t()\n"
                 "one = torch.tensor(1.0); d, rep = EX(lambda: torch._scaled_mm(x, y, one, one, out_dtype=torch.float32), gpu='MI250X')")
    # fused fast paths and counted ops
    a(EF, "ok", "m = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval(); x = torch.randn(2, 4, 16)\n"
                "def f():\n    with torch.no_grad():\n        return m(x, x, x)[0]\nd, rep = EX(f); s = str(rep.fallbacks) + str(rep.ops); assert rep.fallbacks or rep.routed, s")
    a(EF, "ok", "m = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval(); x = torch.randn(2, 4, 16)\n"
                "def f():\n    with torch.no_grad():\n        return m(x)\nd, rep = EX(f); assert rep.fallbacks or rep.routed")
    a(EF, "ok", "m = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval(); x = torch.randn(2, 4, 16)\n"
                "def f():\n    with torch.no_grad():\n        return m(x, x, x)[0]\n"
                "try:\n    EX(f, strict='routes')\nexcept ValueError as e:\n    assert 'strict' in str(e)\nelse:\n    rep = EX(f)[1]; assert not rep.fallbacks, rep.fallbacks")
    a(EF, "ok", "d, rep = EX(lambda: F.gelu(O @ OB)); assert rep.routed == 1 and 'gelu' in str(rep.unmodelled), rep.unmodelled")
    a(EF, "ok", "d, rep = EX(lambda: F.layer_norm((O @ OB).float(), (8,))); assert 'layer_norm' in str(rep.unmodelled), rep.unmodelled")
    a(EF, "ok", "d, rep = EX(lambda: (O @ OB).t().contiguous()); assert rep.routed == 1 and not rep.unmodelled, rep.unmodelled")
    a(EF, "ok", f"d, rep = EX(lambda: torch.dot(torch.ones(16, dtype={bf}), torch.ones(16, dtype={bf}))); assert rep.fallbacks and rep.routed == 0")
    a(EF, "ok", f"d, rep = EX(lambda: torch.addr(torch.ones(8, 8, dtype={bf}), torch.ones(8, dtype={bf}), torch.ones(8, dtype={bf}))); assert rep.fallbacks")
    a(EF, "ok", "b = torch.nn.Bilinear(4, 4, 2).to(torch.bfloat16); x = torch.ones(3, 4, dtype=torch.bfloat16)\nd, rep = EX(lambda: b(x, x)); assert rep.fallbacks or rep.routed")
    a(EF, "ok", "conv = torch.nn.Conv2d(2, 4, 3, bias=False).to(torch.bfloat16); torch.nn.init.ones_(conv.weight)\n"
                f"d, rep = EX(lambda: conv(torch.ones(1, 2, 5, 5, dtype=torch.bfloat16))); tall(d, {_w(18.0)}); assert rep.routed == 1")
    a(EF, "ok", "conv = torch.nn.Conv1d(3, 2, 2, bias=True).to(torch.float16); torch.nn.init.ones_(conv.weight); torch.nn.init.ones_(conv.bias)\n"
                f"d, rep = EX(lambda: conv(torch.ones(1, 3, 6, dtype=torch.float16))); tall(d, {_w(7.0)})")
    a(EF, "ok", "conv = torch.nn.ConvTranspose2d(2, 2, 2).to(torch.bfloat16)\nd, rep = EX(lambda: conv(torch.ones(1, 2, 3, 3, dtype=torch.bfloat16))); assert rep.fallbacks or rep.torch_ops or rep.routed")
    a(EF, "ok", "def f():\n    with concurrent.futures.ThreadPoolExecutor(2) as ex:\n        list(ex.map(lambda _: O @ OB, range(2)))\n    return O @ OB\n"
                f"d, rep = EX(f); tall(d, {W16}); assert rep.threads >= 1 and rep.routed == 1, (rep.threads, rep.routed)")
    a(EF, "ok", "out = []\ndef f():\n    t = threading.Thread(target=lambda: out.append(E(lambda: O @ OB, gpu='MI250X')[1].routed)); t.start(); t.join()\n    return O @ OB\n"
                "d, rep = EX(f); assert out == [1] and rep.routed == 1 and rep.threads == 1, (out, rep.routed, rep.threads)")
    a(EF, "ok", "d, rep = EX(lambda: torch.ones(8, 16, dtype=torch.float64) @ torch.ones(16, 8, dtype=torch.float64)); assert rep.fallbacks and rep.routed == 0")
    a(EF, "ok", "d, rep = EX(lambda: torch.ones(8, 16) @ torch.ones(16, 8)); assert rep.routed == 1, rep.fallbacks")
    a(EF, "torch", f"EX(lambda: torch.ones(8, 16, dtype={bf}) @ torch.ones(16, 8, dtype=torch.float16))")  # torch refuses mixed dtypes itself
    a(EF, "ok", "x = torch.ones(8, 16, dtype=torch.bfloat16).to_sparse(); d, rep = EX(lambda: torch.sparse.mm(x, OB)); assert rep.fallbacks or rep.routed == 0")
    a(EF, "ok", "d, rep = EX(lambda: O @ OB, gpu='MI100'); assert (rep.routed == 1) or rep.fallbacks")
    a(EF, "ok", "rows = EX(lambda: torch.softmax(O @ OB, -1))[1].rows(); assert rows[-1].get('unmodelled') is True, rows[-1]")
    a(EF, "ok", "rep = EX(lambda: [O @ OB for _ in range(3)])[1]; assert rep.routed == 3 and sum(rep.provenance().values()) == 3, rep.provenance()")
    # strict, instr, nested Reports
    a(ES, "err", "EX(lambda: O @ OB, strict=True)")
    a(ES, "err", "EX(lambda: O @ OB, gpu='MI250X', strict=True)")
    a(ES, "ok", f"d, _ = EX(lambda: O @ OB, strict=True, schedule='cublas'); tall(d, {W16})")
    a(ES, "ok", f"d, _ = EX(lambda: O @ OB, strict=True, schedule={{'split_k': 1}}); tall(d, {W16})")
    a(ES, "err", "EX(lambda: O @ OB, strict='yes')")
    a(ES, "err", "EX(lambda: O @ OB, strict=1)")
    a(ES, "ok", f"d, _ = EX(lambda: O @ OB, strict=False); tall(d, {W16})")
    a(ES, "ok", f"d, _ = EX(lambda: O @ OB, strict='Routes'); tall(d, {W16})")
    a(ES, "err", "EX(lambda: torch.dot(torch.ones(16, dtype=torch.bfloat16), torch.ones(16, dtype=torch.bfloat16)), strict='routes')")
    a(ES, "ok", "d, rep = EX(lambda: torch.softmax(O.float(), -1), strict=True); assert rep.unmodelled")
    a(ES, "ok", f"d, _ = EX(lambda: torch.ones(256, 4096, dtype={bf}) @ torch.ones(4096, 256, dtype={bf}), gpu='H200', strict=True); tall(d, {_w(4096.0)})")
    for instr, exp in (("'mfma.bf16.f32.k16'", "ok"), ("'MFMA.BF16.F32.K16'", "ok"), ("'mfma.bf16.f32.k8'", "ok"), ("'mfma.bf16.f32.k4'", "ok"),
                       ("'wgmma'", "err"), ("'mma'", "err"), ("'tcgen05'", "err"), ("'mfma.f16.f32.k16x'", "err"), ("''", "err"),
                       ("None", "ok"), ("'mfma.bf16_1k.bf16.f32.k8'", "err"), ("3", "err"), ("'v_mfma_f32_16x16x16_bf16'", "any")):
        a(ES, exp, f"d, _ = EX(lambda: O @ OB, instr={instr}); tall(d, {W16})")
    a(ES, "ok", f"d, _ = EX(lambda: O @ OB, gpu='MI250X', instr='mfma.bf16_1k.bf16.f32.k8'); tall(d, {W16})")
    a(ES, "err", "EX(lambda: O @ OB, gpu='H100', instr='mfma')")
    a(ES, "err", "EX(lambda: O @ OB, gpu='MI100', instr='mfma.bf16_1k.bf16.f32.k8')")
    a(ES, "ok", "d, rep = EX(lambda: O16 @ OB16, instr='mfma.bf16.f32.k16'); assert rep.fallbacks and rep.routed == 0")
    a(ES, "ok", "r1, r2 = Report(), Report()\nwith emulate('MI300X', report=r1):\n    O @ OB\n    with emulate('MI250X', report=r2):\n        O @ OB\n    O @ OB\nassert (r1.routed, r2.routed) == (2, 1), (r1.routed, r2.routed)")
    a(ES, "ok", "r1 = Report()\nwith emulate('MI300X', report=r1):\n    with emulate('MI250X', report=r1):\n        O @ OB\n    O @ OB\nassert r1.routed == 2, r1.routed")
    a(ES, "ok", f"r1 = Report()\nwith emulate('MI300X', report=r1):\n    with emulate('H100'):\n        d = O @ OB\ntall(d, {W16}); assert r1.routed == 0, r1.routed")
    a(ES, "ok", "r1 = Report(compare=True)\nwith emulate('MI300X', report=r1):\n    with emulate('MI250X', report=Report(compare=True)):\n        O @ OB\n    O @ OB\nrows = r1.rows(); assert rows and 'max_ulp' in rows[0], rows[0]")
    a(ES, "ok", "r1 = Report(record=True)\nwith emulate('MI300X', report=r1):\n    O @ OB\nassert len(r1.records) == 1, len(r1.records)")
    a(ES, "ok", "m = emulate('MI300X')\nwith m:\n    d1 = O @ OB\nwith m:\n    d2 = O @ OB\ntsame(d1, d2)")
    a(ES, "ok", f"with emulate('MI300X'):\n    with emulate('MI300X'):\n        with emulate('MI300X'):\n            d = O @ OB\ntall(d, {W16})")
    a(ES, "err", "EX(lambda: O @ OB, report='yes')")
    a(ES, "err", "EX(lambda: O @ OB, gpu='MI300X', backend='rocm')")
    a(ES, "ok", f"d, rep = EX(lambda: O @ OB, backend='host'); tall(d, {W16})")
    a(ES, "err", f"d, rep = EX(lambda: O @ OB, model='mi250x'); tall(d, {W16})")  # MI250X's model has no bf16 k16
    a(ES, "err", "EX(lambda: O @ OB, model='h100')")
    a(ES, "err", "EX(lambda: O @ OB, schedule='deepgemm-fp8')")
    a(ES, "err", "EX(lambda: O @ OB, schedule='nope')")
    a(ES, "err", "with emulate(gpu=None):\n    pass")
    a(ES, "err", "with emulate(gpu='MI300X', strict=True, instr='wgmma'):\n    pass")
    # dot on every AMD datapath class
    for g, dp, aw, bw, k, cw, want in (
            ("MI300X", "mfma.f16.f32.k16", 0x3C00, 0x3C00, 16, 0, W16),
            ("MI250X", "mfma.f16.f32.k8", 0x3C00, 0x3C00, 8, W1, W9),
            ("MI100", "mfma.f16.f32.k4", 0x3C00, 0x3C00, 4, 0, W4),
            ("MI250X", "mfma.bf16_1k.bf16.f32.k16", 0x3F80, 0x3F80, 16, W1, W17),
            ("MI100", "mfma.bf16.f32.k8", 0x3F80, 0x3F80, 8, 0, W8),
            ("MI300X", "mfma.bf16.f32.k8", 0x3F80, 0x3F80, 8, 0, W8),
            ("MI300X", "mfma.f32.f32.k4", W1, W1, 4, W1, _w(5.0)),
            ("MI100", "mfma.f32.f32.k2", W1, W1, 2, 0, W2),
            ("MI300X", "mfma.xf32.tf32.f32.k4", 0x3F800400, W1, 4, 0, W4),
            ("MI300X", "mfma.fp8.e4m3fnuz.f32.k32", 0x38, 0x38, 32, 0, W8),
            ("MI300X", "mfma.fp8.e5m2fnuz.f32.k32", 0x38, 0x40, 32, 0, W8),
            ("MI300X", "mfma.f64.f64.k4", WD1, WD1, 4, 0, WD4),
            ("MI250X", "mfma.f64.f64.k4", WD1, WD1, 4, 0, WD4)):
        a(AD, "ok", f"x = tcprobe.dot([{aw}] * {k}, [{bw}] * {k}, {cw}, datapath='{dp}', gpu='{g}'); assert dword(x) == [{want}], dword(x)")
    a(AD, "ok", f"x = tcprobe.dot(np.full((3, 16), 0x3c00), np.full((3, 16), 0x3c00), [0, {W1}, {W16}], datapath='mfma.f16.f32.k16', gpu='MI300X'); assert dword(x) == [{W16}, {W17}, {_w(32.0)}], dword(x)")
    a(AD, "ok", f"x = tcprobe.dot(np.full((2, 16), 0x3c00, np.uint16), np.full((2, 16), 0x3c00, np.uint16), np.zeros(2, np.uint32), datapath='mfma.f16.f32.k16', gpu='MI300X'); assert dword(x) == [{W16}, {W16}]")
    a(AD, "err", "tcprobe.dot([0x3c00] * 15, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')")
    a(AD, "err", "tcprobe.dot([0x3c00] * 17, [0x3c00] * 17, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')")
    a(AD, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='H100')")
    a(AD, "err", "tcprobe.dot([0x38] * 32, [0x38] * 32, 0, datapath='mfma.fp8.e4m3fnuz.f32.k32', gpu='MI250X')")
    a(AD, "err", "tcprobe.dot([0x3f80] * 8, [0x3f80] * 8, 0, datapath='mfma.bf16_1k.bf16.f32.k8', gpu='MI100')")
    a(AD, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, -1, datapath='mfma.f16.f32.k16', gpu='MI300X')")
    a(AD, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 2 ** 32, datapath='mfma.f16.f32.k16', gpu='MI300X')")
    a(AD, "err", "tcprobe.dot([0x10000] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')")
    a(AD, "err", "tcprobe.dot([1.0] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')")
    a(AD, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X', scale_a=[1])")
    a(AD, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X', active=[0, 1])")
    a(AD, "any", f"x = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16'); assert dword(x) == [{W16}]")
    a(AD, "ok", f"x = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X', model='mi250x'); assert dword(x) == [{W16}]")
    a(AD, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X', model='ieee-nope')")
    a(AD, "ok", f"x = tcprobe.dot([0x7c00] + [0x3c00] * 15, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X'); assert dword(x) == [{INF}]")
    a(AD, "ok", "x = tcprobe.dot([0x7c00] + [0x3c00] * 15, [0] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X'); assert dword(x) == [0x7FFFFFFF], [hex(v) for v in dword(x)]")
    a(AD, "ok", "x = tcprobe.dot(np.zeros((0, 16), np.uint16), np.zeros((0, 16), np.uint16), np.zeros(0, np.uint32), datapath='mfma.f16.f32.k16', gpu='MI300X'); assert len(dword(x)) == 0")
    # matmul on AMD: new combinations
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', instr='mfma.f16.f32.k8'); assert words(d) == [{W16}]")
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI100', instr='mfma.f16.f32.k4'); assert words(d) == [{W16}]")
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 16), BF), np.ones((16, 8), BF), gpu='MI250X', instr='mfma.bf16.f32.k8'); assert words(d) == [{W16}]")
    a(AM, "err", "tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', instr='mfma.bf16.f32.k16')")
    a(AM, "err", "tcprobe.matmul(np.ones((8, 16), np.float64), np.ones((16, 8), np.float64), gpu='MI300X', instr='mfma.f64.f64.k4')")
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 16), np.float32), np.ones((16, 8), np.float32), gpu='MI300X', instr='mfma.f32.f32.k1'); assert words(d) == [{W16}]")
    a(AM, "ok", f"d = tcprobe.matmul(np.full((8, 32), 0.5, E5Z), np.full((32, 8), 0.5, E5Z), gpu='MI300X', alpha=0.5); assert words(d) == [{W4}]")
    a(AM, "ok", f"d = tcprobe.matmul(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, E4Z), gpu='MI300X', dtype='bf16'); assert d.dtype == BF and words(d) == [{W8}]")
    a(AM, "err", f"d = tcprobe.matmul(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, E4Z), gpu='MI300X', split_k=2); assert words(d) == [{W8}]")  # one block of K
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 17), np.float16), np.ones((17, 8), np.float16), gpu='MI250X', schedule='stream-k', split_k=2); assert words(d) == [{W17}]")
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 17), np.float16), np.ones((17, 8), np.float16), gpu='MI100', schedule='chain', C=np.ones((8, 8), np.float32)); assert words(d) == [{_w(18.0)}]")
    a(AM, "ok", f"d = tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', model='mi100'); assert words(d) == [{W16}]")
    a(AM, "err", "tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', model=str(ROOT / 'f_plain250.toml'))")
    a(AM, "err", "tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', scale_a=np.ones((8, 1)))")
    a(AM, "err", "tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', bias=np.ones((1, 8), np.float32))")
    a(AM, "err", "tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='MI300X', out=[0] * 64)")
    a(AM, "ok", f"d = tcprobe.matmul(torch.ones(8, 16, dtype=torch.float16), torch.ones(16, 8, dtype=torch.float16), gpu='MI250X'); assert isinstance(d, torch.Tensor) and words(np.asarray(d)) == [{W16}]")
    a(AM, "err", "tcprobe.matmul(torch.ones(8, 16, dtype=torch.float16), np.ones((16, 8), np.float16), gpu='MI300X', out=np.empty((8, 8), np.float32), dtype='f16')")
    # atlas lookups
    for args, exp, chk in (
            ("'H200', 'gemm', 'f16', 64, 64, 512", "ok", "f.provenance == 'measured'"),
            ("'H200', 'gemm', 'tf32', 64, 64, 512", "ok", "f.provenance == 'measured'"),
            ("'H200', 'scaled_mm', 'e4m3', 128, 128, 16384", "ok", "f.provenance == 'measured'"),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, form='bias'", "ok", "f.describe()"),
            ("'H200', 'gemm', 'bf16', 64, 64, 512, form='addmm_beta1'", "ok", "f.describe()"),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, layout='col/row'", "ok", "f.describe()"),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, batch=1", "ok", "f.provenance == 'measured'"),
            ("'h200', 'gemm', 'bf16', 256, 256, 4096", "ok", "f.provenance == 'measured'"),
            ("'H200', 'gemm', 'bf16', 2 ** 31, 256, 4096", "ok", "f.provenance != 'measured'"),
            ("'H200', 'gemm', 'bf16', 256, 256, 1", "ok", "f.provenance != 'measured'"),
            ("'H200', 'gemm', 'bf16', 1, 256, 4096", "ok", "f.provenance == 'default guess'"),
            ("'H200', 'gemm', 'bf16', np.int64(256), 256, 4096", "ok", "f.provenance == 'measured'"),
            ("'MI250X', 'gemm', 'bf16', 256, 256, 4096", "ok", "f.provenance == 'default guess'"),
            ("'MI100', 'gemm', 'f16', 256, 256, 4096", "ok", "f.provenance == 'default guess'"),
            ("'B200', 'gemm', 'bf16', 256, 256, 4096", "ok", "f.provenance == 'default guess'"),
            ("'H200', 'gemm', 'int8', 256, 256, 4096", "any", "f.provenance == 'default guess'"),
            ("'H200', 'gemm', 'bf16', 0, 0, 0", "any", "f.describe()"),
            ("'H200', 'gemm', 'bf16', np.float64(256), 256, 4096", "err", ""),
            ("'H200', 'gemm', 'bf16', None, 256, 4096", "err", ""),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, batch=1.5", "err", ""),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, form=''", "err", ""),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, layout=''", "err", ""),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, layout='row/row/'", "err", ""),
            ("'H200', '', 'bf16', 256, 256, 4096", "err", ""),
            ("'H200', 'gemm', '', 256, 256, 4096", "err", ""),
            ("'V100', 'gemm', 'bf16', 256, 256, 4096", "any", "f.describe()"),
            ("'MI300X', 'scaled_mm', 'e4m3', 64, 64, 512", "any", "f.describe()"),
            ("'MI250X', 'scaled_mm', 'e4m3fnuz', 64, 64, 512", "err", ""),
            ("'H200', 'gemm', 'bf16', 256, 256, 4096, 1", "py", "")):
        a(AT, exp, f"f = atlas.lookup({args}); assert {chk}, (f.provenance, f.describe())" if chk else f"atlas.lookup({args})")
    return out


API = _api()
CLI = cli_cases()
PROC = proc_cases()
