"""A digest of the model sources, a constant of every compiled fast kernel.

Numba caches a kernel on disk keyed by its own source and its constants,
not by the code it inlines from other modules (the arithmetic core, the
vector intrinsics of :mod:`.lanes_ir`). A kernel that holds SOURCE_STAMP as
a constant is keyed by every source of this package too, so an edited core
never serves a kernel built from older code.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def _digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


SOURCE_STAMP = _digest()
