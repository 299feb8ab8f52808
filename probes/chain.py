"""chain: an f64 datapath as a chain of fp64 FMAs or one fused rounding;
the order K is consumed in, where C enters, and the NaN a result carries.

Every case is built from exact words; no step computes an expected word.

* order: position x holds (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104, which one
  rounding turns into 1 + 2^-51; position y holds -(1 + 2^-51) exactly;
  every other product and C are +0. A chain that takes x before y rounds
  the 2^-104 away and cancels to +0; one that takes y first keeps it
  (fma(x, -(1 + 2^-51)) is exactly 2^-104). A fused dot product gives
  2^-104 both ways. One case an ordered pair: K(K-1) cases.
* C entry: C = -(1 + 2^-51) and position x holds (1 + 2^-52)^2: C added
  before x gives 2^-104, after x +0.
* NaN: signalling and quiet NaNs with payloads in A, B and C, alone and
  together, and Inf*0 and Inf-Inf without a NaN: one word for all of them
  is a canonical NaN; otherwise the propagation rule must reproduce them.

The chain (or fused) model of what was found is then checked on every case
of the step; the ladder validates it on random cases afterwards.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.f64 import INF_WORD, SIGN_BIT, ChainParams, F64Model, is_f64
from tcprobe.models.words import pow2, word

from .common import Batch, Finding, StepInfo

STEP = StepInfo(
    order=150, title="f64: a chain of fp64 FMAs or one fused rounding, its order, C, NaN",
    needs_layout=True, skip_on=("mfma",)
)


def _words(fmt):
    """(x_a = x_b = 1 + 2^-52, y_a = -1, y_b = 1 + 2^-51, C = -(1 + 2^-51), tiny = 2^-104)."""
    return (word(fmt, 0, (1 << 52) + 1, -52), pow2(fmt, 0, 1), word(fmt, 0, (1 << 51) + 1, -51),
            word(fmt, 1, (1 << 51) + 1, -51), pow2(fmt, -104))


def run(ctx) -> Finding:
    dp = ctx.dp
    if not is_f64(dp):
        return Finding("chain", "skipped", f"{dp.id} is not an f64 datapath (the engine steps "
                       "measure its fused window)")
    f = ctx.d_fmt
    x, y_a, y_b, minus_c, tiny = _words(f)
    k = dp.k
    bt = Batch(dp)
    pairs = {}
    for i in range(k):
        for j in range(k):
            if i != j:
                pairs[i, j] = bt.add(f"(1+2^-52)^2 at {i}, -(1+2^-51) at {j}",
                                     {i: (x, x), j: (y_a, y_b)})
    entry = {i: bt.add(f"C = -(1+2^-51), (1+2^-52)^2 at {i}", {i: (x, x)}, minus_c)
             for i in range(k)}
    nan_rows = _nan_rows(bt, f)
    cases = bt.cases()
    w = ctx.run(cases)
    kept = {ij: int(w[r]) == tiny for ij, r in pairs.items()}
    zero = {ij: int(w[r]) == 0 for ij, r in pairs.items()}
    ev = []
    if all(kept.values()):
        structure, order, c_at = "fused", None, 0
        summary = "every pair keeps 2^-104: one rounding of the whole sum (a fused dot product)"
        ev.append(bt.evidence(pairs[0, 1], [w[pairs[0, 1]]], "2^-104 kept"))
        ev.append(bt.evidence(pairs[1, 0], [w[pairs[1, 0]]], "2^-104 kept"))
    else:
        if not all(kept[ij] or zero[ij] for ij in pairs):
            return _failed(bt, w, pairs, kept, zero)
        # y before x keeps 2^-104: the positions before x are the y of its kept pairs
        before = {i: sum(kept[i, j] for j in range(k) if j != i) for i in range(k)}
        order = sorted(range(k), key=before.get)
        if sorted(before.values()) != list(range(k)):
            return _failed(bt, w, pairs, kept, zero, "the pairs form no order (not one chain)")
        structure = "chain"
        c_after = [i for i in range(k) if int(w[entry[i]]) == 0]
        c_at = len(c_after)
        if set(c_after) != set(order[:c_at]):
            return _failed(bt, w, pairs, kept, zero, "C enters at no single point of the chain")
        where = "first" if c_at == 0 else "last" if c_at == k else f"after {c_at} products"
        summary = (f"a chain of fp64 FMAs, one rounding each: K consumed in the order "
                   f"{', '.join(map(str, order))}, C enters {where}")
        first, second = order[0], order[1]
        ev.append(bt.evidence(pairs[first, second], [w[pairs[first, second]]],
                              f"{first} before {second}: 2^-104 rounded away"))
        ev.append(bt.evidence(pairs[second, first], [w[pairs[second, first]]],
                              f"{second} after {first}: 2^-104 kept"))
        ev.append(bt.evidence(entry[order[-1]], [w[entry[order[-1]]]],
                              "C before the last product" if c_at < k else "C after every product"))
    nan, nan_note = _nan_rule(ctx, dp, cases, w, nan_rows, structure, order, c_at)
    ev += [bt.evidence(r, [w[r]], "NaN result") for r in nan_rows[:3]]
    if nan is None:
        return Finding("chain", "partial", summary + "; " + nan_note,
                       {"structure": structure, "k_order": order, "c_at": c_at}, ev)
    params = ChainParams(structure, None if order in (None, list(range(k))) else tuple(order),
                         c_at, nan)
    values = {"structure": structure, "k_order": order, "c_at": c_at, "nan": nan,
              "params": params.as_dict()}
    again = F64Model("chain", dp, "ladder", params).evaluate(cases)
    if not np.array_equal(again, np.asarray(w)):
        bad = int(np.flatnonzero(again != np.asarray(w))[0])
        ev.append(bt.evidence(bad, [w[bad]], "the model of the finding gives another word"))
        return Finding("chain", "partial", f"{summary}; {nan_note}; but its model misses "
                       f"{int((again != np.asarray(w)).sum())} of the step's cases", values, ev)
    return Finding("chain", "found", f"{summary}; {nan_note}", values, ev)


def _nan_rows(bt: Batch, f) -> list[int]:
    """NaNs with payloads in A, B and C, alone and together, and the invalid
    operations (Inf*0, Inf-Inf) without a NaN operand."""
    one, inf = pow2(f, 0), int(INF_WORD)
    snan, qnan, neg_qnan = 0x7FF0000000000001, 0x7FF8000000000002, 0xFFF8000000000003
    rows = [bt.add("A sNaN payload 1", {0: (snan, one)}), bt.add("B qNaN payload 2", {0: (one, qnan)}),
            bt.add("C -qNaN payload 3", {0: (one, one)}, neg_qnan),
            bt.add("A sNaN, C -qNaN", {0: (snan, one)}, neg_qnan),
            bt.add("B qNaN at the last lane, A sNaN at 0", {0: (snan, one), bt.k - 1: (one, qnan)}),
            bt.add("Inf * 0", {0: (inf, 0)}), bt.add("Inf - Inf", {0: (inf, one)}, inf | int(SIGN_BIT))]
    return rows


def _nan_rule(ctx, dp, cases: Cases, w, rows, structure, order, c_at):
    """(the NaN parameter that reproduces the NaN rows, a note)."""
    got = {int(w[r]) for r in rows}
    if not all(ctx.is_nan(np.array([int(w[r])], np.uint64))[0] for r in rows):
        return None, "a NaN input gave a non-NaN word (no NaN rule found)"
    nan_cases = cases.take(rows)
    candidates = {"propagate": "propagate"}
    if len(got) == 1:
        candidates = {"canonical": got.pop(), **candidates}
    base = ChainParams(structure, None if order is None else tuple(order), c_at)
    for name, value in candidates.items():
        model = F64Model("chain", dp, "ladder", base.replace(nan=value))
        if np.array_equal(model.evaluate(nan_cases), np.asarray(w)[rows]):
            if name == "canonical":
                return value, f"every NaN result is {value:#018x}"
            return value, "a NaN operand comes out quieted, A's before B's before the addend's"
    return None, "no NaN rule reproduces the NaN words (neither one word nor propagation)"


def _failed(bt, w, pairs, kept, zero, why="a pair gave neither +0 nor 2^-104") -> Finding:
    odd = next(ij for ij in pairs if not (kept[ij] or zero[ij])) if "neither" in why else \
        next(iter(pairs))
    return Finding("chain", "failed", f"not a chain of fp64 FMAs nor one fused rounding: {why}",
                   {}, [bt.evidence(pairs[odd], [w[pairs[odd]]], why)])
