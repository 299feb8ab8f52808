"""f64 mma.sync (DMMA): the harness kernels compile with NVRTC and nvdisasm
finds the DMMA opcode the ISA table records (no GPU)."""

from __future__ import annotations

import pytest
from cuda_support import cubin_cache, needs_nvdisasm, needs_nvrtc  # noqa: F401

from tcprobe.devices.cuda import sass
from tcprobe.kernels import catalog
from tcprobe.models import isa

pytestmark = [needs_nvrtc, needs_nvdisasm, pytest.mark.usefixtures("cubin_cache")]


def _verdicts(arch: str) -> dict:
    return {v.harness: v for v in sass.check_arch(arch, ("mma",)).verdicts
            if v.harness.startswith("mma.f64")}


# What nvdisasm 13.5 prints, written out by hand (read off the disassembly).
@pytest.mark.fast_first(2)
@pytest.mark.parametrize("arch,harness,opcode,status", [
    ("sm_80", "mma.f64.f64", "DMMA.884", "ok"),
    ("sm_86", "mma.f64.f64", "DMMA.884", "ok"),
    ("sm_90", "mma.f64.f64", "DMMA.8x8x4", "ok"),
    ("sm_90", "mma.f64.f64.m16n8k4", "DMMA.16x8x4", "ok"),
    ("sm_90", "mma.f64.f64.m16n8k8", "DMMA.16x8x8", "ok"),
    ("sm_90", "mma.f64.f64.m16n8k16", "DMMA.16x8x16", "ok"),
    ("sm_100a", "mma.f64.f64", "DMMA.8x8x4", "ok"),
    ("sm_100a", "mma.f64.f64.m16n8k16", "DMMA.8x8x4", "emulated"),
])
def test_f64_harness_compiles_to_dmma(arch, harness, opcode, status):
    v = _verdicts(arch)[harness]
    assert v.found == [opcode], v
    assert v.expected == opcode and v.status == status, v


def test_sm80_builds_only_m8n8k4_and_sm90_every_shape():
    assert set(_verdicts("sm_80")) == {"mma.f64.f64"}
    assert set(_verdicts("sm_90")) == {"mma.f64.f64", "mma.f64.f64.m16n8k4",
                                       "mma.f64.f64.m16n8k8", "mma.f64.f64.m16n8k16"}


def test_split_shapes_count_their_dmmas():
    """m16n8kK on sm_100a: two row halves times K/4 DMMA.8x8x4 (16 8x8x4 blocks
    hold 16x8x16), read off the emulation summary."""
    v = _verdicts("sm_100a")
    counts = {h: len(v[h].emulation["dmma_chain"]) for h in v if v[h].emulation}
    assert counts == {"mma.f64.f64.m16n8k4": 2, "mma.f64.f64.m16n8k8": 4,
                      "mma.f64.f64.m16n8k16": 8}


def test_the_catalog_reads_k_and_shapes_from_the_isa_table():
    by = {v.name: v for v in catalog.variants() if v.name.startswith("mma.f64")}
    assert {(v.m, v.n, v.k) for v in by.values()} == set(isa.F64_SHAPES)
    assert by["mma.f64.f64"].archs == ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a",
                                       "sm_103a", "sm_120a")
    assert by["mma.f64.f64.m16n8k16"].acc_regs == 8  # 4 f64 accumulators, 2 words each
