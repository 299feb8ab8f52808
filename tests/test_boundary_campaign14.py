"""Campaign 14 (docs/campaign-14.md): the broken cases of emulate, the AMD
datapaths through every surface, gemm's options, captures in folders and the
TCPROBE_* switches, as exact words, error lines and exceptions. Words are
worked out by hand: sixteen products of ones sum to 16.0 = 2^4 (0x41800000
in f32), seventeen to 17.0 = 2^4 + 1 (0x41880000); an empty sum (K = 0) is
+0 (0x00000000), so D = alpha * (+0) + beta * C is C, 1.0 = 0x3F800000 for
C of ones."""

from __future__ import annotations

import re

import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.models.host_ieee import EpilogueSwitchError
from tcprobe.models.numba_internals import KernelSwitchError

W16, W17, W1 = 0x41800000, 0x41880000, 0x3F800000


def _words(path) -> set[int]:
    return set(np.load(path).view(np.uint32).ravel().tolist())


# ---------------------------------------------------------------------------
# gemm --m/--n/--k 0: an empty product runs as a file of that shape runs
# (was: "Invalid value for '--m': 0 is not in the range x>=1", while
# --a of shape (0, 16) ran)


@pytest.mark.parametrize("m, n, k, shape", [(0, 8, 8, (0, 8)), (8, 0, 8, (8, 0)),
                                             (0, 0, 0, (0, 0))])
def test_gemm_takes_an_empty_m_or_n(tmp_path, m, n, k, shape):
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--m", m, "--n", n, "--k", k, "--format", "f16", "--gpu", "MI300X",
               "--out", out)
    assert r.exit_code == 0, r.output
    assert np.load(out).shape == shape


@pytest.mark.parametrize("gpu, fmt", [("MI300X", "f16"), ("MI250X", "bf16"), ("H100", "bf16")])
def test_gemm_k_zero_is_the_empty_sum(tmp_path, gpu, fmt):
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--m", 8, "--n", 8, "--k", 0, "--format", fmt, "--gpu", gpu, "--out", out)
    assert r.exit_code == 0, r.output
    assert np.load(out).shape == (8, 8) and _words(out) == {0}  # +0, as BLAS's empty sum


def test_gemm_k_zero_with_c_is_c(tmp_path):
    np.save(tmp_path / "c.npy", np.ones((8, 8), np.float32))
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--random", "8x8x0", "--format", "f16", "--gpu", "MI300X",
               "--c", tmp_path / "c.npy", "--out", out)
    assert r.exit_code == 0, r.output
    assert _words(out) == {W1}


def test_gemm_negative_or_huge_empty_shapes_are_refused():
    one_error(invoke("gemm", "--m", -1, "--n", 8, "--k", 8, "--format", "f16", "--gpu", "MI300X"),
              "--m")
    one_error(invoke("gemm", "--random", "-1x8x8", "--format", "f16", "--gpu", "MI300X"),
              "at least 0")
    # K = 0 makes no operand, but D (10^5 x 10^5 f32) would still be 40 GB: named before it is made
    one_error(invoke("gemm", "--m", 100000, "--n", 100000, "--k", 0, "--format", "f16",
                     "--gpu", "MI300X"), "memory")


# ---------------------------------------------------------------------------
# a profile's name, gpu and families are read before what kind of profile it
# is (was: gpu = 300 beside [mfma] said "[mfma] is for an AMD profile (gpu =
# MI100, MI250X or MI300X ...)")


@pytest.mark.parametrize("body, needle", [
    ('name = "p"\ngpu = 300\n[mfma]\ndesign = "fma"\n', "gpu: 300 is not text"),
    ('name = "p"\ngpu = 300.0\nfamilies = ["mfma"]\n', "gpu: 300.0 is not text"),
    ('name = "p"\ngpu = true\n[mfma]\ndesign = "fma"\n', "gpu: True is not text"),
    ('name = ["p"]\ngpu = "MI300X"\nfamilies = ["mfma"]\n', "name: ['p'] is not text"),
])
def test_profile_keys_are_read_before_the_profile_kind(tmp_path, body, needle):
    p = tmp_path / "p.toml"
    p.write_text(body)
    one_error(invoke("run-case", "--device", f"sim:{p}", "--datapath", "mfma.f16.f32.k16",
                     "--a", "0x3c00", "--b", "0x3c00", "--c", "0"), needle)


# ---------------------------------------------------------------------------
# TCPROBE_KERNEL and TCPROBE_EPILOGUE on every product of the API (was: an
# AMD product and tcprobe.dot never read TCPROBE_KERNEL: 'zzz' ran unremarked)


