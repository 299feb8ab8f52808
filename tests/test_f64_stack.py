"""f64 DMMA through the stack: MMA-Sim as a peer, the sim devices, the ladder's
chain step, validate, captures (binary and JSON Lines) and run-case."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import one_error
from click.testing import CliRunner

from tcprobe.capture import load
from tcprobe.cli import main
from tcprobe.devices.base import Device
from tcprobe.devices.sim import SimDevice
from tcprobe.ladder import run_ladder
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.f64 import ChainParams, F64Model
from tcprobe.models.registry import resolve
from tcprobe.suites.mix import random_cases

DP = {k: Datapath("mma", "f64", "f64", "f64", "f64", k) for k in (4, 8, 16)}
ONE = 0x3FF0000000000000


# ---------------------------------------------------------------------------
# MMA-Sim (the peer): its f64 mma through torch float64, bit for bit.


def _mmasim_words(arch: str, instr: str, cases: Cases) -> np.ndarray:
    torch = pytest.importorskip("torch")
    nv_ptx = pytest.importorskip("mmasim.nv_ptx", reason="MMA-Sim 2.1.1 is not installed")
    op = nv_ptx.MMA(arch, instr)

    def t(w):
        return torch.from_numpy(np.ascontiguousarray(w, np.uint64).view(np.int64).copy()).view(
            torch.float64)

    d = op.dpa(t(cases.a), t(cases.b), t(cases.c))
    return d.contiguous().view(torch.int64).numpy().view(np.uint64)


@pytest.mark.parametrize("arch,instr,k,gpu", [
    ("Ampere", "m8n8k4.f64.f64.f64.f64", 4, "A100"),
    ("Hopper", "m16n8k4.f64.f64.f64.f64", 4, "H100"),
    ("Hopper", "m16n8k8.f64.f64.f64.f64", 8, "H100"),
    ("Hopper", "m16n8k16.f64.f64.f64.f64", 16, "H100"),
])
def test_profile_agrees_with_mmasim(arch, instr, k, gpu):
    cases = random_cases(DP[k], 1500, np.random.default_rng(k))
    want = _mmasim_words(arch, instr, cases)
    got = resolve("auto", DP[k], gpu).evaluate(cases)
    assert np.array_equal(got, want), np.flatnonzero(got != want)[:5]


def test_mmasim_device_runs_f64():
    pytest.importorskip("mmasim", reason="MMA-Sim 2.1.1 is not installed")
    from tcprobe.devices.mmasim import MmaSimDevice

    dev = MmaSimDevice("Ampere:mma.m8n8k4.f64.f64.f64.f64")
    assert dev.dp == DP[4]
    cases = Cases(np.array([[ONE, 0x8000000000000000, 0, 0]], np.uint64),
                  np.array([[0x3FF8000000000000, ONE, 0, 0]], np.uint64),
                  np.array([0x7FF0000000000001], np.uint64))
    assert dev.run(DP[4], cases).tolist() == [0x7FF8000000000001]  # C's NaN, quieted
    cases.c[:] = 0xC000000000000000  # 1 * 1.5 + -0 * 1 - 2 = -0.5
    assert dev.run(DP[4], cases).tolist() == [0xBFE0000000000000]


# ---------------------------------------------------------------------------
# Sim devices and the ladder.


def test_sim_devices_run_f64_in_result_mode():
    for name, ks in (("a100", (4,)), ("h100", (4, 8, 16)), ("h200", (4, 8, 16)),
                     ("b200", (4, 8, 16))):
        dev = SimDevice.builtin(name)
        assert [k for k in (4, 8, 16) if dev.supports(DP[k])] == list(ks), name
    assert not SimDevice.builtin("v100").supports(DP[4])
    assert SimDevice.builtin("h200").datapath("mma", "f64") == DP[4]


def test_a_toml_profile_refuses_f64():
    from tcprobe.devices.sim_profile import SimProfile
    from tcprobe.models.model import ModelError

    prof = SimProfile("custom", None, ("mma",), params={"window_bits": 25, "block_size": 4})
    with pytest.raises(ModelError, match="f64 datapaths run on the built-in sim devices"):
        prof.model(DP[4])
    assert not SimDevice(prof).supports(DP[4])


class ChainDevice(Device):
    """A device that runs an f64 datapath of given ChainParams (result mode)."""

    name = "test:chain"

    def __init__(self, params: ChainParams):
        self.params = params

    def supports(self, dp):
        return dp.a_type == "f64"

    def run(self, dp, cases):
        return F64Model("device", dp, "", self.params).evaluate(cases)


def test_ladder_on_sim_h200_ends_with_a_chain_fingerprint():
    r = run_ladder(SimDevice.builtin("h200"), DP[4])
    assert r.fingerprint.chain == {"structure": "chain", "k_order": None, "c_at": 0,
                                   "nan": "propagate"}
    assert r.validation.mismatches == 0 and r.validation.cases == 10_000
    assert r.finding("chain").status == "found"
    assert r.finding("internal").status == "skipped"


@pytest.mark.parametrize("params", [
    ChainParams(k_order=(3, 1, 0, 2, 4, 5, 7, 6), c_at=3),
    ChainParams(c_at=8, nan=0x7FFFFFFFFFFFFFFF),
    ChainParams(structure="fused"),
])
def test_chain_step_recovers_order_c_entry_and_nan(params):
    r = run_ladder(ChainDevice(params), DP[8], validate_cases=3000)
    fp = r.fingerprint.chain
    assert fp["structure"] == params.structure
    if params.structure == "chain":
        assert fp["c_at"] == params.c_at
        assert (tuple(fp["k_order"]) if fp["k_order"] else None) == params.k_order
    assert fp["nan"] == params.nan
    assert r.validation.mismatches == 0


# ---------------------------------------------------------------------------
# The command line, captures and vectors.


def test_validate_sim_h200_f64_and_the_capture_keeps_64_bit_words(tmp_path):
    out = tmp_path / "v"
    res = CliRunner().invoke(main, ["validate", "--device", "sim:h200", "--datapath",
                                    "mma.f64.f64.k4", "--cases", "3000", "--model", "auto",
                                    "--out", str(out), "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["datapath"] == "mma.f64.f64.k4"
    (cap,) = load(out / "capture.tcap")
    assert cap.words.dtype == np.uint64 and cap.cases.a.dtype == np.uint64
    assert int(cap.words.max()) > 0xFFFFFFFF
    again = resolve("auto", cap.datapath, "H200").evaluate(cap.cases)
    assert np.array_equal(again, cap.words)


def test_ieee_baseline_is_told_apart_and_reproducers_rerun(tmp_path):
    res = CliRunner().invoke(main, ["validate", "--device", "sim:a100", "--datapath",
                                    "mma.f64.f64.k4", "--cases", "3000", "--model", "ieee",
                                    "--out", str(tmp_path / "v"), "--shrink", "1"])
    assert res.exit_code == 1, res.output
    line = next(x.strip() for x in res.output.splitlines() if "tcprobe run-case" in x)
    again = CliRunner().invoke(main, [*line.split()[1:], "--model", "a100"])
    assert again.exit_code == 1 and "same word" in again.output  # a100 agrees, ieee differs


def test_jsonl_vectors_take_16_digit_hex_words(tmp_path):
    p = tmp_path / "v.jsonl"
    rec = {"gpu": "H200", "family": "mma", "kind": "f64", "a_type": "f64", "b_type": "f64",
           "d_type": "f64", "k": 4, "a": ["0x3ff0000000000000", "0x3ca0000000000000"],
           "b": ["0x3ff0000000000000", "0x3ff0000000000000"], "c": "0x3ca0000000000000",
           "d": "0x3ff0000000000000"}  # 1 + 2^-53 (tie: 1) + 2^-53 (tie: 1)
    p.write_text(json.dumps(rec) + "\n")
    res = CliRunner().invoke(main, ["score", "--capture", str(p), "--model", "auto",
                                    "--model", "ieee"])
    assert res.exit_code == 1, res.output  # ieee: 1 + 2^-52
    assert "h100" in res.output
    rec["d"] = "0x3ff00000000000001"  # 17 digits: more than 64 bits
    p.write_text(json.dumps(rec) + "\n")
    bad = CliRunner().invoke(main, ["score", "--capture", str(p)])
    one_error(bad, "does not fit f64")


def test_ladder_cli_and_targets(tmp_path):
    res = CliRunner().invoke(main, ["ladder", "--device", "sim:h200", "--datapath",
                                    "mma.f64.f64.k16"])
    assert res.exit_code == 0, res.output
    assert "chain.structure" in res.output and "0 mismatches" in res.output
    t = CliRunner().invoke(main, ["targets", "--suite", "dmma", "--json", str(tmp_path / "t.json")])
    assert t.exit_code == 0, t.output
    ids = [x["datapath"] for x in json.loads((tmp_path / "t.json").read_text())["targets"]]
    assert ids == ["mma.f64.f64.k4", "mma.f64.f64.k8", "mma.f64.f64.k16"]
