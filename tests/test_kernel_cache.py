"""Compiled kernels load from numba's disk cache in a new process (no
recompiles), and that cache lives in a folder only its user can write."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = Path(__file__).with_name("kernel_cache_workload.py")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "TCPROBE_CACHE")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _run(env, cwd) -> dict:
    out = subprocess.run([sys.executable, str(WORKLOAD)], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line
                 and line.split(" ", 1)[0] in ("compiles", "words"))
    compiled = [line.split(" ", 1)[1] for line in out.stdout.splitlines() if line.startswith("compiled ")]
    return {"compiles": int(lines["compiles"]), "words": lines["words"], "compiled": compiled,
            "stderr": out.stderr}


@pytest.mark.slow
def test_a_second_process_compiles_nothing(tmp_path):
    """Every kernel form (GEMM fixed-point and integer, block-scaled, lane,
    core-loop and plain engine kernels, f64) compiles in the first process
    and loads from the disk cache in the second: numba's compile events are
    counted, not seconds."""
    env = _env(TCPROBE_CACHE=str(tmp_path / "cache"))
    first = _run(env, tmp_path)
    assert first["compiles"] > 10  # the workload did compile (the count can fail)
    assert any(name.endswith("kernel") for name in first["compiled"])
    second = _run(env, tmp_path)
    assert second["compiles"] == 0, f"recompiled in a new process: {second['compiled']}"
    assert second["words"] == first["words"]
    assert (tmp_path / "cache" / "numba").is_dir()
    assert not list((ROOT / "models").glob("__pycache__/*.nbi"))  # nothing next to the sources


def _folder(env, cwd) -> tuple[str, str]:
    code = ("import warnings; warnings.simplefilter('always');"
            "from tcprobe.models import kernel_cache as k; print(k.FOLDER); print(k.NOTE)")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    folder, note = out.stdout.splitlines()[:2]
    return folder, note


def test_the_cache_folder_is_the_users_own(tmp_path):
    folder, note = _folder(_env(TCPROBE_CACHE=str(tmp_path / "c")), tmp_path)
    assert folder == str(tmp_path / "c" / "numba") and note == "None"
    assert (os.stat(folder).st_mode & 0o077) == 0  # made 0700


def test_numba_cache_dir_is_the_users_choice(tmp_path):
    folder, note = _folder(_env(NUMBA_CACHE_DIR=str(tmp_path / "mine")), tmp_path)
    assert folder == str(tmp_path / "mine") and note == "None"


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("how", ["others-may-write", "not-a-folder", "symlink"])
def test_an_unusable_folder_falls_back_and_says_so(tmp_path, how):
    base = tmp_path / "c"
    base.mkdir()
    if how == "others-may-write":
        (base / "numba").mkdir()
        os.chmod(base / "numba", 0o777)
    elif how == "not-a-folder":
        (base / "numba").write_text("x")
    else:
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        (base / "numba").symlink_to(tmp_path / "elsewhere")
    env = _env(TCPROBE_CACHE=str(base), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    folder, note = _folder(env, tmp_path)
    assert folder.startswith(str(tmp_path / "tmp")), folder
    assert str(base / "numba") in note and "TCPROBE_CACHE" in note
    # the CLI says it once, as a note line
    out = subprocess.run([sys.executable, "-m", "tcprobe", "run-case", "--datapath",
                          "mma.bf16.f32.k16", "--device", "sim:h100", "--a", "0x3f80", "--b", "0x3f80",
                          "--c", "0"], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    notes = [line for line in out.stderr.splitlines() if line.startswith("note: compiled kernels")]
    assert len(notes) == 1, out.stderr
    # a cold run says what it compiles, once; the next run compiles nothing and says nothing
    compiling = [line for line in out.stderr.splitlines() if line.startswith("note: compiling")]
    assert compiling == [f"note: compiling kernels for mma.bf16.f32.k16 (first run only; later "
                         f"runs load them from {folder})"], out.stderr
    again = subprocess.run(out.args, env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == out.returncode and "note: compiling" not in again.stderr


def test_the_source_stamp_digests_the_kernels_folder_too(tmp_path, monkeypatch):
    """The stamp that keys every compiled kernel reads models/*.py and the
    subfolders (the engine's kernels sit in models/kernels/): an edit to a
    kernel module, or to a module beside it, changes it."""
    import shutil

    from tcprobe.models.kernels import kernel_stamp

    names = {p.relative_to(kernel_stamp.ROOT).as_posix() for p in kernel_stamp.sources()}
    assert {"engine.py", "kernels/core.py", "kernels/lane_kernel.py",
            "kernels/kernel_stamp.py"} <= names
    copy = tmp_path / "models"
    shutil.copytree(kernel_stamp.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kernel_stamp, "ROOT", copy)
    base = kernel_stamp._digest()
    assert base == kernel_stamp.SOURCE_STAMP  # the same sources, the same stamp
    core = copy / "kernels" / "core.py"
    core.write_text(core.read_text() + "\n# an edit\n")
    edited = kernel_stamp._digest()
    assert edited != base
    engine = copy / "engine.py"
    engine.write_text(engine.read_text() + "\n# an edit\n")
    assert kernel_stamp._digest() not in (base, edited)


MATMUL_ONCE = """
import numpy as np, tcprobe
a = np.ones((8, 16), np.float32)
tcprobe.matmul(a, a.T.copy(), gpu="H100", dtype="bfloat16", progress={progress})
"""


@pytest.mark.slow
def test_the_first_matmul_says_it_is_compiling(tmp_path):
    """tcprobe.matmul's cold first call is no blank screen: one note a
    datapath on stderr; progress=False keeps it silent; a warm run says nothing."""
    env = _env(TCPROBE_CACHE=str(tmp_path / "c"))
    quiet = subprocess.run([sys.executable, "-c", MATMUL_ONCE.format(progress=False)], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert quiet.returncode == 0 and "note: compiling" not in quiet.stderr, quiet.stderr
    env = _env(TCPROBE_CACHE=str(tmp_path / "d"))
    cold = subprocess.run([sys.executable, "-c", MATMUL_ONCE.format(progress=None)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert cold.returncode == 0, cold.stderr
    assert any(line.startswith("note: compiling kernels for wgmma.tf32.f32.k8")
               for line in cold.stderr.splitlines()), cold.stderr
    warm = subprocess.run(cold.args, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert warm.returncode == 0 and "note: compiling" not in warm.stderr, warm.stderr
