"""What a candidate's mismatches have in common, and the cases that show them.

``tcprobe fit`` reads the structure of a candidate's mismatches to choose
the next dimension to change: the sign and size of the error in units in
the last place, whether the device word is the exact result rounded to
nearest or toward zero, whether the failing cases are the tiny ones (the
zero floor) or those where C outweighs the products (where C enters), and
whether zeros differ only in sign. The same features describe, in words,
what the remaining mismatches of a best candidate share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot
from tcprobe.models.formats import Class, decode, get_format, ordered

NO_EXP = -(1 << 20)


def bit_lengths(x: np.ndarray) -> np.ndarray:
    """Bit length of non-negative int64 values, in integer steps."""
    v = np.asarray(x, np.int64).copy()
    n = np.zeros(v.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = v >= (1 << s)
        n[big] += s
        v[big] >>= s
    return n + (v > 0)


def _msb(dec) -> np.ndarray:
    """Exponent of the leading bit of each finite nonzero value (else NO_EXP)."""
    e = dec.lsb + bit_lengths(dec.sig) - 1
    return np.where((dec.cls == Class.FINITE) & (dec.sig > 0), e, NO_EXP)


@dataclass
class CaseFeatures:
    """Per-case facts of a capture that do not depend on any candidate."""

    max_exp: np.ndarray  # leading exponent of the largest term (products and C)
    c_dominant: np.ndarray  # C's leading bit is above every product's
    exact_rne: np.ndarray  # the exact result rounded to nearest even
    exact_rz: np.ndarray  # the exact result rounded toward zero

    @classmethod
    def of(cls, dp: Datapath, cases: Cases) -> CaseFeatures:
        a_words, b_words = cases.masked()
        da, db = decode(dp.a_type, a_words), decode(dp.b_type, b_words)
        pa, pb = _msb(da), _msb(db)
        prod = np.where((pa > NO_EXP) & (pb > NO_EXP), pa + pb + 1, NO_EXP)
        pmax = prod.max(axis=1) if prod.size else np.full(len(cases), NO_EXP)
        cexp = _msb(decode(dp.c, cases.c))
        exact = EngineParams(window_bits=None, block_size=dp.k, zero_floor=None,
                             output_rounding="rne", zero_sign="ieee", overflow="ieee")
        return cls(np.maximum(pmax, cexp), cexp > pmax, fused_dot(dp, cases, exact),
                   fused_dot(dp, cases, exact.replace(output_rounding="rz")))


@dataclass
class Diagnosis:
    """The shape of one candidate's mismatches on a set of cases."""

    cases: int
    mismatches: int
    larger: float = 0.0  # share where the device's magnitude is larger
    one_ulp: float = 0.0  # share off by exactly one unit in the last place
    median_ulps: int = 0
    nearest: float = 0.0  # share where the device word is the exact result, RNE
    toward_zero: float = 0.0  # share where it is the exact result, RZ
    zero_sign: int = 0  # zeros that differ only in sign
    specials: int = 0  # a NaN or an Inf on either side
    low: float = 0.0  # share among the smallest fifth of the cases by magnitude
    c_dominant: float = 1.0  # how much likelier a mismatch is where C outweighs the products
    reasons: dict = field(default_factory=dict)  # dim -> why it is tried early
    floors: list = field(default_factory=list)  # floors the failing cases point at
    _scores: dict = field(default_factory=dict, repr=False)

    def strong(self, dim: str) -> bool:
        """Whether the mismatches point at ``dim`` by themselves (zero signs,
        tiny cases, C-dominated cases)."""
        return self._scores.get(dim, 0) >= 4

    @property
    def up(self) -> bool:
        """Whether the candidate loses magnitude: wider windows first."""
        return self.larger >= 0.5

    def priorities(self, dims) -> list[str]:
        """``dims`` ordered by how well they match the mismatches (steering)."""
        score = {d: 0.0 for d in dims}
        why: dict[str, list[str]] = {d: [] for d in dims}

        def vote(d, w, text):
            if d in score:
                score[d] += w
                why[d].append(text)

        if self.zero_sign:
            vote("zero_sign", 6, f"{self.zero_sign} zeros differ in sign only")
        if self.low >= 0.5:
            vote("floor", 5, f"{self.low:.0%} are among the smallest cases")
        if self.c_dominant >= 1.5:
            text = f"mismatches {self.c_dominant:.1f}x likelier where C outweighs the products"
            vote("c_entry", 4, text)
            vote("c_convert", 2, text)
            vote("acc", 1, text)
        if self.one_ulp >= 0.6:
            text = f"{self.one_ulp:.0%} off by one ulp"
            vote("rounding", 3, text)
            vote("c_entry", 2, text)
            vote("window", 1, text)
        if self.nearest >= 0.5:
            text = f"the device gives the exact result rounded to nearest on {self.nearest:.0%}"
            vote("rounding", 2, text)
            vote("c_entry", 2, text)
            vote("window", 1, text)
        if self.toward_zero >= 0.5:
            text = f"the device gives the exact result rounded toward zero on {self.toward_zero:.0%}"
            vote("rounding", 2, text)
            vote("window", 2, text)
        if self.larger >= 0.7 or self.larger <= 0.3:
            side = "larger" if self.larger >= 0.7 else "smaller"
            share = self.larger if side == "larger" else 1 - self.larger
            text = f"the device's magnitude is {side} on {share:.0%}"
            vote("window", 2, text)
            vote("frac_bits", 1, text)
            vote("rounding", 1, text)
        if self.median_ulps >= 4:
            text = f"median error {self.median_ulps} ulps"
            vote("split", 3, text)
            vote("frac_bits", 2, text)
            vote("inter", 2, text)
            vote("acc", 2, text)
            vote("window", 1, text)
        self.reasons = {d: "; ".join(v) for d, v in why.items() if v}
        self._scores = score
        order = list(dims)
        return sorted(order, key=lambda d: (-score[d], order.index(d)))

    def summary(self) -> str:
        """What the mismatches have in common, in words."""
        if not self.mismatches:
            return "no mismatches"
        parts = [f"{self.mismatches:,} of {self.cases:,} cases",
                 f"device magnitude larger on {self.larger:.0%}",
                 f"{self.one_ulp:.0%} off by one ulp (median {self.median_ulps})",
                 f"device = exact RNE on {self.nearest:.0%}, exact RZ on {self.toward_zero:.0%}"]
        if self.low >= 0.5:
            parts.append(f"{self.low:.0%} among the smallest fifth of cases")
        if self.c_dominant >= 1.5:
            parts.append(f"{self.c_dominant:.1f}x likelier where C outweighs the products")
        if self.zero_sign:
            parts.append(f"{self.zero_sign} zero-sign differences")
        if self.specials:
            parts.append(f"{self.specials} involve NaN or Inf")
        return "; ".join(parts)


