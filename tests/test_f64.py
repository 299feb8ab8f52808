"""f64 DMMA: the model against an independent reference and hand-derived words.

The reference here is exact rational arithmetic: a word's value is Python's
float of its bits (struct), turned into a Fraction exactly; a sum of products
is exact in Fraction; rounding to nearest even is done by hand below. None of
tcprobe's codecs or models computes an expected word.
"""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
import pytest

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.f64 import ChainParams, F64Model
from tcprobe.models.registry import resolve
from tcprobe.suites.mix import random_cases

DP4 = Datapath("mma", "f64", "f64", "f64", "f64", 4)
ONE, NEG_ZERO, INF, NEG_INF = 0x3FF0000000000000, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000
DEFAULT_NAN = 0xFFF8000000000000  # x86-64's default NaN (what MMA-Sim's host FMA writes)


# ---------------------------------------------------------------------------
# The reference: exact values and RNE by hand.


def value(w: int):
    """'nan', +-inf or the exact Fraction of an f64 word (through Python's float)."""
    x = struct.unpack("<d", struct.pack("<Q", w))[0]
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return x
    return Fraction(x)


def rne(v: Fraction, zero_sign: int = 0) -> int:
    """The f64 word nearest v, ties to even; subnormals; overflow to Inf."""
    if v == 0:
        return zero_sign << 63
    sign = 1 if v < 0 else 0
    m = abs(v)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    while Fraction(2) ** e > m:
        e -= 1
    while Fraction(2) ** (e + 1) <= m:
        e += 1
    e = max(e, -1022)  # below: subnormal, the quantum stays 2^-1074
    scaled = m / Fraction(2) ** (e - 52)  # in [2^52, 2^53) or below for subnormals
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r > scaled.denominator or (2 * r == scaled.denominator and q % 2 == 1):
        q += 1
    if q == 1 << 53:
        q, e = 1 << 52, e + 1
    if e > 1023:
        return (sign << 63) | INF
    if q < 1 << 52:
        return (sign << 63) | q  # subnormal (or rounded up to the smallest normal: q = 2^52)
    return (sign << 63) | ((e + 1023) << 52) | (q - (1 << 52))


def ref_fma(a: int, b: int, c: int) -> int:
    """IEEE fma(a, b, c), RNE, NaN operands quieted in the order a, b, c and
    invalid operations giving the default NaN (the rule MMA-Sim's host FMA has)."""
    for w in (a, b, c):
        if value(w) == "nan":
            return w | (1 << 51)
    va, vb, vc = value(a), value(b), value(c)
    inf = float("inf")
    if (abs(va) == inf and vb == 0) or (va == 0 and abs(vb) == inf):
        return DEFAULT_NAN
    if abs(va) == inf or abs(vb) == inf:
        p_neg = (a >> 63) ^ (b >> 63)
        if abs(vc) == inf and (c >> 63) != p_neg:
            return DEFAULT_NAN
        return (p_neg << 63) | INF
    if abs(vc) == inf:
        return c
    exact = va * vb + vc
    both_neg_zero = exact == 0 and va * vb == 0 and vc == 0 and ((a ^ b) >> 63) & (c >> 63)
    return rne(exact, int(both_neg_zero))


def ref_chain(a, b, c) -> int:
    d = int(c)
    for x, y in zip(a, b, strict=True):
        d = ref_fma(int(x), int(y), d)
    return d


def words(*xs):
    return np.array(xs, np.uint64)


def run(a, b, c, params: ChainParams | None = None, k: int = 4) -> int:
    dp = Datapath("mma", "f64", "f64", "f64", "f64", k)
    a = list(a) + [0] * (k - len(a))
    b = list(b) + [0] * (k - len(b))
    cases = Cases(words(*a)[None, :], words(*b)[None, :], words(c))
    return int(F64Model("t", dp, "", params or ChainParams()).evaluate(cases)[0])


