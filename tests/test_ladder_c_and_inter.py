"""The ladder on the two engine keys it found last: sim designs whose C is
converted on entry (``c_convert``: C rounded to nearest even to a narrower
type before the MMA), designs whose narrow window cuts C's low bits
without any conversion (the cinput step must not take one for the other),
and designs whose block results are passed on with fewer fraction bits
than their type holds (``inter_frac_bits``, with a rounding of their own).

Each design is judged as tests/test_ladder_designs.py judges its random
ones (tests/ladder_designs.judge): nothing wrong is called validated, every
key (c_convert among them) is recovered or honestly open."""

from __future__ import annotations

import pytest
from ladder_designs import judge_profile

BASE = {"window_bits": 25, "block_size": 8, "zero_floor": -133, "input_conversion": "truncate",
        "output_rounding": "rz", "zero_sign": "positive", "nan": 0x7FFFFFFF}
F16 = {"zero_floor": -24, "nan": 0x7FFF}
# name: (family, A/B format, D, changes to BASE)
DESIGNS = {
    "f32-c-to-bf16": ("mma", "bf16", "f32", dict(c_convert="bf16")),
    "f32-c-to-f16": ("mma", "bf16", "f32", dict(c_convert="f16", block_size=16)),
    "f32-c-to-tf32-rne": ("mma", "bf16", "f32", dict(c_convert="tf32", output_rounding="rne")),
    "f32-c-to-e4m3": ("wgmma", "e4m3", "f32", dict(c_convert="e4m3", window_bits=13,
                                                   block_size=4, zero_floor=-120)),
    "f16-c-to-e5m2": ("tcgen05", "e2m1", "f16", dict(F16, c_convert="e5m2", window_bits=20,
                                                     block_size=16, zero_floor=-20)),
    "f16-c-to-bf16": ("mma", "f16", "f16", dict(F16, c_convert="bf16", window_bits=24,
                                                block_size=16)),
    # a window narrower than the output under a C rounded to bf16: the block
    # step's probe needs a C of F bits, so products alone read the blocks
    "tf32-window-14-c-to-bf16": ("mma", "tf32", "f32", dict(c_convert="bf16", window_bits=14)),
    "tf32-window-14-blocks-of-2-c-to-bf16": ("mma", "tf32", "f32",
                                             dict(c_convert="bf16", window_bits=14, block_size=2,
                                                  k_order="reversed")),
    # no conversion: a window narrower than the formats C could be rounded to
    "window-7-no-conversion": ("mma", "bf16", "f32", dict(window_bits=7, block_size=16)),
    "window-10-no-conversion": ("mma", "f16", "f32", dict(window_bits=10, block_size=16,
                                                          output_rounding="rne")),
    # block results passed on with fewer bits (the rounding step's last designs)
    "inter-16-bits-rz": ("mma", "bf16", "f32", dict(block_size=4, inter_frac_bits=16)),
    "inter-20-bits-rne": ("mma", "bf16", "f32", dict(block_size=4, inter_frac_bits=20,
                                                     inter_rounding="rne")),
    "inter-f32-14-bits-under-f16": ("mma", "f16", "f16", dict(F16, block_size=4,
                                                              inter_type="f32",
                                                              inter_frac_bits=14)),
}
FAST = ("f32-c-to-bf16", "window-7-no-conversion")
KEYS = ("c_convert", "inter_frac_bits")


def _judge(tmp_path, name):
    fam, fmt, d, changes = DESIGNS[name]
    v, res = judge_profile(tmp_path / f"{name}.toml", fam, fmt, d, {**BASE, **changes}, 7,
                           validated=False)
    return v, res


@pytest.mark.parametrize("name", FAST)
def test_designs_fast(tmp_path, name):
    v, res = _judge(tmp_path, name)
    assert all(key in v.exact for key in KEYS)
    want = DESIGNS[name][3].get("c_convert")
    assert res.fingerprint.c_convert == want


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in DESIGNS if n not in FAST])
def test_designs(tmp_path, name):
    v, res = _judge(tmp_path, name)
    assert all(key in v.exact for key in KEYS), v.text()
    if "window-14" in name:  # the blocks, read from products alone
        assert "blocks" in v.exact, v.text()
