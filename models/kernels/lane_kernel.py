"""The engine's fast kernel for windowed, raw-aligned float configurations
(lane_decoder.lane_decoder_applies): the same words as the plain kernel, its
work laid out for vector units.

Cases go through in chunks of CHUNK. For each block of K, a loop over the
chunk's cases takes the addends' fields, a second hands the block's lanes
to :func:`.lanes_ir.block_cases`, explicit vector code for all lanes of
one case at once, or of several cases where blocks are short (the block's
flags, its quantum and the sum of its cut products); a third, which LLVM
vectorizes over the cases, adds the addend's own cut term (core.cut),
rounds the sum (core.window_word), decides the specials
(core.specials_word) and leaves the word as the next block's addend. So
every step is the arithmetic core's own, in the order of
core_loop.case_word; only the layout changed.

The K order is applied before the kernel (the caller permutes the columns
of A and B), so a block's lanes lie side by side in a row. A kernel is
built per configuration (KernelParams a compile-time constant) and cached
on disk by numba, keyed by its constants and kernel_stamp.SOURCE_STAMP.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from .core import NONNEG, cut, new_terms, specials_word, term_flags, window_word
from .core_loop import c_last_word
from .kernel_params import KernelParams
from .kernel_stamp import SOURCE_STAMP
from .lane_decoder import fields, lane_class, lane_decoder_applies, stray_word
from .lanes_ir import ACROSS, STRAY, across_applies, block_cases, block_config, cases_per_call

CHUNK = 256  # cases a block loop walks before its vectorized round


def applies(kp: KernelParams) -> bool:
    """Whether this kernel computes the configuration (the lane decoder's)."""
    return lane_decoder_applies(kp)


@njit(inline="always")
def _finish(word, flags, q, total, have_acc, acc_spec, window, stage):
    """A block's word from its lanes' flags, quantum and cut sum, and its
    addend ``word`` (C or the previous block's): the addend's flags and cut
    term join, then specials first, else the windowed sum rounded."""
    m = total
    if have_acc:
        special, s, sig, raw = fields(word, acc_spec)
        flags |= term_flags(lane_class(special, sig, acc_spec), s)
        m += cut(sig, raw - acc_spec.frac_bits - q, s)
    finite = window_word(m, q, flags & NONNEG, window, stage)
    special, special_word = specials_word(flags, stage)
    return special_word if special else finite


@njit(inline="always")
def _block(a, b, base, count, lo, acc, sigs, raws, flags, qs, sums, have_acc, acc_spec, window,
           stage, config, cases, config_one, k):
    """One block of every case of a chunk: the lane passes, ``cases`` cases
    a call (config; the last few one by one, config_one), then the words,
    vectorized over the cases, into ``acc``; returns STRAY when a word of
    the block has bits above its format."""
    for j in range(count):  # the addends' fields, vectorized over the cases
        sigs[j], raws[j] = 0, 0
        if have_acc:
            _special, _s, sigs[j], raws[j] = fields(acc[j], acc_spec)
    whole = count - count % cases
    for j in range(0, whole, cases):
        block_cases(a, b, (base + j) * k + lo, sigs, raws, flags, qs, sums, j, config)
    for j in range(whole, count):
        block_cases(a, b, (base + j) * k + lo, sigs, raws, flags, qs, sums, j, config_one)
    high = 0
    for j in range(count):
        high |= flags[j] & STRAY
        acc[j] = _finish(acc[j], flags[j], qs[j], sums[j], have_acc, acc_spec, window, stage)
    return high


def _build(kp: KernelParams):
    """The kernel of one configuration (``kp`` a compile-time constant)."""
    k, block = kp.k, kp.block
    n_blocks = (k + block - 1) // block
    tail = k - (n_blocks - 1) * block
    bits, floor = kp.window.bits, kp.window.floor

    def configs(lanes):  # (config, cases a call, config of one case) of a block
        one = block_config(kp.a_spec, kp.b_spec, lanes, bits, floor, 1, k)
        across = block_config(kp.a_spec, kp.b_spec, lanes, bits, floor, ACROSS, k, True)
        if across_applies(across):
            return across, ACROSS, one
        cases = cases_per_call(lanes)
        return block_config(kp.a_spec, kp.b_spec, lanes, bits, floor, cases, k), cases, one

    first_config, first_cases, first_one = configs(block if n_blocks > 1 else tail)
    middle_config, middle_cases, middle_one = configs(block)
    last_config, last_cases, last_one = configs(tail)
    first_acc = not kp.c_last
    last_stage = kp.inter if kp.c_last else kp.out
    c_spec, inter, inter_spec, window = kp.c_spec, kp.inter, kp.inter.spec, kp.window
    c_last = kp.c_last
    c_stray = stray_word(kp.c_spec.width)
    stamp = SOURCE_STAMP

    @njit(cache=True, nogil=True)
    def kernel(a, b, c, out):
        """Every case's word into ``out`` (a and b: the columns in K order);
        returns whether an A, B or C word has bits above its format."""
        assert len(stamp) > 0  # a constant of the cached kernel (SOURCE_STAMP)
        n = a.shape[0]
        acc = np.empty(CHUNK, np.int64)
        sigs = np.empty(CHUNK, np.int64)
        raws = np.empty(CHUNK, np.int64)
        flags = np.empty(CHUNK, np.int64)
        qs = np.empty(CHUNK, np.int64)
        sums = np.empty(CHUNK, np.int64)
        t = new_terms(4)
        high = 0
        for base in range(0, n, CHUNK):
            count = min(CHUNK, n - base)
            cc, oo = c[base:base + count], out[base:base + count]  # views: indices from 0
            for j in range(count):
                acc[j] = np.int64(cc[j])
                high |= acc[j] & c_stray
            if n_blocks == 1:
                high |= _block(a, b, base, count, 0, acc, sigs, raws, flags, qs, sums,
                               first_acc, c_spec, window, last_stage, first_config, first_cases,
                               first_one, k)
            else:
                high |= _block(a, b, base, count, 0, acc, sigs, raws, flags, qs, sums,
                               first_acc, c_spec, window, inter, first_config, first_cases,
                               first_one, k)
                for blk in range(1, n_blocks - 1):
                    high |= _block(a, b, base, count, blk * block, acc, sigs, raws, flags, qs,
                                   sums, True, inter_spec, window, inter, middle_config,
                                   middle_cases, middle_one, k)
                high |= _block(a, b, base, count, (n_blocks - 1) * block, acc, sigs, raws, flags,
                               qs, sums, True, inter_spec, window, last_stage, last_config,
                               last_cases, last_one, k)
            if c_last:
                for j in range(count):
                    acc[j] = c_last_word(t, acc[j], inter_spec, np.int64(cc[j]), kp)
            for j in range(count):
                oo[j] = acc[j]
        return high != 0

    return kernel


@lru_cache(maxsize=64)
def kernel_for(kp: KernelParams):
    """The compiled kernel of one configuration (built once per process)."""
    return _build(kp)
