"""Convolutions lowered to one implicit GEMM per group, with the K order modelled.

The K order is CUTLASS's implicit GEMM forward (fprop) on NHWC activations
and KRSC filters: GEMM-K runs over filter positions (r, s), r outer, and
within each position over the input channels c, fastest; a channel tile of
``CHANNEL_TILE`` channels (None: all of C at once) wraps the (r, s) loop
(CUTLASS's analytic activation iterator advances s, then r, then the
channel tile). Channels short of a tile are zero, which is exact. This
order is taken from CUTLASS's source, not measured: which kernel cuDNN
picks for a given shape, and its tile, are unmeasured. Rows of the GEMM
are the output pixels (n, p, q); columns the output channels. The bias is
added after D is written in the output dtype (torch adds it as a separate
op after cuDNN's convolution): an f32 add rounded once (RNE) to that dtype.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .adapter import F32_ONE, Unroutable, f32_words, fma, to_dtype

CHANNEL_TILE: int | None = None


def _k_order(x: torch.Tensor, c: int, r: int, s: int, tile: int) -> torch.Tensor:
    """(..., c*r*s) in torch's (c, r, s) order -> (..., tiles*r*s*tile) in the modelled order."""
    lead = x.shape[:-1]
    x = x.reshape(*lead, c, r, s)
    tiles = -(-c // tile)
    if tiles * tile != c:
        pad = torch.zeros(*lead, tiles * tile - c, r, s, dtype=x.dtype)
        x = torch.cat([x, pad], dim=-3)
    x = x.reshape(*lead, tiles, tile, r, s)
    nd = len(lead)
    x = x.permute(*range(nd), nd, nd + 2, nd + 3, nd + 1)
    return x.reshape(*lead, tiles * r * s * tile)


def conv_gemm(mode, op, x, w, bias, stride, padding, dilation, groups, dt):
    """aten.convolution (not transposed) of a 1-D or 2-D input, as implicit GEMMs."""
    if x.dim() not in (3, 4):
        raise Unroutable(f"convolution of a {x.dim()}-D input (1-D and 2-D convolutions route)")
    if isinstance(padding, str):
        raise Unroutable(f"padding={padding!r}")
    dims = x.dim() - 2  # aten may give one value for every spatial dimension ([0]: 'valid')
    stride, padding, dilation = (tuple(v) * dims if len(v) == 1 else tuple(v)
                                 for v in (stride, padding, dilation))
    one_d = x.dim() == 3
    if one_d:
        x, w = x.unsqueeze(2), w.unsqueeze(2)
        stride, padding, dilation = (1, *stride), (0, *padding), (1, *dilation)
    n, c_in, h, wd = x.shape
    o, cg, r, s = w.shape
    p = (h + 2 * padding[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    q = (wd + 2 * padding[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    cols = F.unfold(x, (r, s), dilation=tuple(dilation), padding=tuple(padding),
                    stride=tuple(stride))  # (n, c_in*r*s, p*q), K in (c, r, s) order
    og = o // groups
    tile = CHANNEL_TILE or cg
    outs = []
    for g in range(groups):
        a = cols[:, g * cg * r * s:(g + 1) * cg * r * s].transpose(1, 2).reshape(-1, cg * r * s)
        b = w[g * og:(g + 1) * og].reshape(og, cg * r * s)
        a, b = _k_order(a, cg, r, s, tile), _k_order(b, cg, r, s, tile).t()
        outs.append(mode.product(op, a.contiguous(), b.contiguous(), out_dtype=dt))
    words = np.concatenate(outs, axis=1) if outs else np.zeros((n * p * q, o), np.uint32)
    out = to_dtype(words, dt).reshape(n, p, q, o).permute(0, 3, 1, 2)
    if bias is not None:
        y = f32_words(out.to(torch.float32))
        bw = f32_words(bias.to(torch.float32)).reshape(1, o, 1, 1)
        out = to_dtype(fma(y, np.uint32(F32_ONE), bw), dt)
    out = out.contiguous()
    return out.squeeze(2) if one_d else out
