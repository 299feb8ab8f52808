"""Directed tests: each tcgen05 rule pinned by cases whose words follow from
the stated mechanism (../shared/seeds/tcgen05-blog.txt,
../shared/notes/tcgen05-published-parameters.md), worked out by hand in the
comments. Where a rule is a named parameter, the same case under the other
choice gives the other word, so the test shows the rule is live."""

import numpy as np
import pytest

from tcprobe.models import sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import from_container
from tcprobe.models.model import ModelError
from tcprobe.models.tcgen05 import B200_TCGEN05, model_for
from tcprobe.models.tcgen05_scaled import BlockScaledModel

TF32 = "tcgen05.tf32.f32.k8"
ONE = 0x3F800000


def word(dp_id, a, b, c, sa=None, sb=None, active=None, profile=B200_TCGEN05):
    """The model's word for one case; A/B padded with +0 to K."""
    dp = Datapath.parse(dp_id)
    pad = lambda v: list(v) + [0] * (dp.k - len(v))  # noqa: E731
    cases = Cases([pad(a)], [pad(b)], [c],
                  None if sa is None else [sa], None if sb is None else [sb],
                  None if active is None else [active])
    return int(profile.model(dp).evaluate(cases)[0])


def scaled_word(dp_id, a, b, c, sa, sb, active=None, **changes):
    """A block-scaled word under the B200 parameters with ``changes``."""
    dp = Datapath.parse(dp_id)
    p = B200_TCGEN05.scaled_params(dp).replace(**changes)
    pad = lambda v: list(v) + [0] * (dp.k - len(v))  # noqa: E731
    cases = Cases([pad(a)], [pad(b)], [c], [sa], [sb], None if active is None else [active])
    return int(BlockScaledModel("variant", dp, "", p).evaluate(cases)[0])


# -- the window: visible and internal precision, truncation ---------------

def test_one_plus_2_pow_23_survives_and_2_pow_24_vanishes():
    # C = 1 (raw 0), product 2**-23: q = -25, units 2**25 + 4 -> 1 + 2**-23
    assert word(TF32, [0x34000000], [ONE], ONE) == 0x3F800001
    # product 2**-24: units 2**25 + 2; the f32 keeps 24 bits, truncated -> 1.0
    assert word(TF32, [0x33800000], [ONE], ONE) == 0x3F800000


def test_cancellation_keeps_25_fraction_bits():
    # 1*1 + (-1)*1 + C, q = 0 - 25: C = 2**-25 is one unit and survives
    assert word(TF32, [ONE, 0xBF800000], [ONE, ONE], 0x33000000) == 0x33000000
    # C = 2**-26 is half a unit, cut to 0: the exact zero is +0
    assert word(TF32, [ONE, 0xBF800000], [ONE, ONE], 0x32800000) == 0x00000000


@pytest.mark.parametrize("a0, note", [(0x33000000, "0.25 ulp"), (0x33800000, "0.5 ulp"),
                                      (0x33C00000, "0.75 ulp")])
def test_fractional_ulps_truncate(a0, note):
    # 1 + 1, 2 or 3 units of 2**-25: round to nearest would give 1 + 2**-23 at 0.75 ulp
    assert word(TF32, [a0], [ONE], ONE) == 0x3F800000, note


def test_negative_sum_truncates_its_magnitude():
    # -1 + 3 * 2**-25: magnitude 1 - 3 * 2**-25, 24 bits kept toward zero: 1 - 2**-23
    assert word(TF32, [0x33C00000], [ONE], 0xBF800000) == 0xBF7FFFFE


def test_every_term_is_cut_toward_zero_not_floored():
    # 1 - 2**-26: the product is -0.5 unit, cut to 0 (a floor would take -1 unit
    # and give 1 - 2**-25 -> truncated to 1 - 2**-24 = 0x3f7fffff)
    assert word(TF32, [0xB2800000], [ONE], ONE) == 0x3F800000


