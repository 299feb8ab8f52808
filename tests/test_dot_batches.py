"""tcprobe.dot in a loop of small batches: the fast path once a
configuration's cases add up (no cliff below AUTO_MIN_CASES), the same
words as the plain kernel, 8/16/32-bit word arrays alike, the arguments
still checked on every call."""

import ml_dtypes
import numpy as np
import pytest

import tcprobe
from tcprobe.matrix.operands import MatmulError
from tcprobe.models import fastpath
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, fused_dot

BF16 = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)


def _words(rng, n, dtype=np.uint16):
    a = rng.integers(0, 1 << 16, (n, 16)).astype(dtype)
    b = rng.integers(0, 1 << 16, (n, 16)).astype(dtype)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return a, b, c


def test_small_batches_reach_the_fast_path(monkeypatch):
    calls = []
    real = fastpath.fast_dot
    monkeypatch.setattr(fastpath, "fast_dot", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(fastpath, "_RAN", set())
    monkeypatch.setattr(fastpath, "_SEEN", {})
    monkeypatch.setattr(fastpath, "AUTO_MIN_CASES", 1000)
    p = EngineParams(window_bits=23, block_size=8)
    rng = np.random.default_rng(1)
    for batch in range(4):
        a, b, c = _words(rng, 300, np.uint32)
        got = fused_dot(BF16, Cases(a, b, c), p)
        assert np.array_equal(got, fused_dot(BF16, Cases(a, b, c), p, fast=False))
        assert len(calls) == (1 if batch == 3 else 0)  # 1,200 cases after the fourth


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.int16])
def test_dot_words_of_any_width_agree(dtype):
    rng = np.random.default_rng(2)
    a, b, c = _words(rng, 500, np.uint16)
    want = tcprobe.dot(a.astype(np.uint32), b.astype(np.uint32), c,
                       datapath="mma.bf16.f32.k16", gpu="H100")
    got = tcprobe.dot(a.astype(dtype) if dtype != np.int16 else a.view(np.int16),
                      b.astype(dtype) if dtype != np.int16 else b.view(np.int16), c,
                      datapath="mma.bf16.f32.k16", gpu="H100")
    assert np.array_equal(got, want)
    x = rng.standard_normal((4, 16)).astype(np.float32).astype(ml_dtypes.bfloat16)
    assert tcprobe.dot(x.view(np.uint16), x.view(np.uint16), np.zeros(4, np.uint32),
                       datapath="mma.bf16.f32.k16", gpu="H100").dtype == np.uint32


def test_dot_checks_its_arguments_on_every_call():
    a = np.zeros((2, 16), np.uint16)
    c = np.zeros(2, np.uint32)
    for _ in range(2):  # the resolved datapath and model are kept; errors are not
        with pytest.raises(MatmulError, match="gpu: unknown GPU"):
            tcprobe.dot(a, a, c, datapath="mma.bf16.f32.k16", gpu="H999")
        with pytest.raises(MatmulError, match="does not fit"):
            tcprobe.dot(a.astype(np.uint32) | np.uint32(1 << 16), a, c,
                        datapath="mma.bf16.f32.k16", gpu="H100")
