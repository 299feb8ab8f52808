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
