"""Schedules (tcprobe.matrix.schedule) against independent references: the
chain preset (itself checked against MMA-Sim in test_matmul_mmasim.py) over
K ranges written here, numpy's IEEE f32 adds and ml_dtypes' RNE casts for the
reductions and conversions; fit-gemm on synthetic captures."""

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tcprobe
from tcprobe.matrix import fit_gemm
from tcprobe.matrix.schedule import PRESETS, Schedule, ScheduleError, from_value

rng = np.random.default_rng(5)
M, N, K = 4, 6, 128  # 8 instruction tiles of K = 16
A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
C = (rng.standard_normal((M, N)) * 8).astype(np.float32)


def chain(lo, hi, c=None):
    return tcprobe.matmul(A[:, lo:hi], B[lo:hi], c, gpu="H100", instr="mma", schedule="chain")


def bits(x):
    return np.asarray(x).view(np.uint32 if x.dtype.itemsize == 4 else np.uint16)


def test_default_puts_c_in_the_epilogue():
    D = tcprobe.matmul(A, B, C, gpu="H100", instr="mma")
    want = chain(0, K) + C  # acc from +0, then one f32 RNE add (alpha = beta = 1)
    assert np.array_equal(bits(D), bits(want))
    assert not np.array_equal(bits(D), bits(chain(0, K, C)))  # the chain differs here


def test_serial_split_rounds_each_split_to_the_output():
    D = tcprobe.matmul(A, B, C.astype(ml_dtypes.bfloat16), gpu="H100", instr="mma",
                       schedule={"split_k": 2, "out": "bf16"})
    d0 = (chain(0, 64) + C.astype(ml_dtypes.bfloat16).astype(np.float32)).astype(
        ml_dtypes.bfloat16)
    want = (chain(64, K) + d0.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(bits(D), bits(want))


def test_parallel_reverse_reduction_and_reverse_k_order():
    s = {"split_k": 3, "split_kind": "parallel", "reduction": "reverse", "k_order": "reverse"}
    D = tcprobe.matmul(A, B, gpu="H100", instr="mma", schedule=s)

    def rev(lo, hi):
        acc = np.zeros((M, N), np.float32)
        for t in range(hi - 16, lo - 16, -16):
            acc = chain(t, t + 16, acc)
        return acc
    p = [rev(0, 48), rev(48, 80), rev(80, 128)]  # 8 tiles as 3, 2, 3
    want = (p[2] + p[1]) + p[0]
    assert np.array_equal(bits(D), bits(want))


def test_fp8_promotion_adds_chunks_into_f32():
    a = rng.standard_normal((M, 256)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((256, N)).astype(ml_dtypes.float8_e4m3fn)
    D = tcprobe.matmul(a, b, gpu="H100", schedule={"instr": "wgmma", "promote": 2})
    reg = np.zeros((M, N), np.float32)
    for lo in range(0, 256, 64):  # wgmma fp8 K = 32: two instructions a chunk
        reg = reg + tcprobe.matmul(a[:, lo:lo + 64], b[lo:lo + 64], gpu="H100", instr="wgmma",
                                   schedule="chain")
    assert np.array_equal(bits(D), bits(reg))


def test_beta_zero_never_reads_c_and_fp8_output_saturates():
    nan = np.full((M, N), np.nan, np.float32)
    D = tcprobe.matmul(A, B, nan, gpu="H100", beta=0)
    assert np.isfinite(D).all()
    big = np.full((2, 16), 64, ml_dtypes.bfloat16)
    D8 = tcprobe.matmul(big, big.T.copy(), gpu="H100", dtype="float8_e4m3fn")
    assert (D8.view(np.uint8) == 0x7E).all()  # 65536 saturates to 448


def test_alpha_beta_unfused_is_two_products_and_an_add():
    D = tcprobe.matmul(A, B, C, gpu="H100", instr="mma", alpha=0.5, beta=3.0,
                       schedule={"fused": False})
    want = np.float32(0.5) * chain(0, K) + np.float32(3.0) * C
    assert np.array_equal(bits(D), bits(want))


@pytest.mark.parametrize("bad,match", [({"split_kind": "ring"}, "^schedule: split_kind"),
                                       ({"promote": 0}, "^schedule: promote"),
                                       ({"nope": 1}, "^schedule: unknown axis"),
                                       ("nonesuch", "^schedule: 'nonesuch'")])
def test_bad_schedules(bad, match):
    with pytest.raises(ScheduleError, match=match):
        from_value(bad)


def words(x):
    return np.ascontiguousarray(x).view({2: np.uint16, 4: np.uint32}[x.dtype.itemsize]).astype(
        np.uint32)


SYNTH = [dict(PRESETS[p].schedule.to_dict()) for p in
         ("cublas", "cutlass-splitk-serial", "splitk-parallel", "stream-k")] + [
    {"split_k": 3, "split_kind": "parallel", "reduction": "reverse", "k_order": "reverse"},
    {"split_k": 4, "k_block": 32}]


@pytest.mark.parametrize("truth", SYNTH)
def test_fit_gemm_names_the_schedule(truth):
    truth = Schedule(**{**truth, "instr": "mma", "out": "f32"})
    D = tcprobe.matmul(A, B, C, gpu="H100", schedule=truth)
    f = fit_gemm.fit(words(A), "bf16", words(B), "bf16", words(C), "f32", words(D), "f32",
                     gpu="H100")
    assert f.explained and f.mismatches == 0
    found = [s for s in f.schedules if s.instr == "mma"]
    for s in found:  # every member of the class computes D
        assert np.array_equal(bits(tcprobe.matmul(A, B, C, gpu="H100", schedule=s)), bits(D))
    assert any(s.split_k == truth.split_k and s.k_order == truth.k_order for s in found)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tcprobe", *args], capture_output=True,
                          text=True)


@pytest.mark.slow
def test_fit_gemm_cli_bad_input(tmp_path):
    np.save(tmp_path / "a.npy", words(A).astype(np.uint16))
    np.save(tmp_path / "b.npy", words(B).astype(np.uint16))
    np.save(tmp_path / "a1.npy", words(A)[:, :1].astype(np.uint16))
    np.save(tmp_path / "b1.npy", words(B)[:1].astype(np.uint16))
    np.save(tmp_path / "nan.npy", np.full((M, N), np.nan, np.float32))
    np.save(tmp_path / "i8.npy", np.zeros((M, N), np.int8))
    np.save(tmp_path / "wrong.npy", np.zeros((M + 1, N), np.float32))
    base = ["fit-gemm", "--gpu", "H100", "--format", "bf16"]
    for a, b, d, want in (("a", "b", "wrong", "d: D is"), ("a", "b", "i8", "--d: dtype int8"),
                          ("a", "b", "nan", "every word of D is NaN"),
                          ("a1", "b1", "nan", "K = 1")):
        r = run_cli(*base, "--a", str(tmp_path / f"{a}.npy"), "--b", str(tmp_path / f"{b}.npy"),
                    "--d", str(tmp_path / f"{d}.npy"))
        assert r.returncode == 2 and r.stderr.startswith("error: ") and want in r.stderr, r.stderr
