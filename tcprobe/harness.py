"""Harness descriptions: how one logical case travels through a real tile.

A hardware harness does not run one dot product; it runs one instruction on a
whole tile. To measure a scalar datapath it replicates one K-vector across
every row of A and every column of B, writes C into every accumulator slot,
and reads back a raw dump of which only a *slice* carries the result (all of
those words must agree). This module says, per family, what that means in
physical slots, so that the sim device, the CUDA device and the ladder agree.

API (plain on purpose; the CUDA device imports it)::

    h = harness_for(dp)            # Harness of a datapath (HarnessError if none)
    h.tile                         # TileSpec: buffer sizes of one tile
    h.a_layout, h.b_layout         # Layout over (row of A | column of B, k) -> slot
    h.c_layout, h.d_layout         # Layout over (row, col) -> C slot / dump index
    h.slice                        # dump words that carry D (all must agree)
    h.elems                        # the accumulator elements that carry D
    h.pack(cases) -> PhysicalBatch # one tile per case, the case replicated
    h.unpack(dump) -> words        # (T, dump_words) -> (T,), checks the slice agrees
    h.smem_bytes(slots, "a")       # element codes -> shared-memory bytes (fp6/fp4 packing)

Slots are element positions: a shared-memory element offset (wgmma,
tcgen05), or ``thread * E + e`` for the e-th element of a thread's fragment
(mma.sync). The dump and C are 32-bit words as the CUDA harness moves them
(:mod:`tcprobe.devices.cuda_launch`): mma.sync and wgmma, every accumulator
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

Evidence for the layouts: PTX ISA fragment tables (mma.sync, wgmma D);
CUTLASS's SM70 quad-pair traits (mma.m8n8k4 on V100); the tcgen05 write-up
and its release for tcgen05 (``../shared/notes/tcgen05-published-parameters.md``:
shared-memory offsets, the 16x256b read, the stable slices per format).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from tcprobe.devices.base import PhysicalBatch, TileSpec
from tcprobe.layout import MMA_FRAGMENTS, Layout, core_matrix_layout, wgmma_d_layout
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format


class HarnessError(ValueError):
    """No harness for a datapath, or a dump whose slice words disagree."""


# Shared-memory packing of one element kind (names as PTX spells them).
PACKINGS = {32: "b32", 16: "b16", 8: "b8", 6: "b6x16_p32", 4: "b4x16_p64"}


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
    a_layout: Layout | None = None
    b_layout: Layout | None = None
    c_layout: Layout | None = None
    d_layout: Layout | None = None
    a_packing: str = "b32"
    b_packing: str = "b32"
    halves: int = 1  # accumulator elements a dump word holds (2: packed f16)
    elem_mask: int = 0xFFFFFFFF  # bits of a word an element uses (tcgen05 f16 D: low 16)
    source: str = "documented"  # documented | measured | device truth
    notes: tuple[str, ...] = field(default=())

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
        """Metadata slots of every tensor-memory lane (the harness fills them all)."""
        if not self.datapath.sparse or not self.tile.meta_slots:
            return None
        words = n_meta_words(self.datapath)
        return np.arange(self.tile.meta_slots).reshape(-1, META_COLS)[:, :words]

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
            words, pos = sparse_encode(dp, cases.active)
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
                    for buf, read, val in ((sa, self.sa_read, cases.scale_a),
                                           (sb, self.sb_read, cases.scale_b)):
                        for slot in np.unique(read[:, j]):  # byte slots: word * 4 + byte
                            buf[:, slot // 4] |= (val[:, j] & 0xFF) << np.uint32(8 * (slot % 4))
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

    def smem_bytes(self, slots: np.ndarray, operand: str = "a") -> np.ndarray:
        """Element codes (T, slots) as the shared-memory bytes the instruction
        reads: little-endian elements; b6x16_p32 packs 16 six-bit codes into
        12 bytes plus 4 zero bytes, b4x16_p64 16 four-bit codes (low nibble
        first) into 8 bytes plus 8 zero bytes (PTX ISA; MMA-Sim PR: B300)."""
        return pack_elements(slots, self.a_packing if operand == "a" else self.b_packing)

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


def pack_elements(slots: np.ndarray, packing: str) -> np.ndarray:
    """Element codes -> bytes (see :meth:`Harness.smem_bytes`)."""
    x = np.atleast_2d(np.asarray(slots, np.uint64))
    t, n = x.shape
    if packing in ("b32", "b16", "b8"):
        width = {"b32": 4, "b16": 2, "b8": 1}[packing]
        return np.ascontiguousarray(x.astype({4: "<u4", 2: "<u2", 1: "u1"}[width])).view(
            np.uint8).reshape(t, n * width)
    bits = {"b6x16_p32": 6, "b4x16_p64": 4}.get(packing)
    if bits is None:
        raise HarnessError(f"unknown packing {packing!r}")
    if n % 16:
        raise HarnessError(f"{packing} needs a multiple of 16 elements, not {n}")
    groups = x.reshape(t, n // 16, 16) & np.uint64((1 << bits) - 1)
    shifts = np.arange(16, dtype=np.uint64) * np.uint64(bits)
    lo = (groups[..., :8] << shifts[:8]).sum(axis=-1, dtype=np.uint64)  # bits 0..8*bits-1
    hi = (groups[..., 8:] << (shifts[8:] - shifts[8])).sum(axis=-1, dtype=np.uint64)
    out = np.zeros((t, n // 16, 16), np.uint8)
    nbytes = 2 * bits  # 12 or 8 data bytes per 16 elements
    half = 8 * bits  # bits in the low group
    for byte in range(nbytes):
        bit = 8 * byte
        if bit + 8 <= half:
            v = lo >> np.uint64(bit)
        elif bit >= half:
            v = hi >> np.uint64(bit - half)
        else:
            v = (lo >> np.uint64(bit)) | (hi << np.uint64(half - bit))
        out[..., byte] = (v & np.uint64(0xFF)).astype(np.uint8)
    return out.reshape(t, n)


# ---------------------------------------------------------------------------
# Builders, one per family.


def _labels(threads: int, per: int) -> tuple[str, ...]:
    return tuple(f"t{t}.r{r}" for t in range(threads) for r in range(per))


def _words_from_layouts(d_table, a_table, b_table, c_table, slice_):
    """Per slice element: (row, col) from the D table, then the A/B/C slots."""
    inv = {int(v): (r, c) for (r, c), v in np.ndenumerate(d_table) if v >= 0}
    rows = np.array([inv[int(s)][0] for s in slice_])
    cols = np.array([inv[int(s)][1] for s in slice_])
    return a_table[rows], b_table[cols], c_table[rows, cols], rows, cols


def _acc(dp: Datapath, per_thread: int) -> tuple[int, int]:
    """(accumulator words a thread, elements a word): an f16 accumulator packs
    two elements a register, anything else one."""
    if get_format(dp.d_type).name == "f16":
        return per_thread // 2, 2
    return per_thread, 1


_MMA_SHAPE = {  # input format -> element bits of its register fragment
    "tf32": 32, "bf16": 16, "f16": 16, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
}


def mma_harness(dp: Datapath) -> Harness:
    """mma.sync.aligned.m16n8kK: register fragments of one warp (PTX ISA),
    or m8n8k4 (V100's quad pairs) for f16 with K=4."""
    a = get_format(dp.a_type).name
    if a == "f16" and dp.k == 4 and get_format(dp.b_type).name == "f16":
        return _m8n8k4_harness(dp)
    bits = _MMA_SHAPE.get(a)
    key = (f"m16n8k{dp.k}", bits)
    if bits is None or key not in MMA_FRAGMENTS or _MMA_SHAPE.get(get_format(dp.b_type).name) != bits:
        raise HarnessError(f"no mma.sync harness for {dp.id} "
                           f"(shapes: {', '.join(f'{s}/{b}-bit' for s, b in MMA_FRAGMENTS)})")
    la, lb, ld = MMA_FRAGMENTS[key]
    d_out = get_format(dp.d_type).name
    c_in = get_format(dp.c).name
    ptx = (f"mma.sync.aligned.m16n8k{dp.k}.row.col.{d_out}.{dp.a_type}.{dp.b_type}.{c_in}")
    regs, halves = _acc(dp, 4)
    tile = TileSpec(16, 8, dp.k, la.cosize, lb.cosize, 32 * regs, 32 * regs, _labels(32, regs),
                    instruction=ptx)
    slice_ = np.arange(128)  # element = fragment slot: lane * 4 + e
    a_read, b_read, c_read, rows, cols = _words_from_layouts(ld.table, la.table, lb.table,
                                                             ld.table, slice_)
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, c_read, a_layout=la, b_layout=lb,
                              c_layout=ld, d_layout=ld, word_rows=rows, word_cols=cols,
                              a_packing=PACKINGS[bits], b_packing=PACKINGS[bits], halves=halves)


