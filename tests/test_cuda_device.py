"""The CUDA device: descriptor encoding, argument packing, result decoding
(no GPU needed), and, where a GPU is present, real launches (marker gpu)."""

from __future__ import annotations

import ctypes
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import one_error
from click.testing import CliRunner
from cuda_support import GPUS, cubin_cache, gpu_only, needs_nvrtc  # noqa: F401
from fake_cuda import d_word

from tcprobe.cli import main
from tcprobe.devices.base import DeviceError
from tcprobe.devices.cuda import launch as L
from tcprobe.devices.cuda import nvrtc
from tcprobe.devices.registry import open_device
from tcprobe.kernels import catalog
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.tiles import tmem
from tcprobe.tiles.descriptors import (
    DescriptorError,
    decode_smem_descriptor,
    descriptor_for_layout,
    instruction_descriptor,
    smem_descriptor,
)
from tcprobe.tiles.harness import HarnessError
from tcprobe.tiles.layout import MMA_FRAGMENTS, Layout, core_matrix_layout, wgmma_d_layout
from tcprobe.tiles.spec import PhysicalBatch
from tcprobe.tiles.tables import harness_for

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.usefixtures("cubin_cache")
dp = Datapath.parse


# ---------------------------------------------------------------------------
# Instruction descriptors: the values the tcgen05 write-up's B200 harness used.

@pytest.mark.parametrize("dpid,m,word", [
    ("tcgen05.tf32.f32.k8", 64, 0x04020910),
    ("tcgen05.f16.bf16.f32.k16", 64, 0x04020490),
    ("tcgen05.i8.s8.s32.k32", 64, 0x040204A0),
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", 128, 0x08020480),
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue8m0x4", 128, 0x08820480),
])
def test_instruction_descriptor_matches_published_values(dpid, m, word):
    assert instruction_descriptor(dp(dpid), m, 8) == word


def test_instruction_descriptor_fields():
    # f16 inputs, f16 D: format codes 0 and D code 0.
    assert instruction_descriptor(dp("tcgen05.f16.f16.k16"), 64, 8) == 0x04020000
    # mixed f8f6f4 A=e4m3 (0), B=e2m1 (5), f32 D
    assert instruction_descriptor(dp("tcgen05.f8f6f4.e4m3xe2m1.f32.k32"), 64, 8) == 0x04021410
    # saturating unsigned x signed i8 sets bit 3, A u8 = 0, B s8 = 1
    assert instruction_descriptor(dp("tcgen05.i8.u8xs8.s32.k32.sat"), 64, 8) == 0x04020428
    # sparse sets bit 2; M=128 N=16
    assert instruction_descriptor(dp("tcgen05.f16.bf16.f32.k32.sparse"), 128, 16) == 0x08040494
    # MX e2m3 with ue8m0 scale ids: A id at 29-30, B id at 4-5
    word = instruction_descriptor(dp("tcgen05.mxf8f6f4.e2m3.f32.k32.ue8m0x1"), 128, 8,
                                  scale_a_id=2, scale_b_id=3)
    assert word == (3 << 7 | 3 << 10 | 1 << 17 | 1 << 23 | 8 << 24 | 2 << 29 | 3 << 4)


@pytest.mark.parametrize("dpid,m,n,msg", [
    ("tcgen05.tf32.bf16.f32.k8", 64, 8, "kind::tf32 takes"),
    ("tcgen05.f16.bf16.f32.k16", 96, 8, "no tcgen05 shape"),
    ("tcgen05.f16.bf16.f32.k16", 64, 12, "no tcgen05 shape"),
    ("mma.bf16.f32.k16", 64, 8, "not a tcgen05 datapath"),
])
def test_instruction_descriptor_rejects(dpid, m, n, msg):
    with pytest.raises(DescriptorError, match=msg):
        instruction_descriptor(dp(dpid), m, n)


# ---------------------------------------------------------------------------
# Shared-memory matrix descriptors

def test_smem_descriptor_bits():
    assert smem_descriptor("wgmma", 128, 256) == (8 << 16) | (16 << 32)
    assert smem_descriptor("tcgen05", 128, 256) == (8 << 16) | (16 << 32) | (1 << 46)
    assert smem_descriptor("wgmma", 0, 0, swizzle="128B") == 1 << 62
    assert smem_descriptor("tcgen05", 0, 0, swizzle="128B") == (2 << 61) | (1 << 46)
    assert smem_descriptor("tcgen05", 0, 0, start_bytes=0x3FFF0) == 0x3FFF | (1 << 46)


def test_smem_descriptor_round_trip():
    d = smem_descriptor("tcgen05", 1024, 128, start_bytes=256, base_offset=3, swizzle="64B")
    f = decode_smem_descriptor(d, "tcgen05")
    assert f == {"start_bytes": 256, "lbo_bytes": 1024, "sbo_bytes": 128, "base_offset": 3,
                 "version": 1, "lbo_mode": 0, "swizzle": "64B"}


@pytest.mark.parametrize("kw,msg", [
    ({"lbo_bytes": 24, "sbo_bytes": 0}, "not a multiple of 16"),
    ({"lbo_bytes": 1 << 18, "sbo_bytes": 0}, "does not fit in 14 bits"),
    ({"lbo_bytes": 0, "sbo_bytes": 0, "swizzle": "16B"}, "swizzle"),
])
def test_smem_descriptor_rejects(kw, msg):
    with pytest.raises(DescriptorError, match=msg):
        smem_descriptor("wgmma", **kw)


