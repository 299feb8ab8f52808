"""Run PyTorch code as a chosen GPU's tensor cores compute its matrix products.

``with tcprobe.torch.emulate(gpu="H100"): y = model(x)`` routes every
``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``mv``/``addmv`` (so ``matmul``'s
broadcast forms and ``linear``, which torch decomposes into them),
``_scaled_mm`` and ``_int_mm`` through :func:`tcprobe.matmul` (docs/torch.md).
torch is optional: ``import tcprobe`` never imports it.
"""

from tcprobe.compile_notes import note_when_slow as _note_when_slow

# torch's own import takes seconds (3-4 s on a loaded 2-core machine): where it is
# this package that starts it, a note after 1 s says what the wait is
with _note_when_slow("note: tcprobe.torch is importing torch (its own start-up, seconds; "
                     "once a process)"):
    try:
        import torch as _torch  # noqa: F401
    except ImportError:  # pragma: no cover - exercised in a subprocess without torch
        raise ImportError("tcprobe.torch needs PyTorch: pip install torch "
                          "(the CPU wheel is enough)") from None

from .mode import Emulate, emulate
from .report import Report

__all__ = ["Emulate", "Report", "emulate"]
