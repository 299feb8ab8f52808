"""Writing under an output folder (``--out``) without following symbolic links.

Whoever can plant a link in an output folder must not be able to make a
run write anywhere else. So every file tcprobe writes under ``--out``:

* a report or record (JSON, Markdown, HTML, a .npy) is written to a fresh
  temporary file beside it (created exclusively) and renamed over its name:
  a rename replaces a link planted there and never writes through it, and
  a reader never sees half a file (:func:`write_atomic`);
* a file that is opened and written as it grows (a capture, the lock, a
  damaged capture's set-aside bytes) is opened with ``O_NOFOLLOW`` (and a
  new one with ``O_EXCL``): a link there is refused, naming it
  (:func:`open_nofollow`);
* a folder inside ``--out`` (a campaign's datapath folder) that is a link
  is refused (:func:`make_folder`).

The ``--out`` folder itself is the user's choice and may be a link.

:func:`os_error` turns a file-system error into one line that names the
path and what to do (a full disk, a read-only file system, no permission).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path


class UnsafePathError(ValueError):
    """A symbolic link (or a non-file) where tcprobe would write."""


class PathError(OSError):
    """A file-system error whose message names the path and what to do."""


# What to do about a file-system error, by errno.
_WHAT_TO_DO = {
    errno.ENOSPC: "the disk is full: free some space or choose another --out",
    errno.EDQUOT: "the disk quota is used up: free some space or choose another --out",
    errno.EFBIG: "the file is larger than this file system allows: choose another --out",
    errno.EROFS: "a read-only file system: choose another --out",
    errno.EACCES: "permission denied: choose a folder you may write (another --out), or "
                  "fix its permissions",
    errno.EPERM: "not permitted: choose a folder you may write (another --out)",
    errno.ENOENT: "no such file or folder: check the path",
    errno.ENOTDIR: "a part of the path is a file, not a folder: check the path",
    errno.EISDIR: "a folder, where a file was expected: check the path",
    errno.ELOOP: "a symbolic link where tcprobe writes: remove it (tcprobe writes nothing "
                 "under --out through a link)",
}


# A read this user may not make (a file, or a folder above it or being listed).
READ_REFUSED = ("permission denied: this user may not read it (or a folder above it); fix "
                "the permissions, or give another path")


def os_error(e: OSError, path=None, then: str = "", *, instead: bool = False) -> PathError:
    """``e`` with its path (``path`` when it names none, or ``instead`` of
    the temporary file it names) and the hint of what to do in its message
    (``then``: how to continue, e.g. 'rerun with --resume'), as an OSError
    of the same errno the CLI prints in one line."""
    if isinstance(e, PathError):
        return e
    where = e.filename if e.filename is not None and not instead else path
    hint = _WHAT_TO_DO.get(e.errno, e.strerror or str(e))
    if then and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS,
                            errno.EACCES, errno.EPERM):
        hint = f"{hint}; then {then}"
    out = PathError(e.errno, hint)
    out.filename = str(where) if where is not None else None
    return out


def not_own_file(st: os.stat_result, path) -> str | None:
    """Why an opened file under --out must not be written (not a regular file,
    or a hard link that another name shares), or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file: move it away, or choose another --out"
    if st.st_nlink > 1:
        return (f"{path} has {st.st_nlink - 1} other hard link(s): tcprobe writes nothing under "
                "--out that another name shares; remove it, or choose another --out")
    return None


def refuse_link(path) -> None:
    """UnsafePathError when ``path`` is a symbolic link (dangling or not)."""
    if os.path.islink(path):
        raise UnsafePathError(f"{path} is a symbolic link: tcprobe writes nothing under --out "
                              "through a link; remove it, or choose another --out")


def make_folder(path, root=None) -> Path:
    """Make ``path`` (and its parents); a folder below ``root`` that is a
    symbolic link (or a file) is refused. ``root`` (default: ``path``'s
    parent) may itself be a link: it is the folder the user named."""
    path = Path(path)
    root = Path(root) if root is not None else path.parent
    rel = path.relative_to(root) if path != root and root in path.parents else None
    if rel is None:
        path.mkdir(parents=True, exist_ok=True)
        return path
    root.mkdir(parents=True, exist_ok=True)
    here = root
    for part in rel.parts:
        here = here / part
        refuse_link(here)
        try:
            here.mkdir()
        except FileExistsError:
            if not here.is_dir():
                raise UnsafePathError(f"{here} is a file where tcprobe keeps a folder: move "
                                      "it away, or choose another --out") from None
    return path