def _m8n8k4_harness(dp: Datapath) -> Harness:
    """mma.sync.aligned.m8n8k4.row.col (sm_70): four 8x8x4 MMAs per warp,
    one per quad pair (lanes 4q..4q+3 and 4q+16..4q+19). Logical thread t of
    a quad pair holds row t of A and column t of B (k = element); an f32
    accumulator element v of thread t is row t0 + 2 v1 + 4 t2, column
    v0 + 2 t1 + 4 v2 (bits of t and v), an f16 one row t, column v (CUTLASS
    SM70 traits). Rows and B columns here are 8 q + row."""
    f16_out = get_format(dp.d_type).name == "f16"
    # (quad pair q, row m) -> lane; A/B slot = 4 lane + k; D element = 8 lane + v.
    a_lay = Layout(((4, 2, 4), 4), ((4, 64, 16), 1))
    if f16_out:
        d_lay = Layout(((4, 2, 4), 8), ((8, 128, 32), 1))
    else:
        d_lay = Layout(((2, 2, 2, 4), (2, 2, 2)), ((8, 2, 128, 32), (1, 16, 4)))
    rows = np.arange(32).repeat(8)
    cols = np.tile(np.arange(8), 32)
    quad = rows // 8
    slice_ = d_lay.table[rows, cols]
    a_read = a_lay.table[rows]
    b_read = a_lay.table[quad * 8 + cols]
    regs, halves = _acc(dp, 8)
    ptx = f"mma.sync.aligned.m8n8k4.row.col.{dp.d_type}.f16.f16.{dp.c}"
    tile = TileSpec(32, 8, 4, 128, 128, 32 * regs, 32 * regs, _labels(32, regs), instruction=ptx)
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, slice_, a_layout=a_lay,
                              b_layout=a_lay, word_rows=rows, word_cols=quad * 8 + cols,
                              c_layout=d_lay, d_layout=d_lay, a_packing="b16",
                              b_packing="b16", halves=halves,
                              notes=("four independent 8x8x4 MMAs, one per quad pair; "
                                     "rows and B columns are 8 * quad pair + index",))


