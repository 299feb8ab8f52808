"""tcprobe.matmul against MMA-Sim 2.1.1's instruction chained over K on whole
matrices, every word (skipped where MMA-Sim or torch is absent).

MMA-Sim's chain: D = C, then for each K tile of the instruction's K,
D = instruction(A[:, tile], B[tile, :], D), the order a CUTLASS main loop
issues. K that is not a multiple is zero-padded on MMA-Sim's side too."""

import ml_dtypes
import numpy as np
import pytest
from matmul_data import as_array, words
from mmasim_bridge import _view, _words

import tcprobe

pytestmark = [pytest.mark.peer, pytest.mark.usefixtures("mmasim_peer")]

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
          "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
          "f32": np.float32}

# (gpu, instr, A/B format, D format, MMA-Sim class, arch, shape_and_type, K of one instruction)
CHAINS = [
    ("V100", "mma", "f16", "f32", "MMA", "Volta", "m8n8k4.f32.f16.f16.f32", 4),
    ("V100", "mma", "f16", "f16", "MMA", "Volta", "m8n8k4.f16.f16.f16.f16", 4),
    ("A100", "mma", "tf32", "f32", "MMA", "Ampere", "m16n8k8.f32.tf32.tf32.f32", 8),
    ("A100", "mma", "bf16", "f32", "MMA", "Ampere", "m16n8k16.f32.bf16.bf16.f32", 16),
    ("H100", "mma", "bf16", "f32", "MMA", "Hopper", "m16n8k16.f32.bf16.bf16.f32", 16),
    ("H100", "mma", "f16", "f16", "MMA", "Hopper", "m16n8k16.f16.f16.f16.f16", 16),
    ("H100", "wgmma", "e4m3", "f32", "WGMMA", "Hopper", "m64n8k32.f32.e4m3.e4m3", 32),
    ("H100", "wgmma", "e4m3", "f16", "WGMMA", "Hopper", "m64n8k32.f16.e4m3.e4m3", 32),
    ("H100", "wgmma", "bf16", "f32", "WGMMA", "Hopper", "m64n8k16.f32.bf16.bf16", 16),
    ("B200", "tcgen05", "f16", "f32", "TCGen05MMA", "Blackwell",
     "m64n8k16.kind::f16.f32.f16.f16", 16),
    ("B200", "tcgen05", "f16", "f16", "TCGen05MMA", "Blackwell",
     "m64n8k16.kind::f16.f16.f16.f16", 16),
]


def mmasim_chain(cls: str, arch: str, shape: str, k_inst: int, a, b, c, fmt, d_fmt):
    """MMA-Sim's D words of the chain over K tiles (module doc)."""
    from mmasim import nv_ptx

    sim = getattr(nv_ptx, cls)(arch, shape)
    m, k = a.shape
    kp = -(-k // k_inst) * k_inst
    ap = np.zeros((m, kp), np.uint32)
    ap[:, :k] = a
    bp = np.zeros((kp, b.shape[1]), np.uint32)
    bp[:k] = b
    d = _view(c, d_fmt)
    A, B = _view(ap, fmt), _view(bp, fmt)
    for t in range(0, kp, k_inst):
        d = sim(A[:, t:t + k_inst], B[t:t + k_inst, :], d)
    return _words(d, d_fmt)


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("gpu,instr,fmt,d_fmt,cls,arch,shape,k_inst", CHAINS,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CHAINS])
@pytest.mark.parametrize("seed,m,n,k", [(1, 24, 20, 96), (2, 9, 13, 37)])
def test_matmul_equals_mmasim_chain(gpu, instr, fmt, d_fmt, cls, arch, shape, k_inst,
                                    seed, m, n, k):
    rng = np.random.default_rng(seed * 1009 + len(shape))
    a = words(rng, fmt, (m, k))
    b = words(rng, fmt, (k, n))
    c = words(rng, d_fmt, (m, n), special=0.01)
    theirs = mmasim_chain(cls, arch, shape, k_inst, a, b, c, fmt, d_fmt)
    A, B, C = as_array(a, DTYPES[fmt]), as_array(b, DTYPES[fmt]), as_array(c, DTYPES[d_fmt])
    for fast in (None, False):
        D = tcprobe.matmul(A, B, C, gpu=gpu, instr=instr, fast=fast, schedule="chain")
        ours = D.view(np.uint16 if d_fmt == "f16" else np.uint32).astype(np.uint32)
        assert D.dtype == DTYPES[d_fmt]
        differ = np.argwhere(ours != theirs)
        assert not len(differ), (f"fast={fast}: {len(differ)} of {m * n} words differ, first "
                                 f"at {tuple(differ[0])}: {ours[tuple(differ[0])]:#x} vs "
                                 f"{theirs[tuple(differ[0])]:#x}")


def test_torch_in_torch_out_equals_mmasim():
    import torch

    rng = np.random.default_rng(5)
    a, b = words(rng, "bf16", (16, 64)), words(rng, "bf16", (64, 8))
    c = words(rng, "f32", (16, 8))
    theirs = mmasim_chain("MMA", "Hopper", "m16n8k16.f32.bf16.bf16.f32", 16, a, b, c,
                          "bf16", "f32")
    D = tcprobe.matmul(_view(a, "bf16"), _view(b, "bf16"), _view(c, "f32"), gpu="H100",
                       instr="mma", schedule="chain")
    assert isinstance(D, torch.Tensor) and D.dtype == torch.float32
    assert np.array_equal(_words(D, "f32"), theirs)
