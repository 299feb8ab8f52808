"""The block-scaled fast path gives the plain kernel's words, bit for bit, on
random cases of every suite (raw words: NaN and Inf elements, NaN scales,
special C) over the profiles and parameter sets it takes; the parameter
sets it does not take run on the plain kernel."""

import numpy as np
import pytest
from numba import njit
from tcgen05_gen import random_cases

from tcprobe.models.cases import CasesError
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import Speed
from tcprobe.models.formats import decode, get_format
from tcprobe.models.kernels import scaled_groups
from tcprobe.models.kernels.core import FINITE, mul_class
from tcprobe.models.kernels.groups_ir import groups_config, groups_lanes, groups_width
from tcprobe.models.kernels.scaled_kernel import (
    fast_applies,
    kernel_params,
    scale_fields,
    scale_product,
)
from tcprobe.models.tcgen05 import PROFILES
from tcprobe.models.tcgen05_scaled import BlockScaledModel, ScaledParams

MXF8 = Datapath.parse("tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
MXF8_E5M2 = Datapath.parse("tcgen05.mxf8f6f4.e5m2.f32.k32.ue8m0x1")
MXF4 = Datapath.parse("tcgen05.mxf4.e2m1.f32.k64.ue8m0x2")
NVF4 = Datapath.parse("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4")
E2M1_PARAMS = [
    ScaledParams(product_window=39, c_window=None, scale_window=35, product_group=4),
    ScaledParams(product_window=None, c_window=35, scale_window=35, q_floor=-174,
                 product_group=16, zero_c="keep"),
    ScaledParams(product_window=25, c_window=25, q_floor=-158, overflow="saturate"),
]


def same_words(model, n=1500, seed=3):
    dp = model.datapath
    for suite in ("raw", "finite", "edge", "cancel"):
        cases = random_cases(dp, n, suite, seed=seed)
        fast = model.evaluate(cases, Speed("always"))
        plain = model.evaluate(cases, Speed("never"))
        bad = np.flatnonzero(fast != plain)
        assert bad.size == 0, (f"{dp.id} {suite}: {bad.size} words differ, first case "
                               f"{int(bad[0])}: fast {int(fast[bad[0]]):#x} "
                               f"plain {int(plain[bad[0]]):#x}")


@pytest.mark.fast_first(4)
@pytest.mark.parametrize("dp", [MXF8, MXF8_E5M2, MXF4, NVF4], ids=lambda d: d.id)
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_profiles(dp, profile):
    model = PROFILES[profile].model(dp)
    same_words(model)


@pytest.mark.fast_first(2)
@pytest.mark.parametrize("dp", [MXF4, NVF4], ids=lambda d: d.id)
@pytest.mark.parametrize("i", range(len(E2M1_PARAMS)))
def test_parameter_sets(dp, i):
    model = BlockScaledModel("variant", dp, "", E2M1_PARAMS[i])
    assert fast_applies(kernel_params(dp, model.params))
    same_words(model)


def test_what_it_takes():
    """The mmasim-tcgen05 kinds take it; the B200 MXF4 (per-group C cut,
    group floor) and NVFP4 (C-dominant merge) parameters do not."""
    mmasim, b200 = PROFILES["mmasim-tcgen05"], PROFILES["b200-tcgen05"]
    for dp in (MXF8, MXF4, NVF4):
        assert fast_applies(kernel_params(dp, mmasim.scaled_params(dp)))
    assert fast_applies(kernel_params(MXF8, b200.scaled_params(MXF8)))
    assert not fast_applies(kernel_params(MXF4, b200.scaled_params(MXF4)))
    assert not fast_applies(kernel_params(NVF4, b200.scaled_params(NVF4)))


@pytest.mark.parametrize("dp,word", [(MXF4, 0x10), (MXF8, 0x100)], ids=["mxf4", "mxf8f6f4"])
@pytest.mark.parametrize("operand", ["a", "b"])
def test_word_out_of_range(dp, word, operand):
    """The fast kernel's scan of the words' high bits raises what Cases.check raises."""
    model = PROFILES["mmasim-tcgen05"].model(dp)
    cases = random_cases(dp, 50, "raw", seed=5)
    getattr(cases, operand)[20, 9] = word
    for policy in ("always", "never"):
        with pytest.raises(CasesError, match=f"a word of {operand} does not fit .* \\({word:#x}\\)"):
            model.evaluate(cases, Speed(policy))


GROUPED = {  # datapath and product group: the exact group sums fit 16-bit lanes
    "mxf4 G=16": (MXF4, 16), "mxf4 G=2": (MXF4, 2), "mxf4 G=32": (MXF4, 32),
    "nvf4 G=4": (NVF4, 4), "nvf4 G=16": (NVF4, 16),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GROUPED))
