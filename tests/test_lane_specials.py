"""The lane decoder's blocks that hold a NaN or Inf word (decided by their
lanes' special masks, lanes_ir; the block-scaled kernel's by special counts,
lane_decoder.product_count): the fast path gives the plain
kernel's words, and both give the words IEEE rules ask for, with a NaN or
Inf word in every lane position, Inf x 0 either way round, +Inf and -Inf
products together, and a special C, over one-format, mixed-format, wide,
short and multi-block configurations, and on the block-scaled fast kernel."""

import numpy as np
import pytest

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, Speed, fused_dot
from tcprobe.models.formats import Class, Specials, decode, get_format, inf_word
from tcprobe.models.kernels.kernel_params import kernel_params
from tcprobe.models.kernels.lane_decoder import lane_decoder_applies
from tcprobe.models.kernels.scaled_kernel import fast_applies
from tcprobe.models.kernels.scaled_kernel import kernel_params as scaled_params
from tcprobe.models.profiles import PROFILES
from tcprobe.models.registry import resolve
from tcprobe.models.tcgen05 import PROFILES as TCGEN05_PROFILES
from tcprobe.models.words import pow2

RZ = dict(window_bits=25, zero_floor=-133, output_rounding="rz", zero_sign="positive",
          overflow="inf")
CONFIGS = {
    "bf16-h100": (Datapath("mma", "bf16", "bf16", "bf16", "f32", 16), "h100"),
    "f16-f16out-h100": (Datapath("mma", "f16", "f16", "f16", "f16", 16), "h100"),
    "tf32-h100-short": (Datapath("mma", "tf32", "tf32", "tf32", "f32", 8), "h100"),
    "e4m3-ada-two-blocks": (Datapath("mma", "e4m3", "e4m3", "e4m3", "f32", 32), "ada"),
    "e4m3-tcgen05-k32": (Datapath.parse("tcgen05.f8f6f4.e4m3.f32.k32"), "mmasim-tcgen05"),
    "e5m2-e4m3": (Datapath("tcgen05", "f8f6f4", "e5m2", "e4m3", "f32", 32),
                  EngineParams(block_size=32, **RZ)),
    "e5m2-e2m1": (Datapath("tcgen05", "f8f6f4", "e5m2", "e2m1", "f32", 32),
                  EngineParams(block_size=32, **RZ)),
    "bf16-blocks-of-5": (Datapath("mma", "bf16", "bf16", "bf16", "f32", 16),
                         EngineParams(block_size=5, **RZ)),
    "f16-ordered-blocks-of-16": (Datapath("mma", "f16", "f16", "f16", "f32", 32),
                                 EngineParams(block_size=16,
                                              k_order=tuple(reversed(range(32))), **RZ)),
}


def params_of(dp, how):
    if isinstance(how, EngineParams):
        return how
    return PROFILES[how].params(dp) if how in PROFILES else resolve(how, dp).params


def nan_word(fmt, rng):
    """A NaN word of either sign (a random nonzero fraction where the
    format has Inf), or None where the format has no NaN."""
    sign = int(rng.integers(2)) << (fmt.width - 1)
    if fmt.specials == Specials.IEEE:
        frac = int(rng.integers(1, 1 << fmt.frac_bits)) << fmt.drop_bits
        return sign | int(inf_word(0, fmt.spec)) | frac
    if fmt.specials == Specials.FN:
        return sign | ((1 << (fmt.width - 1)) - 1)
    return None


