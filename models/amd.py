"""The arithmetic of AMD CDNA matrix cores (v_mfma), on raw words in integers.

MMA-Sim 2.1.1 (``mmasim/amd/sim.py`` and ``mmasim/arithmetic``) names, from
its authors' measurements on MI100, MI250X and MI300X, four designs and one
asymmetry; this module computes each on exact integers (no host float):

- ``fma``: f64 and f32 (not xf32) on every generation: a chain of IEEE FMAs,
  C first, one rounding to nearest even each, subnormals kept.
- ``exact``: CDNA1 (MI100) f16 / bf16: blocks of L products (4 f16, 2 bf16)
  and the addend summed exactly, rounded once to nearest even into f32.
- ``ftz``: CDNA2 (MI250X) f16 / bf16 / bf16_1k: each product rounded into
  f32, products added in pairs (P = 2 for bf16, 4 otherwise: a tree of two
  pairs) and added to the accumulator, every f32 result rounded to nearest
  even and flushed to a zero of its sign when subnormal; subnormal inputs and
  the initial C are flushed to +0.
- ``truncated``: CDNA3 (MI300X) f16 / bf16 / xf32: blocks of L products (8;
  4 for xf32) aligned on their largest exponent sum and cut toward zero to
  F = 24 fraction bits; that sum and C meet at F2 + 1 = 32 and F bits
  (floored), the sum is floored to F2 = 31 bits and rounded to nearest even
  into f32. A product of 2**128 or more is an Inf before the sum.
- ``grouped``: CDNA3 fp8/bf8 (the asymmetry): as ``truncated`` with L = 16,
  but the even and the odd K positions are two separate truncated sums, cut
  again to F bits at their common exponent, and a C more than F + 1 binades
  below that exponent is dropped (MMA-Sim drops it whatever it is, an Inf or
  NaN C included: its exponent reads as -1).

A NaN result of ``truncated``/``grouped`` is 0x7FFFFFFF, and their exact
zeros are +0; ``fma``, ``exact`` and ``ftz`` follow the host's IEEE rules
(measured through MMA-Sim here, see :func:`_nan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import amd_fast, f64
from .cases import Cases
from .formats import Class, Overflow, Rounding, decode, encode_scalar, get_format
from .model import Model, ModelError

F32 = get_format("f32")
# The designs, and the MfmaParams fields each reads (the others are not part of it).
DESIGN_KEYS = {"fma": (), "exact": ("block",), "ftz": ("block",),
               "truncated": ("block", "window", "window2"),
               "grouped": ("block", "window", "window2")}
DESIGNS = tuple(DESIGN_KEYS)
KEEP = 62
# The ranges a design's keys take (a profile's [mfma], a fingerprint, the API):
# any integer L (P) >= 1, F >= 0, F2 >= 0 (F2 + 1 < F, C kept deeper than the
# products' sum, joined at the finer unit, included). Past a bound nothing
# changes the words: L >= K is one block of all K products (the blocks run
# range(0, K, L)), and F or F2 >= exact_bound(dp) keeps every bit any product,
# sum or C of the datapath's formats carries (the sums are exact), so each such
# value gives the words of the bound itself; :func:`effective` computes there.
# The ladder's mfma step reads every value or names it open ([lo, None): every
# value from lo on gives the same words).
WINDOW_MIN = WINDOW2_MIN = 0


def exact_bound(dp) -> int:
    """F (and F2) from which every value gives the same words on ``dp``: the
    span from the highest bit a sum reaches (a product 2**(xa + xb + 2), C
    2**(xc + 1), a carry per doubling of K + 1 terms) down to the lowest bit a
    product (sa + sb, both subnormal) or C (sc) holds. With F at least that,
    truncating a product, flooring a group to its block's exponent and C to F
    bits below the larger exponent keep every bit (and C is never far enough
    below to be dropped); with F2 at least that, the join's floor and the floor
    to F2 bits below the normalised sum keep every bit."""
    from .words import exp_range

    (sa, _, xa), (sb, _, xb) = exp_range(dp.a_type), exp_range(dp.b_type)
    sc, _, xc = exp_range(dp.c)
    hi = max(xa + xb + 2, xc + 1) + (dp.k + 1).bit_length() + 1
    return hi - min(sa + sb, sc)


def effective(p: MfmaParams, dp) -> MfmaParams:
    """``p`` with L past K taken as K (one block) and F, F2 past
    :func:`exact_bound` as the bound: the same words (above), computed at a cost
    that does not grow with the value."""
    from dataclasses import replace

    bound = exact_bound(dp)
    block = p.block if p.design == "ftz" or p.block is None else min(p.block, dp.k)
    return replace(p, block=block, window=min(p.window, bound), window2=min(p.window2, bound))


@dataclass(frozen=True)
class MfmaParams:
    """One AMD design with its parameters."""

    design: str
    block: int | None = None  # L (exact, truncated, grouped) or P (ftz)
    window: int = 24  # F
    window2: int = 31  # F2


def _rne(fmt, neg: bool, mag: int, q: int) -> int:
    """The word of (-1)**neg * mag * 2**q (mag > 0) rounded to nearest even."""
    cut = max(mag.bit_length() - KEEP, 0)
    sticky = (mag & ((1 << cut) - 1)) != 0
    return int(encode_scalar(int(neg), mag >> cut, q + cut, sticky, fmt.spec, int(Rounding.RNE),
                             fmt.frac_bits, int(Overflow.IEEE))) & fmt.word_mask


class _Val:
    """A decoded word: class, sign, significand, exponent of the last bit, raw exponent."""

    __slots__ = ("cls", "sign", "sig", "lsb", "raw", "word")

    def __init__(self, cls, sign, sig, lsb, raw, word):
        self.cls, self.sign, self.sig, self.lsb, self.raw, self.word = (
            int(cls), int(sign), int(sig), int(lsb), int(raw), int(word))

    @property
    def signed(self) -> int:
        return -self.sig if self.sign else self.sig


def _vals(fmt, words) -> list:
    words = np.asarray(words)
    d = decode(fmt, words)
    flat = [x.ravel() for x in (d.cls, d.sign, d.sig, d.lsb, d.raw, words)]
    out = [_Val(*t) for t in zip(*flat, strict=True)]
    return out if words.ndim < 2 else [out[i * words.shape[1]:(i + 1) * words.shape[1]]
                                       for i in range(words.shape[0])]


def _val(fmt, word: int) -> _Val:
    return _val_of(fmt.name, int(word))


@lru_cache(maxsize=1 << 16)
def _val_of(name: str, word: int) -> _Val:
    """One decoded word (never changed after: shared by every caller)."""
    fmt = get_format(name)
    return _vals(fmt, np.array([word], fmt.dtype))[0]


# ---------------------------------------------------------------------------
# IEEE operations on words (fma, ftz): the host's NaN rules.


def _quiet(fmt, w: int) -> int:
    return w | (1 << (fmt.frac_bits - 1))


def _default_nan(fmt) -> int:
    """x86-64's default NaN (sign set), what an invalid operation writes."""
    return (1 << (fmt.width - 1)) | (((1 << fmt.exp_bits) - 1) << fmt.frac_bits) \
        | (1 << (fmt.frac_bits - 1))


