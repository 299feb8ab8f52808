"""The fp8 mma.sync emulation of sm_90/sm_100 on the compiled GEMM chain
(models/kernels/gemm_split.py) against the dot-level SplitModel tile by tile (the
model the published B200/H100 fp8 captures pin, tests/test_emulated.py):
every word, with NaN, Inf and C, in the epilogue and as the chain's start."""

import zlib

import ml_dtypes
import numpy as np
import pytest

import tcprobe
from tcprobe.matrix import choice
from tcprobe.models import gemm

E4M3, E5M2 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2


@pytest.mark.parametrize("gpu", ["H100", "B200"])
def test_the_emulated_fp8_mma_runs_on_the_gemm_kernel(gpu):
    dp = choice.datapath(gpu, "mma", "e4m3", "e5m2", "f32")
    assert gemm.supports(choice.model_for(dp, gpu))


@pytest.mark.parametrize("gpu", ["H100", "B200"])
@pytest.mark.parametrize("out", [np.float32, np.float16])
@pytest.mark.parametrize("schedule", [None, "chain", {"split_k": 2, "k_order": "reverse"}])
def test_compiled_chain_equals_the_tile_by_tile_model(gpu, out, schedule):
    rng = np.random.default_rng(zlib.crc32(f"{gpu}/{out.__name__}/{schedule}".encode()))
    a = (rng.standard_normal((9, 160)) * 8).astype(E4M3)
    b = (rng.standard_normal((160, 7)) * 8).astype(E5M2)
    a[0, 5] = np.nan
    b[7, 3] = np.inf
    b[20:40, 1] = -b[0:20, 1]  # cancellation inside and across instructions
    c = (rng.standard_normal((9, 7)) * 16).astype(out)
    words = np.uint32 if out is np.float32 else np.uint16
    fast = tcprobe.matmul(a, b, c, gpu=gpu, instr="mma", schedule=schedule, fast=True)
    slow = tcprobe.matmul(a, b, c, gpu=gpu, instr="mma", schedule=schedule, fast=False)
    assert np.array_equal(fast.view(words), slow.view(words))