def test_descriptor_of_the_published_bf16_layout():
    # offset(r, k) = (r&7)*8 + (r>>3)*32 + (k&7) + (k>>3)*64 elements: LBO 64, SBO 32 bf16
    lay = core_matrix_layout(64, 16, 8, lbo=64, sbo=32)
    r, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    assert np.array_equal(lay.table, (r & 7) * 8 + (r >> 3) * 32 + (k & 7) + (k >> 3) * 64)
    f = decode_smem_descriptor(descriptor_for_layout("tcgen05", lay, 8), "tcgen05")
    assert (f["lbo_bytes"], f["sbo_bytes"], f["version"]) == (128, 64, 1)


def test_descriptor_of_packed_fp4_counts_bytes_not_slots():
    lay = core_matrix_layout(128, 64, 32, lbo=128 * 32, sbo=8 * 32)
    f = decode_smem_descriptor(descriptor_for_layout("tcgen05", lay, 32), "tcgen05")
    assert (f["lbo_bytes"], f["sbo_bytes"]) == (2048, 128)


def test_descriptor_rejects_a_row_major_layout():
    with pytest.raises(DescriptorError, match="not a K-major"):
        descriptor_for_layout("wgmma", Layout((64, 16), (16, 1)), 8)


# ---------------------------------------------------------------------------
# Variants, tiles and default layouts

@pytest.mark.parametrize("dpid,arch,name", [
    ("mma.bf16.f32.k16", "sm_80", "mma.bf16.f32"),
    ("mma.f16.f16.k16", "sm_90a", "mma.f16.f16"),
    ("mma.tf32.f32.k8", "sm_100a", "mma.tf32.f32"),
    ("mma.e4m3.f32.k32", "sm_100a", "mma.e4m3.f32"),
    ("mma.u8.s32.k32", "sm_89", "mma.u8.s32"),
    ("mma.f8f6f4.e3m2.f32.k32", "sm_120a", "mma.f8f6f4.e3m2.f32"),
    ("mma.mxf8f6f4.e4m3.f32.k32.ue8m0x1", "sm_120a", "mma.mxf8f6f4.e4m3.f32"),
    ("mma.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "sm_120a", "mma.mxf4nvf4.4x.ue4m3"),
    ("wgmma.e5m2.f16.k32", "sm_90a", "wgmma.e5m2.f16"),
    ("wgmma.s8.s32.k32", "sm_90a", "wgmma.s8.s32"),
    ("tcgen05.f16.bf16.f32.k16", "sm_100a", "tcgen05.f16"),
    ("tcgen05.f16.f16.k32.sparse", "sm_103a", "tcgen05.f16.sparse"),
    ("tcgen05.f8f6f4.e4m3xe2m1.f16.k32", "sm_100a", "tcgen05.f8f6f4"),
    ("tcgen05.i8.s8xu8.s32.k32.sat", "sm_100a", "tcgen05.i8"),
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "sm_100a", "tcgen05.mxf4nvf4.4x"),
    ("tcgen05.mxf4.e2m1.f32.k128.ue8m0x2.sparse", "sm_100a", "tcgen05.mxf4.2x.sparse"),
])
def test_variant_for_datapath(dpid, arch, name):
    assert L.variant_for(dp(dpid), arch).name == name


@pytest.mark.parametrize("dpid,arch", [
    ("mma.e4m3.f32.k32", "sm_80"),  # fp8 mma needs sm_89
    ("mma.f8f6f4.e2m1.f32.k32", "sm_100a"),  # kind::f8f6f4 mma is sm_120a only
    ("wgmma.bf16.f32.k16", "sm_100a"),  # no wgmma on Blackwell
    ("tcgen05.i8.s8.s32.k32", "sm_103a"),  # ptxas rejects kind::i8 there
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x2", "sm_100a"),  # ue4m3 only with 4X
    ("mma.bf16.f32.k8", "sm_80"),  # wrong K
    ("mma.f16.f32.k32.sparse", "sm_80"),  # mma.sp kernels are built for sass-check only
    ("wgmma.s8.s32.k64.sparse", "sm_90a"),  # so are wgmma.sp ones
    ("mma.s8xu8.s32.k32.sat", "sm_80"),  # mixed s8 x u8: no variant
    ("mma.mxf8f6f4.e4m3.f32.k32.ue4m3x1", "sm_120a"),  # MX fp8 takes ue8m0 scales
])
def test_no_variant_for(dpid, arch):
    with pytest.raises(LookupError):
        L.variant_for(dp(dpid), arch)


@pytest.mark.parametrize("dpid,arch,name", [
    ("mma.s8.s32.k32.sat", "sm_80", "mma.s8.s32.sat"),  # .satfinite has its variant now
    ("mma.u4.s32.k64", "sm_90", "mma.u4.s32"),
    ("mma.b1.s32.k256.xor", "sm_100a", "mma.b1.xor"),
    ("wgmma.u8.s32.k32.sat", "sm_90a", "wgmma.u8.s32.sat"),
])
def test_integer_variants(dpid, arch, name):
    assert L.variant_for(dp(dpid), arch).name == name


def test_every_default_datapath_has_a_harness_on_its_newest_arch():
    for fam, arch in (("mma", "sm_120a"), ("wgmma", "sm_90a"), ("tcgen05", "sm_100a")):
        for fmt in ("bf16", "f16", "tf32", "e4m3", "e5m2", "s8", "u8"):
            L.variant_for(default_datapath(fam, fmt), arch)


