"""Replaying published captures on a device (sim devices here; cuda on a GPU)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tcprobe.capture import load
from tcprobe.cli import main
from tcprobe.devices.sim import SimDevice
from tcprobe.models.cases import Cases
from tcprobe.validation.replay import pad_cases, replay, replay_datapath

DATA = Path(__file__).parent / "data" / "khattak-mikaitis-2025"


def cap(gpu: str, fmt: str, out: str = "f32"):
    return next(c for c in load(DATA / gpu / fmt) if c.datapath.d_type == out)


def test_replay_datapath_rules():
    dp, notes = replay_datapath(cap("H200", "bf16"))
    assert dp.id == "mma.bf16.f32.k16" and notes == []
    dp, notes = replay_datapath(cap("H200", "tf32"))
    assert dp.id == "mma.tf32.f32.k8" and "K=4 padded" in notes[0]
    dp, notes = replay_datapath(cap("H200", "E4M3"))
    assert dp.id == "wgmma.e4m3.f32.k32" and "WGMMA" in notes[0]
    dp, _ = replay_datapath(cap("H200", "E4M3"), family="mma")
    assert dp.id == "mma.e4m3.f32.k32"
    dp, _ = replay_datapath(cap("Ada", "E4M3"))
    assert dp.id == "mma.e4m3.f32.k32"
    dp, notes = replay_datapath(cap("A100", "fp16", "f16"))
    assert dp.id == "mma.f16.f16.k16" and "K=8 padded" in notes[0]


def test_pad_cases_appends_positive_zeros():
    c = Cases(np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]]), np.array([9, 10]))
    p = pad_cases(c, 4)
    assert p.a.tolist() == [[1, 2, 0, 0], [3, 4, 0, 0]] and p.b[:, 2:].sum() == 0
    assert p.c.tolist() == [9, 10] and pad_cases(c, 2) is c
    with pytest.raises(ValueError, match="more than"):
        pad_cases(p, 2)


@pytest.mark.parametrize("fmt,out", [("bf16", "f32"), ("fp16", "f32"), ("fp16", "f16"), ("tf32", "f32"),
                                     ("E4M3", "f32"), ("E5M2", "f32")])
def test_h200_captures_replay_on_the_h200_model_without_a_difference(fmt, out):
    r = replay(cap("H200", fmt, out), SimDevice("h200"))
    assert r.skipped is None and r.cases == 250
    assert r.mismatches == 0, r.examples[:2]


def test_replay_reports_differences_with_examples():
    # H200 bf16 words replayed on the A100's datapath (L=8, F=24) differ
    r = replay(cap("H200", "bf16"), SimDevice("a100"), show=2)
    assert r.mismatches > 0 and len(r.examples) == 2
    i = r.examples[0].index
    c = cap("H200", "bf16")
    assert r.examples[0].device.startswith(f"0x{int(c.words[i]):08x}")


def test_replay_limit_and_skip():
    r = replay(cap("H200", "bf16"), SimDevice("h200"), limit=10)
    assert r.cases == 10
    r = replay(cap("H200", "bf16"), SimDevice("b200"), family="wgmma")
    assert r.skipped and "does not run" in r.skipped


def test_replay_command(tmp_path):
    out = tmp_path / "replay.json"
    res = CliRunner().invoke(main, ["replay", "--capture", str(DATA / "H200" / "bf16"), "--capture",
                                    str(DATA / "H200" / "tf32"), "--device", "sim:h200", "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["device"]["device"] == "sim:h200"
    assert [r["mismatches"] for r in data["results"]] == [0, 0]
    res = CliRunner().invoke(main, ["replay", "--capture", str(DATA / "H200" / "E5M2"), "--device", "sim:h200"])
    assert res.exit_code == 0, res.output  # fp8: wgmma for the f32 file, the emulated mma.sync for f16
    res = CliRunner().invoke(main, ["replay", "--capture", str(DATA / "H200" / "bf16"), "--device", "sim:a100"])
    assert res.exit_code == 1 and "differ from the recorded words" in res.output
