"""Issue 37 item 2: the epilogue's add, mul and fma on host IEEE floats give
the integer engine's words exactly: every pair (triple) of special and
boundary words, 10^6 random ones, and for fma the sums a float64 rounding
to nearest would round twice (a float64 sum rounded to odd does not).

The reference is the engine itself (models/engine.fused_dot, a K=1 dot with
an exact sum and one rounding; models/structures.ieee_add), never the
epilogue's own code."""

from __future__ import annotations

import numpy as np
import pytest
from epilogue_cases import SPECIALS, double_rounding_traps, random_words

from tcprobe.matrix import epilogue
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot
from tcprobe.models.structures import ieee_add

DP = Datapath("mma", "f32", "f32", "f32", "f32", 1)
P = EngineParams(window_bits=None, block_size=1, zero_floor=None, output_rounding="rne",
                 zero_sign="ieee", overflow="ieee")
N = 1_000_000


def ref_fma(x, y, z):
    return np.asarray(fused_dot(DP, Cases(x.reshape(-1, 1), y.reshape(-1, 1), z), P), np.uint32)


def ref_add(x, y):
    return np.asarray(ieee_add("f32", x, y, host=False), np.uint32)  # the engine's add


def ref_mul(x, y):
    return ref_fma(x, y, np.full(x.shape, 0x80000000, np.uint32))


def _pairs():
    x, y = np.meshgrid(SPECIALS, SPECIALS)
    return x.ravel(), y.ravel()


def _same(got, want):
    off = np.flatnonzero(got != want)
    assert off.size == 0, f"{off.size} differ, e.g. got {got[off[0]]:#x} want {want[off[0]]:#x}"


def test_the_host_is_exact_here():
    assert epilogue.host_exact()  # else every test below checks the engine against itself


def test_every_special_pair_add_and_mul():
    x, y = _pairs()
    _same(epilogue.add(x, y), ref_add(x, y))
    _same(epilogue.mul(x, y), ref_mul(x, y))


def test_every_special_triple_fma():
    x, y, z = (g.ravel() for g in np.meshgrid(SPECIALS, SPECIALS, SPECIALS))
    _same(epilogue.fma(x, y, z), ref_fma(x, y, z))


def test_nan_words_are_the_engines():
    nan = np.array([0x7FC00001, 0xFFA12345, 0x7F800001], np.uint32)
    one = np.full(3, 0x3F800000, np.uint32)
    assert (epilogue.add(nan, one) == 0x7FFFFFFF).all()
    assert (epilogue.mul(one, nan) == 0x7FFFFFFF).all()
    assert (epilogue.fma(one, one, nan) == 0x7FFFFFFF).all()
    assert int(epilogue.mul(0x7F800000, 0)) == 0x7FFFFFFF  # Inf * 0
    assert int(epilogue.add(0x7F800000, 0xFF800000)) == 0x7FFFFFFF  # Inf - Inf
    assert (ref_add(nan, one) == 0x7FFFFFFF).all()


def test_zero_signs_subnormals_and_overflow():
    cases = [  # (op, x, y, word)
        ("add", 0x80000000, 0x80000000, 0x80000000), ("add", 0x3F800000, 0xBF800000, 0),
        ("add", 0x00000001, 0x80000001, 0), ("add", 0x007FFFFF, 0x00000001, 0x00800000),
        ("mul", 0x80000000, 0x40A00000, 0x80000000), ("mul", 0x00800000, 0x3F000000, 0x00400000),
        ("mul", 0x00000001, 0x3F000000, 0), ("mul", 0x00000003, 0x3F000000, 0x00000002),
        ("add", 0x7F7FFFFF, 0x73000000, 0x7F800000), ("add", 0x7F7FFFFF, 0x72800000, 0x7F7FFFFF),
        ("mul", 0x7F7FFFFF, 0xC0000000, 0xFF800000),
    ]
    for op, x, y, want in cases:
        assert int(getattr(epilogue, op)(x, y)) == want, (op, hex(x), hex(y))
        ref = ref_add if op == "add" else ref_mul
        assert int(ref(np.array([x], np.uint32), np.array([y], np.uint32))[0]) == want


@pytest.mark.parametrize("seed", [1, 2])
def test_a_million_random_words(seed):
    rng = np.random.default_rng(seed)
    x, y, z = random_words(rng, N), random_words(rng, N), random_words(rng, N)
    _same(epilogue.add(x, y), ref_add(x, y))
    _same(epilogue.mul(x, y), ref_mul(x, y))
    _same(epilogue.fma(x, y, z), ref_fma(x, y, z))


def test_fma_where_a_double_sum_would_round_twice():
    x, y, z = double_rounding_traps(np.random.default_rng(3), 200_000)
    want = ref_fma(x, y, z)
    naive = (x.view(np.float32).astype(np.float64) * y.view(np.float32)
             + z.view(np.float32)).astype(np.float32).view(np.uint32)
    assert (naive != want).sum() > 10_000  # the traps are traps
    _same(epilogue.fma(x, y, z), want)


def test_broadcasting_and_shapes():
    acc = random_words(np.random.default_rng(4), 12).reshape(3, 4)
    got = epilogue.fma(0x3F800000, acc, np.uint32(0x40000000))
    assert got.shape == (3, 4) and got.dtype == np.uint32
    _same(got.ravel(), ref_fma(np.full(12, 0x3F800000, np.uint32), acc.ravel(),
                               np.full(12, 0x40000000, np.uint32)))


def test_flush_to_zero_falls_back_to_the_engine():
    torch = pytest.importorskip("torch")
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush denormals")
    try:
        assert not epilogue.host_exact()
        x = np.array([0x00000001, 0x007FFFFF, 0x00800000], np.uint32)
        y = np.array([0x00000001, 0x00000001, 0x3F000000], np.uint32)
        _same(epilogue.add(x, y), ref_add(x, y))
        _same(epilogue.mul(x, y), ref_mul(x, y))
        _same(epilogue.fma(x, np.full(3, 0x3F800000, np.uint32), y),
              ref_fma(x, np.full(3, 0x3F800000, np.uint32), y))
    finally:
        torch.set_flush_denormal(False)
    assert epilogue.host_exact()
