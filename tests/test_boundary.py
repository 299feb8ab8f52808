"""The input boundary (issue 10): bad input is one ``error:`` line and exit 2,
naming the problem, with nothing written; plausible spellings are accepted
with the right result; captures never lose words."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke, one_error

from tcprobe.capture import binary, load
from tcprobe.capture.lock import hold_out_folder
from tcprobe.cli import main
from tcprobe.schema import SchemaError, check_vector

DATA = Path(__file__).parent / "data"
HMMA = DATA / "vectors" / "mmasim-pr-hmma.jsonl"
TCGEN05 = DATA / "vectors" / "tcgen05-b200.jsonl"


def first_record(path: Path, pick=lambda rec: True) -> dict:
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("//"):
            rec = json.loads(line)
            if pick(rec):
                return rec
    raise LookupError(path)


BF16_MMA = first_record(HMMA, lambda r: r["family"] == "mma" and r["kind"] == "bf16")
F16_MMA = first_record(HMMA, lambda r: r["family"] == "mma" and r["d_type"] == "f16")
NVFP4 = first_record(TCGEN05, lambda r: r.get("scale_type") == "ue4m3")
I8 = first_record(TCGEN05, lambda r: r["kind"] == "i8")


def jsonl(tmp_path, *recs, text: str | None = None) -> Path:
    p = tmp_path / "v.jsonl"
    p.write_text(text if text is not None else "".join(json.dumps(r) + "\n" for r in recs))
    return p


# ---------------------------------------------------------------------------
# JSON Lines: every field checked before anything runs.

BAD_VECTORS = [
    ({"k": True}, ["v.jsonl:1", "k:", "not a whole number"]),
    ({"k": 16.0}, ["k:", "not a whole number"]),
    ({"k": "16"}, ["k:"]),
    ({"k": 4096}, ["k:", "4096", "out of range"]),
    ({"k": 32}, ["K 8 or 16, not 32"]),
    ({"k": 1_000_000_000}, ["k:", "out of range"]),
    ({"k": 0}, ["k:"]),
    ({"kind": "bf17"}, ["kind:", "bf17", "allowed"]),
    ({"family": 5}, ["family:", "allowed: mma, wgmma, tcgen05"]),
    ({"family": "hmma"}, ["family:", "hmma"]),
    ({"a_type": "bf17"}, ["a_type:", "bf17"]),
    ({"d_type": "f128"}, ["d_type:", "f128"]),  # (f64 is a format now: DMMA)
    ({"d_type": "f64"}, ["mma bf16 writes D in f32, not f64"]),
    ({"a": [-1]}, ["a:", "-1"]),
    ({"a": ["0x1ffff"]}, ["a:", "does not fit bf16"]),
    ({"a": ["[/x]"]}, ["a:", "[/x]", "not a hex word"]),
    ({"a": ["0x3f80"] * 17}, ["a:", "17 words"]),
    ({"b": [True]}, ["b:"]),
    ({"c": "0x1ffffffff"}, ["c:", "does not fit f32"]),
    ({"c": -5}, ["c:"]),
    ({"d": "0x100000000"}, ["d:", "does not fit f32"]),
    ({"d": 1.5}, ["d:"]),
    ({"d": None}, ["missing field d"]),
    ({"saturate": "maybe"}, ["saturate:"]),
    ({"scalevec": 4}, ["unknown key scalevec"]),
    ({"scale_a": "0x7f"}, ["scale_a without scale_type"]),
    ({"scale_type": "ue8m0", "scale_vec": 1}, ["block scales"]),
    ({"d_type": "f16"}, ["d:"]),  # 0x0 fits; bf16 mma writes f32 only
]


@pytest.mark.parametrize("change,needles", BAD_VECTORS, ids=[str(c) for c, _ in BAD_VECTORS])
def test_bad_vector_is_one_error_line(tmp_path, change, needles):
    rec = {**BF16_MMA, **change}
    if change == {"d_type": "f16"}:
        needles = ["writes D in f32"]
    one_error(invoke("score", "--capture", jsonl(tmp_path, rec)), *needles)


def test_d_too_wide_for_an_f16_output(tmp_path):
    one_error(invoke("score", "--capture", jsonl(tmp_path, {**F16_MMA, "d": "0x10000"})),
              "d:", "does not fit f16")


def test_missing_fields_and_not_json(tmp_path):
    one_error(invoke("score", "--capture", jsonl(tmp_path, text='{"family": "mma"}\n')),
              "missing field")
    one_error(invoke("score", "--capture", jsonl(tmp_path, text="[1, 2]\n")),
              "JSON object")
    one_error(invoke("score", "--capture", jsonl(tmp_path, text="nope\n")), "not JSON")
    one_error(invoke("score", "--capture", jsonl(tmp_path, text="\n// only a comment\n")),
              "no vectors")


def score_exit(tmp_path, rec) -> int:
    r = invoke("score", "--capture", jsonl(tmp_path, rec))
    assert "Traceback" not in r.output and not r.stderr.startswith("error"), r.output
    return r.exit_code


SPELLINGS = [
    (BF16_MMA, {"family": "MMA", "kind": "BF16", "a_type": "BF16", "b_type": "bfloat16",
                "d_type": "FP32"}),
    (BF16_MMA, {"a": [int(w, 16) for w in BF16_MMA["a"]]}),  # JSON integers
    (BF16_MMA, {"c": "0X0", "d": "0"}),
    (BF16_MMA, {"_mine": "a note", "comment": "kept out"}),
    (NVFP4, {"scale_vec": "4X"}),
    (NVFP4, {"scale_vec": "4x"}),
    (NVFP4, {"scale_vec": "4"}),
    (NVFP4, {"scale_vec": "scale_vec::4X"}),
    (NVFP4, {"scale_type": "UE4M3", "kind": "MXF4NVF4", "family": "TCGEN05"}),
]


@pytest.mark.parametrize("base,change", SPELLINGS, ids=[str(c)[:60] for _, c in SPELLINGS])
def test_spellings_score_like_the_original(tmp_path, base, change):
    want = score_exit(tmp_path, base)
    assert score_exit(tmp_path, {**base, **change}) == want == 0


def test_byte_order_mark_is_allowed(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + (json.dumps(BF16_MMA) + "\n").encode())
    assert len(load(p)[0]) == 1


@pytest.mark.parametrize("text,value", [(True, True), (False, False), ("false", False),
                                        ("TRUE", True), (0, False), (1, True)])
def test_saturate_spellings(text, value):
    assert check_vector({**I8, "saturate": text}, "x")["saturate"] is value


def test_saturate_string_false_scores_as_false(tmp_path):
    rec = {**I8, "saturate": False}
    want = score_exit(tmp_path, rec)
    assert score_exit(tmp_path, {**I8, "saturate": "false"}) == want == 0


def test_schema_names_the_field_and_allowed_values():
    with pytest.raises(SchemaError, match=r"f\.jsonl:3: scale_vec: 3 is not allowed "
                                          r"\(allowed: 1, 2, 4\)"):
        check_vector({**NVFP4, "scale_vec": 3}, "f.jsonl:3")


# ---------------------------------------------------------------------------
# TOML profiles.

PROFILE = """\
window_bits = 25
block_size = 16
zero_floor = -133
input_conversion = "truncate"
output_rounding = "rz"
zero_sign = "positive"
nan = 0x7fc00000
"""


def run_profile(tmp_path, text: str, *extra):
    p = tmp_path / "p.toml"
    p.write_text(text)
    return invoke("run-case", "--device", f"sim:{p}", "--datapath", "mma.bf16.f32.k16",
                  "--a", "0x7fc0", "--b", "0x3f80", "--model", "ieee", *extra)


BAD_PROFILES = [
    ("window_bits = 25", "window_bits = true", ["window_bits:", "not a whole number"]),
    ("window_bits = 25", "window_bits = 2.5", ["window_bits:"]),
    ("window_bits = 25", 'window_bits = "25"', ["window_bits:"]),
    ("window_bits = 25", "window_bits = 57", ["window_bits:", "0..56"]),
    ("window_bits = 25", "window_bits = -1", ["window_bits:"]),
    ("window_bits = 25", "", ["missing key window_bits"]),
    ("block_size = 16", "block_size = 0", ["block_size:", "out of range"]),
    ("zero_floor = -133", "zero_floor = 1.5", ["zero_floor:"]),
    ("nan = 0x7fc00000", "nan = 0x1ffffffff", ["nan:", "out of range"]),
    ("nan = 0x7fc00000", "nan = -1", ["nan:", "out of range"]),
    ("nan = 0x7fc00000", 'nan = "0xzz"', ["nan:"]),
    ('zero_sign = "positive"', 'zero_sign = "pos"', ["zero_sign:", "positive, ieee"]),
    ('output_rounding = "rz"', 'output_rounding = "up"', ["output_rounding:", "rz, rne, rna"]),
    ("", "families = 5", ["families:"]),
    ("", 'families = ["hmma"]', ["families:", "hmma"]),
    ("", "families = []", ["families:"]),
    ("", "bogus = 1", ["unknown key bogus"]),
    ("", '[format.bf16]\nwindow_bits = "x"', ["format.bf16.window_bits:"]),
    ("", "[format.bf17]\nwindow_bits = 3", ["[format.bf17]"]),
    ("", "[output.f16]\nnan = 0x7fc00000", ["output.f16.nan:"]),
    ("", '[layout]\na_lbo = "x"', ["layout.a_lbo:"]),
    ("", "[layout]\nbogus = 1", ["unknown key layout.bogus"]),
    ("", "[layout]\na_k_order = [0, 0, 1]", ["layout.a_k_order:", "not a permutation"]),
    ("", '[layout]\nb_k_order = "bogus"', ["layout.b_k_order:", "reverse, shuffle[:N]"]),
    ("", '[layout]\ndump_permutation = "rotate:2"', ["layout.dump_permutation:"]),
    ("", "k_order = [1, 1]", ["k_order:", "not a permutation"]),
    ("", '[scaled.mx]\nproduct_window = "x"', ["scaled.mx.product_window:"]),
    ("", "[scaled.mxx]\nproduct_window = 3", ["[scaled.mxx]"]),
    ("", "[foo]\nx = 1", ["unknown table [foo]"]),
    ("", "window_bits = ", ["not a TOML profile"]),
]


@pytest.mark.parametrize("old,new,needles", BAD_PROFILES, ids=[n for _, n, _ in BAD_PROFILES])
def test_bad_profile_is_one_error_line(tmp_path, old, new, needles):
    text = PROFILE.replace(old, new) if old else PROFILE + new + "\n"
    one_error(run_profile(tmp_path, text), "p.toml", *needles)


@pytest.mark.parametrize("old,new", [
    ('input_conversion = "truncate"', 'input_conversion = "RNE"'),
    ('output_rounding = "rz"', 'output_rounding = "RZ"'),
    ("nan = 0x7fc00000", 'nan = "0x7fc00000"'),
    ("window_bits = 25", 'window_bits = "exact"'),
    ("", 'families = "MMA"'),
    ("", '[format.BF16]\nwindow_bits = 25'),
])
def test_profile_spellings_run(tmp_path, old, new):
    text = PROFILE.replace(old, new) if old else PROFILE + new + "\n"
    r = run_profile(tmp_path, text)
    assert r.exit_code == 1, r.output  # the device's NaN differs from ieee's
    assert "0x7fc00000" in r.output


def test_profile_hex_string_nan_is_the_word(tmp_path):
    r = run_profile(tmp_path, PROFILE.replace("nan = 0x7fc00000", 'nan = "0x7fc00000"'))
    assert r.exit_code in (0, 1) and "0x7fc00000" in r.output.split("ieee")[0], r.output


def test_profile_with_byte_order_mark(tmp_path):
    p = tmp_path / "p.toml"
    p.write_bytes(b"\xef\xbb\xbf" + PROFILE.encode())
    r = invoke("run-case", "--device", f"sim:{p}", "--datapath", "mma.bf16.f32.k16",
               "--model", "ieee")
    assert r.exit_code == 0, r.output


# ---------------------------------------------------------------------------
# Command-line conventions.

BAD_COMMANDS = [
    (["score"], ["Missing option '--capture'"]),
    (["score", "--capture", "x", "--bogus"], ["No such option"]),
    (["nosuch"], ["No such command"]),
    (["validate", "--instr", "hmma", "--format", "bf16"], ["--instr", "hmma"]),
    (["validate", "--format", "bf16", "--cases", "1e99"], ["1e99", "at most"]),
    (["validate", "--format", "bf16", "--cases", "1e20"], ["1e20"]),
    (["validate", "--format", "bf16", "--cases", "-3"], ["positive"]),
    (["validate", "--format", "bf16", "--cases", "1.5"], ["whole number"]),
    (["validate", "--format", "bf16", "--cases", "nan"], ["whole number"]),
    (["validate", "--format", "bf16", "--datapath", "mma.bf16.f32.k16"], ["not both"]),
    (["validate"], ["--format"]),
    (["validate", "--datapath", "mma.bf16.f32.k4096"], ["K", "4096"]),
    (["run-case", "--datapath", "mma.bf16.f32.k1000000000"], ["1000000000"]),
    (["run-case", "--datapath", "mma.bf17.f32.k16"], ["bf17"]),
    (["run-case", "--datapath", "mma.bf16.f32.k16", "--a", "0x1ffff"], ["does not fit"]),
    (["ladder", "--format", "bf16", "--validate", "lots"], ["whole number"]),
    (["ladder", "--format", "e9m9"], ["e9m9"]),
    (["replay", "--capture", "nowhere"], ["nowhere"]),
    (["replay", "--capture", HMMA, "--limit", "0"], ["positive"]),
    (["smoke", "--cases", "abc"], ["whole number"]),
    (["smoke", "--format", "bf17"], ["bf17"]),
    (["score", "--capture", HMMA, "--model", "[/x]"], ["unknown model '[/x]'"]),
    (["score", "--capture", HMMA, "--show", "-1"], ["--show"]),
    (["run-case", "--device", "cuda", "--datapath", "mma.bf16.f32.k16"], ["cuda"]),
    (["run-case", "--device", "sim:nope", "--datapath", "mma.bf16.f32.k16"], ["nope"]),
    (["sass-check", "--arch", "sm_70"], ["no harness for sm_70"]),
    (["run-case", "--datapath", "tcgen05.f16.f16.f32.k32.sparse", "--active", "a,b"],
     ["--active", "not a list of K positions"]),
    (["validate", "--format", "bf16", "--suite", "bogus"], ["unknown suite", "bogus"]),
    (["ladder", "--format", "bf16", "--steps", "bogus"], ["unknown step", "bogus"]),
    (["targets", "--json", "/proc/nope/x.json"], ["/proc/nope"]),
    (["validate", "--targets", "blog,nosuch", "--cases", "100"], ["nosuch"]),
]


@pytest.mark.parametrize("args,needles", BAD_COMMANDS, ids=[" ".join(map(str, a))[:50]
                                                             for a, _ in BAD_COMMANDS])
def test_bad_command_is_one_error_line(tmp_path, monkeypatch, args, needles):
    monkeypatch.chdir(tmp_path)
    args = [*args]
    if args[0] in ("validate", "ladder", "smoke", "run-case") and "--device" not in args:
        args += ["--device", "sim:b200"]
    one_error(invoke(*args), *needles)
    assert not (tmp_path / "out").exists()  # nothing written


def test_error_messages_keep_their_brackets(monkeypatch):
    from tcprobe.commands import choose
    from tcprobe.devices.base import DeviceError

    text = "pip install 'tcprobe[cuda]'; [format.bf16] [layout] [scaled.mx] [/x] [bold]"

    def refuse(*a, **k):
        raise DeviceError(text)

    monkeypatch.setattr(choose, "open_device", refuse)
    line = one_error(invoke("run-case", "--device", "cuda", "--datapath", "mma.bf16.f32.k16"))
    assert line == f"error: {text}"


def test_internal_error_has_its_own_status_and_the_hint(monkeypatch):
    from tcprobe.commands import targets

    def broken(*a, **k):
        raise KeyError("oops")

    monkeypatch.setattr(targets, "targets", broken)
    r = invoke("targets")
    assert r.exit_code == 3
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "internal error" in lines[0] and "TCPROBE_DEBUG=1" in lines[0]


@pytest.mark.parametrize("command", ["smoke", "validate", "ladder", "replay"])
@pytest.mark.parametrize("text,n", [("1e4", 10_000), ("10k", 10_000), ("1000.0", 1000),
                                    ("10_000", 10_000), ("2.5K", 2500)])
def test_every_count_option_takes_every_spelling(command, text, n):
    name = {"smoke": "cases", "validate": "n_cases", "ladder": "validate_cases",
            "replay": "limit"}[command]
    param = next(p for p in main.commands[command].params if p.name == name)
    assert param.type.convert(text, param, None) == n


def test_json_dash_writes_to_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("targets", "--suite", "blog", "--json", "-")
    assert r.exit_code == 0
    got = json.loads(r.stdout)
    assert got["counts"]["blog"] == 46 and not (tmp_path / "-").exists()


def test_targets_show_datapath_ids():
    r = invoke("targets", "--suite", "blog")
    assert "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4" in r.output.replace("\n", "")


def test_replay_defaults_its_device(tmp_path):
    r = invoke("replay", "--capture", HMMA)
    assert r.exit_code in (0, 1) and "Traceback" not in r.output
    assert "replayed" in r.output


def test_format_picks_the_same_datapath_everywhere(tmp_path):
    r = invoke("validate", "--format", "bf16", "--device", "sim:b200", "--cases", "1000",
               "--shrink", "0", "--out", tmp_path / "v", "--json", tmp_path / "v.json")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "v.json").read_text())["datapath"] == "tcgen05.f16.bf16.f32.k16"
    r = invoke("run-case", "--format", "bf16", "--device", "sim:b200", "--a", "0x3f80",
               "--b", "0x3f80", "--json", tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["datapath"] == "tcgen05.f16.bf16.f32.k16"


def test_a_bracketed_name_prints_as_written(tmp_path):
    rec = {**BF16_MMA, "name": "[/x] [bold]odd[/bold]", "d": "0x1"}
    r = invoke("score", "--capture", jsonl(tmp_path, rec), "--model", "ieee")
    assert r.exit_code == 1 and "[/x] [bold]odd[/bold]" in r.output, r.output


# ---------------------------------------------------------------------------
# Captures never lose words.


def make_capture(tmp_path, cases="40000", device="sim:b200", chunk="5000"):
    out = tmp_path / "run"
    r = invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", device, "--cases",
               cases, "--chunk", chunk, "--shrink", "0", "--out", out)
    assert r.exit_code == 0, r.output
    return out, out / "capture.tcap"


def flip(path: Path, where: float) -> bytes:
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x40
    path.write_bytes(bytes(data))
    return bytes(data)


@pytest.mark.parametrize("change", [["--device", "sim:h200"], ["--seed", "3"],
                                    ["--cases", "80000"], ["--suite", "raw"]])
def test_refused_resume_leaves_the_capture_byte_identical(tmp_path, change):
    out, cap = make_capture(tmp_path)
    before = flip(cap, 0.25)
    args = {"--device": "sim:b200", "--seed": "0", "--cases": "40000", "--suite": None}
    args[change[0]] = change[1]
    cmd = ["validate", "--datapath", "mma.bf16.f32.k16", "--chunk", "5000", "--out", out,
           "--resume", "--shrink", "0"]
    for k, v in args.items():
        if v is not None:
            cmd += [k, v]
    one_error(invoke(*cmd))
    assert cap.read_bytes() == before


def test_chunks_after_a_damaged_one_are_kept_aside(tmp_path):
    out, cap = make_capture(tmp_path)
    whole = cap.read_bytes()
    damaged = flip(cap, 0.25)
    scan = binary.Scan.of(cap, strict=False)
    r = invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200", "--cases",
               "40000", "--chunk", "5000", "--shrink", "0", "--out", out, "--resume")
    assert r.exit_code == 0, r.output
    aside = Path(f"{cap}.after-{scan.good_end}")
    assert aside.read_bytes() == damaged[scan.good_end:]
    assert "kept in" in r.output
    assert cap.read_bytes() == whole  # the run made the lost chunks again, the same bytes


def test_two_runs_into_one_out_cannot_both_write(tmp_path):
    out = tmp_path / "run"
    with hold_out_folder(out):
        r = invoke("validate", "--format", "bf16", "--device", "sim:b200", "--cases", "1000",
                   "--out", out)
        one_error(r, "another tcprobe run")
    assert not (out / "capture.tcap").exists()


def test_an_empty_capture_says_what_to_do_and_resume_starts_it_over(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "capture.tcap").write_bytes(b"")
    cmd = ["validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200", "--cases",
           "2000", "--shrink", "0", "--out", out]
    one_error(invoke(*cmd), "empty", "--resume")
    one_error(invoke("score", "--capture", out / "capture.tcap"), "empty", "--resume")
    r = invoke(*cmd, "--resume")
    assert r.exit_code == 0, r.output
    assert len(load(out / "capture.tcap")[0]) == 2000


def test_header_only_capture_resumes(tmp_path):
    out, cap = make_capture(tmp_path, cases="10000")
    scan = binary.Scan.of(cap)
    with open(cap, "r+b") as fh:
        fh.truncate(scan.index[0][0] - 16)  # keep the file header only
    # nothing to score: an error naming it (issue 26), never "1 without a mismatch"
    one_error(invoke("score", "--capture", cap), str(cap), "holds no case (0 of 10,000 planned",
              "--resume")
    r = invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200", "--cases",
               "10000", "--chunk", "5000", "--shrink", "0", "--out", out, "--resume")
    assert r.exit_code == 0, r.output


def test_score_says_a_capture_is_incomplete(tmp_path):
    out, cap = make_capture(tmp_path)
    scan = binary.Scan.of(cap)
    with open(cap, "r+b") as fh:
        fh.truncate(scan.index[4][0] - 16)  # four of eight chunks
    r = invoke("score", "--capture", cap)
    assert r.exit_code == 0, r.output
    assert "incomplete: 20,000 of 40,000 planned cases" in r.stderr


def test_score_streams_and_counts_like_a_whole_read(tmp_path):
    out, cap = make_capture(tmp_path)
    r = invoke("score", "--capture", cap, "--model", "ieee", "--json", tmp_path / "s.json")
    assert r.exit_code == 1
    got = json.loads((tmp_path / "s.json").read_text())["results"][0]
    from tcprobe.models import registry

    whole = binary.read(cap)
    model = registry.resolve("ieee", whole.datapath)
    want = int((model.evaluate(whole.cases) != whole.words).sum())
    assert got["cases"] == 40000 and got["mismatches"] == want > 0
    first = int(np.flatnonzero(model.evaluate(whole.cases) != whole.words)[0])
    assert got["examples"][0]["index"] == first


def test_baselines_refuse_block_scaled_captures(tmp_path):
    r = invoke("score", "--capture", jsonl(tmp_path, NVFP4), "--model", "ieee")
    one_error(r, "no model applies", "block scales")


# ---------------------------------------------------------------------------
# Published a/b/c/d folders.

SUBSET = DATA / "khattak-mikaitis-2025" / "H200" / "bf16"


def copy_folder(tmp_path) -> Path:
    d = tmp_path / "H200" / "bf16"
    d.mkdir(parents=True)
    for f in SUBSET.iterdir():
        (d / f.name).write_text(f.read_text())
    return d


def test_a_31_digit_binary_word_is_refused(tmp_path):
    d = copy_folder(tmp_path)
    f = next(d.glob("d_*fp32.txt"))
    lines = f.read_text().splitlines()
    lines[2] = lines[2][1:]
    f.write_text("\n".join(lines) + "\n")
    one_error(invoke("score", "--capture", tmp_path), f"{f.name}:3", "31 digits")


def test_two_a_files_are_refused(tmp_path):
    d = copy_folder(tmp_path)
    a = next(d.glob("a_*.txt"))
    (d / "a_H200_bf16_old.txt").write_text(a.read_text())
    one_error(invoke("score", "--capture", tmp_path), "2 a_*.txt files")


# ---------------------------------------------------------------------------
# The cubin cache.


def test_a_cubin_copied_over_another_arch_is_refused(tmp_path, monkeypatch):
    from tcprobe.devices.cuda import cache as cubin_cache
    from tcprobe.devices.cuda import nvrtc

    try:
        nvrtc.version()
    except nvrtc.NvrtcUnavailable:
        pytest.skip("no NVRTC")
    monkeypatch.setenv("TCPROBE_CACHE", str(tmp_path / "cache"))
    src = 'extern "C" __global__ void k(int *p) { *p = 1; }'
    sm80 = nvrtc.compile_cubin(src, "sm_80")
    sm90 = nvrtc.compile_cubin(src, "sm_90a")
    assert nvrtc.compile_cubin(src, "sm_90a").cached
    sm90.path.write_bytes(sm80.data)  # an sm_80 cubin under the sm_90a name
    again = nvrtc.compile_cubin(src, "sm_90a")
    assert not again.cached and cubin_cache.elf_sm(again.data) == 90
    Path(f"{sm90.path}.json").write_text("{}")  # a record that proves nothing
    assert not nvrtc.compile_cubin(src, "sm_90a").cached
    assert cubin_cache.read(sm80.path, sm80.key, "sm_80") == sm80.data
    sm80.path.chmod(0o666)
    assert cubin_cache.read(sm80.path, sm80.key, "sm_80") is None  # others may write it


# ---------------------------------------------------------------------------
# --model PATH.json, and a custom device's default model.


def test_validate_takes_the_ladders_fingerprint(tmp_path):
    fp = tmp_path / "fp.json"
    r = invoke("ladder", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200", "--validate",
               "0", "--json", fp)
    assert r.exit_code == 0, r.output
    r = invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200", "--model", fp,
               "--cases", "20k", "--shrink", "0", "--out", tmp_path / "v", "--json",
               tmp_path / "v.json")
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "v.json").read_text())
    assert rep["cases"]["run"] == 20_000 and rep["models"][0]["mismatches"] == 0
    assert rep["models"][0]["name"].startswith("fingerprint")
    one_error(invoke("validate", "--datapath", "mma.f16.f32.k16", "--device", "sim:b200",
                     "--model", fp, "--out", tmp_path / "w"), "fingerprint of mma.bf16.f32.k16")
    (tmp_path / "junk.json").write_text("[1]")
    one_error(invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:b200",
                     "--model", tmp_path / "junk.json", "--out", tmp_path / "w"),
              "neither a ladder fingerprint")
    assert not (tmp_path / "w").exists()


def test_custom_device_default_model_says_what_to_pass(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(PROFILE)
    line = one_error(invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", f"sim:{p}",
                            "--cases", "1000", "--out", tmp_path / "v"))
    assert "--model NAME" in line and "--model fp.json" in line
    assert not (tmp_path / "v").exists()


def test_replay_streams_a_capture_file(tmp_path):
    out, cap = make_capture(tmp_path)
    r = invoke("replay", "--capture", cap, "--device", "sim:b200", "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    got = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert got["cases"] == 40_000 and got["mismatches"] == 0
    r = invoke("replay", "--capture", cap, "--device", "sim:b200", "--limit", "12k", "--json",
               tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["results"][0]["cases"] == 12_000
    narrow = tmp_path / "narrow.toml"
    narrow.write_text(PROFILE.replace("window_bits = 25", "window_bits = 3"))
    r = invoke("replay", "--capture", cap, "--device", f"sim:{narrow}", "--json",
               tmp_path / "r.json")
    assert r.exit_code == 1  # a narrower datapath: some words differ
    got = json.loads((tmp_path / "r.json").read_text())["results"][0]
    whole = binary.read(cap)
    from tcprobe.devices.sim import SimDevice

    dev = SimDevice(str(narrow))
    differ = np.flatnonzero(dev.run(whole.datapath, whole.cases) != whole.words)
    assert got["mismatches"] == len(differ) and got["examples"][0]["index"] == int(differ[0])


def test_bytes_that_are_not_utf8_are_one_error_line(tmp_path):
    p = tmp_path / "bin.jsonl"
    p.write_bytes(b"\xff\xfe{}\n")
    one_error(invoke("score", "--capture", p), "bin.jsonl:1", "not UTF-8")
    d = copy_folder(tmp_path)
    a = next(d.glob("a_*.txt"))
    a.write_bytes(b"\xff\xfe\n")
    one_error(invoke("score", "--capture", tmp_path), a.name, "not UTF-8")


@pytest.mark.parametrize("change,needles", [({"plan": {"cases": "abc"}}, ["plan.cases"]),
                                            ({"datapath": "mma.bf16.f32.k4096"}, ["K=4096", "1024 at most"]),
                                            ({"format": "other"}, ["format:"]),
                                            ({"version": 7}, ["version:"])])
def test_capture_header_schema(tmp_path, change, needles):
    import struct
    import zlib

    from tcprobe.models.datapath import Datapath

    head = binary.make_header(Datapath.parse("mma.bf16.f32.k16"), device={"device": "x"})
    text = json.dumps({**head, **change}).encode()
    p = tmp_path / "h.tcap"
    p.write_bytes(struct.pack("<8sHHII", binary.MAGIC, 1, 0, len(text), zlib.crc32(text)) + text)
    one_error(invoke("score", "--capture", p), "h.tcap", "header", *needles)


@pytest.mark.parametrize("text, words", [
    ("mfma.xf32.f32.k8", ["'mfma.xf32.f32.k8'", "input types", "mfma.xf32.tf32.f32.k8"]),
    ("mma..f32.k16", ["'mma..f32.k16'", "input types"]),
    ("mma.bf16.bf16to.k16", ["'mma.bf16.bf16to.k16'", "empty type"]),
    ("mma.bf16.zz.k16", ["'mma.bf16.zz.k16'", "unknown format 'zz'"]),
])
def test_a_datapath_id_with_a_bad_type_is_named_whole(text, words):
    from tcprobe.models.datapath import Datapath, DatapathError

    with pytest.raises(DatapathError) as e:
        Datapath.parse(text)
    assert all(w in str(e.value) for w in words), str(e.value)
