"""Layouts: maps from logical operand coordinates to physical slots.

A Layout is written the CuTe way, as (shape):(stride) per logical mode: a
coordinate of a mode is split colexicographically over that mode's shape
(first sub-mode fastest) and dotted with its strides. Operand layouts are
over (row of A or column of B, k); output layouts over (row, col) of D.

Layouts compose as functions (CuTe's composition): ``outer.compose(inner)``
maps a coordinate through ``inner`` to an index of ``outer``'s domain (its
coordinates counted colexicographically) and then through ``outer``.
``permute(mode, order)`` reorders one mode (a composition with a reordering
of that mode); where the result has no (shape):(stride) form it is a
:class:`TableLayout`, the same map given by its table. Reorderings of one
mode are 1-D layouts (:func:`reverse`, :func:`rotate`, :func:`shuffle`,
:func:`reorder`).

A physical slot is one element position the harness fills or reads: a
shared-memory element offset, or ``thread * E + e`` for the e-th element of
a thread's register fragment. The sim device, the CUDA harnesses and the
ladder's ``layout`` step all speak of these objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


def _flat(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class _Map:
    """What every layout does, given ``dims`` and ``table``."""

    dims: tuple[int, ...]
    table: np.ndarray

    @property
    def size(self) -> int:
        """Coordinates in the domain."""
        return int(np.prod(self.dims))

    @property
    def cosize(self) -> int:
        """Slots a buffer needs to hold every coordinate."""
        return int(self.table.max()) + 1

    @cached_property
    def flat(self) -> np.ndarray:
        """Slots in colexicographic order of the coordinates (first mode fastest)."""
        return self.table.ravel(order="F")

    def compose(self, inner: _Map) -> Layout | TableLayout:
        """``self`` after ``inner``: coordinate c -> slot ``self.flat[inner(c)]``
        (inner's slots index self's domain colexicographically)."""
        if inner.size and (inner.table.min() < 0 or inner.table.max() >= self.size):
            raise ValueError(f"{inner} reaches past the {self.size} coordinates of {self}")
        table = self.flat[inner.table]
        return _simplest(table, f"{self} o {inner}")

    def permute(self, mode: int, order: _Map | np.ndarray) -> Layout | TableLayout:
        """The layout whose coordinate k of ``mode`` is ``self``'s coordinate
        order[k] (the other modes unchanged)."""
        order = order.table if isinstance(order, _Map) else np.asarray(order, np.int64)
        if sorted(order.tolist()) != list(range(self.dims[mode])):
            raise ValueError(f"a reordering of mode {mode} must be a permutation of "
                             f"0..{self.dims[mode] - 1}")
        grids = list(np.meshgrid(*[np.arange(n) for n in self.dims], indexing="ij"))
        grids[mode] = order[grids[mode]]
        index = np.ravel_multi_index(tuple(grids), self.dims, order="F")
        return self.compose(TableLayout(index, f"mode {mode} reordered {_name(order)}"))

    def offset(self, *coords):
        """Physical slot of logical coordinates (ints or numpy arrays)."""
        return self.table[tuple(np.asarray(c) for c in coords)]


@dataclass(frozen=True)
class Layout(_Map):
    shape: tuple  # per mode: an int or a tuple of ints
    stride: tuple  # the same nesting as shape

    def __post_init__(self):
        if len(self.shape) != len(self.stride):
            raise ValueError("shape and stride need one entry per mode")
        for s, d in zip(self.shape, self.stride, strict=True):
            if len(_flat(s)) != len(_flat(d)):
                raise ValueError(f"mode {s} and stride {d} do not match")

    @property
    def dims(self) -> tuple[int, ...]:
        """Extent of each logical mode."""
        return tuple(int(np.prod(_flat(s))) for s in self.shape)

    def offset(self, *coords):
        """Physical slot of logical coordinates (ints or numpy arrays)."""
        total = 0
        for c, s, d in zip(coords, self.shape, self.stride, strict=True):
            c = np.asarray(c)
            for sub, st in zip(_flat(s), _flat(d), strict=True):
                total = total + (c % sub) * st
                c = c // sub
        return total

    @cached_property
    def table(self) -> np.ndarray:
        """The slot of every logical coordinate, as an array of shape ``dims``."""
        grids = np.meshgrid(*[np.arange(n) for n in self.dims], indexing="ij")
        return np.asarray(self.offset(*grids), dtype=np.int64)

    def __str__(self) -> str:
        def fmt(x):
            x = _flat(x)
            return str(x[0]) if len(x) == 1 else "(" + ",".join(map(str, x)) + ")"
        return f"({','.join(fmt(s) for s in self.shape)}):({','.join(fmt(d) for d in self.stride)})"

    @classmethod
    def from_table(cls, table: np.ndarray) -> Layout | None:
        """The Layout whose table equals ``table``, found by splitting each mode
        at powers of two; None when no (shape, stride) form reproduces it."""
        table = np.asarray(table)
        shapes, strides = [], []
        for axis, n in enumerate(table.shape):
            idx = [0] * table.ndim
            subs, sts, size = [], [], 1
            while size < n:
                idx[axis] = size
                st = int(table[tuple(idx)] - table[(0,) * table.ndim])
                # grow this sub-mode while the stride pattern holds
                ext = 2
                while size * ext <= n and n % (size * ext) == 0:
                    idx[axis] = size * (ext - 1)
                    if int(table[tuple(idx)] - table[(0,) * table.ndim]) != st * (ext - 1):
                        break
                    ext *= 2
                ext //= 2
                if ext < 2:
                    ext = 2
                subs.append(ext)
                sts.append(st)
                size *= ext
            shapes.append(tuple(subs) if len(subs) != 1 else subs[0])
            strides.append(tuple(sts) if len(sts) != 1 else sts[0])
        cand = cls(tuple(shapes), tuple(strides))
        try:
            ok = cand.dims == table.shape and np.array_equal(cand.table, table - table.flat[0])
        except ValueError:
            ok = False
        return cand if ok else None


@dataclass(frozen=True, eq=False)
class TableLayout(_Map):
    """A layout given by the slot of every coordinate: what a composition
    with a reordering leaves where no (shape):(stride) form fits."""

    slots: np.ndarray  # the table, shape = dims
    how: str = ""  # how it was built, for reports

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(int(n) for n in np.shape(self.slots))

    @cached_property
    def table(self) -> np.ndarray:
        return np.asarray(self.slots, np.int64)

    def __str__(self) -> str:
        return self.how or f"table {'x'.join(map(str, self.dims))}"


def _simplest(table: np.ndarray, how: str) -> Layout | TableLayout:
    """The (shape):(stride) Layout of ``table`` where one fits, else a TableLayout."""
    if table.size and int(table.flat[0]) == 0:
        found = Layout.from_table(table)
        if found is not None:
            return found
    return TableLayout(table, how)


def _name(order: np.ndarray) -> str:
    n = len(order)
    if np.array_equal(order, np.arange(n)[::-1]):
        return "reversed"
    if n and np.array_equal(order, np.roll(np.arange(n), -int(order[0]))):
        return f"rotated by {int(order[0])}"
    return "[" + ",".join(map(str, order.tolist())) + "]"


def reorder(order) -> TableLayout:
    """The 1-D reordering k -> order[k] (a permutation of 0..n-1)."""
    order = np.asarray(order, np.int64)
    if sorted(order.tolist()) != list(range(len(order))):
        raise ValueError(f"{order.tolist()} is not a permutation of 0..{len(order) - 1}")
    return TableLayout(order, _name(order))


def reverse(n: int) -> TableLayout:
    return reorder(np.arange(n)[::-1])


def rotate(n: int, by: int) -> TableLayout:
    """k -> (k + by) mod n."""
    return reorder(np.roll(np.arange(n), -by))


def shuffle(n: int, seed: int) -> TableLayout:
    """A seeded random reordering of 0..n-1."""
    return reorder(np.random.default_rng(seed).permutation(n))


def inverse(order: _Map) -> TableLayout:
    """The reordering that undoes a 1-D reordering."""
    return reorder(np.argsort(order.table))


# ---------------------------------------------------------------------------
# Documented layouts (PTX ISA fragment tables; tcgen05 write-up and notes).
# Register fragments: slot = lane * E + element, with groupID = lane >> 2 and
# threadID_in_group = lane & 3 as the PTX ISA names them.

MMA_FRAGMENTS = {
    # (shape, A bits) -> (A over (row, k), B over (col, k), D over (row, col))
    ("m16n8k16", 16): (Layout(((8, 2), (2, 4, 2)), ((32, 2), (1, 8, 4))),
                       Layout((8, (2, 4, 2)), (16, (1, 4, 2))),
                       Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))),
    ("m16n8k8", 16): (Layout(((8, 2), (2, 4)), ((16, 2), (1, 4))),
                      Layout((8, (2, 4)), (8, (1, 2))),
                      Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))),
    ("m16n8k8", 32): (Layout(((8, 2), (4, 2)), ((16, 1), (4, 2))),
                      Layout((8, (4, 2)), (8, (2, 1))),
                      Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))),
    ("m16n8k4", 32): (Layout(((8, 2), 4), ((8, 1), 2)),
                      Layout((8, 4), (4, 1)),
                      Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))),
    ("m16n8k32", 8): (Layout(((8, 2), (4, 4, 2)), ((64, 4), (1, 16, 8))),
                      Layout((8, (4, 4, 2)), (32, (1, 8, 4))),
                      Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))),
    ("m16n8k16", 8): (Layout(((8, 2), (4, 4)), ((32, 4), (1, 8))),
                      Layout((8, (4, 4)), (16, (1, 4))),
                      Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))),
}


def _modes(pairs) -> tuple[tuple, tuple]:
    """(shape, stride) of one mode from (extent, stride) sub-modes, dropping
    the sub-modes of extent 1."""
    kept = [(n, d) for n, d in pairs if n > 1] or [(1, 0)]
    if len(kept) == 1:
        return kept[0]
    return tuple(n for n, _ in kept), tuple(d for _, d in kept)


def mma_fragment_layouts(k: int, bits: int) -> tuple[Layout, Layout, Layout]:
    """(A over (row, k), B over (col, k), D over (row, col)) of
    mma.sync.m16n8kK with ``bits``-bit elements, by the rule every PTX ISA
    fragment table of m16n8kK follows: a thread holds K/2 elements of A and
    K/4 of B, r = 32/bits to a register. A register j of A is row groupID
    (+8 for odd j), K columns threadID_in_group * r + e (+4r for j >= 2); a
    register j of B is column groupID, K rows threadID_in_group * r + e + 4rj.
    It reproduces :data:`MMA_FRAGMENTS` (tests) and gives the sub-byte shapes
    (s4/u4 m16n8k32/k64, b1 m16n8k128/k256) and the B of mma.sp."""
    r = 32 // bits
    ea, eb = k // 2, k // 4
    ra, rb = ea // r, eb // r
    rows_a = _modes(((8, 4 * ea), (2, r)))
    k_a = _modes(((r, 1), (4, ea), (ra // 2, 2 * r)))
    a = Layout((rows_a[0], k_a[0]), (rows_a[1], k_a[1]))
    k_b = _modes(((r, 1), (4, eb), (rb, r)))
    b = Layout((8, k_b[0]), (4 * eb, k_b[1]))
    d = Layout(((8, 2), (2, 4)), ((16, 2), (1, 4)))
    return a, b, d


def core_matrix_layout(rows: int, k: int, elems_per_16b: int, lbo: int, sbo: int) -> Layout:
    """K-major, unswizzled shared-memory layout of wgmma/tcgen05 operands:
    core matrices of 8 rows x 16 bytes, LBO (elements) between core matrices
    along K, SBO (elements) between them along rows."""
    t = elems_per_16b
    return Layout(((8, max(rows // 8, 1)), (t, max(k // t, 1))),
                  ((t, sbo), (1, lbo)))


# wgmma m64nNk: D fragment of a warpgroup, slot = thread * (N/2) + element.
def wgmma_d_layout(n: int) -> Layout:
    """wgmma accumulator fragment: row = 16*warp + groupID (+8), col =
    8*(i>>2) + 2*threadID_in_group + (i&1); slot = thread*(n/2) + i."""
    e = n // 2
    return Layout(((8, 2, 4), (2, 4, n // 8)), ((4 * e, 2, 32 * e), (1, e, 4)))
