"""Campaign 15 (docs/campaign-15.md): what a hostile user's paths and a new
user's dtypes broke. A FIFO (or /dev/zero, /dev/stdin) named where tcprobe
reads a user's file made it wait for ever (score, fit and replay --capture,
gemm --model and --schedule, validate --model, tcprobe.matmul(schedule=)); it
is now one error naming what the path is. atlas.lookup took a format's name
but raised TypeError on the dtype itself (torch.bfloat16, np.float16), and
refused a 0-d integer array or tensor as a size; batch-invariance named the
API's argument (``ref``) for its option ``--ref``. Lookups are checked
against the same lookup with the format's name, the independent spelling."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe import atlas
from tcprobe.capture import CaptureError
from tcprobe.capture import load as load_capture

KM = Path(__file__).parent / "data" / "khattak-mikaitis-2025"


@pytest.fixture
def no_hang():
    """A test that would wait for ever on a FIFO fails after 30 s instead."""
    def _raise(*_):
        raise TimeoutError("no answer in 30 s: blocked on a FIFO?")
    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def fifos(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("fifo.json", "fifo.jsonl", "fifo.tcap"):
        os.mkfifo(tmp_path / name)
    os.symlink("/dev/zero", tmp_path / "zero.json")
    np.save(tmp_path / "a.npy", np.ones((8, 16), np.float16))
    np.save(tmp_path / "b.npy", np.ones((16, 8), np.float16))
    return tmp_path


# ---------------------------------------------------------------------------
# a FIFO or a device where a file is read: one error line, never a wait


@pytest.mark.parametrize("args, path, what", [
    (["score", "--capture", "fifo.jsonl"], "fifo.jsonl", "FIFO"),
    (["score", "--capture", "fifo.tcap"], "fifo.tcap", "FIFO"),
    (["score", "--capture", "/dev/zero"], "/dev/zero", "character device"),
    (["fit", "--capture", "fifo.jsonl"], "fifo.jsonl", "FIFO"),
    (["replay", "--capture", "fifo.tcap", "--device", "sim:h100"], "fifo.tcap", "FIFO"),
    (["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--model", "fifo.json"],
     "fifo.json", "FIFO"),
    (["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--model", "zero.json"],
     "zero.json", "character device"),
    (["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "MI300X", "--schedule", "fifo.json"],
     "fifo.json", "FIFO"),
    (["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "10", "--model",
      "fifo.json"], "fifo.json", "FIFO"),
])
def test_a_fifo_or_device_is_refused_by_name(fifos, no_hang, args, path, what):
    one_error(invoke(*args), path, what)
    assert not (fifos / "out").exists()  # validate made no folder for a refused run


def test_a_fifo_among_a_capture_folders_files(tmp_path, no_hang):
    """The a/b/c/d text tree: a d_* file that is a FIFO is named, not waited on."""
    src = KM / "H200" / "bf16"
    dst = tmp_path / "H200" / "bf16"
    shutil.copytree(src, dst)
    d = sorted(dst.glob("d_*.txt"))[0]
    d.unlink()
    os.mkfifo(d)
    one_error(invoke("score", "--capture", tmp_path), d.name, "FIFO")


def test_api_capture_and_schedule_refuse_a_fifo(fifos, no_hang):
    with pytest.raises(CaptureError, match="fifo.jsonl: a FIFO"):
        load_capture("fifo.jsonl")
    with pytest.raises(ValueError, match="fifo.json: a FIFO"):
        tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu="H100",
                       schedule="fifo.json")


def test_a_regular_schedule_file_still_reads(tmp_path, monkeypatch):
    """The check refuses only what is not a regular file: a split of 2 over
    K = 32 of ones is 16 + 16 = 32.0 = 2^5 (0x42000000)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_bytes(b'\xef\xbb\xbf{\r\n "split_k": 2\r\n}\r\n')  # BOM, CRLF
    d = tcprobe.matmul(np.ones((8, 32), np.float16), np.ones((32, 8), np.float16), gpu="H100",
                       schedule="s.json")
    assert set(d.view(np.uint32).ravel().tolist()) == {0x42000000}


# ---------------------------------------------------------------------------
# atlas.lookup: a dtype is its format; a 0-d integer is a size


