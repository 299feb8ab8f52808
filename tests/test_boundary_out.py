"""Issue 26 on what --out touches: nothing under an output folder is written
through a symbolic link (reports by atomic rename, captures and the lock
opened without following one, a campaign's datapath folders checked);
file-system errors name the path and what to do; a capture that holds no
case and a --suite that names none are errors, never "0 mismatches"."""

from __future__ import annotations

import errno
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import invoke, one_error

from tcprobe.outfiles import (
    UnsafePathError,
    atomic_file,
    make_folder,
    open_nofollow,
    os_error,
    write_atomic,
)

VICTIM = "not yours to write\n"


def plant(out: Path, name: str, victim: Path, dangling: bool = False) -> Path:
    """A symbolic link ``out/name`` to ``victim`` (missing when ``dangling``)."""
    link = out / name
    link.parent.mkdir(parents=True, exist_ok=True)
    if not dangling:
        victim.write_text(VICTIM)
    link.symlink_to(victim)
    return link


def defaults(extra, **given) -> list:
    """The default options a helper passes, less those ``extra`` gives (an
    option is given once: a second one is an error, never a silent override)."""
    return [x for k, v in given.items() if f"--{k}" not in extra for x in (f"--{k}", v)]


def validate(out, *extra):
    return invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100",
                  *defaults(extra, cases="200", suite="raw", shrink="0"), "--out", out, *extra)


def campaign(out, *extra):
    return invoke("validate", "--targets", "mma.bf16.f32.k16,mma.f16.f32.k16", "--device",
                  "sim:h100", *defaults(extra, suite="raw=100", shrink="0"), "--out", out, *extra)


# ---------------------------------------------------------------------------
# Reports are renamed into place: a planted link is replaced, its target untouched.


@pytest.mark.parametrize("name", ["report.html", "report.json", "report.md"])
def test_validate_reports_replace_a_planted_link(tmp_path, name):
    out, victim = tmp_path / "v", tmp_path / "victim"
    link = plant(out, name, victim)
    assert validate(out).exit_code == 0
    assert victim.read_text() == VICTIM
    assert not link.is_symlink() and link.stat().st_size > 100


@pytest.mark.parametrize("name", ["summary.html", "summary.json", "summary.md",
                                  "mma.bf16.f32.k16/report.html"])
def test_campaign_reports_replace_a_planted_link(tmp_path, name):
    out, victim = tmp_path / "c", tmp_path / "victim"
    link = plant(out, name, victim)
    assert campaign(out).exit_code == 0
    assert victim.read_text() == VICTIM and not link.is_symlink()


def test_merge_reports_replace_a_planted_link(tmp_path):
    assert campaign(tmp_path / "c").exit_code == 0
    out, victim = tmp_path / "m", tmp_path / "victim"
    link = plant(out, "summary.html", victim)
    assert invoke("report", "merge", tmp_path / "c", "--out", out).exit_code == 0
    assert victim.read_text() == VICTIM and not link.is_symlink()


# ---------------------------------------------------------------------------
# Files written as they grow, and folders: a link there is refused, named.


@pytest.mark.parametrize("name,dangling", [(".tcprobe.lock", False), (".tcprobe.lock", True),
                                           ("capture.tcap", True), ("capture.tcap", False)])
def test_validate_refuses_a_planted_link(tmp_path, name, dangling):
    out, victim = tmp_path / "v", tmp_path / "victim"
    plant(out, name, victim, dangling)
    extra = ["--resume"] if name == "capture.tcap" and not dangling else []
    one_error(validate(out, *extra), f"{out / name} is a symbolic link", "remove it")
    assert (victim.read_text() == VICTIM) if not dangling else not victim.exists()


@pytest.mark.parametrize("name,dangling", [
    (".tcprobe.lock", False), ("campaign.json", False), ("mma.bf16.f32.k16", False),
    ("mma.bf16.f32.k16/raw.tcap", True), ("mma.bf16.f32.k16/raw.tcap", False)])
def test_campaign_refuses_a_planted_link(tmp_path, name, dangling):
    out, victim = tmp_path / "c", tmp_path / "victim"
    if name == "mma.bf16.f32.k16":  # a datapath's folder pointing elsewhere
        victim.mkdir()
        out.mkdir()
        (out / name).symlink_to(victim)
    else:
        plant(out, name, victim, dangling)
    one_error(campaign(out), f"{out / name} is a symbolic link")
    if victim.is_dir():
        assert not list(victim.iterdir())
    elif not dangling:
        assert victim.read_text() == VICTIM
    else:
        assert not victim.exists()


def test_a_fifo_lock_is_refused_without_hanging(tmp_path):
    out = tmp_path / "v"
    out.mkdir()
    os.mkfifo(out / ".tcprobe.lock")
    one_error(validate(out), ".tcprobe.lock is not a regular file")


def test_the_writers_never_follow_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text(VICTIM)
    link = tmp_path / "f"
    link.symlink_to(victim)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        open_nofollow(link, "wb")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        open_nofollow(link, "r+b")
    write_atomic(link, "mine")
    assert victim.read_text() == VICTIM and link.read_text() == "mine"
    (tmp_path / "d").symlink_to(tmp_path)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        make_folder(tmp_path / "d" / "x", tmp_path)
    with pytest.raises(RuntimeError):  # a body that fails leaves nothing behind
        with atomic_file(tmp_path / "g") as fh:
            fh.write(b"half")
            raise RuntimeError("killed half way")
    assert not (tmp_path / "g").exists() and not list(tmp_path.glob(".g.*"))


