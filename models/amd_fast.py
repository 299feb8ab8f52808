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
terms enter as a floor and a sticky bit (:func:`exact_sum` names the rare
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

from .bits import bit_length
from .f32_sums import (
    EMIN,
    EXP_FIELD,
    KEEP,
    add32,
    decode32,
    encode32,
    exact_sum,
    floor_shift,
    flush32,
    sum2,
    trunc_shift,
)
from .formats import decode, get_format

WINDOW_MAX = 40  # F and F2 this path takes (module doc)
BLOCK_MAX = 1 << 12  # L this path takes
ZERO_E = -999  # a zero product's exponent (models/amd.py, as MMA-Sim)
DESIGN_CODE = {"fma": 0, "exact": 1, "ftz": 2, "truncated": 3, "grouped": 4}


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
# One instruction: its products (sign, significand, last bit, exponent sum)
# in scratch arrays, then the design's sum from the accumulator word d.


@njit(cache=True, inline="always")
def _product(ac, asg, ag, al, ar, bc, bsg, bg, bl, br, ftz, src_frac, src_emin, t,
             ps, pg, pl):
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
    return True


@njit(cache=True)
def _finish(s_dot, e_dot, unit_dot, c_sign, c_sig, c_lsb, c_raw, F, F2, drop_far):
    """The join of the products' sum (s_dot * 2**(e_dot - unit_dot)) with C and
    the rounding into f32 (models/amd.py ``_finish``)."""
    e_max = e_dot if e_dot > c_raw else c_raw
    d = floor_shift(s_dot, e_dot - unit_dot - (e_max - F2 - 1))
    cq = floor_shift(-c_sig if c_sign else c_sig, c_lsb - (e_max - F))
    if drop_far and c_raw < e_max - F - 1:
        cq = 0
    w = F if F > F2 + 1 else F2 + 1
    t = (d << (w - F2 - 1)) + (cq << (w - F))
    if t == 0:
        return np.int64(0)
    unit = e_max - w
    e_norm = bit_length(-t if t < 0 else t) - 1 + unit
    if e_norm < EMIN:
        e_norm = EMIN
    t = floor_shift(t, unit - (e_norm - F2))
    neg = 1 if t < 0 else 0
    return encode32(neg, -t if t < 0 else t, e_norm - F2, False)


@njit(cache=True, inline="always")
def _cut_sum(pv, pl, lo, hi, step, F, lift):
    """(sum of the signed products pv[lo:hi:step] (last bits pl) cut toward zero
    to F bits below their largest exponent, that exponent; ZERO_E where every
    product is zero; models/amd.py ``_fused``), for products whose exponent
    sum is their last bit plus ``lift`` (both formats' fraction bits)."""
    top = -(1 << 40)
    for j in range(lo, hi, step):
        if pv[j] != 0 and pl[j] > top:
            top = pl[j]
    if top == -(1 << 40):
        return np.int64(0), ZERO_E
    e_max = top + lift
    s = 0
    for j in range(lo, hi, step):
        if pv[j] != 0:
            s += trunc_shift(pv[j], pl[j] - e_max + F)
    return s, e_max


@njit(cache=True, inline="always")
def _truncated(pv, pl, n, d, grouped, L, F, F2, lift, test_big):
    """(word, ok) of one instruction of the truncated or grouped design on its
    signed products pv (last bits pl) from the accumulator word ``d``: each
    block of L cut and joined with the running sum (:func:`_finish`).
    ``test_big``: look for a product of 2**128 or more (an Inf: the scalar
    path's) among the truncated design's."""
    if test_big and not grouped:
        for q in range(n):
            v = pv[q]
            if v != 0 and pl[q] + bit_length(-v if v < 0 else v) - 1 >= 128:
                return d, False
    for lo in range(0, n, L):
        hi = min(lo + L, n)
        c_cls, c_sign, c_sig, c_lsb, c_raw = decode32(d)
        if c_cls >= 2:  # an Inf or NaN C or running sum
            return d, False
        if grouped:
            se, ee = _cut_sum(pv, pl, lo, hi, 2, F, lift)
            so, eo = _cut_sum(pv, pl, lo + 1, hi, 2, F, lift)
            e_dot = ee if ee > eo else eo
            s_dot = floor_shift(se, ee - e_dot) + floor_shift(so, eo - e_dot)
        else:
            s_dot, e_dot = _cut_sum(pv, pl, lo, hi, 1, F, lift)
        d = _finish(s_dot, e_dot, F, c_sign, c_sig, c_lsb, c_raw, F, F2, grouped)
    return d, True


@njit(cache=True)
def _dot_fma(n, ps, pg, pl, d):
    """D = fma(a_k, b_k, D), each rounded to nearest even into f32
    (models/amd.py ``fma_word`` on finite words)."""
    for j in range(n):
        d_cls, d_sign, d_sig, d_lsb, _ = decode32(d)
        if d_cls >= 2:
            return d, False
        if pg[j] == 0:  # a zero product: D stays, a zero D takes sign sp & its own
            if d_sig == 0:
                d = np.int64(ps[j] & d_sign) << 31
            continue
        if d_sig == 0:
            d = encode32(ps[j], pg[j], pl[j], False)
            continue
        d, ok = sum2(ps[j], pg[j], pl[j], d_sign, d_sig, d_lsb)
        if not ok:
            return d, False
    return d, True


@njit(cache=True)
def _dot_exact(n, ps, pg, pl, d, L, ts, tg, tl):
    """CDNA1: each block of L products and the running sum added exactly, one
    rounding (models/amd.py ``_exact``)."""
    for lo in range(0, n, L):
        hi = min(lo + L, n)
        d_cls, d_sign, d_sig, d_lsb, _ = decode32(d)
        if d_cls >= 2:
            return d, False
        for j in range(lo, hi):
            ts[j - lo], tg[j - lo], tl[j - lo] = ps[j], pg[j], pl[j]
        m = hi - lo
        ts[m], tg[m], tl[m] = d_sign, d_sig, d_lsb
        d, ok = exact_sum(m + 1, ts, tg, tl)
        if not ok:
            return d, False
    return d, True


@njit(cache=True)
def _dot_ftz(n, ps, pg, pl, d, P, prods):
    """CDNA2: each product rounded into f32, pairs (and pairs of pairs for
    P = 4) added to the accumulator, every f32 result and C flushed when
    subnormal (models/amd.py ``_ftz``)."""
    for j in range(n):
        if pg[j] == 0:
            prods[j] = np.int64(ps[j]) << 31
            continue
        w = encode32(ps[j], pg[j], pl[j], False)
        if (w >> KEEP) & EXP_FIELD == EXP_FIELD:  # overflowed to Inf
            return d, False
        prods[j] = flush32(w)
    if (d >> KEEP) & EXP_FIELD == EXP_FIELD:
        return d, False
    d = np.int64(0) if (d >> KEEP) & EXP_FIELD == 0 else d  # a zero or subnormal C is +0
    for g in range(0, n, P):
        s, ok = add32(prods[g], prods[g + 1])
        s = flush32(s)
        if ok and P == 4:
            s2, ok2 = add32(prods[g + 2], prods[g + 3])
            s, ok = add32(s, flush32(s2))
            ok = ok and ok2
            s = flush32(s)
        if ok:
            d, ok = add32(d, s)
            d = flush32(d)
        if not ok:
            return d, False
    return d, True


@njit(cache=True)
def _dot(code, n, ps, pg, pl, d, L, F, F2, lift, prods, ts, tg, tl):
    """(word, ok) of one instruction of design ``code`` (DESIGN_CODE) on its
    products from the accumulator word ``d``; ok False: the scalar path's."""
    if code == 0:
        return _dot_fma(n, ps, pg, pl, d)
    if code == 1:
        return _dot_exact(n, ps, pg, pl, d, L, ts, tg, tl)
    if code == 2:
        return _dot_ftz(n, ps, pg, pl, d, L, prods)
    for j in range(n):  # signed products in the scratch array
        prods[j] = -pg[j] if ps[j] else pg[j]
    return _truncated(prods, pl, n, d, code == 4, L, F, F2, lift, True)


# ---------------------------------------------------------------------------
# The two batch forms


@njit(cache=True)
def _cases_kernel(a_cls, a_sign, a_sig, a_lsb, a_raw, b_cls, b_sign, b_sig, b_lsb, b_raw,
                  c_words, code, L, F, F2, lift, ftz, src_frac, src_emin, out, slow):
    n, K = a_sig.shape
    ps, pg, pl, prods = (np.zeros(K, np.int64), np.zeros(K, np.int64), np.zeros(K, np.int64),
                         np.zeros(K, np.int64))
    ts, tg, tl = np.zeros(L + 1, np.int64), np.zeros(L + 1, np.int64), np.zeros(L + 1, np.int64)
    for i in range(n):
        ok = True
        for t in range(K):
            if not _product(a_cls[i, t], a_sign[i, t], a_sig[i, t], a_lsb[i, t], a_raw[i, t],
                            b_cls[i, t], b_sign[i, t], b_sig[i, t], b_lsb[i, t], b_raw[i, t],
                            ftz, src_frac, src_emin, t, ps, pg, pl):
                ok = False
                break
        d = np.int64(c_words[i])
        if ok:
            d, ok = _dot(code, K, ps, pg, pl, d, L, F, F2, lift, prods, ts, tg, tl)
        out[i] = d
        slow[i] = not ok


@njit(cache=True, nogil=True)
def _gemm_kernel(a_cls, a_sign, a_sig, a_lsb, a_raw, b_cls, b_sign, b_sig, b_lsb, b_raw,
                 c, lo, hi, k, code, L, F, F2, lift, ftz, src_frac, src_emin, out, stop):
    """Outputs (M, N) of the chain of instructions lo..hi-1 (each K = k) from C:
    A (M, Kp) and B transposed (N, Kp) decoded. ``stop[i, j]``: the first
    instruction the scalar path must run (out holds its C), or -1."""
    M, N = c.shape
    ps, pg, pl, prods = (np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64),
                         np.zeros(k, np.int64))
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
                                    ps, pg, pl):
                        ok = False
                        break
                nd = d
                if ok:
                    nd, ok = _dot(code, k, ps, pg, pl, d, L, F, F2, lift, prods, ts, tg, tl)
                if not ok:
                    stop[i, j] = t
                    break
                d = nd
            out[i, j] = d


