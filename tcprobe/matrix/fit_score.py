"""fit-gemm's fast search: many schedules scored at once on the elements of D
that tell them apart, the survivors checked on every element.

:func:`explainers` finds the schedules whose D equals the capture on the
block of fit-gemm's last cheap pass (:func:`.fit_gemm._search`) and scores
them on all of D, which is what that search keeps whenever one schedule
explains that block (each pass keeps the schedules with no mismatch, and
the passes' blocks are nested corners of D). It gets there faster:

1. **the telling elements first.** Where D's exact value (float64 from the
   operands' values; a ranking only, never a result) lies near a rounding
   boundary of the output type, schedules whose sums differ in the last
   bits of f32 round to different words; elsewhere a narrow output hides
   them. Each stage scores the survivors on a few rows and columns holding
   the most such elements (any element of a uniform schedule's D is its
   row of A, its column of B and C's element through the one pipeline, so
   a block of chosen rows and columns holds the same words as D there);
   a schedule that mismatches one element is out.
2. **many schedules in one pass.** The partials (chains shared through the
   block's cache, keyed by the plan's own chains, as the pipeline shares
   them) of every schedule with the same reduction and epilogue are
   stacked and reduced, finished and compared in one set of array
   operations (:func:`.pipeline.finish`: each step elementwise).
3. **the survivors on all of D**, through :func:`.pipeline.run`: none is
   called explaining before every element is compared.

Where no schedule explains the last pass's block, :func:`explainers` says
so (None) and fit-gemm runs its passes (their closest schedules are what it
reports then).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import numpy as np

from tcprobe.models.formats import Class, decode, get_format

from . import epilogue, pipeline
from .compare import float_values, words_differ
from .operands import MatmulError

SEEN = (64, 256)  # the top-left rows and columns of D whose exact values rank the
#                   telling elements
# the stages: (rows, columns) of the chosen block (None: every column)
STAGES = ((8, 8), (8, 32), (16, None))
MANY = 4  # survivors of the stages past which the passes' last block is scored before D


def telling(a, a_fmt, b, b_fmt, c, c_fmt, d, d_fmt, alpha: int, beta: int) -> np.ndarray:
    """The top-left SEEN block of D: how near each element's
    exact value lies to a rounding boundary of D's format, in units of the
    last bit of an f32 sum of its terms (smaller tells more; inf where the
    values are not finite). A ranking for the order of the search only."""
    r, n = min(a.shape[0], SEEN[0]), min(b.shape[1], SEEN[1])
    d = d[:r, :n]
    with np.errstate(all="ignore"):
        fa, fb = _values(a_fmt, a[:r]), _values(b_fmt, b[:, :n])
        fa, fb = np.nan_to_num(fa, nan=0.0), np.nan_to_num(fb, nan=0.0)
        al, be = (float(float_values("f32", np.array([w], np.uint32))[0]) for w in (alpha, beta))
        v, size = _products(np.ascontiguousarray(fa), np.ascontiguousarray(fb))
        v, size = al * v, abs(al) * size
        if c is not None and beta & 0x7FFFFFFF:
            cv = float_values(c_fmt, c[:r, :n])
            v, size = v + be * cv, size + abs(be) * np.abs(cv)
        dd = decode(d_fmt, d.ravel())
        dv = float_values(d_fmt, d)
        step = np.ldexp(1.0, dd.lsb.astype(np.int32)).reshape(dv.shape)
        edge = np.abs(0.5 - np.abs((v - dv) / step)) * step  # to the nearest tie
        out = edge / (size * _F32_ROUNDOFF + _F32_TINY)
    bad = ~np.isfinite(out) | (dd.cls.reshape(dv.shape) >= Class.INF)
    return np.where(bad, np.inf, out)


def _values(fmt: str, words: np.ndarray) -> np.ndarray:
    """:func:`.compare.float_values`, through a table of every word for
    formats of up to 16 bits."""
    width = get_format(fmt).width
    if width > 16:
        return float_values(fmt, words)
    if fmt not in _TABLES:
        _TABLES[fmt] = float_values(fmt, np.arange(1 << width, dtype=np.uint32))
    return _TABLES[fmt][np.asarray(words) & ((1 << width) - 1)]


_F32 = get_format("f32").spec
_F32_ROUNDOFF = 2.0 ** -(_F32.frac_bits + 1)  # f32's unit roundoff (half an ulp of 1)
_F32_TINY = 2.0 ** (1 - _F32.bias - _F32.frac_bits)  # the smallest f32 subnormal
_TABLES: dict = {}
_PRODUCTS = None


def _products(fa: np.ndarray, fb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """fa @ fb and |fa| @ |fb| in float64, on one thread (numpy's BLAS starts
    threads of its own, which were slower on the shared 2-core machine these
    figures come from; compiled on first use)."""
    global _PRODUCTS
    if _PRODUCTS is None:
        from numba import njit

        @njit(cache=True, nogil=True)
        def kernel(fa, fb, v, size):
            for i in range(fa.shape[0]):
                for k in range(fa.shape[1]):
                    x = fa[i, k]
                    ax = abs(x)
                    for j in range(fb.shape[1]):
                        v[i, j] += x * fb[k, j]
                        size[i, j] += ax * abs(fb[k, j])

        _PRODUCTS = kernel
    v = np.zeros((fa.shape[0], fb.shape[1]))
    size = np.zeros_like(v)
    _PRODUCTS(fa, fb, v, size)
    return v, size


def _blocks(rank: np.ndarray, m: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(rows, columns) of each stage's block: rows and columns of the most
    telling elements (STAGES)."""
    order = np.argsort(rank, axis=None, kind="stable")
    rows_of, cols_of = np.unravel_index(order, rank.shape)
    out = []
    for r, cols in STAGES:
        if cols is None:  # the rows holding the most of the 4 * r most telling elements
            hits = np.bincount(rows_of[:4 * r], minlength=rank.shape[0])
            rs = np.sort(np.argsort(-hits, kind="stable")[:min(r, rank.shape[0])])
            out.append((rs, np.arange(n)))
            continue
        rs = _first_distinct(rows_of, r)
        cs = _first_distinct(cols_of, cols)
        out.append((np.sort(rs), np.sort(cs)))
    return out


