"""The ladder through the CUDA device on the stand-in driver (tests/fake_cuda.py):
the same code path as a GPU run (packing, descriptors, dump conventions,
slices), with the kernels restated on the host and the H100 model's
arithmetic. The SASS step compiles and disassembles the real harness."""

import pytest

pytest.importorskip("cuda.bindings")

from tcprobe.ladder import run_ladder  # noqa: E402
from tcprobe.models.datapath import Datapath  # noqa: E402

pytestmark = pytest.mark.slow


def device(monkeypatch, dpid, cc):
    import fake_cuda

    from tcprobe.devices.cuda import device as cuda_mod

    fake = fake_cuda.FakeDriver("NVIDIA H200", cc, Datapath.parse(dpid))
    monkeypatch.setattr(cuda_mod, "_driver", lambda: fake)
    return cuda_mod.CudaDevice(0)


def test_full_ladder_on_packed_f16_accumulators(monkeypatch):
    dp = Datapath.parse("mma.f16.f16.k16")
    r = run_ladder(device(monkeypatch, dp.id, (9, 0)), dp, validate_cases=2000)
    assert not r.simulated and r.finding("slice").values["documented"]
    assert r.finding("slice").values["slice_words"] == 128  # 64 registers, two halves each
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.zero_floor, fp.output_rounding, fp.nan) == \
        (25, 16, -21, "rne", 0x7FFF)
    assert r.validation.mismatches == 0
    sass = r.finding("sass")
    assert sass.status in ("found", "skipped")  # skipped only where NVRTC/nvdisasm are absent
    if sass.status == "found":
        assert sass.values["opcodes"] and sass.values["opcodes"][0].startswith("HMMA")


def test_tcgen05_slice_is_every_d_word(monkeypatch):
    """Every M64 row holds a D. With the published overlapping A layout only
    threads 0-15 x 4 + 16-31 x 2 of the 16x256b read (lanes 0-11) agree on a
    replicated K-vector (the slice the write-up reports, kept with that
    layout: tests/test_tcgen05_tmem.py); with the canonical layout, where
    every (row, k) has its own slot, all 512 D words agree."""
    dp = Datapath.parse("tcgen05.f16.bf16.f32.k16")
    r = run_ladder(device(monkeypatch, dp.id, (10, 0)), dp, ["slice", "lanes", "layout"])
    s = r.finding("slice")
    assert s.values["documented"] and len(s.values["slice"]) == 512
    assert len(s.values["d_elements"]) == 512
    lay = r.finding("layout")
    assert lay.status == "found" and lay.values["layout_documented"]
    assert r.finding("lanes").status == "found"
