"""The cases of campaign 9 (scripts/campaign9.py): (class, expected, code).

Every expected word below comes from another surface or from plain numpy
integer arithmetic, never from the surface under test itself.
"""

PRELUDE = r'''
import json, threading, warnings
from pathlib import Path
import numpy as np, ml_dtypes, torch
import torch.nn.functional as F
import tcprobe
from tcprobe.torch import emulate, Report
BF = ml_dtypes.bfloat16
g = torch.Generator().manual_seed(9)
def T(*s, dt=torch.bfloat16):
    return torch.randn(*s, generator=g).to(dt)
def E(fn, gpu="H100", **kw):
    rep = kw.pop("report", None) or Report()
    with emulate(gpu, report=rep, **kw):
        r = fn()
    return r, rep
def W(t):
    t = t.detach().contiguous()
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32).numpy().copy()
def same(x, y):
    assert np.array_equal(W(x), W(y)), "words differ"
def said(rep, op=None):
    n = rep.routed + rep.fallback
    assert n > 0, f"no product routed or listed: torch_ops={rep.torch_ops}"
def mm_api(a, b, **kw):
    return tcprobe.matmul(a, b, gpu="H100", schedule="cublas", **kw)
A = T(8, 16); B = T(16, 8); C = T(8, 8)
a16 = np.random.default_rng(9).standard_normal((8, 16)).astype(np.float16)
b16 = np.random.default_rng(10).standard_normal((16, 8)).astype(np.float16)
def npw(x):
    return np.asarray(x).view(np.uint16 if np.asarray(x).dtype.itemsize == 2 else np.uint32)
'''

EMU = "Python API: emulate forms"
VIEW = "Python API: emulate operands"
CTX = "Python API: emulate context"
MAT = "Python API: matmul arrays"
KW = "Python API: matmul keywords"
SCH = "Python API: schedules"
DOT = "Python API: dot"
FIT = "Python API: fit_gemm"
CAP = "Python API: captures"

