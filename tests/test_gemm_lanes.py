"""The GEMM kernel's int32 lanes (models/kernels/gemm_ir.py) against the
tile-by-tile path (the dot-level model on every element): shapes past one
row tile and one panel (padded columns), NaN, Inf, subnormal and extreme
words in A, B and C, the kinds whose blocks run in int32 lanes with the
rounding in lanes too (f32 accumulation) and without (an f16 one)."""

import ml_dtypes
import numpy as np
import pytest
from matmul_data import as_array, words

import tcprobe
from tcprobe.matrix import choice
from tcprobe.models import gemm, registry
from tcprobe.models.kernels import gemm_ir
from tcprobe.models.kernels.kernel_params import kernel_params

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
          "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "f32": np.float32}

# (gpu, instr, A, B, D, whether panel_words rounds in lanes)
KINDS = [
    ("H100", "mma", "bf16", "bf16", "f32", True),
    ("H100", "mma", "f16", "f16", "f32", True),
    ("H100", "mma", "tf32", "tf32", "f32", True),
    ("B200", "tcgen05", "bf16", "bf16", "f32", True),
    ("A100", "mma", "f16", "f16", "f16", True),  # round to nearest, f16 words
    ("B200", "tcgen05", "e4m3", "e4m3", "f32", True),  # 32 products: two int32 sums a block
]


def _kp(gpu, instr, a_fmt, b_fmt, d_fmt):
    dp = choice.datapath(gpu, instr, a_fmt, b_fmt, d_fmt)
    model = registry.resolve("auto", dp, gpu)
    return kernel_params(dp, model.params, dp.k)


@pytest.mark.parametrize("gpu,instr,a_fmt,b_fmt,d_fmt,whole", KINDS)
def test_the_kinds_take_the_int32_lanes(gpu, instr, a_fmt, b_fmt, d_fmt, whole):
    kp = _kp(gpu, instr, a_fmt, b_fmt, d_fmt)
    assert gemm.narrow_lanes(kp)
    assert gemm_ir.words_fit(kp) == whole


@pytest.mark.parametrize("gpu,instr,a_fmt,b_fmt,d_fmt,whole", KINDS)
@pytest.mark.parametrize("seed", [3, 4])
def test_lanes_equal_the_tile_path(gpu, instr, a_fmt, b_fmt, d_fmt, whole, seed):
    rng = np.random.default_rng(seed)
    m, k, n = 70, 48, 150  # past ROW_TILE rows and one PANEL (the second one padded)
    a = words(rng, a_fmt, (m, k), special=0.004, extreme=0.3)
    b = words(rng, b_fmt, (k, n), special=0.004, extreme=0.3)
    c = words(rng, d_fmt, (m, n), special=0.01, extreme=0.3)
    args = (as_array(a, DTYPES[a_fmt]), as_array(b, DTYPES[b_fmt]), as_array(c, DTYPES[d_fmt]))
    kw = dict(gpu=gpu, instr=instr, schedule="chain", progress=False)
    got = np.asarray(tcprobe.matmul(*args, **kw)).view(np.uint32 if d_fmt == "f32" else np.uint16)
    want = np.asarray(tcprobe.matmul(*args, fast=False, **kw)).view(got.dtype)
    assert np.array_equal(got, want), f"{int((got != want).sum())} words differ"


def test_overflow_and_underflow_in_lanes():
    """Sums past f32's largest value (Inf on the H100) and below its
    smallest normal (subnormal results), no special word in the operands."""
    rng = np.random.default_rng(9)
    m, k, n = 20, 32, 40
    big = np.float32(2.0 ** 63)
    a = (rng.standard_normal((m, k)) * big).astype(ml_dtypes.bfloat16)
    b = (rng.standard_normal((k, n)) * big).astype(ml_dtypes.bfloat16)
    c = (rng.standard_normal((m, n)) * np.float32(3e38)).astype(np.float32)
    tiny_a = (rng.standard_normal((m, k)) * np.float32(2.0 ** -70)).astype(ml_dtypes.bfloat16)
    tiny_b = (rng.standard_normal((k, n)) * np.float32(2.0 ** -70)).astype(ml_dtypes.bfloat16)
    tiny_c = (rng.standard_normal((m, n)) * np.float32(2.0 ** -140)).astype(np.float32)
    kw = dict(gpu="H100", instr="mma", schedule="chain", progress=False)
    for x, y, z in ((a, b, c), (tiny_a, tiny_b, tiny_c)):
        got = tcprobe.matmul(x, y, z, **kw).view(np.uint32)
        want = tcprobe.matmul(x, y, z, fast=False, **kw).view(np.uint32)
        assert np.array_equal(got, want), f"{int((got != want).sum())} words differ"
    assert np.isinf(tcprobe.matmul(a, b, c, **kw)).any()
    sub = np.abs(tcprobe.matmul(tiny_a, tiny_b, tiny_c, **kw))
    assert ((sub > 0) & (sub < np.finfo(np.float32).tiny)).any()


