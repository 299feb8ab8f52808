"""The ladder on hidden-style profiles that random sweeps caught (each one a
step that failed or a key left open where the device showed it), every one
recovered: no failed step, every key found or open only where it cannot
show, the carry bits and top, and 0 of 10,000 validation mismatches.

- K = 32 equal products wrap or saturate an accumulator with 2 carry bits,
  so the slice step's fills must take C above the products' sum;
- an f16 D keeping 4 fraction bits cannot count to K + 1 (the layout
  step's C = n references stop at the first count that rounds);
- a window narrower than the output (F = 21 into f32) cuts an early
  block's rounding off in the next block: ties must be made in the last
  block, whose rounding is the output's;
- under RNA one more bit shows than the output keeps, so the block order's
  tie (C half an output ulp) sits one bit higher;
- where blocks chain through an output keeping fewer bits, the carry
  step's largest C must fit them (else it rounds up to the next power of
  two before the last block and the top never shows);
- an f32 D keeping 10 fraction bits steps by 2^-136 in its subnormal
  range, not 2^-149: the zero step's probes sit around that step;
- e2m1 products under an f16 C: C at its smallest survives +-2^3, the
  home products, for a 27-bit window; the largest products, +-2^4, anchor
  it one bit higher, where C's last step is cut;
- a saturated overflow under a 2-bit wrapping top and an open kept width
  fits only where the specials step tries both together (the largest
  finite word keeps 19 fraction bits);
- e2m1 products under an f16 C with a 29-bit window: no term reaches a bit
  28 bits below its anchor, so the window is "at least 28" and the model
  takes 28 (every wider window gives the same words);
- a 2-bit wrapping top makes exact zeros of all-negative sums, -0 under
  IEEE zeros: before the zero step measures the sign, a zero's sign is no
  evidence against the rounding and carry steps' candidates;
- a saturating top at 3 or 4 carry bits shows the zero floor: tiny
  products on every lane pass the top of an accumulator anchored on them
  but not of one the floor holds higher;
- e2m1 products in blocks of 8 consumed in a random K order: the adjacent
  pairs straddle blocks, and once the pairs that share one move to the
  largest products, the sweep there must take those pairs (not the
  adjacent ones again, which gave F = 11);
- an f16 -> f32 datapath with a 17-bit window, 5 carry bits and a
  normalizing top, whose output keeps 19 fraction bits: the rounding step
  leaves 19 to 23 open, and 3 carry bits under a 23-bit output fit as well
  as 5 under 19, so the carry bits are named undetermined (the model takes
  3 with the width it assumes);
- e2m1 products into an f16 D keeping 5 fraction bits under a 27-bit
  window: C alone shows nothing below 2^-19, so the internal step reads
  the window from a tie that C's last bit breaks (RNE) or from a borrow,
  2^(E-1) minus C's last bit (RZ: e2m3 into an f16 D keeping 6 bits under
  a 25-bit window too), and the block step's same-block test takes the
  deepest C the output shows alone;
- e4m3 products into an f16 D in two blocks of 16 with a 21-bit window
  and a top normalizing past 2 carry bits: no product reaches the
  window's last bit and C cannot hold both it and a bit near the rounding
  position, so the carry step puts that bit in one more lane and the last
  bit in C (which passes the first block exactly);
- e2m1 products into an f16 D keeping 4 fraction bits under a 23-bit
  window and a top normalizing past 4 carry bits: 0 to 4 carry bits give
  the same words on every carry case (the dropped bits lie far below the
  output's rounding), so the key is open and the model takes the widest
  (it took 0, and validation found 1 of 10,000);
- e2m1 products in four blocks of 8 (K reversed) under a 14-bit window,
  RNE keeping 6 bits, a top normalizing past 2 carry bits: C with a bit
  near the rounding position and the window's last bit is rounded to 6
  bits by the first block, so those probes run on the first block's lanes
  too, where C meets them unrounded."""

import pytest
from ladder_helpers import recovered
from test_ladder_carry import BASE, write