@njit(cache=True, nogil=True)
def _gemm_truncated(a_val, a_lsb, a_bad, a_top, b_val, b_lsb, b_bad, b_top, c, lo, hi, k,
                    grouped, L, F, F2, lift, out, stop):
    """:func:`_gemm_kernel` for the truncated and grouped designs, on operands
    read once into signed significands and last bits (``*_bad[r, t]``: a NaN
    or Inf among row r's operands of instruction t; ``*_top[r, t]``: their
    largest raw exponent, which bounds a product's: only where the two tops
    reach 2**127 are products tested against 2**128 one by one)."""
    M, N = c.shape
    pv, pl = np.zeros(k, np.int64), np.zeros(k, np.int64)
    for i in range(M):
        for j in range(N):
            d = np.int64(c[i, j])
            stop[i, j] = -1
            for t in range(lo, hi):
                if a_bad[i, t] or b_bad[j, t]:
                    stop[i, j] = t
                    break
                base = t * k
                for q in range(k):
                    pv[q] = a_val[i, base + q] * b_val[j, base + q]
                    pl[q] = a_lsb[i, base + q] + b_lsb[j, base + q]
                nd, ok = _truncated(pv, pl, k, d, grouped, L, F, F2, lift,
                                    a_top[i, t] + b_top[j, t] + 1 >= 128)
                if not ok:
                    stop[i, j] = t
                    break
                d = nd
            out[i, j] = d