def test_carry_bits_take_the_block_lanes_and_equal_the_int64_kernel(monkeypatch):
    """A model whose rounding panel_words does not do (carry bits): the
    products in int32 lanes (panel_block), the rest in numba's loops; the
    same words as the int64 kernel and as the dot-level model."""
    from dataclasses import replace

    from tcprobe.models.cases import Cases
    from tcprobe.models.model import FixedPointModel

    dp = choice.datapath("H100", "mma", "bf16", "bf16", "f32")
    base = registry.resolve("auto", dp, "H100")
    model = FixedPointModel("carry", dp, base.evidence, replace(base.params, carry_bits=3))
    kp = kernel_params(dp, model.params, dp.k)
    assert gemm.narrow_lanes(kp) and not gemm_ir.words_fit(kp)
    rng = np.random.default_rng(5)
    a = words(rng, "bf16", (20, 64), special=0.004, extreme=0.2)
    b = words(rng, "bf16", (64, 40), special=0.004, extreme=0.2)
    c = words(rng, "f32", (20, 40), special=0.01, extreme=0.2)
    got = gemm.gemm_words(model, a, b, c, (0, 4))
    monkeypatch.setattr(gemm, "narrow_lanes", lambda kp: False)
    assert np.array_equal(got, gemm.gemm_words(model, a, b, c, (0, 4)))
    for i, j in [(0, 0), (3, 17), (19, 39)]:
        acc = c[i, j]
        for t in range(4):
            ks = slice(16 * t, 16 * t + 16)
            acc = model.evaluate(Cases(a[i, ks][None], b[ks, j][None], [acc]))[0]
        assert got[i, j] == acc


def test_plain_kernel_form_gives_the_same_words(monkeypatch):
    """TCPROBE_KERNEL=plain (no hand-written IR): the int64 loops of numba,
    the same words as the int32 lanes."""
    rng = np.random.default_rng(11)
    a = as_array(words(rng, "bf16", (30, 64), special=0.004, extreme=0.3), DTYPES["bf16"])
    b = as_array(words(rng, "bf16", (64, 20), special=0.004, extreme=0.3), DTYPES["bf16"])
    c = as_array(words(rng, "f32", (30, 20), special=0.01, extreme=0.3), DTYPES["f32"])
    kw = dict(gpu="H100", instr="mma", schedule="chain", progress=False)
    lanes = tcprobe.matmul(a, b, c, **kw).view(np.uint32)
    monkeypatch.setenv("TCPROBE_KERNEL", "plain")
    plain = tcprobe.matmul(a, b, c, **kw).view(np.uint32)
    assert np.array_equal(lanes, plain)


@pytest.mark.parametrize("fmt", ["bf16", "f16", "tf32", "e4m3", "e5m2", "e2m1", "e2m3", "e3m2",
                                 "f32"])
def test_float_decoder_equals_decode_scalar(fmt):
    """decode_operand's branch-free decoder against decode_scalar's, on
    every word of the 8- and 16-bit formats and random 32-bit ones."""
    from tcprobe.models.formats import get_format

    f = get_format(fmt)
    if f.width <= 16:
        w = np.arange(1 << f.width, dtype=np.uint32)
    else:
        w = np.random.default_rng(1).integers(0, 1 << 32, 1 << 16, dtype=np.uint64)
        w = np.concatenate([w.astype(np.uint32), np.array([0x7F800000, 0xFF800000, 0x7FC00001,
                                                           0x80000000, 1, 0x807FFFFF],
                                                          np.uint32)])
    w = w.reshape(1, -1)
    got = [np.empty(w.shape, t) for t in (np.int32, np.int32, np.int8)]
    want = [np.empty(w.shape, t) for t in (np.int32, np.int32, np.int8)]
    gemm._decode_float_into(w, f.spec, *(x.ravel() for x in got))
    gemm._decode_into(w, f.spec, *(x.ravel() for x in want))
    for x, y in zip(got, want, strict=True):
        assert np.array_equal(x, y)
