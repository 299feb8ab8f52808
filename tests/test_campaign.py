"""Validation campaigns (tcprobe validate --targets): per-suite counts, sparse
lane counts, resume, shards and their merge, a wrong device caught."""

import json

import numpy as np
import pytest
from cli_helpers import invoke as cli
from cli_helpers import one_error

from tcprobe import suites
from tcprobe.models.datapath import Datapath
from tcprobe.validation import campaign as camp

IDS = "tcgen05.tf32.f32.k8,tcgen05.f16.bf16.f32.k16,mma.bf16.f32.k16"


def test_campaign_runs_every_datapath_and_suite(tmp_path):
    out = tmp_path / "c"
    r = cli("validate", "--targets", IDS, "--device", "sim:b200", "--suite", "raw=600,finite=300,edge",
            "--cases", "200", "--out", out, "--json", tmp_path / "s.json")
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert [d["datapath"] for d in s["datapaths"]] == IDS.split(",")
    for row in s["datapaths"]:
        assert {k: c["cases"] for k, c in row["suites"].items()} == {"raw": 600, "finite": 300,
                                                                     "edge": 200}
        assert row["mismatches"] == 0 and row["status"] == "ok"
    assert s["cases"] == 3 * 1100 and s["exit_status"] == 0
    assert (out / "summary.html").read_text().count("<tr>") == 4
    assert "| `tcgen05.tf32.f32.k8` |" in (out / "summary.md").read_text()


def test_a_wrong_device_is_caught_on_every_float_datapath(tmp_path):
    # a custom device with a 24-bit window, scored against the B200 models of the targets
    toml = tmp_path / "w24.toml"
    toml.write_text('window_bits = 24\nblock_size = 16\nzero_floor = -133\ninput_conversion = '
                    '"truncate"\noutput_rounding = "rz"\nzero_sign = "positive"\nnan = 0x7fffffff\n'
                    'families = ["tcgen05"]\n')
    ids = "tcgen05.tf32.f32.k8,tcgen05.f16.bf16.f32.k16,tcgen05.i8.s8.s32.k32"
    r = cli("validate", "--targets", ids, "--device", f"sim:{toml}", "--suite", "raw=3000",
            "--out", tmp_path / "c", "--json", tmp_path / "s.json")
    assert r.exit_code == 1, r.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["mismatched_datapaths"] == ["tcgen05.tf32.f32.k8", "tcgen05.f16.bf16.f32.k16"]
    assert "tcgen05.tf32.f32.k8" in r.output


def test_killed_campaign_resumes_and_other_options_are_refused(tmp_path):
    out = tmp_path / "c"
    args = ["validate", "--targets", IDS, "--device", "sim:b200", "--suite", "raw=500,edge=100",
            "--out", out]
    assert cli(*args).exit_code == 0
    first = json.loads((out / "summary.json").read_text())
    # as if killed in the second datapath's edge piece: its result never written
    (out / "tcgen05.f16.bf16.f32.k16" / "edge.json").unlink()
    r = cli(*args)
    assert r.exit_code == 0, r.output
    again = json.loads((out / "summary.json").read_text())
    strip = lambda s: [(d["datapath"], {k: (c["cases"], c["mismatches"]) for k, c in d["suites"].items()})  # noqa: E731
                       for d in s["datapaths"]]
    assert strip(again) == strip(first)
    r = cli("validate", "--targets", IDS, "--device", "sim:b200", "--suite", "raw=501,edge=100",
            "--out", out)
    one_error(r, "other options")


def test_shards_merge_into_the_whole(tmp_path):
    base = ["validate", "--targets", IDS, "--device", "sim:b200", "--suite", "raw=400,finite=100"]
    assert cli(*base, "--out", tmp_path / "all").exit_code == 0
    for i in (1, 2):
        assert cli(*base, "--shard", f"{i}/2", "--out", tmp_path / f"s{i}").exit_code == 0
    r = cli("report", "merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "m")
    assert r.exit_code == 0, r.output
    whole = json.loads((tmp_path / "all" / "summary.json").read_text())
    merged = json.loads((tmp_path / "m" / "summary.json").read_text())
    key = lambda s: sorted((d["datapath"], d["cases"], d["mismatches"]) for d in s["datapaths"])  # noqa: E731
    assert key(merged) == key(whole)
    shard1 = json.loads((tmp_path / "s1" / "summary.json").read_text())
    assert [d["datapath"] for d in shard1["datapaths"]] == [IDS.split(",")[0], IDS.split(",")[2]]


def test_sparse_lane_counts():
    dp = Datapath.parse("tcgen05.f16.bf16.f32.k16")
    plan = suites.Plan(("sparse",), 2000, lanes=(0, 3, 16))
    cases, codes, _ = suites.make_chunk(dp, plan, 1, 0)
    lanes_gen = suites.generator_keys(dp, ("sparse",)).index("sparse/lanes")
    a = cases.a[codes == lanes_gen]
    live = ((a & 0x7FFF) != 0).sum(axis=1)  # bf16 words: nonzero magnitude
    assert set(np.unique(live)) == {0, 3, 16}
    with pytest.raises(suites.SuiteError, match="0 to 16"):
        suites.generate(dp, "sparse", 0, 0, 10, lanes=(17,))


@pytest.mark.parametrize("text,err", [("raw=1e6,raw=5", "twice"), ("bogus", "unknown suite"),
                                      ("raw=abc", "whole number")])
def test_bad_suite_counts(text, err):
    with pytest.raises(ValueError, match=err):
        camp.parse_suite_counts(text, 100)


@pytest.mark.parametrize("text", ["0/2", "3/2", "x", "1-2", "2/"])
def test_bad_shards(text):
    with pytest.raises(camp.CampaignError):
        camp.parse_shard(text)


def test_suite_counts_split_the_rest():
    got = dict(camp.parse_suite_counts("raw=1e6,finite,edge", 3000))
    assert got["raw"] == 1_000_000 and got["finite"] + got["edge"] == 3000
    assert got["finite"] == 2000  # weights finite 2 : edge 1


def test_write_up_preset_and_targets():
    targets = camp.parse_targets("blog")
    assert len(targets) == 44  # the write-up's 46 rows name 44 distinct datapaths
    assert all(t.gpu == "B200" for t in targets)
    suites_, lanes = camp.PRESETS["write-up"]
    assert dict(suites_)["raw"] == 1_000_000 and dict(suites_)["finite"] == 200_000
    assert lanes == (0, 1, 2, 3, 4, 7, 8)
