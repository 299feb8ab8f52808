"""Run PyTorch code as a chosen GPU's tensor cores compute its matrix products.

``with tcprobe.torch.emulate(gpu="H100"): y = model(x)`` routes every
``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``mv``/``addmv`` (so ``matmul``'s
broadcast forms and ``linear``, which torch decomposes into them),
``_scaled_mm`` and ``_int_mm`` through :func:`tcprobe.matmul` (docs/torch.md).
torch is optional: ``import tcprobe`` never imports it.
"""

import importlib.util as _util
import sys as _sys

from tcprobe.compile_notes import say as _say

if "torch" not in _sys.modules and _util.find_spec("torch") is not None:
    # torch's own import takes seconds (3-4 s on a loaded 2-core machine), much of it in
    # loading libtorch, which holds the interpreter (a timer's line waited behind it):
    # where this package starts it, a note says what the wait is, first
    _say("note: tcprobe.torch is importing torch (its own start-up, seconds; once a process)")
try:
    import torch as _torch  # noqa: F401
except ImportError:  # pragma: no cover - exercised in a subprocess without torch
    raise ImportError("tcprobe.torch needs PyTorch: pip install torch "
                      "(the CPU wheel is enough)") from None

from .mode import Emulate, emulate
from .report import Report

__all__ = ["Emulate", "Report", "emulate"]
