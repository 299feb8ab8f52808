"""Random tcgen05 cases for the differential tests.

Suites: ``raw`` (every word uniformly random), ``finite`` (no Inf/NaN word),
``cancel`` (C aimed at minus the product sum, sometimes a few binades below
it: cancellation, the C-relative windows and merges), ``edge`` (tiny
exponents and C = 0 or subnormal: the zero floors and the 2**-174 group
floor; scale blocks far apart: the K=4 groups of NVFP4)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tcprobe.models import sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.formats import Class, decode, get_format

SUITES = ("raw", "finite", "cancel", "edge")


def _words(fmt: str, shape, rng) -> np.ndarray:
    return rng.integers(0, get_format(fmt).word_mask + 1, size=shape, dtype=np.uint64).astype(
        np.uint32)


def _finite(fmt: str, words: np.ndarray, rng) -> np.ndarray:
    """Redraw every Inf/NaN word of ``fmt`` until all are finite."""
    words = words.copy()
    while True:
        bad = np.isin(decode(fmt, words).cls, (Class.INF, Class.NAN))
        if not bad.any():
            return words
        words[bad] = _words(fmt, int(bad.sum()), rng)


def _scale_words(fmt: str, shape, rng, finite: bool) -> np.ndarray:
    w = _words(fmt, shape, rng)
    return _finite(fmt, w, rng) if finite else w


_ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
       "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
       "e2m1": ml_dtypes.float4_e2m1fn, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
       "ue8m0": ml_dtypes.float8_e8m0fnu}


def _approx(fmt: str, words: np.ndarray) -> np.ndarray:
    """float64 values (only to aim C at the products; never an expected word)."""
    with np.errstate(all="ignore"):
        return _approx_values(fmt, words)


def _approx_values(fmt: str, words: np.ndarray) -> np.ndarray:
    if fmt == "tf32":
        return (words & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if fmt == "ue4m3":
        return (words & np.uint32(0x7F)).astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(
            np.float64)
    t = _ML[fmt]
    return words.astype(np.dtype(t).itemsize == 2 and np.uint16 or np.uint8).view(t).astype(
        np.float64)


def random_cases(dp, n: int, suite: str, seed: int) -> Cases:
    """``n`` random cases of datapath ``dp`` from one of :data:`SUITES`."""
    rng = np.random.default_rng(seed)
    k = dp.k
    finite = suite != "raw"
    a, b = _words(dp.a_type, (n, k), rng), _words(dp.b_type, (n, k), rng)
    c = _words(dp.c, n, rng)
    if finite and not dp.is_integer:
        a, b, c = _finite(dp.a_type, a, rng), _finite(dp.b_type, b, rng), _finite(dp.c, c, rng)
    sa = sb = None
    if dp.block_scaled:
        shape = (n, dp.n_scales)
        sa = _scale_words(dp.scale_type, shape, rng, finite)
        sb = _scale_words(dp.scale_type, shape, rng, finite)
        if suite == "cancel" and dp.scale_type == "ue8m0":
            sa, sb = rng.integers(110, 145, (2, n, dp.n_scales)).astype(np.uint32)
        if suite == "edge":
            sa, sb = _edge_scales(dp, n, rng)
    active = None
    if dp.sparse:
        active = sparsity.active_batch(dp, sparsity.random_metadata(dp, n, rng))
        # disabled positions hold anything: NaN and Inf included
        junk = _words(dp.a_type, (n, k), rng)
        a = np.where(active, a, junk)
    if suite == "edge" and not dp.is_integer:
        a, b = (_low_exponents(dp.a_type, dp.d_type, a, rng),
                _low_exponents(dp.b_type, dp.d_type, b, rng))
        c = _edge_c(dp, a, b, c, sa, sb, active, rng)
    if suite == "cancel" and not dp.is_integer:
        c = _aim_c(dp, a, b, c, sa, sb, active, rng)
    return Cases(a, b, c, sa, sb, active)


def _low_exponents(fmt: str, d_fmt: str, words: np.ndarray, rng) -> np.ndarray:
    """Exponent fields that put the largest product near the zero floor:
    tf32/bf16 products near 2**-150..2**-126 (f32 floor -133); f16/e5m2
    products below 2**-21 when D is f16 (f16 floor -21)."""
    f = get_format(fmt)
    shift = np.uint32(f.frac_bits + f.drop_bits)
    field = np.uint32((1 << f.exp_bits) - 1) << shift
    n, k = words.shape
    if f.exp_bits == 8:
        centre = rng.integers(52, 65, (n, 1))
        exps = np.clip(centre - rng.integers(0, 13, (n, k)), 1, 254)
    elif d_fmt == "f16" and fmt in ("f16", "e5m2"):
        exps = rng.integers(0, 6, (n, k))
    else:
        return words
    return (words & ~field) | (exps.astype(np.uint32) << shift)


def _edge_scales(dp, n, rng):
    """Per block, scale pairs either high or far below: ue8m0 pair sums near
    2**-150 (subnormal results, q below 2**-174) or 2**-190..2**-170; ue4m3 at
    the top binade (S = 16, q = -19) or subnormal (products cut to q)."""
    shape = (n, dp.n_scales)
    low = rng.random(shape) < 0.5
    if dp.scale_type == "ue8m0":
        hi_a, hi_b = rng.integers(47, 58, (2, *shape))
        lo_a, lo_b = rng.integers(30, 41, (2, *shape))
    else:
        hi_a, hi_b = rng.integers(0x78, 0x7F, (2, *shape))
        lo_a, lo_b = rng.integers(0x01, 0x10, (2, *shape))
    return (np.where(low, lo_a, hi_a).astype(np.uint32),
            np.where(low, lo_b, hi_b).astype(np.uint32))


def _edge_c(dp, a, b, c, sa, sb, active, rng) -> np.ndarray:
    """C = +0 or -0 (half), a subnormal or tiny word, or aimed at the products."""
    n = len(c)
    pick = rng.random(n)
    width = get_format(dp.c).width
    tiny = rng.integers(0, 1 << (get_format(dp.c).frac_bits + 2), n).astype(np.uint32)
    tiny |= (rng.random(n) < 0.5).astype(np.uint32) << np.uint32(width - 1)
    aimed = _aim_c(dp, a, b, c, sa, sb, active, rng)
    zero = np.where(rng.random(n) < 0.8, 0, np.uint32(1) << np.uint32(width - 1))
    return np.where(pick < 0.5, zero, np.where(pick < 0.75, tiny, aimed)).astype(np.uint32)


def _aim_c(dp, a, b, c, sa, sb, active, rng) -> np.ndarray:
    """C = -(approximate product sum), perturbed in its last bits, zero or kept."""
    va, vb = _approx(dp.a_type, a), _approx(dp.b_type, b)
    if active is not None:
        va = np.where(active, va, 0.0)
    prod = va * vb
    if dp.block_scaled:
        rep = dp.scale_block
        scale = (np.repeat(_approx(dp.scale_type, sa), rep, axis=1)
                 * np.repeat(_approx(dp.scale_type, sb), rep, axis=1))[:, : dp.k]
        with np.errstate(all="ignore"):
            prod = prod * scale
    with np.errstate(all="ignore"):
        total = np.nan_to_num(prod.sum(axis=1), nan=0.0, posinf=0.0, neginf=0.0)
        total = np.clip(total, -3e38, 3e38) if dp.c != "f16" else np.clip(total, -6e4, 6e4)
    if dp.c == "f16":
        aimed = (-total).astype(np.float16).view(np.uint16).astype(np.uint32)
        aimed ^= rng.integers(0, 8, len(c)).astype(np.uint32)
        aimed &= 0xFFFF
    else:
        aimed = (-total).astype(np.float32).view(np.uint32)
        aimed ^= rng.integers(0, 1 << 6, len(c)).astype(np.uint32)
    if dp.c != "f16":  # a quarter of the cases: C a few binades below the sum
        below = rng.random(len(c)) < 0.25
        shift = rng.integers(1, 8, len(c)).astype(np.uint32) << np.uint32(23)
        exp = aimed & np.uint32(0x7F800000)
        ok = below & (exp > shift)
        aimed = np.where(ok, aimed - shift, aimed)
    pick = rng.random(len(c))
    out = np.where(pick < 0.7, aimed, c)
    out = np.where(pick > 0.9, 0, out)
    return _finite(dp.c, out.astype(np.uint32), rng)
