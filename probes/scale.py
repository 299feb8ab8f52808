"""scale: block scales (block-scaled kinds only).

Each scale factor of A and of B is set to 2 alone (the others 1) with
every lane holding 1*1: the lanes whose product doubles are the scale's
block; the result must equal the same sum with those products doubled by
their operands instead (device words compared with device words).
"""

from __future__ import annotations

import numpy as np

from tcprobe.cases import Cases

from .common import Finding, pow2, product, word


def run(ctx) -> Finding:
    dp = ctx.dp
    if not dp.block_scaled:
        return Finding("scale", "skipped", f"{dp.id} is not block-scaled")
    one = product(ctx.a_fmt, ctx.b_fmt, 0)
    n = dp.n_scales
    unit, two = pow2(dp.scale_type, 0), pow2(dp.scale_type, 1)
    rows_a, rows_b, sa, sb, labels = [], [], [], [], []
    for k in range(dp.k):  # lane k alone, unit scales
        a = np.zeros(dp.k, np.uint32)
        b = np.zeros(dp.k, np.uint32)
        a[k], b[k] = one[0], one[1]
        for j in range(n):
            for side in ("a", "b"):
                s_a = np.full(n, unit, np.uint32)
                s_b = np.full(n, unit, np.uint32)
                (s_a if side == "a" else s_b)[j] = two
                rows_a.append(a)
                rows_b.append(b)
                sa.append(s_a)
                sb.append(s_b)
                labels.append((k, j, side))
    cs = Cases(np.array(rows_a), np.array(rows_b), np.zeros(len(rows_a), np.uint32),
               np.array(sa), np.array(sb))
    w = ctx.run(cs)
    ref = ctx.run(Cases(np.zeros((2, dp.k), np.uint32), np.zeros((2, dp.k), np.uint32),
                        np.array([word(ctx.c_fmt, 0, 1, 0), word(ctx.c_fmt, 0, 1, 1)], np.uint32),
                        np.full((2, n), unit, np.uint32), np.full((2, n), unit, np.uint32)))
    blocks = {}
    bad = []
    for (k, j, side), x in zip(labels, w, strict=True):
        if x == ref[1]:
            blocks.setdefault((side, j), []).append(k)
        elif x != ref[0]:
            bad.append((k, j, side))
    sizes = sorted({len(v) for v in blocks.values()})
    if bad or len(sizes) != 1:
        return Finding("scale", "failed", f"scales do not act as powers of two on whole blocks "
                       f"({len(bad)} odd cases)", {})
    return Finding("scale", "found",
                   f"each of the {n} scale factors of A and of B multiplies {sizes[0]} lanes "
                   "exactly (2 x scale doubles just those products)",
                   {"scale_block": sizes[0]})
