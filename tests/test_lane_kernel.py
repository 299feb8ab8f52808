"""The lane kernel (models/kernels/lane_kernel.py, the block's lanes as vector code
in models/kernels/lanes_ir.py) gives the plain kernel's words: at the edges of the
integer widths it picks (sums of the largest products of one sign, which
overflow an int32 where the kernel must use 64-bit lanes), over windows of
0 to 56 bits, blocks of 1 to K lanes and K orders, on batches that end
inside a chunk, and it finds a word's stray bits in any block."""

import numpy as np
import pytest

from tcprobe.models.cases import Cases, CasesError
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, Speed, fused_dot
from tcprobe.models.formats import Specials, get_format
from tcprobe.models.kernels import lane_kernel
from tcprobe.models.kernels.kernel_params import kernel_params
from tcprobe.models.kernels.lanes_ir import block_config, widths
from tcprobe.models.model import FixedPointModel

BF16 = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
F16_K32 = Datapath("mma", "f16", "f16", "f16", "f32", 32)
TF32 = Datapath("mma", "tf32", "tf32", "tf32", "f32", 8)
E4M3 = Datapath("mma", "e4m3", "e4m3", "e4m3", "f32", 32)
E5M2_E2M1 = Datapath("tcgen05", "f8f6f4", "e5m2", "e2m1", "f16", 32)