def _inf(fmt, sign: int) -> int:
    return (sign << (fmt.width - 1)) | (((1 << fmt.exp_bits) - 1) << fmt.frac_bits)


def _sum_words(fmt, terms: list, zero_sign: int) -> int:
    """Round the exact sum of (sign, sig, lsb) terms; an exact zero gets ``zero_sign``."""
    q = min(t[2] for t in terms)
    total = sum((-s if n else s) << (e - q) for n, s, e in terms)
    if total == 0:
        return zero_sign << (fmt.width - 1)
    return _rne(fmt, total < 0, abs(total), q)


def fma_word(fmt, a: _Val, b: _Val, c: _Val) -> int:
    """fma(a, b, c) rounded once to nearest even: a NaN operand comes out quieted
    (a's before b's before c's), an invalid operation gives the default NaN."""
    for v in (a, b, c):
        if v.cls == Class.NAN:
            return _quiet(fmt, v.word)
    sp = a.sign ^ b.sign
    inf_p = Class.INF in (a.cls, b.cls)
    if inf_p and Class.ZERO in (a.cls, b.cls) or inf_p and c.cls == Class.INF and c.sign != sp:
        return _default_nan(fmt)
    if inf_p:
        return _inf(fmt, sp)
    if c.cls == Class.INF:
        return c.word
    zero_p = Class.ZERO in (a.cls, b.cls)
    if zero_p and c.cls == Class.ZERO:
        return (sp & c.sign) << (fmt.width - 1)
    return _sum_words(fmt, [(sp, a.sig * b.sig, a.lsb + b.lsb), (c.sign, c.sig, c.lsb)], 0)


