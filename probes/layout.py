"""layout: the operand layout the device really reads, from signatures.

Wrong layouts still execute and even return K for all-ones inputs; only
isolated-lane signatures tell. On the raw dump:

1. references: C = n alone gives the word of the count n;
2. each A slot alone (1.0, every B slot 1.0, C = 0): which slice words read
   it, and how often; the same for each B slot, and for each C slot (C = 1
   alone) which word it feeds;
3. pairing: A slots read by no common word are lit together, and B is lit
   with bit i of each B slot's index, so each word spells, bit by bit, the
   B slot its A slot is multiplied with;
4. lanes: pairs sharing an A or a B slot are one lane; each lane takes the
   name of the documented lane its A slots hold (else B's, else its order);
5. proof: with the measured harness every lane alone contributes exactly its
   product (the lanes step's test).

Its harness replaces the documented one for every later step.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.words import pow2, product, word, zero
from tcprobe.tiles.harness import Harness, HarnessError
from tcprobe.tiles.layout import core_matrix_layout
from tcprobe.tiles.spec import PhysicalBatch

from .common import Batch, Evidence, Finding, StepInfo

STEP = StepInfo(order=40, title="operand layout: what each slot feeds", xor_unprobed=True)


def _physical(ctx, a, b, c, meta=None) -> PhysicalBatch:
    """Tiles with unit scales (block-scaled) and ``meta`` (sparse: default,
    every lane the first legal selector of each chunk)."""
    return ctx.physical(a, b, c, meta=None if meta is None else np.repeat(
        np.atleast_2d(meta), len(a), axis=0))


def _counts(dump_slice, table: dict) -> np.ndarray:
    out = np.full(dump_slice.shape, -1, np.int64)
    for w, n in table.items():
        out[dump_slice == w] = n
    return out


def _count_table(words: list) -> dict:
    """{word: n} for the references C = n alone (``words[n]``), keeping the
    counts 0, 1, 2, ... up to the first whose word another count shares (an
    output that keeps few bits rounds large counts together)."""
    table = {}
    for n, w in enumerate(words):
        if words.count(w) > 1:
            break
        table[w] = n
    return table


def _color(reads_of_slot: dict, slots_of_word: list) -> dict:
    """Greedy colouring: slots read by a common word get different colours."""
    color = {}
    for s, words in reads_of_slot.items():
        used = {color[o] for w in words for o in slots_of_word[w] if o in color}
        c = 0
        while c in used:
            c += 1
        color[s] = c
    return color


class _Union:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, x, y):
        self.parent[self.find(x)] = self.find(y)


def run(ctx) -> Finding:
    if not ctx.raw:
        return Finding("layout", "skipped",
                       f"{ctx.device.name} has no raw mode: operands go in as logical cases, "
                       "there is no physical layout to find")
    sl = ctx.require("slice")
    sub = np.asarray(ctx.harness.elems)
    sup = np.asarray(sl.values.get("d_elements", sub))
    if len(sup) > len(sub):
        # every word that holds D first; if its reads conflict (rows whose slots
        # other rows share), the words that agreed under replication
        saved = ctx.harness
        f = _measure(ctx, sup)
        if f.status == "found":
            f.notes.insert(0, f"measured on all {len(sup)} words that hold D")
            return f
        ctx.harness = saved
        f2 = _measure(ctx, sub)
        f2.notes.insert(0, f"on all {len(sup)} words that hold D: {f.summary}; measured on the "
                           f"{len(sub)} that agree under replication")
        return f2
    return _measure(ctx, sub)


def _measure(ctx, S) -> Finding:
    """The layout that slice elements ``S`` read (see the module doc). A
    sparse datapath is measured under two metadata settings whose kept
    positions complement each other (the first and last legal selection of
    every chunk): the A slots hold K/2 stored values, and each setting pairs
    them with half of B's K positions."""
    dp = ctx.dp
    S = np.asarray(S)
    W = len(S)
    ev, notes = [], []

    # 1. count references
    table = _references(ctx, S, notes)
    if isinstance(table, Finding):
        return table
    # C: one tile per C element
    c_read = _c_reads(ctx, S, table)
    if isinstance(c_read, Finding):
        return c_read
    measured = []
    for meta, pos in _settings(ctx):
        r = _pairs(ctx, S, table, meta)
        if isinstance(r, str):
            return Finding("layout", "failed", r)
        measured.append((r, pos))
    ev += measured[0][0][2]

    # 4. lane names: by A's documented lanes (else B's, else order); components with
    # one name but disjoint words are the same lane of independent MMAs (V100's quad pairs)
    nominal = ctx.nominal
    strategies = _namings(dp, nominal)
    if dp.sparse:
        notes.append("sparse: A holds K/2 stored values; B's positions measured under two "
                     "metadata settings that keep complementary halves (documented selector "
                     "meaning; the sparsity step measures it)")
    why = "no lane naming fits"
    last_proof = []
    found = None
    named_by = ""
    for strategy in strategies:
        cand, named_by, why_not = _candidate(ctx, S, measured, c_read, strategy)
        if cand is None:
            why = why_not
            continue
        # 5. proof with the measured harness: every lane alone = its product
        bad, proof = _prove(ctx, cand)
        if bad:
            why = (f"with the measured layout lanes {bad[:8]} still do not contribute their "
                   "product")
            last_proof = proof
            continue
        found = cand
        ev += proof
        break
    if found is None:
        return Finding("layout", "failed", why, {}, ev + last_proof)
    ctx.harness = found
    return _verdict(ctx, found, nominal, c_read, named_by, W, ev, notes)


