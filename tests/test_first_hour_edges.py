"""Issue 36, the first hour: the README's first install line is one that
works, the ladder prints no empty "(no cases)" tables, and the README's
validate command run twice exits 0 both times and leaves no lock file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcprobe.capture import CaptureError
from tcprobe.capture.lock import LOCK_NAME, hold_out_folder
from tcprobe.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_the_readmes_first_install_line_works_from_a_checkout():
    readme = (ROOT / "README.md").read_text()
    first = re.search(r"^\s+python3 -m pip install (\S+)", readme, re.M)
    assert first and first.group(1) == ".", first and first.group(0)
    assert "pip install tcprobe " not in readme and not re.search(r"pip install tcprobe\s*$",
                                                                   readme, re.M)


def test_the_ladder_prints_no_empty_tables():
    r = CliRunner().invoke(main, ["ladder", "--device", "sim:h100", "--format", "bf16"])
    assert r.exit_code == 0, r.output
    assert "(no cases)" not in r.output
    # a skipped step is its two heading lines
    assert re.search(r"\d+/\d+ sparsity: .*\nskipped: wgmma\.bf16\.f32\.k16 is not sparse\n",
                     r.output)


def test_the_readmes_validate_command_twice(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["validate", "--format", "bf16", "--device", "sim:b200", "--cases", "2000"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    folder = tmp_path / "out" / "validate" / "tcgen05.f16.bf16.f32.k16.sim-b200.s0"
    assert (folder / "capture.tcap").is_file() and not (folder / LOCK_NAME).exists()
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    again = folder.parent / (folder.name + ".run2")
    assert (again / "capture.tcap").is_file() and not (again / LOCK_NAME).exists()
    assert f"an earlier run's capture is in {folder.relative_to(tmp_path)}" in second.stderr
    resumed = CliRunner().invoke(main, [*args, "--resume"])
    assert resumed.exit_code == 0 and "2,000 of them from the capture" in resumed.output
    named = CliRunner().invoke(main, [*args, "--out", str(folder)])  # a named --out: refused
    assert named.exit_code == 2 and "--resume" in named.stderr


def test_the_lock_is_removed_and_still_excludes(tmp_path):
    out = tmp_path / "o"
    with hold_out_folder(out):
        assert (out / LOCK_NAME).is_file()
        with pytest.raises(CaptureError, match="another tcprobe run"), hold_out_folder(out):
            pass
        assert (out / LOCK_NAME).is_file()  # the refused run removed nothing
    assert not (out / LOCK_NAME).exists()
    with hold_out_folder(out):  # and the folder is lockable again
        pass
    assert os.listdir(out) == []
