"""The edge suite: named edge words, alone in one lane and mixed.

The first cases of ``grid`` walk every pair (A edge word, B edge word) in
turn, each with every C edge word, in one lane (moving over the lanes); so
a run of a few thousand edge cases has tried every combination once.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.formats import Kind

from .basic import moderate
from .registry import Ctx, register
from .words import Bits, one, specials, zero


def _words(fmt) -> np.ndarray:
    return np.array(list(specials(fmt).values()), fmt.dtype)


def _zeros(ctx: Ctx, fmt, bits: Bits, shape) -> np.ndarray:
    """Zeros of random sign (integer formats: 0)."""
    if fmt.kind != Kind.FLOAT or not fmt.signed:
        return zero(fmt, shape)
    return zero(fmt, shape, bits.bits(shape, 1))


@register("edge", "grid")
def gen_grid(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """One lane holds (A edge word) x (B edge word), every pair in turn, with
    every C edge word; the other lanes hold zeros of random sign. Covers
    Inf*0, NaN payloads in kept and dropped bits, one active lane."""
    n, k = len(idx), ctx.k
    wa, wb, wc = _words(ctx.fa), _words(ctx.fb), _words(ctx.fc)
    ia = idx % len(wa)
    ib = (idx // len(wa)) % len(wb)
    ic = (idx // (len(wa) * len(wb))) % len(wc)
    lane = (idx // (len(wa) * len(wb) * len(wc)) + idx) % k
    a = _zeros(ctx, ctx.fa, bits, (n, k))
    b = _zeros(ctx, ctx.fb, bits, (n, k))
    rows = np.arange(n)
    a[rows, lane] = wa[ia]
    b[rows, lane] = wb[ib]
    out = {"a": a, "b": b, "c": wc[ic]}
    if ctx.fs is not None:
        ws = _words(ctx.fs)
        out["scale_a"] = np.broadcast_to(ws[idx % len(ws)][:, None], (n, ctx.n_scales))
        out["scale_b"] = np.broadcast_to(ws[(idx // len(ws)) % len(ws)][:, None], (n, ctx.n_scales))
    return out


@register("edge", "mix")
def gen_mix(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Every lane and C drawn from the edge words (so several specials meet:
    +Inf and -Inf, NaN and Inf, largest finite values that overflow)."""
    n, k = len(idx), ctx.k
    return {"a": bits.pick((n, k), _words(ctx.fa)), "b": bits.pick((n, k), _words(ctx.fb)),
            "c": bits.pick(n, _words(ctx.fc))}


@register("edge", "zero-signs")
def gen_zero_signs(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Exact zero results: every product a zero of random sign (zero times a
    moderate value, or zero times zero) and C a zero of random sign; every
    other case with all signs negative (IEEE gives -0, the GPUs +0)."""
    n, k = len(idx), ctx.k
    a = _zeros(ctx, ctx.fa, bits, (n, k))
    b = moderate(ctx, ctx.fb, bits, (n, k))
    b = np.where(bits.chance((n, k), 1, 4), _zeros(ctx, ctx.fb, bits, (n, k)), b)
    c = _zeros(ctx, ctx.fc, bits, n)
    if ctx.fa.kind == Kind.FLOAT and ctx.fa.signed and ctx.fc.signed:
        # every other case: all products -0 * |b| and C = -0
        neg = (idx % 2 == 1)
        if ctx.fb.signed:
            b = b & ctx.fb.dtype((1 << (ctx.fb.width - 1)) - 1)
        a = np.where(neg[:, None], zero(ctx.fa, (n, k), 1), a)
        c = np.where(neg, zero(ctx.fc, n, 1), c)
    return {"a": a, "b": b, "c": c}


@register("edge", "one-lane")
def gen_one_lane(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """One lane with a moderate product, C an edge word or zero: each lane
    alone must carry its product to D."""
    n, k = len(idx), ctx.k
    a = _zeros(ctx, ctx.fa, bits, (n, k))
    b = _zeros(ctx, ctx.fb, bits, (n, k))
    rows, lane = np.arange(n), idx % k
    a[rows, lane] = moderate(ctx, ctx.fa, bits, n)
    b[rows, lane] = moderate(ctx, ctx.fb, bits, n)
    c = np.where(bits.chance(n, 1, 2), bits.pick(n, _words(ctx.fc)), _zeros(ctx, ctx.fc, bits, n))
    return {"a": a, "b": b, "c": c}


@register("edge", "c-only")
def gen_c_only(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Every product zero: D is C passed through the datapath (C edge words,
    subnormal and large C values)."""
    n, k = len(idx), ctx.k
    wc = _words(ctx.fc)
    c = np.where(idx % 2 == 0, wc[(idx // 2) % len(wc)], moderate(ctx, ctx.fc, bits, n, spread=40))
    return {"a": _zeros(ctx, ctx.fa, bits, (n, k)), "b": moderate(ctx, ctx.fb, bits, (n, k)),
            "c": c}


@register("edge", "scales", applies=lambda ctx: ctx.fs is not None)
def gen_scales(ctx: Ctx, bits: Bits, idx: np.ndarray):
    """Block scales at their edge words (smallest, largest, NaN) on unit
    products: the scale path's specials and range."""
    n, k = len(idx), ctx.k
    ws = _words(ctx.fs)
    return {"a": one(ctx.fa, (n, k)), "b": one(ctx.fb, (n, k)),
            "c": _zeros(ctx, ctx.fc, bits, n),
            "scale_a": bits.pick((n, ctx.n_scales), ws), "scale_b": bits.pick((n, ctx.n_scales), ws)}
