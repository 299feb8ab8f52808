"""Harness descriptions: slots, slices and packings as documented."""

import numpy as np
import pytest
from smem_packing import pack_elements

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.tiles.harness import HarnessError
from tcprobe.tiles.tables import harness_for


def test_tcgen05_bf16_offsets_and_slice_follow_the_release():
    h = harness_for(default_datapath("tcgen05", "bf16"), smem="published")
    r, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    want = (r & 7) * 8 + (r >> 3) * 32 + (k & 7) + (k >> 3) * 64
    assert np.array_equal(h.a_layout.table, want)
    # threads 0-15 x registers 0-3 and threads 16-31 x registers 0-1 of a
    # 16x256b read: tensor-memory lanes 0-11, columns 0-7 (96 words)
    assert h.slice.tolist() == list(range(96))
    assert h.label(95) == "l11.c7" and h.tile.dump_words == 1024


def test_tcgen05_tf32_and_8bit_slices():
    tf32 = harness_for(default_datapath("tcgen05", "tf32"), smem="published")
    assert sorted(tf32.slice.tolist()) == list(range(128))  # lanes 0-15
    r, k = np.meshgrid(np.arange(64), np.arange(8), indexing="ij")
    assert np.array_equal(tf32.a_layout.table, (r & 7) * 4 + (r >> 3) * 32 + (k & 3) + (k >> 2) * 64)
    e4 = harness_for(default_datapath("tcgen05", "e4m3"), smem="published")
    # threads {0,1,4,5} x 4 registers, {8,9,12,13} x 2: lanes 0-3 and 8-9, columns 0-3
    want = {f"l{lane}.c{c}" for lane in (0, 1, 2, 3, 8, 9) for c in range(4)}
    assert set(e4.slice_labels()) == want


