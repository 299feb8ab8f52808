"""slice: which words of the raw dump track the scalar result.

Every slot of A, B and C is filled with one value (x, y, c), so every D
element the instruction computes equals c + K x y whatever the layouts are.
Each fill is launched twice: the words that are identical across the
repeat for every fill and that follow the inputs together form the slice;
stale words differ between launches or ignore the inputs. Where no word
follows them (an accumulator with few carry bits wraps or saturates the K
equal products of every fill alike), the fills are launched again with C
scaled up to at least K x y, so that every sum needs one carry bit at most. Then one
replicated random K-vector through the documented layout checks that the
slice agrees on a real dot product.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.words import pow2, word

from .common import Evidence, Finding, StepInfo

STEP = StepInfo(order=20, title="output slice: which dump words carry D", xor_unprobed=True)

FILLS = ((0, 1, 0, 1, 0, 3, 0),  # (sign x, mag x, q x, mag y, q y, mag c, q c)
         (0, 3, -1, 1, 1, 1, -2),
         (1, 1, 1, 3, -1, 5, 0),
         (0, 1, -1, 1, -1, 7, -3))


def _c_above_products(k, mx, qx, my, qy, mc, qc) -> int:
    """The exponent of C's last bit scaled up (never down) until mc * 2**qc
    is at least the K equal products' sum k * mx * my * 2**(qx + qy)."""
    while mc << max(qc - qx - qy, 0) < (k * mx * my) << max(qx + qy - qc, 0):
        qc += 1
    return qc


def _fills(ctx, c_dominant: bool = False):
    """The fills' (x, y, c) words and their launch batch (each fill twice);
    ``c_dominant``: C at least the K products' sum (_c_above_products)."""
    t = ctx.tile()
    rows = []
    for n, (sx, mx, qx, my, qy, mc, qc) in enumerate(FILLS):
        x = word(ctx.a_fmt, sx, mx, qx)
        y = word(ctx.b_fmt, 0, my, qy)
        if c_dominant:
            qc = _c_above_products(ctx.dp.k, mx, qx, my, qy, mc, qc)
        c = word(ctx.c_fmt, 0, mc, qc)
        if x is None or y is None:  # narrow or integer formats: small whole numbers
            x = word(ctx.a_fmt, 0, n + 1, 0) or pow2(ctx.a_fmt, 0)
            y = word(ctx.b_fmt, 0, n + 2, 0) or pow2(ctx.b_fmt, 0)
        if c is None:
            c = word(ctx.c_fmt, 0, 3 + 2 * n, 0)
        rows.append((x, y, c))
    n = len(rows)
    a = np.array([[r[0]] * t.a_slots for r in rows], np.uint32)
    b = np.array([[r[1]] * t.b_slots for r in rows], np.uint32)
    c = ctx.c_fill([r[2] for r in rows])
    return rows, ctx.physical(np.vstack([a, a]), np.vstack([b, b]), np.vstack([c, c])), n


