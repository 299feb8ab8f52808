"""scale: block scales and the block-scaled accumulator (block-scaled kinds).

The engine steps see one window; a block-scaled datapath folds each scale
pair into its products and anchors the quantum on two things (tcgen05
write-up, "Block-scaled: the shared window grows a floor"):
q = max(R - product window, S - scale floor offset), R the largest scaled
product raw exponent, S the largest scale-pair raw exponent. This step:

1. blocks: each scale factor of A and of B set to 2 alone, with one lane
   holding 1*1: the lanes whose product doubles are that scale's block;
2. exactness: scale codes over the format's range (every ue4m3 significand)
   times a product 1.5 give exactly the word of C alone = that value;
3. the quantum: +-2**E cancel in two lanes of one scale block (scale pair
   2**S), a third product 2**y sits in a lower-scale block (or lower in the
   same one) and C = 0; 2**y survives exactly while y >= q. The thresholds
   over several (E - S, S) give the product window and the scale floor;
4. product groups: pairs of half-quantum products at lane distances 1, 2,
   4, ... sum to one quantum only where the datapath adds them exactly
   before the cut;
5. C: C = 2**c cancelled by products at, or just below, its exponent (C
   outranks every product), or C between the products (it outranks some
   groups), a small survivor swept below: C's own window, a C-dominant
   merge of whole blocks, or a C-relative cut of the groups C outranks;
6. floors at tiny scales (a lowest quantum, a floor on lower-scale groups
   of a subnormal result); specials, the zero of C = -0, overflow.

Stages 3-6 make candidate values from the thresholds and keep those whose
block-scaled model (models/tcgen05_scaled.py, ScaledParams) reproduces every
device word; a key no case can tell is reported as undetermined with the
reason (and the value the model uses). The words are compared with device
words of C alone, or with a model's; the step never computes one itself.
"""


from __future__ import annotations

import numpy as np

from tcprobe.models.cases import Cases

from ..common import Finding, StepInfo, complete
from .blocks import check_exact, find_blocks
from .c_merge import c_mechanism
from .floors import floors
from .geometry import EXACT, Geometry, consistent
from .groups import product_groups
from .quantum import quantum
from .specials import specials

STEP = StepInfo(order=130, title="block scales", needs_layout=True)


def run(ctx) -> Finding:
    dp = ctx.dp
    if not dp.block_scaled:
        return Finding("scale", "skipped", f"{dp.id} is not block-scaled")
    values, ev, notes = {"undetermined": {}}, [], []
    all_cases, all_words = [], []

    # 1. blocks
    blocks, bev, why = find_blocks(ctx)
    ev += bev
    if blocks is None:
        return Finding("scale", "failed", why, values, ev)
    B = len(blocks[0])
    values["scale_block"] = B
    values["scale_blocks"] = [[b[0], b[-1]] for b in blocks]

    # 2. exactness
    ok, n_codes, xev, xnote = check_exact(ctx, blocks)
    ev += xev
    values["scales_exact"] = ok
    if not ok:
        return Finding("scale", "failed", f"a scale does not multiply its products exactly ({xnote})",
                       values, ev)

    geo = Geometry(ctx, blocks)
    base = EXACT

    # 3. the quantum: product window and scale floor
    q = quantum(ctx, geo)
    all_cases.append(q["cases"])
    all_words.append(q["words"])
    ev += q["evidence"]
    if not q["ok"]:
        return Finding("scale", "failed", "no product window and scale floor reproduce the "
                       f"{len(q['cases'])} cancellation sweeps", values, ev, notes)
    P, floor = q["P"], q["O"]
    values.update({k: v for k, v in q["values"].items()})
    values["undetermined"].update(q["undetermined"])
    assumed = dict(q["assumed"])
    base = base.replace(product_window=P if P is not None else assumed.get("product_window"),
                        scale_window=floor)

    # 4. product groups
    g = product_groups(ctx, geo, q, base)
    if g["cases"] is not None:
        all_cases.append(g["cases"])
        all_words.append(g["words"])
        ev += g["evidence"]
    values["undetermined"].update(g["undetermined"])
    assumed.update(g["assumed"])
    if g["group"] is None and not g["assumed"]:
        return Finding("scale", "failed", "no product group size reproduces the carry pairs",
                       values, ev, notes)
    values["product_group"] = g["group"]
    base = base.replace(product_group=g["group"] or g["assumed"]["product_group"])

    # 5. C
    cres = c_mechanism(ctx, geo, q, base)
    all_cases.append(cres["cases"])
    all_words.append(cres["words"])
    ev += cres["evidence"]
    if cres["params"] is None:
        return Finding("scale", "failed", "no C window, C-dominant merge or C-relative group cut "
                       "reproduces the cases with C", values, ev, notes + cres["notes"])
    values.update(cres["values"])
    values["undetermined"].update(cres["undetermined"])
    assumed.update(cres["assumed"])
    notes += cres["notes"]
    base = base.replace(**cres["params"])

    # 6. floors, specials, zero of C, overflow
    fl = floors(ctx, geo, base)
    if fl["cases"] is not None:
        all_cases.append(fl["cases"])
        all_words.append(fl["words"])
    values.update(fl["values"])
    values["undetermined"].update(fl["undetermined"])
    notes += fl["notes"]
    base = base.replace(**fl["params"])
    sp = specials(ctx, geo, blocks, base)
    all_cases.append(sp["cases"])
    all_words.append(sp["words"])
    ev += sp["evidence"]
    values.update(sp["values"])
    values["undetermined"].update(sp["undetermined"])
    base = base.replace(**sp["params"])

    # every case of the step against the assembled model
    cs = Cases.concat([complete(dp, c) for c in all_cases])
    words = np.concatenate(all_words)
    values["params"] = base.as_dict()
    if assumed:
        values["assumed"] = assumed
    good = consistent(ctx, cs, words, base, {"all": {}})
    status = "found" if good else "partial"
    if not good:
        notes.append("the assembled block-scaled model misses some of this step's cases")
    bnd = values["undetermined_bounds"]
    pw = ("product window " + (f"{P} bits" if P is not None else
                               f"at least {bnd.get('product_window')} bits (not observable beyond)"))
    sf = ("scale floor " + (f"S - {floor}" if floor is not None else
                            "none" + (f" (an offset of {bnd['scale_window']}+ would not show)"
                                      if bnd.get("scale_window") else "")))
    summary = (f"each of the {dp.n_scales} scale factors of A and of B covers {B} K positions and "
               f"multiplies their products exactly ({n_codes} codes); quantum = max(R - window, "
               f"S - offset): {pw}, {sf}; product groups of {base.product_group}; "
               f"{cres['text']}; {len(cs)} cases")
    return Finding("scale", status, summary, values, ev, notes)
