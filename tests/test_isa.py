"""The ISA table against the PTX ISA's own numbers (shapes, kinds, scales)."""

import pytest

from tcprobe.models import isa
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.models.model import ModelError
from tcprobe.models.tcgen05 import check_datapath


@pytest.mark.parametrize("family, kind, sparse, k", [
    ("mma", "tf32", False, 8), ("mma", "bf16", False, 16), ("mma", "e4m3", False, 32),
    ("mma", "s8", False, 32), ("wgmma", "f16", False, 16), ("wgmma", "e5m2", False, 32),
    ("tcgen05", "tf32", False, 8), ("tcgen05", "f16", True, 32), ("tcgen05", "f8f6f4", False, 32),
    ("tcgen05", "i8", False, 32), ("tcgen05", "mxf8f6f4", True, 64), ("tcgen05", "mxf4", False, 64),
    ("tcgen05", "mxf4nvf4", True, 128),
])
def test_k_of_one_instruction(family, kind, sparse, k):
    # PTX ISA: m16n8k8 tf32, m16n8k16 f16/bf16, m16n8k32 fp8/int8; tcgen05 K per kind,
    # doubled by .sp.
    assert isa.instruction_k(family, kind, sparse=sparse) == k


def test_sub_byte_inputs_need_tcgen05():
    with pytest.raises(isa.IsaError):
        isa.instruction_k("mma", "e2m1")
    assert default_datapath("tcgen05", "e2m1").id == "tcgen05.f8f6f4.e2m1.f32.k32"


@pytest.mark.parametrize("dp_id", [
    "tcgen05.f16.bf16.f32.k16", "tcgen05.f16.f16.k16", "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4",
    "tcgen05.mxf4.e2m1.f32.k128.ue8m0x2.sparse", "tcgen05.i8.s8xu8.s32.k32.sat",
])
def test_legal_tcgen05(dp_id):
    check_datapath(Datapath.parse(dp_id))


@pytest.mark.parametrize("dp_id, why", [
    ("tcgen05.f16.bf16.f16.k16", "C/D"),  # bf16 inputs write only f32
    ("tcgen05.mxf4.e2m1.f32.k64.ue4m3x4", "block scales"),
    ("tcgen05.f16.f32.k32", "K=16"),
    ("tcgen05.f8f6f4.e4m3.f32.k32.sat", "saturation"),
    ("tcgen05.f16.bf16xf16.f32.k16", "same type"),
])
def test_illegal_tcgen05(dp_id, why):
    with pytest.raises(ModelError, match=why):
        check_datapath(Datapath.parse(dp_id))


def test_output_defaults():
    assert isa.output_defaults("f16") == isa.OutputDefaults("rne", -21, 25)
    assert isa.output_defaults("f32") == isa.OutputDefaults("rz", -133, 25)


def test_scale_blocks():
    # scale_vec::1X/2X: 32 positions a scale; 4X: 16 (PTX ISA block-scaling tables).
    assert Datapath.parse("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1").scale_block == 32
    assert Datapath.parse("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4").scale_block == 16
    assert Datapath.parse("tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse").scale_block == 32


# ---------------------------------------------------------------------------
# tcgen05 kind facts (issue 29: each written once, in models/isa.py)


@pytest.mark.parametrize("kind, a_type, d_types", [
    # PTX ISA 9.7.16.2.1 "Matrix Shape", Table 39 "Various combinations of .kind
    # and shapes": .kind::f16, dtype .f16 with atype/btype .f16; dtype .f32 with
    # atype/btype .f16, .bf16 (no bf16 -> f16); .kind::tf32: dtype .f32, .tf32.
    ("f16", "f16", {"f16", "f32"}), ("f16", "bf16", {"f32"}), ("tf32", "tf32", {"f32"}),
    ("i8", "s8", {"s32"}), ("mxf4nvf4", "e2m1", {"f32"}),
])
def test_tcgen05_d_types_from_the_ptx_isa(kind, a_type, d_types):
    assert set(isa.tcgen05_d_types(kind, a_type)) == d_types
    assert set(isa.output_types("tcgen05", kind, a_type)) == d_types


def test_tcgen05_plain_and_packed_kinds():
    # PTX ISA tcgen05.mma: .kind::tf32, f16, f8f6f4, i8 have no .block_scale;
    # mxf4/mxf4nvf4 take e2m1 two a byte (m..n..k64), mxf8f6f4 one a byte (k32).
    assert set(isa.TCGEN05_PLAIN_KINDS) == {"tf32", "f16", "f8f6f4", "i8"}
    assert isa.PACKED_E2M1_KINDS == ("mxf4", "mxf4nvf4")
    assert [isa.TCGEN05_K[k] for k in ("mxf8f6f4", "mxf4", "mxf4nvf4")] == [32, 64, 64]