def _add(x: _Val, y: _Val) -> int:
    """x + y in f32, rounded to nearest even (IEEE); of two NaNs, y's quieted."""
    for v in (y, x):
        if v.cls == Class.NAN:
            return _quiet(F32, v.word)
    if x.cls == Class.INF and y.cls == Class.INF and x.sign != y.sign:
        return _default_nan(F32)
    for v in (x, y):
        if v.cls == Class.INF:
            return v.word
    if x.cls == Class.ZERO and y.cls == Class.ZERO:
        return (x.sign & y.sign) << 31
    return _sum_words(F32, [(x.sign, x.sig, x.lsb), (y.sign, y.sig, y.lsb)], 0)


def _flush(w: int) -> _Val:
    """An f32 word flushed to a zero of its sign when subnormal."""
    v = _val(F32, w)
    if v.cls == Class.FINITE and (w >> 23) & 0xFF == 0:
        return _val(F32, w & 0x80000000)
    return v


def _mul_f32(a: _Val, b: _Val, src) -> int:
    """a * b of two 16-bit floats (subnormals already flushed) into f32, RNE."""
    words = [_to_f32(src, v) for v in (a, b)]
    return fma_word(F32, _val(F32, words[1]), _val(F32, words[0]), _val(F32, 1 << 31))


def _to_f32(src, v: _Val) -> int:
    """An f16/bf16 value as an f32 word (exact; a NaN as the host converts it)."""
    if v.cls == Class.NAN:
        return _nan16(src, v)
    if v.cls == Class.INF:
        return _inf(F32, v.sign)
    if v.cls == Class.ZERO:
        return v.sign << 31
    return _rne(F32, v.sign, v.sig, v.lsb)


def _nan16(src, v: _Val) -> int:
    """The f32 NaN the host makes of a 16-bit NaN: sign and payload kept (the
    payload moved to the top of the f32 fraction), quieted."""
    return _quiet(F32, (v.sign << 31) | (0xFF << 23) | ((v.word & ((1 << src.frac_bits) - 1))
                                                        << (23 - src.frac_bits)))


# ---------------------------------------------------------------------------
# The five designs, one case at a time.


def _fma_chain(fmt, a, b, c: _Val) -> int:
    d = c.word
    for x, y in zip(a, b, strict=True):
        d = fma_word(fmt, x, y, _val(fmt, d))
    return d


def _exact(src, a, b, c: _Val, L: int) -> int:
    d = c
    for lo in range(0, len(a), L):
        d = _val(F32, _exact_block(src, a[lo:lo + L], b[lo:lo + L], d))
    return d.word


def _exact_block(src, a, b, c: _Val) -> int:
    """c + sum a*b exactly, one rounding (overflow to Inf); specials as the
    host's double arithmetic: the first NaN (each product's b before its a,
    in K order, then C) quieted, Inf*0 or Infs of both signs the default NaN."""
    for x, y in zip(a, b, strict=True):
        for v in (y, x):
            if v.cls == Class.NAN:
                return _to_f32(src, v)
    if c.cls == Class.NAN:
        return _quiet(F32, c.word)
    infs = set()
    for x, y in zip(a, b, strict=True):
        if Class.INF in (x.cls, y.cls):
            if Class.ZERO in (x.cls, y.cls):
                return _default_nan(F32)
            infs.add(x.sign ^ y.sign)
    if c.cls == Class.INF:
        infs.add(c.sign)
    if infs:
        return _default_nan(F32) if len(infs) > 1 else _inf(F32, infs.pop())
    terms = [(x.sign ^ y.sign, x.sig * y.sig, x.lsb + y.lsb) for x, y in zip(a, b, strict=True)]
    terms.append((c.sign, c.sig, c.lsb))
    return _sum_words(F32, [t for t in terms if t[1]] or [(0, 0, 0)], 0)