from tcprobe.probes.layout import _count_table
from tcprobe.probes.slice import _c_above_products

F16_D = {"nan": 0x7FFF}

# name: (family, A/B format, D, profile, keys the ladder must find)
PROFILES = {
    "tcgen05-e5m2-c2-wrap-k32": ("tcgen05", "e5m2", "f32",
                                 dict(window_bits=26, block_size=16, zero_floor=-126,
                                      carry_bits=2, carry_top="wrap", overflow="saturate"),
                                 {}),
    "wgmma-e4m3-f16d-c2-wrap-reversed": ("wgmma", "e4m3", "f16",
                                         dict(F16_D, window_bits=22, block_size=32,
                                              zero_floor=-26, nan=0x7E00, zero_sign="ieee",
                                              carry_bits=2, carry_top="wrap",
                                              overflow="saturate", k_order=list(range(32))[::-1]),
                                         {"zero_sign": "ieee"}),
    "tcgen05-e4m3-f16d-keep4-blocks-of-2": ("tcgen05", "e4m3", "f16",
                                            dict(F16_D, window_bits=24, block_size=2,
                                                 zero_floor=-20, output_rounding="rne",
                                                 output_frac_bits=4, carry_bits=5),
                                            {"output_rounding": "rne", "output_frac_bits": 4}),
    "mma-e5m2-f16d-c4-saturate-floor-22": ("mma", "e5m2", "f16",
                                           dict(F16_D, window_bits=26, zero_floor=-22,
                                                zero_sign="ieee", carry_bits=4,
                                                carry_top="saturate"),
                                           {"zero_floor": -22, "zero_sign": "ieee"}),
    "tcgen05-e5m2-f16d-c3-saturate-keep8-floor-21": ("tcgen05", "e5m2", "f16",
                                                     dict(window_bits=22, block_size=4,
                                                          zero_floor=-21, nan=0x7E00,
                                                          output_frac_bits=8, zero_sign="ieee",
                                                          carry_bits=3, carry_top="saturate",
                                                          k_order=list(range(32))[::-1]),
                                                     {"zero_floor": -21,
                                                      "output_frac_bits": 8}),
    "mma-bf16-f21-blocks-of-4-rna": ("mma", "bf16", "f32",
                                     dict(window_bits=21, block_size=4, zero_floor=-127,
                                          output_rounding="rna", zero_sign="ieee",
                                          carry_bits=5),
                                     {"output_rounding": "rna", "zero_floor": -127}),
    "mma-e4m3-f28-blocks-of-4-rna-keep8-reversed": ("mma", "e4m3", "f32",
                                                    dict(window_bits=28, block_size=4,
                                                         zero_floor=-118, output_rounding="rna",
                                                         output_frac_bits=8, zero_sign="ieee",
                                                         k_order=list(range(32))[::-1]),
                                                    {"output_rounding": "rna",
                                                     "output_frac_bits": 8, "block_size": 4}),
    "mma-tf32-blocks-of-2-c3-saturate-keep11-rne": ("mma", "tf32", "f32",
                                                    dict(block_size=2, zero_floor=-130,
                                                         output_rounding="rne",
                                                         output_frac_bits=11, carry_bits=3,
                                                         carry_top="saturate"),
                                                    {"output_rounding": "rne",
                                                     "output_frac_bits": 11}),
    "mma-tf32-f16-keep10-floor-137-rna": ("mma", "tf32", "f32",
                                          dict(window_bits=16, block_size=32, zero_floor=-137,
                                               output_rounding="rna", output_frac_bits=10,
                                               carry_bits=3, k_order=list(range(8))[::-1]),
                                          {"zero_floor": -137, "output_frac_bits": 10}),
    "tcgen05-e2m1-f16d-f27-c2-wrap-pairs": ("tcgen05", "e2m1", "f16",
                                            dict(window_bits=27, block_size=32, zero_floor=-18,
                                                 input_conversion="rne", zero_sign="ieee",
                                                 nan=0x7FFF, carry_bits=2,
                                                 k_order=[j ^ 1 for j in range(32)]),
                                            {"window_bits": 27, "zero_sign": "ieee"}),
    "wgmma-tf32-f14-c2-wrap-keep19-saturate": ("wgmma", "tf32", "f32",
                                               dict(window_bits=14, block_size=32,
                                                    zero_floor=-119, input_conversion="rne",
                                                    output_rounding="rna", output_frac_bits=19,
                                                    zero_sign="ieee", nan=0x7FC00000,
                                                    carry_bits=2, overflow="saturate"),
                                               {"overflow": "saturate", "output_frac_bits": 19}),
    "tcgen05-e2m1-f16d-f29-blocks-of-2-rna": ("tcgen05", "e2m1", "f16",
                                              dict(window_bits=29, block_size=2, zero_floor=-19,
                                                   input_conversion="rne",
                                                   output_rounding="rna", nan=0x7E00,
                                                   carry_bits=5, carry_top="normalize",
                                                   overflow="saturate"),
                                              {"output_rounding": "rna", "block_size": 2}),
    "tcgen05-e2m1-f18-keep16-c2-wrap-ieee": ("tcgen05", "e2m1", "f32",
                                             dict(window_bits=18, block_size=16,
                                                  zero_floor=-129, input_conversion="rne",
                                                  output_rounding="rne", nan=0x7FC00000,
                                                  output_frac_bits=16, zero_sign="ieee",
                                                  carry_bits=2, overflow="saturate"),
                                             {"window_bits": 18, "output_rounding": "rne",
                                              "output_frac_bits": 16, "zero_sign": "ieee"}),
    "tcgen05-e2m1-f16d-f29-blocks-of-8-random-order": (
        "tcgen05", "e2m1", "f16",
        dict(F16_D, window_bits=29, block_size=8, zero_floor=-25,
             k_order=[3, 9, 21, 17, 19, 7, 5, 1, 8, 30, 2, 4, 0, 15, 10, 25, 22, 23, 6, 26, 12,
                      18, 27, 14, 16, 28, 24, 20, 31, 29, 11, 13]),
        {"block_size": 8, "output_rounding": "rz"}),
    "tcgen05-f16-f17-keep19-c5-normalize-random-order": (
        "tcgen05", "f16", "f32",
        dict(window_bits=17, block_size=8, zero_floor=-137, output_frac_bits=19,
             zero_sign="ieee", nan=0x7FC00000, carry_bits=5, carry_top="normalize",
             k_order=[3, 6, 8, 13, 0, 14, 2, 15, 12, 10, 9, 7, 11, 1, 5, 4]),
        {"window_bits": 17, "block_size": 8}),
    **{f"tcgen05-e2m1-f16d-f27-keep5-{rnd}-pairs": (
        "tcgen05", "e2m1", "f16",
        dict(F16_D, window_bits=27, block_size=16, zero_floor=-15, input_conversion="rne",
             output_rounding=rnd, output_frac_bits=5, zero_sign="ieee", carry_bits=5,
             carry_top="saturate", k_order=[j ^ 1 for j in range(32)]),
        {"window_bits": 27, "block_size": 16, "output_rounding": rnd, "output_frac_bits": 5})
       for rnd in ("rne", "rz")},
    "tcgen05-e2m3-f16d-f25-keep6-rz-c2-saturate": (
        "tcgen05", "e2m3", "f16",
        dict(F16_D, window_bits=25, block_size=8, zero_floor=-26, input_conversion="rne",
             output_frac_bits=6, zero_sign="ieee", carry_bits=2, carry_top="saturate",
             overflow="saturate"),
        {"window_bits": 25, "output_rounding": "rz", "output_frac_bits": 6}),
    "tcgen05-e2m1-f16d-f23-keep4-c4-normalize": (
        "tcgen05", "e2m1", "f16",
        dict(F16_D, window_bits=23, block_size=32, zero_floor=-17, output_rounding="rne",
             nan=0x7E00, output_frac_bits=4, zero_sign="ieee", carry_bits=4,
             carry_top="normalize", overflow="saturate"),
        {"window_bits": 23, "output_rounding": "rne", "output_frac_bits": 4}),
    "tcgen05-e2m1-f16d-f14-keep6-c2-normalize-reversed": (
        "tcgen05", "e2m1", "f16",
        dict(F16_D, window_bits=14, block_size=8, zero_floor=-17, input_conversion="rne",
             output_rounding="rne", nan=0x7E00, output_frac_bits=6, carry_bits=2,
             carry_top="normalize", overflow="saturate", k_order=list(range(32))[::-1]),
        {"window_bits": 14, "block_size": 8, "output_rounding": "rne", "output_frac_bits": 6}),
    "tcgen05-e4m3-f16d-f21-c2-normalize-blocks-of-16": (
        "tcgen05", "e4m3", "f16",
        dict(F16_D, window_bits=21, block_size=16, zero_floor=-25, output_rounding="rne",
             carry_bits=2, carry_top="normalize", overflow="saturate"),
        {"window_bits": 21, "block_size": 16, "output_rounding": "rne"}),
}

