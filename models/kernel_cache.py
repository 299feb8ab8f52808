"""Where numba keeps the compiled kernels: a folder only this user can write.

Numba's disk cache holds pickles that it loads when a kernel is first
called, so whoever can write the cache folder can run code in every
process that uses it. Its default is the ``__pycache__`` next to the
sources, which is the install's folder (site-packages owned by root, or a
shared checkout). So the kernels live in a folder of this user's instead,
checked as the cubin cache checks its folder (owned by this user, no one
else may write it, not a symbolic link):

1. ``$NUMBA_CACHE_DIR`` when the user set it (their choice of place,
   checked like the others);
2. else ``$TCPROBE_CACHE/numba``, else ``$XDG_CACHE_HOME/tcprobe/numba``
   (``~/.cache/tcprobe/numba``);
3. where that folder cannot be made or fails the check, a private folder
   under the temporary directory, and :data:`NOTE` says why (the CLI prints
   it once; the API warns once with :class:`KernelCacheNote`).

Every file and folder inside is verified too, as the cubin cache verifies
its files: one that is a symbolic link, belongs to another user or may be
written by others is removed before numba reads the folder, so numba
compiles that kernel again (the cache is rebuilt, never trusted).

:func:`configure` runs when ``tcprobe.models`` is imported, before any
kernel is decorated: numba reads the folder when a cached function is made.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

from . import numba_internals

NOTE: str | None = None  # why the kernels are not in the usual folder, when they are not
FOLDER: Path | None = None
# The datapath whose kernels a run is evaluating now (set by the engine and
# the GEMM kernel), so that whoever listens to numba's compile events (the
# CLI) can say what is compiling; a label, never read by the arithmetic.
WORKING_ON: str | None = None


def working_on(label: str) -> None:
    """Name the datapath whose kernels the next calls may compile."""
    global WORKING_ON
    WORKING_ON = label


class KernelCacheNote(UserWarning):
    """The compiled kernels are cached somewhere other than the usual folder."""


def usual_folder() -> Path:
    """``$TCPROBE_CACHE/numba``, else ``$XDG_CACHE_HOME/tcprobe/numba``."""
    env = os.environ.get("TCPROBE_CACHE")
    if env:
        return Path(env) / "numba"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tcprobe" / "numba"


def why_untrusted(path: Path, folder: bool = True) -> str | None:
    """Why a cache file or folder must not be trusted (a symbolic link,
    another owner, writable by others; ``folder``: not a folder), or None
    when only this user can write it. The cubin cache asks the same."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"{path}: {e.strerror}"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link"
    if folder and not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{path} is not owned by this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} may be written by other users"
    return None


def _private(path: Path) -> str | None:
    """Make ``path`` (mode 0700) if it is not there; why it cannot serve, or None."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        return f"cannot create {path} ({e.strerror})"
    why = why_untrusted(path)
    if why is None and not os.access(path, os.W_OK | os.X_OK):
        why = f"{path} is not writable"
    return why


def _entry_untrusted(path: Path, is_dir: bool, private: bool) -> str | None:
    """Why an entry of the cache must not be trusted. Inside a folder no one
    else may enter (``private``: mode 0700), its own write bits do not matter
    (a umask of 002 makes files group-writable); a link or another user's
    entry never serves."""
    why = why_untrusted(path, folder=is_dir)
    if why is not None and private and why.endswith("may be written by other users"):
        return None
    return why


def sweep(folder: Path, depth: int = 3, private: bool | None = None) -> str | None:
    """Remove every entry under ``folder`` that must not be trusted (a link,
    another owner's, writable by others where others may enter), so numba
    compiles it again; why the folder cannot serve (an entry that cannot be
    removed), or None."""
    try:
        if private is None:
            private = (os.stat(folder).st_mode & 0o077) == 0
        entries = list(os.scandir(folder))
    except OSError as e:
        return f"cannot read {folder} ({e.strerror})"
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if _entry_untrusted(path, is_dir, private) is None:
            if is_dir and depth > 1:
                why = sweep(path, depth - 1, private)
                if why is not None:
                    return why
            continue
        try:
            if is_dir:
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            return f"{_entry_untrusted(path, is_dir, private)} and cannot be removed"
    return None


def configure() -> Path:
    """Point numba's cache at this user's folder (see the module doc); the folder."""
    global NOTE, FOLDER
    if FOLDER is not None:
        return FOLDER
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    FOLDER = Path(chosen) if chosen else usual_folder()
    why = _private(FOLDER) or sweep(FOLDER)
    if why is not None:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        fallback = Path(tempfile.gettempdir()) / f"tcprobe-numba-{uid}"
        if _private(fallback) is not None or sweep(fallback) is not None:
            fallback = Path(tempfile.mkdtemp(prefix="tcprobe-numba-"))
        how = ("set NUMBA_CACHE_DIR to a folder only you may write" if chosen else
               "set TCPROBE_CACHE to a folder of yours to keep them across sessions")
        NOTE = f"compiled kernels are cached in {fallback}, not {FOLDER}: {why} ({how})"
        FOLDER = fallback
    # Children (the CLI run from a test, a worker) find the same folder.
    os.environ["NUMBA_CACHE_DIR"] = str(FOLDER)
    here = str(Path(__file__).resolve().parent)

    def point_numba():  # once numba is imported (not before: the tables need no numba)
        from .kernels.kernel_stamp import SOURCE_STAMP  # keyed by the sources, not the path

        numba_internals.set_cache_dir(str(FOLDER))
        numba_internals.key_cache_by_content(here, SOURCE_STAMP)
        numba_internals.answer_blas_check_lazily()

    numba_internals.when_numba_loaded(point_numba)
    if NOTE is not None:
        warnings.warn(NOTE, KernelCacheNote, stacklevel=2)
    return FOLDER
