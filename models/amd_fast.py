"""Every v_mfma design but f64's over many cases at once: CDNA3's truncated
and grouped, CDNA2's ftz, CDNA1's exact and the f32 FMA chain.

The same integer arithmetic as ``models/amd.py``'s scalar path (its module
doc names the designs and their evidence, MMA-Sim 2.1.1 from MI100, MI250X
and MI300X measurements), compiled with numba on int64, in two forms: over
a batch of cases (:func:`evaluate`, what ``MfmaModel.evaluate`` runs) and
over a whole GEMM chain (:func:`gemm_words`, what ``MfmaModel.gemm_words``
and so ``tcprobe.matmul`` run: A and B decoded once, each output's
instructions one after another). Both
cover the instructions of which every operand, C and running sum is finite
(zeros and subnormals included) and no product reaches 2**128; the
truncated and grouped designs take F and F2 up to WINDOW_MAX; the FMA
chain, the exact sums and ftz's f32 additions round exact sums whose far
terms enter as a floor and a sticky bit (:func:`_exact_sum` names the rare
sums it leaves). A case (or an output from the instruction on) outside that
is flagged, and
``models/amd.py`` computes it one case at a time. Tests hold the two paths
to the same words, specials included (tests/test_amd_fast.py), and the
MMA-Sim tests run through this one.

Why int64 suffices for truncated and grouped (checked by :func:`fits`): a
product of two significands lies below 2**(e + 2) for its exponent sum e, so
each product cut to F bits below the block's largest exponent is below
2**(F + 2), a block of L of them below L * 2**(F + 2); the join lifts that
sum to F2 + 1 bits below the larger exponent and C (24 bits) to F bits, so
with F, F2 <= WINDOW_MAX and L <= BLOCK_MAX every sum stays below
2**(WINDOW_MAX + 4 + log2 BLOCK_MAX) < 2**63.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np
from numba import njit

from .bits import bit_length, shl
from .formats import Overflow, Rounding, decode, decode_scalar, encode_scalar, get_format

WINDOW_MAX = 40  # F and F2 this path takes (module doc)
BLOCK_MAX = 1 << 12  # L this path takes
ZERO_E = -999  # a zero product's exponent (models/amd.py, as MMA-Sim)
DESIGN_CODE = {"fma": 0, "exact": 1, "ftz": 2, "truncated": 3, "grouped": 4}
_F32 = get_format("f32")
_RNE, _IEEE = int(Rounding.RNE), int(Overflow.IEEE)
_KEEP = _F32.frac_bits  # every design rounds into f32: its fraction bits,
_EMIN = 1 - _F32.bias  # its least normal exponent,
_EXP_FIELD = (1 << _F32.exp_bits) - 1  # its exponent field's mask (all ones: Inf, NaN)
_ROUND_BITS = _KEEP + 3  # and the bits encode_scalar needs beside a sticky bit


def fits(p, dp) -> bool:
    """True when this path computes ``p`` (an effective MfmaParams) on ``dp``."""
    if p.design == "fma":
        return dp.a_type == dp.b_type == dp.c == dp.d_type == "f32"
    if p.design == "ftz" and dp.a_type != dp.b_type:
        return False  # the scalar path reads both through A's format (CDNA2's 16-bit types)
    if dp.c != "f32" or dp.d_type != "f32" or min(p.block, dp.k) > BLOCK_MAX:
        return False
    return p.design in ("exact", "ftz") or (p.design in ("truncated", "grouped")
                                            and p.window <= WINDOW_MAX
                                            and p.window2 <= WINDOW_MAX)


# ---------------------------------------------------------------------------
# Integer helpers


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


@njit(cache=True, inline="always")
def _flush32(w):
    """An f32 word flushed to a zero of its sign when subnormal."""
    return w & 0x80000000 if (w >> _KEEP) & _EXP_FIELD == 0 else w


@njit(cache=True)
def _exact_sum(n_terms, signs, sigs, lsbs, spec):
    """(word, ok): the exact sum of the nonzero terms rounded once to nearest
    even into f32, +0 for an exact zero (models/amd.py ``_sum_words``). Terms
    within 62 bits of each other are added exactly; otherwise those below a
    62-bit window under the largest are added apart and enter as their floor
    and a sticky bit. ok False (the scalar path's): the terms below the
    window spread over more than 62 bits themselves, or the sum keeps fewer
    than _ROUND_BITS (26) bits in the window (the rounding bit might lie below it)."""
    q, top = 1 << 20, -(1 << 20)
    for t in range(n_terms):
        if sigs[t] != 0:
            q = min(q, lsbs[t])
            top = max(top, lsbs[t] + bit_length(sigs[t]))
    if top == -(1 << 20):
        return np.int64(0), True
    room = bit_length(n_terms)
    if top - q + room <= 62:
        total = 0
        for t in range(n_terms):
            if sigs[t] != 0:
                v = sigs[t] << (lsbs[t] - q)
                total += -v if signs[t] else v
        if total == 0:
            return np.int64(0), True
        return encode_scalar(1 if total < 0 else 0, -total if total < 0 else total, q, False,
                             spec, _RNE, _KEEP, _IEEE), True
    unit = top + room - 62  # the window's last bit
    big, small_q, small_top = 0, 1 << 20, -(1 << 20)
    for t in range(n_terms):
        if sigs[t] != 0:
            if lsbs[t] >= unit:
                v = sigs[t] << (lsbs[t] - unit)
                big += -v if signs[t] else v
            else:
                small_q = min(small_q, lsbs[t])
                small_top = max(small_top, lsbs[t] + bit_length(sigs[t]))
    if small_top - small_q + room > 62:
        return np.int64(0), False
    small = 0
    for t in range(n_terms):
        if sigs[t] != 0 and lsbs[t] < unit:
            v = sigs[t] << (lsbs[t] - small_q)
            small += -v if signs[t] else v
    sh = unit - small_q  # small * 2**small_q = (low + f) * 2**unit, 0 <= f < 1
    low = _floor_shift(small, -sh)
    frac = small != 0 if sh >= 63 else small != (low << sh)
    total = big + low
    if total >= 0:
        neg, mag, sticky = 0, total, frac
    elif frac:  # -(|total| - f) = -((|total| - 1) + (1 - f))
        neg, mag, sticky = 1, -total - 1, True
    else:
        neg, mag, sticky = 1, -total, False
    if bit_length(mag) < _ROUND_BITS:
        return np.int64(0), False
    return encode_scalar(neg, mag, unit, sticky, spec, _RNE, _KEEP, _IEEE), True


@njit(cache=True)
def _add32(x, y, spec, ts, tg, tl):
    """(x + y rounded to nearest even, ok) for finite f32 words (models/amd.py
    ``_add``): two zeros keep a sign only where both have it."""
    x_cls, x_sign, x_sig, x_lsb, _ = decode_scalar(x, spec)
    y_cls, y_sign, y_sig, y_lsb, _ = decode_scalar(y, spec)
    if x_cls >= 2 or y_cls >= 2:
        return np.int64(0), False
    if x_sig == 0 and y_sig == 0:
        return np.int64(x_sign & y_sign) << 31, True
    ts[0], tg[0], tl[0] = x_sign, x_sig, x_lsb
    ts[1], tg[1], tl[1] = y_sign, y_sig, y_lsb
    return _exact_sum(2, ts, tg, tl, spec)


# ---------------------------------------------------------------------------
# One instruction: its products (sign, significand, last bit, exponent sum)
# in scratch arrays, then the design's sum from the accumulator word d.


@njit(cache=True, inline="always")
def _product(ac, asg, ag, al, ar, bc, bsg, bg, bl, br, ftz, src_frac, src_emin, t,
             ps, pg, pl, pe):
    """Product t of the instruction into the scratch arrays; False for a NaN
    or Inf operand. Under ftz a zero or subnormal operand is +0 (its sign
    dropped: models/amd.py ``_ftz``)."""
    if ac >= 2 or bc >= 2:
        return False
    if ftz:
        a_zero = ar == src_emin and ag >> src_frac == 0
        b_zero = br == src_emin and bg >> src_frac == 0
        ps[t] = (0 if a_zero else asg) ^ (0 if b_zero else bsg)
        pg[t] = 0 if a_zero or b_zero else ag * bg
    else:
        ps[t] = 1 if asg != bsg else 0
        pg[t] = ag * bg
    pl[t] = al + bl
    pe[t] = ar + br if pg[t] != 0 else ZERO_E
    return True


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
        return np.int64(0)
    unit = e_max - w
    e_norm = bit_length(-t if t < 0 else t) - 1 + unit
    if e_norm < _EMIN:
        e_norm = _EMIN
    t = _floor_shift(t, unit - (e_norm - F2))
    neg = 1 if t < 0 else 0
    return encode_scalar(neg, -t if t < 0 else t, e_norm - F2, False, spec, _RNE, _KEEP, _IEEE)


@njit(cache=True, inline="always")
def _group_sum(ps, pg, pl, pe, lo, hi, step, F):
    """(sum of the products lo, lo + step, ... below hi cut to F bits below their
    largest exponent, that exponent): models/amd.py ``_fused``."""
    e_max = ZERO_E
    for j in range(lo, hi, step):
        if pg[j] != 0 and pe[j] > e_max:
            e_max = pe[j]
    s = 0
    for j in range(lo, hi, step):
        if pg[j] != 0:
            s += _trunc_shift(-pg[j] if ps[j] else pg[j], pl[j] - e_max + F)
    return s, e_max


@njit(cache=True)
def _dot_truncated(n, ps, pg, pl, pe, d, grouped, L, F, F2, spec):
    for lo in range(0, n, L):
        hi = min(lo + L, n)
        c_cls, c_sign, c_sig, c_lsb, c_raw = decode_scalar(d, spec)
        if c_cls >= 2:  # an Inf or NaN C or running sum
            return d, False
        if grouped:
            se, ee = _group_sum(ps, pg, pl, pe, lo, hi, 2, F)
            so, eo = _group_sum(ps, pg, pl, pe, lo + 1, hi, 2, F)
            e_dot = ee if ee > eo else eo
            s_dot = _floor_shift(se, ee - e_dot) + _floor_shift(so, eo - e_dot)
        else:
            for j in range(lo, hi):
                if pg[j] != 0 and pl[j] + bit_length(pg[j]) - 1 >= 128:
                    return d, False  # a product of 2**128 or more is an Inf
            s_dot, e_dot = _group_sum(ps, pg, pl, pe, lo, hi, 1, F)
        d = _finish(s_dot, e_dot, F, c_sign, c_sig, c_lsb, c_raw, F, F2, grouped, spec)
    return d, True


@njit(cache=True)
def _dot_fma(n, ps, pg, pl, d, spec, ts, tg, tl):
    """D = fma(a_k, b_k, D), each rounded to nearest even into f32
    (models/amd.py ``fma_word`` on finite words)."""
    for j in range(n):
        d_cls, d_sign, d_sig, d_lsb, _ = decode_scalar(d, spec)
        if d_cls >= 2:
            return d, False
        if pg[j] == 0:  # a zero product: D stays, a zero D takes sign sp & its own
            if d_sig == 0:
                d = np.int64(ps[j] & d_sign) << 31
            continue
        if d_sig == 0:
            d = encode_scalar(ps[j], pg[j], pl[j], False, spec, _RNE, _KEEP, _IEEE)
            continue
        ts[0], tg[0], tl[0] = ps[j], pg[j], pl[j]
        ts[1], tg[1], tl[1] = d_sign, d_sig, d_lsb
        d, ok = _exact_sum(2, ts, tg, tl, spec)
        if not ok:
            return d, False
    return d, True


@njit(cache=True)
def _dot_exact(n, ps, pg, pl, d, L, spec, ts, tg, tl):
    """CDNA1: each block of L products and the running sum added exactly, one
    rounding (models/amd.py ``_exact``)."""
    for lo in range(0, n, L):
        hi = min(lo + L, n)
        d_cls, d_sign, d_sig, d_lsb, _ = decode_scalar(d, spec)
        if d_cls >= 2:
            return d, False
        for j in range(lo, hi):
            ts[j - lo], tg[j - lo], tl[j - lo] = ps[j], pg[j], pl[j]
        m = hi - lo
        ts[m], tg[m], tl[m] = d_sign, d_sig, d_lsb
        d, ok = _exact_sum(m + 1, ts, tg, tl, spec)
        if not ok:
            return d, False
    return d, True


@njit(cache=True)
def _dot_ftz(n, ps, pg, pl, d, P, spec, prods, ts, tg, tl):
    """CDNA2: each product rounded into f32, pairs (and pairs of pairs for
    P = 4) added to the accumulator, every f32 result and C flushed when
    subnormal (models/amd.py ``_ftz``)."""
    for j in range(n):
        if pg[j] == 0:
            prods[j] = np.int64(ps[j]) << 31
            continue
        w = encode_scalar(ps[j], pg[j], pl[j], False, spec, _RNE, _KEEP, _IEEE)
        if (w >> _KEEP) & _EXP_FIELD == _EXP_FIELD:  # overflowed to Inf
            return d, False
        prods[j] = _flush32(w)
    if (d >> _KEEP) & _EXP_FIELD == _EXP_FIELD:
        return d, False
    d = np.int64(0) if (d >> _KEEP) & _EXP_FIELD == 0 else d  # a zero or subnormal C is +0
    for g in range(0, n, P):
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
            return d, False
    return d, True


@njit(cache=True)
def _dot(code, n, ps, pg, pl, pe, d, L, F, F2, spec, prods, ts, tg, tl):
    """(word, ok) of one instruction of design ``code`` (DESIGN_CODE) on its
    products from the accumulator word ``d``; ok False: the scalar path's."""
    if code == 0:
        return _dot_fma(n, ps, pg, pl, d, spec, ts, tg, tl)
    if code == 1:
        return _dot_exact(n, ps, pg, pl, d, L, spec, ts, tg, tl)
    if code == 2:
        return _dot_ftz(n, ps, pg, pl, d, L, spec, prods, ts, tg, tl)
    return _dot_truncated(n, ps, pg, pl, pe, d, code == 4, L, F, F2, spec)


# ---------------------------------------------------------------------------
# The two batch forms


@njit(cache=True)
def _cases_kernel(a_cls, a_sign, a_sig, a_lsb, a_raw, b_cls, b_sign, b_sig, b_lsb, b_raw,
                  c_words, code, L, F, F2, ftz, src_frac, src_emin, spec, out, slow):
    n, K = a_sig.shape
    ps, pg, pl, pe, prods = (np.zeros(K, np.int64), np.zeros(K, np.int64),
                             np.zeros(K, np.int64), np.zeros(K, np.int64), np.zeros(K, np.int64))
    ts, tg, tl = np.zeros(L + 1, np.int64), np.zeros(L + 1, np.int64), np.zeros(L + 1, np.int64)
    for i in range(n):
        ok = True
        for t in range(K):
            if not _product(a_cls[i, t], a_sign[i, t], a_sig[i, t], a_lsb[i, t], a_raw[i, t],
                            b_cls[i, t], b_sign[i, t], b_sig[i, t], b_lsb[i, t], b_raw[i, t],
                            ftz, src_frac, src_emin, t, ps, pg, pl, pe):
                ok = False
                break
        d = np.int64(c_words[i])
        if ok:
            d, ok = _dot(code, K, ps, pg, pl, pe, d, L, F, F2, spec, prods, ts, tg, tl)
        out[i] = d
        slow[i] = not ok


@njit(cache=True, nogil=True)
def _gemm_kernel(a_cls, a_sign, a_sig, a_lsb, a_raw, b_cls, b_sign, b_sig, b_lsb, b_raw,
                 c, lo, hi, k, code, L, F, F2, ftz, src_frac, src_emin, spec, out, stop):
    """Outputs (M, N) of the chain of instructions lo..hi-1 (each K = k) from C:
    A (M, Kp) and B transposed (N, Kp) decoded. ``stop[i, j]``: the first
    instruction the scalar path must run (out holds its C), or -1."""
    M, N = c.shape
    ps, pg, pl, pe, prods = (np.zeros(k, np.int64), np.zeros(k, np.int64),
                             np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64))
    ts, tg, tl = np.zeros(L + 1, np.int64), np.zeros(L + 1, np.int64), np.zeros(L + 1, np.int64)
    for i in range(M):
        for j in range(N):
            d = np.int64(c[i, j])
            stop[i, j] = -1
            for t in range(lo, hi):
                ok = True
                for q in range(k):
                    x = t * k + q
                    if not _product(a_cls[i, x], a_sign[i, x], a_sig[i, x], a_lsb[i, x],
                                    a_raw[i, x], b_cls[j, x], b_sign[j, x], b_sig[j, x],
                                    b_lsb[j, x], b_raw[j, x], ftz, src_frac, src_emin, q,
                                    ps, pg, pl, pe):
                        ok = False
                        break
                nd = d
                if ok:
                    nd, ok = _dot(code, k, ps, pg, pl, pe, d, L, F, F2, spec, prods, ts, tg,
                                  tl)
                if not ok:
                    stop[i, j] = t
                    break
                d = nd
            out[i, j] = d


