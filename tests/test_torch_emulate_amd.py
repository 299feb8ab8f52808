"""tcprobe.torch.emulate(gpu="MI300X"): bf16/f16 GEMMs on the generation's
v_mfma, f32 on the f32 MFMA, and f32 under TF32 on MI300X's xf32 MFMA (what
hipBLASLt issues there: ROCm/rocm-libraries PR 9176), word for word against
tcprobe.matmul on the same instruction, and a hand-computed word for each
f32 route."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tcprobe  # noqa: E402
import tcprobe.torch as tt  # noqa: E402


def bits(t):
    view = {torch.float32: torch.int32, torch.bfloat16: torch.int16,
            torch.float16: torch.int16}[t.dtype]
    return t.contiguous().view(view).numpy().astype(np.int64)


def same(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(bits(x), bits(y)), f"{(bits(x) != bits(y)).sum()} words differ"


def rnd(*shape, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed + 11 * len(shape) + sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


class precision:
    """torch.set_float32_matmul_precision for a block (restored after)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(self.value)

    def __exit__(self, *exc):
        torch.set_float32_matmul_precision(self.old)


@pytest.mark.parametrize("gpu", ["MI300X", "MI250X", "MI100"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_gemms_equal_matmul(gpu, dtype):
    a, b, bias = rnd(7, 40, dtype=dtype), rnd(40, 5, dtype=dtype, seed=1), rnd(5, dtype=dtype, seed=2)
    x, y = rnd(3, 4, 24, dtype=dtype, seed=3), rnd(3, 24, 6, dtype=dtype, seed=4)
    rep = tt.Report()
    with tt.emulate(gpu=gpu, strict="routes", report=rep):
        d = a @ b
        lin = torch.addmm(bias, a, b)
        bd = torch.bmm(x, y)
    same(d, tcprobe.matmul(a, b, gpu=gpu).to(dtype))
    c = bias.float().expand(7, 5).contiguous()
    same(lin, tcprobe.matmul(a, b, c, gpu=gpu).to(dtype))
    same(bd, torch.stack([tcprobe.matmul(x[i], y[i], gpu=gpu) for i in range(3)]).to(dtype))
    assert rep.fallback == 0 and rep.ops["mm"].routed == 1 and rep.ops["bmm"].routed == 1


def test_f32_at_highest_runs_the_f32_mfma():
    """A float32 GEMM at 'highest' runs on AMD's f32 MFMA (an FMA chain that
    reads all 23 fraction bits), where NVIDIA has no tensor-core route."""
    a, b = rnd(6, 20, dtype=torch.float32), rnd(20, 4, dtype=torch.float32, seed=1)
    with precision("highest"):
        with tt.emulate(gpu="MI300X", strict="routes"):
            d = a @ b
            one = torch.tensor([[1 + 2 ** -11 + 2 ** -12]]) @ torch.ones(1, 1)
        with pytest.raises(ValueError, match="strict"):
            with tt.emulate(gpu="H100", strict="routes"):
                _ = a @ b
    same(d, tcprobe.matmul(a, b, gpu="MI300X"))
    assert bits(one)[0, 0] == 0x3F801800  # 1 + 2^-11 + 2^-12, every bit kept


@pytest.mark.parametrize("gpu,instr", [("MI300X", "mfma.xf32.tf32.f32.k8"), ("MI250X", None)])
def test_f32_under_tf32_runs_xf32_on_mi300x_only(gpu, instr):
    a, b = rnd(6, 20, dtype=torch.float32, seed=5), rnd(20, 4, dtype=torch.float32, seed=6)
    c = rnd(6, 4, dtype=torch.float32, seed=7)
    with precision("high"):
        with tt.emulate(gpu=gpu, strict="routes"):
            d = a @ b
            lin = torch.addmm(c, a, b)
            one = torch.tensor([[1 + 2 ** -11 + 2 ** -12]]) @ torch.ones(1, 1)
    same(d, tcprobe.matmul(a, b, gpu=gpu, instr=instr))
    same(lin, tcprobe.matmul(a, b, c, gpu=gpu, instr=instr))
    # v_mfma_f32_*_xf32 truncates 1 + 2^-11 + 2^-12 to 1 (no RNE before it, as
    # cuBLAS has: 1 + 2^-10 on an H100); MI250X has no xf32, its f32 MFMA keeps all
    assert bits(one)[0, 0] == (0x3F800000 if instr else 0x3F801800)


def test_xf32_differs_from_nvidia_tf32():
    a = torch.tensor([[1 + 2 ** -11 + 2 ** -12]])
    with precision("high"):
        with tt.emulate(gpu="H100"):
            nv = a @ torch.ones(1, 1)
    assert bits(nv)[0, 0] == 0x3F802000  # rounded to nearest even tf32 first
