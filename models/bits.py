"""Integer bit helpers shared by the codecs and the accumulator engine.

Every helper here is compiled with numba and works on int64 scalars; each
guards the shift amounts that C (and LLVM) leave undefined, so callers may
pass any shift, negative or past 63.
"""

from __future__ import annotations

from numba import njit

INT64_BITS = 64


@njit(cache=True, inline="always")
def bit_length(x):
    """Number of bits needed for the non-negative integer ``x`` (0 for 0)."""
    n = 0
    if x >> 32:
        x >>= 32
        n += 32
    if x >> 16:
        x >>= 16
        n += 16
    if x >> 8:
        x >>= 8
        n += 8
    if x >> 4:
        x >>= 4
        n += 4
    if x >> 2:
        x >>= 2
        n += 2
    if x >> 1:
        x >>= 1
        n += 1
    return n + x


@njit(cache=True, inline="always")
def shl(x, s):
    """``x * 2**s`` for a non-negative ``x``: left shift for s >= 0, a right
    shift that cuts toward zero for s < 0 (0 once every bit is shifted out)."""
    if s >= 0:
        return x << s  # the caller keeps x * 2**s below 2**63
    s = -s
    if s >= 63:
        return 0
    return x >> s


@njit(cache=True, inline="always")
def low_bits(x, s):
    """The low ``s`` bits of the non-negative ``x`` (all of x once s >= 63)."""
    if s <= 0:
        return 0
    if s >= 63:
        return x
    return x & ((1 << s) - 1)


@njit(cache=True, inline="always")
def mask(width):
    """An all-ones mask of ``width`` bits (64 and more: every bit, -1 as an int64)."""
    if width >= 64:
        return -1
    return (1 << width) - 1
