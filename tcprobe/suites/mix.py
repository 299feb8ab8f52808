"""The validation mix of random cases the ladder checks a fingerprint's
model on (and the probes' model-checked random cases draw from): raw words,
values near 1, cancellations and small exponents, with random block scales
and legal sparse masks where the datapath has them. The words are packed
from their fields by :mod:`tcprobe.models.words`."""

from __future__ import annotations

import numpy as np

from tcprobe.models import sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Specials, get_format
from tcprobe.models.words import emax_biased, max_frac, pack, pow2


def random_cases(dp: Datapath, n: int, rng: np.random.Generator) -> Cases:
    """A validation mix, built from random bit fields: a quarter raw random
    words (NaN, Inf, subnormals), a quarter finite values near 1, a quarter
    near cancellation (every odd lane the negated even one, C small), a
    quarter with small exponents (subnormal sums, floors)."""
    k = dp.k
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
    if dp.is_integer:
        return _integer_cases(dp, n, rng)

    def raw_words(f, shape):
        return rng.integers(0, f.word_mask, shape, dtype=np.uint64, endpoint=True).astype(f.dtype) & \
            f.dtype(f.word_mask & ~((1 << f.drop_bits) - 1))

    def finite(f, shape, lo, hi):
        biased = np.clip(rng.integers(lo, hi + 1, shape) + f.bias, 0, emax_biased(f))
        frac = np.minimum(rng.integers(0, 1 << f.frac_bits, shape), max_frac(f, biased))
        sign = rng.integers(0, 2, shape) if f.signed else 0
        return pack(f, sign, biased, frac)

    q = n // 4
    parts = []
    parts.append(Cases(raw_words(fa, (q, k)), raw_words(fb, (q, k)), raw_words(fc, (q,))))
    parts.append(Cases(finite(fa, (q, k), -4, 4), finite(fb, (q, k), -4, 4),
                       finite(fc, (q,), -2, 10)))
    a = finite(fa, (q, k), -3, 3)
    b = finite(fb, (q, k), -3, 3)
    if k > 1:
        a[:, 1::2] = a[:, 0:k - k % 2:2]
        sign_b = fb.dtype(1 << (fb.width - 1))
        b[:, 1::2] = b[:, 0:k - k % 2:2] ^ sign_b
        # nudge one lane so the cancellation is not always exact
        b[:, 1] ^= rng.integers(0, 4, q).astype(fb.dtype) << fb.dtype(fb.drop_bits)
    parts.append(Cases(a, b, finite(fc, (q,), -30, 0)))
    r = n - 3 * q
    parts.append(Cases(finite(fa, (r, k), 1 - fa.bias - 1, 1 - fa.bias + 6),
                       finite(fb, (r, k), 1 - fb.bias - 1, 1 - fb.bias + 6),
                       np.where(rng.integers(0, 2, r) == 0, 0,
                                finite(fc, (r,), 1 - fc.bias - 1, 1 - fc.bias + 6)).astype(fc.dtype)))
    out = Cases.concat(parts)
    if dp.block_scaled:
        out.scale_a, out.scale_b = random_scales(dp, n, rng), random_scales(dp, n, rng)
    if dp.sparse:
        out.active = sparsity.decode(dp, sparsity.random_metadata(dp, n, rng))[0]
    return out


def _integer_cases(dp: Datapath, n: int, rng: np.random.Generator) -> Cases:
    """The integer mix: half raw random words; a quarter with every A and B
    an extreme (the most negative or the largest value: the largest sums)
    and C within a sum of the s32 limits (wrap or saturate); a quarter of
    small values with C near zero."""
    k = dp.k
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)

    def raw(f, shape):
        return rng.integers(0, f.word_mask + 1, shape, dtype=np.uint64).astype(np.uint32)

    def extreme(f, shape):
        lo, hi = (1 << (f.width - 1), (1 << (f.width - 1)) - 1) if f.signed else (0, f.word_mask)
        return np.where(rng.integers(0, 2, shape) == 0, lo, hi).astype(np.uint32)

    h = n // 2
    q = (n - h) // 2
    r = n - h - q
    span = int(k) * (1 << (fa.width + fb.width))  # at least the largest |sum of products|
    edge = rng.integers(0, 2, q)
    offset = rng.integers(0, span + 1, q)
    c_edge = np.where(edge == 0, (1 << 31) - 1 - offset, (1 << 32) - (1 << 31) + offset)
    small_c = rng.integers(-64, 65, r) & fc.word_mask
    out = Cases.concat([
        Cases(raw(fa, (h, k)), raw(fb, (h, k)), raw(fc, (h,))),
        Cases(extreme(fa, (q, k)), extreme(fb, (q, k)), c_edge.astype(np.uint32)),
        Cases(rng.integers(0, 4, (r, k)).astype(np.uint32) & np.uint32(fa.word_mask),
              rng.integers(0, 4, (r, k)).astype(np.uint32) & np.uint32(fb.word_mask),
              small_c.astype(np.uint32)),
    ])
    if dp.sparse:
        out.active = sparsity.decode(dp, sparsity.random_metadata(dp, n, rng))[0]
    return out


def random_scales(dp: Datapath, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, n_scales) scale codes: a quarter of the cases unit scales, half
    near 1 (exponents within +-12), the rest anywhere in the format (NaN
    codes, and ue4m3 zeros, now and then)."""

    f = get_format(dp.scale_type)
    unit = pow2(f, 0)
    top = int(f.canonical_nan)  # the NaN code ends the finite range (0xff, 0x7f)
    shape = (n, dp.n_scales)
    style = rng.integers(0, 4, n)[:, None]
    near = np.clip(unit + rng.integers(-12, 13, shape) * (1 << f.frac_bits)
                   + rng.integers(0, 1 << f.frac_bits, shape), 0, top - 1)
    wide = rng.integers(0, top, shape)
    codes = np.where(style == 0, unit, np.where(style == 3, wide, near))
    codes = np.where(rng.random(shape) < 0.003, top, codes)  # the NaN code (ue8m0 0xff, ue4m3 0x7f)
    return codes.astype(np.uint32)


def random_finite(f, e, shape, rng: np.random.Generator, sign_p: float = 0.5) -> np.ndarray:
    """Finite words of format f with unbiased exponents ``e`` (clipped into
    the format) and random fractions: inputs for model-checked random cases."""
    f = get_format(f)
    biased = np.clip(np.broadcast_to(np.asarray(e), shape) + f.bias, 0,
                     emax_biased(f)).astype(np.int64)
    frac = np.minimum(rng.integers(0, 1 << f.frac_bits, shape), max_frac(f, biased))
    sign = (rng.random(shape) < sign_p).astype(np.int64) if f.signed else 0
    if f.specials == Specials.FNUZ:  # -0's word is the NaN there: +0 instead
        sign = np.where((biased == 0) & (frac == 0), 0, sign)
    return pack(f, sign, biased, frac)
