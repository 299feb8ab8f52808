"""scripts/gpu-check.sh end to end on the stand-in driver, and the pieces it
leans on: the stand-in hook of the CUDA device, the driver's GPU names, the
one-line errors."""

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings")

from tcprobe.console import fail  # noqa: E402
from tcprobe.devices.base import DeviceError  # noqa: E402
from tcprobe.devices.registry import open_device  # noqa: E402
from tcprobe.models.datapath import Datapath  # noqa: E402
from tcprobe.models.profiles import profile_for_gpu  # noqa: E402
from tcprobe.models.registry import auto  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gpu-check.sh"


def _files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.slow
def test_stand_in_check_runs_every_step_and_returns_what_comes_back(tmp_path, fresh_install):
    """As a lent machine runs it: a non-editable install (the fresh venv's
    Python), pip offline, started from the checkout's root, where the tree's
    tcprobe/ must not shadow the install."""
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("TCPROBE_CUDA_DRIVER", "OUT", "PYTHONPATH")}
    r = subprocess.run(["bash", "scripts/gpu-check.sh", "--stand-in"], cwd=ROOT,
                       env={**env, "OUT": str(out), "PYTHON": str(fresh_install), "INSTALL": "pip",
                            "PIP_NO_INDEX": "1"},
                       capture_output=True, text=True, timeout=2400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    # A lent machine returns at most 8 files, no more than 2 folders down: two come back.
    files = _files_under(out)
    assert sorted(p.name for p in files) == ["gpu-check.tgz", "summary.tsv"]
    assert all(len(p.relative_to(out).parts) <= 3 for p in files)
    rows = [line.split("\t") for line in (out / "summary.tsv").read_text().splitlines()]
    assert all(len(row) == 4 for row in rows)
    steps = {name: (status, figure) for name, status, _, figure in rows}
    assert len(steps) >= 6, rows
    assert all(s == "ok" for n, (s, _) in steps.items() if not n.startswith("library-")), rows
    # torch's GEMMs need a real GPU: the stand-in skips them, saying so
    for fmt in ("bf16", "f16", "tf32", "e4m3"):
        assert steps[f"library-{fmt}"] == ("skipped", "the stand-in driver runs no torch GEMM")
    for name in ("install", "machine", "devices", "sass-check", "replay-h200", "ladder-mma-bf16",
                 "ladder-wgmma-bf16", "ladder-mma-e4m3", "validate-mma-bf16",
                 "validate-wgmma-bf16", "smoke", "gpu-tests"):
        assert name in steps
    assert "STAND-IN" in steps["install"][1] and "STAND-IN" in steps["devices"][1]
    assert "(pip)" in steps["install"][1] and "cores" in steps["machine"][1]
    assert "NVIDIA H200 cc 9.0 sm_90a" in steps["devices"][1]
    # The recorded H200 words come back unchanged through the CUDA device code.
    assert " 0 differ" in steps["replay-h200"][1] and "of 8 captures" in steps["replay-h200"][1]
    assert "HGMMA" in steps["sass-check"][1] and "0 missing" in steps["sass-check"][1]
    assert "F=25 L=16 floor=-133 rz" in steps["ladder-mma-bf16"][1]
    assert "h100 0" in steps["validate-wgmma-bf16"][1]
    assert "skipped" in steps["gpu-tests"][1] and "failed" not in steps["gpu-tests"][1]
    with tarfile.open(out / "gpu-check.tgz") as tgz:
        names = set(tgz.getnames())
        env_txt = tgz.extractfile("gpu-check/env.txt").read().decode()
    for name in ("devices.json", "sass-check.json", "replay-h200.json", "replay-h200.log",
                 "ladder-wgmma-e4m3.json", "smoke.json", "validate-mma-bf16/report.json",
                 "gpu-tests.log"):
        assert f"gpu-check/{name}" in names
    assert "STAND-IN driver" in env_txt and "pip: cuda-bindings" in env_txt
    assert "pip: nvidia-cuda-nvrtc" in env_txt


def _check(tmp_path, **env_extra):
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TCPROBE_CUDA_DRIVER", "OUT")}
    r = subprocess.run(["bash", str(SCRIPT), "--stand-in"], capture_output=True, text=True, timeout=600,
                       cwd=ROOT, env={**env, "OUT": str(out), "INSTALL": "tree", **env_extra})
    rows = [line.split("\t") for line in (out / "summary.tsv").read_text().splitlines()]
    return r, rows


@pytest.mark.slow
def test_a_step_past_its_limit_is_a_timeout_not_a_fail(tmp_path):
    """SASS_CHECK_S sets one step's limit; a step that runs out of time says
    timeout (no verdict). TOTAL_S stops the rest. (sass-check compiles every
    kernel of the table through NVRTC: seconds, never within 1 s; the devices
    step, once the slow one, now answers within a second.)"""
    r, rows = _check(tmp_path, SASS_CHECK_S="1", TOTAL_S="12")
    assert r.returncode == 1, r.stdout + r.stderr
    status = {row[0]: row[1] for row in rows}
    assert status["devices"] == "ok" and status["sass-check"] == "timeout", rows
    assert "fail" not in status.values(), rows
    assert "1s limit (no verdict)" in dict((row[0], row[3]) for row in rows)["sass-check"]
    assert status["smoke"] == "skipped", rows  # past the 12 s budget


@pytest.mark.slow
def test_without_nvdisasm_sass_check_is_skipped_and_the_rest_runs(tmp_path):
    r, rows = _check(tmp_path, TCPROBE_NVDISASM=str(tmp_path / "no-nvdisasm"), TOTAL_S="60")
    status = {row[0]: (row[1], row[3]) for row in rows}
    assert status["install"][0] == "ok", rows
    assert status["sass-check"][0] == "skipped" and "no nvdisasm" in status["sass-check"][1]
    assert status["devices"][0] == "ok", rows


def test_a_limit_that_is_not_a_number_is_one_error_line(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "OUT": str(tmp_path / "o"), "LIMIT_SCALE": "x"})
    assert r.returncode == 2 and r.stderr.strip() == "error: LIMIT_SCALE must be a whole number, not 'x'"


