"""A GEMM probe whose D shows where a library kernel splits K.

Each element of D watches one boundary between two K units (``unit`` K
elements each): its products are zero except a *base* in unit t (two terms
whose exact sum sits on a rounding tie of the output format, or 1.0 for an
f32 output) and a *small* term s in unit t+1, with s between half and one
f32 ulp of the base. Summed in one accumulator chain (the instruction's
window keeps s, the chain's conversion to f32 truncates it; either order),
s is lost and D is the base rounded to even: ``same``. Where a split (or a
stream-K unit) starts at unit t+1, the two partials meet in an f32 add
rounded to nearest, s moves the sum past the tie and D rounds up: ``split``.
A serial split-K that rounds each split to a narrow output type between
splits loses s as well: it reads as ``same`` (the other gemm-probe cases
separate it).

Layout: row i watches the window of ``width`` units starting at
``(width - 1) * (i % rows)`` (A holds 1 on lanes 0 and 1 of those units);
column j picks the units whose index is ``j % width`` (the base, lanes 0 and
1) and ``j % width + 1`` modulo ``width`` (s, lane 0) in B. Within a window
every residue appears once, so element (i, j) sees exactly the pair (t, t+1)
or, where the residues wrap, two far-apart units (not read). Every block of
``rows`` x ``width`` elements watches every boundary, so a kernel whose
output tiles split K differently (stream-K) shows each tile's boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .operands import MatmulError

# format: (D dtype, base terms on lanes 0 and 1, s, D word "same", D word "split")
VALUES = {
    "bf16": (ml_dtypes.bfloat16, (1.0, 2.0 ** -8), 3 * 2.0 ** -25, 0x3F80, 0x3F81),
    "f16": (np.float16, (16.0, 2.0 ** -7), 3 * 2.0 ** -21, 0x4C00, 0x4C01),
    "tf32": (np.float32, (1.0, 0.0), 3 * 2.0 ** -25, 0x3F800000, 0x3F800001),
}
ROWS = 16


@dataclass(frozen=True)
class Layout:
    """Where each element's window and units sit (module doc)."""

    unit: int  # K elements a unit
    units: int  # K / unit
    rows: int  # rows of one complete block
    width: int  # units in a window = columns of one complete block

    def pair(self, i: int, j: int) -> tuple[int, int] | None:
        """The adjacent units (t, t+1) element (i, j) watches, or None."""
        start = (self.width - 1) * (i % self.rows)
        lo = start + (j % self.width - start) % self.width
        hi = start + ((j + 1) % self.width - start) % self.width
        if hi != lo + 1 or hi >= self.units:
            return None
        return lo, hi


def layout(k: int, m: int, n: int) -> Layout:
    """The probe's layout for an m x n x k GEMM: the smallest unit of 8, 16,
    32 ... K elements whose boundaries one block of rows x width covers."""
    rows, width = min(ROWS, m), min(64, n)
    if width < 2:
        raise MatmulError("n: the split probe needs at least 2 columns")
    unit = 8
    while (k // unit - 1) > rows * (width - 1):
        unit *= 2
    if k % unit or k // unit < 2:
        raise MatmulError(f"k: the split probe needs K a multiple of {unit} with two units, not {k}")
    return Layout(unit, k // unit, rows, width)


def operands(fmt: str, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A (m, k) and B (k, n) of the probe, as float32 values exact in ``fmt``."""
    if fmt not in VALUES:
        raise MatmulError(f"format: the split probe takes {', '.join(VALUES)}, not {fmt!r}")
    lay = layout(k, m, n)
    _, (hi, lo), s, _, _ = VALUES[fmt]
    a = np.zeros((m, k), np.float32)
    b = np.zeros((k, n), np.float32)
    for i in range(m):
        start = (lay.width - 1) * (i % lay.rows)
        for t in range(start, min(start + lay.width, lay.units)):
            a[i, t * lay.unit:t * lay.unit + 2] = 1.0
    for j in range(n):
        res = j % lay.width
        for t in range(lay.units):
            if t % lay.width == res:
                b[t * lay.unit, j], b[t * lay.unit + 1, j] = hi, lo
            elif t % lay.width == (res + 1) % lay.width:
                b[t * lay.unit, j] = s
    return a, b


@dataclass
class Bounds:
    """What a probe's D says: for each block of rows x width elements, the
    K offsets where a new split starts, and the words no rule explains."""

    unit: int
    blocks: dict[tuple[int, int], tuple[int, ...]]
    unexpected: int

    def uniform(self) -> tuple[int, ...] | None:
        """The one set of split starts every block shows, or None where they differ."""
        sets = set(self.blocks.values())
        return next(iter(sets)) if len(sets) == 1 else None


def read(fmt: str, d: np.ndarray, k: int) -> Bounds:
    """The split starts a probe's D words show (module doc)."""
    m, n = d.shape
    lay = layout(k, m, n)
    same, split = VALUES[fmt][3], VALUES[fmt][4]
    blocks: dict[tuple[int, int], set[int]] = {}
    unexpected = 0
    for i in range(m):
        for j in range(n):
            pair = lay.pair(i, j)
            if pair is None:
                continue
            w = int(d[i, j])
            key = (i // lay.rows, j // lay.width)
            seen = blocks.setdefault(key, set())
            if w == split:
                seen.add(pair[1] * lay.unit)
            elif w != same:
                unexpected += 1
    return Bounds(lay.unit, {key: tuple(sorted(v)) for key, v in blocks.items()}, unexpected)
