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
* the rows of D run on every core (the kernel releases the GIL; rows are
  split over :func:`threads` threads).

Integer datapaths (s8/u8) take :func:`integer_gemm`: the exact sum of each
instruction added to C and wrapped modulo 2**32, or saturated once per
instruction.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numba
import numpy as np
from numba import njit, prange

from .engine import prepare
from .fastpath import _cut, _fields, _finish
from .formats import Class, convert_input, decode_scalar, get_format, inf_word
from .model import FixedPointModel, IntegerModel

ZERO_EXP = -(1 << 24)  # exponent of a zero element: every sum with it is below any real one
_EMPTY = -(1 << 22)  # an anchor below this has no nonzero term
MASKED = 8  # class bit of a K position that sparse A's metadata leaves out


@njit(cache=True)
def _decode_into(words, spec, sig, exp, cls):
    """One pass of decode_scalar over the words (flattened)."""
    flat = words.ravel()
    for x in range(flat.size):
        c, s, m, _lsb, raw = decode_scalar(np.int64(flat[x]), spec)
        finite = c == 1
        sig[x] = (-m if s else m) if finite else 0
        exp[x] = raw if finite else ZERO_EXP
        cls[x] = c | (s << 2)


def decode_operand(words: np.ndarray, fmt: str, conversion: str, block: int, axis: int,
                   active: np.ndarray | None = None):
    """``words`` (A: (M, K), axis 1; B: (K, N), axis 0) as the kernel reads
    them: signed integer significands, raw exponents (ZERO_EXP for zeros and
    specials), classes with the sign in bit 2 (and MASKED where ``active``,
    a sparse A's kept positions, is False), and a flag per block of K where
    a NaN or Inf word is."""
    f = get_format(fmt)
    if f.drop_bits and conversion != "truncate":
        words = convert_input(words, f, conversion)
    words = np.ascontiguousarray(words)
    sig = np.empty(words.shape, np.int64)
    exp = np.empty(words.shape, np.int64)
    cls = np.empty(words.shape, np.int8)
    _decode_into(words, f.spec, sig.ravel(), exp.ravel(), cls.ravel())
    special = (cls & 3) >= int(Class.INF)
    if active is not None:
        cls[~active] |= MASKED
        special &= active
    if axis == 1:
        flags = special.reshape(words.shape[0], -1, block).any(axis=2)
    else:
        flags = special.reshape(-1, block, words.shape[1]).any(axis=1)
    return sig, exp, cls, np.ascontiguousarray(flags)


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
    """The blocked chain for one configuration, its knobs compile-time constants.

    A row i of D is one task: for each block of K its columns run side by
    side (one pass for the anchors, one for the sums, both over j, so the
    loops vectorize with no horizontal step), then each word is rounded."""
    (block, per_instr, a_fb, b_fb, i_spec, d_spec, window, floor, carry_bits, overflow,
     i_round, i_keep, i_nan, d_round, d_keep, d_nan) = key
    fab = a_fb + b_fb
    d_top = (1 << (d_spec[1] - 1)) - 1
    i_top = (1 << (i_spec[1] - 1)) - 1
    d_fb, i_fb = d_spec[3], i_spec[3]
    d_fm, i_fm = (1 << d_fb) - 1, (1 << i_fb) - 1
    d_fn, i_fn = d_spec[5] == 1, i_spec[5] == 1  # only the all-ones word is NaN

    @njit(inline="always")
    def specials(acc, starts, ends, a_cls, b_cls, i, j, lo):
        """A block with a NaN or Inf word: NaN or an Inf whatever the finite
        terms are (the engine's specials rule)."""
        nan_f = False
        pinf = False
        ninf = False
        if starts:
            sp, cs, cm, cr = _fields(acc, d_spec)
            is_nan = d_fn or (cm & d_fm) != 0
        else:
            sp, cs, cm, cr = _fields(acc, i_spec)
            is_nan = i_fn or (cm & i_fm) != 0
        if sp:
            if is_nan:
                nan_f = True
            elif cs:
                ninf = True
            else:
                pinf = True
        for t in range(lo, lo + block):
            if a_cls[i, t] & MASKED:
                continue
            ca = a_cls[i, t] & 3
            cb = b_cls[t, j] & 3
            if ca == 3 or cb == 3:
                nan_f = True
            elif ca == 2 or cb == 2:
                if ca == 0 or cb == 0:
                    nan_f = True
                elif ((a_cls[i, t] ^ b_cls[t, j]) >> 2) & 1:
                    ninf = True
                else:
                    pinf = True
        if nan_f or (pinf and ninf):
            return True, d_nan if ends else i_nan
        if not (pinf or ninf):
            return False, 0  # the only specials sit where sparse A is masked
        if ends:
            return True, inf_word(1 if ninf else 0, d_spec)
        return True, inf_word(1 if ninf else 0, i_spec)

    @njit(cache=True, nogil=True)
    def kernel(a_sig, a_exp, a_cls, a_flag, b_sig, b_exp, b_cls, b_flag, c, blk_lo, blk_hi, out):
        n = b_sig.shape[1]
        for i in range(a_sig.shape[0]):
            acc = np.empty(n, np.int64)
            amax = np.empty(n, np.int64)
            q = np.empty(n, np.int64)
            m = np.empty(n, np.int64)
            cmag = np.empty(n, np.int64)
            csgn = np.empty(n, np.int64)
            clsb = np.empty(n, np.int64)
            slow = np.empty(n, np.uint8)
            for j in range(n):
                acc[j] = c[i, j]
            for blk in range(blk_lo, blk_hi):
                starts = blk % per_instr == 0  # acc is C or the previous instruction's D
                ends = (blk + 1) % per_instr == 0
                lo = blk * block
                for j in range(n):
                    if starts:
                        sp, cs, cm, cr = _fields(acc[j], d_spec)
                        clsb[j] = cr - d_fb
                    else:
                        sp, cs, cm, cr = _fields(acc[j], i_spec)
                        clsb[j] = cr - i_fb
                    csgn[j] = cs
                    cmag[j] = cm
                    amax[j] = cr if cm != 0 else ZERO_EXP
                    slow[j] = sp | b_flag[blk, j]
                for t in range(lo, lo + block):
                    ea = a_exp[i, t]
                    for j in range(n):
                        e = ea + b_exp[t, j]
                        amax[j] = e if e > amax[j] else amax[j]
                for j in range(n):
                    anchor = amax[j] if amax[j] > floor else floor
                    q[j] = anchor - window
                    m[j] = _cut(cmag[j], clsb[j] - q[j], csgn[j])
                for t in range(lo, lo + block):
                    ea = a_exp[i, t] - fab
                    sa = a_sig[i, t]
                    for j in range(n):
                        p = sa * b_sig[t, j]
                        neg = p >> 63
                        m[j] += _cut((p ^ neg) - neg, ea + b_exp[t, j] - q[j], neg & 1)
                row_slow = a_flag[i, blk]
                for j in range(n):
                    if row_slow or slow[j]:
                        hit, word = specials(acc[j], starts, ends, a_cls, b_cls, i, j, lo)
                        if hit:
                            acc[j] = word
                            continue
                    if amax[j] < _EMPTY:
                        acc[j] = 0  # every term zero: +0
                    elif ends:
                        acc[j] = _finish(m[j], q[j], False, window, carry_bits, True, d_spec,
                                         d_round, d_keep, overflow, d_top)
                    else:
                        acc[j] = _finish(m[j], q[j], False, window, carry_bits, True, i_spec,
                                         i_round, i_keep, overflow, i_top)
            for j in range(n):
                out[i, j] = acc[j]

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


