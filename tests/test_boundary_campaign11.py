"""Campaign 11 (docs/campaign-11.md): the broken cases, as exact words,
error lines and exceptions. Words expected are worked out by hand: eight
products of ones sum to 8.0 (f32 0x41000000, f16 0x4800, bf16 0x4100),
sixteen to 16.0 (f32 0x41800000); int8 products against numpy's int64 sum."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
from cli_helpers import invoke, one_error, sigint_at_default

import tcprobe
from tcprobe.matrix import fit_gemm
from tcprobe.matrix.operands import MatmulError
from tcprobe.matrix.schedule import ScheduleError, from_value
from tcprobe.models.datapath import Datapath

try:
    import torch
except ImportError:  # pragma: no cover - the torch tests skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

ONES_A = np.ones((4, 8), np.float16)
ONES_B = np.ones((8, 4), np.float16)
F32_8, F16_8, BF16_8 = 0x41000000, 0x4800, 0x4100
F32_16 = 0x41800000


def _words(d) -> set[int]:
    d = np.asarray(d.numpy() if hasattr(d, "numpy") else d)
    return set(d.view({2: np.uint16, 4: np.uint32}[d.dtype.itemsize]).ravel().tolist())


# ---- one rule for names: stripped, any case (tcprobe/names.py, docs/names.md)

@pytest.mark.parametrize("dtype, word", [("F16", F16_8), ("Float16", F16_8), (" fp16 ", F16_8),
                                         ("FLOAT32", F32_8), ("F32", F32_8), ("BF16", BF16_8)])
def test_dtype_names_in_any_case(dtype, word):
    assert _words(tcprobe.matmul(ONES_A, ONES_B, gpu="H100", dtype=dtype)) == {word}


@pytest.mark.parametrize("schedule", ["CHAIN", "Chain", " chain\t", {"preset": "CHAIN"},
                                      {"k_order": "REVERSE"}, {"split_kind": "SERIAL"}])
def test_schedule_names_and_axis_values_in_any_case(schedule):
    assert _words(tcprobe.matmul(ONES_A, ONES_B, gpu="H100", schedule=schedule)) == {F32_8}


def test_schedule_values_are_stored_by_their_own_spelling():
    assert from_value({"k_order": "Reverse"}).k_order == "reverse"
    assert from_value("CHAIN") == from_value("chain")


@pytest.mark.parametrize("bad, needle", [("F 16", "names no output type"),
                                         ("\uff46\uff11\uff16", "names no output type")])
def test_other_dtype_names_still_refused(bad, needle):
    with pytest.raises(MatmulError, match=needle):
        tcprobe.matmul(ONES_A, ONES_B, gpu="H100", dtype=bad)


def test_keys_are_exact_and_unknown_values_refused():
    with pytest.raises(ScheduleError, match="unknown axis 'K_ORDER'"):
        from_value({"K_ORDER": "reverse"})
    with pytest.raises(ScheduleError, match="'CHAIN2' is no preset"):
        from_value("CHAIN2")
    with pytest.raises(ScheduleError, match="k_order must be forward or reverse"):
        from_value({"k_order": "backward"})


def test_datapath_ids_in_any_case():
    assert Datapath.parse(" MMA.BF16.F32.K16 ").id == "mma.bf16.f32.k16"
    d = tcprobe.dot([0x3F80] * 16, [0x3F80] * 16, 0, datapath="MMA.BF16.F32.K16", gpu="h100")
    assert int(np.asarray(d).ravel()[0]) == F32_16
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="H100", instr="WGMMA", schedule={"instr": "wgmma"})
    assert _words(d) == {F32_8}


def test_backend_name_in_any_case():
    assert _words(tcprobe.matmul(ONES_A, ONES_B, gpu="H100", backend=" CPU ")) == {F32_8}
    with pytest.raises(MatmulError, match="backend must be cpu, cuda or host, not 'AUTO'"):
        tcprobe.matmul(ONES_A, ONES_B, gpu="H100", backend="AUTO")


def test_fit_takes_format_names_in_any_case():
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="H100")
    f = fit_gemm.fit(ONES_A.view(np.uint16), "F16", ONES_B.view(np.uint16), "F16", None, None,
                     np.asarray(d).view(np.uint32), "F32", gpu="h100")
    assert f.explained


def test_cli_names_in_any_case(tmp_path):
    np.save(tmp_path / "a.npy", ONES_A)
    np.save(tmp_path / "b.npy", ONES_B)
    out = tmp_path / "d.npy"
    for args in (["--dtype", "F16"], ["--dtype", "F16", "--schedule", "CHAIN", "--instr", " WGMMA"]):
        r = invoke("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--gpu", "H100",
                   "--out", out, *args)
        assert r.exit_code == 0, r.output
        assert _words(np.load(out)) == {F16_8}
    r = invoke("run-case", "--device", "SIM:H100", "--datapath", "MMA.BF16.F32.K16",
               "--a", "0x3f80", "--b", "0x3f80", "--c", "0")
    assert r.exit_code == 0 and "0x3f800000" in r.output, r.output
    one_error(invoke("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--gpu",
                     "H100", "--dtype", "F 16"), "--dtype: 'F 16' names no output type")


def test_click_choices_in_any_case_and_a_set_named_twice_listed_once():
    once = invoke("targets", "--set", "blog")
    twice = invoke("targets", "--set", " BLOG ", "--set", "blog")
    assert once.exit_code == twice.exit_code == 0, twice.output
    assert once.output.splitlines()[0] == twice.output.splitlines()[0]  # "N targets"
    r = invoke("batch-invariance", "--gpu", "H200", "--dtype", "BF16", "-n", "64", "-k", "64",
               "--m", "1:4", "--form", "PLAIN")
    assert r.exit_code == 0, r.output


# ---- tcprobe.gemm: the name a new user tries

def test_tcprobe_gemm_names_matmul():
    with pytest.raises(AttributeError, match="tcprobe.matmul"):
        tcprobe.gemm  # noqa: B018
    assert not hasattr(tcprobe, "nosuch")


# ---- Ctrl-C as the command line starts and ends (tcprobe/__init__.py, cli._ending)

def _handler_name(argv0: str) -> str:
    code = (f"import sys; sys.argv = [{argv0!r}]; import tcprobe, signal; "
            "h = signal.getsignal(signal.SIGINT); print(getattr(h, '__name__', h))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, preexec_fn=sigint_at_default).stdout.strip()


def test_the_package_takes_ctrl_c_only_when_started_as_the_command_line():
    assert _handler_name("/some/bin/tcprobe") == "_interrupted"
    assert _handler_name("/some/script.py") == "default_int_handler"


def test_an_invoke_in_a_callers_process_leaves_ctrl_c_alone():
    before = signal.getsignal(signal.SIGINT)  # default, or ignored in a background run
    assert invoke("--version").exit_code == 0
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.5, 1.5])
def test_ctrl_c_during_a_command_is_one_line_and_130(tmp_path, delay):
    # kernels compiled first: a Ctrl-C that lands while numba compiles the first
    # run's kernels was seen lost once (the run finished, exit 0; the test below
    # holds the command line's answer to a swallowed Ctrl-C), not this test's subject
    subprocess.run([sys.executable, "-m", "tcprobe", "validate", "--format", "bf16", "--device",
                    "sim:h100", "--cases", "100", "--out", tmp_path / "warm"], cwd=tmp_path,
                   capture_output=True, timeout=900, check=True)
    p = subprocess.Popen([sys.executable, "-m", "tcprobe", "validate", "--format", "bf16",
                          "--device", "sim:h100", "--cases", "2000000", "--out", tmp_path / "v"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=sigint_at_default)
    # the command has begun once its --out folder exists (a loaded runner can take
    # seconds to start Python, where a Ctrl-C is Python's own, not the command's)
    deadline = time.monotonic() + 120
    while not (tmp_path / "v").exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    lines = [ln for ln in err.decode().splitlines() if ln.strip()]
    assert p.returncode == 130 and lines[-1].startswith("interrupted"), err
    assert b"Traceback" not in err


def _run_as_cli(body: str, command: str) -> subprocess.CompletedProcess:
    """Run ``body`` (defining a click command ``command``) in a child process
    started as the command line, the command added to tcprobe's and run."""
    code = (f"import os, signal, sys, time\nsys.argv = ['tcprobe', {command!r}]  # before the "
            "import: started as the command line\nimport click\nimport tcprobe\n"
            f"from tcprobe import cli\n{body}\ncli.main.add_command({command})\ncli.main()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, preexec_fn=sigint_at_default, cwd=tempfile.gettempdir())


_SWALLOWING = """
@click.command("swallow")
def swallow():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        pass  # as a __del__ it landed in, or a library's broad except, would
    click.echo("finished")
"""

_UNRAISABLE = """
class Held:
    def __del__(self):  # Python prints what leaves a __del__; it never raises it
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)

@click.command("unraisable")
def unraisable():
    Held()
    click.echo("finished")
"""


def test_a_ctrl_c_that_code_between_swallowed_still_ends_the_command_as_interrupted():
    # the command's handler heard the Ctrl-C, but its KeyboardInterrupt never
    # reached the command line: exit 130 and "interrupted", not exit 0 (seen
    # once in CI while numba compiled a first run's kernels)
    p = _run_as_cli(_SWALLOWING, "swallow")
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert p.stdout == "finished\n"  # what the command wrote stays written
    assert p.stderr.strip().splitlines()[-1] == "interrupted" and "Traceback" not in p.stderr


def test_a_ctrl_c_that_lands_where_python_only_prints_is_one_line_and_130():
    # rerun of campaign 11 (c11-390, Ctrl-C 1.2 s into `python -m tcprobe gemm`; 1 of 70
    # tries at 0.9-1.6 s): it landed in llvmlite's ctypes callback as numba loaded
    # cached kernels, and Python printed "Exception ignored on calling ctypes callback
    # function ... Traceback ... KeyboardInterrupt" before the command's "interrupted"
    p = _run_as_cli(_UNRAISABLE, "unraisable")
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert p.stdout == "finished\n"
    assert p.stderr.strip().splitlines() == ["interrupted"], p.stderr


def test_other_exceptions_python_only_prints_are_still_printed():
    # only a Ctrl-C is kept quiet: any other error in a __del__ is Python's to print
    body = _UNRAISABLE.replace(
        "os.kill(os.getpid(), signal.SIGINT)\n        time.sleep(5)", "raise ValueError('held')")
    p = _run_as_cli(body, "unraisable")
    assert p.returncode == 0 and p.stdout == "finished\n", (p.returncode, p.stderr)
    assert "Exception ignored in" in p.stderr and "ValueError: held" in p.stderr


# ---- emulate: processes counted; _int_mm's GPU shapes

@needs_torch
def test_processes_started_inside_emulate_are_counted():
    from tcprobe.torch import Report, emulate

    rep = Report()
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # outside: not counted
    with emulate("H100", report=rep), emulate("H100", report=rep):  # one report: once
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    assert rep.processes == 2 and rep.threads == 0


@needs_torch
@pytest.mark.slow
def test_a_dataloaders_workers_are_counted():
    from torch.utils.data import DataLoader, TensorDataset

    from tcprobe.torch import Report, emulate

    rep = Report()
    with emulate("H100", report=rep):
        for _ in DataLoader(TensorDataset(torch.arange(8.0)), batch_size=4, num_workers=2):
            pass
    assert rep.processes == 2


@needs_torch
@pytest.mark.parametrize("m, k, n, needle", [(32, 17, 8, "K = 17"), (32, 32, 9, "N = 9"),
                                             (16, 32, 8, "M = 16")])
def test_int_mm_shapes_torchs_gpu_refuses_are_refused(m, k, n, needle):
    from tcprobe.torch import emulate

    a = torch.ones(m, k, dtype=torch.int8)
    b = torch.ones(k, n, dtype=torch.int8)
    with pytest.raises(ValueError, match=needle), emulate("H100"):
        torch._int_mm(a, b)


@needs_torch
def test_int_mm_at_the_smallest_gpu_shape_is_exact():
    from tcprobe.torch import emulate

    g = torch.Generator().manual_seed(11)
    a = torch.randint(-128, 128, (17, 8), dtype=torch.int8, generator=g)
    b = torch.randint(-128, 128, (8, 8), dtype=torch.int8, generator=g)
    with emulate("H100"):
        d = torch._int_mm(a, b)
    want = a.numpy().astype(np.int64) @ b.numpy().astype(np.int64)
    assert np.array_equal(d.numpy(), want)


@needs_torch
def test_emulate_names_in_any_case():
    from tcprobe.torch import emulate

    a = torch.ones(4, 8, dtype=torch.bfloat16)
    b = torch.ones(8, 4, dtype=torch.bfloat16)
    with emulate(" h100", instr="WGMMA", schedule="CHAIN", strict="ROUTES", backend="Cpu"):
        d = (a @ b).float()
    assert _words(d) == {F32_8}


# ---- a name given twice, in two spellings, is one name (tcprobe.names.once)

CAPTURE = os.path.join(os.path.dirname(__file__), "data/khattak-mikaitis-2025/H200/bf16")


def test_a_model_named_twice_is_scored_once():
    r = invoke("score", "--capture", CAPTURE, "--model", "h100", "--model", " H100")
    assert r.exit_code == 0 and "1 scores" in r.output, r.output
    r = invoke("run-case", "--device", "sim:h100", "--datapath", "mma.bf16.f32.k16", "--a",
               "0x3f80", "--b", "0x3f80", "--c", "0", "--model", "H100", "--model", "h100")
    assert r.exit_code == 0 and r.output.count("same word") == 1, r.output


def test_once_keeps_paths_exact():
    from tcprobe.names import once

    assert once(["auto", "AUTO", " h100", "H100"]) == ("auto", " h100")
    assert once(["a/M.json", "a/m.json", "M.toml", "m.toml"]) == ("a/M.json", "a/m.json",
                                                                  "M.toml", "m.toml")
