"""gemm's figures as a numerical analyst reads them (errors relative to
|A||B| + |C|), and its outputs: `--out -` is the .npy on stdout, `--json -`
the JSON with every table on stderr."""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcprobe.matrix.compare import product_scale, relative_error

ROOT = Path(__file__).resolve().parent.parent


def test_relative_error_on_hand_made_words():
    # A = [[1, 2]], B = [[1], [4]] (bf16 words), C = [[-1]] (f32): |A||B| + |C| = 10
    a = np.array([[0x3F80, 0x4000]], np.uint32)
    b = np.array([[0x3F80], [0x4080]], np.uint32)
    c = np.array([[0xBF800000]], np.uint32)
    scale = product_scale(a, "bf16", b, "bf16", c, "f32")
    assert scale.tolist() == [[10.0]]
    got = np.array([[0x41000000]], np.uint32)  # 8.0
    want = np.array([[0x41080000]], np.uint32)  # 8.5
    rel = relative_error("f32", got, want, scale)
    assert rel["componentwise"] == 0.05 and rel["normwise"] == 0.05
    assert rel["worst"]["row"] == 0 and rel["worst"]["ulps"] == -(1 << 19)


def test_the_worst_element_by_relative_error_is_not_the_worst_in_ulps():
    # element 0: a cancelled result near 0 (many ulps, tiny against |A||B|);
    # element 1: a large result off by 2 ulps of 2**-22 each, against a scale of 2
    scale = np.array([[2.0, 2.0]])
    want = np.array([[0x33800000, 0x3F800000]], np.uint32)  # 2**-24, 1.0
    got = np.array([[0x33800100, 0x3F800002]], np.uint32)
    rel = relative_error("f32", got, want, scale)
    assert rel["worst"]["column"] == 1 and rel["worst"]["ulps"] == 2


def _gemm(tmp_path, *extra):
    a = np.arange(32, dtype=np.uint16).reshape(2, 16) | 0x3F00
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a.T.copy())
    return subprocess.run([sys.executable, "-m", "tcprobe", "gemm", "--a", str(tmp_path / "a.npy"),
                           "--b", str(tmp_path / "b.npy"), "--format", "bf16", "--gpu", "A100",
                           *extra], capture_output=True, cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_out_dash_writes_the_npy_to_stdout(tmp_path):
    r = _gemm(tmp_path, "--out", "-", "--compare", "H100")
    assert r.returncode == 0, r.stderr.decode()
    d = np.load(io.BytesIO(r.stdout))
    assert d.dtype == np.float32 and d.shape == (2, 2)
    assert b"A100: mma.bf16.f32.k16" in r.stderr
    assert not (tmp_path / "-.npy").exists() and not (ROOT / "-.npy").exists()


def test_json_dash_sends_the_tables_to_stderr(tmp_path):
    r = _gemm(tmp_path, "--json", "-", "--exact")
    assert r.returncode == 0, r.stderr.decode()
    report = json.loads(r.stdout)  # nothing but the JSON on stdout
    assert set(report["exact"]["A100"]["relative"]) == {"componentwise", "normwise", "worst"}
    assert b"vs the exact product" in r.stderr


def test_both_on_stdout_is_one_error_line(tmp_path):
    r = _gemm(tmp_path, "--json", "-", "--out", "-")
    assert r.returncode == 2
    assert r.stderr.decode().strip().startswith("error: --out - and --json - both ask for stdout")


@pytest.mark.parametrize("ulps,got,want,text", [(0, 0x80000000, 0, "+0 and -0"),
                                                (3, 1, 4, "+3 ulps"), (None, 1, 2, "NaN")])
def test_ulps_as_printed(ulps, got, want, text):
    from tcprobe.commands.gemm_run import _ulps

    assert _ulps(ulps, got, want) == text
