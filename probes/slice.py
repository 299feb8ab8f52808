"""slice: which words of the raw dump track the scalar result.

Every slot of A, B and C is filled with one value (x, y, c), so every D
element the instruction computes equals c + K x y whatever the layouts are.
Each fill is launched twice: the words that are identical across the
repeat for every fill and that follow the inputs together form the slice;
stale words differ between launches or ignore the inputs. Then one
replicated random K-vector through the documented layout checks that the
slice agrees on a real dot product.
"""

from __future__ import annotations

import numpy as np

from tcprobe.devices.base import PhysicalBatch

from .common import Evidence, Finding, pow2, word

FILLS = ((0, 1, 0, 1, 0, 3, 0),  # (sign x, mag x, q x, mag y, q y, mag c, q c)
         (0, 3, -1, 1, 1, 1, -2),
         (1, 1, 1, 3, -1, 5, 0),
         (0, 1, -1, 1, -1, 7, -3))


def _fills(ctx):
    t = ctx.tile()
    rows = []
    for n, (sx, mx, qx, my, qy, mc, qc) in enumerate(FILLS):
        x = word(ctx.a_fmt, sx, mx, qx)
        y = word(ctx.b_fmt, 0, my, qy)
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
    return rows, PhysicalBatch(np.vstack([a, a]), np.vstack([b, b]), np.vstack([c, c])), n


def run(ctx) -> Finding:
    if not ctx.raw:
        return Finding("slice", "skipped",
                       f"{ctx.device.name} has no raw mode: it returns one word per case, so "
                       "there is no dump to search")
    t = ctx.tile()
    rows, batch, n = _fills(ctx)
    dump = ctx.launch(batch)
    first, second = dump[:n], dump[n:]
    stable = (first == second).all(axis=0)
    # group the stable words by what they returned across the fills
    cols = first[:, stable].T
    idx = np.flatnonzero(stable)
    if not len(idx):
        return Finding("slice", "failed", "no dump word is stable across a repeated launch")
    groups, inv, counts = np.unique(cols, axis=0, return_inverse=True, return_counts=True)
    # words that follow the inputs (stale words that stay put do not)
    follows = np.array([len(set(g.tolist())) > 1 for g in groups])
    best = int(np.argmax(np.where(follows, counts, -1)))
    slice_ = idx[inv.ravel() == best]
    varies = bool(follows[best])
    label = ctx.nominal.label if ctx.nominal else (lambda i: f"w{i}")
    ev = []
    for i, (x, y, c) in enumerate(rows):
        out = [int(first[i, s]) for s in slice_[:3]]
        junk = [j for j in range(ctx.n_elements) if j not in set(slice_.tolist())][:2]
        note = (f"slice words ({', '.join(label(int(s)) for s in slice_[:3])}, ...) agree"
                + ("".join(f"; stale {label(j)}: {int(first[i, j]):#x} then {int(second[i, j]):#x}"
                           for j in junk[:1])))
        ev.append(Evidence(f"every slot filled, launched twice", {"all": x}, {"all": y}, c, out,
                           note))
    notes = []
    status = "found" if varies else "failed"
    documented = ctx.nominal is not None and np.array_equal(np.sort(slice_),
                                                            np.sort(ctx.nominal.elems))
    # a real dot product through the documented layout
    if ctx.nominal is not None:
        h = ctx.nominal.with_slice(slice_)
        from .common import Batch, product

        bt = Batch(ctx.dp)
        for j in range(2):
            lanes = {}
            for k in range(ctx.dp.k):
                p = product(ctx.a_fmt, ctx.b_fmt, int(ctx.rng.integers(-3, 4)),
                            int(ctx.rng.integers(0, 2)))
                if p:
                    lanes[k] = p[:2]
            bt.add(f"random replicated K-vector {j + 1}", lanes, word(ctx.c_fmt, 0, 1, 0))
        cases = bt.cases()
        d = ctx.launch(h.pack(cases))
        agree = (d[:, slice_] == d[:, slice_[:1]]).all()
        for j in range(len(bt)):
            ev.append(bt.evidence(j, d[j, slice_[:3]],
                                  "slice words agree" if agree else "slice words disagree"))
        if agree:
            notes.append("a replicated K-vector through the documented layout gives one word "
                         "across the slice")
        else:
            notes.append("a replicated K-vector through the documented layout does not agree "
                         "across the slice: the layout step must find the real layout")
        ctx.harness = ctx.nominal if documented else h
    where = "as documented" if documented else "differs from the documented slice"
    summary = (f"{len(slice_)} of {ctx.n_elements} accumulator elements carry D ({where}): "
               f"{_ranges(slice_, label)}")
    return Finding("slice", status, summary,
                   {"slice": [int(s) for s in slice_], "slice_words": len(slice_),
                    "documented": bool(documented)}, ev, notes)


def _ranges(idx, label) -> str:
    idx = [int(i) for i in idx]
    if len(idx) <= 6:
        return ", ".join(label(i) for i in idx)
    return f"{label(idx[0])}, {label(idx[1])}, ... {label(idx[-1])}"
