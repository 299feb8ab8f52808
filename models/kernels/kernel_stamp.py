"""A digest of the model sources, a constant of every compiled fast kernel.

Numba caches a kernel on disk keyed by its own source and its constants,
not by the code it inlines from other modules (the arithmetic core, the
vector intrinsics of :mod:`.lanes_ir`). A kernel that holds SOURCE_STAMP as
a constant is keyed by every source of the models package too (models/*.py
and the subfolders, this kernels/ folder included), so an edited core never
serves a kernel built from older code.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # models/: this folder sits inside it


def sources() -> list[Path]:
    """Every source the stamp digests: models/*.py and its subfolders' (this
    one, kernels/, included), in a fixed order."""
    return sorted(ROOT.rglob("*.py"), key=lambda p: p.relative_to(ROOT).as_posix())


def _digest() -> str:
    digest = hashlib.sha256()
    for path in sources():
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


SOURCE_STAMP = _digest()