def test_a_missing_python_stops_the_check_in_one_line(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "OUT": str(out), "PYTHON": "no-such-python3"})
    assert r.returncode == 2
    errors = [x for x in r.stderr.splitlines() if x.strip()]
    assert errors == ["error: missing: no-such-python3"]
    assert (out / "summary.tsv").read_text() == "install\tfail\t0\tno no-such-python3 on PATH\n"
    assert sorted(p.name for p in _files_under(out)) == ["gpu-check.tgz", "summary.tsv"]


def test_an_unknown_argument_is_one_error_line(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT), "--gpu"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "OUT": str(tmp_path / "o")})
    assert r.returncode == 2 and r.stderr.startswith("error: unknown argument --gpu")
    assert not (tmp_path / "o").exists()


def test_cuda_device_opens_the_stand_in_driver_from_the_environment(monkeypatch):
    monkeypatch.setenv("TCPROBE_CUDA_DRIVER", "standin")
    dev = open_device("cuda")
    try:
        info = dev.info()
        assert (info["gpu"], info["compute_capability"], info["arch"]) == ("NVIDIA H200", "9.0", "sm_90a")
        assert "no GPU ran" in info["stand_in_driver"] and info["driver_cuda_version"] == "13.0"
        # fp8 mma.sync on Hopper runs as the compiler's emulation: the stand-in's
        # arithmetic is the model --model auto picks for the GPU's own name.
        dp = Datapath.parse("mma.e4m3.f16.k32")
        assert dev.supports(dp)
    finally:
        dev.close()
    monkeypatch.setenv("TCPROBE_CUDA_DRIVER", "libcudaa")
    with pytest.raises(DeviceError, match="TCPROBE_CUDA_DRIVER='libcudaa'"):
        open_device("cuda")