def diagnose(dp: Datapath, feats: CaseFeatures, idx: np.ndarray, device: np.ndarray,
             model: np.ndarray) -> Diagnosis:
    """Diagnosis of ``model`` words against ``device`` words on capture cases ``idx``."""
    idx = np.asarray(idx)
    bad = device != model
    diag = Diagnosis(cases=len(idx), mismatches=int(bad.sum()))
    if not bad.any():
        return diag
    fmt = get_format(dp.d_type)
    dv, mv, where = device[bad], model[bad], idx[bad]
    cd, cm = decode(fmt, dv).cls, decode(fmt, mv).cls
    special = (cd >= Class.INF) | (cm >= Class.INF)
    od, om = ordered(fmt, dv), ordered(fmt, mv)
    zeros = (od == 0) & (om == 0)
    diag.specials = int(special.sum())
    diag.zero_sign = int((zeros & ~special).sum())
    finite = ~special & ~zeros
    if finite.any():
        ulps = np.abs(od[finite] - om[finite])
        diag.larger = float((np.abs(od[finite]) > np.abs(om[finite])).mean())
        diag.one_ulp = float((ulps == 1).mean())
        diag.median_ulps = int(np.median(ulps))
    diag.nearest = float((feats.exact_rne[where] == dv).mean())
    diag.toward_zero = float((feats.exact_rz[where] == dv).mean())
    cut = np.percentile(feats.max_exp[idx], 20)
    diag.low = float((feats.max_exp[where] <= cut).mean())
    if diag.low >= 0.3:
        # A floor above a failing case's largest term anchors it there: the
        # floors just above the failing cases' largest exponents, commonest first.
        tops = feats.max_exp[where]
        tops = tops[tops > NO_EXP]
        counts: dict[int, int] = {}
        for e in tops.tolist():
            for f in (e + 1, e + 2, e + 3):
                counts[f] = counts.get(f, 0) + 1
        diag.floors = sorted(counts, key=lambda f: (-counts[f], f))[:12]
    base = feats.c_dominant[idx].mean()
    if base > 0:
        diag.c_dominant = float(feats.c_dominant[where].mean() / base)
    return diag


# ---------------------------------------------------------------------------
# Minimal cases.


def case_size(dp: Datapath, cases: Cases, i: int) -> tuple:
    """How complicated case ``i`` is: nonzero terms, significand bits, largest |exponent|."""
    a_words, b_words = cases.masked()
    da, db = decode(dp.a_type, a_words[i]), decode(dp.b_type, b_words[i])
    dc = decode(dp.c, cases.c[i:i + 1])
    live = (da.sig > 0) & (db.sig > 0)
    terms = int(live.sum()) + int(dc.sig[0] > 0)
    bits = int(sum(bin(int(x)).count("1") for x in np.concatenate([da.sig[live], db.sig[live],
                                                                   dc.sig])))
    exps = np.concatenate([np.abs(_msb(da)[live]), np.abs(_msb(db)[live]),
                           np.abs(_msb(dc)[dc.sig > 0])])
    return (terms, bits, int(exps.max()) if exps.size else 0)


def simplest(dp: Datapath, cases: Cases, idx) -> int:
    """The simplest of the cases at ``idx`` (by :func:`case_size`)."""
    idx = list(np.asarray(idx)[:200])
    return min(idx, key=lambda i: case_size(dp, cases, int(i)))