# -- input truncation and special values ------------------------------------

def test_tf32_inputs_are_truncated_to_the_container():
    assert word(TF32, [0x3F801FFF], [ONE], 0) == 0x3F800000  # bits 0-12 dropped
    assert word(TF32, [0x3F802000], [ONE], 0) == 0x3F802000  # bit 13 kept


def test_nan_payload_in_dropped_bits_arrives_as_inf():
    assert word(TF32, [0x7F800001], [ONE], 0) == 0x7F800000  # tf32: NaN only below bit 13
    assert word(TF32, [0xFF800FFF], [ONE], 0) == 0xFF800000
    assert word(TF32, [0x7F802000], [ONE], 0) == 0x7FFFFFFF  # payload kept: NaN
    bf16 = from_container(np.array([0x7F800001, 0x7F810000], np.uint32), "bf16", "truncate")
    assert list(bf16) == [0x7F80, 0x7F81]
    bf = "tcgen05.f16.bf16.f32.k16"
    assert word(bf, [int(bf16[0])], [0x3F80], 0) == 0x7F800000
    assert word(bf, [int(bf16[1])], [0x3F80], 0) == 0x7FFFFFFF


def test_specials():
    inf, ninf = 0x7F800000, 0xFF800000
    assert word(TF32, [inf], [0], 0) == 0x7FFFFFFF  # Inf * 0
    assert word(TF32, [inf], [0x80000000], 0) == 0x7FFFFFFF  # Inf * -0
    assert word(TF32, [inf, ninf], [ONE, ONE], 0) == 0x7FFFFFFF  # +Inf + -Inf
    assert word(TF32, [inf], [ONE], ninf) == 0x7FFFFFFF  # +Inf + C = -Inf
    assert word(TF32, [inf], [0xBF800000], ONE) == ninf  # Inf * -1 + finite
    assert word(TF32, [], [], inf) == inf
    assert word(TF32, [0x7FC00000], [ONE], 0) == 0x7FFFFFFF  # canonical NaN
    assert word(TF32, [0xFFC00001], [ONE], 0) == 0x7FFFFFFF
    assert word(TF32, [ONE], [ONE], 0xFFFFFFFF) == 0x7FFFFFFF  # NaN C


def test_exact_zero_is_positive():
    assert word(TF32, [ONE], [ONE], 0xBF800000) == 0  # 1 - 1
    assert word(TF32, [0x80000000], [ONE], 0x80000000) == 0  # -0 * 1 + -0
    assert word(TF32, [0x80000000], [0x80000000], 0x80000000) == 0


def test_subnormal_results_are_kept():
    # 2**-70 * 2**-70 = 2**-140 = 512 * 2**-149
    assert word(TF32, [0x1C800000], [0x1C800000], 0) == 0x00000200


def test_zero_floor_f32_is_a_live_parameter():
    # C = +0, products 2**-140 and -2**-160. Floor -133: q = -158, the second
    # term is a quarter unit, cut -> 2**-140 (0x200). No floor: q = -165,
    # 2**-140 - 2**-160 -> truncated to 511 * 2**-149 (0x1ff). Unmeasured:
    # this is the probe that settles it.
    a, b = [0x1C800000, 0x97800000], [0x1C800000, 0x17800000]
    assert word(TF32, a, b, 0) == 0x00000200
    assert word(TF32, a, b, 0, profile=B200_TCGEN05.derive("x", zero_floor_f32=None)) == 0x1FF


def test_overflow_gives_inf():
    # 2**127 * 4 = 2**129: past f32 -> Inf (frozen B200 vector tf32-random-0 is
    # -Inf from finite inputs); saturate would give 0x7f7fffff
    assert word(TF32, [0x7F000000], [0x40800000], 0) == 0x7F800000
    assert word(TF32, [0xFF000000], [0x40800000], 0) == 0xFF800000
    sat = B200_TCGEN05.derive("x", overflow="saturate")
    assert word(TF32, [0x7F000000], [0x40800000], 0, profile=sat) == 0x7F7FFFFF


