"""Host IEEE in the epilogue (issue 37), beside tests/test_epilogue_host.py:
the bf16 and f16 conversions on the host give the engine's words on every
16-bit word and on special-heavy f32 words (both overflow forms), the
vectorized fma's round-to-odd on a hand-worked double-rounding trap, and
TCPROBE_EPILOGUE=engine runs the engine."""

import os
import subprocess
import sys

import numpy as np
import pytest

from tcprobe.matrix import epilogue
from tcprobe.models.formats import Overflow, Rounding, convert

SPECIAL = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000,
                    0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7F800001, 0xFFC00000,
                    0x7FC00001, 0x3F800000, 0xBF800000, 0x33800000, 0x33800001, 0x34000000,
                    0x3F800001, 0x4B800000, 0x00000002, 0x00400000, 0x3EFFFFFF, 0x477FF000,
                    0x477FEFFF, 0x38800000, 0x387FFFFF, 0x33000000, 0x7F000000, 0x0D800000],
                   np.uint32)


def words(n, seed):
    """Random f32 words: a quarter specials, a quarter near one exponent
    (cancellation, ties), a quarter subnormal-range, the rest any bits."""
    rng = np.random.default_rng(seed)
    out = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    q = n // 4
    out[:q] = rng.choice(SPECIAL, q)
    out[q:2 * q] = (rng.integers(0x3F000000, 0x40000000, q) ^
                    (rng.integers(0, 2, q) << 31)).astype(np.uint32)
    out[2 * q:3 * q] = (rng.integers(0, 0x01000000, q) ^
                        (rng.integers(0, 2, q) << 31)).astype(np.uint32)
    return out


N = 400_000


@pytest.fixture(scope="module", autouse=True)
def host_on():
    assert epilogue.host_exact(), "this machine's floats should be IEEE RNE"


def test_add_and_mul_match_the_engine():
    x, y = words(N, 1), words(N, 2)
    assert np.array_equal(epilogue.add(x, y), epilogue.engine_add(x, y))
    assert np.array_equal(epilogue.mul(x, y), epilogue.engine_fma(x, y, epilogue.NEG_ZERO))
    sx, sy = np.meshgrid(SPECIAL, SPECIAL)  # every pair of specials
    assert np.array_equal(epilogue.add(sx, sy), epilogue.engine_add(sx, sy))
    assert np.array_equal(epilogue.mul(sx, sy), epilogue.engine_fma(sx, sy, epilogue.NEG_ZERO))


def test_fma_matches_the_engine_where_double_rounding_would_not():
    x, y, z = words(N, 3), words(N, 4), words(N, 5)
    assert np.array_equal(epilogue.fma(x, y, z), epilogue.engine_fma(x, y, z))
    # the double-rounding trap: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 sits on an
    # f32 tie; + 2^-80 lies above it, so the f32 answer rounds up (0x3F801001),
    # while the sum rounded to a double first lands on the tie and then rounds
    # to even (0x3F801000); - 2^-80 lies below it and rounds down
    x = np.array([0x3F800800, 0x3F800800], np.uint32)
    z = np.array([0x17800000, 0x97800000], np.uint32)
    got = epilogue.fma(x, x, z)
    assert got.tolist() == [0x3F801001, 0x3F801000]
    assert np.array_equal(got, epilogue.engine_fma(x, x, z))
    sx, sy, sz = np.meshgrid(SPECIAL, SPECIAL[::3], SPECIAL[::2])
    assert np.array_equal(epilogue.fma(sx, sy, sz), epilogue.engine_fma(sx, sy, sz))


@pytest.mark.parametrize("fmt", ["bf16", "f16"])
def test_conversions_match_the_engine(fmt):
    w = np.concatenate([words(N, 6), SPECIAL])
    for sat in (False, True):
        over = Overflow.SATURATE if sat else Overflow.IEEE
        want = convert(w, "f32", fmt, Rounding.RNE, overflow=over).astype(np.uint32)
        assert np.array_equal(epilogue.convert_out(w, fmt, sat), want), sat
    narrow = np.arange(1 << 16, dtype=np.uint32)  # every 16-bit word
    assert np.array_equal(epilogue.to_f32(narrow, fmt),
                          convert(narrow, fmt, "f32").astype(np.uint32))


def test_engine_switch():
    code = ("from tcprobe.matrix import epilogue; import numpy as np; "
            "print(epilogue.host_exact())")
    env = dict(os.environ, TCPROBE_EPILOGUE="engine")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bf16_conversion_at_every_high_half_and_each_rounding_edge():
    """Every f32 high half with the low halves where RNE turns (below, at and
    above the tie, the largest), NaN and Inf words, saturating or not."""
    high = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    w = (high[:, None] | np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)).ravel()
    for sat in (False, True):
        over = Overflow.SATURATE if sat else Overflow.IEEE
        want = convert(w, "f32", "bf16", Rounding.RNE, overflow=over).astype(np.uint32)
        assert np.array_equal(epilogue.convert_out(w, "bf16", sat), want), sat
