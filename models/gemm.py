"""Whole matrix products on the fixed-point engine, decoding each operand once.

:func:`gemm_words` computes, for every (i, j), exactly what the engine
(:func:`~tcprobe.models.engine.fused_dot`) computes for the dot product of
row i of A and column j of B chained over K tiles, one instruction a tile,
each instruction's D the next one's C (``tests/test_matmul_fast.py``
compares the two word for word). What a matrix product lets it share:

* every row of A and column of B is decoded once into (signed significand,
  raw exponent) pairs, with -2**24 as the exponent of a zero (a zero product
  never sets the anchor, so zero padding is exact) and a flag per block of
  K for a NaN or Inf word;
* a block is then one pass for its anchor (the largest exponent sum) and
  one that cuts each integer product to the window and sums it, both plain
  loops over the block that LLVM vectorizes; the window cut and the
  rounding into the output are the fast path's own helpers
  (:mod:`.fastpath`: ``_cut``, ``_finish``), the specials its classes rule;
* the rows of D run on every core (numba ``prange``).

Integer datapaths (s8/u8) take :func:`integer_gemm`: the exact sum of each
instruction added to C and wrapped modulo 2**32, or saturated once per
instruction.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit, prange

from .engine import prepare
from .fastpath import _cut, _fields, _finish
from .formats import Class, convert_input, decode, get_format, inf_word
from .model import FixedPointModel, IntegerModel

ZERO_EXP = -(1 << 24)  # exponent of a zero element: every sum with it is below any real one
_EMPTY = -(1 << 22)  # an anchor below this has no nonzero term


def decode_operand(words: np.ndarray, fmt: str, conversion: str, block: int):
    """Rows of ``words`` (rows, K) as the kernel reads them: signed integer
    significands, raw exponents (ZERO_EXP for zeros and specials), classes
    with the sign in bit 2, and a flag per block of K where a NaN or Inf is."""
    f = get_format(fmt)
    words = convert_input(words, f, conversion)
    d = decode(f, words)
    finite = d.cls == Class.FINITE
    sig = np.where(finite, np.where(d.sign == 1, -d.sig, d.sig), 0).astype(np.int64)
    exp = np.where(finite, d.raw, ZERO_EXP).astype(np.int64)
    cls = (d.cls.astype(np.int8) | (d.sign.astype(np.int8) << 2))
    special = d.cls >= Class.INF
    rows, k = words.shape
    flags = special.reshape(rows, k // block, block).any(axis=2)
    return (np.ascontiguousarray(sig), np.ascontiguousarray(exp), np.ascontiguousarray(cls),
            np.ascontiguousarray(flags))


def supports(model) -> bool:
    """Whether :func:`gemm_words` computes this model's chain (else the
    caller evaluates the dot-level model tile by tile)."""
    if isinstance(model, IntegerModel):
        return True
    if type(model) is not FixedPointModel:
        return False
    dp, p = model.datapath, model.params
    if dp.block_scaled or dp.c != dp.d_type or dp.k % min(p.block_size, dp.k):
        return False
    specs = [get_format(t) for t in (dp.a_type, dp.b_type, dp.d_type, p.inter_type or dp.d_type)]
    return (p.window_bits is not None and p.align == "raw" and p.zero_sign == "positive"
            and p.k_order is None and p.c_join == "first" and p.c_convert is None
            and all(f.kind == 0 for f in specs))


@lru_cache(maxsize=32)
def _kernel(key: tuple):
    """The blocked chain for one configuration, its knobs compile-time constants."""
    (block, per_instr, a_fb, b_fb, i_spec, d_spec, window, floor, carry_bits, overflow,
     i_round, i_keep, i_nan, d_round, d_keep, d_nan) = key
    fab = a_fb + b_fb
    d_top = (1 << (d_spec[1] - 1)) - 1
    i_top = (1 << (i_spec[1] - 1)) - 1
    d_fb, i_fb = d_spec[3], i_spec[3]
    d_fm, i_fm = (1 << d_fb) - 1, (1 << i_fb) - 1
    d_fn, i_fn = d_spec[5] == 1, i_spec[5] == 1  # only the all-ones word is NaN

    @njit(cache=True, nogil=True, parallel=True)
    def kernel(a_sig, a_exp, a_cls, a_flag, b_sig, b_exp, b_cls, b_flag, c, blk_lo, blk_hi, out):
        for i in prange(a_sig.shape[0]):
            for j in range(b_sig.shape[0]):
                acc = np.int64(c[i, j])
                for blk in range(blk_lo, blk_hi):
                    starts = blk % per_instr == 0  # acc is C or the previous instruction's D
                    ends = (blk + 1) % per_instr == 0
                    if starts:
                        sp, cs, cm, cr = _fields(acc, d_spec)
                        cl = cr - d_fb
                    else:
                        sp, cs, cm, cr = _fields(acc, i_spec)
                        cl = cr - i_fb
                    lo = blk * block
                    if not (sp or a_flag[i, blk] or b_flag[j, blk]):
                        amax = cr if cm != 0 else ZERO_EXP
                        for t in range(lo, lo + block):
                            e = a_exp[i, t] + b_exp[j, t]
                            amax = e if e > amax else amax
                        if amax < _EMPTY:
                            acc = 0  # every term zero: +0
                            continue
                        anchor = amax if amax > floor else floor
                        q = anchor - window
                        m = _cut(cm, cl - q, cs)
                        for t in range(lo, lo + block):
                            p = a_sig[i, t] * b_sig[j, t]
                            neg = p >> 63
                            sh = a_exp[i, t] + b_exp[j, t] - fab - q
                            m += _cut((p ^ neg) - neg, sh, neg & 1)
                        if ends:
                            acc = _finish(m, q, False, window, carry_bits, True, d_spec,
                                          d_round, d_keep, overflow, d_top)
                        else:
                            acc = _finish(m, q, False, window, carry_bits, True, i_spec,
                                          i_round, i_keep, overflow, i_top)
                        continue
                    # A NaN or Inf word: the block is NaN or an Inf whatever
                    # the finite terms are (the engine's specials rule).
                    nan_f = False
                    pinf = False
                    ninf = False
                    if sp:
                        if (d_fn or (cm & d_fm) != 0) if starts else (i_fn or (cm & i_fm) != 0):
                            nan_f = True
                        elif cs:
                            ninf = True
                        else:
                            pinf = True
                    for t in range(lo, lo + block):
                        ca = a_cls[i, t] & 3
                        cb = b_cls[j, t] & 3
                        if ca == 3 or cb == 3:
                            nan_f = True
                        elif ca == 2 or cb == 2:
                            if ca == 0 or cb == 0:
                                nan_f = True
                            elif ((a_cls[i, t] ^ b_cls[j, t]) >> 2) & 1:
                                ninf = True
                            else:
                                pinf = True
                    if nan_f or (pinf and ninf):
                        acc = d_nan if ends else i_nan
                    elif ends:
                        acc = inf_word(1 if ninf else 0, d_spec)
                    else:
                        acc = inf_word(1 if ninf else 0, i_spec)
                out[i, j] = acc

    return kernel


def engine_key(model: FixedPointModel) -> tuple:
    """The kernel configuration of a model: the engine's own kernel settings
    (:func:`~tcprobe.models.engine.prepare`, on one zero case)."""
    from .cases import Cases

    dp, p = model.datapath, model.params
    zero = np.zeros((1, dp.k), np.uint32)
    prep = prepare(dp, Cases(zero, zero, np.zeros(1, np.uint32)), p)
    (window, floor, carry_bits, _normalized, _zero_pos, overflow, i_round, i_keep, i_nan,
     d_round, d_keep, d_nan, _c_last, _c_add) = prep.settings
    return (prep.block, dp.k // prep.block, prep.a_spec[3], prep.b_spec[3], prep.i_spec,
            prep.d_spec, window, floor, carry_bits, overflow, i_round, i_keep, i_nan, d_round,
            d_keep, d_nan)


def gemm_words(model, a: np.ndarray, b_t: np.ndarray, c: np.ndarray, tiles: tuple[int, int],
               decoded=None) -> np.ndarray:
    """D words (M, N) of the chain over instruction tiles ``tiles`` = (first,
    end) of A (M, K) and B transposed (N, K), K a multiple of the
    instruction's, starting from C words (M, N). ``decoded``: the operands as
    :func:`decode_operand` gives them, to reuse across calls."""
    dp = model.datapath
    c = np.ascontiguousarray(c, dtype=np.uint32)
    out = np.empty(c.shape, np.int64)
    if isinstance(model, IntegerModel):
        lo, hi = tiles[0] * dp.k, tiles[1] * dp.k
        integer_kernel(np.ascontiguousarray(a[:, lo:hi].astype(np.int64)),
                       np.ascontiguousarray(b_t[:, lo:hi].astype(np.int64)),
                       get_format(dp.a_type).spec, get_format(dp.b_type).spec,
                       c, dp.k, model.saturate, out)
        return out.astype(np.uint32)
    key = engine_key(model)
    block = key[0]
    if decoded is None:
        decoded = decoders(model, a, b_t)
    (a_sig, a_exp, a_cls, a_flag), (b_sig, b_exp, b_cls, b_flag) = decoded
    _kernel(key)(a_sig, a_exp, a_cls, a_flag, b_sig, b_exp, b_cls, b_flag, c,
                 tiles[0] * (dp.k // block), tiles[1] * (dp.k // block), out)
    return out.astype(np.uint32)


def decoders(model, a: np.ndarray, b_t: np.ndarray):
    """Both operands decoded once for :func:`gemm_words`."""
    dp, p = model.datapath, model.params
    block = min(p.block_size, dp.k)
    return (decode_operand(a, dp.a_type, p.input_conversion, block),
            decode_operand(b_t, dp.b_type, p.input_conversion, block))


@njit(cache=True)
def _int_value(word, spec):
    signed = spec[6]
    width = spec[1]
    w = word & ((1 << width) - 1)
    if signed and (w >> (width - 1)) & 1:
        return w - (1 << width)
    return w


@njit(cache=True, nogil=True, parallel=True)
def integer_kernel(a, b_t, a_spec, b_spec, c, k_inst, saturate, out):
    """Integer MMA chained over K: each instruction's exact sum plus C, wrapped
    to 32 bits or saturated (the IntegerModel's rule, once per instruction)."""
    k = a.shape[1]
    for i in prange(a.shape[0]):
        for j in range(b_t.shape[0]):
            acc = np.int64(c[i, j])
            if acc >= (1 << 31):
                acc -= 1 << 32
            for lo in range(0, k, k_inst):
                total = acc
                for t in range(lo, lo + k_inst):
                    total += _int_value(a[i, t], a_spec) * _int_value(b_t[j, t], b_spec)
                if saturate:
                    total = min(max(total, -(1 << 31)), (1 << 31) - 1)
                else:
                    total = ((total + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
                acc = total
            out[i, j] = acc & 0xFFFFFFFF
