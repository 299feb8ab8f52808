"""The rounding step's last designs: blocks chained through a type that keeps
fewer fraction bits than the output (probes/rounding.py's ``_designs``)."""

from __future__ import annotations

from tcprobe.models.engine import PARAM, ROUNDINGS
from tcprobe.models.formats import get_format

INTER_TYPES = PARAM["inter_type"].choices


def narrow_inters(ctx, tried) -> list[dict]:
    """Last of all, blocks chained through a type that keeps fewer fraction
    bits than the output (fp8 under f16 or f32, bf16 under f16: every type
    engine.PARAMS allows for ``inter_type`` not tried above), with each
    rounding and the type's own bits or fewer, and with a saturated overflow
    too. The visible step read such a
    chain's bits as the output's (C passes the first block), so the plain
    candidates miss; the design step reads the type's range apart."""
    d = ctx.d_fmt
    seen = {i.get("inter_type") for i in tried}
    types = [t for t in INTER_TYPES if t not in seen and t != d.name
             and get_format(t).frac_bits < d.frac_bits]
    base = [{"inter_type": t, "inter_rounding": r} for t in types for r in ROUNDINGS]
    base += [{"inter_type": t, "inter_rounding": r, "inter_frac_bits": b} for t in types
             for b in range(get_format(t).frac_bits - 1, 0, -1) for r in ROUNDINGS]
    out = base + [{**over, "overflow": "saturate"} for over in base
                  if ctx.value("overflow") is None]
    # the block step orders blocks by ties at the output's bits, which a type
    # keeping fewer bits rounds off in either order: the blocks found, in the
    # reverse order, too (where that is not K's own order)
    blocks = ctx.value("blocks") or []
    back = [k for b in reversed(blocks) for k in b]
    if len(blocks) > 1 and back != list(range(ctx.dp.k)):
        turn = {"block_size": ctx.params().block_size, "k_order": tuple(back)}
        out += [{**over, **turn} for over in out]
    return out
