"""Issue 26 on campaigns: a campaign that would run no case is refused
naming why; model files read as validate reads them; the --out lock, the
disk room and --jobs; a datapath the device fails on is an error piece and
the rest run; a damaged campaign folder names its file; report merge checks
the shards against each other and never writes into one."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import invoke, one_error

from tcprobe.capture.lock import hold_out_folder
from tcprobe.devices.base import DeviceError
from tcprobe.devices.sim import SimDevice
from tcprobe.validation import campaign as camp

IDS = "mma.bf16.f32.k16,mma.f16.f32.k16,mma.tf32.f32.k8"


def campaign(out, *extra, ids=IDS, device="sim:h100", suite="raw=200"):
    return invoke("validate", "--targets", ids, "--device", device, "--suite", suite,
                  "--shrink", "0", "--out", out, *extra)


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


# ---------------------------------------------------------------------------
# A campaign that would run no case is an error naming why, nothing written.


@pytest.mark.parametrize("args,needles", [
    (["--targets", "mma.bf16.f32.k16", "--model", "nope"], ["no case", "unknown model 'nope'"]),
    (["--targets", "mma.bf16.f32.k7"], ["mma.bf16.f32.k7", "K 8 or 16, not 7"]),
    (["--targets", "blog"], ["no case", "sim:h100 runs none of its 44 datapath"]),
    (["--targets", "mma.bf16.f32.k16", "--suite", ""], ["--suite names no suite"]),
    (["--targets", "mma.bf16.f32.k16", "--suite", " , "], ["--suite names no suite"]),
])
def test_a_campaign_that_would_run_no_case_is_refused(tmp_path, args, needles):
    out = tmp_path / "c"
    one_error(invoke("validate", "--device", "sim:h100", "--cases", "100", "--out", out, *args),
              *needles)
    assert not out.exists()


@pytest.mark.parametrize("text", ['{"fingerprint": ', "[1, 2]", "{}", ""])
def test_a_campaign_reads_model_files_like_validate(tmp_path, text):
    bad = tmp_path / "m.json"
    bad.write_text(text)
    line = one_error(campaign(tmp_path / "c", "--model", bad, ids="mma.bf16.f32.k16"), "no case",
                     f"--model {bad}")
    assert "not JSON" in line or "neither a ladder fingerprint" in line
    assert not (tmp_path / "c").exists()


@pytest.fixture(scope="module")
def fingerprint(tmp_path_factory) -> Path:
    fp = tmp_path_factory.mktemp("fp") / "fp.json"
    r = invoke("ladder", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200", "--validate",
               "0", "--json", fp)
    assert r.exit_code == 0, r.output
    return fp


def test_a_fingerprint_runs_its_own_datapath(tmp_path, fingerprint):
    out = tmp_path / "c"
    r = campaign(out, "--model", fingerprint, ids="mma.bf16.f32.k16,mma.f16.f32.k16",
                 device="sim:b200")
    assert r.exit_code == 0, r.output
    s = summary(out)
    rows = {d["datapath"]: d for d in s["datapaths"]}
    assert rows["mma.bf16.f32.k16"]["cases"] == 200
    assert rows["mma.bf16.f32.k16"]["model"].startswith("fingerprint")
    assert rows["mma.f16.f32.k16"]["status"] == "skipped"
    assert "fingerprint of mma.bf16.f32.k16" in rows["mma.f16.f32.k16"]["suites"]["raw"]["note"]
    # no target the fingerprint models: refused, named
    one_error(campaign(tmp_path / "d", "--model", fingerprint, ids="mma.f16.f32.k16",
                       device="sim:b200"), "no case", "fingerprint of mma.bf16.f32.k16")


# ---------------------------------------------------------------------------
# The lock, the disk room, --jobs.


def test_a_campaign_takes_the_out_lock(tmp_path):
    out = tmp_path / "c"
    with hold_out_folder(out):
        one_error(campaign(out), "another tcprobe run is writing")
    assert not (out / "campaign.json").exists()


def test_a_campaign_checks_disk_room_first(tmp_path, monkeypatch):
    out = tmp_path / "c"
    real = shutil.disk_usage
    monkeypatch.setattr(camp.shutil, "disk_usage",
                        lambda p: real(p)._replace(free=1000))
    one_error(campaign(out, suite="raw=100000"), "campaign's captures need", "1.0 kB free",
              "choose another --out")
    assert not out.exists()


def test_a_campaign_honours_jobs(tmp_path, monkeypatch):
    seen = []
    real = camp.run

    def spy(spec, device, out, **kw):
        seen.append(device.speed.jobs)
        return real(spec, device, out, **kw)

    monkeypatch.setattr(camp, "run", spy)
    assert campaign(tmp_path / "c", "--jobs", "1", ids="mma.bf16.f32.k16").exit_code == 0
    assert seen == [1]


# ---------------------------------------------------------------------------
# A datapath the device fails on: an error piece, named; the rest run.


def _failing_on(monkeypatch, failing: set[str]):
    real = SimDevice.run

    def run(self, dp, cases):
        if dp.id in failing:
            raise DeviceError(f"{dp.id} takes 256 A and 128 B slots a tile, got 128 and 64")
        return real(self, dp, cases)

    monkeypatch.setattr(SimDevice, "run", run)


def test_a_device_failure_is_an_error_piece_and_the_rest_run(tmp_path, monkeypatch):
    out = tmp_path / "c"
    _failing_on(monkeypatch, {"mma.f16.f32.k16"})
    r = campaign(out, "--json", tmp_path / "s.json")
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["error_datapaths"] == ["mma.f16.f32.k16"] and s["exit_status"] == 1
    rows = {d["datapath"]: d for d in s["datapaths"]}
    assert rows["mma.bf16.f32.k16"]["cases"] == rows["mma.tf32.f32.k8"]["cases"] == 200
    cell = rows["mma.f16.f32.k16"]["suites"]["raw"]
    assert cell["status"] == "error" and "got 128 and 64" in cell["note"]
    assert "failed on the device: mma.f16.f32.k16" in r.stdout
    assert "failed mma.f16.f32.k16 raw: sim:h100 failed on mma.f16.f32.k16" in r.stderr
    assert "mma.f16.f32.k16" in (out / "summary.md").read_text().split("Failed on the device")[1]
    assert not (out / "mma.f16.f32.k16" / "raw.json").exists()  # not finished: a rerun runs it
    monkeypatch.undo()
    r = campaign(out)
    assert r.exit_code == 0, r.output
    assert summary(out)["cases"] == 600 and summary(out)["error_datapaths"] == []


def test_a_campaign_the_device_fails_whole_ran_no_case(tmp_path, monkeypatch):
    _failing_on(monkeypatch, set(IDS.split(",")))
    r = campaign(tmp_path / "c")
    one_error(r, "ran no case", "sim:h100 failed on mma.bf16.f32.k16", progress="campaign ")
    assert "campaign 3/3 mma.tf32.f32.k8 raw: error (0 cases" in r.stderr  # each piece said


# ---------------------------------------------------------------------------
# A damaged campaign folder names its file; a full disk names the capture.


@pytest.mark.parametrize("name,text,needle", [
    ("mma.bf16.f32.k16/raw.json", "{not json", "not a campaign piece result"),
    ("mma.bf16.f32.k16/raw.json", '{"schema": "tcprobe/campaign-piece/1", "cases": "x"}',
     "not the result of the mma.bf16.f32.k16 raw piece"),
    ("mma.bf16.f32.k16/raw.json", "[]", "not the result"),
    ("campaign.json", "", "not a campaign record"),
    ("campaign.json", "[1]", "not a campaign record"),
])
def test_a_damaged_campaign_folder_names_the_file(tmp_path, name, text, needle):
    out = tmp_path / "c"
    assert campaign(out).exit_code == 0
    (out / name).write_text(text)
    one_error(campaign(out), str(out / name), needle)


def test_a_full_disk_names_the_capture_and_the_rerun_finishes(tmp_path, monkeypatch):
    from tcprobe.capture import binary

    out = tmp_path / "c"
    real = binary.Writer._flush
    calls = [0]

    def full(self):
        calls[0] += 1
        if calls[0] > 2:  # the first capture's header and chunk fit
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self)

    monkeypatch.setattr(binary.Writer, "_flush", full)
    line = one_error(campaign(out, suite="raw=200"), "f16.f32.k16/raw.tcap", "the disk is full",
                     "--resume")
    assert "[Errno" not in line
    monkeypatch.undo()
    r = campaign(out, suite="raw=200")
    assert r.exit_code == 0, r.output
    assert summary(out)["cases"] == 600


# ---------------------------------------------------------------------------
# report merge: shards checked against each other; never into an input.


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("shards")
    for name, extra in (("s1", ["--shard", "1/2"]), ("s2", ["--shard", "2/2"]),
                        ("t1", ["--shard", "1/3"]), ("seed", ["--shard", "2/2", "--seed", "5"]),
                        ("count", ["--shard", "2/2", "--suite", "raw=300"]),
                        ("whole", [])):
        suite = [] if "--suite" in extra else ["--suite", "raw=200"]  # an option is given once
        r = invoke("validate", "--targets", IDS, "--device", "sim:h100", *suite,
                   "--shrink", "0", "--out", base / name, *extra)
        assert r.exit_code == 0, r.output
    return base


@pytest.mark.parametrize("names,needles", [
    (["s1", "s1"], ["s1 is given twice"]),
    (["s1", "t1"], ["t1 is shard 1/3", "one of 2 shards"]),
    (["s1"], ["shard 2/2 missing"]),
    (["s1", "seed"], ["seed ran with another seed", "5"]),
    (["s1", "count"], ["count ran with other suite counts", "300"]),
    (["whole", "s1"], ["s1 is shard 1/2", "one of 1 shards"]),
])
def test_merge_refuses_shards_that_are_not_one_campaign(tmp_path, shards, names, needles):
    out = tmp_path / "m"
    one_error(invoke("report", "merge", *[shards / n for n in names], "--out", out), *needles)
    assert not out.exists()


def test_merge_refuses_overlapping_shards(tmp_path, shards):
    # a copy of shard 1 relabelled as shard 2: the same datapaths twice
    fake = tmp_path / "fake"
    shutil.copytree(shards / "s1", fake)
    s = json.loads((fake / "summary.json").read_text())
    s["spec"]["shard"] = "2/2"
    (fake / "summary.json").write_text(json.dumps(s))
    one_error(invoke("report", "merge", shards / "s1", fake, "--out", tmp_path / "m"),
              "both hold mma.bf16.f32.k16", "overlap")


@pytest.mark.parametrize("where", ["s1", "s1/sub"])
def test_merge_never_writes_into_a_shard(tmp_path, shards, where):
    before = {p: p.read_bytes() for p in (shards / "s1").rglob("*") if p.is_file()}
    one_error(invoke("report", "merge", shards / "s1", shards / "s2", "--out", shards / where),
              "merge never writes into a shard")
    after = {p: p.read_bytes() for p in (shards / "s1").rglob("*") if p.is_file()}
    assert after == before


def test_merge_of_every_shard_is_the_whole(tmp_path, shards):
    r = invoke("report", "merge", shards / "s2", shards / "s1", "--out", tmp_path / "m")
    assert r.exit_code == 0, r.output
    merged, whole = summary(tmp_path / "m"), summary(shards / "whole")
    key = lambda s: [(d["datapath"], d["cases"], d["mismatches"]) for d in s["datapaths"]]  # noqa: E731
    assert key(merged) == key(whole) and merged["cases"] == 600
    assert merged["campaign_targets"] == IDS.split(",")
    # a merged summary is a whole campaign: it merges alone
    assert invoke("report", "merge", tmp_path / "m", "--out", tmp_path / "m2").exit_code == 0


def test_merge_names_a_malformed_summary(tmp_path, shards):
    bad = tmp_path / "bad"
    shutil.copytree(shards / "s2", bad)
    s = json.loads((bad / "summary.json").read_text())
    s["datapaths"][0]["suites"]["raw"] = {"cases": "many"}
    (bad / "summary.json").write_text(json.dumps(s))
    one_error(invoke("report", "merge", shards / "s1", bad, "--out", tmp_path / "m"),
              f"{bad}/summary.json is malformed")


# ---------------------------------------------------------------------------
# The CUDA device path on the stand-in driver: m16n8k8 f16 loads two A and
# one B register a lane, so its tile takes 128 A and 64 B slots (the harness's
# batch), not the 256 and 128 of m16n8k16.


def test_cuda_m16n8k8_tile_is_the_kernels():
    from tcprobe.devices.cuda import launch as L
    from tcprobe.kernels import catalog
    from tcprobe.models.datapath import Datapath
    from tcprobe.tiles.tables import harness_for

    for dpid in ("mma.f16.f32.k8", "mma.f16.f16.k8", "mma.f16.f32.k16", "mma.tf32.f32.k8",
                 "mma.bf16.f32.k16", "mma.s8.s32.k32.sat"):
        dp = Datapath.parse(dpid)
        v = L.variant_for(dp, "sm_90a")
        spec, tile = L.tile_spec(v, dp), harness_for(dp).tile
        assert (spec.a_slots, spec.b_slots) == (tile.a_slots, tile.b_slots) == (16 * dp.k, 8 * dp.k)
    k8 = catalog.by_name("mma.f16.f32.k8")
    assert (k8.a_regs, k8.b_regs) == (2, 1) and "TCP_MMA_PLAIN_K8" in k8.macro()


def test_cuda_campaign_over_k8_and_k16_on_the_stand_in(tmp_path, monkeypatch):
    pytest.importorskip("cuda.bindings")
    from tcprobe.devices.cuda import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    monkeypatch.setenv("TCPROBE_CACHE", str(tmp_path / "cache"))  # the cubin compiles here
    monkeypatch.setenv("TCPROBE_CUDA_DRIVER", "standin")
    out = tmp_path / "x"
    r = invoke("validate", "--targets", "mma.f16.f32.k16,mma.f16.f32.k8,mma.bf16.f32.k16",
               "--device", "cuda:0", "--suite", "raw=64,edge=32", "--shrink", "0", "--out", out)
    assert r.exit_code == 0, r.output
    s = summary(out)
    assert [(d["datapath"], d["cases"], d["mismatches"]) for d in s["datapaths"]] == [
        ("mma.f16.f32.k16", 96, 0), ("mma.f16.f32.k8", 96, 0), ("mma.bf16.f32.k16", 96, 0)]


def test_a_damaged_piece_capture_is_recovered_and_named(tmp_path):
    out = tmp_path / "c"
    args = ["--chunk", "100"]
    assert campaign(out, *args, suite="raw=300").exit_code == 0
    piece = out / "mma.bf16.f32.k16"
    (piece / "raw.json").unlink()  # as if killed before the piece finished
    data = bytearray((piece / "raw.tcap").read_bytes())
    data[len(data) // 2] ^= 0x40
    (piece / "raw.tcap").write_bytes(bytes(data))
    r = campaign(out, *args, suite="raw=300")
    assert r.exit_code == 0, r.output
    aside = list(piece.glob("raw.tcap.after-*"))
    assert len(aside) == 1  # nothing captured is lost
    assert f"kept in {aside[0]}" in r.stderr
    assert summary(out)["cases"] == 900
