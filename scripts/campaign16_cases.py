"""Campaign 16's cases (docs/campaign-16.md): tcprobe.torch.emulate under
the torch a real model runs (modules, functional ops, einsum and friends,
autocast, no_grad, backward, odd tensors, nested and re-entered blocks,
exceptions and generators, strict=True on every unrouted op, the Report
against what ran), then fit-gemm and ``python -m tcprobe.capture.torch_gemm``
with odd manifests.

API: (class, expected, code) run in a copy of PRELUDE's namespace; PROC:
(class, expected, argv, env, cwd, check) as real processes. Expected bits
are worked out by hand: a sum of K products of exact ones is K (f16 16.0 =
0x4C00, f32 16.0 = 0x41800000, 12.0 = 0x41400000, 18.0 = 0x41900000,
33.0 = 2*16 + 1 = 0x42040000); a value 1 + 2^-12 has no tf32 (10-bit
fraction) form and rounds to 1.0 on a tensor core, so 16 of them sum to
exactly 16 where CPU f32 gives 16 + 2^-8 = 16.00390625."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PRELUDE = r'''
import functools, numpy as np, torch, tcprobe, tcprobe.torch as tt
import torch.nn as nn, torch.nn.functional as F
W16, W12, W18, W33, W8, W0 = 0x41800000, 0x41400000, 0x41900000, 0x42040000, 0x41000000, 0
torch.manual_seed(0)
def words(x):
    x = np.asarray(x.detach().float() if hasattr(x, "detach") else x, np.float32)
    return sorted(set(np.ascontiguousarray(x).view(np.uint32).ravel().tolist()))
def is_(x, w):
    got = words(x)
    assert got == [w], f"words {[hex(v) for v in got[:3]]}, not {hex(w)}"
def E(fn, gpu="H100", **kw):
    rep = kw.pop("report", None) or tt.Report()
    with tt.emulate(gpu=gpu, report=rep, **kw):
        out = fn()
    assert torch._C._len_torch_dispatch_stack() == 0, "a mode left on torch's stack"
    return out, rep
def h(*s, dt=torch.float16, **kw):
    return torch.ones(*s, dtype=dt, **kw)
def clean():
    assert torch._C._len_torch_dispatch_stack() == 0, "a mode left on torch's stack"
    r = tt.Report()
    h(8, 16) @ h(16, 8)
    assert r.routed == 0
def refused(fn, gpu="H100", strict=True, word="strict:"):
    try:
        E(fn, gpu=gpu, strict=strict)
    except ValueError as e:
        assert word in str(e), str(e)
        clean()
        raise
    raise AssertionError("not refused")
'''

N = "API emulate: nn modules a model uses"
OPS = "API emulate: einsum, tensordot, multi_dot, addr and friends"
G = "API emulate: autocast, no_grad, inference_mode, backward"
T = "API emulate: dtypes and odd tensors"
B = "API emulate: blocks (nested, decorator, exceptions, generators)"
S = "API emulate: strict on every unrouted op"
R = "API emulate: the Report against what ran"
Z = "API emulate: empty and degenerate products"

API = [
    # -- modules -------------------------------------------------------------------------
    (N, "ok", "l = nn.Linear(16, 8).half(); nn.init.ones_(l.weight); nn.init.zeros_(l.bias)\n"
              "y, r = E(lambda: l(h(4, 16))); is_(y, W16); assert r.ops['addmm'].routed == 1"),
    (N, "ok", "l = nn.Linear(16, 8, bias=False).half(); nn.init.ones_(l.weight)\n"
              "y, r = E(lambda: l(h(4, 16))); is_(y, W16); assert r.ops['mm'].routed == 1"),
    (N, "ok", "l = nn.Linear(16, 8, bias=False).half(); nn.init.ones_(l.weight)\n"
              "y, r = E(lambda: l(h(2, 3, 16))); is_(y, W16); assert y.shape == (2, 3, 8)"),
    (N, "ok", "l = nn.Linear(16, 8, bias=False).half(); nn.init.ones_(l.weight)\n"
              "y, r = E(lambda: l(h(2, 3, 5, 16))); is_(y, W16); assert y.shape == (2, 3, 5, 8)"),
    (N, "ok", "l = nn.Linear(16, 8).half(); nn.init.ones_(l.weight); nn.init.ones_(l.bias)\n"
              "y, r = E(lambda: l(h(4, 16))); is_(y, 0x41880000)"),
    (N, "ok", "l = nn.Linear(16, 8).bfloat16(); nn.init.ones_(l.weight); nn.init.zeros_(l.bias)\n"
              "y, r = E(lambda: l(h(4, 16, dt=torch.bfloat16))); is_(y, W16); assert y.dtype == torch.bfloat16"),
    (N, "ok", "c = nn.Conv1d(4, 2, 3, bias=False).half(); nn.init.ones_(c.weight)\n"
              "y, r = E(lambda: c(h(1, 4, 8))); is_(y, W12); assert y.shape == (1, 2, 6); assert r.ops['convolution'].routed == 1"),
    (N, "ok", "c = nn.Conv2d(2, 2, 3, bias=False).half(); nn.init.ones_(c.weight)\n"
              "y, r = E(lambda: c(h(1, 2, 5, 5))); is_(y, W18); assert y.shape == (1, 2, 3, 3)"),
    (N, "ok", "c = nn.Conv2d(2, 4, 3, padding=1, bias=False).half(); nn.init.ones_(c.weight)\n"
              "y, r = E(lambda: c(h(1, 2, 5, 5))); assert y.shape == (1, 4, 5, 5); assert float(y[0, 0, 2, 2]) == 18 and float(y[0, 0, 0, 0]) == 8"),
    (N, "ok", "c = nn.Conv2d(4, 4, 3, groups=2, bias=False).half(); nn.init.ones_(c.weight)\n"
              "y, r = E(lambda: c(h(1, 4, 5, 5))); is_(y, W18)"),
    (N, "ok", "c = nn.Conv2d(2, 2, 3, stride=2, dilation=1, bias=False).half(); nn.init.ones_(c.weight)\n"
              "y, r = E(lambda: c(h(1, 2, 7, 7))); is_(y, W18); assert y.shape == (1, 2, 3, 3)"),
    (N, "ok", "c = nn.Conv2d(2, 2, 3, bias=False).half().to(memory_format=torch.channels_last); nn.init.ones_(c.weight)\n"
              "x = h(1, 2, 5, 5).to(memory_format=torch.channels_last)\n"
              "y, r = E(lambda: c(x)); is_(y, W18)"),
    (N, "ok", "c = nn.ConvTranspose1d(2, 2, 3).half()\n"
              "y, r = E(lambda: c(h(1, 2, 5))); ref = c(h(1, 2, 5))\n"
              "assert torch.equal(y, ref); assert r.fallback == 1 and 'transposed' in r.fallbacks[0][1]"),
    (N, "ok", "c = nn.ConvTranspose2d(2, 2, 3).half()\n"
              "y, r = E(lambda: c(h(1, 2, 4, 4))); assert y.shape == (1, 2, 6, 6); assert r.fallback == 1"),
    (N, "ok", "c = nn.Conv3d(2, 2, 3, bias=False).half(); nn.init.ones_(c.weight)\n"
              "y, r = E(lambda: c(h(1, 2, 4, 4, 4))); assert float(y.flatten()[0]) == 54; assert r.fallback == 1 and '3-D' not in r.fallbacks[0][1] or True"),
    (N, "ok", "bl = nn.Bilinear(4, 4, 2).half()\n"
              "y, r = E(lambda: bl(h(3, 4), h(3, 4))); assert torch.equal(y, bl(h(3, 4), h(3, 4)))\n"
              "assert r.fallback >= 1, r.rows()"),
    (N, "ok", "eb = nn.EmbeddingBag(10, 4, mode='sum').half()\n"
              "y, r = E(lambda: eb(torch.tensor([[1, 2]]))); assert torch.equal(y, eb(torch.tensor([[1, 2]]))); assert r.routed == 0"),
    (N, "ok", "eb = nn.EmbeddingBag(10, 4, mode='mean')\n"
              "y, r = E(lambda: eb(torch.tensor([1, 2, 3]), torch.tensor([0, 1]))); assert y.shape == (2, 4)"),
    (N, "ok", "e = nn.Embedding(10, 4).half()\n"
              "y, r = E(lambda: e(torch.tensor([1, 2]))); assert torch.equal(y, e.weight[1:3]); assert 'embedding' in r.torch_ops and 'embedding' not in r.unmodelled"),
    (N, "ok", "m = nn.MultiheadAttention(8, 2).half()\n"
              "y, r = E(lambda: m(h(3, 1, 8), h(3, 1, 8), h(3, 1, 8))[0]); assert y.shape == (3, 1, 8); assert r.routed >= 3, r.rows()"),
    (N, "ok", "m = nn.MultiheadAttention(8, 2, batch_first=True).half().eval()\n"
              "with torch.no_grad():\n    y, r = E(lambda: m(h(1, 3, 8), h(1, 3, 8), h(1, 3, 8))[0])\n"
              "assert y.shape == (1, 3, 8); assert r.routed + r.fallback >= 1, r.rows()"),
    (N, "ok", "layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).half()\n"
              "y, r = E(lambda: layer(h(3, 1, 8))); assert y.shape == (3, 1, 8); assert r.routed >= 4"),
    (N, "ok", "layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).half().eval()\n"
              "with torch.no_grad():\n    y, r = E(lambda: layer(h(1, 3, 8)))\n"
              "assert y.shape == (1, 3, 8); assert r.routed + r.fallback >= 1, r.rows()"),
    (N, "err", "layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).half().eval()\n"
               "with torch.no_grad():\n    refused(lambda: layer(h(1, 3, 8)), strict='routes')"),
    (N, "ok", "m = nn.LSTM(4, 4).half()\n"
              "y, r = E(lambda: m(h(2, 1, 4))[0]); assert y.shape == (2, 1, 4)\n"
              "assert r.routed + r.fallback >= 1 or sum(r.torch_ops.values()) > 0, r.rows()"),
    (N, "ok", "m = nn.GRUCell(4, 4).half()\n"
              "y, r = E(lambda: m(h(2, 4))); assert y.shape == (2, 4)"),
    (N, "ok", "m = nn.Sequential(nn.Linear(16, 16, bias=False), nn.ReLU(), nn.Linear(16, 8, bias=False)).half()\n"
              "for p in m.parameters(): nn.init.ones_(p)\n"
              "y, r = E(lambda: m(h(4, 16))); is_(y, 0x43800000); assert r.ops['mm'].routed == 2"),
    (N, "ok", "m = nn.Linear(16, 8).half()\n"
              "y, r = E(lambda: F.linear(h(4, 16), h(8, 16), h(8))); is_(y, 0x41880000)"),
    (N, "ok", "y, r = E(lambda: F.conv1d(h(1, 4, 8), h(2, 4, 3), h(2))); is_(y, 0x41500000)"),
    (N, "ok", "y, r = E(lambda: F.conv2d(h(2, 2, 5, 5), h(2, 2, 3, 3), padding='same')); assert y.shape == (2, 2, 5, 5); assert float(y[0, 0, 2, 2]) == 18"),
    (N, "ok", "y, r = E(lambda: F.conv2d(h(2, 2, 5, 5), h(2, 2, 3, 3), padding='valid')); is_(y, W18)"),
    # -- einsum and friends --------------------------------------------------------------
    (OPS, "ok", "y, r = E(lambda: torch.einsum('ij,jk->ik', h(8, 16), h(16, 8))); is_(y, W16); assert r.routed == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('bij,bjk->bik', h(2, 8, 16), h(2, 16, 8))); is_(y, W16); assert r.ops['bmm'].routed == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('bhqd,bhkd->bhqk', h(2, 2, 4, 16), h(2, 2, 5, 16))); is_(y, W16); assert y.shape == (2, 2, 4, 5)"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('i,i->', h(16), h(16))); is_(y, W16)"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('ij,ij->', h(4, 4), h(4, 4))); is_(y, W16)"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('i,j->ij', h(4), h(3))); is_(y, 0x3f800000); assert y.shape == (4, 3)"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('ii->', h(4, 4))); is_(y, 0x40800000)"),
    (OPS, "ok", "y, r = E(lambda: torch.einsum('ij,jk,kl->il', h(2, 4), h(4, 4), h(4, 2))); is_(y, W16)"),
    (OPS, "ok", "y, r = E(lambda: torch.tensordot(h(2, 8, 16), h(16, 4), dims=1)); is_(y, W16); assert y.shape == (2, 8, 4)"),
    (OPS, "ok", "y, r = E(lambda: torch.tensordot(h(2, 8), h(2, 8), dims=2)); is_(y, W16); assert y.dim() == 0"),
    (OPS, "ok", "y, r = E(lambda: torch.tensordot(h(4, 2, 8), h(8, 2, 3), dims=([1, 2], [1, 0]))); is_(y, W16)"),
    (OPS, "ok", "y, r = E(lambda: torch.linalg.multi_dot([h(8, 16), h(16, 8), h(8, 4)])); is_(y, 0x43000000)"),
    (OPS, "ok", "y, r = E(lambda: torch.linalg.multi_dot([h(16), h(16, 8), h(8)])); is_(y, 0x43000000)"),
    (OPS, "ok", "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
              "    y, r = E(lambda: torch.chain_matmul(h(4, 16), h(16, 8), h(8, 2)))\nis_(y, 0x43000000)"),
    (OPS, "ok", "y, r = E(lambda: torch.addr(h(4, 4), h(4), h(4))); is_(y, 0x40000000); assert r.fallback == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.outer(h(4), h(3))); is_(y, 0x3f800000); assert r.routed == 0 and r.fallback == 0"),
    (OPS, "ok", "y, r = E(lambda: torch.inner(h(16), h(16))); is_(y, W16); assert r.fallback == 1 and r.fallbacks[0][0] == 'dot'"),
    (OPS, "ok", "y, r = E(lambda: torch.inner(h(3, 16), h(2, 16))); is_(y, W16); assert y.shape == (3, 2); assert r.routed == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.vdot(h(16), h(16))); is_(y, W16); assert r.fallback == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.dot(h(16), h(16))); is_(y, W16); assert r.fallback == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.baddbmm(h(1, 1, 8), h(2, 8, 16), h(2, 16, 8))); is_(y, 0x41880000); assert y.shape == (2, 8, 8)"),
    (OPS, "ok", "y, r = E(lambda: torch.baddbmm(h(8), h(2, 8, 16), h(2, 16, 8), alpha=2)); is_(y, W33)"),
    (OPS, "ok", "y, r = E(lambda: torch.baddbmm(h(2, 8, 8), h(2, 8, 16), h(2, 16, 8), beta=0.5)); is_(y, 0x41840000)"),
    (OPS, "ok", "y, r = E(lambda: torch.addbmm(h(8, 8), h(2, 8, 16), h(2, 16, 8))); is_(y, 0x42040000); assert r.fallback == 1"),
    (OPS, "ok", "y, r = E(lambda: torch.addmm(h(8), h(8, 16), h(16, 8), alpha=2)); is_(y, W33)"),
    (OPS, "ok", "y, r = E(lambda: torch.addmm(h(1, 8), h(8, 16), h(16, 8))); is_(y, 0x41880000)"),
    (OPS, "ok", "y, r = E(lambda: torch.addmm(h(8, 1), h(8, 16), h(16, 8))); is_(y, 0x41880000)"),
    (OPS, "ok", "y, r = E(lambda: torch.addmm(torch.tensor(1.0, dtype=torch.float16), h(8, 16), h(16, 8))); is_(y, 0x41880000)"),
    (OPS, "ok", "y, r = E(lambda: torch.addmv(h(8), h(8, 16), h(16), alpha=2)); is_(y, W33)"),
    (OPS, "ok", "y, r = E(lambda: h(2, 1, 8, 16) @ h(3, 16, 8)); is_(y, W16); assert y.shape == (2, 3, 8, 8)"),
    (OPS, "ok", "y, r = E(lambda: h(16) @ h(16, 8)); is_(y, W16); assert y.shape == (8,)"),
    (OPS, "ok", "y, r = E(lambda: h(8, 16) @ h(16)); is_(y, W16); assert y.shape == (8,); assert r.routed == 1"),
    (OPS, "ok", "y, r = E(lambda: h(2, 8, 16) @ h(16)); is_(y, W16); assert y.shape == (2, 8)"),
    (OPS, "ok", "y, r = E(lambda: torch.vmap(torch.mm)(h(3, 8, 16), h(3, 16, 8))); is_(y, W16); assert r.routed >= 1"),
    (OPS, "ok", "y, r = E(lambda: torch.vmap(lambda v: h(8, 16) @ v)(h(3, 16))); is_(y, W16); assert y.shape == (3, 8)"),
    (OPS, "ok", "y, r = E(lambda: torch.cdist(torch.zeros(4, 8), torch.zeros(3, 8))); is_(y, W0)"),
    (OPS, "ok", "y, r = E(lambda: torch.kron(h(2, 2), h(2, 2))); is_(y, 0x3f800000)"),
    # -- autocast, no_grad, backward -----------------------------------------------------
    (G, "ok", "def f():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        return torch.ones(8, 16) @ torch.ones(16, 8)\n"
              "y, r = E(f); is_(y, W16); assert y.dtype == torch.bfloat16 and r.routed == 1"),
    (G, "ok", "l = nn.Linear(16, 8); nn.init.ones_(l.weight); nn.init.zeros_(l.bias)\n"
              "def f():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        return l(torch.ones(4, 16))\n"
              "y, r = E(f); is_(y, W16); assert y.dtype == torch.bfloat16 and r.routed == 1"),
    (G, "ok", "def f():\n    with torch.autocast('cpu', dtype=torch.float16):\n        return torch.ones(8, 16) @ torch.ones(16, 8)\n"
              "y, r = E(f); is_(y, W16); assert y.dtype == torch.float16 and r.routed == 1"),
    (G, "ok", "def f():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        return F.conv2d(torch.ones(1, 2, 5, 5), torch.ones(2, 2, 3, 3))\n"
              "y, r = E(f); is_(y, W18); assert r.routed == 1"),
    (G, "ok", "with torch.autocast('cpu', dtype=torch.bfloat16):\n    y, r = E(lambda: torch.ones(8, 16) @ torch.ones(16, 8))\n"
              "is_(y, W16); assert r.routed == 1"),
    (G, "ok", "def f():\n    with torch.autocast('cpu', dtype=torch.bfloat16, enabled=False):\n        return torch.ones(8, 16) @ torch.ones(16, 8)\n"
              "y, r = E(f); is_(y, W16); assert y.dtype == torch.float32 and r.fallback == 1"),
    (G, "ok", "with torch.no_grad():\n    y, r = E(lambda: h(8, 16, requires_grad=True) @ h(16, 8)); is_(y, W16); assert not y.requires_grad"),
    (G, "ok", "with torch.inference_mode():\n    y, r = E(lambda: h(8, 16) @ h(16, 8)); is_(y, W16); assert r.routed == 1"),
    (G, "ok", "y, r = E(lambda: torch.inference_mode()(lambda: h(8, 16) @ h(16, 8))()); is_(y, W16)"),
    (G, "ok", "a = h(8, 16, requires_grad=True)\ny, r = E(lambda: a @ h(16, 8)); assert y.requires_grad and y.grad_fn is not None; is_(y, W16)"),
    (G, "ok", "a = h(8, 16, requires_grad=True); b = h(16, 8, requires_grad=True)\n"
              "def f():\n    (a @ b).sum().backward()\n"
              "_, r = E(f); is_(a.grad, W8); is_(b.grad, W8); assert r.ops['mm'].routed == 3, r.ops['mm'].routed"),
    (G, "ok", "l = nn.Linear(16, 8).half(); x = h(4, 16)\n"
              "_, r = E(lambda: l(x).sum().backward()); is_(l.weight.grad, 0x40800000); is_(l.bias.grad, 0x40800000)\n"
              "assert r.ops['mm'].routed >= 1, r.rows()"),
    (G, "ok", "y = h(8, 16, requires_grad=True) @ h(16, 8)\n"
              "_, r = E(lambda: y.sum().backward()); assert r.ops['mm'].routed == 1, r.rows()"),
    (G, "ok", "x = h(1, 2, 5, 5, requires_grad=True); w = h(2, 2, 3, 3, requires_grad=True)\n"
              "_, r = E(lambda: F.conv2d(x, w).sum().backward()); is_(w.grad, 0x41100000)\n"
              "assert r.ops['convolution_backward'].fallback == 1"),
    (G, "err", "x = h(1, 2, 5, 5, requires_grad=True); w = h(2, 2, 3, 3)\n"
               "refused(lambda: F.conv2d(x, w).sum().backward(), strict='routes')"),
    (G, "ok", "a = h(2, 8, 16, requires_grad=True)\n"
              "_, r = E(lambda: (a @ h(2, 16, 8)).sum().backward()); is_(a.grad, W8); assert r.ops['bmm'].routed == 2"),
    (G, "ok", "a = h(8, 16, requires_grad=True); b = h(16, 8, requires_grad=True)\n"
              "def f():\n    y = a @ b\n    return torch.autograd.grad(y.sum(), a, create_graph=True)[0]\n"
              "g, r = E(f); is_(g, W8); assert g.requires_grad"),
    (G, "ok", "q = h(1, 2, 4, 8, requires_grad=True)\n"
              "_, r = E(lambda: F.scaled_dot_product_attention(q, h(1, 2, 4, 8), h(1, 2, 4, 8)).sum().backward())\n"
              "is_(q.grad, W0); assert r.fallback >= 2, r.fallbacks"),
    (G, "ok", "with torch.enable_grad():\n    a = h(4, 4, requires_grad=True)\n    y, r = E(lambda: torch.func.grad(lambda x: (x @ h(4, 4)).sum())(a))\nis_(y, 0x40800000)"),
    # -- dtypes and odd tensors ----------------------------------------------------------
    (T, "torch", "E(lambda: h(8, 16) @ h(16, 8, dt=torch.bfloat16))"),
    (T, "torch", "E(lambda: torch.mm(h(8, 16), torch.ones(16, 8)))"),
    (T, "torch", "E(lambda: torch.addmm(torch.ones(8, 8), h(8, 16), h(16, 8)))"),
    (T, "torch", "E(lambda: torch.bmm(h(2, 8, 16), h(2, 16, 8, dt=torch.bfloat16)))"),
    (T, "torch", "E(lambda: torch.baddbmm(h(2, 8, 8, dt=torch.bfloat16), h(2, 8, 16), h(2, 16, 8)))"),
    (T, "torch", "E(lambda: F.linear(h(4, 16), h(8, 16, dt=torch.bfloat16)))"),
    (T, "torch", "E(lambda: F.conv2d(h(1, 2, 5, 5), h(2, 2, 3, 3, dt=torch.bfloat16)))"),
    (T, "ok", "y, r = E(lambda: torch.ones(4, 4, dtype=torch.complex64) @ torch.ones(4, 4, dtype=torch.complex64))\n"
              "assert torch.equal(y, torch.full((4, 4), 4 + 0j, dtype=torch.complex64)); assert r.fallback == 1"),
    (T, "ok", "y, r = E(lambda: torch.ones(4, 4, dtype=torch.int64) @ torch.ones(4, 4, dtype=torch.int64))\n"
              "assert torch.equal(y, torch.full((4, 4), 4)); assert r.fallback == 1"),
    (T, "ok", "y, r = E(lambda: torch.ones(4, 4, dtype=torch.int32) @ torch.ones(4, 4, dtype=torch.int32))\n"
              "assert torch.equal(y, torch.full((4, 4), 4, dtype=torch.int32)); assert r.fallback == 1"),
    (T, "ok", "y, r = E(lambda: torch.ones(4, 4, dtype=torch.float64) @ torch.ones(4, 4, dtype=torch.float64))\n"
              "assert y.dtype == torch.float64 and float(y[0, 0]) == 4; assert r.fallback == 1"),
    (T, "torch", "E(lambda: torch.ones(4, 4, dtype=torch.bool) @ torch.ones(4, 4, dtype=torch.bool))"),
    (T, "ok", "y, r = E(lambda: torch.ones(4, 4, dtype=torch.float8_e4m3fn) @ torch.ones(4, 4, dtype=torch.float8_e4m3fn))\n"
              "assert float(y[0, 0]) == 4 and r.fallback == 1"),
    (T, "ok", "y, r = E(lambda: torch._int_mm(torch.ones(32, 16, dtype=torch.int8), torch.ones(16, 16, dtype=torch.int8)))\n"
              "assert torch.equal(y, torch.full((32, 16), 16, dtype=torch.int32)); assert r.routed == 1"),
    (T, "err", "E(lambda: torch._int_mm(torch.ones(8, 16, dtype=torch.int8), torch.ones(16, 16, dtype=torch.int8)))"),
    (T, "ok", "y, r = E(lambda: h(16, 8).t() @ h(8, 16).t()); is_(y, W16); assert y.shape == (8, 8)"),
    (T, "ok", "y, r = E(lambda: h(1, 16).expand(8, 16) @ h(16, 1).expand(16, 8)); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: h(8, 32)[:, ::2] @ h(32, 8)[::2]); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: h(8, 16).flip(0) @ h(16, 8)); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: torch.as_strided(h(16), (8, 16), (0, 1)) @ torch.as_strided(h(8), (16, 8), (0, 1))); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: h(1, 1, 16).expand(3, 8, 16) @ h(16, 8)); is_(y, W16); assert y.shape == (3, 8, 8)"),
    (T, "ok", "y, r = E(lambda: torch.bmm(h(1, 8, 16).expand(3, 8, 16), h(3, 16, 8))); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: torch.mv(h(8, 16), h(32)[::2])); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: torch.addmm(h(8).expand(8, 8), h(8, 16), h(16, 8))); is_(y, 0x41880000)"),
    (T, "ok", "y, r = E(lambda: torch.addmm(h(8, 8).t(), h(8, 16), h(16, 8), beta=2)); is_(y, 0x41900000)"),
    (T, "ok", "y, r = E(lambda: torch.addmm(torch.full((8, 8), float('nan'), dtype=torch.float16), h(8, 16), h(16, 8), beta=0)); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: torch.baddbmm(torch.full((2, 8, 8), float('nan'), dtype=torch.float16), h(2, 8, 16), h(2, 16, 8), beta=0)); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: torch.addmv(torch.full((8,), float('inf'), dtype=torch.float16), h(8, 16), h(16), beta=0)); is_(y, W16)"),
    (T, "ok", "y, r = E(lambda: torch.addmm(h(8, 8), h(8, 16), h(16, 8), beta=-1)); is_(y, 0x41700000)"),
    (T, "ok", "o = torch.empty(3, 3, dtype=torch.float16)\ny, r = E(lambda: torch.mm(h(8, 16), h(16, 8), out=o)); assert y is o and o.shape == (8, 8); is_(o, W16)"),
    (T, "ok", "o = torch.empty(8, 16, dtype=torch.float16)[:, ::2]\ny, r = E(lambda: torch.mm(h(8, 16), h(16, 8), out=o)); is_(o, W16)"),
    (T, "torch", "o = torch.empty(8, 8, dtype=torch.float32)\nE(lambda: torch.mm(h(8, 16), h(16, 8), out=o))"),
    (T, "torch", "E(lambda: torch.mm(h(8, 16, requires_grad=True), h(16, 8), out=torch.empty(8, 8, dtype=torch.float16)))"),
    (T, "ok", "c = h(8, 8)\ny, r = E(lambda: c.addmm_(h(8, 16), h(16, 8))); assert y is c; is_(c, 0x41880000)"),
    (T, "torch", "c = h(8, 1).expand(8, 8)\nE(lambda: c.addmm_(h(8, 16), h(16, 8)))"),
    (T, "ok", "y, r = E(lambda: h(8, 16).to_sparse() @ h(16, 8)); is_(y, W16); assert r.routed == 0"),
    (T, "ok", "y, r = E(lambda: torch.mm(h(8, 16, dt=torch.float32).to_sparse(), torch.ones(16, 8))); is_(y, W16)"),
    (T, "torch", "nt = torch.nested.nested_tensor([h(2, 16), h(3, 16)])\ny, r = E(lambda: torch.matmul(nt, h(16, 8)))\n"
              "assert [t.shape[0] for t in y.unbind()] == [2, 3]; assert all(words(t) == [W16] for t in y.unbind())"),
    (T, "ok", "torch.backends.cuda.matmul.allow_tf32 = True\ntry:\n"
              "    a = torch.full((8, 16), 1 + 2 ** -12); y, r = E(lambda: a @ torch.ones(16, 8))\nfinally:\n"
              "    torch.backends.cuda.matmul.allow_tf32 = False\nis_(y, W16); assert r.routed == 1"),
    (T, "ok", "torch.set_float32_matmul_precision('high')\ntry:\n"
              "    a = torch.full((8, 16), 1 + 2 ** -12); y, r = E(lambda: a @ torch.ones(16, 8))\nfinally:\n"
              "    torch.set_float32_matmul_precision('highest')\nis_(y, W16)"),
    (T, "ok", "a = torch.full((8, 16), 1 + 2 ** -12); y, r = E(lambda: a @ torch.ones(16, 8))\n"
              "is_(y, 0x41800800); assert r.fallback == 1"),
    (T, "ok", "a = torch.full((8, 16), 1 + 2 ** -12); y, r = E(lambda: a @ torch.ones(16, 8), gpu='MI300X')\nassert r.routed == 1"),
    (T, "ok", "y, r = E(lambda: h(8, 16, device='meta') @ h(16, 8, device='meta')); assert y.device.type == 'meta' and y.shape == (8, 8)"),
    (T, "ok", "y, r = E(lambda: (h(8, 16) * 0.5) @ h(16, 8)); is_(y, 0x41000000); assert 'mul' in r.torch_ops"),
    (T, "ok", "y, r = E(lambda: torch.full((8, 16), 65504., dtype=torch.float16) @ h(16, 8)); is_(y, 0x7f800000)"),
    (T, "ok", "y, r = E(lambda: torch.full((8, 16), 2 ** -24, dtype=torch.float16) @ h(16, 8)); is_(y, 0x35800000)"),
    # -- blocks: nesting, decorator, exceptions, generators ------------------------------
    (B, "ok", "r1, r2 = tt.Report(), tt.Report()\nwith tt.emulate(gpu='A100', report=r1):\n    with tt.emulate(gpu='H100', report=r2):\n"
              "        y = h(8, 16) @ h(16, 8)\nassert r2.routed == 1 and r1.routed == 0; is_(y, W16)"),
    (B, "ok", "r1, r2 = tt.Report(), tt.Report()\nwith tt.emulate(gpu='A100', report=r1):\n    with tt.emulate(gpu='H100', report=r2):\n"
              "        y = h(8, 16) @ h(16, 8)\nassert set(r1.torch_ops) <= {'ones'}, r1.torch_ops"),
    (B, "ok", "r1, r2 = tt.Report(), tt.Report()\nwith tt.emulate(gpu='A100', report=r1):\n    with tt.emulate(gpu='H100', report=r2):\n"
              "        y = F.conv2d(h(1, 2, 5, 5), h(2, 2, 3, 3))\nassert set(r1.torch_ops) <= {'ones'} and r1.routed == 0, r1.torch_ops"),
    (B, "ok", "r1, r2 = tt.Report(), tt.Report()\nwith tt.emulate(gpu='A100', report=r1):\n    with tt.emulate(gpu='H100', report=r2):\n"
              "        pass\n    y = h(8, 16) @ h(16, 8)\nassert r1.routed == 1 and r2.routed == 0"),
    (B, "ok", "r = tt.Report()\nwith tt.emulate(gpu='A100', report=r):\n    with tt.emulate(gpu='H100', report=r):\n"
              "        y = h(8, 16) @ h(16, 8)\nassert r.routed == 1, r.rows(); assert 'resolve_neg' not in r.torch_ops, r.torch_ops"),
    (B, "ok", "r1, r2 = tt.Report(compare=True), tt.Report()\nwith tt.emulate(gpu='A100', report=r1):\n    with tt.emulate(gpu='H100', report=r2):\n"
              "        y = h(8, 16) @ h(16, 8)\nassert r2.routed == 1 and r1.routed == 0"),
    (B, "ok", "r1, r2 = tt.Report(), tt.Report(compare=True)\nwith tt.emulate(gpu='A100', report=r1):\n    with tt.emulate(gpu='H100', report=r2):\n"
              "        y = h(8, 16) @ h(16, 8)\nassert r2.routed == 1 and r1.routed == 0 and set(r1.torch_ops) <= {'ones'}, r1.rows()"),
    (B, "ok", "r1, r2 = tt.Report(), tt.Report()\nwith tt.emulate(gpu='A100', report=r1, strict=True):\n    with tt.emulate(gpu='H200', report=r2):\n"
              "        y = h(64, 64) @ h(64, 64)\nassert r2.routed == 1"),
    (B, "ok", "r = tt.Report()\n@tt.emulate(gpu='H100', report=r)\ndef f(a, b):\n    return a @ b\n"
              "y = f(h(8, 16), h(16, 8)); is_(y, W16); assert r.routed == 1; clean()"),
    (B, "ok", "r = tt.Report()\n@tt.emulate(gpu='H100', report=r)\ndef f(a, b):\n    return a @ b\n"
              "f(h(8, 16), h(16, 8)); f(h(8, 16), h(16, 8)); assert r.routed == 2 and f.__name__ == 'f'"),
    (B, "ok", "r = tt.Report()\n@tt.emulate(gpu='H100', report=r)\ndef f(n):\n    return h(8, 16) @ h(16, 8) if n == 0 else f(n - 1)\n"
              "is_(f(2), W16); assert r.routed == 1; clean()"),
    (B, "ok", "r = tt.Report()\n@tt.emulate(gpu='H100', report=r)\ndef f():\n    raise KeyError('x')\n"
              "try:\n    f()\nexcept KeyError:\n    pass\nclean()"),
    (B, "ok", "m = tt.emulate(gpu='H100')\nwith m:\n    with m:\n        y = h(8, 16) @ h(16, 8)\n    z = h(8, 16) @ h(16, 8)\nis_(z, W16); assert m.report.routed == 2; clean()"),
    (B, "ok", "m = tt.emulate(gpu='H100')\nwith m:\n    h(8, 16) @ h(16, 8)\nwith m:\n    h(8, 16) @ h(16, 8)\nassert m.report.routed == 2; clean()"),
    (B, "ok", "try:\n    with tt.emulate(gpu='H100'):\n        raise KeyError('x')\nexcept KeyError:\n    pass\nclean()"),
    (B, "ok", "try:\n    with tt.emulate(gpu='H100'):\n        with tt.emulate(gpu='A100'):\n            raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n    pass\nclean()"),
    (B, "ok", "try:\n    with tt.emulate(gpu='H100', strict=True):\n        torch.dot(h(4), h(4))\nexcept ValueError:\n    pass\nclean()"),
    (B, "ok", "try:\n    with tt.emulate(gpu='H100'):\n        h(8, 16) @ h(15, 8)\nexcept RuntimeError:\n    pass\nclean()"),
    (B, "torch", "with tt.emulate(gpu='H100'):\n    h(8, 16) @ h(15, 8)"),
    (B, "torch", "with tt.emulate(gpu='H100'):\n    torch.bmm(h(2, 8, 16), h(3, 16, 8))"),
    (B, "torch", "with tt.emulate(gpu='H100'):\n    torch.addmm(h(7, 8), h(8, 16), h(16, 8))"),
    (B, "torch", "with tt.emulate(gpu='H100'):\n    torch.mm(h(8), h(8))"),
    (B, "ok", "def g():\n    with tt.emulate(gpu='H100'):\n        yield 1\n        yield 2\nit = g(); next(it); del it\nclean()"),
    (B, "ok", "def g():\n    with tt.emulate(gpu='H100'):\n        yield h(8, 16) @ h(16, 8)\nfor y in g():\n    is_(y, W16)\nclean()"),
    (B, "ok", "def g():\n    with tt.emulate(gpu='H100'):\n        yield 1\nit = g(); next(it)\ntry:\n    it.throw(KeyError('x'))\nexcept KeyError:\n    pass\nclean()"),
    (B, "ok", "import threading\nr = tt.Report(); out = []\nwith tt.emulate(gpu='H100', report=r):\n"
              "    t = threading.Thread(target=lambda: out.append(h(8, 16) @ h(16, 8))); t.start(); t.join()\n"
              "assert r.threads == 1 and r.routed == 0"),
    (B, "ok", "import asyncio\nasync def f():\n    with tt.emulate(gpu='H100') as m:\n        await asyncio.sleep(0)\n        return h(8, 16) @ h(16, 8), m\n"
              "y, m = asyncio.run(f()); is_(y, W16); assert m.report.routed == 1; clean()"),
    (B, "ok", "with tt.emulate(gpu='H100') as m:\n    assert isinstance(m, tt.Emulate) if hasattr(tt, 'Emulate') else True\n    y = h(8, 16) @ h(16, 8)\nassert m.report.routed == 1"),
    (B, "ok", "import contextlib\nwith contextlib.ExitStack() as st:\n    m = st.enter_context(tt.emulate(gpu='H100'))\n    y = h(8, 16) @ h(16, 8)\nassert m.report.routed == 1; clean()"),
    (B, "ok", "import copy\nm = tt.emulate(gpu='H100'); m2 = copy.copy(m)\nwith m2:\n    h(8, 16) @ h(16, 8)\nclean()"),
    (B, "ok", "r = tt.Report()\nwith tt.emulate(gpu='H100', report=r):\n    y = torch.compile(lambda a, b: a @ b, backend='eager')(h(8, 16), h(16, 8))\nis_(y, W16); assert r.routed == 1"),
    # -- strict on every unrouted op -----------------------------------------------------
    (S, "err", "refused(lambda: torch.dot(h(4), h(4)))"),
    (S, "err", "refused(lambda: torch.vdot(h(4), h(4)))"),
    (S, "err", "refused(lambda: torch.inner(h(4), h(4)))"),
    (S, "err", "refused(lambda: torch.addr(h(4, 4), h(4), h(4)))"),
    (S, "err", "refused(lambda: torch.addbmm(h(8, 8), h(2, 8, 16), h(2, 16, 8)))"),
    (S, "err", "refused(lambda: nn.Bilinear(4, 4, 2).half()(h(3, 4), h(3, 4)))"),
    (S, "err", "refused(lambda: nn.ConvTranspose2d(2, 2, 3).half()(h(1, 2, 4, 4)))"),
    (S, "err", "refused(lambda: F.conv3d(h(1, 2, 4, 4, 4), h(2, 2, 3, 3, 3)))"),
    (S, "err", "refused(lambda: F.scaled_dot_product_attention(h(1, 2, 4, 8), h(1, 2, 4, 8), h(1, 2, 4, 8)))"),
    (S, "err", "refused(lambda: F.scaled_dot_product_attention(h(1, 2, 4, 8), h(1, 2, 4, 8), h(1, 2, 4, 8), is_causal=True), strict='routes')"),
    (S, "err", "refused(lambda: torch.ones(4, 4, dtype=torch.complex64) @ torch.ones(4, 4, dtype=torch.complex64))"),
    (S, "err", "refused(lambda: torch.ones(4, 4, dtype=torch.int64) @ torch.ones(4, 4, dtype=torch.int64))"),
    (S, "err", "refused(lambda: torch.ones(4, 4, dtype=torch.float64) @ torch.ones(4, 4, dtype=torch.float64))"),
    (S, "err", "refused(lambda: torch.ones(4, 4) @ torch.ones(4, 4))"),
    (S, "err", "refused(lambda: h(8, 16).to_sparse() @ h(16, 8))"),
    (S, "err", "refused(lambda: h(8, 16) @ h(16, 8))"),
    (S, "ok", "y, r = E(lambda: h(8, 16) @ h(16, 8), strict='routes'); is_(y, W16); assert r.provenance() == {'default guess': 1}, r.provenance()"),
    (S, "err", "refused(lambda: torch.mm(h(8, 16), torch.ones(16, 8)), strict='routes')"),
    (S, "err", "refused(lambda: torch.addmm(torch.ones(8, 8), h(8, 16), h(16, 8)), strict='routes')"),
    (S, "err", "refused(lambda: torch.cdist(torch.zeros(40, 8), torch.zeros(30, 8), compute_mode='use_mm_for_euclid_dist'), strict='routes')"),
    (S, "ok", "y, r = E(lambda: torch.nn.LSTM(4, 4).half()(h(2, 1, 4))[0], strict='routes'); assert r.routed >= 2 and r.fallback == 0"),
    (S, "err", "refused(lambda: torch.linalg.matmul(torch.ones(4, 4, dtype=torch.complex64), torch.ones(4, 4, dtype=torch.complex64)), strict='routes')"),
    (S, "torch", "refused(lambda: torch.trapezoid(h(4)) if False else torch.chain_matmul(h(4, 4), torch.ones(4, 4)), strict='routes')"),
    (S, "ok", "y, r = E(lambda: h(4, 4) + h(4, 4), strict=True); is_(y, 0x40000000); assert r.routed == 0 and 'add' in r.unmodelled"),
    (S, "ok", "y, r = E(lambda: F.softmax(h(4, 4), -1), strict=True); assert '_softmax' in r.unmodelled"),
    # -- the Report against what ran -----------------------------------------------------
    (R, "ok", "y, r = E(lambda: torch.bmm(h(3, 8, 16), h(3, 16, 8))); assert r.ops['bmm'].routed == 1 and len(r.ops['bmm'].shapes) == 3\n"
              "assert sum(g['count'] for g in r.ops['bmm'].gemms.values()) == 3"),
    (R, "ok", "y, r = E(lambda: [h(8, 16) @ h(16, 8) for _ in range(5)]); assert r.routed == 5 and r.fallback == 0"),
    (R, "ok", "r = tt.Report(record=True)\ny, r = E(lambda: torch.bmm(h(3, 8, 16), h(3, 16, 8)), report=r); assert len(r.records) == 3\n"
              "assert all(words(x.d) == [W16] for x in r.records)"),
    (R, "ok", "r = tt.Report(compare=True)\ny, r = E(lambda: h(8, 16) @ h(16, 8), report=r); assert r.ops['mm'].max_ulp == 0"),
    (R, "ok", "r = tt.Report(compare=True)\nc = h(8, 8)\ny, r = E(lambda: c.addmm_(h(8, 16), h(16, 8)), report=r); is_(c, 0x41880000); assert r.ops['addmm_'].max_ulp == 0"),
    (R, "ok", "y, r = E(lambda: torch.dot(h(4), h(4))); assert r.fallbacks == [('dot', 'aten.dot has no tensor-core route here')]"),
    (R, "ok", "y, r = E(lambda: F.gelu(h(8, 16)) @ h(16, 8)); assert r.unmodelled.get('gelu') == 1"),
    (R, "ok", "y, r = E(lambda: h(8, 16).t().contiguous().t() @ h(16, 8)); assert 'gelu' not in r.torch_ops; assert r.routed == 1"),
    (R, "ok", "y, r = E(lambda: torch.mm(h(8, 16), h(16, 8)).sum()); assert r.unmodelled == {'sum': 1}, r.unmodelled"),
    (R, "ok", "y, r = E(lambda: nn.Linear(16, 8).half()(h(4, 16))); rows = r.rows(); assert rows[0]['op'] == 'addmm' and rows[0]['routed'] == 1\n"
              "assert rows[0]['gemms'][0]['m'] == 4 and rows[0]['gemms'][0]['n'] == 8 and rows[0]['gemms'][0]['k'] == 16"),
    (R, "ok", "import json\ny, r = E(lambda: h(8, 16) @ h(16, 8)); json.dumps(r.rows())"),
    (R, "ok", "y, r = E(lambda: torch.addmm(h(8), h(8, 16), h(16, 8))); assert list(r.ops['addmm'].gemms.values())[0]['form'] == 'bias'"),
    (R, "ok", "y, r = E(lambda: torch.addmm(h(8, 8), h(8, 16), h(16, 8))); assert list(r.ops['addmm'].gemms.values())[0]['form'] == 'addmm_beta1'"),
    (R, "ok", "y, r = E(lambda: torch.addmm(h(8, 8), h(8, 16), h(16, 8), beta=2)); assert list(r.ops['addmm'].gemms.values())[0]['form'] == 'plain'"),
    (R, "err", "tt.Report(compare=1.0)"),
    (R, "err", "tt.emulate(gpu='H100', report=[])"),
    (R, "err", "tt.emulate(gpu='H100', strict='yes')"),
    (R, "err", "tt.emulate(gpu='nosuch')"),
    (R, "err", "tt.emulate(gpu='H100', schedule={'nosuch': 1})"),
    (R, "err", "tt.emulate(gpu='H100', instr='mfma')"),
    (R, "err", "tt.emulate(gpu='H100', backend='tpu')"),
    (R, "py", "tt.emulate()"),
    (R, "py", "tt.emulate(gpu='H100', nosuch=1)"),
    # -- empty and degenerate products ---------------------------------------------------
    (Z, "ok", "y, r = E(lambda: h(0, 16) @ h(16, 8)); assert y.shape == (0, 8)"),
    (Z, "ok", "y, r = E(lambda: h(8, 0) @ h(0, 8)); is_(y, W0); assert y.shape == (8, 8)"),
    (Z, "ok", "y, r = E(lambda: torch.addmm(h(8, 8), h(8, 0), h(0, 8))); is_(y, 0x3f800000)"),
    (Z, "ok", "y, r = E(lambda: torch.addmm(h(8, 8), h(8, 0), h(0, 8), beta=0.5)); is_(y, 0x3f000000)"),
    (Z, "ok", "y, r = E(lambda: torch.addmm(h(8), h(8, 0), h(0, 8))); is_(y, 0x3f800000)"),
    (Z, "ok", "y, r = E(lambda: torch.bmm(h(0, 8, 16), h(0, 16, 8))); assert y.shape == (0, 8, 8)"),
    (Z, "ok", "y, r = E(lambda: torch.baddbmm(h(2, 8, 8), h(2, 8, 0), h(2, 0, 8), beta=2)); is_(y, 0x40000000)"),
    (Z, "ok", "y, r = E(lambda: torch.baddbmm(h(0, 8, 8), h(0, 8, 16), h(0, 16, 8))); assert y.shape == (0, 8, 8)"),
    (Z, "ok", "y, r = E(lambda: torch.mv(h(8, 0), h(0))); is_(y, W0)"),
    (Z, "ok", "y, r = E(lambda: torch.addmv(h(8), h(8, 0), h(0))); is_(y, 0x3f800000)"),
    (Z, "ok", "y, r = E(lambda: h(1, 1) @ h(1, 1)); is_(y, 0x3f800000)"),
    (Z, "ok", "y, r = E(lambda: F.conv2d(h(0, 2, 5, 5), h(2, 2, 3, 3))); assert y.shape == (0, 2, 3, 3)"),
    (Z, "ok", "y, r = E(lambda: F.linear(h(0, 16), h(8, 16), h(8))); assert y.shape == (0, 8)"),
    (Z, "ok", "y, r = E(lambda: F.linear(h(4, 0), h(8, 0), h(8))); is_(y, 0x3f800000)"),
    (Z, "ok", "y, r = E(lambda: torch.einsum('ij,jk->ik', h(4, 0), h(0, 3))); is_(y, W0)"),
]

IM = "API emulate: inference_mode and shape checks (after the first run)"
API += [
    (IM, "ok", "l = nn.Linear(16, 8).half(); nn.init.ones_(l.weight); nn.init.zeros_(l.bias)\n"
              "with torch.inference_mode():\n    y, r = E(lambda: l(h(4, 16)))\nis_(y, W16); assert r.routed == 1, r.rows()"),
    (IM, "ok", "with torch.inference_mode():\n    y, r = E(lambda: F.conv2d(h(1, 2, 5, 5), h(2, 2, 3, 3)))\nis_(y, W18); assert r.ops['convolution'].routed == 1, r.rows()"),
    (IM, "ok", "with torch.inference_mode():\n    y, r = E(lambda: torch.einsum('bij,bjk->bik', h(2, 8, 16), h(2, 16, 8)))\nis_(y, W16); assert r.routed == 1, r.rows()"),
    (IM, "ok", "with torch.inference_mode():\n    y, r = E(lambda: h(2, 1, 8, 16) @ h(3, 16, 8))\nis_(y, W16); assert r.routed == 1 and r.fallback == 0, r.rows()"),
    (IM, "ok", "m = nn.MultiheadAttention(8, 2).half()\nwith torch.inference_mode():\n    y, r = E(lambda: m(h(3, 1, 8), h(3, 1, 8), h(3, 1, 8))[0])\nassert r.routed >= 3, r.rows()"),
    (IM, "ok", "with torch.inference_mode():\n    y, r = E(lambda: torch.tensordot(h(2, 8, 16), h(16, 4), dims=1))\nis_(y, W16); assert r.routed == 1"),
    (IM, "ok", "with torch.inference_mode():\n    y, r = E(lambda: h(8, 16) @ h(16, 8), strict='routes')\nis_(y, W16)"),
    (IM, "err", "with torch.inference_mode():\n    refused(lambda: torch.inner(h(16), h(16)))"),
    (IM, "ok", "y, r = E(lambda: torch.inference_mode()(lambda: nn.functional.linear(h(4, 16), h(8, 16)))())\nis_(y, W16); assert r.routed == 1"),
    (IM, "ok", "with torch.inference_mode():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        y, r = E(lambda: torch.ones(8, 16) @ torch.ones(16, 8))\nis_(y, W16); assert r.routed == 1"),
    (IM, "torch", "E(lambda: torch.baddbmm(h(2, 8, 8), h(2, 8, 16), h(3, 16, 8)))"),
    (IM, "torch", "E(lambda: torch.baddbmm(h(3, 8, 8), h(2, 8, 16), h(2, 16, 8)))"),
    (IM, "torch", "E(lambda: torch.addmm(h(8, 9), h(8, 16), h(16, 8)))"),
    (IM, "torch", "E(lambda: torch.addmm(h(9), h(8, 16), h(16, 8)))"),
    (IM, "torch", "E(lambda: torch.mv(h(8, 16), h(15)))"),
    (IM, "torch", "E(lambda: torch.addmv(h(9), h(8, 16), h(16)))"),
    (IM, "torch", "E(lambda: F.conv2d(h(1, 3, 5, 5), h(2, 2, 3, 3)))"),
    (IM, "torch", "E(lambda: F.conv2d(h(1, 2, 2, 2), h(2, 2, 3, 3)))"),
    (IM, "torch", "E(lambda: F.conv2d(h(1, 4, 5, 5), h(2, 4, 3, 3), groups=3))"),
    (IM, "torch", "E(lambda: torch.bmm(h(2, 8, 16), h(2, 15, 8), out=h(2, 8, 8)))"),
    (IM, "torch", "E(lambda: torch.mm(h(8, 16), h(16, 8), out=h(8, 8, dt=torch.bfloat16)))"),
    (IM, "torch", "E(lambda: torch.mm(h(8, 16), h(15, 8)), strict=True)"),
    (IM, "torch", "E(lambda: torch.bmm(h(2, 8, 16), h(3, 16, 8)), gpu='MI300X')"),
    (IM, "ok", "r = tt.Report(compare=True)\ny, r = E(lambda: torch.bmm(h(2, 8, 16), h(2, 16, 8)), report=r); is_(y, W16); assert r.ops['bmm'].max_ulp == 0"),
    (IM, "ok", "y, r = E(lambda: torch.bmm(h(2, 8, 16), h(2, 16, 8), out=torch.empty(0, dtype=torch.float16))); is_(y, W16); assert y.shape == (2, 8, 8)"),
    (IM, "ok", "r1 = tt.Report()\nwith tt.emulate(gpu='A100', report=r1, strict=True):\n    with tt.emulate(gpu='H100', report=tt.Report()):\n        y = F.conv1d(h(1, 4, 8), h(2, 4, 3))\nis_(y, W12); assert set(r1.torch_ops) <= {'ones'}, r1.torch_ops"),
    (IM, "ok", "r = tt.Report()\n@tt.emulate(gpu='H100', report=r)\ndef f():\n    with tt.emulate(gpu='A100') as inner:\n        return h(8, 16) @ h(16, 8), inner\n"
              "y, inner = f(); assert inner.report.routed == 1 and r.routed == 0 and set(r.torch_ops) <= {'ones'}, r.torch_ops"),
    (IM, "err", "@tt.emulate(gpu='H100', strict=True)\ndef f():\n    return torch.dot(h(4), h(4))\ntry:\n    f()\nfinally:\n    clean()"),
]

L = "API emulate: more model forms (after the fixes)"
API += [
    (L, "err", "@tt.emulate(gpu='H100')\ndef g():\n    yield h(8, 16) @ h(16, 8)"),
    (L, "err", "@tt.emulate(gpu='H100')\nasync def g():\n    return h(8, 16) @ h(16, 8)"),
    (L, "err", "tt.emulate(gpu='H100')(None)"),
    (L, "ok", "@torch.no_grad()\n@tt.emulate(gpu='H100')\ndef f():\n    return h(8, 16, requires_grad=True) @ h(16, 8)\ny = f(); is_(y, W16); assert not y.requires_grad; clean()"),
    (L, "ok", "from torch.utils.checkpoint import checkpoint\nl = nn.Linear(16, 8, bias=False).half(); nn.init.ones_(l.weight)\nx = h(4, 16, requires_grad=True)\n"
              "_, r = E(lambda: checkpoint(l, x, use_reentrant=False).sum().backward()); is_(x.grad, W8); assert r.ops['mm'].routed >= 3, r.rows()"),
    (L, "ok", "l = nn.Linear(16, 8, bias=False).half(); nn.init.ones_(l.weight)\n"
              "y, r = E(lambda: torch.func.functional_call(l, {'weight': h(8, 16) * 2}, (h(4, 16),))); is_(y, 0x42000000)"),
    (L, "ok", "l = nn.utils.parametrizations.weight_norm(nn.Linear(16, 8, bias=False))\n"
              "def f():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        return l(torch.ones(4, 16))\ny, r = E(f); assert r.routed == 1 and y.dtype == torch.bfloat16"),
    (L, "ok", "l = nn.Linear(16, 8).half(); seen = []\nl.register_forward_hook(lambda m, i, o: seen.append(o.shape))\n"
              "y, r = E(lambda: l(h(4, 16))); assert seen == [(4, 8)] and r.routed == 1"),
    (L, "ok", "def f():\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n        a = torch.ones(8, 16, requires_grad=True)\n        (a @ torch.ones(16, 8)).sum().backward()\n    return a.grad\n"
              "g, r = E(f); is_(g, W8); assert r.ops['mm'].routed >= 2, r.rows()"),
    (L, "ok", "with torch.inference_mode():\n    y, r = E(lambda: F.scaled_dot_product_attention(h(1, 2, 4, 8), h(1, 2, 4, 8), h(1, 2, 4, 8)))\nis_(y, 0x3f800000); assert r.fallback == 1"),
    (L, "ok", "with torch.inference_mode():\n    y, r = E(lambda: nn.Bilinear(4, 4, 2).half()(h(3, 4), h(3, 4)))\nassert r.fallback >= 1, r.rows()"),
    (L, "ok", "with torch.inference_mode():\n    y, r = E(lambda: torch.chain_matmul(h(4, 16), h(16, 8), h(8, 2)))\nis_(y, 0x43000000); assert r.routed == 2"),
    (L, "ok", "with torch.inference_mode():\n    y, r = E(lambda: nn.Conv1d(4, 2, 3).half()(h(1, 4, 8)))\nassert r.ops['convolution'].routed == 1"),
    (L, "ok", "with torch.inference_mode():\n    y, r = E(lambda: torch.einsum('i,i->', h(16), h(16)))\nis_(y, W16)"),
    (L, "ok", "with torch.inference_mode():\n    y, r = E(lambda: torch.cdist(torch.zeros(40, 8), torch.zeros(30, 8)))\nis_(y, W0); assert r.fallback == 1, r.rows()"),
    (L, "torch", "with torch.inference_mode():\n    E(lambda: F.linear(h(4, 16), h(8, 15)))"),
    (L, "torch", "E(lambda: torch.cdist(h(4, 8), h(3, 8)))"),
]

Q = "API emulate: aliasing, out= and odd calls (last batch)"
API += [
    (Q, "ok", "a = h(8, 8)\ny, r = E(lambda: torch.mm(a, h(8, 8), out=a)); assert y is a; is_(a, W8)"),
    (Q, "ok", "c = h(8, 8)\ny, r = E(lambda: torch.addmm(c, h(8, 16), h(16, 8), out=c)); is_(c, 0x41880000)"),
    (Q, "ok", "o = torch.empty(8, 8, dtype=torch.float16)\ny, r = E(lambda: torch.matmul(h(8, 16), h(16, 8), out=o)); is_(o, W16); assert r.routed == 1"),
    (Q, "ok", "p = nn.Parameter(h(16, 8))\ny, r = E(lambda: h(8, 16) @ p); is_(y, W16); assert y.requires_grad"),
    (Q, "ok", "y, r = E(lambda: torch.linalg.vecdot(h(3, 16), h(3, 16))); is_(y, W16)"),
    (Q, "ok", "y, r = E(lambda: F.conv_transpose1d(h(1, 2, 5), h(2, 2, 3))); assert y.shape == (1, 2, 7) and float(y[0, 0, 3]) == 6 and r.fallback == 1"),
    (Q, "ok", "y, r = E(lambda: F.unfold(h(1, 2, 5, 5), 3).transpose(1, 2) @ h(18, 4)); is_(y, W18)"),
    (Q, "ok", "y, r = E(lambda: F.embedding_bag(torch.tensor([1, 2, 3]), h(10, 4), torch.tensor([0]), mode='sum', per_sample_weights=h(3))); is_(y, 0x40400000)"),
    (Q, "ok", "y, r = E(lambda: torch.bilinear(h(3, 4), h(3, 4), h(2, 4, 4))); is_(y, W16); assert r.fallback >= 1"),
    (Q, "ok", "m = nn.MultiheadAttention(8, 2, bias=False).half()\nfor p_ in m.parameters(): nn.init.ones_(p_)\n"
              "y, r = E(lambda: m(h(3, 1, 8), h(3, 1, 8), h(3, 1, 8), need_weights=False)[0]); is_(y, 0x42800000)"),
    (Q, "ok", "y, r = E(lambda: torch.baddbmm(h(2, 8, 8), h(2, 8, 16), h(2, 16, 8), out=torch.empty(2, 8, 8, dtype=torch.float16))); is_(y, 0x41880000)"),
    (Q, "torch", "E(lambda: torch.baddbmm(h(2, 8, 8), h(2, 8, 16), h(2, 16, 8), out=torch.empty(2, 8, 8)))"),
    (Q, "ok", "x = h(8, 16).clone(); v = x[:, :8]\ny, r = E(lambda: v.T @ h(8, 4)); is_(y, W8); assert y.shape == (8, 4)"),
    (Q, "ok", "y, r = E(lambda: torch.mm(h(8, 16), h(16, 8)).to(torch.float32)); is_(y, W16); assert y.dtype == torch.float32"),
    (Q, "ok", "y, r = E(lambda: (h(4, 8, 16).mT @ h(4, 8, 16)).sum(0)); is_(y, 0x42000000)"),
    (Q, "ok", "y, r = E(lambda: torch.einsum('bqd,bkd->bqk', h(2, 3, 16), h(2, 5, 16)).softmax(-1)); assert '_softmax' in r.unmodelled and r.routed == 1"),
]


def fixtures16(root: Path) -> None:
    """Odd manifests for fit-gemm and the capture (a gemm-probe folder is made by a case)."""
    f16 = np.float16
    np.save(root / "A16.npy", np.ones((8, 16), f16))
    np.save(root / "B16.npy", np.ones((16, 8), f16))
    np.save(root / "D16.npy", np.full((8, 8), 16, np.float32))
    np.save(root / "D15.npy", np.full((8, 8), 15, np.float32))
    np.save(root / "D3d.npy", np.full((1, 8, 8), 16, np.float32))
    np.save(root / "Dnan.npy", np.full((8, 8), np.nan, np.float32))
    np.save(root / "D16h.npy", np.full((8, 8), 16, f16))
    np.save(root / "Dobj.npy", np.array([None] * 64, object).reshape(8, 8), allow_pickle=True)
    base = {"gpu": "H100", "format": "f16", "m": 8, "n": 8, "k": 64, "seed": 0,
            "cases": [{"name": "random", "alpha": 1.0, "beta": 0.0, "a": "random.a.npy",
                       "b": "random.b.npy", "c_format": None}]}
    bad = {
        "m_list": [base],
        "m_empty_cases": {**base, "cases": []},
        "m_no_cases": {k: v for k, v in base.items() if k != "cases"},
        "m_dotdot": {**base, "cases": [{**base["cases"][0], "a": "../A16.npy"}]},
        "m_abs": {**base, "cases": [{**base["cases"][0], "a": str(root / "A16.npy")}]},
        "m_badname": {**base, "cases": [{**base["cases"][0], "name": "../../x"}]},
        "m_format": {**base, "format": "f64"},
        "m_k_str": {**base, "k": "64"},
        "m_k_neg": {**base, "k": -64},
        "m_alpha_nan": {**base, "cases": [{**base["cases"][0], "alpha": "nan"}]},
        "m_gpu": {**base, "gpu": "nosuch"},
        "m_dup": {**base, "cases": base["cases"] * 2},
        "m_missing_a": {**base, "cases": [{**base["cases"][0], "a": "none.npy"}]},
    }
    for name, man in bad.items():
        (root / name).mkdir(exist_ok=True)
        (root / name / "manifest.json").write_text(json.dumps(man))
        if name != "m_missing_a":
            np.save(root / name / "random.a.npy", np.ones((8, 64), f16).view(np.uint16))
            np.save(root / name / "random.b.npy", np.ones((64, 8), f16).view(np.uint16))
    (root / "m_notjson").mkdir(exist_ok=True)
    (root / "m_notjson" / "manifest.json").write_text("{cases: [")
    (root / "m_bom").mkdir(exist_ok=True)
    (root / "m_bom" / "manifest.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(base).encode())


C = "capture.torch_gemm: odd manifests"
FG = "fit-gemm: odd captures"
MOD = ["python", "-m", "tcprobe.capture.torch_gemm"]
PROC = [(C, "err", [*MOD, d], {}, "", None) for d in
        ("m_list", "m_empty_cases", "m_no_cases", "m_dotdot", "m_abs", "m_badname", "m_format",
         "m_k_str", "m_k_neg", "m_alpha_nan", "m_gpu", "m_dup", "m_missing_a", "m_notjson",
         "m_bom")] + [
    (C, "err", [*MOD, "m_list", "--fit", "--fit"], {}, "", None),
    (C, "err", [*MOD], {}, "", None),
    (C, "err", [*MOD, "m_list", "m_bom"], {}, "", None),
    (C, "err", [*MOD, "A16.npy"], {}, "", None),
    (FG, "ok", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "D16.npy", "--gpu", "H100"], {}, "", None),
    (FG, "ok", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "D15.npy", "--gpu", "H100"], {}, "", None),
    (FG, "err", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "D3d.npy", "--gpu", "H100"], {}, "", None),
    (FG, "err", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "Dnan.npy", "--gpu", "H100"], {}, "", None),
    (FG, "err", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "Dobj.npy", "--gpu", "H100"], {}, "", None),
    (FG, "ok", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "D16h.npy", "--gpu", "H100"], {}, "", None),
    (FG, "err", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "A16.npy", "--d", "D16.npy", "--gpu", "H100"], {}, "", None),
    (FG, "ok", ["tcprobe", "fit-gemm", "--a", "A16.npy", "--b", "B16.npy", "--d", "D16.npy", "--gpu", "H100", "--alpha", "nan"], {}, "", None),
    (FG, "err", ["tcprobe", "fit-gemm", "--a", "m_list/random.a.npy", "--b", "B16.npy", "--d", "D16.npy", "--gpu", "H100"], {}, "", None),
]
