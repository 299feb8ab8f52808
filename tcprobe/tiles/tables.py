"""The documented harness of each family: where one replicated case sits in a tile.

``harness_for(dp)`` builds the :class:`~tcprobe.tiles.harness.Harness` of a
datapath from the documented layouts (:mod:`tcprobe.tiles.layout`) and, for
tcgen05, the tensor-memory map (:mod:`tcprobe.tiles.tmem`).

Evidence for the layouts: PTX ISA fragment tables (mma.sync, wgmma D);
CUTLASS's SM70 quad-pair traits (mma.m8n8k4 on V100); the tcgen05 write-up
and its release for tcgen05 (``../shared/notes/tcgen05-published-parameters.md``:
shared-memory offsets, the 16x256b read, the stable slices per format).
"""

from __future__ import annotations

import numpy as np

from tcprobe.models import isa, sparsity
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format
from tcprobe.tiles import tmem
from tcprobe.tiles.harness import Harness, HarnessError
from tcprobe.tiles.layout import (
    MMA_FRAGMENTS,
    Layout,
    core_matrix_layout,
    mma_fragment_layouts,
    wgmma_d_layout,
)
from tcprobe.tiles.spec import TileSpec

PACKINGS = isa.ELEMENT_PACKINGS  # element bits -> shared-memory packing name


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
    "s4": 4, "u4": 4, "b1": 1,
    # sm_120a kind::f8f6f4: fp6/fp4 in 8-bit containers, the e4m3 fragments (PTX ISA)
    **{t: 8 for t in isa.SUB_BYTE_TYPES},
}


def _mma_shape_ks(dp: Datapath, a: str) -> tuple[int, ...]:
    """The K of every m16n8kK the ISA table gives ``dp``'s form (dense or mma.sp)."""
    if dp.sparse:
        return isa.MMA_SP_K.get(a, ())
    if dp.kind in isa.MMA_KINDS:  # sm_120a .kind:: (fp6/fp4 in 8-bit containers)
        return (isa.MMA_KIND_K[dp.kind],)
    return tuple(k for m, _, k in isa.MMA_SHAPES.get(a, ()) if m == 16)


def _fragments(k: int, bits: int):
    """The PTX ISA table's fragments of m16n8kK, or the rule they follow."""
    return MMA_FRAGMENTS.get((f"m16n8k{k}", bits)) or mma_fragment_layouts(k, bits)


def _mma_ptx(dp: Datapath) -> str:
    d_out, c_in = get_format(dp.d_type).name, get_format(dp.c).name
    op = "mma.sync"
    if dp.sparse:
        op = "mma.sp::ordered_metadata.sync" if dp.ordered else "mma.sp.sync"
    sat = ".satfinite" if dp.saturate else ""
    tail = f".{dp.bitop}.popc" if dp.bitop else ""
    kind = f".kind::{dp.kind}" if dp.kind in isa.MMA_KINDS else ""
    return (f"{op}.aligned{kind}.m16n8k{dp.k}.row.col{sat}.{d_out}.{dp.a_type}.{dp.b_type}.{c_in}"
            f"{tail}")


