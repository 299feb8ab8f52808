"""Integer bit helpers shared by the codecs and the accumulator engine.

Every helper here is compiled with numba and works on int64 scalars; each
guards the shift amounts that C (and LLVM) leave undefined, so callers may
pass any shift, negative or past 63.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

INT64_BITS = 64


@intrinsic
def _leading_zeros(typingctx, x):
    """LLVM's ctlz on an int64 (64 for 0): one lzcnt instruction, no branch."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(types.int64), codegen


@njit(cache=True, inline="always")
def bit_length(x):
    """Number of bits needed for the non-negative integer ``x`` (0 for 0)."""
    return INT64_BITS - _leading_zeros(np.int64(x))


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
