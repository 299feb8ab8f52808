"""Campaign 10 (docs/campaign-10.md): the broken cases, as exact error lines,
exceptions and words. Expected words are worked out by hand (ones summed,
a tie of bf16's rounding), never taken from the code under test."""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.matrix import fit_gemm
from tcprobe.matrix.operands import MatmulError

try:
    import torch
except ImportError:  # pragma: no cover - the torch tests skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

ONES_A = np.ones((4, 8), np.float16)
ONES_B = np.ones((8, 4), np.float16)
W16 = 0x41800000  # 16.0 = 2 * (eight products of 1)
W8_5 = 0x41080000  # 8.5 = 8 + 0.5 * 1


def _words(d) -> set[int]:
    d = d.numpy() if hasattr(d, "numpy") else d
    return set(np.asarray(d).view(np.uint32).ravel().tolist())


# ---- alpha and beta of one element: the number they hold, on every surface

@pytest.mark.parametrize("alpha", [np.array([2.0]), np.array([[2.0]]), np.array([2], np.int64)])
def test_alpha_of_one_element_is_its_number(alpha):
    assert _words(tcprobe.matmul(ONES_A, ONES_B, gpu="H100", alpha=alpha)) == {W16}


@needs_torch
def test_tensor_alpha_and_beta_of_shape_1():
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="H100", alpha=torch.tensor([2.0]))
    assert _words(d) == {W16}
    c = np.ones((4, 4), np.float32)
    d = tcprobe.matmul(ONES_A, ONES_B, c, gpu="H100", beta=torch.tensor([0.5]))
    assert _words(d) == {W8_5}


def test_integer_alpha_of_shape_1():
    x = np.ones((4, 8), np.int8)
    d = tcprobe.matmul(x, x.T.copy(), gpu="H100", alpha=np.array([3]))
    assert set(np.asarray(d).ravel().tolist()) == {24}


@pytest.mark.parametrize("alpha, shown", [(np.array([2.0, 3.0]), "array([2., 3.])"),
                                          (np.array([]), "array([], dtype=float64)"),
                                          (np.array([True]), "True")])
def test_alpha_of_other_sizes_refused(alpha, shown):
    with pytest.raises(MatmulError, match=None) as e:
        tcprobe.matmul(ONES_A, ONES_B, gpu="H100", alpha=alpha)
    assert str(e.value) == f"alpha must be a number, not {shown}"


def test_fit_reads_alpha_of_shape_1_as_the_number():
    x = ONES_A.view(np.uint16)
    z = ONES_B.view(np.uint16)
    d = np.full((4, 4), 0x41000000, np.uint32)  # eight products of 1: 8.0
    one = fit_gemm.fit(x, "f16", z, "f16", None, None, d, "f32", gpu="H100", alpha=1.0)
    arr = fit_gemm.fit(x, "f16", z, "f16", None, None, d, "f32", gpu="H100",
                       alpha=np.array([1.0]))
    assert repr(arr) == repr(one)


# ---- a product this machine cannot hold: refused before an operand is copied

def test_huge_broadcast_operand_refused_before_reading():
    a = np.broadcast_to(np.float16(1), (300000, 300000))
    b = np.broadcast_to(np.float16(1), (300000, 8))
    with pytest.raises(MatmulError) as e:
        tcprobe.matmul(a, b, gpu="H100")
    assert str(e.value).startswith("A (300000x300000) @ B (300000x8) makes a 300000x8 D that "
                                   "takes about 4,320.6 GB of memory")


# ---- fit_gemm.fit: bounds inside K, C and bias in a float product's formats

def _fit(**kw):
    x, z = ONES_A.view(np.uint16), ONES_B.view(np.uint16)
    d = np.full((4, 4), 0x41000000, np.uint32)
    return fit_gemm.fit(x, "f16", z, "f16", kw.pop("c", None), kw.pop("c_fmt", None), d, "f32",
                        gpu="H100", **kw)


@pytest.mark.parametrize("kw, message", [
    ({"bounds": (99,)}, "bounds: every offset must lie inside K (1 .. 7)"),
    ({"bounds": (0,)}, "bounds: every offset must lie inside K (1 .. 7)"),
    ({"bounds": "8"}, "bounds must be a sequence of K offsets, not '8'"),
    ({"bounds": (True,)}, "bounds: K offsets are integers, not [True]"),
    ({"bounds": [4.0]}, "bounds: K offsets are integers, not [4.0]"),
    ({"c": np.zeros((4, 4), np.uint32), "c_fmt": "s32"},
     "c: C in s32 does not suit a float product (f32, f16, bf16)"),
    ({"bias": np.zeros(4, np.uint32), "bias_fmt": "s32"},
     "bias: the bias in s32 does not suit a float product (f32, f16, bf16)"),
])
def test_fit_refuses(kw, message):
    with pytest.raises(MatmulError) as e:
        _fit(**kw)
    assert str(e.value) == message


