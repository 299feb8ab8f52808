"""The ladder on accumulators narrower than the output: a normalizing (or
saturating) top at c carry bits holds at most F + c significant bits, fewer
than an f32 D keeps, so in the normal range the output rounding never acts
and the sums read like an RZ output keeping F + c - 1 fraction bits. The
ladder must then name the rounding and the kept width undetermined with
that reason, measure the carry bits, and settle the rounding, the kept
width and the floor where subnormal results or a saturated overflow show
them (profiles from sweeps of random hidden-style profiles)."""

import pytest
from ladder_helpers import d_frac, recovered
from test_ladder_carry import BASE, write

NORMALIZE = {"carry_top": "normalize"}

# name: (family, A/B format, D, profile, keys the ladder must find, keys it must leave open)
PROFILES = {
    # f16 products never reach an f32 subnormal: the rounding cannot show at all
    "mma-f16-f14-c3-rna": ("mma", "f16", "f32",
                           dict(NORMALIZE, window_bits=14, zero_floor=-143, input_conversion="rne",
                                output_rounding="rna", carry_bits=3),
                           {}, ("output_rounding", "output_frac_bits")),
    "tcgen05-f16-f16-c5-rna": ("tcgen05", "f16", "f32",
                               dict(NORMALIZE, window_bits=16, block_size=32, zero_floor=-118,
                                    output_rounding="rna", carry_bits=5),
                               {}, ("output_rounding", "output_frac_bits")),
    # tf32 and bf16: subnormal results below the window's last bit show the rounding
    # (or, as here, only the kept width: the ladder's validation cases, with every
    # reading of the open rounding and carry bits, fit the output's own 23 bits only)
    "mma-tf32-f14-c3-rne-k-reversed": ("mma", "tf32", "f32",
                                       dict(NORMALIZE, window_bits=14, block_size=4,
                                            zero_floor=-135, output_rounding="rne",
                                            zero_sign="ieee", carry_bits=3,
                                            k_order=list(range(8))[::-1]),
                                       {"zero_floor": -135, "zero_sign": "ieee",
                                        "output_frac_bits": None},
                                       ("output_rounding",)),
    "mma-tf32-f14-c3-keep17-saturate": ("mma", "tf32", "f32",
                                        dict(NORMALIZE, window_bits=14, block_size=16,
                                             zero_floor=-131, input_conversion="rne",
                                             output_rounding="rne", zero_sign="ieee",
                                             carry_bits=3, overflow="saturate",
                                             output_frac_bits=17),
                                        {"output_rounding": "rne", "output_frac_bits": 17,
                                         "zero_floor": -131}, ()),
    "tcgen05-tf32-f19-c3-rne": ("tcgen05", "tf32", "f32",
                                dict(NORMALIZE, window_bits=19, block_size=16, zero_floor=-116,
                                     output_rounding="rne", zero_sign="ieee", carry_bits=3),
                                {"zero_floor": -116}, ("output_rounding", "output_frac_bits")),
    "tcgen05-tf32-f14-c2-rna": ("tcgen05", "tf32", "f32",
                                dict(NORMALIZE, window_bits=14, block_size=16, zero_floor=-143,
                                     output_rounding="rna", zero_sign="ieee", carry_bits=2),
                                {"output_rounding": "rna", "zero_floor": -143}, ()),
    "wgmma-bf16-f12-c3-rna-saturate": ("wgmma", "bf16", "f32",
                                       dict(NORMALIZE, window_bits=12, zero_floor=-140,
                                            output_rounding="rna", zero_sign="ieee",
                                            nan=0x7FC00000, carry_bits=3, overflow="saturate"),
                                       {"output_rounding": "rna", "zero_floor": -140}, ()),
    # a saturating top: the sums never need the output's bits either
    "tcgen05-tf32-f16-c2-saturate-keep19": ("tcgen05", "tf32", "f32",
                                            dict(window_bits=16, block_size=4, zero_floor=-143,
                                                 output_rounding="rna", carry_bits=2,
                                                 carry_top="saturate", output_frac_bits=19),
                                            {"output_rounding": "rna", "output_frac_bits": 19,
                                             "zero_floor": -143}, ()),
    # F + c = 24: the normal range reads as RZ at the output's width; subnormal
    # results below the window's last bit show the rounding and the top
    "mma-tf32-f21-c3-rne": ("mma", "tf32", "f32",
                            dict(NORMALIZE, window_bits=21, zero_floor=-140,
                                 output_rounding="rne", carry_bits=3),
                            {"output_rounding": "rne", "zero_floor": -140}, ()),
    "tcgen05-bf16-f20-c4-rna": ("tcgen05", "bf16", "f32",
                                dict(NORMALIZE, window_bits=20, block_size=16, zero_floor=-145,
                                     output_rounding="rna", zero_sign="ieee", carry_bits=4),
                                {"output_rounding": "rna", "zero_floor": -145}, ()),
    # RZ at the output's own width with F = 23 stays found: a top at one carry
    # bit (F + 1 = 24) would give the same words, and the plainer reading is
    # kept (the measured windows look like this)
    "mma-f16-f23-c5-rz-blocks-of-2": ("mma", "f16", "f32",
                                      dict(NORMALIZE, window_bits=23, block_size=2,
                                           zero_floor=-142, zero_sign="ieee", carry_bits=5,
                                           overflow="saturate", k_order=list(range(16))[::-1]),
                                      {"output_rounding": "rz", "zero_sign": "ieee"},
                                      ("carry_bits",)),
    # an f16 D keeping 5 fraction bits: no visible output bit reaches below
    # 2^-19, but with IEEE zeros the sign of a tiny sum of subnormal-input
    # products (-0 kept, +0 cut) shows the floor; with +0 zeros nothing does
    "tcgen05-f16-f16-f13-c2-saturate-keep5-ieee": ("tcgen05", "f16", "f16",
                                                   dict(window_bits=13, block_size=2,
                                                        zero_floor=-21, input_conversion="rne",
                                                        zero_sign="ieee", nan=0x7E00,
                                                        output_frac_bits=5, carry_bits=2,
                                                        carry_top="saturate"),
                                                   {"zero_floor": -21, "zero_sign": "ieee",
                                                    "output_frac_bits": 5}, ()),
    "tcgen05-f16-f16-f13-c2-saturate-keep5": ("tcgen05", "f16", "f16",
                                              dict(window_bits=13, block_size=2, zero_floor=-21,
                                                   nan=0x7E00, output_frac_bits=5, carry_bits=2,
                                                   carry_top="saturate"),
                                              {"zero_sign": "positive", "output_frac_bits": 5},
                                              ("zero_floor",)),
    # RZ at the output's width with F + 5 = 24: a normalizing top at 5 carry
    # bits under RNE or RNA gives the same words; with the floor's window
    # ending above the output's last step no subnormal result tells them apart
    "wgmma-bf16-f19-rz-unbounded": ("wgmma", "bf16", "f32",
                                    dict(window_bits=19, block_size=32, zero_floor=-129,
                                         input_conversion="rne"),
                                    {"zero_floor": -129}, ("carry_bits", "output_rounding")),
    # the same reading with a nearest rounding and that top: subnormal results
    # below the window's last bit settle the rounding and the top, or nothing
    # does and both stay open
    "mma-bf16-f20-c4-normalize-rna-floor-140": ("mma", "bf16", "f32",
                                                dict(NORMALIZE, window_bits=20, zero_floor=-140,
                                                     output_rounding="rna", carry_bits=4),
                                                {"output_rounding": "rna", "zero_floor": -140},
                                                ()),
    "mma-bf16-f20-c4-normalize-rne-floor-114": ("mma", "bf16", "f32",
                                                dict(NORMALIZE, window_bits=20, zero_floor=-114,
                                                     output_rounding="rne", zero_sign="ieee",
                                                     input_conversion="rne", nan=0x7FC00000,
                                                     carry_bits=4, overflow="saturate"),
                                                {"zero_floor": -114},
                                                ("carry_bits", "output_rounding")),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_narrow_accumulators_are_recovered_or_named(tmp_path, name):
    family, fmt, d_type, extra, found, left_open = PROFILES[name]
    dev = write(tmp_path, name, {**BASE, **extra}, families=[family])
    dp = dev.datapath(family, fmt, d_type)
    result, truth, fp = recovered(dev, dp)
    if "output_rounding" in left_open and "carry_bits" not in left_open:
        # the normalizing top is the reading the model takes, open with the rounding
        assert fp.carry_bits is None and "open with the output rounding" in \
            fp.undetermined["carry_bits"]
        assert (fp.assumed["carry_bits"], fp.carry_top) == (truth.carry_bits, truth.carry_top)
    elif "carry_bits" not in left_open:
        assert (fp.carry_bits, fp.carry_top) == (truth.carry_bits, truth.carry_top)
    for key, want in found.items():
        assert getattr(fp, key) == want and key not in fp.undetermined, \
            (key, fp.undetermined.get(key))
    for key in left_open:
        assert getattr(fp, key) is None and key in fp.undetermined
    if "output_rounding" in left_open:  # the reason, not "RZ with fewer kept bits"
        why = fp.undetermined["output_rounding"]
        bits = extra.get("carry_bits", d_frac(dp) + 1 - extra["window_bits"])
        assert f"normalizing top at {bits} carry bits" in why
        assert "never acts" in why
    if fmt != "f16":
        assert fp.overflow == truth.overflow
    assert result.validation.cases == 10_000 and result.validation.mismatches == 0, \
        result.validation.examples[:2]
