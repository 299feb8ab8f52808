"""The compiled v_mfma paths (models/amd_fast.py) against the
scalar one it stands in for (models/amd.py, which the MMA-Sim tests hold to
MMA-Sim's AMD words): the same f32 word for every case, on words drawn to
cancel, to sit far apart, to be subnormal, to overflow and to be NaN or Inf,
under windows and blocks across the range the compiled path takes."""

from __future__ import annotations

import numpy as np
import pytest

from tcprobe.models import amd, amd_fast
from tcprobe.models.amd import MfmaModel, MfmaParams
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format

CDNA3 = ["mfma.f16.f32.k16", "mfma.bf16.f32.k8", "mfma.xf32.tf32.f32.k8",
         "mfma.fp8.e4m3fnuz.f32.k32", "mfma.fp8.e5m2fnuzxe4m3fnuz.f32.k16", "mfma.f32.f32.k4",
         "mfma.f32.f32.k1"]
CDNA12 = [("MI100", "mfma.f16.f32.k16"), ("MI100", "mfma.bf16.f32.k8"), ("MI100", "mfma.bf16.f32.k2"),
          ("MI250X", "mfma.f16.f32.k16"), ("MI250X", "mfma.bf16.f32.k4"),
          ("MI250X", "mfma.bf16_1k.bf16.f32.k16")]


def _words(rng, fmt, shape, centre, spread):
    """Words of ``fmt``: mostly exponents within ``spread`` of ``centre`` (per row),
    some zeros and subnormals, some uniform random bit patterns (specials too)."""
    f = get_format(fmt)
    ebits, fbits = f.exp_bits, f.frac_bits
    top = (1 << ebits) - 1
    e = np.clip(centre[:, None] + rng.integers(-spread, spread + 1, shape), 0, top - 1)
    frac = rng.integers(0, 1 << fbits, shape)
    sign = rng.integers(0, 2, shape)
    drop = 13 if f.name == "tf32" else 0  # xf32: an f32 word, the datapath reads 19 bits
    w = (sign << (f.width - 1)) | (((e << fbits) | frac) << drop)
    pick = rng.random(shape)
    w = np.where(pick < 0.05, 0, w)
    w = np.where((pick >= 0.05) & (pick < 0.10), (frac << drop) | (sign << (f.width - 1)), w)
    w = np.where(pick >= 0.97, rng.integers(0, 1 << f.width, shape), w)  # any word
    if f.name.endswith("fnuz"):
        w = np.where(w == 1 << (f.width - 1), 0, w)  # keep the NaN for the uniform draw only
        w = np.where(pick >= 0.995, 1 << (f.width - 1), w)
    if drop:  # bits the datapath ignores
        w = w | rng.integers(0, 1 << drop, shape)
    return w.astype(np.uint32)


def _cases(dp, n, seed, c_spread, spread=3):
    rng = np.random.default_rng(seed)
    fa, fb = get_format(dp.a_type), get_format(dp.b_type)
    centre_a = rng.integers(1, (1 << fa.exp_bits) - 1, n)
    centre_b = rng.integers(1, (1 << fb.exp_bits) - 1, n)
    a = _words(rng, dp.a_type, (n, dp.k), centre_a, spread)
    b = _words(rng, dp.b_type, (n, dp.k), centre_b, spread)
    # a fifth of the rows cancel: the second half of A negates the first, B repeats
    half, sign_a = dp.k // 2, 1 << (get_format(dp.a_type).width - 1)
    cancel = rng.random(n) < 0.2
    a[cancel, half:2 * half] = a[cancel, :half] ^ sign_a
    b[cancel, half:2 * half] = b[cancel, :half]
    # C near the products' exponent sum, or anywhere (far above, far below)
    near = np.clip(centre_a - fa.bias + centre_b - fb.bias + 127, 1, 254)
    c = _words(rng, "f32", (n, 1), near, c_spread)[:, 0]
    c = np.where(rng.random(n) < 0.3, rng.integers(0, 1 << 32, n, dtype=np.uint64), c)
    return Cases(a, b, c.astype(np.uint32))


