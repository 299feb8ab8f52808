"""The dispatch mode: aten's matrix products routed to tcprobe, the rest as torch runs them.

A :class:`~torch.utils._python_dispatch.TorchDispatchMode` sees the aten
ops under every module, functional and autograd backward, after torch's
decompositions: ``matmul`` reaches it as ``mm``/``bmm``/``mv`` on
expanded and reshaped views, ``linear`` as ``addmm`` (bias as C) or
``mm``, the backward of mm/linear as ``mm`` on transposed views. Each
routed op is cut into 2-D products (a batch is a loop over its
matrices) done by :func:`.adapter.gemm`; D is f32 and converted (RNE) to
the op's output dtype, as a cuBLAS/CUTLASS epilogue writes bf16/f16.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tcprobe.models import amd_profiles, isa_amd
from tcprobe.models.formats import ulp_distance

from .adapter import Unroutable, f32_tensor, f32_words, fma, gemm, to_dtype
from .conv import conv_gemm
from .report import Record, Report

aten = torch.ops.aten
HALF = (torch.bfloat16, torch.float16)
FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)
OUT_FORMATS = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
# Matrix products that have no route here: run as torch would, counted.
UNROUTED = {aten.dot.default, aten.vdot.default, aten.addr.default, aten.addbmm.default,
            aten.convolution_backward.default,
            aten._scaled_dot_product_flash_attention_for_cpu.default,
            aten._scaled_dot_product_flash_attention_for_cpu_backward.default}


def tf32_enabled() -> bool:
    """Whether torch would run an f32 GEMM on a GPU as tf32:
    ``torch.backends.cuda.matmul.allow_tf32`` or a float32 matmul precision
    below 'highest' (``torch.set_float32_matmul_precision``)."""
    return bool(torch.backends.cuda.matmul.allow_tf32) or \
        torch.get_float32_matmul_precision() != "highest"


class Emulate(TorchDispatchMode):
    """``with emulate(gpu=...):`` every routed aten op as ``gpu``'s tensor cores
    compute it. ``instr``, ``model``, ``schedule``: as :func:`tcprobe.matmul`.
    ``strict=True``: an op that cannot be routed raises a ValueError naming
    it, instead of running as torch would. ``report``: a :class:`Report`."""

    def __init__(self, gpu, instr=None, schedule=None, model=None, strict=False, report=None):
        super().__init__()
        from tcprobe.matrix import choice

        self.gpu = choice.gpu_name(gpu)
        self.amd = self.gpu in isa_amd.GPU_ARCH
        if report is not None and not isinstance(report, Report):
            raise ValueError(f"report must be a tcprobe.torch.Report, not {type(report).__name__}")
        self.instr, self.schedule, self.model = instr, schedule, model
        self.strict = bool(strict)
        self.report = report if report is not None else Report()
        self._pairs: list | None = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = ROUTES.get(func)
        if route is None:
            if func in UNROUTED:
                return self._fallback(func, args, kwargs, "no tensor-core route here")
            return func(*args, **kwargs)
        name = str(func.overloadpacket.__name__)
        self._pairs = [] if self.report.compare else None
        start = time.perf_counter()
        try:
            out = route(self, name, *args, **kwargs)
        except Unroutable as e:
            return self._fallback(func, args, kwargs, str(e))
        stats = self.report.stats(name)
        stats.routed += 1
        stats.seconds += time.perf_counter() - start
        if self.report.compare:
            self._compare(stats, out, func(*args, **kwargs))
        return out

    def _fallback(self, func, args, kwargs, reason: str):
        name = str(func.overloadpacket.__name__)
        if self.strict:
            raise ValueError(f"strict: aten.{name} cannot run on {self.gpu}'s tensor cores: "
                             f"{reason}")
        self.report.stats(name).fallback += 1
        self.report.fallbacks.append((name, reason))
        return func(*args, **kwargs)

    def _compare(self, stats, ours: torch.Tensor, theirs: torch.Tensor) -> None:
        if ours.numel() == 0 or ours.dtype not in OUT_FORMATS:
            return
        fmt = OUT_FORMATS[ours.dtype]
        view = torch.int32 if fmt == "f32" else torch.int16
        mask = 0xFFFFFFFF if fmt == "f32" else 0xFFFF
        w = [t.contiguous().view(view).numpy().astype(np.int64) & mask for t in (ours, theirs)]
        stats.max_ulp = max(stats.max_ulp, int(np.abs(ulp_distance(fmt, w[0], w[1])).max()))
        if self._pairs:
            denom = torch.cat([(a.double().abs() @ b.double().abs()).ravel()
                               for a, b in self._pairs]).reshape(ours.shape)
            diff = (ours.double() - theirs.double()).abs() / denom.clamp_min(1e-300)
            diff = diff[torch.isfinite(diff)]
            if diff.numel():
                stats.max_rel = max(stats.max_rel, float(diff.max()))

    # -- the 2-D product every route goes through ----------------------------------------

    def product(self, op: str, a, b, c=None, alpha=1, beta=1) -> np.ndarray:
        """D words of one 2-D product (adapter.gemm), noted in the report."""
        from tcprobe.matrix.operands import MatmulError

        instr = self.instr
        if instr is None and self.amd and a.dtype == torch.float32 and tf32_enabled():
            xf32 = amd_profiles.xf32_datapath(self.gpu)  # MI300X: hipBLASLt's xf32 MFMA
            instr = None if xf32 is None else xf32.id
        try:
            words = gemm(a, b, c, gpu=self.gpu, instr=instr, model=self.model,
                         schedule=self.schedule, alpha=alpha, beta=beta)
        except MatmulError as e:
            if str(e).startswith(("A:", "B:", "C:", "instr:")):
                raise Unroutable(str(e)) from None
            raise
        self.report.stats(op).shapes.append((tuple(a.shape), tuple(b.shape)))
        if self._pairs is not None:
            self._pairs.append((a, b))
        if self.report.record:
            d = (f32_tensor(words) if a.dtype.is_floating_point
                 else torch.from_numpy(words.view(np.int32).copy()))
            self.report.records.append(Record(op, a.clone(), b.clone(),
                                              None if c is None else c.clone(), alpha, beta, d))
        return words


def input_dtype(*ts, amd: bool = False) -> torch.dtype:
    """The one input dtype of a floating product, or Unroutable. ``amd``: an
    AMD GPU, whose f32 MFMA takes float32 at any precision."""
    dts = {t.dtype for t in ts}
    if len(dts) != 1:
        raise Unroutable(f"mixed input dtypes {sorted(map(str, dts))}")
    dt = dts.pop()
    if dt == torch.float32:
        if not tf32_enabled() and not amd:
            raise Unroutable("float32 at 'highest' precision runs on no tensor core "
                             "(allow_tf32 / set_float32_matmul_precision select tf32)")
        return dt
    if dt not in HALF:
        raise Unroutable(f"dtype {dt} has no tensor-core GEMM here")
    return dt


def _cpu(*ts):
    if any(t.device.type != "cpu" for t in ts):
        raise Unroutable("tcprobe emulates CPU tensors only")


def _mm(mode, op, a, b):
    _cpu(a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    return to_dtype(mode.product(op, a, b), dt)


def _addmm(mode, op, c, a, b, *, beta=1, alpha=1):
    _cpu(c, a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    cc = c.expand(a.shape[0], b.shape[1]).to(torch.float32)
    return to_dtype(mode.product(op, a, b, cc, alpha, beta), dt)


def _bmm(mode, op, a, b):
    _cpu(a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    out = [mode.product(op, a[i], b[i]) for i in range(a.shape[0])]
    return to_dtype(_stack(out, (a.shape[0], a.shape[1], b.shape[2])), dt)


def _baddbmm(mode, op, c, a, b, *, beta=1, alpha=1):
    _cpu(c, a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    cc = c.expand(a.shape[0], a.shape[1], b.shape[2]).to(torch.float32)
    out = [mode.product(op, a[i], b[i], cc[i], alpha, beta) for i in range(a.shape[0])]
    return to_dtype(_stack(out, cc.shape), dt)


def _mv(mode, op, a, v):
    return _mm(mode, op, a, v[:, None])[:, 0]


def _addmv(mode, op, c, a, v, *, beta=1, alpha=1):
    return _addmm(mode, op, c.expand(a.shape[0])[:, None], a, v[:, None],
                  beta=beta, alpha=alpha)[:, 0]


def _stack(words: list, shape) -> np.ndarray:
    return np.stack(words) if words else np.zeros(shape, np.uint32)


def _int_mm(mode, op, a, b):
    _cpu(a, b)
    if a.dtype != torch.int8 or b.dtype != torch.int8:
        raise Unroutable(f"_int_mm takes int8, not {a.dtype} x {b.dtype}")
    return torch.from_numpy(mode.product(op, a, b).view(np.int32).copy())


def _scaled_mm(mode, op, a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False):
    """fp8 A @ B as the GPU computes it in f32, then D = (scale_a * scale_b) * acc
    + bias in f32 (one fma after one product of the scales; tensorwise
    scalars or rowwise (M, 1) and (1, N) scales), converted to ``out_dtype``.
    The epilogue's order is cuBLASLt's documented D = scale_a*scale_b*acc + bias
    (assumed, unmeasured)."""
    _cpu(a, b)
    if a.dtype not in FP8 or b.dtype not in FP8:
        raise Unroutable(f"_scaled_mm routes fp8 operands, not {a.dtype} x {b.dtype}")
    out_dtype = a.dtype if out_dtype is None else out_dtype
    if out_dtype not in OUT_FORMATS or scale_result is not None:
        raise Unroutable(f"_scaled_mm to {out_dtype} (scale_result={scale_result is not None})")
    if scale_a.dtype != torch.float32 or scale_b.dtype != torch.float32:
        raise Unroutable("_scaled_mm routes float32 scales only")
    m, n = a.shape[0], b.shape[1]
    acc = mode.product(op, a, b)
    sa = f32_words(scale_a.reshape(-1, 1) if scale_a.numel() == m else scale_a.reshape(1, 1))
    sb = f32_words(scale_b.reshape(1, -1) if scale_b.numel() == n else scale_b.reshape(1, 1))
    s = fma(sa, sb, np.uint32(0x80000000))
    add = (np.uint32(0x80000000) if bias is None
           else f32_words(bias.to(torch.float32).expand(m, n)))
    return to_dtype(fma(s, acc, add), out_dtype)


def _convolution(mode, op, x, w, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    _cpu(x, w)
    dt = input_dtype(x, w, amd=mode.amd)
    if transposed:
        raise Unroutable("transposed convolution")
    return conv_gemm(mode, op, x, w, bias, stride, padding, dilation, groups, dt)


ROUTES = {
    aten.mm.default: _mm,
    aten.addmm.default: _addmm,
    aten.bmm.default: _bmm,
    aten.baddbmm.default: _baddbmm,
    aten.mv.default: _mv,
    aten.addmv.default: _addmv,
    aten._int_mm.default: _int_mm,
    aten._scaled_mm.default: _scaled_mm,
    aten.convolution.default: _convolution,
}


def emulate(gpu, instr=None, schedule=None, model=None, strict=False, report=None) -> Emulate:
    """A context manager running the block's matrix products as ``gpu``'s
    tensor cores compute them (module doc; :class:`Emulate` for the
    arguments). ``schedule`` needs tcprobe.matmul's library schedules."""
    return Emulate(gpu, instr=instr, schedule=schedule, model=model, strict=strict,
                   report=report)
