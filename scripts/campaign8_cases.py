"""Campaign 8's in-process cases (scripts/campaign8.py runs them): CLI option
combinations, odd numbers and strings, new kinds of file, TOML profiles, and
the Python API. Each CLI case: (class, expected, args, check or None); each
API case: (class, expected, code)."""

from __future__ import annotations

import numpy as np

G = ["--gpu", "H100"]
AB = ["--a", "a.npy", "--b", "b.npy"]
GEMM = ["gemm", "--a", "a64.npy", "--b", "b64.npy", *G]
FIT = ["fit-gemm", *AB, "--d", "d.npy", *G]
RC = ["run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16"]
VAL = ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "200"]
LAD = ["ladder", "--format", "bf16", "--device", "sim:h100", "--validate", "0", "--steps", "slice"]
BI = ["batch-invariance", "--gpu", "H100", "--dtype", "bf16", "-n", "64", "-k", "64"]
N = [0]


def _n():
    N[0] += 1
    return N[0]


def _wrote(name):
    def check(r, made):
        return None if name in made else f"{name} not written"
    return check


def cli_cases():
    out = []

    def c(cls, exp, *args, check=None):
        out.append((cls, exp, [str(a) for a in args], check))

    # --- option combinations: one option that makes another meaningless
    for extra, exp in [
        (["--random", "8x8x16", "--format", "bf16"], "err"),          # --random beside --a/--b
        (["--beta", "2"], "err"),                                     # beta with no C
        (["--exact"], "any"),                                         # exact without compare
        (["--verdict-seconds", "3"], "err"),                          # without --compare
        (["--compare-instr", "mma"], "err"),
        (["--compare-schedule", "chain"], "err"),
        (["--compare-model", "h100"], "err"),
        (["--picture", f"p{_n()}.png"], "err"),
        (["--scale-format", "ue8m0"], "err"),                          # scales without scale files
        (["--a-format", "bf16"], "err"),                               # f16 file named bf16
        (["--format", "e4m3"], "err"),                                 # typed f16 files
        (["--dtype", "f16", "--out-type", "f32"], "err"),
        (["--dtype", "f16", "--c", "c.npy"], "err"),                  # dtype vs C's type
        (["--split-k", "2", "--schedule", "chain"], "any"),
        (["--split-k", "3", "--schedule", "stream-k"], "any"),
        (["--instr", "mma", "--schedule", "deepgemm-fp8"], "err"),
        (["--instr", "tcgen05"], "err"),                               # H100 has no tcgen05
        (["--instr", "mma.bf16.f32.k16"], "err"),                      # datapath vs f16 files
        (["--instr", "mfma.f16.f32.k16"], "err"),
        (["--compare", "H100"], "any"),                                # compare with itself
        (["--compare", "MI300X"], "any"),
        (["--compare", "A100", "--compare-instr", "wgmma"], "err"),    # A100 has no wgmma
        (["--compare", "A100", "--verdict-seconds", "0", "--exact"], "ok"),
        (["--model", "a100"], "any"),                                  # another GPU's profile
        (["--alpha", "-0"], "ok"), (["--alpha", "-0.0"], "ok"),
        (["--c", "c.npy", "--beta", "-0"], "ok"),
        (["--alpha", "1e-45"], "ok"), (["--alpha", "1e-46"], "err"),
        (["--alpha", "3.4028235e38"], "ok"), (["--alpha", "3.5e38"], "err"),
        (["--alpha", "Infinity"], "any"), (["--alpha", "-nan"], "any"), (["--alpha", "NaN"], "any"),
        (["--alpha", "1."], "ok"), (["--alpha", ".5"], "ok"), (["--alpha", "1,5"], "err"),
        (["--alpha", "\u0661"], "any"), (["--alpha", "0x1p3"], "err"), (["--alpha", "1/2"], "err"),
        (["--alpha", "2", "--alpha", "3"], "err"), (["--alpha=2", "--alpha", "2"], "err"),
        (["--split-k", "00"], "err"), (["--split-k", "-0"], "err"), (["--split-k", "\uff12"], "any"),
        (["--split-k", "17"], "any"), (["--split-k", "16"], "ok"), (["--split-k", "9" * 40], "err"),
        (["--out", "-", "--compare", "A100"], "any"),
        (["--json", "-", "--compare", "A100", "--verdict-seconds", "0"], "ok"),
        (["--out", "o.npy", "--json", "o.npy"], "err"),
        (["--out", "b64.npy"], "err"),
        (["--json", "a64.npy"], "err"),
        (["--schedule", "CUBLAS"], "any"), (["--schedule", " cublas"], "any"),
        (["--schedule", "auto", "--split-k", "2"], "err"),
        (["--schedule", "chain,cublas"], "err"),
        (["--schedule", "sched_neg0.json"], "err"), (["--schedule", "sched_float.json"], "any"),
        (["--schedule", "sched_huge.json"], "err"), (["--schedule", "sched_uni.json"], "err"),
        (["--schedule", "sched_null.json"], "err"), (["--schedule", "sched_arr.json"], "err"),
        (["--schedule", "sched_nested.json"], "err"), (["--schedule", "sched_trailing.json"], "err"),
        (["--schedule", "sched_comment.json"], "err"), (["--schedule", "sched_nul.json"], "err"),
        (["--schedule", "sched_utf32.json"], "err"), (["--schedule", "sched_latin1.json"], "err"),
        (["--schedule", "crlf.json"], "ok"), (["--schedule", "loop.npy"], "err"),
        (["--schedule", "proc.npy"], "err"), (["--schedule", "rootlink.npy"], "err"),
        (["--model", "loop.npy"], "err"), (["--model", "crlf.json"], "err"),
    ]:
        c("option combinations", exp, *GEMM, *extra)
    for extra, exp in [
        (["--c-format", "f32"], "err"), (["--bias-format", "f32"], "err"),
        (["--bias", "bias.npy", "--bias-format", "nope"], "err"),
        (["--splits", "splits.npy", "--bounds", "8"], "err"),
        (["--bounds", "8,8"], "any"), (["--bounds", "16"], "err"), (["--bounds", "-8"], "err"),
        (["--bounds", "0"], "any"), (["--bounds", "NONE"], "any"), (["--bounds", "none,8"], "err"),
        (["--bounds", "8.0"], "err"), (["--bounds", "\u0668"], "any"), (["--bounds", "8,,4"], "err"),
        (["--splits", "splits_neg.npy"], "err"), (["--splits", "splits_f.npy"], "err"),
        (["--splits", "splits_nan.npy"], "err"), (["--splits", "loop.npy"], "err"),
        (["--d-format", "f16"], "err"), (["--dtype", "bf16"], "err"),
        (["--dtype", "f32", "--d-format", "f32"], "err"),
        (["--alpha", "-0"], "ok"), (["--beta", "2"], "err"),
        (["--alpha", "1e-46"], "err"), (["--alpha", "2", "--alpha", "2"], "err"),
        (["--json", "d.npy"], "err"), (["--json", "-"], "ok"),
        (["--a-format", "bf16"], "err"), (["--format", "f16", "--a-format", "bf16"], "err"),
    ]:
        c("option combinations", exp, *FIT, *extra)
    c("option combinations", "err", "fit-gemm", *AB, "--d", "d16.npy", *G, "--d-format", "f32")
    c("option combinations", "err", "fit-gemm", "--a", "ba.npy", "--b", "b.npy", "--d", "d.npy", *G)
    for extra, exp in [
        (["--resume"], "err"), (["--shard", "1/2", "--targets", "blog"], "any"),
        (["--preset", "write-up"], "err"), (["--sparse-lanes", "0,1"], "err"),
        (["--chunk", "0"], "err"), (["--jobs", "0"], "err"), (["--jobs", "-0"], "err"),
        (["--jobs", "9999"], "any"), (["--chunk", "1"], "any"),
        (["--datapath", "mma.bf16.f32.k16"], "any"), (["--datapath", "mma.f16.f32.k16"], "err"),
        (["--instr", "wgmma", "--datapath", "mma.bf16.f32.k16"], "err"),
        (["--suite", "nosuch"], "err"), (["--suite", ""], "err"),
        (["--model", "h100", "--model", "h100"], "any"), (["--model", "nope"], "err"),
        (["--seed", "-0"], "any"), (["--seed", "00"], "any"),
        (["--shrink", "1001"], "err"), (["--shard", "2/1"], "err"), (["--shard", "1/1/"], "err"),
        (["--shard", "\uff11/\uff12"], "any"), (["--shard", "1\u22152"], "err"),
    ]:
        c("option combinations", exp, *VAL, *extra, "--out", f"v{_n()}")
    c("option combinations", "err", *VAL, "--out", "a.npy")
    c("option combinations", "err", *VAL, "--out", "oloop4")
    c("option combinations", "err", *VAL, "--out", "v_same", "--json", "v_same")
    for extra, exp in [
        (["--datapath", "mma.bf16.f32.k16"], "any"), (["--instr", "mma", "--datapath", "wgmma.bf16.f32.k16"], "err"),
        (["--dtype", "bf16"], "err"), (["--output", "f16"], "any"), (["--output", "nope"], "err"),
        (["--output", "F32"], "any"), (["--evidence", "0"], "any"), (["--evidence", "99999"], "any"),
        (["--seed", "9223372036854775808"], "err"), (["--steps", "slice,,sass"], "err"),
        (["--steps", ",slice"], "err"), (["--steps", "slice "], "any"), (["--steps", "\u0455lice"], "err"),
        (["--device", "sim:t_dir.toml"], "err"), (["--device", "sim:loop.toml"], "err"),
    ]:
        c("option combinations", exp, *LAD, *extra)
    for extra, exp in [
        (["--instr", "mma"], "any"), (["--format", "f16"], "err"),
        (["--format", "bf16", "--datapath", "mma.bf16.f32.k16"], "err"),
        (["--a", "0x3f80", "--a", "0x3f80"], "err"), (["--a", "0x3f80,"], "err"),
        (["--a", ",0x3f80"], "err"), (["--a", "0x3f80 ,0x3f80"], "any"), (["--a", "0x-1"], "err"),
        (["--a", "0x3F80" * 3], "err"), (["--a", "-0"], "any"), (["--a", "0x_3f80"], "any"),
        (["--c", "-0"], "any"), (["--c", "0x80000000"], "ok"), (["--c", "0x"], "err"),
        (["--active", "0,0"], "err"), (["--active", "-1"], "err"), (["--active", "99"], "err"),
        (["--active", ""], "err"), (["--active", "0-3"], "any"), (["--active", "all"], "any"),
        (["--scale-a", "0x7f"], "err"), (["--scale-b", "1"], "err"),
        (["--model", "h100", "--model", "a100"], "any"), (["--model", ""], "err"),
        (["--json", "oloop1.json"], "ok"), (["--json", "-"], "ok"),
        (["--device", "sim:h100"], "err"), (["--instr", "wgmma"], "err"),
    ]:
        c("option combinations", exp, *RC, *extra)
    for dev, exp in [("sim:mi300x", "err"), ("sim:MI300X", "err"), ("mmasim:h100", "any"),
                     ("mmasim:", "err"), ("mmasim:nope", "err"), ("cuda", "err"), ("cuda:0", "err"),
                     ("cuda:0:0", "err"), ("cuda: 0", "err"), ("sim:h100 ", "any"), (" sim:h100", "any"),
                     ("sim:./t_bom.toml", "any"), ("sim:t_crlf.toml", "any"), ("sim:\u202eh100", "err")]:
        c("devices", exp, "run-case", "--device", dev, "--datapath", "mma.bf16.f32.k16")
    for dp, exp in [("mfma.f16.f32.k16", "any"), ("mfma.f16.f32.k15", "err"), ("mfma.f16.f32.k1024", "err"),
                    ("mfma.f16.f16.k16", "err"), ("mfma.e4m3.f32.k32", "any"), ("mfma.e4m3fnuz.f32.k32", "any"),
                    ("MFMA.F16.F32.K16", "any"), ("mfma.bf16.f32.k8", "any"), ("mfma.xf32.f32.k8", "any"),
                    ("mfma..f32.k16", "err"), ("mfma.f16.f32.k", "err"), ("mfma.f16.f32.k-16", "err"),
                    ("mfma.f16.f32.k16.x", "err"), ("mfma.f64.f64.k4", "any")]:
        c("AMD ids", exp, "run-case", "--device", "sim:mi300x", "--datapath", dp)
        c("AMD ids", exp if exp != "any" else "any", "validate", "--device", "sim:mi300x", "--datapath", dp,
          "--cases", "100", "--out", f"amd{_n()}")
    for arch, exp in [("gfx942", "ok"), ("GFX942", "any"), ("gfx9420", "err"), ("gfx", "err"),
                      ("gfx942,gfx90a", "any"), ("sm_90", "err"), ("", "err"), ("gfx942 ", "any")]:
        c("AMD ids", exp, "mfma-check", "--arch", arch)
    for extra, exp in [
        (["--m", "1,2,3"], "any"), (["--m", "1..8"], "any"), (["--m", "-1"], "err"), (["--m", "0"], "err"),
        (["--m", "nan"], "err"), (["--m", "1,1"], "any"), (["--m", ""], "err"), (["--m", "1-"], "err"),
        (["--ref", "0"], "any"), (["--ref", "-1"], "err"), (["--ref", "99999999"], "any"),
        (["--form", "nope"], "err"), (["-n", "-0"], "err"), (["-k", "00"], "err"),
        (["--json", "bi.npy"], "ok"),
    ]:
        c("option combinations", exp, *BI, *extra)
    for extra, exp in [(["--only", "nosuch"], "err"), (["--only", "", "--list"], "err"),
                       (["--list", "--list"], "any"), (["--list", "--only", "nosuch"], "err")]:
        c("option combinations", exp, "warm", *extra)
    for extra, exp in [(["--set", "nosuch"], "err"), (["--suite", "blog", "--suite", "blog"], "any"),
                       (["--set", "blog", "--suite", "blog"], "any"), (["--json", "-", "--json", "t.json"], "err")]:
        c("option combinations", exp, "targets", *extra)
    cap = "../../work/wt/campaign/tests/data/khattak-mikaitis-2025/H200/bf16"
    from pathlib import Path
    capabs = str(Path(__file__).resolve().parent.parent / "tests/data/khattak-mikaitis-2025/H200/bf16")
    for extra, exp in [(["--budget", "0"], "err"), (["--screen", "0"], "err"), (["--start", "nope"], "err"),
                       (["--only", "nope"], "err"), (["--only", ""], "err"), (["--details", "NOPE"], "err"),
                       (["--budget", "-0"], "err"), (["--start", ""], "err"), (["--quick", "--budget", "5"], "any")]:
        c("option combinations", exp, "fit", "--capture", capabs, *extra)
    for extra, exp in [(["--show", "-0"], "any"), (["--model", "nope"], "err"),
                       (["--model", "h200", "--model", "h200"], "any"), (["--capture", capabs], "any"),
                       (["--json", "-", "--show", "0"], "ok")]:
        c("option combinations", exp, "score", "--capture", capabs, *extra)
    for extra, exp in [(["--limit", "0"], "err"), (["--limit", "-0"], "err"), (["--instr", "mma", "--family", "mma"], "err"),
                       (["--device", "sim:mi300x"], "err"), (["--device", "sim:a100"], "any")]:
        c("option combinations", exp, "replay", "--capture", capabs,
          *(["--device", "sim:h200"] if "--device" not in extra else []), *extra)
    c("option combinations", "err", "score", "--capture", cap + "/../nope")
    for extra, exp in [(["--gpu", "MI300X"], "err"), (["--gpu", "T4"], "any"), (["--m", "-0"], "err"),
                       (["--k", "1"], "any"), (["--seed", "-0"], "any"), (["--out", "a.npy"], "err"),
                       (["--out", "oloop2"], "err"), (["--out", "dirlink/x"], "ok")]:
        args = ["gemm-probe", "--format", "bf16", *(["--gpu", "H100"] if "--gpu" not in extra else []), *extra]
        if "--out" not in extra:
            args += ["--out", f"gp{_n()}"]
        c("option combinations", exp, *args)
    for extra, exp in [(["--format", "nope"], "err"), (["--cases", "0"], "err"), (["--device", "sim:t_dir.toml"], "err"),
                       (["--no-sass", "--no-sass"], "any"), (["--json", "oloop3.json"], "ok")]:
        c("option combinations", exp, "smoke", "--device", "sim:h100", "--format", "bf16", "--no-sass",
          "--cases", "20", *extra)
    for extra, exp in [(["--arch", "sm_90a", "--arch", "sm_90a"], "any"), (["--instr", "mfma"], "err"),
                       (["--format", "e4m3", "--arch", "sm_80"], "err")]:
        c("option combinations", exp, "sass-check", *extra)
    for folders, exp in [(["loop.npy"], "err"), (["rootlink.npy"], "err"), (["t_dir.toml"], "err")]:
        c("option combinations", exp, "report", "merge", *folders, "--out", f"rm{_n()}")
    # --- files of kinds no earlier campaign sent
    kinds = ["loop.npy", "loop1.npy", "z.npz", "p.pkl", "gz.npy", "v2.npy", "v3.npy", "v9.npy",
             "extra.npy", "long.npy", "negshape.npy", "floatshape.npy", "nodescr.npy", "f2x.npy",
             "struct.npy", "sub.npy", "u1.npy", "dt.npy", "str.npy", "f8e.npy", "i4.npy", "proc.npy",
             "null.npy", "rootlink.npy", "-x.npy", "sp ace.npy", "nl\nname.npy", "tab\tname.npy",
             "\u202eypn.a.npy"]
    ok = {"v2.npy", "v3.npy", "-x.npy", "sp ace.npy", "nl\nname.npy", "tab\tname.npy", "\u202eypn.a.npy"}
    anyk = {"u1.npy", "f8e.npy", "i4.npy", "extra.npy"}
    for f in kinds:
        exp = "ok" if f in ok else ("any" if f in anyk else "err")
        c("files", exp, "gemm", "--a", f, "--b", "b.npy", *G)
        c("files", "err" if f not in ok else "ok", "fit-gemm", *AB, "--d", f, *G)
        c("files", "err" if f not in ok else "any", "gemm", *AB, "--c", f, *G)
        if f in ("loop.npy", "z.npz", "struct.npy", "negshape.npy", "gz.npy", "long.npy", "proc.npy"):
            c("files", "err", "fit-gemm", *FIT[1:], "--bias", f)
            c("files", "err", "gemm", "--random", "8x8x32", "--format", "e4m3", *G, "--scale-a", f)
    c("files", "err", "gemm", "--a", "a.npy", "--b", "a.npy", *G)
    c("files", "ok", "gemm", "--a", "half16.npy", "--b", "b.npy", *G)
    c("files", "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--c", "c.npy", *G, "--out", "c.npy")
    # --- TOML profiles
    for t, exp in [("t_inf.toml", "err"), ("t_nan.toml", "err"), ("t_date.toml", "err"),
                   ("t_hugeint.toml", "err"), ("t_neg0.toml", "any"), ("t_unikey.toml", "err"),
                   ("t_dotted.toml", "err"), ("t_aot.toml", "err"), ("t_bom.toml", "any"),
                   ("t_crlf.toml", "any"), ("t_famempty.toml", "err"), ("t_gpublank.toml", "err"),
                   ("t_namelong.toml", "any"), ("t_nameuni.toml", "any"), ("t_lowgpu.toml", "any"),
                   ("t_amdgpu.toml", "err"), ("t_mixfam.toml", "err"), ("t_famdup.toml", "any"),
                   ("t_famcase.toml", "any"), ("t_table.toml", "err"), ("t_dir.toml", "err")]:
        c("TOML profiles", exp, "run-case", "--device", f"sim:{t}", "--datapath", "mma.bf16.f32.k16")
        c("TOML profiles", exp, "validate", "--device", f"sim:{t}", "--format", "bf16", "--cases", "100",
          "--out", f"tv{_n()}")
    # --- an output over an input (found by hand, then scripted)
    cap = "cap_in/H200/bf16"
    for args in (["gemm", "--a", "a64.npy", "--b", "b64.npy", *G, "--schedule", "sched_keep.json",
                  "--json", "sched_keep.json"],
                 ["run-case", "--device", "sim:p_keep.toml", "--datapath", "mma.bf16.f32.k16",
                  "--json", "p_keep.toml"],
                 ["ladder", "--device", "sim:p_keep.toml", "--format", "bf16", "--validate", "0",
                  "--steps", "slice", "--json", "p_keep.toml"],
                 ["score", "--capture", cap, "--json", f"{cap}/a_H200_bf16.txt"],
                 ["fit", "--quick", "--capture", cap, "--json", f"{cap}/fit.json"],
                 ["replay", "--device", "sim:h200", "--capture", cap, "--json", f"{cap}/d_H200_fp32.txt"],
                 ["score", "--capture", "v_keep/capture.tcap", "--json", "v_keep/capture.tcap"],
                 ["replay", "--device", "sim:h100", "--capture", "v_keep/capture.tcap", "--json",
                  "v_keep/capture.tcap"],
                 [*VAL, "--out", "v_keep", "--resume", "--json", "v_keep/capture.tcap"],
                 [*VAL, "--out", "v_keep", "--resume", "--json", "v_keep/report.json"],
                 ["report", "merge", "v_keep", "--out", "m_keep", "--json", "v_keep/s.json"],
                 ["ladder", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--dtype", "f16",
                  "--validate", "0", "--steps", "slice"]):
        c("outputs over inputs", "err", *args)
    # --- odd strings to text options
    odd = ["\u202eH100", "H\u0301100", "H100\t", "H100\n", "\U0001f600", "H100;rm -rf /", "$(id)",
           "../H100", "H100\r", "\x1b[31mH100"]
    for s in odd:
        c("strings", "err", *GEMM[:-1], s)
        c("strings", "err", *GEMM, "--compare", s)
        c("strings", "err", *GEMM, "--schedule", s)
        c("strings", "err", *RC[:-1], s)
        c("strings", "err", "ladder", "--format", "bf16", "--device", "sim:h100", "--output", s)
    return out