def test_gemm_out_replaces_a_planted_link(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((4, 16), np.float16))
    np.save(tmp_path / "b.npy", np.ones((16, 4), np.float16))
    victim = tmp_path / "victim"
    link = plant(tmp_path, "d.npy", victim)
    r = invoke("gemm", "--gpu", "H100", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy",
               "--out", link)
    assert r.exit_code == 0, r.output
    assert victim.read_text() == VICTIM and (np.load(link) == 16).all()


def test_gemm_probe_replaces_planted_links(tmp_path):
    out, victim = tmp_path / "p", tmp_path / "victim"
    plant(out, "manifest.json", victim)
    plant(out, "random.a.npy", tmp_path / "victim2")
    r = invoke("gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", out, "--m", "8",
               "--n", "8", "--k", "64")
    assert r.exit_code == 0, r.output
    assert victim.read_text() == VICTIM and (tmp_path / "victim2").read_text() == VICTIM
    assert json.loads((out / "manifest.json").read_text())["k"] == 64


# ---------------------------------------------------------------------------
# File-system errors: the path and what to do.


@pytest.mark.parametrize("err,hint", [(errno.ENOSPC, "the disk is full"),
                                      (errno.EROFS, "a read-only file system"),
                                      (errno.EACCES, "permission denied"),
                                      (errno.EDQUOT, "the disk quota is used up")])
def test_a_capture_that_cannot_be_written_names_it_and_resume(tmp_path, monkeypatch, err, hint):
    from tcprobe.capture import binary

    out = tmp_path / "v"
    calls = [0]
    real = binary.Writer._flush

    def failing(self):
        calls[0] += 1
        if calls[0] > 1:  # the header is written, the first chunk is not
            raise OSError(err, os.strerror(err))
        real(self)

    monkeypatch.setattr(binary.Writer, "_flush", failing)
    line = one_error(validate(out), f"{out / 'capture.tcap'}: {hint}",
                     "rerun the same command with --resume")
    assert "[Errno" not in line
    monkeypatch.undo()
    r = validate(out, "--resume")
    assert r.exit_code == 0, r.output


def test_os_errors_without_a_path_get_one():
    e = os_error(OSError(errno.ENOSPC, "No space left on device"), "/x/y", "rerun")
    assert e.filename == "/x/y" and e.strerror.endswith("then rerun")
    assert os_error(e) is e  # converted once


def test_gemm_out_is_checked_before_the_product(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((4, 16), np.float16))
    np.save(tmp_path / "b.npy", np.ones((16, 4), np.float16))
    args = ["gemm", "--gpu", "H100", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy"]
    r = invoke(*args, "--out", tmp_path / "no" / "d.npy")
    one_error(r, f"{tmp_path / 'no'} does not exist")
    assert "wgmma" not in r.stdout  # refused before the product ran


# ---------------------------------------------------------------------------
# No case is never "0 mismatches".


@pytest.fixture
def header_only(tmp_path) -> Path:
    out = tmp_path / "v"
    assert validate(out).exit_code == 0
    data = (out / "capture.tcap").read_bytes()
    hlen = struct.unpack_from("<I", data, 12)[0]
    cut = tmp_path / "cut.tcap"
    cut.write_bytes(data[:20 + hlen])
    return cut


@pytest.mark.parametrize("command", [["score"], ["replay", "--device", "sim:h100"], ["fit"]])
def test_a_capture_cut_after_its_header_is_an_error(header_only, command):
    one_error(invoke(command[0], "--capture", header_only, *command[1:]), str(header_only),
              "holds no case (0 of 200 planned", "--resume")


@pytest.mark.parametrize("suite", ["", " ", ",", " , "])
def test_validate_suite_that_names_none_is_refused(tmp_path, suite):
    one_error(validate(tmp_path / "v", "--suite", suite), "--suite names no suite")
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("args", [
    ["validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100", "--out", ""],
    ["validate", "--targets", "mma.bf16.f32.k16", "--device", "sim:h100", "--out", " "],
    ["report", "merge", ".", "--out", ""],
    ["gemm-probe", "--gpu", "H100", "--format", "bf16", "--out", ""],
    ["validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100", "--json", ""],
])
def test_an_empty_output_path_is_refused(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    one_error(invoke(*args), "an empty path names no file or folder")
    assert not list(tmp_path.iterdir())  # nothing written into the current folder


def test_empty_targets_name_no_datapath(tmp_path):
    one_error(invoke("validate", "--targets", "", "--device", "sim:h100", "--out", tmp_path / "c"),
              "--targets names no datapath")


@pytest.mark.parametrize("name", [".tcprobe.lock", "capture.tcap"])
def test_a_planted_hard_link_is_refused(tmp_path, name):
    from tcprobe.capture import binary

    out = tmp_path / "v"
    args = ["--cases", "400", "--chunk", "200"]
    assert validate(out, *args).exit_code == 0
    victim = tmp_path / "victim"
    if name == "capture.tcap":  # a capture cut after its first chunk, whose bytes a victim shares
        cap = out / name
        first_end = binary.Scan.of(cap).index[1][0] - 16
        with open(cap, "r+b") as fh:
            fh.truncate(first_end)
        cap.rename(victim)
    else:
        victim.write_text(VICTIM)
        (out / name).unlink(missing_ok=True)  # a finished run leaves no lock behind
    os.link(victim, out / name)
    before = victim.read_bytes()
    one_error(validate(out, *args, "--resume"), f"{out / name} has 1 other hard link")
    assert victim.read_bytes() == before