def test_tcgen05_block_scaled_reads_thread0_register0():
    dp = Datapath.parse("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    h = harness_for(dp, smem="published")
    assert h.slice_labels() == ["l0.c0"] and h.tile.m == 128 and h.tile.scale_slots == 512


def test_mma_slots_follow_the_ptx_fragment_tables():
    h = harness_for(default_datapath("mma", "bf16"))
    # m16n8k16 .bf16 A: a0,a1 row groupID, a2,a3 row groupID+8, a4..a7 k+8
    lane, elem = 5, 2  # groupID 1, threadID_in_group 1, element a2
    row, col = 1 + 8, 2 * 1 + 0
    assert h.a_layout.offset(row, col) == lane * 8 + elem
    # D: c0,c1 row groupID, c2,c3 row groupID+8, cols 2*tig + (i & 1)
    assert h.d_layout.offset(9, 3) == 5 * 4 + 3


def test_f16_accumulators_pack_two_elements_a_register():
    from tcprobe.models.datapath import Datapath

    h = harness_for(Datapath.parse("mma.f16.f16.k16"))
    assert h.halves == 2 and h.tile.dump_words == 64 and h.tile.c_slots == 64
    assert h.label(5 * 4 + 3) == "t5.r1.hi"
    words = np.array([[0x3C004000]], np.uint32)
    assert h.elements(words).tolist() == [[0x4000, 0x3C00]]
    assert h.c_words(np.array([0x3C00])).tolist() == [0x3C003C00]


def test_tiles_match_the_cuda_harness_kernels():
    """The CUDA device packs with these harnesses: its kernels' C, dump,
    scale and metadata words must be the same, and A/B must hold the layout."""
    pytest.importorskip("cuda.bindings")
    from fake_cuda import d_word

    from tcprobe.devices.cuda import launch as L
    from tcprobe.models.datapath import Datapath

    ids = ["mma.bf16.f32.k16", "mma.f16.f16.k16", "mma.tf32.f32.k8", "mma.e4m3.f32.k32",
           "mma.s8.s32.k32", "wgmma.bf16.f32.k16", "wgmma.f16.f16.k16", "wgmma.tf32.f32.k8",
           "wgmma.e5m2.f32.k32", "tcgen05.tf32.f32.k8", "tcgen05.f16.bf16.f32.k16",
           "tcgen05.f16.f16.k16", "tcgen05.f8f6f4.e4m3.f32.k32", "tcgen05.f8f6f4.e2m1.f32.k32",
           "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1", "tcgen05.f8f6f4.e4m3xe2m1.f32.k32",
           "tcgen05.f16.bf16.f32.k32.sparse", "tcgen05.tf32.f32.k16.sparse",
           "tcgen05.f8f6f4.e2m3.f32.k64.sparse", "tcgen05.mxf4.e2m1.f32.k64.ue8m0x2",
           "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse",
           "tcgen05.mxf8f6f4.e4m3.f32.k64.ue8m0x1.sparse"]
    arch = {"mma": "sm_90a", "wgmma": "sm_90a", "tcgen05": "sm_100a"}
    for text in ids:
        dp = Datapath.parse(text)
        v = L.variant_for(dp, arch[dp.family])
        theirs, mine = L.tile_spec(v, dp), harness_for(dp).tile
        for f in ("c_slots", "dump_words", "scale_slots", "meta_slots"):
            assert getattr(theirs, f) == getattr(mine, f), (text, f)
        if dp.family in ("mma", "tcgen05"):  # (tcgen05: M rows x stored K, sparse A K/2)
            assert (theirs.m, theirs.a_slots, theirs.b_slots) == \
                (mine.m, mine.a_slots, mine.b_slots), text
        # the D map agrees with the CUDA harness's (row, col) -> (word, half)
        h = harness_for(dp)
        for r, c in ((0, 0), (9, 3), (min(63, v.m - 1), 7)):
            if r >= v.m:
                continue
            word, half = d_word(v, dp, r, c)
            assert int(h.d_layout.offset(r, c)) == word * h.halves + half, (text, r, c)


@pytest.mark.parametrize("text", ["tcgen05.f16.bf16.f32.k32.sparse", "tcgen05.tf32.f32.k16.sparse",
                                  "tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse"])
def test_sparse_tiles_hold_compressed_a_and_metadata_in_every_lane(text):
    """A sparse case goes in as the CUDA harness takes it: K/2 stored A values a
    row in the order the metadata names them, B dense, the metadata words
    (models.sparsity's) in the metadata columns of every one of the 128 lanes."""
    from tcprobe.devices.sim import SimDevice
    from tcprobe.models import sparsity
    from tcprobe.suites.mix import random_cases

    dp = Datapath.parse(text)
    h = harness_for(dp)
    assert h.tile.meta_slots == 256 and h.a_k == dp.k // 2 and h.k == dp.k
    rng = np.random.default_rng(3)
    cases = random_cases(dp, 40, rng)
    batch = h.pack(cases)
    for i in range(len(cases)):
        words = sparsity.metadata_words(dp, cases.active[i])
        lanes = batch.meta[i].reshape(128, 2)
        assert (lanes[:, :len(words)] == words).all()
        stored = sparsity.stored_positions(dp, words)
        for j, pos in enumerate(stored):
            assert (batch.a[i, h.a_lanes[j]] == cases.a[i, pos]).all()
        for k in range(dp.k):  # disabled B positions travel too: the device must ignore them
            assert (batch.b[i, h.b_lanes[k]] == cases.b[i, k]).all()
    dev = SimDevice.builtin("b200")
    assert np.array_equal(dev.run_through_tiles(dp, cases), dev.run(dp, cases))
    bad = batch.meta.copy()
    bad[:, 0] = 0x1  # selector 1 names one position twice: no legal selection
    from tcprobe.devices.base import DeviceError
    from tcprobe.tiles.spec import PhysicalBatch

    with pytest.raises(DeviceError, match="illegal sparse selector"):
        dev.launch(dp, PhysicalBatch(batch.a, batch.b, batch.c, batch.scale_a, batch.scale_b, bad))


def test_v100_quad_pairs_are_four_independent_mmas():
    h = harness_for(Datapath.parse("mma.f16.f32.k4"))
    assert h.tile.dump_words == 256 and len(h.slice) == 256
    # every lane's slots: 4 quad pairs x 8 threads
    assert all(len(x) == 32 for x in h.a_lanes)
    # a slice word reads A and B only from its own quad pair's lanes
    lanes_a = h.a_read // 4
    assert all(len({(x % 16) // 4 for x in row}) == 1 for row in lanes_a)


@pytest.mark.parametrize("family,fmt", [("mma", "tf32"), ("wgmma", "e5m2"), ("tcgen05", "bf16"),
                                        ("tcgen05", "e2m1")])
def test_pack_unpack_roundtrip(family, fmt):
    dp = default_datapath(family, fmt)
    h = harness_for(dp)
    rng = np.random.default_rng(0)
    mask = (1 << (32 if fmt == "tf32" else {"e5m2": 8, "bf16": 16, "e2m1": 4}[fmt])) - 1
    cases = Cases(rng.integers(0, mask + 1, (5, dp.k)), rng.integers(0, mask + 1, (5, dp.k)),
                  rng.integers(0, 1 << 31, 5))
    batch = h.pack(cases)
    for k in range(dp.k):
        assert (batch.a[:, h.a_lanes[k]] == cases.a[:, k:k + 1]).all()
    # a dump whose slice holds each case's C unpacks to that C
    dump = rng.integers(0, 1 << 32, (5, h.tile.dump_words), dtype=np.uint64).astype(np.uint32)
    dump[:, h.slice] = cases.c[:, None]
    assert np.array_equal(h.unpack(dump), cases.c)
    dump[2, h.slice[-1]] ^= 1
    with pytest.raises(HarnessError, match="disagree"):
        h.unpack(dump)


def test_fp6_and_fp4_smem_packing():
    # fp6: element j at bits 6j..6j+5, 16 elements in 12 bytes + 4 zero bytes
    codes = np.arange(16)[None] + 40
    b = pack_elements(codes, "b6x16_p32")[0]
    bits = int.from_bytes(bytes(b[:12]), "little")
    assert [(bits >> (6 * j)) & 63 for j in range(16)] == list(range(40, 56))
    assert not b[12:].any()
    # fp4: low nibble first, 8 bytes + 8 zero bytes
    b4 = pack_elements(np.arange(16)[None], "b4x16_p64")[0]
    assert list(b4[:2]) == [0x10, 0x32] and not b4[8:].any()
    assert list(pack_elements(np.array([[0x3f80]]), "b16")[0]) == [0x80, 0x3f]


def test_no_harness_for_an_unknown_shape():
    with pytest.raises(HarnessError):
        harness_for(Datapath.parse("mma.bf16.f32.k32"))
