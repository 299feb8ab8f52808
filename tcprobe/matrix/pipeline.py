"""The one matrix pipeline: operands -> plan -> chains -> reduction -> epilogue -> output.

Every entry point (``tcprobe.matmul``, ``tcprobe gemm``, ``fit-gemm``,
``same_bits``, ``gemm-probe``'s fits, ``tcprobe.torch``) runs a product
here, as CUTLASS composes a main loop, a tile scheduler and an epilogue:

1. **operands** (:class:`Problem`): A and B as words, decoded once per
   operand rounding by a :class:`~.mainloop.MainLoop`;
2. **plan** (:mod:`.plan`): the K ranges of every chain from the schedule;
3. **chains**: the instruction model over each range, cached in the
   problem keyed by the plan's own :class:`~.plan.Chain` and
   :class:`~.plan.Partial` objects (fit-gemm's many schedules share them);
4. **reduction**: how the partials meet (serial through the epilogue, or
   added in f32 forward, reverse or as a tree, stored in f32 or the output
   type first), or, for the chain, C + P0 + P1 + ... in f32;
5. **epilogue**: D = alpha*acc + beta*C (+ bias) in f32 words
   (:mod:`.epilogue`), C where the schedule puts it;
6. **output**: the RNE conversion to the output type (saturating for fp8).

Each schedule axis is read by the stage its row in :mod:`.axes` names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import tcprobe.matrix.epilogue as epilogue
import tcprobe.matrix.plan as plans
from tcprobe.models.formats import convert_input, get_format
from tcprobe.models.model import Model

from .axes import AXES
from .mainloop import MainLoop
from .operands import MatmulError

Progress = Callable[[int, int], None]


@dataclass
class Problem:
    """One product's operands and epilogue inputs, as words.

    ``a`` (M, K) of ``a_fmt``, ``b`` (K, N) of ``b_fmt``; ``c`` (M, N) of
    ``c_fmt`` or None; ``alpha``, ``beta`` f32 words (integers for an integer
    product); ``bias`` (N,) f32 (s32) words or None; ``sa`` (M, blocks) and
    ``sb`` (N, blocks) scale words where block-scaled. Chains and partials
    computed for one schedule are kept for the next (module doc)."""

    mdl: Model
    a: np.ndarray
    a_fmt: str
    b: np.ndarray
    b_fmt: str
    out_fmt: str
    c: np.ndarray | None = None
    c_fmt: str | None = None
    alpha: int = epilogue.ONE
    beta: int = epilogue.ONE
    bias: np.ndarray | None = None
    sa: np.ndarray | None = None
    sb: np.ndarray | None = None
    fast: bool | None = None
    jobs: int | None = None
    progress: Progress | None = None
    full: tuple[int, int] | None = None  # the D this problem is the top-left corner of
    backend: str | None = None  # where the chains run (mainloop.check_backend)
    _loops: dict = field(default_factory=dict, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def dp(self):
        return self.mdl.datapath

    @property
    def shape(self) -> tuple[int, int]:
        return self.a.shape[0], self.b.shape[1]

    def tiles(self) -> int:
        return -(-self.a.shape[1] // self.dp.k)

    def loop(self, operand_round: str | None, k_limit: int | None = None) -> MainLoop:
        """The main loop over the operands as the kernel rounds them (the first
        ``k_limit`` K elements where the plan reads no more)."""
        key = (operand_round, k_limit)
        if key not in self._loops:
            a, b = self.a, self.b
            if k_limit is not None:
                a, b = a[:, :k_limit], b[:k_limit]
            self._loops[key] = MainLoop(
                self.mdl, round_operands(operand_round, a, self.a_fmt),
                round_operands(operand_round, b, self.b_fmt), self.sa, self.sb, self.fast,
                self.jobs, self.backend)
        return self._loops[key]

    def tile(self, r0: int, r1: int, c0: int, c1: int) -> Problem:
        """The problem of one output tile (its own cache, kept for the next schedule)."""
        key = ("tile", r0, r1, c0, c1)
        if key not in self._memo:
            def cut(x, rows=True):
                return None if x is None else (x[r0:r1] if rows else x[c0:c1])
            self._memo[key] = Problem(
                self.mdl, self.a[r0:r1], self.a_fmt, self.b[:, c0:c1], self.b_fmt, self.out_fmt,
                None if self.c is None else self.c[r0:r1, c0:c1], self.c_fmt, self.alpha,
                self.beta, cut(self.bias, False), cut(self.sa), cut(self.sb, False), self.fast,
                self.jobs, backend=self.backend)
        return self._memo[key]


def round_operands(rounding: str | None, words: np.ndarray, fmt: str) -> np.ndarray:
    """Operand words as the kernel hands them to the instruction: rounded to
    tf32 where the schedule's ``operand_round`` says so (axes table)."""
    if rounding is None:
        return words
    if get_format(fmt).name != "tf32":
        raise MatmulError(f"schedule: operand_round rounds f32 words to tf32; {fmt} operands "
                          "have no such step")
    return convert_input(words, "tf32", rounding).astype(np.uint32)