def _ftz(src, a, b, c: _Val, P: int) -> int:
    def flush16(v):
        return _val(src, 0) if v.cls in (Class.ZERO, Class.FINITE) and (v.raw == 1 - src.bias
                                                                       and v.sig >> src.frac_bits == 0) else v
    prods = [_flush(_mul_f32(flush16(x), flush16(y), src)) for x, y in zip(a, b, strict=True)]
    d = _flush(c.word) if not (c.cls == Class.ZERO or (c.word >> 23) & 0xFF == 0) else _val(F32, 0)
    if c.cls == Class.NAN or c.cls == Class.INF:
        d = c
    for i in range(0, len(prods), P):
        s = _flush(_add(prods[i], prods[i + 1]))
        if P == 4:
            s = _flush(_add(s, _flush(_add(prods[i + 2], prods[i + 3]))))
        d = _flush(_add(d, s))
    return d.word


NAN32 = 0x7FFFFFFF
ZERO_E = amd_fast.ZERO_E  # MMA-Sim's exponent of a zero product (one value for both paths)


def _floor_shift(x: int, sh: int) -> int:
    """floor(x * 2**sh) for an integer x."""
    return x << sh if sh >= 0 else x >> -sh


def _trunc_shift(x: int, sh: int) -> int:
    """trunc(x * 2**sh) (toward zero)."""
    t = abs(x) << sh if sh >= 0 else abs(x) >> -sh
    return -t if x < 0 else t


def _products(a, b, overflow: bool):
    """Each product as (special word or None, signed sig, lsb, exponent e)."""
    out = []
    for x, y in zip(a, b, strict=True):
        sp = x.sign ^ y.sign
        if Class.NAN in (x.cls, y.cls) or (Class.INF in (x.cls, y.cls) and Class.ZERO in (x.cls, y.cls)):
            out.append(("nan", 0, 0, 0))
            continue
        if Class.INF in (x.cls, y.cls):
            out.append((sp, 0, 0, 0))
            continue
        sig, lsb = x.sig * y.sig, x.lsb + y.lsb
        e = x.raw + y.raw if sig else ZERO_E
        if overflow and sig and lsb + sig.bit_length() - 1 >= 128:
            out.append((sp, 0, 0, 0))
            continue
        out.append((None, -sig if sp else sig, lsb, e))
    return out


def _special(prods, c: _Val | None):
    """NaN / Inf of a block (None if none): NaN products, Infs of both signs."""
    infs = {p[0] for p in prods if p[0] is not None}
    if c is not None and c.cls == Class.NAN:
        infs.add("nan")
    if c is not None and c.cls == Class.INF:
        infs.add(c.sign)
    if "nan" in infs or len(infs) > 1:
        return NAN32
    return _inf(F32, infs.pop()) if infs else None


def _fused(prods, F: int):
    """MMA-Sim's truncated fused sum: (integer S in units 2**(e_max - F), e_max);
    no products (the odd group of a one-product block) sum as zero products do."""
    if not prods:
        return 0, ZERO_E
    es = [p[3] for p in prods]
    e_max = max(es)
    return sum(_trunc_shift(s, lsb - e_max + F) for _, s, lsb, _ in prods), e_max


def _finish(s_dot: int, e_dot: int, unit_dot: int, c: _Val, p: MfmaParams, drop_far: bool) -> int:
    """Join the products' sum (s_dot * 2**(e_dot - unit_dot)) with C and round into f32:
    the sum floored to F2 + 1 bits below the larger exponent, C to F bits, added
    exactly (at the finer of the two units: F2 + 1 < F too, as MMA-Sim's doubles)."""
    F, F2 = p.window, p.window2
    e_c = c.raw
    e_max = max(e_dot, e_c)
    d = _floor_shift(s_dot, e_dot - unit_dot - (e_max - F2 - 1))  # units 2**(e_max - F2 - 1)
    cq = _floor_shift(c.signed, c.lsb - (e_max - F))  # units 2**(e_max - F)
    if drop_far and e_c < e_max - F - 1:
        cq = 0
    w = max(F, F2 + 1)
    t = (d << (w - F2 - 1)) + (cq << (w - F))
    if t == 0:
        return 0
    unit = e_max - w
    e_norm = max(abs(t).bit_length() - 1 + unit, -126)
    t = _floor_shift(t, unit - (e_norm - F2))
    unit = e_norm - F2
    return _rne(F32, t < 0, abs(t), unit)


