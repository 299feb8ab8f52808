"""Turing and RTX Blackwell in the ISA table, the profiles and the sim devices,
against the PTX ISA's numbers, MMA-Sim's published parameters and
hand-derived words (no simulator needed)."""

from pathlib import Path

import pytest

from tcprobe.devices.base import RawModeUnsupported
from tcprobe.devices.sim import SimDevice
from tcprobe.models import isa
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.profiles import PROFILES, profile_for_gpu
from tcprobe.schema import SchemaError, check_instruction


def _check(dp_id):
    dp = Datapath.parse(dp_id)
    check_instruction(dp.family, dp.kind, dp.a_type, dp.b_type, dp.c, dp.d_type, dp.k,
                      dp.scale_type, dp.scale_vec, dp.sparse, dp.saturate, dp_id)


@pytest.mark.parametrize("dp_id", [
    "mma.f8f6f4.e4m3xe2m1.f32.k32", "mma.f8f6f4.e3m2.f16.k32", "mma.mxf8f6f4.e2m3xe5m2.f32.k32.ue8m0x1",
    "mma.mxf4.e2m1.f32.k64.ue8m0x2", "mma.mxf4nvf4.e2m1.f32.k64.ue8m0x4",
    "mma.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "mma.f16.f32.k8", "mma.f16.f16tof32.k4",
])
def test_legal_mma_forms(dp_id):
    _check(dp_id)


@pytest.mark.parametrize("dp_id, why", [
    ("mma.f8f6f4.e2m1.f32.k16", "K=32"),  # m16n8k32 only (PTX ISA, kind::f8f6f4)
    ("mma.mxf4.e2m1.f32.k64.ue4m3x4", "block scales"),  # mxf4: ue8m0 scale_vec::2X only
    ("mma.mxf4nvf4.e2m1.f32.k64.ue4m3x2", "block scales"),  # ue4m3 needs 4X
    ("mma.mxf8f6f4.e4m3.f16.k32.ue8m0x1", "C/D"),  # block-scaled mma writes f32
    ("mma.f8f6f4.e4m3.f32.k32.ue8m0x1", "no block scales"),
    ("mma.mxf4.e4m3.f32.k64.ue8m0x2", "A/B"),
])
def test_illegal_mma_forms(dp_id, why):
    with pytest.raises(SchemaError, match=why):
        _check(dp_id)