# -- f16 D (round to nearest even into f16) ------------------------------

F16 = "tcgen05.f16.f16.k16"


def test_f16_output_rounds_to_nearest_even():
    one = 0x3C00
    assert word(F16, [0x1000], [one], one) == 0x3C00  # 1 + 2**-11: tie -> even 1.0
    assert word(F16, [0x1600], [one], one) == 0x3C02  # 1 + 3 * 2**-11: tie -> even
    # 1 + 2**-11 + 2**-20: above the tie (2**-20 is inside the 25-bit window)
    assert word(F16, [0x1000, 0x1400], [one, 0x1400], one) == 0x3C01
    # 1 + 2**-11 + 2**-26: 2**-26 is below q = -25, cut, so the tie stays
    assert word(F16, [0x1000, 0x0800], [one, 0x0800], one) == 0x3C00


def test_f16_output_specials():
    assert word(F16, [0x7E00], [0x3C00], 0) == 0x7FFF
    assert word(F16, [0x7C00], [0x3C00], 0) == 0x7C00
    assert word(F16, [0xFC00], [0x3C00], 0) == 0xFC00
    assert word(F16, [0x7C00], [0], 0) == 0x7FFF


def test_pr_vector_f16_zero_result_is_positive():
    # (1 + 2**-10)2**-5 * (1 - 2**-10)2**-5 - 2**-10 = -2**-30 -> rounds to zero: +0 (B200, B300)
    assert word(F16, [0x2801], [0x27FE], 0x9400) == 0x0000


def test_pr_vector_f16_zero_accumulator_anchors_at_2_pow_21():
    # 1.5*2**-23 + 2**-25 - 2**-47, C = 0. Anchor 2**-21 (q = -46): the 2**-47
    # term is cut, 3.5 * 2**-24 is a tie, even -> 4 (0x4, B200/B300). With the
    # anchor at the largest product (2**-23, q = -48) the tie breaks down: 0x3.
    a, b = [0x0E00, 0x0800, 0x8001], [0x1000, 0x0C00, 0x0002]
    assert word(F16, a, b, 0) == 0x0004
    assert word(F16, a, b, 0, profile=B200_TCGEN05.derive("x", zero_floor_f16=None)) == 0x0003


def test_pr_vector_bf16_zero_result_is_positive():
    # ((1 + 2**-7) 2**-75)**2 - 2**-149: q = -151, product 2 units, C -4 -> -2**-150 -> +0
    assert word("tcgen05.f16.bf16.f32.k16", [0x1A01], [0x1A01], 0x80000001) == 0x0


# -- fp8 / fp6 / fp4 decoders and raw-exponent alignment -------------------

def test_seed_e2m1_vector_aligns_on_raw_exponents():
    # e2m1 code 1 = 0.5 (subnormal, raw 0). 0.5*0.5 + C, C = -(0.25 - 2**-26):
    # q = 0 - 25, product 2**23 units, C -(2**23 - 0.5) cut to -(2**23 - 1): 2**-25
    assert word("tcgen05.f8f6f4.e2m1.f32.k32", [1], [1], 0xBE7FFFFF) == 0x33000000


def test_e3m2_subnormals_align_on_raw_exponents():
    # e3m2 code 1 = 2**-4 (subnormal, raw -2): product 2**-8 with raw -4, so
    # q = -29. C = -(2**-8 - 2**-30) = 0xbb7ffffc: units -(2**21 - 0.5) -> cut to
    # -(2**21 - 1); sum 1 unit = 2**-29. A normalized anchor (-8) would give 2**-30.
    assert word("tcgen05.f8f6f4.e3m2.f32.k32", [1], [1], 0xBB7FFFFC) == 0x31000000


