"""visible: how much precision the output shows.

C = 2**e and one product 1.0 (lane 0): D differs from the D of C alone
while 1.0 is still visible below C's leading bit. The largest such e (every
smaller e visible too) is the visible precision: the output's fraction bits,
or the window when that is narrower. With C = -2**e the sum falls below a
power of two and gains one bit. The rounding step settles the output's
fraction bits and rounding with these numbers in hand.

Where C cannot reach the exponents the probe needs (C converted on entry to
a narrow type, fp4/fp6/fp8: the cinput step's view), the roles swap: C =
+2**c, a value C's type holds, and one product +-2**(c+e) in lane 0; the
same sums, scaled (a term below the sum's leading bit shows or not).
"""

from __future__ import annotations

from tcprobe.models.words import exp_range, pow2, product

from .common import Batch, Finding, StepInfo

STEP = StepInfo(
    order=60, title="visible precision: C + a product below C's ulp", needs_layout=True,
    engine=True, fingerprint=True
)


def _swapped(ctx, want: int):
    """(C's exponent c, the rows' product exponents reach) where C is small and
    the products large: the largest run of products 2**(c+e), e = 1.., over
    the exponents c C's type and the output hold (None where no product)."""
    _, cmin, cmax = exp_range(ctx.c_fmt)
    _, dmin, dmax = exp_range(ctx.d_fmt)
    best = None
    for c in range(max(cmin, dmin), min(cmax, dmax - 1) + 1):
        n = 0
        while n < want and c + n + 1 < dmax and product(ctx.a_fmt, ctx.b_fmt, c + n + 1) \
                is not None and product(ctx.a_fmt, ctx.b_fmt, c + n + 1, 1) is not None:
            n += 1
        if n and (best is None or n > best[1]):
            best = (c, n)
    return best


def run(ctx) -> Finding:
    dp = ctx.dp
    p = product(ctx.a_fmt, ctx.b_fmt, 0)
    _, _, cmax = exp_range(ctx.c_fmt)
    want = ctx.d_fmt.frac_bits + 8
    top = min(cmax - 1, want)
    swap = _swapped(ctx, want) if top < min(want, ctx.d_fmt.frac_bits + 1) else None
    if swap is not None and swap[1] <= top:
        swap = None
    bt = Batch(dp)
    rows = []
    if swap is not None:  # C small, products large
        c0, top = swap
        for sign in (0, 1):
            for e in range(1, top + 1):
                q = product(ctx.a_fmt, ctx.b_fmt, c0 + e, sign)
                c = pow2(ctx.c_fmt, c0)
                name = f"{'-' if sign else ''}2^{c0 + e}"
                rows.append((sign, e, bt.add(f"C = 2^{c0}, product {name}", {0: q[:2]}, c),
                             bt.add(f"product {name} alone", {0: q[:2]})))
    else:
        for sign in (0, 1):
            for e in range(1, top + 1):
                c = pow2(ctx.c_fmt, e, sign)
                rows.append((sign, e, bt.add(f"C = {'-' if sign else ''}2^{e}, product 1",
                                             {0: p[:2]}, c),
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
    if swap is not None:
        summary = (f"C = 2^{swap[0]} stays visible under a product 2^({swap[0]}+e) up to e = "
                   f"{v_pos} (-2^({swap[0]}+e): e = {v_neg}; C's type reaches no higher): "
                   f"{v_pos} fraction bits show at the output")
    return Finding("visible", status, summary, {"visible_bits": v_pos, "visible_bits_neg": v_neg},
                   ev)
