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
element (NaN matching NaN). The search prunes by the cheap tests first
(:func:`_search`'s passes): every candidate on the first 8 rows and
columns, the survivors on those rows, then on 32 and 128 rows, then on all
of D (a narrow output type hides most differences on a few rows). Before
those passes :mod:`.fit_score` finds what they keep faster where a schedule
explains their last block: the candidates scored in stacked batches on the
rows and columns of D whose exact values lie nearest a rounding boundary,
the few survivors checked on every element; where none explains that block
the passes run as above (their closest schedules are the report). Chains are
shared between candidates through the problem's cache, keyed by the plan's
own chains, so no two plans can share wrong partials.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np

from tcprobe.models.formats import Class, decode, get_format
from tcprobe.models.model import FixedPointModel

from . import choice, epilogue, fit_score, pipeline
from . import plan as plans
from .axes import BY_NAME
from .compare import words_differ
from .mainloop import threads
from .operands import MatmulError
from .resolve import check_fp8_out, check_memory_of
from .schedule import Schedule, ScheduleError

FIRST_ROWS = 8  # rows of the cheap first passes
FIRST_COLUMNS = 8  # columns of the cheapest, which sees every candidate
MORE_ROWS = (32, 128)  # rows of the passes between those and all of D (a narrow output
#                        type hides most differences on a few rows)
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
    capped: bool = False  # the stream-K search stopped at STREAM_LIMIT plans


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


def same_arithmetic(dp, mdl):
    """A key two instructions share only where the pipeline computes every
    word alike for them: fixed-point models of equal parameters on
    datapaths equal but for the family (None: no such claim)."""
    if type(mdl) is not FixedPointModel:
        return None
    return dp.id.split(".", 1)[1], mdl.params


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


def _epilogues(has_c: bool, has_bias: bool) -> list[tuple]:
    """(c, fused, fma_on, bias_form) of every distinct epilogue: fma_on only
    where fused, neither where C is added after the output conversion, the
    bias form only with a bias (and its fma form only fused on acc)."""
    out = []
    for c_at, fused, fma_on, bias in product(searched("c", has_c), searched("fused", has_c),
                                             searched("fma_on", has_c),
                                             searched("bias_form", has_bias)):
        fused_key = fused if c_at == "epilogue" else None
        key = (c_at, fused_key, fma_on if c_at == "epilogue" and fused else None, bias)
        if bias == "fma" and (fused_key is False or key[2] == "c"):
            continue
        if key not in out:
            out.append(key)
    return out


def _with_epilogue(s: Schedule, epi: tuple, **axes) -> Schedule:
    """``s`` with the epilogue ``epi`` and ``axes`` set (one schedule made)."""
    c_at, fused, fma_on, bias = epi
    return s.with_(c=c_at, fused=True if fused is None else fused, fma_on=fma_on or "acc",
                   bias_form=bias, **axes)


def candidates(dp, k: int, fp8: bool, has_c: bool, out: str, tf32: bool = False,
               bounds: tuple[int, ...] | None = None, unit_epilogue: bool = True,
               has_bias: bool = False, plans_out: list | None = None) -> list[Schedule]:
    """Every schedule the search tries for one instruction (module doc), one
    per class of schedules with the same plan and epilogue. ``unit_epilogue``:
    alpha = beta = 1, where the chain (C as the first accumulator) can run.
    ``plans_out``: where given, each schedule's plan is appended (None where
    it was not made here) for the search to reuse."""
    tiles = -(-k // dp.k)
    seen, found = set(), []
    interned: dict = {}  # each distinct plan once, so the keys below hold it by identity
    epilogues = _epilogues(has_c, has_bias)
    for base, _ranges in split_structures(dp, k, bounds):
        multi = base.splits > 1
        tail = multi and k % (base.k_block or dp.k) != 0
        for order, promote, kind, rnd, k_tail in product(
                searched("k_order"), searched("promote", fp8),
                searched("split_kind", multi), searched("operand_round", tf32),
                searched("k_tail", tail)):
            if promote is not None and promote >= tiles:
                continue
            par = multi and kind != "serial"
            try:  # the plan of this structure, order, promotion and tail (one for all below)
                pl = plans.make(base.with_(k_order=order, promote=promote, k_tail=k_tail,
                                           operand_round=rnd), dp.k, tiles, k=k)
            except (ScheduleError, MatmulError):
                continue
            pl = interned.setdefault(pl, pl)
            for red, parts in product(searched("reduction", par),
                                      searched("partials", par and out != "f32")):
                for epi in epilogues:
                    tree_is_forward = red == "tree" and len(pl.partials) <= 2
                    key = (id(pl), kind, "forward" if tree_is_forward else red, parts, epi)
                    if key in seen:
                        continue
                    try:
                        s = _with_epilogue(base, epi, out=out, k_order=order, promote=promote,
                                           split_kind=kind, reduction=red, partials=parts,
                                           operand_round=rnd, k_tail=k_tail)
                    except ScheduleError:
                        continue
                    seen.add(key)
                    found.append(s)
                    if plans_out is not None:  # (make reads none of the axes set after)
                        plans_out.append(pl)
    if has_c and unit_epilogue and out == dp.d_type and not has_bias:
        for base, _ranges in split_structures(dp, k, bounds):  # the chain, every split
            found.append(base.with_(c="accumulator", out=out))
            if plans_out is not None:
                plans_out.append(None)
    return found


STREAM_TILES = (16, 32, 64, 128, 256)  # tile sides the stream-K search tries (up to 2x D)
# the K blocks in the order the stream-K search tries them: a main loop's
# usual K tile first (64 for 16-bit inputs on Hopper per ../shared/notes'
# leads; a lead, not evidence)
STREAM_BLOCKS = (64, 128, 32, 256, None)
STREAM_LIMIT = 4000  # stream-K plans tried at most (the note says when it stops there)
FMA_MAX_SIDE = 16  # ... where M or N is at most this (gemv and small-M shapes)


def stream_candidates(dp, m: int, n: int, k: int, has_c: bool, out: str,
                      has_bias: bool = False) -> tuple[list[Schedule], bool]:
    """Stream-K schedules (axes table: tile_m, tile_n, raster, stream_units,
    stream_tiles, k_block) with the default epilogues and reduction orders,
    one per distinct per-tile plan; and whether STREAM_LIMIT cut the list."""
    tiles = -(-k // dp.k)
    found, seen = [], set()
    blocks_first = sorted(searched("k_block"), key=lambda kb: STREAM_BLOCKS.index(kb))
    for kb, tm, tn, raster in product(blocks_first, STREAM_TILES, STREAM_TILES,
                                      searched("raster")):
        if (kb is not None and (kb % dp.k or kb >= k)) or tm > 2 * m or tn > 2 * n:
            continue
        count = -(-m // tm) * -(-n // tn)
        blocks = -(-tiles // ((kb or dp.k) // dp.k))
        for sk in range(1, count + 1):
            for units in range(1, sk * blocks + 1):
                for red in searched("reduction"):
                    for epi in _epilogues(has_c, has_bias):
                        try:
                            s = _with_epilogue(Schedule(
                                k_block=kb, tile_m=tm, tile_n=tn, raster=raster,
                                stream_units=units, stream_tiles=sk, split_kind="stream",
                                reduction=red, out=out), epi)
                            pl = plans.make(s, dp.k, tiles, k=k, m=m, n=n)
                        except (ScheduleError, MatmulError):
                            continue
                        if all(len(t.partials) == 1 for t in pl.tiles):
                            continue  # no tile split: the uniform search had it
                        key = (pl, red, epi)
                        if key not in seen:
                            seen.add(key)
                            found.append(s)
                            if len(found) >= STREAM_LIMIT:
                                return found, True
    return found, False


def fma_candidates(k: int, has_c: bool, out: str, has_bias: bool = False) -> list[Schedule]:
    """CUDA-core fma kernels (axes table: kernel, lanes, lane_order, reduction)."""
    found = []
    for lanes, order, red in product(searched("lanes"), searched("lane_order"),
                                     searched("reduction")):
        if lanes > k or (lanes == 1 and (order, red) != ("interleaved", "forward")):
            continue
        if lanes <= 2 and red == "tree":
            continue
        for epi in _epilogues(has_c, has_bias):
            found.append(_with_epilogue(Schedule(kernel="fma", lanes=lanes, lane_order=order,
                                                 reduction=red, out=out), epi))
    return found


FLOAT_ADDENDS = ("f32", "f16", "bf16")  # C's and the bias's formats beside a float product


def check_bounds(bounds, k: int, what: str = "bounds") -> tuple[int, ...] | None:
    """The K offsets where splits start, sorted and once each; None as it is.
    One rule for fit's ``bounds`` and fit-gemm's --bounds: integers inside K
    (1 .. K - 1); an offset outside would be a split that never starts."""
    if bounds is None:
        return None
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__iter__"):
        raise MatmulError(f"{what} must be a sequence of K offsets, not {bounds!r}")
    bounds = list(bounds)
    if any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in bounds):
        raise MatmulError(f"{what}: K offsets are integers, not {bounds!r}")
    if any(x <= 0 or x >= k for x in bounds):
        raise MatmulError(f"{what}: every offset must lie inside K (1 .. {k - 1})")
    return tuple(sorted({int(x) for x in bounds}))


def _word_arrays(a, a_fmt, b, b_fmt, c, c_fmt, d, d_fmt, bias, bias_fmt):
    """fit's operands as the words of their formats, through the gate of
    every words argument (:func:`.words.words_of`): a float array (values,
    not words), a list, a word wider than its format or an array of other
    dimensions is one MatmulError naming it, as tcprobe.dot's words are."""
    from .words import words_of

    out = []
    for x, what, fmt, ndim in ((a, "a", a_fmt, 2), (b, "b", b_fmt, 2), (c, "c", c_fmt, 2),
                               (d, "d", d_fmt, 2), (bias, "bias", bias_fmt or "f32", 1)):
        if x is None:
            out.append(None)
            continue
        if np.ndim(x) != ndim:
            raise MatmulError(f"{what} must be {ndim}-D words, not of shape {np.shape(x)}")
        if fmt is None:
            raise MatmulError(f"{what}: give its format beside its words")
        out.append(words_of(x, what, fmt, ndim))
    return out


def fit(a, a_fmt, b, b_fmt, c, c_fmt, d, d_fmt, *, gpu, alpha=1, beta=None,
        jobs: int | None = None, bounds: tuple[int, ...] | None = None, bias=None,
        bias_fmt: str | None = None) -> Fit:
    """The schedules of ``gpu``'s library kernels that compute D from A, B, C
    (words) with ``alpha``, ``beta`` (numbers) and ``bias`` ((N,) words of
    ``bias_fmt``, or None); see the module doc. ``bounds``: the K offsets
    where the kernel's splits start, as gemm-probe's splits case shows them
    (the structures that have them join the search). Where no uniform
    schedule explains D, the CUDA-core fma kernels (M or N at most
    FMA_MAX_SIDE) and stream-K's per-tile plans are searched too."""
    check_memory_of(a, b)  # as tcprobe.matmul, before a word is read
    a, b, c, d, bias = _word_arrays(a, a_fmt, b, b_fmt, c, c_fmt, d, d_fmt, bias, bias_fmt)
    # the formats read (each a name in any case: docs/names.md), by their own names from here
    a_fmt, b_fmt, c_fmt, d_fmt, bias_fmt = (get_format(f).name if isinstance(f, str) else f
                                            for f in (a_fmt, b_fmt, c_fmt, d_fmt, bias_fmt))
    threads(jobs)  # jobs=0 refused here, as tcprobe.matmul refuses it
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k:
        raise MatmulError(f"b: B has {b.shape[0]} rows but A has {k} columns")
    if d.shape != (m, n):
        raise MatmulError(f"d: D is {d.shape} but A @ B is {(m, n)}")
    if c is not None and c.shape != (m, n):
        raise MatmulError(f"c: C is {c.shape} but A @ B is {(m, n)}")
    if bias is not None and bias.shape != (n,):
        raise MatmulError(f"bias: the bias is {bias.shape} but D has {n} columns")
    if k < 2:
        raise MatmulError("a: K = 1 leaves no schedule to tell apart (give K of at least 2)")
    if (decode(d_fmt, d.ravel()).cls == Class.NAN).all():
        raise MatmulError("d: every word of D is NaN: nothing to fit")
    integer = get_format(a_fmt).kind.name == "INT"
    if integer:
        raise MatmulError("a: fit-gemm fits float products (integer products have one sum)")
    outs = ("f32", "f16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz")
    if d_fmt not in outs:
        raise MatmulError(f"d: D in {d_fmt} is no GEMM output ({', '.join(outs)})")
    for what, x, fmt in (("c", c, c_fmt), ("bias", bias, bias_fmt or "f32")):
        if x is not None and fmt not in FLOAT_ADDENDS:  # s32 is an integer product's
            raise MatmulError(f"{what}: {'C' if what == 'c' else 'the bias'} in {fmt} does not "
                              f"suit a float product ({', '.join(FLOAT_ADDENDS)})")
    bounds = check_bounds(bounds, k)
    gpu = choice.gpu_name(gpu)
    try:  # an fp8 D of the GPU's own family (resolve.check_fp8_out: fnuz on MI300X)
        check_fp8_out(gpu, d_fmt)
    except MatmulError as e:
        raise MatmulError("d" + str(e).removeprefix("dtype")) from None
    beta = epilogue.beta_given(beta, c is not None, False)  # unset: 1 with C
    al, be = epilogue.f32_word(alpha, "alpha"), epilogue.f32_word(beta, "beta")
    bias32 = None if bias is None else epilogue.to_f32(bias, bias_fmt or "f32")
    fp8 = get_format(a_fmt).width == 8
    instrs = instructions(gpu, a_fmt, b_fmt, "f32")
    if not instrs:
        raise MatmulError(f"a: {gpu} has no instruction for {a_fmt} x {b_fmt}")
    unit = al == epilogue.ONE and (c is None or be == epilogue.ONE)
    tf32 = get_format(a_fmt).name == "tf32" and get_format(b_fmt).name == "tf32"
    has_c, has_bias = c is not None, bias is not None

    def problem(mdl, r, cols):
        return pipeline.Problem(mdl, a[:r], a_fmt, b[:, :cols], b_fmt, d_fmt,
                                None if c is None else c[:r, :cols], c_fmt, al, be,
                                None if bias32 is None else bias32[:cols], jobs=jobs,
                                full=(m, n))
    def block(mdl, rows, cols):  # the rows and columns given (fit_score's stages)
        return pipeline.Problem(mdl, a[rows], a_fmt, b[:, cols], b_fmt, d_fmt,
                                None if c is None else c[np.ix_(rows, cols)], c_fmt, al, be,
                                None if bias32 is None else bias32[cols], jobs=jobs,
                                full=(m, n))
    rank = fit_score.telling(a, a_fmt, b, b_fmt, c, c_fmt, d, d_fmt, al, be)
    total, capped = 0, False
    searched_as = {}  # what one arithmetic scored: (its candidates, the slot of its scores)
    made = {}  # candidates() by what they depend on (families share them)
    slots, pending = [], []  # each family's [scores] and the name it relabels them to;
    #                          the families where nothing explains, their passes to run
    for fam, dp, mdl in instrs:
        made_key = (dp.k, dp.d_type)
        if made_key not in made:
            made_plans: list = []
            made[made_key] = (candidates(dp, k, fp8, has_c, d_fmt, tf32, bounds, unit,
                                         has_bias, made_plans), made_plans)
        plain, plain_plans = made[made_key]
        total += len(plain)
        key = same_arithmetic(dp, mdl)
        if key is not None and key in searched_as and searched_as[key][0] == plain:
            # another family computing every word alike (wgmma and mma.sync on an
            # H100): its scores, relabelled, are this family's
            slots.append((searched_as[key][1], fam))
            continue
        cands = [s.with_(instr=fam) for s in plain]
        slot = [fit_score.explainers(cands, problem, block, mdl, d, d_fmt, rank,
                                     _passes(m, n)[-1], plain_plans)]
        if slot[0] is None:  # nothing explains: the passes, whose closest ones are reported
            pending.append((slot, cands, mdl))
        if key is not None:
            searched_as[key] = (plain, slot)
        slots.append((slot, None))
    zeros = sum(x == 0 for slot, _ in slots if slot[0] is not None for x, _, _ in slot[0])
    if zeros < CLOSEST:  # (else the passes' nonzero scores would sort past every report)
        for slot, cands, mdl in pending:
            slot[0] = _search(cands, problem, mdl, d, d_fmt)
    scored = []
    for slot, fam in slots:
        got = slot[0] or []
        scored += got if fam is None else [(x, s.with_(instr=fam), w) for x, s, w in got]
    if not any(x == 0 for x, _, _ in scored):  # the other kernel families (module doc)
        fam, dp, mdl = instrs[0]
        more = [s.with_(instr=fam) for s in fma_candidates(k, has_c, d_fmt, has_bias)] \
            if min(m, n) <= FMA_MAX_SIDE else []
        stream, capped = stream_candidates(dp, m, n, k, has_c, d_fmt, has_bias)
        more += [s.with_(instr=fam) for s in stream]
        total += len(more)
        scored += _search(more, problem, mdl, d, d_fmt)
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
               closest=[(s, x) for x, s, _ in scored[:CLOSEST]], worst=worst, searched=total,
               capped=capped)


def _search(cands: list, problem, mdl, d: np.ndarray, fmt: str) -> list:
    """(mismatches, schedule, words) of the candidates that survive the cheap
    passes (module doc), each scored on all of D."""
    m, n = d.shape
    keep, part = cands, None
    for r, cols in _passes(m, n):  # the cheap passes first
        part = problem(mdl, r, cols)
        counts = [(_score(part, s, d[:r, :cols], fmt)[0], s) for s in keep]
        keep = [s for x, s in counts if x == 0] or [
            s for _, s in sorted(counts, key=lambda t: t[0])[:CLOSEST]]
    full = part if part is not None and part.shape == (m, n) else problem(mdl, m, n)
    out = []
    for s in keep:
        x, w = _score(full, s, d, fmt)
        out.append((x, s, w))
    return out


def _passes(m: int, n: int) -> list[tuple[int, int]]:
    """(rows, columns) of the top-left blocks of D the cheap passes score."""
    rows = min(m, FIRST_ROWS)
    passes = [(rows, min(n, FIRST_COLUMNS))] + ([(rows, n)] if n > FIRST_COLUMNS else [])
    return passes + [(r, n) for r in MORE_ROWS if rows < r < m]


def _score(p: pipeline.Problem, s: Schedule, want: np.ndarray, fmt: str):
    """(elements that differ from ``want``, D words) of ``s`` on ``p``; a
    schedule that cannot run there differs everywhere."""
    try:
        got = pipeline.run(p, s)
    except MatmulError:
        return want.size + 1, np.zeros_like(want)
    return int(words_differ(fmt, got, want).sum()), got