def largest_words(fmt_name: str, exps: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Words of the largest significand at biased exponents ``exps`` (the
    all-ones fraction; e4m3's all-ones code is its NaN, so one less there)."""
    fmt = get_format(fmt_name)
    frac = (1 << fmt.frac_bits) - 1
    top = (1 << fmt.exp_bits) - 1
    exps = np.minimum(exps, top - 1 if fmt.specials == Specials.IEEE else top)
    fracs = np.where((exps == top) & (fmt.specials == Specials.FN), frac - 1, frac)
    words = (signs.astype(np.int64) << (fmt.width - 1)) | (exps << fmt.frac_bits) | fracs
    return (words << fmt.drop_bits).astype(np.uint32)


def extreme_cases(dp: Datapath, n: int, seed: int) -> Cases:
    """Cases whose products are the largest of their formats at one exponent
    (the largest sums a block can make), of one sign or of random signs, and
    random raw words between them."""
    rng = np.random.default_rng(seed)
    out = []
    for part in range(3):
        fa, fb = get_format(dp.a_type), get_format(dp.b_type)
        ea = rng.integers(1, 1 << fa.exp_bits, (n, 1)).repeat(dp.k, 1)
        eb = rng.integers(1, 1 << fb.exp_bits, (n, 1)).repeat(dp.k, 1)
        sign = (rng.integers(0, 2, (n, 1)).repeat(dp.k, 1) if part < 2
                else rng.integers(0, 2, (n, dp.k)))
        a = largest_words(dp.a_type, ea, sign if part != 1 else np.zeros_like(sign))
        b = largest_words(dp.b_type, eb, np.zeros_like(sign) if part != 1 else sign)
        c_fmt = get_format(dp.c)
        c = rng.integers(0, c_fmt.word_mask + 1, n, dtype=np.uint64).astype(np.uint32)
        c[rng.random(n) < 0.5] = 0
        out.append((a, b, c))
    a, b, c = (np.concatenate(x) for x in zip(*out, strict=True))
    raw = lambda t, shape: rng.integers(0, get_format(t).word_mask + 1, shape,  # noqa: E731
                                        dtype=np.uint64).astype(np.uint32)
    a = np.concatenate([a, raw(dp.a_type, (n, dp.k))])
    b = np.concatenate([b, raw(dp.b_type, (n, dp.k))])
    c = np.concatenate([c, raw(dp.c, n)])
    return Cases(a, b, c)


def assert_same_words(dp, params, cases):
    assert lane_kernel.applies(kernel_params(dp, params, dp.k))
    fast = fused_dot(dp, cases, params, fast=True)
    plain = fused_dot(dp, cases, params, fast=False)
    bad = np.flatnonzero(fast != plain)
    assert bad.size == 0, (f"{dp.id} {params}: {bad.size} of {len(cases)} words differ, first "
                           f"case {int(bad[0])}: fast {int(fast[bad[0]]):#x} plain "
                           f"{int(plain[bad[0]]):#x}")


def test_widths_follow_the_largest_sum():
    """32-bit lanes where the largest sum of a block fits an int32, else 64."""
    f16, bf16 = get_format("f16").spec, get_format("bf16").spec
    # 16 products of 11-bit significands at a 25-bit window: 16 * (2047**2 << 5) < 2**31
    assert widths(block_config(f16, f16, 16, 25, -133)) == (32, 32, 32)
    # 32 of them do not fit: the sum goes to 64 bits
    assert widths(block_config(f16, f16, 32, 25, -133)) == (32, 32, 64)
    # a 30-bit window puts one product past 2**31
    assert widths(block_config(f16, f16, 1, 30, -133)) == (32, 64, 64)
    assert widths(block_config(bf16, bf16, 16, 25, -133)) == (32, 32, 32)


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("dp", [BF16, F16_K32, TF32, E4M3, E5M2_E2M1], ids=lambda d: d.id)
@pytest.mark.parametrize("bits", [0, 3, 13, 24, 25, 29, 30, 40, 56])
def test_windows_at_the_width_edges(dp, bits):
    params = EngineParams(window_bits=bits, block_size=dp.k, zero_floor=-133,
                          output_rounding="rne")
    assert_same_words(dp, params, extreme_cases(dp, 400, seed=bits))


@pytest.mark.slow
@pytest.mark.parametrize("block", [1, 2, 3, 4, 7, 8, 16, 32])
def test_blocks_and_orders(block):
    """Every way the kernel lays out a block: one case a vector lane
    (blocks of 1, 2, 4 and 8: lanes_ir.across_applies), several cases side
    by side (3, 7), one case a call (16, 32); blocks of a longer row, so the
    rows of a call lie K words apart."""
    rng = np.random.default_rng(block)
    order = tuple(int(x) for x in rng.permutation(F16_K32.k))
    for k_order in (None, order):
        params = EngineParams(window_bits=24, block_size=block, k_order=k_order,
                              inter_type="f16", inter_rounding="rna", carry_bits=3,
                              carry_top="normalize", zero_sign="ieee")
        assert_same_words(F16_K32, params, extreme_cases(F16_K32, 300, seed=block))


@pytest.mark.parametrize("n", [0, 1, 15, 17, lane_kernel.CHUNK - 1, lane_kernel.CHUNK,
                               lane_kernel.CHUNK + 1, 3 * lane_kernel.CHUNK + 17])
@pytest.mark.parametrize("dp", [BF16, TF32], ids=lambda d: d.id)
def test_batches_ending_inside_a_chunk(n, dp):
    """Batches that end inside a chunk, and inside a call of ACROSS cases
    (TF32's blocks of 8: the last cases of a chunk go one by one)."""
    params = EngineParams(window_bits=25, block_size=dp.k)
    cases = extreme_cases(dp, max(n, 1), seed=n).take(slice(0, n))
    assert_same_words(dp, params, cases)


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("where", ["first block", "middle block", "tail block"])
def test_stray_bits_in_any_block(where):
    """A word with a bit above its format is refused wherever it sits (the
    lane kernel scans each block's words as it loads them)."""
    params = EngineParams(window_bits=25, block_size=5)  # blocks 0-4, 5-9, ..., 30-31
    model = FixedPointModel("blocks of 5", F16_K32, params=params)
    cases = extreme_cases(F16_K32, 2000, seed=3)
    lane = {"first block": 2, "middle block": 17, "tail block": 31}[where]
    cases.b[4321, lane] = 0x18000
    with pytest.raises(CasesError, match="a word of b does not fit"):
        model.evaluate(cases, Speed("always"))


FORMATS = ["bf16", "f16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]


def random_configuration(rng):
    """A datapath and EngineParams drawn over every knob the lane kernel
    takes: formats (mixed fp8/fp6/fp4 pairs), K, blocks, windows 0-39, floors,
    roundings, kept bits, zero signs, overflow, carry bits and tops, K
    orders, intermediate stages, C joined last."""
    family = str(rng.choice(["mma", "tcgen05"]))
    a = str(rng.choice(FORMATS))
    b = a if a in ("bf16", "f16", "tf32") or rng.random() < 0.5 else str(rng.choice(FORMATS[3:]))
    d = "f32" if a in ("tf32", "bf16") else str(rng.choice(["f32", "f16"]))
    k = int(rng.choice([4, 8, 16, 32, 64]))
    kind = "f8f6f4" if family == "tcgen05" and a.startswith("e") else a
    p = dict(window_bits=int(rng.integers(0, 40)),
             block_size=int(rng.choice([1, 2, 3, 4, 5, 7, 8, 16, 32, k])),
             zero_floor=int(rng.choice([-133, -150, -21, -40])),
             output_rounding=str(rng.choice(["rz", "rne", "rna"])),
             zero_sign=str(rng.choice(["positive", "ieee"])),
             overflow=str(rng.choice(["inf", "saturate", "ieee"])))
    if rng.random() < 0.3:
        p.update(carry_bits=int(rng.integers(1, 6)),
                 carry_top=str(rng.choice(["wrap", "saturate", "normalize"])))
    if rng.random() < 0.3:
        p["k_order"] = tuple(int(x) for x in rng.permutation(k))
    if rng.random() < 0.3:
        p.update(inter_type=str(rng.choice(["f32", "f16", "bf16"])),
                 inter_rounding=str(rng.choice(["rz", "rne", "rna"])))
    if rng.random() < 0.2:
        p["c_join"] = "last"
    if rng.random() < 0.3:
        p["output_frac_bits"] = int(rng.integers(2, (23 if d == "f32" else 10) + 1))
    return Datapath(family, kind, a, b, d, k), EngineParams(**p)


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("seed", range(12))
def test_random_configurations(seed):
    """Random configurations, 12 repeatable draws (a sweep of 120 draws of
    the same kind during this work found no word that differs)."""
    dp, params = random_configuration(np.random.default_rng(1000 + seed))
    assert_same_words(dp, params, extreme_cases(dp, 150, seed=seed))
