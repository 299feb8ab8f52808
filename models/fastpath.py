"""The engine's fast path: the same fused dot product, faster.

:func:`fast_dot` computes exactly what :func:`tcprobe.models.engine.fdp_kernel`
computes (``tests/test_fastpath.py`` compares the two word for word on random
raw cases over many parameter sets), with changes that only touch speed:

* One kernel is compiled per configuration (formats, window, floor,
  roundings, ... as compile-time constants), so the plain scalar decoder and
  encoder, which LLVM inlines into it, fold to the few bit operations the
  configuration needs. Numba caches each kernel on disk, keyed by its
  constants: only the first run of a configuration compiles (about 2 s).
* The fast lane: a block with a window, raw alignment and no NaN or Inf
  word is decoded by branch-free bit operations in two passes over its
  lanes, one for the anchor (and the specials and the zero sign), one that
  cuts each term to the window and sums it (the steps of the engine's
  ``_round_block``, inlined, with no arrays between the passes). A block
  with a NaN or Inf word needs only the classes of its words (its result
  is NaN or an Inf whatever the finite terms are). Other configurations
  (exact sums, normalized alignment) take the plain kernel's steps, still
  specialized; the exact sum calls ``_round_block`` itself.
* The special-value flags live in registers, not in an array, and the words
  go in as they are (uint32), with no int64 copies.
* The kernel releases the GIL, and :func:`fast_dot` splits a large batch
  over ``jobs`` threads (:func:`set_jobs`, ``--jobs``).

Only parameters this path was written for take it; a parameter added to
EngineParams later, set away from its default, or a block-scaled datapath
sends the model to the plain kernel (see :func:`supports`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from functools import lru_cache

import numpy as np
from numba import njit

from .bits import bit_length
from .engine import NO_FLOOR, EngineParams, _round_block
from .formats import Format, decode_scalar, encode_scalar, inf_word

# Fields of EngineParams this path implements. A field added later (by a new
# mechanism) sends every model that sets it away from its default to the
# plain kernel, so the fast path can never silently ignore it.
KNOWN_FIELDS = frozenset({
    "window_bits", "block_size", "zero_floor", "input_conversion", "output_rounding",
    "output_frac_bits", "zero_sign", "nan", "overflow", "align", "carry_bits", "k_order",
    "c_join", "c_convert", "inter_type", "inter_rounding", "inter_frac_bits", "c_add_rounding",
})
MIN_CASES_PER_JOB = 8192  # below this a batch runs on one thread
_JOBS = 1
# When fused_dot takes this path on its own (fast=None): a kernel costs about
# 2 s to compile (0.3 s to load from numba's disk cache), the plain kernel
# about 0.5 us a case, so a one-off batch (a fit trying hundreds of parameter
# sets on a few thousand cases) is faster on the plain kernel. "auto": batches
# of AUTO_MIN_CASES or more, or a configuration this process already ran
# here; "always": whenever supported (tcprobe validate, long runs); "never".
AUTO_MIN_CASES = 200_000
_POLICY = "auto"
_RAN: set = set()

# The plain scalar helpers themselves: LLVM inlines them into each kernel
# (forcing numba-level inlining compiles 3x slower for a few percent).
_decode = decode_scalar
_encode = encode_scalar


def supports(dp, params) -> bool:
    """Whether the fast path computes this datapath and parameter set."""
    if dp.block_scaled:
        return False
    for f in fields(EngineParams):
        if f.name not in KNOWN_FIELDS and getattr(params, f.name) != f.default:
            return False
    return True


def set_jobs(n: int | None) -> int:
    """Evaluate large batches on ``n`` threads (None or 0: one per core)."""
    global _JOBS
    _JOBS = max(1, int(n)) if n else max(1, os.cpu_count() or 1)
    return _JOBS


def jobs() -> int:
    return _JOBS


def set_policy(policy: str) -> str:
    """When fused_dot takes the fast path by itself: auto, always or never
    (returns the previous policy)."""
    global _POLICY
    if policy not in ("auto", "always", "never"):
        raise ValueError(f"fast-path policy must be auto, always or never, not {policy!r}")
    old, _POLICY = _POLICY, policy
    return old


def worthwhile(dp, params, n_cases: int) -> bool:
    """Whether the fast path pays for its compile here (see _POLICY)."""
    if _POLICY != "auto":
        return _POLICY == "always"
    return n_cases >= AUTO_MIN_CASES or (dp, params) in _RAN


@njit(inline="always")
def _cut(sig, sh, sign):
    """(-1)**sign * bits.shl(sig, sh): a term cut toward zero to the window.
    bits.shl for every shift the plain kernel makes, without branches, and
    a left shift clamped to 62 so that a zero term (the fast lane keeps
    zero lanes as terms) never makes an undefined shift; a nonzero term
    never shifts that far."""
    left = sh if sh < 62 else 62
    left = left if left > 0 else 0
    right = -sh if -sh < 63 else 63
    right = right if right > 0 else 0
    u = (sig << left) >> right
    return (u ^ -sign) + sign


@njit(inline="always")
def _finish(m, q, all_neg, window, carry_bits, zero_pos, spec, rounding, keep, overflow, top):
    """windowed's tail: wrap the carries, encode, the zero sign."""
    if carry_bits >= 0:
        width = window + carry_bits + 1
        m = ((m + (1 << (width - 1))) & ((1 << width) - 1)) - (1 << (width - 1))
    if m == 0:
        return _encode(1 if (all_neg and not zero_pos) else 0, 0, 0, False, spec,
                       rounding, keep, overflow)
    neg = m < 0
    word = _encode(1 if neg else 0, -m if neg else m, q, False, spec, rounding, keep,
                   overflow)
    if zero_pos and (word & top) == 0:
        word = 0
    return word