def write_atomic(path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` by an exclusive temporary file renamed over
    it: a link at ``path`` is replaced, never written through."""
    with atomic_file(path) as fh:
        fh.write(data.encode() if isinstance(data, str) else data)


@contextlib.contextmanager
def atomic_file(path):
    """A binary file handle whose bytes become ``path`` when the body ends
    (an exclusive temporary file beside it, renamed over it; removed when
    the body raises)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if os.path.isdir(path) and not os.path.islink(path):
        raise UnsafePathError(f"{path} is a folder where tcprobe writes a file: move it away, "
                              "or choose another path")
    refuse_special(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise os_error(e, path, instead=True) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise os_error(e, path, instead=True) from None
        raise


def refuse_special(path) -> None:
    """UnsafePathError when ``path`` is a device, a FIFO or a socket: a
    rename would replace it (/dev/full, a named pipe) with a file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
        raise UnsafePathError(f"{path} is not a regular file (a device, a pipe or a socket): "
                              "tcprobe writes files only; choose another path (- for stdout "
                              "where the option takes it)")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def open_nofollow(path, mode: str, *, new: bool = False):
    """Open ``path`` ("wb", "r+b" or "ab") without following a link: a link
    there is refused (UnsafePathError), as is anything but a regular file.
    ``new``: create it exclusively (it must not exist)."""
    path = Path(path)
    flags = {"wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "r+b": os.O_RDWR,
             "ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND}[mode]
    if new:
        flags |= os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP or os.path.islink(path):
            refuse_link(path)
        if e.errno == errno.EEXIST and new:
            raise UnsafePathError(f"{path} appeared while tcprobe was about to create it: "
                                  "another run may be writing here; choose another --out") from None
        raise
    why = not_own_file(os.fstat(fd), path)
    if why:
        os.close(fd)
        raise UnsafePathError(why)
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, mode)


def check_out_file(path, option: str) -> None:
    """Refuse, before any work, an output file that cannot be written: its
    folder missing or not a folder, the path a folder, the folder not
    writable (named, with what to do)."""
    if str(path).endswith(("/", os.sep)):  # Path() drops the slash that names a folder
        raise UnsafePathError(f"{option} {path} ends in '/', naming a folder: give a file name")
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        above = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if above is not None and not above.is_dir():
            raise UnsafePathError(f"{option} {path}: {above} is a file, not a folder: choose "
                                  "another path")
        raise UnsafePathError(f"{option} {path}: the folder {folder} does not exist: make it, "
                              "or choose another path")
    if path.is_dir():
        raise UnsafePathError(f"{option} {path} is a folder: give a file name")
    refuse_special(path)
    try:  # a real try: permissions, a read-only or a special file system
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise os_error(e, path, instead=True) from None
    os.close(fd)
    os.unlink(tmp)


def refuse_same_files(outputs: dict, inputs: dict | list | None = None) -> None:
    """Refuse, before any work, two outputs that name one file (``--out d.npy
    --json d.npy``: the second would replace the first) and an output that
    names an input or lies inside an input folder (``--out a.npy --a a.npy``,
    ``score --capture cap --json cap/d.txt``: the input would be lost).
    ``outputs`` maps an option to its path, ``inputs`` too or is a list of
    (option, path) pairs (a repeatable option); None or ``-``: not a file.
    Paths are compared after links and ``..`` are resolved."""
    def files(paths):  # (option, the file it names, links and '..' resolved)
        pairs = paths.items() if isinstance(paths, dict) else (paths or [])
        return [(o, p, os.path.realpath(p)) for o, p in pairs
                if p is not None and str(p) != "-"]

    seen: dict[str, str] = {}
    for option, path, key in files(outputs):
        if key in seen:
            raise UnsafePathError(f"{seen[key]} and {option} name the same file {path}: the "
                                  "second would replace the first; give each its own")
        seen[key] = option
    for option, path, key in files(inputs):
        if key in seen:
            raise UnsafePathError(f"{seen[key]} {path} is also {option}: writing it would "
                                  "overwrite that input; choose another path")
        if os.path.isdir(key):
            for out_option, out_path, out_key in files(outputs):
                if os.path.commonpath([out_key, key]) == key:
                    raise UnsafePathError(f"{out_option} {out_path} is inside {option} {path}: "
                                          "writing it would change that input; choose a path "
                                          "outside it")


def refuse_inside(file_path, folder, file_option: str, folder_option: str) -> None:
    """An output FILE inside the output FOLDER a command fills (validate's
    --out: its capture, lock and reports; report merge's --out) is refused
    before any work: ``--json out/capture.tcap`` replaced the capture with
    the JSON report (everything captured lost), and any other name there is
    the folder's, not the user's. Compared after links and '..' resolve."""
    if file_path is None or str(file_path) == "-" or folder is None:
        return
    inner = os.path.realpath(file_path)
    top = os.path.realpath(folder)
    if os.path.commonpath([inner, top]) == top:
        raise UnsafePathError(f"{file_option} {file_path} is inside {folder_option} {folder}, "
                              "the folder tcprobe fills (its capture and reports): choose a path "
                              "outside it")