@lru_cache(maxsize=16)
def _table(name: str):
    """Every word of a format of at most 16 bits decoded (indexed by the word)."""
    fmt = get_format(name)
    return decode(fmt, np.arange(1 << fmt.width, dtype=np.int64))


def _decoded(fmt, words: np.ndarray):
    """``words`` decoded: from the format's table where it has at most 16 bits."""
    words = np.asarray(words)
    if fmt.width <= 16:
        idx = words.astype(np.int64) & ((1 << fmt.width) - 1)
        return tuple(np.ascontiguousarray(x[idx]) for x in _table(fmt.name))
    return tuple(decode(fmt, words))


def _args(p, a_fmt, k):
    """The design's scalar arguments after the words: code, L, F, F2, ftz,
    A's fraction bits and least exponent (ftz's flush), the f32 spec."""
    L = max(1, min(p.block or 1, k))
    return (DESIGN_CODE[p.design], L, p.window, p.window2, p.design == "ftz", a_fmt.frac_bits,
            1 - a_fmt.bias, _F32.spec)


def evaluate(p, a_fmt, b_fmt, a_words, b_words, c_words) -> tuple[np.ndarray, np.ndarray]:
    """(f32 D words, rows left to the scalar path) of cases A (n, K), B (n, K),
    C (n,) f32 words under ``p`` (where :func:`fits`)."""
    n = len(c_words)
    out = np.zeros(n, np.uint32)
    slow = np.zeros(n, np.bool_)
    if n:
        _cases_kernel(*_decoded(a_fmt, a_words), *_decoded(b_fmt, b_words),
                      np.ascontiguousarray(c_words, np.uint32).astype(np.int64),
                      *_args(p, a_fmt, a_words.shape[1]), out, slow)
    return out, np.flatnonzero(slow)