def special_rows(dp, n_random, seed):
    """Rows of small finite words (no block can overflow) with NaN and Inf
    words set in every lane position, by scenario, and rows with specials
    sprinkled at random."""
    rng = np.random.default_rng(seed)
    fa, fb, fc = (get_format(t) for t in (dp.a_type, dp.b_type, dp.c))
    k = dp.k

    def small(fmt, shape):  # finite: the top exponent bit cleared
        words = rng.integers(0, 1 << fmt.width, shape, dtype=np.int64)
        return words & ~(1 << (fmt.width - 2))

    a_rows, b_rows, c_rows = [], [], []

    def row(set_a=(), set_b=(), c=None):
        a, b = small(fa, k), small(fb, k)
        for p, w in set_a:
            a[p] = w
        for p, w in set_b:
            b[p] = w
        a_rows.append(a)
        b_rows.append(b)
        c_rows.append(small(fc, 1)[0] if c is None else c)

    inf_a = fa.specials == Specials.IEEE
    inf_b = fb.specials == Specials.IEEE
    for p in range(k):
        q = (p + 1 + int(rng.integers(k - 1))) % k if k > 1 else p
        s, t = int(rng.integers(2)), int(rng.integers(2))
        if nan_word(fa, rng) is not None:
            row(set_a=[(p, nan_word(fa, rng))])
        if nan_word(fb, rng) is not None:
            row(set_b=[(p, nan_word(fb, rng))])
        if inf_a:
            inf = int(inf_word(s, fa.spec))
            row(set_a=[(p, inf)], set_b=[(p, pow2(fb, 0, t))])  # one Inf
            row(set_a=[(p, inf)], set_b=[(p, t << (fb.width - 1))])  # Inf x 0
            # +Inf and -Inf products, and two Inf of one sign
            row(set_a=[(p, int(inf_word(0, fa.spec))), (q, int(inf_word(1, fa.spec)))],
                set_b=[(p, pow2(fb, 0, t)), (q, pow2(fb, 0, t))])
            row(set_a=[(p, inf), (q, inf)], set_b=[(p, pow2(fb, 0, t)), (q, pow2(fb, 0, t))])
            row(set_a=[(p, inf)], set_b=[(p, pow2(fb, 0, t))],
                c=int(inf_word(1 - (s ^ t), fc.spec)))  # against C's Inf
        if inf_b:
            inf = int(inf_word(s, fb.spec))
            row(set_a=[(p, t << (fa.width - 1))], set_b=[(p, inf)])  # 0 x Inf
            row(set_a=[(p, pow2(fa, 0, t))], set_b=[(p, inf)])
        if inf_a and inf_b:
            row(set_a=[(p, int(inf_word(s, fa.spec)))], set_b=[(p, int(inf_word(t, fb.spec)))])
    for c in (nan_word(fc, rng), int(inf_word(0, fc.spec)), int(inf_word(1, fc.spec))):
        row(c=c)
    a, b = small(fa, (n_random, k)), small(fb, (n_random, k))
    c = small(fc, n_random)
    for words, fmt in ((a, fa), (b, fb), (c, fc)):
        pick = rng.random(words.shape) < 0.05
        specials = [w for w in (nan_word(fmt, rng), nan_word(fmt, rng)) if w is not None]
        if fmt.specials == Specials.IEEE:
            specials += [int(inf_word(0, fmt.spec)), int(inf_word(1, fmt.spec))]
        if specials:
            words[pick] = rng.choice(specials, int(pick.sum()))
        zero = rng.random(words.shape) < 0.1
        words[zero] &= 1 << (fmt.width - 1)
    a = np.vstack([np.array(a_rows), a]).astype(np.uint32)
    b = np.vstack([np.array(b_rows), b]).astype(np.uint32)
    c = np.concatenate([np.array(c_rows), c]).astype(np.uint32)
    return Cases(a, b, c)


def ieee_words(dp, cases, nan):
    """Each case's word by IEEE rules where a NaN or Inf word decides it
    (the NaN word ``nan`` for a NaN, Inf x 0 or both infinities), else -1."""
    fa, fb, fc, fd = (get_format(t) for t in (dp.a_type, dp.b_type, dp.c, dp.d_type))
    da, db, dc = decode(fa, cases.a), decode(fb, cases.b), decode(fc, cases.c)
    is_nan = ((da.cls == Class.NAN) | (db.cls == Class.NAN)
              | ((da.cls == Class.INF) & (db.cls == Class.ZERO))
              | ((da.cls == Class.ZERO) & (db.cls == Class.INF))).any(axis=1)
    inf = (da.cls == Class.INF) | (db.cls == Class.INF)
    neg = (da.sign ^ db.sign) == 1
    pos_inf = (inf & ~neg).any(axis=1) | ((dc.cls == Class.INF) & (dc.sign == 0))
    neg_inf = (inf & neg).any(axis=1) | ((dc.cls == Class.INF) & (dc.sign == 1))
    is_nan |= (dc.cls == Class.NAN) | (pos_inf & neg_inf)
    out = np.full(len(cases), -1, np.int64)
    out[pos_inf] = int(inf_word(0, fd.spec))
    out[neg_inf] = int(inf_word(1, fd.spec))
    out[is_nan] = nan
    return out