def test_a_misspelt_kernel_switch_is_refused_on_amd_and_dot(monkeypatch):
    monkeypatch.setenv("TCPROBE_KERNEL", "zzz")
    with pytest.raises(KernelSwitchError, match="TCPROBE_KERNEL='zzz'"):
        tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu="MI300X")
    with pytest.raises(KernelSwitchError, match="TCPROBE_KERNEL='zzz'"):
        tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath="mfma.f16.f32.k16", gpu="MI300X")
    monkeypatch.setenv("TCPROBE_KERNEL", " Plain ")  # the names rule: any case, spaces
    d = tcprobe.matmul(np.ones((8, 17), np.float16), np.ones((17, 8), np.float16), gpu="MI300X")
    assert set(d.view(np.uint32).ravel().tolist()) == {W17}


def test_a_misspelt_epilogue_switch_is_refused_on_amd(monkeypatch):
    monkeypatch.setenv("TCPROBE_EPILOGUE", "fast")
    with pytest.raises(EpilogueSwitchError, match="TCPROBE_EPILOGUE='fast'"):
        tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu="MI250X")


# ---------------------------------------------------------------------------
# a validate --out folder is a capture (was: replay and score of it said "no
# captures found (expected GPU/FORMAT/d_*.txt files)")


def test_an_empty_folder_names_both_kinds_of_capture(tmp_path):
    (tmp_path / "empty").mkdir()
    one_error(invoke("score", "--capture", tmp_path / "empty"), "no captures found",
              "capture.tcap")


@pytest.mark.slow
def test_replay_and_score_of_a_validate_folder(tmp_path):
    r = invoke("validate", "--format", "bf16", "--device", "sim:mi250x", "--cases", "64",
               "--out", tmp_path / "v")
    assert r.exit_code == 0, r.output
    r = invoke("replay", "--capture", tmp_path / "v", "--device", "sim:mi250x")
    assert r.exit_code == 0, r.output
    assert "64 cases, 0 differ" in r.output
    r = invoke("score", "--capture", tmp_path / "v", "--model", "mi250x")
    assert r.exit_code == 0 and "0 mismatches in all" in r.output, r.output
    # a campaign's folder: one capture per piece, below it
    r = invoke("validate", "--targets", "mfma.f16.f32.k16,mfma.bf16.f32.k16", "--device",
               "sim:mi300x", "--cases", "30", "--out", tmp_path / "camp")
    assert r.exit_code == 0, r.output
    r = invoke("replay", "--capture", tmp_path / "camp", "--device", "sim:mi300x")
    assert r.exit_code == 0 and "0 differ" in r.output, r.output


# ---------------------------------------------------------------------------
# the README's capture path typed from another folder says where it was read
# from (was: a hint naming the very path typed as the one to use)


def test_readme_capture_path_from_another_folder_names_the_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_error(invoke("score", "--capture", "tests/data/khattak-mikaitis-2025"),
                     "no such file or folder", "checkout's root")
    assert str(tmp_path) in line


# ---------------------------------------------------------------------------
# atlas.lookup: numpy's integers are integers (was: "m must be a positive
# integer, not np.int64(256)"); a format the GPU has no instruction for has
# no schedule (was: MI250X's e4m3fnuz and V100's bf16 answered a default guess)


def test_lookup_takes_numpy_integers():
    import tcprobe.atlas as atlas

    f = atlas.lookup("H200", "gemm", "bf16", np.int64(256), np.int32(256), np.uint16(4096))
    assert f.provenance == "measured"  # 256x256x4096 bf16 is one of the H200's measured shapes


@pytest.mark.parametrize("gpu, op, fmt, needle", [
    ("MI250X", "scaled_mm", "e4m3fnuz", "MI250X (CDNA2) has no v_mfma"),
    ("MI300X", "scaled_mm", "e4m3", "MI300X (CDNA3) has no v_mfma"),
    ("V100", "gemm", "bf16", "V100's instructions take no bf16"),
])
def test_lookup_refuses_a_format_the_gpu_cannot_run(gpu, op, fmt, needle):
    import tcprobe.atlas as atlas

    with pytest.raises(atlas.AtlasError, match=re.escape(needle)):
        atlas.lookup(gpu, op, fmt, 64, 64, 512)


def test_emulate_counts_such_a_product_as_a_fallback():
    torch = pytest.importorskip("torch")
    from tcprobe.torch import Report, emulate

    rep = Report()
    with emulate("V100", report=rep):
        d = torch.ones(8, 16, dtype=torch.bfloat16) @ torch.ones(16, 8, dtype=torch.bfloat16)
    assert rep.routed == 0 and "V100's instructions take no bf16" in rep.fallbacks[0][1]
    assert (d == 16).all()  # torch's own product


# ---------------------------------------------------------------------------
# python -m tcprobe.capture.torch_gemm with no DIR: one error line (was: the
# module's doc on stdout, exit 2, no error line)


def test_torch_gemm_runner_without_a_folder_is_one_error(capsys):
    from tcprobe.capture import torch_gemm

    assert torch_gemm.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: DIR:")