def run(ctx) -> Finding:
    if not ctx.raw:
        return Finding("slice", "skipped",
                       f"{ctx.device.name} has no raw mode: it returns one word per case, so "
                       "there is no dump to search")
    for c_dominant in (False, True):
        rows, batch, n = _fills(ctx, c_dominant)
        dump = ctx.launch(batch)
        first, second = dump[:n], dump[n:]
        stable = (first == second).all(axis=0)
        idx = np.flatnonzero(stable)
        if not len(idx):
            return Finding("slice", "failed", "no dump word is stable across a repeated launch")
        carry = _following_words(ctx, rows, first[:, stable].T, idx)
        if carry is not None:
            break
    else:
        return Finding("slice", "failed", "no dump word follows the inputs (nor with C above "
                       "the products' sum)")
    label = ctx.nominal.label
    ev = []
    for i, (x, y, c) in enumerate(rows):
        out = [int(first[i, s]) for s in carry[:3]]
        junk = [j for j in range(ctx.n_elements) if j not in set(carry.tolist())][:2]
        note = (f"D words ({', '.join(label(int(s)) for s in carry[:3])}, ...) agree"
                + ("".join(f"; not D: {label(j)} = {int(first[i, j]):#x} then {int(second[i, j]):#x}"
                           for j in junk[:1])))
        ev.append(Evidence("every slot filled, launched twice", {"all": x}, {"all": y}, c, out,
                           note))
    notes = []
    # a replicated random K-vector through the documented layout: the words
    # that keep the common value form the slice (rows whose operands the
    # layout overlaps read other lanes' values)
    from tcprobe.models.words import product

    from .common import Batch

    bt = Batch(ctx.dp)
    for j in range(4):
        lanes = {}
        for k in range(ctx.dp.k):
            p = product(ctx.a_fmt, ctx.b_fmt, int(ctx.rng.integers(-3, 4)),
                        int(ctx.rng.integers(0, 2)))
            if p:
                lanes[k] = p[:2]
        bt.add(f"random replicated K-vector {j + 1}", lanes, word(ctx.c_fmt, 0, 1, 0))
    cases = bt.cases()
    d = ctx.launch(ctx.nominal.with_slice(carry).pack(cases))[:, carry]
    keep = np.ones(len(carry), bool)
    c_one = int(word(ctx.c_fmt, 0, 1, 0))
    doc = np.isin(carry, ctx.nominal.elems)
    doc_agrees = doc.sum() == len(ctx.nominal.elems) and all(
        len(set(row[doc].tolist())) == 1 for row in d)
    for row in d:
        if doc_agrees:  # the documented slice agrees: its value is the reference
            ref = row[doc][0]
        else:  # else the most common value, leaving out rows that read zeros (= C)
            vals, cnt = np.unique(row[row != c_one], return_counts=True)
            ref = vals[np.argmax(cnt)] if len(vals) else None
        keep &= (row == ref) if ref is not None else False
    slice_ = carry[keep] if keep.any() else carry
    for j in range(2):
        ev.append(bt.evidence(j, d[j, keep][:3] if keep.any() else d[j, :3],
                              f"{int(keep.sum())} of {len(carry)} D words agree"))
    if keep.all():
        notes.append("a replicated K-vector through the documented layout gives one word in "
                     "every D word")
    elif keep.any():
        notes.append(f"{len(carry)} words hold D, {int(keep.sum())} of them one value for a "
                     "replicated K-vector through the documented layout (the others read rows "
                     "whose operand slots other rows share)")
    else:
        notes.append("a replicated K-vector through the documented layout gives no common "
                     "word: the layout step must find the real layout")
    documented = np.array_equal(np.sort(slice_), np.sort(ctx.nominal.elems))
    ctx.harness = ctx.nominal if documented else ctx.nominal.with_slice(slice_)
    where = "as documented" if documented else "differs from the documented slice"
    summary = (f"{len(slice_)} of {ctx.n_elements} accumulator elements carry D ({where}): "
               f"{_ranges(slice_, label)}")
    return Finding("slice", "found", summary,
                   {"slice": [int(s) for s in slice_], "slice_words": len(slice_),
                    "d_elements": [int(s) for s in carry], "documented": bool(documented)},
                   ev, notes)


def _following_words(ctx, rows, cols, idx):
    """The dump elements (of the stable ones, ``idx``, with their words across
    the fills, ``cols``) of the largest group that returned one word per fill
    and follows the inputs: not a stale word that stays put, and not a word
    that only echoes C (accumulator slots the MMA does not write); None if
    no group does."""
    groups, inv, counts = np.unique(cols, axis=0, return_inverse=True, return_counts=True)
    c_el = np.array([r[2] for r in rows], np.uint32) & np.uint32(ctx.nominal.elem_mask)
    if ctx.nominal.halves == 2:
        c_el = c_el & np.uint32(0xFFFF)
    follows = np.array([len(set(g.tolist())) > 1 and not np.array_equal(g, c_el)
                        for g in groups])
    best = int(np.argmax(np.where(follows, counts, -1)))
    if not follows[best]:
        return None
    return idx[inv.ravel() == best]  # every element that holds D of a constant fill


def _ranges(idx, label) -> str:
    idx = [int(i) for i in idx]
    if len(idx) <= 6:
        return ", ".join(label(i) for i in idx)
    return f"{label(idx[0])}, {label(idx[1])}, ... {label(idx[-1])}"