def test_small_format_values():
    assert word("tcgen05.f8f6f4.e2m3.f32.k32", [1], [1], 0) == 0x3C800000  # 2**-3 squared
    assert word("tcgen05.f8f6f4.e4m3.f32.k32", [0x78], [0x78], 0) == 0x47800000  # 256 * 256
    assert word("tcgen05.f8f6f4.e4m3.f32.k32", [0x7F], [0x38], 0) == 0x7FFFFFFF  # e4m3 NaN
    assert word("tcgen05.f8f6f4.e5m2.f32.k32", [0x7C], [0x3C], 0) == 0x7F800000  # e5m2 Inf


# -- mixed A/B ---------------------------------------------------------------

def test_mixed_formats_decode_a_and_b_apart():
    assert word("tcgen05.f8f6f4.e4m3xe2m1.f32.k32", [0x38], [0x1], 0) == 0x3F000000  # 1 * 0.5
    assert word("tcgen05.f8f6f4.e2m1xe4m3.f16.k32", [0x1], [0x38], 0) == 0x3800  # f16 0.5
    assert word("tcgen05.f8f6f4.e2m1xe4m3.f16.k32", [0x1], [0x7F], 0) == 0x7FFF  # NaN in B
    # 448 * 448 = 200704 is past f16: Inf
    assert word("tcgen05.f8f6f4.e4m3.f16.k32", [0x7E], [0x7E], 0) == 0x7C00


# -- integer ---------------------------------------------------------------

I8 = "tcgen05.i8.s8.s32.k32"


def test_i8_wraps_or_saturates_once():
    # 32 * (-128)**2 = 524288 on top of 2**31 - 1
    a, b = [0x80] * 32, [0x80] * 32
    assert word(I8, a, b, 0x7FFFFFFF) == 0x8007FFFF
    assert word(I8 + ".sat", a, b, 0x7FFFFFFF) == 0x7FFFFFFF
    # 32 * (-128 * 127) = -520192 below -2**31
    assert word(I8, a, [0x7F] * 32, 0x80000000) == 0x7FF81000
    assert word(I8 + ".sat", a, [0x7F] * 32, 0x80000000) == 0x80000000
    # u8 x s8: +100 then -100 on 2**31 - 16: clamped only after the exact sum
    assert word("tcgen05.i8.u8xs8.s32.k32.sat", [100, 100], [1, 0xFF], 0x7FFFFFF0) == 0x7FFFFFF0
    assert word("tcgen05.i8.u8.s32.k32", [255] * 32, [255] * 32, 0) == 0x1FC020


# -- sparse ------------------------------------------------------------------

def test_sparse_nan_in_a_disabled_lane_does_not_poison():
    dp = Datapath.parse("tcgen05.tf32.f32.k16.sparse")
    active = sparsity.active_positions(dp, [0x44444444])  # the lower of each pair
    a = [ONE if k % 2 == 0 else 0x7FC00000 for k in range(16)]
    b = [ONE if k % 2 == 0 else 0x7F800000 for k in range(16)]
    assert word(dp.id, a, b, 0, active=active) == 0x41000000  # 8.0
    # the same as the dense dot of the eight kept values
    assert word("tcgen05.tf32.f32.k8", [ONE] * 8, [ONE] * 8, 0) == 0x41000000
    upper = sparsity.active_positions(dp, [0xEEEEEEEE])  # the NaN lanes
    assert word(dp.id, a, b, 0, active=upper) == 0x7FFFFFFF


def test_sparse_2of4_and_pairs8():
    f16 = Datapath.parse("tcgen05.f16.f32.k32.sparse")
    act = sparsity.active_positions(f16, [0x99999999])  # positions 1 and 2 of each 4
    a = [0x7C00 if k % 4 in (0, 3) else 0x3C00 for k in range(32)]  # Inf where disabled
    assert word(f16.id, a, [0x3C00] * 32, 0, active=act) == 0x41800000  # 16.0
    nv = Datapath.parse("tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse")
    act = sparsity.active_positions(nv, [0x44444444, 0x44444444])  # first 4 of each 8
    assert act.sum() == 64 and act[:8].tolist() == [True] * 4 + [False] * 4
    got = word(nv.id, [2] * 128, [2] * 128, 0, [0x38] * 4, [0x38] * 4, active=act)
    assert got == 0x42800000  # 64 products of 1.0


