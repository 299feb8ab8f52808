"""Issue 36, "fit-gemm and gemm" and "Tracebacks and exit 3": each bad input
one ``error:`` line and exit 2 (never a traceback, never exit 3), JSON on
stdout alone under ``--json -``, ``--json FILE`` never written through a
planted link and never left half written."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner
from numpy.lib import format as npy_format

import tcprobe
from tcprobe import console, outfiles
from tcprobe.cli import main
from tcprobe.matrix import epilogue
from tcprobe.matrix.operands import MatmulError


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(r, *needles):
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output and "internal error" not in r.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 16)).astype(np.float16)
    b = rng.standard_normal((16, 4)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "ai.npy", rng.integers(-4, 4, (4, 32)).astype(np.int8))
    np.save(tmp_path / "bi.npy", rng.integers(-4, 4, (32, 4)).astype(np.int8))
    return tmp_path


def test_gemm_refuses_an_instr_the_schedule_contradicts(files):
    one_error(invoke("gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
                     "--instr", "mma", "--schedule", "fp8-fast-accum"),
              "--instr", "'mma'", "'wgmma'")


@pytest.mark.parametrize("option,value,needle", [
    ("--alpha", "9223372036854775808", "does not fit s32"),
    ("--beta", "-9223372036854775809", "does not fit s32"),
    ("--alpha", "2147483648", "does not fit s32"),
    ("--alpha", "nan", "must be an integer"),
    ("--beta", "inf", "must be an integer"),
])
def test_gemm_integer_alpha_beta_out_of_range(files, option, value, needle):
    one_error(invoke("gemm", "--gpu", "H100", "--a", files / "ai.npy", "--b", files / "bi.npy",
                     option, value), option, needle)


def test_matmul_integer_alpha_past_s32_is_refused():
    a, b = np.ones((4, 32), np.int8), np.ones((32, 4), np.int8)
    for al in (2 ** 31, 2 ** 63, -(2 ** 63) - 1, 2 ** 70):
        with pytest.raises(MatmulError, match="alpha.*does not fit s32"):
            tcprobe.matmul(a, b, gpu="H100", alpha=al)
    # the edges of s32 are taken, modulo 2**32 as the s32 epilogue computes
    d = tcprobe.matmul(a, b, gpu="H100", alpha=-(2 ** 31))
    assert d.dtype == np.int32 and int(d[0, 0]) == 0  # 32 * -2**31 mod 2**32


@pytest.mark.parametrize("value", ["1e39", "-1e39", "3.5e38"])
def test_gemm_alpha_past_f32_is_one_error(files, value):
    one_error(invoke("gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
                     "--alpha", value), "--alpha", "overflows f32")


def test_f32_word_refuses_as_a_matmul_error():
    with pytest.raises(MatmulError):
        epilogue.f32_word(1e39, "alpha")
    assert epilogue.f32_word(float(np.float32(3.4028235e38)), "alpha") == 0x7F7FFFFF


def test_gemm_probe_negative_seed(tmp_path):
    one_error(invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out",
                     tmp_path / "p", "--seed", "-1"), "--seed")


def test_schedule_that_names_itself_or_nests_deep(files):
    (files / "self.json").write_text(json.dumps({"preset": str(files / "self.json")}))
    (files / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for name in ("self.json", "deep.json"):
        one_error(invoke("gemm", "--gpu", "H100", "--a", files / "a.npy", "--b",
                         files / "b.npy", "--schedule", files / name), "--schedule", name)


def _header_only(path, descr, shape):
    with open(path, "wb") as fh:
        npy_format.write_array_header_1_0(fh, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
        fh.write(b"\0" * 64)


@pytest.mark.parametrize("descr,shape", [("<u2", (100_000, 100_000)),
                                         ("<c16", (100_000, 1_000_000))])
def test_npy_header_claiming_more_than_the_file_is_refused_unread(files, descr, shape,
                                                                  monkeypatch):
    _header_only(files / "huge.npy", descr, shape)

    def no_load(*a, **k):
        raise AssertionError("np.load reached")
    monkeypatch.setattr(np, "load", no_load)
    one_error(invoke("gemm", "--gpu", "H100", "--a", files / "huge.npy", "--b",
                     files / "b.npy"), "--a", "header claims", "elements")


def test_npy_object_array_is_refused(files):
    _header_only(files / "obj.npy", "|O", (10,))
    one_error(invoke("gemm", "--gpu", "H100", "--a", files / "obj.npy", "--b", files / "b.npy"),
              "--a", "Python objects")


# ---------------------------------------------------------------------------
# fit-gemm --json


def _capture(files):
    d = tcprobe.matmul(np.load(files / "a.npy"), np.load(files / "b.npy"), gpu="H100")
    np.save(files / "d.npy", d)


def test_fit_gemm_json_dash_is_json_alone(files):
    _capture(files)
    r = invoke("fit-gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
               "--d", files / "d.npy", "--json", "-")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing but the JSON on stdout
    assert doc["explained"] is True
    assert "explained" in r.stderr  # the tables went to stderr


def test_json_file_replaces_a_planted_link(files):
    _capture(files)
    (files / "target").write_text("keep me")
    os.symlink(files / "target", files / "fit.json")
    r = invoke("fit-gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
               "--d", files / "d.npy", "--json", files / "fit.json")
    assert r.exit_code == 0, r.output
    assert (files / "target").read_text() == "keep me"
    assert not os.path.islink(files / "fit.json")
    assert json.loads((files / "fit.json").read_text())["explained"] is True


def test_json_file_on_a_full_disk_keeps_the_old_file(tmp_path, monkeypatch):
    old = tmp_path / "old.json"
    old.write_text('{"old": 1}\n')
    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outfiles.os, "fdopen", lambda fd, mode: Full(real(fd, mode)))
    with pytest.raises(OSError) as e:
        console.write_json(old, {"new": list(range(1000))})
    assert e.value.errno == errno.ENOSPC
    assert old.read_text() == '{"old": 1}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]  # no temporary file left


def test_a_fifo_or_device_where_a_file_goes_is_refused_before_the_work(files, monkeypatch):
    os.mkfifo(files / "pipe")
    _capture(files)
    calls = []
    from tcprobe.matrix import fit_gemm

    monkeypatch.setattr(fit_gemm, "fit", lambda *a, **k: calls.append(1))
    for args in (["gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
                  "--out", files / "pipe"],
                 ["gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
                  "--json", files / "pipe"],
                 ["fit-gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
                  "--d", files / "d.npy", "--json", files / "pipe"]):
        one_error(invoke(*args), "pipe", "not a regular file")
    assert not calls
    assert stat.S_ISFIFO(os.lstat(files / "pipe").st_mode)  # never replaced by a file
    with pytest.raises(outfiles.UnsafePathError):
        outfiles.write_atomic(files / "pipe", "x")


def test_verdict_seconds_nan(files):
    one_error(invoke("gemm", "--gpu", "H100", "--a", files / "a.npy", "--b", files / "b.npy",
                     "--compare", "A100", "--verdict-seconds", "nan"), "--verdict-seconds")


# ---------------------------------------------------------------------------
# python -m tcprobe.capture.torch_gemm: the manifest is checked before torch


def _runner(folder):
    return subprocess.run([sys.executable, "-m", "tcprobe.capture.torch_gemm", str(folder)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def probe(tmp_path):
    r = invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", tmp_path / "p",
               "--m", "4", "--n", "4", "--k", "64")
    assert r.exit_code == 0, r.output
    return tmp_path / "p"


@pytest.mark.parametrize("change,needle", [
    (lambda m: m["cases"][0].update(name="../../x"), "'../../x' is not a plain file name"),
    (lambda m: m["cases"][0].update(name="/tmp/x"), "not a plain file name"),
    (lambda m: m["cases"][0].update(a="../a.npy"), "not a plain file name"),
    (lambda m: m["cases"][0].update(b="missing.npy"), "is not a file"),
    (lambda m: m["cases"][3].update(c_format="f64"), "c_format"),
    (lambda m: m["cases"][0].update(alpha="1"), "alpha"),
    (lambda m: m["cases"][0].update(alpha=float("nan")), "alpha"),
    (lambda m: m.update(cases={}), "'cases'"),
    (lambda m: m.update(format="f64"), "format"),
    (lambda m: m.pop("gpu"), "'gpu'"),
    (lambda m: m["cases"].append(7), "not a JSON object"),
    (lambda m: m["cases"].append(dict(m["cases"][0])), "appears twice"),
])
def test_torch_gemm_refuses_a_bad_manifest(probe, change, needle):
    m = json.loads((probe / "manifest.json").read_text())
    change(m)
    (probe / "manifest.json").write_text(json.dumps(m))
    r = _runner(probe)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r.stderr
    assert not (probe.parent.parent / "x.matmul.d.npy").exists()


def test_torch_gemm_manifest_not_json_object(probe):
    (probe / "manifest.json").write_text("[" * 100_000)
    r = _runner(probe)
    assert r.returncode == 2 and r.stderr.startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr


def test_torch_gemm_takes_what_gemm_probe_writes(probe):
    from tcprobe.capture.torch_gemm import check_manifest

    m = json.loads((probe / "manifest.json").read_text())
    assert check_manifest(probe, m) is m


def test_bf16_raw_words_still_load(files):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((16, 4)).astype(ml_dtypes.bfloat16)
    np.save(files / "wa.npy", a.view(np.uint16))
    np.save(files / "wb.npy", b.view(np.uint16))
    r = invoke("gemm", "--gpu", "H100", "--a", files / "wa.npy", "--b", files / "wb.npy",
               "--format", "bf16", "--out", files / "d.npy")
    assert r.exit_code == 0, r.output
    want = tcprobe.matmul(a, b, gpu="H100")
    assert np.array_equal(np.load(files / "d.npy").view(np.uint32), want.view(np.uint32))
