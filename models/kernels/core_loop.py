"""The engine's dot product, block after block (engine module doc, steps 2-4),
as one compiled loop that the plain kernel and the fast path both run.

:func:`prepare` applies the input and C conversions and builds the
:class:`.kernel_params.KernelParams`; :func:`case_word` walks one case's K
positions in blocks and hands each block to :func:`.core.block_word`, its
products decoded by the classed decoder (``decode_scalar`` on every word):
the plain kernel, and the fast path's configurations that the lane kernel
(:mod:`.lane_kernel`, reading words through :mod:`.lane_decoder`) does not
take.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..formats import convert, convert_input, decode_scalar, get_format
from .core import EXACT, add_term, add_word, block_word, product_term
from .kernel_params import KernelParams, ParamError, kernel_params


class Prepared(NamedTuple):
    """Words as the kernels read them, the K order, and the parameters."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: np.ndarray
    params: KernelParams


def prepare(dp, cases, p, convert_inputs=convert_input) -> Prepared:
    """Apply the input and C conversions and build the KernelParams (shared
    by the plain kernel and the fast path)."""
    a_fmt, b_fmt = get_format(dp.a_type), get_format(dp.b_type)
    c_fmt = get_format(dp.c)
    a_words, b_words = cases.masked()
    a_words = convert_inputs(a_words, a_fmt, p.input_conversion)
    b_words = convert_inputs(b_words, b_fmt, p.input_conversion)
    c_words = np.asarray(cases.c, np.int64)
    if p.c_convert:
        c_words = convert(c_words, c_fmt, p.c_convert).astype(np.int64)
        c_fmt = get_format(p.c_convert)
    k = cases.k
    order = np.arange(k, dtype=np.int64) if p.k_order is None else np.asarray(p.k_order, np.int64)
    if sorted(order.tolist()) != list(range(k)):
        raise ParamError(f"k_order must be a permutation of 0..{k - 1}")
    return Prepared(a_words, b_words, c_words, order, kernel_params(dp, p, k, c_fmt))


@njit(inline="always")
def _class_terms(a, b, i, lo, hi, order, kp, t, acc_word, acc_spec, have_acc):
    """The classed decoder: finite nonzero products only, every word classed."""
    n = 0
    flags = 0
    if have_acc:
        n, flags = add_word(t, n, flags, acc_word, acc_spec, kp.normalized)
    for j in range(lo, hi):
        kk = order[j] if kp.ordered else j
        ca, sa, ma, la, ra = decode_scalar(np.int64(a[i, kk]), kp.a_spec)
        cb, sb, mb, lb, rb = decode_scalar(np.int64(b[i, kk]), kp.b_spec)
        cls, s, sig, lsb, al = product_term(ca, sa, ma, la, ra, cb, sb, mb, lb, rb,
                                            kp.normalized)
        n, flags = add_term(t, n, flags, cls, s, sig, lsb, al)
    return n, flags


# ---------------------------------------------------------------------------
# The loop


@njit(inline="always")
def case_word(a, b, i, c_word, order, kp, t):
    """Case i through its blocks: C (or nothing, with c_join='last') is the
    first block's addend, each block's result the next one's; returns the
    output word (the classed decoder; the fast path's lane kernel,
    :mod:`.lane_kernel`, walks the same blocks in the same order)."""
    k = kp.k
    block = kp.block
    n_blocks = (k + block - 1) // block
    acc_word = c_word
    acc_spec = kp.c_spec
    for blk in range(n_blocks):
        last = blk == n_blocks - 1 and not kp.c_last
        stage = kp.out if last else kp.inter
        have_acc = blk > 0 or not kp.c_last
        lo = blk * block
        hi = min(lo + block, k)
        n, flags = _class_terms(a, b, i, lo, hi, order, kp, t, acc_word, acc_spec, have_acc)
        acc_word = block_word(t, n, flags, kp.window, stage)
        acc_spec = stage.spec
    if kp.c_last:
        acc_word = c_last_word(t, acc_word, acc_spec, c_word, kp)
    return acc_word


@njit(cache=True)
def c_last_word(t, acc_word, acc_spec, c_word, kp):
    """c_join='last': the blocks' result plus C, summed exactly and rounded once."""
    n, flags = add_word(t, 0, 0, acc_word, acc_spec, kp.normalized)
    n, flags = add_word(t, n, flags, c_word, kp.c_spec, kp.normalized)
    return block_word(t, n, flags, EXACT, kp.c_add)
