"""Whole matrix products on the fixed-point engine, decoding each operand once.

:func:`gemm_words` computes, for every (i, j), exactly what the engine
(:func:`~tcprobe.models.engine.fused_dot`) computes for the dot product of
row i of A and column j of B chained over K tiles, one instruction a tile,
each instruction's D the next one's C (``tests/test_matmul.py``
compares the two word for word). What a matrix product lets it share:

* every row of A and column of B is decoded once into (signed significand,
  raw exponent) pairs, with -2**24 as the exponent of a zero (a zero product
  never sets the anchor, so zero padding is exact) and a flag per block of
  K for a NaN or Inf word;
* a block is then one pass for its anchor (the largest exponent sum) and
  one that cuts each integer product to the quantum and sums it, both over
  16 columns of D at once in int32 lanes where the cut products fit
  (:mod:`.kernels.gemm_ir`, hand-written vector code; the products of a
  narrow format always do: bf16, f16, tf32, fp8); where C, the block
  results and D share one IEEE-like format and rounding (every GPU
  profile's f32 and f16 accumulation) the addends' fields and the rounding
  run in the same lanes, and only a group of columns flagged for a NaN or
  Inf word (the addend's, a row block of A's, a column block of B's) goes
  on to the core's specials rule; else the quantum, the cut, the rounding
  and the specials rule are the arithmetic core's (:mod:`.kernels.core`)
  in numba's loops, int64 lanes (``TCPROBE_KERNEL=plain``: those loops for
  everything, the same words);
* B is held in panels of PANEL columns (padded to 16) whose rows of a
  block stay in the L1 cache while ROW_TILE rows of A pass over them; the
  rows of D are split over the caller's ``jobs`` threads (the kernel
  releases the GIL).

Integer datapaths (s8/u8/s4/u4/b1) take :func:`integer_kernel`: the exact
sum of each instruction (of products, or of a XOR b for b1 .xor) added to C
and wrapped modulo 2**32, or saturated once per instruction.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields as dataclass_fields
from functools import lru_cache

import numpy as np
from numba import njit, prange

from . import fastpath, kernel_cache, numba_internals
from .formats import Class, convert_input, decode_scalar, get_format
from .kernels import gemm_ir
from .kernels.core import NONNEG, cut, mul_class, quantum, specials_word, term_flags, window_word
from .kernels.gemm_ir import panel_block, panel_words, split_panel
from .kernels.kernel_params import KernelParams, kernel_params
from .kernels.kernel_stamp import SOURCE_STAMP
from .kernels.lane_decoder import fields, lane_class, lane_decoder_applies
from .model import FixedPointModel, IntegerModel

ZERO_EXP = -(1 << 24)  # exponent of a zero element: every sum with it is below any real one
PANEL = 128  # columns of B one kernel call holds (its K x 128 decoded panel stays in cache)
ROW_TILE = 64  # rows of D whose accumulators pass over one block's panel rows in turn
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


@njit(cache=True)
def _decode_float_into(words, spec, sig, exp, cls):
    """_decode_into for a float format with NaN and Inf, NaN only, or no
    specials (lane_decoder.fields and lane_class: bit operations, no branch
    on the word's class; ``tests/test_gemm_lanes.py`` holds the two equal)."""
    flat = words.ravel()
    for x in range(flat.size):
        special, s, m, raw = fields(np.int64(flat[x]), spec)
        c = lane_class(special, m, spec)
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
    sig = np.empty(words.shape, np.int32)  # |significand| < 2**24, products formed in int64
    exp = np.empty(words.shape, np.int32)
    cls = np.empty(words.shape, np.int8)
    fast = f.spec.kind == 0 and f.spec.specials in (0, 1, 2)
    (_decode_float_into if fast else _decode_into)(words, f.spec, sig.ravel(), exp.ravel(),
                                                   cls.ravel())
    special = (cls & 3) >= int(Class.INF)
    if active is not None:
        cls[~active] |= MASKED
        special &= active
    # the shapes spelt out: an operand with no rows (A) or no columns (B) has flags too
    if axis == 1:
        flags = special.reshape(words.shape[0], words.shape[1] // block, block).any(axis=2)
    else:
        flags = special.reshape(words.shape[0] // block, block, words.shape[1]).any(axis=1)
    return sig, exp, cls, np.ascontiguousarray(flags)


def _kernels():
    """This module, for :mod:`.kernels.gemm_split`, which runs its stage on it."""
    import sys

    return sys.modules[__name__]


def _mfma(model) -> bool:
    """Whether ``model`` is an AMD v_mfma model (models/amd.py)."""
    from .amd import MfmaModel

    return isinstance(model, MfmaModel)


def supports(model) -> bool:
    """Whether :func:`gemm_words` computes this model's chain (else the
    caller evaluates the dot-level model tile by tile)."""
    if isinstance(model, IntegerModel):
        return True
    if _mfma(model):  # AMD v_mfma: models/amd_fast.py's GEMM form
        from . import amd_fast
        from .amd import effective

        return amd_fast.fits(effective(model.params, model.datapath), model.datapath)
    if type(model) is not FixedPointModel:
        from .kernels import gemm_split  # the fp8 mma.sync emulation: unpack and f16 sub-MMAs

        return gemm_split.supports(model, _kernels())
    dp, p = model.datapath, model.params
    if dp.block_scaled or dp.c != dp.d_type or dp.k % min(p.block_size, dp.k):
        return False
    for f in dataclass_fields(p):
        if f.name not in fastpath.KNOWN_FIELDS and getattr(p, f.name) != f.default:
            return False
    kp = kernel_params(dp, p, dp.k)
    return (lane_decoder_applies(kp) and kp.out.zero_pos and not kp.ordered
            and not kp.c_last and p.c_convert is None)


@njit(inline="always")
def _special_flags(acc, spec, a_cls, b_cls, i, j, lo, block):
    """The core's flags of a block with a NaN or Inf word (``acc`` read in
    ``spec``, the format of the word it holds; sparse A's masked positions
    left out)."""
    sp, cs, cm, _cr = fields(acc, spec)
    flags = term_flags(lane_class(sp, cm, spec), cs)
    for t in range(lo, lo + block):
        x = a_cls[i, t]
        if x & MASKED:
            continue
        y = b_cls[t, j]
        flags |= term_flags(mul_class(x & 3, y & 3), ((x ^ y) >> 2) & 1)
    return flags


def narrow_lanes(kp: KernelParams) -> bool:
    """Whether the kernel runs a block's products in int32 lanes
    (:mod:`.kernels.gemm_ir`: the hand-written IR switched on, and the cut
    products and their sum fit); else in int64 lanes by numba's loops."""
    return numba_internals.ir_kernels() and (gemm_ir.words_fit(kp) or gemm_ir.fits(
        kp.a_spec.frac_bits, kp.b_spec.frac_bits, kp.window.bits, kp.block))


@lru_cache(maxsize=32)
def _kernel(kp: KernelParams, narrow: bool):
    """The blocked chain for one configuration, ``kp`` a compile-time constant.

    One call runs rows of D: for each block of K the columns run side by
    side (one pass for the anchors, one for the cut and the sum, both over
    j: LANES columns a call of :func:`.kernels.gemm_ir.panel_block` in
    int32 lanes where ``narrow``, else numba's loops over j in int64); each
    word is then the core's: :func:`~.core.quantum` gives the quantum,
    :func:`~.core.cut` cuts the terms, :func:`~.core.window_word` rounds the
    sum, and a block with a NaN or Inf word (flagged per block and row or
    column) is :func:`~.core.specials_word`'s."""
    block, window, inter, out_stage = kp.block, kp.window, kp.inter, kp.out
    per_instr = kp.k // block
    fab = kp.a_spec.frac_bits + kp.b_spec.frac_bits
    d_fb, i_fb = out_stage.spec.frac_bits, inter.spec.frac_bits
    d_spec, i_spec = out_stage.spec, inter.spec
    # the configurations are literals of the kernel, valid (typable) for every kp; a
    # branch whose intrinsic does not apply (whole, lanes32 false) never runs
    config, wconfig = gemm_ir.block_config(kp), gemm_ir.words_config(kp)
    lanes = gemm_ir.LANES
    b_shift = gemm_ir.magnitudes(fab, max(window.bits, 0))
    whole = narrow and gemm_ir.words_fit(kp)  # panel_words: addends, products and rounding
    lanes32 = narrow and not whole and gemm_ir.fits(kp.a_spec.frac_bits, kp.b_spec.frac_bits,
                                                    window.bits, block)
    stamp = SOURCE_STAMP

    @njit(cache=True, nogil=True)
    def kernel(a_sig, a_exp, a_cls, a_flag, b_sig, b_exp, b_cls, b_flag, c, j0, blk_lo, blk_hi,
               out):
        assert len(stamp) > 0  # a constant of the cached kernel (kernel_stamp)
        n = b_sig.shape[1]  # columns j0 .. j0 + n of the panel (padded to LANES)
        n_out = min(n, out.shape[1] - j0)  # of D
        k_a = a_sig.shape[1]
        b_mag = np.empty(b_sig.shape if narrow else (0, 0), np.int32)
        b_neg = np.empty(b_sig.shape if narrow else (0, 0), np.int32)
        if narrow:  # B's rows of these blocks as the intrinsics read them
            split_panel(b_sig, b_shift, blk_lo * block, blk_hi * block, b_mag, b_neg)
        if whole:
            # panel_words applies: C, the block results and D in one format and stage.
            # Rows go ROW_TILE at a time, each block of K over all of them, so the
            # block's panel rows stay in the L1 cache while their accumulators pass
            # (LANES columns a call); a group of columns with a NaN or Inf word
            # (flagged: the addend, A's row block, B's column block) gets the core's
            # specials after the call. (Inline here, not a nested function: a
            # dispatcher in the closure would change the disk cache's key in every
            # process, and the kernel would compile again each time.)
            groups = np.zeros((blk_hi, n // lanes), np.uint8)  # a B column of the group is flagged
            for blk in range(blk_lo, blk_hi):
                for j in range(n):
                    groups[blk, j // lanes] |= b_flag[blk, j]
            acc = np.zeros(ROW_TILE * n, np.int64)
            scratch = np.zeros(lanes, np.int64)
            for r0 in range(0, a_sig.shape[0], ROW_TILE):
                r1 = min(a_sig.shape[0], r0 + ROW_TILE)
                for i in range(r0, r1):
                    for j in range(n):
                        acc[(i - r0) * n + j] = c[i, j0 + j] if j < n_out else 0
                for blk in range(blk_lo, blk_hi):
                    lo = blk * block
                    for i in range(r0, r1):
                        row_slow = a_flag[i, blk]
                        base = (i - r0) * n
                        for j in range(0, n, lanes):
                            hit = panel_words(a_sig, a_exp, b_mag, b_neg, b_exp, i * k_a + lo,
                                              lo * n, n, j, acc, base + j, scratch, 0, wconfig)
                            if hit or row_slow or groups[blk, j // lanes]:
                                for x in range(lanes):  # the flagged columns' specials
                                    w = acc[base + j + x]
                                    sp, _s, sig, _r = fields(w, d_spec)
                                    if sp and lane_class(sp, sig, d_spec) == 3:
                                        scratch[x] = out_stage.nan  # a NaN addend: NaN, whatever
                                        continue  # the products (the core's NAN flag)
                                    if row_slow or b_flag[blk, j + x] or sp:
                                        flags = _special_flags(w, d_spec, a_cls, b_cls, i, j + x, lo,
                                                               block)
                                        special, word = specials_word(flags, out_stage)
                                        if special:
                                            scratch[x] = word
                            for x in range(lanes):
                                acc[base + j + x] = scratch[x]
                for i in range(r0, r1):
                    for j in range(n_out):
                        out[i, j0 + j] = acc[(i - r0) * n + j]
            return
        acc = np.zeros(n, np.int64)
        amax = np.empty(n, np.int64)
        q = np.empty(n, np.int64)
        m = np.empty(n, np.int64)
        cmag = np.empty(n, np.int64)
        csgn = np.empty(n, np.int64)
        clsb = np.empty(n, np.int64)
        slow = np.empty(n, np.uint8)
        ctop = np.empty(n, np.int32)
        top = np.empty(n, np.int32)
        sums = np.empty(n, np.int32)
        for i in range(a_sig.shape[0]):
            for j in range(n):
                acc[j] = c[i, j0 + j] if j < n_out else 0
            for blk in range(blk_lo, blk_hi):
                starts = blk % per_instr == 0  # acc is C or the previous instruction's D
                ends = (blk + 1) % per_instr == 0
                lo = blk * block
                for j in range(n):
                    if starts:
                        sp, cs, cm, cr = fields(acc[j], out_stage.spec)
                        clsb[j] = cr - d_fb
                    else:
                        sp, cs, cm, cr = fields(acc[j], inter.spec)
                        clsb[j] = cr - i_fb
                    csgn[j] = cs
                    cmag[j] = cm
                    amax[j] = cr if cm != 0 else ZERO_EXP
                    slow[j] = sp | b_flag[blk, j]
                if lanes32:
                    for j in range(n):
                        ctop[j] = amax[j]
                    for j in range(0, n, lanes):
                        panel_block(a_sig, a_exp, b_mag, b_neg, b_exp, i * k_a + lo, lo * n, n, ctop,
                                    top, sums, j, config)
                    for j in range(n):
                        q[j] = top[j] - window.bits
                        m[j] = cut(cmag[j], clsb[j] - q[j], csgn[j]) + sums[j]
                else:
                    for t in range(lo, lo + block):
                        ea = np.int64(a_exp[i, t])
                        for j in range(n):
                            e = ea + b_exp[t, j]
                            amax[j] = e if e > amax[j] else amax[j]
                    for j in range(n):
                        q[j] = quantum(amax[j], window)
                        m[j] = cut(cmag[j], clsb[j] - q[j], csgn[j])
                    for t in range(lo, lo + block):
                        ea = np.int64(a_exp[i, t]) - fab
                        sa = np.int64(a_sig[i, t])
                        for j in range(n):
                            p = sa * b_sig[t, j]
                            neg = p >> 63
                            m[j] += cut((p ^ neg) - neg, ea + b_exp[t, j] - q[j], neg & 1)
                row_slow = a_flag[i, blk]
                for j in range(n):
                    if row_slow or slow[j]:
                        if starts:
                            flags = _special_flags(acc[j], d_spec, a_cls, b_cls, i, j, lo, block)
                        else:
                            flags = _special_flags(acc[j], i_spec, a_cls, b_cls, i, j, lo, block)
                        special, word = specials_word(flags, out_stage if ends else inter)
                        if special:
                            acc[j] = word
                            continue
                    if ends:
                        acc[j] = window_word(m[j], q[j], NONNEG, window, out_stage)
                    else:
                        acc[j] = window_word(m[j], q[j], NONNEG, window, inter)
            for j in range(n_out):
                out[i, j0 + j] = acc[j]

    return kernel


def gemm_words(model, a: np.ndarray, b: np.ndarray, c: np.ndarray, tiles: tuple[int, int],
               decoded=None, jobs: int = 1) -> np.ndarray:
    """D words (M, N) of the chain over instruction tiles ``tiles`` = (first,
    end) of A (M, K) and B (K, N), K a multiple of the instruction's,
    starting from C words (M, N), rows split over ``jobs`` threads.
    ``decoded``: the operands as :func:`decoders` gives them, to reuse
    across calls (row slices of A's)."""
    dp = model.datapath
    kernel_cache.working_on(dp.id)
    if _mfma(model):
        return model.gemm_words(a, b, c, tiles, jobs)
    if not isinstance(model, (FixedPointModel, IntegerModel)):
        from .kernels import gemm_split

        return gemm_split.words(model, a, b, c, tiles, decoded, jobs, _kernels())
    c = np.ascontiguousarray(c, dtype=np.uint32)
    out = np.empty(c.shape, np.int64)
    if isinstance(model, IntegerModel):
        lo, hi = tiles[0] * dp.k, tiles[1] * dp.k
        integer_kernel(np.ascontiguousarray(a[:, lo:hi].astype(np.int64)),
                       np.ascontiguousarray(b[lo:hi].astype(np.int64)),
                       get_format(dp.a_type).spec, get_format(dp.b_type).spec,
                       c, dp.k, model.saturate, dp.bitop == "xor", out)
        return out.astype(np.uint32)
    kp = kernel_params(dp, model.params, dp.k)
    per_instr = dp.k // kp.block
    if decoded is None:
        decoded = decoders(model, a, b)
    kernel = _kernel(kp, narrow_lanes(kp))
    lo, hi = tiles[0] * per_instr, tiles[1] * per_instr
    (a_sig, a_exp, a_cls, a_flag), panels = decoded

    def task(r0: int, r1: int, j0: int, panel) -> None:
        kernel(a_sig[r0:r1], a_exp[r0:r1], a_cls[r0:r1], a_flag[r0:r1], *panel, c[r0:r1], j0,
               lo, hi, out[r0:r1])

    m = c.shape[0]
    parts = max(1, min(jobs, m))
    if parts == 1:  # (fit-gemm runs hundreds of small chains: no more than the calls)
        for j0, panel in panels:
            task(0, m, j0, panel)
    else:
        cuts = np.linspace(0, m, parts + 1).astype(int)
        work = [(r0, r1, j0, panel) for r0, r1 in zip(cuts[:-1], cuts[1:], strict=True)
                for j0, panel in panels]
        with ThreadPoolExecutor(parts) as pool:
            list(pool.map(lambda args: task(*args), work))
    return out.astype(np.uint32)


def decoders(model, a: np.ndarray, b: np.ndarray, active: np.ndarray | None = None):
    """A (M, K) and B (K, N) decoded once for :func:`gemm_words` (``active``:
    the K positions a sparse A keeps; B's words elsewhere are never read)."""
    if _mfma(model):
        return None  # amd_fast.gemm_words decodes its operands itself
    if not isinstance(model, FixedPointModel):
        from .kernels import gemm_split

        return gemm_split.decoders(model, a, b, _kernels())
    dp, p = model.datapath, model.params
    block = min(p.block_size, dp.k)
    b_dec = decode_operand(b, dp.b_type, p.input_conversion, block, 0)
    panels = [(j0, tuple(_padded(x[:, j0:j0 + PANEL], fill)
                         for x, fill in zip(b_dec, (0, ZERO_EXP, 0, False), strict=True)))
              for j0 in range(0, b.shape[1], PANEL)]
    return decode_operand(a, dp.a_type, p.input_conversion, block, 1, active), panels


def _padded(x: np.ndarray, fill) -> np.ndarray:
    """A panel's columns padded to a multiple of gemm_ir.LANES with ``fill``
    (zero words: significand 0, exponent ZERO_EXP, class ZERO, no flag),
    whose results are never written out."""
    width = -(-x.shape[1] // gemm_ir.LANES) * gemm_ir.LANES
    out = np.full((x.shape[0], width), fill, x.dtype)
    out[:, :x.shape[1]] = x
    return out


@njit(cache=True)
def _int_value(word, spec):
    signed = spec.signed
    width = spec.width
    w = word & ((1 << width) - 1)
    if signed and (w >> (width - 1)) & 1:
        return w - (1 << width)
    return w


@njit(cache=True, nogil=True, parallel=True)
def integer_kernel(a, b, a_spec, b_spec, c, k_inst, saturate, xor, out):
    """Integer MMA chained over K: each instruction's exact sum plus C, wrapped
    to 32 bits or saturated (the IntegerModel's rule, once per instruction);
    ``xor``: the terms are a XOR b (b1 .xor.popc), else a * b."""
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
                if xor:
                    for j in range(n):
                        acc[j] += x ^ _int_value(b[t, j], b_spec)
                else:
                    for j in range(n):
                        acc[j] += x * _int_value(b[t, j], b_spec)
            for j in range(n):
                if saturate:
                    acc[j] = min(max(acc[j], -(1 << 31)), (1 << 31) - 1)
                else:
                    acc[j] = ((acc[j] + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
        for j in range(n):
            out[i, j] = acc[j] & 0xFFFFFFFF
