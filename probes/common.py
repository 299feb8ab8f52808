"""What every ladder step shares: the Finding it returns, its evidence rows,
and exact word builders for the values probes feed a device.

Probes build inputs (powers of two, fractions of an ulp, maximal
significands) as raw words with the integer codecs of ``models.formats``;
they never compute an expected output word. A step either compares device
words with each other or asks a Model (``ctx.model(...)``) which parameter
values agree with what the device returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.formats import describe, get_format
from tcprobe.models.words import pow2, zero

# ---------------------------------------------------------------------------
# Findings and their evidence.


@dataclass
class Evidence:
    """One proving case: its nonzero inputs and the raw words that came back."""

    label: str
    a: dict = field(default_factory=dict)  # lane -> word (nonzero lanes)
    b: dict = field(default_factory=dict)
    c: int | None = None
    words: list = field(default_factory=list)  # device words (result, or dump words)
    note: str = ""
    scale_a: list | None = None
    scale_b: list | None = None

    def as_dict(self) -> dict:
        out = {"label": self.label,
               "a": {str(k): f"{v:#x}" for k, v in self.a.items()},
               "b": {str(k): f"{v:#x}" for k, v in self.b.items()},
               "c": None if self.c is None else f"{self.c:#x}",
               "words": [f"{int(w):#x}" for w in self.words]}
        if self.note:
            out["note"] = self.note
        if self.scale_a is not None:
            out["scale_a"] = [f"{int(w):#x}" for w in self.scale_a]
            out["scale_b"] = [f"{int(w):#x}" for w in self.scale_b]
        return out


@dataclass
class Finding:
    """What one step concluded, with the cases that prove it."""

    step: str
    status: str  # found | partial | skipped | failed
    summary: str
    values: dict = field(default_factory=dict)
    evidence: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    cases: int = 0  # logical cases (result mode) or tiles (raw mode) spent
    seconds: float = 0.0
    prerequisite: bool = False  # run because a later step needed it

    @property
    def ok(self) -> bool:
        return self.status in ("found", "partial")

    def as_dict(self) -> dict:
        vals = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.values.items()}
        return {"step": self.step, "status": self.status, "summary": self.summary,
                "values": vals, "notes": list(self.notes), "cases": self.cases,
                "seconds": round(self.seconds, 4), "prerequisite": self.prerequisite,
                "evidence": [e.as_dict() for e in self.evidence]}


def show(fmt, w) -> str:
    return describe(get_format(fmt), int(w))


# ---------------------------------------------------------------------------
# What a step declares about itself (the ladder reads it; nothing else lists steps).


@dataclass(frozen=True)
class StepInfo:
    """A ladder step's own metadata, declared as ``STEP`` in its module.

    The ladder finds its steps by this attribute (a module of ``probes/``
    without ``STEP`` is a helper) and runs them in ``order``.
    """

    order: int  # the step's place in the ladder (ascending)
    title: str  # the heading the CLI prints over its finding
    needs_layout: bool = False  # runs logical cases through the harness (raw: layout first)
    engine: bool = False  # unscaled float dot products with an engine model
    fingerprint: bool = False  # its values are engine keys of the fingerprint
    xor_unprobed: bool = False  # lights lanes with products: .xor keeps the .and harness
    also_on: tuple = ()  # datapath traits where an engine step still runs (see ladder)
    skip_on: tuple = ()  # datapath traits where a non-engine step is skipped as one


# ---------------------------------------------------------------------------
# Building batches of logical cases.


class Batch:
    """Logical cases for one step, built row by row, with labels."""

    def __init__(self, dp, lanes: int | None = None, show_scales: bool = False):
        self.dp = dp
        self.show_scales = show_scales and dp.block_scaled  # scale codes in the evidence
        self.k = lanes or dp.k
        self.rows: list[tuple[str, dict, dict, int, dict, dict]] = []
        self.zero_a = zero(dp.a_type)
        self.zero_b = zero(dp.b_type)

    def add(self, label: str, lanes: dict | None = None, c: int | None = None,
            scale_a: dict | None = None, scale_b: dict | None = None) -> int:
        """lanes: {k: (a_word, b_word)}; c: C word (None: +0); scale_a, scale_b:
        {scale block: code} on block-scaled datapaths (others: 1). Returns the row."""
        lanes = lanes or {}
        a = {k: v[0] for k, v in lanes.items()}
        b = {k: v[1] for k, v in lanes.items()}
        self.rows.append((label, a, b, zero(self.dp.c) if c is None else int(c),
                          dict(scale_a or {}), dict(scale_b or {})))
        return len(self.rows) - 1

    def __len__(self) -> int:
        return len(self.rows)

    def cases(self) -> Cases:
        """The rows as Cases: unit scales on block-scaled datapaths, and on
        sparse ones a legal mask that keeps every lane a row names (where the
        selectors allow; see :func:`legal_mask`)."""
        n = len(self.rows)
        dp = self.dp
        a = np.full((n, self.k), self.zero_a, get_format(dp.a_type).dtype)
        b = np.full((n, self.k), self.zero_b, get_format(dp.b_type).dtype)
        c = np.zeros(n, get_format(dp.c).dtype)
        named = np.zeros((n, self.k), bool)
        for i, (_, ra, rb, rc, _, _) in enumerate(self.rows):
            for k, v in ra.items():
                a[i, k] = v
                named[i, k] = True
            for k, v in rb.items():
                b[i, k] = v
                named[i, k] = True
            c[i] = rc
        sa = sb = active = None
        if self.dp.block_scaled:  # unit scales, but where a row sets its blocks' codes
            sa, sb = unit_scales(self.dp, n)
            for i, row in enumerate(self.rows):
                for j, code in row[4].items():
                    sa[i, j] = code
                for j, code in row[5].items():
                    sb[i, j] = code
        if self.dp.sparse:
            active = legal_mask(self.dp, named)
        return Cases(a, b, c, sa, sb, active, names=[r[0] for r in self.rows])

    def evidence(self, i: int, words, note: str = "", cases: Cases | None = None) -> Evidence:
        """Evidence of row i (of ``cases`` when i lies past this batch's rows)."""
        if i >= len(self.rows):
            return case_evidence(cases, i, words, note, self.zero_a, self.zero_b)
        label, a, b, c, xa, xb = self.rows[i]
        za, zb = self.zero_a, self.zero_b
        ev = Evidence(label, {k: v for k, v in a.items() if v != za},
                      {k: v for k, v in b.items() if v != zb}, c,
                      [int(w) for w in np.atleast_1d(words)], note)
        if self.show_scales:
            unit = pow2(self.dp.scale_type, 0)
            ev.scale_a = [xa.get(j, unit) for j in range(self.dp.n_scales)]
            ev.scale_b = [xb.get(j, unit) for j in range(self.dp.n_scales)]
        return ev


# The most integer bits above the anchor that the steps try for an accumulator
# (its top wraps, saturates or normalizes past them).
MOST_CARRY_BITS = 8


def window(ctx):
    """The window F: the internal step's, or the one it assumes where every
    wider window gives the same words (None where neither is known)."""
    found = ctx.value("window_bits")
    if found is not None or "internal" not in ctx.findings:
        return found
    values = ctx.findings["internal"].values
    assumed = values.get("assumed", {}).get("window_bits")
    # an exact sum (no window): the probes sit as deep as the widest window
    return ctx.value("probe_window") if assumed is None else assumed


def model_window(ctx, F):
    """The window a candidate model runs with where a probe placed its cases at
    ``F``: None where the sum was found exact (probes sit at the widest window)."""
    exact = ctx.value("window_bits") is None and ctx.value("probe_window") is not None
    return None if exact else F


def open_keeps(ctx) -> list:
    """The output fraction bits the rounding step could not tell apart (no
    sum there needed all of them), for a later step whose cases may show
    them; empty where it settled them."""
    f = ctx.findings.get("rounding")
    if f is None or "output_frac_bits" not in f.values.get("undetermined", {}):
        return []
    keeps = f.values.get("open_keeps") or []
    return list(keeps) if len(keeps) > 1 else []


def unit_scales(dp, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(scale_a, scale_b) of n cases, every scale factor 1."""
    unit = pow2(dp.scale_type, 0)
    sa = np.full((n, dp.n_scales), unit, np.uint32)
    return sa, sa.copy()


@lru_cache(maxsize=64)
def _legal_sets(dp) -> tuple[int, tuple[int, ...]]:
    """(chunk width, the position bit sets of every legal selector)."""
    from tcprobe.models import sparsity

    width = sparsity.chunk_width(dp)
    sets = []
    for sel in sparsity.legal_selectors(dp):
        bits = sum(1 << p for p in sparsity.kept_positions(dp, sel))
        if bits not in sets:
            sets.append(bits)
    return width, tuple(sets)


def legal_mask(dp, wanted) -> np.ndarray:
    """(N, K) legal sparse masks: per chunk the legal selection that keeps
    the most ``wanted`` positions (the first such selector on ties). Lanes a
    probe needs together must be :func:`co_active`."""
    wanted = np.atleast_2d(np.asarray(wanted, bool))
    n, k = wanted.shape
    width, sets = _legal_sets(dp)
    chunks = k // width
    bits = (wanted.reshape(n, chunks, width) * (1 << np.arange(width))).sum(axis=2)
    cand = np.array(sets, np.int64)
    covered = np.zeros((n, chunks, len(cand)), np.int64)
    for j, s in enumerate(cand):
        x = bits & s
        covered[..., j] = sum((x >> i) & 1 for i in range(width))
    pick = cand[np.argmax(covered, axis=2)]  # (n, chunks)
    mask = (pick[..., None] >> np.arange(width)) & 1
    return mask.reshape(n, k).astype(bool)


def co_active(dp, lanes) -> bool:
    """Whether ``lanes`` can all be active in one case (always, dense)."""
    if not dp.sparse:
        return True
    want = np.zeros(dp.k, bool)
    want[list(lanes)] = True
    return bool(legal_mask(dp, want)[0][want].all())


def together(dp, n: int, among=None) -> list[int] | None:
    """n lanes (from ``among``, in its order) that can all be active in one case."""
    out = []
    for k in (range(dp.k) if among is None else among):
        if co_active(dp, [*out, k]):
            out.append(int(k))
            if len(out) == n:
                return out
    return None


def complete(dp, cases: Cases) -> Cases:
    """``cases`` with what the datapath needs and a probe may leave out:
    unit scales (block-scaled), and a legal mask keeping the most lanes whose
    A or B word is not +0 (sparse)."""
    sa, sb, act = cases.scale_a, cases.scale_b, cases.active
    changed = False
    if dp.block_scaled and (sa is None or sb is None):
        ua, ub = unit_scales(dp, len(cases))
        sa = ua if sa is None else sa
        sb = ub if sb is None else sb
        changed = True
    if dp.sparse and act is None:
        za, zb = zero(dp.a_type), zero(dp.b_type)
        act = legal_mask(dp, (cases.a != za) | (cases.b != zb))
        changed = True
    if not changed:
        return cases
    return Cases(cases.a, cases.b, cases.c, sa, sb, act, cases.names)


def case_evidence(cases: Cases, i: int, words, note: str, zero_a: int = 0, zero_b: int = 0):
    """Evidence of case i of a batch of Cases (its nonzero lanes)."""
    a, b = cases.a[i], cases.b[i]
    label = cases.names[i] if cases.names else f"case {i}"
    return Evidence(label, {k: int(v) for k, v in enumerate(a) if v != zero_a},
                    {k: int(v) for k, v in enumerate(b) if v != zero_b}, int(cases.c[i]),
                    [int(w) for w in np.atleast_1d(words)], note)


@lru_cache(maxsize=64)
def lone_ties(fa_name: str, fb_name: str) -> dict:
    """Significand pairs whose exact product is a lone top bit, then ``z``
    zero bits, then a set bit (anything below): {z: (mant_a, mant_b,
    leading bit of mant_a * mant_b)}, one pair per z, over every pair of
    normal significands. With the top bit placed half an output step above
    a kept even value, such a product is an exact tie under a nearest
    rounding while the set bit is cut and rounds up while the window keeps
    it: the bit's depth names the window's end (a floor-held anchor's)."""
    fa, fb = get_format(fa_name), get_format(fb_name)
    if fa.frac_bits + fb.frac_bits > 24:  # too many pairs to list (f32, f64): 1.0 times
        # a significand 1 0..0 1, every depth the wider significand holds
        if fb.frac_bits >= fa.frac_bits:
            return {z: (1 << fa.frac_bits, (1 << fb.frac_bits) | (1 << (fb.frac_bits - 1 - z)),
                        fa.frac_bits + fb.frac_bits) for z in range(fb.frac_bits)}
        return {z: ((1 << fa.frac_bits) | (1 << (fa.frac_bits - 1 - z)), 1 << fb.frac_bits,
                    fa.frac_bits + fb.frac_bits) for z in range(fa.frac_bits)}
    ma = np.arange(1 << fa.frac_bits, 1 << (fa.frac_bits + 1), dtype=np.int64)
    mb = np.arange(1 << fb.frac_bits, 1 << (fb.frac_bits + 1), dtype=np.int64)
    p = (ma[:, None] * mb[None, :]).ravel()
    top = np.where(p >= (1 << (fa.frac_bits + fb.frac_bits + 1)), fa.frac_bits + fb.frac_bits + 1,
                   fa.frac_bits + fb.frac_bits)
    rest = p - (np.int64(1) << top)
    idx = np.flatnonzero(rest > 0)  # (a power of two has no second bit)
    top, rest = top[idx], rest[idx]
    second = np.zeros_like(rest)  # the set bit below the top: rest's leading bit
    for bit in range(1, int(top.max()) + 1):
        second = np.where(rest >> bit, bit, second)
    out = {}
    for z in np.unique(top - second - 1):
        i = int(np.flatnonzero(top - second - 1 == z)[0])
        a, b = divmod(int(idx[i]), len(mb))
        out[int(z)] = (int(ma[a]), int(mb[b]), int(top[i]))
    return out