@pytest.mark.parametrize("kind, vecs, default", [
    # PTX ISA tcgen05.mma .block_scale: mxf8f6f4 scale_vec::1X, mxf4 2X,
    # mxf4nvf4 2X or 4X; a descriptor without the qualifier reads the largest.
    ("mxf8f6f4", (1,), 1), ("mxf4", (2,), 2), ("mxf4nvf4", (2, 4), 4),
])
def test_scale_vecs_and_the_default(kind, vecs, default):
    assert isa.scale_vecs(kind) == vecs
    assert isa.default_scale_vec(kind) == default
    with pytest.raises(isa.IsaError):
        isa.default_scale_vec("f16")


@pytest.mark.parametrize("a, b, scale, block, want", [
    # one scale every 32 K positions for scale_vec::1X/2X, every 16 for 4X;
    # ue4m3 only with mxf4nvf4 4X (PTX ISA: .kind::mxf4nvf4 .scale_vec::4X .ue4m3)
    ("e2m1", "e2m1", "ue8m0", 32, ("mxf4", 2)), ("e2m1", "e2m1", "ue8m0", 16, ("mxf4nvf4", 4)),
    ("e2m1", "e2m1", "ue4m3", 16, ("mxf4nvf4", 4)), ("e4m3", "e4m3", "ue8m0", 32, ("mxf8f6f4", 1)),
    ("e2m1", "e3m2", "ue8m0", 32, ("mxf8f6f4", 1)),
])
def test_block_scaled_kind(a, b, scale, block, want):
    assert isa.block_scaled_kind(a, b, scale, block) == want


@pytest.mark.parametrize("a, b, scale, block", [
    ("e2m1", "e2m1", "ue4m3", 32), ("e4m3", "e4m3", "ue8m0", 16), ("e4m3", "e4m3", "ue4m3", 16)])
def test_block_scaled_kind_refuses(a, b, scale, block):
    with pytest.raises(isa.IsaError):
        isa.block_scaled_kind(a, b, scale, block)


@pytest.mark.parametrize("kind, t, packing", [
    # 16 fp6 in 12 bytes and 16 fp4 in 8, padded to 16 bytes (PTX ISA, "Packing
    # format used for matrix A and B by .kind::f8f6f4"); two e2m1 a byte under mxf4*
    ("f8f6f4", "e2m1", "b4x16_p64"), ("mxf8f6f4", "e2m1", "b4x16_p64"), ("mxf4", "e2m1", "b4"),
    ("mxf4nvf4", "e2m1", "b4"), ("f8f6f4", "e3m2", "b6x16_p32"), ("tf32", "tf32", "b32"),
    ("f16", "bf16", "b16"), ("i8", "u8", "b8"),
])
def test_operand_packing(kind, t, packing):
    assert isa.operand_packing(kind, t) == packing


@pytest.mark.parametrize("arch, family, a, b, kind, k", [
    # sm_120a mma.sync .kind::f8f6f4 m16n8k32 for fp6/fp4 and mixed f8f6f4 types;
    # tcgen05 kind::f8f6f4 for any pair; e4m3 x e5m2 mma.sync m16n8k32 (kind: A's type);
    # sm_70 has only m8n8k4 f16, sm_75 adds m16n8k8
    ("sm_120a", "mma", "e2m1", "e2m1", "f8f6f4", 32), ("sm_120a", "mma", "e4m3", "e2m3", "f8f6f4", 32),
    ("sm_100a", "tcgen05", "e4m3", "e2m1", "f8f6f4", 32), ("sm_90a", "wgmma", "e4m3", "e5m2", "e4m3", 32),
    ("sm_70", "mma", "f16", "f16", None, 4), ("sm_75", "mma", "f16", "f16", None, 8),
    ("sm_90a", "mma", "bf16", "bf16", None, 16),
])
def test_the_instruction_of_a_pair(arch, family, a, b, kind, k):
    assert isa.pair_kind(arch, family, a, b) == kind
    assert isa.arch_instruction_k(arch, family, kind or a, a) == k


def test_no_instruction_for_a_pair():
    with pytest.raises(isa.IsaError):
        isa.pair_kind("sm_90a", "mma", "e4m3", "bf16")
    with pytest.raises(isa.IsaError):
        isa.arch_instruction_k("sm_70", "mma", "bf16", "bf16")  # V100: f16 only
