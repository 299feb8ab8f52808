"""The ladder on blocks chained through an intermediate type other than the
output's (``inter_type``: every type models/engine.PARAMS allows, fnuz and
f64 among them), and on an exact window under normalized alignment with a
2-bit carry (seed 44, design 5 of tests/ladder_designs.draw).

Each design is judged as tests/ladder_designs.judge judges its random ones
(nothing wrong called validated, 0 held-out mismatches), and the keys below
are written by hand from the formats' ranges and bits:

- f16 x f16 -> f16 through bf16: 7 fraction bits; f16's products reach
  2**32 and 2**-48, inside bf16's range and f32's, tf32's and f64's (no sum
  comes near their subnormals), so a block result kept to 7 bits in any of
  these four gives the same words: open, the range exactly those four.
- tf32 x tf32 -> f32 through bf16 (RNA): bf16 and tf32 kept to 7 bits share
  f32's exponent range, so both stay in the range named open (f64 would
  hold the 2**255 products that overflow them).
- e5m2 x e5m2 -> f16 through f32 (RZ) under a 10-bit window: a block's sum
  has too few bits for f32's 23 or f64's 52 to differ and never leaves f32's
  range: open, f32 and f64 in the range.
- bf16 x bf16 -> f32 through f64 (RZ), an exact window, blocks of 8 (K =
  16): one f64 holds a term 2**-55 below 2**E only where 2**E cancels in
  its own block first, so +-2**E in lanes 0 and j with 2**(E-55) in a third
  lane keeps the term only for j in lane 0's block: blocks of 8 through f64,
  rounded RZ like the output (the rounding is the output's here: inter_rounding
  unset), the window exact (open: C survives at every depth).
- bf16 x bf16 -> f32 through f64 kept to 37 bits (RNA) under a 33-bit
  window, 1 carry bit that saturates, blocks of 8 in a random K order (the
  wide scan of seed 44, design 5): C at the window's edge crosses blocks in
  37 bits, so the blocks show through products alone; a block's sum holds
  at most 33 + 1 bits, fewer than any f64 kept to 34 bits or more: the kept
  bits (37 among them) and the rounding are open, the type f64.
- e2m1 x e2m1 -> f16, exact window, carry 2 (wrap), normalized alignment
  (seed 44, design 5): nothing is cut and the carry acts the same on either
  anchor here (the judge's held-out cases show it), so raw and normalized
  alignment give the same words: align is open, not read as raw.

Still wrong (strict xfail, named in README.md's ladder section): an fp8 intermediate
(e4m3fnuz: 3 bits, largest 240, smallest 2**-10) misleads the internal step:
C = 2**(14-e) left by +-2**14 in the first block passes e4m3fnuz only down
to 2**-10, as deep as C alone shows, so the window (25) is read as "at least
38" and no later reading fits. fp8 intermediates whose range holds the
window's edge are recovered (tests/test_ladder_fp8_inter.py).
"""

from __future__ import annotations

import pytest
from ladder_designs import judge_profile

BASE = {"window_bits": 25, "block_size": 4, "input_conversion": "truncate",
        "output_rounding": "rz", "zero_sign": "positive"}
F16 = {"zero_floor": -24, "nan": 0x7FFF}
F32 = {"zero_floor": -133, "nan": 0x7FFFFFFF}
# name: (family, A/B format, D, changes to BASE)
DESIGNS = {
    "f16-through-bf16": ("mma", "f16", "f16", dict(F16, inter_type="bf16", inter_rounding="rne")),
    "tf32-through-bf16": ("mma", "tf32", "f32", dict(F32, window_bits=32, block_size=2,
                                                     inter_type="bf16", inter_rounding="rna")),
    "e5m2-through-f32": ("mma", "e5m2", "f16", dict(F16, window_bits=10, block_size=2,
                                                    inter_type="f32")),
    "seed-44-5": ("tcgen05", "e2m1", "f16", dict(
        F16, window_bits="exact", block_size=16, output_rounding="rne", zero_floor=-18,
        carry_bits=2, carry_top="wrap", align="normalized")),
    "e4m3-through-e4m3fnuz": ("wgmma", "e4m3", "f16", dict(F16, inter_type="e4m3fnuz")),
    "bf16-through-f64": ("mma", "bf16", "f32", dict(F32, window_bits="exact", block_size=8,
                                                    inter_type="f64")),
    "seed-44-5-f64-keep-37": ("mma", "bf16", "f32", dict(
        F32, window_bits=33, block_size=8, zero_floor=-129, zero_sign="ieee", carry_bits=1,
        carry_top="saturate", overflow="inf", k_order="random", inter_type="f64",
        inter_rounding="rna", inter_frac_bits=37)),
}
STILL_WRONG = ("e4m3-through-e4m3fnuz",)
FAST = ("f16-through-bf16", "seed-44-5")


def _judge(tmp_path, name):
    fam, fmt, d, changes = DESIGNS[name]
    v, res = judge_profile(tmp_path / f"{name}.toml", fam, fmt, d, {**BASE, **changes}, 7,
                           validated=False)
    assert v.held_out_mismatches == 0, f"{name}: {v.text()}"
    return v, res


def _check(name, v, res):
    fp = res.fingerprint
    ranges = sorted(res.context.ranges.get("inter_type", []))
    if name == "bf16-through-f64":
        assert (fp.inter_type, fp.block_size, fp.k_order, fp.output_rounding) == \
            ("f64", 8, None, "rz"), v.text()
        assert fp.window_bits is None and "window_bits" in fp.undetermined, v.text()
        assert res.validated, v.text()
        return
    if name == "seed-44-5-f64-keep-37":
        assert (fp.inter_type, fp.block_size, fp.window_bits, fp.output_rounding) == \
            ("f64", 8, 33, "rz"), v.text()
        assert (fp.carry_bits, fp.carry_top, fp.zero_floor, fp.zero_sign) == \
            (1, "saturate", -129, "ieee"), v.text()
        for key in ("inter_frac_bits", "inter_rounding"):
            assert getattr(fp, key) is None and key in fp.undetermined, (key, v.text())
        assert res.validated, v.text()
        return
    if name != "seed-44-5":
        assert fp.inter_type is None and "inter_type" in fp.undetermined, v.text()
    if name == "f16-through-bf16":
        assert ranges == ["bf16", "f32", "f64", "tf32"], ranges
    elif name == "tf32-through-bf16":
        assert {"bf16", "tf32"} <= set(ranges) and "f64" not in ranges, ranges
    elif name == "e5m2-through-f32":
        assert {"f32", "f64"} <= set(ranges), ranges
    elif name == "seed-44-5":
        assert fp.align is None and "align" in fp.undetermined and "align" in v.open, v.text()


@pytest.mark.parametrize("name", FAST)
def test_designs_fast(tmp_path, name):
    v, res = _judge(tmp_path, name)
    _check(name, v, res)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in DESIGNS if n not in FAST + STILL_WRONG])
def test_designs(tmp_path, name):
    v, res = _judge(tmp_path, name)
    _check(name, v, res)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the internal step misreads the window through e4m3fnuz")
@pytest.mark.parametrize("name", STILL_WRONG)
def test_still_wrong(tmp_path, name):
    _judge(tmp_path, name)