def test_fit_bounds_inside_k_run():
    assert _fit(bounds=(4,)) is not None


def test_cli_bounds_outside_k_same_rule(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("a.npy", ONES_A)
    np.save("b.npy", ONES_B)
    np.save("d.npy", np.full((4, 4), 8.0, np.float32))
    r = invoke("fit-gemm", "--a", "a.npy", "--b", "b.npy", "--d", "d.npy", "--gpu", "H100",
               "--bounds", "8")
    assert one_error(r) == "error: --bounds: every offset must lie inside K (1 .. 7)"


# ---- a NUL byte in any argument: one error line naming it (was exit 3)

@pytest.mark.parametrize("args, line", [
    (["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--out", "o\x00.npy"],
     "error: --out: 'o\\x00.npy' holds a NUL byte"),
    (["gemm", "--a=a\x00.npy", "--b", "b.npy", "--gpu", "H100"],
     "error: --a: '--a=a\\x00.npy' holds a NUL byte"),
    (["score", "--capture", "c\x00ap"], "error: --capture: 'c\\x00ap' holds a NUL byte"),
    (["report", "merge", "r\x00", "--out", "m"], "error: 'r\\x00' holds a NUL byte"),
    (["targets", "--json", "t\x00.json"], "error: --json: 't\\x00.json' holds a NUL byte"),
])
def test_nul_byte_in_an_argument(args, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = one_error(invoke(*args))
    assert got.startswith(line + ", which no file name, name or value holds"), got
    assert list(tmp_path.iterdir()) == []


# ---- emulate: a serial split writes its partial D in the product's type

@needs_torch
def test_emulate_serial_split_rounds_partial_d_to_bf16():
    # row 0: 1 + 2^-8 over the first 32 K (a bf16 tie: RNE to 1.0), then 2^-9 over the
    # second 32. Serial split-K writes the first split's D in bf16 (1.0) and adds 2^-9:
    # 1 + 2^-9 rounds to 1.0 = 0x3f80. Rounded once at the end, 1 + 3 * 2^-9 would be
    # 0x3f81 (above the half ulp 2^-8).
    a = torch.zeros(1, 64, dtype=torch.bfloat16)
    a[0, 0], a[0, 1], a[0, 32] = 1.0, 2.0 ** -8, 2.0 ** -9
    b = torch.zeros(64, 1, dtype=torch.bfloat16)
    b[:, 0] = 1.0
    from tcprobe.torch import emulate

    with emulate("H100", schedule={"split_k": 2}):
        d = torch.mm(a, b)
        e = torch.bmm(a[None], b[None])[0]
    assert d.view(torch.int16).item() == 0x3F80
    assert e.view(torch.int16).item() == 0x3F80
    with emulate("H100", schedule={"split_k": 2, "split_kind": "parallel"}):
        p = torch.mm(a, b)  # parallel: partials meet in f32, one rounding at the end
    assert p.view(torch.int16).item() == 0x3F81


# ---- emulate: threads started inside the block are counted

@needs_torch
def test_report_counts_threads_started_inside():
    from tcprobe.torch import Report, emulate

    x = torch.ones(4, 8, dtype=torch.bfloat16)
    rep = Report()
    with emulate("H100", report=rep):
        th = threading.Thread(target=lambda: torch.mm(x, x.t()))
        th.start()
        th.join()
        with emulate("H100", report=rep):  # nested, one report: counted once
            th = threading.Thread(target=lambda: None)
            th.start()
            th.join()
    after = threading.Thread(target=lambda: None)
    after.start()
    after.join()
    assert (rep.threads, rep.routed) == (2, 0)


def test_bf16_helper_values():  # the tie the split test rests on, by ml_dtypes
    one = np.array([1 + 2.0 ** -8, 1 + 2.0 ** -9, 1 + 3 * 2.0 ** -9], np.float32)
    assert one.astype(ml_dtypes.bfloat16).view(np.uint16).tolist() == [0x3F80, 0x3F80, 0x3F81]


@needs_torch
def test_emulate_chain_still_routes_bf16():  # the chain's D leaves f32 once: 16 ones = 16.0
    from tcprobe.torch import Report, emulate

    x = torch.ones(4, 16, dtype=torch.bfloat16)
    rep = Report()
    with emulate("H100", schedule="chain", report=rep):
        d = torch.mm(x, x.t())
    assert rep.routed == 1 and set(d.view(torch.int16).ravel().tolist()) == {0x4180}


def test_a_toml_profile_given_as_a_model_is_named_a_device(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16",
               "--model", "p.toml")
    assert one_error(r).startswith("error: 'p.toml' is a sim device profile, not a model: "
                                   "run it as --device sim:PATH.toml (a model is one of auto, ")
    with pytest.raises(ValueError, match=r"^model: 'q\.TOML' is a sim device profile"):
        tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath="mma.bf16.f32.k16", model="q.TOML")
