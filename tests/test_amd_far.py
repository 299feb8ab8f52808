"""F past C's floor (seed 3704 --wide, design 36): xf32 truncated L = 877, F = 533,
F2 = 2 was fingerprinted F = 253 and validated. C's depth beside 2^125 - 2^125
stops where C = 2^(125 - k) turns subnormal and F2's floor below 2^-126 takes it
(k = 254: 2^-129 is under 2^(-126 - 2)), not at F. A negative product far below
the block's largest is truncated toward zero instead, whatever F2: the mfma step
reads F with it (probes/mfma_far.py), the validation mix and the judge's held-out
set hold such products (validation.mfma_far), and the judge proves an open F or
F2 range on every row it judges (tests/amd_ranges.py)."""

from __future__ import annotations

import numpy as np
import pytest
from amd_designs import _proven, held_out, judge, write_device

from tcprobe.models.amd import MfmaModel, MfmaParams
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

XF32 = "mfma.xf32.tf32.f32.k8"
DESIGN_36 = {"design": "truncated", "block": 877, "window": 533, "window2": 2}
# xf32 words (f32 words of which 1 + 8 + 10 bits count)
TWO_63, TWO_64, NEG_TWO_63 = 0x5F000000, 0x5F800000, 0xDF000000
NEG_2_M87, TWO_M86 = 0x94000000, 0x14800000  # -2^-87, 2^-86: a product -2^-173
NEG_2_M136, TWO_M136 = 0x80002000, 0x00002000  # subnormals: a product -2^-272, the smallest


def _far_row(small_a, small_b):
    """2^127 (2^63 * 2^64), -2^127 and a small negative product in lanes 0, 1, 2; C = +0."""
    a = np.zeros((1, 8), np.uint32)
    b = np.zeros((1, 8), np.uint32)
    a[0, :3] = (TWO_63, NEG_TWO_63, small_a)
    b[0, :3] = (TWO_64, TWO_64, small_b)
    return Cases(a, b, np.zeros(1, np.uint32))


@pytest.mark.parametrize("small,depth", [((NEG_2_M87, TWO_M86), 300), ((NEG_2_M136, TWO_M136), 399)])
def test_a_negative_product_far_below_is_cut_away_past_f(small, depth):
    """Worked by hand: the sum 2^127 - 2^127 - 2^(127 - depth), truncated toward zero
    to F bits below 2^127, keeps the small product while depth <= F; floored to
    F2 + 1 = 3 bits below 2^127 it is -2^124 (0xFD800000: sign, exponent 251), and
    with it cut away the sum is +0. The smallest product, 2^-272, is 399 below 2^127:
    every F from 399 keeps it, so every F from 399 on gives these words."""
    dp = Datapath.parse(XF32)
    row = _far_row(*small)
    for f, want in ((533, 0xFD800000), (depth, 0xFD800000), (depth - 1, 0), (253, 0)):
        got = MfmaModel("m", dp, "", MfmaParams("truncated", 877, f, 2)).evaluate(row)
        assert int(got[0]) == want, (f, hex(int(got[0])))


def test_the_validation_mix_tells_a_window_read_short():
    """The misread model (F = 253) misses words of the validation's mfma-far part,
    and of no other part: before it, 2,000 validation cases agreed with it."""
    from tcprobe.ladder.validation import validation_cases

    dp = Datapath.parse(XF32)
    cases, which, names = validation_cases(dp, 2000, 0)
    truth = MfmaModel("t", dp, "", MfmaParams(**DESIGN_36)).evaluate(cases)
    wrong = MfmaModel("w", dp, "", MfmaParams("truncated", 8, 253, 2)).evaluate(cases)
    differ = {names[i] for i in np.unique(which[truth != wrong])}
    assert differ == {"mfma-far"}


def test_the_judge_finds_every_value_of_an_untrue_open_range():
    """bf16 grouped F = 506 was named open from 403 (C's last bit below 2^253), but
    grouped sums products to 2^254, and one of 2^-266 is 520 below it: F = 403 cuts
    what F = 506 keeps. The judge, proving the range on its held-out rows, names
    values of it untrue; a range from F itself (506) holds on them."""
    dp = Datapath.parse("mfma.bf16.f32.k8")
    cases = held_out(dp, 900)
    words = MfmaModel("t", dp, "", MfmaParams("grouped", 695, 506, 40)).evaluate(cases)

    def params(lo):
        return lambda v: MfmaParams("grouped", 8, v, 40)

    assert 403 in _proven(dp, "window", 403, params(403), cases, words, False, False)
    assert _proven(dp, "window", 506, params(506), cases, words, False, False) == []


@pytest.mark.parametrize("key,want", [("window", 300), ("window2", 299)])
def test_a_rows_stable_value_is_where_its_cuts_end(key, want):
    """tests/amd_ranges.stable_from on the far row of depth 300: its products' lowest
    bits are 0 and 300 below 2^127, so every F from 300 keeps them whole; with F at
    the bound the sum -2^-173 is floored to units 2^(127 - F2 - 1), exact from F2 =
    299 (the total, -2^-173 under 2^-126, is then cut 47 bits below 2^-126)."""
    from amd_ranges import stable_from

    dp = Datapath.parse(XF32)
    got = stable_from(dp, MfmaParams(**DESIGN_36), key, _far_row(NEG_2_M87, TWO_M86))
    assert int(got[0]) == want


def test_design_36_is_named_open_from_399(tmp_path):
    """The ladder on the design: F named open from 399 (the smallest product's depth
    below 2^127), validated, and the judge finds the range true on its rows."""
    dev = write_device(tmp_path / "d36.toml", "MI300X", DESIGN_36)
    v, res = judge(dev, Datapath.parse(XF32))
    assert res.finding("mfma").values["open"] == {"window": (399, None), "block": (8, None)}
    assert v.kind == "open" and res.validated and not v.untrue_ranges, v.text()
