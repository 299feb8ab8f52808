"""The accumulator engine: against an independent Fraction reference, and
directed feature tests with the words the papers report for each GPU."""

from fractions import Fraction

import numpy as np
import pytest
from engine_reference import reference_dot

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, ParamError, fused_dot
from tcprobe.models.formats import Rounding, encode, get_format
from tcprobe.models.profiles import (
    A100,
    H100,
    V100,
    fma_chain_model,
    ieee_model,
    two_stage_rne_model,
)


def word(fmt, x) -> int:
    """The word of fmt holding the exact value x (a Fraction or int), RNE."""
    x = Fraction(x)
    neg = x < 0
    x = abs(x)
    if x == 0:
        return (1 << (get_format(fmt).width - 1)) if neg else 0
    den = x.denominator
    assert den & (den - 1) == 0, "not a dyadic value"
    mag, e = x.numerator, -(den.bit_length() - 1)
    while mag % 2 == 0:
        mag //= 2
        e += 1
    assert mag.bit_length() <= 62, "value needs more than 62 significant bits"
    return int(encode(fmt, int(neg), mag, e, Rounding.RNE)[()])


def run(profile_or_params, dp, a, b, c):
    """One dot product: a, b are lists of exact values (padded with zeros)."""
    k = dp.k
    a = [word(dp.a_type, x) for x in a] + [0] * (k - len(a))
    b = [word(dp.b_type, x) for x in b] + [0] * (k - len(b))
    cases = Cases(np.array([a]), np.array([b]), np.array([word(dp.c, c)]))
    p = profile_or_params if isinstance(profile_or_params, EngineParams) else profile_or_params.params(dp)
    return int(fused_dot(dp, cases, p)[0])


F16_F32 = {"V100": Datapath("mma", "f16", "f16", "f16", "f32", 4),
           "A100": Datapath("mma", "f16", "f16", "f16", "f32", 8)}
F16_F16 = {"V100": Datapath("mma", "f16", "f16", "f16", "f16", 4),
           "A100": Datapath("mma", "f16", "f16", "f16", "f16", 8)}
PROFILE = {"V100": V100, "A100": A100}
T = Fraction(2)


def f32(x):
    return word("f32", x)


def f16(x):
    return word("f16", x)


# ---------------------------------------------------------------------------
# Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor
# cores", PeerJ CS 7:e330 (2021): the feature tests of their suite
# (north-numerical-computing/tensor-cores-numerical-behavior), with the
# results the paper reports for V100 and A100 (binary16 inputs). Only the
# first positions are nonzero, so the later blocks of a wmma K=16 carry the
# result through unchanged.

BELOW_ONE16 = 1 - T**-11
BELOW_ONE32 = 1 - T**-24


@pytest.mark.parametrize("gpu", ["V100", "A100"])
def test_fasi_subnormal_inputs_and_outputs(gpu):
    dp, p = F16_F32[gpu], PROFILE[gpu]
    assert run(p, dp, [T**-24], [4], 0) == f32(T**-22)
    assert run(p, F16_F16[gpu], [T**-24], [4], 0) == f16(T**-22)
    assert run(p, dp, [], [], T**-149) == 1  # an f32 subnormal C survives
    assert run(p, dp, [T**-14], [T**-1], 0) == f32(T**-15)
    assert run(p, F16_F16[gpu], [T**-14], [1], -(T**-15)) == f16(T**-15)


@pytest.mark.parametrize("gpu", ["V100", "A100"])
def test_fasi_products_are_exact(gpu):
    dp, p = F16_F32[gpu], PROFILE[gpu]
    assert run(p, dp, [BELOW_ONE16], [BELOW_ONE16], 0) == f32(1 - T**-10 + T**-22)
    assert run(p, dp, [BELOW_ONE16] * 4, [BELOW_ONE16] * 4, 0) == f32(4 * (1 - T**-10 + T**-22))
    assert run(p, F16_F16[gpu], [BELOW_ONE16, BELOW_ONE16], [BELOW_ONE16, T**-11], 0) == \
        f16(1 - T**-10 + T**-11)