def test_cli_error_on_an_unknown_driver_choice_is_one_line():
    env = {**os.environ, "TCPROBE_CUDA_DRIVER": "nope"}
    r = subprocess.run([sys.executable, "-m", "tcprobe", "replay", "--capture",
                        str(ROOT / "tests/data/khattak-mikaitis-2025/H200/bf16"), "--device", "cuda"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "error: TCPROBE_CUDA_DRIVER='nope': the CUDA driver is 'libcuda' (the default) or 'standin'"]


@pytest.mark.parametrize("driver_name,profile", [
    ("NVIDIA H200", "h100"), ("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA A100-SXM4-80GB", "a100"),
    ("NVIDIA GeForce RTX 4090", "ada"), ("NVIDIA L40S", "ada"), ("Tesla V100-SXM2-16GB", "v100"),
    ("NVIDIA B200", "b200-hmma"), ("H200", "h100"),
])
def test_the_driver_name_of_a_gpu_finds_its_profile(driver_name, profile):
    assert profile_for_gpu(driver_name).name == profile


def test_auto_on_the_driver_name_picks_the_fp8_emulation():
    assert auto(Datapath.parse("mma.e4m3.f16.k32"), "NVIDIA H200").name == "hopper-fp8-emulated"
    assert auto(Datapath.parse("wgmma.e4m3.f32.k32"), "NVIDIA H200").name == "h100"
    with pytest.raises(ValueError, match="no profile for GPU 'NVIDIA H2000'"):
        profile_for_gpu("NVIDIA H2000")


def test_error_lines_print_square_brackets_as_text(capsys):
    with pytest.raises(SystemExit) as e:
        fail("needs pip install 'tcprobe[cuda]'")
    assert e.value.code == 2
    assert "pip install 'tcprobe[cuda]'" in capsys.readouterr().err


def test_from_the_tree_with_no_time_left_every_step_is_skipped(tmp_path):
    """INSTALL=tree: the package-dir layout mapped by links outside the tree;
    with TOTAL_S=0 each step is recorded as skipped and the check exits 1."""
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TCPROBE_CUDA_DRIVER")}
    r = subprocess.run(["bash", str(SCRIPT), "--stand-in"], capture_output=True, text=True, timeout=300,
                       env={**env, "OUT": str(out), "INSTALL": "tree", "TOTAL_S": "0"})
    assert r.returncode == 1, r.stdout + r.stderr
    rows = [line.split("\t") for line in (out / "summary.tsv").read_text().splitlines()]
    assert rows[0][:2] == ["install", "ok"] and "(tree)" in rows[0][3]
    assert rows[1][:2] == ["machine", "ok"]
    assert len(rows) >= 15 and all(row[1] == "skipped" for row in rows[2:])
    assert rows[2][3] == "the 0s budget is spent"


def test_library_figure_names_the_schedules_and_what_is_unexplained(tmp_path):
    """The summary line of a library step, from a torch_gemm fits.json."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("figs", ROOT / "scripts" / "gpu_check_figures.py")
    figs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figs)
    cublas = {"instr": None, "acc": None, "k_block": None, "k_order": "forward", "split_k": 1,
              "split_kind": "serial", "reduction": "forward", "promote": None, "c": "epilogue",
              "fused": True, "out": None, "saturate": None}
    fits = [{"case": "random", "op": "matmul", "explained": True, "mismatches": 0,
             "elements": 4096, "schedules": [cublas]},
            {"case": "random", "op": "scaled_mm", "explained": True, "mismatches": 0,
             "elements": 4096, "schedules": [{**cublas, "promote": 4, "instr": "wgmma"}]},
            {"case": "cancel", "op": "linear", "explained": False, "mismatches": 7,
             "elements": 4096, "schedules": []},
            {"case": "nan_c", "op": "addmm", "error": "D: no words"}]
    path = tmp_path / "fits.json"
    path.write_text(json.dumps(fits))
    text = figs.figure("library", str(path))
    assert text == ("2 of 4 library calls explained; matmul: cublas; "
                    "scaled_mm: instr=wgmma,promote=4; not explained: cancel.linear 7 of 4096")
    path.write_text(json.dumps([{"case": "splits", "op": "matmul", "bounds": [64, 128]}] + fits))
    assert figs.figure("library", str(path)).startswith(
        "2 of 4 library calls explained (splits start at K = 64, 128); matmul: cublas")