def gemm_words(p, a_fmt, b_fmt, k: int, a: np.ndarray, b: np.ndarray, c: np.ndarray,
               tiles, jobs: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(D words (M, N), stop (M, N)) of the chain of instructions ``tiles`` =
    (first, end), each of K = ``k``, of A (M, K) and B (K, N) words from C
    words (M, N) under ``p`` (an effective MfmaParams where :func:`fits`),
    rows split over ``jobs`` threads (the kernel releases the GIL). Where
    ``stop[i, j]`` is t >= 0 the compiled sums left instruction t to the
    scalar path, and D holds the accumulator it starts from."""
    lo, hi = tiles
    c = np.ascontiguousarray(c, np.uint32)
    m, n = c.shape
    out = np.empty((m, n), np.int64)
    stop = np.full((m, n), -1, np.int64)
    if not (m and n):
        return out.astype(np.uint32), stop
    da = _decoded(a_fmt, np.ascontiguousarray(a))
    db = _decoded(b_fmt, np.ascontiguousarray(np.asarray(b).T))
    c64 = c.astype(np.int64)
    args = _args(p, a_fmt, k)

    def rows(r0: int, r1: int) -> None:
        _gemm_kernel(*(x[r0:r1] for x in da), *db, c64[r0:r1], lo, hi, k, *args,
                     out[r0:r1], stop[r0:r1])

    parts = max(1, min(int(jobs), m))
    if parts == 1:
        rows(0, m)
    else:
        cuts = np.linspace(0, m, parts + 1).astype(int)
        with ThreadPoolExecutor(parts) as pool:
            list(pool.map(lambda r: rows(*r), zip(cuts[:-1], cuts[1:], strict=True)))
    return out.astype(np.uint32), stop