CASES = [
    # --- every GEMM form: routed words equal tcprobe.matmul's, or a fallback listed
    (EMU, "ok", "d, r = E(lambda: torch.mm(A, B), schedule='cublas'); same(d, mm_api(A, B, dtype='bfloat16'))"),
    (EMU, "ok", "d, r = E(lambda: torch.einsum('ij,jk->ik', A, B), schedule='cublas'); e, _ = E(lambda: torch.mm(A, B), schedule='cublas'); same(d, e); assert r.routed >= 1"),
    (EMU, "ok", "d, r = E(lambda: torch.tensordot(A, B, dims=1), schedule='cublas'); e, _ = E(lambda: torch.mm(A, B), schedule='cublas'); same(d, e); assert r.routed >= 1"),
    (EMU, "ok", "d, r = E(lambda: torch.linalg.multi_dot([A, B, C]), schedule='cublas'); assert r.routed == 2"),
    (EMU, "ok", "d, r = E(lambda: torch.chain_matmul(A, B)); assert r.routed == 1"),
    (EMU, "ok", "d, r = E(lambda: torch.inner(A, B.t())); said(r)"),
    (EMU, "ok", "x = T(4, 8, 16); d, r = E(lambda: torch.matmul(x, B), schedule='cublas'); e, _ = E(lambda: torch.mm(x.reshape(32, 16), B), schedule='cublas'); same(d.reshape(32, 8), e)"),
    (EMU, "ok", "x = T(16); d, r = E(lambda: torch.matmul(x, x)); said(r); assert r.fallback == 1 or r.routed == 1"),
    (EMU, "ok", "d, r = E(lambda: torch.addbmm(C, T(3, 8, 16), T(3, 16, 8))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: torch.addr(C, T(8), T(8))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: torch.vdot(T(16), T(16))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.bilinear(T(4, 8), T(4, 8), T(3, 8, 8))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.linear(T(2, 3, 16), T(8, 16), T(8))); assert r.routed >= 1"),
    (EMU, "ok", "x = T(4, 16); w = T(8, 16); bb = T(8); d, r = E(lambda: F.linear(x, w, bb), schedule='cublas'); e, _ = E(lambda: torch.addmm(bb, x, w.t()), schedule='cublas'); same(d, e)"),
    (EMU, "ok", "q = T(1, 2, 4, 8); d, r = E(lambda: F.scaled_dot_product_attention(q, q, q)); said(r)"),
    (EMU, "ok", "q = T(1, 2, 4, 8); d, r = E(lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv1d(T(1, 4, 10), T(6, 4, 3))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv3d(T(1, 2, 4, 4, 4), T(3, 2, 2, 2, 2))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv_transpose2d(T(1, 4, 5, 5), T(4, 2, 3, 3))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv_transpose1d(T(1, 4, 5), T(4, 2, 3))); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv2d(T(1, 4, 6, 6), T(4, 2, 3, 3), groups=2, stride=2, dilation=2, padding=2)); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv2d(T(1, 4, 6, 6), T(4, 4, 3, 3), padding='same', dilation=2)); said(r)"),
    (EMU, "ok", "d, r = E(lambda: F.conv2d(T(1, 4, 6, 6, dt=torch.float16), T(4, 4, 1, 1, dt=torch.float16))); said(r)"),
    (EMU, "ok", "a8 = torch.randint(-128, 127, (32, 32), dtype=torch.int8, generator=g); b8 = torch.randint(-128, 127, (32, 32), dtype=torch.int8, generator=g); d, r = E(lambda: torch._int_mm(a8, b8)); assert r.routed == 1; assert np.array_equal(d.numpy(), a8.numpy().astype(np.int64) @ b8.numpy().astype(np.int64))"),
    (EMU, "ok", "a8 = torch.ones((32, 32), dtype=torch.int8) * 127; d, r = E(lambda: torch._int_mm(a8, a8)); assert int(d[0, 0]) == 127 * 127 * 32"),
    (EMU, "ok", "a8 = torch.ones((32, 32), dtype=torch.int8); o = torch.empty((32, 32), dtype=torch.int32); d, r = E(lambda: torch._int_mm(a8, a8, out=o)); assert int(o[0, 0]) == 32 and r.routed == 1"),
    (EMU, "ok", "d, r = E(lambda: torch.mm(torch.ones(4, 4, dtype=torch.int8), torch.ones(4, 4, dtype=torch.int8))); said(r); assert int(d[0, 0]) == 4"),
    (EMU, "ok", "x = torch.randn(4, 4, dtype=torch.complex64); d, r = E(lambda: x @ x); said(r)"),
    (EMU, "ok", "x = torch.randn(4, 4, dtype=torch.float64); d, r = E(lambda: x @ x); said(r)"),
    (EMU, "err", "x = torch.randn(4, 4, dtype=torch.float64); E(lambda: x @ x, strict=True)"),
    (EMU, "err", "x = torch.randn(4, 4, dtype=torch.complex64); E(lambda: x @ x, strict='routes')"),
    (EMU, "torch", "E(lambda: torch.mm(A, B.to(torch.float16)))"),
    (EMU, "ok", "a = T(4, 4, dt=torch.float8_e4m3fn); sc = torch.tensor(1.0); d, r = E(lambda: torch._scaled_mm(a, a.t(), sc, sc, out_dtype=torch.bfloat16)); assert r.routed == 1"),
    (EMU, "ok", "a = T(16, 32, dt=torch.float8_e4m3fn); b = T(16, 32, dt=torch.float8_e4m3fn).t(); sc = torch.tensor(1.0); d, r = E(lambda: torch._scaled_mm(a, b, sc, sc, out_dtype=torch.float32), schedule='cublas'); e = tcprobe.matmul(a, b, gpu='H100', dtype='float32', schedule='cublas'); same(d, torch.as_tensor(np.asarray(e)))"),
    # out= and in-place
    (EMU, "ok", "o = torch.empty(8, dtype=torch.bfloat16); v = T(16); d, r = E(lambda: torch.mv(A, v, out=o), schedule='cublas'); e, _ = E(lambda: torch.mv(A, v), schedule='cublas'); same(o, e); assert r.routed == 1"),
    (EMU, "ok", "o = torch.empty(3, 8, 8, dtype=torch.bfloat16); x, y = T(3, 8, 16), T(3, 16, 8); d, r = E(lambda: torch.bmm(x, y, out=o), schedule='cublas'); e, _ = E(lambda: torch.bmm(x, y), schedule='cublas'); same(o, e)"),
    (EMU, "ok", "o = torch.empty(8, 8, dtype=torch.bfloat16); d, r = E(lambda: torch.matmul(A, B, out=o), schedule='cublas'); e, _ = E(lambda: torch.mm(A, B), schedule='cublas'); same(o, e); assert r.routed == 1"),
    (EMU, "ok", "o = torch.empty(2, 2, dtype=torch.bfloat16); d, r = E(lambda: torch.mm(A, B, out=o), schedule='cublas'); e, _ = E(lambda: torch.mm(A, B), schedule='cublas'); same(o, e)"),
    (EMU, "torch", "o = torch.empty(8, 8, dtype=torch.float32); E(lambda: torch.mm(A, B, out=o))"),
    (EMU, "ok", "c1 = C.clone(); c2 = C.clone(); E(lambda: c1.addmm_(A, B, beta=0.5, alpha=2), schedule='cublas'); e, _ = E(lambda: torch.addmm(c2, A, B, beta=0.5, alpha=2), schedule='cublas'); same(c1, e)"),
    (EMU, "ok", "c = torch.full((8, 8), float('nan'), dtype=torch.bfloat16); d, r = E(lambda: torch.addmm(c, A, B, beta=0)); assert not torch.isnan(d).any()"),
    (EMU, "ok", "c = torch.full((8,), float('nan'), dtype=torch.bfloat16); v = T(16); d, r = E(lambda: torch.addmv(c, A, v, beta=0)); assert not torch.isnan(d).any()"),
    (EMU, "ok", "c = T(8); v = T(16); c1 = c.clone(); E(lambda: c1.addmv_(A, v, alpha=3), schedule='cublas'); e, _ = E(lambda: torch.addmv(c, A, v, alpha=3), schedule='cublas'); same(c1, e)"),
    (EMU, "ok", "c = T(3, 8, 8); x, y = T(3, 8, 16), T(3, 16, 8); c1 = c.clone(); E(lambda: c1.baddbmm_(x, y, beta=2), schedule='cublas'); e, _ = E(lambda: torch.baddbmm(c, x, y, beta=2), schedule='cublas'); same(c1, e)"),
    (EMU, "ok", "c = T(8, 8); x, y = T(3, 8, 16), T(3, 16, 8); c1 = c.clone(); d, r = E(lambda: c1.addbmm_(x, y)); said(r)"),
    (EMU, "ok", "o = torch.empty(8, 8, dtype=torch.bfloat16); x, y = T(3, 8, 16), T(3, 16, 8); d, r = E(lambda: torch.addbmm(C, x, y, out=o)); said(r)"),
    (EMU, "ok", "o = torch.empty(8, dtype=torch.bfloat16); v = T(16); d, r = E(lambda: torch.addmv(T(8), A, v, out=o)); assert r.routed == 1"),
    (EMU, "ok", "x = A.clone(); y = T(16, 16); d, r = E(lambda: x.__imatmul__(y) if hasattr(x, '__imatmul__') else x @ y); said(r)"),
    # --- views, strides, zero sizes
    (VIEW, "ok", "At = T(16, 8).t(); d, r = E(lambda: torch.mm(At, B), schedule='cublas'); e, _ = E(lambda: torch.mm(At.contiguous(), B), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "W2 = T(8, 32)[:, ::2]; d, r = E(lambda: torch.mm(W2, B), schedule='cublas'); e, _ = E(lambda: torch.mm(W2.contiguous(), B), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "F2 = T(16, 8).flip(0); d, r = E(lambda: torch.mm(A, F2), schedule='cublas'); e, _ = E(lambda: torch.mm(A, F2.contiguous()), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "X = T(1, 16).expand(8, 16); d, r = E(lambda: torch.mm(X, B), schedule='cublas'); e, _ = E(lambda: torch.mm(X.contiguous(), B), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "d, r = E(lambda: torch.mm(T(0, 16), B)); assert d.shape == (0, 8)"),
    (VIEW, "ok", "d, r = E(lambda: torch.mm(T(8, 0), T(0, 8))); assert d.shape == (8, 8) and (W(d) == 0).all()"),
    (VIEW, "ok", "d, r = E(lambda: torch.addmm(C, T(8, 0), T(0, 8))); same(d, C)"),
    (VIEW, "ok", "d, r = E(lambda: torch.addmm(C, T(8, 0), T(0, 8), beta=0)); assert (W(d) == 0).all()"),
    (VIEW, "ok", "d, r = E(lambda: torch.bmm(T(0, 8, 16), T(0, 16, 8))); assert d.shape == (0, 8, 8)"),
    (VIEW, "ok", "d, r = E(lambda: torch.baddbmm(T(2, 8, 8), T(2, 8, 0), T(2, 0, 8), beta=0.5)); e = (T(1) * 0).sum(); assert d.shape == (2, 8, 8)"),
    (VIEW, "ok", "x = T(8, 16).t().contiguous().t(); d, r = E(lambda: torch.mm(x, B), instr='mma', schedule='cublas'); e = tcprobe.matmul(x, B, gpu='H100', instr='mma', schedule='cublas', dtype='bfloat16'); same(d, e)"),
    (VIEW, "ok", "c = T(1, 8); d, r = E(lambda: torch.addmm(c, A, B), schedule='cublas'); e, _ = E(lambda: torch.addmm(c.expand(8, 8).contiguous(), A, B), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "c = T(8, 1); d, r = E(lambda: torch.addmm(c, A, B), schedule='cublas'); e, _ = E(lambda: torch.addmm(c.expand(8, 8).contiguous(), A, B), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "c = T(8); d, r = E(lambda: torch.addmm(c, A, B, beta=2), schedule='cublas'); e, _ = E(lambda: torch.addmm(c.expand(8, 8).contiguous(), A, B, beta=2), schedule='cublas'); same(d, e)"),
    (VIEW, "ok", "x = torch.empty(8, 16, device='meta', dtype=torch.bfloat16); y = torch.empty(16, 8, device='meta', dtype=torch.bfloat16); d, r = E(lambda: torch.mm(x, y)); assert d.device.type == 'meta' and d.shape == (8, 8); said(r)"),
    (VIEW, "ok", "s = A.to_sparse(); d, r = E(lambda: torch.sparse.mm(s, B)); said(r)"),
    (VIEW, "ok", "s = A.float().to_sparse_csr(); d, r = E(lambda: s @ B.float()); said(r)"),
    (VIEW, "ok", "x = torch.zeros(8, 16, dtype=torch.bfloat16); x[0, 0] = float('inf'); d, r = E(lambda: torch.mm(x, torch.zeros(16, 8, dtype=torch.bfloat16))); assert torch.isnan(d[0]).all()"),
    (VIEW, "ok", "x = T(4, 16); x.requires_grad_(True); d, r = E(lambda: torch.mm(x, B)); assert d.requires_grad"),
    # --- context: autocast, compile, nesting, grad, threads, exceptions
    (CTX, "ok", "w = torch.randn(8, 16); x = torch.randn(4, 16)\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    d, r = E(lambda: F.linear(x, w), schedule='cublas')\nassert d.dtype == torch.bfloat16 and r.routed == 1"),
    (CTX, "ok", "w = torch.randn(8, 16); x = torch.randn(4, 16); r = Report()\nwith emulate('H100', report=r):\n    with torch.autocast('cpu', dtype=torch.float16):\n        d = F.linear(x, w)\nassert r.routed == 1"),
    (CTX, "ok", "f = torch.compile(lambda x, y: x @ y, backend='eager'); d, r = E(lambda: f(A, B)); said(r)"),
    (CTX, "ok", "x = T(4, 16).requires_grad_(); w = T(16, 8).requires_grad_(); r = Report()\nwith emulate('H100', report=r):\n    (x @ w).float().sum().backward()\nassert r.routed == 3, r.routed"),
    (CTX, "ok", "m = torch.nn.Linear(16, 8).to(torch.bfloat16); x = T(4, 16).requires_grad_(); r = Report()\nwith emulate('H100', report=r):\n    m(x).float().sum().backward()\nassert r.routed >= 3"),
    (CTX, "ok", "m = torch.nn.LSTM(8, 8).to(torch.bfloat16); d, r = E(lambda: m(T(3, 1, 8))); said(r)"),
    (CTX, "ok", "m = torch.nn.GRU(8, 8).to(torch.bfloat16); d, r = E(lambda: m(T(3, 1, 8))); said(r)"),
    (CTX, "ok", "r1, r2 = Report(), Report()\nwith emulate('H100', report=r1, schedule='cublas'):\n    with emulate('A100', report=r2, schedule='cublas'):\n        d = A @ B\nassert r1.routed + r2.routed == 1"),
    (CTX, "ok", "r = Report(); res = {}\nwith emulate('H100', report=r, schedule='cublas'):\n    d0 = A @ B\n    t = threading.Thread(target=lambda: res.setdefault('d', A @ B)); t.start(); t.join()\nassert r.routed == 1"),
    (CTX, "ok", "r = Report()\ntry:\n    with emulate('H100', report=r):\n        A @ B\n        raise KeyError('x')\nexcept KeyError:\n    pass\nA @ B\nassert r.routed == 1"),
    (CTX, "ok", "r = Report()\nwith torch.no_grad(), emulate('H100', report=r):\n    d = torch.nn.functional.linear(A, B.t())\nassert r.routed == 1"),
    (CTX, "ok", "r = Report(); m = emulate('H100', report=r)\nwith m:\n    A @ B\nwith m:\n    A @ B\nassert r.routed == 2"),
    (CTX, "ok", "torch.backends.cuda.matmul.allow_tf32 = True\ntry:\n    x, y = torch.randn(8, 16), torch.randn(16, 8); d, r = E(lambda: x @ y, schedule='cublas-tf32'); e = tcprobe.matmul(x, y, gpu='H100', schedule='cublas-tf32'); same(d, torch.as_tensor(np.asarray(e)))\nfinally:\n    torch.backends.cuda.matmul.allow_tf32 = False"),
    (CTX, "ok", "x, y = torch.randn(8, 16), torch.randn(16, 8); d, r = E(lambda: x @ y); assert r.fallback == 1 and 'highest' in r.fallbacks[0][1]"),
    (CTX, "ok", "r = Report(record=True)\nwith emulate('H100', report=r):\n    d = A @ B\nrec = r.records[0]; e = tcprobe.matmul(rec.a, rec.b, gpu='H100', schedule=rec.schedule or None); assert np.array_equal(W(rec.d), W(torch.as_tensor(np.asarray(e))))"),
    (CTX, "err", "emulate('H100', schedule={'split_k': 0})"),
    (CTX, "err", "emulate('H100', schedule='no-such-preset')"),
    (CTX, "err", "emulate('H100', backend='CPU ')"),
    (CTX, "err", "emulate(['H100'])"),
    (CTX, "err", "emulate('H100', report=Report)"),
    (CTX, "err", "Report(compare=np.bool_(True), record='no')"),
    (CTX, "err", "d, r = E(lambda: torch.mm(A, B), schedule={'split_k': 64}); assert d.shape == (8, 8)"),
    (CTX, "any", "Path('s.json').write_text(json.dumps({'split_k': 2})); d, r = E(lambda: A @ B, schedule=Path('s.json')); e, _ = E(lambda: A @ B, schedule={'split_k': 2}); same(d, e)"),
    (CTX, "err", "Path('s2.json').write_text(json.dumps({'splitk': 2})); E(lambda: A @ B, schedule=Path('s2.json'))"),
    # --- tcprobe.matmul arrays
    (MAT, "ok", "same(torch.as_tensor(np.asarray(mm_api(np.asfortranarray(a16), np.asfortranarray(b16)))), torch.as_tensor(np.asarray(mm_api(a16, b16))))"),
    (MAT, "ok", "ra = a16.copy(); ra.setflags(write=False); same(torch.as_tensor(np.asarray(mm_api(ra, b16))), torch.as_tensor(np.asarray(mm_api(a16, b16))))"),
    (MAT, "ok", "big = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float16); same(torch.as_tensor(np.asarray(mm_api(big[:, ::2], b16))), torch.as_tensor(np.asarray(mm_api(np.ascontiguousarray(big[:, ::2]), b16))))"),
    (MAT, "ok", "same(torch.as_tensor(np.asarray(mm_api(a16[::-1], b16))), torch.as_tensor(np.asarray(mm_api(a16[::-1].copy(), b16))))"),
    (MAT, "ok", "x = torch.from_numpy(a16); y = torch.from_numpy(b16); same(torch.as_tensor(np.asarray(mm_api(a16, b16))), mm_api(x, y).cpu())"),
    (MAT, "ok", "x = torch.from_numpy(a16).requires_grad_(); y = torch.from_numpy(b16); same(mm_api(x, y), torch.as_tensor(np.asarray(mm_api(a16, b16))))"),
    (MAT, "ok", "x = torch.from_numpy(b16).t(); y = torch.from_numpy(a16).t(); same(mm_api(x, y), torch.as_tensor(np.asarray(mm_api(b16.T.copy(), a16.T.copy()))))"),
    (MAT, "err", "mm_api(a16[0], b16)"),
    (MAT, "err", "mm_api(np.float16(1), b16)"),
    (MAT, "err", "mm_api(a16[None], b16)"),
    (MAT, "err", "mm_api(a16.tolist(), b16.tolist())"),
    (MAT, "err", "mm_api(a16.astype(np.float64), b16.astype(np.float64))"),
    (MAT, "err", "mm_api(a16.astype(np.complex64), b16.astype(np.complex64))"),
    (MAT, "err", "mm_api(a16 > 0, b16 > 0)"),
    (MAT, "err", "mm_api(a16.astype(np.int16), b16.astype(np.int16))"),
    (MAT, "err", "mm_api(a16, b16.astype(BF))"),
    (MAT, "err", "mm_api(a16, b16[:8])"),
    (MAT, "err", "mm_api(np.broadcast_to(np.float16(0), (200000, 16)), np.broadcast_to(np.float16(0), (16, 200000)))"),
    (MAT, "err", "mm_api(torch.empty(8, 16, device='meta', dtype=torch.float16), torch.from_numpy(b16))"),
    (MAT, "err", "mm_api(torch.from_numpy(a16).to_sparse(), torch.from_numpy(b16))"),
    (MAT, "err", "mm_api(np.ma.masked_array(a16, mask=a16 > 0), b16)"),
    (MAT, "err", "mm_api(a16.view([('x', '<f2')]), b16)"),
    (MAT, "ok", "x = np.ones((8, 16), np.int8); y = np.ones((16, 8), np.int8); d = tcprobe.matmul(x, y, gpu='H100'); assert np.asarray(d).dtype == np.int32 and int(np.asarray(d)[0, 0]) == 16"),
    (MAT, "ok", "x = np.full((8, 32), 127, np.int8); y = np.full((32, 8), -128, np.int8); d = tcprobe.matmul(x, y, gpu='H100'); assert int(np.asarray(d)[0, 0]) == 127 * -128 * 32"),
    (MAT, "any", "x = np.ones((8, 16), np.uint8); y = np.ones((16, 8), np.int8); d = tcprobe.matmul(x, y, gpu='H100'); assert int(np.asarray(d)[0, 0]) == 16"),
    (MAT, "ok", "d = tcprobe.matmul(np.zeros((0, 16), np.float16), b16, gpu='H100'); assert np.asarray(d).shape == (0, 8)"),
    (MAT, "any", "d = tcprobe.matmul(np.zeros((8, 0), np.float16), np.zeros((0, 8), np.float16), gpu='H100'); assert np.asarray(d).shape == (8, 8) and (npw(d) == 0).all()"),
    (MAT, "any", "c = np.full((8, 8), 2.0, np.float32); d = tcprobe.matmul(np.zeros((8, 0), np.float16), np.zeros((0, 8), np.float16), c, gpu='H100'); assert (np.asarray(d) == 2.0).all()"),
    (MAT, "ok", "c = np.asfortranarray(np.random.default_rng(2).standard_normal((8, 8)).astype(np.float32)); same(torch.as_tensor(np.asarray(mm_api(a16, b16, C=c))), torch.as_tensor(np.asarray(mm_api(a16, b16, C=np.ascontiguousarray(c)))))"),
    (MAT, "err", "mm_api(a16, b16, C=np.zeros(8, np.float32))"),
    (MAT, "err", "mm_api(a16, b16, C=np.float32(0))"),
    (MAT, "err", "mm_api(a16, b16, C=np.zeros((8, 8), np.float64))"),
    (MAT, "err", "mm_api(a16, b16, bias=np.zeros(7, np.float32))"),
    (MAT, "err", "mm_api(a16, b16, bias=np.zeros((1, 8), np.float32))"),
    (MAT, "err", "mm_api(a16, b16, bias=np.zeros(8, np.float64))"),
    (MAT, "err", "mm_api(a16, b16, scale_a=np.ones((8, 1), np.float32))"),
    # --- matmul keywords
    (KW, "ok", "d = tcprobe.matmul(a16, b16, gpu='H100', dtype=np.float16); assert np.asarray(d).dtype == np.float16"),
    (KW, "any", "d = tcprobe.matmul(a16, b16, gpu='H100', dtype=torch.float16); assert np.asarray(d).dtype == np.float16"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', dtype='float64')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', dtype='f16 ')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu=None)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu=100)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', split_k=True)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', split_k=2.0)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', jobs=0)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', jobs=-1)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', jobs=True)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', jobs='4')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', alpha=1+0j)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', alpha='2')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', alpha=None)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', alpha=[2])"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', alpha=np.array([2.0]))"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', alpha=torch.tensor([2.0, 3.0]))"),
    (KW, "any", "d1 = tcprobe.matmul(a16, b16, gpu='H100', alpha=torch.tensor(2.0)); d2 = tcprobe.matmul(a16, b16, gpu='H100', alpha=2.0); assert np.array_equal(npw(d1), npw(d2))"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', fast='yes')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', strict_auto=1)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', instr='')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', instr=['mma'])"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', model='')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', model=3)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', backend=None, progress='bar')"),
    (KW, "ok", "d = tcprobe.matmul(a16, b16, gpu='H100', instr='mma.f16.f32.k8'); e = tcprobe.matmul(a16, b16, gpu='H100', instr='mma.f16.f32.k16'); assert np.asarray(d).shape == (8, 8)"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', instr='mma.bf16.f32.k16')"),
    # --- schedules as dict / str / file
    (SCH, "err", "mm_api(a16, b16) if False else tcprobe.matmul(a16, b16, gpu='H100', schedule={None: 2})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={1: 2})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': [2]})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': None})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': 2, 'SPLIT_K': 3})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': True})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': float('nan')})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': 2}, split_k=3)"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule=b'cublas')"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule='')"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule=' cublas')"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule='missing.json')"),
    (SCH, "err", "Path('sd').mkdir(exist_ok=True); tcprobe.matmul(a16, b16, gpu='H100', schedule=Path('sd'))"),
    (SCH, "err", "Path('e.json').write_text(''); tcprobe.matmul(a16, b16, gpu='H100', schedule='e.json')"),
    (SCH, "err", "Path('l.json').write_text('[{\"split_k\": 2}]'); tcprobe.matmul(a16, b16, gpu='H100', schedule='l.json')"),
    (SCH, "err", "Path('dup.json').write_text('{\"split_k\": 2, \"split_k\": 3}'); tcprobe.matmul(a16, b16, gpu='H100', schedule='dup.json')"),
    (SCH, "err", "Path('bom.json').write_bytes(b'\\xef\\xbb\\xbf{\"split_k\": 2}'); d = tcprobe.matmul(a16, b16, gpu='H100', schedule='bom.json'); e = tcprobe.matmul(a16, b16, gpu='H100', schedule={'split_k': 2}); assert np.array_equal(npw(d), npw(e))"),
    (SCH, "ok", "Path('ok.json').write_text('{\"split_k\": 2}'); a64 = np.ones((8, 64), np.float16); b64 = np.ones((64, 8), np.float16) / 3; d = tcprobe.matmul(a64, b64, gpu='H100', schedule='ok.json'); e = tcprobe.matmul(a64, b64, gpu='H100', split_k=2); assert np.array_equal(npw(d), npw(e))"),
    (SCH, "err", "from tcprobe.matrix.schedule import Schedule; tcprobe.matmul(a16, b16, gpu='H100', schedule=Schedule)"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'instr': 'tcgen05'})"),
    (SCH, "err", "tcprobe.matmul(a16, b16, gpu='H100', schedule={'instr': 'wgmma'}, instr='mma')"),
    # --- dot
    (DOT, "ok", "x = np.full((3, 16), 0x3f80, np.uint16); d = tcprobe.dot(np.asfortranarray(x), x, 0, datapath='mma.bf16.f32.k16', gpu='H100'); assert list(np.asarray(d)) == [0x41800000] * 3"),
    (DOT, "ok", "x = np.full((3, 16), 0x3f80, np.uint16); x.setflags(write=False); d = tcprobe.dot(x, x, [0, 0, 0], datapath='mma.bf16.f32.k16', gpu='H100'); assert list(np.asarray(d)) == [0x41800000] * 3"),
    (DOT, "err", "x = np.full((3, 16), 0x3f80, np.uint16); tcprobe.dot(x, x, [0, 0], datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DOT, "err", "x = np.full((2, 3, 16), 0x3f80, np.uint16); tcprobe.dot(x, x, 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DOT, "err", "tcprobe.dot(np.uint16(0x3f80), np.uint16(0x3f80), 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DOT, "err", "x = np.full(16, 0x13f80, np.uint32); tcprobe.dot(x, x, 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DOT, "err", "tcprobe.dot([0x3f80] * 16, [0x3f80] * 16, 2 ** 32, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DOT, "ok", "x = np.full((0, 16), 0x3f80, np.uint16); d = tcprobe.dot(x, x, np.zeros(0, np.uint32), datapath='mma.bf16.f32.k16', gpu='H100'); assert np.asarray(d).shape == (0,)"),
    # --- fit_gemm
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x, 'bf16', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100', jobs=0)"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x, 'bf16', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f64', gpu='H100')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x, 'bf17', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x, 'bf16', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100', bounds=(0, -3))"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x, 'bf16', np.zeros((8, 4), np.uint16), 'bf16', np.zeros((4, 4), np.uint32), None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x, 'bf16', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100', bias=np.zeros(4, np.uint32), bias_fmt='f99')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.float32); fit_gemm.fit(x, 'bf16', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100')"),
    (FIT, "any", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); fit_gemm.fit(x.tolist(), 'bf16', np.zeros((8, 4), np.uint16), 'bf16', None, None, np.zeros((4, 4), np.uint32), 'f32', gpu='H100')"),
    # --- captures
    (CAP, "err", "import tcprobe.capture as cap; cap.load(b'tests')"),
    (CAP, "err", "import tcprobe.capture as cap; cap.load(None)"),
    (CAP, "err", "import tcprobe.capture as cap; Path('x.jsonl').write_text('{\"a\": 1}\\n'); cap.load('x.jsonl')"),
    (CAP, "err", "import tcprobe.capture as cap; Path('y.jsonl').write_text('\\n\\n'); cap.load('y.jsonl')"),
    (CAP, "err", "import tcprobe.capture as cap; Path('z.jsonl').write_bytes(b'\\xff\\xfe'); cap.load('z.jsonl')"),
    (CAP, "err", "import tcprobe.capture as cap; Path('kd').mkdir(exist_ok=True); Path('kd/a_H200_bf16.txt').write_text('1 2\\n'); cap.load('kd')"),
    (CAP, "ok", "import tcprobe.capture as cap; import os; cs = cap.load(os.path.join(os.environ['C9_ROOT'], 'tests/data/khattak-mikaitis-2025/H200/bf16')); assert len(cs) >= 1"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); z = np.zeros((8, 4), np.uint16); d0 = np.zeros((4, 4), np.uint32); fit_gemm.fit(x[None], 'bf16', z, 'bf16', None, None, d0, 'f32', gpu='H100')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); z = np.zeros((8, 4), np.uint16); d0 = np.zeros((4, 4), np.uint32); fit_gemm.fit(np.full((4, 8), 0x13f80, np.uint32), 'bf16', z, 'bf16', None, None, d0, 'f32', gpu='H100')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); z = np.zeros((8, 4), np.uint16); d0 = np.zeros((4, 4), np.uint32); fit_gemm.fit(x, 'bf16', z, 'bf16', None, None, np.ones((4, 4), np.float32), 'f32', gpu='H100')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); z = np.zeros((8, 4), np.uint16); d0 = np.zeros((4, 4), np.uint32); fit_gemm.fit(x, 'bf16', z, 'bf16', None, None, d0, 'f32', gpu='H100', jobs=True)"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); z = np.zeros((8, 4), np.uint16); d0 = np.zeros((4, 4), np.uint32); fit_gemm.fit(x, 'bf16', z, 'bf16', None, None, d0, 'f32', gpu='H100', bias=[0.5] * 4, bias_fmt='f32')"),
    (FIT, "err", "from tcprobe.matrix import fit_gemm; x = np.zeros((4, 8), np.uint16); z = np.zeros((8, 4), np.uint16); d0 = np.zeros((4, 4), np.uint32); fit_gemm.fit(x, 'bf16', z, 'bf16', np.zeros((4, 4), np.float32), 'f32', d0, 'f32', gpu='H100')"),
    (CAP, "err", "import tcprobe.capture as cap; cap.load(123)"),
    (CAP, "err", "import tcprobe.capture as cap; cap.load(['tests'])"),
    (CAP, "err", "import tcprobe.capture as cap; cap.load('x\\0y')"),
    # --- second pass: other GPUs, byte orders, torch's bits, flags torch reads
    (EMU, "ok", "d, r = E(lambda: A @ B, gpu='V100'); said(r); assert r.fallback == 1 or r.routed == 1"),
    (EMU, "ok", "d, r = E(lambda: A @ B, gpu='MI300X'); said(r)"),
    (EMU, "ok", "a8 = torch.ones((32, 32), dtype=torch.int8); d, r = E(lambda: torch._int_mm(a8, a8), gpu='V100'); said(r); assert int(d[0, 0]) == 32"),
    (EMU, "ok", "a = T(16, 32, dt=torch.float8_e4m3fn); sc = torch.tensor(1.0); d, r = E(lambda: torch._scaled_mm(a, a.t(), sc, sc, out_dtype=torch.bfloat16), gpu='A100'); said(r)"),
    (EMU, "ok", "x = T(8, 16); d, r = E(lambda: torch.mm(torch._neg_view(x), B), schedule='cublas'); e, _ = E(lambda: torch.mm(-x, B), schedule='cublas'); same(d, e)"),
    (EMU, "ok", "c = T(8, 8); d, r = E(lambda: torch.addmm(torch._neg_view(c), A, B), schedule='cublas'); e, _ = E(lambda: torch.addmm(-c, A, B), schedule='cublas'); same(d, e)"),
    (EMU, "ok", "o = torch.empty(8, 8, dtype=torch.bfloat16).t(); d, r = E(lambda: torch.mm(A, B, out=o), schedule='cublas'); e, _ = E(lambda: torch.mm(A, B), schedule='cublas'); same(o, e)"),
    (EMU, "ok", "r = Report(compare=True)\nwith emulate('H100', report=r):\n    o = torch.empty(8, 8, dtype=torch.bfloat16); torch.mm(A, B, out=o)\nassert r.routed == 1"),
    (EMU, "ok", "r = Report(compare=True); c1 = C.clone()\nwith emulate('H100', report=r, schedule='cublas'):\n    c1.addmm_(A, B)\ne, _ = E(lambda: torch.addmm(C, A, B), schedule='cublas'); same(c1, e)"),
    (EMU, "ok", "q = T(1, 2, 4, 8); m = torch.nn.MultiheadAttention(8, 2, batch_first=True).to(torch.bfloat16); d, r = E(lambda: m(T(1, 4, 8), T(1, 4, 8), T(1, 4, 8))); assert r.routed >= 3"),
    (EMU, "ok", "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False\ntry:\n    d, r = E(lambda: A @ B)\n    said(r)\nfinally:\n    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True"),
    (EMU, "ok", "d, r = E(lambda: torch.addmm(C, A, B, alpha=0), schedule='cublas'); e, _ = E(lambda: torch.addmm(C, torch.zeros_like(A), B), schedule='cublas'); same(d, e)"),
    (MAT, "ok", "same(torch.as_tensor(np.asarray(mm_api(a16.astype('>f2'), b16))), torch.as_tensor(np.asarray(mm_api(a16, b16))))"),
    (MAT, "ok", "x = torch.from_numpy(a16); same(mm_api(torch._neg_view(x), torch.from_numpy(b16)), mm_api(-x, torch.from_numpy(b16)))"),
    (MAT, "ok", "x = torch.from_numpy(a16); c = torch.ones(8, 8); same(mm_api(x, torch.from_numpy(b16), C=torch._neg_view(c)), mm_api(x, torch.from_numpy(b16), C=-c))"),
    (MAT, "ok", "x = torch.from_numpy(a16[:1]).expand(8, 16); same(mm_api(x, torch.from_numpy(b16)), mm_api(x.contiguous(), torch.from_numpy(b16)))"),
    (MAT, "ok", "same(torch.as_tensor(np.asarray(mm_api(np.matrix(a16), np.matrix(b16)))), torch.as_tensor(np.asarray(mm_api(a16, b16))))"),
    (MAT, "err", "import array; mm_api(memoryview(a16), b16)"),
    (MAT, "ok", "mmp = np.lib.format.open_memmap('m.npy', mode='w+', dtype=np.float16, shape=(8, 16)); mmp[:] = a16; same(torch.as_tensor(np.asarray(mm_api(mmp, b16))), torch.as_tensor(np.asarray(mm_api(a16, b16))))"),
    (MAT, "ok", "c = np.full((8, 8), np.nan, np.float32); d = mm_api(a16, b16, C=c, beta=0); e = mm_api(a16, b16, dtype='float32'); assert np.array_equal(npw(d), npw(e))"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', dtype='float16', out='float32')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', dtype='int32')"),
    (KW, "any", "tcprobe.matmul(a16, b16, gpu='H100', dtype='float8_e4m3fn')"),
    (KW, "err", "x = np.ones((8, 16), np.int8); tcprobe.matmul(x, x.T.copy(), gpu='H100', alpha=2.5)"),
    (KW, "err", "x = np.ones((8, 16), np.int8); tcprobe.matmul(x, x.T.copy(), np.zeros((8, 8), np.int32), gpu='H100', beta=0.5)"),
    (KW, "err", "x = np.ones((8, 16), np.int8); tcprobe.matmul(x, x.T.copy(), gpu='H100', bias=np.zeros(8, np.float32))"),
    (KW, "err", "x = np.ones((8, 16), np.int8); tcprobe.matmul(x, x.T.copy(), gpu='H100', dtype='float32')"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', scale_b=np.ones((1, 8), np.uint8))"),
    (KW, "err", "tcprobe.matmul(a16, b16, gpu='H100', backend='cuda')"),
]
