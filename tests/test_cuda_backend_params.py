"""The CUDA backend's chain under the engine parameters beyond the default
profiles' (kernels/tc_gemm_core.cuh: zero_sign='ieee', align='normalized',
c_join='last' with c_add_rounding, k_order, c_convert, C of another type than
D, fnuz inputs; kernels/tc_gemm_exact.cuh: window_bits=None), the baseline
models of the registry (ieee, fma-chain, two-stage, two-stage-rne): the host build's words equal the plain engine's (fused_dot,
fast=False, instruction by instruction), on random draws of every parameter;
each parameter is reached (the engine without it gives other words on the
same operands); hand-made words check the rules without the engine. And the
split fp8 mma.sync emulation of sm_90 / sm_100 (SplitModel: unpack, two f16
sub-MMAs, C added last), against the model's own evaluate and models.gemm."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_backend_support import (
    COVERED,
    SPLIT,
    assert_same_words,
    engine_chain,
    model_chain,
    model_of,
    operands,
)
from test_cuda_backend import _random_params

from tcprobe.backends import cuda_gemm, cuda_params
from tcprobe.models import gemm, registry
from tcprobe.models.datapath import Datapath
from tcprobe.models.model import FixedPointModel

BF16 = ("H100", "sm_90", "wgmma", "bf16", "f32")
ROUNDINGS = ("rz", "rne", "rna")


def _draw(rng, mdl):
    """_random_params plus each parameter of this file, each with probability 1/2."""
    dp = mdl.datapath
    ch = {}
    if rng.random() < 0.5:
        ch["zero_sign"] = "ieee"
    if rng.random() < 0.5:
        ch["align"] = "normalized"
    if rng.random() < 0.5:
        ch["c_join"] = "last"
        ch["c_add_rounding"] = str(rng.choice(ROUNDINGS))
    if rng.random() < 0.5:
        ch["k_order"] = tuple(int(x) for x in rng.permutation(dp.k))
    if rng.random() < 0.5:
        ch["c_convert"] = str(rng.choice(cuda_params.C_FORMATS))
    if rng.random() < 0.25:
        ch["window_bits"] = None  # an exact sum (tc_exact_step)
    return _random_params(rng, mdl).replace(**ch)


def _equal(mdl, rng, kinds=("special", "spread", "cancel", "raw"), tiles=3, m=6, n=7, c_fmt=None):
    dp = mdl.datapath
    for kind in kinds:
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, c_fmt or dp.d_type, m, tiles * dp.k, n)
        want = engine_chain(mdl, a, b, c, 0, tiles)
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, tiles)
        assert_same_words(got, want, f"{kind}, {mdl.params}")


@pytest.mark.fast_first(4)
@pytest.mark.parametrize("seed", range(16))
def test_random_engine_parameters_equal_plain_engine(seed):
    rng = np.random.default_rng(2000 + seed)
    row = COVERED[int(rng.integers(len(COVERED)))]
    base = model_of(*row)
    mdl = FixedPointModel(base.name, base.datapath, base.evidence, _draw(rng, base))
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    _equal(mdl, rng)


def _fixed(row_or_dp, gpu=None, **changes):
    base = model_of(*row_or_dp) if gpu is None else registry.auto(row_or_dp, gpu)
    return FixedPointModel(base.name, base.datapath, base.evidence,
                           base.params.replace(**changes))


@pytest.mark.parametrize("changes", [
    {"window_bits": None},
    {"window_bits": None, "output_rounding": "rne", "zero_sign": "ieee", "overflow": "ieee"},
    {"zero_sign": "ieee"},
    {"align": "normalized"},
    {"c_join": "last"},
    {"c_join": "last", "c_add_rounding": "rz"},
    {"k_order": tuple(range(16))[::-1], "block_size": 4},
    {"c_convert": "f16"},
    {"c_convert": "e5m2"},
], ids=lambda ch: "-".join(f"{k}={v}" for k, v in ch.items() if k != "k_order") or "k_order")
def test_each_parameter_reached(changes):
    """Each parameter alone on the H100 bf16 profile: the host build's words
    equal the engine's, and the engine without the parameter gives other
    words on these operands (the test would see it ignored)."""
    mdl = _fixed(BF16, **changes)
    plain = _fixed(BF16, **({"block_size": 4} if "k_order" in changes else {}))
    assert cuda_gemm.supports(mdl)[0]
    rng = np.random.default_rng(31)
    differs = False
    for kind in ("special", "spread", "cancel", "finite"):
        a, b, c = operands(rng, kind, "bf16", "bf16", "f32", 16, 48, 16)
        a[:2] = 0x8000  # -0 times B's nonnegative columns 0-1, C = -0: negative terms only
        b[:, :2] &= 0x7FFF
        c[:2, :2] = 0x80000000
        want = engine_chain(mdl, a, b, c, 0, 3)
        assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3), want), kind
        differs |= not np.array_equal(engine_chain(plain, a, b, c, 0, 3), want)
    assert differs


def test_c_of_another_type_than_d():
    """mma.sync f16 x f16 + C f16 -> D f32 (H100): each instruction reads its
    C words as f16 (the engine's tile chain: the matrix pipeline refuses such
    a chain over K, one instruction is the model's own words)."""
    dp = Datapath.parse("mma.f16.f16tof32.k16")
    mdl = registry.auto(dp, "H100")
    assert (dp.c, dp.d_type) == ("f16", "f32") and cuda_gemm.supports(mdl)[0]
    rng = np.random.default_rng(5)
    for kind in ("special", "spread", "cancel"):
        a, b, c = operands(rng, kind, "f16", "f16", "f16", 9, 16, 18)
        assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 1),
                              engine_chain(mdl, a, b, c, 0, 1)), kind
    for seed in range(3):
        mdl = FixedPointModel(mdl.name, dp, mdl.evidence, _draw(np.random.default_rng(seed), mdl))
        _equal(mdl, np.random.default_rng(seed), tiles=1, c_fmt="f16")