def _truncated(a, b, c: _Val, p: MfmaParams) -> int:
    d = c
    for lo in range(0, len(a), p.block):
        prods = _products(a[lo:lo + p.block], b[lo:lo + p.block], overflow=True)
        sp = _special(prods, d)
        if sp is not None:
            d = _val(F32, sp)
            continue
        s, e = _fused(prods, p.window)
        d = _val(F32, _finish(s, e, p.window, d, p, drop_far=False))
    return d.word


def _grouped(a, b, c: _Val, p: MfmaParams) -> int:
    d = c
    F = p.window
    for lo in range(0, len(a), p.block):
        prods = _products(a[lo:lo + p.block], b[lo:lo + p.block], overflow=False)
        if any(q[0] is not None for q in prods):
            d = _val(F32, NAN32)  # fp8 has no Inf: a special product is a NaN
            continue
        (se, ee), (so, eo) = _fused(prods[0::2], F), _fused(prods[1::2], F)
        e_dot = max(ee, eo)
        s_dot = _floor_shift(se, ee - e_dot) + _floor_shift(so, eo - e_dot)
        if d.cls in (Class.NAN, Class.INF):
            # C's exponent reads as -1: dropped when far below the products
            if e_dot > ZERO_E and -1 < e_dot - F - 1:
                d = _val(F32, _finish(s_dot, e_dot, F, _val(F32, 0), p, drop_far=False))
            else:
                d = _val(F32, NAN32 if d.cls == Class.NAN else d.word)
            continue
        d = _val(F32, _finish(s_dot, e_dot, F, d, p, drop_far=True))
    return d.word


# ---------------------------------------------------------------------------
# The model.


@dataclass
class MfmaModel(Model):
    """One v_mfma datapath under one design (:class:`MfmaParams`)."""

    params: MfmaParams = MfmaParams("fma")

    def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
        dp, p = self.datapath, self.params
        check_params(p, dp)
        p = effective(p, dp)
        cases.check(dp)
        fa, fb = get_format(dp.a_type), get_format(dp.b_type)
        out_fmt = get_format(dp.d_type)
        if p.design == "fma" and out_fmt.name == "f64":
            return _f64_chain(cases)
        if amd_fast.fits(p, dp):  # compiled, every finite case; the rest one by one below
            out, rows = amd_fast.evaluate(p, fa, fb, cases.a, cases.b, cases.c)
        else:
            out, rows = np.empty(len(cases), out_fmt.dtype), np.arange(len(cases))
        _one_by_one(dp, p, cases, rows, out)
        return out

    def gemm_words(self, a: np.ndarray, b: np.ndarray, c: np.ndarray, tiles,
                   jobs: int = 1) -> np.ndarray:
        """D words (M, N) of the chain of instructions ``tiles`` = (first, end) of
        A (M, K) and B (K, N) words, K a multiple of the instruction's, from C
        words (M, N): the same words as :meth:`evaluate` tile after tile (the
        tile chain), compiled where ``amd_fast.fits`` (models/gemm.py asks),
        an output the compiled sums leave finished here from that instruction
        on, one instruction at a time; rows split over ``jobs`` threads."""
        dp, p = self.datapath, effective(self.params, self.datapath)
        check_params(p, dp)
        words, stop = amd_fast.gemm_words(p, get_format(dp.a_type), get_format(dp.b_type), dp.k,
                                          a, b, c, tiles, jobs)
        for i, j in np.argwhere(stop >= 0):
            for t in range(int(stop[i, j]), tiles[1]):
                ks = slice(t * dp.k, (t + 1) * dp.k)
                one = Cases(a[i, ks][None], np.asarray(b)[ks, j][None], words[i, j:j + 1])
                out = np.empty(1, np.uint32)
                _one_by_one(dp, p, one, np.arange(1), out)
                words[i, j] = out[0]
        return words

    def scalar_words(self, cases: Cases) -> np.ndarray:
        """The words :meth:`evaluate` gives, every case on the scalar path (the
        reference models/amd_fast.py is held to)."""
        dp, p = self.datapath, effective(self.params, self.datapath)
        check_params(p, dp)
        cases.check(dp)
        out = np.empty(len(cases), get_format(dp.d_type).dtype)
        _one_by_one(dp, p, cases, np.arange(len(cases)), out)
        return out

    def describe(self) -> dict:
        return {**super().describe(), "params": vars(self.params)}


