"""Issue 23, items 8 and 9: campaign reports carry their reproducers and a
page per datapath; one name for one idea across commands."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from cli_helpers import invoke as cli
from cli_helpers import one_error

W24 = ('window_bits = 24\nblock_size = 16\nzero_floor = -133\ninput_conversion = "truncate"\n'
       'output_rounding = "rz"\nzero_sign = "positive"\nnan = 0x7fffffff\nfamilies = ["tcgen05"]\n')
IDS = "tcgen05.tf32.f32.k8,tcgen05.i8.s8.s32.k32"


def test_campaign_report_carries_reproducers_and_pages(tmp_path):
    toml = tmp_path / "w24.toml"
    toml.write_text(W24)
    out = tmp_path / "c"
    r = cli("validate", "--targets", IDS, "--device", f"sim:{toml}", "--suite", "raw=400",
            "--shrink", "2", "--out", out, "--json", tmp_path / "s.json")
    assert r.exit_code == 1, r.output
    s = json.loads((tmp_path / "s.json").read_text())
    bad, good = s["datapaths"]
    assert bad["datapath"] == "tcgen05.tf32.f32.k8" and bad["mismatches"] > 0
    assert good["mismatches"] == 0 and good["reproducers"] == []
    assert 1 <= len(bad["reproducers"]) <= 2  # one a kind of mismatch (generator), at most 2
    line = bad["reproducers"][0]["command"]
    assert line.startswith(f"tcprobe run-case --device sim:{toml} ")
    assert "--datapath tcgen05.tf32.f32.k8" in line
    # the summary links a page per datapath; the page holds every run-case line
    summary_html = (out / "summary.html").read_text()
    assert f'href="{bad["page"]}"' in summary_html and f'href="{good["page"]}"' in summary_html
    page = (out / bad["page"]).read_text()
    for rep in bad["reproducers"]:
        assert rep["command"].replace("&", "&amp;") in page
    assert "No reproducers: no mismatches" in (out / good["page"]).read_text()
    assert line in (out / "summary.md").read_text()
    # the line reruns the case: the device and the model differ on it (run-case exits 1)
    argv = line.split()[1:]
    rerun = cli(*argv)
    assert rerun.exit_code == 1, rerun.output
    # a merge keeps them
    r2 = cli("report", "merge", out, "--out", tmp_path / "m", "--json", tmp_path / "m.json")
    assert r2.exit_code == 1
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["datapaths"][0]["reproducers"] == bad["reproducers"]
    assert (tmp_path / "m" / bad["page"]).exists()


def test_ladder_help_lists_every_sim_device():
    from tcprobe.devices.sim import BUILTIN

    r = cli("ladder", "--help")
    flat = " ".join(r.output.split())
    assert len(BUILTIN) >= 8
    for key in BUILTIN:
        assert re.search(rf"\b{re.escape(key)}\b", flat), key
    assert "--dtype" in flat and "--output" not in flat  # the old spelling is hidden


def _ones_f16(tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.ones((2, 16), np.float16))
    np.save(b, np.ones((16, 3), np.float16))
    return a, b


def test_gemm_dtype_and_its_old_spelling(tmp_path):
    a, b = _ones_f16(tmp_path)
    new = cli("gemm", "--a", a, "--b", b, "--gpu", "B200", "--dtype", "f16", "--out",
              tmp_path / "new.npy")
    assert new.exit_code == 0, new.output
    old = cli("gemm", "--a", a, "--b", b, "--gpu", "B200", "--out-type", "f16", "--out",
              tmp_path / "old.npy")
    assert old.exit_code == 0, old.output
    assert "note: --out-type is deprecated: use --dtype" in old.output
    assert "deprecated" not in new.output
    for f in ("new.npy", "old.npy"):
        d = np.load(tmp_path / f)
        assert d.dtype == np.float16 and (d.view(np.uint16) == 0x4C00).all()  # 16.0 in f16
    both = cli("gemm", "--a", a, "--b", b, "--gpu", "B200", "--dtype", "f16", "--out-type", "f32")
    one_error(both, "not both", notes=True)


def test_ladder_output_is_a_deprecated_spelling_of_dtype():
    r = cli("ladder", "--device", "sim:b200", "--format", "f16", "--dtype", "f16", "--output",
            "f32", "--steps", "sass", "--validate", "0")
    one_error(r, "give --dtype or --output, not both", notes=True)


def test_matmul_dtype_and_deprecated_out():
    import tcprobe

    a, b = np.ones((2, 16), np.float16), np.ones((16, 3), np.float16)
    d = tcprobe.matmul(a, b, gpu="B200", dtype=np.float16)
    assert d.dtype == np.float16 and (d.view(np.uint16) == 0x4C00).all()
    with pytest.warns(DeprecationWarning, match="use dtype="):
        d_old = tcprobe.matmul(a, b, gpu="B200", out=np.float16)
    assert (d_old.view(np.uint16) == 0x4C00).all()
    with pytest.raises(ValueError, match="^dtype: give dtype= or out="), \
            pytest.warns(DeprecationWarning):
        tcprobe.matmul(a, b, gpu="B200", dtype=np.float16, out=np.float16)
    with pytest.raises(ValueError, match="^dtype: "):
        tcprobe.matmul(a, b, gpu="B200", dtype="nosuch")


def test_zero_ulps_between_two_words_reads_as_the_sign_of_zero():
    from tcprobe.models.formats import get_format
    from tcprobe.models.words import ulps_or_none
    from tcprobe.reports.campaign import datapath_html
    from tcprobe.reports.validate import ulps_text

    f32 = get_format("f32")
    u = ulps_or_none(f32, 0x80000000, 0x00000000)  # -0 against +0
    assert ulps_text(u) == "+0 vs -0 (the sign of zero)"
    assert ulps_text(ulps_or_none(f32, 0x3F800001, 0x3F800000)) == "+1 ulps"
    assert ulps_text(None) == "NaN involved" and ulps_text(-12345) == "-12,345 ulps"
    row = {"datapath": "mma.bf16.f32.k16", "model": "m", "mismatches": 1, "cases": 10,
           "seconds": 0.5, "suites": {"edge": {"status": "mismatch", "cases": 10, "mismatches": 1}},
           "reproducers": [{"suite": "edge", "device_word": "0x80000000 (-0)",
                            "model_word": "0x0 (+0)", "ulps": 0, "command": "tcprobe run-case x"}]}
    page = datapath_html(row, {"device": {"device": "sim:b200"}})
    assert "+0 vs -0" in page and "+0 ulps" not in page and "tcprobe run-case x" in page


def test_gemm_instr_is_a_family_or_a_datapath_id(tmp_path):
    a, b = _ones_f16(tmp_path)
    bad = cli("gemm", "--a", a, "--b", b, "--gpu", "B200", "--instr", "wmma")
    one_error(bad, "'wmma' is neither a family")
    assert "Traceback" not in bad.output
    ok = cli("gemm", "--a", a, "--b", b, "--gpu", "H100", "--instr", "MMA", "--dtype", "f16",
             "--out", tmp_path / "d.npy")
    assert ok.exit_code == 0, ok.output
    # as the API: the library accumulates in f32 and converts D to f16 in the epilogue
    assert "mma.f16.f32.k16" in ok.output
    assert (np.load(tmp_path / "d.npy").view(np.uint16) == 0x4C00).all()
