"""Campaign 10's Python cases (scripts/campaign10.py runs them): (class,
expected, code), each run in a copy of PRELUDE's namespace. The words a
case expects come from another surface (the same operands through
tcprobe.matmul, a contiguous copy, a plain number) or from hand
arithmetic, never from the surface under test itself."""

PRELUDE = r'''
import json, threading, warnings, io, array, fractions, decimal
from pathlib import Path
import numpy as np, ml_dtypes, torch
import torch.nn.functional as F
import tcprobe
import tcprobe.capture
from tcprobe.torch import emulate, Report
from tcprobe.matrix import fit_gemm
BF = ml_dtypes.bfloat16
rng = np.random.default_rng(10)
a16 = rng.standard_normal((8, 16)).astype(np.float16)
b16 = rng.standard_normal((16, 8)).astype(np.float16)
c32 = rng.standard_normal((8, 8)).astype(np.float32)
def M(a=None, b=None, c=None, **kw):
    kw.setdefault("gpu", "H100")
    return tcprobe.matmul(a16 if a is None else a, b16 if b is None else b, c, **kw)
def w(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32, 1: np.uint8}[x.dtype.itemsize]).tolist()
def same(x, y):
    assert w(x) == w(y), "words differ"
D0 = M()
g = torch.Generator().manual_seed(10)
def T(*s, dt=torch.bfloat16):
    return torch.randn(*s, generator=g).to(dt)
A = T(8, 16); B = T(16, 8); C = T(8, 8)
def E(fn, gpu="H100", **kw):
    rep = kw.pop("report", None) or Report()
    with emulate(gpu, report=rep, **kw):
        r = fn()
    return r, rep
def tw(t):
    t = t.detach().contiguous()
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32).numpy().tolist()
def tsame(x, y):
    assert tw(x) == tw(y), "words differ"
def FIT(d=None, **kw):
    aw, bw = a16.view(np.uint16), b16.view(np.uint16)
    kw.setdefault("gpu", "H100")
    return fit_gemm.fit(aw, "f16", bw, "f16", None, None, D0.view(np.uint32) if d is None else d, "f32", **kw)
def tm(d, e):  # emulate's D against tcprobe.matmul's (a tensor)
    assert tw(d) == tw(e), "words differ"
'''

MA = "API matmul arrays"
MK = "API matmul keywords"
AL = "API alpha/beta"
EM = "API emulate"
ER = "API emulate Report"
DT = "API dot"
SC = "API schedules"
AMD = "API AMD"
FG = "API fit_gemm"
CP = "API captures and profiles"

