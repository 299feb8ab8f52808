"""Issue 26 on tcprobe gemm, gemm-probe and the matrix API: an .npz, an
empty dimension, a product too big for memory (refused before anything of
its size is made, naming the size), arguments of the wrong type; each a
ValueError starting with the argument in the API, one error line (exit 2)
on the command line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.matrix import resolve as flow
from tcprobe.matrix.operands import MatmulError


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
                     "--k", "100000000"), "cases of 128x100000000 and 100000000x128 operands",
              "GB available")
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


# ---------------------------------------------------------------------------
# Arrays in another byte order are the same words; masked entries are refused.


def test_the_other_byte_order_is_the_same_words(npy, tmp_path):
    a, b = np.full((4, 16), 2, np.float16), np.ones((16, 4), np.float16)
    want = tcprobe.matmul(a, b, gpu="H100")
    assert (tcprobe.matmul(a.astype(">f2"), b.astype(">f2"), gpu="H100") == want).all()
    c = np.ones((4, 4), np.float32)
    assert (tcprobe.matmul(a, b, c.astype(">f4"), gpu="H100") == tcprobe.matmul(a, b, c, gpu="H100")).all()
    one = np.full(16, 0x3F80)
    for dt in (">u2", ">i2", "<i2"):  # a signed array of the format's width is its bits
        assert tcprobe.dot(one.astype(dt), one.astype(dt), 0, datapath="mma.bf16.f32.k16",
                           gpu="H100") == 0x41800000
    raw_a = npy("a.npy", np.full((4, 16), 0x3F80, ">u2"))
    raw_b = npy("b.npy", np.full((16, 4), 0x3F80, ">u2"))
    r = invoke("gemm", "--gpu", "H100", "--a", raw_a, "--b", raw_b, "--format", "bf16", "--out",
               tmp_path / "d.npy")
    assert r.exit_code == 0, r.output
    assert (np.load(tmp_path / "d.npy") == 16).all()


def test_masked_entries_are_refused():
    a = np.ma.masked_array(np.ones((4, 16), np.float16), mask=np.eye(4, 16, dtype=bool))
    with pytest.raises(ValueError, match=r"^A: a masked array with masked entries"):
        tcprobe.matmul(a, np.ones((16, 4), np.float16), gpu="H100")
    words = np.ma.masked_array(np.full(16, 0x3F80, np.uint16), mask=[1] + [0] * 15)
    with pytest.raises(ValueError, match=r"^a: a masked array"):
        tcprobe.dot(words, words.data, 0, datapath="mma.bf16.f32.k16", gpu="H100")
    unmasked = np.ma.masked_array(np.ones((4, 16), np.float16))
    assert (tcprobe.matmul(unmasked, np.ones((16, 4), np.float16), gpu="H100") == 16).all()


@pytest.mark.parametrize("kw,match", [
    ({"progress": 5}, "^progress must be a callable"),
    ({"fast": "no"}, "^fast must be None, True or False"),
    ({"split_k": True}, "^split_k must be a positive integer, not True"),
    ({"alpha": 10**40}, "^alpha: 1000.* overflows f32"),
    ({"beta": -1e39}, r"^beta: -1e\+39 overflows f32"),
    ({"C": np.zeros((4, 4), np.int32)}, "^C: a float product writes a float, not s32"),
])
def test_matmul_arguments_of_the_wrong_kind_name_the_argument(kw, match):
    a, b = np.ones((4, 16), np.float16), np.ones((16, 4), np.float16)
    c = kw.pop("C", None)
    with pytest.raises(ValueError, match=match):
        tcprobe.matmul(a, b, c, gpu="H100", **kw)


def test_gemm_never_rereads_values_as_another_format(npy):
    a = npy("a.npy", np.ones((4, 16), np.float16))
    b = npy("b.npy", np.ones((16, 4), np.float16))
    one_error(invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--format", "bf16"),
              "holds float16 (f16) values, not raw words")
    r = invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--format", "f16")
    assert r.exit_code == 0, r.output  # the format it holds: as without --format


def test_gemm_json_is_checked_before_the_product(tmp_path, npy):
    a = npy("a.npy", np.ones((4, 16), np.float16))
    b = npy("b.npy", np.ones((16, 4), np.float16))
    r = invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--json", tmp_path / "no" / "r.json")
    one_error(r, "--json", "does not exist")
    assert "wgmma" not in r.stdout


# ---------------------------------------------------------------------------
# One rule for beta and for dtype beside C, the API's and the command line's
# (epilogue.beta_given, resolve.check_out_type): with no C, C is +0 and never
# read, so a nonzero beta (NaN too) would multiply nothing: refused; beside C,
# D is written in C's type, so a dtype of another type is refused.

def _bf16(m, n):
    return np.ones((m, n), ml_dtypes.bfloat16)


@pytest.mark.parametrize("beta", [2.0, float("nan"), -1, float("inf")])
def test_matmul_refuses_a_nonzero_beta_without_c(beta):
    with pytest.raises(MatmulError, match=r"^beta: a nonzero beta needs C \(with no C it would "
                                          r"multiply nothing\)$"):
        tcprobe.matmul(_bf16(16, 32), _bf16(32, 16), gpu="H100", beta=beta, progress=False)


@pytest.mark.parametrize("beta", [None, 0, 0.0, -0.0])
def test_matmul_without_c_takes_an_unset_or_zero_beta(beta):
    kw = {} if beta is None else {"beta": beta}
    d = tcprobe.matmul(_bf16(16, 32), _bf16(32, 16), gpu="H100", progress=False, **kw)
    assert (d.view(np.uint32) == 0x42000000).all()  # 32.0 in every word


def test_fit_gemm_refuses_a_nonzero_beta_without_c():
    from tcprobe.matrix import fit_gemm

    a, b = _bf16(16, 32).view(np.uint16), _bf16(32, 16).view(np.uint16)
    d = np.full((16, 16), 0x42000000, np.uint32)
    with pytest.raises(MatmulError, match="^beta: a nonzero beta needs C"):
        fit_gemm.fit(a, "bf16", b, "bf16", None, None, d, "f32", gpu="H100", beta=3.0)


def test_matmul_refuses_a_dtype_other_than_cs():
    c = np.zeros((16, 16), np.float16)
    with pytest.raises(MatmulError, match=r"^dtype: 'f32' differs from C's dtype \(f16\): D is "
                                          "written in C's type"):
        tcprobe.matmul(_bf16(16, 32), _bf16(32, 16), c, gpu="H100", dtype="float32",
                       progress=False)
    d = tcprobe.matmul(_bf16(16, 32), _bf16(32, 16), c, gpu="H100", dtype="float16",
                       progress=False)
    assert d.dtype == np.float16 and (d.view(np.uint16) == 0x5000).all()  # 32.0 as f16


def test_gemm_refuses_a_dtype_other_than_cs_with_the_same_words(tmp_path):
    np.save(tmp_path / "a.npy", _bf16(16, 32).view(np.uint16))
    np.save(tmp_path / "b.npy", _bf16(32, 16).view(np.uint16))
    np.save(tmp_path / "c.npy", np.zeros((16, 16), np.float16))
    r = invoke("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--format", "bf16",
               "--c", tmp_path / "c.npy", "--dtype", "f32", "--gpu", "H100")
    one_error(r, "--dtype: 'f32' differs from C's dtype (f16)")
