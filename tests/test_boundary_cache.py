"""Issue 26, item 7: numba's kernel cache is verified like the cubin cache.
The folder only its user may write (NUMBA_CACHE_DIR too), and every entry
inside: a link, another user's file, or one others may write (where others
may enter) is removed before numba reads the folder, so that kernel is
compiled again, never unpickled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcprobe.models import kernel_cache

ROOT = Path(__file__).resolve().parent.parent


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "TCPROBE_CACHE")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _folder(env, cwd) -> tuple[str, str]:
    code = ("import warnings; warnings.simplefilter('always');"
            "from tcprobe.models import kernel_cache as k; print(k.FOLDER); print(k.NOTE)")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    folder, note = out.stdout.splitlines()[:2]
    return folder, note


def _planted(folder: Path, tmp_path: Path) -> dict[str, Path]:
    """Entries a hostile user could have left in a cache folder."""
    sub = folder / "models_0123"
    sub.mkdir(parents=True)
    (sub / "good.nbi").write_bytes(b"kept")
    bait = tmp_path / "bait.nbi"
    bait.write_bytes(b"a pickle that runs code")
    (sub / "link.nbi").symlink_to(bait)
    (folder / "linkdir").symlink_to(tmp_path)
    loose = sub / "loose.nbc"
    loose.write_bytes(b"others may write me")
    os.chmod(loose, 0o666)
    return {"good": sub / "good.nbi", "link": sub / "link.nbi", "linkdir": folder / "linkdir",
            "loose": loose, "bait": bait}


def test_links_in_the_cache_are_removed_before_numba_reads_it(tmp_path):
    folder = tmp_path / "c" / "numba"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder, 0o700)
    p = _planted(folder, tmp_path)
    got, note = _folder(_env(TCPROBE_CACHE=str(tmp_path / "c")), tmp_path)
    assert got == str(folder) and note == "None"
    assert not os.path.lexists(p["link"]) and not os.path.lexists(p["linkdir"])
    assert p["good"].exists() and p["bait"].exists()  # the link's target is left alone
    assert p["loose"].exists()  # inside a 0700 folder no one else can reach it


def test_a_numba_cache_dir_others_may_enter_is_swept_strictly(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    os.chmod(folder, 0o755)  # others may enter, not write
    p = _planted(folder, tmp_path)
    got, note = _folder(_env(NUMBA_CACHE_DIR=str(folder)), tmp_path)
    assert got == str(folder) and note == "None"
    assert not os.path.lexists(p["link"]) and not p["loose"].exists() and p["good"].exists()


def test_a_numba_cache_dir_others_may_write_is_not_used(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o777)
    (tmp_path / "tmp").mkdir()
    got, note = _folder(_env(NUMBA_CACHE_DIR=str(folder), TMPDIR=str(tmp_path / "tmp")), tmp_path)
    assert got.startswith(str(tmp_path / "tmp")), got
    assert str(folder) in note and "may be written by other users" in note
    assert "NUMBA_CACHE_DIR" in note


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_another_users_file_is_removed(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    theirs = folder / "theirs.nbi"
    theirs.write_bytes(b"x")
    os.chown(theirs, 12345, 12345)
    assert kernel_cache.sweep(folder) is None
    assert not theirs.exists()


def test_an_entry_that_cannot_be_removed_makes_the_folder_unusable(tmp_path, monkeypatch):
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    (folder / "link").symlink_to(tmp_path)

    def refuse(self, *a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refuse)
    why = kernel_cache.sweep(folder)
    assert why is not None and "symbolic link" in why and "cannot be removed" in why