# -- block-scaled --------------------------------------------------------------

MX = "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"
NV = "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4"
NVS = "tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse"
MXF4 = "tcgen05.mxf4.e2m1.f32.k64.ue8m0x2"


def test_scales_fold_into_products():
    assert word(MX, [0x38], [0x38], 0, [130], [126]) == 0x40800000  # 1 * 1 * 2**3 * 2**-1
    assert word(MX, [0x38], [0x38], 0, [0xFF], [127]) == 0x7FFFFFFF  # ue8m0 NaN
    assert word(NV, [2], [2], 0, [0x7F, 0x38, 0x38, 0x38], [0x38] * 4) == 0x7FFFFFFF  # ue4m3 NaN
    assert word(NV, [2], [2], 0, [0x40, 0x38, 0x38, 0x38], [0x30] + [0x38] * 3) == 0x3F800000


def test_block_scaled_zero_products_give_c_and_plus_zero():
    assert word(MX, [0], [0x38], 0x80000000, [127], [127]) == 0  # zero_c: +0 (unmeasured)
    assert word(MX, [0], [0x38], 0x12345678, [127], [127]) == 0x12345678
    assert scaled_word(MX, [0], [0x38], 0x80000000, [127], [127], zero_c="keep") == 0x80000000


def test_nvfp4_k4_groups_keep_a_carry():
    # S = 16 (block 1: 0x78 * 0x78 = 2**16), so q = 16 - 35 = -19. Block 0
    # (scales 2**-9 * 2**-9) holds products of -2**-20: half a unit each.
    # Two in one K=4 group sum to -1 unit -> 2**14 - 2**-19 -> 0x467fffff;
    # cut one by one they vanish -> 2**14 = 0x46800000.
    sa, sb = [0x01, 0x78, 0x38, 0x38], [0x01, 0x78, 0x38, 0x38]
    a = [0x9, 0x9] + [0] * 14 + [0x1]
    b = [0x1, 0x1] + [0] * 14 + [0x1]
    assert word(NV, a, b, 0, sa, sb) == 0x467FFFFF
    assert scaled_word(NV, a, b, 0, sa, sb, product_group=1) == 0x46800000
    # in two K=4 groups of one K=16 block: both cut away (K=16 groups would keep it)
    a2 = [0x9, 0, 0, 0, 0x9] + [0] * 11 + [0x1]
    b2 = [0x1, 0, 0, 0, 0x1] + [0] * 11 + [0x1]
    assert word(NV, a2, b2, 0, sa, sb) == 0x46800000
    assert scaled_word(NV, a2, b2, 0, sa, sb, product_group=16) == 0x467FFFFF


def test_nvfp4_c_dominant_merge_cuts_each_k16_block():
    # C = 2**20 >= every product's raw exponent: q = 20 - 35 = -15. Products
    # -2**-16 (-0.5 * 0.5 * 2**-9 * 2**-5) at K=0 and K=16: each K=16 block sum
    # is half a unit, cut to 0 -> 2**20. Without the merge q = 20 - 39 and
    # both survive: 2**20 - 2**-15 -> truncated 0x497fffff.
    sa, sb = [0x01, 0x01, 0x38, 0x38], [0x10, 0x10, 0x38, 0x38]
    a = [0x9] + [0] * 15 + [0x9]
    b = [0x1] + [0] * 15 + [0x1]
    assert word(NV, a, b, 0x49800000, sa, sb) == 0x49800000
    assert scaled_word(NV, a, b, 0x49800000, sa, sb, c_dominant=False) == 0x497FFFFF
    # both products in one K=16 block: one unit survives the merge
    a1, b1 = [0x9, 0x9], [0x1, 0x1]
    assert word(NV, a1, b1, 0x49800000, sa, sb) == 0x497FFFFF