def _first_distinct(x: np.ndarray, count: int) -> np.ndarray:
    _, first = np.unique(x, return_index=True)
    return x[np.sort(first)[:count]]


def mismatches(cands: list, p: pipeline.Problem, want: np.ndarray, fmt: str,
               known: list | None = None) -> list:
    """Each schedule's count of elements of ``p``'s D that differ from
    ``want`` (None: it cannot run there), the schedules with one reduction
    and epilogue scored together (module doc). ``known``: their plans where
    already made (None where not)."""
    counts: list = [None] * len(cands)
    groups: dict = {}
    made: dict = {}  # each plan's partials (schedules that differ past the plan share them)
    with epilogue.checked():
        for i, s in enumerate(cands):
            try:
                pl = known[i] if known is not None and known[i] is not None else \
                    pipeline.plan_of(p, s)
                if pl.tiles:  # per-tile plans read where the block lies in D: unscored
                    continue
                if pl.lanes is not None:  # a CUDA-core fma kernel: one at a time
                    counts[i] = int(words_differ(fmt, pipeline.run(p, s), want).sum())
                    continue
                if id(pl) not in made:  # (by identity: a plan hashes all its chains)
                    made[id(pl)] = [pipeline.partial(p, pl, part, None) for part in pl.partials]
                parts = made[id(pl)]
            except MatmulError:
                continue
            key = (pipeline.finish_axes(s), len(parts), pl.c_start)
            groups.setdefault(key, []).append((i, s, pl, parts))
        # where no word of ``want`` is NaN, a word that differs is a mismatch
        nan_wanted = bool((decode(fmt, want.ravel()).cls == Class.NAN).any())
        stacks: dict = {}  # the stacked partials of each list of plans
        memo: dict = {}  # the reduced stacks, for the epilogues that share them
        for members in groups.values():
            _, s, pl, _ = members[0]
            shape = (len(members), *p.shape)
            plans = tuple(id(x[2]) for x in members)
            if plans not in stacks:
                stacks[plans] = [np.stack([x[3][j] for x in members])
                                 for j in range(len(members[0][3]))]
            many = SimpleNamespace(
                shape=shape, dp=p.dp, out_fmt=p.out_fmt, c_fmt=p.c_fmt, alpha=p.alpha,
                beta=p.beta, bias=p.bias, _memo=memo,
                c=None if p.c is None else np.ascontiguousarray(np.broadcast_to(p.c, shape)))
            try:
                got = pipeline.finish(many, s, pl, stacks[plans], ("stacked", plans))
            except MatmulError:
                continue
            wants = np.broadcast_to(want, shape)
            bad = words_differ(fmt, got, wants) if nan_wanted else got != wants
            for (i, *_), x in zip(members, bad.reshape(len(members), -1).sum(axis=1),
                                  strict=True):
                counts[i] = int(x)
    return counts


def explainers(cands: list, problem: Callable, block: Callable, mdl, d: np.ndarray, fmt: str,
               rank: np.ndarray, last: tuple[int, int], known: list | None = None
               ) -> list | None:
    """(mismatches on all of D, schedule, D words) of every schedule of
    ``cands`` that explains D's top-left ``last`` block (rows, columns), in
    ``cands``' order; None where none does (module doc). ``problem(mdl, r,
    cols)``: D's top-left corner; ``block(mdl, rows, cols)``: the rows and
    columns given; ``rank``: :func:`telling`'s; ``known``: the plans of
    ``cands`` where :func:`.fit_gemm.candidates` made them (for the stages
    only: the check on all of D makes its own)."""
    m, n = d.shape
    keep = list(zip(cands, known or [None] * len(cands), strict=True))
    for rows, cols in _blocks(rank, m, n):
        if len(keep) <= 1:
            break
        p = block(mdl, rows, cols)
        counts = mismatches([s for s, _ in keep], p, d[np.ix_(rows, cols)], fmt,
                            [pl for _, pl in keep])
        keep = [x for x, got in zip(keep, counts, strict=True) if got is None or got == 0]
    r, c = last
    if len(keep) > MANY and (r, c) != (m, n):  # many left: the passes' last block first
        counts = mismatches([s for s, _ in keep], problem(mdl, r, c), d[:r, :c], fmt,
                            [pl for _, pl in keep])
        keep = [x for x, got in zip(keep, counts, strict=True) if got is None or got == 0]
    full = problem(mdl, m, n)
    out = []
    for s, _ in keep:
        try:
            w = pipeline.run(full, s)
        except MatmulError:
            continue
        bad = words_differ(fmt, w, d)
        if not bad[:r, :c].any():
            out.append((int(bad.sum()), s, w))
    return out or None
