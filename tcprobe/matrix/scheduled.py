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
from tcprobe.models.formats import convert_input, get_format
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
        if reverse:  # tiles hi-1, ..., lo are tiles T-hi .. T-lo-1 of the reversed operands
            return self.reversed().run(start, self.tiles - hi, self.tiles - lo)
        if self.fast:
            return flow._fast_chain(self.mdl, self.a, self.b, acc, lo, hi, self.decoded,
                                    lambda _u: None, None, self.speed.jobs)
        return flow._tile_chain(self.mdl, self.a, self.b_t, acc, self.sa, self.sb, self.active,
                                lo, hi, lambda _u: None, self.speed)

    def reversed(self) -> Chains:
        """The same product with its K tiles in reverse order (each tile's own K
        order kept), so a reversed chain runs as one forward chain."""
        if getattr(self, "_rev", None) is None:
            rev = object.__new__(Chains)
            rev.__dict__.update(self.__dict__)
            k, t = self.dp.k, self.tiles

            def cols(x, per):  # (rows, tiles * per) with the tile blocks reversed
                return None if x is None else np.ascontiguousarray(
                    x.reshape(x.shape[0], t, per)[:, ::-1].reshape(x.shape[0], t * per))
            rev.a, rev.b_t = cols(self.a, k), cols(self.b_t, k)
            rev.b = np.ascontiguousarray(rev.b_t.T)
            rev.active = cols(self.active, k)
            if self.dp.block_scaled:
                rev.sa = cols(self.sa, self.dp.n_scales)
                rev.sb = np.ascontiguousarray(cols(np.ascontiguousarray(self.sb.T),
                                                   self.dp.n_scales).T)
            if self.decoded is not None:
                rev.decoded = gemm.decoders(self.mdl, rev.a, rev.b, rev.active)
            rev._rev, self._rev = self, rev
        return self._rev


def round_operands(s: Schedule, words: np.ndarray, fmt: str) -> np.ndarray:
    """Operand words as the kernel hands them to the instruction: rounded to
    tf32 where the schedule's ``operand_round`` says so (schedule module doc)."""
    if s.operand_round is None:
        return words
    if get_format(fmt).name != "tf32":
        raise MatmulError(f"schedule: operand_round rounds f32 words to tf32; {fmt} operands "
                          "have no such step")
    return convert_input(words, "tf32", s.operand_round).astype(np.uint32)


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
    if s.split_rule == "ceil":
        size = -(-blocks // s.split_k)
        if size * (s.split_k - 1) >= blocks:
            raise MatmulError(f"split_k={s.split_k}: {blocks} block(s) of {kb} in splits of "
                              f"{size} (split_rule='ceil') leave the last split empty")
        ranges = [(i * size, min(blocks, (i + 1) * size)) for i in range(s.split_k)]
    else:
        ranges = flow.split_ranges(blocks, s.split_k)
    return [(min(lo * per, tiles), min(hi * per, tiles)) for lo, hi in ranges]


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
    if s.c == "output":  # the product in the output type first, then C added to it in f32
        d = scheduled_words(ch, s.with_(c="epilogue"), None, None, out_fmt, alpha, beta, bias,
                            parts)
        if c32 is None or beta & 0x7FFFFFFF == 0:
            return d
        bc = c32 if beta == epilogue.ONE else epilogue.mul(beta, c32)
        return epilogue.convert_out(epilogue.add(epilogue.to_f32(d, out_fmt), bc), out_fmt, sat)

    def finish(acc, src, b, last=True):
        d = epilogue.linear(acc, src, alpha, b, s.fused, bias2 if last else None, s.fma_on)
        return epilogue.convert_out(d, out_fmt, sat)
    if s.split_kind == "serial":
        # the bias once, in the first split's epilogue, beside C: what cuBLASLt's
        # bias GEMM did on an H200 where it split K serially (tf32 256x256x4096,
        # 4 splits; reports/silicon/2026-12-04-h200)
        d = finish(parts[0], c32, beta, True)
        for p in parts[1:]:
            d = finish(p, epilogue.to_f32(d, out_fmt), epilogue.ONE, False)
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
    raise MatmulError(f"dtype: {out!r} names no output type ({', '.join(OUT_NAMES)})")


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
    from .operands import read

    m, n = flow.check_shapes(a.words.shape, b.words.shape)
    c = c_fmt = None
    if C is not None:
        cc = read(C, "C", C_FORMATS)
        if tuple(cc.words.shape) != (m, n):
            raise MatmulError(f"C is {tuple(cc.words.shape)} but A @ B is {(m, n)}")
        c, c_fmt = cc.words, cc.fmt
    bias_w = None
    if bias is not None:
        bo = read(bias, "bias", BIAS_FORMATS, ndim=1)
        if bo.words.shape != (n,):
            raise MatmulError(f"bias is {tuple(bo.words.shape)} but D has {n} columns")
        bias_w = bo
    words, out_fmt, _dp, _mdl = product(
        a, b, c, c_fmt, s, gpu=gpu, instr=instr, out=None if out is None else out_name(out),
        model=model, alpha=alpha, beta=beta, bias=bias_w, scale_a=scale_a, scale_b=scale_b,
        fast=fast, jobs=jobs)
    if progress is not None:
        progress(1, 1)
    return result_array(words, out_fmt, a.torch or b.torch)


def product(a, b, c, c_fmt, s: Schedule, *, gpu, instr, out, model, alpha, beta, bias=None,
            scale_a=None, scale_b=None, fast=None, jobs=None):
    """(D words, output format, datapath, model) of A @ B under ``s`` with C in
    the epilogue: operands as words (``a``, ``b``: Operand; ``c`` words of
    ``c_fmt`` or None; ``bias`` an Operand or None; ``out`` an output format
    name or None), shared by :func:`tcprobe.matmul` and ``tcprobe gemm``."""
    import tcprobe.matrix.choice as choice

    m, n = flow.check_shapes(a.words.shape, b.words.shape)
    k = a.words.shape[1]
    integer = get_format(a.fmt).kind.name == "INT"
    acc = s.acc or ("s32" if integer else "f32")
    if out is not None and s.out is not None and out != s.out:
        raise MatmulError(f"dtype: {out!r} differs from the schedule's out ({s.out})")
    out_fmt = s.out or out or c_fmt or acc
    if integer != (out_fmt == "s32") or (c_fmt is not None and integer != (c_fmt == "s32")):
        who = "C" if c_fmt is not None and integer != (c_fmt == "s32") else "dtype"
        raise MatmulError(f"{who}: {'an integer' if integer else 'a float'} product writes "
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
        if integer != (bias.fmt == "s32"):
            raise MatmulError(f"bias: dtype does not suit an {'integer' if integer else 'float'} "
                              "product")
        bias_w = bias.words if integer else epilogue.to_f32(bias.words, bias.fmt)
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
    ch = Chains(mdl, round_operands(s, a.words, a.fmt), round_operands(s, b.words, b.fmt), sa,
                sb, fast, jobs)
    return scheduled_words(ch, s, c, c_fmt, out_fmt, al, be, bias_w), out_fmt, dp, mdl
