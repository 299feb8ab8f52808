"""The ladder on MMA-Sim 2.1.1 (a simulator nobody here wrote) recovers its
documented parameters: F = 25, all 16 (bf16/f16) or 32 (fp8) products of
one instruction fused, zero floor -133 for f32 D (-21 for f16 D), RZ into
f32 (RNE into f16), +0 for zeros, canonical NaN."""

import pytest

from tcprobe.devices.registry import open_device
from tcprobe.ladder import run_ladder

pytestmark = [pytest.mark.peer, pytest.mark.usefixtures("mmasim_peer")]


def ladder(spec, family, fmt):
    dev = open_device(spec)
    return run_ladder(dev, dev.datapath(family, fmt))


def test_hopper_wgmma_bf16():
    r = ladder("mmasim:Hopper:wgmma.m64n8k16.f32.bf16.bf16", "wgmma", "bf16")
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.zero_floor, fp.output_rounding, fp.zero_sign,
            fp.nan) == (25, 16, -133, "rz", "positive", 0x7FFFFFFF)
    assert r.validation.mismatches == 0
    for step in ("slice", "layout"):
        f = r.finding(step)
        assert f.status == "skipped" and "no raw mode" in f.summary
    assert r.finding("lanes").status == "found"


def test_blackwell_tcgen05_f16():
    r = ladder("mmasim:Blackwell:tcgen05.m64n8k16.kind::f16.f32.f16.f16", "tcgen05", "f16")
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.output_rounding, fp.zero_sign) == \
        (25, 16, "rz", "positive")
    # f16 products never anchor below 2**-28: MMA-Sim's -133 cannot show here
    assert fp.zero_floor is None and "-28" in fp.undetermined["zero_floor"]
    assert r.validation.mismatches == 0


def test_blackwell_tcgen05_kind_f16_with_bf16_shows_the_floor():
    r = ladder("mmasim:Blackwell:tcgen05.m64n8k16.kind::f16.f32.bf16.bf16", "tcgen05", "bf16")
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.zero_floor, fp.output_rounding) == (25, 16, -133, "rz")
    assert r.validation.mismatches == 0


def test_hopper_wgmma_f16_output_floor_and_rne():
    r = ladder("mmasim:Hopper:wgmma.m64n8k16.f16.f16.f16", "wgmma", "f16")
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.zero_floor, fp.output_rounding, fp.nan) == \
        (25, 16, -21, "rne", 0x7FFF)
    assert r.validation.mismatches == 0


def test_hopper_wgmma_fp8_fuses_32_with_13_bits():
    r = ladder("mmasim:Hopper:wgmma.m64n8k32.f32.e4m3.e4m3", "wgmma", "e4m3")
    fp = r.fingerprint
    assert (fp.window_bits, fp.block_size, fp.output_frac_bits, fp.output_rounding) == \
        (13, 32, 13, "rz")
    assert r.validation.mismatches == 0