def _params(dp, rng, gpu="MI300X"):
    if gpu == "MI100":
        yield from (MfmaParams("exact", L) for L in (4 if dp.a_type == "f16" else 2, 1, 3, dp.k))
        return
    if gpu == "MI250X":
        yield from (MfmaParams("ftz", P) for P in (2, 4, 2, 4) if dp.k % P == 0)
        return
    if dp.kind == "f32":
        yield from [MfmaParams("fma")] * 4
        return
    design = "grouped" if dp.kind == "fp8" else "truncated"
    yield MfmaParams(design, 16 if design == "grouped" else 8, 24, 31)  # MI300X's
    for _ in range(3):
        yield MfmaParams(design, int(rng.choice([1, 2, 3, 4, dp.k, 1000])),
                         int(rng.integers(0, amd_fast.WINDOW_MAX + 1)),
                         int(rng.integers(0, amd_fast.WINDOW_MAX + 1)))


@pytest.mark.parametrize("dp_id", CDNA3)
def test_the_compiled_path_writes_the_scalar_words(dp_id):
    dp = Datapath.parse(dp_id)
    rng = np.random.default_rng(len(dp_id))
    for j, p in enumerate(_params(dp, rng)):
        model = MfmaModel("m", dp, "", p)
        assert amd_fast.fits(amd.effective(p, dp), dp)
        cases = _cases(dp, 300, j, 60 if j % 2 else 8)
        got = model.evaluate(cases)
        want = model.scalar_words(cases)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (p, bad[:5], [hex(int(x)) for x in got[bad[:5]]],
                               [hex(int(x)) for x in want[bad[:5]]])


@pytest.mark.slow
@pytest.mark.parametrize("dp_id", CDNA3)
def test_the_compiled_path_writes_the_scalar_words_many(dp_id):
    dp = Datapath.parse(dp_id)
    rng = np.random.default_rng(100 + len(dp_id))
    for j in range(12):
        for p in list(_params(dp, rng))[1:]:
            model = MfmaModel("m", dp, "", p)
            cases = _cases(dp, 500, 100 + j, (2, 8, 30, 120)[j % 4])
            assert np.array_equal(model.evaluate(cases), model.scalar_words(cases)), (p, j)


@pytest.mark.parametrize("gpu,dp_id", CDNA12)
def test_the_older_designs_write_the_scalar_words(gpu, dp_id):
    """MI100's exact sums and MI250X's flushed pair tree, under their profiles'
    blocks and others."""
    dp = Datapath.parse(dp_id)
    for j, p in enumerate(_params(dp, None, gpu)):
        model = MfmaModel("m", dp, "", p)
        assert amd_fast.fits(amd.effective(p, dp), dp)
        for spread in (8, 60):
            cases = _cases(dp, 300, 10 * j + spread, spread)
            got, want = model.evaluate(cases), model.scalar_words(cases)
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, (p, bad[:5], [hex(int(x)) for x in got[bad[:5]]],
                                   [hex(int(x)) for x in want[bad[:5]]])


@pytest.mark.parametrize("gpu,dp_id", [("MI300X", "mfma.f32.f32.k4"), ("MI100", "mfma.f16.f32.k16"),
                                        ("MI100", "mfma.bf16.f32.k8"), ("MI250X", "mfma.bf16.f32.k8")])
def test_far_apart_terms_round_as_the_exact_sum(gpu, dp_id):
    """Sums whose terms lie more than 62 bits apart (a C far above or below the
    products, products spread over many binades): the compiled sum keeps a
    62-bit window and the rest as a floor and a sticky bit; the scalar path
    adds Python integers exactly. Same words."""
    from tcprobe.models import amd_profiles

    dp = Datapath.parse(dp_id)
    model = amd_profiles.model_for(dp, gpu)
    for seed, (c_spread, spread) in enumerate([(40, 3), (80, 3), (20, 20), (60, 40)]):
        cases = _cases(dp, 400, 50 + seed, c_spread, spread)
        got, want = model.evaluate(cases), model.scalar_words(cases)
        assert np.array_equal(got, want), (seed, np.flatnonzero(got != want)[:5])