def test_tile_specs():
    v = L.variant_for(dp("mma.bf16.f32.k16"), "sm_80")
    t = L.tile_spec(v, dp("mma.bf16.f32.k16"))
    assert (t.m, t.n, t.k, t.a_slots, t.b_slots, t.c_slots, t.dump_words) == (16, 8, 16, 256, 128, 128, 128)
    assert t.dump_labels[-1] == "t31.r3" and len(t.dump_labels) == 128
    assert t.instruction == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    d16 = dp("mma.f16.f16.k16")
    assert L.tile_spec(L.variant_for(d16, "sm_80"), d16).c_slots == 64
    d = dp("wgmma.tf32.f32.k8")
    t = L.tile_spec(L.variant_for(d, "sm_90a"), d)
    assert (t.a_slots, t.b_slots, t.c_slots) == (512, 64, 512)
    d = dp("tcgen05.f16.bf16.f32.k32.sparse")
    t = L.tile_spec(L.variant_for(d, "sm_100a"), d)
    assert (t.m, t.a_slots, t.b_slots, t.dump_words, t.meta_slots, t.scale_slots) == (64, 1024, 256, 1024, 256, 0)
    assert t.dump_labels[-1] == "l127.c7"
    d = dp("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4")
    t = L.tile_spec(L.variant_for(d, "sm_100a"), d)
    assert (t.m, t.a_slots, t.b_slots, t.scale_slots, t.meta_slots) == (128, 8192, 512, 512, 0)


@pytest.mark.parametrize("dpid,arch", [("mma.bf16.f32.k16", "sm_80"), ("mma.tf32.f32.k8", "sm_80"),
                                       ("mma.e4m3.f32.k32", "sm_89")])
def test_mma_slots_are_the_ptx_fragments(dpid, arch):
    d = dp(dpid)
    v = L.variant_for(d, arch)
    a, b = L.default_layouts(v, d)
    t = L.tile_spec(v, d)
    for lay, slots in ((a, t.a_slots), (b, t.b_slots)):
        assert lay.cosize == slots
        assert len(np.unique(lay.table)) == slots  # every register slot is one (row, k)


@pytest.mark.parametrize("dpid,arch", [
    ("wgmma.bf16.f32.k16", "sm_90a"), ("wgmma.tf32.f32.k8", "sm_90a"), ("wgmma.e4m3.f32.k32", "sm_90a"),
    ("tcgen05.f16.bf16.f32.k16", "sm_100a"), ("tcgen05.f8f6f4.e2m3.f32.k32", "sm_100a"),
    ("tcgen05.mxf4.e2m1.f32.k64.ue8m0x2", "sm_100a"), ("tcgen05.f16.bf16.f32.k32.sparse", "sm_100a"),
])
def test_default_smem_layouts_are_compact_bijections(dpid, arch):
    d = dp(dpid)
    v = L.variant_for(d, arch)
    t = L.tile_spec(v, d)
    a, b = L.default_layouts(v, d)
    for lay, slots in ((a, t.a_slots), (b, t.b_slots)):
        assert lay.cosize == slots and len(np.unique(lay.table)) == slots
    adesc, bdesc, idesc = L.descriptors(v, d, a, b)
    fa = decode_smem_descriptor(adesc, v.family)
    per_row = 16  # bytes of a core-matrix row
    rows = a.dims[0]
    assert fa["sbo_bytes"] == 8 * per_row and fa["lbo_bytes"] == rows * per_row
    if v.family == "tcgen05":
        assert idesc == instruction_descriptor(d, v.m, 8)
    else:
        assert idesc == 0


# ---------------------------------------------------------------------------
# Host buffers, packing and the parameter block

def _batch(t, spec, a_val=0, b_val=0, scales=False, meta=False):
    z = lambda n, v=0: np.full((t, n), v, np.uint32)  # noqa: E731
    return PhysicalBatch(z(spec.a_slots, a_val), z(spec.b_slots, b_val), z(spec.c_slots),
                         z(spec.scale_slots) if scales else None, z(spec.scale_slots) if scales else None,
                         z(spec.meta_slots) if meta else None)


def test_host_buffers_use_the_container_types():
    for dpid, arch, adt in (("mma.bf16.f32.k16", "sm_80", np.uint16), ("mma.tf32.f32.k8", "sm_80", np.uint32),
                            ("mma.e4m3.f32.k32", "sm_89", np.uint8), ("wgmma.tf32.f32.k8", "sm_90a", np.uint32),
                            ("tcgen05.f8f6f4.e2m1.f32.k32", "sm_100a", np.uint8),
                            ("tcgen05.f16.bf16.f32.k16", "sm_100a", np.uint16)):
        d = dp(dpid)
        v = L.variant_for(d, arch)
        spec = L.tile_spec(v, d)
        bufs = L.host_buffers(v, d, _batch(3, spec, 0x3F80 if adt is np.uint16 else 1, 1), spec)
        assert bufs.a.dtype == adt and bufs.a.flags.c_contiguous and bufs.c.dtype == np.uint32
        assert bufs.tiles == 3 and bufs.a.shape == (3, spec.a_slots)