# ---------------------------------------------------------------- API

A = "np.ones((8, 16), np.float16)"
B = "np.ones((16, 8), np.float16)"
DP = "datapath='mma.bf16.f32.k16'"
ONE = "[0x3F80] * 16"


def _nested():
    import torch

    import tcprobe.torch as tt
    a = torch.ones(8, 16, dtype=torch.float16)
    with tt.emulate(gpu="H100"):
        with tt.emulate(gpu="A100"):
            y = a @ a.T.contiguous()
    return f"nested ok {tuple(y.shape)}"


def _report_twice():
    import torch

    import tcprobe.torch as tt
    rep = tt.Report()
    a = torch.ones(8, 16, dtype=torch.float16)
    with tt.emulate(gpu="H100", report=rep):
        a @ a.T
    with tt.emulate(gpu="A100", report=rep):
        a @ a.T
    n = sum(s.routed for s in rep.ops.values())
    return f"routed {n} over two blocks"


def _emu_reenter():
    import tcprobe.torch as tt
    e = tt.emulate(gpu="H100")
    with e:
        pass
    with e:
        pass
    return "re-entered"


def _emu_exc():
    import torch

    import tcprobe.torch as tt
    try:
        with tt.emulate(gpu="H100"):
            raise KeyError("inside")
    except KeyError:
        pass
    a = torch.ones(2, 2)
    y = a @ a
    return "mode left after an exception" if y.dtype == torch.float32 else "WRONG"


