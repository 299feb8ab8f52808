"""A GEMM run by a :class:`~.schedule.Schedule` on the instruction models.

:class:`Chains` prepares the operands once (K padded with +0 words, which is
exact; block scales, sparse A) and runs the instruction chain over any
range of K tiles from any start words, in either order, on the compiled GEMM
kernel where it covers the model, else tile by tile (:mod:`.flow`'s two
paths). :func:`scheduled_words` composes those chains as the schedule says
(splits, reduction, promotion) and finishes with the epilogue
(:mod:`.epilogue`).
"""

from __future__ import annotations

import numpy as np

import tcprobe.matrix.epilogue as epilogue
import tcprobe.matrix.flow as flow
from tcprobe.models import gemm
from tcprobe.models.fastpath import Speed
from tcprobe.models.formats import get_format
from tcprobe.models.model import Model

from .operands import MatmulError
from .schedule import Schedule


class Chains:
    """Instruction chains of one product: ``run(start, tiles)`` (module doc)."""

    def __init__(self, mdl: Model, a, b, sa=None, sb=None, fast: bool | None = None,
                 jobs: int | None = None):
        dp = self.dp = mdl.datapath
        self.mdl = mdl
        self.m, k = a.shape
        self.n = b.shape[1]
        self.speed = Speed(policy="auto", jobs=flow.threads(jobs))
        self.tiles = -(-k // dp.k)
        kp = self.tiles * dp.k
        a = flow._pad(a, kp, 0)
        self.b_t = flow._pad(np.ascontiguousarray(b.T), kp, 0)
        b = np.ascontiguousarray(self.b_t.T)
        if dp.block_scaled:
            one = get_format(dp.scale_type).bias << get_format(dp.scale_type).frac_bits
            sa, sb = (flow._pad(s, self.tiles * dp.n_scales, one) for s in (sa, sb))
        self.active = None
        if dp.sparse:
            self.active = flow.active_positions(dp, a)
            a = np.where(self.active, a, np.uint32(0)).astype(np.uint32)
        self.a, self.b, self.sa, self.sb = a, b, sa, sb
        self.fast = gemm.supports(mdl) if fast is None else bool(fast) and gemm.supports(mdl)
        self.decoded = None
        if self.fast and not dp.is_integer:
            self.decoded = gemm.decoders(mdl, a, b, self.active)
        self.zero = np.zeros((self.m, self.n), np.uint32)

    def run(self, start: np.ndarray | None, lo: int, hi: int, reverse: bool = False
            ) -> np.ndarray:
        """D words of the chain over tiles lo..hi (last first where ``reverse``)
        from ``start`` (None: +0)."""
        acc = self.zero if start is None else start
        if hi <= lo:
            return acc.copy()
        spans = [(t, t + 1) for t in range(hi - 1, lo - 1, -1)] if reverse else [(lo, hi)]
        for t0, t1 in spans:
            if self.fast:
                acc = flow._fast_chain(self.mdl, self.a, self.b, acc, t0, t1, self.decoded,
                                       lambda _u: None, None, self.speed.jobs)
            else:
                acc = flow._tile_chain(self.mdl, self.a, self.b_t, acc, self.sa, self.sb,
                                       self.active, t0, t1, lambda _u: None, self.speed)
        return acc


def split_tiles(s: Schedule, dp, tiles: int) -> list[tuple[int, int]]:
    """The schedule's splits as ranges of instruction tiles."""
    kb = dp.k if s.k_block is None else s.k_block
    if kb % dp.k:
        raise MatmulError(f"schedule: k_block={kb} is not a multiple of {dp.id}'s K ({dp.k})")
    per = kb // dp.k
    blocks = -(-tiles // per)
    if s.split_k > blocks:
        raise MatmulError(f"split_k={s.split_k} but K has only {blocks} block(s) of {kb} "
                          "(the schedule's split count)")
    return [(min(lo * per, tiles), min(hi * per, tiles))
            for lo, hi in flow.split_ranges(blocks, s.split_k)]


def partial(ch: Chains, s: Schedule, lo: int, hi: int, f32: bool) -> np.ndarray:
    """One split's accumulator words from +0: the chain, or with promotion the
    f32 register the promoted chunks are added into."""
    reverse = s.k_order == "reverse"
    if s.promote is None:
        return ch.run(None, lo, hi, reverse)
    if not f32:
        raise MatmulError("schedule: promote needs a float accumulator")
    starts = list(range(lo, hi, s.promote))
    if reverse:
        starts.reverse()
    reg = np.zeros((ch.m, ch.n), np.uint32)
    for t in starts:
        chunk = ch.run(None, t, min(hi, t + s.promote), reverse)
        reg = epilogue.add(reg, epilogue.to_f32(chunk, ch.dp.d_type))
    return reg


def scheduled_words(ch: Chains, s: Schedule, c, c_fmt: str | None, out_fmt: str, alpha: int,
                    beta: int, bias, parts: list | None = None) -> np.ndarray:
    """D words (M, N) of ``out_fmt``: the schedule's splits, reduction and
    epilogue over ``ch`` (C words of ``c_fmt`` or None; alpha, beta as f32
    words, or integers for an integer product; bias (N,) f32/s32 words or None).
    ``parts``: the splits' accumulators, computed already (f32 words)."""
    dp = ch.dp
    integer = dp.is_integer
    if parts is None:
        parts = [partial(ch, s, lo, hi, not integer) for lo, hi in split_tiles(s, dp, ch.tiles)]
    bias2 = None if bias is None else np.broadcast_to(bias, (ch.m, ch.n))
    if integer:
        acc = parts[0]
        for p in parts[1:]:
            acc = ((acc.astype(np.int64) + p) & 0xFFFFFFFF).astype(np.uint32)
        return epilogue.integer_linear(acc, c, alpha, beta, bias2)
    sat = get_format(out_fmt).width == 8 if s.saturate is None else s.saturate
    c32 = None if c is None else epilogue.to_f32(c, c_fmt)
    parts = [epilogue.to_f32(p, dp.d_type) for p in parts]

    def finish(acc, src, b, last=True):
        d = epilogue.linear(acc, src, alpha, b, s.fused, bias2 if last else None)
        return epilogue.convert_out(d, out_fmt, sat)
    if s.split_kind == "serial":  # the bias once, in the last split's epilogue
        d = finish(parts[0], c32, beta, len(parts) == 1)
        for i, p in enumerate(parts[1:], 2):
            d = finish(p, epilogue.to_f32(d, out_fmt), epilogue.ONE, i == len(parts))
        return d
    order = parts if s.reduction == "forward" else parts[::-1]
    acc = order[0]
    for p in order[1:]:
        acc = epilogue.add(acc, p)
    return finish(acc, c32, beta)


C_FORMATS = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "s32"}
BIAS_FORMATS = C_FORMATS
OUT_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "e4m3",
             "float8_e5m2": "e5m2", "int32": "s32"}