def _elem_bits(fmt: str) -> int:
    f = get_format(fmt)
    if f.name == "tf32":
        return 32
    return f.width  # 16, 8, or the sub-byte 6 and 4


def _smem_t(fmt: str) -> int:
    """Elements per 16-byte core-matrix row (fp6/fp4 are packed 16 a row)."""
    bits = _elem_bits(fmt)
    return {32: 4, 16: 8, 8: 16, 6: 16, 4: 16}[bits]


WGMMA_N = 8


def wgmma_harness(dp: Datapath, n: int = WGMMA_N) -> Harness:
    """wgmma.mma_async.sync.aligned.m64nNkK with A and B in shared memory,
    K-major and unswizzled: core matrices of 8 rows x 16 bytes, the K core
    matrices of a row group adjacent (LBO = one core matrix), row groups SBO
    apart. D: the warpgroup accumulator fragment (PTX ISA)."""
    a, b = get_format(dp.a_type).name, get_format(dp.b_type).name
    want = {"tf32": 8, "bf16": 16, "f16": 16, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
    if want.get(a) != dp.k or want.get(b) != dp.k:
        raise HarnessError(f"no wgmma harness for {dp.id} (K: tf32 8, f16/bf16 16, 8-bit 32)")
    ta, tb = _smem_t(a), _smem_t(b)
    la = core_matrix_layout(64, dp.k, ta, 8 * ta, 8 * dp.k)
    lb = core_matrix_layout(n, dp.k, tb, 8 * tb, 8 * dp.k)
    ld = wgmma_d_layout(n)
    regs, halves = _acc(dp, n // 2)
    ptx = f"wgmma.mma_async.sync.aligned.m64n{n}k{dp.k}.{dp.d_type}.{dp.a_type}.{dp.b_type}"
    tile = TileSpec(64, n, dp.k, 64 * dp.k, n * dp.k, 128 * regs, 128 * regs, _labels(128, regs),
                    instruction=ptx)
    slice_ = np.arange(64 * n)  # element = fragment slot: thread * N/2 + i
    a_read, b_read, c_read, rows, cols = _words_from_layouts(ld.table, la.table, lb.table,
                                                             ld.table, slice_)
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, c_read, a_layout=la, b_layout=lb,
                              c_layout=ld, d_layout=ld, word_rows=rows, word_cols=cols,
                              a_packing=PACKINGS[_elem_bits(a)],
                              b_packing=PACKINGS[_elem_bits(b)], halves=halves)


# tcgen05: shared-memory operand layouts (elements) and the stable slices
# of the write-up's release (../shared/notes/tcgen05-published-parameters.md).
TCGEN05_SMEM = {  # elements per 16 B -> (T, SBO, LBO) in elements
    4: (4, 32, 64),  # tf32: (r&7)*4 + (r>>3)*32 + (k&3) + (k>>2)*64
    8: (8, 32, 64),  # bf16/f16: (r&7)*8 + (r>>3)*32 + (k&7) + (k>>3)*64
    16: (16, 64, 128),  # 8-bit (and packed fp6/fp4): 16-byte groups, the same byte pattern
}
TMEM_COLS = 8  # C/D words a tensor-memory lane in the dump


def tmem_16x256b(thread: int, reg: int) -> int:
    """Dump word (lane * 8 + column) that ``tcgen05.ld.16x256b.x1`` by 128
    threads puts in register ``reg`` of ``thread``: lane 32w + t/4 (+8 for
    registers 2-3), column 2 (t%4) + reg%2 (PTX ISA; CUTLASS's 16dp256b)."""
    warp, t = divmod(thread, 32)
    return (32 * warp + t // 4 + 8 * (reg // 2)) * TMEM_COLS + 2 * (t % 4) + reg % 2


def tcgen05_slice(dp: Datapath) -> np.ndarray:
    """Dump words that carry D, per the release (stated as 16x256b threads x registers)."""
    if dp.block_scaled:
        pairs = [(0, 0)]  # M128N8 block-scaled runners: thread 0, register 0
    elif _smem_t(dp.a_type) == 4:  # tf32: threads 0-31 x registers 0-3
        pairs = [(t, r) for t in range(32) for r in range(4)]
    elif _smem_t(dp.a_type) == 8:  # bf16/f16: threads 0-15 x 0-3, threads 16-31 x 0-1
        pairs = [(t, r) for t in range(16) for r in range(4)] + \
            [(t, r) for t in range(16, 32) for r in range(2)]
    else:  # 8-bit: threads {0,1,4,5} x 4 registers and {8,9,12,13} x 2
        pairs = [(t, r) for t in (0, 1, 4, 5) for r in range(4)] + \
            [(t, r) for t in (8, 9, 12, 13) for r in range(2)]
    return np.array(sorted(tmem_16x256b(t, r) for t, r in pairs))


def tcgen05_d_layout(m: int) -> Layout:
    """D in tensor memory, as dump words lane * 8 + column: M128 row r in lane
    r; M64 rows 16w + i in lanes 32w + i."""
    if m == 64:
        return Layout(((16, 4), 8), ((8, 256), 1))
    return Layout((128, 8), (8, 1))


def tcgen05_harness(dp: Datapath) -> Harness:
    """tcgen05.mma.cta_group::1 M64N8 (M128N8 block-scaled), A and B in
    shared memory (K-major, no swizzle; B's 8 rows as dense core matrices),
    C written to and D read from tensor-memory lanes 0-127, columns 0-7;
    block scales in columns 16-17 (A) and 24-25 (B) of the lane of their row
    or column, one byte a scale."""
    m = 128 if dp.block_scaled else 64
    n = 8
    ta, tb = _smem_t(dp.a_type), _smem_t(dp.b_type)
    if ta != tb and not dp.block_scaled and dp.kind != "f8f6f4":
        raise HarnessError(f"mixed A/B element sizes need kind::f8f6f4 ({dp.id})")
    ka = dp.stored_k  # a sparse A holds K/2 values a row
    la = core_matrix_layout(m, ka, *_t_sbo_lbo(ta))
    lb = core_matrix_layout(n, dp.k, tb, 8 * tb, 8 * dp.k)
    ld = tcgen05_d_layout(m)
    slice_ = tcgen05_slice(dp)
    d_table = ld.table
    a_read, b_read, c_read, rows, cols = _words_from_layouts(d_table, la.table, lb.table,
                                                             d_table, slice_)
    sa_read = sb_read = meta_read = None
    scale_slots = meta_slots = 0
    lane_a = np.array([r if m == 128 else 32 * (r // 16) + r % 16 for r in rows])
    if dp.sparse:  # metadata words of row r: columns 8-9 of r's tensor-memory lane
        meta_slots = 128 * META_COLS
        meta_read = lane_a[:, None] * META_COLS + np.arange(n_meta_words(dp))
    if dp.block_scaled:
        ns = dp.n_scales
        scale_slots = 128 * 2  # two words a lane
        j = np.arange(ns)
        sa_read = (lane_a[:, None] * 2 + j // 4) * 4 + j % 4  # byte slots
        sb_read = (cols[:, None] * 2 + j // 4) * 4 + j % 4
    kind = f"kind::{dp.kind}"
    ptx = (f"tcgen05.mma.cta_group::1.{kind}"
           + (f".block_scale.scale_vec::{dp.scale_vec or 1}X" if dp.block_scaled else "")
           + (" .sp" if dp.sparse else "")
           + f" (M{m} N{n} K{dp.k}, {dp.a_type} x {dp.b_type} -> {dp.d_type})")
    words = 128 * TMEM_COLS
    labels = tuple(f"l{lane}.c{c}" for lane in range(128) for c in range(TMEM_COLS))
    # buffers span the layout (the documented offsets overlap rows and leave gaps)
    a_slots, b_slots = max(m * ka, la.cosize), max(n * dp.k, lb.cosize)
    tile = TileSpec(m, n, dp.k, _round16(a_slots), _round16(b_slots), words, words, labels,
                    scale_slots=scale_slots, meta_slots=meta_slots, instruction=ptx)
    f16_out = get_format(dp.d_type).name == "f16"
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, c_read, c_slots=np.arange(words),
                              sa_read=sa_read, sb_read=sb_read, meta_read=meta_read,
                              a_layout=la, b_layout=lb,
                              c_layout=ld, d_layout=ld, word_rows=rows, word_cols=cols,
                              a_packing=PACKINGS[_elem_bits(dp.a_type)],
                              b_packing=PACKINGS[_elem_bits(dp.b_type)],
                              elem_mask=0xFFFF if f16_out else 0xFFFFFFFF)


# ---------------------------------------------------------------------------
# Sparse metadata in the harness (kernels/README.md: 128 lanes x 2 words at
# tensor-memory columns 8-9; selector semantics in models/sparsity.py).

META_COLS = 2  # metadata words a tensor-memory lane


def n_meta_words(dp: Datapath) -> int:
    from tcprobe.models import sparsity

    return sparsity.n_words(dp)


def _sparse_tables(dp: Datapath):
    """(chunk width, stored values a chunk, mask bits -> canonical selector,
    selector -> stored positions or None where illegal) for ``dp``."""
    from tcprobe.models import sparsity

    width = sparsity.chunk_width(dp)
    legal = sparsity.legal_selectors(dp)
    by_mask = np.full(1 << width, -1, np.int64)
    positions = {}
    for sel in legal:
        pos = sparsity.kept_positions(dp, sel)
        positions[sel] = pos
        bits = sum(1 << p for p in pos)
        if by_mask[bits] < 0:  # the first legal selector (0x9 before 0x6)
            by_mask[bits] = sel
    per = len(next(iter(positions.values())))
    pos_of = np.full((16, per), -1, np.int64)
    for sel, pos in positions.items():
        pos_of[sel] = pos
    return width, per, by_mask, pos_of


def sparse_encode(dp: Datapath, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(metadata words (N, words), stored positions (N, K/2)) of (N, K) masks:
    the canonical legal selector of every chunk (models.sparsity.metadata_words,
    vectorized). HarnessError if a mask is no legal selection."""
    active = np.atleast_2d(np.asarray(active, bool))
    n, k = active.shape
    width, per, by_mask, pos_of = _sparse_tables(dp)
    chunks = k // width
    bits = (active.reshape(n, chunks, width) * (1 << np.arange(width))).sum(axis=2)
    sel = by_mask[bits]
    if (sel < 0).any():
        i, c = map(int, np.argwhere(sel < 0)[0])
        raise HarnessError(f"case {i}: positions {np.flatnonzero(active[i, c * width:(c + 1) * width]).tolist()} "
                           f"of chunk {c} are no legal sparse selection of {dp.id}")
    return _meta_words(sel, n_meta_words(dp)), _stored(sel, pos_of, width)


def sparse_decode(dp: Datapath, meta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(active masks (N, K), stored positions (N, K/2)) that metadata words
    (N, words) select; HarnessError on an illegal selector."""
    meta = np.atleast_2d(np.asarray(meta, np.int64))
    width, per, by_mask, pos_of = _sparse_tables(dp)
    chunks = dp.k // width
    idx = np.arange(chunks)
    sel = (meta[:, idx // 8] >> (4 * (idx % 8))) & 0xF
    if (pos_of[sel, 0] < 0).any():
        i, c = map(int, np.argwhere(pos_of[sel, 0] < 0)[0])
        raise HarnessError(f"illegal sparse selector {int(sel[i, c]):#x} in chunk {c} of {dp.id}")
    pos = _stored(sel, pos_of, width)
    active = np.zeros((len(meta), dp.k), bool)
    np.put_along_axis(active, pos, True, axis=1)
    return active, pos


def _meta_words(sel: np.ndarray, words: int) -> np.ndarray:
    n, chunks = sel.shape
    out = np.zeros((n, words), np.uint32)
    for c in range(chunks):
        out[:, c // 8] |= sel[:, c].astype(np.uint32) << np.uint32(4 * (c % 8))
    return out


def _stored(sel: np.ndarray, pos_of: np.ndarray, width: int) -> np.ndarray:
    n, chunks = sel.shape
    pos = pos_of[sel] + (np.arange(chunks) * width)[None, :, None]
    return pos.reshape(n, -1)


def _round16(x: int) -> int:
    return (x + 15) // 16 * 16


def _t_sbo_lbo(t: int) -> tuple[int, int, int]:
    tt, sbo, lbo = TCGEN05_SMEM[t]
    return tt, lbo, sbo


BUILDERS = {"mma": mma_harness, "wgmma": wgmma_harness, "tcgen05": tcgen05_harness}


def harness_for(dp: Datapath) -> Harness:
    """The documented harness of datapath ``dp`` (HarnessError if none)."""
    return BUILDERS[dp.family](dp)
