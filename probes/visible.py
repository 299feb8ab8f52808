"""visible: how much precision the output shows.

C = 2**e and one product 1.0 (lane 0): D differs from the D of C alone
while 1.0 is still visible below C's leading bit. The largest such e (every
smaller e visible too) is the visible precision: the output's fraction bits,
or the window when that is narrower. With C = -2**e the sum falls below a
power of two and gains one bit. The rounding step settles the output's
fraction bits and rounding with these numbers in hand.
"""

from __future__ import annotations

from tcprobe.models.words import exp_range, pow2, product

from .common import Batch, Finding, StepInfo

STEP = StepInfo(
    order=60, title="visible precision: C + a product below C's ulp", needs_layout=True,
    engine=True, fingerprint=True
)


def run(ctx) -> Finding:
    dp = ctx.dp
    p = product(ctx.a_fmt, ctx.b_fmt, 0)
    _, _, cmax = exp_range(ctx.c_fmt)
    top = min(cmax - 1, ctx.d_fmt.frac_bits + 8)
    bt = Batch(dp)
    rows = []
    for sign in (0, 1):
        for e in range(1, top + 1):
            c = pow2(ctx.c_fmt, e, sign)
            rows.append((sign, e, bt.add(f"C = {'-' if sign else ''}2^{e}, product 1", {0: p[:2]}, c),
                         bt.add(f"C = {'-' if sign else ''}2^{e} alone", {}, c)))
    w = ctx.run(bt.cases())
    seen = {0: [], 1: []}
    for sign, _, r, ref in rows:
        seen[sign].append(bool(w[r] != w[ref]))

    def run_len(flags):
        n = 0
        for f in flags:
            if not f:
                break
            n += 1
        return n

    v_pos, v_neg = run_len(seen[0]), run_len(seen[1])
    ev = []
    for sign, e, r, ref in rows:
        if (sign == 0 and e in (v_pos, v_pos + 1)) or (sign == 1 and e in (v_neg, v_neg + 1)):
            ev.append(bt.evidence(r, [w[r], w[ref]], "visible (D differs from C alone)"
                                  if w[r] != w[ref] else "invisible (D = C alone)"))
    status = "found" if v_pos < top else "partial"
    summary = (f"1.0 stays visible under C = 2^e up to e = {v_pos} (C = -2^e: e = {v_neg}): "
               f"{v_pos} fraction bits show at the output")
    return Finding("visible", status, summary, {"visible_bits": v_pos, "visible_bits_neg": v_neg},
                   ev)