OUT_DTYPES = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def out_name(out) -> str:
    """The output format ``out=`` names: a dtype, its name or a format name."""
    name = out if isinstance(out, str) else str(getattr(out, "__name__", None) or out)
    name = name.removeprefix("torch.")
    if not isinstance(out, str) and not name.startswith("torch") and name not in OUT_NAMES:
        try:
            name = np.dtype(out).name
        except TypeError:
            pass
    if name in OUT_NAMES:
        return OUT_NAMES[name]
    if name in OUT_NAMES.values():
        return name
    raise MatmulError(f"out: {out!r} names no output type ({', '.join(OUT_NAMES)})")


def result_array(words: np.ndarray, fmt: str, as_torch: bool):
    """D words as an array of the output's dtype (ml_dtypes for bf16 and fp8)."""
    if fmt not in OUT_DTYPES:
        from .operands import result

        return result(words, fmt, as_torch)
    import ml_dtypes

    width = get_format(fmt).width
    raw = np.ascontiguousarray(words).astype(np.uint16 if width == 16 else np.uint8)
    if as_torch:
        import torch

        t = torch.from_numpy(raw.view(np.int16 if width == 16 else np.int8).copy())
        return t.view(getattr(torch, OUT_DTYPES[fmt]))
    return raw.view(getattr(ml_dtypes, OUT_DTYPES[fmt]))


def matmul(a, b, C, s: Schedule, *, gpu, instr, out, model, alpha, beta, bias, scale_a,
           scale_b, fast, jobs, progress):
    """:func:`tcprobe.matmul` with C in the epilogue (operands already read)."""
    import tcprobe.matrix.choice as choice

    from .operands import read

    m, n = flow.check_shapes(a.words.shape, b.words.shape)
    k = a.words.shape[1]
    integer = get_format(a.fmt).kind.name == "INT"
    c = c_fmt = None
    if C is not None:
        cc = read(C, "C", C_FORMATS)
        if tuple(cc.words.shape) != (m, n):
            raise MatmulError(f"C is {tuple(cc.words.shape)} but A @ B is {(m, n)}")
        c, c_fmt = cc.words, cc.fmt
    acc = s.acc or ("s32" if integer else "f32")
    out_fmt = s.out or (out_name(out) if out is not None else None)
    if out is not None and s.out is not None and out_name(out) != s.out:
        raise MatmulError(f"out: {out!r} differs from the schedule's out ({s.out})")
    out_fmt = out_fmt or c_fmt or acc
    if integer != (out_fmt == "s32") or (c_fmt is not None and integer != (c_fmt == "s32")):
        raise MatmulError(f"out: an {'integer' if integer else 'float'} product writes "
                          f"{'s32' if integer else 'a float'}, not {out_fmt if c_fmt is None else c_fmt}")
    if integer:
        for what, v in (("alpha", alpha), ("beta", beta)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise MatmulError(f"{what} must be an integer for an integer product, not {v!r}")
        al, be = int(alpha), int(beta)
    else:
        al, be = epilogue.f32_word(alpha, "alpha"), epilogue.f32_word(beta, "beta")
    bias_w = None
    if bias is not None:
        bo = read(bias, "bias", BIAS_FORMATS, ndim=1)
        if bo.words.shape != (n,):
            raise MatmulError(f"bias is {tuple(bo.words.shape)} but D has {n} columns")
        if integer != (bo.fmt == "s32"):
            raise MatmulError(f"bias: dtype does not suit an {'integer' if integer else 'float'} "
                              "product")
        bias_w = bo.words if integer else epilogue.to_f32(bo.words, bo.fmt)
    gpu = choice.gpu_name(gpu)
    scale, block, sa, sb = flow._scales(scale_a, scale_b, m, n, k)
    dp = choice.datapath(gpu, instr, a.fmt, b.fmt, acc, scale, block)
    if dp.c != dp.d_type:
        raise MatmulError(f"instr: {dp.id} takes C in {dp.c} but writes D in {dp.d_type}; "
                          "a chain over K needs them equal")
    if dp.block_scaled != (scale is not None):
        raise MatmulError(f"scale_a: {dp.id} {'needs' if dp.block_scaled else 'takes no'} "
                          "block scales")
    mdl = choice.model_for(dp, gpu, model)
    ch = Chains(mdl, a.words, b.words, sa, sb, fast, jobs)
    words = scheduled_words(ch, s, c, c_fmt, out_fmt, al, be, bias_w)
    if progress is not None:
        progress(1, 1)
    return result_array(words, out_fmt, a.torch or b.torch)