def mma_harness(dp: Datapath) -> Harness:
    """mma.sync.aligned.m16n8kK (and mma.sp, A holding K/2 stored values):
    register fragments of one warp (PTX ISA), or m8n8k4 (V100's quad pairs)
    for f16 with K=4. The sim harness gives each row of a sparse A its own
    metadata words (16 rows x words); the PTX spreads them over the threads
    of a group of four that the sparsity selector names."""
    a = get_format(dp.a_type).name
    if dp.block_scaled:  # sm_120a's scale registers (byte and thread selectors): not modelled
        raise HarnessError(f"no mma.sync harness for {dp.id}: the block-scale registers' layout "
                           "is not modelled yet")
    if a == "f16" and dp.k == 4 and get_format(dp.b_type).name == "f16" and not dp.sparse:
        return _m8n8k4_harness(dp)
    bits = _MMA_SHAPE.get(a)
    if bits is None or _MMA_SHAPE.get(get_format(dp.b_type).name) != bits \
            or dp.k not in _mma_shape_ks(dp, a):
        form = "mma.sp" if dp.sparse else "mma.sync"
        raise HarnessError(f"no {form} harness for {dp.id} (K of m16n8kK for {a}: "
                           f"{', '.join(map(str, _mma_shape_ks(dp, a))) or 'none'})")
    la = _fragments(dp.stored_k, bits)[0]
    lb, ld = _fragments(dp.k, bits)[1:]
    regs, halves = _acc(dp, 4)
    meta_slots = 16 * sparsity.n_words(dp) if dp.sparse else 0
    tile = TileSpec(16, 8, dp.k, la.cosize, lb.cosize, 32 * regs, 32 * regs, _labels(32, regs),
                    meta_slots=meta_slots, instruction=_mma_ptx(dp))
    slice_ = np.arange(128)  # element = fragment slot: lane * 4 + e
    a_read, b_read, c_read, rows, cols = _words_from_layouts(ld.table, la.table, lb.table,
                                                             ld.table, slice_)
    # registers hold sub-byte elements densely, element 0 in the low bits
    pack = PACKINGS[bits] if bits >= 8 else f"b{bits}"
    meta_read = None
    if dp.sparse:
        words = sparsity.n_words(dp)
        meta_read = rows[:, None] * words + np.arange(words)
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, c_read, a_layout=la, b_layout=lb,
                              c_layout=ld, d_layout=ld, word_rows=rows, word_cols=cols,
                              meta_read=meta_read, a_packing=pack, b_packing=pack,
                              halves=halves)


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
    want = {t: isa.instruction_k("wgmma", t, sparse=dp.sparse) for t in isa.INPUT_K
            if t not in isa.SUB_BYTE_TYPES and t not in isa.MMA_ONLY_TYPES}
    if want.get(a) != dp.k or want.get(b) != dp.k or (dp.sparse and a not in isa.WGMMA_SP_TYPES):
        raise HarnessError(f"no wgmma harness for {dp.id} (K: tf32 8, f16/bf16 16, 8-bit 32; "
                           "twice that for wgmma.sp)")
    ta, tb = _smem_t(a), _smem_t(b)
    ka = dp.stored_k  # wgmma.sp: A holds K/2 stored values a row
    la = core_matrix_layout(64, ka, ta, 8 * ta, 8 * ka)
    lb = core_matrix_layout(n, dp.k, tb, 8 * tb, 8 * dp.k)
    ld = wgmma_d_layout(n)
    regs, halves = _acc(dp, n // 2)
    op = "wgmma.mma_async.sp" if dp.sparse else "wgmma.mma_async"
    sat = ".satfinite" if dp.saturate else ""
    ptx = f"{op}.sync.aligned.m64n{n}k{dp.k}{sat}.{dp.d_type}.{dp.a_type}.{dp.b_type}"
    # sparse (sim harness): each row of A its own metadata words, 64 rows x words
    words = sparsity.n_words(dp) if dp.sparse else 0
    tile = TileSpec(64, n, dp.k, 64 * ka, n * dp.k, 128 * regs, 128 * regs, _labels(128, regs),
                    meta_slots=64 * words, instruction=ptx)
    slice_ = np.arange(64 * n)  # element = fragment slot: thread * N/2 + i
    a_read, b_read, c_read, rows, cols = _words_from_layouts(ld.table, la.table, lb.table,
                                                             ld.table, slice_)
    meta_read = rows[:, None] * words + np.arange(words) if dp.sparse else None
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, c_read, a_layout=la, b_layout=lb,
                              meta_read=meta_read,
                              c_layout=ld, d_layout=ld, word_rows=rows, word_cols=cols,
                              a_packing=PACKINGS[_elem_bits(a)],
                              b_packing=PACKINGS[_elem_bits(b)], halves=halves)


# tcgen05: the published shared-memory operand layouts (elements) and the
# stable slices of the write-up's release
# (../shared/notes/tcgen05-published-parameters.md). The published A offsets
# overlap under the canonical no-swizzle rule (an SBO of 64 bytes is less
# than a 128-byte core matrix; tf32's LBO 256 with SBO 128 puts row group 2
# on K block 1): bf16 and 8-bit alias 288 and 576 (row, k) pairs, tf32 192.
# It works only when every row holds the same K-vector, so it stays for
# replaying the release (``smem="published"``); general tiles use the
# canonical layout (:func:`canonical_smem_layout`).
TCGEN05_SMEM = {  # elements per 16 B -> (T, SBO, LBO) in elements
    4: (4, 32, 64),  # tf32: (r&7)*4 + (r>>3)*32 + (k&3) + (k>>2)*64
    8: (8, 32, 64),  # bf16/f16: (r&7)*8 + (r>>3)*32 + (k&7) + (k>>3)*64
    16: (16, 64, 128),  # 8-bit (and packed fp6/fp4): 16-byte groups, the same byte pattern
}
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
    return np.array(sorted(tmem.tmem_16x256b(t, r) for t, r in pairs))


def tcgen05_d_layout(m: int) -> Layout:
    """D in tensor memory, as dump words lane * 8 + column: M128 row r in lane
    r; M64 rows 16w + i in lanes 32w + i."""
    if m == 64:
        return Layout(((16, 4), 8), ((8, 256), 1))
    return Layout((128, 8), (8, 1))


def canonical_smem_layout(rows: int, k: int, t: int) -> Layout:
    """The canonical K-major no-swizzle layout: 8-row x 16-byte core
    matrices, the K core matrices of a row group adjacent (LBO = 128 bytes),
    row groups one after the other (SBO = K/T core matrices). Every (row, k)
    has a slot of its own; MMA-Sim's B200-tested kernels use it (LBO 128 B,
    SBO 256 B at two K blocks)."""
    return core_matrix_layout(rows, k, t, 8 * t, 8 * max(k, t))


