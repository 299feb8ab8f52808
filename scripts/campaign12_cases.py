"""Campaign 12's cases (scripts/campaign12.py runs them; docs/campaign-12.md):
the AMD surfaces. CLI: (class, expected, args, check or None), run in one
process through click's runner; API: (class, expected, code) in a copy of
PRELUDE's namespace. The fixtures are campaign 10's
(scripts/campaign10_cli.fixtures) plus fixtures12 below. A case's words come
from hand arithmetic (exact sums of powers of two, written out as f32 words
below), from another surface (tcprobe.matmul on the same operands for the
CLI, the lower-case spelling) or from the documented NaN word, never from
the surface under test alone."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
from campaign10_api import PRELUDE as PRELUDE10

AMD = ("MI300X", "MI250X", "MI100")
# f32 words worked out by hand (sign 0, exponent 127 + e, fraction)
W16 = 0x41800000      # 16.0 = 2^4
W17 = 0x41880000      # 17.0 = 2^4 (1 + 1/16)
W8 = 0x41000000       # 8.0
W4 = 0x40800000       # 4.0
W2 = 0x40000000       # 2.0
W1 = 0x3F800000       # 1.0
W2M20 = 0x35800000    # 2^-20 = 16 * 2^-24: exponent 107 = 0x6B -> 0x35800000
INF = 0x7F800000


def _w(f):
    return int(np.float32(f).view(np.uint32))


# independent checks of the hand words above against Python's own floats
assert _w(16.0) == W16 and _w(17.0) == W17 and _w(2.0 ** -20) == W2M20
# 65504^2 * 16 = (2^16 - 2^5)^2 * 2^4 = 2^36 - 2^26 + 2^14 (23 significant bits: exact in f32);
# 65504 * 16 = 2^20 - 2^9 (11 bits). Python's integers give them exactly.
BIG = _w(float(65504 * 65504 * 16))
BIG1 = _w(float(65504 * 16))
assert BIG == 0x517FC004 and BIG1 == 0x497FE000


def fixtures12(root: Path) -> None:
    """The files campaign 12's cases read beyond campaign 10's."""
    import tcprobe
    rng = np.random.default_rng(12)
    f16 = np.float16
    sv = lambda n, x: np.save(root / n, x)  # noqa: E731
    sv("o17a.npy", np.ones((8, 17), f16))
    sv("o17b.npy", np.ones((17, 8), f16))
    sv("o16a32.npy", np.ones((8, 16), np.float32))
    sv("o16b32.npy", np.ones((16, 8), np.float32))
    sv("o17a32.npy", np.ones((8, 17), np.float32))
    sv("o17b32.npy", np.ones((17, 8), np.float32))
    sv("ob16a.npy", np.ones((8, 16), ml_dtypes.bfloat16).view(np.uint16))
    sv("ob16b.npy", np.ones((16, 8), ml_dtypes.bfloat16).view(np.uint16))
    sv("ones_b.npy", np.ones((16, 8), f16))
    sv("zeros_b.npy", np.zeros((16, 8), f16))
    sv("a_m1.npy", np.ones((1, 16), f16))
    sv("b_n1.npy", np.ones((16, 1), f16))
    sv("a_k0.npy", np.zeros((8, 0), f16))
    sv("b_k0.npy", np.zeros((0, 8), f16))
    sv("a_m0.npy", np.zeros((0, 16), f16))
    sv("a_max.npy", np.full((8, 16), 65504, f16))
    sv("b_max.npy", np.full((16, 8), 65504, f16))
    sv("a_inf.npy", np.full((8, 16), np.inf, f16))
    sv("a_sub.npy", np.full((8, 16), 2.0 ** -24, f16))
    sv("a17.npy", rng.standard_normal((8, 17)).astype(f16))
    sv("b17.npy", rng.standard_normal((17, 8)).astype(f16))
    sv("a_big.npy", rng.standard_normal((64, 40)).astype(f16))
    sv("b_big.npy", rng.standard_normal((40, 24)).astype(f16))
    # fp8 raw words: 0x38 is 0.5 in e4m3fnuz (bias 8), 0.25 in e5m2fnuz (bias 16)
    sv("fz_a.npy", np.full((8, 32), 0x38, np.uint8))
    sv("fz_b.npy", np.full((32, 8), 0x38, np.uint8))
    sv("fz_a17.npy", np.full((8, 17), 0x38, np.uint8))
    sv("fz_b17.npy", np.full((17, 8), 0x38, np.uint8))
    sv("fz_nan.npy", np.full((8, 32), 0x80, np.uint8))
    sv("c32.npy", np.full((8, 8), 1.0, np.float32))
    sv("c16.npy", np.full((8, 8), 1.0, f16))
    sv("c_bad.npy", np.zeros((8, 7), np.float32))
    a17, b17 = np.load(root / "a17.npy"), np.load(root / "b17.npy")
    a, b = np.load(root / "a.npy"), np.load(root / "b.npy")
    for g in AMD:
        sv(f"ref17_{g}.npy", tcprobe.matmul(a17, b17, gpu=g))
        sv(f"ref_{g}.npy", tcprobe.matmul(a, b, gpu=g))
        sv(f"refbf_{g}.npy", tcprobe.matmul(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16), gpu=g))
        sv(f"ref32_{g}.npy", tcprobe.matmul(a.astype(np.float32), b.astype(np.float32), gpu=g))
    sv("ref_sk2.npy", tcprobe.matmul(a17, b17, gpu="MI300X", schedule={"split_k": 2}))
    sv("ref_ab.npy", tcprobe.matmul(a, b, np.full((8, 8), 1.0, np.float32), gpu="MI300X", alpha=2.0, beta=0.5))
    sv("ref_m100.npy", tcprobe.matmul(a, b, gpu="MI100"))
    sv("ref_f16out.npy", tcprobe.matmul(a, b, gpu="MI300X", dtype="f16"))
    sv("ref_xf32.npy", tcprobe.matmul(a.astype(np.float32), b.astype(np.float32), gpu="MI300X",
                                      instr="mfma.xf32.tf32.f32.k8"))
    fa = rng.standard_normal((8, 32)).astype(ml_dtypes.float8_e4m3fnuz)
    fb = rng.standard_normal((32, 8)).astype(ml_dtypes.float8_e4m3fnuz)
    sv("fr_a.npy", fa.view(np.uint8))
    sv("fr_b.npy", fb.view(np.uint8))
    sv("fr_d.npy", tcprobe.matmul(fa, fb, gpu="MI300X"))
    # the fnuz D: the f32 D rounded to e4m3fnuz by ml_dtypes (RNE; every |D| is far inside range)
    sv("fr_d8.npy", np.load(root / "fr_d.npy").astype(ml_dtypes.float8_e4m3fnuz).view(np.uint8))
    (root / "amd_ok.toml").write_text('name = "amd_ok"\ngpu = "MI300X"\n[mfma]\ndesign = "truncated"\n'
                                      'block = 8\nwindow = 24\nwindow2 = 31\n')
    for name, body in MFMA_TOMLS.items():
        (root / f"m_{name}.toml").write_text(f'name = "m_{name}"\n' + body)


MFMA_TOMLS = {
    "plain": 'gpu = "MI300X"\nfamilies = ["mfma"]\n',
    "upper": 'gpu = "MI300X"\n[mfma]\ndesign = "TRUNCATED"\nblock = 8\nwindow = 24\nwindow2 = 31\n',
    "exact": 'gpu = "MI100"\n[mfma]\ndesign = "exact"\nblock = 4\n',
    "ftz": 'gpu = "MI250X"\n[mfma]\ndesign = "ftz"\nblock = 4\n',
    "grouped": 'gpu = "MI300X"\n[mfma]\ndesign = "grouped"\nblock = 16\nwindow = 24\nwindow2 = 31\n',
    "fma": 'gpu = "MI300X"\n[mfma]\ndesign = "fma"\n',
    "big": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 100000\nwindow = 100000\nwindow2 = 100000\n',
    "neg": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = -1\nwindow = 24\nwindow2 = 31\n',
    "zero_l": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 0\nwindow = 24\nwindow2 = 31\n',
    "frac": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 8.5\nwindow = 24\nwindow2 = 31\n',
    "strv": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = "8"\nwindow = 24\nwindow2 = 31\n',
    "boolv": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = true\nwindow = 24\nwindow2 = 31\n',
    "nand": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 8\nwindow = nan\nwindow2 = 31\n',
    "infd": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 8\nwindow = inf\nwindow2 = 31\n',
    "baddesign": 'gpu = "MI300X"\n[mfma]\ndesign = "kahan"\nblock = 8\n',
    "nodesign": 'gpu = "MI300X"\n[mfma]\nblock = 8\nwindow = 24\nwindow2 = 31\n',
    "unknownkey": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 8\nwindow = 24\nwindow2 = 31\nshift = 3\n',
    "exact_window": 'gpu = "MI100"\n[mfma]\ndesign = "exact"\nblock = 4\nwindow = 24\n',
    "ftz_p3": 'gpu = "MI250X"\n[mfma]\ndesign = "ftz"\nblock = 3\n',
    "nvgpu": 'gpu = "H100"\nfamilies = ["mfma"]\n[mfma]\ndesign = "fma"\n',
    "engine_key": 'gpu = "MI300X"\nwindow_bits = 24\n[mfma]\ndesign = "fma"\n',
    "fam_mma": 'gpu = "MI300X"\nfamilies = ["mma"]\n',
    "mfma_str": 'gpu = "MI300X"\nmfma = "truncated"\n',
    "mfma_list": 'gpu = "MI300X"\nmfma = [1, 2]\n',
    "huge_int": 'gpu = "MI300X"\n[mfma]\ndesign = "truncated"\nblock = 8\nwindow = 99999999999999999999\nwindow2 = 31\n',
    "gpu_lower": 'gpu = "mi300x"\n[mfma]\ndesign = "truncated"\nblock = 8\nwindow = 24\nwindow2 = 31\n',
    "gpu_gfx": 'gpu = "gfx942"\n[mfma]\ndesign = "fma"\n',
    "nogpu": 'families = ["mfma"]\n[mfma]\ndesign = "fma"\n',
    "other_table": 'gpu = "MI300X"\n[mfma]\ndesign = "fma"\n[engine]\nx = 1\n',
}
# expected on `run-case --device sim:m_NAME.toml --datapath mfma.f16.f32.k16 1.0 x 1.0`
MFMA_EXPECT = {
    "plain": "ok", "upper": "ok", "exact": "ok", "ftz": "ok", "grouped": "ok", "fma": "ok", "big": "ok",
    "neg": "err", "zero_l": "err", "frac": "err", "strv": "err", "boolv": "err", "nand": "err",
    "infd": "err", "baddesign": "err", "nodesign": "err", "unknownkey": "err", "exact_window": "err",
    "ftz_p3": "err", "nvgpu": "err", "engine_key": "err", "fam_mma": "err", "mfma_str": "err",
    "mfma_list": "err", "huge_int": "err", "gpu_lower": "ok", "gpu_gfx": "err", "nogpu": "any",
    "other_table": "err",
}
# the datapath a run-case on each profile's GPU takes (MI100: f16 k16 is 32x32x8? use the k8 one everywhere)
MFMA_DP = {"MI300X": "mfma.f16.f32.k16", "MI250X": "mfma.f16.f32.k8", "MI100": "mfma.f16.f32.k8"}


def _words(name, word, shape=None):
    def check(r, made):
        got = np.load(name)
        if shape is not None and got.shape != shape:
            return f"{name} has shape {got.shape}, not {shape}"
        if got.dtype != np.float32:
            return f"{name} is {got.dtype}, not float32"
        bad = sorted({hex(x) for x in got.view(np.uint32).ravel().tolist()} - {hex(word)})
        return f"{name} holds {bad[:3]}, not {hex(word)}" if bad else None
    return check


def _nan(name, word=None):
    def check(r, made):
        got = np.load(name).astype(np.float32)
        if not np.isnan(got).all():
            return f"{name} is not all NaN"
        if word is not None and set(got.view(np.uint32).ravel().tolist()) != {word}:
            return f"{name}'s NaN words are not {hex(word)}"
        return None
    return check


def _like(name, ref):
    def check(r, made):
        got, want = np.load(name), np.load(ref)
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"{name} is {got.dtype} {got.shape}, {ref} {want.dtype} {want.shape}"
        n = got.dtype.itemsize
        v = {1: np.uint8, 2: np.uint16, 4: np.uint32}[n]
        return None if got.view(v).tolist() == want.view(v).tolist() else f"{name} differs from {ref}"
    return check


def _bytes(name, word):
    def check(r, made):
        got = set(np.load(name).view(np.uint8).ravel().tolist())
        return None if got == {word} else f"{name} holds {sorted(got)[:3]}, not {hex(word)}"
    return check


def _says(*words):
    def check(r, made):
        missing = [w for w in words if w not in r.output]
        return f"no {missing} in the output" if missing else None
    return check


def cli_cases():
    out = []

    def c(cls, exp, *args, check=None):
        out.append((cls, exp, [str(x) for x in args], check))

    G = "gemm CLI on AMD"
    for g in AMD:
        c(G, "ok", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", W17, (8, 8)))
        c(G, "ok", "gemm", "--a", "o17a32.npy", "--b", "o17b32.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", W17))
        c(G, "ok", "gemm", "--a", "ob16a.npy", "--b", "ob16b.npy", "--format", "bf16", "--gpu", g, "--out", "o.npy", check=_words("o.npy", W16))
        c(G, "ok", "gemm", "--a", "a17.npy", "--b", "b17.npy", "--gpu", g, "--out", "o.npy", check=_like("o.npy", f"ref17_{g}.npy"))
        c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", g.lower(), "--out", "o.npy", check=_like("o.npy", f"ref_{g}.npy"))
        c(G, "ok", "gemm", "--a", "ba.npy", "--b", "bb.npy", "--format", "bf16", "--gpu", g, "--out", "o.npy", check=_like("o.npy", f"refbf_{g}.npy"))
        c(G, "ok", "gemm", "--a", "a_f32.npy", "--b", "b_f32.npy", "--gpu", g, "--out", "o.npy", check=_like("o.npy", f"ref32_{g}.npy"))
        c(G, "ok", "gemm", "--a", "a_m1.npy", "--b", "b_n1.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", W16, (1, 1)))
        c(G, "ok", "gemm", "--a", "a_k0.npy", "--b", "b_k0.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", 0, (8, 8)))
        c(G, "ok", "gemm", "--a", "a_m0.npy", "--b", "ones_b.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", 0, (0, 8)))
        c(G, "ok", "gemm", "--a", "a_max.npy", "--b", "ones_b.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", BIG1))
        c(G, "ok", "gemm", "--a", "a_max.npy", "--b", "b_max.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", BIG))
        c(G, "ok", "gemm", "--a", "a_inf.npy", "--b", "ones_b.npy", "--gpu", g, "--out", "o.npy", check=_words("o.npy", INF))
        c(G, "ok", "gemm", "--a", "a_inf.npy", "--b", "zeros_b.npy", "--gpu", g, "--out", "o.npy", check=_nan("o.npy", 0x7FFFFFFF if g == "MI300X" else None))
        c(G, "ok", "gemm", "--a", "a_nan.npy", "--b", "ones_b.npy", "--gpu", g, "--out", "o.npy", check=_nan("o.npy", 0x7FFFFFFF if g == "MI300X" else None))
        c(G, "err", "gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", "--gpu", g)
        c(G, "err", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "e4m3", "--gpu", g)
        c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", g, "--instr", "mma")
        c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", g, "--dtype", "s32")
        c(G, "ok", "gemm", "--random", "8x8x17", "--format", "bf16", "--gpu", g, "--out", "o.npy")
        c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", g, "--scale-a", "a.npy", "--scale-b", "b.npy")
    # MI300X only: subnormal, fp8 fnuz, xf32, C/alpha/beta, schedules, models, compare
    X = ["--gpu", "MI300X"]
    c(G, "ok", "gemm", "--a", "a_sub.npy", "--b", "ones_b.npy", *X, "--out", "o.npy", check=_words("o.npy", W2M20))
    c(G, "ok", "gemm", "--a", "a_sub.npy", "--b", "ones_b.npy", "--gpu", "MI100", "--out", "o.npy", check=_words("o.npy", W2M20))
    c(G, "ok", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "e4m3fnuz", *X, "--out", "o.npy", check=_words("o.npy", W8))
    c(G, "ok", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "E4M3FNUZ", *X, "--out", "o.npy", check=_words("o.npy", W8))
    c(G, "ok", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "e5m2fnuz", *X, "--out", "o.npy", check=_words("o.npy", W2))
    c(G, "ok", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--a-format", "e4m3fnuz", "--b-format", "e5m2fnuz", *X, "--out", "o.npy", check=_words("o.npy", W4))
    c(G, "ok", "gemm", "--a", "fz_a17.npy", "--b", "fz_b17.npy", "--format", "e4m3fnuz", *X, "--out", "o.npy", check=_words("o.npy", _w(0.25 * 17)))
    c(G, "ok", "gemm", "--a", "fz_nan.npy", "--b", "fz_b.npy", "--format", "e4m3fnuz", *X, "--out", "o.npy", check=_nan("o.npy", 0x7FFFFFFF))
    c(G, "err", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "e5m2", *X)
    c(G, "err", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--a-format", "e4m3fnuz", "--b-format", "e4m3", *X)
    c(G, "err", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "fp8", *X, check=None)
    c(G, "err", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "e4m3fnuz", "--gpu", "MI250X")
    c(G, "err", "gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--gpu", "MI300X")  # uint8 without a format
    c(G, "ok", "gemm", "--random", "8x8x40", "--format", "e4m3fnuz", *X, "--out", "o.npy")
    c(G, "err", "gemm", "--random", "8x8x40", "--format", "e4m3", *X)
    c(G, "ok", "gemm", "--random", "8x8x40", "--format", "tf32", *X, "--out", "o.npy")
    c(G, "err", "gemm", "--random", "8x8x40", "--format", "e2m1", *X)
    c(G, "ok", "gemm", "--a", "a_f32.npy", "--b", "b_f32.npy", *X, "--instr", "mfma.xf32.tf32.f32.k8", "--out", "o.npy", check=_like("o.npy", "ref_xf32.npy"))
    c(G, "ok", "gemm", "--a", "a_f32.npy", "--b", "b_f32.npy", *X, "--instr", "MFMA.XF32.TF32.F32.K8", "--out", "o.npy", check=_like("o.npy", "ref_xf32.npy"))
    c(G, "err", "gemm", "--a", "a_f32.npy", "--b", "b_f32.npy", "--gpu", "MI250X", "--instr", "mfma.xf32.tf32.f32.k8")
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--instr", "mfma.xf32.tf32.f32.k8")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--instr", "mfma", "--out", "o.npy", check=_like("o.npy", "ref_MI300X.npy"))
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--instr", "mfma.f16.f32.k8", "--out", "o.npy")
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--instr", "mfma.f16.f32.k15")
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--instr", "mfma.bf16.f32.k16")
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--instr", "wgmma")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--c", "c32.npy", *X, "--alpha", "2", "--beta", "0.5", "--out", "o.npy", check=_like("o.npy", "ref_ab.npy"))
    c(G, "ok", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--c", "c32.npy", *X, "--out", "o.npy", check=_words("o.npy", _w(18.0)))
    c(G, "ok", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--c", "c16.npy", *X, "--out", "o.npy")
    c(G, "ok", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--c", "c32.npy", *X, "--alpha", "0", "--out", "o.npy", check=_words("o.npy", W1))
    c(G, "ok", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--c", "c32.npy", *X, "--beta", "0", "--out", "o.npy", check=_words("o.npy", W17))
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--c", "c_bad.npy", *X)
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--beta", "2")
    c(G, "ok", "gemm", "--a", "a17.npy", "--b", "b17.npy", *X, "--split-k", "2", "--out", "o.npy", check=_like("o.npy", "ref_sk2.npy"))
    c(G, "ok", "gemm", "--a", "a17.npy", "--b", "b17.npy", *X, "--schedule", "chain", "--out", "o.npy")
    c(G, "ok", "gemm", "--a", "a17.npy", "--b", "b17.npy", *X, "--schedule", "stream-k", "--out", "o.npy")
    c(G, "any", "gemm", "--a", "a17.npy", "--b", "b17.npy", *X, "--schedule", "auto")
    c(G, "err", "gemm", "--a", "a17.npy", "--b", "b17.npy", *X, "--schedule", "deepgemm-fp8")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--model", "mi100", "--out", "o.npy", check=_like("o.npy", "ref_m100.npy"))
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--model", "AUTO", "--out", "o.npy", check=_like("o.npy", "ref_MI300X.npy"))
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--model", "H100")
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--model", "nope.json")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--dtype", "f16", "--out", "o.npy", check=_like("o.npy", "ref_f16out.npy"))
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--dtype", "BF16", "--out", "o.npy")
    # fp8 D: MI300X writes fnuz (16 = 2^4: e4m3fnuz bias 8, exponent 12: 0 1100 000 = 0x60;
    # e5m2fnuz bias 16, exponent 20: 0 10100 00 = 0x50), not OCP's e4m3; MI250X has no fp8
    c(G, "ok", "gemm", "--a", "o16a32.npy", "--b", "o16b32.npy", *X, "--dtype", "e4m3fnuz", "--out", "o_fz.npy", check=_bytes("o_fz.npy", 0x60))
    c(G, "ok", "gemm", "--a", "o16a32.npy", "--b", "o16b32.npy", *X, "--dtype", "E5M2FNUZ", "--out", "o_fz.npy", check=_bytes("o_fz.npy", 0x50))
    c(G, "err", "gemm", "--a", "o16a32.npy", "--b", "o16b32.npy", *X, "--dtype", "e4m3")
    c(G, "err", "gemm", "--a", "o16a32.npy", "--b", "o16b32.npy", "--gpu", "MI250X", "--dtype", "e4m3fnuz")
    c(G, "err", "gemm", "--a", "o16a32.npy", "--b", "o16b32.npy", "--gpu", "H100", "--dtype", "e5m2fnuz")
    c(G, "err", "gemm", "--a", "o16a32.npy", "--b", "o16b32.npy", *X, "--dtype", "e4m3fnuz", "--compare", "H100")
    c(G, "ok", "gemm", "--random", "8x8x40", "--format", "e5m2fnuz", *X, "--out", "o.npy")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--compare", "H100")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--compare", "MI250X", "--verdict-seconds", "1")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--compare", "mi100", "--compare-instr", "mfma", "--verdict-seconds", "1")
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--compare", "MI250X", "--compare-instr", "wgmma")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--compare", "MI250X", "--picture", "p.png", "--verdict-seconds", "1", check=lambda r, m: None if "p.png" in m else "no p.png")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--exact")
    c(G, "ok", "gemm", "--a", "a.npy", "--b", "b.npy", *X, "--json", "g.json")
    c(G, "ok", "gemm", "--a", "a_big.npy", "--b", "b_big.npy", *X, "--out", "o.npy")
    for bad in ("gfx942", "MI300", "MI325X", "MI355X", "MI300X ", "RX7900"):
        c(G, "err" if bad.strip() != "MI300X" else "ok", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", bad)
    c(G, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--compare", "gfx90a")

    F = "fit-gemm and gemm-probe on AMD"
    c(F, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", "--gpu", "MI300X")
    c(F, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI250X.npy", "--gpu", "mi250x")
    c(F, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI100.npy", "--gpu", "MI100", "--json", "-")
    c(F, "any", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI100.npy", "--gpu", "MI300X")
    c(F, "ok", "fit-gemm", "--a", "ba.npy", "--b", "bb.npy", "--format", "bf16", "--d", "refbf_MI300X.npy", "--gpu", "MI300X")
    c(F, "ok", "fit-gemm", "--a", "a17.npy", "--b", "b17.npy", "--d", "ref_sk2.npy", "--gpu", "MI300X")
    c(F, "err", "fit-gemm", "--a", "a_i8.npy", "--b", "b_i8.npy", "--d", "ref_MI300X.npy", "--gpu", "MI300X")
    c(F, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", "--gpu", "gfx942")
    c(F, "err", "fit-gemm", "--a", "fz_a.npy", "--b", "fz_b.npy", "--format", "e4m3", "--d", "ref_MI300X.npy", "--gpu", "MI300X")
    c(F, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--c", "c32.npy", "--alpha", "2", "--beta", "0.5", "--d", "ref_ab.npy", "--gpu", "MI300X")
    c(F, "ok", "fit-gemm", "--a", "fr_a.npy", "--b", "fr_b.npy", "--format", "e4m3fnuz", "--d", "fr_d.npy", "--gpu", "MI300X")
    c(F, "ok", "fit-gemm", "--a", "fr_a.npy", "--b", "fr_b.npy", "--format", "e4m3fnuz", "--d", "fr_d8.npy", "--d-format", "e4m3fnuz", "--gpu", "MI300X")
    c(F, "err", "fit-gemm", "--a", "fr_a.npy", "--b", "fr_b.npy", "--format", "e4m3fnuz", "--d", "fr_d8.npy", "--d-format", "e4m3", "--gpu", "MI300X")
    c(F, "err", "fit-gemm", "--a", "fr_a.npy", "--b", "fr_b.npy", "--format", "e4m3", "--d", "fr_d.npy", "--gpu", "MI300X")
    c(F, "err", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "fr_d8.npy", "--d-format", "e4m3fnuz", "--gpu", "H100")
    for g in AMD:
        c(F, "ok", "gemm-probe", "--gpu", g, "--format", "f16", "--m", "16", "--n", "16", "--k", "64", "--out", f"gp_{g}")
        c(F, "ok", "gemm-probe", "--gpu", g, "--format", "bf16", "--m", "16", "--n", "16", "--k", "64", "--out", f"gpb_{g}")
        c(F, "err", "gemm-probe", "--gpu", g, "--format", "e4m3", "--m", "16", "--n", "16", "--k", "64", "--out", f"gpe_{g}")
    c(F, "any", "gemm-probe", "--gpu", "MI300X", "--format", "tf32", "--m", "16", "--n", "16", "--k", "64", "--out", "gpt")
    c(F, "err", "gemm-probe", "--gpu", "MI250X", "--format", "e5m2", "--m", "16", "--n", "16", "--k", "64", "--out", "gp5")
    c(F, "err", "gemm-probe", "--gpu", "MI300X", "--format", "f16", "--m", "0", "--n", "16", "--k", "64", "--out", "gp0")

    S = "sim:mi300x ladder, validate, run-case, mfma-check"
    LAD = ["ladder", "--validate", "0"]
    c(S, "ok", *LAD, "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma")
    c(S, "ok", *LAD, "--format", "bf16", "--device", "sim:mi250x", "--steps", "mfma")
    c(S, "ok", *LAD, "--format", "e4m3fnuz", "--device", "sim:mi300x", "--steps", "mfma")
    c(S, "err", *LAD, "--format", "e4m3", "--device", "sim:mi300x")
    c(S, "err", *LAD, "--format", "e4m3fnuz", "--device", "sim:mi100")
    # tf32 operands on AMD are f32 words: the f32 MFMA (docs/amd.md, as tcprobe.matmul), named
    c(S, "ok", *LAD, "--format", "tf32", "--device", "sim:mi100", "--steps", "mfma", check=_says("mfma.f32.f32.k4"))
    c(S, "ok", *LAD, "--datapath", "mfma.xf32.tf32.f32.k8", "--device", "sim:mi300x", "--steps", "mfma")
    c(S, "err", *LAD, "--datapath", "mfma.f16.f32.k15", "--device", "sim:mi300x")
    c(S, "err", *LAD, "--format", "f16", "--device", "sim:mi300x", "--instr", "mma")
    c(S, "err", *LAD, "--format", "f16", "--device", "sim:mi300x", "--dtype", "f16")
    c(S, "err", *LAD, "--format", "f16", "--device", "sim:mi300x", "--dtype", "s32")
    c(S, "err", *LAD, "--format", "f16", "--device", "sim:mi300x", "--steps", "nope")
    c(S, "any", *LAD, "--format", "f16", "--device", "sim:mi300x", "--steps", "slice")
    c(S, "any", *LAD, "--format", "f16", "--device", "sim:mi300x", "--steps", "truncation")
    c(S, "err", "ladder", "--format", "f16", "--device", "sim:mi300x", "--validate", "-3")
    c(S, "ok", "ladder", "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma", "--validate", "5", "--seed", "3", "--evidence", "0")
    c(S, "ok", "ladder", "--format", "f16", "--device", "sim:mi300x", "--steps", "mfma", "--validate", "0", "--json", "-", check=lambda r, m: None if r.stdout.lstrip().startswith("{") else "stdout not JSON")
    c(S, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "50", "--out", "v1")
    c(S, "ok", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "50", "--model", "mi250x", "--out", "v2")
    c(S, "ok", "validate", "--format", "e5m2fnuz", "--device", "sim:mi300x", "--cases", "30", "--out", "v3")
    c(S, "ok", "validate", "--datapath", "mfma.fp8.e4m3fnuzxe5m2fnuz.f32.k32", "--device", "sim:mi300x", "--cases", "30", "--out", "v4")
    c(S, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "0")
    c(S, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "10", "--model", "H100", "--out", "v5")
    c(S, "err", "validate", "--format", "e4m3", "--device", "sim:mi300x", "--cases", "10", "--out", "v6")
    c(S, "any", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "10", "--suite", "sparse", "--out", "v7")
    c(S, "ok", "validate", "--format", "f16", "--device", "sim:mi100", "--cases", "20", "--suite", "edge", "--out", "v8")
    c(S, "err", "validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "10", "--instr", "wgmma", "--out", "v9")
    RC = ["run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k16"]
    c(S, "ok", *RC, "--a", "0x3c00", "--b", "0x3c00", "--c", "0", check=_says("0x3f800000"))
    c(S, "ok", *RC, "--a", "0x7e00", "--b", "0x3c00", "--c", "0", check=_says("0x7fffffff"))
    c(S, "ok", *RC, "--a", "0x0001", "--b", "0x3c00", "--c", "0", check=_says("0x33800000"))
    c(S, "err", *RC, "--a", "0x10000", "--b", "0x3c00", "--c", "0")
    c(S, "err", *RC, "--a", "0x3c00", "--b", "0x3c00", "--c", "0x100000000")
    c(S, "err", *RC, "--a", "zz", "--b", "0x3c00", "--c", "0")
    c(S, "err", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.f16.f32.k17", "--a", "0x3c00", "--b", "0x3c00", "--c", "0")
    c(S, "err", "run-case", "--device", "sim:mi300x", "--datapath", "mma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0")
    c(S, "err", "run-case", "--device", "sim:h100", "--datapath", "mfma.f16.f32.k16", "--a", "0x3c00", "--b", "0x3c00", "--c", "0")
    c(S, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.fp8.e4m3fnuz.f32.k32", "--a", "0x38", "--b", "0x38", "--c", "0", check=_says("0x3e800000"))
    c(S, "ok", "run-case", "--device", "sim:mi300x", "--datapath", "mfma.fp8.e4m3fnuz.f32.k32", "--a", "0x80", "--b", "0x38", "--c", "0", check=_says("0x7fffffff"))
    c(S, "ok", "mfma-check", "--arch", "gfx942", "--json", "mc.json")
    c(S, "err", "mfma-check", "--arch", "gfx9999")
    c(S, "err", "mfma-check", "--arch", "")
    c(S, "err", "mfma-check", "--arch", "sm_90")
    c(S, "any", "mfma-check", "--arch", "GFX942,gfx942")
    c(S, "any", "mfma-check", "--arch", "MI300X")

    P = "AMD TOML profiles"
    for name, exp in MFMA_EXPECT.items():
        gpu = MFMA_TOMLS[name].split('"')[1] if MFMA_TOMLS[name].startswith("gpu") else "MI300X"
        dp = MFMA_DP.get(gpu.upper(), "mfma.f16.f32.k16")
        c(P, exp, "run-case", "--device", f"sim:m_{name}.toml", "--datapath", dp, "--a", "0x3c00", "--b", "0x3c00", "--c", "0",
          check=_says("0x3f800000") if exp == "ok" else None)
    c(P, "ok", "ladder", "--format", "f16", "--device", "sim:m_grouped.toml", "--validate", "0", "--steps", "mfma")
    c(P, "ok", "validate", "--format", "f16", "--device", "sim:amd_ok.toml", "--cases", "20", "--out", "vt")
    c(P, "err", "ladder", "--format", "f16", "--device", "sim:m_neg.toml", "--validate", "0")
    c(P, "err", "validate", "--format", "f16", "--device", "sim:m_frac.toml", "--cases", "5", "--out", "vt2")
    c(P, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--model", "m_neg.toml")
    # a sim profile is a device, not a model: gemm names --device sim:PATH.toml
    c(P, "err", "gemm", "--a", "o17a.npy", "--b", "o17b.npy", "--gpu", "MI300X", "--model", "m_upper.toml")
    c(P, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--model", "amd_ok.toml")
    c(P, "err", "gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--model", "amd_ok.toml")
    c(P, "ok", "fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "ref_MI300X.npy", "--gpu", "MI300X")
    return out


PRELUDE = PRELUDE10 + r'''
import ml_dtypes
E4Z, E5Z = ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz
def MX(a=None, b=None, c=None, **kw):
    kw.setdefault("gpu", "MI300X")
    return tcprobe.matmul(a16 if a is None else a, b16 if b is None else b, c, **kw)
def words(x):
    return sorted(set(np.asarray(x, np.float32).view(np.uint32).ravel().tolist()))
def tall(t, word):
    t = t.detach().float().contiguous()
    got = sorted(set(t.view(torch.int32).numpy().view(np.uint32).ravel().tolist()))
    assert got == [word], f"words {[hex(x) for x in got[:3]]}, not {hex(word)}"
def EX(fn, gpu="MI300X", **kw):
    return E(fn, gpu=gpu, **kw)
ones16 = np.ones((8, 16), np.float16); ones16b = np.ones((16, 8), np.float16)
O = torch.ones(8, 16, dtype=torch.bfloat16); OB = torch.ones(16, 8, dtype=torch.bfloat16)
O17 = torch.ones(8, 17, dtype=torch.float16); OB17 = torch.ones(17, 8, dtype=torch.float16)
X32 = torch.randn(8, 16, generator=g); Y32 = torch.randn(16, 8, generator=g)
'''

M_ = "API matmul on AMD"
D_ = "API dot on AMD"
E_ = "emulate on AMD"
T_ = "emulate f32 (tf32 on/off) on AMD"
S_ = "emulate fp8 _scaled_mm on AMD"
F_ = "API fit_gemm on AMD"

W = dict(W16=W16, W17=W17, W8=W8, W4=W4, W2=W2, W1=W1)


def _api():
    out = []
    for g in AMD:
        out += [
            (M_, "ok", f"assert words(MX(ones16, ones16b, gpu='{g}')) == [{W16}]"),
            (M_, "ok", f"assert words(MX(np.ones((8, 17), np.float16), np.ones((17, 8), np.float16), gpu='{g}')) == [{W17}]"),
            (M_, "ok", f"assert words(MX(np.ones((8, 17), BF), np.ones((17, 8), BF), gpu='{g}')) == [{W17}]"),
            (M_, "ok", f"assert words(MX(np.ones((8, 17), np.float32), np.ones((17, 8), np.float32), gpu='{g}')) == [{W17}]"),
            (M_, "ok", f"d = MX(np.ones((1, 16), np.float16), np.ones((16, 1), np.float16), gpu='{g}'); assert d.shape == (1, 1) and words(d) == [{W16}]"),
            (M_, "ok", f"d = MX(np.ones((8, 0), np.float16), np.ones((0, 8), np.float16), gpu='{g}'); assert d.shape == (8, 8) and words(d) == [0]"),
            (M_, "ok", f"d = MX(np.full((8, 16), np.inf, np.float16), ones16b, gpu='{g}'); assert words(d) == [{INF}]"),
            (M_, "ok", f"d = MX(np.full((8, 16), np.inf, np.float16), np.zeros((16, 8), np.float16), gpu='{g}'); assert np.isnan(d).all()"),
            (M_, "ok", f"d = MX(np.full((8, 16), 65504, np.float16), np.full((16, 8), 65504, np.float16), gpu='{g}'); assert words(d) == [{BIG}]"),
            (M_, "err", f"MX(a16.astype(np.int8), b16.astype(np.int8), gpu='{g}')"),
            (M_, "err", f"MX(a16.astype(ml_dtypes.float8_e4m3fn), b16.astype(ml_dtypes.float8_e4m3fn), gpu='{g}')"),
            (M_, "err", f"MX(gpu='{g}', dtype='s32')"),
            (M_, "err", f"MX(gpu='{g}', instr='mma')"),
            (D_, "ok", f"x = tcprobe.dot([0x3c00] * 8, [0x3c00] * 8, 0, datapath='mfma.f16.f32.k8', gpu='{g}'); assert int(np.asarray(x).ravel()[0]) == {W8}"),
        ]
    out += [
        (M_, "ok", f"assert words(MX(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, E4Z))) == [{W8}]"),
        (M_, "ok", f"assert words(MX(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.25, E5Z))) == [{W4}]"),
        (M_, "ok", f"assert words(MX(np.full((8, 17), 0.5, E4Z), np.full((17, 8), 0.5, E4Z))) == [{_w(4.25)}]"),
        (M_, "ok", "d = MX(np.full((8, 32), np.nan, E4Z), np.full((32, 8), 0.5, E4Z)); assert words(d) == [0x7FFFFFFF]"),
        (M_, "err", "MX(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, E4Z), gpu='MI250X')"),
        (M_, "err", "MX(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, ml_dtypes.float8_e4m3fn))"),
        (M_, "ok", "d = MX(np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, E4Z), dtype='f16'); assert d.dtype == np.float16 and (d == 8).all()"),
        (M_, "err", "MX(dtype='e4m3')"),
        (M_, "err", "MX(dtype='e5m2')"),
        (M_, "ok", "d = MX(ones16, ones16b, dtype='e4m3fnuz'); assert str(d.dtype) == 'float8_e4m3fnuz' and set(d.view(np.uint8).ravel().tolist()) == {0x60}"),
        (M_, "ok", "d = MX(-ones16, ones16b, dtype=E5Z); assert str(d.dtype) == 'float8_e5m2fnuz' and set(d.view(np.uint8).ravel().tolist()) == {0xD0}"),
        (M_, "ok", "d = MX(torch.ones(8, 16, dtype=torch.float16), torch.ones(16, 8, dtype=torch.float16), dtype=torch.float8_e4m3fnuz); assert d.dtype == torch.float8_e4m3fnuz and (d.float() == 16).all()"),
        (M_, "err", "MX(dtype='e4m3fnuz', gpu='MI250X')"),
        (M_, "err", "MX(dtype='e4m3fnuz', gpu='MI100')"),
        (M_, "err", "MX(dtype='e4m3fnuz', gpu='H100')"),
        (M_, "err", "MX(dtype=ml_dtypes.float8_e5m2fnuz, gpu='H100')"),
        (M_, "ok", "d = MX(dtype='e4m3', gpu='H100'); assert str(d.dtype) == 'float8_e4m3fn'"),
        (M_, "err", "MX(schedule={'out': 'e4m3'})"),
        (M_, "ok", "d = MX(ones16, ones16b, schedule={'out': 'e4m3fnuz'}); assert set(d.view(np.uint8).ravel().tolist()) == {0x60}"),
        (M_, "err", "MX(gpu='H100', schedule={'out': 'e5m2fnuz'})"),
        (M_, "ok", "d = MX(np.full((8, 16), 2.0 ** -24, np.float16), ones16b); assert words(d) == [0x35800000]"),
        (M_, "ok", "d = MX(np.full((8, 16), 2.0 ** -24, np.float16), ones16b, gpu='MI100'); assert words(d) == [0x35800000]"),
        (M_, "ok", "d = MX(np.full((8, 16), np.nan, np.float16), ones16b); assert words(d) == [0x7FFFFFFF]"),
        (M_, "ok", f"d = MX(ones16, ones16b, np.ones((8, 8), np.float32), alpha=2, beta=0.5); assert words(d) == [{_w(32.5)}]"),
        (M_, "ok", f"d = MX(ones16, ones16b, np.ones((8, 8), np.float32), alpha=0.0, beta=1.0); assert words(d) == [{W1}]"),
        (M_, "ok", f"d = MX(ones16, ones16b, np.ones((8, 8), np.float32), alpha=-1, beta=0); assert words(d) == [{_w(-16.0)}]"),
        (M_, "err", "MX(c=np.zeros((8, 7), np.float32))"),
        (M_, "err", "MX(beta=2.0)"),
        (M_, "err", "MX(alpha='2')"),
        (M_, "ok", "same(MX(instr='MFMA'), MX(instr='mfma'))"),
        (M_, "ok", "same(MX(instr='mfma.f16.f32.k16'), MX())"),
        (M_, "err", "MX(instr='mfma.f16.f32.k15')"),
        (M_, "err", "MX(instr='mfma.bf16.f32.k16')"),
        (M_, "ok", "same(MX(gpu=' mi300x '), MX())"),
        (M_, "err", "MX(gpu='MI300')"),
        (M_, "err", "MX(gpu='MI355X')"),
        (M_, "err", "MX(gpu='')"),
        (M_, "ok", "same(MX(model='MI100'), MX(gpu='MI100'))"),
        (M_, "err", "MX(model='H100')"),
        (M_, "err", "MX(model='nope')"),
        (M_, "ok", "same(MX(schedule='CHAIN'), MX(schedule='chain'))"),
        (M_, "ok", "d = MX(a16.astype(np.float32), b16.astype(np.float32), instr='mfma.xf32.tf32.f32.k8'); assert d.dtype == np.float32"),
        (M_, "ok", f"d = MX(np.full((8, 8), 1 + 2.0 ** -11 + 2.0 ** -12, np.float32), np.ones((8, 8), np.float32), instr='mfma.xf32.tf32.f32.k8'); assert words(d) == [{W8}]"),
        (M_, "err", "MX(a16.astype(np.float32), b16.astype(np.float32), gpu='MI100', instr='mfma.xf32.tf32.f32.k8')"),
        (M_, "err", "MX(a16, b16.astype(BF))"),
        (M_, "err", "MX(np.ones((8, 16), np.float64), np.ones((16, 8), np.float64))"),
        (M_, "ok", "d = MX(np.zeros((0, 16), np.float16), ones16b); assert d.shape == (0, 8)"),
        (M_, "ok", "d = MX(np.ones((8, 16), np.float16), np.ones((16, 0), np.float16)); assert d.shape == (8, 0)"),
        (M_, "ok", "d = MX(torch.ones(8, 16, dtype=torch.float16), torch.ones(16, 8, dtype=torch.float16)); assert words(np.asarray(d)) == [0x41800000]"),
        (M_, "ok", "d = MX(np.full((8, 16), 2.0 ** 100, BF), np.full((16, 8), 2.0 ** 100, BF)); assert words(d) == [0x7F800000]"),
        (M_, "ok", "d = MX(np.full((8, 16), 2.0 ** -70, BF), np.full((16, 8), 2.0 ** -70, BF), gpu='MI250X'); assert words(d) == [0]"),
        (D_, "ok", "x = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0x3f800000, datapath='mfma.f16.f32.k16', gpu='MI300X'); assert int(np.asarray(x).ravel()[0]) == 0x41880000"),
        (D_, "ok", "x = tcprobe.dot([0x38] * 32, [0x38] * 32, 0, datapath='mfma.fp8.e4m3fnuz.f32.k32', gpu='MI300X'); assert int(np.asarray(x).ravel()[0]) == 0x41000000"),
        (D_, "err", "tcprobe.dot([0x3c00] * 15, [0x3c00] * 15, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')"),
        (D_, "ok", "x = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI100'); assert int(np.asarray(x).ravel()[0]) == 0x41800000"),
        (D_, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k32', gpu='MI100')"),
        (D_, "err", "tcprobe.dot([0x3c00] * 32, [0x3c00] * 32, 0, datapath='mfma.fp8.e4m3.f32.k32', gpu='MI300X')"),
        (D_, "err", "tcprobe.dot([0x1ffff] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')"),
        (D_, "err", "tcprobe.dot([-1] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X')"),
        (D_, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 2 ** 40, datapath='mfma.f16.f32.k16', gpu='MI300X')"),
        (D_, "ok", "x = tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', model='mi300x'); assert int(np.asarray(x).ravel()[0]) == 0x41800000"),
        (D_, "err", "tcprobe.dot([0x3c00] * 16, [0x3c00] * 16, 0, datapath='mfma.f16.f32.k16', model='h100')"),
        # emulate on AMD
        (E_, "ok", f"d, _ = EX(lambda: O @ OB); tall(d, {W16})"),
        (E_, "ok", f"d, _ = EX(lambda: O17 @ OB17); tall(d, {W17})"),
        (E_, "ok", f"d, _ = EX(lambda: O17 @ OB17, gpu='MI100'); tall(d, {W17})"),
        (E_, "ok", f"d, _ = EX(lambda: O @ OB, gpu='MI250X'); tall(d, {W16})"),
        (E_, "ok", "d, _ = EX(lambda: A @ B); tm(d, torch.from_numpy(np.asarray(MX(A.float().numpy().astype(BF), B.float().numpy().astype(BF), dtype='bf16')).view(np.uint16)).view(torch.bfloat16))"),
        (E_, "ok", f"d, _ = EX(lambda: torch.bmm(O.expand(3, 8, 16), OB.expand(3, 16, 8))); tall(d, {W16}); assert d.shape == (3, 8, 8)"),
        (E_, "ok", f"d, _ = EX(lambda: torch.addmm(torch.ones(8, 8, dtype=torch.bfloat16), O, OB, beta=0.5, alpha=2)); tall(d, {_w(32.5)})"),
        (E_, "ok", f"d, _ = EX(lambda: torch.addmm(torch.ones(8, 8, dtype=torch.bfloat16), O, OB, beta=0, alpha=1)); tall(d, {W16})"),
        (E_, "ok", f"d, _ = EX(lambda: torch.addmm(torch.ones(8, dtype=torch.bfloat16), O, OB)); tall(d, {W17})"),
        (E_, "ok", f"d, _ = EX(lambda: torch.baddbmm(torch.ones(2, 8, 8, dtype=torch.bfloat16), O.expand(2, 8, 16), OB.expand(2, 16, 8), alpha=0.5)); tall(d, {_w(9.0)})"),
        (E_, "ok", f"d, _ = EX(lambda: F.linear(O, OB.t().contiguous(), torch.ones(8, dtype=torch.bfloat16))); tall(d, {W17})"),
        (E_, "ok", f"d, _ = EX(lambda: torch.ones(1, 16, dtype=torch.float16) @ torch.ones(16, 1, dtype=torch.float16)); tall(d, {W16})"),
        (E_, "ok", "d, _ = EX(lambda: torch.ones(8, 0, dtype=torch.bfloat16) @ torch.ones(0, 8, dtype=torch.bfloat16)); tall(d, 0)"),
        (E_, "ok", "d, _ = EX(lambda: torch.ones(0, 16, dtype=torch.bfloat16) @ OB); assert d.shape == (0, 8)"),
        (E_, "ok", f"d, _ = EX(lambda: torch.ones(16, dtype=torch.float16) @ torch.ones(16, dtype=torch.float16)); tall(d, {W16})"),
        (E_, "ok", f"d, _ = EX(lambda: torch.mv(O, torch.ones(16, dtype=torch.bfloat16))); tall(d, {W16})"),
        (E_, "ok", "d, _ = EX(lambda: torch.full((8, 16), float('inf'), dtype=torch.bfloat16) @ torch.zeros(16, 8, dtype=torch.bfloat16)); assert torch.isnan(d).all()"),
        (E_, "ok", "d, _ = EX(lambda: torch.full((8, 16), float('nan'), dtype=torch.float16) @ torch.ones(16, 8, dtype=torch.float16)); assert torch.isnan(d).all()"),
        (E_, "ok", "x = torch.ones(1, 1, 8, 8, dtype=torch.bfloat16); k = torch.ones(1, 1, 3, 3, dtype=torch.bfloat16); d, r = EX(lambda: F.conv2d(x, k)); tall(d, 0x41100000)"),
        (E_, "ok", "x = torch.ones(1, 2, 8, dtype=torch.float16); k = torch.ones(3, 2, 3, dtype=torch.float16); d, r = EX(lambda: F.conv1d(x, k)); tall(d, 0x40C00000)"),
        (E_, "ok", "d, _ = EX(lambda: torch.einsum('ij,jk->ik', O, OB)); tall(d, 0x41800000)"),
        (E_, "err", "EX(lambda: O @ OB, gpu='gfx942')"),
        (E_, "err", "EX(lambda: O @ OB, gpu='MI300')"),
        (E_, "err", "EX(lambda: O @ OB, instr='mma')"),
        (E_, "err", "EX(lambda: O @ OB, strict=True)"),
        (E_, "ok", f"d, _ = EX(lambda: O @ OB, strict='routes'); tall(d, {W16})"),
        (E_, "ok", f"d, _ = EX(lambda: O @ OB, schedule='chain'); tall(d, {W16})"),
        (E_, "err", "EX(lambda: A @ B, model='MI100')"),  # MI300X's bf16 k16 v_mfma: MI100 has none
        (E_, "ok", "x, y = A.half(), B.half(); d, _ = EX(lambda: x @ y, model='MI100'); e, _ = EX(lambda: x @ y, gpu='MI100'); tsame(d, e)"),
        (E_, "err", "EX(lambda: A @ B, model='H100')"),
        (E_, "ok", "d, _ = EX(lambda: torch.mm(A, B, out_dtype=torch.float32) if hasattr(torch.mm, '__wrapped__') else (A @ B).float()); assert d.shape == (8, 8)"),
        (E_, "ok", "d, rep = EX(lambda: (A @ B, torch.bmm(A[None], B[None]))); assert rep.routed >= 2"),
        (E_, "ok", "x = torch.ones(8, 16, dtype=torch.int8); y = torch.ones(16, 8, dtype=torch.int8); d = None\ntry:\n    d, _ = EX(lambda: torch._int_mm(torch.ones(32, 32, dtype=torch.int8), torch.ones(32, 32, dtype=torch.int8)))\nexcept ValueError as e:\n    assert 'integer' in str(e) or 'int' in str(e), str(e)\nelse:\n    assert (d == 32).all()"),
        # f32 with tf32 off / on
        (T_, "ok", f"d, _ = EX(lambda: torch.ones(8, 17) @ torch.ones(17, 8)); tall(d, {W17})"),
        (T_, "ok", f"d, _ = EX(lambda: torch.ones(8, 17) @ torch.ones(17, 8), gpu='MI100'); tall(d, {W17})"),
        (T_, "ok", f"x = torch.full((8, 8), 1 + 2.0 ** -11 + 2.0 ** -12); d, _ = EX(lambda: x @ torch.ones(8, 8)); tall(d, {_w(8 * (1 + 2.0 ** -11 + 2.0 ** -12))})"),
        (T_, "ok", f"x = torch.full((8, 8), 1 + 2.0 ** -11 + 2.0 ** -12)\ntorch.backends.cuda.matmul.allow_tf32 = True\ntry:\n    d, _ = EX(lambda: x @ torch.ones(8, 8))\nfinally:\n    torch.backends.cuda.matmul.allow_tf32 = False\ntall(d, {W8})"),
        (T_, "ok", f"x = torch.full((8, 8), 1 + 2.0 ** -11 + 2.0 ** -12)\ntorch.set_float32_matmul_precision('high')\ntry:\n    d, _ = EX(lambda: x @ torch.ones(8, 8))\nfinally:\n    torch.set_float32_matmul_precision('highest')\ntall(d, {W8})"),
        (T_, "ok", f"x = torch.full((8, 8), 1 + 2.0 ** -11 + 2.0 ** -12)\ntorch.set_float32_matmul_precision('high')\ntry:\n    d, _ = EX(lambda: x @ torch.ones(8, 8), gpu='MI250X')\nfinally:\n    torch.set_float32_matmul_precision('highest')\ntall(d, {_w(8 * (1 + 2.0 ** -11 + 2.0 ** -12))})"),
        (T_, "ok", "x = torch.full((8, 8), 1 + 2.0 ** -11 + 2.0 ** -12)\ntorch.set_float32_matmul_precision('medium')\ntry:\n    d, _ = EX(lambda: x @ torch.ones(8, 8))\nfinally:\n    torch.set_float32_matmul_precision('highest')\nassert d.dtype == torch.float32"),
        (T_, "ok", "d, _ = EX(lambda: X32 @ Y32); e = MX(X32.numpy(), Y32.numpy()); assert tw(d) == np.asarray(e).view(np.int32).tolist()"),
        (T_, "ok", f"d, _ = EX(lambda: torch.addmm(torch.ones(8, 8), torch.ones(8, 16), torch.ones(16, 8), alpha=2, beta=0.5)); tall(d, {_w(32.5)})"),
        (T_, "ok", f"d, _ = EX(lambda: torch.bmm(torch.ones(2, 8, 17), torch.ones(2, 17, 8))); tall(d, {W17})"),
        (T_, "ok", "d, _ = EX(lambda: torch.full((8, 8), 3e38) @ torch.full((8, 8), 3e38)); tall(d, 0x7F800000)"),
        (T_, "ok", f"d, _ = EX(lambda: torch.full((8, 8), 2.0 ** -140) @ torch.full((8, 8), 2.0 ** 20)); tall(d, {_w(8 * 2.0 ** -120)})"),
        (T_, "ok", "d, _ = EX(lambda: torch.ones(8, 8, dtype=torch.float64) @ torch.ones(8, 8, dtype=torch.float64)); assert (d == 8).all()"),
        # fp8 _scaled_mm
        (S_, "ok", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); b = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t(); one = torch.tensor(1.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float32))\nassert (d == 8).all() and rep.routed == 1, rep.fallbacks"),
        (S_, "ok", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); b = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t(); one = torch.tensor(1.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float32), strict='routes')\nassert (d == 8).all()"),
        (S_, "ok", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); b = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t(); s = torch.tensor(2.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=s, scale_b=s, out_dtype=torch.bfloat16))\nassert d.dtype == torch.bfloat16 and (d == 32).all() and rep.routed == 1"),
        (S_, "ok", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); b = torch.full((32, 16), 0.5).to(torch.float8_e4m3fnuz).t().contiguous().t(); one = torch.tensor(1.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float32), gpu='H100')\nassert rep.routed == 0 and rep.fallbacks"),
        (S_, "any", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fn); b = torch.full((32, 16), 0.5).to(torch.float8_e4m3fn).t().contiguous().t(); one = torch.tensor(1.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float32))"),
        (S_, "any", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fn); b = torch.full((32, 16), 0.5).to(torch.float8_e4m3fn).t().contiguous().t(); one = torch.tensor(1.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float32), strict='routes')"),
        (S_, "ok", "a = torch.full((16, 32), 0.5).to(torch.float8_e4m3fnuz); b = torch.full((32, 16), 0.5).to(torch.float8_e5m2fnuz).t().contiguous().t(); one = torch.tensor(1.0)\nd, rep = EX(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))\nassert (d == 8).all() and rep.routed == 1"),
        # fit_gemm on AMD
        (F_, "ok", "d = MX(); f = fit_gemm.fit(a16.view(np.uint16), 'f16', b16.view(np.uint16), 'f16', None, None, np.asarray(d).view(np.uint32), 'f32', gpu='MI300X'); assert f is not None"),
        (F_, "ok", "d = MX(gpu='MI250X'); f = fit_gemm.fit(a16.view(np.uint16), 'f16', b16.view(np.uint16), 'f16', None, None, np.asarray(d).view(np.uint32), 'f32', gpu='mi250x'); assert f is not None"),
        (F_, "err", "fit_gemm.fit(a16.view(np.uint16), 'f16', b16.view(np.uint16), 'f16', None, None, np.asarray(MX()).view(np.uint32), 'f32', gpu='gfx942')"),
        (F_, "err", "fit_gemm.fit(a16.view(np.uint16), 'e4m3', b16.view(np.uint16), 'e4m3', None, None, np.asarray(MX()).view(np.uint32), 'f32', gpu='MI300X')"),
        (F_, "err", "fit_gemm.fit(a16.view(np.uint16), 's8', b16.view(np.uint16), 's8', None, None, np.asarray(MX()).view(np.uint32), 'f32', gpu='MI300X')"),
    ]
    return out


API = _api()
CLI = cli_cases()
