"""AMD's v_mfma datapaths as a target set: ``tcprobe targets --set mfma`` and
``validate --targets`` (an mfma id gated by the v_mfma table, run on an AMD
sim device, skipped on an NVIDIA one).

Facts from AMD's ISA guides (CDNA1/2/3), which models/isa_amd.py tabulates
after MMA-Sim: fp8/bf8 and xf32 MFMAs came with CDNA3 (MI300), f64 MFMAs
with CDNA2 (MI200); CDNA1 (MI100) has f32, f16 and bf16 only.
"""

from __future__ import annotations

import json

from cli_helpers import invoke, one_error


def _rows(tmp_path, *sets):
    out = tmp_path / "t.json"
    args = [a for s in sets for a in ("--set", s)]
    r = invoke("targets", *args, "--json", out)
    assert r.exit_code == 0, r.output
    return json.loads(out.read_text())


def test_the_mfma_set_lists_each_generations_datapaths(tmp_path):
    data = _rows(tmp_path, "mfma")
    rows = data["targets"]
    by_arch: dict[str, set[str]] = {}
    for r in rows:
        assert r["suite"] == "mfma" and r["family"] == "mfma" and r["descriptor"] is None
        by_arch.setdefault(r["arch"], set()).add(r["datapath"])
    assert set(by_arch) == {"CDNA1", "CDNA2", "CDNA3"}
    assert len(rows) == sum(len(ids) for ids in by_arch.values())  # each id once per generation
    fp8 = {a for a, ids in by_arch.items() if any(".fp8." in i for i in ids)}
    xf32 = {a for a, ids in by_arch.items() if any(".xf32." in i for i in ids)}
    f64 = {a for a, ids in by_arch.items() if any(i.startswith("mfma.f64.") for i in ids)}
    assert fp8 == xf32 == {"CDNA3"} and f64 == {"CDNA2", "CDNA3"}
    assert "mfma.fp8.e4m3fnuz.f32.k32" in by_arch["CDNA3"]
    assert {r["name"] for r in rows if r["datapath"] == "mfma.fp8.e4m3fnuz.f32.k32"} == {
        "v_mfma_f32_16x16x32_fp8_fp8"}
    assert data["counts"] == {"mfma": len(rows)}
    every = _rows(tmp_path, "all")["counts"]
    assert every["mfma"] == len(rows) and every["hmma"] == 10


def test_validate_runs_mfma_targets_on_an_amd_sim(tmp_path):
    r = invoke("validate", "--targets", "MFMA.BF16.F32.K16,mfma.f32.f32.k4", "--device",
               "sim:mi300x", "--cases", 100, "--out", tmp_path / "c")
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "c" / "summary.json").read_text())
    text = json.dumps(summary)
    assert "mfma.bf16.f32.k16" in text and "mfma.f32.f32.k4" in text
    assert "2 datapaths, 200 cases, 0 mismatches" in r.output


def test_an_mfma_id_no_instruction_runs_is_one_error(tmp_path):
    one_error(invoke("validate", "--targets", "mfma.bf16.f32.k17", "--device", "sim:mi300x",
                     "--cases", 10, "--out", tmp_path / "c"),
              "--targets mfma.bf16.f32.k17", "no v_mfma runs")
    assert not (tmp_path / "c").exists()


def test_mfma_targets_on_an_nvidia_device_run_nothing_and_say_so(tmp_path):
    one_error(invoke("validate", "--targets", "mfma", "--device", "sim:h100", "--cases", 10,
                     "--out", tmp_path / "c"), "runs none of its", "mfma.")