API = [
    # ---- arrays of every odd kind
    (MA, "ok", "same(M(a16[:, ::-1].copy()[:, ::-1]), D0)"),
    (MA, "ok", "x = np.zeros((8, 32), np.float16); x[:, ::2] = a16; same(M(x[:, ::2]), D0)"),
    (MA, "ok", "same(M(np.broadcast_to(a16[:1], (8, 16))), M(np.repeat(a16[:1], 8, 0)))"),
    (MA, "ok", "x = a16.copy(); x.flags.writeable = False; same(M(x), D0)"),
    (MA, "ok", "same(M(b=np.ascontiguousarray(b16.T).T), D0)"),
    (MA, "err", "M(memoryview(a16))"),
    (MA, "err", "M(a16.tolist())"),
    (MA, "err", "M(a16.astype(object))"),
    (MA, "err", "M(a16.astype(np.complex64))"),
    (MA, "err", "M(a16 > 0)"),
    (MA, "err", "M(a16.astype(np.float64))"),
    (MA, "err", "M(np.float16(1.0))"),
    (MA, "err", "M(a16[None])"),
    (MA, "err", "M(a16[:, :15])"),
    (MA, "err", "M(a16, b16.astype(BF))"),
    (MA, "err", "M(a16, b16, c32[:, :7])"),
    (MA, "err", "M(a16, b16, c32.astype(np.float64))"),
    (MA, "err", "M(a16, b16, c32.astype(np.int64))"),
    (MA, "err", "M(a16, b16, c32[None])"),
    (MA, "ok", "same(M(a16, b16, np.broadcast_to(c32[:1], (8, 8))), M(a16, b16, np.repeat(c32[:1], 8, 0)))"),
    (MA, "ok", "d = M(a16[:0]); assert d.shape == (0, 8)"),
    (MA, "ok", "d = M(a16, b16[:, :0]); assert d.shape == (8, 0)"),
    (MA, "err", "M(np.broadcast_to(np.float16(1), (200000, 300000)), np.broadcast_to(np.float16(1), (300000, 8)))"),
    (MA, "err", "M(np.lib.stride_tricks.as_strided(np.zeros(1, np.float16), (300000, 300000), (0, 0)), np.lib.stride_tricks.as_strided(np.zeros(1, np.float16), (300000, 300000), (0, 0)))"),
    (MA, "ok", "x = torch.from_numpy(a16).t().contiguous().t(); same(M(x.numpy()), D0)"),
    (MA, "ok", "d = M(torch.from_numpy(a16), torch.from_numpy(b16)); same(d.numpy() if hasattr(d, 'numpy') else d, D0)"),
    (MA, "err", "M(torch.from_numpy(a16), b16.astype(np.float32))"),
    (MA, "err", "M(torch.from_numpy(a16).to(torch.float64), torch.from_numpy(b16))"),
    (MA, "err", "M(torch.from_numpy(a16).to(torch.complex64), torch.from_numpy(b16))"),
    (MA, "ok", "x = torch.from_numpy(a16).requires_grad_(False); same(M(x.expand(8, 16)), D0)"),
    (MA, "ok", "same(M(np.asarray(a16, order='F')), D0)"),
    (MA, "ok", "same(M(a16.astype('>f2')), D0)"),
    (MA, "err", "M(np.rec.fromarrays([a16]))"),
    (MA, "err", "M('a16')"),
    (MA, "err", "tcprobe.matmul(None, b16, gpu='H100')"),
    (MA, "err", "M(a16, b16, 'c')"),
    (MA, "err", "M(array.array('e', a16.ravel().tolist()))"),
    (MA, "ok", "x = np.zeros((8, 16), np.int8); y = np.full((16, 8), -128, np.int8); x[:] = -128; d = M(x, y); assert int(d[0, 0]) == 16 * 16384"),
    (MA, "ok", "x = np.full((8, 16), 255, np.uint8); d = M(x, np.ones((16, 8), np.int8)); assert int(d[0, 0]) == 255 * 16"),
    (MA, "ok", "x = np.full((8, 16), np.nan, np.float16); d = M(x); assert np.isnan(d).all()"),
    (MA, "ok", "x = np.zeros((8, 16), np.float16); x[:] = np.float16(-0.0); d = M(x); assert w(d) == [[0] * 8] * 8"),
    # ---- keywords
    (MK, "err", "M(gpu=None)"),
    (MK, "err", "M(gpu=100)"),
    (MK, "err", "M(gpu='')"),
    (MK, "err", "M(gpu='H100', instr='')"),
    (MK, "err", "M(gpu='H100', instr=3)"),
    (MK, "err", "M(instr='MMA.F16.F32.K16x')"),
    (MK, "err", "M(dtype='nope')"),
    (MK, "err", "M(dtype=np.float64)"),
    (MK, "err", "M(dtype=torch.float64)"),
    (MK, "ok", "d = M(dtype=torch.float16); assert d.dtype == np.float16"),
    (MK, "ok", "d = M(dtype=np.dtype('float16')); assert d.dtype == np.float16"),
    (MK, "err", "M(dtype=int)"),
    (MK, "err", "M(split_k=0)"),
    (MK, "err", "M(split_k=2.0)"),
    (MK, "err", "M(split_k=True)"),
    (MK, "err", "M(split_k=-1)"),
    (MK, "ok", "same(M(split_k=np.int8(1)), D0)"),
    (MK, "err", "M(split_k=torch.tensor(2))"),
    (MK, "err", "M(jobs=-1)"),
    (MK, "err", "M(jobs=1.5)"),
    (MK, "ok", "same(M(jobs=1), D0)"),
    (MK, "err", "M(progress='yes')"),
    (MK, "ok", "seen = []; M(progress=lambda d, t: seen.append((d, t))); assert seen"),
    (MK, "err", "M(fast='no')"),
    (MK, "err", "M(backend='gpu')"),
    (MK, "err", "M(backend='cuda')"),
    (MK, "err", "M(strict_auto='yes')"),
    (MK, "err", "M(model='')"),
    (MK, "err", "M(model='nosuch')"),
    (MK, "err", "M(model=42)"),
    (MK, "err", "M(bias=np.zeros(9, np.float32))"),
    (MK, "err", "M(bias=np.zeros((8, 8), np.float32))"),
    (MK, "err", "M(bias=np.zeros(8, np.complex64))"),
    (MK, "err", "M(bias=[0.0] * 8)"),
    (MK, "ok", "same(M(bias=np.zeros(8, np.float32)), D0)"),
    (MK, "err", "M(scale_a=np.ones((8, 1), np.float32))"),
    (MK, "py", "M(nosuch=1)"),
    (MK, "py", "tcprobe.matmul(a16, b16, None, 'H100')"),
    (MK, "err", "M(gpu='H100', schedule='auto', strict_auto=True, split_k=3)"),
    # ---- alpha / beta
    (AL, "ok", "same(M(alpha=np.array([2.0])), M(alpha=2.0))"),
    (AL, "ok", "same(M(alpha=torch.tensor([2.0])), M(alpha=2.0))"),
    (AL, "ok", "same(M(c=c32, beta=np.array([0.5], np.float32)), M(c=c32, beta=0.5))"),
    (AL, "ok", "same(M(c=c32, beta=torch.tensor([3.0])), M(c=c32, beta=3.0))"),
    (AL, "ok", "same(M(alpha=np.array([[2.0]])), M(alpha=2.0))"),
    (AL, "err", "M(alpha=np.array([2.0, 3.0]))"),
    (AL, "err", "M(alpha=np.array([]))"),
    (AL, "err", "M(alpha=[2.0])"),
    (AL, "err", "M(alpha=(2.0,))"),
    (AL, "err", "M(alpha=2 + 0j)"),
    (AL, "err", "M(alpha=np.complex64(2))"),
    (AL, "err", "M(alpha=np.array(2 + 1j))"),
    (AL, "err", "M(alpha=None)"),
    (AL, "err", "M(alpha='2')"),
    (AL, "err", "M(alpha=np.bool_(True))"),
    (AL, "err", "M(alpha=np.array([True]))"),
    (AL, "ok", "same(M(alpha=np.float16(2)), M(alpha=2.0))"),
    (AL, "ok", "same(M(alpha=BF(2)), M(alpha=2.0))"),
    (AL, "ok", "same(M(alpha=np.uint64(2)), M(alpha=2.0))"),
    (AL, "ok", "same(M(alpha=fractions.Fraction(1, 2)), M(alpha=0.5))"),  # exact: a float (campaign 13)
    (AL, "ok", "same(M(alpha=torch.tensor(2.0, dtype=torch.bfloat16)), M(alpha=2.0))"),
    (AL, "err", "M(alpha=torch.tensor([2.0], requires_grad=True).expand(2))"),
    (AL, "err", "M(c=c32, beta=np.array([1e39]))"),
    (AL, "err", "M(beta=np.array([2.0]))"),
    (AL, "ok", "x = np.ones((8, 16), np.int8); d = M(x, x.T.copy(), alpha=np.array([3])); assert int(d[0, 0]) == 48"),
    (AL, "err", "x = np.ones((8, 16), np.int8); M(x, x.T.copy(), alpha=np.array([2.5]))"),
    (AL, "ok", "assert repr(FIT(alpha=np.array([1.0]))) == repr(FIT(alpha=1.0))"),
    (AL, "err", "FIT(alpha=np.array([1.0, 2.0]))"),
    (AL, "ok", "d, r = E(lambda: torch.addmm(C, A, B, alpha=2)); e, _ = E(lambda: torch.addmm(C, A, B, alpha=2.0)); tsame(d, e)"),
    # ---- emulate
    (EM, "err", "E(lambda: None, gpu='')"),
    (EM, "err", "E(lambda: None, gpu=None)"),
    (EM, "err", "E(lambda: None, gpu='H100', instr='tcgen05')"),
    (EM, "err", "E(lambda: None, gpu='H100', instr='mfma')"),
    (EM, "err", "E(lambda: None, gpu='MI300X', instr='wgmma')"),
    (EM, "err", "E(lambda: None, gpu='H100', schedule='nosuch')"),
    (EM, "err", "E(lambda: None, gpu='H100', schedule={'split_k': 0})"),
    (EM, "err", "E(lambda: None, gpu='H100', schedule=3)"),
    (EM, "err", "E(lambda: None, gpu='H100', model='mi300x')"),
    (EM, "err", "E(lambda: None, gpu='H100', strict='yes')"),
    (EM, "err", "E(lambda: None, gpu='H100', strict=2)"),
    (EM, "err", "E(lambda: None, gpu='H100', backend='')"),
    (EM, "err", "E(lambda: None, gpu='H100', report={'routed': 0})"),
    (EM, "py", "emulate('H100', nosuch=1)"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A, B)); tm(d, M(A, B, dtype='bfloat16'))"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A.t().contiguous().t(), B)); e, _ = E(lambda: torch.mm(A, B)); tsame(d, e)"),
    (EM, "ok", "o = torch.empty(8, 8, dtype=torch.bfloat16); d, r = E(lambda: torch.mm(A, B, out=o)); e, _ = E(lambda: torch.mm(A, B)); tsame(o, e)"),
    (EM, "ok", "o = torch.empty(8, 8, dtype=torch.bfloat16).t(); d, r = E(lambda: torch.mm(A, B, out=o)); e, _ = E(lambda: torch.mm(A, B)); tsame(o, e)"),
    (EM, "ok", "x = C.clone(); d, r = E(lambda: x.addmm_(A, B, beta=0.5, alpha=2)); e, _ = E(lambda: torch.addmm(C, A, B, beta=0.5, alpha=2)); tsame(x, e)"),
    (EM, "ok", "x = C.clone(); d, r = E(lambda: torch.addmm(x, A, B, out=x)); e, _ = E(lambda: torch.addmm(C, A, B)); tsame(x, e)"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A.expand(8, 16), B)); e, _ = E(lambda: torch.mm(A.contiguous(), B)); tsame(d, e)"),
    (EM, "ok", "z = torch.zeros(8, 0, dtype=torch.bfloat16); d, r = E(lambda: torch.mm(z, torch.zeros(0, 8, dtype=torch.bfloat16))); assert tw(d) == [[0] * 8] * 8"),
    (EM, "ok", "z = torch.zeros(8, 0, dtype=torch.bfloat16); d, r = E(lambda: torch.addmm(C, z, torch.zeros(0, 8, dtype=torch.bfloat16))); tsame(d, C)"),
    (EM, "ok", "d, r = E(lambda: torch.bmm(A[None].expand(3, 8, 16), B[None].expand(3, 16, 8))); e, _ = E(lambda: torch.mm(A, B)); tsame(d[2], e)"),
    (EM, "ok", "with torch.inference_mode():\n    d, r = E(lambda: torch.mm(A, B))\ne, _ = E(lambda: torch.mm(A, B)); tsame(d, e); assert r.routed == 1"),
    (EM, "ok", "with torch.no_grad():\n    d, r = E(lambda: F.linear(A, B.t().contiguous())); assert r.routed >= 1"),
    (EM, "ok", "x = A.clone().requires_grad_(); d, r = E(lambda: torch.mm(x, B).sum().backward()); assert x.grad is not None and r.routed >= 2"),
    (EM, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    with emulate('A100', report=rep):\n        d = torch.mm(A, B)\ntm(d, M(A, B, gpu='A100', dtype='bfloat16'))"),
    (EM, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    pass\nwith emulate('H100', report=rep):\n    torch.mm(A, B)\nassert rep.routed == 1"),
    (EM, "ok", "with torch.autocast('cpu', dtype=torch.bfloat16):\n    d, r = E(lambda: torch.mm(A.float(), B.float()))\nassert r.routed + r.fallback >= 1"),
    (EM, "ok", "x = A.float(); d, r = E(lambda: torch.mm(x, B.float())); assert r.fallback == 1 and r.routed == 0 and torch.equal(d, x @ B.float())"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A.half(), B.half())); tm(d, M(A.half(), B.half(), dtype='float16'))"),
    (EM, "torch", "E(lambda: torch.mm(A, B.half()))"),
    (EM, "torch", "E(lambda: torch.mm(A, A))"),
    (EM, "err", "E(lambda: torch.mm(A.float(), B.float()), strict=True)"),
    (EM, "err", "E(lambda: torch.mm(A.float(), B.float()), strict='routes')"),
    (EM, "err", "E(lambda: torch.mm(A.to(torch.float64), B.to(torch.float64)), strict=True)"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A, B), gpu='V100'); assert r.fallback == 1 and r.routed == 0"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A, B), gpu='MI300X'); tm(d, M(A, B, gpu='MI300X', dtype='bfloat16'))"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A.half(), B.half()), gpu='MI100'); assert r.routed == 1"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A, B), gpu='h100'); assert r.routed == 1"),
    (EM, "ok", "x = T(8, 64); y = T(64, 8); d, r = E(lambda: torch.mm(x, y), schedule={'split_k': 2}); tm(d, M(x, y, dtype='bfloat16', split_k=2))"),
    (EM, "err", "E(lambda: torch.mm(A, B), schedule={'split_k': 2, 'nosuch': 1})"),
    (EM, "err", "E(lambda: torch.mm(A, B), schedule='deepgemm-fp8', instr='mma')"),
    (EM, "ok", "t = []\ndef go():\n    t.append(torch.mm(A, B))\nrep = Report()\nwith emulate('H100', report=rep):\n    th = threading.Thread(target=go); th.start(); th.join()\nassert rep.routed == 0"),
    (EM, "ok", "rep = Report()\ntry:\n    with emulate('H100', report=rep):\n        torch.mm(A, B); raise KeyError('x')\nexcept KeyError:\n    pass\nd = torch.mm(A, B); assert rep.routed == 1 and torch.equal(d, A @ B)"),
    (EM, "ok", "d, r = E(lambda: torch.matmul(A[None, None].expand(2, 3, 8, 16), B)); e, _ = E(lambda: torch.mm(A, B)); tsame(d[1, 2], e)"),
    (EM, "ok", "d, r = E(lambda: torch.mm(torch.zeros(0, 16, dtype=torch.bfloat16), B)); assert d.shape == (0, 8)"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A.to(torch.complex64), B.to(torch.complex64))); assert r.routed == 0"),
    (EM, "torch", "E(lambda: torch.mm(torch.ones(4, 4, dtype=torch.bool), torch.ones(4, 4, dtype=torch.bool)))"),
    (EM, "ok", "d, r = E(lambda: A @ B, schedule='chain'); e = M(A, B, schedule='chain'); assert r.routed == 1 and tw(d) == tw(e.to(torch.bfloat16))"),
    (EM, "ok", "d, r = E(lambda: torch.addmm(C, A, B, beta=0)); tm(d, M(A, B, C, beta=0))"),
    (EM, "ok", "o = torch.empty(3, dtype=torch.bfloat16); d, r = E(lambda: torch.mm(A, B, out=o)); assert o.shape == (8, 8)"),
    (EM, "torch", "o = torch.empty(8, 8, dtype=torch.float16); E(lambda: torch.mm(A, B, out=o))"),
    (EM, "ok", "with emulate('H100') as m:\n    d = torch.mm(A, B)\nassert m.report.routed == 1"),
    (EM, "ok", "m = emulate('H100')\nwith m:\n    torch.mm(A, B)\nwith m:\n    torch.mm(A, B)\nassert m.report.routed == 2"),
    (EM, "ok", "x = torch.nn.Linear(16, 8).to(torch.bfloat16); d, r = E(lambda: x(A)); assert r.routed == 1"),
    (EM, "ok", "e = torch.nn.Embedding(10, 8); d, r = E(lambda: e(torch.tensor([1, 2]))); assert r.routed == 0"),
    # ---- Report
    (ER, "ok", "r = Report(); assert r.routed == 0 and r.fallback == 0 and list(r.rows()) == []"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A.float(), B.float())); assert any('mm' in str(f) for f in r.fallbacks)"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B), report=Report(compare=True)); assert r.routed == 1 and r.ops"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B), report=Report(record=True)); assert len(r.records) == 1"),
    (ER, "ok", "d, r = E(lambda: (torch.mm(A, B), torch.mm(A, B)), report=Report(record=True)); assert len(r.records) == 2"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B)); rows = list(r.rows()); assert rows and all(isinstance(x, (dict, str, tuple)) for x in rows)"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B)); s = str(r); assert 'routed' in s or '1' in s"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B), schedule='cublas'); assert r.ops and not r.fallbacks"),
    (ER, "err", "Report(compare='yes')"),
    (ER, "err", "Report(record=2)"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B), report=Report(compare=True, record=True)); assert r.routed == 1 and len(r.records) == 1"),
    (ER, "ok", "d, r = E(lambda: torch.mm(A, B)); json.dumps(r.to_dict()) if hasattr(r, 'to_dict') else None"),
    # ---- dot
    (DT, "ok", "assert tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0x3F800000, datapath='mma.bf16.f32.k16', gpu='H100') == 0x41880000"),
    (DT, "ok", "v = tcprobe.dot(np.array([0x3F80] * 16, np.uint16), np.array([0x3F80] * 16, np.uint16), np.uint32(0), datapath='mma.bf16.f32.k16', gpu='H100'); assert int(np.asarray(v).ravel()[0]) == 0x41800000"),
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='', gpu='H100')"),
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16')"),
    (DT, "any", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100', model='h100')"),
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100', active=[0, 1])"),
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100', scale_a=[1])"),
    (DT, "err", "tcprobe.dot([True] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DT, "err", "tcprobe.dot([1.5] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DT, "err", "tcprobe.dot([[0x3F80] * 16] * 2, [[0x3F80] * 16] * 3, 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    (DT, "any", "v = tcprobe.dot(np.zeros((0, 16), np.uint16), np.zeros((0, 16), np.uint16), np.zeros(0, np.uint32), datapath='mma.bf16.f32.k16', gpu='H100'); assert np.asarray(v).size == 0"),
    (DT, "ok", "v = tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='MI300X'); assert v == 0x41800000"),
    (DT, "err", "tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k16', gpu='H100')"),
    (DT, "err", "tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath='mfma.f16.f32.k17', gpu='MI300X')"),
    (DT, "err", "tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, -1, datapath='mma.f16.f32.k16', gpu='H100')"),
    (DT, "err", "tcprobe.dot(memoryview(bytes(32)), [0] * 16, 0, datapath='mma.bf16.f32.k16', gpu='H100')"),
    # ---- schedules
    (SC, "err", "M(schedule={'split_k': 2, 'split_starts': [0, 8]})"),
    (SC, "err", "M(schedule={'split_starts': []})"),
    (SC, "err", "M(schedule={'split_starts': [0, 0]})"),
    (SC, "err", "M(schedule={'split_starts': [0, 16]})"),
    (SC, "ok", "x = a16[:, :8].repeat(8, 1); y = b16[:8].repeat(8, 0); same(M(x, y, schedule={'split_starts': [32]}), M(x, y, split_k=2))"),
    (SC, "err", "M(schedule={'k_order': None, 'split_k': None})"),
    (SC, "err", "M(schedule={'c': 'accumulator', 'k_order': 'reverse'})"),
    (SC, "err", "M(schedule={'instr': 'wgmma'}, gpu='A100')"),
    (SC, "err", "M(schedule={'out': 'f16'}, dtype='float32')"),
    (SC, "err", "M(schedule={'saturate': 'yes'})"),
    (SC, "err", "M(schedule={'promote': 0})"),
    (SC, "err", "M(schedule={'tile_m': 0})"),
    (SC, "err", "M(schedule={'split_k': 2**70})"),
    (SC, "err", "M(schedule={1: 2})"),
    (SC, "err", "M(schedule={'split_k': np.float64(2)})"),
    (SC, "ok", "x = a16[:, :8].repeat(8, 1); y = b16[:8].repeat(8, 0); same(M(x, y, schedule={'split_k': np.int64(2)}), M(x, y, split_k=2))"),
    (SC, "err", "M(schedule='{\"split_k\": 2}')"),
    (SC, "err", "M(schedule=Path('nosuch.json'))"),
    (SC, "err", "M(schedule=b'cublas')"),
    (SC, "ok", "M(schedule='CHAIN')"),  # campaign 11's names rule
    (SC, "ok", "M(schedule='cublas ')"),  # campaign 11's names rule
    # ---- AMD through the API
    (AMD, "ok", "d = M(gpu='MI300X'); assert d.dtype == np.float32"),
    (AMD, "err", "M(gpu='MI300X', instr='mma')"),
    (AMD, "err", "M(gpu='MI300X', instr='mfma.bf16.f32.k16')"),
    (AMD, "ok", "same(M(gpu='MI300X', instr='mfma.f16.f32.k16'), M(gpu='MI300X'))"),
    (AMD, "err", "M(gpu='MI300X', model='h100')"),
    (AMD, "err", "M(gpu='H100', model='mi300x')"),
    (AMD, "err", "M(a16.astype(ml_dtypes.float8_e4m3fn), b16.astype(ml_dtypes.float8_e4m3fn), gpu='MI100')"),
    (AMD, "ok", "x = a16.astype(ml_dtypes.float8_e4m3fnuz); y = b16.astype(ml_dtypes.float8_e4m3fnuz); d = M(x, y, gpu='MI300X'); assert d.shape == (8, 8)"),
    (AMD, "err", "M(a16.astype(ml_dtypes.float8_e4m3fnuz), b16.astype(ml_dtypes.float8_e4m3fnuz), gpu='H100')"),
    (AMD, "err", "M(gpu='MI300X', schedule='deepgemm-fp8')"),
    (AMD, "err", "M(gpu='gfx942')"),
    (AMD, "ok", "d = M(a16.astype(np.float32), b16.astype(np.float32), gpu='MI250X'); assert d.dtype == np.float32"),
    # ---- fit_gemm
    (FG, "ok", "f = FIT(); assert f is not None"),
    (FG, "any", "FIT(gpu='MI300X')"),
    (FG, "err", "FIT(jobs=-2)"),
    (FG, "err", "FIT(bounds=(99,))"),
    (FG, "err", "FIT(bounds='8')"),
    (FG, "err", "FIT(d=D0.view(np.uint32)[:, :7])"),
    (FG, "err", "FIT(d=D0)"),
    (FG, "err", "FIT(alpha=None)"),
    (FG, "err", "FIT(bias=np.zeros(8, np.uint32), bias_fmt='s32')"),
    (FG, "err", "fit_gemm.fit(a16.view(np.uint16), 'nope', b16.view(np.uint16), 'f16', None, None, D0.view(np.uint32), 'f32', gpu='H100')"),
    # ---- captures and profiles
    (CP, "err", "tcprobe.capture.load('')"),
    (CP, "err", "tcprobe.capture.load(str(ROOT / 'empty.npy'))"),
    (CP, "err", "tcprobe.capture.load(str(ROOT / 'dir.npy'))"),
    (CP, "err", "tcprobe.capture.load(str(ROOT / 'dangling.npy'))"),
    (CP, "err", "from tcprobe.devices.sim_profile import load_profile; load_profile(str(ROOT / 'p_wb57.toml'))"),
    (CP, "err", "from tcprobe.devices.sim_profile import load_profile; load_profile(str(ROOT / 'p_dupkey.toml'))"),
    (CP, "err", "from tcprobe.devices.sim_profile import load_profile; load_profile(str(ROOT / 'p_bin.toml'))"),
    (CP, "err", "M(model=str(ROOT / 'p_bs0.toml'))"),
    (CP, "err", "M(model=str(ROOT / 'p_dupkey.toml'))"),
    (CP, "err", "E(lambda: None, model=str(ROOT / 'p_nan1.toml'))"),
    # ---- added while fixing: the rules the fixes made, from other sides
    (ER, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    th = threading.Thread(target=lambda: torch.mm(A, B)); th.start(); th.join()\nassert getattr(rep, 'threads', 0) == 1 and rep.routed == 0"),
    (ER, "ok", "from concurrent.futures import ThreadPoolExecutor\nrep = Report()\nwith emulate('H100', report=rep):\n    with ThreadPoolExecutor(2) as ex:\n        list(ex.map(lambda _: torch.mm(A, B), range(2)))\nassert getattr(rep, 'threads', 0) >= 1"),
    (ER, "ok", "rep = Report()\nwith emulate('H100', report=rep):\n    torch.mm(A, B)\nth = threading.Thread(target=lambda: None); th.start(); th.join()\nassert getattr(rep, 'threads', 0) == 0"),
    (EM, "ok", "x = T(2, 8, 64); y = T(2, 64, 8); d, r = E(lambda: torch.bmm(x, y), schedule={'split_k': 2}); tm(d[1], M(x[1], y[1], dtype='bfloat16', split_k=2))"),
    (EM, "ok", "x = T(8, 64, dt=torch.float16); y = T(64, 8, dt=torch.float16); d, r = E(lambda: x @ y, schedule='stream-k'); tm(d, M(x, y, dtype='float16', schedule='stream-k'))"),
    (EM, "torch", "E(lambda: torch.addmm(C, A, B, alpha=torch.tensor([2.0])))"),
    (FG, "err", "FIT(bounds=(0,))"),
    (FG, "err", "FIT(bounds=(True,))"),
    (FG, "ok", "FIT(bounds=(8,))"),
    (FG, "err", "FIT(bounds=[8.0])"),
    (FG, "err", "fit_gemm.fit(a16.view(np.uint16), 'f16', b16.view(np.uint16), 'f16', np.zeros((8, 8), np.uint32), 's32', D0.view(np.uint32), 'f32', gpu='H100')"),
    (AL, "ok", "x = np.ones((8, 16), np.int8); d = M(x, x.T.copy(), c=np.ones((8, 8), np.int32), beta=torch.tensor([2])); assert int(d[0, 0]) == 18"),
    (AL, "ok", "x = np.ones((8, 16), np.int8); d = M(x, x.T.copy(), alpha=np.array([[2]], np.int64)); assert int(d[0, 0]) == 32"),
    (MA, "err", "M(np.broadcast_to(np.float16(1), (300000, 300000)), np.broadcast_to(np.float16(1), (300000, 8)))"),
    # ---- more emulate forms a user reaches without naming a GEMM
    (EM, "ok", "d, r = E(lambda: torch.cdist(A.float(), B.t().float())); assert r.routed + r.fallback + sum(r.torch_ops.values()) > 0"),
    (EM, "ok", "d, r = E(lambda: torch.func.vmap(torch.mm)(A[None].expand(2, 8, 16), B[None].expand(2, 16, 8))); e, _ = E(lambda: torch.mm(A, B)); tsame(d[1], e)"),
    (EM, "ok", "d, r = E(lambda: torch.linalg.matrix_power(C, 3)); e, _ = E(lambda: torch.mm(torch.mm(C, C), C)); assert r.routed >= 1 or r.fallback >= 1"),
    (EM, "ok", "d, r = E(lambda: torch.kron(A[:2, :2], B[:2, :2])); assert sum(r.torch_ops.values()) > 0 or r.routed + r.fallback > 0"),
    (EM, "ok", "x = A.float().requires_grad_(); d, r = E(lambda: torch.func.grad(lambda t: torch.mm(t.bfloat16(), B).float().sum())(x)); assert d.shape == x.shape and r.routed >= 1"),
    (EM, "ok", "prev = torch.get_float32_matmul_precision()\ntry:\n    torch.set_float32_matmul_precision('high')\n    d, r = E(lambda: torch.mm(A.float(), B.float()), schedule='cublas-tf32')\nfinally:\n    torch.set_float32_matmul_precision(prev)\ne = M(A.float(), B.float(), schedule='cublas-tf32'); assert r.routed == 1 and tw(d) == tw(e)"),
    (EM, "ok", "d, r = E(lambda: torch.mm(A.float(), B.float()), gpu='MI300X'); e = M(A.float(), B.float(), gpu='MI300X', schedule={}); assert r.routed == 1 and tw(d) == tw(e)"),
    (EM, "ok", "d, r = E(lambda: torch.baddbmm(C[None].expand(2, 8, 8), A[None].expand(2, 8, 16), B[None].expand(2, 16, 8), beta=0.5, alpha=2)); e, _ = E(lambda: torch.addmm(C, A, B, beta=0.5, alpha=2)); tsame(d[0], e)"),
    (EM, "ok", "d, r = E(lambda: torch.mv(A, B[:, 0])); e, _ = E(lambda: torch.mm(A, B[:, :1])); tsame(d, e[:, 0])"),
    (EM, "ok", "d, r = E(lambda: torch.addmv(C[:, 0], A, B[:, 0], beta=0)); e, _ = E(lambda: torch.mv(A, B[:, 0])); tsame(d, e)"),
    (EM, "torch", "E(lambda: torch.mm(A.to_sparse(), B.to_sparse()) + 1)"),
    (EM, "ok", "x = A.clone(); d, r = E(lambda: torch.matmul(x, B, out=torch.empty(8, 8, dtype=torch.bfloat16))); e, _ = E(lambda: torch.mm(A, B)); tsame(d, e)"),
    (EM, "ok", "lin = torch.nn.Linear(16, 8, bias=False).to(torch.bfloat16)\nwith torch.inference_mode():\n    d, r = E(lambda: lin(A))\ne, _ = E(lambda: torch.mm(A, lin.weight.t())); tsame(d, e)"),
    (EM, "ok", "d, r = E(lambda: torch.einsum('bij,bjk->bik', A[None], B[None])); e, _ = E(lambda: torch.mm(A, B)); tsame(d[0], e)"),
    (EM, "ok", "d, r = E(lambda: A @ B, instr='mma'); tm(d, M(A, B, dtype='bfloat16', instr='mma'))"),
    (EM, "err", "E(lambda: None, gpu='H100', instr='mma.f16.f32.k16x')"),
    (EM, "err", "E(lambda: None, gpu='B200', model=str(ROOT / 'p_dupkey.toml'))"),
    (EM, "err", "E(lambda: torch.mm(A, B), model=str(ROOT / 'p_bs1024.toml'))"),
    # ---- dot and matmul with models from TOML, AMD fp8 on every side
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', model=str(ROOT / 'p_bs1024.toml'))"),
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', model=str(ROOT / 'p_orrd.toml'))"),
    (DT, "err", "tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath='mma.bf16.f32.k16', model=str(ROOT / 'nosuch.toml'))"),
    (AMD, "err", "tcprobe.dot([0x38] * 32, [0x38] * 32, 0, datapath='mfma.fp8.e4m3fnuzxe5m2fnuz.f32.k32', gpu='H100')"),
    (AMD, "ok", "v = tcprobe.dot([0x40] * 32, [0x40] * 32, 0, datapath='mfma.fp8.e4m3fnuz.f32.k32', gpu='MI300X'); assert v == 0x42000000"),
    (AMD, "err", "tcprobe.dot([0x40] * 32, [0x40] * 32, 0, datapath='mfma.fp8.e4m3fnuz.f32.k32', gpu='MI250X')"),
    (AMD, "err", "M(gpu='MI300X', instr='mfma.xf32.tf32.f32.k8')"),
    (AMD, "ok", "d = M(a16.astype(np.float32), b16.astype(np.float32), gpu='MI300X', instr='mfma.xf32.tf32.f32.k8'); assert d.dtype == np.float32"),
    (AMD, "err", "M(a16.astype(np.float32), b16.astype(np.float32), gpu='MI100', instr='mfma.xf32.tf32.f32.k8')"),
]