def plan_of(p: Problem, s) -> plans.Plan:
    """The plan of schedule ``s`` on problem ``p``."""
    key = ("plan", s)
    if key not in p._memo:
        m, n = p.full or p.shape  # a corner of a larger D takes that D's tiles
        p._memo[key] = plans.make(s, p.dp.k, p.tiles(), not p.dp.is_integer, k=p.a.shape[1],
                                  m=m, n=n)
    return p._memo[key]


def run(p: Problem, s) -> np.ndarray:
    """D words (M, N) of ``p.out_fmt``: problem ``p`` under schedule ``s``
    through every stage (module doc)."""
    with epilogue.checked():  # the host's IEEE mode probed once a run
        return _run(p, s)


def _run(p: Problem, s) -> np.ndarray:
    pl = plan_of(p, s)
    if s.c == "accumulator":
        _check_chain(p)
    if pl.lanes is not None:
        return _fma_kernel(p, s, pl)
    if not pl.tiles:
        return _words(p, s, pl, _progress(p, pl))
    d = np.empty(p.shape, np.uint32)
    m, n = p.shape
    for t in pl.tiles:  # stream-K: each tile its own partials, one epilogue each
        r1, c1 = min(t.r1, m), min(t.c1, n)
        if t.r0 >= r1 or t.c0 >= c1:
            continue  # outside this corner of D
        sub = p.tile(t.r0, r1, t.c0, c1)
        d[t.r0:r1, t.c0:c1] = _words(sub, s, plans.Plan(pl.operand_round, t.partials,
                                                        k_limit=pl.k_limit), None)
    if p.progress is not None:
        p.progress(1, 1)
    return d


def _words(p: Problem, s, pl: plans.Plan, step) -> np.ndarray:
    """The chains, reduction, epilogue and output of a plan with one set of partials."""
    parts = [partial(p, pl, part, step) for part in pl.partials]
    if p.progress is not None and not _units(p, pl):
        p.progress(1, 1)
    return finish(p, s, pl, parts, (pl.operand_round, pl.k_limit, pl.partials))


# the stages :func:`finish` runs: the schedule axes they read (axes.AXES) are its only inputs
FINISH_STAGES = ("reduction", "epilogue", "output")


def finish_axes(s) -> tuple:
    """The values of every schedule axis :func:`finish` reads: two schedules
    with the same values and the same partials finish alike."""
    return tuple(getattr(s, a.name) for a in AXES if a.stage in FINISH_STAGES)


def finish(p, s, pl: plans.Plan, parts: list[np.ndarray], key=None) -> np.ndarray:
    """The reduction, epilogue and output stages on the partials' words
    (``key``: what they were computed from, to keep their reduction in ``p``;
    None: kept nowhere). Every step is elementwise, so ``parts`` may stack
    several schedules' partials along a first axis where ``p.shape`` says so
    (fit-gemm's batched scoring, :mod:`.fit_score`)."""
    if s.c == "accumulator":
        return _chain_reduction(p, pl, parts)
    if p.dp.is_integer:
        acc = parts[0]
        for q in parts[1:]:
            acc = ((acc.astype(np.int64) + q) & 0xFFFFFFFF).astype(np.uint32)
        bias = None if p.bias is None else np.broadcast_to(p.bias, p.shape)
        return epilogue.integer_linear(acc, p.c, p.alpha, p.beta, bias)
    return _float_epilogue(p, s, [epilogue.to_f32(q, p.dp.d_type) for q in parts], key)


def _check_chain(p: Problem) -> None:
    """The chain takes C in its accumulator's type, alpha = beta = 1 (beta: with
    C; without, C is +0 and beta is never read) and no bias."""
    one = 1 if p.dp.is_integer else epilogue.ONE
    if p.alpha != one or (p.c is not None and p.beta != one) or p.bias is not None:
        raise MatmulError("alpha: the chain (c='accumulator') takes alpha = beta = 1 and no "
                          "bias")
    if p.out_fmt != p.dp.d_type or (p.c is not None and p.c_fmt != p.dp.c):
        raise MatmulError(f"schedule: the chain accumulates in C's type ({p.dp.c}): C and D "
                          f"must be {p.dp.c}, not C {p.c_fmt}, D {p.out_fmt}")


