"""The CUDA backend's AMD v_mfma designs (kernels/tc_gemm_amd.cuh, the
tc_gemm_wide kernel): the host build of the same source gives the words of
models/amd.py's MfmaModel (its own evaluate, instruction by instruction, the
reference tcprobe.matmul(..., gpu="MI300X") runs on the CPU), word for word,
for every v_mfma datapath of MI100, MI250X and MI300X but f64, on random,
special-heavy, cancelling and subnormal words; hand-made words check each
design's rule without the model."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from cuda_backend_support import AMD, amd_operands, assert_same_words, model_chain, row_id

from tcprobe.backends import cuda_gemm, cuda_params
from tcprobe.models import amd_profiles, isa_amd
from tcprobe.models.amd import MfmaModel, MfmaParams
from tcprobe.models.datapath import Datapath

KINDS = ("raw", "finite", "special", "spread", "cancel", "tiny")


_ids = row_id


def amd_model(gpu, dp_id):
    return amd_profiles.model_for(Datapath.parse(dp_id), gpu)


def _check(mdl, a, b, c, tiles, what):
    want = model_chain(mdl, a, b, c, 0, tiles)
    got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles)
    assert got.dtype == np.uint32
    assert_same_words(got, want, what)
    return want


@pytest.mark.fast_first(5)
@pytest.mark.parametrize("row", AMD, ids=_ids)
def test_amd_words_equal_model(row):
    mdl = amd_model(*row)
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    rng = np.random.default_rng(zlib.crc32(_ids(row).encode()))
    tiles = max(2, 32 // dp.k)
    nan = 0
    for kind in KINDS:
        a, b, c = amd_operands(rng, kind, dp.a_type, dp.b_type, 13, tiles * dp.k, 17)
        want = _check(mdl, a, b, c, tiles, kind)
        nan += int(((want & 0x7FFFFFFF) > 0x7F800000).sum())  # NaN words compared
        if kind == "finite":  # not a run of NaNs: most words are finite and nonzero
            assert ((want & 0x7FFFFFFF) != 0).mean() > 0.9
    assert nan  # some NaN words were compared


def test_every_amd_datapath_is_covered():
    """Every v_mfma datapath of the three AMD profiles is a tested row, or
    refused by name (f64 only: its words are 64-bit)."""
    for gpu, arch in isa_amd.GPU_ARCH.items():
        for ins in isa_amd.instructions(arch):
            dp = amd_profiles.datapath(ins)
            ok, why = cuda_gemm.supports(amd_profiles.model_for(dp, gpu))
            if ins.kind == "f64":
                assert not ok and "f64" in why and "64-bit" in why
            else:
                assert ok, (gpu, dp.id, why)  # AMD lists every such row (same loop)


def _with(gpu, dp_id, **changes):
    base = amd_model(gpu, dp_id)
    p = vars(base.params) | changes
    return MfmaModel(base.name, base.datapath, base.evidence, MfmaParams(**p))


@pytest.mark.parametrize("seed", range(6))
def test_random_design_parameters_equal_model(seed):
    """Designs and parameters the ladder's mfma step may fit (a TOML sim
    profile's [mfma]), drawn at random on random datapaths: L, P, F, F2."""
    rng = np.random.default_rng(4000 + seed)
    gpu, dp_id = AMD[int(rng.integers(len(AMD)))]
    dp = Datapath.parse(dp_id)
    design = str(rng.choice(["fma", "exact", "ftz", "truncated", "grouped"]))
    window2 = int(rng.integers(8, cuda_params.AMD_MAX_F2 + 1))
    blocks = [x for x in (1, 2, 3, 4, 5, 8, 16) if x <= dp.k] + [dp.k + 3]
    block = int(rng.choice([p for p in (2, 4) if dp.k % p == 0] or [2])) if design == "ftz" \
        else int(rng.choice(blocks))
    mdl = _with(gpu, dp_id, design=design, block=block, window2=window2,
                window=int(rng.integers(0, window2 + 2)))
    ok, why = cuda_gemm.supports(mdl)
    if design == "ftz" and dp.k % block:
        assert not ok and "ftz" in why
        return
    if design == "grouped" and (block < 2 or dp.k % block == 1):
        assert not ok and "grouped" in why
        return
    assert ok, (mdl.params, why)
    for kind in ("special", "spread", "cancel", "tiny"):
        a, b, c = amd_operands(rng, kind, dp.a_type, dp.b_type, 6, 2 * dp.k, 7)
        _check(mdl, a, b, c, 2, f"{kind} {mdl.params}")


def test_amd_refusals():
    ok, why = cuda_gemm.supports(_with("MI300X", "mfma.bf16.f32.k16", design="ftz", block=3))
    assert not ok and "ftz" in why
    ok, why = cuda_gemm.supports(_with("MI300X", "mfma.bf16.f32.k16", window=40, window2=20))
    assert not ok and "F2" in why
    ok, why = cuda_gemm.supports(_with("MI300X", "mfma.bf16.f32.k16", block=None))
    assert not ok and "L=None" in why
    assert cuda_gemm.supports(_with("MI300X", "mfma.fp8.e4m3fnuz.f32.k32", block=3))[0]
    for k, block in ((16, 3), (32, 1)):  # 16 = 5 * 3 + 1: a last block of one product
        ok, why = cuda_gemm.supports(_with("MI300X", f"mfma.fp8.e4m3fnuz.f32.k{k}", block=block))
        assert not ok and "one product" in why
    # a profile takes any L (L >= K: one block of K) and F: L = 2^40 packs as K, F = 10^6
    # (past the exact bound) is past what the kernel's int64 sum holds, named as given
    assert cuda_gemm.supports(_with("MI300X", "mfma.bf16.f32.k16", block=2 ** 40))[0]
    assert np.array_equal(cuda_params._pack_mfma(_with("MI300X", "mfma.bf16.f32.k16", block=2 ** 40)),
                          cuda_params._pack_mfma(_with("MI300X", "mfma.bf16.f32.k16", block=16)))
    ok, why = cuda_gemm.supports(_with("MI300X", "mfma.bf16.f32.k16", window=10 ** 6))
    assert not ok and "F=1000000" in why