def test_grouped_kernel(name):
    """The grouped fast kernel (models/kernels/scaled_groups.py: all K lanes as vector
    code, each group's exact sum in a lane as wide as it needs) gives the
    plain kernel's words, with a product window (each group's largest
    exponent) and without one."""
    dp, group = GROUPED[name]
    for params in (ScaledParams(product_window=None, c_window=35, scale_window=35,
                                q_floor=-174, product_group=group),
                   ScaledParams(product_window=30, c_window=30, scale_window=None,
                                q_floor=-160, product_group=group, zero_c="keep")):
        model = BlockScaledModel("grouped", dp, "", params)
        assert scaled_groups.applies(kernel_params(dp, params))
        same_words(model)


def _exact_group_sums(a, b, fa, fb, group):
    """Each group's exact sum of products in units of 2**unit, by Fraction-free
    integer arithmetic on formats.decode (the reference of groups_lanes)."""
    da, db = decode(fa, a), decode(fb, b)
    fmt_a, fmt_b = get_format(fa), get_format(fb)
    unit = (1 - fmt_a.bias - fmt_a.frac_bits) + (1 - fmt_b.bias - fmt_b.frac_bits)
    value = (da.sig * db.sig).astype(object) * (2 ** (da.lsb + db.lsb - unit)).astype(object)
    value = np.where((da.sign ^ db.sign) == 1, -value, value)
    return value.reshape(len(a), -1, group).sum(axis=2)


@pytest.mark.parametrize("fa,fb,group,width", [("e2m1", "e2m1", 16, 16), ("e2m3", "e2m3", 8, 16),
                                               ("e2m3", "e3m2", 8, 32),
                                               ("e4m3", "e4m3", 4, 64), ("e2m3", "e4m3", 8, 32)])
def test_groups_lanes_exact_sums(fa, fb, group, width):
    """groups_ir.groups_lanes at each lane width it picks: every group's exact
    sum equals the reference's on finite words (NaN words left out)."""
    config = groups_config(get_format(fa).spec, get_format(fb).spec, 32 // group, group, True)
    assert groups_width(config) == width
    rng = np.random.default_rng(group)
    words = lambda f: rng.integers(0, get_format(f).word_mask + 1, (400, 32)).astype(np.uint32)  # noqa: E731
    a, b = words(fa), words(fb)
    for x, f in ((a, fa), (b, fb)):
        x[decode(f, x).cls == 3] = 0  # no NaN words
    got = _groups(a, b, config)
    want = _exact_group_sums(a, b, fa, fb, group)
    assert np.array_equal(got[:, 2:2 + 32 // group].astype(object), want)


def _groups(a, b, config):
    """groups_lanes on every row (a kernel per configuration: a literal)."""
    n_out = 2 + 2 * (32 // int(config.split(",")[1]))

    @njit
    def run(a, b, out):
        for r in range(a.shape[0]):
            res = groups_lanes(a, b, r * a.shape[1], config)
            for j in range(n_out):
                out[r, j] = res[j]

    out = np.zeros((len(a), n_out), np.int64)
    run(a, b, out)
    return out


@pytest.mark.parametrize("scale", ["ue8m0", "ue4m3"])
def test_scale_product_is_the_classed_product(scale):
    """scaled_kernel.scale_product (branch-free) gives mul_class of the two
    scale_fields, the product significand and the summed exponents, for
    every pair of scale codes."""
    spec = get_format(scale).spec
    codes = np.arange(1 << get_format(scale).width, dtype=np.int64)
    x, y = np.repeat(codes, len(codes)), np.tile(codes, len(codes))
    got, want = _scale_products(x, y, spec)
    finite = want[:, 0] == FINITE  # the significand and exponents matter for finite products
    assert np.array_equal(got[:, 0], want[:, 0])
    assert np.array_equal(got[finite], want[finite])


@njit
def _scale_products(x, y, spec):
    got = np.zeros((len(x), 4), np.int64)
    want = np.zeros((len(x), 4), np.int64)
    for i in range(len(x)):
        got[i, 0], got[i, 1], got[i, 2], got[i, 3] = scale_product(x[i], y[i], spec)
        cx, mx, lx, rx = scale_fields(x[i], spec)
        cy, my, ly, ry = scale_fields(y[i], spec)
        want[i, 0], want[i, 1], want[i, 2], want[i, 3] = (mul_class(cx, cy), mx * my, lx + ly,
                                                          rx + ry)
    return got, want