def test_fnuz_inputs():
    """AMD's fnuz fp8 (e4m3fnuz, e5m2fnuz: 0x80 the one NaN, no -0) as A and B
    of the fixed-point chain: the engine's words; 0x80 makes the block NaN."""
    base = registry.auto(Datapath.parse("wgmma.e4m3.f32.k32"), "H100")
    for a_t, b_t in (("e4m3fnuz", "e5m2fnuz"), ("e5m2fnuz", "e5m2fnuz")):
        dp = Datapath("wgmma", "e4m3", a_t, b_t, "f32", 32)
        mdl = FixedPointModel(base.name, dp, base.evidence, base.params)
        assert cuda_gemm.supports(mdl)[0]
        rng = np.random.default_rng(len(a_t))
        for kind in ("raw", "finite", "spread"):
            a = rng.integers(0, 256, (7, 64)).astype(np.uint32)
            b = rng.integers(0, 256, (64, 9)).astype(np.uint32)
            c = operands(rng, kind, "f32", "f32", "f32", 7, 1, 9)[2]
            if kind != "raw":
                a[a == 0x80] = 0
                b[b == 0x80] = 0
            want = engine_chain(mdl, a, b, c, 0, 2)
            assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2), want), kind
        a = np.full((1, 32), 0x40, np.uint32)  # 1 in both (bias 8, 3 fraction bits; 16, 2)
        b = np.full((32, 1), 0x40, np.uint32)
        d = cuda_gemm.gemm_words_cuda(mdl, a, b, np.zeros((1, 1), np.uint32), 0, 1)
        assert d[0, 0] == 0x42000000  # 32
        a[0, 7] = 0x80
        d = cuda_gemm.gemm_words_cuda(mdl, a, b, np.zeros((1, 1), np.uint32), 0, 1)
        assert d[0, 0] == 0x7FFFFFFF