def test_fasi_accumulation_in_binary32_and_order():
    # V100: 1 * 2^-24 four times is lost against C = 1; the sum starts from the largest term
    dp = F16_F32["V100"]
    assert run(V100, dp, [1] * 4, [T**-24] * 4, 1) == f32(1)
    for j in range(4):
        b = [T**-24] * 4
        b[j] = 1
        assert run(V100, dp, [1] * 4, b, T**-24) == f32(1)
    # A100 (one more alignment bit): 0.5 * 2^-24 is lost
    dp = F16_F32["A100"]
    assert run(A100, dp, [Fraction(1, 2)] * 4, [T**-24] * 4, 1) == f32(1)


@pytest.mark.parametrize("gpu", ["V100", "A100"])
def test_fasi_rounding_modes(gpu):
    dp, p = F16_F32[gpu], PROFILE[gpu]
    assert run(p, dp, [1] * 4, [2, T**-23 + T**-24], 0) == f32(2)  # round down (positive)
    assert run(p, dp, [1] * 4, [-2, -(T**-23) - T**-24], 0) == f32(-2)  # round up (negative)
    # binary16 output is rounded to nearest
    assert run(p, F16_F16[gpu], [T**-24, T**-24], [Fraction(1, 2), Fraction(1, 4)], 0) == f16(T**-24)


def test_fasi_extra_alignment_bits():
    # 1*1 + -(1 - 2^-24): V100 keeps no extra bit (2^-23), A100 one (2^-24)
    assert run(V100, F16_F32["V100"], [1], [1], -BELOW_ONE32) == f32(T**-23)
    assert run(A100, F16_F32["A100"], [1], [1], -BELOW_ONE32) == f32(T**-24)


def test_fasi_normalization():
    # in addition: both GPUs give 1 + 2^-23
    for gpu in ("V100", "A100"):
        assert run(PROFILE[gpu], F16_F32[gpu], [1] * 4, [T**-24] * 4, BELOW_ONE32) == f32(1 + T**-23)
    # in subtraction: V100 2^-23, A100 exactly 0
    args = ([1, 1], [1, -(T**-24)], -1 + T**-24)
    assert run(V100, F16_F32["V100"], *args) == f32(T**-23)
    assert run(A100, F16_F32["A100"], *args) == 0


@pytest.mark.parametrize("gpu", ["V100", "A100"])
def test_fasi_carry_out_bits(gpu):
    dp, p = F16_F32[gpu], PROFILE[gpu]
    for i in range(4):
        b = [1] * 4
        b[i] = T**-23
        assert run(p, dp, [1] * 4, b, 1 + T**-22 + T**-23) == f32(4 + T**-21)
    assert run(p, dp, [1] * 4, [1, Fraction(3, 2), Fraction(7, 4), Fraction(15, 8)],
               Fraction(15, 8)) == f32(8)
    assert run(p, dp, [1] * 4, [1] * 4, 1 + T**-22 + T**-23) == f32(5)
    assert run(p, dp, [1] * 4, [-1] * 4, -1 - T**-22 - T**-23) == f32(-5)


def test_fasi_non_monotonic_dot_product():
    # V100: a larger C gives a smaller result
    dp = F16_F32["V100"]
    partial = run(V100, dp, [1] * 4, [T**-24] * 4, 1 - T**-24)
    assert partial == f32(1 + T**-23)
    assert run(V100, dp, [1] * 4, [T**-24] * 4, 1) == f32(1)
    # A100, with its own vector
    dp = F16_F32["A100"]
    b = [T**-24] * 3 + [T**-23 + T**-24]
    assert run(A100, dp, [Fraction(1, 2)] * 4, b, 1 - T**-24) == f32(1 + T**-23)
    assert run(A100, dp, [Fraction(1, 2)] * 4, b, 1) == f32(1)


# ---------------------------------------------------------------------------
# Block-FMA size (Khattak & Mikaitis's generalized feature tests, as in the
# hwdata README table): 1 - 1 in the first block, a tiny term at position p.
# Inside the block the tiny term falls below the window and vanishes; in a
# later block it is the whole sum and survives exactly.

