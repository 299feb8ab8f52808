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


def _special_words(rng, n):
    """bf16 words heavy in NaN, Inf, zeros and subnormals; f32 C likewise."""
    pick = np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC1, 0xFFA5, 0x0001, 0x807F, 0x7F7F,
                     0x3F80, 0xBF80], np.uint32)
    a = rng.integers(0, 1 << 16, (n, 16)).astype(np.uint32)
    b = rng.integers(0, 1 << 16, (n, 16)).astype(np.uint32)
    a = np.where(rng.random(a.shape) < 0.2, rng.choice(pick, a.shape), a).astype(np.uint32)
    b = np.where(rng.random(b.shape) < 0.2, rng.choice(pick, b.shape), b).astype(np.uint32)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    c[::7] = np.array([0x7FC00001, 0x80000000, 0x7F800000, 0x00000001], np.uint32)[
        np.arange(len(c[::7])) % 4]
    return a, b, c


def test_a_ready_kernel_gives_the_plain_kernels_words_and_still_names_a_bad_word(monkeypatch):
    """Once a configuration's lane kernel has run, a small uint32 batch goes
    straight to it (no per-call checks): the words are the plain kernel's,
    specials included, and a word above its format is still refused."""
    from tcprobe.matrix import words as matrix_words

    monkeypatch.setattr(matrix_words, "_READY", {})
    monkeypatch.setattr(fastpath, "AUTO_MIN_CASES", 10_000)
    rng = np.random.default_rng(3)
    dp, gpu = "mma.bf16.f32.k16", "H100"
    a, b, c = _special_words(rng, 20_000)
    tcprobe.dot(a, b, c, datapath=dp, gpu=gpu)  # the fast path runs: ready from now on
    d, mdl = matrix_words._resolved(dp, gpu)
    calls = []
    real = fastpath.ready_lane_kernel
    monkeypatch.setattr(fastpath, "ready_lane_kernel", lambda *x: calls.append(1) or real(*x))
    for lo in range(0, 2_000, 100):
        sl = slice(lo, lo + 100)
        got = tcprobe.dot(a[sl], b[sl], c[sl], datapath=dp, gpu=gpu)
        want = fused_dot(d, Cases(a[sl], b[sl], c[sl]), mdl.params, fast=False)
        assert np.array_equal(got, want)
    assert (dp, gpu) in matrix_words._READY and calls == [1]  # looked up once, then kept
    bad = a[:100].copy()
    bad[5, 3] = 1 << 16
    with pytest.raises(MatmulError, match="does not fit"):
        tcprobe.dot(bad, b[:100], c[:100], datapath=dp, gpu=gpu)