@njit(inline="always")
def windowed(n, tsign, tsig, tlsb, amax, all_neg, window, floor, carry_bits, zero_pos,
             spec, rounding, keep, overflow, top):
    """The engine's _round_block for a window (window >= 0), the same steps,
    inlined so that a kernel's constants fold through them. Terms may include
    zeros (significand 0); ``amax`` is the largest alignment exponent of the
    nonzero ones (NO_FLOOR when there is none)."""
    if n == 0 or amax == NO_FLOOR:
        return _encode(1 if (all_neg and not zero_pos) else 0, 0, 0, False, spec,
                       rounding, keep, overflow)
    anchor = amax if amax > floor else floor
    q = anchor - window
    m = 0
    for t in range(n):
        m += _cut(tsig[t], tlsb[t] - q, tsign[t])
    return _finish(m, q, all_neg, window, carry_bits, zero_pos, spec, rounding, keep, overflow,
                   top)


@njit(inline="always")
def _fields(x, spec):
    """(special, sign, significand, raw exponent) of a float word by bit
    operations alone, as decode_scalar gives them for finite words and zeros;
    ``special`` marks NaN and Inf words, whose other fields mean nothing."""
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    x = x & ((1 << width) - 1)
    sign = (x >> (width - 1)) & 1 if signed else 0
    emask = (1 << ebits) - 1
    fmask = (1 << fbits) - 1
    e = (x >> (fbits + drop)) & emask
    f = (x >> drop) & fmask
    if specials == 0:
        special = e == emask
    elif specials == 1:
        special = (e == emask) & (f == fmask)
    else:
        special = False
    sig = f | ((1 if e != 0 else 0) << fbits)
    raw = (e if e != 0 else 1) - bias
    return special, sign, sig, raw


