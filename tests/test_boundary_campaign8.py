"""Issue 36, an eighth campaign (docs/campaign-8.md): each test one class of
fix, asserting the exact answer (exit 2 and one ``error:`` line naming the
problem, nothing written, the exact words or bytes)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import invoke, one_error, sigint_at_default

import tcprobe
from tcprobe.matrix.operands import MatmulError


def _ab(tmp_path, k=16):
    a, b, c = tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "c.npy"
    np.save(a, np.ones((8, k), np.float16))
    np.save(b, np.ones((k, 8), np.float16))
    np.save(c, np.ones((8, 8), np.float32))
    return a, b, c


def _npy3(path, shape, data: bytes, version=(3, 0)):
    """A .npy file of format ``version`` (3.0: 2.0's layout, a UTF-8 header)."""
    d = f"{{'descr': '<f2', 'fortran_order': False, 'shape': {shape!r}, }}"
    pre = b"\x93NUMPY" + bytes(version)
    pad = 64 - (len(pre) + 4 + len(d) + 1) % 64
    body = (d + " " * pad + "\n").encode()
    path.write_bytes(pre + len(body).to_bytes(4, "little") + body + data)


# ---------------------------------------------------------------------------
# tcprobe.npyfile.header: numpy 2.4 has no private _read_array_header, so a
# version 3.0 .npy (what np.save writes for UTF-8 field names) and one of an
# unknown version ended in exit 3 ("internal error (AttributeError ...)").

def test_a_version_3_npy_is_read(tmp_path):
    a, b, _ = _ab(tmp_path)
    v3 = tmp_path / "v3.npy"
    _npy3(v3, (8, 16), np.ones((8, 16), np.float16).tobytes())
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--a", v3, "--b", b, "--gpu", "H100", "--out", out)
    assert r.exit_code == 0, r.output
    assert np.load(out).view(np.uint32).tolist() == [[0x41800000] * 8] * 8  # 16.0 every element


def test_a_version_3_npy_claiming_more_than_it_holds_is_refused(tmp_path):
    _, b, _ = _ab(tmp_path)
    v3 = tmp_path / "v3.npy"
    _npy3(v3, (8000, 16), np.ones((8, 16), np.float16).tobytes())
    one_error(invoke("gemm", "--a", v3, "--b", b, "--gpu", "H100"),
              "--a", "header claims 128,000 elements of float16 (256,000 bytes) but the file "
              "holds 256 bytes")


def test_an_npy_of_an_unknown_version_is_one_error(tmp_path):
    _, b, _ = _ab(tmp_path)
    v9 = tmp_path / "v9.npy"
    _npy3(v9, (8, 16), np.ones((8, 16), np.float16).tobytes(), version=(9, 0))
    line = one_error(invoke("gemm", "--a", v9, "--b", b, "--gpu", "H100"), "--a", "v9.npy")
    assert "(9, 0)" in line and "internal error" not in line


# ---------------------------------------------------------------------------
# console._width: a page never narrower than 80 columns. COLUMNS=40 showed one
# of targets' eight columns (rich drops columns it has no room for), COLUMNS=5
# none; gemm --compare under COLUMNS=5 showed no comparison.

@pytest.mark.parametrize("columns", ["5", "40", "79"])
def test_a_narrow_page_keeps_every_column(columns):
    env = {**os.environ, "COLUMNS": columns, "TCPROBE_HEARTBEAT": "0"}
    r = subprocess.run([sys.executable, "-m", "tcprobe", "targets"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    row = next(ln for ln in lines if ln.startswith("\u2502"))
    assert row.count("\u2502") == 9  # eight columns
    assert max(len(ln) for ln in lines) == 80


# ---------------------------------------------------------------------------
# matrix/schedule.from_value: a schedule file must hold an object of axes (or
# a fit-gemm result). `null` was read as "no schedule": the default preset ran,
# "schedule given", exit 0.

@pytest.mark.parametrize("text,kind", [("null", "null"), ('"cublas"', "a string"),
                                       ("[]", "a list"), ("2", "a number"), ("true", "true or false"),
                                       ('{"schedules": [null]}', "null")])
def test_a_schedule_file_must_hold_an_object(tmp_path, text, kind):
    a, b, _ = _ab(tmp_path)
    s = tmp_path / "s.json"
    s.write_text(text)
    one_error(invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--schedule", s),
              "--schedule", f"s.json holds {kind}, not an object of axes")
    with pytest.raises(ValueError, match=f"holds {kind}, not an object"):
        tcprobe.matmul(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16), gpu="H100",
                       schedule=str(s))


# ---------------------------------------------------------------------------
# commands/options.needs and beta_for: an option that means nothing alone is
# refused, one rule for gemm and fit-gemm. `gemm --verdict-seconds 3` (no
# --compare) and `gemm --beta 2` (no --c: C is +0) ran, exit 0, the option
# ignored; fit-gemm already refused the beta.

def test_verdict_seconds_needs_compare(tmp_path):
    a, b, _ = _ab(tmp_path)
    one_error(invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--verdict-seconds", "3"),
              "--verdict-seconds needs --compare GPU (alone it would be ignored)")


@pytest.mark.parametrize("cmd", ["gemm", "fit-gemm"])
@pytest.mark.parametrize("beta", ["2", "-0.5", "nan"])
def test_a_nonzero_beta_needs_c(tmp_path, cmd, beta):
    a, b, c = _ab(tmp_path)
    d = ["--d", c] if cmd == "fit-gemm" else []
    one_error(invoke(cmd, "--a", a, "--b", b, *d, "--gpu", "H100", "--beta", beta),
              "--beta: a nonzero beta needs --c (with no C it would multiply nothing)")


def test_beta_zero_without_c_and_beta_with_c_run(tmp_path):
    a, b, c = _ab(tmp_path)
    out = tmp_path / "o.npy"
    r = invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--beta", "0", "--out", out)
    assert r.exit_code == 0, r.output
    assert np.load(out).view(np.uint32)[0, 0] == 0x41800000  # 16.0
    r = invoke("gemm", "--a", a, "--b", b, "--c", c, "--gpu", "H100", "--beta", "2", "--out", out)
    assert r.exit_code == 0, r.output
    assert np.load(out).view(np.uint32)[0, 0] == 0x41900000  # 16 + 2*1 = 18.0


def test_sparse_lanes_needs_the_sparse_suite(tmp_path):
    one_error(invoke("validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100",
                     "--suite", "raw", "--sparse-lanes", "0,1", "--out", tmp_path / "v"),
              "--sparse-lanes needs the sparse suite in --suite (alone it would be ignored)")
    assert not (tmp_path / "v").exists()


# ---------------------------------------------------------------------------
# run-case's words (commands/run_case.parse_words): never negative. int('-0')
# is 0, so `--a -0` or `--c -0` ran +0's word where -0's was meant.

@pytest.mark.parametrize("opt,word", [("--a", "-0"), ("--c", "-0"), ("--b", "0x3f80,-0x0")])
def test_a_negative_word_is_refused(opt, word):
    one_error(invoke("run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16",
                     opt, word),
              f"Invalid value for {opt}:", "is not a word: words are raw bits, never negative "
              "(a negative zero is its sign bit, in hex)")


# ---------------------------------------------------------------------------
# tcprobe.flags.check_flag: the API's True/False arguments take the bools.
# fast=1 and strict_auto='yes' were taken (checks by equality: 1 == True);
# emulate(strict=1) was strict about unroutable ops but not about a guessed
# schedule (`strict is True`).

A16 = np.ones((8, 16), np.float16)
B16 = np.ones((16, 8), np.float16)


@pytest.mark.parametrize("kw,msg", [({"fast": 1}, "fast must be None, True or False, not 1"),
                                    ({"fast": "no"}, "fast must be None, True or False, not 'no'"),
                                    ({"strict_auto": "yes"},
                                     "strict_auto must be True or False, not 'yes'"),
                                    ({"strict_auto": 0}, "strict_auto must be True or False, not 0")])
def test_matmul_flags_are_bools(kw, msg):
    with pytest.raises(MatmulError, match=f"^{msg}$"):
        tcprobe.matmul(A16, B16, gpu="H100", **kw)


@pytest.mark.parametrize("strict", [1, 0, "yes", "route", None])  # 'ROUTES' is 'routes' (campaign 11)
def test_emulate_strict_is_a_bool_or_routes(strict):
    import tcprobe.torch as tt
    with pytest.raises(ValueError, match=f"^strict must be True, False or 'routes', not {strict!r}$"):
        tt.emulate(gpu="H100", strict=strict)


def test_report_flags_are_bools():
    import tcprobe.torch as tt
    with pytest.raises(ValueError, match="^Report: compare must be True or False, not 1$"):
        tt.Report(compare=1)


# ---------------------------------------------------------------------------
# models/datapath.Datapath.parse: 'MFMA.F16.F32.K16' was said to have "no K
# (e.g. .k16)"; campaign 8 refused it naming the lower-case id, campaign 11
# reads it (every name in any case: docs/names.md).

def test_an_upper_case_datapath_id_is_read():
    d = tcprobe.dot([0x3C00] * 16, [0x3C00] * 16, 0, datapath="MFMA.F16.F32.K16", gpu="MI300X")
    assert int(np.asarray(d).ravel()[0]) == 0x41800000  # sixteen products of 1.0
    one_error(invoke("run-case", "--device", "sim:mi300x", "--datapath", "MFMA.F16.F32.K17"),
              "mfma")


# ---------------------------------------------------------------------------
# models/host_ieee.engine_forced: TCPROBE_EPILOGUE is host or engine (any
# case); 'nope' or a blank was read as host, silently (and 'ENGINE' too). The
# command line asks before any work, as for TCPROBE_KERNEL.

@pytest.mark.parametrize("value", ["nope", "", "engine2"])
def test_a_misspelt_tcprobe_epilogue_is_one_error(tmp_path, value):
    a, b, _ = _ab(tmp_path)
    env = {**os.environ, "TCPROBE_EPILOGUE": value, "TCPROBE_HEARTBEAT": "0"}
    r = subprocess.run([sys.executable, "-m", "tcprobe", "gemm", "--a", str(a), "--b", str(b),
                        "--gpu", "H100", "--out", str(tmp_path / "o.npy")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"error: TCPROBE_EPILOGUE={value!r} is neither host (the "
                                     "default) nor engine: set one of those, or unset it"]
    assert not (tmp_path / "o.npy").exists()


def test_tcprobe_epilogue_engine_in_any_case_is_the_engine(monkeypatch):
    from tcprobe.models import host_ieee
    monkeypatch.setenv("TCPROBE_EPILOGUE", "ENGINE")
    assert host_ieee.exact() is False
    monkeypatch.setenv("TCPROBE_EPILOGUE", " host ")
    assert host_ieee.engine_forced() is False


# ---------------------------------------------------------------------------
# models/numba_internals.check_numba_env (asked by kernel_form, so by the
# command line before any work and by the API before a kernel): numba settings
# tcprobe cannot run under ended mid-run in exit 3 (NotImplementedError: an
# intrinsic "not usable in pure-python"; "Number of threads must be > 0").

@pytest.mark.parametrize("name,value,why", [
    ("NUMBA_DISABLE_JIT", "1", "tcprobe's kernels are compiled by numba (pure Python cannot run "
                               "their intrinsics): unset it"),
    ("NUMBA_NUM_THREADS", "0", "numba needs at least 1 thread: unset it (every core) or give a "
                               "count")])
def test_numba_settings_tcprobe_cannot_run_under_are_named(tmp_path, name, value, why):
    a, b, _ = _ab(tmp_path)
    env = {**os.environ, name: value, "TCPROBE_HEARTBEAT": "0"}
    r = subprocess.run([sys.executable, "-m", "tcprobe", "gemm", "--a", str(a), "--b", str(b),
                        "--gpu", "H100"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"error: {name}={value!r}: {why}"]


# ---------------------------------------------------------------------------
# console.fail (every error line): a byte that is not UTF-8 in a name (the
# shell passes it; Python holds it as a lone surrogate) was shown as '\udcff',
# a name the user never wrote; it is shown as the byte, '\xff'.

@pytest.mark.parametrize("args,line", [
    (["gemm", "--a", "a.npy", "--b", "a.npy", "--gpu", b"H\xff"], "error: gpu: unknown GPU 'H\\xff'"),
    (["score", "--capture", b"\xffnope"], "error: \\xffnope: no such file or folder"),
])
def test_a_name_that_is_not_utf8_is_shown_as_written(tmp_path, args, line):
    np.save(tmp_path / "a.npy", np.ones((16, 16), np.float16))
    env = {**os.environ, "TCPROBE_HEARTBEAT": "0"}
    r = subprocess.run([sys.executable.encode(), b"-m", b"tcprobe",
                        *(x if isinstance(x, bytes) else x.encode() for x in args)],
                       capture_output=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 2
    (only,) = r.stderr.decode("ascii").splitlines()
    assert only.startswith(line), only


# ---------------------------------------------------------------------------
# outfiles.refuse_inside (validate, a campaign, report merge): --json inside
# the --out folder the command fills is refused before any work. `validate
# --out v --resume --json v/capture.tcap` replaced the capture with the JSON
# report: everything captured was lost.

def test_json_inside_the_out_folder_is_refused_and_the_capture_kept(tmp_path):
    out = tmp_path / "v"
    base = ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100",
            "--out", out]
    assert invoke(*base).exit_code == 0
    before = (out / "capture.tcap").read_bytes()
    assert before[:8] == b"\x89TCPCAP\n"
    for inside in (out / "capture.tcap", out / "report.json", tmp_path / "v" / ".." / "v" / "x.json"):
        one_error(invoke(*base, "--resume", "--json", inside),
                  f"--json {inside} is inside --out {out}, the folder tcprobe fills (its capture "
                  "and reports): choose a path outside it")
    assert (out / "capture.tcap").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["capture.tcap", "report.html", "report.json",
                                                     "report.md"]
    one_error(invoke("report", "merge", out, "--out", out, "--json", out / "s.json"),
              "--json", "is inside FOLDERS")  # the shard folder read, and the --out


# ---------------------------------------------------------------------------
# torch/mode._check_model: an AMD model beside an NVIDIA GPU (and the reverse)
# is refused at emulate(), as an unknown name is; a block with no GEMM took it.

@pytest.mark.parametrize("gpu,model,msg", [
    ("H100", "mi300x", "model: 'mi300x' models AMD v_mfma datapaths, and H100 runs none"),
    ("MI300X", "h100", "model: 'h100' is an NVIDIA profile, and MI300X runs only mfma")])
def test_emulate_refuses_a_model_of_the_other_vendor(gpu, model, msg):
    import tcprobe.torch as tt
    with pytest.raises(ValueError, match=f"^{msg}$"):
        tt.emulate(gpu=gpu, model=model)


# ---------------------------------------------------------------------------
# commands/gemm_probe: one writer per --out folder (capture.lock.hold_out_folder,
# as validate). Three gemm-probe runs at once into one folder, seeds 0, 1, 2,
# each exited 0, and the folder could hold one run's A beside another's B
# under a manifest naming a third seed.

def test_gemm_probe_holds_its_folder(tmp_path):
    from tcprobe.capture.lock import hold_out_folder
    out = tmp_path / "gp"
    with hold_out_folder(out):
        one_error(invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", out),
                  f"{out}: another tcprobe run is writing to this folder (wait for it to finish, "
                  "or choose another --out)")
    assert list(out.iterdir()) == []
    r = invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", out)
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in out.iterdir())
    assert "manifest.json" in names and ".tcprobe.lock" not in names and len(names) == 27


def test_strict_auto_needs_schedule_auto():
    # strict_auto=True refuses a guessed schedule='auto'; without 'auto' it was ignored
    with pytest.raises(MatmulError, match=r"^strict_auto=True needs schedule='auto' \(alone it "
                                          r"would be ignored\)$"):
        tcprobe.matmul(A16, B16, gpu="H100", strict_auto=True)


# ---------------------------------------------------------------------------
# npyfile.check: bytes after the array the header claims are refused (np.load
# reads the header's array and ignores them: an 8x16 A was multiplied from a
# file holding 64 bytes more, exit 0).

def test_an_npy_with_bytes_after_its_array_is_refused(tmp_path):
    _, b, _ = _ab(tmp_path)
    a = tmp_path / "long.npy"
    np.save(a, np.ones((8, 16), np.float16))
    with open(a, "ab") as fh:
        fh.write(b"\0" * 64)
    one_error(invoke("gemm", "--a", a, "--b", b, "--gpu", "H100"),
              "--a", "long.npy holds 64 bytes after the 128 elements of float16 its header "
              "claims: not one .npy array")
    one_error(invoke("fit-gemm", "--a", tmp_path / "a.npy", "--b", b, "--d", a, "--gpu", "H100"),
              "--d", "holds 64 bytes after")


# ---------------------------------------------------------------------------
# cli: TCPROBE_DEBUG=0 (no, off, false) is off, as TCPROBE_HEARTBEAT's words;
# any set value turned tracebacks on.

@pytest.mark.parametrize("value,traceback", [("0", False), ("off", False), ("1", True)])
def test_tcprobe_debug_zero_is_off(monkeypatch, value, traceback):
    from tcprobe.commands import targets

    def broken(*a, **k):
        raise KeyError("oops")

    monkeypatch.setattr(targets, "targets", broken)
    monkeypatch.setenv("TCPROBE_DEBUG", value)
    r = invoke("targets")
    if traceback:
        assert isinstance(r.exception, KeyError)
    else:
        assert r.exit_code == 3 and "internal error (KeyError: 'oops')" in r.stderr


# ---------------------------------------------------------------------------
# tcprobe.startsignal (imported first by tcprobe.cli): Ctrl-C while the command
# line imports click, rich and the console (its first 0.3 s) printed an
# import's traceback (KeyboardInterrupt, exit -2); it is the interrupted line
# and exit 130, and afterwards Ctrl-C is KeyboardInterrupt again.

def test_ctrl_c_while_the_command_line_imports_is_one_line(tmp_path):
    import signal
    code = ("import tcprobe.startsignal, time\nprint('ready', flush=True)\ntime.sleep(30)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=sigint_at_default)
    assert p.stdout.readline() == "ready\n"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and err == "interrupted\n"


def test_after_the_imports_ctrl_c_is_keyboard_interrupt_again():
    code = ("import signal, tcprobe.cli\n"  # tcprobe.cli's import restores the handler
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, preexec_fn=sigint_at_default)
    assert out.stdout == "True\n", out.stderr


# ---------------------------------------------------------------------------
# commands/choose.open_and_choose (run-case, validate, ladder): --instr or
# --dtype beside a --datapath id that names another family or D was ignored
# (`run-case --datapath mma.bf16.f32.k16 --instr wgmma` ran mma, exit 0).

@pytest.mark.parametrize("cmd", [["run-case"], ["validate", "--cases", "100"],
                                 ["ladder", "--validate", "0", "--steps", "slice"]])
def test_instr_beside_a_datapath_of_another_family_is_refused(tmp_path, cmd):
    out = ["--out", tmp_path / "v"] if cmd[0] == "validate" else []
    one_error(invoke(*cmd, "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16",
                     "--instr", "wgmma", *out),
              "--instr wgmma differs from --datapath mma.bf16.f32.k16 (mma): give one of them")
    assert list(tmp_path.iterdir()) == []


def test_dtype_beside_a_datapath_of_another_d_is_refused_and_the_same_runs():
    base = ["ladder", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--validate", "0",
            "--steps", "slice"]
    one_error(invoke(*base, "--dtype", "f16"),
              "--dtype f16 differs from --datapath mma.bf16.f32.k16 (D in f32): give one of them")
    assert invoke(*base, "--dtype", "f32").exit_code == 0
    assert invoke("run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16",
                  "--instr", "mma").exit_code == 0


# ---------------------------------------------------------------------------
# outfiles.refuse_same_files (score, replay, fit beside gemm and fit-gemm): an
# output never replaces an input, nor goes inside an input folder. `score
# --capture cap.tcap --json cap.tcap` (replay, fit) replaced the capture with
# the JSON; `score --capture H200/bf16 --json H200/bf16/a_H200_bf16.txt` its A.

@pytest.fixture(scope="module")
def capture_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("cap") / "v"
    assert invoke("validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100",
                  "--out", out).exit_code == 0
    return out / "capture.tcap"


@pytest.mark.parametrize("cmd", [["score"], ["replay", "--device", "sim:h100"], ["fit", "--quick"]])
def test_json_over_the_capture_read_is_refused(capture_file, cmd):
    before = capture_file.read_bytes()
    one_error(invoke(*cmd, "--capture", capture_file, "--json", capture_file),
              f"--json {capture_file} is also --capture: writing it would overwrite that input; "
              "choose another path")
    assert capture_file.read_bytes() == before


def test_json_inside_a_capture_folder_is_refused(tmp_path):
    import shutil
    from pathlib import Path
    src = Path(__file__).parent / "data" / "khattak-mikaitis-2025" / "H200" / "bf16"
    cap = tmp_path / "H200" / "bf16"
    shutil.copytree(src, cap)
    a = cap / "a_H200_bf16.txt"
    before = a.read_bytes()
    one_error(invoke("score", "--capture", cap, "--json", a),
              f"--json {a} is inside --capture {cap}: writing it would change that input; choose "
              "a path outside it")
    assert a.read_bytes() == before
    assert invoke("score", "--capture", cap, "--json", tmp_path / "s.json").exit_code == 0


# ---------------------------------------------------------------------------
# commands/options.guard_outputs (every command, hooked where the command
# line loads it): an output FILE never replaces a file or folder any option
# names. `gemm --schedule s.json --json s.json` replaced the schedule with the
# report; `run-case --device sim:p.toml --json p.toml` the profile.

PROFILE = ("window_bits = 24\nblock_size = 4\nzero_floor = -133\ninput_conversion = 'truncate'\n"
           "output_rounding = 'rz'\nzero_sign = 'positive'\nnan = 0x7fffffff\n")


def test_json_over_a_schedule_file_is_refused(tmp_path):
    a, b, _ = _ab(tmp_path)
    s = tmp_path / "s.json"
    s.write_text('{"split_k": 1}')
    one_error(invoke("gemm", "--a", a, "--b", b, "--gpu", "H100", "--schedule", s, "--json", s),
              f"--json {s} is also --schedule: writing it would overwrite that input; choose "
              "another path")
    assert s.read_text() == '{"split_k": 1}'


@pytest.mark.parametrize("cmd", [["run-case", "--datapath", "mma.bf16.f32.k16"],
                                 ["ladder", "--format", "bf16", "--validate", "0", "--steps", "slice"],
                                 ["smoke", "--format", "bf16", "--no-sass", "--cases", "20"]])
def test_json_over_the_sim_profile_is_refused(tmp_path, cmd):
    p = tmp_path / "p.toml"
    p.write_text(PROFILE)
    one_error(invoke(*cmd, "--device", f"sim:{p}", "--json", p),
              f"--json {p} is also --device: writing it would overwrite that input")
    assert p.read_text() == PROFILE


def test_merge_json_inside_a_shard_folder_is_refused(tmp_path):
    shard = tmp_path / "shard"
    shard.mkdir()
    one_error(invoke("report", "merge", shard, "--out", tmp_path / "m", "--json", shard / "s.json"),
              f"--json {shard / 's.json'} is inside FOLDERS {shard}: writing it would change that "
              "input; choose a path outside it")
    assert list(shard.iterdir()) == [] and not (tmp_path / "m").exists()


# ---------------------------------------------------------------------------
# tcprobe.capture.load: a blank path names nothing (Path('') is the current
# folder: load('') returned every capture below it); capture/km.read_tree walks
# with os.walk (rglob raised FileNotFoundError for a folder that vanished while
# it walked, as under /proc through a link to /).

@pytest.mark.parametrize("path", ["", "  "])
def test_a_blank_capture_path_is_refused(path):
    import tcprobe.capture as cap
    with pytest.raises(cap.CaptureError, match=rf"^capture path {path!r} names nothing: give a "
                                               "folder or a file$"):
        cap.load(path)


def test_a_capture_tree_whose_folder_vanishes_is_walked(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    from tcprobe.capture import km
    src = Path(__file__).parent / "data" / "khattak-mikaitis-2025" / "H200" / "bf16"
    shutil.copytree(src, tmp_path / "H200" / "bf16")
    (tmp_path / "gone").mkdir()
    real_scandir = os.scandir

    def scandir(p):  # the folder 'gone' vanishes between the listing and its walk
        if str(p).endswith("gone"):
            raise FileNotFoundError(2, "No such file or directory", str(p))
        return real_scandir(p)

    monkeypatch.setattr(os, "scandir", scandir)
    caps = km.read_tree(tmp_path)
    assert [c.label for c in caps] == ["H200/bf16 -> f32"]


# ---------------------------------------------------------------------------
# console.closed_pipe (rich's consoles and the command line's own writes):
# stdout's reader gone (`| head -c 10`) is exit 141, as a tool killed by
# SIGPIPE, with no error line. `gemm --out - | head -c 10` was exit 3 ("internal
# error (OSError: 4096 requested and 0 written)"); a table's was exit 1, a
# "mismatch" in tcprobe's words.

@pytest.mark.parametrize("args", [["gemm", "--random", "256x256x64", "--format", "bf16", "--gpu",
                                   "H100", "--out", "-"]])  # 256 KiB: more than a pipe holds
def test_a_reader_that_leaves_is_exit_141_without_an_error(args):
    env = {**os.environ, "TCPROBE_HEARTBEAT": "0"}
    p = subprocess.Popen([sys.executable, "-m", "tcprobe", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    assert len(p.stdout.read(10)) == 10
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141
    assert "error" not in err and "Traceback" not in err


def test_rich_consoles_leave_a_closed_pipe_with_141(monkeypatch):
    from tcprobe import console as con
    monkeypatch.setattr(con.os, "dup2", lambda *a: None)  # keep pytest's stdout
    with pytest.raises(SystemExit) as e:
        con.console.on_broken_pipe()
    assert e.value.code == 141
    con.console.quiet = False


# ---------------------------------------------------------------------------
# A profile's name is printed on the terminal: one holding a control or format
# character (U+202E turns the rest of the line around, U+200B shows nothing, a
# bell, a tab) is refused by the schema (schema.Text(named=True)), naming it.

@pytest.mark.parametrize("char,code", [("\u202e", "U+202E"), ("\u200b", "U+200B"),
                                       ("\x07", "U+0007"), ("\t", "U+0009")])
def test_a_profile_name_with_a_hidden_character_is_refused(tmp_path, char, code):
    from cli_helpers import invoke, one_error

    prof = tmp_path / "p.toml"
    prof.write_text(f'name = "ab\\u{ord(char):04X}cd"\nwindow_bits = 20\nblock_size = 16\nzero_floor = -133\n'
                    'input_conversion = "truncate"\noutput_rounding = "rz"\n'
                    'zero_sign = "positive"\nnan = 0x7FFFFFFF\nfamilies = ["mma"]\n',
                    encoding="utf-8")
    r = invoke("validate", "--device", f"sim:{prof}", "--format", "bf16", "--cases", "100")
    one_error(r, "name:", f"holds {code}, a control or invisible character", notes=True)
