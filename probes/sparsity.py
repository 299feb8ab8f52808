"""sparsity: what the metadata's disabled positions do (sparse kinds only).

A NaN placed in a disabled position must not poison the result, and each
enabled position must contribute exactly its product: device words of
sparse cases are compared with the same cases with the disabled words
zeroed.
"""

from __future__ import annotations

import numpy as np

from tcprobe.cases import Cases

from .common import Finding, product


def run(ctx) -> Finding:
    dp = ctx.dp
    if not dp.sparse:
        return Finding("sparsity", "skipped", f"{dp.id} is not sparse")
    k = dp.k
    one = product(ctx.a_fmt, ctx.b_fmt, 0)
    nan_a = ctx.a_fmt.canonical_nan
    active = np.zeros((2, k), bool)
    active[0, 0::2] = True  # one of each pair
    active[1, 1::2] = True
    a = np.full((2, k), one[0], np.uint32)
    b = np.full((2, k), one[1], np.uint32)
    if nan_a is not None:
        a[~active] = nan_a
    cs = Cases(a, b, np.zeros(2, np.uint32), active=active)
    w = ctx.run(cs)
    clean = Cases(np.where(active, a, 0), np.where(active, b, 0), np.zeros(2, np.uint32),
                  active=active)
    w0 = ctx.run(clean)
    if (w == w0).all():
        return Finding("sparsity", "found", "disabled positions are removed before special "
                       "values are classified: a NaN there does not reach D",
                       {"disabled_ignored": True})
    return Finding("sparsity", "failed", "a disabled position changes D", {"disabled_ignored": False})
