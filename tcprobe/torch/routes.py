"""The routed aten ops: each cut into 2-D products for :meth:`Emulate.product`.

The form of each product (tcprobe.atlas.store) follows what torch asks the
library for: ``mm``/``bmm``/``mv`` and ``addmm`` with beta other than 1 are
``plain`` (C in the fused epilogue); ``addmm`` with beta = 1 and a 2-D C is
``addmm_beta1`` (measured on an H200: the product written in the output
type, then C added); ``addmm`` with a 1-D C of N values and beta = 1 is
``bias`` (torch hands it to cuBLASLt's bias epilogue; the conditions are
torch's, read from its source, assumed); ``_scaled_mm`` is ``scaled_mm`` or,
with ``use_fast_accum=True``, ``scaled_mm_fast``. C enters in its own dtype.
The out= and in-place overloads compute the same product and write it to
their target.
"""

from __future__ import annotations

import numpy as np
import torch

from .adapter import Unroutable, f32_words, fma, to_dtype
from .conv import conv_gemm

aten = torch.ops.aten
HALF = (torch.bfloat16, torch.float16)
FP8 = (torch.float8_e4m3fn, torch.float8_e5m2,  # OCP fp8; fnuz: MI300X's (the GPU gate refuses
       torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)  # either where its GPU has no such v_mfma)
OUT_FORMATS = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
# Matrix products that have no route here: run as torch would, counted
# (MATRIX_NAMES in mode.py catches the rest by name).
UNROUTED = {aten.dot.default, aten.vdot.default, aten.addr.default, aten.addbmm.default,
            aten.convolution_backward.default, aten._trilinear.default,
            aten._scaled_dot_product_flash_attention_for_cpu.default,
            aten._scaled_dot_product_flash_attention_for_cpu_backward.default,
            "_native_multi_head_attention", "_transformer_encoder_layer_fwd",
            "_addmm_activation",
            "_euclidean_dist"}  # torch.cdist's mm path (a GPU's cuBLAS GEMM, CPU torch's here)


def tf32_enabled() -> bool:
    """Whether torch would run an f32 GEMM on a GPU as tf32:
    ``torch.backends.cuda.matmul.allow_tf32`` or a float32 matmul precision
    below 'highest' (``torch.set_float32_matmul_precision``)."""
    return bool(torch.backends.cuda.matmul.allow_tf32) or \
        torch.get_float32_matmul_precision() != "highest"


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
        why = (" (f64 DMMA and v_mfma_f64 are modelled one instruction at a time, tcprobe.dot, "
               "not as a library GEMM)" if dt == torch.float64 else "")
        raise Unroutable(f"dtype {dt}: tcprobe models no tensor-core GEMM taking it{why}")
    return dt


def _dense(*ts):
    """Unroutable unless the operands are strided (dense) tensors (the mode
    brings a GPU's tensors to the host before a route runs)."""
    if any(t.layout != torch.strided for t in ts):
        raise Unroutable(f"{[t.layout for t in ts if t.layout != torch.strided][0]} tensors")


def _c_of(c, dt):
    """C in the product's dtype, as torch requires it (else torch's own error)."""
    if c.dtype != dt:
        raise Unroutable(f"C is {c.dtype}, the product {dt}")
    return c


def _mm(mode, op, a, b):
    _dense(a, b)
    dt = input_dtype(a, b, amd=mode.amd)  # D in the product's type: a serial split's
    return to_dtype(mode.product(op, a, b, out_dtype=dt), dt)  # partial D is written in it