def _neg_zero_dot():
    import tcprobe
    d = tcprobe.dot([0x8000] * 16, [0x3F80] * 16, 0x80000000, datapath="mma.bf16.f32.k16", gpu="H100")
    return f"word {int(np.asarray(d).ravel()[0]):#010x}"


def _matmul_neg_zero():
    import tcprobe
    d = tcprobe.matmul(np.full((8, 16), -0.0, np.float16), np.ones((16, 8), np.float16),
                       np.full((8, 8), -0.0, np.float32), gpu="H100")
    return f"word {int(np.asarray(d, np.float32).view(np.uint32)[0, 0]):#010x}"


def _emu_thread():
    import threading

    import torch

    import tcprobe.torch as tt
    rep = tt.Report()
    a = torch.ones(8, 16, dtype=torch.float16)
    with tt.emulate(gpu="H100", report=rep, strict=True):
        t = threading.Thread(target=lambda: a @ a.T)
        t.start()
        t.join()
    return f"routed {sum(s.routed for s in rep.ops.values())}, fallbacks {len(rep.fallbacks)}"


API_HELPERS = {"_nested": _nested, "_report_twice": _report_twice, "_emu_reenter": _emu_reenter,
               "_emu_exc": _emu_exc, "_neg_zero_dot": _neg_zero_dot, "_matmul_neg_zero": _matmul_neg_zero,
               "_emu_thread": _emu_thread}


