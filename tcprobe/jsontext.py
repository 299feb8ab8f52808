"""Reading JSON a user hands tcprobe (schedules, model files, manifests, vectors).

Python's ``json`` keeps the last of two equal keys silently
(``{"split_k": 2, "split_k": 3}`` is split 3): every user file goes through
:func:`loads`, which refuses a key given twice, naming it, like a TOML
profile's reader does. Other errors are json's (ValueError, RecursionError).

:func:`read_text` reads any text file a user names (JSON, TOML, vectors): a
path that is not a regular file (a FIFO, a character device such as
/dev/zero or /dev/stdin, a socket) is an OSError naming what it is, before
anything blocks on it or reads without end.
"""

from __future__ import annotations

import errno
import json
import os
import stat


class DuplicateKeyError(ValueError):
    """A JSON object that gives one key twice."""


def _pairs(pairs: list) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"the key {key!r} is given twice in one object (JSON keeps "
                                    "the last silently: give it once)")
        out[key] = value
    return out


def loads(text: str):
    """``json.loads(text)``, but a key given twice in an object is a
    DuplicateKeyError (a ValueError)."""
    return json.loads(text, object_pairs_hook=_pairs)


def not_regular(path) -> str | None:
    """What ``path`` is when it exists and is not a regular file or a folder
    ("a FIFO", "a character device", ...); None otherwise (missing: the
    reader's own error says so)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device"
            if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def refuse_special(path) -> None:
    """OSError (EINVAL) when ``path`` is a FIFO, a device or a socket: a
    file tcprobe reads must be a regular file (reading a FIFO waits for a
    writer that never comes; /dev/zero never ends)."""
    what = not_regular(path)
    if what:
        raise OSError(errno.EINVAL, f"{what}, not a regular file: save it to a file", str(path))


def read_text(path, encoding: str = "utf-8", limit: int | None = None) -> str:
    """The text of the regular file ``path`` (refuse_special first); a file
    of more than ``limit`` bytes is an OSError (EFBIG) naming its size."""
    refuse_special(path)
    if limit is not None:
        size = os.stat(path).st_size
        if size > limit:
            raise OSError(errno.EFBIG, f"{size:,} bytes, more than a file of this kind holds "
                          f"({limit:,} at most)", str(path))
    with open(path, encoding=encoding) as fh:
        return fh.read()
