"""The score command, the JSON Lines reader, and the CLI's error convention."""

import json

from cli_helpers import invoke, one_error
from conftest import HWDATA, ROOT, SUBSET, needs_shared

from tcprobe.capture import CaptureError, load
from tcprobe.cli import main

VECTORS = ROOT / "tests" / "data" / "vectors" / "mmasim-pr-hmma.jsonl"


def test_help_says_what_each_command_does():
    r = invoke("--help")
    assert r.exit_code == 0 and "bit for bit" in r.output
    for name, cmd in main.commands.items():
        assert cmd.help and cmd.help.strip(), f"{name} has no help"
        r = invoke(name, "--help")
        assert r.exit_code == 0, name


def test_score_writes_json_and_exits_0_without_mismatch(tmp_path):
    out = tmp_path / "s.json"
    r = invoke("score", "--capture", SUBSET / "H200" / "bf16", "--json", out)
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    (res,) = data["results"]
    assert res["gpu"] == "H200" and res["format"] == "bf16" and res["output"] == "f32"
    assert res["cases"] == 250 and res["mismatches"] == 0 and res["model"] == "h100"


def test_score_exits_1_on_mismatch_and_shows_it(tmp_path):
    r = invoke("score", "--capture", SUBSET / "H200" / "bf16", "--model", "ieee", "--show", "1")
    assert r.exit_code == 1
    assert "ulps" in r.output and "mismatches" in r.output


def test_recorded_vectors_score_zero_with_auto():
    caps = load(VECTORS)
    assert sum(len(c) for c in caps) == 9
    r = invoke("score", "--capture", VECTORS)
    assert r.exit_code == 0, r.output


def test_bad_inputs_are_one_line_errors(tmp_path):
    r = invoke("score", "--capture", tmp_path / "nope")
    one_error(r, "no such file")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"family": "mma"}\n')
    r = invoke("score", "--capture", bad)
    one_error(r, "missing field")
    bad.write_text("not json\n")
    r = invoke("score", "--capture", bad)
    one_error(r, "not JSON")
    r = invoke("score", "--capture", VECTORS, "--model", "nosuch")
    one_error(r, "unknown model")


def test_malformed_text_capture_names_file_and_line(tmp_path):
    d = tmp_path / "X100" / "bf16"
    d.mkdir(parents=True)
    src = SUBSET / "H200" / "bf16"
    for f in src.iterdir():
        (d / f.name.replace("H200", "X100")).write_text(f.read_text())
    a = next(d.glob("a_*"))
    lines = a.read_text().splitlines()
    lines[7] = lines[7][:-3] + "zz"
    a.write_text("\n".join(lines) + "\n")
    try:
        load(tmp_path)
    except CaptureError as e:
        assert ":8:" in str(e)
    else:
        raise AssertionError("a malformed line was accepted")
    one_error(invoke("score", "--capture", tmp_path))


def test_truncated_output_file_is_an_error(tmp_path):
    d = tmp_path / "H200" / "bf16"
    d.mkdir(parents=True)
    for f in (SUBSET / "H200" / "bf16").iterdir():
        text = f.read_text()
        if f.name.startswith("d_"):
            text = "\n".join(text.splitlines()[:100]) + "\n"
        (d / f.name).write_text(text)
    r = invoke("score", "--capture", tmp_path)
    one_error(r, "100 lines")


@needs_shared
def test_score_whole_published_tree_in_one_run(tmp_path):
    out = tmp_path / "all.json"
    r = invoke("score", "--capture", HWDATA, "--json", out, "--show", "0")
    res = json.loads(out.read_text())["results"]
    assert len(res) == 48
    assert sum(x["mismatches"] == 0 for x in res) >= 40
    assert r.exit_code == (1 if any(x["mismatches"] for x in res) else 0)
