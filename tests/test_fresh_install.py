"""The README as a new user meets it: after the user's install (not
editable, in a fresh venv), its Python examples, the worked example and the
main commands run as written, from the checkout's root and from any other
folder (the checkout's tcprobe/ must never shadow the install half-way)."""

import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import HWDATA

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)

pytestmark = pytest.mark.slow


def _env():
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}


def _run(cmd, cwd, stdin=None, timeout=900):
    r = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=_env(),
                       timeout=timeout)
    assert r.returncode == 0, f"{cmd} in {cwd}: {r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr
    return r


def test_the_readme_has_python_examples():
    assert len(PYTHON_BLOCKS) >= 2 and "tcprobe.matmul" in PYTHON_BLOCKS[0]


@pytest.mark.parametrize("where", ["checkout root", "another folder"])
@pytest.mark.parametrize("block", range(len(PYTHON_BLOCKS)))
def test_readme_python_examples_run_as_written(fresh_install, tmp_path, where, block):
    cwd = ROOT if where == "checkout root" else tmp_path
    _run([str(fresh_install), "-"], cwd, stdin=PYTHON_BLOCKS[block])


@pytest.mark.parametrize("where", ["checkout root", "examples", "another folder"])
def test_the_worked_example_runs_from_anywhere(fresh_install, tmp_path, where):
    cwd = {"checkout root": ROOT, "examples": ROOT / "examples", "another folder": tmp_path}[where]
    r = _run([str(fresh_install), str(ROOT / "examples" / "multiword_gemm.py"), "--k", "64",
              "--size", "8"], cwd)
    assert "bf16x3" in r.stdout and "A100" in r.stdout


def test_the_main_job_runs_from_another_folder(fresh_install, tmp_path):
    tcprobe = fresh_install.parent / "tcprobe"
    r = _run([str(tcprobe), "ladder", "--format", "bf16", "--json", "-"], tmp_path)
    assert '"fingerprint"' in r.stdout
    assert "simulated" in (r.stdout + r.stderr).lower()


@pytest.mark.skipif(not HWDATA.is_dir(), reason="../shared/hwdata is absent (published captures)")
def test_score_of_the_published_captures_runs_from_the_checkout_root(fresh_install):
    r = _run([str(fresh_install), "-m", "tcprobe", "score", "--capture",
              "../shared/hwdata/khattak-mikaitis-2025", "--json", "-"], ROOT)
    assert '"results"' in r.stdout