def test_k_and_scale_blocks_of_the_sm120_kinds():
    # PTX ISA: m16n8k32 for f8f6f4/mxf8f6f4, m16n8k64 for mxf4/mxf4nvf4;
    # scale_vec::1X/2X one scale per 32 K positions, 4X per 16.
    assert isa.MMA_KIND_K == {"f8f6f4": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
    assert Datapath.parse("mma.mxf4nvf4.e2m1.f32.k64.ue4m3x4").n_scales == 4
    assert Datapath.parse("mma.mxf4.e2m1.f32.k64.ue8m0x2").n_scales == 2
    assert Datapath.parse("mma.mxf8f6f4.e4m3.f32.k32.ue8m0x1").n_scales == 1
    assert isa.ARCH_MMA_SHAPES["sm_75"]["f16"] == ((8, 8, 4), (16, 8, 8))
    assert isa.arch_for_cc(7, 5) == "sm_75" and isa.arch_for_cc(12, 0) == "sm_120a"


def test_profiles_carry_mmasim_parameters():
    # MMA-Sim 2.1.1 sim.py: Turing F=24, 16 bytes (f16 L=8), e_zero -20/-132;
    # RTX Blackwell F=25, 32 bytes (f16 16, tf32 8, one-byte types 32), -21/-133.
    t4 = PROFILES["t4"]
    k8 = t4.params(Datapath.parse("mma.f16.f32.k8"))
    assert (k8.window_bits, k8.block_size, k8.zero_floor) == (24, 8, -132)
    k4 = t4.params(Datapath.parse("mma.f16.f16.k4"))
    assert (k4.window_bits, k4.block_size, k4.zero_floor) == (23, 4, -19)
    rtx = PROFILES["rtx5090"]
    for dp_id, block in (("mma.f16.f32.k16", 16), ("mma.tf32.f32.k8", 8),
                         ("mma.e4m3.f32.k32", 32), ("mma.f8f6f4.e2m1xe3m2.f32.k32", 32)):
        p = rtx.params(Datapath.parse(dp_id))
        assert (p.window_bits, p.block_size, p.zero_floor, p.output_frac_bits) == (25, block, -133, None)
    assert rtx.params(Datapath.parse("mma.f16.f16.k16")).zero_floor == -21
    assert profile_for_gpu("NVIDIA GeForce RTX 5090") is rtx
    assert profile_for_gpu("Tesla T4") is t4
    assert "not measured by tcprobe" in t4.evidence and "not measured by tcprobe" in rtx.evidence
    assert not t4.measured and not rtx.measured and PROFILES["h100"].measured


def test_rtx_f8f6f4_words_by_hand():
    # e2m1 6.0 (0x7) x e3m2 0.25 (0x04: exponent field 1, bias 3) = 1.5, + C 1.0
    # = 2.5 = 0x40200000
    dp = Datapath.parse("mma.f8f6f4.e2m1xe3m2.f32.k32")
    model = PROFILES["rtx5090"].model(dp)
    cases = Cases([[0x7] + [0] * 31], [[0x04] + [0] * 31], [0x3F800000])
    assert int(model.evaluate(cases)[0]) == 0x40200000
    # eight products 1.0 (e2m1 0x2 x e3m2 0x0c) under C = 2**26: the 25-bit
    # window below 2**26 keeps nothing under 2**1, so each is cut to zero and
    # D = 2**26 = 0x4c800000 (the exact sum 2**26 + 8 would be 0x4c800001)
    cases = Cases([[0x2] * 8 + [0] * 24], [[0x0C] * 8 + [0] * 24], [0x4C800000])
    assert int(model.evaluate(cases)[0]) == 0x4C800000


@pytest.mark.parametrize("name, fmt, dp_id", [
    ("t4", "f16", "mma.f16.f32.k8"), ("v100", "f16", "mma.f16.f32.k4"),
    ("rtx5090", "e2m1", "mma.f8f6f4.e2m1.f32.k32"), ("rtx5090", "bf16", "mma.bf16.f32.k16"),
])
def test_sim_devices_choose_the_arch_datapath(name, fmt, dp_id):
    dev = SimDevice.builtin(name)
    dp = dev.datapath("mma", fmt)
    assert dp.id == dp_id and dev.supports(dp)


def test_t4_runs_f16_only_and_rtx5090_block_scaled_in_result_mode():
    assert not SimDevice.builtin("t4").supports(Datapath.parse("mma.bf16.f32.k16"))
    dev = SimDevice.builtin("rtx5090")
    dp = Datapath.parse("mma.mxf4.e2m1.f32.k64.ue8m0x2")
    assert dev.supports(dp)
    with pytest.raises(RawModeUnsupported, match="byte and thread selectors"):
        dev.tile(dp)


def test_rtx5090_block_scaled_words_are_mmasims():
    """sim:rtx5090 runs every block-scaled mma.sync of MMA-Sim's table with
    MMA-Sim's frozen words (tests/data/vectors/mmasim-sm75-sm120.jsonl)."""
    from tcprobe.capture import load

    dev = SimDevice.builtin("rtx5090")
    vectors = Path(__file__).parent / "data" / "vectors" / "mmasim-sm75-sm120.jsonl"
    scaled = [c for c in load(vectors) if c.datapath.block_scaled]
    assert len(scaled) == 29
    for cap in scaled:
        assert (dev.run(cap.datapath, cap.cases) == cap.words).all(), cap.datapath.id