def test_a_far_product_breaks_a_tie():
    """MI300X f32 (the FMA chain, K = 1), worked by hand; every sum below spans
    more than 62 bits, so the compiled path keeps C's part in a window and the
    product's low bits as a floor and a sticky bit.
    Row 0: C = 1.0 (0x3F800000), a = 2^-12 (1 + 2^-23) (0x39800001), b = 2^-12
    (0x39800000): 1 + 2^-24 + 2^-47, above the tie 1 + 2^-24: 0x3F800001.
    Row 1: the product negated, C = 1 + 2^-22 (0x3F800002): 1 + 3 * 2^-24 - 2^-47,
    below the tie between 0x3F800001 and 0x3F800002: 0x3F800001.
    Row 2: b = 2^-12 (1 - 2^-23) (0x397FFFFE): the product is 2^-24 - 2^-70, and
    C = 1 + 2^-23 (0x3F800001) gives 1 + 3 * 2^-24 - 2^-70, below the tie only by
    the bit the sticky holds: 0x3F800001 (the tie would go to 0x3F800002).
    Row 3: row 2 negated throughout: -(1 + 3 * 2^-24 - 2^-70), 0xBF800001.
    Row 4: C = 1.0 and 2^-24 alone: the tie goes to the even 1.0 (0x3F800000)."""
    dp = Datapath.parse("mfma.f32.f32.k1")
    model = MfmaModel("m", dp, "", MfmaParams("fma"))
    a = np.array([[0x39800001], [0xB9800001], [0x39800001], [0xB9800001], [0x39800000]],
                 np.uint32)
    b = np.array([[0x39800000], [0x39800000], [0x397FFFFE], [0x397FFFFE], [0x39800000]],
                 np.uint32)
    c = np.array([0x3F800000, 0x3F800002, 0x3F800001, 0xBF800001, 0x3F800000], np.uint32)
    for words in (model.evaluate(Cases(a, b, c)), model.scalar_words(Cases(a, b, c))):
        assert [hex(int(x)) for x in words] == ["0x3f800001", "0x3f800001", "0x3f800001",
                                                "0xbf800001", "0x3f800000"]


def test_a_flushed_operand_loses_its_sign():
    """MI250X bf16 (ftz, P = 2), worked by hand. C = -1.5 * 2^-126 (0x80C00000) is
    normal and kept; the first pair is 1 * 2^-126 + 0 * 0 = 2^-126, and C plus it
    is -2^-127, subnormal, flushed to -0. The second pair decides the sign of the
    zero: in row 0, a negative subnormal A (0x8001) is flushed to +0, so its
    product is +0 and -0.5 * 2^-126 = -2^-127 flushes to -0: -0 + +0 = +0, and
    -0 + +0 = +0 is written. In row 1 that A is -0.5 (0xBF00): both products are
    flushed to -0, so the sum and D stay -0."""
    from tcprobe.models import amd_profiles

    dp = Datapath.parse("mfma.bf16.f32.k4")
    model = amd_profiles.model_for(dp, "MI250X")
    assert model.params == MfmaParams("ftz", 2)
    a = np.array([[0x3F80, 0x0000, 0x8001, 0x3F00], [0x3F80, 0x0000, 0xBF00, 0x3F00]], np.uint32)
    b = np.array([[0x0080, 0x0000, 0x0080, 0x8080], [0x0080, 0x0000, 0x0080, 0x8080]], np.uint32)
    cases = Cases(a, b, np.array([0x80C00000, 0x80C00000], np.uint32))
    for words in (model.evaluate(cases), model.scalar_words(cases)):
        assert [hex(int(x)) for x in words] == ["0x0", "0x80000000"]


