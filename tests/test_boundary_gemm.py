"""Issue 26 on tcprobe gemm, gemm-probe and the matrix API: an .npz, an
empty dimension, a product too big for memory (refused before anything of
its size is made, naming the size), arguments of the wrong type; each a
ValueError starting with the argument in the API, one error line (exit 2)
on the command line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import tcprobe
from tcprobe.cli import main
from tcprobe.matrix import flow


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(r, *needles):
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def npy(tmp_path):
    def save(name, arr):
        np.save(tmp_path / name, arr)
        return tmp_path / name
    return save


# ---------------------------------------------------------------------------
# tcprobe gemm


def test_gemm_refuses_an_npz(tmp_path, npy):
    np.savez(tmp_path / "a.npz", a=np.ones((4, 16), np.float16))
    one_error(invoke("gemm", "--gpu", "H100", "--a", tmp_path / "a.npz", "--b",
                     npy("b.npy", np.ones((16, 4), np.float16))),
              "--a:", "an .npz archive", "np.save")


@pytest.mark.parametrize("a_shape,b_shape", [((0, 16), (16, 4)), ((4, 16), (16, 0)),
                                             ((0, 16), (16, 0))])
def test_gemm_of_an_empty_dimension_is_an_empty_d(tmp_path, npy, a_shape, b_shape):
    a, b = npy("a.npy", np.ones(a_shape, np.float16)), npy("b.npy", np.ones(b_shape, np.float16))
    r = invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--out", tmp_path / "d.npy")
    assert r.exit_code == 0, r.output
    d = np.load(tmp_path / "d.npy")
    assert d.shape == (a_shape[0], b_shape[1]) and d.dtype == np.float32


def test_gemm_too_big_for_memory_is_refused_before_allocating(npy, monkeypatch):
    monkeypatch.setattr(flow, "available_memory", lambda: 1 << 30)
    a = npy("a.npy", np.ones((100_000, 1), np.float16))
    b = npy("b.npy", np.ones((1, 100_000), np.float16))
    one_error(invoke("gemm", "--gpu", "H100", "--a", a, "--b", b),
              "A (100000x1) @ B (1x100000)", "160.6 GB", "1.1 GB available",
              "blocks of rows")


def test_gemm_probe_too_big_for_memory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(flow, "available_memory", lambda: 1 << 30)
    from tcprobe.matrix import gemm_probe

    monkeypatch.setattr(gemm_probe, "available_memory", lambda: 1 << 30)
    one_error(invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", tmp_path / "p",
                     "--k", "100000000"), "k: the 9 cases", "GB available")
    assert not (tmp_path / "p").exists()


# ---------------------------------------------------------------------------
# tcprobe.matmul


@pytest.mark.parametrize("schedule", [None, "chain", "cublas-tf32"])
@pytest.mark.parametrize("a_shape,b_shape", [((0, 64), (64, 4)), ((4, 64), (64, 0))])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.float8_e4m3fn, np.int8])
def test_matmul_of_an_empty_dimension(a_shape, b_shape, dtype, schedule):
    if schedule == "cublas-tf32":
        dtype = np.float32
    d = tcprobe.matmul(np.zeros(a_shape, dtype), np.zeros(b_shape, dtype), gpu="B200",
                       schedule=schedule)
    assert d.shape == (a_shape[0], b_shape[1])


def test_matmul_of_an_empty_dimension_still_checks_split_k():
    with pytest.raises(ValueError, match="^split_k=4 but K has only 1"):
        tcprobe.matmul(np.zeros((0, 16), np.float16), np.zeros((16, 4), np.float16), gpu="H100",
                       schedule="chain", split_k=4)


def test_matmul_too_big_for_memory_names_the_size(monkeypatch):
    monkeypatch.setattr(flow, "available_memory", lambda: 1 << 30)
    for schedule in (None, "chain"):
        with pytest.raises(ValueError, match=r"^A \(100000x1\) @ B \(1x100000\) makes a "
                                             r"100000x100000 D that takes about 160\.6 GB"):
            tcprobe.matmul(np.ones((100_000, 1), np.float16), np.ones((1, 100_000), np.float16),
                           gpu="H100", schedule=schedule)


@pytest.mark.parametrize("instr", [3, ["mma"], b"mma", 1.5])
def test_matmul_instr_of_the_wrong_type(instr):
    with pytest.raises(ValueError, match="^instr must name a family"):
        tcprobe.matmul(np.ones((4, 16), np.float16), np.ones((16, 4), np.float16), gpu="H100",
                       instr=instr)


def test_matmul_takes_a_family_in_any_case():
    a, b = np.ones((4, 16), np.float16), np.ones((16, 4), np.float16)
    assert (tcprobe.matmul(a, b, gpu="H100", instr="MMA") == 16).all()


@pytest.mark.parametrize("schedule", [None, "chain"])
def test_matmul_names_dtype_for_a_bad_output_type(schedule):
    with pytest.raises(ValueError, match="^dtype: "):
        tcprobe.matmul(np.ones((4, 16), np.float16), np.ones((16, 4), np.float16), gpu="H100",
                       dtype="float64", schedule=schedule)