# blocks of 2 products never need 5 carry bits, nor 4 products and C 5 (or,
# unbounded, 4 of e4m3 more than 4), nor 8 e2m1 products under an unbounded
# accumulator more than 5: the top cannot show; where several widths fit the
# carry cases alike the key is open; and where the output's width
# is open (19 to 23 bits) a normalizing top at 3 bits under a 23-bit output and
# 5 under a 19-bit one give the same words
CARRY_HIDDEN = {"tcgen05-e4m3-f16d-keep4-blocks-of-2", "mma-bf16-f21-blocks-of-4-rna",
                "mma-e4m3-f28-blocks-of-4-rna-keep8-reversed",
                "tcgen05-e2m1-f16d-f29-blocks-of-2-rna",
                "tcgen05-e2m1-f16d-f29-blocks-of-8-random-order",
                "tcgen05-f16-f17-keep19-c5-normalize-random-order",
                "tcgen05-e2m1-f16d-f23-keep4-c4-normalize"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_swept_profiles_are_recovered(tmp_path, name):
    family, fmt, d_type, extra, found = PROFILES[name]
    dev = write(tmp_path, name, {**BASE, **extra}, families=[family])
    dp = dev.datapath(family, fmt, d_type)
    result, truth, fp = recovered(dev, dp)
    if name in CARRY_HIDDEN:
        assert fp.carry_bits is None and "carry_bits" in fp.undetermined
    else:
        assert (fp.carry_bits, fp.carry_top) == (truth.carry_bits, truth.carry_top)
    for key, want in found.items():
        assert getattr(fp, key) == want, (key, fp.undetermined.get(key))
    assert fp.overflow == truth.overflow or "overflow" in fp.undetermined
    assert result.validation.cases == 10_000 and result.validation.mismatches == 0, \
        result.validation.examples[:2]


def test_count_table_stops_at_the_first_shared_word():
    # f16 words of 0..5 with an output that rounds 4 and 5 to one word
    words = [0x0000, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4400]
    assert _count_table(words) == {0x0000: 0, 0x3C00: 1, 0x4000: 2, 0x4200: 3}
    assert _count_table([0, 1, 2]) == {0: 0, 1: 1, 2: 2}


def test_c_is_scaled_above_the_products_sum():
    # K = 32 products 1 * 1 and C = 3 * 2^0: C must reach 3 * 2^4 = 48 >= 32
    assert _c_above_products(32, 1, 0, 1, 0, 3, 0) == 4
    # products 3/2 * 2 = 3, K = 16: 48 <= 1 * 2^6 = 64 (from C = 2^-2)
    assert _c_above_products(16, 3, -1, 1, 1, 1, -2) == 6
    # already above: unchanged
    assert _c_above_products(2, 1, 0, 1, 0, 7, 3) == 3
