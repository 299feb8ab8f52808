"""Campaign 9 (docs/campaign-9.md): the Python surfaces' broken cases, as
exact exceptions and words. Expected words come from torch on the host
(negation is a sign flip) or from integer arithmetic, never from the code
under test alone."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tcprobe
from tcprobe.capture import CaptureError, load
from tcprobe.matrix import fit_gemm
from tcprobe.matrix.operands import MatmulError
from tcprobe.matrix.schedule import ScheduleError

try:
    import torch
except ImportError:  # pragma: no cover - the torch tests skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

X = np.zeros((4, 8), np.uint16)
Z = np.zeros((8, 4), np.uint16)
D0 = np.zeros((4, 4), np.uint32)


def _fit(**kw):
    args = dict(a=X, a_fmt="bf16", b=Z, b_fmt="bf16", c=None, c_fmt=None, d=D0, d_fmt="f32")
    extra = {k: kw.pop(k) for k in list(kw) if k in args}
    args.update(extra)
    return fit_gemm.fit(*args.values(), gpu="H100", **kw)


@pytest.mark.parametrize("kw, message", [
    ({"jobs": 0}, "jobs must be a positive integer, not 0"),
    ({"jobs": True}, "jobs must be a positive integer, not True"),
    ({"a": np.zeros((4, 8), np.float32)},
     "a: a float32 array holds values, not words; pass its raw words (x.view(np.uint32))"),
    ({"d": np.ones((4, 4), np.float32)},
     "d: a float32 array holds values, not words; pass its raw words (x.view(np.uint32))"),
    ({"a": np.full((4, 8), 0x13F80, np.uint32)},
     "a: a word does not fit bf16 (0x13f80 > 0xffff)"),
    ({"a": X[None]}, "a must be 2-D words, not of shape (1, 4, 8)"),
    ({"c": np.zeros((4, 4), np.uint32)}, "c: give its format beside its words"),
    ({"c": np.zeros((4, 4), np.float32), "c_fmt": "f32"},
     "c: a float32 array holds values, not words; pass its raw words (x.view(np.uint32))"),
    ({"bias": [0.5] * 4, "bias_fmt": "f32"},
     "bias: a float64 array holds values, not words; pass its raw words (x.view(np.uint64))"),
])
def test_fit_gemm_words_and_jobs_refused(kw, message):
    with pytest.raises(MatmulError, match="^" + re.escape(message) + "$"):
        _fit(**kw)


def test_fit_gemm_refuses_a_product_this_machine_cannot_hold_before_reading_it():
    """As tcprobe.matmul: named, not a MemoryError from a 149 GiB copy of D."""
    a = np.broadcast_to(np.uint16(0x3F80), (200000, 16))
    b = np.broadcast_to(np.uint16(0x3F80), (16, 200000))
    d = np.broadcast_to(np.uint32(0x41800000), (200000, 200000))
    with pytest.raises(MatmulError, match=r"^A \(200000x16\) @ B \(16x200000\) makes a "
                                          r"200000x200000 D that takes about 641\.2 GB"):
        fit_gemm.fit(a, "bf16", b, "bf16", None, None, d, "f32", gpu="H100")


def test_fit_gemm_takes_a_list_of_integer_words_as_dot_does():
    """A list of integer words is words (tcprobe.dot's rule), not an AttributeError."""
    f = _fit(a=X.tolist())
    assert f is not None


@pytest.mark.parametrize("path, kind", [(b"tests", "bytes"), (None, "NoneType"), (123, "int"),
                                        (["tests"], "list")])
def test_capture_load_refuses_a_path_of_another_type(path, kind):
    with pytest.raises(CaptureError, match=f"^capture path must be a str or a Path, not {kind}$"):
        load(path)


def test_capture_load_still_takes_a_path(tmp_path: Path):
    with pytest.raises(CaptureError, match="no such file or folder"):
        load(tmp_path / "absent")


A64 = np.ones((8, 64), np.float16)


def test_split_k_beside_a_schedule_of_another_split_is_refused():
    with pytest.raises(ScheduleError, match=re.escape(
            "split_k: 4 differs from the schedule's split_k 2 (give one or the other)")):
        tcprobe.matmul(A64, A64.T.copy(), gpu="H100", schedule={"split_k": 2}, split_k=4)


def test_split_k_equal_to_the_schedules_is_taken():
    d = tcprobe.matmul(A64, A64.T.copy(), gpu="H100", schedule={"split_k": 2}, split_k=2)
    assert np.asarray(d).shape == (8, 8) and float(np.asarray(d)[0, 0]) == 64.0


def test_gemm_split_k_beside_a_schedule_file_of_another_split(tmp_path: Path):
    from click.testing import CliRunner

    from tcprobe.cli import main

    np.save(tmp_path / "a.npy", A64)
    np.save(tmp_path / "b.npy", A64.T.copy())
    (tmp_path / "s.json").write_text('{"split_k": 2}')
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), "--b",
                                  str(tmp_path / "b.npy"), "--gpu", "H100", "--schedule",
                                  str(tmp_path / "s.json"), "--split-k", "4"])
    assert r.exit_code == 2
    assert "error: --split-k: 4 differs from the schedule's split_k 2 (give one or the other)" \
        in r.output




