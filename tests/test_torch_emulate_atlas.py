"""emulate(gpu="H200") with no schedule given: every committed H200 library
call word for word (reports/silicon/2026-12-04-h200/library), each product's
schedule and provenance in the report, strict refusing guesses, and the
boundary of torch mode (out= and in-place forms, fused fast paths, unrouted
ops, instr checked once, nested compare against plain torch)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tcprobe  # noqa: E402
import tcprobe.torch as tt  # noqa: E402
from tcprobe.atlas import replay  # noqa: E402

F = torch.nn.functional
CALLS = replay.calls()
FAST = [c for c in CALLS if c.shape == (64, 64, 512)]
SLOW = [c for c in CALLS if c.shape != (64, 64, 512)]


def test_the_split():
    assert len(FAST) == 90 and len(SLOW) == 105


@pytest.mark.parametrize("call", FAST + [pytest.param(c, marks=pytest.mark.slow) for c in SLOW],
                         ids=[c.id.split("library/")[1] for c in FAST + SLOW])
def test_plain_emulate_reproduces_the_h200(call):
    rep = tt.Report()
    differ, size, _ = replay.run(call, tt.emulate, report=rep)
    assert differ == 0, f"{differ} of {size} words differ from the H200's"
    # the block ran every call of the case (the runner's order); each product measured
    gemms = [g for s in rep.ops.values() for g in s.gemms.values()]
    assert {g["provenance"] for g in gemms} == {"measured"}
    op = {"matmul": "mm", "linear": "mm", "scaled_mm": "_scaled_mm",
          "scaled_mm_fast": "_scaled_mm"}.get(call.op, "addmm")
    mine = [g for g in rep.ops[op].gemms.values()
            if any(e.endswith(f"{call.folder.split('library/')[1]}/{call.result['d']}")
                   for e in g["evidence"])]
    assert len(mine) == 1


def rnd(*shape, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


def bits(t):
    view = {torch.float32: torch.int32, torch.bfloat16: torch.int16,
            torch.float16: torch.int16}[t.dtype]
    return t.contiguous().view(view).numpy().astype(np.int64)


def same(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(bits(x), bits(y)), f"{(bits(x) != bits(y)).sum()} words differ"


def test_a_users_schedule_overrides_the_atlas():
    call = next(c for c in FAST if c.fmt == "tf32" and c.id.endswith("random.matmul"))
    differ, size, _ = replay.run(call, tt.emulate, schedule="cublas-tf32")
    assert differ > size // 2  # no split: the H200's 8 splits are not run
    rep = tt.Report()
    replay.run(call, tt.emulate, schedule="cublas-tf32", report=rep)
    (g,) = rep.ops["mm"].gemms.values()
    assert g["provenance"] == "given"


def test_rows_carry_each_shapes_schedule():
    a, b = rnd(256, 4096), rnd(4096, 256, seed=1)
    x, y = rnd(30, 40), rnd(40, 20, seed=2)
    rep = tt.Report()
    with tt.emulate(gpu="H200", report=rep):
        a[:64, :512] @ b[:512, :64]  # a strided view of a measured shape
        x @ y
        x[:3] @ y  # M = 3, K = 40: where cuBLASLt may pick gemmSN
    (row,) = [r for r in rep.rows() if r["op"] == "mm"]
    by = {(g["m"], g["n"], g["k"]): g for g in row["gemms"]}
    assert by[(64, 64, 512)]["provenance"] == "measured"
    assert by[(30, 20, 40)]["provenance"] == "predicted"
    assert "leave-one-out" in by[(30, 20, 40)]["rule"]
    assert by[(3, 20, 40)]["provenance"] == "default guess"
    assert "gemmSN" in by[(3, 20, 40)]["reason"]
    assert rep.provenance() == {"measured": 1, "predicted": 1, "default guess": 1}


def test_strict_refuses_guesses_not_measurements():
    a, b = rnd(64, 512), rnd(512, 64, seed=3)
    with tt.emulate(gpu="H200", strict=True):
        d = a @ b
    same(d, tcprobe.matmul(a, b, gpu="H200", schedule={"instr": "mma"}).bfloat16())
    with pytest.raises(ValueError, match=r"^strict: aten\.mm 1x64x512 bf16 on H200: .*gemv"):
        with tt.emulate(gpu="H200", strict=True):
            a[:1] @ b
    with pytest.raises(ValueError, match=r"^strict: aten\.mm .*no atlas for H100"):
        with tt.emulate(gpu="H100", strict=True):
            a @ b
    with tt.emulate(gpu="H100", strict="routes"):
        a @ b
    with pytest.raises(ValueError, match="^strict must be"):
        tt.emulate(gpu="H100", strict="yes")


def test_addmm_beta1_adds_c_to_the_written_product():
    """torch.addmm(C, A, B) with beta = 1 and a 2-D bf16 C on the H200:
    out(out(acc) + C), as measured; the f32 epilogue differs in some words."""
    a, b, c = rnd(64, 512, seed=4), rnd(512, 64, seed=5), rnd(64, 64, seed=6)
    with tt.emulate(gpu="H200"):
        d = torch.addmm(c, a, b)
    acc = tcprobe.matmul(a, b, gpu="H200", dtype="bfloat16")  # written in bf16 first
    same(d, (acc.float() + c.float()).bfloat16())  # one f32 add of two bf16 values, RNE
    fused = tcprobe.matmul(a, b, c, gpu="H200")
    assert (bits(d) != bits(fused)).any()


def test_scaled_mm_promotes_unless_fast_accum():
    a = rnd(64, 512, dtype=torch.float32, seed=7).to(torch.float8_e4m3fn)
    b = rnd(64, 512, dtype=torch.float32, seed=8).to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0)
    with tt.emulate(gpu="H200"):
        slow = torch._scaled_mm(a, b, one, one, out_dtype=torch.float32)
        fast = torch._scaled_mm(a, b, one, one, out_dtype=torch.float32, use_fast_accum=True)
    bc = b.contiguous()
    same(slow, tcprobe.matmul(a, bc, gpu="H200", schedule={"instr": "wgmma", "promote": 4}))
    same(fast, tcprobe.matmul(a, bc, gpu="H200", schedule={"instr": "wgmma"}))
    assert (bits(slow) != bits(fast)).any()


def test_out_and_inplace_forms_are_routed():
    a, b, c = rnd(9, 40, seed=9), rnd(40, 7, seed=10), rnd(9, 7, seed=11)
    x, y, z = rnd(2, 9, 40, seed=12), rnd(2, 40, 7, seed=13), rnd(2, 9, 7, seed=14)
    v, w = rnd(40, seed=15), rnd(9, seed=16)
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        o = torch.empty(9, 7, dtype=torch.bfloat16)
        r = torch.mm(a, b, out=o)
        c1 = c.clone().addmm_(a, b, beta=0.5, alpha=2)
        z1 = z.clone().baddbmm_(x, y, beta=0.5)
        w1 = w.clone().addmv_(a, v, beta=0.5)
    assert r is o and rep.fallback == 0
    same(o, tcprobe.matmul(a, b, gpu="H100").bfloat16())
    same(c1, tcprobe.matmul(a, b, c, alpha=2, beta=0.5, gpu="H100"))
    same(z1, torch.stack([tcprobe.matmul(x[i], y[i], z[i], beta=0.5, gpu="H100")
                          for i in range(2)]))
    same(w1, tcprobe.matmul(a, v[:, None].contiguous(), w[:, None].contiguous(), beta=0.5,
                            gpu="H100")[:, 0])
    assert {op: rep.ops[op].routed for op in ("mm", "addmm_", "baddbmm_", "addmv_")} == \
        {"mm": 1, "addmm_": 1, "baddbmm_": 1, "addmv_": 1}


def test_unrouted_ops_are_counted_and_fused_paths_refused():
    x = rnd(2, 5, 16, dtype=torch.float32, seed=17)
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval()
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval()
    rep = tt.Report()
    with torch.no_grad(), tt.emulate(gpu="H100", report=rep):
        mha(x, x, x, need_weights=False)
        layer(x)
        torch.softmax(x, -1)
        F.layer_norm(x, (16,))
        F.gelu(x)
    assert rep.ops["_native_multi_head_attention"].fallback == 1
    assert rep.ops["_transformer_encoder_layer_fwd"].fallback == 1
    assert {"_softmax", "native_layer_norm", "gelu"} <= set(rep.unmodelled)
    rows = {r["op"]: r for r in rep.rows()}
    assert rows["gelu"]["torch"] == 1 and rows["gelu"]["unmodelled"]
    with pytest.raises(ValueError, match=r"^strict: aten\._native_multi_head_attention .*fused"):
        with torch.no_grad(), tt.emulate(gpu="H100", strict="routes"):
            mha(x, x, x, need_weights=False)


@pytest.mark.parametrize("gpu,instr,match", [
    ("H100", "wgmmma", "^instr: H100 has no 'wgmmma' \\(it has mma, wgmma\\)"),
    ("H100", "tcgen05", "^instr: H100 has no 'tcgen05'"),
    ("MI300X", "mma", "^instr: MI300X has no 'mma' \\(it has mfma\\)"),
    ("H100", 3, "^instr must name")])
def test_a_bad_instr_is_one_error_at_entry(gpu, instr, match):
    with pytest.raises(ValueError, match=match):
        tt.emulate(gpu=gpu, instr=instr)


def test_nested_compare_is_against_plain_torch():
    """tf32 (precision 'high'): the inner A100 block's products against torch's
    own f32 CPU result, not against the outer H100 emulation (the same tf32 words)."""
    a, b = rnd(8, 256, dtype=torch.float32, seed=18), rnd(256, 8, dtype=torch.float32, seed=19)
    inner = tt.Report(compare=True)
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        with tt.emulate(gpu="H100"):
            outer_d = a @ b
            with tt.emulate(gpu="A100", report=inner):
                d = a @ b
    finally:
        torch.set_float32_matmul_precision(old)
    plain = torch.mm(a, b)
    w = [bits(t) & 0xFFFFFFFF for t in (d, plain, outer_d)]
    order = [np.where(x & 0x80000000, -(x & 0x7FFFFFFF), x) for x in w]
    want = int(np.abs(order[0] - order[1]).max())
    assert want > 0 and inner.ops["mm"].max_ulp == want
    assert int(np.abs(order[0] - order[2]).max()) != want


def test_empty_products_are_exact_not_guesses():
    c = rnd(3, 4, seed=20)
    z = torch.zeros(3, 0, dtype=torch.bfloat16)
    rep = tt.Report()
    with tt.emulate(gpu="H200", strict=True, report=rep):
        e = torch.addmm(c, z, torch.zeros(0, 4, dtype=torch.bfloat16))
    same(e, c)
    assert rep.provenance() == {"exact": 1}