# Hand-made words (no model involved): f16 1, 2**-12, 2**-13 and products 1,
# 2**-24 (half an f32 ulp of 1) and 2**-25 in one block.
ONE, P12, P13 = 0x3C00, 0x0C00, 0x0800


@pytest.mark.parametrize("gpu, word", [
    ("MI100", 0x3F800001),  # exact: 1 + 2**-24 + 2**-25 rounds up
    ("MI250X", 0x3F800000),  # ftz: 1 + 2**-24 a tie to even, then + 2**-25 below half an ulp
    ("MI300X", 0x3F800000),  # truncated: 2**-25 cut at F = 24 bits, then a tie to even
])
def test_amd_named_rounding(gpu, word):
    mdl = amd_model(gpu, "mfma.f16.f32.k16")
    a = np.zeros((1, 16), np.uint32)
    b = np.zeros((16, 1), np.uint32)
    a[0, :3] = (ONE, P12, P13)
    b[:3, 0] = (ONE, P12, P12)
    d = cuda_gemm.gemm_words_cuda(mdl, a, b, np.zeros((1, 1), np.uint32), 0, 1)
    assert d[0, 0] == word


def test_amd_named_specials():
    """NaN words: the host's IEEE rules on MI100/MI250X (an f16 NaN widened
    with its payload, Inf * 0 the default NaN 0xFFC00000), 0x7FFFFFFF on
    MI300X; fnuz 0x80 is a NaN; MI250X flushes subnormal inputs and C."""
    a = np.zeros((4, 16), np.uint32)
    b = np.zeros((16, 4), np.uint32)
    c = np.zeros((4, 4), np.uint32)
    a[0, 0], b[0, 0] = 0x7E01, ONE  # NaN with payload 0x201 * 1
    a[1, 0] = 0x7C00  # +Inf * 0 (column 1 of B is zero)
    a[2, 0], b[0, 2] = 0x0001, ONE  # 2**-24 (the smallest f16 subnormal) * 1 + C = 2**-149
    c[2, 2] = 0x00000001
    a[3, 0], b[0, 3] = ONE, ONE  # 1 * 1 + C = -1: +0
    c[3, 3] = 0xBF800000
    for gpu, nan, inf0, sub in (("MI100", 0x7FC02000, 0xFFC00000, 0x33800000),
                                ("MI250X", 0x7FC02000, 0xFFC00000, 0x00000000),
                                ("MI300X", 0x7FFFFFFF, 0x7FFFFFFF, 0x33800000)):
        d = cuda_gemm.gemm_words_cuda(amd_model(gpu, "mfma.f16.f32.k16"), a, b, c, 0, 1)
        assert (d[0, 0], d[1, 1], d[2, 2], d[3, 3]) == (nan, inf0, sub, 0), gpu
    fp8 = amd_model("MI300X", "mfma.fp8.e4m3fnuz.f32.k32")
    a8 = np.full((1, 32), 0x40, np.uint32)  # e4m3fnuz 0x40 = 1 (bias 8)
    b8 = np.full((32, 1), 0x40, np.uint32)
    d = cuda_gemm.gemm_words_cuda(fp8, a8, b8, np.zeros((1, 1), np.uint32), 0, 1)
    assert d[0, 0] == 0x42000000  # 32
    a8[0, 5] = 0x80
    d = cuda_gemm.gemm_words_cuda(fp8, a8, b8, np.zeros((1, 1), np.uint32), 0, 1)
    assert d[0, 0] == 0x7FFFFFFF


def test_amd_fma_chain_named():
    """MI300X f32 (an FMA chain): 2**24 + 1 - 2**24 gives 0 where one rounding
    per FMA loses the 1 (C first: 2**24 + 1 rounds to 2**24)."""
    mdl = amd_model("MI300X", "mfma.f32.f32.k4")
    a = np.array([[0x3F800000, 0x3F800000, 0, 0]], np.uint32)  # 1, 1
    b = np.array([[0x3F800000], [0xCB800000], [0], [0]], np.uint32)  # 1, -2**24
    c = np.array([[0x4B800000]], np.uint32)  # 2**24
    assert cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 1)[0, 0] == 0


def test_amd_through_matmul_host():
    """tcprobe.matmul's pipeline for an AMD GPU on the host build: the CPU
    engine's words, K not a multiple of the instruction."""
    import tcprobe

    rng = np.random.default_rng(12)
    a = rng.standard_normal((18, 37)).astype(np.float16)
    b = rng.standard_normal((37, 20)).astype(np.float16)
    a[0, 3], b[5, 2] = np.inf, np.nan
    for gpu in ("MI300X", "MI250X", "MI100"):
        cpu = tcprobe.matmul(a, b, gpu=gpu)
        host = tcprobe.matmul(a, b, gpu=gpu, backend="host")
        assert np.array_equal(np.asarray(cpu).view(np.uint32), np.asarray(host).view(np.uint32))