def _references(ctx, S, notes):
    """The words C = n alone gives (n = 0 .. K + 1): word -> count, or a failed
    Finding where 0, 1, 2 are not told apart."""
    dp, t = ctx.dp, ctx.tile()
    K = dp.k
    za, zb = zero(ctx.a_fmt), zero(ctx.b_fmt)
    refs = [word(ctx.c_fmt, 0, n, 0) for n in range(K + 2)]
    d = ctx.launch(_physical(ctx, np.full((K + 2, t.a_slots), za), np.full((K + 2, t.b_slots), zb),
                             ctx.c_fill(refs)))
    words = [int(d[n, S[0]]) for n in range(K + 2)]
    table = _count_table(words)
    if len(table) == 2 and words[2] not in words[:2]:
        # a window of 0 bits (RZ) cuts 3 to 2: the word of 2 stands for "2
        # or more" (the layout's proof, every lane alone its product, checks it)
        table[words[2]] = 2
        notes.append("C = 2 and C = 3 alone give the same word (the window keeps no bit "
                     "below the anchor): a count read as 2 may be more")
    if any(n not in table.values() for n in range(3)):
        return Finding("layout", "failed", "C = 0, 1, 2 alone do not give distinct words")
    if len(table) < K + 2:
        notes.append(f"C = n alone gives distinct words for n up to {max(table.values())} "
                     f"only (the output keeps too few bits for {K + 1}); larger counts would "
                     "read as no count")
    return table


def _c_reads(ctx, S, table):
    """The C slot each slice word reads (one tile per C element), or a failed Finding."""
    t = ctx.tile()
    one_c = pow2(ctx.c_fmt, 0)
    za, zb, zc = zero(ctx.a_fmt), zero(ctx.b_fmt), zero(ctx.c_fmt)
    eye_c = ctx.c_one_hot(one_c, zc)
    nc = len(eye_c)
    dC = ctx.launch(_physical(ctx, np.full((nc, t.a_slots), za),
                              np.full((nc, t.b_slots), zb), eye_c))[:, S]
    CC = _counts(dC, table)
    if (CC < 0).any():
        s_, w = map(int, np.argwhere(CC < 0)[0])
        return Finding("layout", "failed",
                       f"C slot {s_} alone gives word {int(dC[s_, w]):#x} at "
                       f"{ctx.harness.label(int(S[w]))}, which is no small count")
    if (CC.sum(axis=0) != 1).any():
        return Finding("layout", "failed", "a slice word is fed by no C slot, or by several")
    c_read = np.full(len(S), -1)
    for s_, w in np.argwhere(CC == 1):
        c_read[w] = s_
    return c_read