def _lookup(dtypes, m=256, gpu="H100"):
    return atlas.lookup(gpu, "mm", dtypes, m, 256, 256)


@pytest.mark.parametrize("dtype, name", [
    ("torch.bfloat16", "bf16"), ("torch.float16", "f16"), (ml_dtypes.bfloat16, "bf16"),
    (np.float16, "f16"), (np.dtype(np.float16), "f16"), ("torch.float32", "tf32"),
])
def test_lookup_takes_a_dtype_as_its_format(dtype, name):
    if isinstance(dtype, str):
        torch = pytest.importorskip("torch")
        dtype = getattr(torch, dtype.split(".")[1])
    assert _lookup(dtype) == _lookup(name)
    assert _lookup((dtype, dtype)) == _lookup((name, name))
    assert _lookup(dtype, gpu="MI300X") == _lookup(name, gpu="MI300X")


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32, None])
def test_lookup_names_a_dtype_that_is_no_operand_format(dtype):
    with pytest.raises(atlas.AtlasError, match="no operand format"):
        _lookup(dtype)


def test_lookup_refuses_what_is_no_format_or_dtype():
    with pytest.raises(atlas.AtlasError, match="dtypes: a format"):
        _lookup(3)


def test_lookup_takes_a_0d_integer_as_a_size():
    assert _lookup("bf16", np.array(256)) == _lookup("bf16", 256)
    torch = pytest.importorskip("torch")
    assert _lookup("bf16", torch.tensor(256)) == _lookup("bf16", 256)


@pytest.mark.parametrize("m", [np.array(256.0), np.array([256]), np.bool_(True), -1, 256.0])
def test_lookup_refuses_what_is_no_size(m):
    with pytest.raises(atlas.AtlasError, match="m must be an integer of at least 0"):
        _lookup("bf16", m)


# ---------------------------------------------------------------------------
# batch-invariance names its own options


@pytest.mark.parametrize("args, option", [(["--ref", "-1"], "--ref"), (["--n", "0"], "--n")])
def test_batch_invariance_names_the_option(args, option):
    base = {"--gpu": "H100", "--format": "bf16", "--n": "256", "--k": "256"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    r = invoke("batch-invariance", *[x for kv in base.items() for x in kv])
    line = one_error(r, option)
    assert line.startswith(f"error: {option} must be")


# ---------------------------------------------------------------------------
# split_k: numpy's bool is refused as Python's is (it compared equal to 1 and
# slipped past the check; jobs= already refused it)


@pytest.mark.parametrize("flag", [True, np.bool_(True)])
def test_split_k_refuses_a_bool(flag):
    with pytest.raises(ValueError, match="split_k must be a positive integer"):
        tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu="H100",
                       split_k=flag)


def test_a_huge_schedule_file_is_refused_by_its_size(tmp_path, monkeypatch):
    """A 100 MiB (sparse) file named as a schedule is refused from its size,
    never read whole (a schedule file is a few kB)."""
    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "huge.json", "wb") as fh:
        fh.truncate(100 << 20)
    np.save(tmp_path / "a.npy", np.ones((8, 16), np.float16))
    np.save(tmp_path / "b.npy", np.ones((16, 8), np.float16))
    r = invoke("gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100", "--schedule", "huge.json")
    one_error(r, "huge.json", "104,857,600 bytes")


def test_a_gpu_name_with_spaces_is_labelled_as_the_gpu():
    # names are read stripped (docs/names.md); the label printed was the text as
    # typed ("H100 : wgmma..."). Ones sum to 8.0: bf16 -> f32 0x41000000 everywhere.
    r = invoke("gemm", "--random", "8x8x8", "--format", "bf16", "--gpu", " H100 ",
               "--compare", "a100 ")
    assert r.exit_code == 0, r.output
    assert any(line.startswith("H100: wgmma") for line in r.output.splitlines()), r.output
    assert "a100 vs H100:" in r.output and "H100 :" not in r.output


@pytest.mark.parametrize("text", ["1_0_", "1,5", "10,000,00"])
def test_counts_with_loose_separators_are_refused(text):
    r = invoke("validate", "--format", "bf16", "--device", "sim:h100", "--cases", text)
    one_error(r, "--cases", repr(text), progress="working")
