"""tcprobe.torch.emulate: every routed aten op word for word against
tcprobe.matmul on the same operands (and MMA-Sim's instruction chained over
K where it has it), broadcasting, layouts, zero sizes, autograd, fallback,
strict, nesting and exceptions."""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tcprobe  # noqa: E402
import tcprobe.torch as tt  # noqa: E402
from tcprobe.torch.adapter import f32_tensor, gemm  # noqa: E402

F = torch.nn.functional


def bits(t):
    """A float tensor's words (int64), for exact comparison."""
    view = {torch.float32: torch.int32, torch.bfloat16: torch.int16,
            torch.float16: torch.int16}[t.dtype]
    return t.contiguous().view(view).numpy().astype(np.int64)


def same(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(bits(x), bits(y)), f"{(bits(x) != bits(y)).sum()} words differ"


def ref(a, b, gpu="H100", dtype=None):
    """tcprobe.matmul's D in f32, converted RNE to the inputs' dtype."""
    d = tcprobe.matmul(a.contiguous(), b.contiguous(), gpu=gpu)
    return d.to(dtype or a.dtype)


def rnd(*shape, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed + 7 * len(shape) + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


@pytest.mark.parametrize("gpu", ["A100", "H100", "B200"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_mm_equals_matmul(gpu, dtype):
    a, b = rnd(9, 40, dtype=dtype), rnd(40, 7, dtype=dtype, seed=1)
    rep = tt.Report()
    with tt.emulate(gpu=gpu, report=rep):
        d = a @ b
    same(d, ref(a, b, gpu))
    assert rep.ops["mm"].routed == 1 and rep.fallback == 0
    assert rep.ops["mm"].shapes == [((9, 40), (40, 7))]


def test_linear_and_addmm_bias_is_c():
    x, w, bias = rnd(6, 33), rnd(5, 33, seed=2), rnd(5, seed=3)
    with tt.emulate(gpu="H100"):
        y = F.linear(x, w, bias)
        z = torch.addmm(bias, x, w.t())
    c = bias.float().expand(6, 5).contiguous()
    want = tcprobe.matmul(x, w.t().contiguous(), c, gpu="H100").bfloat16()
    same(y, want)
    same(z, want)


def test_addmm_alpha_beta():
    a, b, c = rnd(4, 20), rnd(20, 6, seed=4), rnd(4, 6, dtype=torch.float32, seed=5)
    with tt.emulate(gpu="H100"):
        d = torch.addmm(c.bfloat16(), a, b, alpha=2.0, beta=0.5)
        d0 = torch.addmm(torch.full((4, 6), float("nan")).bfloat16(), a, b, beta=0)
    acc = tcprobe.matmul(a, b, gpu="H100")
    # powers of two scale exactly, so the f32 add below rounds once, as the fma does
    same(d, (acc * 2 + c.bfloat16().float() * 0.5).bfloat16())
    same(d0, acc.bfloat16())


@pytest.mark.parametrize("sa,sb", [((3, 5, 16), (16, 4)), ((16,), (2, 16, 3)),
                                   ((2, 1, 5, 8), (3, 8, 2)), ((5, 8), (8,)), ((8,), (8,) * 0 + (8, 3))])
def test_matmul_broadcast_forms(sa, sb):
    a, b = rnd(*sa), rnd(*sb, seed=6)
    with tt.emulate(gpu="H100"):
        d = torch.matmul(a, b)
    a2 = a if a.dim() > 1 else a[None]
    b2 = b if b.dim() > 1 else b[:, None]
    shape = torch.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    aa = a2.expand(*shape, *a2.shape[-2:]).reshape(-1, *a2.shape[-2:])
    bb = b2.expand(*shape, *b2.shape[-2:]).reshape(-1, *b2.shape[-2:])
    want = torch.stack([ref(x, y) for x, y in zip(aa, bb, strict=True)])
    want = want.reshape(*shape, aa.shape[1], bb.shape[2])
    if a.dim() == 1:
        want = want.squeeze(-2)
    if b.dim() == 1:
        want = want.squeeze(-1)
    same(d, want)


def test_bmm_baddbmm():
    a, b, c = rnd(3, 5, 24), rnd(3, 24, 4, seed=7), rnd(3, 5, 4, seed=8)
    with tt.emulate(gpu="B200"):
        d = torch.bmm(a, b)
        e = torch.baddbmm(c, a, b)
    same(d, torch.stack([ref(a[i], b[i], "B200") for i in range(3)]))
    same(e, torch.stack([tcprobe.matmul(a[i], b[i], c[i].float(), gpu="B200").bfloat16()
                         for i in range(3)]))


def test_non_contiguous_and_transposed():
    base = rnd(40, 30)
    a = base[::2, 1:25:2]  # strided
    b = rnd(7, 12, seed=9).t()  # transposed
    with tt.emulate(gpu="H100"):
        d = a @ b
    same(d, ref(a, b))


def test_zero_size_dims():
    c = rnd(3, 4)
    with tt.emulate(gpu="H100"):
        e1 = rnd(0, 5) @ rnd(5, 4)
        e2 = torch.zeros(3, 0, dtype=torch.bfloat16) @ torch.zeros(0, 4, dtype=torch.bfloat16)
        e3 = torch.addmm(c, torch.zeros(3, 0, dtype=torch.bfloat16),
                         torch.zeros(0, 4, dtype=torch.bfloat16))
        e4 = torch.bmm(rnd(0, 2, 3), rnd(0, 3, 4))
    assert e1.shape == (0, 4) and e4.shape == (0, 2, 4)
    same(e2, torch.zeros(3, 4, dtype=torch.bfloat16))
    same(e3, c)


def test_requires_grad_inputs():
    a = rnd(6, 20).requires_grad_()
    b = rnd(20, 3, seed=10).requires_grad_()
    with tt.emulate(gpu="H100"):
        d = a @ b
    assert d.requires_grad
    same(d.detach(), ref(a.detach(), b.detach()))


def test_mlp_gradients_are_the_same_gemms_by_hand():
    x = rnd(8, 24, seed=11)
    w1, b1 = rnd(16, 24, seed=12).requires_grad_(), rnd(16, seed=13).requires_grad_()
    w2, b2 = rnd(5, 16, seed=14).requires_grad_(), rnd(5, seed=15).requires_grad_()
    x.requires_grad_()
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        h = F.relu(F.linear(x, w1, b1))
        y = F.linear(h, w2, b2)
        y.sum().backward()
    assert rep.fallback == 0
    X, W1, B1, W2, B2 = (t.detach() for t in (x, w1, b1, w2, b2))

    def mm(p, q, c=None):
        if c is None:
            return ref(p, q)
        return tcprobe.matmul(p.contiguous(), q.contiguous(), c, gpu="H100").bfloat16()

    H = F.relu(mm(X, W1.t(), B1.float().expand(8, 16).contiguous()))
    same(h.detach(), H)
    Y = mm(H, W2.t(), B2.float().expand(8, 5).contiguous())
    same(y.detach(), Y)
    g2 = torch.ones(8, 5, dtype=torch.bfloat16)
    same(w2.grad, mm(H.t(), g2).t())
    g1 = mm(g2, W2) * (H > 0)
    same(w1.grad, mm(X.t(), g1).t())
    same(x.grad, mm(g1, W1))


def test_ops_outside_the_mode_are_untouched():
    a, b = rnd(8, 64), rnd(64, 8, seed=16)
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        pass
    d = a @ b
    same(d, torch.mm(a, b))
    assert rep.ops == {}


def test_nesting_and_exceptions_restore_dispatch():
    a, b = rnd(4, 48), rnd(48, 4, seed=17)
    outer, inner = tt.Report(), tt.Report()
    with tt.emulate(gpu="H100", report=outer):
        with tt.emulate(gpu="A100", report=inner):
            d_in = a @ b
        d_out = a @ b
    same(d_in, ref(a, b, "A100"))
    same(d_out, ref(a, b, "H100"))
    assert inner.routed == 1 and outer.routed == 1
    rep = tt.Report()
    with pytest.raises(RuntimeError, match="boom"):
        with tt.emulate(gpu="H100", report=rep):
            a @ b
            raise RuntimeError("boom")
    assert torch._C._len_torch_dispatch_stack() == 0
    a @ b
    assert rep.routed == 1


def test_fallback_counted_and_strict():
    a, b = rnd(4, 8, dtype=torch.float32), rnd(8, 3, dtype=torch.float32, seed=18)
    assert torch.get_float32_matmul_precision() == "highest"
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        d = a @ b
        torch.dot(a[0], a[1])
    same(d, torch.mm(a, b))
    assert rep.ops["mm"].fallback == 1 and rep.ops["dot"].fallback == 1 and rep.routed == 0
    with pytest.raises(ValueError, match=r"^strict: aten\.mm "):
        with tt.emulate(gpu="H100", strict=True):
            a @ b
    with pytest.raises(ValueError, match="strict: aten.mm"):  # V100 has no bf16 instruction
        with tt.emulate(gpu="V100", strict=True):
            rnd(4, 8) @ rnd(8, 2)


def test_f32_as_tf32_when_torch_says_so():
    a, b = rnd(5, 20, dtype=torch.float32), rnd(20, 3, dtype=torch.float32, seed=19)
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        with tt.emulate(gpu="A100"):
            d = a @ b
    finally:
        torch.set_float32_matmul_precision(old)
    # cuBLAS rounds the f32 operands to tf32 (RNE) first: the library schedule measured on an H200
    same(d, tcprobe.matmul(a, b, gpu="A100", schedule="cublas-tf32"))
    assert not np.array_equal(bits(d), bits(tcprobe.matmul(a, b, gpu="A100")))


def test_scaled_mm_fp8():
    a = rnd(16, 64, dtype=torch.float32).to(torch.float8_e4m3fn)
    b = rnd(24, 64, dtype=torch.float32, seed=20).to(torch.float8_e4m3fn).t()
    sa = torch.tensor([2.0 ** (i % 3 - 1) for i in range(16)]).reshape(16, 1)
    sb = torch.tensor([2.0 ** (i % 2) for i in range(24)]).reshape(1, 24)
    with tt.emulate(gpu="H100"):
        d = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
        e = torch._scaled_mm(a, b, torch.tensor(0.5), torch.tensor(4.0), out_dtype=torch.float32)
    acc = tcprobe.matmul(a, b.contiguous(), gpu="H100")
    same(d, (acc * sa * sb).bfloat16())  # powers of two: exact
    same(e, acc * 2)


def test_int_mm():
    g = torch.Generator().manual_seed(3)
    a = torch.randint(-128, 128, (17, 64), dtype=torch.int8, generator=g)
    b = torch.randint(-128, 128, (64, 8), dtype=torch.int8, generator=g)
    with tt.emulate(gpu="H100"):
        d = torch._int_mm(a, b)
    assert torch.equal(d, tcprobe.matmul(a, b, gpu="H100"))


@pytest.mark.parametrize("conv, dims", [(F.conv2d, 2), (F.conv1d, 1)])
def test_conv_padding_by_name_is_the_padding_it_names(conv, dims):
    """padding='valid' reaches aten as one value for every dimension ([0]);
    routed, it gives the words of padding=0 ('same' for a 3-wide kernel: 1)."""
    x = rnd(2, 4, *(7,) * dims)
    w = rnd(5, 4, *(3,) * dims, seed=23)
    words = {}
    for pad in ("valid", 0, "same", 1):
        rep = tt.Report()
        with tt.emulate(gpu="H100", report=rep):
            words[pad] = conv(x, w, padding=pad).view(torch.int16)
        assert rep.stats("convolution").routed == 1 and rep.fallback == 0
    assert torch.equal(words["valid"], words[0]) and torch.equal(words["same"], words[1])


@pytest.mark.parametrize("kw", [{"padding": 1}, {"stride": 2, "dilation": (1, 2)},
                                {"groups": 2}])
def test_conv2d_as_implicit_gemm_in_rsc_order(kw):
    groups = kw.get("groups", 1)
    x, w, bias = rnd(2, 4, 6, 5), rnd(6, 4 // groups, 3, 2, seed=21), rnd(6, seed=22)
    with tt.emulate(gpu="H100"):
        y = F.conv2d(x, w, bias, **kw)
    stride = kw.get("stride", 1)
    dil = kw.get("dilation", (1, 1))
    pad = kw.get("padding", 0)
    xp = F.pad(x, (pad, pad, pad, pad))
    n, c, hh, ww = xp.shape
    o, cg, r, s = w.shape
    p, q = y.shape[2], y.shape[3]
    out = torch.empty(n, o, p, q, dtype=torch.bfloat16)
    og = o // groups
    for g in range(groups):
        rows = []  # one row per output pixel: K in (r, s, c) order, c fastest
        for ni in range(n):
            for pi in range(p):
                for qi in range(q):
                    rows.append(torch.stack([
                        xp[ni, g * cg + ci, pi * stride + ri * dil[0], qi * stride + si * dil[1]]
                        for ri in range(r) for si in range(s) for ci in range(cg)]))
        a = torch.stack(rows)
        b = w[g * og:(g + 1) * og].permute(0, 2, 3, 1).reshape(og, -1).t()
        d = tcprobe.matmul(a, b.contiguous(), gpu="H100").bfloat16().float()
        d = (d + bias[g * og:(g + 1) * og].float()).bfloat16()  # bias after, in f32, once
        out[:, g * og:(g + 1) * og] = d.reshape(n, p, q, og).permute(0, 3, 1, 2)
    same(y, out)


def test_report_compare_and_records():
    a, b = rnd(8, 32), rnd(32, 8, seed=23)
    rep = tt.Report(compare=True, record=True)
    with tt.emulate(gpu="H100", report=rep):
        d = a @ b
    row = rep.rows()[0]
    assert row["op"] == "mm" and row["routed"] == 1 and row["seconds"] > 0
    want = torch.mm(a, b)  # torch's own CPU result

    def order(t):  # bf16 words as integers increasing with the value
        w = bits(t) & 0xFFFF
        return np.where(w & 0x8000, -(w & 0x7FFF), w)

    assert row["max_ulp"] == int(np.abs(order(d) - order(want)).max())
    exact = a.double() @ b.double()
    rel = ((d.double() - want.double()).abs() / (a.double().abs() @ b.double().abs())).max()
    assert row["max_rel"] == pytest.approx(float(rel))
    assert exact.shape == d.shape
    (r,) = rep.records
    # the record holds the D the block got (bf16, widened exactly to f32)
    same(r.d, tcprobe.matmul(r.a, r.b, gpu="H100", dtype="bfloat16").to(torch.float32))
    assert r.out_dtype == torch.bfloat16  # what a redo passes as adapter.gemm's out_dtype
    same(r.d, f32_tensor(gemm(r.a, r.b, gpu="H100", out_dtype=r.out_dtype)))


@pytest.mark.peer
@pytest.mark.parametrize("gpu,cls,arch,shape,k", [
    ("H100", "WGMMA", "Hopper", "m64n8k16.f32.bf16.bf16", 16),
    ("A100", "MMA", "Ampere", "m16n8k16.f32.bf16.bf16.f32", 16)])
def test_mm_equals_mmasim_chain(gpu, cls, arch, shape, k):
    pytest.importorskip("mmasim")
    from mmasim_bridge import _view, _words
    from test_matmul_mmasim import mmasim_chain

    a, b = rnd(16, 72), rnd(72, 8, seed=24)
    with tt.emulate(gpu=gpu):
        d = a @ b
    aw = a.view(torch.int16).numpy().astype(np.uint32) & 0xFFFF
    bw = b.view(torch.int16).numpy().astype(np.uint32) & 0xFFFF
    c = np.zeros((16, 8), np.uint32)
    theirs = mmasim_chain(cls, arch, shape, k, aw, bw, c, "bf16", "f32")
    same(d, _view(theirs, "f32").bfloat16())
    assert _words  # the bridge's word reader is the one the chain used


def test_import_tcprobe_never_imports_torch_and_missing_torch_says_how():
    code = "import sys, tcprobe, tcprobe.matrix; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n import tcprobe.torch\nexcept ImportError as e:\n print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.count("\n") == 1 and "pip install torch" in out.stdout


def test_bad_gpu_and_report():
    with pytest.raises(ValueError, match="^gpu"):
        tt.emulate(gpu="Z80")
    with pytest.raises(ValueError, match="^report"):
        tt.emulate(gpu="H100", report={})