def _settings(ctx) -> list:
    """The metadata settings to measure under: (metadata, kept positions);
    dense: one, with neither; sparse: two complementary legal selections."""
    dp = ctx.dp
    K = dp.k
    if not dp.sparse:
        return [(None, None)]
    from tcprobe.models import sparsity

    sels = sparsity.legal_selectors(dp)
    width = sparsity.chunk_width(dp)
    settings = []
    first = set(sparsity.kept_positions(dp, sels[0]))
    other = next(x for x in sels  # 0x4 and 0xe: complementary selections in storage order
                 if not first & set(kept := sparsity.kept_positions(dp, x))
                 and list(kept) == sorted(kept))
    for sel in (sels[0], other):
        pos = [c * width + p for c in range(K // width) for p in sparsity.kept_positions(dp, sel)]
        want = np.zeros(K, bool)
        want[pos] = True
        settings.append((ctx.meta_fill(want)[0], pos))
    return settings


def _namings(dp, nominal) -> list:
    """The ways to name measured lane components, tried in order: each takes
    (components, kept positions) and gives (names or None, how named)."""
    K = dp.k
    KA = dp.stored_k if dp.sparse else K

    def name_by(lanes_of, pos_, comp_list, n):
        slot_lane = {int(s_): k for k, lane in enumerate(lanes_of) for s_ in lane}
        names = []
        for members in comp_list:
            ks = {slot_lane.get(m[pos_]) for m in members}
            if len(ks) != 1 or None in ks:
                return None
            names.append(ks.pop())
        return names if sorted(set(names)) == list(range(n)) else None

    def names_of(comp_list, _pos):
        names = name_by(nominal.a_lanes, 1, comp_list, KA) if nominal else None
        if names is not None:
            return names, "A's documented lanes"
        if nominal and not dp.sparse:
            names = name_by(nominal.b_lanes, 2, comp_list, K)
            if names is not None:
                return names, "B's documented lanes"
        if len(comp_list) != KA:
            return None, f"the slots form {len(comp_list)} lanes, not {KA}, and no documented lane names them"
        order = np.argsort([min(m[1] for m in members) for members in comp_list])
        return list(np.argsort(order)), "the order of their first A slot"

    def by_b(comp_list, pos):
        """Sparse: stored values named by the documented B lane they meet under
        the metadata setting (value j meets position pos[j])."""
        if nominal is None or pos is None:
            return None, ""
        slot_lane = {int(s_): k for k, lane in enumerate(nominal.b_lanes) for s_ in lane}
        inv = {k: j for j, k in enumerate(pos)}
        names = []
        for members in comp_list:
            ks = {slot_lane.get(m[2]) for m in members}
            if len(ks) != 1 or None in ks or next(iter(ks)) not in inv:
                return None, ""
            names.append(inv[ks.pop()])
        if sorted(names) != list(range(KA)):
            return None, ""
        return names, "B's documented lanes, through the metadata"

    return [names_of] + ([by_b] if dp.sparse else [])


def _candidate(ctx, S, measured, c_read, strategy):
    """The harness one naming gives: (harness, how named, None), or (None, how
    named, why not)."""
    dp, t, nominal = ctx.dp, ctx.tile(), ctx.nominal
    W, K = len(S), dp.k
    KA = dp.stored_k if dp.sparse else K
    a_read = np.full((W, KA), -1, np.int64)
    b_read = np.full((W, K), -1, np.int64)
    named_by, clash = "", None
    for (_, comp_list, _), pos in measured:
        names, named_by = strategy(comp_list, pos)
        if names is None:
            clash = named_by or "the documented lanes do not name the measured ones"
            break
        for j, members in zip(names, comp_list, strict=True):
            k = j if pos is None else pos[j]  # a sparse stored value j meets position pos[j]
            for w, s_, tb in members:
                if b_read[w, k] >= 0 or (a_read[w, j] >= 0 and a_read[w, j] != s_):
                    clash = f"lane {j} reaches one word twice"
                a_read[w, j] = s_
                b_read[w, k] = tb
    if clash is None and ((a_read < 0).any() or (b_read < 0).any()):
        clash = "a lane misses a slice word"
    if clash is not None:
        return None, named_by, clash
    try:
        sa_read, sb_read = _scales(nominal, S)
        cand = Harness.from_reads(dp, t, S, a_read, b_read, c_read,
                                  c_slots=np.arange(t.c_slots),
                                  halves=nominal.halves if nominal else 1,
                                  elem_mask=nominal.elem_mask if nominal else 0xFFFFFFFF,
                                  sa_read=sa_read, sb_read=sb_read,
                                  a_packing=nominal.a_packing if nominal else "b32",
                                  b_packing=nominal.b_packing if nominal else "b32",
                                  source="measured")
    except HarnessError as e:
        return None, named_by, f"the measured layout cannot replicate a case: {e}"
    return cand, named_by, None


def _prove(ctx, cand):
    """Every lane alone under harness ``cand`` against C alone of the same
    value: (the lanes that differ, the evidence)."""
    dp = ctx.dp
    K = dp.k
    old = ctx.harness
    sign = 1 if ctx.a_fmt.signed else 0  # unsigned integers have no -3
    p = product(ctx.a_fmt, ctx.b_fmt, 1, sign, (3, 1), (1, 0))
    proof_value = 3
    if p is None:  # b1: no 3 to make, a product of 1 then
        sign, proof_value = 0, 1
        p = product(ctx.a_fmt, ctx.b_fmt, 0)
    ctx.harness = cand
    bt = Batch(dp)
    rows = [bt.add(f"lane {k} alone (measured layout)", {k: p[:2]}) for k in range(K)]
    ref = bt.add("C alone", {}, word(ctx.c_fmt, sign, proof_value, 0))
    words = ctx.run(bt.cases())
    bad = [k for k, r in enumerate(rows) if words[r] != words[ref]]
    one = product(ctx.a_fmt, ctx.b_fmt, 0)
    if bad and proof_value == 3 and one is not None and len({int(words[r]) for r in rows}) == 1:
        # every lane gives one word, not 3: a window narrower than the product
        # cuts it alike (lanes.py); then 1.0 alone in each lane proves them
        bt1 = Batch(dp)
        rows1 = [bt1.add(f"lane {k} alone: 1.0 (measured layout)", {k: one[:2]}) for k in range(K)]
        ref1 = bt1.add("C = 1.0 alone", {}, word(ctx.c_fmt, 0, 1, 0))
        w1 = ctx.run(bt1.cases())
        bad = [k for k, r in enumerate(rows1) if w1[r] != w1[ref1]]
    proof = [bt.evidence(ref, [words[ref]])]
    for r in rows[:2] + rows[-1:]:
        proof.append(bt.evidence(r, [words[r]], "= C alone" if words[r] == words[ref]
                                 else "differs"))
    ctx.harness = old
    return bad, proof


def _verdict(ctx, found, nominal, c_read, named_by: str, W: int, ev, notes) -> Finding:
    """The layout finding for the proven harness ``found``."""
    dp = ctx.dp
    K = dp.k
    same = nominal is not None and found.same_placement(nominal)
    desc = {}
    if nominal is not None and not same:
        desc = _describe(nominal, found, dp)
        notes += [f"{k}: {v}" for k, v in desc.items()]
    if same:
        ctx.harness = nominal  # keep the documented tables (per-word rows and columns)
        lanes = (f"{K} A and B lanes" if not dp.sparse else
                 f"{dp.stored_k} stored A values and {K} B lanes (under complementary metadata)")
        summary = (f"as documented: every one of the {lanes} feeds exactly its own "
                   f"product in all {W} slice words ({nominal.a_layout} / {nominal.b_layout})")
    else:
        summary = (f"measured layout differs from the documented one "
                   f"({'; '.join(f'{k}: {v}' for k, v in desc.items())}); "
                   f"lanes named by {named_by}")
    values = {"layout_documented": bool(same), "a_lanes": [lane.tolist() for lane in found.a_lanes],
              "b_lanes": [lane.tolist() for lane in found.b_lanes],
              "c_read": c_read.tolist()}
    values.update({f"layout_{k}": v for k, v in desc.items()})
    return Finding("layout", "found", summary, values, ev, notes)


def _pairs(ctx, S, table, meta):
    """One-hot A and B slots and the pairing probe under one metadata
    setting: (A slots each slice word reads, lanes as lists of (word, A slot,
    B slot), evidence), or why it failed."""
    dp, t = ctx.dp, ctx.tile()
    W = len(S)
    KA = dp.stored_k if dp.sparse else dp.k
    one_a, one_b = pow2(ctx.a_fmt, 0), pow2(ctx.b_fmt, 0)
    za, zb, zc = zero(ctx.a_fmt), zero(ctx.b_fmt), zero(ctx.c_fmt)
    ev = []
    eye_a = np.where(np.eye(t.a_slots, dtype=bool), one_a, za)
    dA = ctx.launch(_physical(ctx, eye_a, np.full((t.a_slots, t.b_slots), one_b),
                              np.full((t.a_slots, t.c_slots), zc), meta))[:, S]
    CA = _counts(dA, table)
    eye_b = np.where(np.eye(t.b_slots, dtype=bool), one_b, zb)
    dB = ctx.launch(_physical(ctx, np.full((t.b_slots, t.a_slots), one_a), eye_b,
                              np.full((t.b_slots, t.c_slots), zc), meta))[:, S]
    CB = _counts(dB, table)
    for name, cnt, dd in (("A", CA, dA), ("B", CB, dB)):
        if (cnt < 0).any():
            s_, w = map(int, np.argwhere(cnt < 0)[0])
            return (f"{name} slot {s_} alone gives word {int(dd[s_, w]):#x} "
                    f"at {ctx.harness.label(int(S[w]))}, which is no small count")
    if (CA > 1).any() or (CB > 1).any():
        return "a slot feeds one word twice: no replicable layout"
    per_word_a = CA.sum(axis=0)
    per_word_b = CB.sum(axis=0)
    if not ((per_word_a == KA) & (per_word_b == KA)).all():
        w = int(np.flatnonzero((per_word_a != KA) | (per_word_b != KA))[0])
        return (f"{ctx.harness.label(int(S[w]))} reads {per_word_a[w]} A and {per_word_b[w]} "
                f"B slots, not {'K/2 = ' if dp.sparse else 'K='}{KA}")
    a_slots_of_word = [np.flatnonzero(CA[:, w]).tolist() for w in range(W)]
    b_slots_of_word = [set(np.flatnonzero(CB[:, w]).tolist()) for w in range(W)]
    s0 = a_slots_of_word[0][0]
    ev.append(Evidence(f"A slot {s0} alone", {f"slot {s0}": one_a}, {"all": one_b}, zc,
                       [int(dA[s0, w]) for w in np.flatnonzero(CA[s0])[:3]],
                       f"read by {int(CA[s0].sum())} of {W} slice words "
                       f"({', '.join(ctx.harness.label(int(S[w])) for w in np.flatnonzero(CA[s0])[:3])}...)"))

    # 3. pairing
    reads_of_slot = {}
    for w, slots in enumerate(a_slots_of_word):
        for s_ in slots:
            reads_of_slot.setdefault(s_, []).append(w)
    color = _color(reads_of_slot, a_slots_of_word)
    ncol = max(color.values()) + 1
    nbits = max(1, int(np.ceil(np.log2(t.b_slots))))
    bits_b = (np.arange(t.b_slots)[None, :] >> np.arange(nbits)[:, None]) & 1  # (nbits, b_slots)
    rows_a, rows_b = [], []
    for c in range(ncol):
        lit = [s_ for s_, col in color.items() if col == c]
        a_row = np.full(t.a_slots, za, np.uint32)
        a_row[lit] = one_a
        for i in range(nbits):
            rows_a.append(a_row)
            rows_b.append(np.where(bits_b[i] == 1, one_b, zb).astype(np.uint32))
    n = len(rows_a)
    dP = ctx.launch(_physical(ctx, np.array(rows_a), np.array(rows_b),
                              np.full((n, t.c_slots), zc), meta))[:, S]
    P = _counts(dP, table).reshape(ncol, nbits, W)
    if (P < 0).any() or (P > 1).any():
        return "a pairing probe gave no 0/1 count"
    weights = (1 << np.arange(nbits))[None, :, None]
    partner = (P * weights).sum(axis=1)  # (ncol, W): B slot paired with the lit A slot
    uf = _Union()
    triples = []
    for w, slots in enumerate(a_slots_of_word):
        for s_ in slots:
            tb = int(partner[color[s_], w])
            if tb not in b_slots_of_word[w]:
                return (f"A slot {s_} pairs with B slot {tb}, which "
                        f"{ctx.harness.label(int(S[w]))} does not read")
            triples.append((w, s_, tb))
            uf.union(("a", s_), ("b", tb))
    comps = {}
    for w, s_, tb in triples:
        comps.setdefault(uf.find(("a", s_)), []).append((w, s_, tb))
    for members in comps.values():
        if len({w for w, _, _ in members}) != len(members):
            return "a lane reaches one word twice"
    s_ex = a_slots_of_word[0][0]
    ev.append(Evidence(f"pairing: A slot {s_ex} and B bit patterns", {f"slot {s_ex}": one_a},
                       {"bit i of the B slot": one_b}, zc,
                       [int(P[color[s_ex], i, 0]) for i in range(nbits)],
                       f"bits spell B slot {int(partner[color[s_ex], 0])}"))
    return a_slots_of_word, list(comps.values()), ev


def _scales(nominal, S):
    """The documented scale slots of the slice words (block-scaled kinds; not measured)."""
    if nominal is None or nominal.sa_read is None:
        return None, None
    pos = {int(s): i for i, s in enumerate(nominal.elems)}
    if any(int(s) not in pos for s in S):
        return None, None
    i = [pos[int(s)] for s in S]
    return nominal.sa_read[i], nominal.sb_read[i]


def _describe(nominal: Harness, found: Harness, dp) -> dict:
    """What moved, in documented terms where possible."""
    out = {}
    for op, nl, fl in (("A", nominal.a_lanes, found.a_lanes), ("B", nominal.b_lanes, found.b_lanes)):
        sets = [frozenset(x.tolist()) for x in nl]
        fsets = [frozenset(x.tolist()) for x in fl]
        if sets == fsets:
            out[op] = "documented"
            continue
        perm = [sets.index(f) if f in sets else None for f in fsets]
        if None not in perm:
            out[op] = f"documented slots, lane k holds documented lane order[k] = {perm}"
            continue
        fit = _fit_core_matrix(nominal, found, op, dp)
        out[op] = fit or "slots outside the documented lane sets"
    if not np.array_equal(np.sort(nominal.elems), np.sort(found.elems)):
        out["dump"] = "the slice sits at other dump indices"
    return out


def _fit_core_matrix(nominal, found, op, dp) -> str | None:
    """Other core-matrix strides (and a K order) that explain the measured
    slots: SBO from the first slots of rows 0 and 8, LBO from a row's first
    slot at or past one core-matrix row (T elements), then checked on every word."""
    lay = nominal.a_layout if op == "A" else nominal.b_layout
    if lay is None or nominal.c_layout is None or dp.family == "mma":
        return None
    # the row and column of each measured word, from the C slot that feeds it
    where = {int(v): rc for rc, v in np.ndenumerate(nominal.c_layout.table)}
    if any(int(c) not in where for c in found.c_read):
        return None
    rows = np.array([where[int(c)][0 if op == "A" else 1] for c in found.c_read])
    read = found.a_read if op == "A" else found.b_read
    (_, _), (t, _) = lay.shape
    base = {}
    for w, r in enumerate(rows):
        base.setdefault(int(r), int(read[w].min()))
    offs = np.sort(read[0] - read[0].min())
    lbo_c = [int(o) for o in offs if o >= t][:1] or [t * 8]
    sbo_c = [base[8] - base[0]] if 0 in base and 8 in base else [t * 8]
    nrows = nominal.tile.m if op == "A" else nominal.tile.n
    kk = read.shape[1]  # K, or a sparse A's K/2 stored values
    for lbo in lbo_c:
        for sbo in sbo_c:
            if lbo <= 0 or sbo <= 0:
                continue
            table = core_matrix_layout(nrows, kk, t, lbo, sbo).table[rows]
            cols = {tuple(table[:, j]): j for j in range(kk)}
            order = [cols.get(tuple(read[:, k])) for k in range(kk)]
            if None not in order:
                tail = "" if order == list(range(kk)) else f", K order {order}"
                return f"core matrices with LBO={lbo}, SBO={sbo} elements{tail}"
    return None
