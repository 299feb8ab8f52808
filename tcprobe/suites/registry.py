"""The generator registry: what a generator knows of the datapath
(:class:`Ctx`), the suites' generators by name, and the legal sparse
selection masks a generator may draw."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from tcprobe.models import sparsity
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Format, get_format

from .words import Bits

SUITES = ("raw", "finite", "edge", "adversarial", "sparse")
SUITE_IDS = {name: i + 1 for i, name in enumerate(SUITES)}
# Share of a run's cases per suite (normalized over the suites selected).
WEIGHTS = {"raw": 3, "finite": 2, "edge": 1, "adversarial": 3, "sparse": 1}



@dataclass(frozen=True)
class Ctx:
    """What a generator needs to know about the datapath."""

    dp: Datapath
    fa: Format
    fb: Format
    fc: Format
    fd: Format
    fs: Format | None
    k: int
    n_scales: int
    lanes: tuple[int, ...] | None = None  # active-lane counts of the sparse suite (None: all)

    @classmethod
    def of(cls, dp: Datapath, lanes: tuple[int, ...] | None = None) -> Ctx:
        return cls(dp, get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c),
                   get_format(dp.d_type), get_format(dp.scale_type) if dp.scale_type else None,
                   dp.k, dp.n_scales, lanes)

    @property
    def max_lanes(self) -> int:
        """The most product lanes a case can have active: K, or the positions
        the metadata selects for a sparse datapath."""
        if self.dp.sparse:
            per, kept = self.sparse_group
            return self.k // per * kept
        return self.k

    @property
    def is_integer(self) -> bool:
        return self.dp.is_integer

    @property
    def sparse_group(self) -> tuple[int, int]:
        """(positions per chunk, selected per chunk) of a sparse datapath
        (models/sparsity.py: 1 of 2 for tf32, 2 of 4, 4 of 8 in pairs for
        packed e2m1)."""
        chunks = sparse_chunks(self.dp)
        return chunks.shape[1], int(chunks[0].sum())


# A generator returns a dict with some of: a, b (n, K), c (n,), scale_a,
# scale_b (n, n_scales), active (n, K) bool. What it leaves out is filled in:
# unit scales, and for sparse datapaths a random selection pattern.
Parts = dict
GenFn = Callable[[Ctx, Bits, np.ndarray], Parts]


@dataclass(frozen=True)
class Generator:
    suite: str
    name: str
    doc: str
    fn: GenFn = field(repr=False)
    applies: Callable[[Ctx], bool] = field(default=lambda ctx: True, repr=False)

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.name}"


REGISTRY: dict[str, list[Generator]] = {s: [] for s in SUITES}


def register(suite: str, name: str, applies: Callable[[Ctx], bool] | None = None):
    """Decorator: add a generator to a suite (its docstring says what it aims at)."""
    def wrap(fn: GenFn) -> GenFn:
        doc = " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())
        REGISTRY[suite].append(Generator(suite, name, doc, fn, applies or (lambda ctx: True)))
        return fn
    return wrap


@cache
def sparse_chunks(dp: Datapath) -> np.ndarray:
    """Every selection one metadata selector can make in a chunk of K
    positions, as (choices, chunk width) booleans: the legal selectors of
    models/sparsity.py, duplicates (0x6 and 0x9) once."""
    width = sparsity.chunk_width(dp)
    kept = sorted({tuple(sorted(sparsity.kept_positions(dp, sel)))
                   for sel in sparsity.legal_selectors(dp)})
    return np.array([[i in pos for i in range(width)] for pos in kept], dtype=bool)


def sparse_masks(ctx: Ctx, bits: Bits, n: int, pattern=None) -> np.ndarray:
    """Legal selection masks (n, K), one selector per chunk of K; ``pattern``
    (n,) picks the choice of every chunk by mixed radix, else random."""
    combos = sparse_chunks(ctx.dp)
    group = combos.shape[1]
    n_groups = max(1, ctx.k // group)
    if pattern is None:
        choice = bits.below((n, n_groups), len(combos))
    else:
        pattern = np.asarray(pattern, np.int64)
        choice = np.stack([(pattern // len(combos) ** g) % len(combos) for g in range(n_groups)],
                          axis=1)
    return combos[choice].reshape(n, n_groups * group)[:, : ctx.k]
