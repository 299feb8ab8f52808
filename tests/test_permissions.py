"""Files and folders this user may not read: one ``error:`` line that says
so (a read, not a write: no "choose another --out"), exit 2; a capture
folder below the root that cannot be listed is an error, never silently left
out of a score. The guest that runs the suite is root, which may read
anything, so the in-process tests stand the refusal in for the kernel; the
last test runs commands as ``nobody`` where the machine lets it."""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import invoke, one_error

KM = Path(__file__).parent / "data" / "khattak-mikaitis-2025"


def _deny(monkeypatch, path: Path):
    """Make ``path`` read as this user may not read it: opening or listing it
    fails with EACCES and os.access says no (as for a mode-000 file of
    another user)."""
    real_open, real_access, real_scandir = open, os.access, os.scandir
    denied = os.fspath(path)

    def refuse(p):
        if os.fspath(p) == denied:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(p))

    def fake_open(p, *a, **k):
        if isinstance(p, (str, bytes, os.PathLike)):
            refuse(p)
        return real_open(p, *a, **k)

    def fake_scandir(p="."):
        refuse(p)
        return real_scandir(p)

    def fake_access(p, mode, *a, **k):
        return False if os.fspath(p) == denied else real_access(p, mode, *a, **k)

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)  # pathlib's read_text and read_bytes
    monkeypatch.setattr(os, "access", fake_access)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    monkeypatch.setattr(os, "listdir", lambda p=".": (refuse(p), real_listdir(p))[1])


real_listdir = os.listdir


def test_an_unreadable_profile_is_a_read_refusal(tmp_path, monkeypatch):
    prof = tmp_path / "p.toml"
    prof.write_text('window_bits = 20\nfamilies = ["mma"]\n')
    _deny(monkeypatch, prof)
    r = invoke("validate", "--device", f"sim:{prof}", "--format", "bf16", "--cases", "100")
    line = one_error(r, "p.toml", "permission denied", "may not read it", notes=True)
    assert "--out" not in line


@pytest.mark.skipif(not KM.is_dir(), reason="tests/data/khattak-mikaitis-2025 is absent")
def test_a_capture_folder_that_cannot_be_listed_is_not_left_out(tmp_path, monkeypatch):
    root = tmp_path / "km"
    shutil.copytree(KM, root)
    gpus = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert len(gpus) >= 2
    _deny(monkeypatch, root / gpus[0])
    r = invoke("score", "--capture", root)
    one_error(r, gpus[0], "permission denied", "may not read it", notes=True)
    assert "scores" not in r.stdout  # no table of the folders that could be read


@pytest.mark.skipif(not KM.is_dir(), reason="tests/data/khattak-mikaitis-2025 is absent")
def test_the_api_refuses_a_capture_folder_it_cannot_list(tmp_path, monkeypatch):
    """tcprobe.capture.load: CaptureError (a ValueError), never a raw
    PermissionError from the walk (campaign 8, case H641, a link to /)."""
    from tcprobe.capture import CaptureError, load

    root = tmp_path / "km"
    shutil.copytree(KM, root)
    denied = root / sorted(p.name for p in root.iterdir() if p.is_dir())[0]
    _deny(monkeypatch, denied)
    with pytest.raises(CaptureError) as e:
        load(root)
    assert str(e.value) == (f"{denied}: permission denied: this user may not read it (or a "
                            "folder above it); fix the permissions, or give another path")


def _nobody_can_run_tcprobe() -> str | None:
    """Why commands cannot run as nobody here, or None."""
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root, to run a command as nobody"
    if shutil.which("runuser") is None:
        return "needs runuser"
    try:
        r = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c",
                            "import tcprobe"], capture_output=True, timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError) as e:
        return f"runuser failed: {e}"
    if r.returncode != 0:
        return "nobody may not run this interpreter or import tcprobe (e.g. a private home)"
    return None


@pytest.mark.slow
def test_unreadable_and_unwritable_paths_as_nobody(tmp_path):
    why = _nobody_can_run_tcprobe()
    if why:
        pytest.skip(why)
    import numpy as np

    tmp_path.chmod(0o777)
    np.save(tmp_path / "a.npy", np.ones((16, 16), np.float32))
    (tmp_path / "p.toml").write_text('window_bits = 20\nfamilies = ["mma"]\n')
    for name in ("a.npy", "p.toml"):
        (tmp_path / name).chmod(0o000)
    np.save(tmp_path / "b.npy", np.ones((16, 16), np.float32))
    (tmp_path / "b.npy").chmod(0o644)
    (tmp_path / "ro").mkdir(mode=0o555)
    (tmp_path / "ro").chmod(0o555)
    env = {**os.environ, "HOME": str(tmp_path), "TCPROBE_HEARTBEAT": "0"}
    cases = [
        (["validate", "--device", "sim:p.toml", "--format", "bf16", "--cases", "100"],
         "p.toml: permission denied: this user may not read it"),
        (["gemm", "--a", "a.npy", "--b", "b.npy", "--gpu", "H100"], "not readable"),
        (["gemm", "--a", "b.npy", "--b", "b.npy", "--gpu", "H100", "--out", "ro/d.npy"],
         "ro/d.npy: permission denied: choose a folder you may write"),
        (["validate", "--device", "sim:h100", "--format", "bf16", "--cases", "100", "--out",
          "ro/v"], "ro/v: permission denied"),
    ]
    for args, needle in cases:
        r = subprocess.run(["runuser", "-u", "nobody", "--", "env", *[f"{k}={v}" for k, v in
                            env.items() if k in ("HOME", "TCPROBE_HEARTBEAT", "PATH")],
                            sys.executable, "-m", "tcprobe", *args], capture_output=True,
                           text=True, timeout=300, cwd=tmp_path)
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
        assert r.returncode == 2 and len(errors) == 1 and needle in errors[0], (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert os.listdir(tmp_path / "ro") == []