@needs_torch
def test_matmul_reads_a_negative_view_by_value():
    """torch._neg_view: its values are the negation (a sign flip on the host)."""
    rng = np.random.default_rng(9)
    a = torch.from_numpy(rng.standard_normal((8, 16)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((16, 8)).astype(np.float16))
    neg = tcprobe.matmul(torch._neg_view(a), b, gpu="H100")
    plain = tcprobe.matmul(-a, b, gpu="H100")
    assert np.array_equal(neg.view(torch.int32).numpy(), plain.view(torch.int32).numpy())
    c = torch.ones(8, 8)
    d = tcprobe.matmul(a, b, torch._neg_view(c), gpu="H100")
    e = tcprobe.matmul(a, b, -c, gpu="H100")
    assert np.array_equal(d.view(torch.int32).numpy(), e.view(torch.int32).numpy())


@needs_torch
def test_compare_leaves_an_in_place_target_with_our_words():
    """Report(compare=True) around addmm_: the target holds the emulated D,
    the same words as addmm without compare (torch's own run writes a copy).
    Operands: small integers whose products and sums are exact in bf16, so
    the words are those of the plain integer sum."""
    from tcprobe.torch import Report, emulate

    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.bfloat16).repeat(1, 8)
    b = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.bfloat16).repeat(8, 1)
    c = torch.full((2, 2), 5.0, dtype=torch.bfloat16)
    target = c.clone()
    r = Report(compare=True)
    with emulate("H100", report=r, schedule="cublas"):
        target.addmm_(a, b)
    assert r.routed == 1
    # row 0: 8 * (1, 2) + 5, row 1: 8 * (3, 4) + 5
    assert target.float().tolist() == [[13.0, 21.0], [29.0, 37.0]]
    assert r.ops["addmm_"].max_ulp == 0


@needs_torch
def test_dot_reads_a_torch_tensor_of_words_and_refuses_one_of_values():
    one = [0x3F80] * 16  # bf16 1.0: sixteen products of 1 sum to 16.0 = 0x41800000
    d = tcprobe.dot(torch.full((16,), 0x3F80, dtype=torch.int32), one, 0,
                    datapath="mma.bf16.f32.k16", gpu="H100")
    assert int(d) == 0x41800000
    with pytest.raises(MatmulError, match=re.escape(
            "a: a torch bfloat16 tensor holds values, not words; pass its raw words "
            "(x.view(torch.int16))")):
        tcprobe.dot(torch.full((16,), 1.0, dtype=torch.bfloat16), one, 0,
                    datapath="mma.bf16.f32.k16", gpu="H100")


def test_bias_of_the_other_kind_is_named_in_plain_words():
    with pytest.raises(MatmulError, match="^bias: dtype does not suit a float product$"):
        tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu="H100",
                       bias=np.zeros(8, np.int32))


def test_torch_gemm_fit_reads_an_operand_file_by_its_bits(tmp_path: Path, capsys):
    """The runner hands torch a float16 file's bits; its --fit read the same
    file's values cast to integers (1.0 -> the word 1) and called a D of
    sixteen 1 x 1 products (16.0 = 0x41800000) not explained."""
    import json

    from tcprobe.capture import torch_gemm as tg

    np.save(tmp_path / "a.npy", np.ones((4, 16), np.float16))
    np.save(tmp_path / "b.npy", np.ones((16, 4), np.float16))
    np.save(tmp_path / "c1.mm.d.npy", np.full((4, 4), 0x41800000, np.uint32))
    man = {"gpu": "H100", "format": "f16", "k": 16,
           "cases": [{"name": "c1", "a": "a.npy", "b": "b.npy", "alpha": 1, "beta": 0}]}
    tg.check_manifest(tmp_path, man)
    res = [{"case": "c1", "op": "mm", "d": "c1.mm.d.npy", "d_format": "f32", "alpha": 1,
            "beta": 0, "c": None, "c_format": None,
            "fit": ["tcprobe", "fit-gemm", "--a", str(tmp_path / "a.npy"), "--b",
                    str(tmp_path / "b.npy")]}]
    assert tg._fit(tmp_path, man, res) == 0
    fits = json.loads((tmp_path / "fits.json").read_text())
    assert fits[0]["explained"] is True and fits[0]["mismatches"] == 0


