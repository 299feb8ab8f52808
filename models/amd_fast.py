"""Every v_mfma design but f64's over many cases at once: CDNA3's truncated
and grouped, CDNA2's ftz, CDNA1's exact and the f32 FMA chain.

The same integer arithmetic as ``models/amd.py``'s scalar path (its module
doc names the designs and their evidence, MMA-Sim 2.1.1 from MI300X
measurements), compiled with numba on int64. It covers the cases of which
every operand, C and running sum is finite (zeros and subnormals included)
and no product reaches 2**128; a row with a NaN or Inf anywhere, or an
overflowing product, is flagged and ``models/amd.py`` computes it one case
at a time. The f32 FMA chain (``fma`` on f32 operands, every generation)
takes a row while each FMA's product and addend meet within 62 bits of each
other (the exact sum fits 62 bits); a far addend, a NaN or an Inf sends the
row to the scalar path. Tests hold the two paths to the same words, specials
included (tests/test_amd_fast.py), and the MMA-Sim tests run through this one.

Why int64 suffices (checked by :func:`fits`): a product of two significands
lies below 2**(e + 2) for its exponent sum e, so each product cut to F bits
below the block's largest exponent is below 2**(F + 2), a block of L of them
below L * 2**(F + 2); the join lifts that sum to F2 + 1 bits below the larger
exponent and C (24 bits) to F bits, so with F, F2 <= WINDOW_MAX and
L <= BLOCK_MAX every sum stays below 2**(WINDOW_MAX + 4 + log2 BLOCK_MAX) < 2**63.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bits import bit_length, shl
from .formats import decode, decode_scalar, encode_scalar, get_format

WINDOW_MAX = 40  # F and F2 this path takes (module doc)
BLOCK_MAX = 1 << 12  # L this path takes
ZERO_E = -999  # a zero product's exponent (models/amd.py, as MMA-Sim)
_F32 = get_format("f32")
_RNE, _IEEE = 1, 0  # formats.Rounding.RNE, formats.Overflow.IEEE


def fits(p, dp) -> bool:
    """True when this path computes ``p`` (an effective MfmaParams) on ``dp``."""
    if p.design == "fma":
        return dp.a_type == dp.b_type == dp.c == dp.d_type == "f32"
    if p.design == "ftz" and dp.a_type != dp.b_type:
        return False  # the scalar path reads both through A's format (CDNA2's 16-bit types)
    if p.design in ("exact", "ftz"):
        return dp.c == dp.d_type == "f32" and min(p.block, dp.k) <= BLOCK_MAX
    return (p.design in ("truncated", "grouped") and dp.c == "f32" and dp.d_type == "f32"
            and p.window <= WINDOW_MAX and p.window2 <= WINDOW_MAX
            and min(p.block, dp.k) <= BLOCK_MAX)


@njit(cache=True, inline="always")
def _floor_shift(x, sh):
    """floor(x * 2**sh) for an int64 x (any shift)."""
    if sh >= 0:
        return x << sh
    sh = -sh
    if sh >= 63:
        return -1 if x < 0 else 0
    return x >> sh


@njit(cache=True, inline="always")
def _trunc_shift(x, sh):
    """trunc(x * 2**sh): toward zero (any shift)."""
    m = shl(-x if x < 0 else x, sh)
    return -m if x < 0 else m


@njit(cache=True)
def _finish(s_dot, e_dot, unit_dot, c_sign, c_sig, c_lsb, c_raw, F, F2, drop_far, spec):
    """The join of the products' sum (s_dot * 2**(e_dot - unit_dot)) with C and
    the rounding into f32 (models/amd.py ``_finish``)."""
    e_max = e_dot if e_dot > c_raw else c_raw
    d = _floor_shift(s_dot, e_dot - unit_dot - (e_max - F2 - 1))
    cq = _floor_shift(-c_sig if c_sign else c_sig, c_lsb - (e_max - F))
    if drop_far and c_raw < e_max - F - 1:
        cq = 0
    w = F if F > F2 + 1 else F2 + 1
    t = (d << (w - F2 - 1)) + (cq << (w - F))
    if t == 0:
        return 0
    unit = e_max - w
    e_norm = bit_length(-t if t < 0 else t) - 1 + unit
    if e_norm < -126:
        e_norm = -126
    t = _floor_shift(t, unit - (e_norm - F2))
    neg = 1 if t < 0 else 0
    return encode_scalar(neg, -t if t < 0 else t, e_norm - F2, False, spec, _RNE, 23, _IEEE)


@njit(cache=True, inline="always")
def _group_sum(a_sign, a_sig, a_lsb, a_raw, b_sign, b_sig, b_lsb, b_raw, i, lo, hi, step, F):
    """(sum of the products lo, lo + step, ... below hi cut to F bits below their
    largest exponent, that exponent): models/amd.py ``_fused``."""
    e_max = ZERO_E
    for j in range(lo, hi, step):
        if a_sig[i, j] * b_sig[i, j] != 0:
            e = a_raw[i, j] + b_raw[i, j]
            if e > e_max:
                e_max = e
    s = 0
    for j in range(lo, hi, step):
        sig = a_sig[i, j] * b_sig[i, j]
        if sig != 0:
            signed = -sig if a_sign[i, j] != b_sign[i, j] else sig
            s += _trunc_shift(signed, a_lsb[i, j] + b_lsb[i, j] - e_max + F)
    return s, e_max


@njit(cache=True)
def _rows(a_cls, a_sign, a_sig, a_lsb, a_raw, b_cls, b_sign, b_sig, b_lsb, b_raw, c_words,
          grouped, L, F, F2, spec, out, slow):
    n, K = a_sig.shape
    for i in range(n):
        d = np.int64(c_words[i])
        for lo in range(0, K, L):
            hi = min(lo + L, K)
            c_cls, c_sign, c_sig, c_lsb, c_raw = decode_scalar(d, spec)
            if c_cls >= 2:  # an Inf or NaN C or running sum
                slow[i] = True
                break
            for j in range(lo, hi):
                if a_cls[i, j] >= 2 or b_cls[i, j] >= 2:
                    slow[i] = True
                elif not grouped:
                    sig = a_sig[i, j] * b_sig[i, j]
                    if sig != 0 and a_lsb[i, j] + b_lsb[i, j] + bit_length(sig) - 1 >= 128:
                        slow[i] = True  # a product of 2**128 or more is an Inf
            if slow[i]:
                break
            if grouped:
                se, ee = _group_sum(a_sign, a_sig, a_lsb, a_raw, b_sign, b_sig, b_lsb, b_raw,
                                    i, lo, hi, 2, F)
                so, eo = _group_sum(a_sign, a_sig, a_lsb, a_raw, b_sign, b_sig, b_lsb, b_raw,
                                    i, lo + 1, hi, 2, F)
                e_dot = ee if ee > eo else eo
                s_dot = _floor_shift(se, ee - e_dot) + _floor_shift(so, eo - e_dot)
            else:
                s_dot, e_dot = _group_sum(a_sign, a_sig, a_lsb, a_raw, b_sign, b_sig, b_lsb,
                                          b_raw, i, lo, hi, 1, F)
            d = _finish(s_dot, e_dot, F, c_sign, c_sig, c_lsb, c_raw, F, F2, grouped, spec)
        out[i] = d


@njit(cache=True)
def _fma_rows(a_cls, a_sign, a_sig, a_lsb, b_cls, b_sign, b_sig, b_lsb, c_words, spec, out, slow):
    """D = fma(a_k, b_k, D) from D = C, each rounded to nearest even into f32
    (models/amd.py ``fma_word`` on finite words)."""
    n, K = a_sig.shape
    for i in range(n):
        d = np.int64(c_words[i])
        for j in range(K):
            d_cls, d_sign, d_sig, d_lsb, _ = decode_scalar(d, spec)
            if d_cls >= 2 or a_cls[i, j] >= 2 or b_cls[i, j] >= 2:
                slow[i] = True
                break
            sp = 1 if a_sign[i, j] != b_sign[i, j] else 0
            p_sig, p_lsb = a_sig[i, j] * b_sig[i, j], a_lsb[i, j] + b_lsb[i, j]
            if p_sig == 0:  # a zero product: D stays, a zero D takes sign sp & its own
                if d_sig == 0:
                    d = np.int64(sp & d_sign) << 31
                continue
            if d_sig == 0:
                d = encode_scalar(sp, p_sig, p_lsb, False, spec, _RNE, 23, _IEEE)
                continue
            q = p_lsb if p_lsb < d_lsb else d_lsb
            if bit_length(p_sig) + p_lsb - q > 61 or bit_length(d_sig) + d_lsb - q > 61:
                slow[i] = True  # the addend is far from the product: exact in Python ints
                break
            t = ((-p_sig if sp else p_sig) << (p_lsb - q)) + ((-d_sig if d_sign else d_sig)
                                                              << (d_lsb - q))
            if t == 0:
                d = np.int64(0)
            else:
                d = encode_scalar(1 if t < 0 else 0, -t if t < 0 else t, q, False, spec, _RNE,
                                  23, _IEEE)
        out[i] = d


@njit(cache=True, inline="always")
def _exact_sum(n_terms, signs, sigs, lsbs, spec):
    """(word, ok): the exact sum of the nonzero terms rounded once to nearest
    even into f32 (+0 for an exact zero); ok False where the terms lie more
    than 62 bits apart (models/amd.py ``_sum_words``)."""
    q = 1 << 20
    top = -(1 << 20)
    for t in range(n_terms):
        if sigs[t] != 0:
            q = min(q, lsbs[t])
            top = max(top, lsbs[t] + bit_length(sigs[t]))
    if top == -(1 << 20):
        return np.int64(0), True
    if top - q + bit_length(n_terms) > 62:
        return np.int64(0), False
    total = 0
    for t in range(n_terms):
        if sigs[t] != 0:
            v = sigs[t] << (lsbs[t] - q)
            total += -v if signs[t] else v
    if total == 0:
        return np.int64(0), True
    return encode_scalar(1 if total < 0 else 0, -total if total < 0 else total, q, False, spec,
                         _RNE, 23, _IEEE), True


@njit(cache=True)
def _exact_rows(a_cls, a_sign, a_sig, a_lsb, b_cls, b_sign, b_sig, b_lsb, c_words, L, spec,
                out, slow):
    """CDNA1: each block of L products and the running sum added exactly, one
    rounding (models/amd.py ``_exact``)."""
    n, K = a_sig.shape
    signs = np.zeros(L + 1, np.int64)
    sigs = np.zeros(L + 1, np.int64)
    lsbs = np.zeros(L + 1, np.int64)
    for i in range(n):
        d = np.int64(c_words[i])
        for lo in range(0, K, L):
            hi = min(lo + L, K)
            d_cls, d_sign, d_sig, d_lsb, _ = decode_scalar(d, spec)
            if d_cls >= 2:
                slow[i] = True
                break
            for j in range(lo, hi):
                if a_cls[i, j] >= 2 or b_cls[i, j] >= 2:
                    slow[i] = True
                signs[j - lo] = 1 if a_sign[i, j] != b_sign[i, j] else 0
                sigs[j - lo] = a_sig[i, j] * b_sig[i, j]
                lsbs[j - lo] = a_lsb[i, j] + b_lsb[i, j]
            if slow[i]:
                break
            m = hi - lo
            signs[m], sigs[m], lsbs[m] = d_sign, d_sig, d_lsb
            d, ok = _exact_sum(m + 1, signs, sigs, lsbs, spec)
            if not ok:
                slow[i] = True
                break
        out[i] = d


@njit(cache=True, inline="always")
def _flush32(w):
    """An f32 word flushed to a zero of its sign when subnormal."""
    return w & 0x80000000 if (w >> 23) & 0xFF == 0 else w


@njit(cache=True)
def _add32(x, y, spec, terms_sign, terms_sig, terms_lsb):
    """(x + y rounded to nearest even, ok) for finite f32 words (models/amd.py
    ``_add``): two zeros keep a sign only where both have it."""
    x_cls, x_sign, x_sig, x_lsb, _ = decode_scalar(x, spec)
    y_cls, y_sign, y_sig, y_lsb, _ = decode_scalar(y, spec)
    if x_cls >= 2 or y_cls >= 2:
        return np.int64(0), False
    if x_sig == 0 and y_sig == 0:
        return np.int64(x_sign & y_sign) << 31, True
    terms_sign[0], terms_sig[0], terms_lsb[0] = x_sign, x_sig, x_lsb
    terms_sign[1], terms_sig[1], terms_lsb[1] = y_sign, y_sig, y_lsb
    return _exact_sum(2, terms_sign, terms_sig, terms_lsb, spec)


@njit(cache=True)
def _ftz_rows(a_cls, a_sign, a_sig, a_lsb, a_raw, b_cls, b_sign, b_sig, b_lsb, b_raw, c_words,
              P, src_frac, src_emin, spec, out, slow):
    """CDNA2: subnormal inputs and C to +0, each product rounded into f32, pairs
    (and pairs of pairs for P = 4) added, every f32 result flushed when
    subnormal (models/amd.py ``_ftz``)."""
    n, K = a_sig.shape
    prods = np.zeros(K, np.int64)
    ts, tg, tl = np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros(2, np.int64)
    for i in range(n):
        ok = True
        for j in range(K):
            if a_cls[i, j] >= 2 or b_cls[i, j] >= 2:
                ok = False
                break
            a_zero = a_raw[i, j] == src_emin and a_sig[i, j] >> src_frac == 0  # zero, subnormal
            b_zero = b_raw[i, j] == src_emin and b_sig[i, j] >> src_frac == 0
            # a zero or subnormal operand is flushed to +0 (its sign dropped)
            sp = (0 if a_zero else a_sign[i, j]) ^ (0 if b_zero else b_sign[i, j])
            if a_zero or b_zero:  # the product is a zero of sign sp
                prods[j] = np.int64(sp) << 31
                continue
            w = encode_scalar(sp, a_sig[i, j] * b_sig[i, j], a_lsb[i, j] + b_lsb[i, j], False,
                              spec, _RNE, 23, _IEEE)
            if (w >> 23) & 0xFF == 0xFF:  # overflowed to Inf
                ok = False
                break
            prods[j] = _flush32(w)
        c = np.int64(c_words[i])
        if not ok or (c >> 23) & 0xFF == 0xFF:
            slow[i] = True
            continue
        d = np.int64(0) if (c >> 23) & 0xFF == 0 else c  # a zero or subnormal C is +0
        for g in range(0, K, P):
            s, ok = _add32(prods[g], prods[g + 1], spec, ts, tg, tl)
            s = _flush32(s)
            if ok and P == 4:
                s2, ok2 = _add32(prods[g + 2], prods[g + 3], spec, ts, tg, tl)
                s, ok = _add32(s, _flush32(s2), spec, ts, tg, tl)
                ok = ok and ok2
                s = _flush32(s)
            if ok:
                d, ok = _add32(d, s, spec, ts, tg, tl)
                d = _flush32(d)
            if not ok:
                slow[i] = True
                break
        out[i] = d


def evaluate(p, a_fmt, b_fmt, a_words, b_words, c_words) -> tuple[np.ndarray, np.ndarray]:
    """(f32 D words, rows left to the scalar path) of cases A (n, K), B (n, K),
    C (n,) f32 words under ``p`` (where :func:`fits`)."""
    da, db = decode(a_fmt, a_words), decode(b_fmt, b_words)
    n = len(c_words)
    out = np.zeros(n, np.uint32)
    slow = np.zeros(n, np.bool_)
    c64 = np.ascontiguousarray(c_words, np.uint32).astype(np.int64)
    if n and p.design == "exact":
        _exact_rows(*da[:4], *db[:4], c64, min(p.block, a_words.shape[1]) or 1, _F32.spec, out,
                    slow)
    elif n and p.design == "ftz":
        _ftz_rows(*da, *db, c64, p.block, a_fmt.frac_bits, 1 - a_fmt.bias, _F32.spec, out, slow)
    elif n and p.design == "fma":
        _fma_rows(*da[:4], *db[:4], c64, _F32.spec, out, slow)
    elif n:
        _rows(*da, *db, c64,
              p.design == "grouped", min(p.block, a_words.shape[1]) or 1, p.window, p.window2,
              _F32.spec, out, slow)
    return out, np.flatnonzero(slow)
