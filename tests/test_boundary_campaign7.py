"""Issue 36, a seventh campaign (docs/campaign-7.md): each test one class of
fix, asserting the exact answer (exit 2 and one ``error:`` line naming the
problem, nothing written, the right words)."""

from __future__ import annotations

import numpy as np
import pytest
from cli_helpers import invoke, one_error, sigint_at_default

# ---------------------------------------------------------------------------
# One rule for every output FILE (commands/options.file_target): written only
# where asked. Its folder must exist (no command makes one for a file); the
# refusal comes when the option is read, before any work, and nothing is made.

JSON_INTO_MISSING = [
    ["ladder", "--format", "bf16", "--device", "sim:h100"],
    ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100", "--out", "{t}/v"],
    ["sass-check"],
    ["targets"],
    ["devices"],
    ["score", "--capture", "{t}"],
    ["fit-gemm", "--gpu", "H100"],
    ["gemm", "--random", "8x8x16", "--format", "bf16", "--gpu", "H100"],
    ["mfma-check"],
    ["report", "merge", "{t}", "--out", "{t}/m"],
]


@pytest.mark.parametrize("args", JSON_INTO_MISSING, ids=[a[0] + (" " + a[1] if a[0] == "report"
                                                                  else "") for a in JSON_INTO_MISSING])
