"""mfma's one-product blocks (truncated or grouped with L = 1, or a K = 1
v_mfma): what tells F and F2 apart when no block holds two products. A
helper of probes/mfma.py (not a step of its own).

* C's depth beside a tie (:func:`c_tie_rows`): 2**h alone, C = -(1.5 ulp -
  2**(h-k)); kept whole the sum rounds up, floored to F bits a tie. C's 24
  bits reach k = 47.
* a product that is itself a tie (:func:`tie_product_rows`): (1 + 2**-12)**2
  of two f32 significands is 1 + 2**-11 + 2**-24, an exact tie of an f32 D;
  beside C = +2**(h-k) the tie breaks upward while k <= min(F, F2) (C's
  floor to F bits, the sum's floor to F2 bits). Only wide significands make
  one (f32 inputs).
* a NaN C beside one product 2**e (:func:`nan_c_rows`): grouped drops a C
  more than F + 1 binades below the products, and MMA-Sim reads a NaN or Inf
  C's exponent as -1: the NaN is dropped once e > F. Truncated never drops.

Past every reach F (or F2) is named open over what is left of its range,
each value of which the probes cannot tell apart here; the ladder's judge
(tests/amd_designs.py) checks that claim on held-out words.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcprobe.models.amd import WINDOW_MIN
from tcprobe.models.words import exp_range, pow2, product, word

TIE_SIG = (1 << 23) | (1 << 11)  # (1 + 2**-12) in 23 fraction bits


def c_tie_rows(bt, plan) -> dict:
    """C's depth with one product: 2**h alone, C = -(1.5 ulp - 2**(h - k)) of
    2**h's ulp below it: kept whole, the sum is above the tie and rounds to
    2**h - ulp; floored to F bits below 2**h (k > F), C is -1.5 ulp, a tie,
    and rounds to 2**h - 2 ulp. k from 25 to 47 (C's 24 bits)."""
    big = product(plan.fa, plan.fb, plan.h)
    fd = plan.fd.frac_bits
    up = word(plan.fd, 0, (1 << (fd + 1)) - 1, plan.h - fd - 1)
    out = {}
    for k in range(fd + 2, 2 * fd + 2):
        c = word(plan.fd, 1, (3 << (k - fd - 2)) - 1, plan.h - k)
        if big and c is not None and up is not None:
            out[k] = (bt.add(f"2^{plan.h} alone, C = -(1.5 ulp - 2^{plan.h - k})", {0: big[:2]}, c),
                      up)
    return out


def tie_product_rows(bt, plan) -> dict:
    """{k: (row, the word rounded up)}: the tie product 2**h (1 + 2**-11 + 2**-24)
    beside C = +2**(h - k) (h = 127: C's depth to its last bit below the largest
    finite product), k from 25 to the plan's reach + 2 (empty unless both
    inputs carry 23 fraction bits and D is f32)."""
    fa, fb, fd = plan.fa.frac_bits, plan.fb.frac_bits, plan.fd.frac_bits
    if (fa, fb, fd) != (23, 23, 23):
        return {}
    h = min(plan.p_hi, 127)  # the largest a finite word holds: C's depth to its last bit
    p = product(plan.fa, plan.fb, h, 0, (TIE_SIG, TIE_SIG), (23, 23))
    up = word(plan.fd, 0, (1 << 23) | (1 << 12) | 1, h - 23)
    out = {}
    for k in range(fd + 2, plan.reach + 3):
        c = pow2(plan.fd, h - k)
        if p and up is not None and c is not None:
            out[k] = (bt.add(f"a tie product 2^{h} (1 + 2^-11 + 2^-24), C = 2^{h - k}",
                             {0: p[:2]}, c), up)
    return out


def nan_c_rows(bt, plan, nan_c) -> dict:
    """{e: row}: a NaN C beside one product 2**e, e from 0 to the reach + 1."""
    out = {}
    for e in range(0, plan.reach + 2):
        p = product(plan.fa, plan.fb, e)
        if p and nan_c is not None and p[2] == e:
            out[e] = bt.add(f"NaN C beside one product 2^{e}", {0: p[:2]}, nan_c)
    return out


def _is_nan32(w: int) -> bool:
    return (w & 0x7F800000) == 0x7F800000 and (w & 0x7FFFFF) != 0


def nan_drop(rows: dict, words) -> int | None:
    """F read from the first product exponent e that drops a NaN C (F = e - 1):
    None when no row drops it (truncated, or F past the products' range)."""
    for e in sorted(rows):
        if not _is_nan32(int(words[rows[e]])):
            return e - 1 if e - 1 in rows else None
    return None


def single(plan, reads: dict, rows: dict) -> tuple:
    """(F values, F2, opened keys) of one-product blocks, from ``reads``
    (window_t: C's depth beside a tie, join1: one product's tail, tie: the
    tie product's depth min(F, F2), drop: grouped's NaN C drop) and the rows
    each was read from. C's depth reads max(F, 25) below 47; one product's
    tail reads F2 below fd + 1 + min(F, the deepest tail its significands
    make). Past either the key is named open over the rest of its range."""
    window_t, join1 = reads["window_t"], reads["join1"]
    t_rows, one_rows = rows["t"], rows["one"]
    if plan.narrow is not None:  # F below 24, read from C alone (mfma_narrow)
        window_t = plan.narrow
    if plan.narrow is not None and join1 is None and reads.get("windows"):
        # F below 24 cuts one product's tail: the coarse join read F2 >= 23 only
        return reads["windows"], (23, 24, 25), {"window2": ((25, None), (
            "one product a block under F below 24 carries at most two bits: no tie it "
            "makes with C reaches deeper than 25 bits; any F2 from 25 gives the probes' "
            "words here"))}
    fd = plan.fd.frac_bits
    lost = join1 is None and plan.narrow is None and window_t is not None and bool(one_rows)
    if lost:  # the first tail (fd + 2 below C) lost, C alone kept: F2 = fd or fd + 1
        join1 = fd + 1
    if window_t is None or join1 is None or not t_rows or not one_rows:
        return (), None, {}
    opened = {}
    # F2: the deepest tail bit one product carried to the join
    reach1 = min(max(one_rows), window_t + fd + 1)
    f2_open = join1 >= reach1
    f2 = join1
    tie, tie_reach = reads["tie"], max(rows["tie"]) if rows["tie"] else None
    if plan.narrow is not None:
        fs = reads.get("windows") or (plan.narrow,)
    elif window_t < max(t_rows):
        fs = (24, 25) if window_t <= 25 else (window_t,)
    elif reads["drop"] is not None:
        fs = (reads["drop"],)
    elif tie is not None and tie < tie_reach and tie < f2:
        fs = (tie,)  # min(F, F2) below F2: F itself
    elif tie is not None and tie < tie_reach:
        fs, f2 = (tie, tie + 1), tie  # min(F, F2) = F2 (or F2 open past it): F = F2 or F2 + 1
    else:
        lo = max(window_t, tie or 0)
        fs = (lo,)
        if tie is not None:  # the tie broke on C's last bit: min(F, F2) reaches it, F2 too
            f2, f2_open = max(f2, tie), True
        opened["window"] = ((lo, None),
                            f"one product a block: C's floor to F bits shows through a tie "
                            f"down to 2^-{lo} below the product only; every F from {lo} "
                            "gives the probes' words here")
    if f2_open:
        opened["window2"] = ((f2, None),
                             f"one product's tail was kept down to 2^-{join1} below C, the "
                             "deepest bit its significands make here; any larger F2 gives "
                             "the same words")
    return tuple(f for f in fs if WINDOW_MIN <= f <= plan.reach), (fd, fd + 1) if lost else f2, opened


def _sigs(frac: int) -> np.ndarray:
    """Significands of ``frac`` fraction bits to search: every one of a narrow
    format, else 1 with up to two more bits set (whose products reach every depth)."""
    if frac <= 10:
        return np.arange(1 << frac, 2 << frac, dtype=np.int64)
    bits = [0] + [1 << s for s in range(frac)]
    return np.array(sorted({(1 << frac) + x + y for x in bits for y in bits if x != y or not x}),
                    np.int64)


@lru_cache(maxsize=64)
def tail_pairs(fa: int, fb: int, f2: int, fd: int) -> dict:
    """{k: (a, b, T)}: significands a, b (fa and fb fraction bits, a * b < 2) whose
    product has no bit between 2**-(f2 + 1) and 2**-k and one at 2**-k, and T, the
    product's bits down to 2**-(f2 + 1) in units 2**-(f2 + 1), within fd + 1 bits."""
    d = fa + fb
    cut = d - f2 - 1
    if cut <= 0:
        return {}
    a, b = _sigs(fa), _sigs(fb)
    p = np.outer(a, b).ravel()
    ia, ib = np.divmod(np.arange(p.size), b.size)
    r, t = p & ((1 << cut) - 1), p >> cut
    ok = (p < (2 << d)) & (r > 0)
    top = np.frexp(np.where(ok, r, 1).astype(np.float64))[1] - 1
    low = np.frexp((t & -t).astype(np.float64))[1] - 1
    span = np.frexp(t.astype(np.float64))[1] - low
    ok &= span <= fd + 1
    out = {}
    for i in np.flatnonzero(ok):
        k = int(d - top[i])
        if k not in out:
            out[k] = (int(a[ia[i]]), int(b[ib[i]]), int(t[i]))
    for k in range(f2 + 2, d + 1):  # wide significands: b = 2**(d - k) / a modulo 2**cut
        for x in range(1 << fa | 1, min(2 << fa, (1 << fa) + (1 << 16)), 2):
            if k in out:
                break
            y = (pow(x, -1, 1 << cut) << (d - k)) % (1 << cut)
            for z in range(y + (((1 << fb) - y + (1 << cut) - 1) >> cut << cut if y < 1 << fb
                                 else 0), 2 << fb, 1 << cut):
                q = x * z
                tq = q >> cut
                if q < 2 << d and (tq >> ((tq & -tq).bit_length() - 1)).bit_length() <= fd + 1:
                    out[k] = (x, z, tq)
                    break
    return dict(sorted(out.items()))


def tail_rows(bt, plan, f2: int) -> dict:
    """{k: row}: one negative product -2**h a * b whose bits below 2**-(f2 + 1)
    begin at 2**-k, beside C = +T, its bits above: truncated toward zero to F bits
    it leaves T exactly (a zero D) while k > F, and -T - 2**(h - f2 - 1) (the
    join's floor) or its tail while k <= F, whatever F2 >= f2: F past F2 + 1, where
    C's depth beside a tie stops at F2's floor."""
    fa, fb, fd = plan.fa.frac_bits, plan.fb.frac_bits, plan.fd.frac_bits
    out = {}
    for k, (a, b, t) in tail_pairs(fa, fb, f2, fd).items():
        p = product(plan.fa, plan.fb, plan.h, 1, (a, b), (fa, fb))
        c = word(plan.fd, 0, t, plan.h - f2 - 1)
        if p and p[2] == plan.h and c is not None:
            out[k] = bt.add(f"-2^{plan.h} * {a:#x} * {b:#x} (first bit below F2's floor "
                            f"2^-{k}), C = its bits above", {0: p[:2]}, c)
    return out


def deep(fs: tuple, opened: dict, tail: int | None, rows: dict, f2: int, drop, reach: int) -> tuple:
    """(F values, opened) once one product's tail read F past F2 + 1 (``tail``:
    the deepest k kept): F from ``tail`` to the next row's k - 1, or past the
    deepest row, where no product of these formats carries a bit deeper below
    F2's floor: every F from there gives the same words (grouped's NaN C drop
    reads it, where the products reach)."""
    if tail is None or tail < f2 + 2 or not rows:
        return fs, opened
    opened = {k: v for k, v in opened.items() if k != "window"}
    nxt = min((k for k in rows if k > tail), default=None)
    if nxt is not None:
        return tuple(range(tail, nxt)), opened
    if drop is not None and drop >= tail:
        return (drop,), opened
    # past the deepest tail only C's floor to F bits below the product's raw exponent
    # tells F apart (a subnormal factor lifts that exponent over the value): every F
    # from the tail is a candidate, and the rows of lift_rows are the fit's evidence
    return tuple(range(tail, reach + 1)), opened


def lift_rows(bt, plan, f2: int) -> list:
    """Rows for the fit only: one product of the smallest subnormal A (its raw
    exponent g bits over its value) and a power of two, C = 2**(e - k) beside it
    (g > F2 + 1: the product floors to zero, C floored to F bits shows alone) or
    C = -(the product - 2**(e - k)) (the sum cancels down to C's last bit), k to
    the reach + 2: C's floor below e, which no normal product reaches; and
    C = -2**(h - k) beside 2**h (grouped drops it past F + 1, truncated floors it)."""
    sub, na = exp_range(plan.fa)[0], exp_range(plan.fa)[1]
    g = na - sub
    rows = []
    # B = 2**en as large as B holds: C = 2**(e - k) stays normal deepest (a subnormal C
    # is floored away by F2's floor below D's smallest normal exponent)
    for en in dict.fromkeys((plan.h - na, 0, min(plan.h - na, 30),
                             min(plan.h - na, exp_range(plan.fb)[2]))):
        n = pow2(plan.fb, en)
        a = pow2(plan.fa, sub)
        if n is None or a is None:
            continue
        e = na + en
        for k in range(1, plan.reach + 3):
            c = pow2(plan.fd, e - k) if g > f2 + 1 else \
                word(plan.fd, 1, (1 << (k - g)) - 1, e - k) if g < k <= g + plan.fd.frac_bits + 1 \
                else None
            if c is not None:
                rows.append(bt.add(f"smallest subnormal A x 2^{en}, C at 2^{e - k}", {0: (a, n)}, c))
    big = product(plan.fa, plan.fb, plan.h)
    for k in range(1, plan.reach + 3):  # grouped drops a C more than F + 1 binades below
        c = pow2(plan.fd, plan.h - k, 1)
        if big and c is not None:
            rows.append(bt.add(f"2^{plan.h} alone, C = -2^{plan.h - k}", {0: big[:2]}, c))
    return rows


def verdicts(cands: dict, cases, words, fits, evaluate, many: int = 12) -> dict:
    """{name: ``fits(params, cases, words)``} of every candidate (mfma._fits). Where
    more than ``many`` differ in F alone (one-product blocks: every F to the reach),
    only the rows where the lowest and highest F differ tell them apart: each is
    tried on those, and of the F range left the ends and middle on every row (each
    value between taken as theirs; the judge, tests/amd_designs.py, tries them all)."""
    groups: dict = {}
    for name, p in cands.items():
        groups.setdefault((p.design, p.block, p.window2), []).append(name)
    out = {}
    for names in groups.values():
        names = sorted(names, key=lambda n: cands[n].window)
        if len(names) <= many:
            out.update({n: fits(cands[n], cases, words) for n in names})
            continue
        ends = [evaluate(cands[n], cases) for n in (names[0], names[-1])]
        rows = np.flatnonzero(ends[0] != ends[1])
        sub, sub_words = cases.take(rows), np.asarray(words)[rows]
        left = [n for n in names if _fits_soon(fits, cands[n], sub, sub_words)]
        out.update({n: None for n in names if n not in left})
        ws = [cands[n].window for n in left]
        if not left or ws != list(range(ws[0], ws[-1] + 1)):
            out.update({n: fits(cands[n], cases, words) for n in left})
            continue
        probe = sorted({0, 1, len(left) // 2, len(left) - 2, len(left) - 1} & set(range(len(left))))
        got = {fits(cands[left[i]], cases, words) for i in probe}
        if len(got) == 1:
            out.update({n: next(iter(got)) for n in left})
        else:
            out.update({n: fits(cands[n], cases, words) for n in left})
    return out


def _fits_soon(fits, params, cases, words) -> bool:
    """Whether ``fits`` is not None, tried on growing slices (most misfits show early)."""
    lo, n = 0, 16
    while lo < len(cases):
        idx = np.arange(lo, min(lo + n, len(cases)))
        if fits(params, cases.take(idx), np.asarray(words)[idx]) is None:
            return False
        lo, n = lo + n, n * 4
    return True