def _addmm(mode, op, c, a, b, *, beta=1, alpha=1, form=None):
    _dense(c, a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    c = _c_of(c, dt)
    m, n = a.shape[0], b.shape[1]
    if c.dim() == 1 and c.shape[0] == n and beta == 1 and form is None and m > 0 and n > 0:
        return to_dtype(mode.product(op, a, b, alpha=alpha, bias=c, form="bias", out_dtype=dt),
                        dt)
    cc = c.expand(m, n)
    form = form or ("addmm_beta1" if beta == 1 else "plain")
    return to_dtype(mode.product(op, a, b, cc, alpha, beta, form=form), dt)


def _bmm(mode, op, a, b):
    _dense(a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    batch = a.shape[0]
    out = [mode.product(op, a[i], b[i], out_dtype=dt, batch=batch) for i in range(batch)]
    return to_dtype(_stack(out, (batch, a.shape[1], b.shape[2])), dt)


def _baddbmm(mode, op, c, a, b, *, beta=1, alpha=1):
    _dense(c, a, b)
    dt = input_dtype(a, b, amd=mode.amd)
    batch = a.shape[0]
    cc = _c_of(c, dt).expand(batch, a.shape[1], b.shape[2])
    out = [mode.product(op, a[i], b[i], cc[i], alpha, beta, batch=batch) for i in range(batch)]
    return to_dtype(_stack(out, cc.shape), dt)


def _out_dtype(dt, out_dtype):
    """The D dtype of a ``.dtype`` overload: the inputs' own or float32 (as
    cuBLAS writes an f32 D of 16-bit products)."""
    if out_dtype not in (dt, torch.float32):
        raise Unroutable(f"out_dtype {out_dtype} from {dt} products (float32 or {dt} route)")
    return out_dtype


def _mm_dtype(mode, op, a, b, out_dtype):
    """aten.mm.dtype (torch.mm(..., out_dtype=)): D written in out_dtype."""
    _dense(a, b)
    dt = _out_dtype(input_dtype(a, b, amd=mode.amd), out_dtype)
    return to_dtype(mode.product(op, a, b, out_dtype=dt), dt)


def _addmm_dtype(mode, op, c, a, b, out_dtype, *, beta=1, alpha=1):
    """aten.addmm.dtype: C widened exactly to out_dtype, D written in it."""
    _dense(c, a, b)
    dt = _out_dtype(input_dtype(a, b, amd=mode.amd), out_dtype)
    if c.dtype not in (dt, a.dtype):
        raise Unroutable(f"C is {c.dtype}, the product {a.dtype} -> {dt}")
    cc = c.to(dt).expand(a.shape[0], b.shape[1])
    form = "addmm_beta1" if beta == 1 and dt != torch.float32 else "plain"
    return to_dtype(mode.product(op, a, b, cc, alpha, beta, form=form), dt)


def _bmm_dtype(mode, op, a, b, out_dtype):
    _dense(a, b)
    dt = _out_dtype(input_dtype(a, b, amd=mode.amd), out_dtype)
    batch = a.shape[0]
    out = [mode.product(op, a[i], b[i], out_dtype=dt, batch=batch) for i in range(batch)]
    return to_dtype(_stack(out, (batch, a.shape[1], b.shape[2])), dt)


def _baddbmm_dtype(mode, op, c, a, b, out_dtype, *, beta=1, alpha=1):
    _dense(c, a, b)
    dt = _out_dtype(input_dtype(a, b, amd=mode.amd), out_dtype)
    if c.dtype not in (dt, a.dtype):
        raise Unroutable(f"C is {c.dtype}, the product {a.dtype} -> {dt}")
    batch = a.shape[0]
    cc = c.to(dt).expand(batch, a.shape[1], b.shape[2])
    out = [mode.product(op, a[i], b[i], cc[i], alpha, beta, batch=batch) for i in range(batch)]
    return to_dtype(_stack(out, cc.shape), dt)


def _mv(mode, op, a, v):
    return _mm(mode, op, a, v[:, None])[:, 0]


def _addmv(mode, op, c, a, v, *, beta=1, alpha=1):
    c = c.expand(a.shape[0])[:, None]
    return _addmm(mode, op, c, a, v[:, None], beta=beta, alpha=alpha, form="plain")[:, 0]


def _stack(words: list, shape) -> np.ndarray:
    return np.stack(words) if words else np.zeros(shape, np.uint32)


def _int_mm_shape(gpu, m: int, k: int, n: int) -> None:
    """torch's GPU ``_int_mm`` (``_int_mm_out_cuda``, aten/src/ATen/native/cuda/Blas.cpp)
    takes M > 16 and K, N positive multiples of 8; CPU torch takes any shape.
    A shape the GPU's torch refuses has no GPU word to model: refused here
    too, naming torch's rule (not computed and called the GPU's)."""
    bad = [f"{what} = {v}" for what, v, ok in (("M", m, m > 16), ("K", k, k > 0 and k % 8 == 0),
                                               ("N", n, n > 0 and n % 8 == 0)) if not ok]
    if bad:
        raise ValueError(f"_int_mm {m}x{k} @ {k}x{n} on {gpu}: {', '.join(bad)}: torch's GPU "
                         "_int_mm takes M > 16 and K and N multiples of 8 (and refuses this "
                         "shape; CPU torch takes it), so no GPU computes it: pad K and N to a "
                         "multiple of 8 and M past 16")


def _int_mm(mode, op, a, b):
    _dense(a, b)
    if a.dtype != torch.int8 or b.dtype != torch.int8:
        raise Unroutable(f"_int_mm takes int8, not {a.dtype} x {b.dtype}")
    _int_mm_shape(mode.gpu, a.shape[0], a.shape[1], b.shape[1])
    return torch.from_numpy(mode.product(op, a, b).view(np.int32).copy())


def _scaled_mm(mode, op, a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False):
    """fp8 A @ B as the GPU computes it in f32 (promoted into f32 every 4
    wgmma unless ``use_fast_accum``, as measured on an H200), then D =
    (scale_a * scale_b) * acc + bias in f32 (one fma after one product of the
    scales; tensorwise scalars or rowwise (M, 1) and (1, N) scales),
    converted to ``out_dtype``. The epilogue's order is cuBLASLt's documented
    D = scale_a*scale_b*acc + bias (measured with unit scales and no bias only)."""
    _dense(a, b)
    if a.dtype not in FP8 or b.dtype not in FP8:
        raise Unroutable(f"_scaled_mm routes fp8 operands, not {a.dtype} x {b.dtype}")
    out_dtype = a.dtype if out_dtype is None else out_dtype
    if out_dtype not in OUT_FORMATS or scale_result is not None:
        raise Unroutable(f"_scaled_mm to {out_dtype} (scale_result={scale_result is not None})")
    if scale_a.dtype != torch.float32 or scale_b.dtype != torch.float32:
        raise Unroutable("_scaled_mm routes float32 scales only")
    m, n = a.shape[0], b.shape[1]
    if scale_a.numel() not in (1, m) or scale_b.numel() not in (1, n):
        raise Unroutable(f"_scaled_mm scales of {scale_a.numel()} and {scale_b.numel()} values "
                         "(tensorwise and rowwise route; blockwise does not)")
    acc = mode.product(op, a, b, form="scaled_mm_fast" if use_fast_accum else "scaled_mm")
    sa = f32_words(scale_a.reshape(-1, 1) if scale_a.numel() == m else scale_a.reshape(1, 1))
    sb = f32_words(scale_b.reshape(1, -1) if scale_b.numel() == n else scale_b.reshape(1, 1))
    s = fma(sa, sb, np.uint32(0x80000000))
    add = (np.uint32(0x80000000) if bias is None
           else f32_words(bias.to(torch.float32).expand(m, n)))
    return to_dtype(fma(s, acc, add), out_dtype)


def _convolution(mode, op, x, w, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    _dense(x, w)
    dt = input_dtype(x, w, amd=mode.amd)
    if transposed:
        raise Unroutable("transposed convolution")
    return conv_gemm(mode, op, x, w, bias, stride, padding, dilation, groups, dt)


def _into(target: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    """``result`` written into an out= or in-place target, as torch does (same dtype)."""
    if target.dtype != result.dtype:
        raise Unroutable(f"out= of {target.dtype} for a {result.dtype} result")
    if target.shape != result.shape:
        target.resize_(result.shape)
    target.copy_(result)
    return target


def _out(route):
    def run(mode, op, *args, out, **kwargs):
        return _into(out, route(mode, op, *args, **kwargs))
    return run


def _inplace(route):
    def run(mode, op, self, *args, **kwargs):
        return _into(self, route(mode, op, self, *args, **kwargs))
    return run


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
    aten.mm.out: _out(_mm),
    aten.addmm.out: _out(_addmm),
    aten.bmm.out: _out(_bmm),
    aten.baddbmm.out: _out(_baddbmm),
    aten.mv.out: _out(_mv),
    aten.addmv.out: _out(_addmv),
    aten._int_mm.out: _out(_int_mm),
    aten._scaled_mm.out: _out(_scaled_mm),
    aten.mm.dtype: _mm_dtype,
    aten.addmm.dtype: _addmm_dtype,
    aten.bmm.dtype: _bmm_dtype,
    aten.baddbmm.dtype: _baddbmm_dtype,
    aten.mm.dtype_out: _out(_mm_dtype),
    aten.addmm.dtype_out: _out(_addmm_dtype),
    aten.bmm.dtype_out: _out(_bmm_dtype),
    aten.baddbmm.dtype_out: _out(_baddbmm_dtype),
    aten.addmm_.default: _inplace(_addmm),
    aten.baddbmm_.default: _inplace(_baddbmm),
    aten.addmv_.default: _inplace(_addmv),
}
