"""Same bits? (tcprobe.matrix.same_bits): the verdict from parameters, the
shrunk counterexample checked against tcprobe.matmul on each side, and the
per-element attribution of a real run."""

import json

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import tcprobe
from tcprobe.cli import main
from tcprobe.matrix.same_bits import Config, explain_run, verdict

BF16 = ml_dtypes.bfloat16


def test_the_same_parameters_are_the_same_bits_without_a_run():
    v = verdict(Config("H100", "mma"), Config("H100", "wgmma"), "bf16", "bf16", None, "f32")
    assert v.identical is True and v.mechanisms == [] and v.searched == 0
    v = verdict(Config("H200", "mma", schedule="cublas-tf32"),
                Config("H200", "mma", schedule={"operand_round": "rne"}), "tf32", "tf32", None,
                "f32")
    assert v.identical is True


def _words(cfg, a, b):
    d = tcprobe.matmul(a, b, gpu=cfg.gpu, instr=cfg.instr, schedule=cfg.schedule)
    return int(np.asarray(d).view(np.uint32)[0, 0])


@pytest.mark.parametrize("first,second,fmt,mechanism", [
    (Config("A100"), Config("H100", "mma"), "bf16", "window"),
    (Config("H100", "mma"), Config("H100", "mma", schedule={"split_k": 2, "split_kind": "parallel"}),
     "bf16", "split"),
    (Config("H200", "mma"), Config("H200", "mma", schedule="cublas-tf32"), "tf32",
     "operand rounding"),
], ids=["a100-h100", "split", "tf32-rounding"])
def test_a_counterexample_is_small_and_real(first, second, fmt, mechanism):
    v = verdict(first, second, fmt, fmt, None, "f32", seconds=60)
    assert v.identical is False
    assert mechanism in [m.name for m in v.mechanisms]
    ce = v.counterexample
    assert ce["m"] == ce["n"] == 1 and ce["k"] <= 64
    dt = {"bf16": BF16, "tf32": np.float32}[fmt]
    word = {"bf16": np.uint16, "tf32": np.uint32}[fmt]
    a = ce["a"].astype(word).view(dt)
    b = ce["b"].astype(word).view(dt)
    # the two words are what tcprobe.matmul computes on each side, and they differ
    assert _words(first, a, b) == ce["first"] and _words(second, a, b) == ce["second"]
    assert ce["first"] != ce["second"]
    assert len(ce["terms"]) <= int(np.count_nonzero(ce["a"]))
    assert v.explained_by


def test_a_difference_with_no_effect_is_not_called_either_way():
    # a reversed reduction of one split changes nothing, but the parameters differ
    v = verdict(Config("H100", "mma"), Config("H100", "mma", schedule={"reduction": "reverse"}),
                "bf16", "bf16", None, "f32", seconds=2)
    assert v.identical is None and v.counterexample is None
    assert [m.name for m in v.mechanisms] == ["split"]


def test_attribution_names_the_mechanism_of_every_element():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8, 256)).astype(BF16)
    b = rng.standard_normal((256, 8)).astype(BF16)
    x, y = Config("A100"), Config("H100", "mma")
    d1 = tcprobe.matmul(a, b, gpu="A100").view(np.uint32)
    d2 = tcprobe.matmul(a, b, gpu="H100", instr="mma").view(np.uint32)
    differ = int((d1 != d2).sum())
    assert differ > 0
    counts = explain_run(x, y, a.view(np.uint16).astype(np.uint32), "bf16",
                         b.view(np.uint16).astype(np.uint32), "bf16", None, None, "f32", 1, 1,
                         d1, d2)
    # every differing element is named once: by one mechanism alone or as needing several
    assert counts["window"] + counts["block"] + counts["several together"] >= differ
    assert counts["several together"] <= differ
    assert counts["window"] > 0 and counts["block"] > 0  # A100's F=24 and L=8 both show
    split = Config("H100", "mma", schedule={"split_k": 4, "split_kind": "parallel"})
    d3 = tcprobe.matmul(a, b, gpu="H100", instr="mma", schedule=split.schedule).view(np.uint32)
    counts = explain_run(y, split, a.view(np.uint16).astype(np.uint32), "bf16",
                         b.view(np.uint16).astype(np.uint32), "bf16", None, None, "f32", 1, 1,
                         d2, d3)
    assert counts == {"split": int((d2 != d3).sum()), "several together": 0}


def test_gemm_compare_prints_the_verdict(tmp_path):
    rng = np.random.default_rng(1)
    np.save(tmp_path / "a.npy", rng.standard_normal((8, 128)).astype(np.float16))
    np.save(tmp_path / "b.npy", rng.standard_normal((128, 8)).astype(np.float16))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), "--b",
                                  str(tmp_path / "b.npy"), "--gpu", "H100", "--compare", "H100",
                                  "--compare-instr", "wgmma", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "same bits? yes, on every input" in r.output
    assert json.loads(out.read_text())["same_bits"]["identical"] is True
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), "--b",
                                  str(tmp_path / "b.npy"), "--gpu", "H100", "--compare", "H100",
                                  "--compare-schedule", "stream-k", "--json", str(out)])
    assert r.exit_code == 0, r.output
    rep = json.loads(out.read_text())["same_bits"]
    assert rep["identical"] is False and rep["counterexample"]["explained_by"] == ["split"]
    assert "smallest counterexample found" in r.output