def test_rows_with_specials_go_to_the_scalar_path():
    """A NaN operand, an Inf C, a running sum that overflows in the first block
    and a product of 2**128 (xf32: 2**64 * 2**64) are left to the scalar path;
    finite rows are not."""
    dp = Datapath.parse("mfma.xf32.tf32.f32.k8")
    one, two64, big = 0x3F800000, 0x5F800000, 0x7F000000  # 1, 2^64, 2^127
    a = np.full((5, 8), one, np.uint32)
    b = np.full((5, 8), one, np.uint32)
    c = np.zeros(5, np.uint32)
    a[1, 3] = 0x7FC00000  # NaN
    c[2] = 0xFF800000  # -Inf
    a[3, :4], b[3, :4] = big, 0x40000000  # 4 x 2^128 in block 0 (L = 4): +Inf, then block 1
    a[4, 0], b[4, 0] = two64, two64  # 2^128: an Inf product
    p = MfmaParams("truncated", 4, 24, 31)
    _, rows = amd_fast.evaluate(p, get_format("tf32"), get_format("tf32"), a, b, c)
    assert list(rows) == [1, 2, 4] or list(rows) == [1, 2, 3, 4]
    got = MfmaModel("m", dp, "", p).evaluate(Cases(a, b, c))
    # by hand: 8 x 1 = 0x41000000; a NaN anywhere: 0x7FFFFFFF; -Inf + 8: -Inf;
    # 2^127 * 2 four times overflows f32 to +Inf, and +Inf + 4 stays +Inf
    assert [hex(int(x)) for x in got] == ["0x41000000", "0x7fffffff", "0xff800000",
                                          "0x7f800000", "0x7f800000"]


def test_windows_past_the_compiled_range_run_the_scalar_path():
    dp = Datapath.parse("mfma.f16.f32.k16")
    wide = MfmaParams("truncated", 8, amd_fast.WINDOW_MAX + 1, 31)
    assert not amd_fast.fits(amd.effective(wide, dp), dp)
    cases = _cases(dp, 50, 7, 8)
    model = MfmaModel("m", dp, "", wide)
    assert np.array_equal(model.evaluate(cases), model.scalar_words(cases))


@pytest.mark.parametrize("gpu,dtype,spread", [
    ("MI300X", "bfloat16", 30), ("MI300X", "float16", 30), ("MI300X", "float32", 30),
    ("MI250X", "bfloat16", 30), ("MI250X", "float16", 30), ("MI100", "bfloat16", 30),
    ("MI100", "float16", 30),
    # products from 2**-260 to 2**254 (past 2**128: Inf; 2**127 tops: tested one by one)
    ("MI300X", "bfloat16", 127), ("MI300X", "float32", 127),
    # the grouped design (CDNA3 fp8: even and odd products apart)
    ("MI300X", "float8_e4m3fnuz", 6), ("MI300X", "float8_e5m2fnuz", 12)])
def test_the_gemm_form_writes_the_tile_chain_words(gpu, dtype, spread):
    """tcprobe.matmul's compiled GEMM form (amd_fast.gemm_words: A and B decoded
    once, each output's instructions in turn, an output the compiled sums
    leave finished on the scalar path from that instruction on) against the
    tile chain (fast=False: MfmaModel.evaluate on every tile): the same words,
    with NaN, Inf, huge, tiny and zero operands and K not a multiple of the
    instruction's; operands spread over 2**-spread .. 2**spread."""
    torch = pytest.importorskip("torch")
    import tcprobe

    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(3)
    a = torch.randn(24, 70, generator=g) * torch.exp2(
        torch.randint(-spread, spread, (24, 70), generator=g).float())
    b = torch.randn(70, 20, generator=g) * torch.exp2(
        torch.randint(-spread, spread, (70, 20), generator=g).float())
    a[0, 3], a[1, :] = float("nan"), 0.0
    b[5, 2], b[6, 7], b[:, 9] = float("inf"), -float("inf"), 1e-40
    a, b = a.to(dt), b.to(dt)
    fast = tcprobe.matmul(a, b, gpu=gpu)
    tiles = tcprobe.matmul(a, b, gpu=gpu, fast=False)
    assert torch.equal(fast.view(torch.int32), tiles.view(torch.int32))