def _f64_chain(cases: Cases) -> np.ndarray:
    """f64 words of an f64 v_mfma (design fma) over a batch: C first, then
    one IEEE FMA per K position in order, each rounded to nearest even, by
    the one f64 FMA of the models (:func:`models.f64.fma`, which runs
    NVIDIA's DMMA chain too: exact integers, the same host NaN rules as
    :func:`fma_word`; tests/test_amd_f64.py holds the two to the same words)."""
    a, b = (np.asarray(x).astype(np.uint64) for x in (cases.a, cases.b))
    d = cases.c.astype(np.uint64)
    for k in range(a.shape[1]):
        d = f64.fma(a[:, k], b[:, k], d)
    return d


def _one_by_one(dp, p: MfmaParams, cases: Cases, rows: np.ndarray, out: np.ndarray) -> None:
    """Cases ``rows`` computed one at a time (Python integers) into ``out``."""
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
    out_fmt = get_format(dp.d_type)
    A, B, C = (_vals(f, x[rows]) for f, x in ((fa, cases.a), (fb, cases.b), (fc, cases.c)))
    for i, a, b, c in zip(rows, A, B, C, strict=True):
        if p.design == "fma":
            out[i] = _fma_chain(out_fmt, a, b, c)
        elif p.design == "exact":
            out[i] = _exact(fa, a, b, c, p.block)
        elif p.design == "ftz":
            out[i] = _ftz(fa, a, b, c, p.block)
        elif p.design == "truncated":
            out[i] = _truncated(a, b, c, p)
        else:
            out[i] = _grouped(a, b, c, p)


def check_params(p: MfmaParams, dp=None) -> None:
    """ModelError unless this module computes ``p`` (on ``dp``): a known design,
    an integer L/P of at least 1 and F, F2 of at least 0 where the design reads
    them, P = 2 or 4 dividing K (ftz sums whole pairs), and an f32 D for every
    design but fma (they round into f32). :meth:`MfmaModel.evaluate` checks it;
    a profile's [mfma] is held to :func:`check_ranges` too."""
    if p.design not in DESIGNS:
        raise ModelError(f"design must be one of {', '.join(DESIGNS)}, not {p.design!r}")
    for key in DESIGN_KEYS[p.design]:
        v, least = getattr(p, key), 1 if key == "block" else 0
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ModelError(f"{key}: design {p.design} needs an integer of at least {least}, "
                             f"not {v!r}")
    if p.design == "ftz" and p.block not in (2, 4):
        raise ModelError(f"block: ftz sums pairs (P = 2) or pairs of pairs (P = 4), not {p.block}")
    if dp is None:
        return
    if p.design == "ftz" and dp.k % p.block:
        raise ModelError(f"ftz with P = {p.block} needs K a multiple of {p.block}, and {dp.id} "
                         f"has K = {dp.k}")
    if p.design != "fma" and dp.d_type != "f32":
        raise ModelError(f"design {p.design} rounds into f32; {dp.id} writes {dp.d_type} "
                         "(an f64 v_mfma runs fma)")


def check_ranges(p: MfmaParams) -> None:
    """ModelError unless ``p`` is one a profile's [mfma] takes: every design
    :func:`check_params` computes (no upper bound: past L = K, or F, F2 at
    :func:`exact_bound`, every value gives the same words)."""
    check_params(p)
