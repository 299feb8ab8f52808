"""Find the schedules that explain a captured GEMM, word for word.

The search space is the schedule axes table's (:data:`.axes.AXES`, each
row's ``search`` values): every instruction of the GPU that takes the
formats x K block x split count and rule (and, where a splits probe read
them, the explicit split starts) x K order x promotion interval (fp8) x
split kind, reduction order and partial type (where there are splits) x
where C enters and the epilogue's form (where there is a C) x operand
rounding (tf32). Schedules with the same plan and the same epilogue are
one candidate. Each candidate runs through the one pipeline
(:mod:`.pipeline`) and is kept when its D equals the capture on every
element (NaN matching NaN). The search prunes by the cheap tests first:
every candidate on the first few rows and columns, the survivors on those
rows, then on all of D. Chains are shared between candidates through the
problem's cache, keyed by the plan's own chains, so no two plans can share
wrong partials.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np

from tcprobe.models.formats import Class, decode, get_format

from . import choice, epilogue, pipeline
from . import plan as plans
from .axes import BY_NAME
from .compare import words_differ
from .operands import MatmulError
from .schedule import Schedule, ScheduleError

FIRST_ROWS = 8  # rows of the cheap first passes
FIRST_COLUMNS = 8  # columns of the cheapest, which sees every candidate
CLOSEST = 5
WORST = 10


@dataclass
class Fit:
    explained: bool
    schedules: list[Schedule]  # every schedule that explains D (or the closest ones)
    mismatches: int  # of the best
    elements: int
    closest: list[tuple[Schedule, int]] = field(default_factory=list)
    worst: list[dict] = field(default_factory=list)
    searched: int = 0


def instructions(gpu: str, a_fmt: str, b_fmt: str, acc: str) -> list:
    """(family, datapath, model) of every family of ``gpu`` that takes the formats."""
    out = []
    for fam in choice.families(gpu):
        try:
            dp = choice.datapath(gpu, fam, a_fmt, b_fmt, acc)
            mdl = choice.model_for(dp, gpu)
        except ValueError:
            continue
        if dp.c == dp.d_type and not dp.block_scaled:
            out.append((fam, dp, mdl))
    return out


def searched(name: str, applies: bool = True) -> tuple:
    """The values fit-gemm tries for axis ``name``: its row's ``search``
    where the axis applies, else its default alone."""
    axis = BY_NAME[name]
    return axis.search if applies and axis.search is not None else (axis.default,)


def split_structures(dp, k: int, bounds: tuple[int, ...] | None = None
                     ) -> list[tuple[Schedule, tuple[tuple[int, int], ...]]]:
    """(schedule with k_block, split_k and split_rule or split_starts set,
    its ranges of instruction tiles) of every split structure the search
    tries, one per distinct set of ranges: the table's K blocks x split
    counts x rules, and where ``bounds`` (the K offsets where splits start,
    as gemm-probe's splits case reads them) is given, those starts."""
    tiles = -(-k // dp.k)
    out, seen = [], set()
    bases = [Schedule(split_starts=bounds)] if bounds else []
    for kb, split, rule in product(searched("k_block"), searched("split_k"),
                                   searched("split_rule")):
        if kb is not None and (kb % dp.k or kb <= dp.k or kb >= k):
            continue
        bases.append(Schedule(k_block=kb, split_k=split, split_rule=rule))
    for base in bases:
        try:
            ranges = tuple(plans.split_ranges(base, dp.k, tiles))
        except MatmulError:
            continue
        if ranges not in seen:
            seen.add(ranges)
            out.append((base, ranges))
    return out


def candidates(dp, k: int, fp8: bool, has_c: bool, out: str, tf32: bool = False,
               bounds: tuple[int, ...] | None = None, unit_epilogue: bool = True
               ) -> list[Schedule]:
    """Every schedule the search tries for one instruction (module doc), one
    per class of schedules with the same plan and epilogue. ``unit_epilogue``:
    alpha = beta = 1, where the chain (C as the first accumulator) can run."""
    tiles = -(-k // dp.k)
    seen, found = set(), []
    epilogues = []
    for c_at, fused, fma_on in product(searched("c", has_c), searched("fused", has_c),
                                       searched("fma_on", has_c)):
        # what the epilogue computes: fma_on only where fused, neither where C
        # is added after the output conversion
        key = (c_at, fused if c_at == "epilogue" else None,
               fma_on if c_at == "epilogue" and fused else None)
        if key not in epilogues:
            epilogues.append(key)
    for base, _ranges in split_structures(dp, k, bounds):
        multi = base.splits > 1
        for order, promote, kind, rnd in product(
                searched("k_order"), searched("promote", fp8),
                searched("split_kind", multi), searched("operand_round", tf32)):
            if promote is not None and promote >= tiles:
                continue
            par = multi and kind != "serial"
            for red, parts in product(searched("reduction", par),
                                      searched("partials", par and out != "f32")):
                for c_at, fused, fma_on in epilogues:
                    try:
                        s = base.with_(out=out, k_order=order, promote=promote,
                                       split_kind=kind, reduction=red, partials=parts, c=c_at,
                                       fused=True if fused is None else fused,
                                       fma_on=fma_on or "acc", operand_round=rnd)
                        pl = plans.make(s, dp.k, tiles)
                    except (ScheduleError, MatmulError):
                        continue
                    tree_is_forward = red == "tree" and len(pl.partials) <= 2
                    key = (pl, kind, "forward" if tree_is_forward else red, parts, c_at,
                           fused, fma_on)
                    if key not in seen:
                        seen.add(key)
                        found.append(s)
    if has_c and unit_epilogue and out == dp.d_type:  # the chain, over every split structure
        for base, _ranges in split_structures(dp, k, bounds):
            found.append(base.with_(c="accumulator", out=out))
    return found


def fit(a, a_fmt, b, b_fmt, c, c_fmt, d, d_fmt, *, gpu, alpha=1, beta=1,
        jobs: int | None = None, bounds: tuple[int, ...] | None = None) -> Fit:
    """The schedules of ``gpu``'s library kernels that compute D from A, B, C
    (words) with ``alpha``, ``beta`` (numbers); see the module doc. ``bounds``:
    the K offsets where the kernel's splits start, as gemm-probe's splits case
    shows them (the structures that have them join the search)."""
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k:
        raise MatmulError(f"b: B has {b.shape[0]} rows but A has {k} columns")
    if d.shape != (m, n):
        raise MatmulError(f"d: D is {d.shape} but A @ B is {(m, n)}")
    if c is not None and c.shape != (m, n):
        raise MatmulError(f"c: C is {c.shape} but A @ B is {(m, n)}")
    if k < 2:
        raise MatmulError("a: K = 1 leaves no schedule to tell apart (give K of at least 2)")
    if (decode(d_fmt, d.ravel()).cls == Class.NAN).all():
        raise MatmulError("d: every word of D is NaN: nothing to fit")
    integer = get_format(a_fmt).kind.name == "INT"
    if integer:
        raise MatmulError("a: fit-gemm fits float products (integer products have one sum)")
    if d_fmt not in ("f32", "f16", "bf16", "e4m3", "e5m2"):
        raise MatmulError(f"d: D in {d_fmt} is no GEMM output (f32, f16, bf16, e4m3, e5m2)")
    gpu = choice.gpu_name(gpu)
    al, be = epilogue.f32_word(alpha, "alpha"), epilogue.f32_word(beta, "beta")
    fp8 = get_format(a_fmt).width == 8
    instrs = instructions(gpu, a_fmt, b_fmt, "f32")
    if not instrs:
        raise MatmulError(f"a: {gpu} has no instruction for {a_fmt} x {b_fmt}")
    rows = min(m, FIRST_ROWS)
    unit = al == epilogue.ONE and (c is None or be == epilogue.ONE)
    tf32 = get_format(a_fmt).name == "tf32" and get_format(b_fmt).name == "tf32"
    scored = []
    total = 0

    def problem(mdl, r, cols):
        return pipeline.Problem(mdl, a[:r], a_fmt, b[:, :cols], b_fmt, d_fmt,
                                None if c is None else c[:r, :cols], c_fmt, al, be, jobs=jobs)
    for fam, dp, mdl in instrs:
        cands = [s.with_(instr=fam) for s in candidates(dp, k, fp8, c is not None, d_fmt, tf32,
                                                         bounds, unit)]
        total += len(cands)
        keep = cands
        passes = [(rows, min(n, FIRST_COLUMNS))] + ([(rows, n)] if n > FIRST_COLUMNS else [])
        for r, cols in passes:  # the cheap passes first (module doc)
            part = problem(mdl, r, cols)
            counts = [(_score(part, s, d[:r, :cols], d_fmt)[0], s) for s in keep]
            keep = [s for x, s in counts if x == 0] or [
                s for _, s in sorted(counts, key=lambda t: t[0])[:CLOSEST]]
        full = part if (rows, cols) == (m, n) else problem(mdl, m, n)
        for s in keep:
            x, w = _score(full, s, d, d_fmt)
            scored.append((x, s, w))
    scored.sort(key=lambda t: t[0])
    best = scored[0][0]
    winners = [s for x, s, _ in scored if x == 0]
    worst = []
    if best:
        w = scored[0][2]
        bad = np.argwhere(words_differ(d_fmt, w, d))[:WORST]
        worst = [{"row": int(i), "column": int(j), "captured": int(d[i, j]),
                  "model": int(w[i, j])} for i, j in bad]
    stream = [s.with_(split_kind="stream") for s in winners if s.split_kind == "parallel"
              and s.reduction == "forward"]
    return Fit(explained=best == 0, schedules=winners + stream if winners else
               [s for _, s, _ in scored[:CLOSEST]], mismatches=best, elements=m * n,
               closest=[(s, x) for x, s, _ in scored[:CLOSEST]], worst=worst, searched=total)


def _score(p: pipeline.Problem, s: Schedule, want: np.ndarray, fmt: str):
    """(elements that differ from ``want``, D words) of ``s`` on ``p``; a
    schedule that cannot run there differs everywhere."""
    try:
        got = pipeline.run(p, s)
    except MatmulError:
        return want.size + 1, np.zeros_like(want)
    return int(words_differ(fmt, got, want).sum()), got