@pytest.mark.parametrize("gpu,dtype", [("MI300X", "bfloat16"), ("MI300X", "float32"),
                                       ("MI250X", "float16")])
def test_threads_split_the_rows_and_keep_the_words(gpu, dtype):
    """A product large enough for matmul to thread it (64 x 64 outputs over 16 or
    more instructions): jobs=3 (rows in three parts, outputs left to the scalar
    path included) writes the words of jobs=1."""
    torch = pytest.importorskip("torch")
    import tcprobe

    g = torch.Generator().manual_seed(5)
    a = (torch.randn(64, 256, generator=g) * 1e3).to(getattr(torch, dtype))
    b = (torch.randn(256, 64, generator=g) * 1e-3).to(getattr(torch, dtype))
    a[2, 9], b[40, 1] = float("nan"), float("inf")
    one = tcprobe.matmul(a, b, gpu=gpu, jobs=1)
    three = tcprobe.matmul(a, b, gpu=gpu, jobs=3)
    assert torch.equal(one.view(torch.int32), three.view(torch.int32))
    assert torch.isnan(one[2]).all() and not torch.isnan(one[3]).any()


def test_the_gemm_form_tests_products_of_2_to_128_one_by_one():
    """MI300X bf16 (truncated, one instruction of K = 16), worked by hand: a
    product of 2**128 or more is an Inf (models/amd.py, after MMA-Sim), so
    +2**128 and -2**128 make NaN where their integer sum would cancel to 0.
    Columns: 2**64 x (2**64, -2**64): NaN; 2**64 x (2**63, 2**63): 2**128
    rounds to +Inf; 2**64 x (2**63, -2**63): products 2**127 cancel, +0;
    (2 - 2**-7) * 2**64 x (2 - 2**-7) * 2**63 (+, -): each product (2 -
    2**-7)**2 * 2**127 is past 2**128 though the operands' exponents sum
    to 127: NaN."""
    import ml_dtypes

    import tcprobe

    top = 2.0 - 2.0 ** -7  # bf16's largest significand
    a = np.zeros((1, 16), np.float32)
    a[0, :2] = [2.0 ** 64, 2.0 ** 64]
    a2 = np.zeros((1, 16), np.float32)
    a2[0, :2] = [top * 2.0 ** 64, top * 2.0 ** 64]
    b = np.zeros((16, 3), np.float32)
    b[:2, 0] = [2.0 ** 64, -(2.0 ** 64)]
    b[:2, 1] = [2.0 ** 63, 2.0 ** 63]
    b[:2, 2] = [2.0 ** 63, -(2.0 ** 63)]
    b2 = np.zeros((16, 1), np.float32)
    b2[:2, 0] = [top * 2.0 ** 63, -top * 2.0 ** 63]
    bf = ml_dtypes.bfloat16
    d = np.asarray(tcprobe.matmul(a.astype(bf), b.astype(bf), gpu="MI300X")).view(np.uint32)[0]
    d2 = np.asarray(tcprobe.matmul(a2.astype(bf), b2.astype(bf), gpu="MI300X")).view(np.uint32)
    nan = [w for w in (d[0], d2[0, 0]) if w & 0x7F800000 == 0x7F800000 and w & 0x7FFFFF]
    assert len(nan) == 2, [hex(w) for w in (*d, d2[0, 0])]
    assert d[1] == 0x7F800000 and d[2] == 0