def gemm_words(model, a: np.ndarray, b: np.ndarray, c: np.ndarray, tiles: tuple[int, int],
               decoded=None) -> np.ndarray:
    """D words (M, N) of the chain over instruction tiles ``tiles`` = (first,
    end) of A (M, K) and B (K, N), K a multiple of the instruction's,
    starting from C words (M, N). ``decoded``: the operands as
    :func:`decoders` gives them, to reuse across calls (row slices of A's)."""
    dp = model.datapath
    c = np.ascontiguousarray(c, dtype=np.uint32)
    out = np.empty(c.shape, np.int64)
    if isinstance(model, IntegerModel):
        lo, hi = tiles[0] * dp.k, tiles[1] * dp.k
        integer_kernel(np.ascontiguousarray(a[:, lo:hi].astype(np.int64)),
                       np.ascontiguousarray(b[lo:hi].astype(np.int64)),
                       get_format(dp.a_type).spec, get_format(dp.b_type).spec,
                       c, dp.k, model.saturate, out)
        return out.astype(np.uint32)
    key = engine_key(model)
    per_instr = key[1]
    if decoded is None:
        decoded = decoders(model, a, b)
    kernel = _kernel(key)
    lo, hi = tiles[0] * per_instr, tiles[1] * per_instr
    (a_sig, a_exp, a_cls, a_flag), b_dec = decoded

    def rows(r0: int, r1: int) -> None:
        kernel(a_sig[r0:r1], a_exp[r0:r1], a_cls[r0:r1], a_flag[r0:r1], *b_dec, c[r0:r1], lo,
               hi, out[r0:r1])

    m = c.shape[0]
    parts = max(1, min(threads(), m))
    if parts == 1:
        rows(0, m)
    else:
        cuts = np.linspace(0, m, parts + 1).astype(int)
        with ThreadPoolExecutor(parts) as pool:
            list(pool.map(rows, cuts[:-1], cuts[1:]))
    return out.astype(np.uint32)