def _build_kernel(key: tuple):
    """A kernel for one configuration, every knob a compile-time constant, so
    the decoders and the rounding fold to the few bit operations that this
    configuration needs. Numba caches each on disk by its constants."""
    (ident, block, k, a_spec, b_spec, c_spec, i_spec, d_spec, window, floor, carry_bits,
     normalized, zero_pos, overflow, i_round, i_keep, i_nan, d_round, d_keep, d_nan,
     c_last, c_add_round) = key
    n_blocks = (k + block - 1) // block
    d_top = (1 << (d_spec[1] - 1)) - 1  # magnitude bits of an output word
    i_top = (1 << (i_spec[1] - 1)) - 1
    # The fast lane (module doc): float formats, a window, raw alignment.
    # Without it every block takes the general path (the plain kernel's steps).
    fast_lane = (window >= 0 and not normalized
                 and all(spec[0] == 0 for spec in (a_spec, b_spec, c_spec, i_spec)))
    a_fb, b_fb, c_fb, i_fb = a_spec[3], b_spec[3], c_spec[3], i_spec[3]
    a_fm, b_fm, c_fm, i_fm = ((1 << f) - 1 for f in (a_fb, b_fb, c_fb, i_fb))
    a_fn, b_fn, c_fn, i_fn = (sp[5] == 1 for sp in (a_spec, b_spec, c_spec, i_spec))  # NaN only

    @njit(cache=True, nogil=True)
    def kernel(a, b, c, order, out):
        tsign = np.zeros(block + 2, np.int64)
        tsig = np.zeros(block + 2, np.int64)
        tlsb = np.zeros(block + 2, np.int64)
        talign = np.zeros(block + 2, np.int64)
        acc = np.zeros(26, np.int64)
        for i in range(a.shape[0]):
            acc_word = np.int64(c[i])
            for blk in range(n_blocks):
                last = blk == n_blocks - 1 and not c_last
                nan_f = False
                pinf = False
                ninf = False
                all_neg = True
                amax = NO_FLOOR
                lo = blk * block
                hi = min(lo + block, k)
                if fast_lane:
                    special = False
                    has_c = blk > 0 or not c_last
                    cs = 0
                    cm = 0
                    cl = 0
                    if has_c:
                        if blk == 0:
                            sp, cs, cm, cr = _fields(acc_word, c_spec)
                            cl = cr - c_fb
                        else:
                            sp, cs, cm, cr = _fields(acc_word, i_spec)
                            cl = cr - i_fb
                        special = sp
                        all_neg = cs == 1
                        amax = cr if cm != 0 else NO_FLOOR
                    for j in range(lo, hi):
                        kk = j if ident else order[j]
                        spa, sa, ma, ra = _fields(np.int64(a[i, kk]), a_spec)
                        spb, sb, mb, rb = _fields(np.int64(b[i, kk]), b_spec)
                        special = special | spa | spb
                        all_neg = all_neg & ((sa ^ sb) == 1)
                        al = ra + rb if (ma != 0) & (mb != 0) else NO_FLOOR
                        amax = al if al > amax else amax
                    if not special:
                        if amax == NO_FLOOR:
                            if last:
                                acc_word = _encode(1 if (all_neg and not zero_pos) else 0, 0, 0,
                                                   False, d_spec, d_round, d_keep, overflow)
                            else:
                                acc_word = _encode(1 if (all_neg and not zero_pos) else 0, 0, 0,
                                                   False, i_spec, i_round, i_keep, overflow)
                            continue
                        anchor = amax if amax > floor else floor
                        q = anchor - window
                        m = _cut(cm, cl - q, cs) if has_c else 0
                        for j in range(lo, hi):
                            kk = j if ident else order[j]
                            spa, sa, ma, ra = _fields(np.int64(a[i, kk]), a_spec)
                            spb, sb, mb, rb = _fields(np.int64(b[i, kk]), b_spec)
                            m += _cut(ma * mb, ra + rb - (a_fb + b_fb) - q, sa ^ sb)
                        if last:
                            acc_word = _finish(m, q, all_neg, window, carry_bits, zero_pos,
                                               d_spec, d_round, d_keep, overflow, d_top)
                        else:
                            acc_word = _finish(m, q, all_neg, window, carry_bits, zero_pos,
                                               i_spec, i_round, i_keep, overflow, i_top)
                        continue
                    # A NaN or Inf word: the block is NaN or an Inf whatever
                    # the finite terms are, so only the classes matter.
                    nan_f = False
                    pinf = False
                    ninf = False
                    if blk > 0 or not c_last:
                        if blk == 0:
                            sp, cs, cm, cr = _fields(acc_word, c_spec)
                            nan_c = sp and (c_fn or (cm & c_fm) != 0)
                        else:
                            sp, cs, cm, cr = _fields(acc_word, i_spec)
                            nan_c = sp and (i_fn or (cm & i_fm) != 0)
                        if nan_c:
                            nan_f = True
                        elif sp:
                            if cs:
                                ninf = True
                            else:
                                pinf = True
                    for j in range(lo, hi):
                        kk = j if ident else order[j]
                        spa, sa, ma, ra = _fields(np.int64(a[i, kk]), a_spec)
                        spb, sb, mb, rb = _fields(np.int64(b[i, kk]), b_spec)
                        if (spa and (a_fn or (ma & a_fm) != 0)) or (spb and (b_fn or (mb & b_fm) != 0)):
                            nan_f = True
                        elif spa or spb:
                            if (not spa and ma == 0) or (not spb and mb == 0):
                                nan_f = True
                            elif sa ^ sb:
                                ninf = True
                            else:
                                pinf = True
                    if nan_f or (pinf and ninf):
                        acc_word = d_nan if last else i_nan
                    elif last:
                        acc_word = inf_word(1 if ninf else 0, d_spec)
                    else:
                        acc_word = inf_word(1 if ninf else 0, i_spec)
                    continue
                n = 0
                if blk > 0 or not c_last:
                    if blk == 0:
                        cc, cs, cm, cl, cr = _decode(acc_word, c_spec)

                    else:
                        cc, cs, cm, cl, cr = _decode(acc_word, i_spec)
                    if cc == 3:
                        nan_f = True
                    elif cc == 2:
                        if cs:
                            ninf = True
                        else:
                            pinf = True
                    else:
                        if cs == 0:
                            all_neg = False
                        if cc == 1:
                            tsign[0] = cs
                            tsig[0] = cm
                            tlsb[0] = cl
                            al = (cl + bit_length(cm) - 1) if normalized else cr
                            talign[0] = al
                            amax = al
                            n = 1
                for j in range(lo, hi):
                    kk = j if ident else order[j]
                    ca, sa, ma, la, ra = _decode(np.int64(a[i, kk]), a_spec)
                    cb, sb, mb, lb, rb = _decode(np.int64(b[i, kk]), b_spec)
                    s = sa ^ sb
                    if ca == 1 and cb == 1:
                        if s == 0:
                            all_neg = False
                        pm = ma * mb
                        tsign[n] = s
                        tsig[n] = pm
                        tlsb[n] = la + lb
                        al = (la + lb + bit_length(pm) - 1) if normalized else ra + rb
                        talign[n] = al
                        if al > amax:
                            amax = al
                        n += 1
                    elif ca == 3 or cb == 3:
                        nan_f = True
                    elif ca == 2 or cb == 2:
                        if ca == 0 or cb == 0:
                            nan_f = True
                        elif s:
                            ninf = True
                        else:
                            pinf = True
                    elif s == 0:
                        all_neg = False
                if last:
                    if nan_f or (pinf and ninf):
                        acc_word = d_nan
                    elif pinf or ninf:
                        acc_word = inf_word(1 if ninf else 0, d_spec)
                    elif window >= 0:
                        acc_word = windowed(n, tsign, tsig, tlsb, amax, all_neg, window, floor,
                                            carry_bits, zero_pos, d_spec, d_round, d_keep,
                                            overflow, d_top)
                    else:
                        acc_word = _round_block(n, tsign, tsig, tlsb, talign, all_neg,
                                                window, floor, carry_bits, d_spec, d_round,
                                                d_keep, overflow, zero_pos, acc)
                else:
                    if nan_f or (pinf and ninf):
                        acc_word = i_nan
                    elif pinf or ninf:
                        acc_word = inf_word(1 if ninf else 0, i_spec)
                    elif window >= 0:
                        acc_word = windowed(n, tsign, tsig, tlsb, amax, all_neg, window, floor,
                                            carry_bits, zero_pos, i_spec, i_round, i_keep,
                                            overflow, i_top)
                    else:
                        acc_word = _round_block(n, tsign, tsig, tlsb, talign, all_neg,
                                                window, floor, carry_bits, i_spec, i_round,
                                                i_keep, overflow, zero_pos, acc)
            if c_last:
                nan_f = False
                pinf = False
                ninf = False
                all_neg = True
                n = 0
                for t in range(2):
                    if t == 0:
                        cc, cs, cm, cl, cr = _decode(acc_word, i_spec)
                    else:
                        cc, cs, cm, cl, cr = _decode(np.int64(c[i]), c_spec)
                    if cc == 3:
                        nan_f = True
                    elif cc == 2:
                        if cs:
                            ninf = True
                        else:
                            pinf = True
                    else:
                        if cs == 0:
                            all_neg = False
                        if cc == 1:
                            tsign[n] = cs
                            tsig[n] = cm
                            tlsb[n] = cl
                            talign[n] = (cl + bit_length(cm) - 1) if normalized else cr
                            n += 1
                if nan_f or (pinf and ninf):
                    acc_word = d_nan
                elif pinf or ninf:
                    acc_word = inf_word(1 if ninf else 0, d_spec)
                else:
                    acc_word = _round_block(n, tsign, tsig, tlsb, talign, all_neg, -1,
                                            NO_FLOOR, -1, d_spec, c_add_round, d_keep,
                                            overflow, zero_pos, acc)
            out[i] = acc_word


    return kernel


