"""Suites: reproducible from the seed, valid words for every datapath, and
each adversarial generator puts its terms where it says."""

import hashlib
from fractions import Fraction

import numpy as np
import pytest

from tcprobe import suites
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Class, decode, get_format, to_fraction
from tcprobe.suites import adversarial as adv
from tcprobe.suites.words import Bits, specials

DATAPATHS = [
    "mma.bf16.f32.k16", "mma.f16.f16.k16", "mma.tf32.f32.k8", "mma.e4m3.f32.k32",
    "wgmma.e5m2.f16.k32", "tcgen05.f8f6f4.e2m3xe3m2.f32.k32", "tcgen05.f8f6f4.e2m1.f16.k32",
    "tcgen05.i8.s8xu8.s32.k32.sat", "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1",
    "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "tcgen05.f16.bf16.f32.k16.sparse",
    "tcgen05.tf32.f32.k8.sparse", "tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse",
]
BF16 = Datapath.parse("mma.bf16.f32.k16")


def same(x: Cases, y: Cases) -> bool:
    for f in ("a", "b", "c", "scale_a", "scale_b", "active"):
        u, v = getattr(x, f), getattr(y, f)
        if (u is None) != (v is None) or (u is not None and not np.array_equal(u, v)):
            return False
    return True


def digest(cases: Cases) -> str:
    h = hashlib.sha256()
    for f in ("a", "b", "c"):
        h.update(np.ascontiguousarray(getattr(cases, f), np.uint32).tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("dp_id", DATAPATHS)
def test_every_suite_makes_valid_cases(dp_id):
    dp = Datapath.parse(dp_id)
    for s in suites.SUITES:
        cases, which = suites.generate(dp, s, 5, 0, 3000)
        cases.check(dp)
        assert len(cases) == 3000
        assert set(np.unique(which)) == set(range(len(suites.generators(dp, s))))
        if dp.sparse:  # every mask is one that metadata can say
            from tcprobe.models import sparsity

            meta = sparsity.metadata_batch(dp, cases.active[:300])
            assert np.array_equal(sparsity.active_batch(dp, meta), cases.active[:300])


@pytest.mark.parametrize("dp_id", DATAPATHS[:4] + DATAPATHS[-2:])
def test_any_range_is_the_same_cases(dp_id):
    dp = Datapath.parse(dp_id)
    for s in suites.SUITES:
        whole, w_which = suites.generate(dp, s, 11, 0, 5000)
        suites._gen_block.cache_clear()
        for start, n in ((0, 1), (1234, 777), (4090, 910), (2047, 2)):
            part, p_which = suites.generate(dp, s, 11, start, n)
            assert same(part, whole.take(slice(start, start + n))), (s, start)
            assert np.array_equal(p_which, w_which[start:start + n])


def test_seeds_differ_and_repeat():
    a1, _ = suites.generate(BF16, "raw", 1, 0, 500)
    a2, _ = suites.generate(BF16, "raw", 2, 0, 500)
    suites._gen_block.cache_clear()
    a3, _ = suites.generate(BF16, "raw", 1, 0, 500)
    assert same(a1, a3) and not same(a1, a2)


def test_chunk_i_does_not_depend_on_chunks_before():
    plan = suites.Plan(suites.SUITES, 50_000, chunk=4096)
    late = suites.make_chunk(BF16, plan, 3, 7)
    suites._gen_block.cache_clear()
    for i in range(7):
        suites.make_chunk(BF16, plan, 3, i)
    again = suites.make_chunk(BF16, plan, 3, 7)
    assert same(late[0], again[0]) and np.array_equal(late[1], again[1])


def test_bits_are_pinned():
    """The bit source is PCG64's raw stream (numpy keeps it stable), so these
    digests hold on any machine; a change means cases are no longer
    reproducible from old seeds."""
    raw = Bits(0, 0, 1, 2, 3).u64(4)
    assert [int(x) for x in raw] == [int(x) for x in Bits(0, 0, 1, 2, 3).u64(4)]
    first, _ = suites.make_chunk(BF16, suites.Plan(("raw",), 100, chunk=100), 0, 0)[:2]
    assert digest(first) == digest(suites.generate(BF16, "raw", 0, 0, 100)[0])
    np.random.default_rng(123).integers(0, 10, 1000)  # unrelated global draws change nothing
    assert digest(first) == digest(suites.make_chunk(BF16, suites.Plan(("raw",), 100, chunk=100),
                                                     0, 0)[0])


def test_plan_splits_every_chunk_by_weight():
    plan = suites.Plan(suites.SUITES, 100_003, chunk=10_000)
    total = 0
    for i in range(plan.n_chunks):
        segs = plan.segments(i)
        assert sum(n for _, _, n in segs) == plan.chunk_size(i)
        total += plan.chunk_size(i)
    assert total == 100_003
    tot = plan.suite_totals()
    assert sum(tot.values()) == 100_003
    assert tot["raw"] == pytest.approx(0.3 * 100_003, abs=20)
    with pytest.raises(suites.SuiteError, match="unknown suite"):
        suites.parse_suites("raw,bogus")
    assert suites.parse_suites("edge, raw") == ("edge", "raw")


def test_edge_words_include_the_named_edges():
    tf32 = specials(get_format("tf32"))
    d = decode("f32", [tf32["nan-dropped-payload"]])
    assert d.cls[0] == Class.NAN  # a NaN in the f32 container ...
    assert decode("tf32", [tf32["nan-dropped-payload"]]).cls[0] == Class.INF  # ... an Inf in tf32
    bf = specials(get_format("bf16"))
    assert {"+0", "-0", "min-subnormal", "max-finite", "+inf", "-inf", "nan-quiet",
            "nan-low-payload"} <= set(bf)
    cases, which = suites.generate(BF16, "edge", 0, 0, 4000)
    grid = which == [g.name for g in suites.generators(BF16, "edge")].index("grid")
    a, b = cases.a[grid], cases.b[grid]
    inf_times_zero = ((a == bf["+inf"]) & (b == bf["+0"])).any(axis=1)
    assert inf_times_zero.any()


def exact(fmt, w):
    v = to_fraction(fmt, int(w))
    assert not isinstance(v, str)
    return v


def terms(dp, case_a, case_b, c):
    prods = [exact(dp.a_type, x) * exact(dp.b_type, y) for x, y in zip(case_a, case_b, strict=True)]
    return prods, exact(dp.c, c)


def _gen(name, dp=BF16, n=600):
    ctx = suites.Ctx.of(dp)
    g = next(g for g in suites.generators(dp, "adversarial") if g.name == name)
    return suites._complete(ctx, Bits(9, 9), g.fn(ctx, Bits(1, 2, 3), np.arange(n)), n)


def test_carry_top_products_are_at_the_largest_significand():
    cases = _gen("carry-top")
    d = decode("bf16", cases.a)
    finite = d.cls == Class.FINITE
    assert (d.sig[finite] == 0xFF).mean() > 0.95
    rows_same_exp = [(len(set(decode("bf16", cases.a[i]).raw + decode("bf16", cases.b[i]).raw))
                      == 1) for i in range(50)]
    assert all(rows_same_exp)


def test_round_tie_sits_on_the_half_ulp():
    cases = _gen("round-tie", n=120)
    ties = 0
    for i in range(0, 120, 6):  # kind 0: C + exactly half an f32 ulp of C
        prods, c = terms(BF16, cases.a[i], cases.b[i], cases.c[i])
        total = sum(prods) + c
        ulp = Fraction(2) ** (decode("f32", [cases.c[i]]).raw[0] - 23)
        if c and abs(total - c) == ulp / 2:
            ties += 1
    assert ties >= 18


def test_cancel_chain_leaves_a_small_residue():
    cases = _gen("cancel-chain", n=200)
    small = 0
    for i in range(200):
        prods, c = terms(BF16, cases.a[i], cases.b[i], cases.c[i])
        total = sum(prods) + c
        big = max(abs(p) for p in [*prods, c])
        if big and abs(total) < big / 2:
            small += 1
    assert small > 180


def test_zero_floor_keeps_every_term_below_the_floor_region():
    cases = _gen("zero-floor")
    da, db = decode("bf16", cases.a), decode("bf16", cases.b)
    live = (da.cls == Class.FINITE) & (db.cls == Class.FINITE)
    top = np.where(live, da.raw + db.raw, -1000).max(axis=1)
    assert (top < -126).mean() > 0.9  # below f32's normal range: the floor decides
    assert (decode("f32", cases.c).cls == Class.ZERO).all()


def test_subnormal_swarm_reaches_subnormal_inputs():
    cases = _gen("subnormal-swarm")
    d = decode("bf16", cases.a)
    sub = (d.cls == Class.FINITE) & ((cases.a & 0x7F80) == 0)
    assert sub.any()


def test_sparse_lanes_walk_every_count():
    cases, _ = suites.generate(BF16, "sparse", 0, 0, 170)
    live = ((cases.a & 0x7FFF) != 0).sum(axis=1)
    assert set(live.tolist()) == set(range(17))


def test_adversarial_helpers_reach_their_exponents():
    ctx = suites.Ctx.of(BF16)
    bits = Bits(4)
    t = np.arange(-200, 200, 7)
    a, b = adv.product(ctx, bits, t, 0, np.zeros(t.shape, np.int64), np.zeros(t.shape, np.int64))
    prods = [exact("bf16", x) * exact("bf16", y) for x, y in zip(a, b, strict=True)]
    assert all(p == Fraction(2) ** int(e) for p, e in zip(prods, t, strict=True))
