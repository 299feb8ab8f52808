"""Stages 1-2: which K positions each scale factor covers, and whether a
scale multiplies its products exactly (device words against device words)."""

from __future__ import annotations

from tcprobe.models.formats import decode_scalar, get_format
from tcprobe.models.words import pow2, product, word

from ..common import Batch


def find_blocks(ctx):
    dp = ctx.dp
    fa, fb = ctx.a_fmt, ctx.b_fmt
    one = product(fa, fb, 0)
    n = dp.n_scales
    two = pow2(dp.scale_type, 1)
    rows = Batch(ctx.dp, show_scales=True)
    labels = []
    for k in range(dp.k):  # lane k alone, one scale factor 2
        for j in range(n):
            for side in ("a", "b"):
                s = {j: two}
                rows.add(f"lane {k} = 1*1, scale_{side}[{j}] = 2", {k: one[:2]},
                         None, s if side == "a" else None, s if side == "b" else None)
                labels.append((k, j, side))
    r1 = rows.add("C = 1 alone", {}, word(ctx.c_fmt, 0, 1, 0))
    r2 = rows.add("C = 2 alone", {}, word(ctx.c_fmt, 0, 1, 1))
    w = ctx.run(rows.cases())
    cover = {}
    odd = []
    for (k, j, side), x in zip(labels, w[:len(labels)], strict=True):
        if x == w[r2]:
            cover.setdefault((side, j), []).append(k)
        elif x != w[r1]:
            odd.append((k, j, side))
    ev = [rows.evidence(r1, [w[r1]]), rows.evidence(r2, [w[r2]])]
    for i in range(min(2 * n, len(labels))):
        ev.append(rows.evidence(i, [w[i]], "doubled: lane in the block" if w[i] == w[r2]
                                else "unchanged: lane outside the block"))
    if odd:
        return None, ev, f"{len(odd)} lane/scale cases are neither 1 nor 2 (first: {odd[0]})"
    blocks = [cover.get(("a", j), []) for j in range(n)]
    if any(cover.get(("b", j), []) != blocks[j] for j in range(n)):
        return None, ev, "the scales of A and of B cover different lanes"
    size = len(blocks[0])
    ok = (size > 0 and all(b == list(range(j * size, (j + 1) * size)) for j, b in enumerate(blocks))
          and size * n == dp.k)
    if not ok:
        return None, ev, f"the scale blocks are not aligned runs of K: {blocks}"
    return blocks, ev, ""


def check_exact(ctx, blocks):
    """Scale codes times a product 1.5 (lane 0 of each block) against C alone."""
    dp = ctx.dp
    sf = get_format(dp.scale_type)
    p = product(ctx.a_fmt, ctx.b_fmt, 0, 0, (3, 1), (1, 0)) or product(ctx.a_fmt, ctx.b_fmt, 0)
    m = 3 if p == product(ctx.a_fmt, ctx.b_fmt, 0, 0, (3, 1), (1, 0)) else 2
    codes = []
    if sf.kind.name == "E8M0":
        codes = [pow2(sf, e) for e in (-40, -17, -5, -1, 1, 3, 9, 23, 40)]
    else:  # every significand at 2**0, a few exponents, a subnormal
        codes = [word(sf, 0, 8 + f, -3) for f in range(8)]
        codes += [word(sf, 0, 13, e) for e in (-6, -2, 4, 7)] + [word(sf, 0, 5, -9)]
    codes = [c for c in codes if c is not None]
    rows = Batch(ctx.dp, show_scales=True)
    pairs = []
    for j, blk in enumerate(blocks[:2]):
        lane = blk[0]
        for code in codes:
            _, _, sig, lsb, _ = decode_scalar(int(code), sf.spec)
            want = word(ctx.c_fmt, 0, m * sig, lsb - 1)
            if want is None:
                continue
            for side in ("a", "b"):
                s = {j: code}
                r = rows.add(f"lane {lane} = {m}/2, scale_{side}[{j}] = {code:#x}", {lane: p[:2]},
                             None, s if side == "a" else None, s if side == "b" else None)
                pairs.append((r, rows.add("C alone = the scaled product", {}, want)))
        # both scales at once: their product multiplies
        code_a, code_b = codes[len(codes) // 2], codes[-1]
        _, _, s1, l1, _ = decode_scalar(int(code_a), sf.spec)
        _, _, s2, l2, _ = decode_scalar(int(code_b), sf.spec)
        want = word(ctx.c_fmt, 0, m * s1 * s2, l1 + l2 - 1)
        if want is not None:
            r = rows.add(f"lane {lane} = {m}/2, scale_a = {code_a:#x}, scale_b = {code_b:#x}",
                         {lane: p[:2]}, None, {j: code_a}, {j: code_b})
            pairs.append((r, rows.add("C alone = the scaled product", {}, want)))
    w = ctx.run(rows.cases())
    bad = [(r, ref) for r, ref in pairs if w[r] != w[ref]]
    ev = []
    for r, ref in (bad or pairs)[:3]:
        ev.append(rows.evidence(r, [w[r], w[ref]], "= C alone" if w[r] == w[ref] else "differs"))
    note = "" if not bad else rows.rows[bad[0][0]][0]
    return not bad, len(codes), ev, note