def test_named_zero_sign_and_c_join():
    """Hand-made bf16 words on the H100 wgmma profile (F=25, L=16, RZ):
    ieee zero signs: -0 products and C = -0 give -0 (+0 under 'positive');
    c_join='last': 192 (bf16 0x4340) * 1 + C = 2**30 is 2**30 + 192 rounded
    once by RNE (2**30 + 256: 0x4E800002), where C first keeps 192 in the
    window and cuts toward zero (0x4E800001)."""
    a = np.full((2, 16), 0x8000, np.uint32)  # -0
    b = np.full((16, 1), 0x3F80, np.uint32)  # 1
    c = np.full((2, 1), 0x80000000, np.uint32)  # -0
    a[1, 0] = 0x4340
    c[1, 0] = 0x4E800000
    ieee = cuda_gemm.gemm_words_cuda(_fixed(BF16, zero_sign="ieee"), a, b, c, 0, 1)
    pos = cuda_gemm.gemm_words_cuda(_fixed(BF16), a, b, c, 0, 1)
    last = cuda_gemm.gemm_words_cuda(_fixed(BF16, c_join="last"), a, b, c, 0, 1)
    assert (ieee[0, 0], pos[0, 0], last[0, 0]) == (0x80000000, 0, 0)
    assert (pos[1, 0], last[1, 0]) == (0x4E800001, 0x4E800002)


def test_refuses_c_formats():
    ok, why = cuda_gemm.supports(_fixed(BF16, c_convert="e2m1"))
    assert not ok and "c_convert" in why
    ok, why = cuda_gemm.supports(_fixed(BF16, k_order=(0, 1, 2)))
    assert not ok and "k_order" in why


# ---------------------------------------------------------------------------
# The split fp8 mma.sync emulation


def _split(row):
    mdl = registry.auto(Datapath.parse(row[1]), row[0])
    assert type(mdl).__name__ == "SplitModel"
    return mdl


@pytest.mark.fast_first(2)
@pytest.mark.parametrize("row", SPLIT, ids="-".join)
def test_split_words_equal_model(row):
    mdl = _split(row)
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    rng = np.random.default_rng(sum(map(ord, row[1])))
    for kind in ("raw", "finite", "special", "spread", "cancel"):
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 19, 3 * dp.k, 21)
        want = model_chain(mdl, a, b, c, 0, 3)
        assert np.array_equal(gemm.gemm_words(mdl, a, b, c, (0, 3)), want), kind
        got = cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3)
        assert np.array_equal(got, want), (kind, int((got != want).sum()))


def test_split_rules_reached():
    """The emulation's structure counts on these operands: the same chain with
    C first, or with the K positions in order (one f16 sub-MMA after the
    other on 0..15, 16..31), gives other words, and the backend follows the
    model either way."""
    from dataclasses import replace

    mdl = _split(("H100", "mma.e4m3.f16.k32"))
    dp = mdl.datapath
    rng = np.random.default_rng(3)
    a, b, c = operands(rng, "finite", dp.a_type, dp.b_type, dp.d_type, 16, 64, 16)
    want = model_chain(mdl, a, b, c, 0, 2)
    assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2), want)
    in_order = replace(mdl, parts=(tuple(range(16)), tuple(range(16, 32))))
    got = cuda_gemm.gemm_words_cuda(in_order, a, b, c, 0, 2)
    assert np.array_equal(got, model_chain(in_order, a, b, c, 0, 2))
    assert not np.array_equal(got, want)
    ok, why = cuda_gemm.supports(replace(mdl, c_entry="first"))
    assert not ok and "c_entry" in why


