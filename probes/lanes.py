"""lanes: activate one product lane at a time, and C alone.

Each lane k alone (a_k = x, b_k = y, every other lane and C zero) must give
the same word as C = x*y alone: every lane contributes exactly its product,
once, wherever it sits. This is what makes the replication trick valid.
"""

from __future__ import annotations

from tcprobe.models.words import product, word

from .common import Batch, Finding, StepInfo

STEP = StepInfo(
    order=30, title="lane isolation: every lane and C alone, position independence", engine=True,
    xor_unprobed=True, also_on=("mfma", "integer", "block_scaled")
)

SIGNATURES = ((0, (1, 1), (0, 0), 0), (1, (3, 1), (1, 0), 1))  # (sign, mant, frac, exp)
# AMD v_mfma: powers of two only (a truncated design with F = 0 keeps one bit
# of each product, and floors C to one: -1.5 alone and as C give other words)
MFMA_SIGNATURES = ((0, (1, 1), (0, 0), 0), (1, (1, 1), (0, 0), 1))


def run(ctx) -> Finding:
    dp = ctx.dp
    bt = Batch(dp)
    refs = []
    for sign, mant, frac, e in MFMA_SIGNATURES if dp.family == "mfma" else SIGNATURES:
        p = product(ctx.a_fmt, ctx.b_fmt, e, sign, mant, frac)
        value = word(ctx.c_fmt, sign, mant[0] * mant[1], e - frac[0] - frac[1])
        if p is None or value is None:  # unsigned inputs have no negative product
            continue
        rows = [bt.add(f"lane {k} alone", {k: p[:2]}) for k in range(dp.k)]
        ref = bt.add("C alone", {}, value)
        refs.append((rows, ref, value))
    words, agree = ctx.run_checked(bt.cases())
    bad, ev = [], []
    for rows, ref, value in refs:
        c_ok = bool(words[ref] == value)
        ev.append(bt.evidence(ref, [words[ref]], "C alone passes through" if c_ok
                              else "C alone does not come back unchanged"))
        # a product of two significant bits beside a power of two: where the
        # power of two passes in every lane and this one gives one word in
        # every lane, a window narrower than the product cuts it alike
        # everywhere (a 0-bit window keeps its top bit), and C alone does not
        alike = value != refs[0][2] and len({int(words[r]) for r in rows}) == 1
        for k, r in enumerate(rows):
            if (words[r] != words[ref] and not alike) or not agree[r]:
                bad.append(k)
        for r in (rows[0], rows[-1]):
            ev.append(bt.evidence(r, [words[r]], "same word as C alone" if words[r] == words[ref]
                                  else "differs from C alone"))
    bad = sorted(set(bad))
    for k in bad[:4]:
        r = refs[0][0][k]
        ev.append(bt.evidence(r, [words[r]], "differs from C alone" if agree[r]
                              else "the slice words disagree"))
    if not bad:
        return Finding("lanes", "found",
                       f"each of the {dp.k} lanes alone contributes exactly its product, the same "
                       "in every position; C alone passes through",
                       {"lanes_ok": list(range(dp.k))}, ev)
    where = "with the documented layout" if ctx.raw and ctx.harness is ctx.nominal else ""
    # on a raw device this is a finding about the documented layout, which the
    # layout step then replaces; in result mode nothing can fix it
    return Finding("lanes", "partial" if ctx.raw else "failed",
                   f"{len(bad)} of {dp.k} lanes do not contribute their product {where} "
                   f"(lanes {', '.join(map(str, bad[:8]))}{'...' if len(bad) > 8 else ''})",
                   {"lanes_bad": bad}, ev,
                   ["on a raw device the layout step measures where each slot goes"] if ctx.raw
                   else [])
