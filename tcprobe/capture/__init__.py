"""The Capture noun: cases plus the words a device returned, plus metadata.

Readers for each on-disk layout live beside this file; :func:`load` picks
the reader from what the path holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format


class CaptureError(ValueError):
    """A capture that cannot be read: missing, malformed or truncated."""


@dataclass
class Capture:
    source: str
    datapath: Datapath
    cases: Cases
    words: np.ndarray  # (N,) output words recorded from the device (uint32; uint64 for f64)
    gpu: str | None = None
    label: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.words = np.asarray(self.words).astype(get_format(self.datapath.d_type).dtype)
        if len(self.words) != len(self.cases):
            raise CaptureError(f"{self.source}: {len(self.cases)} cases but {len(self.words)} words")

    def __len__(self) -> int:
        return len(self.words)


def load(path: str | Path) -> list[Capture]:
    """Every capture found at ``path``: a folder of published a/b/c/d text
    files (any depth), a ``.jsonl`` file of recorded vectors, or a capture
    file in the project's own binary format."""
    from tcprobe.jsontext import not_regular

    from . import jsonl, km

    if not isinstance(path, str | PathLike):
        raise CaptureError(f"capture path must be a str or a Path, not {type(path).__name__}")
    if isinstance(path, str) and not path.strip():  # Path('') is the current folder
        raise CaptureError(f"capture path {path!r} names nothing: give a folder or a file")
    p = Path(path)
    if not p.exists():
        hint = ""
        if "hwdata" in p.parts or "khattak-mikaitis-2025" in p.parts:  # the README's line
            hint = (" (../shared sits beside a checkout that has it; a checkout holds a "
                    "250-case subset of every file: tests/data/khattak-mikaitis-2025)")
            if not p.is_absolute():  # the README's paths are the checkout's root's
                hint = hint[:-1] + f"; the README's paths are from the checkout's root, and " \
                    f"this one was read from {Path.cwd()})"
        raise CaptureError(f"{path}: no such file or folder{hint}")
    if p.is_dir():
        # a validate --out folder (or a campaign's) holds capture files; else a/b/c/d text
        found = [cap for f in own_files(p) for cap in load(f)] or km.read_tree(p)
        if not found:
            raise CaptureError(f"{path}: no captures found (expected GPU/FORMAT/d_*.txt files, "
                               "or tcprobe capture files such as validate --out's capture.tcap)")
        return found
    special = not_regular(p)
    if special:  # a FIFO would wait for a writer, /dev/zero never ends
        raise CaptureError(f"{path}: {special}, not a capture file: save the capture to a file "
                           "(or give its folder)")
    if p.is_file() and p.stat().st_size == 0:
        raise CaptureError(f"{path}: empty file (0 bytes): nothing was captured; delete it, or "
                           "run tcprobe validate with --resume, which starts it over")
    if p.suffix == ".jsonl":
        return jsonl.read(p)
    try:
        from . import binary
    except ImportError:  # pragma: no cover - the binary format may be absent
        binary = None
    if binary is not None and binary.sniff(p):
        cap = binary.read(p)
        if not len(cap):
            raise no_case(p, cap.meta.get("planned"))
        return [cap]
    raise CaptureError(f"{path}: not a capture (a folder, a .jsonl file or a tcprobe capture file)")


def own_files(folder: Path) -> list[Path]:
    """The project's own capture files below ``folder`` (any depth, in path
    order): what validate --out and a campaign's folders hold."""
    from . import binary

    return [f for f in sorted(folder.rglob("*.tcap")) if f.is_file() and binary.sniff(f)]


def no_case(path, planned) -> CaptureError:
    """A capture that ends after its header: nothing to score, replay or fit."""
    of = f" of {planned:,} planned" if isinstance(planned, int) else ""
    return CaptureError(f"{path}: holds no case (0{of}: it ends after its header): nothing to "
                        "read; continue it with tcprobe validate --resume and the same options, "
                        "or delete it")


def streams(path: str | Path):
    """(first piece, pieces) for each capture at ``path``: ``pieces()`` yields
    the capture in pieces of bounded size (a capture file is read chunk by
    chunk, so memory does not grow with it; other layouts are one piece).
    Every chunk's checksum is checked before the first piece is handed out."""
    from . import binary

    p = Path(path)
    files = own_files(p) if p.is_dir() else []
    if files:  # a folder of capture files (as load reads it): each streamed
        for f in files:
            yield from streams(f)
        return
    if p.is_file() and p.stat().st_size > 0 and binary.sniff(p):
        scan = binary.Scan.of(p, strict=True)
        if not scan.n_records:
            raise no_case(p, scan.header.get("plan", {}).get("cases")
                          if isinstance(scan.header.get("plan"), dict) else None)
        first = next(binary.read_pieces(scan, 1))
        yield first, lambda: binary.read_pieces(scan)
        return
    for cap in load(path):
        yield cap, lambda cap=cap: iter([cap])
