"""tcprobe.matmul(schedule='auto') and tcprobe gemm --schedule auto: the
GPU's library atlas picks the schedule; on the committed H200 captures
(reports/silicon/2026-12-04-h200) the plain matmul calls reproduce every
word, and the provenance is said."""

import numpy as np
import pytest
from click.testing import CliRunner

import tcprobe
from tcprobe.atlas import replay
from tcprobe.cli import main
from tcprobe.matrix.operands import MatmulError


def _matmul_calls():
    out = []
    for call in replay.calls():
        if call.op == "matmul" and call.case == "random" and call.fmt in ("tf32", "bf16",
                                                                          "f16"):
            out.append(call)
    return out


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("call", _matmul_calls(), ids=lambda c: c.id)
def test_auto_reproduces_the_h200_matmul_calls(call):
    import ml_dtypes

    ops = replay.operands(call)
    dt = {"tf32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[call.fmt]
    a, b = (ops[p].view(dt) for p in "ab")
    out = {"tf32": "float32", "f16": "float16", "bf16": "bfloat16"}[call.fmt]
    d = tcprobe.matmul(a, b, gpu="H200", dtype=out, schedule="auto", progress=False)
    want = np.load(replay.ROOT / call.folder / call.result["d"])
    got = np.ascontiguousarray(d).view(want.dtype)
    assert np.array_equal(got, want), call.id


def test_auto_refuses_a_guess_when_strict_and_says_where_the_schedule_came_from(tmp_path):
    a = np.ones((64, 512), np.float32)
    with pytest.raises(MatmulError, match="no measured or predicted schedule"):
        tcprobe.matmul(a, a.T.copy(), gpu="H100", schedule="auto", strict_auto=True,
                       progress=False)
    with pytest.raises(MatmulError, match="split_k"):
        tcprobe.matmul(a, a.T.copy(), gpu="H200", schedule="auto", split_k=2, progress=False)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a.T.copy())
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), "--b",
                                  str(tmp_path / "b.npy"), "--gpu", "H200", "--schedule",
                                  "auto", "--compare", "H100", "--json",
                                  str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    import json

    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["products"][0]["provenance"].startswith("measured")
    assert rep["products"][0]["schedule"]["split_k"] == 8
    assert rep["products"][1]["provenance"].startswith("default guess")