def _units(p: Problem, pl: plans.Plan) -> int:
    return p.shape[0] * sum(ch.hi - ch.lo for part in pl.partials for ch in part.chains)


def _progress(p: Problem, pl: plans.Plan):
    """A step callback that reports (done, total) to the problem's progress."""
    if p.progress is None:
        return None
    total, done = max(1, _units(p, pl)), [0]

    def step(units: int) -> None:
        done[0] += units
        p.progress(min(done[0], total), total)
    return step


def _chain(p: Problem, pl: plans.Plan, ch: plans.Chain, from_c: bool, step) -> np.ndarray:
    """The words of one chain (cached by the chain itself and its start)."""
    key = ("chain", pl.operand_round, pl.k_limit, ch, from_c)
    if key not in p._memo:
        start, lo, hi = None, ch.lo, ch.hi
        if from_c and p.c is not None:
            start = p.c
        elif not from_c:
            # a chain from +0 continues the longest one computed that it begins with:
            # the same first tiles (lo for a forward chain, hi for a reverse one)
            # from the same +0 give the same words, so only the rest is run
            anchor = ("prefixes", pl.operand_round, pl.k_limit, ch.reverse,
                      ch.hi if ch.reverse else ch.lo)
            done = p._memo.setdefault(anchor, [])
            ends = [e for e in done if (lo <= e < hi if ch.reverse else lo < e <= hi)]
            if ends:
                end = min(ends) if ch.reverse else max(ends)
                part = plans.Chain(end, hi, True) if ch.reverse else plans.Chain(lo, end)
                start = p._memo[("chain", pl.operand_round, pl.k_limit, part, False)]
                lo, hi = (lo, end) if ch.reverse else (end, hi)
        rows = None if step is None else max(16, -(-p.shape[0] // 40))
        p._memo[key] = p.loop(pl.operand_round, pl.k_limit).run(start, lo, hi, ch.reverse,
                                                                step, rows)
        if not from_c:
            done.append(ch.lo if ch.reverse else ch.hi)
    return p._memo[key]


def partial(p: Problem, pl: plans.Plan, part: plans.Partial, step) -> np.ndarray:
    """One partial's words: its chain (in the accumulator's type), or its
    promoted chunks added into an f32 register (f32 words)."""
    if not part.promoted:
        return _chain(p, pl, part.chains[0], pl.c_start, step)
    key = ("partial", pl.operand_round, pl.k_limit, part)
    if key not in p._memo:
        reg = np.zeros(p.shape, np.uint32)
        for ch in part.chains:
            reg = epilogue.add(reg, epilogue.to_f32(_chain(p, pl, ch, False, step),
                                                    p.dp.d_type))
        p._memo[key] = reg
    return p._memo[key]


def _chain_reduction(p: Problem, pl: plans.Plan, parts: list[np.ndarray]) -> np.ndarray:
    """The chain: D is the one chain from C, or C + P0 + P1 + ... with each
    add one f32 RNE add (an f16 C and D through f32; integers modulo 2**32)."""
    if pl.c_start:
        return parts[0]
    c = np.zeros(p.shape, np.uint32) if p.c is None else p.c
    if p.dp.is_integer:
        acc = c.astype(np.int64)
        for q in parts:
            acc = (acc + q.astype(np.int64)) & 0xFFFFFFFF
        return acc.astype(np.uint32)
    acc = epilogue.to_f32(c, p.dp.c)
    for q in parts:
        acc = epilogue.add(acc, epilogue.to_f32(q, p.dp.d_type))
    return epilogue.convert_out(acc, p.out_fmt, False)


def reduce_parallel(parts: list[np.ndarray], order: str) -> np.ndarray:
    """f32 partials added one RNE add at a time: forward, reverse, or as a
    pairwise tree ((P0 + P1) + (P2 + P3), an odd last one carried up)."""
    if order == "reverse":
        parts = parts[::-1]
    if order != "tree":
        acc = parts[0]
        for q in parts[1:]:
            acc = epilogue.add(acc, q)
        return acc
    while len(parts) > 1:
        paired = [epilogue.add(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = paired + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _float_epilogue(p: Problem, s, parts: list[np.ndarray], key=None) -> np.ndarray:
    """The reduction, epilogue and output stages of a float product (f32
    partials; ``key``: what they were computed from, to keep their reduction)."""
    out_fmt = p.out_fmt
    sat = get_format(out_fmt).width == 8 if s.saturate is None else s.saturate
    c32 = None if p.c is None else epilogue.to_f32(p.c, p.c_fmt)
    bias = None if p.bias is None else np.broadcast_to(p.bias, p.shape)
    if s.c == "output":  # the product written in the output type, then C added in f32
        d = _epilogue_and_reduction(p, s, parts, None, p.beta, bias, out_fmt, sat, key)
        if c32 is None or p.beta & 0x7FFFFFFF == 0:
            return d
        bc = c32 if p.beta == epilogue.ONE else epilogue.mul(p.beta, c32)
        return epilogue.convert_out(epilogue.add(epilogue.to_f32(d, out_fmt), bc), out_fmt, sat)
    return _epilogue_and_reduction(p, s, parts, c32, p.beta, bias, out_fmt, sat, key)


def _epilogue_and_reduction(p: Problem, s, parts, c32, beta, bias, out_fmt, sat, key=None):
    def finish(acc, src, b, with_bias=True):
        d = _linear(acc, src, p.alpha, b, s, bias if with_bias else None)
        return epilogue.convert_out(d, out_fmt, sat)
    if s.split_kind == "serial":
        # the bias once, in the first split's epilogue, beside C: what cuBLASLt's
        # bias GEMM did on an H200 where it split K serially (tf32 256x256x4096,
        # 4 splits; reports/silicon/2026-12-04-h200)
        d = finish(parts[0], c32, beta)
        for q in parts[1:]:
            d = finish(q, epilogue.to_f32(d, out_fmt), epilogue.ONE, False)
        return d
    memo = None if key is None else ("reduced", key, s.reduction, s.partials, out_fmt, sat)
    if memo is None or memo not in p._memo:
        if s.partials == "output" and len(parts) > 1:  # each partial in the output type
            parts = [epilogue.to_f32(epilogue.convert_out(q, out_fmt, sat), out_fmt)
                     for q in parts]
        acc = reduce_parallel(parts, s.reduction)
        if memo is None:
            return finish(acc, c32, beta)
        p._memo[memo] = acc
    return finish(p._memo[memo], c32, beta)


def _linear(acc, c32, alpha, beta, s, bias):
    """alpha*acc + beta*C (+ bias) in f32 words as the schedule's epilogue
    forms it (``fused``, ``fma_on``, ``bias_form``)."""
    if bias is not None and s.bias_form == "fma":
        # CUTLASS 3's per-row-bias fusion: fma(alpha, acc, fma(beta, C, bias))
        inner = bias
        if c32 is not None and beta & 0x7FFFFFFF:
            inner = epilogue.fma(beta, c32, bias)
        return epilogue.fma(alpha, acc, inner)
    return epilogue.linear(acc, c32, alpha, beta, s.fused, bias, s.fma_on)


def _fma_kernel(p: Problem, s, pl: plans.Plan) -> np.ndarray:
    """A CUDA-core kernel (axes table, ``kernel='fma'``): A and B widened to f32
    exactly (f32 words as they are), each lane an f32 fma chain over its K
    positions from +0 (one IEEE fma a step, on words), the lanes reduced in
    ``reduction`` order, then the epilogue and output stages."""
    if p.dp.is_integer or p.dp.block_scaled or p.dp.sparse:
        raise MatmulError("schedule: kernel='fma' multiplies float operands (dense, not "
                          "block-scaled)")
    count, order = pl.lanes
    k = p.a.shape[1]
    if count > k:
        raise MatmulError(f"schedule: lanes={count} but K is {k}")
    a, b = (w if fmt == "tf32" else epilogue.to_f32(w, fmt)
            for w, fmt in ((p.a, p.a_fmt), (p.b, p.b_fmt)))
    per = -(-k // count)
    lanes = []
    for lane in range(count):
        ks = range(lane, k, count) if order == "interleaved" else range(lane * per,
                                                                          min(k, (lane + 1) * per))
        acc = np.zeros(p.shape, np.uint32)
        for kk in ks:
            acc = epilogue.fma(a[:, kk:kk + 1], b[kk:kk + 1, :], acc)
        lanes.append(acc)
    if p.progress is not None:
        p.progress(1, 1)
    return _float_epilogue(p, s.with_(split_kind="parallel"),
                           [reduce_parallel(lanes, s.reduction)])
