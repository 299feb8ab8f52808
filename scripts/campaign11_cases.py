"""Campaign 11's cases (scripts/campaign11.py runs them; docs/campaign-11.md).
CLI: (class, expected, args, check or None), run in one process through
click's runner; API: (class, expected, code) in a copy of PRELUDE's
namespace; PROC: (class, expected, args, cwd, env, check) as real processes;
SIGINT: (class, delay s, argv) real processes sent Ctrl-C after the delay.
The fixtures are campaign 10's (scripts/campaign10_cli.fixtures) plus
FIXTURES11 below. A case's words come from another spelling of the same
call (the lower-case name, tcprobe.matmul, numpy's integer product), never
from the surface under test alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from campaign10_api import PRELUDE as PRELUDE10
from campaign10_cli import CAP, _json_stdout, _same_d

G = ["--gpu", "H100"]
GEMM = ["gemm", "--a", "a.npy", "--b", "b.npy", *G]
G32 = ["gemm", "--a", "a32.npy", "--b", "b32.npy", *G]  # K = 32: room for two splits
LAD = ["ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0", "--steps", "slice"]
RC = ["run-case", "--device", "sim:h100"]


def fixtures11(root: Path) -> None:
    """The files campaign 11's cases read beyond campaign 10's."""
    import tcprobe
    a, b = np.load(root / "a.npy"), np.load(root / "b.npy")
    rng = np.random.default_rng(11)
    np.save(root / "a32.npy", rng.standard_normal((8, 32)).astype(np.float16))
    np.save(root / "b32.npy", rng.standard_normal((32, 8)).astype(np.float16))
    np.save(root / "d_chain.npy", tcprobe.matmul(a, b, gpu="H100", schedule="chain"))
    np.save(root / "d_f16.npy", tcprobe.matmul(a, b, gpu="H100", dtype="f16"))
    np.save(root / "d_mma.npy", tcprobe.matmul(a, b, gpu="H100", instr="mma"))
    np.save(root / "d_a100.npy", tcprobe.matmul(a, b, gpu="A100"))
    (root / "s_upper.json").write_text('{"preset": "CHAIN"}')
    (root / "s_korder_up.json").write_text('{"k_order": "REVERSE"}')
    (root / "s_kind_up.json").write_text('{"split_kind": "Parallel", "split_k": 2}')
    (root / "s_out_up.json").write_text('{"out": "F16"}')
    (root / "s_key_up.json").write_text('{"SPLIT_K": 2}')
    (root / "s_bool_str.json").write_text('{"fused": "TRUE"}')
    (root / "s_fw.json").write_text('{"k_order": "\uff46orward"}')
    base = ("window_bits = 24\nblock_size = 4\nzero_floor = -133\ninput_conversion = 'truncate'\n"
            "output_rounding = 'rz'\nzero_sign = 'positive'\nnan = 0x7fffffff\n")
    for name, text in TOMLS.items():  # (text, old, new): BASE with old written as new
        text, old, new = (text, "", "") if isinstance(text, str) else text
        text = text.replace("BASE", base)
        (root / f"q_{name}.toml").write_text(text.replace(old, new) if old else text)
    np.save(root / "a_i8k17.npy", np.arange(8 * 17, dtype=np.int64).reshape(8, 17).astype(np.int8))
    np.save(root / "b_i8k17.npy", (np.arange(17 * 8, dtype=np.int64).reshape(17, 8) % 7 - 3).astype(np.int8))
    (root / "model_fit.json").write_text(json.dumps({"params": {"window_bits": 24}}))
    import shutil
    for name, cut in (("cap_cut", 0.5), ("cap_nod", None)):
        dst = root / name
        shutil.copytree(CAP, dst)
        d = next(dst.glob("d_*"))
        if cut is None:
            d.unlink()
        else:
            d.write_bytes(d.read_bytes()[: int(d.stat().st_size * cut)])
    (root / "empty.jsonl").write_text("")
    (root / "bad.jsonl").write_text('{"a": [1, 2\n')


TOMLS = {
    "rz_up": ("BASE", "'rz'", "'RZ'"),
    "up_all": "window_bits = 24\nblock_size = 4\nzero_floor = -133\ninput_conversion = 'TRUNCATE'\n"
              "output_rounding = 'RZ'\nzero_sign = 'Positive'\nnan = 0x7fffffff\n",
    "ovf_up": "BASE\noverflow = 'SATURATE'\n",
    "ct_up": "BASE\ncarry_bits = 3\ncarry_top = 'Saturate'\n",
    "kord_up": "BASE\nk_order = 'NONE'\n",
    "gpu_low": "BASE\ngpu = 'h100'\n",
    "fam_up": "BASE\nfamilies = ['MMA']\n",
    "inter_up": "BASE\ninter_type = 'BF16'\n",
    "key_up": "BASE\nWINDOW_BITS = 25\n",
    "rz_space": ("BASE", "'rz'", "' rz '"),
    "rz_bad": ("BASE", "'rz'", "'r z'"),
    "nan_hexstr": ("BASE", "0x7fffffff", "'0X7FFFFFFF'"),
}


def cli_cases():
    out = []

    def c(cls, exp, *args, check=None):
        out.append((cls, exp, [str(x) for x in args], check))

    N = "names in any case (CLI)"
    for v, ref in (("F32", "d.npy"), ("Float32", "d.npy"), (" f32 ", "d.npy"), ("FLOAT32", "d.npy")):
        c(N, "ok", *GEMM, "--dtype", v, "--out", "o_dt.npy", check=_same_words("o_dt.npy", ref))
    for v in ("F16", "Float16", " f16", "FP16"):
        c(N, "ok", *GEMM, "--dtype", v, "--out", "o_dt16.npy", check=_same_words("o_dt16.npy", "d_f16.npy"))
    for v in ("CHAIN", "Chain", " chain ", "ChAiN"):
        c(N, "ok", *GEMM, "--schedule", v, "--out", "o_ch.npy", check=_same_words("o_ch.npy", "d_chain.npy"))
    for v in ("CUBLAS", "Stream-K", "SPLITK-PARALLEL", "Torch-Addmm-Beta1", "CUTLASS-SPLITK-SERIAL"):
        c(N, "ok", *G32, "--schedule", v)
    c(N, "ok", *GEMM, "--schedule", "s_upper.json", "--out", "o_su.npy", check=_same_words("o_su.npy", "d_chain.npy"))
    c(N, "ok", *GEMM, "--schedule", "s_korder_up.json")
    c(N, "ok", *G32, "--schedule", "s_kind_up.json")
    c(N, "ok", *GEMM, "--schedule", "s_out_up.json", "--out", "o_so.npy", check=_same_words("o_so.npy", "d_f16.npy"))
    c(N, "err", *GEMM, "--schedule", "s_key_up.json")  # keys are exact (docs/names.md)
    c(N, "err", *GEMM, "--schedule", "s_bool_str.json")
    c(N, "err", *GEMM, "--schedule", "s_fw.json")  # a full-width letter is another name
    for v in ("MMA", "Mma", " mma"):
        c(N, "ok", *GEMM, "--instr", v, "--out", "o_in.npy", check=_same_words("o_in.npy", "d_mma.npy"))
    c(N, "ok", *GEMM, "--instr", "MMA.F16.F32.K16", "--out", "o_id.npy", check=_same_words("o_id.npy", "d_mma.npy"))
    c(N, "ok", *GEMM, "--instr", "WGMMA.F16.F32.K16", "--out", "o_wid.npy", check=_same_words("o_wid.npy", "d.npy"))
    for g in ("h100", " H100", "H100 ", "h100\t"):
        c(N, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", g, "--out", "o_g.npy", check=_same_words("o_g.npy", "d.npy"))
    c(N, "ok", *GEMM, "--compare", "a100")
    c(N, "ok", *GEMM, "--compare", "A100", "--compare-instr", "MMA")
    c(N, "ok", *GEMM, "--compare", "a100", "--compare-schedule", "CHAIN")
    c(N, "ok", *GEMM, "--model", "AUTO", "--out", "o_ma.npy", check=_same_words("o_ma.npy", "d.npy"))
    c(N, "ok", *GEMM, "--model", "h100", "--out", "o_mh.npy", check=_same_words("o_mh.npy", "d.npy"))
    for f in ("BF16", "Bf16", "E4M3", "E5M2", "TF32", " f16 "):
        c(N, "ok", "gemm", "--random", "8x8x32", "--format", f, *G)
    c(N, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *G, "--format", "F16", "--out", "o_ff.npy", check=_same_words("o_ff.npy", "d.npy"))
    c(N, "ok", "gemm", "--a", "ba.npy", "--b", "bb.npy", *G, "--a-format", "BF16", "--b-format", "Bf16")
    c(N, "ok", *LAD, "--dtype", "F32")
    c(N, "ok", "ladder", "--format", "BF16", "--device", "SIM:H100", "--validate", "0", "--steps", "SLICE")
    c(N, "ok", "ladder", "--datapath", "MMA.BF16.F32.K16", "--device", "sim:h100", "--validate", "0", "--steps", "slice")
    c(N, "ok", "ladder", "--datapath", "mma.bf16.f32.k16", "--dtype", "F32", "--device", "sim:h100", "--validate", "0", "--steps", "slice")
    c(N, "err", "ladder", "--datapath", "mma.bf16.f32.k16", "--dtype", "F16", "--device", "sim:h100", "--validate", "0", "--steps", "slice")
    c(N, "ok", "ladder", "--datapath", "MMA.BF16.F32.K16", "--instr", "MMA", "--device", "sim:h100", "--validate", "0", "--steps", "slice")
    c(N, "err", "ladder", "--datapath", "MMA.BF16.F32.K16", "--instr", "WGMMA", "--device", "sim:h100", "--validate", "0", "--steps", "slice")
    c(N, "ok", *RC, "--datapath", "MMA.BF16.F32.K16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    c(N, "ok", *RC, "--datapath", " mma.bf16.f32.k16 ", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    c(N, "ok", "validate", "--format", "BF16", "--device", "sim:h100", "--cases", "20", "--suite", "RAW,Edge", "--out", "v_up")
    c(N, "ok", "validate", "--datapath", "WGMMA.BF16.F32.K16", "--device", "sim:h100", "--cases", "20", "--out", "v_up2")
    c(N, "ok", "validate", "--format", "bf16", "--instr", "MMA", "--device", "SIM:h100", "--cases", "20", "--out", "v_up3")
    c(N, "ok", "targets", "--set", "BLOG")
    c(N, "ok", "targets", "--set", " Hmma ")
    c(N, "ok", "targets", "--set", "ALL", "--json", "-", check=_json_stdout)
    c(N, "ok", "gemm-probe", "--gpu", "H100", "--format", "BF16", "--out", "gp_up")
    c(N, "ok", "gemm-probe", "--gpu", "h100", "--format", "Bf16", "--out", "gp_up2")
    c(N, "ok", "batch-invariance", "--gpu", "H100", "--dtype", "BF16", "-n", "64", "-k", "64", "--m", "1:64")
    c(N, "ok", "batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", "64", "-k", "64", "--form", "PLAIN")
    c(N, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--dtype", "F32")
    c(N, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "h100")
    c(N, "ok", "fit-gemm", "--a", "ba.npy", "--b", "bb.npy", "--a-format", "BF16", "--b-format", "BF16",
      "--d", "d.npy", *G)
    c(N, "ok", "devices", "--json", "-", check=_json_stdout)
    c(N, "err", *GEMM, "--dtype", "F 16")
    c(N, "err", *GEMM, "--dtype", "f16x")
    c(N, "err", *GEMM, "--dtype", "\uff46\uff11\uff16")  # full-width f16
    c(N, "err", *GEMM, "--schedule", "CHAIN!")
    c(N, "err", *GEMM, "--schedule", "cha in")
    c(N, "err", *GEMM, "--instr", "MMA.F16.F32")
    c(N, "err", *GEMM, "--instr", "M\u0130A")  # dotted capital I: lower-cases to two letters
    c(N, "err", "targets", "--set", "BLOGS")
    c(N, "err", "gemm", "--random", "8x8x16", "--format", "BF 16", *G)
    c(N, "err", *RC, "--datapath", "MMA.BF16.F32.K17", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    c(N, "err", "batch-invariance", "--gpu", "H100", "--dtype", "BF17", "-n", "64", "-k", "64", "--m", "1:64")
    c(N, "ok", *GEMM, "--scale-format", "UE8M0", "--help")
    c(N, "err", "gemm", "--random", "8x8x64", "--format", "e4m3", "--gpu", "B200", "--scale-format", "UE9M0")

    P = "TOML profiles in any case"
    for name in ("rz_up", "up_all", "ovf_up", "ct_up", "kord_up", "gpu_low", "fam_up", "inter_up", "rz_space"):
        c(P, "ok", *RC[:1], "--device", f"sim:q_{name}.toml", "--model", "H100", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    for name, exp in (("key_up", "err"), ("rz_bad", "err"), ("nan_hexstr", "any")):
        c(P, exp, *RC[:1], "--device", f"sim:q_{name}.toml", "--model", "H100", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    c(P, "ok", "ladder", "--format", "bf16", "--device", "sim:q_up_all.toml", "--validate", "0", "--steps", "slice")
    c(P, "ok", "validate", "--format", "bf16", "--device", "sim:q_rz_up.toml", "--cases", "10", "--out", "v_q")
    c(P, "err", *GEMM, "--model", "q_rz_up.toml")
    c(P, "err", "run-case", "--device", "sim:Q_RZ_UP.TOML", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")

    X = "CLI combinations"
    c(X, "ok", *GEMM, "--c", "c.npy", "--alpha", "2", "--beta", "0", "--out", "o_x1.npy", check=_same_d("o_x1.npy", 2.0))
    c(X, "ok", *GEMM, "--c", "c.npy", "--beta", "1", "--out", "o_x2.npy", check=_same_d("o_x2.npy"))
    c(X, "ok", *G32, "--split-k", "2", "--schedule", "CUTLASS-SPLITK-SERIAL")
    c(X, "err", *GEMM, "--split-k", "2", "--schedule", "CHAIN")
    c(X, "err", *GEMM, "--split-k", "3")  # K = 16 in blocks of 16 cannot split in 3
    c(X, "ok", *G32, "--dtype", "F16", "--schedule", "STREAM-K")
    c(X, "err", *GEMM, "--dtype", "BF16", "--schedule", "chain")  # the chain writes D from the accumulators: no f16 x f16 -> bf16 instruction
    c(X, "err", *GEMM, "--dtype", "S32")
    c(X, "ok", *GEMM, "--dtype", "E4M3")  # the epilogue writes D in e4m3 (OUT_NAMES)
    c(X, "ok", *GEMM, "--compare", "A100", "--picture", "pic_x.png")
    c(X, "err", *GEMM, "--compare", "H100", "--compare-instr", "TCGEN05")
    c(X, "ok", *GEMM, "--compare", "B200", "--compare-instr", "TCGEN05")
    c(X, "err", *GEMM, "--instr", "TCGEN05")
    c(X, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "A100", "--instr", "WGMMA")
    c(X, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "V100", "--dtype", "BF16")  # as on H100: the epilogue converts
    c(X, "ok", "gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", *G, "--dtype", "S32", "--out", "o_i8s.npy",
      check=lambda r, m: None if np.array_equal(np.load("o_i8s.npy"), np.load("a_i8.npy").astype(np.int64)
                                                 @ np.load("b_i8.npy").astype(np.int64)) else "int8 D wrong")
    c(X, "err", "gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", *G, "--dtype", "F32")
    c(X, "ok", "gemm", "--a", "a_i8k17.npy", "--b", "b_i8k17.npy", *G, "--out", "o_k17.npy",
      check=lambda r, m: None if np.array_equal(np.load("o_k17.npy"), np.load("a_i8k17.npy").astype(np.int64)
                                                 @ np.load("b_i8k17.npy").astype(np.int64)) else "int8 K=17 D wrong")
    c(X, "ok", "gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", *G, "--alpha", "2", "--out", "o_i8a.npy",
      check=lambda r, m: None if np.array_equal(np.load("o_i8a.npy"), 2 * (np.load("a_i8.npy").astype(np.int64)
                                                 @ np.load("b_i8.npy").astype(np.int64))) else "int8 alpha D wrong")
    c(X, "err", "gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", *G, "--alpha", "0.5")
    c(X, "ok", *GEMM, "--json", "gx.json", "--out", "o_gx.npy")
    c(X, "err", *GEMM, "--json", "gx2.json", "--out", "gx2.json")
    c(X, "err", *GEMM, "--out", "a.npy", "--json", "gx3.json")
    c(X, "err", *GEMM, "--picture", "pic_no.png")
    c(X, "err", *GEMM, "--verdict-seconds", "0.5")  # documented: needs --compare
    c(X, "err", *GEMM, "--verdict-seconds", "nan")
    c(X, "err", *GEMM, "--verdict-seconds", "-1")
    c(X, "err", *GEMM, "--alpha", "inf")
    c(X, "err", *GEMM, "--alpha", "nan")
    c(X, "ok", *GEMM, "--alpha", "1e-3")
    c(X, "err", *GEMM, "--alpha", "1e400")
    c(X, "err", *GEMM, "--beta", "1")  # beta without C
    c(X, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--bounds", "8,8")
    c(X, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--bounds", "8;12")
    c(X, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--bounds", "NONE")
    c(X, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--alpha", "x")
    c(X, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--c", "c.npy")  # beta 1 with --c (documented)
    c(X, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d_chain.npy", *G, "--json", "fx.json")
    c(X, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", *G, "--json", "a.npy")
    c(X, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "H100", "--d-format", "E2M1")
    c(X, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "0", "--out", "v0")
    c(X, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "-5", "--out", "v0b")
    c(X, "err", "validate", "--format", "bf16", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100", "--out", "v0c")
    c(X, "any", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--suite", "RAW,,EDGE", "--out", "v0d")  # documented: empty names dropped
    c(X, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--suite", "nope", "--out", "v0e")
    c(X, "ok", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model", "AUTO", "--out", "v0f")
    c(X, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model", "q_rz_up.toml", "--out", "v0g")
    c(X, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--shard", "3/2", "--out", "v0h")
    c(X, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--shard", "0/2", "--out", "v0i")
    c(X, "any", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--jobs", "0", "--out", "v0j")  # 0: the default, every core
    c(X, "err", "ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "-1", "--steps", "slice")
    c(X, "err", "ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0", "--steps", "slice,NOPE")
    c(X, "err", "ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0", "--steps", "")
    c(X, "err", "ladder", "--format", "e2m1", "--device", "sim:h100", "--validate", "0", "--steps", "slice")
    c(X, "err", "ladder", "--format", "bf16", "--device", "sim:nope", "--validate", "0", "--steps", "slice")
    c(X, "err", "ladder", "--format", "bf16", "--device", "", "--validate", "0")
    c(X, "ok", *LAD, "--json", "lad.json")
    c(X, "err", *LAD, "--json", "ro_dir")
    c(X, "err", *RC, "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0", "--model", "NOPE")
    c(X, "err", *RC, "--datapath", "mma.bf16.f32.k16", "--a", "xyz", "--b", "0x3f80", "--c", "0")
    c(X, "any", *RC, "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80,", "--b", "0x3f80", "--c", "0")
    c(X, "err", "run-case", "--device", "sim:mi300x", "--datapath", "MMA.BF16.F32.K16", "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    c(X, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "MFMA.F16.F32.K16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0")
    c(X, "ok", "run-case", "--device", "SIM:MI300X", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0")
    c(X, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--instr", "MMA")
    c(X, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "mi300x", "--instr", "MFMA")
    c(X, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "Mi300X")
    c(X, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "gfx942")
    c(X, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--schedule", "STREAM-K", "--instr", "WGMMA")
    c(X, "ok", "targets", "--set", "blog", "--set", "BLOG", check=lambda r, m: None if "92 targets" not in r.output else "the set listed twice")
    c(X, "ok", "targets", "--set", "blog", "--set", "HMMA")
    c(X, "err", "report", "merge", "--out", "m_out")
    c(X, "err", "report", "merge", "nope1", "nope2", "--out", "m_out2")
    c(X, "err", "score", "empty.npy")
    c(X, "err", "replay", "empty.npy", "--device", "sim:h100")
    c(X, "err", "fit", "dir.npy")
    c(X, "err", "smoke", "--device", "sim:NOPE")
    c(X, "err", "warm", "--only", "NOPE")
    c(X, "err", "gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", "a.npy")
    c(X, "err", "gemm-probe", "--gpu", "H999", "--format", "bf16", "--out", "gp_bad")
    c(X, "err", "gemm-probe", "--gpu", "H100", "--format", "E2M1", "--out", "gp_bad2")
    c(X, "err", "batch-invariance", "--gpu", "H100", "--dtype", "bf16", "--m", "0:4", "-n", "64", "-k", "64")
    c(X, "err", "batch-invariance", "--gpu", "H999", "--dtype", "bf16", "-n", "64", "-k", "64", "--m", "1:64")
    c(X, "any", "batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", "64", "-k", "64", "--m", "1:64", "--ref", "99")  # reviewed: a reference outside the range is a question too
    S = "captures, score, replay, fit"
    for m in ("H100", "AUTO", " h100 ", "B200-HMMA", "Fma-Chain"):
        c(S, "ok", "score", "--capture", CAP, "--model", m)
    c(S, "err", "score", "--capture", CAP, "--model", "H100X")
    c(S, "err", "score", "--capture", CAP, "--show", "-1")
    c(S, "ok", "score", "--capture", CAP, "--model", "H100", "--model", "h100")
    c(S, "ok", "score", "--capture", CAP, "--json", "-", check=_json_stdout)
    c(S, "err", "score", "--capture", "cap_nod")
    c(S, "any", "score", "--capture", "cap_cut")
    c(S, "err", "score", "--capture", "empty.jsonl")
    c(S, "err", "score", "--capture", "bad.jsonl")
    c(S, "err", "score", "--capture", "nowhere")
    c(S, "ok", "replay", "--capture", CAP, "--device", "SIM:H200", "--limit", "50")
    c(S, "ok", "replay", "--capture", CAP, "--device", "sim:h200", "--limit", "50", "--instr", "MMA")
    c(S, "err", "replay", "--capture", CAP, "--device", "sim:h100", "--limit", "50", "--instr", "TCGEN05")
    c(S, "err", "replay", "--capture", CAP, "--device", "sim:h200", "--limit", "0")
    c(S, "err", "replay", "--capture", CAP, "--device", "sim:h200", "--limit", "ten")
    c(S, "err", "replay", "--capture", "cap_nod", "--device", "sim:h200")
    c(S, "err", "replay", "--capture", CAP, "--device", "SIM:NOPE")
    c(S, "ok", "fit", "--capture", CAP, "--details", "ALL", "--budget", "5", "--quick")
    c(S, "ok", "fit", "--capture", CAP, "--details", " None ", "--budget", "5", "--quick")
    c(S, "ok", "fit", "--capture", CAP, "--start", "H100", "--budget", "5", "--quick")
    c(S, "ok", "fit", "--capture", CAP, "--start", "h100", "--budget", "5", "--quick")
    c(S, "err", "fit", "--capture", CAP, "--start", "NOPE", "--budget", "5", "--quick")
    c(S, "err", "fit", "--capture", CAP, "--only", "no-such-label", "--budget", "5", "--quick")
    c(S, "err", "fit", "--capture", CAP, "--budget", "0")
    c(S, "err", "fit", "--capture", "empty.jsonl")
    c(S, "err", "validate", "--targets", "hmma", "--device", "sim:h100", "--suite", "raw", "--preset", "WRITE-UP", "--out", "v_pre")
    c(S, "err", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--preset", "WRITEUP", "--out", "v_pre2")
    c(S, "ok", "validate", "--targets", "HMMA", "--device", "SIM:H100", "--suite", "RAW", "--cases", "5", "--out", "v_tb")
    D = "names given twice, AMD on the command line"
    c(D, "ok", "score", "--capture", CAP, "--model", "auto", "--model", "AUTO",
      check=lambda r, m: None if "1 scores" in r.output else "a model named twice scored twice")
    c(D, "ok", "score", "--capture", CAP, "--model", "h100", "--model", "ieee", "--model", " H100",
      check=lambda r, m: None if "2 scores" in r.output else "a model named twice scored twice")
    c(D, "ok", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model", "H100",
      "--model", "h100", "--out", "v_dupm", check=_models_in("v_dupm/report.json", 1))
    c(D, "ok", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model", "ieee",
      "--model", "IEEE", "--model", "h100", "--out", "v_dupm2", check=_models_in("v_dupm2/report.json", 2))
    c(D, "ok", "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--suite", "raw,RAW", "--out", "v_dups")
    c(D, "ok", "run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a", "0x3f80", "--b", "0x3f80",
      "--c", "0", "--model", "H100", "--model", "h100", check=lambda r, m: None if r.output.count("same word") == 1 else "a model named twice run twice")
    c(D, "ok", "ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0", "--steps", "Slice,SLICE")
    c(D, "ok", "ladder", "--format", "F16", "--device", "SIM:MI300X", "--validate", "0", "--steps", "slice", "--instr", "MFMA")
    c(D, "ok", "ladder", "--datapath", "MFMA.F16.F32.K16", "--device", "sim:mi300x", "--validate", "0", "--steps", "slice", "--json", "-", check=_json_stdout)
    c(D, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--dtype", "BF16")
    c(D, "ok", "gemm", "--a", "a32.npy", "--b", "b32.npy", "--gpu", "mi300x", "--schedule", "STREAM-K")
    c(D, "ok", "gemm-probe", "--gpu", "MI300X", "--format", "BF16", "--out", "gp_mi")
    c(D, "ok", "validate", "--datapath", "MFMA.F16.F32.K16", "--device", "SIM:MI300X", "--cases", "20", "--out", "v_mi")
    c(D, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "MFMA.F16.F32.K16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0", "--model", "MI300X")
    c(D, "err", "run-case", "--device", "sim:mi300x", "--datapath", "MFMA.F16.F32.K16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0", "--model", "H100")
    c(D, "err", "batch-invariance", "--gpu", "h200", "--dtype", "TF32", "-n", "64", "-k", "64", "--m", "1:8", "--form", "SCALED_MM")
    c(D, "ok", "batch-invariance", "--gpu", "H200", "--dtype", "E4M3", "-n", "64", "-k", "64", "--m", "1:8", "--form", "Scaled_MM")
    c(D, "err", "gemm", "--random", "8x8x32", "--format", "E4M3", "--gpu", "H100", "--scale-format", "UE8M0")
    c(X, "ok", "--version")
    c(X, "err", "nosuchcommand")
    c(X, "err", "GEMM", "--help")
    return out


def _models_in(report, n):
    def check(r, made):
        got = len(json.loads(Path(report).read_text())["models"])
        return None if got == n else f"{report} scores {got} models, not {n}"
    return check


def _same_words(name, ref):
    def check(r, made):
        got, want = np.load(name), np.load(ref)
        if got.dtype != want.dtype or got.tobytes() != want.tobytes():
            return f"{name} differs from {ref}"
        return None
    return check


PRELUDE = PRELUDE10 + r'''
import os, subprocess, multiprocessing as mp, concurrent.futures as cf, sys
a8 = rng.integers(-128, 128, (32, 32)).astype(np.int8)
b8 = rng.integers(-128, 128, (32, 8)).astype(np.int8)
def I8(m, k, n):
    x = torch.from_numpy(rng.integers(-128, 128, (m, k)).astype(np.int8))
    y = torch.from_numpy(rng.integers(-128, 128, (k, n)).astype(np.int8))
    return x, y
def exact_int(d, x, y):
    assert torch.equal(d, (x.long() @ y.long()).int()), "int D wrong"
def _mp_child(_):
    return (A @ B).float().sum().item()
D_CHAIN = M(schedule="chain")
a32 = rng.standard_normal((8, 32)).astype(np.float16)
b32 = rng.standard_normal((32, 8)).astype(np.float16)
def M2(**kw):
    return M(a32, b32, **kw)
A2 = T(8, 32); B2 = T(32, 8)
D_F16 = M(dtype="f16")
'''

NA = "names in any case (API)"
SA = "schedule values in any case (API)"
EP = "emulate processes"
IM = "emulate _int_mm"
EA = "emulate names and combinations"
AA = "API AMD and dot"
FA = "API fit_gemm and misc"

API = [
    (NA, "ok", "same(M(dtype='F16'), D_F16)"),
    (NA, "ok", "same(M(dtype='Float16'), D_F16)"),
    (NA, "ok", "same(M(dtype=' float16 '), D_F16)"),
    (NA, "ok", "same(M(dtype='FLOAT32'), D0)"),
    (NA, "ok", "same(M(dtype='F32'), D0)"),
    (NA, "ok", "d = M(dtype='BF16'); assert d.dtype == ml_dtypes.bfloat16 or str(d.dtype) == 'bfloat16'"),
    (NA, "ok", "d = M(dtype='BFloat16'); assert str(d.dtype) == 'bfloat16'"),
    (NA, "err", "M(dtype='F 16')"),
    (NA, "err", "M(dtype='f16 f16')"),
    (NA, "err", "M(dtype='\uff46\uff11\uff16')"),
    (NA, "err", "M(dtype='S32')"),
    (NA, "ok", "same(M(schedule='CHAIN'), D_CHAIN)"),
    (NA, "ok", "same(M(schedule='Chain'), D_CHAIN)"),
    (NA, "ok", "same(M(schedule='  chain\\t'), D_CHAIN)"),
    (NA, "ok", "same(M(schedule={'preset': 'CHAIN'}), D_CHAIN)"),
    (NA, "ok", "same(M(schedule='CUBLAS'), M(schedule='cublas'))"),
    (NA, "ok", "same(M2(schedule='STREAM-K'), M2(schedule='stream-k'))"),
    (NA, "ok", "same(M2(schedule='Splitk-Parallel'), M2(schedule='splitk-parallel'))"),
    (NA, "ok", "same(M2(schedule='CUTLASS-SPLITK-SERIAL'), M2(schedule='cutlass-splitk-serial'))"),
    (NA, "err", "M(schedule='CHAIN2')"),
    (NA, "err", "M(schedule='ch ain')"),
    (NA, "err", "M(schedule='')"),
    (NA, "err", "M(schedule='   ')"),
    (NA, "ok", "same(M(instr='MMA'), M(instr='mma'))"),
    (NA, "ok", "same(M(instr='WGMMA.F16.F32.K16'), D0)"),
    (NA, "ok", "same(M(instr=' wgmma.f16.f32.k16 '), D0)"),
    (NA, "ok", "same(M(instr='MMA.F16.F32.K16'), M(instr='mma.f16.f32.k16'))"),
    (NA, "err", "M(instr='MMA.F16.F32.K17')"),
    (NA, "err", "M(instr='TCGEN05')"),
    (NA, "ok", "same(M(gpu='h100'), D0)"),
    (NA, "ok", "same(M(gpu=' H100 '), D0)"),
    (NA, "ok", "same(M(model='AUTO'), D0)"),
    (NA, "ok", "same(M(model='H100'), D0)"),
    (NA, "ok", "same(M(backend='CPU'), D0)"),
    (NA, "ok", "same(M(backend=' cpu '), D0)"),
    (NA, "err", "M(backend='AUTO')"),
    (NA, "err", "M(backend='gpu')"),
    (NA, "err", "M(backend='')"),
    (NA, "ok", "d = M(torch.from_numpy(a16), torch.from_numpy(b16), dtype=torch.float16); same(d.numpy(), D_F16)"),
    (NA, "ok", "same(M(dtype=np.float16), D_F16)"),
    (NA, "ok", "same(M(dtype=np.dtype('float16')), D_F16)"),
    (NA, "err", "M(dtype=np.float64)"),
    (NA, "err", "M(dtype='float64')"),
    (NA, "err", "M(dtype=b'f16')"),
    (NA, "err", "M(schedule=b'chain')"),
    (NA, "err", "M(instr=b'mma')"),
    (NA, "err", "M(gpu=b'H100')"),
    (NA, "err", "M(backend=b'cpu')"),
    (NA, "ok", "try:\n    tcprobe.gemm(a16, b16, gpu='H100')\nexcept AttributeError as e:\n    assert 'tcprobe.matmul' in str(e), str(e)"),
    (SA, "ok", "same(M(schedule={'k_order': 'REVERSE'}), M(schedule={'k_order': 'reverse'}))"),
    (SA, "ok", "same(M(schedule={'k_order': ' Forward '}), D0)"),
    (SA, "ok", "same(M2(schedule={'split_kind': 'PARALLEL', 'split_k': 2}), M2(schedule={'split_kind': 'parallel', 'split_k': 2}))"),
    (SA, "ok", "same(M2(schedule={'split_rule': 'CEIL', 'split_k': 2}), M2(schedule={'split_rule': 'ceil', 'split_k': 2}))"),
    (SA, "err", "M(schedule={'operand_round': 'RNA'})"),  # f16 operands have no tf32 rounding step
    (SA, "ok", "same(M2(schedule={'partials': 'OUTPUT', 'split_k': 2}, dtype='f16'), M2(schedule={'partials': 'output', 'split_k': 2}, dtype='f16'))"),
    (SA, "ok", "same(M(c=c32, schedule={'c': 'OUTPUT'}, beta=1), M(c=c32, schedule={'c': 'output'}, beta=1))"),
    (SA, "ok", "same(M(c=c32, schedule={'fma_on': 'C', 'fused': True}, beta=3, alpha=0.5), M(c=c32, schedule={'fma_on': 'c', 'fused': True}, beta=3, alpha=0.5))"),
    (SA, "ok", "same(M(schedule={'out': 'F16'}), D_F16)"),
    (SA, "ok", "same(M(schedule={'acc': 'F32'}), D0)"),
    (SA, "ok", "same(M2(schedule={'reduction': 'TREE', 'split_k': 2, 'split_kind': 'parallel'}), M2(schedule={'reduction': 'tree', 'split_k': 2, 'split_kind': 'parallel'}))"),
    (SA, "ok", "same(M(schedule={'kernel': 'FMA', 'lanes': 2, 'lane_order': 'BLOCKED'}), M(schedule={'kernel': 'fma', 'lanes': 2, 'lane_order': 'blocked'}))"),
    (SA, "ok", "same(M(schedule={'raster': 'ALONG_M'}), D0)"),
    (SA, "ok", "same(M(schedule={'k_tail': 'PAD'}), D0)"),
    (SA, "ok", "same(M(schedule={'preset': 'Chain'}), D_CHAIN)"),
    (SA, "err", "M(schedule={'K_ORDER': 'reverse'})"),
    (SA, "err", "M(schedule={'k_order': 'backward'})"),
    (SA, "err", "M(schedule={'k_order': 1})"),
    (SA, "err", "M(schedule={'fused': 'TRUE'})"),
    (SA, "err", "M(schedule={'fused': 1})"),
    (SA, "err", "M(schedule={'split_kind': 'Parallel '.upper() + 'x'})"),
    (SA, "err", "M(schedule={'c': 'ACCUMULATOR', 'k_order': 'REVERSE'})"),
    (SA, "ok", "from tcprobe.matrix.schedule import from_value; s = from_value({'k_order': 'REVERSE'}); assert s.k_order == 'reverse'"),
    (SA, "ok", "from tcprobe.matrix.schedule import from_value; s = from_value('CHAIN'); assert s == from_value('chain')"),
    (SA, "ok", "from tcprobe.matrix.schedule import Schedule; s = Schedule(k_order='Reverse'); assert s.k_order == 'reverse'"),
    (SA, "ok", "from tcprobe.matrix.schedule import Schedule; s = Schedule(split_kind='SERIAL'); assert s == Schedule()"),
    (SA, "ok", "p = ROOT / 's_korder_up.json'; same(M(schedule=str(p)), M(schedule={'k_order': 'reverse'}))"),
    (SA, "ok", "p = ROOT / 's_upper.json'; same(M(schedule=p), D_CHAIN)"),
    # ---- emulate: processes
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    subprocess.run([sys.executable, '-c', 'pass'], check=True)\nassert rep.processes == 1, rep.processes"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    with mp.get_context('spawn').Pool(1) as p:\n        p.map(abs, [1])\nassert rep.processes >= 1, rep.processes"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    with mp.get_context('fork').Pool(2) as p:\n        p.map(abs, [1, 2])\nassert rep.processes == 2, rep.processes"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context('spawn')) as ex:\n        list(ex.map(abs, [1]))\nassert rep.processes >= 1, rep.processes"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\nassert rep.processes == 1, rep.processes"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    A @ B\nassert rep.processes == 0 and rep.threads == 0"),
    (EP, "ok", "rep = Report()\nsubprocess.run([sys.executable, '-c', 'pass'])\nwith emulate('H100', report=rep):\n    A @ B\nsubprocess.run([sys.executable, '-c', 'pass'])\nassert rep.processes == 0"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    with emulate('H100', report=rep):\n        subprocess.run([sys.executable, '-c', 'pass'])\nassert rep.processes == 1, rep.processes"),
    (EP, "ok", "r1, r2 = Report(), Report()\nwith emulate('H100', report=r1):\n    with emulate('A100', report=r2):\n        subprocess.run([sys.executable, '-c', 'pass'])\nassert (r1.processes, r2.processes) == (1, 1)"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    t = threading.Thread(target=lambda: subprocess.run([sys.executable, '-c', 'pass'])); t.start(); t.join()\nassert rep.threads == 1 and rep.processes == 0"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    try:\n        subprocess.run(['/nonexistent/binary'])\n    except OSError:\n        pass\nassert rep.processes == 1"),
    (EP, "ok", "assert 'processes' in Report.__dataclass_fields__ and Report().processes == 0"),
    (EP, "ok", "from torch.utils.data import DataLoader, TensorDataset\nrep = Report()\nwith emulate('H100', report=rep):\n    for (x,) in DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=2):\n        pass\nassert rep.processes == 2, rep.processes"),
    (EP, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    os.system('true')\nassert rep.processes == 1, rep.processes"),
    # ---- emulate: _int_mm
    (IM, "err", "x, y = I8(32, 17, 8)\nwith emulate('H100'):\n    torch._int_mm(x, y)"),
    (IM, "err", "x, y = I8(32, 20, 8)\nwith emulate('H100'):\n    torch._int_mm(x, y)"),
    (IM, "err", "x, y = I8(32, 32, 9)\nwith emulate('H100'):\n    torch._int_mm(x, y)"),
    (IM, "err", "x, y = I8(16, 32, 8)\nwith emulate('H100'):\n    torch._int_mm(x, y)"),
    (IM, "err", "x, y = I8(1, 32, 8)\nwith emulate('H100'):\n    torch._int_mm(x, y)"),
    (IM, "ok", "x, y = I8(17, 32, 8)\nwith emulate('H100'):\n    d = torch._int_mm(x, y)\nexact_int(d, x, y)"),
    (IM, "ok", "x, y = I8(32, 8, 16)\nwith emulate('H100'):\n    d = torch._int_mm(x, y)\nexact_int(d, x, y)"),
    (IM, "ok", "x, y = I8(64, 24, 8)\nwith emulate('A100'):\n    d = torch._int_mm(x, y)\nexact_int(d, x, y)"),
    (IM, "err", "x, y = I8(32, 17, 8)\nwith emulate('A100'):\n    torch._int_mm(x, y)"),
    (IM, "err", "x, y = I8(32, 17, 8)\nwith emulate('H100', strict=False):\n    torch._int_mm(x, y)"),
    (IM, "err", "x, y = I8(32, 17, 8)\no = torch.empty(32, 8, dtype=torch.int32)\nwith emulate('H100'):\n    torch._int_mm(x, y, out=o)"),
    (IM, "ok", "x, y = I8(32, 16, 8)\no = torch.empty(32, 8, dtype=torch.int32)\nwith emulate('H100'):\n    torch._int_mm(x, y, out=o)\nexact_int(o, x, y)"),
    (IM, "ok", "x, y = I8(32, 16, 8)\nwith emulate('H100'):\n    d = torch._int_mm(x, y.t().contiguous().t())\nexact_int(d, x, y)"),
    (IM, "torch", "x, y = I8(32, 16, 8)\nwith emulate('H100'):\n    torch._int_mm(x.float(), y.float())"),
    (IM, "torch", "x, y = I8(32, 16, 8)\nwith emulate('H100'):\n    torch._int_mm(x, y[:8])"),
    (IM, "ok", "x, y = I8(32, 17, 8)\nd = torch._int_mm(x, y)\nexact_int(d, x, y)"),
    (IM, "ok", "x, y = I8(32, 16, 8)\nrep = Report()\nwith emulate('H100', report=rep):\n    torch._int_mm(x, y)\nassert rep.ops['_int_mm'].routed == 1"),
    (IM, "ok", "d = M(a8[:, :17].copy(), b8[:17].copy()); assert np.array_equal(d, a8[:, :17].astype(np.int64) @ b8[:17].astype(np.int64))"),
    # ---- emulate names and combinations
    (EA, "ok", "d, _ = E(lambda: A @ B, schedule='CHAIN'); e, _ = E(lambda: A @ B, schedule='chain'); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, instr='WGMMA'); e, _ = E(lambda: A @ B, instr='wgmma'); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, gpu='h100'); e, _ = E(lambda: A @ B); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, model='AUTO'); e, _ = E(lambda: A @ B); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, backend='CPU'); e, _ = E(lambda: A @ B); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, strict='ROUTES'); e, _ = E(lambda: A @ B); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, strict=' routes '); e, _ = E(lambda: A @ B); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, schedule={'k_order': 'REVERSE'}); e, _ = E(lambda: A @ B, schedule={'k_order': 'reverse'}); tsame(d, e)"),
    (EA, "ok", "d, _ = E(lambda: A2 @ B2, schedule={'split_k': 2, 'split_kind': 'SERIAL'}); e, _ = E(lambda: A2 @ B2, schedule={'split_k': 2}); tsame(d, e)"),
    (EA, "err", "E(lambda: A @ B, strict='YES')"),
    (EA, "err", "E(lambda: A @ B, strict='route')"),
    (EA, "err", "E(lambda: A @ B, backend='AUTO')"),
    (EA, "err", "E(lambda: A @ B, schedule='CHAIN2')"),
    (EA, "err", "E(lambda: A @ B, instr='TCGEN05')"),
    (EA, "err", "E(lambda: A @ B, gpu='H999')"),
    (EA, "err", "E(lambda: A @ B, gpu=b'H100')"),
    (EA, "err", "E(lambda: A @ B, instr=b'mma')"),
    (EA, "err", "E(lambda: A @ B, schedule=b'chain')"),
    (EA, "ok", "d, _ = E(lambda: torch.mm(A, B, out_dtype=torch.float32) if False else A @ B, gpu='MI300X'); assert d.shape == (8, 8)"),
    (EA, "ok", "d, _ = E(lambda: A @ B, gpu='mi300x', instr='MFMA'); e, _ = E(lambda: A @ B, gpu='MI300X', instr='mfma'); tsame(d, e)"),
    (EA, "err", "E(lambda: A @ B, gpu='MI300X', instr='WGMMA')"),
    (EA, "ok", "d, rep = E(lambda: F.linear(A, B.t(), C[0]), schedule='CUBLAS'); e, _ = E(lambda: F.linear(A, B.t(), C[0])); tsame(d, e)"),
    (EA, "ok", "x = A.float(); y = B.float(); d, _ = E(lambda: x @ y, schedule='CUBLAS-TF32'); e, _ = E(lambda: x @ y, schedule='cublas-tf32'); tsame(d, e)"),
    (EA, "ok", "d, rep = E(lambda: torch.bmm(A2[None], B2[None]), schedule='STREAM-K'); assert d.shape == (1, 8, 8)"),
    (EA, "ok", "rep = Report(compare=True, record=True)\nwith emulate('H100', report=rep, schedule='Chain'):\n    A @ B\nassert rep.routed == 1 and len(rep.records) == 1"),
    (EA, "ok", "d, rep = E(lambda: A.float() @ B.float()); assert rep.routed in (0, 1)"),
    (EA, "ok", "d, rep = E(lambda: torch.addmm(C, A, B, beta=0.5, alpha=2)); e = tcprobe.matmul(A, B, C, gpu='H100', alpha=2, beta=0.5, dtype='bf16') if False else d; assert d.shape == (8, 8)"),
    # ---- AMD and dot
    (AA, "ok", "x = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='MFMA.F16.F32.K16', gpu='MI300X'); y = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X'); assert int(np.asarray(x).ravel()[0]) == int(np.asarray(y).ravel()[0]) == 0x41800000"),
    (AA, "ok", "x = tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath='MMA.BF16.F32.K16', gpu='h100'); assert int(np.asarray(x).ravel()[0]) == 0x41800000"),
    (AA, "ok", "x = tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath=' mma.bf16.f32.k16 ', gpu='H100'); assert int(np.asarray(x).ravel()[0]) == 0x41800000"),
    (AA, "err", "tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath='MMA.BF16.F32', gpu='H100')"),
    (AA, "err", "tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath='MMA.BF16.F32.K16', gpu='MI300X')"),
    (AA, "err", "tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath='mma.bf16.f32.k16 x', gpu='H100')"),
    (AA, "err", "tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath=b'mma.bf16.f32.k16', gpu='H100')"),
    (AA, "err", "tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 0, datapath='', gpu='H100')"),
    (AA, "ok", "same(tcprobe.matmul(a16, b16, gpu='mi300x'), tcprobe.matmul(a16, b16, gpu='MI300X'))"),
    (AA, "ok", "same(tcprobe.matmul(a16, b16, gpu='MI300X', instr='MFMA'), tcprobe.matmul(a16, b16, gpu='MI300X', instr='mfma'))"),
    (AA, "ok", "same(tcprobe.matmul(a16, b16, gpu='MI300X', instr='MFMA.F16.F32.K16'), tcprobe.matmul(a16, b16, gpu='MI300X', instr='mfma.f16.f32.k16'))"),
    (AA, "err", "tcprobe.matmul(a16, b16, gpu='MI300X', instr='MMA')"),
    (AA, "err", "tcprobe.matmul(a16, b16, gpu='MI300X', schedule={'instr': 'wgmma'})"),
    (AA, "err", "tcprobe.matmul(a16, b16, gpu='MI100', dtype='BF16', instr='MFMA.XF32.F32.K8')"),
    (AA, "ok", "d = tcprobe.matmul(a16, b16, gpu='mi250x'); assert d.shape == (8, 8)"),
    (AA, "err", "tcprobe.matmul(a16, b16, gpu='GFX942')"),
    # ---- fit_gemm and misc
    (FA, "ok", "aw, bw = a16.view(np.uint16), b16.view(np.uint16); f = fit_gemm.fit(aw, 'F16', bw, 'F16', None, None, D0.view(np.uint32), 'F32', gpu='h100'); assert f is not None"),
    (FA, "err", "aw, bw = a16.view(np.uint16), b16.view(np.uint16); fit_gemm.fit(aw, 'F 16', bw, 'f16', None, None, D0.view(np.uint32), 'f32', gpu='H100')"),
    (FA, "ok", "FIT(gpu=' H100 ')"),
    (FA, "err", "FIT(gpu='H999')"),
    (FA, "any", "FIT(bounds=(8, 8))"),  # documented: sorted, each once
    (FA, "err", "FIT(bounds=(0,))"),
    (FA, "err", "FIT(alpha='2')"),
    (FA, "err", "FIT(jobs=0)"),
    (FA, "ok", "from tcprobe.names import fold, match; assert fold(' F16 ') == 'f16' and match('CHAIN', ('chain',)) == 'chain' and match('x', ('chain',)) is None"),
    (FA, "err", "tcprobe.matmul(a16, b16, gpu='H100', split_k=2, schedule='CHAIN')"),
    (FA, "ok", "same(tcprobe.matmul(a16, b16, gpu='H100', split_k=1, schedule='CHAIN'), D_CHAIN)"),
    (FA, "err", "tcprobe.matmul(a16, b16, gpu='H100', instr='MMA', schedule={'instr': 'WGMMA'})"),
    (FA, "ok", "same(tcprobe.matmul(a16, b16, gpu='H100', instr='WGMMA', schedule={'instr': 'wgmma'}), D0)"),
    (FA, "ok", "from tcprobe.models.datapath import Datapath; assert Datapath.parse('MMA.BF16.F32.K16').id == 'mma.bf16.f32.k16'"),
    (FA, "err", "from tcprobe.models.datapath import Datapath; Datapath.parse('MMA.BF16')"),
]


def sigint_cases(py: str, entry: str):
    """Ctrl-C once the package's own code runs (0.3 s on: its imports and
    the command's own work), through ``python -m tcprobe`` and the script."""
    out = []
    for delay in (0.3, 0.5, 0.8, 1.2, 2.0, 3.0):
        out.append(("Ctrl-C", delay, [py, "-m", "tcprobe", "gemm", "--random", "256x256x256", "--format", "bf16", "--gpu", "H100"]))
        out.append(("Ctrl-C", delay, [entry, "validate", "--format", "bf16", "--device", "sim:h100", "--cases", "200000", "--out", f"sig_v{delay}"]))
    for delay in (0.3, 0.6, 1.0):
        out.append(("Ctrl-C", delay, [entry, "ladder", "--format", "bf16", "--device", "sim:h100"]))
        out.append(("Ctrl-C", delay, [py, "-m", "tcprobe", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "H100"]))
    return out


CLI = cli_cases()
