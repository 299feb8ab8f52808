"""Harness descriptions: how one logical case travels through a real tile.

A hardware harness does not run one dot product; it runs one instruction on a
whole tile. To measure a scalar datapath it replicates one K-vector across
every row of A and every column of B, writes C into every accumulator slot,
and reads back a raw dump of which only a *slice* carries the result (all of
those words must agree). This module says, per family, what that means in
physical slots, so that the sim device, the CUDA device and the ladder agree.

API (plain on purpose; the CUDA device imports it)::

    h = harness_for(dp)            # tiles.tables: Harness of a datapath (HarnessError if none)
    h.tile                         # TileSpec: buffer sizes of one tile
    h.a_layout, h.b_layout         # Layout over (row of A | column of B, k) -> slot
    h.c_layout, h.d_layout         # Layout over (row, col) -> C slot / dump index
    h.slice                        # dump words that carry D (all must agree)
    h.elems                        # the accumulator elements that carry D
    h.pack(cases) -> PhysicalBatch # one tile per case, the case replicated
    h.unpack(dump) -> words        # (T, dump_words) -> (T,), checks the slice agrees

Slots are element positions: a shared-memory element offset (wgmma,
tcgen05), or ``thread * E + e`` for the e-th element of a thread's fragment
(mma.sync). The dump and C are 32-bit words as the CUDA harness moves them
(:mod:`tcprobe.devices.cuda.launch`): mma.sync and wgmma, every accumulator
register of every thread (an f16 accumulator holds two elements, the even
one in the low half); tcgen05, tensor-memory lanes 0-127 x columns 0-7
(``lane * 8 + column``; an f16 D in the low half). ``h.elements(words)``
turns words into accumulator elements; ``h.elems``, ``h.c_read`` and
``h.d_layout`` index elements (``h.slice`` names the words) (for mma and wgmma an element index is the
fragment slot ``thread * E + e``). The published tcgen05 slices, stated as
(thread, register) of a ``16x256b`` read, map to lane 32w + t/4 (+8 for
registers 2-3), column 2 (t%4) + register%2.

Besides the documented layouts, a Harness holds per slice word the slots it
reads (``a_read``, ``b_read``: (W, K); ``c_read``: (W,)); packing writes
lane k's value into every A slot any slice word reads for k (``a_lanes``).
The ladder's ``layout`` step builds a Harness from what it measured with
:meth:`Harness.from_reads`.

The documented harness of each family is built in :mod:`tcprobe.tiles.tables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from tcprobe.models import sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.tiles import tmem
from tcprobe.tiles.layout import Layout
from tcprobe.tiles.spec import PhysicalBatch, TileSpec


class HarnessError(ValueError):
    """No harness for a datapath, or a dump whose slice words disagree."""


@dataclass(frozen=True, eq=False)
class Harness:
    """One family's harness for one datapath (see the module doc)."""

    datapath: Datapath
    tile: TileSpec
    elems: np.ndarray  # (W,) accumulator elements carrying D (see elements())
    a_lanes: tuple  # per k: int array of A slots holding a[k]
    b_lanes: tuple
    c_slots: np.ndarray  # C slots the harness fills (all accumulator slots)
    a_read: np.ndarray | None = None  # (W, K) A slot each slice word reads per lane
    b_read: np.ndarray | None = None
    c_read: np.ndarray | None = None  # (W,)
    sa_read: np.ndarray | None = None  # (W, n_scales) scale slots (block-scaled)
    sb_read: np.ndarray | None = None
    meta_read: np.ndarray | None = None  # (W, metadata words) metadata slots (sparse; packing
    # writes every lane's, so a measured harness may leave this None)
    word_rows: np.ndarray | None = None  # (W,) row of A each slice word reads (documented)
    word_cols: np.ndarray | None = None  # (W,) column of B
    a_layout: Layout | None = None  # or a TableLayout (a reordered device layout)
    b_layout: Layout | None = None
    c_layout: Layout | None = None
    d_layout: Layout | None = None
    a_packing: str = "b32"
    b_packing: str = "b32"
    halves: int = 1  # accumulator elements a dump word holds (2: packed f16)
    elem_mask: int = 0xFFFFFFFF  # bits of a word an element uses (tcgen05 f16 D: low 16)
    source: str = "documented"  # documented | measured | device truth
    notes: tuple[str, ...] = field(default=())
    sa_copies: tuple[int, ...] = (0,)  # word offsets where each scale slot is repeated
    sb_copies: tuple[int, ...] = (0,)  # (tcgen05: every warp's copy, every lane of a column)

    # -- construction -------------------------------------------------------
    @classmethod
    def from_reads(cls, dp: Datapath, tile: TileSpec, slice_: np.ndarray, a_read, b_read,
                   c_read, *, c_slots=None, sa_read=None, sb_read=None, meta_read=None,
                   **kw) -> Harness:
        """A harness from what each slice word reads (per lane); the lane
        slot sets are the unions over the slice words. Sparse datapaths read
        K/2 stored A values (a_read is (W, K/2)) and K B values."""
        slice_ = np.asarray(slice_, np.int64)
        a_read = np.asarray(a_read, np.int64)
        b_read = np.asarray(b_read, np.int64)
        c_read = np.asarray(c_read, np.int64)
        w, k = b_read.shape
        ka = dp.stored_k if dp.sparse else k
        if a_read.shape != (w, ka) or c_read.shape != (w,) or len(slice_) != w:
            raise HarnessError("slice, A, B and C read tables do not match")
        a_lanes = tuple(np.unique(a_read[:, j]) for j in range(ka))
        b_lanes = tuple(np.unique(b_read[:, j]) for j in range(k))
        for name, lanes, size in (("A", a_lanes, tile.a_slots), ("B", b_lanes, tile.b_slots)):
            flat = np.concatenate(lanes)
            if len(flat) != len(np.unique(flat)):
                raise HarnessError(f"two lanes of {name} share a slot in the slice words: "
                                   "a replicated case cannot be placed")
            if flat.size and (flat.min() < 0 or flat.max() >= size):
                raise HarnessError(f"an {name} slot lies outside the {size}-slot buffer")
        if c_slots is None:
            c_slots = np.arange(tile.c_slots)
        return cls(dp, tile, slice_, a_lanes, b_lanes, np.asarray(c_slots, np.int64),
                   a_read, b_read, c_read,
                   None if sa_read is None else np.asarray(sa_read, np.int64),
                   None if sb_read is None else np.asarray(sb_read, np.int64),
                   None if meta_read is None else np.asarray(meta_read, np.int64), **kw)

    def with_slice(self, slice_) -> Harness:
        """The same operand placement, reading the result from other words
        (per-word tables are dropped: they belong to the old slice)."""
        return replace(self, elems=np.asarray(slice_, np.int64), a_read=None, b_read=None,
                       c_read=None, sa_read=None, sb_read=None, word_rows=None, word_cols=None,
                       meta_read=None)

    # -- facts --------------------------------------------------------------
    @property
    def k(self) -> int:
        """Logical K (B's lanes; a sparse A stores K/2 of them)."""
        return len(self.b_lanes)

    @property
    def a_k(self) -> int:
        """A lanes: K, or the K/2 stored values of a sparse A."""
        return len(self.a_lanes)

    def _all_meta(self) -> np.ndarray | None:
        """Metadata slots of every tensor-memory lane, or of every row of an
        mma/wgmma sim harness (the harness fills them all)."""
        if not self.datapath.sparse or not self.tile.meta_slots:
            return None
        words = sparsity.n_words(self.datapath)
        cols = tmem.META_COLS if self.datapath.family == "tcgen05" else words
        return np.arange(self.tile.meta_slots).reshape(-1, cols)[:, :words]

    @property
    def slice(self) -> np.ndarray:
        """Dump words that carry D (sorted; an f16 register counts once)."""
        return np.unique(self.elems // self.halves)

    @property
    def labels(self) -> tuple[str, ...]:
        return self.tile.dump_labels

    def label(self, index: int) -> str:
        """The name of accumulator element ``index`` (a dump word, or its half)."""
        if self.halves == 2:
            word, half = divmod(int(index), 2)
            base = self.labels[word] if self.labels else f"w{word}"
            return f"{base}.{'hi' if half else 'lo'}"
        return self.labels[index] if self.labels else f"w{index}"

    def elements(self, words: np.ndarray) -> np.ndarray:
        """(T, words) dump or C words -> (T, elements): packed f16 registers
        split into their two halves (low first)."""
        w = np.atleast_2d(np.asarray(words, np.uint32))
        if self.halves == 2:
            out = np.empty((w.shape[0], 2 * w.shape[1]), np.uint32)
            out[:, 0::2] = w & 0xFFFF
            out[:, 1::2] = w >> 16
            return out
        return w & np.uint32(self.elem_mask) if self.elem_mask != 0xFFFFFFFF else w

    def c_words(self, c: np.ndarray) -> np.ndarray:
        """The word that puts C into every element of an accumulator word."""
        c = np.asarray(c, np.uint32)
        return (c | (c << 16)).astype(np.uint32) if self.halves == 2 else c

    @property
    def n_elements(self) -> int:
        return self.tile.dump_words * self.halves

    def slice_labels(self) -> list[str]:
        return [self.label(int(i)) for i in self.elems]

    # -- packing ------------------------------------------------------------
    def pack(self, cases: Cases) -> PhysicalBatch:
        """One tile per case: the case's K-vector in every row of A and column
        of B (every slot of lane k), C in every accumulator slot, scale bytes
        in every scale slot the slice reads. A sparse case's A goes in
        compressed (its K/2 active values, in the order the metadata names
        them) and its metadata words into every lane's metadata columns; B
        stays dense, disabled positions included (the device must ignore them)."""
        dp = self.datapath
        if cases.k != self.k:
            raise HarnessError(f"cases have K={cases.k}; the {dp.id} harness has K={self.k}")
        n = len(cases)
        t = self.tile
        a_words, b_words = cases.a, cases.b
        meta = None
        if dp.sparse:
            if cases.active is None:
                raise HarnessError(f"{dp.id} is sparse: the cases need their active positions")
            try:
                words, pos = sparsity.encode(dp, cases.active)
            except sparsity.SparsityError as e:
                raise HarnessError(str(e)) from None
            a_words = np.take_along_axis(cases.a, pos, axis=1)
            meta = np.zeros((n, t.meta_slots), np.uint32)
            slots = self._all_meta()
            for j in range(words.shape[1]):
                meta[:, slots[:, j]] = words[:, j:j + 1]
        a = np.zeros((n, t.a_slots), np.uint32)
        b = np.zeros((n, t.b_slots), np.uint32)
        for j in range(self.a_k):
            a[:, self.a_lanes[j]] = a_words[:, j:j + 1]
        for j in range(self.k):
            b[:, self.b_lanes[j]] = b_words[:, j:j + 1]
        c = np.zeros((n, t.c_slots), np.uint32)
        c[:, self.c_slots] = self.c_words(cases.c)[:, None]
        sa = sb = None
        if dp.block_scaled:
            if cases.scale_a is None or cases.scale_b is None:
                raise HarnessError(f"{dp.id} needs scale_a and scale_b")
            sa = np.zeros((n, t.scale_slots), np.uint32)
            sb = np.zeros((n, t.scale_slots), np.uint32)
            if self.sa_read is not None:
                for j in range(self.sa_read.shape[1]):
                    for buf, read, copies, val in ((sa, self.sa_read, self.sa_copies, cases.scale_a),
                                                   (sb, self.sb_read, self.sb_copies, cases.scale_b)):
                        for slot in np.unique(read[:, j]):  # byte slots: word * 4 + byte
                            byte = (val[:, j] & 0xFF) << np.uint32(8 * (slot % 4))
                            for off in copies:
                                buf[:, slot // 4 + off] |= byte
        return PhysicalBatch(a, b, c, sa, sb, meta)

    def unpack(self, dump: np.ndarray) -> np.ndarray:
        """The result word of each tile: its slice words, which must agree."""
        dump = np.atleast_2d(np.asarray(dump, np.uint32))
        if dump.shape[1] != self.tile.dump_words:
            raise HarnessError(f"a dump of {dump.shape[1]} words; the harness reads "
                               f"{self.tile.dump_words}")
        words = self.elements(dump)[:, self.elems]
        bad = (words != words[:, :1]).any(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            j = int(np.flatnonzero(words[i] != words[i, 0])[0])
            raise HarnessError(
                f"slice words disagree in {int(bad.sum())} of {len(dump)} tiles (tile {i}: "
                f"{self.label(int(self.elems[0]))}={int(words[i, 0]):#x}, "
                f"{self.label(int(self.elems[j]))}={int(words[i, j]):#x})")
        return words[:, 0].copy()

    def run(self, launch, cases: Cases, chunk: int = 2048) -> np.ndarray:
        """Result words of logical cases the long way (the tile round trip):
        each chunk of cases packed into tiles, ``launch(batch) -> dumps``,
        the slice read back."""
        out = np.empty(len(cases), np.uint32)
        for lo in range(0, len(cases), chunk):
            part = cases.take(slice(lo, lo + chunk))
            out[lo:lo + len(part)] = self.unpack(launch(self.pack(part)))
        return out

    def describe(self) -> dict:
        """A JSON-able account of the harness."""
        out = {
            "instruction": self.tile.instruction,
            "source": self.source,
            "tile": {"m": self.tile.m, "n": self.tile.n, "k": self.tile.k,
                     "a_slots": self.tile.a_slots, "b_slots": self.tile.b_slots,
                     "c_slots": self.tile.c_slots, "dump_words": self.tile.dump_words},
            "slice": [int(i) for i in self.slice],
            "slice_elements": [int(i) for i in self.elems],
            "slice_labels": self.slice_labels(),
            "elements_per_word": self.halves,
            "a_lanes": [[int(s) for s in lane] for lane in self.a_lanes],
            "b_lanes": [[int(s) for s in lane] for lane in self.b_lanes],
        }
        for name in ("a_layout", "b_layout", "c_layout", "d_layout"):
            lay = getattr(self, name)
            if lay is not None:
                out[name] = str(lay)
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def same_placement(self, other: Harness) -> bool:
        """Whether two harnesses place every lane and read the same words."""
        same = lambda x, y: len(x) == len(y) and all(  # noqa: E731
            np.array_equal(np.sort(p), np.sort(q)) for p, q in zip(x, y, strict=True))
        return (same(self.a_lanes, other.a_lanes) and same(self.b_lanes, other.b_lanes)
                and np.array_equal(np.sort(self.elems), np.sort(other.elems)))
