"""The random suites (raw, finite) and the sparse-lane suite."""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import Kind

from .registry import Ctx, register, sparse_masks
from .words import Bits, finite, raw, with_exponent, zero


def moderate(ctx: Ctx, fmt, bits: Bits, shape, spread: int = 6) -> np.ndarray:
    """Finite nonzero words with exponents near 1 (within +-spread, clipped
    to the format), random signs and fractions: values whose products and
    sums land well inside every window, so each lane shows in the result."""
    if fmt.kind == Kind.INT:
        v = bits.between(shape, 1, (1 << (fmt.width - 1)) - 1)
        if fmt.signed:
            v = np.where(bits.chance(shape, 1, 2), -v, v)
        return (v & fmt.word_mask).astype(np.uint32)
    e = bits.between(shape, -spread, spread)
    sign = bits.bits(shape, 1) if fmt.signed else 0
    return with_exponent(fmt, e, sign, bits.bits(shape, fmt.frac_bits))


@register("raw", "raw")
def gen_raw(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Uniformly random bit patterns of every word (NaN, Inf, subnormals and
    dropped bits included), scales too."""
    n, k = len(idx), ctx.k
    out = {"a": raw(ctx.fa, bits, (n, k)), "b": raw(ctx.fb, bits, (n, k)), "c": raw(ctx.fc, bits, n)}
    if ctx.fs is not None:
        out["scale_a"] = raw(ctx.fs, bits, (n, ctx.n_scales))
        out["scale_b"] = raw(ctx.fs, bits, (n, ctx.n_scales))
    return out


@register("finite", "finite")
def gen_finite(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Random finite words, exponents uniform over the whole range
    (subnormals and zeros included), random signs and fractions."""
    n, k = len(idx), ctx.k
    out = {"a": finite(ctx.fa, bits, (n, k)), "b": finite(ctx.fb, bits, (n, k)),
           "c": finite(ctx.fc, bits, n)}
    if ctx.fs is not None:
        out["scale_a"] = finite(ctx.fs, bits, (n, ctx.n_scales))
        out["scale_b"] = finite(ctx.fs, bits, (n, ctx.n_scales))
    return out


def _lane_counts(ctx: Ctx, idx: np.ndarray) -> np.ndarray:
    """The active-lane count of each case: the run's counts in turn, else
    0 .. the most a case can have."""
    if ctx.lanes:
        return np.asarray(ctx.lanes, np.int64)[idx % len(ctx.lanes)]
    return idx % (ctx.max_lanes + 1)


@register("sparse", "lanes")
def gen_lanes(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Exactly m nonzero product lanes at random positions, m = 0 .. K in
    turn (for sparse datapaths m counts selected positions, 0 .. K/2; a run
    may name the counts: ``--sparse-lanes``); the other lanes are zeros of
    random sign, C is zero or a moderate value."""
    n, k = len(idx), ctx.k
    a = moderate(ctx, ctx.fa, bits, (n, k))
    b = moderate(ctx, ctx.fb, bits, (n, k))
    order = np.argsort(bits.u64((n, k)), axis=1)  # a random permutation per case
    active = None
    if ctx.dp.sparse:
        active = sparse_masks(ctx, bits, n)
        m = _lane_counts(ctx, idx)
        # rank the selected positions first, in random order
        key = np.where(active, 0, 1) * k + np.argsort(order, axis=1)
        rank = np.argsort(np.argsort(key, axis=1), axis=1)
    else:
        m = _lane_counts(ctx, idx)
        rank = np.argsort(order, axis=1)
    live = rank < m[:, None]
    sign = bits.bits((n, k), 1)
    a = np.where(live, a, zero(ctx.fa, (n, k), sign if ctx.fa.signed else 0))
    c = np.where(bits.chance(n, 1, 2), moderate(ctx, ctx.fc, bits, n),
                 zero(ctx.fc, n, bits.bits(n, 1) if ctx.fc.signed else 0))
    out = {"a": a, "b": b, "c": c}
    if active is not None:
        # junk, NaN included, in every position the metadata does not select
        out["a"] = np.where(active, out["a"], raw(ctx.fa, bits, (n, k)))
        out["b"] = np.where(active, out["b"], raw(ctx.fb, bits, (n, k)))
        out["active"] = active
    return out


@register("sparse", "patterns", applies=lambda ctx: ctx.dp.sparse)
def gen_patterns(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Every selection pattern of a sparse datapath in turn, moderate values
    in the selected positions and raw junk (NaN included) elsewhere."""
    n, k = len(idx), ctx.k
    active = sparse_masks(ctx, bits, n, pattern=idx)
    a = np.where(active, moderate(ctx, ctx.fa, bits, (n, k)), raw(ctx.fa, bits, (n, k)))
    b = np.where(active, moderate(ctx, ctx.fb, bits, (n, k)), raw(ctx.fb, bits, (n, k)))
    return {"a": a, "b": b, "c": moderate(ctx, ctx.fc, bits, n), "active": active}
