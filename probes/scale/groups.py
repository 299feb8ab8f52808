"""Stage 4: product groups summed exactly before the cut."""

from __future__ import annotations

from ..common import Batch
from .geometry import consistent


def product_groups(ctx, geo, q, base):
    """Pairs of half-quantum products (a quantum together) at lane distances
    1, 2, 4, ...: they survive only where a group sums them exactly first."""
    out = {"cases": None, "words": None, "evidence": [], "undetermined": {}, "assumed": {},
           "group": None}
    B = len(geo.blocks[0])
    sizes = [g for g in (1, 2, 4, 8, 16, 32, 64) if g <= B and B % g == 0]
    small_elems = all(f.name in ("e2m1",) for f in (geo.fa, geo.fb))
    if not small_elems:
        out["assumed"] = {"product_group": 1}
        out["undetermined"]["product_group"] = (
            f"{geo.fa.name} x {geo.fb.name}: the block-scaled model sums groups exactly only for "
            "e2m1 elements; products are cut one by one")
        return out
    if not q["sweeps"]:
        out["assumed"] = {"product_group": 1}
        out["undetermined"]["product_group"] = "no quantum threshold to place half quanta at"
        return out
    i, j, _ = q["trio"]
    rows = Batch(ctx.dp, show_scales=True)
    multi = len(geo.blocks) >= 2
    low = geo.blocks[1] if multi else geo.blocks[0]
    for E, s0raw, t, rel, s0 in q["sweeps"]:
        plus, minus, sc0 = geo.elem(rel, 0), geo.elem(rel, 1), geo.scales(s0)
        for parts, y in ((2, t - 1), (4, t - 2)):
            term = geo.small_term(y, s0, s0raw, sc0, multi)
            if term is None:
                continue
            el, scale_a, scale_b = term
            for d in sizes:
                lanes_ = [low[0] + n * d for n in range(parts)]
                if lanes_[-1] >= low[0] + B or lanes_[-1] > low[-1]:
                    continue
                if (not multi) and (i in lanes_ or j in lanes_):
                    continue
                if not ctx.co_active((i, j, *lanes_)):
                    continue
                rows.add(f"lanes {i},{j}: +-2^{E}; lanes {lanes_}: 2^{y} each ({parts} make 2^{t})",
                         {i: plus, j: minus, **{k: el for k in lanes_}}, None, scale_a, scale_b)
        if len(rows) >= 12:
            break
    if not len(rows):
        out["assumed"] = {"product_group": 1}
        out["undetermined"]["product_group"] = "no lanes hold half quanta below the threshold"
        return out
    cases = rows.cases()
    w = ctx.run(cases)
    ok = consistent(ctx, cases, w, base, {g: {"product_group": g} for g in sizes})
    out["cases"], out["words"] = cases, w
    for r in range(min(3, len(rows))):
        out["evidence"].append(rows.evidence(r, [w[r]]))
    if len(ok) == 1:
        out["group"] = ok[0]
    elif ok:
        out["undetermined"]["product_group"] = (
            f"product groups of {', '.join(map(str, ok))} agree on every case here")
        out["assumed"] = {"product_group": ok[0]}
    return out