@lru_cache(maxsize=64)
def kernel_for(key: tuple):
    """The compiled kernel of one configuration (built once per process)."""
    return _build_kernel(key)


def _input_words(words: np.ndarray, fmt: Format, mode: str) -> np.ndarray:
    """A or B words as the kernel reads them: truncation is the table's own
    (it ignores the dropped bits); a rounding conversion is applied first."""
    from .formats import convert_input

    if fmt.drop_bits and mode != "truncate":
        words = convert_input(words, fmt, mode) & fmt.word_mask
    return np.ascontiguousarray(words, dtype=np.uint32)


def fast_dot(dp, cases, p: EngineParams) -> np.ndarray:
    """Output words (uint32): the same as the plain kernel, see the module doc."""
    from .engine import prepare

    prep = prepare(dp, cases, p, _input_words)
    a_words, b_words, c_words, order = prep.a, prep.b, prep.c, prep.order
    out = np.empty(len(cases), np.int64)
    key = (p.k_order is None, prep.block, cases.k, prep.a_spec, prep.b_spec, prep.c_spec,
           prep.i_spec, prep.d_spec, *prep.settings)
    kernel = kernel_for(key)
    _RAN.add((dp, p))
    n = len(out)
    parts = min(_JOBS, max(1, n // MIN_CASES_PER_JOB))
    if parts == 1:
        kernel(a_words, b_words, c_words, order, out)
    else:
        cuts = np.linspace(0, n, parts + 1).astype(int)
        with ThreadPoolExecutor(parts) as pool:
            list(pool.map(lambda lo, hi: kernel(a_words[lo:hi], b_words[lo:hi], c_words[lo:hi],
                                                order, out[lo:hi]), cuts[:-1], cuts[1:]))
    return out.astype(np.uint32)