def threads() -> int:
    """Threads a product runs on: numba's thread count (every core unless
    NUMBA_NUM_THREADS or numba.set_num_threads says otherwise)."""
    return numba.get_num_threads()


def decoders(model, a: np.ndarray, b: np.ndarray, active: np.ndarray | None = None):
    """A (M, K) and B (K, N) decoded once for :func:`gemm_words` (``active``:
    the K positions a sparse A keeps; B's words elsewhere are never read)."""
    dp, p = model.datapath, model.params
    block = min(p.block_size, dp.k)
    return (decode_operand(a, dp.a_type, p.input_conversion, block, 1, active),
            decode_operand(b, dp.b_type, p.input_conversion, block, 0))


@njit(cache=True)
def _int_value(word, spec):
    signed = spec[6]
    width = spec[1]
    w = word & ((1 << width) - 1)
    if signed and (w >> (width - 1)) & 1:
        return w - (1 << width)
    return w


@njit(cache=True, nogil=True, parallel=True)
def integer_kernel(a, b, a_spec, b_spec, c, k_inst, saturate, out):
    """Integer MMA chained over K: each instruction's exact sum plus C, wrapped
    to 32 bits or saturated (the IntegerModel's rule, once per instruction)."""
    k = a.shape[1]
    n = b.shape[1]
    for i in prange(a.shape[0]):
        acc = np.empty(n, np.int64)
        for j in range(n):
            v = np.int64(c[i, j])
            acc[j] = v - (1 << 32) if v >= (1 << 31) else v
        for lo in range(0, k, k_inst):
            for t in range(lo, lo + k_inst):
                x = _int_value(a[i, t], a_spec)
                for j in range(n):
                    acc[j] += x * _int_value(b[t, j], b_spec)
            for j in range(n):
                if saturate:
                    acc[j] = min(max(acc[j], -(1 << 31)), (1 << 31) - 1)
                else:
                    acc[j] = ((acc[j] + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
        for j in range(n):
            out[i, j] = acc[j] & 0xFFFFFFFF