def test_host_buffers_refuse_bad_batches():
    d = dp("mma.bf16.f32.k16")
    v = L.variant_for(d, "sm_80")
    spec = L.tile_spec(v, d)
    with pytest.raises(DeviceError, match="does not fit its uint16 container"):
        L.host_buffers(v, d, _batch(2, spec, a_val=0x10000), spec)
    bad = _batch(2, spec)
    bad.c = bad.c[:, :64]
    with pytest.raises(DeviceError, match="needs 128 words"):
        L.host_buffers(v, d, bad, spec)
    d = dp("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    v = L.variant_for(d, "sm_100a")
    spec = L.tile_spec(v, d)
    with pytest.raises(DeviceError, match="needs scale_a with 512 words"):  # 128 lanes x 4 columns
        L.host_buffers(v, d, _batch(1, spec), spec)
    assert L.host_buffers(v, d, _batch(1, spec, scales=True), spec).scale_a.shape == (1, 512)
    big = PhysicalBatch(np.zeros((1, 60000), np.uint32), np.zeros((1, 256), np.uint32),
                        np.zeros((1, 1024), np.uint32), np.zeros((1, 512), np.uint32),
                        np.zeros((1, 512), np.uint32))
    with pytest.raises(DeviceError, match="more than 48 KiB"):
        L.host_buffers(v, d, big, spec)


def test_host_buffers_count_the_static_stage_too():
    """A tile whose A and B fit in 48 KiB of dynamic shared memory but not
    beside the kernel's static stage[] of D (128 lanes x 8 words = 4 KiB on
    tcgen05, kernels/tcgen05.cu) is refused before launch."""
    d = dp("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    v = L.variant_for(d, "sm_100a")
    spec = L.tile_spec(v, d)
    assert L.stage_bytes(v) == 4096
    ap, bp = L.packs(v, d)
    a_slots = next(n for n in range(spec.a_slots, 200000, 4)
                   if 48 * 1024 - 4096 < L.smem_bytes(ap, n, bp, spec.b_slots) <= 48 * 1024)
    batch = PhysicalBatch(np.zeros((1, a_slots), np.uint32), np.zeros((1, spec.b_slots), np.uint32),
                          np.zeros((1, spec.c_slots), np.uint32),
                          np.zeros((1, spec.scale_slots), np.uint32),
                          np.zeros((1, spec.scale_slots), np.uint32))
    with pytest.raises(DeviceError, match="4096 for the D stage"):
        L.host_buffers(v, d, batch, spec)


def test_smem_bytes():
    # wgmma bf16: A 1024 bf16 = 512 words, B 128 bf16 = 64 words
    assert L.smem_bytes(catalog.PACK_B16, 1024, catalog.PACK_B16, 128) == 4 * (512 + 64)
    # tcgen05 e2m3: 2048 slots in 16-slot groups of 4 words; A of 100 words pads to 128
    assert L.smem_bytes(catalog.PACK_B6X16P32, 2048, catalog.PACK_B6X16P32, 256) == 4 * (512 + 64)
    assert L.smem_bytes(catalog.PACK_B32, 100, catalog.PACK_B8, 5) == 4 * (128 + 2)


def test_pack_smem_words():
    codes = np.arange(16)
    six = L.pack_smem_words(codes, catalog.PACK_B6X16P32)
    assert [hex(w) for w in six] == ["0x440c2040", "0xa2481c61", "0x3ce34c2c", "0x0"]
    bits = sum(int(c) << (6 * j) for j, c in enumerate(codes))
    assert int(six[0]) | int(six[1]) << 32 | int(six[2]) << 64 == bits
    four = L.pack_smem_words(codes, catalog.PACK_B4X16P64)
    assert list(four) == [0x76543210, 0xFEDCBA98, 0, 0]
    assert list(L.pack_smem_words(np.arange(8), catalog.PACK_B4)) == [0x76543210]
    assert list(L.pack_smem_words([0x3F80, 0x4000, 0xC000], catalog.PACK_B16)) == [0x40003F80, 0xC000]
    assert list(L.pack_smem_words([1, 2, 3, 4, 5], catalog.PACK_B8)) == [0x04030201, 5]
    # codes are masked to their width: the bits above e2m3's six are ignored
    assert L.pack_smem_words([0xFF], catalog.PACK_B6X16P32)[0] == 0x3F


def _ptx_params(arch: str, symbol: str) -> list[str]:
    unit = catalog.translation_unit(arch)
    ptx = nvrtc.compile_ptx(unit.source, arch, headers=unit.headers)
    m = re.search(r"\.entry " + symbol + r"\((.*?)\)", ptx, re.S)
    return [p.split()[1] for p in m.group(1).split(",")]  # .u64 (pointers too) or .u32


@needs_nvrtc
@pytest.mark.parametrize("family,arch,name", [("mma", "sm_120a", "mma.mxf4.2x.ue8m0"),
                                              ("wgmma", "sm_90a", "wgmma.bf16.f32"),
                                              ("tcgen05", "sm_100a", "tcgen05.f16.sparse")])
def test_parameter_block_matches_the_kernel_signature(family, arch, name):
    sig = _ptx_params(arch, catalog.by_name(name).symbol)
    ours = [(".u64" if isinstance(p, str) else {4: ".u32", 8: ".u64"}[ctypes.sizeof(p[1])])
            for p in L.PARAM_TYPES[family]]
    assert sig == ours


def test_parameter_block_bytes():
    vals = {"A": 0x7F0000001000, "B": 0x7F0000002000, "C": 0x7F0000003000, "a_slots": 1024,
            "b_slots": 128, "adesc": 0x400800400000, "bdesc": 0x400800080000, "pick": 0, "npick": 0,
            "out": 0x7F0000004000, "ntiles": 100000}
    block = L.ParamBlock(L.kernel_params("wgmma", vals))
    raw = [block.raw(i) for i in range(len(L.PARAM_TYPES["wgmma"]))]
    assert raw[0] == (0x7F0000001000).to_bytes(8, "little")
    assert raw[3] == (1024).to_bytes(4, "little") and raw[4] == (128).to_bytes(4, "little")
    assert raw[5] == (0x400800400000).to_bytes(8, "little")
    assert raw[7] == bytes(8) and raw[8] == bytes(4)  # no pick list: raw mode
    assert raw[10] == (100000).to_bytes(4, "little")
    assert block.address == ctypes.addressof(block.array)


def test_parameter_block_rejects_missing_or_oversized_values():
    with pytest.raises(DeviceError, match="parameter ntiles"):
        L.kernel_params("mma", {"A": 1, "B": 1, "C": 1, "SA": 0, "SB": 0, "pick": 0, "npick": 0, "out": 1})
    with pytest.raises(DeviceError, match="does not fit"):
        L.kernel_params("mma", {"A": 1, "B": 1, "C": 1, "SA": 0, "SB": 0, "pick": 0, "npick": 1 << 32,
                                "out": 1, "ntiles": 1})


# ---------------------------------------------------------------------------
# Result decoding

def test_expand_picked_places_words_and_zeros_the_rest():
    picked = np.array([[7, 8], [9, 10]], np.uint32)
    full = L.expand_picked(picked, np.array([5, 1]), 8)
    assert full.tolist() == [[0, 8, 0, 0, 0, 7, 0, 0], [0, 10, 0, 0, 0, 9, 0, 0]]
    with pytest.raises(DeviceError, match="outside"):
        L.expand_picked(picked, np.array([5, 8]), 8)
    with pytest.raises(DeviceError, match="does not match"):
        L.expand_picked(picked, np.array([1]), 8)


def test_tmem_16x256b_covers_the_published_slices():
    # tf32 M64N8: threads 0-31 x registers 0-3 carry the result -> D rows 0-15, all columns
    tf32 = {divmod(tmem.tmem_16x256b(t, r), tmem.D_COLS) for t in range(32) for r in range(4)}
    assert tf32 == {(lane, c) for lane in range(16) for c in range(8)}
    # bf16 M64N8: threads 0-15 x registers 0-3 and 16-31 x 0-1 (96 words) -> lanes 0-11, whole rows
    bf16 = {divmod(tmem.tmem_16x256b(t, r), tmem.D_COLS) for t in range(16) for r in range(4)}
    bf16 |= {divmod(tmem.tmem_16x256b(t, r), tmem.D_COLS) for t in range(16, 32) for r in range(2)}
    assert len(bf16) == 96 and bf16 == {(lane, c) for lane in range(12) for c in range(8)}
    # the four warps read four disjoint 32-lane sub-partitions
    allw = {divmod(tmem.tmem_16x256b(t, r), tmem.D_COLS) for t in range(128) for r in range(4)}
    assert len(allw) == 512 and {lane // 32 for lane, _ in allw} == {0, 1, 2, 3}


def test_d_word_maps_every_element_once():
    for dpid, arch, words in (("mma.bf16.f32.k16", "sm_80", 128), ("mma.f16.f16.k16", "sm_80", 64),
                              ("wgmma.f16.f32.k16", "sm_90a", 512), ("wgmma.e4m3.f16.k32", "sm_90a", 256),
                              ("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1", "sm_100a", 1024),
                              ("tcgen05.f16.bf16.f32.k16", "sm_100a", 1024)):
        d = dp(dpid)
        v = L.variant_for(d, arch)
        places = {d_word(v, d, r, c) for r in range(v.m) for c in range(v.n)}
        assert len(places) == v.m * v.n
        assert all(0 <= w < words for w, _ in places)
    v = L.variant_for(dp("mma.bf16.f32.k16"), "sm_80")
    table = MMA_FRAGMENTS[("m16n8k16", 16)][2].table
    assert all(d_word(v, dp("mma.bf16.f32.k16"), r, c) == (table[r, c], 0) for r in range(16) for c in range(8))
    v = L.variant_for(dp("wgmma.f16.f32.k16"), "sm_90a")
    assert d_word(v, dp("wgmma.f16.f32.k16"), 17, 5) == (int(wgmma_d_layout(8).offset(17, 5)), 0)
    v = L.variant_for(dp("tcgen05.f16.bf16.f32.k16"), "sm_100a")
    assert d_word(v, dp("tcgen05.f16.bf16.f32.k16"), 17, 3) == ((32 + 1) * 8 + 3, 0)


# ---------------------------------------------------------------------------
# Without a GPU: one clear line, exit 2

@pytest.mark.skipif(bool(GPUS), reason="this machine has a GPU")
def test_no_driver_is_one_line():
    with pytest.raises(DeviceError) as e:
        open_device("cuda")
    assert "no NVIDIA driver" in str(e.value) or "no GPU" in str(e.value) or "sees no GPU" in str(e.value)
    assert "\n" not in str(e.value)


def test_device_spec_is_checked():
    with pytest.raises(DeviceError, match="must be a number"):
        open_device("cuda:first")


@pytest.mark.skipif(bool(GPUS), reason="this machine has a GPU")
def test_cli_without_gpu_exits_2():
    res = CliRunner().invoke(main, ["replay", "--capture", "tests/data/khattak-mikaitis-2025/H200/bf16",
                                    "--device", "cuda:0"])
    one_error(res)


def test_probe_gpu_never_raises(monkeypatch):
    import cuda.bindings

    from tcprobe.devices.cuda.device import probe_gpu

    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    monkeypatch.delattr(cuda.bindings, "driver", raising=False)
    assert probe_gpu() == []


def test_devices_command_lists_sims_and_says_when_there_is_no_gpu(tmp_path):
    out = tmp_path / "devices.json"
    res = CliRunner().invoke(main, ["devices", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "sim:h200" in res.output and "sim:b200" in res.output
    import json

    data = json.loads(out.read_text())
    if not GPUS:
        assert "no GPU:" in res.output and data["gpu_note"]
    else:
        assert any(d["device"] == "cuda:0" for d in data["devices"])


# ---------------------------------------------------------------------------
# On a GPU (marker gpu): real launches in raw mode

def _ones_batch(v, d, t=3, c_word=0):
    spec = L.tile_spec(v, d)
    one = {"bf16": 0x3F80, "f16": 0x3C00, "tf32": 0x3F800000, "e4m3": 0x38}[d.a_type]
    return PhysicalBatch(np.full((t, spec.a_slots), one, np.uint32), np.full((t, spec.b_slots), one, np.uint32),
                         np.full((t, spec.c_slots), c_word, np.uint32)), spec


@pytest.mark.gpu
@gpu_only
def test_gpu_raw_launch_all_ones():
    dev = open_device("cuda:0")
    try:
        arch = dev.arch
        cands = [("mma.bf16.f32.k16", 0x41800000), ("mma.tf32.f32.k8", 0x41000000)]
        if arch == "sm_90a":
            cands += [("wgmma.bf16.f32.k16", 0x41800000), ("wgmma.e4m3.f32.k32", 0x42000000)]
        if arch in ("sm_100a", "sm_103a"):
            cands += [("tcgen05.f16.bf16.f32.k16", 0x41800000)]
        for dpid, k_word in cands:
            d = dp(dpid)
            v = dev.variant(d)
            batch, spec = _ones_batch(v, d)
            dump = dev.launch(d, batch)
            assert dump.shape == (3, spec.dump_words)
            # every element of D = K (all-ones operands, C = +0): the word of K in f32
            words = {d_word(v, d, r, c)[0] for r in range(v.m) for c in range(v.n)}
            assert set(dump[:, sorted(words)].ravel().tolist()) == {k_word}, dpid
            picked = dev.launch(d, batch, pick=np.array(sorted(words)[:5]))
            assert picked.shape == (3, 5) and set(picked.ravel().tolist()) == {k_word}
        info = dev.info()
        assert info["simulated"] is False and len(info["cubin_sha256"]) == 64
        assert info["compute_capability"] and info["arch"] == arch
        assert all(o["opcodes"] for o in info["opcodes"].values())
    finally:
        dev.close()


@pytest.mark.gpu
@gpu_only
def test_gpu_shared_memory_packing_matches_the_host_mirror():
    from tcprobe.devices.cuda.device import _ok

    if os.environ.get("TCPROBE_CUDA_DRIVER") == "standin":
        pytest.skip("the stand-in driver restates the packing on the host: only a GPU checks it")
    dev = open_device("cuda:0")
    drv = dev.driver  # the device's own driver (cuda.bindings, or the stand-in's)
    try:
        dev._function(catalog.for_arch(dev.arch)[0])  # loads the harness module
        kern = _ok(drv, drv.cuModuleGetFunction(dev._module, b"tcp_pack_probe"), "pack probe")
        rng = np.random.default_rng(5)
        for pack, dtype in ((catalog.PACK_B6X16P32, np.uint8), (catalog.PACK_B4X16P64, np.uint8),
                            (catalog.PACK_B4, np.uint8), (catalog.PACK_B16, np.uint16),
                            (catalog.PACK_B8, np.uint8), (catalog.PACK_B32, np.uint32)):
            codes = rng.integers(0, np.iinfo(dtype).max, 200, dtype=np.uint64).astype(dtype)
            want = L.pack_smem_words(codes, pack)
            src = _ok(drv, drv.cuMemAlloc(codes.nbytes), "alloc")
            out = _ok(drv, drv.cuMemAlloc(want.nbytes), "alloc")
            _ok(drv, drv.cuMemcpyHtoD(src, codes.ctypes.data, codes.nbytes), "copy")
            block = L.ParamBlock([("src", ctypes.c_uint64(int(src))), ("pack", ctypes.c_uint32(pack)),
                                  ("slots", ctypes.c_uint32(len(codes))), ("out", ctypes.c_uint64(int(out)))])
            _ok(drv, drv.cuLaunchKernel(kern, 1, 1, 1, 128, 1, 1, 4 * len(want), 0, block.address, 0), "launch")
            got = np.empty_like(want)
            _ok(drv, drv.cuCtxSynchronize(), "sync")
            _ok(drv, drv.cuMemcpyDtoH(got.ctypes.data, out, got.nbytes), "copy back")
            drv.cuMemFree(src)
            drv.cuMemFree(out)
            assert np.array_equal(got, want), catalog.PACK_NAMES[pack]
    finally:
        dev.close()


# ---------------------------------------------------------------------------
# Result mode through the tiles harness, with a CPU stand-in for the kernel

def _emulate_kernel(v, d, batch, a_layout, b_layout, model):
    """What a harness kernel computes, restated on the host: D[r, c] from the
    operand slots through the layouts, C from the accumulator words, D written
    back at d_word; every other dump word keeps its C word."""
    t = len(batch)
    at, bt = a_layout.table, b_layout.table
    dump = batch.c.copy()
    rows = [(r, c) for r in range(v.m) for c in range(v.n)]
    for i in range(t):
        a = np.stack([batch.a[i, at[r]] for r, _ in rows])
        b = np.stack([batch.b[i, bt[c]] for _, c in rows])
        cw = []
        for r, c in rows:
            w, h = d_word(v, d, r, c)
            cw.append((batch.c[i, w] >> (16 * h)) & (0xFFFF if d.d_type == "f16" else 0xFFFFFFFF))
        out = model.evaluate(Cases(a, b, np.array(cw, np.uint32)))
        for (r, c), word in zip(rows, out, strict=True):
            w, h = d_word(v, d, r, c)
            if d.d_type == "f16":
                keep = dump[i, w] & np.uint32(0xFFFF0000 if h == 0 else 0x0000FFFF)
                dump[i, w] = keep | (np.uint32(word) << np.uint32(16 * h))
            else:
                dump[i, w] = word
    return dump


@pytest.mark.parametrize("dpid,arch,model_dp", [
    ("mma.bf16.f32.k16", "sm_90a", "mma.bf16.f32.k16"),
    ("mma.f16.f16.k16", "sm_90a", "mma.f16.f16.k16"),
    ("mma.tf32.f32.k8", "sm_80", "mma.tf32.f32.k8"),
    ("wgmma.f16.f16.k16", "sm_90a", "mma.f16.f16.k16"),
    ("wgmma.bf16.f32.k16", "sm_90a", "mma.bf16.f32.k16"),
    ("tcgen05.f16.bf16.f32.k16", "sm_100a", "mma.bf16.f32.k16"),
    ("tcgen05.f16.f16.k16", "sm_100a", "mma.f16.f16.k16"),
])
def test_harness_result_mode_round_trip(dpid, arch, model_dp):
    """The harness the CUDA device packs with, through a restated kernel:
    every slice word holds the case's dot product."""
    from tcprobe.models.registry import resolve

    d = dp(dpid)
    v = L.variant_for(d, arch)
    model = resolve("h100", dp(model_dp))
    rng = np.random.default_rng(7)
    n, k = 3, d.k
    if d.a_type == "tf32":
        a = rng.integers(0x3F000000, 0x40800000, (n, k), dtype=np.uint32) & 0xFFFFE000
        b = rng.integers(0x3F000000, 0x40800000, (n, k), dtype=np.uint32) & 0xFFFFE000
    else:
        base = 0x3C00 if d.a_type == "f16" else 0x3F80
        a = (base + rng.integers(-0x300, 0x300, (n, k))).astype(np.uint32)
        b = (base + rng.integers(-0x300, 0x300, (n, k))).astype(np.uint32)
    c = np.array([0x3C00, 0xBC00, 0] if d.d_type == "f16" else [0x3F800000, 0xBF800000, 0], np.uint32)
    cases = Cases(a, b, c)
    h = harness_for(d)
    batch = h.pack(cases)
    spec = L.tile_spec(v, d)
    assert batch.a.shape[0] == n and batch.c.shape == (n, spec.c_slots)
    # mma and wgmma read every D element back; tcgen05 the published slice
    half16 = h.halves == 2
    if v.family != "tcgen05":
        assert len(h.slice) == v.m * v.n // (2 if half16 else 1)
    dump = _emulate_kernel(v, d, batch, h.a_layout, h.b_layout, model)
    assert np.array_equal(h.unpack(dump), model.evaluate(cases))
    # result mode reads back only the slice: the same words after expansion
    picked = dump[:, h.slice]
    assert np.array_equal(h.unpack(L.expand_picked(picked, h.slice, spec.dump_words)), model.evaluate(cases))


def test_harness_unpack_refuses_disagreeing_words():
    d = dp("mma.bf16.f32.k16")
    h = harness_for(d)
    dump = np.full((2, 128), 0x41800000, np.uint32)
    assert h.unpack(dump).tolist() == [0x41800000] * 2
    dump[1, 37] = 0
    with pytest.raises(HarnessError, match="disagree in 1 of 2 tiles"):
        h.unpack(dump)


def test_harness_packing_places_the_k_vector_in_every_row():
    d = dp("mma.bf16.f32.k16")
    h = harness_for(d)
    a = np.arange(0x3F80, 0x3F90, dtype=np.uint32)[None]
    batch = h.pack(Cases(a, a, [0x40000000]))
    table = MMA_FRAGMENTS[("m16n8k16", 16)][0].table
    # lane 5 (groupID 1, threadID_in_group 1), element 0: row 1, k = 2
    assert table[1, 2] == 5 * 8 and batch.a[0, 40] == 0x3F82
    assert all(batch.a[0, table[r, k]] == 0x3F80 + k for r in range(16) for k in range(16))
    assert set(batch.c[0].tolist()) == {0x40000000}
    sparse = dp("tcgen05.f16.bf16.f32.k32.sparse")
    with pytest.raises(HarnessError, match="need their active positions"):
        harness_for(sparse).pack(Cases(np.zeros((1, 32)), np.zeros((1, 32)), [0]))


@pytest.mark.gpu
@gpu_only
@pytest.mark.skipif(not any("H100" in g[1] or "H200" in g[1] for g in GPUS), reason="needs an H100 or H200")
@pytest.mark.parametrize("fmt,out", [("bf16", "f32"), ("fp16", "f32"), ("fp16", "f16"), ("tf32", "f32")])
def test_gpu_replays_the_published_h200_words(fmt, out):
    from tcprobe.capture import load
    from tcprobe.validation.replay import replay

    cap = next(c for c in load(str(ROOT / f"tests/data/khattak-mikaitis-2025/H200/{fmt}")) if c.datapath.d_type == out)
    dev = open_device("cuda:0")
    try:
        r = replay(cap, dev)
    finally:
        dev.close()
    assert r.skipped is None and r.mismatches == 0, r.examples[:3]


# ---------------------------------------------------------------------------
# The whole CudaDevice on a stand-in driver (tests/fake_cuda.py)

def _fake_device(monkeypatch, dpid, name="NVIDIA H200", cc=(9, 0)):
    import fake_cuda

    from tcprobe.devices.cuda import device as cuda_mod

    fake = fake_cuda.FakeDriver(name, cc, dp(dpid))
    monkeypatch.setattr(cuda_mod, "_driver", lambda: fake)
    return cuda_mod.CudaDevice(0), fake


def _random_cases(d, n, seed=3):
    rng = np.random.default_rng(seed)
    if d.a_type == "tf32":
        draw = lambda: rng.integers(0x3E000000, 0x41000000, (n, d.k), dtype=np.uint32) & 0xFFFFE000  # noqa: E731
    elif d.a_type in ("e4m3", "e5m2"):
        draw = lambda: rng.integers(0x08, 0x70, (n, d.k)).astype(np.uint32)  # noqa: E731
    else:
        base = 0x3C00 if d.a_type == "f16" else 0x3F80
        draw = lambda: (base + rng.integers(-0x400, 0x400, (n, d.k))).astype(np.uint32)  # noqa: E731
    c = rng.integers(0, 0x3C00, n).astype(np.uint32) if d.d_type == "f16" else \
        rng.integers(0x3E000000, 0x41000000, n).astype(np.uint32)
    return Cases(draw(), draw(), c)


@pytest.mark.fast_first(2)
@pytest.mark.parametrize("dpid,cc,model_dp", [
    ("mma.bf16.f32.k16", (9, 0), "mma.bf16.f32.k16"),
    ("mma.f16.f16.k16", (9, 0), "mma.f16.f16.k16"),
    ("mma.tf32.f32.k8", (9, 0), "mma.tf32.f32.k8"),
    ("wgmma.bf16.f32.k16", (9, 0), "wgmma.bf16.f32.k16"),
    ("wgmma.e4m3.f32.k32", (9, 0), "wgmma.e4m3.f32.k32"),
    ("wgmma.f16.f16.k16", (9, 0), "wgmma.f16.f16.k16"),
    ("tcgen05.f16.bf16.f32.k16", (10, 0), "mma.bf16.f32.k16"),
    ("tcgen05.tf32.f32.k8", (10, 3), "mma.tf32.f32.k8"),
])
def test_device_result_mode_on_a_stand_in_driver(monkeypatch, dpid, cc, model_dp):
    from tcprobe.models.registry import resolve

    dev, fake = _fake_device(monkeypatch, dpid, cc=cc)
    d = dp(dpid)
    cases = _random_cases(d, 5)
    got = dev.run(d, cases)
    assert np.array_equal(got, resolve("h100", dp(model_dp)).evaluate(cases))
    (sym, grid, block, smem), = fake.launched
    v = dev.variant(d)
    assert (sym, grid, block) == (v.symbol, 5, v.threads)
    assert not fake.buffers  # every allocation freed
    info = dev.info()
    assert info["gpu"] == "NVIDIA H200" and info["compute_capability"] == f"{cc[0]}.{cc[1]}"
    assert info["arch"] == catalog.arch_for_cc(*cc) and info["driver_cuda_version"] == "13.0"
    assert len(info["cubin_sha256"]) == 64 and info["simulated"] is False
    assert info["opcodes"][d.id]["harness"] == v.name and info["opcodes"][d.id]["opcodes"]
    dev.close()


def test_device_raw_mode_chunks_and_picks(monkeypatch):
    dev, fake = _fake_device(monkeypatch, "mma.bf16.f32.k16")
    d = dp("mma.bf16.f32.k16")
    h = harness_for(d)
    cases = _random_cases(d, 7)
    batch = h.pack(cases)
    monkeypatch.setattr(L, "MAX_TILES_PER_LAUNCH", 3)
    dump = dev.launch(d, batch)
    assert dump.shape == (7, 128) and [g for _, g, _, _ in fake.launched] == [3, 3, 1]
    picked = dev.launch(d, batch, pick=h.slice[:4])
    assert np.array_equal(picked, dump[:, h.slice[:4]])
    with pytest.raises(DeviceError, match="outside the 128-word dump"):
        dev.launch(d, batch, pick=np.array([128]))
    with pytest.raises(DeviceError, match="no CUDA harness runs tcgen05.tf32.f32.k8 on sm_90a"):
        dev.launch(dp("tcgen05.tf32.f32.k8"), batch)
    dev.close()


def test_device_on_an_unknown_gpu_is_one_line(monkeypatch):
    import fake_cuda

    from tcprobe.devices.cuda import device as cuda_mod

    monkeypatch.setattr(cuda_mod, "_driver", lambda: fake_cuda.FakeDriver("GPU from the future", (13, 0)))
    with pytest.raises(LookupError, match="no tcprobe harness for compute capability 13.0"):
        cuda_mod.CudaDevice(0)
    with pytest.raises(DeviceError, match="no GPU cuda:3"):
        monkeypatch.setattr(cuda_mod, "_driver", lambda: fake_cuda.FakeDriver())
        cuda_mod.CudaDevice(3)