def f(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


# ---------------------------------------------------------------------------
# Hand-derived words.


def test_cancellation_one_plus_2_to_minus_60_minus_one():
    """C = 1, then 2^-60 (lost: 1 + 2^-60 rounds to 1), then -1: +0. The fused
    dot product keeps 2^-60; the chain with the products first as well."""
    a, b = [f(2.0 ** -30), f(-1.0)], [f(2.0 ** -30), ONE]
    assert run(a, b, ONE) == 0
    assert run(a, b, ONE, ChainParams(structure="fused")) == 0x3C30000000000000  # 2^-60
    assert run(a, b, ONE, ChainParams(c_at=4)) == 0  # 2^-60 - 1 = -1 (rounded), + 1 = +0
    assert run(a[::-1], b[::-1], ONE) == 0x3C30000000000000  # 1 - 1 = 0, then + 2^-60


def test_subnormal_results():
    """2^-1000 * 2^-70 = 2^-1070 (16 units of 2^-1074); C = 2^-1074 plus a
    product of 2^-1075 is 1.5 units: the tie goes to 2 units."""
    assert run([f(2.0 ** -1000)], [f(2.0 ** -70)], 0) == 0x10
    assert run([f(2.0 ** -1000)], [f(2.0 ** -75)], 0x1) == 0x2
    assert run([f(2.0 ** -1000)], [f(2.0 ** -76)], 0x1) == 0x1  # 1.25 units: down
    assert run([0x1], [f(2.0 ** 52)], 0) == 0x0010000000000000  # min subnormal * 2^52 = 2^-1022
    assert run([f(2.0 ** -1000)], [f(2.0 ** -75)], 0x2) == 0x2  # 2.5 units: the tie goes down


def test_ties_go_to_even():
    """1 + 2^-53 is halfway between 1 and 1 + 2^-52: even is 1; (1 + 2^-52) +
    2^-53 is halfway up to 1 + 2^-51, which is even."""
    assert run([f(2.0 ** -27)], [f(2.0 ** -26)], ONE) == ONE
    assert run([f(2.0 ** -27)], [f(2.0 ** -26)], f(1 + 2.0 ** -52)) == f(1 + 2.0 ** -51)
    assert run([f(2.0 ** -27)], [f(-(2.0 ** -26))], f(-1.0)) == f(-1.0)
    # just above the tie (a sticky bit far below): up
    assert run([f(2.0 ** -27), f(2.0 ** -600)], [f(2.0 ** -26), f(2.0 ** -600)], ONE,
               ChainParams(structure="fused")) == f(1 + 2.0 ** -52)


def test_specials():
    assert run([INF], [ONE], NEG_INF) == DEFAULT_NAN  # Inf - Inf
    assert run([INF], [0], 0) == DEFAULT_NAN  # Inf * 0
    assert run([INF], [0], 0xFFF8000000000003) == 0xFFF8000000000003  # the NaN operand wins
    assert run([0x7FF0000000000001], [ONE], 0xFFF8000000000003) == 0x7FF8000000000001  # A's, quieted
    assert run([ONE], [ONE], 0x7FF0000000000005) == 0x7FF8000000000005  # C's, quieted
    assert run([f(1.5), 0x7FF0000000000002], [ONE, ONE], 0x7FF8000000000009) == 0x7FF8000000000002
    assert run([INF], [ONE], INF) == INF
    assert run([f(2.0 ** 1023)], [f(2.0)], 0) == INF  # overflow
    # -2^1024 + 2^960 lies past the midpoint 2^1024 - 2^970 of the largest finite
    # value and 2^1024: -Inf; + 2^1000 brings it back to -(2^1024 - 2^1000), exact
    assert run([f(-(2.0 ** 1023))], [f(2.0)], f(2.0 ** 960)) == NEG_INF
    assert run([f(-(2.0 ** 1023))], [f(2.0)], f(2.0 ** 1000)) == 0xFFEFFFFFE0000000  # 2^1023 * (2 - 2^-23)
    assert run([ONE], [ONE], 0x7FF0000000000001, ChainParams(nan=0x7FFFFFFFFFFFFFFF)) == \
        0x7FFFFFFFFFFFFFFF


def test_signed_zeros():
    """-0 + -0 = -0 (every product -0 and C = -0); any +0 term, or an exact
    cancellation, gives +0."""
    z = [NEG_ZERO] * 4
    assert run(z, [ONE] * 4, NEG_ZERO) == NEG_ZERO
    assert run(z, [ONE] * 4, 0) == 0
    assert run(z[:3] + [0], [ONE] * 4, NEG_ZERO) == 0
    assert run([ONE, f(-1.0)], [ONE, ONE], NEG_ZERO) == 0
    assert run(z, [ONE] * 4, NEG_ZERO, ChainParams(structure="fused")) == NEG_ZERO
    assert run(z, [ONE] * 4, NEG_ZERO, ChainParams(c_at=2)) == NEG_ZERO


def test_order_and_c_entry_change_the_word():
    """(1 + 2^-52)^2 then -(1 + 2^-51): the first is rounded before the second
    cancels it (+0); the other way round 2^-104 survives."""
    x, ya, yb = f(1 + 2.0 ** -52), f(-1.0), f(1 + 2.0 ** -51)
    assert run([x, ya], [x, yb], 0) == 0
    assert run([x, ya], [x, yb], 0, ChainParams(k_order=(1, 0, 2, 3))) == f(2.0 ** -104)
    assert run([x], [x], f(-(1 + 2.0 ** -51))) == f(2.0 ** -104)  # C first
    assert run([x], [x], f(-(1 + 2.0 ** -51)), ChainParams(c_at=1)) == 0  # C after the product


# ---------------------------------------------------------------------------
# Random cases against the reference.


@pytest.mark.parametrize("k", [4, 8, 16])
def test_chain_matches_the_exact_reference_on_random_cases(k):
    dp = Datapath("mma", "f64", "f64", "f64", "f64", k)
    cases = random_cases(dp, 1200 if k == 4 else 400, np.random.default_rng(k))
    assert cases.a.dtype == np.uint64 and cases.c.dtype == np.uint64
    got = F64Model("t", dp, "", ChainParams()).evaluate(cases)
    want = [ref_chain(cases.a[i], cases.b[i], cases.c[i]) for i in range(len(cases))]
    bad = [i for i in range(len(cases)) if int(got[i]) != want[i]]
    assert not bad, [(hex(int(got[i])), hex(want[i])) for i in bad[:3]]


def test_fused_matches_one_exact_rounding():
    cases = random_cases(DP4, 800, np.random.default_rng(7))
    got = F64Model("t", DP4, "", ChainParams(structure="fused")).evaluate(cases)
    checked = 0
    for i in range(len(cases)):
        vals = [value(int(w)) for w in (*cases.a[i], *cases.b[i], cases.c[i])]
        if any(not isinstance(v, Fraction) for v in vals):
            continue  # the fused candidate's specials are checked by hand above
        exact = sum(vals[j] * vals[4 + j] for j in range(4)) + vals[8]
        all_neg_zero = all(v == 0 for v in vals[:4]) or all(v == 0 for v in vals[4:8])
        neg = exact == 0 and int(cases.c[i]) == NEG_ZERO and all_neg_zero and all(
            ((int(cases.a[i][j]) ^ int(cases.b[i][j])) >> 63) for j in range(4))
        assert int(got[i]) == rne(exact, int(neg)), i
        checked += 1
    assert checked > 500


# ---------------------------------------------------------------------------
# Profiles, words through the stack.


def test_profiles_from_a100_on_run_f64_with_their_arch_shapes():
    for gpu in ("A100", "Ada", "H100", "H200", "B200"):
        assert resolve("auto", DP4, gpu).evaluate(Cases(words(ONE, 0, 0, 0)[None], words(ONE, 0, 0, 0)[None],
                                                        words(ONE)))[0] == f(2.0)
    k16 = Datapath("mma", "f64", "f64", "f64", "f64", 16)
    resolve("auto", k16, "H200")
    with pytest.raises(ValueError, match="K=16"):
        resolve("auto", k16, "A100")
    with pytest.raises(ValueError, match="f64 shapes: none"):
        resolve("auto", DP4, "V100")
    with pytest.raises(ValueError, match="no f64 form"):
        resolve("two-stage", DP4)


def test_other_datapaths_keep_uint32_words():
    bf = Datapath.parse("mma.bf16.f32.k16")
    cases = random_cases(bf, 64, np.random.default_rng(0))
    assert cases.a.dtype == np.uint32 and cases.c.dtype == np.uint32
    both = Cases.concat([random_cases(DP4, 8, np.random.default_rng(1))] * 2)
    assert both.a.dtype == np.uint64 and both.take([0, 3]).c.dtype == np.uint64


def test_isa_table_f64_facts():
    from tcprobe.models import isa, isa_sass
    from tcprobe.models.datapath import default_datapath

    assert isa.instruction_k("mma", "f64") == 4 and isa.output_types("mma", "f64", "f64") == ("f64",)
    assert default_datapath("mma", "f64").id == "mma.f64.f64.k4"
    assert [isa.f64_shapes(a) for a in ("sm_70", "sm_75")] == [(), ()]
    assert isa.f64_shapes("sm_80") == ((8, 8, 4),) == isa.f64_shapes("sm_89")
    assert isa.f64_shapes("sm_90") == ((8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16))
    assert isa_sass.f64_opcode((8, 8, 4), "sm_80") == ("DMMA.884", False)
    assert isa_sass.f64_opcode((16, 8, 16), "sm_90a") == ("DMMA.16x8x16", False)
    assert isa_sass.f64_opcode((16, 8, 8), "sm_100a") == ("DMMA.8x8x4", True)
    with pytest.raises(isa.IsaError):
        isa_sass.f64_opcode((16, 8, 8), "sm_80")
    with pytest.raises(isa.IsaError):
        isa.instruction_k("wgmma", "f64")
    assert isa.ARCH_MMA_SHAPES.get("sm_80") is None  # bf16/tf32 gemm on A100 keeps every shape