def api_cases():
    out = []

    def a(cls, exp, code):
        out.append((cls, exp, code))
    for code, exp in [
        (f"tcprobe.dot({ONE}, {ONE}, 0, {DP}, gpu='H100')", "ok"),
        (f"tcprobe.dot({ONE}, {ONE}, -0, {DP}, gpu='H100')", "ok"),
        (f"tcprobe.dot({ONE}, {ONE}, 0.0, {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, np.uint32(0), {DP}, gpu='H100')", "ok"),
        (f"tcprobe.dot({ONE}, {ONE}, np.int64(-1), {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, np.float32(0), {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, '0', {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot(tuple({ONE}), {ONE}, 0, {DP}, gpu='H100')", "ok"),
        (f"tcprobe.dot(iter({ONE}), {ONE}, 0, {DP}, gpu='H100')", "any"),
        (f"tcprobe.dot({{0: 1}}, {ONE}, 0, {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot('0x3f80' * 16, {ONE}, 0, {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot(b'\\x80\\x3f' * 16, {ONE}, 0, {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot(np.array({ONE}, np.int8), {ONE}, 0, {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot(np.array({ONE}, np.float16), {ONE}, 0, {DP}, gpu='H100')", "err"),
        (f"tcprobe.dot(np.array({ONE}, ml_dtypes.bfloat16), {ONE}, 0, {DP}, gpu='H100')", "any"),
        (f"tcprobe.dot(np.array([{ONE}] * 2, np.uint16), {ONE}, 0, {DP}, gpu='H100')", "any"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath=' mma.bf16.f32.k16', gpu='H100')", "any"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16\\n', gpu='H100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16', gpu='\u202eH100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16', gpu='A100', model='h100')", "any"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='wgmma.bf16.f32.k16', gpu='A100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='tcgen05.f16.bf16.f32.k16', gpu='H100')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16', gpu='MI300X')", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16', active=[])", "err"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16', gpu='H100', active=range(16))", "any"),
        (f"tcprobe.dot({ONE}, {ONE}, 0, datapath='mma.bf16.f32.k16', gpu='H100', scale_a=1)", "err"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')", "ok"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI100')", "any"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='H100')", "err"),
        ("tcprobe.dot([0x3C00] * 15, [0x3C00] * 15, 0, datapath='mfma.f16.f32.k15', gpu='MI300X')", "err"),
        ("tcprobe.dot([0x38] * 32, [0x38] * 32, 0, datapath='mfma.e4m3.f32.k32', gpu='MI250X')", "err"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='MFMA.F16.F32.K16', gpu='MI300X')", "any"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='mi300x')", "ok"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0x7fc00001, datapath='mfma.f16.f32.k16', gpu='MI300X')", "ok"),
        ("tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', model='mi300x')", "any"),
        ("_neg_zero_dot()", "ok"),
        ("_matmul_neg_zero()", "ok"),
    ]:
        a("Python API: dot", exp, code)
    for code, exp in [
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=-0.0)", "ok"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=np.float64('nan'))", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=1e-46)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=3.5e38)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=np.float32(3e38) * 2)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=True)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=np.bool_(True))", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=np.array(2.0))", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=__import__('fractions').Fraction(1, 3))", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', alpha=__import__('decimal').Decimal('0.1'))", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', beta=-0.0)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', split_k=np.int64(2))", "ok"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', split_k=np.uint8(2))", "ok"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', split_k=-0)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', split_k='2')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', jobs=True)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', jobs=10**6)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', fast=1)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', strict_auto='yes')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', strict_auto=True)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule='auto', strict_auto=True)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{}})", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{'split_k': -0}})", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{'split_k': 2.0}})", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{'split_k': True}})", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{'split_\u212a': 2}})", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{1: 2}})", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule={{'split_k': 2, 'name': 'x' * 10000}})", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule=Path('crlf.json'))", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule=Path('sched_trailing.json'))", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule=Path('loop.npy'))", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', schedule='CHAIN')", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', instr='mma', schedule='deepgemm-fp8')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', instr='mfma')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI300X')", "ok"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI300X', instr='mfma.f16.f32.k16')", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI300X', instr='mfma.f16.f32.k15')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI300X', instr='mfma.f16.f16.k16')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI300X', instr='wgmma')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI300X', schedule='deepgemm-fp8')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='MI100', dtype='f16')", "any"),
        ("tcprobe.matmul(np.ones((8, 16), ml_dtypes.float8_e4m3fn), np.ones((16, 8), ml_dtypes.float8_e4m3fn), gpu='MI300X')", "err"),
        ("tcprobe.matmul(np.ones((8, 16), ml_dtypes.float8_e4m3fnuz), np.ones((16, 8), ml_dtypes.float8_e4m3fnuz), gpu='MI300X')", "any"),
        ("tcprobe.matmul(np.ones((8, 16), ml_dtypes.float8_e4m3fnuz), np.ones((16, 8), ml_dtypes.float8_e4m3fnuz), gpu='MI250X')", "err"),
        ("tcprobe.matmul(np.ones((8, 16), np.float32), np.ones((16, 8), np.float32), gpu='MI300X')", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', model='mi300x')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', model='a100')", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', backend='')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', progress=1)", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', dtype='F16')", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', dtype='s32')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', dtype=np.dtype('<f2'))", "ok"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', dtype=np.dtype('>f4'))", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', bias=np.ones(8, np.float32), dtype='f16')", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', bias=[1.0] * 8)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', bias=np.full(8, np.nan, np.float32))", "ok"),
        (f"tcprobe.matmul({A}, {B}, np.ones((8, 8), np.float32), gpu='H100', beta=0)", "ok"),
        (f"tcprobe.matmul({A}, {B}, np.ones((8, 8), np.int32), gpu='H100')", "err"),
        (f"tcprobe.matmul({A}, {B}, np.ones((8, 8), np.float16), gpu='H100', dtype='f32')", "err"),
        (f"tcprobe.matmul({A}.astype(np.float32), {B}, gpu='H100')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100\\x00')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu=b'H100')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', out=np.empty((8, 8), np.float32), dtype='f16')", "err"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', out=np.empty((8, 8), np.float32)[::-1])", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', out=np.empty((8, 8), np.float32).T)", "any"),
        (f"tcprobe.matmul({A}, {B}, gpu='H100', out=np.empty((8, 8), np.float32, order='F'))", "any"),
        (f"(lambda o: (tcprobe.matmul({A}, {B}, gpu='H100', out=o[:, :8]), 'ok')[1])(np.zeros((8, 9), np.float32))", "any"),
        ("tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu='H100', out=np.ones((8, 16), np.float16)[:, :8])", "any"),
    ]:
        a("Python API: matmul", exp, code)
    T = "torch.ones(8, 16, dtype=torch.float16)"
    U = "torch.ones(16, 8, dtype=torch.float16)"
    for code, exp in [
        ("_nested()", "any"), ("_report_twice()", "any"), ("_emu_reenter()", "any"),
        ("_emu_exc()", "ok"), ("_emu_thread()", "any"),
        ("tcprobe.torch.emulate(gpu='MI300X', instr='wgmma')", "err"),
        ("tcprobe.torch.emulate(gpu='MI300X', instr='mfma.f16.f32.k15')", "err"),
        ("tcprobe.torch.emulate(gpu='H100', instr='mfma')", "err"),
        ("tcprobe.torch.emulate(gpu='H100', instr='WGMMA')", "any"),
        ("tcprobe.torch.emulate(gpu='H100', instr=' wgmma')", "any"),
        ("tcprobe.torch.emulate(gpu='H100', schedule={'split_k': 0})", "err"),
        ("tcprobe.torch.emulate(gpu='H100', schedule={'split_k': 2.5})", "err"),
        ("tcprobe.torch.emulate(gpu='H100', schedule=Path('sched_nested.json'))", "err"),
        ("tcprobe.torch.emulate(gpu='H100', backend=0)", "err"),
        ("tcprobe.torch.emulate(gpu='H100', strict=0)", "err"),
        ("tcprobe.torch.emulate(gpu='H100', report=tcprobe.torch.Report)", "err"),
        ("tcprobe.torch.emulate(gpu=['H100'])", "err"),
        ("tcprobe.torch.emulate(gpu='H100', model='mi300x')", "err"),
        ("tcprobe.torch.emulate(gpu='\u202eH100')", "err"),
        ("tcprobe.torch.Report(record='yes')", "err"),
        ("tcprobe.torch.Report(ops=[])", "any"),
        ("tcprobe.torch.Report(compare=True, record=True)", "any"),
        (f"tcprobe.matmul({T}.to(torch.float8_e4m3fnuz), {U}.to(torch.float8_e4m3fnuz), gpu='MI300X')", "any"),
        (f"tcprobe.matmul({T}.to(torch.float8_e4m3fn), {U}.to(torch.float8_e4m3fn), gpu='MI300X')", "err"),
        (f"tcprobe.matmul({T}.neg().mul(0), {U}, gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.expand(2, 8, 16)[0], {U}, gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.as_strided((8, 16), (0, 1)), {U}, gpu='H100')", "ok"),
        (f"tcprobe.matmul({T}.to(memory_format=torch.contiguous_format), {U}, gpu='H100', alpha=torch.tensor(float('nan')))", "any"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', alpha=torch.tensor([1.0, 2.0]))", "err"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', out=torch.empty(8, 8))", "any"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', out=torch.empty(8, 8, dtype=torch.float64))", "err"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', out=torch.empty(8, 7))", "err"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', dtype=torch.int32)", "err"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', bias=torch.ones(8))", "any"),
        (f"tcprobe.matmul({T}, {U}, gpu='H100', bias=torch.ones(8, dtype=torch.float64))", "any"),
    ]:
        a("Python API: torch", exp, code)
    for code, exp in [
        ("tcprobe.capture.load('')", "err"), ("tcprobe.capture.load('loop.npy')", "err"),
        ("tcprobe.capture.load('t_dir.toml')", "err"), ("tcprobe.capture.load(Path('a.npy'))", "err"),
        ("tcprobe.capture.load(None)", "err"), ("tcprobe.capture.load(42)", "err"),
        ("tcprobe.capture.load('rootlink.npy')", "err"), ("tcprobe.capture.load('\u202e')", "err"),
        ("__import__('tcprobe.devices.sim_profile', fromlist=['x']).load_profile('t_inf.toml')", "err"),
        ("__import__('tcprobe.devices.sim_profile', fromlist=['x']).load_profile('t_dir.toml')", "err"),
        ("__import__('tcprobe.devices.sim_profile', fromlist=['x']).load_profile('loop.npy')", "err"),
        ("__import__('tcprobe.devices.sim_profile', fromlist=['x']).load_profile(b'x.toml')", "err"),
    ]:
        a("Python API: captures, profiles", exp, code)
    return out
