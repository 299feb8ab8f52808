"""The one place tcprobe.torch calls :func:`tcprobe.matmul`.

:func:`gemm` computes D (M, N) in f32 words for one 2-D product under the
library schedule (``tcprobe.matrix.schedule``; default ``cublas``: C, alpha
and beta in the fused f32 epilogue; ``cublas-tf32`` for f32 operands),
through the one matrix pipeline. The ``chain`` schedule takes alpha = beta
= 1 only: other alpha or beta under it are unroutable (no second epilogue
is made up here). The f32 operations the routes apply after a product
(``_scaled_mm``'s scales, a convolution's bias) are the matrix epilogue's
(:mod:`tcprobe.matrix.epilogue`). Which schedule runs is the caller's (mode.py asks
the library atlas, tcprobe.atlas, per shape). On an AMD GPU f32 operands go to
the v_mfma unrounded (hipBLASLt passes them on: the xf32 MFMA truncates them
itself, the f32 MFMA reads all their bits; mode.py picks which).
"""

from __future__ import annotations

import numpy as np
import torch

import tcprobe
from tcprobe.matrix import epilogue
from tcprobe.matrix.schedule import from_value
from tcprobe.models import isa_amd

NEG_ZERO = 0x80000000
fma = epilogue.fma  # x * y + z in f32 words, one RNE rounding (the matrix epilogue's)
# An f32 GEMM that torch runs as tf32: cuBLAS's kernels round each operand to
# tf32 with RNE before the instruction (which itself would truncate): measured
# on an H200, torch 2.11 / cuBLAS 13.1 (reports/silicon/2026-12-04-h200).
TF32_SCHEDULE = "cublas-tf32"
F32_ONE = 0x3F800000


class Unroutable(Exception):
    """A call with no tensor-core route (the message says why): it runs as torch would."""


def f32_words(t: torch.Tensor) -> np.ndarray:
    """The uint32 words of an f32 tensor (any shape, contiguous copy)."""
    return t.detach().contiguous().view(torch.int32).numpy().view(np.uint32).copy()


def f32_tensor(words: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(words, np.uint32).view(np.int32).copy()
                            ).view(torch.float32)


def to_dtype(words: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """f32 words converted (RNE, IEEE overflow) to a tensor of ``dtype``
    (float32, bfloat16 or float16), as a GEMM's epilogue writes D."""
    if dtype == torch.float32:
        return f32_tensor(words)
    fmt = {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
    out = epilogue.convert_out(words, fmt, False).astype(np.uint16).view(np.int16)
    return torch.from_numpy(np.ascontiguousarray(out)).view(dtype)


def gemm(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor | None = None, *, gpu, instr=None,
         model=None, schedule=None, alpha: int | float = 1, beta: int | float = 1,
         bias: torch.Tensor | None = None, out_dtype: torch.dtype | None = None,
         backend: str | None = None) -> np.ndarray:
    """D = alpha * (A @ B) + beta * C (+ bias) as ``gpu`` computes it under
    ``schedule``: A (M, K), B (K, N) CPU tensors of an input dtype tcprobe
    takes (float32 read as tf32), C (M, N) in its own dtype (the output's:
    the epilogue reads it as the kernel does, and ``c='output'`` adds it to
    the product written in that type) or None, ``bias`` (N,) or None (the
    bias epilogue). ``out_dtype``: D's dtype where C is None (default f32).
    Returns D's words widened exactly to f32 words (uint32), or int32 words
    for integer inputs. Zero-size M, N or K follow BLAS (an empty product is
    +0). Raises tcprobe's ValueError where the GPU has no instruction for
    the formats (the module doc says how C enters)."""
    m = a.shape[0]
    n = b.shape[1]
    integer = not a.dtype.is_floating_point
    if m == 0 or n == 0:
        return np.zeros((m, n), np.uint32)
    kw = {"gpu": gpu, "instr": instr, "model": model, "backend": backend}
    if schedule is None and a.dtype == torch.float32 and gpu not in isa_amd.GPU_ARCH:
        schedule = TF32_SCHEDULE  # cuBLAS rounds f32 operands to tf32 (RNE) before the MMA
    if schedule is not None:
        kw["schedule"] = schedule
    if integer:
        d = tcprobe.matmul(a, b, gpu=gpu, instr=instr, model=model, backend=backend)
        return d.view(torch.int32).numpy().view(np.uint32)
    with np.errstate(over="ignore", under="ignore"):  # torch hands the library f32 scalars
        alpha, beta = np.float32(alpha), np.float32(beta)  # (1e-50 is 0 there, 1e39 is inf)
    a_w, b_w = a, b  # K = 0: tcprobe.matmul's empty sum (resolve.fill_empty_k)
    chain = schedule is not None and from_value(schedule).c == "accumulator"
    if chain and bias is not None:  # the chain has no bias epilogue: the bias is C
        c, beta = bias.to(torch.float32).expand(m, n).contiguous(), 1
        bias = None
    if chain and c is not None:  # the chain accumulates in C's type: f32
        c = c.to(torch.float32)
    if not chain or (alpha == 1 and (c is None or beta == 1)):
        if c is not None:
            d = tcprobe.matmul(a_w, b_w, c.contiguous(), alpha=alpha, beta=beta, **kw)
        else:
            # D in the product's type (a serial split writes its partial D in it); the
            # chain's D leaves its f32 accumulators once, converted by the caller
            name = "float32" if chain else {torch.bfloat16: "bfloat16",
                                            torch.float16: "float16"}.get(out_dtype, "float32")
            bw = None if bias is None else bias.to(torch.float32).contiguous()
            d = tcprobe.matmul(a_w, b_w, dtype=name, alpha=alpha, bias=bw, **kw)
        return f32_words(d.to(torch.float32))
    raise Unroutable(f"the chain schedule (C as the first accumulator) takes alpha = beta = 1, "
                     f"not alpha {alpha}, beta {beta}")
