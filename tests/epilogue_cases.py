"""Special-heavy and boundary f32 words for the epilogue's host-vs-engine
tests (tests/test_epilogue_host.py) and benchmarks/bench_epilogue.py."""

from __future__ import annotations

import numpy as np

SPECIALS = np.array([
    0x00000000, 0x80000000,  # zeros
    0x7F800000, 0xFF800000,  # infinities
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFA12345,  # NaNs
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,  # subnormals
    0x00800000, 0x80800000, 0x00800001,  # the smallest normals
    0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE, 0x7F000000,  # the largest
    0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x33800000, 0x34000000, 0x33000000,
    0x3F000000, 0x40000000, 0x1F800000, 0x5F800000, 0x0C000000, 0x72800000,
], np.uint32)


def random_words(rng, n: int) -> np.ndarray:
    """Every bit pattern alike, then a third from the specials, a third of
    exponents near each other (sums that cancel, products near C)."""
    w = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    pick = rng.random(n)
    w[pick < 0.2] = rng.choice(SPECIALS, int((pick < 0.2).sum()))
    near = (pick >= 0.2) & (pick < 0.5)
    exp = rng.integers(110, 145, int(near.sum())).astype(np.uint32)
    w[near] = (w[near] & 0x807FFFFF) | (exp << 23)
    return w


def double_rounding_traps(rng, n: int):
    """(x, y, z) whose exact x*y + z lies within 2**-46 relative of a tie of
    f32 but on one side of it: a float64 sum rounded to nearest lands on the
    tie and a second rounding to f32 goes the wrong way."""
    a = rng.integers(1, 1 << 11, n).astype(np.int64)
    zm = rng.integers(0, 1 << 23, n).astype(np.int64) | 1  # odd: the tie would go to even
    ze = rng.integers(40, 200, n).astype(np.int64)
    e1 = rng.integers(-20, 20, n)
    # x = (1 + a 2**-23) 2**e1, y = (1 - a 2**-23) 2**e2: x*y = 2**(e1+e2) (1 - a**2 2**-46)
    x = np.ldexp(1.0 + a * 2.0 ** -23, e1)
    y = np.ldexp(1.0 - a * 2.0 ** -23, (ze - 127 - 24) - e1)  # x*y near half an ulp of z
    z = np.ldexp(1.0 + zm * 2.0 ** -23, ze - 127)
    sign = rng.random(n) < 0.5
    x = np.where(sign, -x, x)
    z = np.where(sign, -z, z)
    f = np.float32
    return (x.astype(f).view(np.uint32), y.astype(f).view(np.uint32),
            z.astype(f).view(np.uint32))