def test_sparse_nvfp4_merges_k32_blocks():
    # The same two products at K=0 and K=16 share one K=32 block when sparse
    # (notes): one unit survives. K=16 merge blocks would lose it.
    dp = Datapath.parse(NVS)
    act = sparsity.active_positions(dp, [0x44444444, 0x44444444])
    sa, sb = [0x01, 0x38, 0x38, 0x38], [0x10, 0x38, 0x38, 0x38]
    a = [0x9] + [0] * 15 + [0x9]
    b = [0x1] + [0] * 15 + [0x1]
    assert word(NVS, a, b, 0x49800000, sa, sb, active=act) == 0x497FFFFF
    assert scaled_word(NVS, a, b, 0x49800000, sa, sb, act, merge_group=16) == 0x49800000


def test_mxf4_group_outranked_by_c_is_cut_below_c():
    # C = 1.0. Group K=32..47 (scales 2**-1 * 1): 6 * 6 / 2 = 18, R = 3 > raw(C).
    # Group K=0..15 (scales 2**-18 each, S0 = -36): -1.5 * 2**-36, C outranks it.
    # q = max(3 - 39, -1 - 35, 0 - 39) = -36; the outranked group is cut at
    # 0 - 35 first: -0.75 unit -> 0. Result 19.0. Cut at q it would be -1
    # unit: 19 - 2**-36 -> 0x4197ffff.
    sa, sb = [109, 126], [109, 127]
    a = [0xB] + [0] * 31 + [0x7]
    b = [0x2] + [0] * 31 + [0x7]
    assert word(MXF4, a, b, ONE, sa, sb) == 0x41980000
    assert scaled_word(MXF4, a, b, ONE, sa, sb, per_group_c_merge=False) == 0x4197FFFF


def test_mxf4_subnormal_group_floor():
    # C = 0. Block 1: 1.0 * 1.0 * 2**-145 = 16 * 2**-149 (S = -145, q = -180).
    # Block 0 (S0 = -178): -2**-178, four units, below 2**-174 and of a lower
    # scale: dropped -> 0x10. Kept: 2**-145 - 2**-178 -> truncated 0xf.
    sa, sb = [38, 54], [38, 55]
    a = [0xA] + [0] * 31 + [0x2]
    b = [0x2] + [0] * 31 + [0x2]
    assert word(MXF4, a, b, 0, sa, sb) == 0x00000010
    assert scaled_word(MXF4, a, b, 0, sa, sb, group_floor=None) == 0x0000000F


def test_mxf4_global_c_merge_is_implied_by_the_per_group_one():
    # The profile leaves MXF4's global C-dominant merge off: for e2m1 it gives
    # the same words whenever it applies. Checked on cancellation and edge cases.
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from tcgen05_gen import random_cases

    for dp_id in (MXF4, "tcgen05.mxf4nvf4.e2m1.f32.k64.ue8m0x4"):
        dp = Datapath.parse(dp_id)
        p = B200_TCGEN05.scaled_params(dp)
        on = BlockScaledModel("on", dp, "", p.replace(c_dominant=True, merge_group=16))
        for suite in ("cancel", "edge"):
            cases = random_cases(dp, 3000, suite, seed=11)
            assert (on.evaluate(cases) == model_for(dp).evaluate(cases)).all()


def test_datapaths_outside_ptx_are_refused():
    for bad in ("tcgen05.tf32.f32.k16", "tcgen05.f16.bf16.f16.k16", "tcgen05.mxf4.e2m1.f32.k64.ue4m3x4",
                "tcgen05.f8f6f4.e4m3.f32.k32.ue8m0x1", "tcgen05.i8.s8.f32.k32"):
        with pytest.raises(ModelError):
            model_for(Datapath.parse(bad))
