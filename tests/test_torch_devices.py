"""emulate on tensors that live on a GPU: the words read on the host, D back
on the device, out= and in-place targets there written in place. Without a
GPU here, the copy-back is held to its contract with a copying stand-in for
the device transfer; the CUDA run itself is in the gpu-marked test below."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tcprobe.torch as tt  # noqa: E402
from tcprobe.torch.adapter import Unroutable  # noqa: E402
from tcprobe.torch.devices import run_on_host, tensor_device  # noqa: E402

CPU = torch.device("cpu")


def words(t):
    return t.contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32).cpu().numpy()


def rnd(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).bfloat16()


def test_the_device_of_the_arguments():
    a = rnd(4, 4)
    assert tensor_device((a, a), {}) is None
    meta = torch.empty(4, 4, device="meta")
    with pytest.raises(Unroutable, match="meta tensors hold no values"):
        tensor_device((meta, meta), {})


def test_an_in_place_target_is_written_in_place_and_a_result_comes_back():
    """The route sees host copies (here: clones, as .cpu() of a GPU tensor
    gives); the in-place target the caller holds receives D, and a plain
    result is returned as the route made it (moved to the device)."""
    c, a, b = rnd(8, 8, seed=1), rnd(8, 16, seed=2), rnd(16, 8, seed=3)
    seen = []

    def addmm_(c_, a_, b_):
        seen.append((c_ is c, a_ is a))
        return c_.copy_(c_ + a_ @ b_)  # writes into (and returns) the host copy

    keep = c.clone()
    got = run_on_host(addmm_, (c, a, b), {}, CPU, copy=torch.Tensor.clone)
    assert seen == [(False, False)]  # the route had copies
    assert got is c  # the caller's own target, written
    assert np.array_equal(words(c), words(keep + a @ b))
    out = torch.empty(3, 3, dtype=torch.bfloat16)  # an out= target of another shape: resized
    got = run_on_host(lambda a_, b_, out: out.resize_(8, 8).copy_(a_ @ b_), (a, b),
                      {"out": out}, CPU, copy=torch.Tensor.clone)
    assert got is out and out.shape == (8, 8) and np.array_equal(words(out), words(a @ b))
    got = run_on_host(lambda a_, b_: a_ @ b_, (a, b), {}, CPU, copy=torch.Tensor.clone)
    assert np.array_equal(words(got), words(a @ b))


def test_meta_tensors_are_a_counted_fallback_and_refused_under_strict():
    a = torch.empty(8, 16, dtype=torch.bfloat16, device="meta")
    b = torch.empty(16, 8, dtype=torch.bfloat16, device="meta")
    rep = tt.Report()
    with tt.emulate(gpu="H100", report=rep):
        d = a @ b
    assert d.device.type == "meta" and rep.fallback == 1
    assert "meta tensors hold no values" in rep.fallbacks[0][1]
    with pytest.raises(ValueError, match="meta tensors"), tt.emulate(gpu="H100", strict=True):
        a @ b


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch sees none)")
@pytest.mark.parametrize("backend", [None, "cuda"])
def test_cuda_tensors_are_routed_and_give_the_cpu_words(backend):
    a, b, c = rnd(64, 96, seed=4), rnd(96, 48, seed=5), rnd(64, 48, seed=6)
    with tt.emulate(gpu="B200"):
        want = torch.addmm(c, a, b)
        want_mm = a @ b
    rep = tt.Report()
    ga, gb, gc = a.cuda(), b.cuda(), c.cuda()
    with tt.emulate(gpu="B200", backend=backend, report=rep):
        got = torch.addmm(gc, ga, gb)
        got_mm = ga @ gb
        gc.addmm_(ga, gb)
    assert got.device.type == "cuda" and rep.fallback == 0
    assert np.array_equal(words(got), words(want))
    assert np.array_equal(words(got_mm), words(want_mm))
    assert np.array_equal(words(gc), words(want))  # in place, on the GPU


def test_matmul_names_the_devices_and_refuses_a_meta_tensor():
    import tcprobe
    from tcprobe.matrix.operands import MatmulError, Operand, result_device

    w = np.zeros((2, 2), np.uint32)
    assert result_device(Operand(w, "bf16", False), Operand(w, "bf16", True)) is None
    assert result_device(Operand(w, "bf16", True, "cuda:0"), None,
                         Operand(w, "bf16", False)) == "cuda:0"
    with pytest.raises(MatmulError, match=r"several devices \(cuda:0, cuda:1\)"):
        result_device(Operand(w, "bf16", True, "cuda:0"), Operand(w, "bf16", True, "cuda:1"))
    meta = torch.empty(4, 16, dtype=torch.bfloat16, device="meta")
    with pytest.raises(MatmulError, match="A: a meta tensor holds no values"):
        tcprobe.matmul(meta, meta.T, gpu="H100")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch sees none)")
@pytest.mark.parametrize("backend", [None, "cuda"])
def test_matmul_of_cuda_tensors_comes_back_on_the_gpu_with_the_cpu_words(backend):
    import tcprobe

    a, b, c = rnd(64, 96, seed=7), rnd(96, 48, seed=8), rnd(64, 48, seed=9).float()
    want = tcprobe.matmul(a, b, c, gpu="B200")
    got = tcprobe.matmul(a.cuda(), b.cuda(), c.cuda(), gpu="B200", backend=backend)
    assert got.device.type == "cuda" and got.dtype == want.dtype
    assert np.array_equal(words(got), words(want))
