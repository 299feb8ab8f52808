"""tcprobe targets: the 46 datapaths of the write-up's suite and the 50 mixed pairs."""

import json
from collections import Counter

from cli_helpers import one_error
from click.testing import CliRunner

from tcprobe.cli import main
from tcprobe.models.tcgen05 import model_for
from tcprobe.validation.targets import blog_targets, mixed_targets, targets


def test_the_blog_suite_has_its_46_in_its_groups():
    t = blog_targets()
    assert len(t) == 46
    groups = Counter(x.group for x in t)
    assert groups == {"dense unscaled float": 8, "dense integer": 8,
                      "dense ue8m0 block-scaled": 8, "dense ue4m3 nvfp4": 2,
                      "sparse unscaled float": 8, "sparse ue4m3 nvfp4": 1,
                      "sparse ue8m0 block-scaled": 8, "sparse ue4m3 hybrid": 1,
                      "mixed representatives": 2}
    assert len({x.datapath for x in t}) == 44  # two runner pairs share a datapath
    assert all(x.arch == "sm_100a" for x in t)


def test_fifty_mixed_pairs():
    t = mixed_targets()
    assert len(t) == 50 and len({x.datapath for x in t}) == 50


def test_every_target_has_a_model():
    for t in targets(("blog", "mixed")):
        assert model_for(t.datapath).datapath == t.datapath


def test_cli_table_and_json(tmp_path):
    out = tmp_path / "t.json"
    r = CliRunner().invoke(main, ["targets", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "blog: 46, mixed: 50" in r.output
    data = json.loads(out.read_text())
    assert data["counts"] == {"blog": 46, "mixed": 50}
    first = data["targets"][0]
    assert first["descriptor"] == "0x04020910" and first["arch"] == "sm_100a"
    r = CliRunner().invoke(main, ["targets", "--set", "all"])
    assert r.exit_code == 0 and "hmma: 10" in r.output
    one_error(CliRunner().invoke(main, ["targets", "--set", "nope"]), "nope")
    old = CliRunner().invoke(main, ["targets", "--suite", "dmma"])  # the old name still works
    assert old.exit_code == 0 and "dmma: 3" in old.output and "use --set" in old.output
