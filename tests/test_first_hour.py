"""The first hour (a fresh machine, no GPU, the README line by line): what a run
of every README line found, each fixed and held here.

- The README's gemm lines named `A.npy` and `B.npy` and never said how to make
  them; the same files could not serve the line without `--format` and the
  lines with `--format bf16` (f16 values are refused as raw words). The README
  now makes two bf16 files first, and every gemm line runs on them.
- `gemm --format bf16` on a file of values said `--a-format bf16: ...`, an
  option the user had not typed.
- A bf16 C saved by np.save was refused with "give --c-format", an option gemm
  did not have (fit-gemm had it): gemm takes `--c-format` now.
- `gemm` in a pipe began its stderr with an empty line (rich's transient bar
  stopping on a non-terminal).
- `scripts/gpu-check.sh` on a machine with no GPU ran 29 s of steps that each
  failed with the same reason, exit 1, and showed nothing for its first 5 s.
- `scripts/gpu-cuda-backend.sh` with no GPU: a traceback after 11 s of nothing.
- `tcprobe warm` and then the README's first example compiled two kernels
  again (A100's and Hopper's mma bf16, B200's f16 to f16): warm now holds them.
- `python3 scripts/replay_h200_emulate.py` after a non-editable install read
  the captures beside the installed package (none): "0 of 0 calls reproduce
  every word", exit 0. It reads the checkout's now, and finding none is an error.
- `tcprobe devices` imported MMA-Sim to list it, and with it torch: 2.8 s of
  CPU where 0.9 s lists the rest (its first line past 2 s even on an idle core).
- One idea, one name: `batch-invariance --dtype` named the operands' format
  (`--dtype` is D's type elsewhere) and `-n`/`-k` were gemm-probe's `--n`/`--k`;
  `warm --only` was ladder's `--steps`. The one name is shown, the old one works.
  `targets`' table named its sets' column "suite" (validate's case suites).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _readme_lines(prefix: str) -> list[str]:
    return [ln.strip() for ln in README.splitlines() if ln.startswith("    " + prefix)]


def _expanded(line: str) -> list[str]:
    """A README synopsis line as typed: `[--c C.npy]` left out (no C file is
    made), every other bracket's option given."""
    line = line.split("  #")[0].replace("[--c C.npy]", "")
    return shlex.split(line.replace("[", "").replace("]", ""))


