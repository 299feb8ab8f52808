"""The CUDA backend on a GPU: the kernel's words (torch CUDA tensors in and
out) equal the host build's and the CPU engine's. Skipped without a GPU; the
torch-tensor checks that need none run everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_backend_support import (
    AMD,
    COVERED,
    INTEGER,
    SCALED,
    SPARSE,
    SPLIT,
    amd_operands,
    integer_model,
    integer_operands,
    model_chain,
    model_of,
    operands,
    row_id,
    scales,
    sparse_active,
)
from cuda_support import gpu_only

from tcprobe.backends import cuda_gemm
from tcprobe.models import gemm

torch = pytest.importorskip("torch")


def test_cpu_tensors_refused():
    mdl = model_of("H100", "sm_90", "wgmma", "bf16", "f32")
    a = torch.zeros((2, 16), dtype=torch.int32)
    with pytest.raises(ValueError, match="CUDA tensors"):
        cuda_gemm.gemm_words_cuda(mdl, a, torch.zeros((16, 2), dtype=torch.int32),
                                  torch.zeros((2, 2), dtype=torch.int32), 0, 1)


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("row", COVERED, ids=row_id)
def test_kernel_words_equal_engine(row):
    mdl = model_of(*row)
    dp = mdl.datapath
    rng = np.random.default_rng(5)
    for kind in ("raw", "special", "spread", "cancel"):
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 37, 4 * dp.k, 45)
        dev = [torch.from_numpy(x.view(np.int32)).cuda() for x in (a, b, c)]
        got = cuda_gemm.gemm_words_cuda(mdl, *dev, 0, 4).cpu().numpy().view(np.uint32)
        assert np.array_equal(got, cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 4)), kind
        assert np.array_equal(got, gemm.gemm_words(mdl, a, b, c, (0, 4))), kind


def _dev(*xs):
    return [None if x is None else torch.from_numpy(x.view(np.int32)).cuda() for x in xs]


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("row", INTEGER, ids=row_id)
def test_kernel_integer_words_equal_engine(row):
    mdl = integer_model(*row)
    dp = mdl.datapath
    rng = np.random.default_rng(6)
    for kind in ("raw", "extreme"):
        a, b, c = integer_operands(rng, kind, dp.a_type, dp.b_type, 37, 4 * dp.k, 45)
        got = cuda_gemm.gemm_words_cuda(mdl, *_dev(a, b, c), 0, 4).cpu().numpy().view(np.uint32)
        assert np.array_equal(got, gemm.gemm_words(mdl, a, b, c, (0, 4))), kind


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("row", SCALED, ids=row_id)
def test_kernel_scaled_words_equal_model(row):
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath

    mdl = registry.auto(Datapath.parse(row[1]), row[0])
    dp = mdl.datapath
    rng = np.random.default_rng(7)
    for kind in ("raw", "special"):
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 37, 4 * dp.k, 45)
        sa, sb = scales(rng, kind if kind == "raw" else "special", 37, 45, 4 * dp.n_scales)
        dev = _dev(a, b, c, sa, sb)
        got = cuda_gemm.gemm_words_cuda(mdl, *dev[:3], 0, 4, sa=dev[3], sb=dev[4])
        got = got.cpu().numpy().view(np.uint32)
        assert np.array_equal(got, model_chain(mdl, a, b, c, 0, 4, sa=sa, sb=sb)), kind


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("row", SPARSE, ids=row_id)
def test_kernel_sparse_words_equal_engine(row):
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath

    mdl = registry.auto(Datapath.parse(row[1]), row[0])
    dp = mdl.datapath
    rng = np.random.default_rng(8)
    if dp.is_integer:
        a, b, c = integer_operands(rng, "raw", dp.a_type, dp.b_type, 37, 4 * dp.k, 45)
    else:
        a, b, c = operands(rng, "special", dp.a_type, dp.b_type, dp.d_type, 37, 4 * dp.k, 45)
    active = sparse_active(rng, dp, 37, 4 * dp.k)
    a = np.where(active, a, np.uint32(0)).astype(np.uint32)
    act = torch.from_numpy(active.astype(np.uint8)).cuda()
    got = cuda_gemm.gemm_words_cuda(mdl, *_dev(a, b, c), 0, 4, active=act)
    decoded = None if dp.is_integer else gemm.decoders(mdl, a, b, active)
    assert np.array_equal(got.cpu().numpy().view(np.uint32),
                          gemm.gemm_words(mdl, a, b, c, (0, 4), decoded))


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("row", AMD, ids=row_id)
def test_kernel_amd_words_equal_model(row):
    """tc_gemm_wide: the AMD designs' words on the GPU equal the host build's
    and the MfmaModel's own, and a k_order / c_join='last' chain runs too."""
    from tcprobe.models import amd_profiles
    from tcprobe.models.datapath import Datapath

    mdl = amd_profiles.model_for(Datapath.parse(row[1]), row[0])
    dp = mdl.datapath
    rng = np.random.default_rng(9)
    for kind in ("raw", "special", "spread", "cancel", "tiny"):
        a, b, c = amd_operands(rng, kind, dp.a_type, dp.b_type, 21, 2 * dp.k, 19)
        got = cuda_gemm.gemm_words_cuda(mdl, *_dev(a, b, c), 0, 2).cpu().numpy().view(np.uint32)
        assert np.array_equal(got, cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2)), kind
        assert np.array_equal(got, model_chain(mdl, a, b, c, 0, 2)), kind


@gpu_only
@pytest.mark.gpu
def test_kernel_chain_parameters_equal_host():
    """k_order (permuted on the GPU by index_select), c_join='last', ieee zeros,
    normalized alignment and a C conversion: the kernel's words are the host build's
    and the CPU engine's."""
    base = model_of("H100", "sm_90", "wgmma", "bf16", "f32")
    mdl = type(base)(base.name, base.datapath, base.evidence, base.params.replace(
        block_size=4, k_order=tuple(range(16))[::-1], c_join="last", zero_sign="ieee",
        align="normalized", c_convert="f16"))
    rng = np.random.default_rng(10)
    a, b, c = operands(rng, "special", "bf16", "bf16", "f32", 37, 64, 45)
    got = cuda_gemm.gemm_words_cuda(mdl, *_dev(a, b, c), 0, 4).cpu().numpy().view(np.uint32)
    assert np.array_equal(got, cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 4))
    assert np.array_equal(got, model_chain(mdl, a, b, c, 0, 4))  # the CPU engine's words


@gpu_only
@pytest.mark.gpu
@pytest.mark.parametrize("row", SPLIT, ids=row_id)
def test_kernel_split_words_equal_engine(row):
    """The split fp8 mma.sync emulation on the GPU: the host build's and models.gemm's words."""
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath

    mdl = registry.auto(Datapath.parse(row[1]), row[0])
    dp = mdl.datapath
    rng = np.random.default_rng(11)
    for kind in ("raw", "special", "cancel"):
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 37, 4 * dp.k, 45)
        got = cuda_gemm.gemm_words_cuda(mdl, *_dev(a, b, c), 0, 4).cpu().numpy().view(np.uint32)
        assert np.array_equal(got, cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 4)), kind
        assert np.array_equal(got, gemm.gemm_words(mdl, a, b, c, (0, 4))), kind
