"""The block-scaled fast kernel of configurations that sum their products in
groups (product_group > 1: MMA-Sim's kind::mxf4 and mxf4nvf4, G = 16): the
plain kernel's words (scaled_kernel.scaled_case), its work laid out for
vector units.

Cases go through in chunks of CHUNK, each in four passes:

1. the scale products of every (case, scale block), vectorized over the
   chunk: class, significand, exponents (scaled_kernel.scale_fields);
2. case by case, all K lanes as vector code (groups_ir.groups_lanes): each
   group's exact sum and largest exponent sum, which products are nonzero,
   the specials, the signs and the words' stray bits;
3. vectorized over the chunk, branch-free: the specials and the zero sign,
   the quantum (the largest term quantum of the live groups and C, never
   below the floor: core.quantum), each group sum times its scale product
   and C cut to it (core.cut), the sum rounded (core.window_word), or C
   itself where no group has a nonzero product and scale;
4. the cases a NaN or Inf decides, from their special counts
   (scaled_kernel.special_word), case by case: they are few.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from .core import NAN, NAN_CLASS, NEG_INF, NONNEG, POS_INF, cut, quantum, window_word
from .groups_ir import groups_config, groups_lanes, groups_width
from .kernel_stamp import SOURCE_STAMP
from .lane_decoder import fields, stray_word
from .lanes_ir import STRAY
from .scaled_kernel import UNSET, ScaledKernelParams, fast_applies, scale_product, special_word

CHUNK = 256  # cases a pass walks before the next pass takes them
_SPECIALS = NAN | POS_INF | NEG_INF


def applies(kp: ScaledKernelParams) -> bool:
    """Whether this kernel computes the configuration: the fast kernel's
    configurations that sum products in groups whose exact sum fits a lane."""
    return fast_applies(kp) and kp.product_group > 1 and groups_width(_config(kp)) is not None


def _config(kp: ScaledKernelParams) -> str:
    """The groups_lanes configuration of a case's K products."""
    return groups_config(kp.a_spec, kp.b_spec, kp.k // kp.product_group, kp.product_group,
                         kp.product_window != UNSET)


def _build(kp: ScaledKernelParams):
    """The kernel of one configuration (``kp`` a compile-time constant)."""
    k, block, group = kp.k, kp.scale_block, kp.product_group
    n_scales, n_groups = k // block, k // group
    a_spec, b_spec, s_spec, c_spec = kp.a_spec, kp.b_spec, kp.s_spec, kp.c_spec
    fc = c_spec.frac_bits
    # the exponent of the last bit of the smallest element product: the unit
    # of a group's exact sum (before its scales)
    unit = (1 - a_spec.bias - a_spec.frac_bits) + (1 - b_spec.bias - b_spec.frac_bits)
    pw, cw, sw = kp.product_window, kp.c_window, kp.scale_window
    config = _config(kp)
    group_bits = (1 << group) - 1  # a group's lanes in groups_lanes' nonzero bits
    c_stray = stray_word(c_spec.width)
    keep_zero_c = kp.zero_c_keep
    window, stage = kp.window, kp.stage
    stamp = SOURCE_STAMP

    @njit(cache=True, nogil=True)
    def kernel(a, b, c, sa, sb, out):
        """Every case's word into ``out``; returns whether an A, B or C word
        has bits above its format."""
        assert len(stamp) > 0  # a constant of the cached kernel (kernel_stamp)
        n = a.shape[0]
        s_cls = np.zeros(CHUNK * n_scales, np.int64)  # (case, scale block) flat
        s_sig = np.zeros(CHUNK * n_scales, np.int64)
        s_lsb = np.zeros(CHUNK * n_scales, np.int64)
        s_raw = np.zeros(CHUNK * n_scales, np.int64)
        flags = np.zeros(CHUNK, np.int64)  # a case's flags and nonzero products
        nonzero = np.zeros(CHUNK, np.int64)
        g_sum = np.zeros(CHUNK * n_groups, np.int64)  # (group, case) flat: reads from 0
        g_top = np.zeros(CHUNK * n_groups, np.int64)
        special = np.zeros(CHUNK, np.bool_)
        high = 0
        for base in range(0, n, CHUNK):
            count = min(CHUNK, n - base)
            flat_a = sa[base:base + count].reshape(-1)
            flat_b = sb[base:base + count].reshape(-1)
            for x in range(count * n_scales):  # 1: the scale products
                s_cls[x], s_sig[x], s_lsb[x], s_raw[x] = scale_product(
                    np.int64(flat_a[x]), np.int64(flat_b[x]), s_spec)
            for r in range(count):  # 2: the groups' exact sums, lanes as vectors
                res = groups_lanes(a, b, (base + r) * k, config)
                flags[r] = res[0]
                nonzero[r] = res[1]
                for g in range(n_groups):
                    g_sum[g * CHUNK + r] = res[2 + g]
                    g_top[g * CHUNK + r] = res[2 + n_groups + g]
            for r in range(count):  # 3: the words, vectorized over the cases
                word = np.int64(c[base + r])
                high |= word & c_stray
                c_special, cs, cm, cr = fields(word, c_spec)
                f = flags[r]
                high |= f & STRAY
                bad = c_special | ((f & _SPECIALS) != 0)
                all_neg = cs & (0 if f & NONNEG else 1)
                have = False
                top = UNSET
                for g in range(n_groups):
                    j = r * n_scales + (g * group) // block
                    bad |= s_cls[j] == NAN_CLASS
                    live = (((nonzero[r] >> (g * group)) & group_bits) != 0) & (s_sig[j] != 0)
                    have |= live
                    if pw != UNSET:
                        top = max(top, g_top[g * CHUNK + r] + s_raw[j] - pw if live else UNSET)
                    if sw != UNSET:
                        top = max(top, s_raw[j] - sw if live else UNSET)
                if cw != UNSET:
                    top = max(top, cr - cw if cm != 0 else UNSET)
                q = quantum(top, window)
                m = cut(cm, cr - fc - q, cs)
                for g in range(n_groups):
                    j = r * n_scales + (g * group) // block
                    total = g_sum[g * CHUNK + r] * s_sig[j]
                    neg = total < 0
                    m += cut(-total if neg else total, unit + s_lsb[j] - q, 1 if neg else 0)
                finite = window_word(m, q, 0 if all_neg == 1 else NONNEG, window, stage)
                alone = 0 if (cm == 0 and not keep_zero_c) else word  # C with no live group
                out[base + r] = finite if have else alone
                special[r] = bad
            for r in range(count):  # 4: the cases a NaN or Inf decides
                if special[r]:
                    i = base + r
                    out[i] = special_word(a, b, i, np.int64(c[i]),
                                          s_cls[r * n_scales:(r + 1) * n_scales], kp)
        return high != 0

    return kernel


@lru_cache(maxsize=32)
def kernel_for(kp: ScaledKernelParams):
    """The compiled kernel of one configuration (built once per process)."""
    return _build(kp)