def test_the_readme_gemm_lines_run_on_the_files_the_readme_makes(tmp_path, monkeypatch):
    make = [ln for ln in _readme_lines("python3 -c") if "A.npy" in ln]
    assert len(make) == 1, make
    subprocess.run(shlex.split(make[0]), cwd=tmp_path, check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": ""})
    gemm = [ln for ln in _readme_lines("tcprobe gemm --a A.npy")]
    assert len(gemm) == 3, gemm
    monkeypatch.chdir(tmp_path)
    for line in gemm:
        args = _expanded(line)
        assert args[:2] == ["tcprobe", "gemm"]
        r = invoke(*args[1:])
        assert r.exit_code == 0, (line, r.output)
    # the first line's --out: D of 256x128 f32 words, the README's shapes
    assert np.load(tmp_path / "D.npy").shape == (256, 128)


def _npy(tmp_path, name, arr):
    np.save(tmp_path / name, arr)
    return str(tmp_path / name)


def test_a_format_error_names_the_option_that_was_typed(tmp_path):
    a = _npy(tmp_path, "a.npy", np.ones((4, 16), np.float16))
    b = _npy(tmp_path, "b.npy", np.ones((16, 4), np.float16))
    line = one_error(invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--format", "bf16"),
                     "holds float16 (f16) values, not raw words")
    assert line.startswith("error: --format bf16: ") and "--a-format" not in line
    line = one_error(invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--a-format", "bf16"))
    assert line.startswith("error: --a-format bf16: ")
    line = one_error(invoke("fit-gemm", "--gpu", "H100", "--a", a, "--b", b, "--d",
                            _npy(tmp_path, "d.npy", np.ones((4, 4), np.float32)),
                            "--format", "bf16"))
    assert line.startswith("error: --format bf16: ")
    # a bf16 file saved by np.save (2-byte voids): the shared --format is named first
    v = _npy(tmp_path, "v.npy", np.ones((4, 16), ml_dtypes.bfloat16))
    line = one_error(invoke("gemm", "--gpu", "H100", "--a", v, "--b", b))
    assert "give --format (bf16" in line and "--a-format for this file alone" in line


def test_gemm_in_a_pipe_writes_no_empty_line(tmp_path):
    a = _npy(tmp_path, "a.npy", np.ones((8, 32), np.float16))
    b = _npy(tmp_path, "b.npy", np.ones((32, 8), np.float16))
    r = subprocess.run([sys.executable, "-m", "tcprobe", "gemm", "--gpu", "H100", "--a", a,
                        "--b", b, "--compare", "A100", "--exact"], capture_output=True,
                       text=True, timeout=300, cwd=tmp_path,
                       env={**os.environ, "TCPROBE_HEARTBEAT": "0"})
    assert r.returncode == 0, r.stderr
    assert "" not in r.stderr.splitlines(), repr(r.stderr[:200])
    # 8x32 ones by 32x8 ones: every element is 32.0 on both GPUs
    assert "0 of 64 elements differ" in r.stdout or "same words" in r.stdout, r.stdout


def _bi(*args):
    r = invoke("batch-invariance", "--gpu", "H200", *args, "--m", "1:300")
    assert r.exit_code == 0, r.output
    return r.stdout


def test_batch_invariance_takes_format_n_k_and_its_old_spellings():
    one = _bi("--format", "bf16", "--n", "256", "--k", "4096")
    assert one.startswith("H200 bf16, N = 256, K = 4096, M 1..300")
    assert _bi("--dtype", "bf16", "-n", "256", "-k", "4096") == one
    assert _bi("--format=bf16", "-n256", "--k=4096") == one
    r = invoke("batch-invariance", "--help")
    opts = re.findall(r"^  ((?:-[\w-]+)(?:, -[\w-]+)*)", r.stdout, re.M)
    assert "--format" in opts and "-n, --n" in opts and "-k, --k" in opts, opts
    assert not any("--dtype" in o for o in opts), opts  # named in prose only
    r = invoke("batch-invariance", "--gpu", "H200", "--n", "64", "--k", "64")
    line = one_error(r, "'--format'")
    assert "--dtype" not in line
    one_error(invoke("batch-invariance", "--gpu", "H200", "--format", "bf16", "--dtype", "f16",
                     "--n", "64", "--k", "64"), "given 2 times")


def test_warm_takes_steps_as_the_ladder_does_and_only_still_works():
    listed = invoke("warm", "--steps", "dot,dot-f64", "--list")
    assert listed.exit_code == 0, listed.output
    assert [ln.split(":")[0] for ln in listed.stdout.splitlines()] == ["dot", "dot-f64"]
    assert invoke("warm", "--only", "dot", "--only", "dot-f64", "--list").stdout == listed.stdout
    assert invoke("warm", "--steps", "dot", "--steps", "dot-f64", "--list").stdout == listed.stdout
    one_error(invoke("warm", "--steps", "dot,nope", "--list"), "no step 'nope'")
    help_text = invoke("warm", "--help").stdout
    assert re.search(r"^  --steps STEP,\.\.\.", help_text, re.M)
    assert not re.search(r"^  [^ ]*--only", help_text, re.M)
    ladder_help = invoke("ladder", "--help").stdout
    assert re.search(r"^  --steps ", ladder_help, re.M)


def _has_gpu() -> bool:
    return bool(shutil.which("nvidia-smi")) or Path("/dev/nvidia0").exists()


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU: the check would run on it")
def test_gpu_check_without_a_gpu_stops_in_one_line_after_saying_what_it_does(tmp_path):
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TCPROBE_CUDA_DRIVER", "OUT")}
    r = subprocess.run(["bash", "scripts/gpu-check.sh"], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300,
                       env={**env, "OUT": str(out), "INSTALL": "tree", "PYTHON": sys.executable,
                            "TCPROBE_NVDISASM": str(tmp_path / "no-nvdisasm"),
                            # the devices step's own limit (10 s) is for an idle GPU
                            # machine; a loaded 2-core runner can take longer
                            "DEVICES_S": "120"})
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stdout
    # the first line comes before the install and the preflight's imports
    assert lines[0].startswith("gpu-check: installing"), lines
    # each step says it runs before its line comes
    start = next(i for i, ln in enumerate(lines) if ln == "devices: running (up to 120s)")
    done = next(i for i, ln in enumerate(lines) if ln.startswith("devices ") and " ok " in ln)
    assert start < done, lines
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: no GPU: ") and "--stand-in" in errors[0]
    rows = [ln.split("\t") for ln in (out / "summary.tsv").read_text().splitlines()]
    assert [row[0] for row in rows] == ["install", "machine", "devices", "sass-check", "silicon"]
    assert rows[-1][1] == "skipped" and "need a GPU" in rows[-1][3]
    assert not any(row[1] == "fail" for row in rows), rows


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU: the check would run on it")
def test_cuda_backend_check_without_a_gpu_says_what_it_does_then_stops_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OUT")}
    r = subprocess.run(["bash", "scripts/gpu-cuda-backend.sh"], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300,
                       env={**env, "OUT": str(tmp_path / "out"), "PY": sys.executable})
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stdout
    assert lines[0].startswith("gpu-cuda-backend: installing"), lines
    assert len(lines) == 2 and lines[1].startswith("error: no CUDA GPU visible to "), lines
    assert "--host" in lines[1] and "Traceback" not in r.stdout


def _readme_first_example() -> str:
    block = README.split("## Python API", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "tcprobe.matmul(A, B, C, gpu=\"H100\")" in block
    return block


@pytest.mark.slow
def test_after_warm_the_readme_first_example_compiles_nothing(tmp_path):
    """The README's order: install, `tcprobe warm`, then its first example."""
    env = {**os.environ, "TCPROBE_CACHE": str(tmp_path / "cache"), "TCPROBE_HEARTBEAT": "0"}
    env.pop("NUMBA_CACHE_DIR", None)
    w = subprocess.run([sys.executable, "-m", "tcprobe", "warm", "--steps",
                        "matmul-bf16,matmul-f16"], capture_output=True, text=True, timeout=900,
                       env=env, cwd=tmp_path)
    assert w.returncode == 0, w.stderr
    (tmp_path / "example.py").write_text(_readme_first_example())
    r = subprocess.run([sys.executable, "example.py"], capture_output=True, text=True,
                       timeout=900, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "compiling" not in r.stderr, r.stderr


def _replay_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("replay_h200_emulate",
                                                  ROOT / "scripts" / "replay_h200_emulate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_h200_replay_reads_the_checkout_and_finding_nothing_is_an_error(tmp_path, monkeypatch,
                                                                           capsys):
    mod = _replay_script()
    assert mod.CHECKOUT == ROOT  # the script's checkout, wherever tcprobe is installed
    from tcprobe.atlas import replay

    assert len(replay.calls(mod.CHECKOUT)) == 195  # the committed H200 calls (README)
    assert mod.main(["--only", "no-such-call"]) == 2
    assert capsys.readouterr().err.startswith("error: --only no-such-call: no call")
    # a module that cannot be imported (tcprobe.torch without torch): one line, exit 2
    assert mod.main(["--module", "tcprobe.no_such_module", "--only", "bf16/random.matmul"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "error: No module named 'tcprobe.no_such_module'", err
    monkeypatch.setattr(mod, "CHECKOUT", tmp_path)  # a tree without the captures
    assert mod.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no committed H200 library calls under ")


@pytest.mark.skipif(importlib.util.find_spec("mmasim") is None, reason="MMA-Sim is not installed")
def test_devices_lists_mmasim_without_importing_torch():
    code = ("import sys; from click.testing import CliRunner; from tcprobe.cli import main; "
            "r = CliRunner().invoke(main, ['devices']); "
            "print(r.exit_code, 'MMA-Sim 2.1.1' in r.output, 'torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.split() == ["0", "True", "False"], r.stdout + r.stderr


def test_targets_names_its_sets_column_set():
    r = invoke("targets", "--set", "dmma")
    assert r.exit_code == 0, r.output
    header = next(ln for ln in r.stdout.splitlines() if "group" in ln)
    assert re.search(r"\bset\b", header) and "suite" not in header, header


def test_gemm_takes_a_bf16_c_with_c_format_as_fit_gemm_does(tmp_path):
    a = _npy(tmp_path, "a.npy", np.ones((4, 16), ml_dtypes.bfloat16))
    b = _npy(tmp_path, "b.npy", np.ones((16, 4), ml_dtypes.bfloat16))
    c = _npy(tmp_path, "c.npy", np.full((4, 4), 0.5, ml_dtypes.bfloat16))
    args = ("gemm", "--gpu", "H100", "--a", a, "--b", b, "--format", "bf16", "--c", c)
    line = one_error(invoke(*args))
    assert line.endswith("give --c-format (bf16, ...)"), line
    r = invoke(*args, "--c-format", "bf16", "--out", tmp_path / "d.npy")
    assert r.exit_code == 0, r.output
    # sixteen products of 1 plus C = 0.5: 16.5 in bf16 (C names D's type), 0x4184
    assert (np.load(tmp_path / "d.npy").view(np.uint16) == 0x4184).all()
    one_error(invoke("gemm", "--gpu", "H100", "--a", a, "--b", b, "--format", "bf16",
                     "--c-format", "bf16"), "--c-format needs --c FILE")


_CTRL_C_IN_EXEC = '''import importlib.abc, sys


class CtrlC(importlib.abc.MetaPathFinder):
    """Ctrl-C landing inside an exec() of source text (as one does inside a
    dataclass's or namedtuple's making while modules import), as the command
    line loads its command."""

    def find_spec(self, name, path, target=None):
        if name == "tcprobe.commands.targets":
            sys.meta_path.remove(self)
            exec("raise KeyboardInterrupt")


sys.meta_path.insert(0, CtrlC())
'''


@pytest.mark.slow
def test_ctrl_c_inside_an_exec_of_text_ends_130_not_killed_by_the_signal(tmp_path):
    """Campaign 12's open race: `python -m tcprobe gemm` interrupted 0.35-0.75 s in
    printed `interrupted`, then died by SIGINT (exit -2; 1 in 80 tries here). CPython
    notes a KeyboardInterrupt that leaves an exec() of text and, run as `-m`, kills
    itself with SIGINT at exit (strace: rt_sigaction(SIGINT, SIG_DFL), kill(self,
    SIGINT) after the line). Made certain here: the Ctrl-C raised in an exec."""
    from cli_helpers import sigint_at_default

    (tmp_path / "sitecustomize.py").write_text(_CTRL_C_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]), "TCPROBE_HEARTBEAT": "0"}
    r = subprocess.run([sys.executable, "-m", "tcprobe", "targets"], capture_output=True,
                       text=True, timeout=300, env=env, cwd=tmp_path,
                       preexec_fn=sigint_at_default)
    assert (r.returncode, r.stderr, r.stdout) == (130, "interrupted\n", "")


_FIRST_BLOCK = '''import sys
import tcprobe.torch
import torch

a = torch.ones(1, 16, dtype=torch.bfloat16)
b = torch.ones(16, 1, dtype=torch.bfloat16)
rep = tcprobe.torch.Report()
with tcprobe.torch.emulate(gpu="H100", report=rep):
    first = a @ b
dynamo_after_first = "torch._dynamo" in sys.modules
import torch._dynamo  # noqa: E402 - a process with torch.compile in play
with tcprobe.torch.emulate(gpu="H100", report=rep):
    second = a @ b
print(dynamo_after_first, hex(first.view(torch.int16).item()), hex(second.view(torch.int16).item()),
      rep.stats("mm").routed)
'''


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_the_first_emulate_block_imports_no_dynamo_and_routes_with_dynamo_loaded(tmp_path):
    """torch wraps a dispatch mode's __torch_dispatch__ in _disable_dynamo, whose first
    call imported torch._dynamo: 3-5 s of the first block, silent. emulate keeps Dynamo
    out itself, only once the process has loaded it. 16 products of 1.0 x 1.0: 16.0,
    bf16 0x4180, both ways. Where tcprobe.torch starts torch's import it says so first."""
    torch_note = "note: tcprobe.torch is importing torch"
    for first in ("import tcprobe.torch", "import torch"):  # who starts torch's import
        (tmp_path / "block.py").write_text(_FIRST_BLOCK.replace("import sys", f"import sys\n{first}"))
        r = subprocess.run([sys.executable, "block.py"], capture_output=True, text=True,
                           timeout=600, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["False", "0x4180", "0x4180", "2"]
        notes = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert all(ln.startswith("note: ") for ln in notes), r.stderr
        # docs/torch.md's block sat 4-5 s blank while tcprobe.torch imported torch: a
        # note first (a timer's note waited behind libtorch's loading, which holds Python)
        said_first = bool(notes) and notes[0].startswith(torch_note)
        assert said_first == (first == "import tcprobe.torch"), r.stderr
        assert sum(ln.startswith(torch_note) for ln in notes) <= 1


def _timeless(x):
    """A ladder's JSON without its timings (which differ run to run)."""
    if isinstance(x, dict):
        return {k: _timeless(v) for k, v in x.items() if "second" not in k}
    return [_timeless(v) for v in x] if isinstance(x, list) else x


def _ladder(*args):
    import json

    r = invoke("ladder", "--format", "bf16", "--device", "sim:h100", "--steps", "slice,zero",
               "--json", "-", *args)
    assert r.exit_code == 0, r.output
    return _timeless(json.loads(r.stdout)), r.stderr


def _shown(r_help) -> list[str]:
    return re.findall(r"^  ((?:-[\w-]+)(?:, -[\w-]+)*)", r_help.stdout, re.M)


def test_ladder_takes_cases_and_show_as_validate_score_and_replay_name_them():
    """One idea, one name: ladder's --validate (the cases a model is checked on:
    --cases in validate and smoke) and --evidence (cases shown: --show in score and
    replay). The old spellings give the same run; --help shows the one name."""
    new, new_err = _ladder("--cases", "200", "--show", "0")
    old, old_err = _ladder("--validate", "200", "--evidence", "0")
    assert new == old and new["validation"] is not None
    assert _ladder("--cases", "0")[0]["validation"] != new["validation"]
    assert len(_ladder("--show", "3")[1].splitlines()) > len(new_err.splitlines())
    opts = _shown(invoke("ladder", "--help"))
    assert "--cases" in opts and "--show" in opts, opts
    assert "--validate" not in opts and "--evidence" not in opts, opts
    one_error(invoke("ladder", "--format", "bf16", "--cases", "10", "--validate", "20"),
              "given 2 times")


def test_gemm_takes_m_n_k_as_gemm_probe_does_and_random_still_works(tmp_path):
    """gemm drew its operands with --random MxNxK where gemm-probe and
    batch-invariance name a product's shape --m, --n, --k: the same words both
    ways; --random is hidden, named in --m's help; a part of the shape, or both
    spellings, is one error line."""
    words = []
    for i, shape in enumerate((["--m", "3", "--n", "5", "--k", "40"], ["--random", "3x5x40"])):
        out = tmp_path / f"d{i}.npy"
        r = invoke("gemm", *shape, "--format", "bf16", "--gpu", "H100", "--seed", "7",
                   "--out", out)
        assert r.exit_code == 0, r.output
        words.append(np.load(out).view(np.uint32))
    assert words[0].shape == (3, 5) and np.array_equal(words[0], words[1])
    r = invoke("gemm", "--help")
    opts = _shown(r)
    assert "--m" in opts and "--k" in opts and "--random" not in opts, opts
    assert "--random MxNxK" in " ".join(r.stdout.split())
    one_error(invoke("gemm", "--m", "3", "--n", "5", "--format", "bf16", "--gpu", "H100"),
              "--k", "give all three")
    one_error(invoke("gemm", "--m", "3", "--n", "5", "--k", "8", "--random", "3x5x8",
                     "--format", "bf16", "--gpu", "H100"), "not both")
    one_error(invoke("gemm", "--m", "3", "--n", "5", "--k", "8", "--gpu", "H100"),
              "--m/--n/--k needs --format")


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "2000"],
    ["validate", "--targets", "blog", "--device", "sim:b200", "--cases", "200", "--shard", "40/40",
     "--suite", "raw"],
])
def test_validate_and_campaign_in_a_pipe_write_no_empty_line(tmp_path, args):
    """Every README and docs validate line began its table with an empty stderr line
    in a pipe (rich's Progress.stop prints one off a terminal), as gemm did."""
    r = subprocess.run([sys.executable, "-m", "tcprobe", *args, "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path,
                       env={**os.environ, "TCPROBE_HEARTBEAT": "0"})
    assert r.returncode == 0, r.stderr
    assert "" not in r.stderr.splitlines(), repr(r.stderr[:300])
    assert r.stdout.strip()  # its table, after no empty line


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_the_torch_gemm_runner_says_what_it_does_before_torch_imports(tmp_path):
    """docs/library-gemm.md's `python -m tcprobe.capture.torch_gemm DIR --fit` showed
    nothing for 3.4 s (torch's import) on a machine with no GPU, then its error."""
    r = invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", tmp_path / "p",
               "--m", "4", "--n", "4", "--k", "64")
    assert r.exit_code == 0, r.output
    p = subprocess.Popen([sys.executable, "-m", "tcprobe.capture.torch_gemm", str(tmp_path / "p"),
                          "--fit"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()  # comes before torch is imported
    rest, _ = p.communicate(timeout=300)[::-1]
    assert first.startswith("running 10 bf16 cases of "), first
    if p.returncode == 2:  # no GPU here: one error line after it
        assert rest.splitlines() == ["error: torch sees no CUDA GPU"], rest


_NO_MMASIM = '''import importlib.util, sys
find = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name == "mmasim" else find(name, *a)
from tcprobe.devices.base import DeviceError
from tcprobe.devices.mmasim import _import
try:
    _import()
except DeviceError as e:
    print(e)
print("torch" in sys.modules)
'''


@pytest.mark.slow
def test_an_mmasim_device_without_mmasim_is_refused_before_torch_imports(tmp_path):
    """docs/amd.md's `validate --device mmasim:CDNA1:...` on a machine with torch but
    no MMA-Sim imported torch (4 s) before saying MMA-Sim is not installed."""
    r = subprocess.run([sys.executable, "-c", _NO_MMASIM], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["MMA-Sim is not installed (pip install 'tcprobe[peer]', "
                                     "which brings mmasim 2.1.1 and torch)", "False"], r.stdout