@pytest.mark.parametrize("profile,fmt,k,block", [
    (A100, "f16", 16, 8), (A100, "bf16", 16, 8), (A100, "tf32", 8, 4),
    (H100, "f16", 32, 16), (H100, "bf16", 32, 16), (H100, "tf32", 16, 8),
    (V100, "f16", 8, 4),
])
def test_block_fma_size(profile, fmt, k, block):
    dp = Datapath("mma", fmt, fmt, fmt, "f32", k)
    tiny = T**-20
    for pos in range(2, k):
        a = [1, 1] + [0] * (k - 2)
        b = [1, -1] + [0] * (k - 2)
        a[pos], b[pos] = tiny, tiny
        got = run(profile, dp, a, b, 0)
        assert got == (f32(tiny * tiny) if pos >= block else 0), pos


def test_zero_floor_of_f16_accumulator_h200():
    # MMA-Sim PR (../shared/seeds): H200 wgmma m64n8k16 f16: 2^-12*2^-13 + 2^-23*2^-24
    # with C = 0 gives 0x0000 (the 2^-47 term is below the window anchored at 2^-21)
    dp = Datapath("wgmma", "f16", "f16", "f16", "f16", 16)
    assert run(H100, dp, [T**-12, T**-23], [T**-13, T**-24], 0) == 0x0000


def test_exact_zero_is_positive():
    # MMA-Sim PR: H200 mma bf16 -> f32, -(2^-75) * 2^-75 + 0 gives +0 (0x0)
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
    assert run(H100, dp, [-(T**-75)], [T**-75], 0) == 0x0
    ieee = H100.params(dp).replace(zero_sign="ieee")
    assert run(ieee, dp, [-(T**-75)], [T**-75], 0) == 0x80000000


# ---------------------------------------------------------------------------
# Against the Fraction reference on random raw words.

CONFIGS = [
    ("mma.f16.f32.k16", EngineParams()),
    ("mma.bf16.f32.k16", EngineParams(window_bits=13, output_frac_bits=13, block_size=8)),
    ("mma.f16.f16.k16", EngineParams(zero_floor=-21, output_rounding="rne")),
    ("mma.tf32.f32.k8", EngineParams(window_bits=24, block_size=4, zero_floor=-132)),
    ("mma.e4m3.f32.k32", EngineParams(window_bits=13, output_frac_bits=13, block_size=16)),
    ("mma.e5m2.f16.k32", EngineParams(window_bits=25, block_size=16, output_rounding="rne",
                                      zero_floor=-21, inter_type="f32", inter_rounding="rz")),
    ("mma.f16.f32.k8", EngineParams(window_bits=None, block_size=8, zero_floor=None,
                                    output_rounding="rne", zero_sign="ieee")),
    ("mma.bf16.f32.k8", EngineParams(window_bits=None, block_size=1, zero_floor=None,
                                     output_rounding="rne", zero_sign="ieee", overflow="ieee")),
    ("mma.f16.f32.k16", EngineParams(window_bits=18, block_size=4, output_rounding="rna",
                                     align="normalized", k_order=tuple(range(15, -1, -1)))),
    ("mma.bf16.f32.k16", EngineParams(window_bits=None, zero_floor=None, c_join="last",
                                      output_rounding="rne", zero_sign="ieee")),
]


def random_words(fmt, shape, rng, finite=False):
    f = get_format(fmt)
    if not finite:
        return rng.integers(0, 1 << f.width, shape, dtype=np.uint64).astype(np.uint32)
    # finite values with exponents spread over the whole range
    sign = rng.integers(0, 2, shape, dtype=np.uint64)
    exp = rng.integers(0, (1 << f.exp_bits) - 1, shape, dtype=np.uint64)
    frac = rng.integers(0, 1 << f.frac_bits, shape, dtype=np.uint64)
    w = (sign << (f.width - 1)) | (exp << f.frac_bits) | frac
    return (w << f.drop_bits).astype(np.uint32)


