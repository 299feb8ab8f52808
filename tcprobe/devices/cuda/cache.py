"""The on-disk cubin cache: ``$TCPROBE_CACHE/cubin`` or ``~/.cache/tcprobe/cubin``.

A cached file's name carries its key (:func:`tcprobe.devices.cuda.nvrtc.cache_key`);
a read-only or broken cache only costs a recompile.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Bumped when the cache layout or the compile options NVRTC is given change.
CACHE_FORMAT = 1


def cache_dir() -> Path:
    """Where cubins are cached: $TCPROBE_CACHE, else ~/.cache/tcprobe."""
    env = os.environ.get("TCPROBE_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tcprobe"
    return base / "cubin"


def read_cubin(path: Path) -> bytes | None:
    """The cubin cached at ``path``, or None when there is none (or not an ELF file)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if data[:4] == b"\x7fELF" else None


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