# the configurations that compile kernels of their own (custom blocks, orders,
# mixed kinds) run in the slow tier; the profiles' ones in the fast tier
SLOW_CONFIGS = ("bf16-blocks-of-5", "f16-ordered-blocks-of-16", "e5m2-e4m3", "e5m2-e2m1")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CONFIGS
                                  else n for n in sorted(CONFIGS)])
def test_special_blocks(name):
    dp, how = CONFIGS[name]
    params = params_of(dp, how)
    kp = kernel_params(dp, params, dp.k)
    assert lane_decoder_applies(kp)
    cases = special_rows(dp, 3000, seed=len(name))
    fast = fused_dot(dp, cases, params, fast=True).astype(np.int64)
    plain = fused_dot(dp, cases, params, fast=False).astype(np.int64)
    bad = np.flatnonzero(fast != plain)
    assert bad.size == 0, (f"{name}: {bad.size} words differ, first case {int(bad[0])}: "
                           f"fast {int(fast[bad[0]]):#x} plain {int(plain[bad[0]]):#x}")
    want = ieee_words(dp, cases, kp.out.nan)
    decided = want >= 0
    assert decided.sum() > 2 * dp.k
    wrong = np.flatnonzero(decided & (fast != want))
    assert wrong.size == 0, (f"{name}: case {int(wrong[0])} gives {int(fast[wrong[0]]):#x}, "
                             f"IEEE rules {int(want[wrong[0]]):#x}")


SCALED = {"mxf8-e4m3": "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1",
          "mxf8-e5m2": "tcgen05.mxf8f6f4.e5m2.f32.k32.ue8m0x1"}


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("name", sorted(SCALED))
def test_special_cases_block_scaled(name):
    """The block-scaled fast kernel's special cases (decided by special
    counts too): the plain kernel's words and IEEE rules, a NaN scale
    making the case NaN."""
    dp = Datapath.parse(SCALED[name])
    model = TCGEN05_PROFILES["mmasim-tcgen05"].model(dp)
    kp = scaled_params(dp, model.params)
    assert fast_applies(kp)
    cases = special_rows(dp, 2000, seed=len(name))
    rng = np.random.default_rng(11)
    shape = (len(cases), dp.n_scales)
    scale_a = rng.integers(120, 135, shape)
    scale_b = rng.integers(120, 135, shape)
    scale_a[rng.random(shape) < 0.02] = 0xFF  # ue8m0's NaN
    scale_b[rng.random(shape) < 0.02] = 0xFF
    cases.scale_a, cases.scale_b = scale_a.astype(np.uint32), scale_b.astype(np.uint32)
    fast = model.evaluate(cases, Speed("always")).astype(np.int64)
    plain = model.evaluate(cases, Speed("never")).astype(np.int64)
    bad = np.flatnonzero(fast != plain)
    assert bad.size == 0, (f"{name}: {bad.size} words differ, first case {int(bad[0])}: "
                           f"fast {int(fast[bad[0]]):#x} plain {int(plain[bad[0]]):#x}")
    want = ieee_words(dp, cases, kp.stage.nan)
    want[((scale_a == 0xFF) | (scale_b == 0xFF)).any(axis=1)] = kp.stage.nan
    decided = want >= 0
    assert decided.sum() > 2 * dp.k
    wrong = np.flatnonzero(decided & (fast != want))
    assert wrong.size == 0, (f"{name}: case {int(wrong[0])} gives {int(fast[wrong[0]]):#x}, "
                             f"IEEE rules {int(want[wrong[0]]):#x}")
