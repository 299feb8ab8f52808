"""Find the schedules that explain a captured GEMM, word for word.

The search runs the GPU's instruction models under every candidate
:class:`~.schedule.Schedule` (instruction x K block x K order x split count
and kind x reduction order x promotion interval x where C enters and the
epilogue's form x, for tf32 operands, how the kernel rounds f32 words to
tf32) and keeps those whose D equals the capture on every element (NaN
matching NaN). It prunes by the cheap tests first: every candidate on the
first few rows and columns, the survivors on those rows, then on all of D.
The instruction chain of a K range is computed once per (operand rounding,
order, promotion, range) and shared by every schedule that reads it (the
splits, reductions and epilogues are cheap); a reversed K order runs as one
forward chain over the tile-reversed operands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.formats import Class, decode, get_format

from . import choice, epilogue
from .operands import MatmulError
from .schedule import SPLIT_RULES, Schedule
from .scheduled import Chains, round_operands, split_tiles

FIRST_ROWS = 8  # rows of the cheap first passes
FIRST_COLUMNS = 8  # columns of the cheapest, which sees every candidate
MAX_SPLIT = 8
K_BLOCKS = (None, 32, 64, 128, 256)
PROMOTES = (1, 2, 4, 8)
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


def split_structures(dp, k: int, bounds: tuple[int, ...] | None = None
                     ) -> list[tuple[Schedule, tuple[tuple[int, int], ...]]]:
    """(schedule with k_block, split_k and split_rule set, its ranges of
    instruction tiles) of every split structure the search tries: the grid
    (K_BLOCKS x 1..MAX_SPLIT x rules), and where ``bounds`` (the K offsets
    where a split starts, as gemm-probe's splits case reads them) is given,
    every structure with exactly those starts, at any split count."""
    tiles = -(-k // dp.k)
    out, seen = [], set()
    for kb in K_BLOCKS:
        if kb is not None and (kb % dp.k or kb <= dp.k or kb >= k):
            continue
        top = MAX_SPLIT if bounds is None else max(MAX_SPLIT, len(bounds) + 1)
        for split in range(1, top + 1):
            for rule in SPLIT_RULES:
                base = Schedule(k_block=kb, split_k=split, split_rule=rule)
                try:
                    ranges = tuple(split_tiles(base, dp, tiles))
                except MatmulError:
                    continue
                starts = tuple(lo * dp.k for lo, _ in ranges[1:])
                grid = split <= MAX_SPLIT
                if (grid or starts == bounds) and ranges not in seen:
                    seen.add(ranges)
                    out.append((base, ranges))
    return out


def candidates(dp, k: int, fp8: bool, has_c: bool, out: str, tf32: bool = False,
               bounds: tuple[int, ...] | None = None) -> list[Schedule]:
    """Every schedule the search tries for one instruction (module doc)."""
    tiles = -(-k // dp.k)
    seen, out_list = set(), []
    promotes = (None, *PROMOTES) if fp8 else (None,)
    roundings = (None, "rne", "rna") if tf32 else (None,)
    entries = (("epilogue", True, "acc"), ("epilogue", True, "c"), ("epilogue", False, "acc"),
               ("output", True, "acc")) if has_c else (("epilogue", True, "acc"),)
    for base, ranges in split_structures(dp, k, bounds):
        kinds = [("serial", "forward")] if base.split_k == 1 else [
            ("serial", "forward"), ("parallel", "forward"), ("parallel", "reverse")]
        for order in ("forward", "reverse"):
            for promote in promotes:
                if promote is not None and promote >= tiles:
                    continue
                for kind, red in kinds:
                    for c_at, fused, fma_on in entries:
                        for rnd in roundings:
                            key = (ranges, order, promote, kind, red, c_at, fused, fma_on, rnd)
                            if key in seen:
                                continue
                            seen.add(key)
                            out_list.append(base.with_(
                                out=out, k_order=order, promote=promote, split_kind=kind,
                                reduction=red, c=c_at, fused=fused, fma_on=fma_on,
                                operand_round=rnd))
    if has_c and out == dp.d_type:
        out_list.append(Schedule(c="accumulator", out=out))
    return out_list


def _mismatch(fmt: str, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elements that differ (two NaNs of any payload match)."""
    nan_g = decode(fmt, got.ravel()).cls == Class.NAN
    nan_w = decode(fmt, want.ravel()).cls == Class.NAN
    differ = (got.ravel() != want.ravel()) & ~(nan_g & nan_w)
    return differ.reshape(got.shape)


class _Runner:
    """Schedules evaluated on some rows, partials shared (module doc)."""

    def __init__(self, mdl, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta, jobs):
        self.mdl, self.jobs = mdl, jobs
        self.a, self.a_fmt, self.b, self.b_fmt = a, a_fmt, b, b_fmt
        self.c, self.c_fmt, self.out, self.alpha, self.beta = c, c_fmt, out_fmt, alpha, beta
        self.chains = {}
        self.memo = {}

    def chain(self, s: Schedule) -> Chains:
        """The instruction chains of the operands as ``s`` rounds them (one per rounding)."""
        if s.operand_round not in self.chains:
            self.chains[s.operand_round] = Chains(
                self.mdl, round_operands(s, self.a, self.a_fmt),
                round_operands(s, self.b, self.b_fmt), jobs=self.jobs)
        return self.chains[s.operand_round]

    def partial(self, s: Schedule, lo: int, hi: int) -> np.ndarray:
        key = (s.operand_round, s.k_order, s.promote, lo, hi)
        if key not in self.memo:
            from .scheduled import partial

            ch = self.chain(s)
            self.memo[key] = epilogue.to_f32(partial(ch, s, lo, hi, True), ch.dp.d_type)
        return self.memo[key]

    def words(self, s: Schedule) -> np.ndarray:
        from .scheduled import scheduled_words

        ch = self.chain(s)
        if s.c == "accumulator":
            if "chain" not in self.memo:
                self.memo["chain"] = ch.run(epilogue.to_f32(self.c, self.c_fmt), 0, ch.tiles)
            return self.memo["chain"]
        parts = [self.partial(s, lo, hi) for lo, hi in split_tiles(s, ch.dp, ch.tiles)]
        return scheduled_words(ch, s, self.c, self.c_fmt, self.out, self.alpha, self.beta,
                               None, parts)


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
    scored = []
    total = 0
    for fam, dp, mdl in instrs:
        tf32 = get_format(a_fmt).name == "tf32" and get_format(b_fmt).name == "tf32"
        cands = [s.with_(instr=fam) for s in candidates(dp, k, fp8, c is not None, d_fmt, tf32,
                                                         bounds)]
        total += len(cands)
        keep = cands
        passes = [(rows, min(n, FIRST_COLUMNS))] + ([(rows, n)] if n > FIRST_COLUMNS else [])
        for r, cols in passes:  # the cheap passes first (module doc)
            part = _Runner(mdl, a[:r], a_fmt, b[:, :cols], b_fmt,
                           None if c is None else c[:r, :cols], c_fmt, d_fmt, al, be, jobs)
            counts = [(int(_mismatch(d_fmt, part.words(s), d[:r, :cols]).sum()), s)
                      for s in keep]
            keep = [s for x, s in counts if x == 0] or [
                s for _, s in sorted(counts, key=lambda t: t[0])[:CLOSEST]]
        full = part if (rows, cols) == (m, n) else _Runner(mdl, a, a_fmt, b, b_fmt, c, c_fmt,
                                                           d_fmt, al, be, jobs)
        for s in keep:
            w = full.words(s)
            scored.append((int(_mismatch(d_fmt, w, d).sum()), s, w))
    scored.sort(key=lambda t: t[0])
    best = scored[0][0]
    winners = [s for x, s, _ in scored if x == 0]
    worst = []
    if best:
        w = scored[0][2]
        bad = np.argwhere(_mismatch(d_fmt, w, d))[:WORST]
        worst = [{"row": int(i), "column": int(j), "captured": int(d[i, j]),
                  "model": int(w[i, j])} for i, j in bad]
    stream = [s.with_(split_kind="stream") for s in winners if s.split_kind == "parallel"
              and s.reduction == "forward"]
    return Fit(explained=best == 0, schedules=winners + stream if winners else
               [s for _, s, _ in scored[:CLOSEST]], mismatches=best, elements=m * n,
               closest=[(s, x) for x, s, _ in scored[:CLOSEST]], worst=worst, searched=total)