def _truncated_operands(dec, T: int, k: int):
    """A decoded operand (rows, T * k) as :func:`_gemm_truncated` reads it:
    signed significands, last bits, NaN-or-Inf flags and largest raw exponents
    per row and instruction."""
    cls, sign, sig, lsb, raw = dec
    rows = cls.shape[0]
    val = np.where(sign != 0, -sig, sig)
    per = (rows, T, k)
    return (val, lsb, (cls >= 2).reshape(per).any(axis=2),
            raw.reshape(per).max(axis=2) if T * k else np.zeros((rows, T), np.int64))


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


def _args(p, a_fmt, b_fmt, k):
    """The design's scalar arguments after the words: code, L, F, F2, the lift
    from a product's last bit to its exponent sum (both fraction bits), ftz,
    A's fraction bits and least exponent (ftz's flush)."""
    L = max(1, min(p.block or 1, k))
    return (DESIGN_CODE[p.design], L, p.window, p.window2, a_fmt.frac_bits + b_fmt.frac_bits,
            p.design == "ftz", a_fmt.frac_bits, 1 - a_fmt.bias)


def evaluate(p, a_fmt, b_fmt, a_words, b_words, c_words) -> tuple[np.ndarray, np.ndarray]:
    """(f32 D words, rows left to the scalar path) of cases A (n, K), B (n, K),
    C (n,) f32 words under ``p`` (where :func:`fits`)."""
    n = len(c_words)
    out = np.zeros(n, np.uint32)
    slow = np.zeros(n, np.bool_)
    if n:
        _cases_kernel(*_decoded(a_fmt, a_words), *_decoded(b_fmt, b_words),
                      np.ascontiguousarray(c_words, np.uint32).astype(np.int64),
                      *_args(p, a_fmt, b_fmt, a_words.shape[1]), out, slow)
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
    args = _args(p, a_fmt, b_fmt, k)
    if p.design in ("truncated", "grouped"):
        T = da[0].shape[1] // k
        da, db = _truncated_operands(da, T, k), _truncated_operands(db, T, k)
        code, L, F, F2, lift = args[:5]

        def rows(r0: int, r1: int) -> None:
            _gemm_truncated(*(x[r0:r1] for x in da), *db, c64[r0:r1], lo, hi, k,
                            p.design == "grouped", L, F, F2, lift, out[r0:r1], stop[r0:r1])
    else:
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
