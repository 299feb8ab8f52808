"""Named case generators, grouped into suites, reproducible from a seed.

Suites (``--suite``):

* ``raw``: uniformly random bit patterns of every operand (NaN, Inf,
  subnormals and the dropped bits of tf32 included).
* ``finite``: random finite values over the whole exponent range.
* ``edge``: zeros of both signs, the smallest subnormal, the largest finite,
  NaN payloads in kept and dropped bits, Inf, Inf*0, one active lane.
* ``adversarial``: one named generator per mechanism that random inputs
  miss (TestFloat style): cancellation chains, terms just below the window,
  carries into the top bits, ties of the output rounding, subnormal swarms,
  extreme exponent spreads, cancellations across blocks, exact zeros,
  block-scale floors.
* ``sparse``: every count of active lanes; for sparse datapaths every
  selection pattern, with junk (NaN included) in the unselected positions.

Reproducibility: case ``j`` of a suite belongs to generator ``j % G`` (G the
suite's generators for the datapath) as that generator's case
``j // G``; a generator's cases come in blocks of :data:`BLOCK`, each drawn
from its own seed sequence (seed, suite, generator name, block). So any
range of cases can be made alone, on any machine, and a run cut into chunks
of any size makes the same cases (see :mod:`.words` for the bit source).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.schema import comma_names

from .registry import (  # noqa: F401 (the suites' vocabulary)
    REGISTRY,
    SUITE_IDS,
    SUITES,
    WEIGHTS,
    Ctx,
    Generator,
    Parts,
    register,
    sparse_chunks,
    sparse_masks,
)
from .words import Bits, one

BLOCK = 1024  # cases of one generator drawn from one seed sequence


class SuiteError(ValueError):
    """An unknown suite or generator, or a plan that cannot be made."""


def parse_suites(text: str | None) -> tuple[str, ...]:
    """'raw,edge' -> ('raw', 'edge'); None or 'all' -> every suite; an empty
    text names none (SuiteError: never every suite without a word)."""
    if text is None or text.strip().lower() in ("all", "default"):
        return SUITES
    names = comma_names(text.lower())
    if not names:
        raise SuiteError(f"--suite names no suite (known: {', '.join(SUITES)}, all)")
    bad = [s for s in names if s not in SUITES]
    if bad:
        raise SuiteError(f"unknown suite(s) {', '.join(bad)} (known: {', '.join(SUITES)})")
    return names


def generators(dp: Datapath, suite: str) -> list[Generator]:
    """The generators of ``suite`` that apply to ``dp``, in a fixed order."""
    _load()
    ctx = Ctx.of(dp)
    return [g for g in REGISTRY[suite] if g.applies(ctx)]


def generator_keys(dp: Datapath, suites) -> list[str]:
    """Every generator of the suites for ``dp``: the codes a capture stores."""
    return [g.key for s in suites for g in generators(dp, s)]


def _seed_words(seed: int) -> tuple[int, int]:
    return seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF


@lru_cache(maxsize=64)
def _gen_block(ctx: Ctx, gen: Generator, seed: int, block: int) -> Cases:
    """One block of a generator's cases (kept a while: consecutive chunks
    often share a block). Callers must not modify the arrays."""
    bits = Bits(*_seed_words(seed), SUITE_IDS[gen.suite], zlib.crc32(gen.name.encode()), block)
    idx = block * BLOCK + np.arange(BLOCK, dtype=np.int64)
    parts = gen.fn(ctx, bits, idx)
    return _complete(ctx, bits, parts, BLOCK)


def _complete(ctx: Ctx, bits: Bits, parts: Parts, n: int) -> Cases:
    k = ctx.k
    a = np.asarray(parts["a"]).astype(ctx.fa.dtype, copy=False).reshape(n, k)
    b = np.asarray(parts["b"]).astype(ctx.fb.dtype, copy=False).reshape(n, k)
    c = np.asarray(parts["c"]).astype(ctx.fc.dtype, copy=False).reshape(n)
    sa = sb = None
    if ctx.fs is not None:
        unit = one(ctx.fs, (n, ctx.n_scales))
        sa = np.asarray(parts.get("scale_a", unit), np.uint32).reshape(n, ctx.n_scales)
        sb = np.asarray(parts.get("scale_b", unit), np.uint32).reshape(n, ctx.n_scales)
    active = None
    if ctx.dp.sparse:
        active = parts.get("active")
        if active is None:
            active = sparse_masks(ctx, bits, n)
        active = np.asarray(active, bool).reshape(n, k)
    return Cases(a, b, c, sa, sb, active)


def generate(dp: Datapath, suite: str, seed: int, start: int, count: int,
             lanes: tuple[int, ...] | None = None) -> tuple[Cases, np.ndarray]:
    """Cases ``start .. start+count-1`` of ``suite`` for ``dp`` and, per
    case, the index of its generator in :func:`generators` (dp, suite).
    ``lanes``: the active-lane counts the sparse suite's lane generator
    takes in turn (None: every count from 0 to K)."""
    gens = generators(dp, suite)
    if not gens:
        raise SuiteError(f"suite {suite} has no generator for {dp.id}")
    if count <= 0:
        raise SuiteError("count must be positive")
    ctx = Ctx.of(dp, lanes)
    if lanes is not None and (not lanes or max(lanes) > ctx.max_lanes or min(lanes) < 0):
        raise SuiteError(f"{dp.id} has 0 to {ctx.max_lanes} active lanes, not "
                         f"{', '.join(map(str, lanes))}")
    g_count = len(gens)
    j = start + np.arange(count, dtype=np.int64)
    which = j % g_count
    within = j // g_count
    parts, order = [], []
    for g, gen in enumerate(gens):
        sel = np.flatnonzero(which == g)
        if sel.size == 0:
            continue
        lo, hi = int(within[sel[0]]), int(within[sel[-1]]) + 1
        blocks = [_gen_block(ctx, gen, seed, blk) for blk in range(lo // BLOCK, (hi - 1) // BLOCK + 1)]
        joined = blocks[0] if len(blocks) == 1 else Cases.concat(blocks)
        off = (lo // BLOCK) * BLOCK
        parts.append(joined.take(np.arange(lo - off, hi - off)))
        order.append(sel)
    cases = Cases.concat(parts)
    pos = np.concatenate(order)
    inv = np.empty(count, np.int64)
    inv[pos] = np.arange(count)
    return cases.take(inv), which.astype(np.uint8)


# ---------------------------------------------------------------------------
# A run: suites interleaved chunk by chunk.


@dataclass(frozen=True)
class Plan:
    """Which cases a run of ``cases`` cases over ``suites`` makes, chunk by
    chunk: every chunk holds each suite's share (by :data:`WEIGHTS`), so a
    run stopped early has tried every suite, and chunk ``i`` is the same
    whatever chunks were made before it."""

    suites: tuple[str, ...]
    cases: int
    chunk: int = 16384
    lanes: tuple[int, ...] | None = None  # the sparse suite's active-lane counts (None: all)

    def __post_init__(self):
        if self.cases <= 0:
            raise SuiteError("the number of cases must be positive")
        if self.chunk <= 0:
            raise SuiteError("the chunk size must be positive")
        parse_suites(",".join(self.suites))

    @property
    def n_chunks(self) -> int:
        return (self.cases + self.chunk - 1) // self.chunk

    def _split(self, n: int) -> list[int]:
        w = np.array([WEIGHTS[s] for s in self.suites], np.int64)
        exact = n * w
        base = exact // w.sum()
        rest = n - int(base.sum())
        order = np.argsort(-(exact % w.sum()), kind="stable")
        base[order[:rest]] += 1
        return [int(x) for x in base]

    def chunk_size(self, i: int) -> int:
        return min(self.chunk, self.cases - i * self.chunk)

    def segments(self, i: int) -> list[tuple[str, int, int]]:
        """(suite, first case of the suite, count) making up chunk ``i``."""
        if not 0 <= i < self.n_chunks:
            raise SuiteError(f"chunk {i} is outside the plan (0..{self.n_chunks - 1})")
        full = self._split(self.chunk)
        counts = self._split(self.chunk_size(i))
        return [(s, i * f, n) for s, f, n in zip(self.suites, full, counts, strict=True) if n]

    def suite_totals(self) -> dict[str, int]:
        tot = dict.fromkeys(self.suites, 0)
        full = self._split(self.chunk)
        last = self.n_chunks - 1
        for s, f in zip(self.suites, full, strict=True):
            tot[s] += f * last
        for s, _, n in self.segments(last):
            tot[s] += n
        return tot


def suite_positions(plan: Plan, i: int) -> np.ndarray:
    """For every case of chunk ``i``, its index among its suite's cases."""
    return np.concatenate([start + np.arange(n, dtype=np.int64)
                           for _, start, n in plan.segments(i)])


def make_chunk(dp: Datapath, plan: Plan, seed: int, i: int) -> tuple[Cases, np.ndarray, np.ndarray]:
    """Chunk ``i`` of a run: its cases, the generator code of each (an index
    into :func:`generator_keys` (dp, plan.suites)) and its suite index."""
    keys = generator_keys(dp, plan.suites)
    parts, codes, suites = [], [], []
    for s, start, n in plan.segments(i):
        cases, which = generate(dp, s, seed, start, n, plan.lanes if s == "sparse" else None)
        base = keys.index(generators(dp, s)[0].key)
        parts.append(cases)
        codes.append(which.astype(np.int64) + base)
        suites.append(np.full(n, plan.suites.index(s), np.int64))
    return (Cases.concat(parts), np.concatenate(codes).astype(np.uint8),
            np.concatenate(suites).astype(np.uint8))


_LOADED = False


def _load() -> None:
    """Import the modules that register generators (once)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from . import adversarial, basic, edge  # noqa: F401
