"""Batch invariance from the atlas: which M give row i the same bits as M = ref.

A row of D = A @ B depends on M only through the kernel the library picks
for the whole shape (M, N, K). Under tcprobe's model of that kernel (a
Schedule) a row's words are a function of the row's operands and of the
schedule: two M with the same effective schedule (the same instruction
family, the same split starts, reduction, promotion, operand rounding and
epilogue) give row i the same bits; two M with different schedules may
differ (for some operands they do: a split moves a rounding). Where a
schedule is a default guess (M = 1 runs cuBLAS's gemv, which tcprobe does
not model), the answer is ``unknown``. No GPU is needed: every schedule
comes from :func:`tcprobe.atlas.lookup`, with its provenance per M range.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from .predict import starts as ceil_starts
from .query import AtlasError, lookup

INSTR_K = {"bf16": 16, "f16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32}


@dataclass(frozen=True)
class MRange:
    lo: int
    hi: int
    axes: dict
    provenance: str
    basis: str  # the evidence, rule or reason of the range's first M
    same: str  # yes, no, unknown: the same bits as M = ref for every row
    mechanism: str  # what differs from M = ref ('' where the same)
    change: str = ""  # what differs from the range before ('' for the first)

    def row(self) -> dict:
        return {"m": [self.lo, self.hi], "schedule": self.axes, "provenance": self.provenance,
                "basis": self.basis, "same_as_ref": self.same, "mechanism": self.mechanism,
                "change": self.change}

    def split_text(self, k: int) -> str:
        s = self.axes.get("split_k", 1)
        if "gemv" in self.basis:
            return "gemv (lane order unmeasured)"
        if s == 1:
            return "no split"
        ids = identity(self.axes, "bf16", k, False)[1] if self.axes.get("k_block") else ()
        at = f" at {', '.join(map(str, ids[:3]))}{', ...' if len(ids) > 3 else ''}" if ids else ""
        return f"{s} {self.axes.get('split_kind', 'serial')} splits{at}"


def identity(axes: dict, fmt: str, k: int, guess: bool) -> tuple:
    """What decides a row's words: the split as its starts, the other axes as given."""
    split = axes.get("split_k", 1)
    starts = ()
    if split > 1:
        block = axes.get("k_block") or INSTR_K[fmt]
        if axes.get("split_rule") == "ceil":
            starts = tuple(ceil_starts(k, block, split))
        else:
            tiles = -(-k // block)
            starts = tuple(round(i * tiles / split) * block for i in range(1, split))
    rest = tuple(sorted((a, v) for a, v in axes.items()
                        if a not in ("k_block", "split_k", "split_rule", "instr")))
    return ("guess" if guess else "model", starts, rest)


def _family(found) -> str:
    return "gemv (CUDA cores, lane order unmeasured)" if "gemv" in found.reason else "tensor-core GEMM"


def mechanism(ref, ref_found, cur, cur_found, fmt: str, k: int) -> str:
    """What differs between two schedules' identities, in words."""
    if _family(ref_found) != _family(cur_found):
        return f"kernel family {_family(ref_found)} -> {_family(cur_found)}"
    parts = []
    s0, s1 = ref[1], cur[1]
    if s0 != s1:
        parts.append(f"split count {len(s0) + 1} -> {len(s1) + 1}"
                     + (f" (starts {list(s1)[:4]}{'...' if len(s1) > 4 else ''})" if s1 else ""))
    r0, r1 = dict(ref[2]), dict(cur[2])
    for a in sorted(set(r0) | set(r1)):
        if r0.get(a) != r1.get(a) and a not in ("split_kind",):
            parts.append(f"{a} {r0.get(a)} -> {r1.get(a)}")
    if not parts and ref[0] != cur[0]:
        parts.append("a guessed schedule on one side")
    return "; ".join(parts)


def batch_invariance(gpu: str, dtype: str, n: int, k: int, m_lo: int = 1, m_hi: int = 4096,
                     *, ref: int = 1, form: str = "plain") -> list[MRange]:
    """M from ``m_lo`` to ``m_hi`` in ranges of one schedule, each saying
    whether row i has the same bits as at M = ``ref`` (module doc)."""
    # N or K of 0 is an empty product at every M (atlas.lookup: exact), nothing to compare
    for what, v in (("n", n), ("k", k), ("m_lo", m_lo), ("m_hi", m_hi), ("ref", ref)):
        if not isinstance(v, Integral) or isinstance(v, bool) or v < 1:
            raise AtlasError(f"{what} must be a positive integer, not {v!r}")
    if m_hi < m_lo:
        raise AtlasError(f"the M range {m_lo}:{m_hi} is empty")
    if m_hi - m_lo > 65536:
        raise AtlasError(f"the M range {m_lo}:{m_hi} is over 65,537 values")
    from tcprobe.matrix.choice import library_datapath

    library_datapath(gpu, dtype, "dtype")  # a GPU without the format answers nothing
    op = "scaled_mm" if dtype in ("e4m3", "e5m2") else "gemm"
    if op == "scaled_mm" and form == "plain":
        form = "scaled_mm"
    ref_found = lookup(gpu, op, dtype, ref, n, k, form=form)
    ref_id = identity(ref_found.axes, dtype, k, ref_found.provenance == "default guess")
    out: list[MRange] = []
    prev = None
    for m in range(m_lo, m_hi + 1):
        found = lookup(gpu, op, dtype, m, n, k, form=form)
        guess = found.provenance == "default guess"
        cur = identity(found.axes, dtype, k, guess)
        change = "" if prev is None else (mechanism(prev[0], prev[1], cur, found, dtype, k)
                                          if prev[0] != cur else "")
        prev = (cur, found)
        if m == ref:
            same, mech = "yes", ""
        elif guess or ref_id[0] == "guess":
            same = "unknown"
            mech = mechanism(ref_id, ref_found, cur, found, dtype, k)
        else:
            same = "yes" if cur == ref_id else "no"
            mech = "" if same == "yes" else mechanism(ref_id, ref_found, cur, found, dtype, k)
        basis = (found.evidence[0] if found.evidence else found.rule or found.reason)
        last = out[-1] if out else None
        if (last is not None and last.axes == found.axes and last.provenance == found.provenance
                and last.same == same and last.mechanism == mech and m != ref
                and last.lo != ref and not change):
            out[-1] = MRange(last.lo, m, last.axes, last.provenance, last.basis, same, mech,
                             last.change)
        else:
            out.append(MRange(m, m, dict(found.axes), found.provenance, basis, same, mech,
                              change if out else ""))
    return out