# ---------------------------------------------------------------------------
# Left open by the campaign, now one rule: K = 0 is BLAS's empty sum on every
# surface (resolve.fill_empty_k: +0 accumulators, D from the epilogue alone);
# a 0-d tensor is a number as a 0-d array is; a pathlib.Path names a schedule
# file as its text does.

def test_an_empty_k_is_the_epilogue_of_zero_on_every_surface(tmp_path):
    import ml_dtypes
    import numpy as np
    from cli_helpers import invoke

    import tcprobe

    a, b = np.ones((4, 0), ml_dtypes.bfloat16), np.ones((0, 3), ml_dtypes.bfloat16)
    d = tcprobe.matmul(a, b, gpu="H100", progress=False)
    assert d.shape == (4, 3) and (d.view(np.uint32) == 0).all()  # +0, not -0
    c = np.full((4, 3), 2.5, np.float32)
    d = tcprobe.matmul(a, b, c, gpu="H100", alpha=-1.0, beta=2.0, progress=False)
    assert (d.view(np.uint32) == 0x40A00000).all()  # fma(-1, +0, 2 * 2.5) = 5.0
    d = tcprobe.matmul(np.ones((4, 0), np.int8), np.ones((0, 3), np.int8), gpu="H100",
                       progress=False)
    assert d.dtype == np.int32 and (d == 0).all()
    np.save(tmp_path / "a.npy", np.ones((4, 0), np.float16))
    np.save(tmp_path / "b.npy", np.ones((0, 3), np.float16))
    r = invoke("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--gpu", "H100",
               "--out", tmp_path / "d.npy")
    assert r.exit_code == 0, r.output
    assert "4x3x0" in r.output
    assert (np.load(tmp_path / "d.npy").view(np.uint32) == 0).all()


def test_a_zero_d_tensor_is_a_number_as_a_zero_d_array_is():
    import ml_dtypes
    import numpy as np
    import pytest
    import torch

    import tcprobe
    from tcprobe.matrix.operands import MatmulError

    a, b = np.ones((16, 32), ml_dtypes.bfloat16), np.ones((32, 16), ml_dtypes.bfloat16)
    c = np.ones((16, 16), np.float32)
    for alpha in (torch.tensor(2.0), np.array(2.0), np.float32(2.0)):
        d = tcprobe.matmul(a, b, c, gpu="H100", alpha=alpha, progress=False)
        assert (d.view(np.uint32) == 0x42820000).all()  # 2 * 32 + 1 = 65.0
    # campaign 10: one element of shape (1,) is its number too; two are refused
    d = tcprobe.matmul(a, b, c, gpu="H100", alpha=torch.tensor([2.0]), progress=False)
    assert (d.view(np.uint32) == 0x42820000).all()
    with pytest.raises(MatmulError, match=r"^alpha must be a number, not tensor\(\[2\., 2\.\]\)$"):
        tcprobe.matmul(a, b, c, gpu="H100", alpha=torch.tensor([2.0, 2.0]), progress=False)


def test_a_schedule_file_given_as_a_path(tmp_path):
    import json

    import ml_dtypes
    import numpy as np

    import tcprobe
    from tcprobe.matrix.schedule import from_value

    (tmp_path / "s.json").write_text(json.dumps({"split_k": 3, "reduction": "tree"}))
    s = from_value(tmp_path / "s.json")
    assert (s.split_k, s.reduction) == (3, "tree")
    a, b = np.ones((8, 96), ml_dtypes.bfloat16), np.ones((96, 8), ml_dtypes.bfloat16)
    d1 = tcprobe.matmul(a, b, gpu="H100", schedule=tmp_path / "s.json", progress=False)
    d2 = tcprobe.matmul(a, b, gpu="H100", schedule=str(tmp_path / "s.json"), progress=False)
    assert (d1.view(np.uint32) == 0x42C00000).all() and np.array_equal(d1, d2)  # 96.0
