"""One writer per capture folder, and room for the capture before it starts."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from pathlib import Path

from tcprobe.models.datapath import Datapath
from tcprobe.outfiles import not_own_file, os_error, refuse_link

from . import CaptureError

LOCK_NAME = ".tcprobe.lock"
HEADER_ROOM = 1 << 16  # file header and slack, in bytes


@contextlib.contextmanager
def hold_out_folder(out: Path):
    """Hold the lock of ``out`` (created if missing) while the body runs; a
    second run into the same folder is refused at once, nothing written."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CaptureError(f"{out}: --out must be a folder, and this is a file")
    out.mkdir(parents=True, exist_ok=True)
    lock = out / LOCK_NAME
    for _attempt in range(3):
        fd = _lock(out, lock)
        if fd is not None:
            break
    else:
        raise CaptureError(f"{out}: another tcprobe run is writing to this folder "
                           "(wait for it to finish, or choose another --out)")
    try:
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as e:
            raise os_error(e, lock) from None
        yield
    finally:
        try:  # removed while still held, so the folder keeps no lock behind
            if _same_file(fd, lock):
                os.unlink(lock)
        except OSError:
            pass
        os.close(fd)  # closing releases the lock


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _lock(out: Path, lock: Path) -> int | None:
    """The locked descriptor of ``lock``, or None when the file was removed
    (by the run that held it) between its opening and its locking: the
    caller tries again on the file that is there now."""
    refuse_link(lock)  # a planted link is never followed (O_NOFOLLOW below, too)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(lock, flags, 0o644)
    except OSError as e:
        refuse_link(lock)
        raise os_error(e, lock) from None
    try:
        why = not_own_file(os.fstat(fd), lock)
        if why:
            raise CaptureError(why)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CaptureError(f"{out}: another tcprobe run is writing to this folder "
                               "(wait for it to finish, or choose another --out)") from None
    except BaseException:
        os.close(fd)
        raise
    if not _same_file(fd, lock):
        os.close(fd)
        return None
    return fd


def capture_bytes(dp: Datapath, cases: int, chunk: int) -> int:
    """Bytes a capture of ``cases`` cases in chunks of ``chunk`` takes."""
    from .binary import _CHUNK_HEAD, record_dtype

    chunks = -(-cases // chunk)
    return HEADER_ROOM + cases * record_dtype(dp).itemsize + chunks * _CHUNK_HEAD.size


def check_room(path: Path, dp: Datapath, plan, resume: bool) -> None:
    """Refuse, before writing, a capture the disk cannot hold."""
    path = Path(path)
    need = capture_bytes(dp, plan.cases, plan.chunk)
    if resume and path.exists():
        need -= path.stat().st_size
    where = path.parent
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if need > free:
        raise CaptureError(f"a capture of {plan.cases:,} {dp.id} cases needs {size_text(need)} "
                           f"and {where} has {size_text(free)} free: ask for fewer "
                           "--cases, free some space or choose another --out")


def size_text(n: int) -> str:
    """Bytes as 1.2 GB, 35.0 MB, 12.3 kB or 512 bytes."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,} bytes"
