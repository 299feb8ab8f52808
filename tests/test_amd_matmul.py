"""tcprobe.matmul on AMD GPUs: the v_mfma each GPU runs (assumed: the
single-block instruction of the type with the largest K) chained over K."""

import numpy as np
import pytest

import tcprobe
from tcprobe.models.amd_profiles import blas_datapath


def test_each_gpu_picks_its_generations_mfma():
    assert blas_datapath("MI300X", "f16", "f16", "f32").id == "mfma.f16.f32.k16"
    assert blas_datapath("MI250X", "bf16", "bf16", "f32").id == "mfma.bf16_1k.bf16.f32.k16"
    assert blas_datapath("MI100", "bf16", "bf16", "f32").id == "mfma.bf16.f32.k8"
    assert blas_datapath("MI300X", "tf32", "tf32", "f32").id == "mfma.f32.f32.k4"
    with pytest.raises(ValueError, match="^A: MI100"):
        blas_datapath("MI100", "f64", "f64", "f64")


def test_mi300x_f16_matmul_truncates_where_mi100_rounds():
    # C = 1 and eight products of 2**-13 * 2**-12 = 2**-25, C as the first
    # instruction's accumulator (the chain: what one v_mfma does)
    a = np.full((1, 8), np.float16(2.0 ** -13))
    b = np.full((8, 1), np.float16(2.0 ** -12))
    c = np.ones((1, 1), np.float32)
    d300 = tcprobe.matmul(a, b, c, gpu="MI300X", schedule="chain").view(np.uint32)[0, 0]
    d100 = tcprobe.matmul(a, b, c, gpu="MI100", schedule="chain").view(np.uint32)[0, 0]
    # exact sum 1 + 8 * 2**-25 = 1 + 2**-22: MI100 (exact, one rounding) keeps it;
    # MI300X cuts the products' sum to F=24 bits below its own exponent first, also exact
    assert d100 == 0x3F800002 and d300 == 0x3F800002
    # products below C's window: 2**-26 each, four of them per L=4 block on MI100
    a2 = np.full((1, 8), np.float16(2.0 ** -13))
    b2 = np.full((8, 1), np.float16(2.0 ** -13))
    d100 = tcprobe.matmul(a2, b2, c, gpu="MI100", schedule="chain").view(np.uint32)[0, 0]
    d300 = tcprobe.matmul(a2, b2, c, gpu="MI300X", schedule="chain").view(np.uint32)[0, 0]
    assert d100 == 0x3F800000  # 1 + 4 * 2**-26 = 1 + 2**-24 rounds to even, twice
    assert d300 == 0x3F800001  # 1 + 8 * 2**-26 = 1 + 2**-23 in one L=8 block
    # C in the epilogue (the default): the products sum from +0 to 2**-23 on
    # both, exact, then 1 + 2**-23 is one f32 word
    for gpu in ("MI100", "MI300X"):
        assert tcprobe.matmul(a2, b2, c, gpu=gpu).view(np.uint32)[0, 0] == 0x3F800001


def test_bad_instruction_names_the_argument():
    a = np.ones((2, 8), np.float32)
    with pytest.raises(ValueError, match="^instr: MI100 has no tcgen05"):
        tcprobe.matmul(a, a.T.copy(), gpu="MI100", instr="tcgen05")
    with pytest.raises(ValueError, match="^gpu: MI100 \\(CDNA1\\) has no v_mfma of kind xf32"):
        tcprobe.matmul(a, a.T.copy(), gpu="MI100", instr="mfma.xf32.tf32.f32.k8")


def test_fit_gemm_on_an_amd_gpu_says_no_amd_library_was_measured(tmp_path):
    """fit-gemm on MI300X searches tcprobe's schedule axes (measured on
    NVIDIA's libraries): it says that no hipBLASLt/rocBLAS call was captured.
    A = B = ones (8x32): every word of D is 32.0 (0x42000000) under any
    schedule, so the fit explains it; an H100 fit has no such note."""
    from cli_helpers import invoke

    ones = np.full((8, 32), 0x3F80, np.uint16)  # bf16 1.0
    np.save(tmp_path / "a.npy", ones)
    np.save(tmp_path / "b.npy", ones.T.copy())
    np.save(tmp_path / "d.npy", np.full((8, 8), 0x42000000, np.uint32))
    args = ["fit-gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--d",
            tmp_path / "d.npy", "--a-format", "bf16", "--b-format", "bf16", "--d-format", "f32"]
    amd = invoke(*args, "--gpu", "mi300x")
    assert amd.exit_code == 0, amd.output
    assert "no hipBLASLt or rocBLAS call on MI300X was ever captured" in " ".join(amd.output.split())
    nvidia = invoke(*args, "--gpu", "H100")
    assert nvidia.exit_code == 0, nvidia.output
    assert "hipBLASLt" not in nvidia.output
