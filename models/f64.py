"""The f64 DMMA datapath (``mma.sync ... .f64.f64.f64.f64``): fp64 FMAs on raw words.

MMA-Sim 2.1.1 models every f64 ``mma`` as a chain of IEEE fp64 FMAs
(``mmasim/arithmetic/fma.py``, ``MMA_FMA.dpa``): ``d = C``, then
``d = fma(a[k], b[k], d)`` for k = 0, 1, ..., K-1, each FMA exact and
rounded once to nearest even, with subnormals. This module computes the same
in integer arithmetic: the exact value of ``a*b + d`` as a Python integer
times a power of two, cut to 62 bits and a sticky bit, rounded by the one
encoder of :mod:`.formats`. No host float is used.

:class:`ChainParams` names what a device may do differently: the order in
which K is consumed, where C enters the chain, a single fused rounding
instead of a chain (what the ladder's chain step tells apart), and the NaN
rule. ``nan='propagate'`` is the host FMA that MMA-Sim calls (x86-64,
measured through MMA-Sim here): a NaN operand comes out quieted (bit 51 set,
sign and payload kept), A's before B's before the addend's; an invalid
operation (Inf*0, Inf-Inf) without a NaN operand gives 0xFFF8000000000000.
What DMMA writes on silicon is unmeasured (the ladder's chain step on a GPU
settles it); an int ``nan`` is a canonical word for every NaN result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

from . import kernel_cache
from .engine import ParamRecord
from .formats import Class, Rounding, decode, encode, get_format
from .model import Model, ModelError

F64 = get_format("f64")
SIGN_BIT = np.uint64(1 << 63)
QUIET_BIT = np.uint64(1 << 51)  # the quiet bit of an f64 NaN
INF_WORD = np.uint64(0x7FF0000000000000)
ONE_WORD = np.uint64(0x3FF0000000000000)
NEG_ZERO = np.uint64(1 << 63)
# The NaN an invalid operation gives under nan='propagate' (x86-64's default
# NaN, what MMA-Sim's host fma writes for Inf*0 and Inf-Inf).
INVALID_NAN = 0xFFF8000000000000
STRUCTURES = ("chain", "fused")
KEEP_BITS = 62  # an exact sum is cut to this many bits and a sticky bit before rounding


@dataclass(frozen=True)
class ChainParams(ParamRecord):
    """How an f64 datapath combines its K products and C."""

    structure: str = "chain"  # chain: one rounded FMA a product | fused: one rounding of all
    k_order: tuple[int, ...] | None = None  # order of the K positions (None: 0 .. K-1)
    c_at: int = 0  # C enters before the c_at-th FMA of the order (0: the chain starts at C; K: last)
    nan: str | int = "propagate"  # propagate (see the module doc) | a NaN word for every NaN

    def check(self, k: int) -> None:
        if self.structure not in STRUCTURES:
            raise ModelError(f"structure must be one of {', '.join(STRUCTURES)}, not {self.structure!r}")
        if self.k_order is not None and sorted(self.k_order) != list(range(k)):
            raise ModelError(f"k_order must be a permutation of 0 .. {k - 1}, not {self.k_order}")
        if not 0 <= self.c_at <= k:
            raise ModelError(f"c_at must be between 0 and {k}, not {self.c_at}")
        if not (self.nan == "propagate" or isinstance(self.nan, int)):
            raise ModelError(f"nan must be 'propagate' or a word, not {self.nan!r}")


# ---------------------------------------------------------------------------
# Exact sums as (sign, integer, exponent), rounded once.


def _terms(d) -> tuple[np.ndarray, np.ndarray]:
    """Signed significands (Python ints) and exponents of decoded finite words."""
    sig = d.sig.astype(object)
    return np.where(d.sign == 1, -sig, sig), d.lsb.astype(np.int64)


def _round(total: np.ndarray, q: np.ndarray) -> np.ndarray:
    """f64 words of the nonzero exact values total * 2**q (Python ints),
    rounded to nearest even (subnormals kept, overflow to Inf)."""
    n = len(total)
    if n == 0:
        return np.zeros(0, np.uint64)
    sign = (total < 0).astype(np.int64)
    mag = np.abs(total)
    length = np.frompyfunc(int.bit_length, 1, 1)(mag).astype(np.int64)
    cut = np.maximum(length - KEEP_BITS, 0)
    sticky = (mag & ((1 << cut.astype(object)) - 1)) != 0
    kept = (mag >> cut.astype(object)).astype(np.int64)
    return encode(F64, sign, kept, q + cut, Rounding.RNE, sticky=sticky.astype(bool))


def _exact_sum(sigs: list, exps: list) -> tuple[np.ndarray, np.ndarray]:
    """The exact sum of terms sig * 2**exp (columns of Python ints / int64):
    (integer, exponent) per row."""
    q = np.minimum.reduce(exps)
    total = sum(s * (1 << (e - q).astype(object)) for s, e in zip(sigs, exps, strict=True))
    return total, q


# ---------------------------------------------------------------------------
# One FMA over a batch.


def _nan_words(nan, words: list, is_nan: list, invalid: np.ndarray) -> np.ndarray:
    """The NaN result of each row: the first NaN operand of ``words`` quieted
    (propagate) or the canonical word; an invalid operation without a NaN
    operand gives INVALID_NAN (propagate)."""
    n = len(invalid)
    if nan != "propagate":
        return np.full(n, np.uint64(nan))
    out = np.full(n, np.uint64(INVALID_NAN))
    for w, m in reversed(list(zip(words, is_nan, strict=True))):  # the first NaN wins
        out = np.where(m, w | QUIET_BIT, out)
    return out


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, nan="propagate") -> np.ndarray:
    """f64 words of fma(a, b, c) = a*b + c rounded once to nearest even, for
    uint64 word arrays of one shape (IEEE 754: an exact zero sum of nonzero
    terms is +0; zeros of one sign keep it)."""
    a, b, c = (np.asarray(x).astype(np.uint64) for x in (a, b, c))
    da, db, dc = decode(F64, a), decode(F64, b), decode(F64, c)
    nan_a, nan_b, nan_c = (d.cls == Class.NAN for d in (da, db, dc))
    inf_a, inf_b, inf_c = (d.cls == Class.INF for d in (da, db, dc))
    zero_a, zero_b = da.cls == Class.ZERO, db.cls == Class.ZERO
    sign_p = (da.sign ^ db.sign).astype(np.int64)
    inf_p = inf_a | inf_b
    invalid = (inf_a & zero_b) | (zero_a & inf_b) | (inf_p & inf_c & (sign_p != dc.sign))
    any_nan = nan_a | nan_b | nan_c | invalid
    out = np.where(inf_p, INF_WORD | (sign_p.astype(np.uint64) << np.uint64(63)), c)  # Inf wins
    out = np.where(any_nan, _nan_words(nan, [a, b, c], [nan_a, nan_b, nan_c], invalid), out)
    fin = ~(any_nan | inf_p | inf_c)
    if fin.any():
        out[fin] = _finite_sum(sign_p[fin], [da, db, dc], fin)
    return out


def _finite_sum(sign_p: np.ndarray, decoded: list, rows: np.ndarray) -> np.ndarray:
    """fma of finite operands (rows ``rows`` of the decoded A, B, C)."""
    da, db, dc = (type(d)(*(x[rows] for x in d)) for d in decoded)
    sig_p = da.sig.astype(object) * db.sig.astype(object)
    sig_p = np.where(sign_p == 1, -sig_p, sig_p)
    sig_c, exp_c = _terms(dc)
    total, q = _exact_sum([sig_p, sig_c], [da.lsb + db.lsb, exp_c])
    zero_p = (da.cls == Class.ZERO) | (db.cls == Class.ZERO)
    both_zero = zero_p & (dc.cls == Class.ZERO)
    return _with_zeros(total, q, both_zero, (sign_p & dc.sign) == 1)


def _with_zeros(total, q, all_zero: np.ndarray, negative_zero: np.ndarray) -> np.ndarray:
    """Words of exact sums: a zero sum is -0 only where every term was a zero
    and ``negative_zero`` (all of them -0), else +0; nonzero sums rounded."""
    nonzero = total != 0
    out = np.where(all_zero & negative_zero, NEG_ZERO, np.uint64(0))
    out[nonzero] = _round(total[nonzero], q[nonzero])
    return out


def fused(a: np.ndarray, b: np.ndarray, c: np.ndarray, nan="propagate") -> np.ndarray:
    """f64 words of C + sum_k a_k*b_k computed exactly and rounded once
    (the fused dot product the chain step tells a chain of FMAs from)."""
    a, b, c = (np.asarray(x).astype(np.uint64) for x in (a, b, c))
    da, db, dc = decode(F64, a), decode(F64, b), decode(F64, c)
    sign_p = (da.sign ^ db.sign).astype(np.int64)
    inf_p = (da.cls == Class.INF) | (db.cls == Class.INF)
    zero_p = (da.cls == Class.ZERO) | (db.cls == Class.ZERO)
    inf_c = dc.cls == Class.INF
    pos = ((inf_p & (sign_p == 0)).any(axis=1)) | (inf_c & (dc.sign == 0))
    neg = ((inf_p & (sign_p == 1)).any(axis=1)) | (inf_c & (dc.sign == 1))
    invalid = (inf_p & zero_p).any(axis=1) | (pos & neg)
    k = a.shape[1]
    words = [x for j in range(k) for x in (a[:, j], b[:, j])] + [c]  # the NaN priority
    nans = [decode(F64, w).cls == Class.NAN for w in words]
    any_nan = np.logical_or.reduce(nans) | invalid
    out = np.where(pos, INF_WORD, np.where(neg, INF_WORD | SIGN_BIT, np.uint64(0)))
    out = np.where(any_nan, _nan_words(nan, words, nans, invalid), out)
    fin = ~(any_nan | pos | neg)
    if fin.any():
        rows = fin
        sig_p = da.sig[rows].astype(object) * db.sig[rows].astype(object)
        sig_p = np.where(sign_p[rows] == 1, -sig_p, sig_p)
        exp_p = da.lsb[rows] + db.lsb[rows]
        sig_c, exp_c = _terms(type(dc)(*(x[rows] for x in dc)))
        total, q = _exact_sum([sig_p[:, j] for j in range(k)] + [sig_c],
                              [exp_p[:, j] for j in range(k)] + [exp_c])
        all_zero = zero_p[rows].all(axis=1) & (dc.cls[rows] == Class.ZERO)
        all_neg = (sign_p[rows] == 1).all(axis=1) & (dc.sign[rows] == 1)
        out[rows] = _with_zeros(total, q, all_zero, all_neg)
    return out


# ---------------------------------------------------------------------------
# The model.


@dataclass
class F64Model(Model):
    """An f64 datapath of :class:`ChainParams` (default: MMA-Sim's chain)."""

    params: ChainParams = ChainParams()

    def evaluate(self, cases: Cases, speed=None) -> np.ndarray:
        dp, p = self.datapath, self.params
        kernel_cache.working_on(dp.id)
        cases.check(dp)
        p.check(dp.k)
        order = list(p.k_order) if p.k_order is not None else list(range(dp.k))
        a, b = (np.asarray(x).astype(np.uint64) for x in cases.masked())
        c = cases.c.astype(np.uint64)
        if p.structure == "fused":
            return fused(a[:, order], b[:, order], c, p.nan)
        one = np.full(len(c), ONE_WORD)
        # the chain starts at C, or at -0 (-0 + x = x for every x) when C comes later
        d = c if p.c_at == 0 else np.full(len(c), NEG_ZERO)
        for i, k in enumerate(order):
            if i == p.c_at and i:
                d = fma(d, one, c, p.nan)  # d + C, rounded
            d = fma(a[:, k], b[:, k], d, p.nan)
        if p.c_at == dp.k:
            d = fma(d, one, c, p.nan)
        return d

    def describe(self) -> dict:
        return {**super().describe(), "params": self.params.as_dict()}


def is_f64(dp: Datapath) -> bool:
    return get_format(dp.a_type).name == "f64"


def f64_model(name: str, dp: Datapath, evidence: str, params: ChainParams | None = None) -> F64Model:
    """The f64 model of ``dp`` (an f64 mma with f64 C and D)."""
    names = {get_format(t).name for t in (dp.a_type, dp.b_type, dp.c, dp.d_type)}
    if names != {"f64"}:
        raise ModelError(f"{dp.id}: an f64 datapath takes f64 A, B, C and D")
    return F64Model(name, dp, evidence, params or ChainParams())
