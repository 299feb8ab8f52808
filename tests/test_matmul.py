"""tcprobe.matmul where MMA-Sim has nothing: element by element against the
dot-level model chained over K (tcgen05 i8, sparse, NVFP4 and MX block
scales, fp8 mma.sync as the compiler emulates it); the compiled kernel
against the tile-by-tile path; split-K, padding, the API's errors."""

import ml_dtypes
import numpy as np
import pytest
from matmul_data import as_array, words

import tcprobe
from tcprobe.matrix import choice
from tcprobe.models import registry
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
          "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
          "e2m1": ml_dtypes.float4_e2m1fn, "e2m3": ml_dtypes.float6_e2m3fn,
          "e3m2": ml_dtypes.float6_e3m2fn,
          "s8": np.int8, "u8": np.uint8, "f32": np.float32, "s32": np.int32,
          "ue8m0": ml_dtypes.float8_e8m0fnu, "ue4m3": ml_dtypes.float8_e4m3fn}


def chained_dot(model, a_row, b_col, c_word, sa_row=None, sb_col=None, active=None):
    """One element of D by the dot-level model: one Cases a K tile, D as the next C
    (the tail of K padded with +0 words, scales with 1.0)."""
    dp = model.datapath
    k = len(a_row)
    tiles = -(-k // dp.k)
    pad = tiles * dp.k - k
    a_row = np.concatenate([a_row, np.zeros(pad, np.uint32)])
    b_col = np.concatenate([b_col, np.zeros(pad, np.uint32)])
    if active is not None:
        active = np.concatenate([active, np.zeros(pad, bool)])
    acc = np.uint32(c_word)
    for t in range(tiles):
        ks = slice(t * dp.k, (t + 1) * dp.k)
        sa = sb = None
        if dp.block_scaled:
            one = {"ue8m0": 127, "ue4m3": 0x38}[dp.scale_type]
            ss = slice(t * dp.n_scales, (t + 1) * dp.n_scales)
            need = tiles * dp.n_scales
            sa = np.concatenate([sa_row, np.full(need - len(sa_row), one)])[ss][None]
            sb = np.concatenate([sb_col, np.full(need - len(sb_col), one)])[ss][None]
        act = None if active is None else active[ks][None]
        acc = model.evaluate(Cases(a_row[ks][None], b_col[ks][None], [acc], sa, sb, act))[0]
    return acc


def words_of(D, fmt):
    return np.asarray(D).view({"f16": np.uint16, "f32": np.uint32, "s32": np.uint32}[fmt]).astype(
        np.uint32)


def assert_elementwise(D, d_fmt, model, a, b, c, sa=None, sb=None, active=None):
    got = words_of(D, d_fmt)
    m, n = got.shape
    for i in range(m):
        for j in range(n):
            want = chained_dot(model, a[i], b[:, j], c[i, j],
                               None if sa is None else sa[i], None if sb is None else sb[:, j],
                               None if active is None else active[i])
            assert got[i, j] == want, f"({i}, {j}): {got[i, j]:#x} vs the model's {want:#x}"


@pytest.mark.parametrize("datapath,fmt", [("tcgen05.i8.s8.s32.k32", "s8"),
                                          ("tcgen05.i8.u8xs8.s32.k32", None),
                                          ("tcgen05.i8.s8.s32.k32.sat", "s8")])
def test_tcgen05_i8_equals_the_dot_model(datapath, fmt):
    rng = np.random.default_rng(3)
    dp = Datapath.parse(datapath)
    a = words(rng, dp.a_type, (5, 70))
    b = words(rng, dp.b_type, (70, 4))
    if dp.saturate:  # large products so that some instructions saturate
        a = np.where(rng.random(a.shape) < 0.8, 0x7F, a).astype(np.uint32)
        b = np.where(rng.random(b.shape) < 0.8, 0x7F, b).astype(np.uint32)
    c = rng.integers(0, 1 << 32, (5, 4), dtype=np.uint64).astype(np.uint32)
    c[0, 0] = 0x7FFFFF00
    D = tcprobe.matmul(as_array(a, DTYPES[dp.a_type]), as_array(b, DTYPES[dp.b_type]),
                       as_array(c, np.int32), gpu="B200", instr=datapath, schedule="chain")
    assert D.dtype == np.int32
    model = registry.resolve("auto", dp, "B200")
    assert_elementwise(D, "s32", model, a, b, c)
    if dp.saturate:
        assert (D == np.int32(2**31 - 1)).any()


def sparse_a(rng, fmt, shape, keep=2, width=4):
    a = words(rng, fmt, shape, special=0.0)
    m, k = shape
    mask = np.zeros(shape, bool)
    for i in range(m):
        for c0 in range(0, k, width):
            picks = rng.choice(width, size=keep, replace=False)
            mask[i, c0 + picks[picks < k - c0]] = True
    return np.where(mask, a, 0).astype(np.uint32), mask


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("datapath,fmt", [("tcgen05.f16.f32.k32.sparse", "f16"),
                                          ("tcgen05.f16.bf16.f32.k32.sparse", "bf16"),
                                          ("tcgen05.f8f6f4.e4m3.f32.k64.sparse", "e4m3")])
def test_sparse_equals_the_dot_model(datapath, fmt):
    rng = np.random.default_rng(11)
    a, mask = sparse_a(rng, fmt, (4, 96))
    b = words(rng, fmt, (96, 5))
    c = words(rng, "f32", (4, 5))
    D = tcprobe.matmul(as_array(a, DTYPES[fmt]), as_array(b, DTYPES[fmt]),
                       as_array(c, np.float32), gpu="B200", instr=datapath,
                       schedule="chain")
    model = registry.resolve("auto", Datapath.parse(datapath), "B200")
    assert_elementwise(D, "f32", model, a, b, c, active=mask)
    dense = tcprobe.matmul(as_array(a, DTYPES[fmt]), as_array(b, DTYPES[fmt]),
                           as_array(c, np.float32), gpu="B200", instr="tcgen05")
    assert words_of(dense, "f32").shape == (4, 5)


def test_sparse_rejects_a_dense_a():
    rng = np.random.default_rng(1)
    a = as_array(words(rng, "f16", (4, 32), zero=0.0, special=0.0), np.float16)
    with pytest.raises(ValueError, match="A is not sparse"):
        tcprobe.matmul(a, np.ones((32, 4), np.float16), gpu="B200",
                       instr="tcgen05.f16.f32.k32.sparse")


def test_sparse_zero_the_metadata_selects_meets_an_inf_of_b():
    """A group of 4 with one nonzero (1.0 at position 0) and B +Inf at
    position 1: matmul's metadata keeps the nonzero only (D 1.0, 0x3f800000);
    dot's active mask selecting position 1 too gives 0 x Inf, a NaN."""
    dp = "wgmma.f16.f32.k32.sparse"
    a = np.zeros((1, 32), np.uint32)
    a[0, 0] = 0x3C00
    b = np.full((1, 32), 0x3C00, np.uint32)
    b[0, 1] = 0x7C00
    c = np.zeros(1, np.uint32)
    picked = np.zeros((1, 32), bool)
    for g in range(8):
        picked[0, 4 * g:4 * g + 2] = True
    nan = int(tcprobe.dot(a, b, c, datapath=dp, gpu="H100", active=picked)[0])
    assert (nan >> 23) & 0xFF == 0xFF and nan & 0x7FFFFF
    picked[0, 1], picked[0, 2] = False, True  # the zero at 2 meets a finite B
    assert int(tcprobe.dot(a, b, c, datapath=dp, gpu="H100", active=picked)[0]) == 0x3F800000
    d = tcprobe.matmul(as_array(a, np.float16), as_array(b.T.copy(), np.float16),
                       gpu="H100", instr=dp)
    assert words_of(d, "f32")[0, 0] == 0x3F800000


@pytest.mark.parametrize("scale,block,a_fmt,b_fmt,k", [
    ("ue4m3", 16, "e2m1", "e2m1", 150),  # NVFP4: mxf4nvf4, ue4m3 x4
    ("ue8m0", 32, "e2m1", "e2m1", 128),  # mxf4
    ("ue8m0", 16, "e2m1", "e2m1", 64),  # mxf4nvf4 with ue8m0 x4
    ("ue8m0", 32, "e4m3", "e2m3", 80),  # mxf8f6f4
])
def test_block_scaled_equals_the_dot_model(scale, block, a_fmt, b_fmt, k):
    rng = np.random.default_rng(7)
    m, n = 4, 3
    a, b = words(rng, a_fmt, (m, k)), words(rng, b_fmt, (k, n))
    blocks = -(-k // block)
    lo, hi = (0x30, 0x48) if scale == "ue4m3" else (120, 134)
    sa = rng.integers(lo, hi, (m, blocks)).astype(np.uint32)
    sb = rng.integers(lo, hi, (blocks, n)).astype(np.uint32)
    c = words(rng, "f32", (m, n))
    D = tcprobe.matmul(as_array(a, DTYPES[a_fmt]), as_array(b, DTYPES[b_fmt]),
                       as_array(c, np.float32), gpu="B200", scale_a=as_array(sa, DTYPES[scale]),
                       scale_b=as_array(sb, DTYPES[scale]), schedule="chain")
    dp = choice.block_scaled_datapath(a_fmt, b_fmt, scale, block)
    assert dp.scale_block == block
    model = registry.resolve("auto", dp, "B200")
    assert_elementwise(D, "f32", model, a, b, c, sa, sb)


@pytest.mark.parametrize("gpu,fmt,d_fmt", [("H100", "e4m3", "f32"), ("H200", "e5m2", "f16"),
                                           ("B200", "e4m3", "f16")])
def test_fp8_mma_sync_emulation_equals_the_dot_model(gpu, fmt, d_fmt):
    rng = np.random.default_rng(13)
    a, b = words(rng, fmt, (4, 70)), words(rng, fmt, (70, 3))
    c = words(rng, d_fmt, (4, 3))
    D = tcprobe.matmul(as_array(a, DTYPES[fmt]), as_array(b, DTYPES[fmt]),
                       as_array(c, DTYPES[d_fmt]), gpu=gpu, instr="mma",
                       schedule="chain")
    dp = choice.datapath(gpu, "mma", fmt, fmt, d_fmt)
    model = registry.resolve("auto", dp, gpu)
    assert "emulated" in model.name
    assert_elementwise(D, d_fmt, model, a, b, c)


@pytest.mark.parametrize("gpu,instr,a_fmt,b_fmt,d_fmt", [
    ("B200", "tcgen05", "e4m3", "e2m1", "f32"),
    ("B200", "tcgen05", "tf32", "tf32", "f32"),
    ("B200", "tcgen05", "e5m2", "e3m2", "f16"),
    ("B200", "mma", "bf16", "bf16", "f32"),
    ("A100", "mma", "f16", "f16", "f16"),
    ("Ada", "mma", "e4m3", "e5m2", "f32"),
    ("H100", "wgmma", "s8", "s8", "s32"),
    ("H100", None, "bf16", "bf16", "f32"),
])
@pytest.mark.fast_first(2)
def test_compiled_kernel_equals_the_tile_path(gpu, instr, a_fmt, b_fmt, d_fmt):
    rng = np.random.default_rng(17)
    a, b = words(rng, a_fmt, (7, 77), special=0.01), words(rng, b_fmt, (77, 6), special=0.01)
    c = words(rng, d_fmt, (7, 6), special=0.02)
    args = (as_array(a, DTYPES[a_fmt]), as_array(b, DTYPES[b_fmt]), as_array(c, DTYPES[d_fmt]))
    D = tcprobe.matmul(*args, gpu=gpu, instr=instr, schedule="chain")
    fast = words_of(D, d_fmt)
    tiles = words_of(tcprobe.matmul(*args, gpu=gpu, instr=instr, fast=False,
                                    schedule="chain"), d_fmt)
    assert np.array_equal(fast, tiles), f"{int((fast != tiles).sum())} words differ"
    dp = choice.datapath(gpu, instr, a_fmt, b_fmt, d_fmt)
    assert_elementwise(D[:2, :2], d_fmt, registry.resolve("auto", dp, gpu), a[:2], b[:, :2],
                       c[:2, :2])


def test_padding_is_exact():
    """K = 40 on K=16 instructions is the product of K = 48 with zero columns."""
    rng = np.random.default_rng(2)
    a, b = words(rng, "bf16", (6, 40), special=0.0), words(rng, "bf16", (40, 5), special=0.0)
    a48 = np.concatenate([a, np.zeros((6, 8), np.uint32)], axis=1)
    b48 = np.concatenate([b, np.zeros((8, 5), np.uint32)])
    D40 = tcprobe.matmul(as_array(a, DTYPES["bf16"]), as_array(b, DTYPES["bf16"]), gpu="H100")
    D48 = tcprobe.matmul(as_array(a48, DTYPES["bf16"]), as_array(b48, DTYPES["bf16"]),
                         gpu="H100")
    assert np.array_equal(words_of(D40, "f32"), words_of(D48, "f32"))


@pytest.mark.parametrize("d_fmt", ["f32", "f16"])
def test_split_k_is_the_serial_reduction(d_fmt):
    """split_k=3: three products over contiguous K ranges from +0, then
    D = ((C + P0) + P1) + P2 in f32, rounded to nearest even (numpy's f32 add)."""
    rng = np.random.default_rng(4)
    k = 16 * 7
    finite = {"special": 0.0, "extreme": 0.0, "spread": 3}  # no NaN: numpy keeps payloads
    a, b = words(rng, "f16", (5, k), **finite), words(rng, "f16", (k, 4), **finite)
    c = words(rng, d_fmt, (5, 4), **finite)
    A, B, C = as_array(a, np.float16), as_array(b, np.float16), as_array(c, DTYPES[d_fmt])
    D = tcprobe.matmul(A, B, C, gpu="H100", instr="mma", split_k=3, schedule="chain")
    want = C.astype(np.float32)
    for lo, hi in ((0, 32), (32, 80), (80, 112)):  # 7 tiles in ranges of 2, 3, 2
        part = tcprobe.matmul(A[:, lo:hi], B[lo:hi], gpu="H100", instr="mma", dtype=d_fmt,
                              schedule="chain")
        want = want + part.astype(np.float32)
    want = want.astype(DTYPES[d_fmt])
    assert np.array_equal(words_of(D, d_fmt), words_of(want, d_fmt))


def test_defaults_per_gpu():
    assert choice.datapath("V100", None, "f16", "f16", "f32").id == "mma.f16.f32.k4"
    assert choice.datapath("A100", None, "bf16", "bf16", "f32").id == "mma.bf16.f32.k16"
    assert choice.datapath("H100", None, "bf16", "bf16", "f32").id == "wgmma.bf16.f32.k16"
    assert choice.datapath("B200", None, "e4m3", "e4m3", "f32").id == "tcgen05.f8f6f4.e4m3.f32.k32"
    assert choice.datapath("Ada", None, "e4m3", "e4m3", "f32").id == "mma.e4m3.f32.k32"
    with pytest.raises(ValueError, match="H100's instructions take no e2m1"):
        choice.datapath("H100", None, "e2m1", "e2m1", "f32")


def test_dot_on_raw_words():
    # bf16 1.0 * 1.0 sixteen times, plus C = 1.0: 17.0 in f32
    one = 0x3F80
    got = tcprobe.dot([one] * 16, [one] * 16, 0x3F800000, datapath="mma.bf16.f32.k16", gpu="H100")
    assert int(got) == 0x41880000
    # 2**-30 is cut away below the 25-bit window of 1.0 + 2**-30
    tiny = 0x3080  # bf16 2**-30
    got = tcprobe.dot([one, tiny] + [0] * 14, [one, one] + [0] * 14, 0, datapath="mma.bf16.f32.k16",
                      gpu="H100")
    assert int(got) == 0x3F800000
    got = tcprobe.dot([[one] * 16], [[one] * 16], [0], datapath="mma.bf16.f32.k16", model="ieee")
    assert got.tolist() == [0x41800000]


@pytest.mark.parametrize("call,match", [
    (lambda: tcprobe.matmul(np.ones((2, 3), np.float16), np.ones((4, 2), np.float16),
                            gpu="H100"), "B has 4 rows"),
    (lambda: tcprobe.matmul(np.ones((2, 16), ml_dtypes.bfloat16),
                            np.ones((16, 2), ml_dtypes.bfloat16), gpu="V100"), "^A:"),
    (lambda: tcprobe.matmul(np.ones((2, 16), np.float64), np.ones((16, 2), np.float64),
                            gpu="H100"), "^A: dtype float64"),
    (lambda: tcprobe.matmul(np.ones((2, 16), np.float16), np.ones((16, 2), np.float16),
                            gpu="H900"), "^gpu: unknown GPU"),
    (lambda: tcprobe.matmul(np.ones((2, 64), ml_dtypes.float4_e2m1fn),
                            np.ones((64, 2), ml_dtypes.float4_e2m1fn), gpu="B200",
                            scale_a=np.ones((2, 3), ml_dtypes.float8_e8m0fnu),
                            scale_b=np.ones((2, 2), ml_dtypes.float8_e8m0fnu)), "^scale_a is"),
    (lambda: tcprobe.matmul(np.ones((2, 64), ml_dtypes.float4_e2m1fn),
                            np.ones((64, 2), ml_dtypes.float4_e2m1fn), gpu="B200",
                            scale_a=np.ones((2, 2), ml_dtypes.float8_e8m0fnu),
                            scale_b=np.ones((2, 3), ml_dtypes.float8_e8m0fnu)), "^scale_b is"),
    (lambda: tcprobe.matmul(np.ones((2, 16), np.float16), np.ones((16, 2), np.float16),
                            gpu="H100", C=np.zeros((3, 2), np.float32)), "^C is"),
    (lambda: tcprobe.matmul(np.ones((2, 16), np.float16), np.ones((16, 2), np.float16),
                            gpu="A100", instr="wgmma"), "^instr: A100 has no wgmma"),
    (lambda: tcprobe.matmul(np.ones((2, 16), np.float16), np.ones((16, 2), np.float16),
                            gpu="H100", split_k=2), "^split_k=2 but K has only 1"),
    (lambda: tcprobe.matmul(np.ones((2, 16), np.float16), np.ones((16, 2), np.float16),
                            gpu="H100", model="nonesuch"), "^model: unknown model"),
])
def test_bad_input_is_a_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_model_from_a_fit_json(tmp_path):
    """A fit JSON's engine parameters replace the profile: the h100 profile's
    own parameters give its words, a narrower window other words."""
    import json

    from tcprobe.models.profiles import PROFILES

    rng = np.random.default_rng(8)
    a = as_array(words(rng, "bf16", (6, 64), special=0.0), DTYPES["bf16"])
    b = as_array(words(rng, "bf16", (64, 5), special=0.0), DTYPES["bf16"])
    dp = Datapath.parse("mma.bf16.f32.k16")
    params = PROFILES["h100"].params(dp).as_dict()
    same, narrow = tmp_path / "same.json", tmp_path / "narrow.json"
    same.write_text(json.dumps({"datapath": dp.id, "params": params}))
    narrow.write_text(json.dumps({"datapath": dp.id, "params": {**params, "window_bits": 10}}))
    want = words_of(tcprobe.matmul(a, b, gpu="H100", instr="mma"), "f32")
    got = words_of(tcprobe.matmul(a, b, gpu="H100", instr="mma", model=str(same)), "f32")
    assert np.array_equal(got, want)
    other = words_of(tcprobe.matmul(a, b, gpu="H100", instr="mma", model=str(narrow)), "f32")
    assert (other != want).any()
    with pytest.raises(ValueError, match=r"^model \S*missing.json: cannot read"):
        tcprobe.matmul(a, b, gpu="H100", model=str(tmp_path / "missing.json"))
