"""The schedule axes a library GEMM on silicon needed (operand_round, c='output',
fma_on='c'), each against a reference written here: integer rounding of the
f32 words to tf32, exact rational arithmetic rounded to f32 by hand, numpy's
IEEE f32 adds and ml_dtypes' RNE casts, over tcprobe's chain preset (itself
checked against MMA-Sim in test_matmul_mmasim.py)."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import tcprobe
from tcprobe.matrix import fit_gemm
from tcprobe.matrix.schedule import PRESETS, Schedule, ScheduleError

rng = np.random.default_rng(11)
M, N, K = 4, 5, 64


def bits(x):
    return np.asarray(x).view({4: np.uint32, 2: np.uint16, 1: np.uint8}[x.dtype.itemsize])


def tf32_round(x: np.ndarray, ties_even: bool) -> np.ndarray:
    """f32 values rounded to tf32 (10 fraction bits) on their words, by hand."""
    w = x.view(np.uint32).astype(np.int64)
    low, keep = w & 0x1FFF, w >> 13
    up = (low > 0x1000) | ((low == 0x1000) & ((keep & 1 == 1) if ties_even else True))
    return ((keep + up) << 13).astype(np.uint32).view(np.float32)


def f32_rne(q: Fraction) -> np.float32:
    """The f32 nearest to the exact rational ``q`` (ties to even), by hand."""
    if q == 0:
        return np.float32(0)
    sign, q = (-1, -q) if q < 0 else (1, q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, -126)  # subnormals share the smallest exponent
    scaled = q / Fraction(2) ** (e - 23)  # the significand in units of the last place
    sig = int(scaled)
    rest = scaled - sig
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and sig & 1):
        sig += 1
    return np.float32(sign * float(Fraction(sig) * Fraction(2) ** (e - 23)))


def chain(a, b, c=None):
    return tcprobe.matmul(a, b, c, gpu="H200", instr="mma", schedule="chain")


def test_operand_round_rounds_f32_words_to_tf32_before_the_instruction():
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    a[0, :3] = np.array([0x3F801000, 0x3F803000, 0x3F800FFF], np.uint32).view(np.float32)  # ties
    for mode, even in (("rne", True), ("rna", False)):
        D = tcprobe.matmul(a, b, gpu="H200", instr="mma", schedule={"operand_round": mode})
        want = chain(tf32_round(a, even), tf32_round(b, even))
        assert np.array_equal(bits(D), bits(want)), mode
    plain = tcprobe.matmul(a, b, gpu="H200", instr="mma")
    assert not np.array_equal(bits(plain), bits(tcprobe.matmul(
        a, b, gpu="H200", instr="mma", schedule={"operand_round": "rne"})))


def test_operand_round_is_only_for_tf32_operands():
    a = np.ones((2, 16), ml_dtypes.bfloat16)
    with pytest.raises(ValueError, match="^schedule: operand_round"):
        tcprobe.matmul(a, a.T.copy(), gpu="H200", schedule={"operand_round": "rne"})
    with pytest.raises(ScheduleError, match="operand_round"):
        Schedule(operand_round="rz")


@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.75])
def test_c_output_writes_the_product_in_the_output_type_before_adding_c(alpha):
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    c = (rng.standard_normal((M, N)) * 4).astype(ml_dtypes.bfloat16)
    D = tcprobe.matmul(a, b, c, gpu="H200", instr="mma", schedule="torch-addmm-beta1",
                       alpha=alpha)
    acc = chain(a, b)
    prod = np.array([f32_rne(Fraction(float(alpha)) * Fraction(float(x))) for x in acc.ravel()],
                    np.float32).reshape(acc.shape).astype(ml_dtypes.bfloat16)
    want = (prod.astype(np.float32) + c.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(bits(D), bits(want))
    fused = tcprobe.matmul(a, b, c, gpu="H200", instr="mma", alpha=alpha)
    assert not np.array_equal(bits(D), bits(fused))  # the two places C enters differ here


def test_c_output_with_beta_zero_never_reads_c():
    a = np.ones((2, 16), ml_dtypes.bfloat16)
    nan = np.full((2, 2), np.nan, np.float32)
    D = tcprobe.matmul(a, a.T.copy(), nan, gpu="H200", schedule={"c": "output"}, beta=0)
    assert (D == 16).all()


def test_fma_on_c_keeps_beta_times_c_exact():
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    c = (rng.standard_normal((M, N)) * 16).astype(np.float32)
    alpha, beta = 0.5, 3.0
    acc = chain(a, b)
    D = tcprobe.matmul(a, b, c, gpu="H200", instr="mma", alpha=alpha, beta=beta,
                       schedule={"fma_on": "c"})
    want = np.array([f32_rne(Fraction(beta) * Fraction(float(cv)) + Fraction(alpha) * Fraction(
        float(x))) for cv, x in zip(c.ravel(), acc.ravel(), strict=True)],
                    np.float32).reshape(M, N)
    assert np.array_equal(bits(D), bits(want))
    D_acc = tcprobe.matmul(a, b, c, gpu="H200", instr="mma", alpha=alpha, beta=beta)
    want_acc = np.array([f32_rne(Fraction(alpha) * Fraction(float(x)) + Fraction(float(
        np.float32(beta) * cv))) for cv, x in zip(c.ravel(), acc.ravel(), strict=True)],
                        np.float32).reshape(M, N)
    assert np.array_equal(bits(D_acc), bits(want_acc))
    assert not np.array_equal(bits(D), bits(D_acc))
    with pytest.raises(ScheduleError, match="fma_on"):
        Schedule(fma_on="alpha")


def test_the_new_presets_are_schedules_with_evidence():
    for name in ("torch-addmm-beta1", "cublas-tf32"):
        assert "H200" in PRESETS[name].evidence and "reports/silicon" in PRESETS[name].evidence
    assert PRESETS["torch-addmm-beta1"].schedule.c == "output"
    assert PRESETS["cublas-tf32"].schedule.operand_round == "rne"


@pytest.mark.parametrize("truth", [
    Schedule(instr="mma", operand_round="rne", split_k=4, split_kind="parallel", fma_on="c"),
    Schedule(instr="mma", operand_round="rna"),
    Schedule(instr="mma", c="output"),
], ids=["tf32-rne-split4-fma-c", "tf32-rna", "c-output"])
@pytest.mark.fast_first(1)
def test_fit_gemm_finds_the_new_axes(truth):
    a = rng.standard_normal((16, 256)).astype(np.float32)
    b = rng.standard_normal((256, 8)).astype(np.float32)
    c = (rng.standard_normal((16, 8)) * 8).astype(np.float32)
    alpha, beta = (0.5, 3.0) if truth.fma_on == "c" else (1.0, 1.0)
    D = tcprobe.matmul(a, b, c, gpu="H200", schedule=truth, alpha=alpha, beta=beta)
    w = a.view(np.uint32), b.view(np.uint32), c.view(np.uint32), D.view(np.uint32)
    f = fit_gemm.fit(w[0], "tf32", w[1], "tf32", w[2], "f32", w[3], "f32", gpu="H200",
                     alpha=alpha, beta=beta)
    assert f.explained
    assert any(s.with_(instr="mma") == truth.with_(out="f32") for s in f.schedules), f.schedules