def test_json_into_a_missing_folder_is_refused_by_every_command(tmp_path, args):
    args = [a.replace("{t}", str(tmp_path)) for a in args]
    r = invoke(*args, "--json", tmp_path / "nodir" / "x.json")
    one_error(r, "--json", "nodir", "does not exist", notes=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no folder made, no --out either


def _ab(tmp_path):
    a, b, c = tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "c.npy"
    np.save(a, np.ones((8, 16), np.float16))
    np.save(b, np.ones((16, 8), np.float16))
    np.save(c, np.ones((8, 8), np.float32))
    return a, b, c


# ---------------------------------------------------------------------------
# A path ending in '/' names a folder (outfiles.check_out_file): Path() dropped
# the slash and gemm wrote a FILE named q.npy (--out, --picture, --json).

@pytest.mark.parametrize("opt,extra", [("--out", []), ("--json", []),
                                       ("--picture", ["--compare", "A100"])])
def test_an_output_file_ending_in_a_slash_is_refused(tmp_path, opt, extra):
    a, b, _ = _ab(tmp_path)
    target = f"{tmp_path}/q.npy/"
    r = invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", *extra, opt, target)
    one_error(r, opt, "ends in '/'", "give a file name")
    assert not (tmp_path / "q.npy").exists()


def test_fit_gemm_and_targets_json_ending_in_a_slash_are_refused(tmp_path):
    a, b, c = _ab(tmp_path)
    one_error(invoke("fit-gemm", "--a", a, "--b", b, "--d", c, "--gpu", "H100", "--json",
                     f"{tmp_path}/f.json/"), "--json", "ends in '/'")
    one_error(invoke("targets", "--json", f"{tmp_path}/t.json/"), "--json", "ends in '/'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "b.npy", "c.npy"]


# ---------------------------------------------------------------------------
# --alpha/--beta read as the number written (commands/options.Scalar): float()
# read 1e-400 as 0 (D all zeros, exit 0) and 1e400 as inf (while 1e39 was
# refused as overflowing f32).

@pytest.mark.parametrize("cmd", ["gemm", "fit-gemm"])
@pytest.mark.parametrize("opt,value,reads", [("--alpha", "1e-400", "zero"),
                                             ("--alpha", "-1e-400", "zero"),
                                             ("--beta", "1e-400", "zero"),
                                             ("--alpha", "1e400", "infinite"),
                                             ("--beta", "-1e400", "infinite")])
def test_alpha_beta_beyond_a_float_are_refused(tmp_path, cmd, opt, value, reads):
    a, b, c = _ab(tmp_path)
    d = ["--d", c] if cmd == "fit-gemm" else ["--c", c]
    r = invoke(cmd, "--a", a, "--b", b, *d, "--gpu", "H100", f"{opt}={value}")
    one_error(r, opt, value, f"read as {reads}")


def test_alpha_spelt_zero_or_inf_is_still_taken(tmp_path):
    a, b, _ = _ab(tmp_path)
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--alpha", "0e-400", "--out", out)
    assert r.exit_code == 0, r.output
    assert (np.load(out).view(np.uint32) == 0).all()  # 0 * 16 = +0
    r = invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--alpha=-inf", "--out", out)
    assert r.exit_code == 0, r.output
    assert (np.load(out).view(np.uint32) == 0xFF800000).all()  # -inf * 16
    r = invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--alpha", "1_0", "--out", out)
    assert r.exit_code == 0, r.output
    assert (np.load(out).view(np.uint32) == 0x43200000).all()  # 10 * 16 = 160


# ---------------------------------------------------------------------------
# emulate(model=...) checked at emulate(), as instr= is (torch/mode._check_model):
# a block with no GEMM accepted a blank or unknown name.

@pytest.mark.parametrize("model", ["", " ", "nope", "h100 "])
def test_emulate_checks_its_model_name_at_the_start(model):
    torch = pytest.importorskip("torch")
    import tcprobe.torch as tt

    if model.strip().lower() == "h100":
        with tt.emulate(gpu="H100", model=model):
            y = torch.ones(8, 16, dtype=torch.float16) @ torch.ones(16, 8, dtype=torch.float16)
        assert (y == 16).all()
        return
    with pytest.raises(ValueError, match=r"model: unknown model"):
        tt.emulate(gpu="H100", model=model)


# ---------------------------------------------------------------------------
# The command line's blank screen is counted from the process's start
# (activity.START), not from the command's: on a loaded machine the start-up
# alone took 0.6 s, and the first line came at 2.1 s (the README promises 2).

def test_the_heartbeat_counts_the_start_up(tmp_path):
    import os
    import subprocess
    import sys

    code = ("import time; time.sleep(1.6)\n"  # a slow start-up, before tcprobe is imported
            "from tcprobe.cli import main\n"
            "main(['targets', '--json', 'nodir/x.json'])\n")
    env = {**os.environ, "TCPROBE_HEARTBEAT": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    lines = r.stderr.splitlines()
    assert r.returncode == 2, r.stderr
    assert lines[0].startswith("tcprobe") and ": working (" in lines[0], lines  # at once
    assert lines[-1].startswith("error: --json nodir/x.json"), lines


def test_a_process_running_commands_in_turn_counts_from_each_command(monkeypatch):
    invoke("targets")  # the process's first command may count the process's start-up
    monkeypatch.setenv("TCPROBE_HEARTBEAT", "1")
    r = invoke("targets")  # a later one counts from its own start: no line, it is quick
    assert r.exit_code == 0 and "working" not in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# The README's score line from a folder without ../shared (a fresh machine):
# the error names where the captures are and the checkout's subset.

def test_a_missing_shared_capture_names_the_checkouts_subset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("score", "--capture", "../shared/hwdata/khattak-mikaitis-2025")
    one_error(r, "no such file or folder", "tests/data/khattak-mikaitis-2025")


def test_json_under_a_file_names_the_file_not_a_missing_folder(tmp_path):
    (tmp_path / "f.npy").write_bytes(b"x")
    r = invoke("targets", "--json", tmp_path / "f.npy" / "x" / "t.json")
    one_error(r, "f.npy is a file, not a folder")
    assert (tmp_path / "f.npy").read_bytes() == b"x"


@pytest.mark.parametrize("arch,instr,where", [("sm_90", "wgmma", "wgmma is on sm_90a"),
                                              ("sm_80,sm_90", "tcgen05", "tcgen05 is on sm_100a")])
def test_sass_check_names_the_architectures_that_have_the_family(arch, instr, where):
    r = invoke("sass-check", "--arch", arch, "--instr", instr)
    one_error(r, "no harness matches", where)


# ---------------------------------------------------------------------------
# Ctrl-C in validate: said once (it said "interrupted: ... --resume", a blank
# line, then "interrupted" again), exit 130, every finished chunk kept, the
# lock gone.

def test_validate_interrupted_says_so_once_and_keeps_its_chunks(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run1"
    code = "from tcprobe.cli import main; main()"
    args = [sys.executable, "-c", code, "validate", "--format", "bf16", "--device", "sim:h100",
            "--cases", "1e7", "--out", str(out)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "TCPROBE_HEARTBEAT": "0"},
                         preexec_fn=sigint_at_default)
    cap = out / "capture.tcap"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (cap.exists() and cap.stat().st_size > 1 << 20):
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert p.returncode == 130, err
    assert len(lines) == 1 and lines[0].startswith("interrupted: every finished chunk is in"), err
    assert "--resume" in lines[0]
    assert sorted(os.listdir(out)) == ["capture.tcap"] and cap.stat().st_size > 1 << 20


def test_gemm_probe_too_big_names_every_size_not_only_k(tmp_path):
    r = invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", tmp_path / "p",
               "--n", "99999999999")
    one_error(r, "m=128, n=99999999999, k=4096", "GB of memory")
    assert not (tmp_path / "p").exists()


# ---------------------------------------------------------------------------
# A campaign (validate --targets) says each finished piece: piped, its bar shows
# nothing, and the README's write-up campaign said only "working (N s)" for
# 1,000 s (214 lines, every one a heartbeat).

def test_a_campaign_says_each_finished_piece(tmp_path):
    r = invoke("validate", "--targets", "tcgen05.tf32.f32.k8,tcgen05.f16.f32.k16", "--device",
               "sim:b200", "--cases", "40", "--suite", "raw,edge", "--out", tmp_path / "c")
    assert r.exit_code == 0, r.output
    pieces = [ln.rsplit(", ", 1)[0] for ln in r.stderr.splitlines() if ln.startswith("campaign ")]
    assert pieces == ["campaign 1/4 tcgen05.tf32.f32.k8 raw: ok (30 cases, 0 mismatches",
                      "campaign 2/4 tcgen05.tf32.f32.k8 edge: ok (10 cases, 0 mismatches",
                      "campaign 3/4 tcgen05.f16.f32.k16 raw: ok (30 cases, 0 mismatches",
                      "campaign 4/4 tcgen05.f16.f32.k16 edge: ok (10 cases, 0 mismatches"], r.stderr