@pytest.mark.parametrize("dp_id,params", CONFIGS, ids=[f"{i}-{c[0]}" for i, c in enumerate(CONFIGS)])
@pytest.mark.parametrize("finite", [False, True], ids=["raw", "finite"])
def test_engine_matches_fraction_reference(dp_id, params, finite):
    dp = Datapath.parse(dp_id)
    rng = np.random.default_rng(hash((dp_id, finite, params.window_bits)) % 2**32)
    n = 300
    a = random_words(dp.a_type, (n, dp.k), rng, finite)
    b = random_words(dp.b_type, (n, dp.k), rng, finite)
    c = random_words(dp.c, (n,), rng, finite)
    # sparse the inputs a little so cancellations and zeros happen
    zero = rng.random((n, dp.k)) < 0.3
    a[zero] = 0
    got = fused_dot(dp, Cases(a, b, c), params)
    for i in range(n):
        want = reference_dot(dp, a[i], b[i], c[i], params)
        assert int(got[i]) == want, (i, [hex(x) for x in a[i]], [hex(x) for x in b[i]], hex(c[i]))


def test_baselines_differ_where_they_should():
    dp = Datapath("mma", "f16", "f16", "f16", "f32", 4)
    a = [word("f16", 1), word("f16", 1), word("f16", T**-12), 0]
    b = [word("f16", 1), word("f16", T**-12), word("f16", T**-12), 0]
    cases = Cases(np.array([a]), np.array([b]), np.array([word("f32", -1)]))
    # exact sum = 2^-12 + 2^-24: IEEE keeps both; a chain of FMAs too
    assert ieee_model(dp).evaluate(cases)[0] == f32(T**-12 + T**-24)
    assert fma_chain_model(dp).evaluate(cases)[0] == f32(T**-12 + T**-24)
    # two-stage: 1 + 2^-12 + 2^-24 ties in f32 and rounds to even before C joins
    assert two_stage_rne_model(dp).evaluate(cases)[0] == f32(T**-12)
    # the V100 window (F=23 below 2^0) drops 2^-24
    assert V100.model(dp).evaluate(cases)[0] == f32(T**-12)


def test_carry_bits_wrap_the_accumulator():
    dp = Datapath("mma", "f16", "f16", "f16", "f32", 4)
    big = (T**1) * (2 - T**-10)  # largest significand, exponent 1: products just under 16
    p = EngineParams(window_bits=23, block_size=4, zero_floor=-131)
    full = run(p, dp, [big] * 4, [big] * 4, 0)
    assert full == f32(4 * big * big)
    # the anchor is 2^2 (raw exponents 1 + 1); the sum, just under 2^6, needs
    # 4 integer bits above it: with 4 it fits, with 3 it wraps
    assert run(p.replace(carry_bits=4), dp, [big] * 4, [big] * 4, 0) == full
    assert run(p.replace(carry_bits=3), dp, [big] * 4, [big] * 4, 0) != full


def test_specials():
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 4)
    p = EngineParams(block_size=4)
    inf, ninf, nan = 0x7F80, 0xFF80, 0x7FC1

    def one(a, b, c=0):
        cases = Cases(np.array([a + [0] * (4 - len(a))]), np.array([b + [0] * (4 - len(b))]),
                      np.array([c]))
        return int(fused_dot(dp, cases, p)[0])

    assert one([inf], [0x3F80]) == 0x7F800000
    assert one([inf], [0]) == 0x7FFFFFFF  # Inf * 0
    assert one([inf, ninf], [0x3F80, 0x3F80]) == 0x7FFFFFFF  # +Inf - Inf
    assert one([nan], [0x3F80]) == 0x7FFFFFFF
    assert one([inf], [0x3F80], 0xFF800000) == 0x7FFFFFFF
    assert one([ninf], [0x3F80], 0x3F800000) == 0xFF800000


def test_bad_params_are_clear_errors():
    dp = Datapath("mma", "f16", "f16", "f16", "f32", 4)
    cases = Cases(np.zeros((1, 4)), np.zeros((1, 4)), np.zeros(1))
    with pytest.raises(ParamError, match="output_rounding"):
        fused_dot(dp, cases, EngineParams(output_rounding="up"))
    with pytest.raises(ParamError, match="k_order"):
        fused_dot(dp, cases, EngineParams(k_order=(0, 0, 1, 2)))
    with pytest.raises(ParamError, match="unknown engine parameter"):
        EngineParams.from_dict({"window": 3})
