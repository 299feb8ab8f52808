"""gemm-probe for MI300X's fp8 (e4m3fnuz, e5m2fnuz): the cases' words, the
runner's manifest check and torch dtypes, and fit-gemm on the model's own D.

Words worked out by hand: 16.0 = 2^4 is e4m3fnuz exponent field 4 + 8 = 12,
fraction 0 (0x60; OCP e4m3, bias 7, writes 0x58), and e5m2fnuz field
4 + 16 = 20 (0x50; OCP e5m2, bias 15, writes 0x4C).
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.capture import torch_gemm
from tcprobe.matrix import fit_gemm


@pytest.mark.parametrize("fmt,sixteen", [("e4m3fnuz", 0x60), ("e5m2fnuz", 0x50)])
def test_gemm_probe_writes_fnuz_words_the_runner_takes(tmp_path, fmt, sixteen):
    out = tmp_path / "p"
    r = invoke("gemm-probe", "--gpu", "mi300x", "--format", fmt.upper(), "--out", out, "--k", 128)
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == fmt and manifest["gpu"] == "MI300X"
    assert torch_gemm.check_manifest(out, manifest) is manifest
    narrow = next(c for c in manifest["cases"] if c["name"] == "narrow")
    a = np.load(out / narrow["a"])
    assert a.dtype == np.uint8 and set(a[:, 0].tolist()) == {sixteen}
    assert torch_gemm.TORCH_DTYPES[fmt] == f"float8_{fmt}"


def test_ocp_fp8_on_mi300x_and_fnuz_on_h100_are_refused(tmp_path):
    one_error(invoke("gemm-probe", "--gpu", "MI300X", "--format", "e4m3", "--out", tmp_path / "a"),
              "MI300X", "e4m3")
    one_error(invoke("gemm-probe", "--gpu", "H100", "--format", "e5m2fnuz", "--out",
                     tmp_path / "b"), "H100", "e5m2fnuz")


def test_the_runner_fits_an_fnuz_case_as_it_would_on_the_gpu(tmp_path):
    """The model's own D of the cancel case, through the search the runner's
    --fit runs: explained by the mfma chain (the check is that fnuz operands
    and an f32 D go through fit-gemm's search end to end)."""
    out = tmp_path / "p"
    assert invoke("gemm-probe", "--gpu", "MI300X", "--format", "e4m3fnuz", "--out", out,
                  "--m", 16, "--n", 16, "--k", 128).exit_code == 0
    case = next(c for c in json.loads((out / "manifest.json").read_text())["cases"]
                if c["name"] == "cancel")
    a, b = np.load(out / case["a"]), np.load(out / case["b"])
    d = np.asarray(tcprobe.matmul(a.view(ml_dtypes.float8_e4m3fnuz),
                                  b.view(ml_dtypes.float8_e4m3fnuz), gpu="MI300X",
                                  dtype=np.float32))
    f = fit_gemm.fit(a.astype(np.uint32), "e4m3fnuz", b.astype(np.uint32), "e4m3fnuz", None,
                     None, d.view(np.uint32), "f32", gpu="MI300X", alpha=1.0, beta=0.0)
    assert f.explained and f.mismatches == 0 and f.elements == 256
    assert {s.instr for s in f.schedules} == {"mfma"}
    wrong = d.view(np.uint32).copy()
    wrong[3, 5] ^= 1  # one word one unit off: no schedule explains it
    g = fit_gemm.fit(a.astype(np.uint32), "e4m3fnuz", b.astype(np.uint32), "e4m3fnuz", None,
                     None, wrong, "f32", gpu="MI300X", alpha=1.0, beta=0.0)
    assert not g.explained and g.mismatches >= 1
