"""The tcgen05 tensor-memory map: the harness tables and kernels/tcgen05.cu agree,
and the scale operands sit where MMA-Sim's B200-tested kernels put them."""

import re

import numpy as np
import pytest

from tcprobe.kernels import source
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.tiles import tmem
from tcprobe.tiles.tables import harness_for

KERNEL = source("tcgen05.cu")
SCALED = ["tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1", "tcgen05.mxf4.e2m1.f32.k64.ue8m0x2",
          "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "tcgen05.mxf8f6f4.e4m3.f32.k64.ue8m0x1.sparse"]


def define(name: str) -> int:
    m = re.search(rf"#define {name}\s+(\d+)u?\b", KERNEL)
    assert m, f"{name} is not defined in tcgen05.cu"
    return int(m.group(1))


def test_kernel_columns_are_the_harness_columns():
    assert define("TCP_TC05_NCOLS") == tmem.ALLOC_COLS
    assert define("TCP_TC05_DCOLS") == tmem.D_COLS
    assert define("TCP_TC05_META_COL") == tmem.META_COL
    assert define("TCP_TC05_META_COLS") == tmem.META_COLS
    assert define("TCP_TC05_SFA_COL") == tmem.SFA_COL
    assert define("TCP_TC05_SFB_COL") == tmem.SFB_COL
    assert define("TCP_TC05_SCALE_COLS") == tmem.SCALE_COLS


def test_kernel_stores_each_lane_its_own_scale_words():
    """Lane ``tid`` of the tile gets words SA[row * SCALE_COLS ..] (row = tile
    * 128 + tid) into SCALE_COLS columns from SFA_COL: a 32x32b.x4 store of 4
    consecutive words, the harness's word = lane * SCALE_COLS + column."""
    assert "tcp_tmem_st4(lane_addr + TCP_TC05_SFA_COL, SA + row * TCP_TC05_SCALE_COLS)" in KERNEL
    assert "tcp_tmem_st4(lane_addr + TCP_TC05_SFB_COL, SB + row * TCP_TC05_SCALE_COLS)" in KERNEL
    st4 = re.search(r"void tcp_tmem_st4\(.*?\n(.*?)\n}", KERNEL, re.S).group(1)
    assert "32x32b.x4.b32" in st4  # 4 columns: x4 of the 32x32b shape
    assert "row = (u64)tile * 128u + tid" in KERNEL


def test_allocation_regions_are_apart_and_aligned():
    """Every operand region starts on a 32-column boundary (as its own
    tcgen05.alloc would) and none overlaps another or leaves the allocation."""
    regions = [(0, tmem.D_COLS), (tmem.META_COL, tmem.META_COLS),
               (tmem.SFA_COL, tmem.SCALE_COLS), (tmem.SFB_COL, tmem.SCALE_COLS)]
    assert all(start % 32 == 0 for start, _ in regions)
    cols = [c for start, n in regions for c in range(start, start + n)]
    assert len(cols) == len(set(cols)) and max(cols) < tmem.ALLOC_COLS
    n = tmem.ALLOC_COLS
    assert n >= 32 and n & (n - 1) == 0  # tcgen05.alloc takes a power of two >= 32


@pytest.mark.parametrize("text", SCALED)
def test_scale_a_is_mmasim_m128_layout(text):
    """Scale j of A's row r: column r // 32 of lane r % 32, in each warp's
    lanes 32 w + r % 32; byte j of the word."""
    dp = Datapath.parse(text)
    h = harness_for(dp)
    assert h.tile.m == 128 and h.tile.scale_slots == 128 * 4
    for w, row in enumerate(h.word_rows):
        for j in range(dp.n_scales):
            word, byte = divmod(int(h.sa_read[w, j]), 4)
            assert (word // 4, word % 4, byte) == (row % 32, row // 32, j)
    # packing writes every warp's copy of every row the slice reads, nothing else
    rng = np.random.default_rng(1)
    k, s = dp.k, dp.n_scales
    cases = Cases(np.zeros((1, k), np.uint32), np.zeros((1, k), np.uint32), [0],
                  rng.integers(1, 255, (1, s)), rng.integers(1, 255, (1, s)))
    if dp.sparse:
        cases.active = np.tile([True, True, False, False], k // 4)[None]
    batch = h.pack(cases)
    lanes = batch.scale_a[0].reshape(128, 4)
    want = sum(int(cases.scale_a[0, j]) << (8 * j) for j in range(s))
    rows = np.unique(h.word_rows)
    filled = {(32 * warp + r % 32, r // 32) for r in rows.tolist() for warp in range(4)}
    assert all(lanes[lane, col] == want for lane, col in filled)
    assert np.count_nonzero(lanes) == len(filled) == 4 * len(rows)


@pytest.mark.parametrize("text", SCALED)
def test_scale_b_is_in_every_lane_of_its_column(text):
    """Scale j of B's column c: column 0 of every lane l with l % 8 == c."""
    dp = Datapath.parse(text)
    h = harness_for(dp)
    for w, col in enumerate(h.word_cols):
        for j in range(dp.n_scales):
            word, byte = divmod(int(h.sb_read[w, j]), 4)
            assert (word // 4 % 8, word % 4, byte) == (col, 0, j)
    k, s = dp.k, dp.n_scales
    cases = Cases(np.zeros((1, k), np.uint32), np.zeros((1, k), np.uint32), [0],
                  np.ones((1, s), np.uint32), np.full((1, s), 0x7F, np.uint32))
    if dp.sparse:
        cases.active = np.tile([True, True, False, False], k // 4)[None]
    lanes = h.pack(cases).scale_b[0].reshape(128, 4)
    want = sum(0x7F << (8 * j) for j in range(s))
    cols = np.unique(h.word_cols).tolist()
    assert all(lanes[lane, 0] == want for col in cols for lane in range(col, 128, 8))
    assert np.count_nonzero(lanes) == 16 * len(cols) and not lanes[:, 1:].any()


def test_sim_device_reads_the_scales_the_harness_placed():
    from tcprobe.devices.sim import SimDevice
    from tcprobe.suites.mix import random_cases

    dev = SimDevice.builtin("b200")
    for text in SCALED:
        dp = Datapath.parse(text)
        cases = random_cases(dp, 30, np.random.default_rng(5))
        assert np.array_equal(dev.run_through_tiles(dp, cases), dev.run(dp, cases)), text


@pytest.mark.parametrize("text", ["tcgen05.tf32.f32.k8", "tcgen05.f16.bf16.f32.k16",
                                  "tcgen05.f8f6f4.e4m3.f32.k32", "tcgen05.f16.bf16.f32.k32.sparse",
                                  "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"])
def test_canonical_a_layout_gives_every_element_its_slot(text):
    """General tiles: no two (row, k) of A share a shared-memory slot; core
    matrices of 128 bytes, K blocks 128 bytes apart (LBO), row groups after
    all K blocks (SBO), as MMA-Sim's B200 kernels lay A out."""
    dp = Datapath.parse(text)
    h = harness_for(dp)
    table = h.a_layout.table
    assert len(np.unique(table)) == table.size
    (_, _), (t, _) = h.a_layout.shape
    (_, sbo), (_, lbo) = h.a_layout.stride
    assert lbo * 16 // t == 128 and sbo * 16 // t == 128 * (table.shape[1] // t)


@pytest.mark.parametrize("text,aliased", [("tcgen05.tf32.f32.k8", 192),
                                          ("tcgen05.f16.bf16.f32.k16", 288),
                                          ("tcgen05.f8f6f4.e4m3.f32.k32", 576)])
def test_published_a_layout_overlaps_and_stays_for_replay(text, aliased):
    """The write-up's A offsets alias (row, k) pairs (192, 288 and 576 shared
    slots, the review's count); on the rows its slice
    reads, aliased pairs share their k, so a replicated case (every row the
    same K-vector) fills them alike and replay keeps the layout."""
    dp = Datapath.parse(text)
    h = harness_for(dp, smem="published")
    table = h.a_layout.table
    _, owners_per_slot = np.unique(table, return_counts=True)
    assert (owners_per_slot > 1).sum() == aliased  # slots two or more (row, k) share
    owners = {}
    for r in np.unique(h.word_rows):
        for k, slot in enumerate(table[r]):
            owners.setdefault(int(slot), set()).add(k)
    assert all(len(ks) == 1 for ks in owners.values())
    # its slice: the rows that overlap agree; the canonical layout's is every D word
    assert len(h.slice) == {"tf32": 128, "f16": 96, "f8f6f4": 24}[dp.kind]
    assert len(harness_for(dp).slice) == 512
