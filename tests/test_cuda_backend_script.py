"""The prepared GPU check (scripts/gpu_cuda_backend.py) run here in its
``--host`` mode: the host build stands in for the kernel, so every step but
the NVRTC compile and the GPU timings runs, on few rows, a 64^3 product and
the tiny transformer. Its equality figures are real (words of the CUDA
source against the CPU engine); its times are not GPU figures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture(scope="module")
def script():
    sys.path.insert(0, str(SCRIPTS))  # importable: the spawned engine workers import it too
    try:
        import gpu_cuda_backend

        yield gpu_cuda_backend
    finally:
        sys.path.remove(str(SCRIPTS))


def test_small_cases_cover_every_row(script):
    """Two cases a row of each list; block-scaled rows with their scales."""
    cases = script.small_cases()
    rows = [c["row"] for c in cases]
    for row in (*script.ROWS, *script.INTEGER_ROWS, *script.SCALED_ROWS, *script.SPARSE_ROWS,
                *script.AMD_ROWS, *script.SPLIT_ROWS):
        assert rows.count(row) == 2
    for c in cases:
        scaled = c["row"] in script.SCALED_ROWS
        assert (c["sa"] is not None) == scaled and (c["sb"] is not None) == scaled
        sparse = c["row"] in script.SPARSE_ROWS
        assert (c["active"] is not None) == sparse
        if sparse:  # A is zero where its metadata leaves a position out, half of K kept
            assert not c["a"][~c["active"]].any() and c["active"].mean() == 0.5


@pytest.mark.slow
def test_host_mode_runs_every_step(script, tmp_path):
    res = script.main(["--out", str(tmp_path), "--host", "--rows", "4", "--size", "64",
                       "--tiny", "--jobs", "1", "--steps", "1"])
    assert res["mode"].startswith("host build")
    steps = res["steps"]
    assert "compile" not in steps  # NVRTC and the GPU are the lent machine's
    assert set(steps) == {"engine-refs", "equal-small", "product-b200-tcgen05",
                          "product-h100-wgmma", "transformer", "transformer-on-gpu"}
    on_gpu = steps.pop("transformer-on-gpu")  # GPU tensors: none here
    assert on_gpu["status"] == "skipped" and "no GPU" in on_gpu["figure"]
    assert all(s["status"] == "ok" for s in steps.values()), {
        k: s["figure"] for k, s in steps.items()}
    small = steps["equal-small"]["rows"]
    assert len(small) == 8 and sum(r["words"] for r in small) == 8 * 48 * 40
    assert {r["datapath"] for r in small} >= {"mma.s8.s32.k32", "wgmma.e4m3.f32.k64.sparse",
                                              "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"}
    tr = steps["transformer"]
    assert tr["products"] > 20 and tr["fallback"] == 0 and tr["differ"] == 0 and tr["words"]
    assert json.loads((tmp_path / "results.json").read_text())["steps"].keys() == set(steps) | {
        "transformer-on-gpu"}
    assert len((tmp_path / "summary.tsv").read_text().splitlines()) == 6
