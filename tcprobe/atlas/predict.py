"""Split counts for shapes nobody measured, from the measured ones, and how well that works.

A rule sees the measured shapes of one kernel group (bf16 and f16 pooled;
tf32; fp8) and returns the split count S for (M, N, K); the split itself is
then cut as the measured ones are (parallel, ``split_rule='ceil'``, blocks
of 128 bytes of K). The rules:

* ``none``: never split (what emulate assumed before the atlas).
* ``nearest``: the split count of the nearest measured shape (distance in
  log2 M, log2 N, log2 K).
* ``length``: the nearest measured shape's split length (K per split) kept:
  S = ceil(K / L); no split where that shape had none.
* ``threshold``: split where M*N is no larger than the largest M*N that split
  and K is no smaller than the smallest K that split, S = ceil(K / L) with L
  the median split length of the shapes that split.

:func:`leave_one_out` holds each measured shape out, fits the rule on the rest
and counts the held-out shapes whose split starts it gets right. With 4, 3
and 3 shapes per group that figure is weak evidence: it says which rule is
least wrong on this data, not that any rule is right.
"""

from __future__ import annotations

import math
from functools import cache
from statistics import median

from .store import BLOCK, GROUPS, entries

RULES = ("none", "nearest", "length", "threshold")


def starts(k: int, block: int, splits: int) -> list[int]:
    """Where ceil splits of K in ``block`` elements start (after the first);
    ``splits`` is cut to what the blocks allow."""
    blocks = -(-k // block)
    splits = max(1, min(splits, blocks))
    size = -(-blocks // splits)
    return [i * size * block for i in range(1, splits) if i * size < blocks]


def effective(k: int, block: int, splits: int) -> int:
    """The split count ceil splits really make (some counts leave the last empty)."""
    return len(starts(k, block, splits)) + 1


def points(gpu: str, group: str, form: str = "plain") -> list[tuple]:
    """(m, n, k, S, split length or None) of every measured shape of a group
    (one per shape; the same shape in bf16 and f16 split alike)."""
    out = {}
    for e in entries(gpu):
        if GROUPS.get(e["a"]) != group:
            continue
        f = e["forms"].get(form) or e["forms"].get("plain") or e["forms"].get("scaled_mm")
        if f is None:
            continue
        s = f["schedule"]
        split = s.get("split_k", 1)
        length = None
        if split > 1 and s.get("split_rule") == "ceil":
            length = (starts(e["k"], s["k_block"], split) or [None])[0]
        out[(e["m"], e["n"], e["k"])] = (e["m"], e["n"], e["k"], split, length, s)
    return sorted(out.values())


def distance(p, m, n, k) -> float:
    return sum((math.log2(a) - math.log2(b)) ** 2 for a, b in zip(p[:3], (m, n, k), strict=True))


def predict_splits(rule: str, pts: list[tuple], m: int, n: int, k: int, block: int) -> int:
    """Rule ``rule`` fitted on ``pts``: the split count of (m, n, k)."""
    if rule == "none" or not pts:
        return 1
    near = min(pts, key=lambda p: (distance(p, m, n, k), p[:3]))
    if rule == "nearest":
        return effective(k, block, near[3])
    if rule == "length":
        return 1 if near[4] is None else effective(k, block, -(-k // near[4]))
    if rule == "threshold":
        split = [p for p in pts if p[3] > 1 and p[4] is not None]
        if not split:
            return 1
        if m * n > max(p[0] * p[1] for p in split) or k < min(p[2] for p in split):
            return 1
        length = median(p[4] for p in split)
        return effective(k, block, math.ceil(k / length))
    raise ValueError(f"rule: {rule!r} is not one of {', '.join(RULES)}")


@cache
def leave_one_out(gpu: str) -> dict:
    """{rule: {group: (right, shapes, [(shape, measured S, predicted S)])}}."""
    out = {}
    for rule in RULES:
        per = {}
        for group, block in BLOCK.items():
            pts = points(gpu, group)
            rows = []
            for i, p in enumerate(pts):
                rest = pts[:i] + pts[i + 1:]
                got = predict_splits(rule, rest, p[0], p[1], p[2], block)
                rows.append((p[:3], p[3], got))
            right = sum(starts(s[2], block, a) == starts(s[2], block, b) for s, a, b in rows)
            per[group] = (right, len(rows), rows)
        out[rule] = per
    return out


@cache
def best_rule(gpu: str, group: str) -> str:
    """The rule with the most held-out shapes of ``group`` right (ties: the
    earlier, simpler rule of RULES). Choosing it on the same leave-one-out
    figure flatters that figure a little: with so few shapes, say so."""
    loo = leave_one_out(gpu)
    return max(RULES, key=lambda r: (loo[r][group][0], -RULES.index(r)))
