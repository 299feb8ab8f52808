"""The on-disk cubin cache: ``$TCPROBE_CACHE/cubin`` or ``~/.cache/tcprobe/cubin``.

A cached file's name carries its key (:func:`tcprobe.devices.cuda.nvrtc.cache_key`);
a read-only or broken cache only costs a recompile.

Trust nothing in the cache that cannot prove what it is. Beside every cached
cubin lies ``NAME.cubin.json`` with the full cache key, the arch and the
sha256 of the cubin. A cached file is used only when the folder and both
files belong to this user and no one else may write them, the record's key
and arch are the ones asked for, the bytes hash to the recorded sha256, and
the ELF header names the same SM (a cubin copied over another arch's name is
refused). Anything else is recompiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tempfile
from pathlib import Path

from tcprobe.models.kernel_cache import why_untrusted

# Bumped when the cache layout or the compile options NVRTC is given change.
CACHE_FORMAT = 1


def cache_dir() -> Path:
    """Where cubins are cached: $TCPROBE_CACHE, else ~/.cache/tcprobe."""
    env = os.environ.get("TCPROBE_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tcprobe"
    return base / "cubin"


def write_cubin(path: Path, data: bytes) -> None:
    """Write a cubin atomically (a reader never sees half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cubin")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:  # a read-only cache only costs a recompile
        pass


EM_CUDA = 190


def elf_sm(data: bytes) -> int | None:
    """The SM number (80, 90, 100, ...) a CUDA ELF says it is for, or None."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return None
    if struct.unpack_from("<H", data, 18)[0] != EM_CUDA:
        return None
    flags = struct.unpack_from("<I", data, 48 if data[4] == 2 else 36)[0]
    return (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF  # ELF ABI 8 moved the field


def arch_sm(arch: str) -> int:
    return int(re.search(r"\d+", arch).group())


def untrusted(path: Path) -> str | None:
    """Why ``path`` (a file or folder of the cache) must not be trusted, or None."""
    return why_untrusted(path, folder=False)


def read(path: Path, key: str, arch: str) -> bytes | None:
    """The cached cubin at ``path`` if it proves to be the one for ``key`` and ``arch``."""
    record = Path(f"{path}.json")
    for p in (path.parent, path, record):
        if untrusted(p):
            return None
    try:
        meta = json.loads(record.read_text())
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("key") != key or meta.get("arch") != arch:
        return None
    if hashlib.sha256(data).hexdigest() != meta.get("sha256"):
        return None
    if elf_sm(data) != arch_sm(arch):
        return None
    return data


def write(path: Path, data: bytes, key: str, arch: str, write_atomic) -> None:
    """Store the cubin and its record (``write_atomic(path, bytes)`` writes one file)."""
    if path.parent.exists() and untrusted(path.parent):
        return  # never write into a folder someone else controls
    write_atomic(path, data)
    meta = {"key": key, "arch": arch, "sha256": hashlib.sha256(data).hexdigest()}
    write_atomic(Path(f"{path}.json"), (json.dumps(meta) + "\n").encode())
