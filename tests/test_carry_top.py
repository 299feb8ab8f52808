"""The accumulator's top: a sum that needs more than ``carry_bits`` integer
bits wraps, saturates or normalizes. Words worked out by hand on bf16 -> f32."""

import numpy as np
import pytest

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, ParamError, fused_dot

BF16 = Datapath("mma", "bf16", "bf16", "bf16", "f32", 8)
ONE = 0x3F80  # bf16 1.0
TWO = 0x4000  # bf16 2.0


def words(p, a_lanes, b_lanes):
    cases = Cases(np.array([a_lanes], np.uint32), np.array([b_lanes], np.uint32),
                  np.zeros(1, np.uint32))
    plain = fused_dot(BF16, cases, p, fast=False)
    assert np.array_equal(plain, fused_dot(BF16, cases, p, fast=True))
    return int(plain[0])


# eight products 1.0 * 1.0 anchor at 2^0 and sum to 8 = 0b1000: 3 carry bits
# hold magnitudes up to 8 - 2^-F only.
EIGHT_ONES = ([ONE] * 8, [ONE] * 8)


def test_no_limit_and_enough_bits_give_eight():
    assert words(EngineParams(block_size=8), *EIGHT_ONES) == 0x41000000  # 8.0
    assert words(EngineParams(block_size=8, carry_bits=4), *EIGHT_ONES) == 0x41000000


def test_wrap_drops_the_top_bit_and_flips_the_sign():
    # 8 in a signed 25 + 3 + 1 bit integer is -8
    assert words(EngineParams(block_size=8, carry_bits=3), *EIGHT_ONES) == 0xC1000000


def test_saturate_clamps_to_the_largest_magnitude():
    # 8 - 2^-25, RZ into f32: 7.99999952 = 0x40FFFFFF
    p = EngineParams(block_size=8, carry_bits=3, carry_top="saturate")
    assert words(p, *EIGHT_ONES) == 0x40FFFFFF


def test_normalize_moves_the_anchor_up():
    # 7 ones and a 2^-25: 7 + 2^-25 fits 3 carry bits (F=25), 8 ones + 2^-25 does not:
    # normalizing shifts the 2^-25 out, and 8.0 comes back exact
    tiny = 0x3300  # bf16 2^-25
    p = EngineParams(block_size=8, carry_bits=3, carry_top="normalize", output_rounding="rne")
    assert words(p, *EIGHT_ONES) == 0x41000000
    # with a wrap the same sum is -8
    assert words(p.replace(carry_top="wrap"), *EIGHT_ONES) == 0xC1000000
    # 7 lanes 1.0 and 2^-25 (under 3 carry bits) keep the small term: RZ gives 7.0, the
    # sum 7 + 2^-25 rounds to 7.0 either way; 2.0 * 2.0 * ... pushes past the bits:
    a = [TWO] * 4 + [ONE] * 4
    b = [TWO] * 4 + [tiny] + [ONE] * 3
    # products 4,4,4,4 at anchor 2^2, 2^-25 cut away there (F=25 below 2^2), 1,1,1:
    # sum 19 needs 5 bits above 2^0 but the anchor is 2^2: 19/4 = 4.75 < 8, no top reached
    assert words(p, a, b) == 0x41980000  # 19.0


@pytest.mark.parametrize("top", ["wrap", "saturate", "normalize"])
def test_an_accumulator_of_64_bits_or_more_holds_every_sum(top):
    # F = 36 beside 59 carry bits is a 96-bit accumulator: eight ones (8.0,
    # 2^39 units of 2^-36) are far inside it, whatever the top; an int64 shift
    # by 95 wrapped at 2^31 units before (the wide scan of seed 44, design 2)
    p = EngineParams(block_size=8, window_bits=36, carry_bits=59, carry_top=top)
    assert words(p, *EIGHT_ONES) == 0x41000000
    # 63 bits (F = 36, 26 carry bits) is still a limit: 2^27 ones would pass
    # it, eight do not
    assert words(p.replace(carry_bits=26), *EIGHT_ONES) == 0x41000000


def test_unknown_top_is_refused():
    with pytest.raises(ParamError):
        EngineParams(carry_top="clip").check()