def tcgen05_harness(dp: Datapath, smem: str = "canonical") -> Harness:
    """tcgen05.mma.cta_group::1 M64N8 (M128N8 block-scaled), A and B in
    shared memory (K-major, no swizzle; ``smem``: A in the canonical layout,
    or ``published``, the write-up's overlapping one, with its slice), C
    written to and D read from tensor-memory lanes 0-127, columns 0-7 (the
    slice: every D word, or the release's); metadata and block scales where
    :mod:`tcprobe.tiles.tmem` puts them."""
    m = 128 if dp.block_scaled else 64
    n = 8
    ta, tb = _smem_t(dp.a_type), _smem_t(dp.b_type)
    if ta != tb and not dp.block_scaled and dp.kind != "f8f6f4":
        raise HarnessError(f"mixed A/B element sizes need kind::f8f6f4 ({dp.id})")
    ka = dp.stored_k  # a sparse A holds K/2 values a row
    if smem == "published":
        la = core_matrix_layout(m, ka, *_t_sbo_lbo(ta))
    elif smem == "canonical":
        la = canonical_smem_layout(m, ka, ta)
    else:
        raise HarnessError(f"unknown tcgen05 A layout {smem!r} (canonical, published)")
    lb = canonical_smem_layout(n, dp.k, tb)
    ld = tcgen05_d_layout(m)
    # the release's slice is what its overlapping A leaves agreeing; with every
    # (row, k) in a slot of its own every D word carries the replicated case
    slice_ = tcgen05_slice(dp) if smem == "published" else np.unique(ld.table)
    d_table = ld.table
    a_read, b_read, c_read, rows, cols = _words_from_layouts(d_table, la.table, lb.table,
                                                             d_table, slice_)
    sa_read = sb_read = meta_read = None
    scale_slots = meta_slots = 0
    lane_a = np.array([r if m == 128 else 32 * (r // 16) + r % 16 for r in rows])
    if dp.sparse:  # metadata words of row r: the metadata columns of r's lane
        meta_slots = tmem.LANES * tmem.META_COLS
        meta_read = lane_a[:, None] * tmem.META_COLS + np.arange(sparsity.n_words(dp))
    if dp.block_scaled:
        if dp.n_scales > tmem.SCALE_BYTES:
            raise HarnessError(f"{dp.id}: {dp.n_scales} scales a row do not fit one "
                               "tensor-memory word")
        scale_slots = tmem.LANES * tmem.SCALE_COLS
        j = np.arange(dp.n_scales)
        sa_read = tmem.scale_a_slot(rows[:, None], j[None, :])  # byte slots
        sb_read = tmem.scale_b_slot(cols[:, None], j[None, :])
    kind = f"kind::{dp.kind}"
    ptx = (f"tcgen05.mma.cta_group::1.{kind}"
           + (f".block_scale.scale_vec::{dp.scale_vec or 1}X" if dp.block_scaled else "")
           + (" .sp" if dp.sparse else "")
           + f" (M{m} N{n} K{dp.k}, {dp.a_type} x {dp.b_type} -> {dp.d_type})")
    words = tmem.LANES * tmem.D_COLS
    labels = tuple(f"l{lane}.c{c}" for lane in range(tmem.LANES) for c in range(tmem.D_COLS))
    # buffers span the layout (the documented offsets overlap rows and leave gaps)
    a_slots, b_slots = max(m * ka, la.cosize), max(n * dp.k, lb.cosize)
    tile = TileSpec(m, n, dp.k, _round16(a_slots), _round16(b_slots), words, words, labels,
                    scale_slots=scale_slots, meta_slots=meta_slots, instruction=ptx)
    f16_out = get_format(dp.d_type).name == "f16"
    return Harness.from_reads(dp, tile, slice_, a_read, b_read, c_read, c_slots=np.arange(words),
                              sa_read=sa_read, sb_read=sb_read, meta_read=meta_read,
                              sa_copies=tmem.SCALE_A_COPIES if dp.block_scaled else (0,),
                              sb_copies=tmem.SCALE_B_COPIES if dp.block_scaled else (0,),
                              a_layout=la, b_layout=lb,
                              c_layout=ld, d_layout=ld, word_rows=rows, word_cols=cols,
                              a_packing=PACKINGS[_elem_bits(dp.a_type)],
                              b_packing=PACKINGS[_elem_bits(dp.b_type)],
                              elem_mask=0xFFFF if f16_out else 0xFFFFFFFF)


def _round16(x: int) -> int:
    return (x + 15) // 16 * 16


def _t_sbo_lbo(t: int) -> tuple[int, int, int]:
    tt, sbo, lbo = TCGEN05_SMEM[t]
    return tt, lbo, sbo


BUILDERS = {"mma": mma_harness, "wgmma": wgmma_harness, "tcgen05": tcgen05_harness}


def harness_for(dp: Datapath, smem: str = "canonical") -> Harness:
    """The documented harness of datapath ``dp`` (HarnessError if none);
    ``smem="published"``: tcgen05's A in the write-up's layout (for replay)."""
    if dp.family == "tcgen05":
        return tcgen05_harness(dp, smem)
    return BUILDERS[dp.family](dp)