def test_split_through_matmul_host():
    """tcprobe.matmul of fp8 operands on H100 with instr='mma' (the emulated
    mma.sync) on the host build: the CPU engine's words, K padded."""
    import ml_dtypes

    import tcprobe

    rng = np.random.default_rng(4)
    a = rng.standard_normal((9, 40)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((40, 18)).astype(ml_dtypes.float8_e4m3fn)
    cpu = tcprobe.matmul(a, b, gpu="H100", instr="mma", progress=False)
    host = tcprobe.matmul(a, b, gpu="H100", instr="mma", backend="host", progress=False)
    assert np.array_equal(np.asarray(cpu).view(np.uint32), np.asarray(host).view(np.uint32))


@pytest.mark.parametrize("name", ["ieee", "fma-chain", "two-stage", "two-stage-rne"])
@pytest.mark.parametrize("dp_id, gpu", [("wgmma.bf16.f32.k16", "H100"),
                                        ("mma.f16.f16.k16", "A100"),
                                        ("wgmma.e4m3.f16.k32", "H100")])
def test_baseline_models_equal_model(name, dp_id, gpu):
    """The registry's reference models (exact sums: one rounding a block, an
    FMA chain; two stages with C merged in a window or added exactly) on the
    host build: the models' own words."""
    mdl = registry.resolve(name, Datapath.parse(dp_id), gpu)
    ok, why = cuda_gemm.supports(mdl)
    assert ok, why
    dp = mdl.datapath
    rng = np.random.default_rng(len(name) + dp.k)
    for kind in ("special", "spread", "cancel", "raw"):
        a, b, c = operands(rng, kind, dp.a_type, dp.b_type, dp.d_type, 9, 3 * dp.k, 11)
        want = model_chain(mdl, a, b, c, 0, 3)
        assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 3), want), kind


def test_named_exact_sum():
    """Hand-made bf16 words under the 'ieee' model (one exact sum a block of
    16, RNE into f32): 2**30 + 1 - 2**30 is 1 (a window of 25 bits would cut
    the 1 below 2**30's anchor), and 1 + 2**-24 + 2**-24 rounds up once."""
    mdl = registry.resolve("ieee", Datapath.parse("wgmma.bf16.f32.k16"), "H100")
    a = np.zeros((2, 16), np.uint32)
    b = np.full((16, 1), 0x3F80, np.uint32)  # 1
    a[0, :3] = (0x4E80, 0x3F80, 0xCE80)  # 2**30, 1, -2**30
    a[1, :3] = (0x3F80, 0x3380, 0x3380)  # 1, 2**-24, 2**-24
    d = cuda_gemm.gemm_words_cuda(mdl, a, b, np.zeros((2, 1), np.uint32), 0, 1)
    assert (d[0, 0], d[1, 0]) == (0x3F800000, 0x3F800001)


def test_sparse_b1_xor_equal_model():
    """Sparse b1 .xor: a position A's metadata leaves out is 0 XOR 0 (the
    plain IntegerModel zeroes A and B there, Cases.masked), so B's bits there
    count nothing: the host build's words equal the model's, and keeping every
    position gives other words on these operands."""
    from cuda_backend_support import integer_operands, sparse_active

    mdl = registry.auto(Datapath.parse("mma.b1.s32.k512.xor.sparse"), "A100")
    assert cuda_gemm.supports(mdl)[0]
    dp = mdl.datapath
    rng = np.random.default_rng(15)
    for kind in ("raw", "extreme"):
        a, b, c = integer_operands(rng, kind, dp.a_type, dp.b_type, 19, 2 * dp.k, 21)
        active = sparse_active(rng, dp, 19, 2 * dp.k)
        a = np.where(active, a, np.uint32(0)).astype(np.uint32)
        want = model_chain(mdl, a, b, c, 0, 2, active)
        assert np.array_equal(cuda_gemm.gemm_words_cuda(mdl, a, b, c, 0, 2, active=active), want)
        assert not np.array_equal(model_chain(mdl, a, b, c, 0, 2, np.ones_like(active)), want)
