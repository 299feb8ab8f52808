"""The library atlas: what a GPU's BLAS library does per GEMM shape, as package data.

``tcprobe.atlas.lookup("H200", "gemm", "bf16", 256, 256, 4096)`` gives the
schedule (:class:`tcprobe.matrix.schedule.Schedule`) that reproduces cuBLAS's
words for that shape and its provenance: ``measured`` (with the evidence
under reports/silicon/), ``predicted`` (which rule, how well it predicts
held-out measured shapes) or ``default guess`` (why). ``tcprobe.torch.emulate``
asks it for every GEMM; :func:`batch_invariance` answers from it which M give
a row the same bits as M = 1. docs/atlas.md.
"""

from .batch import batch_invariance
from .query import AtlasError, Lookup, default_axes, lookup
from .store import entries, gpus

__all__ = ["AtlasError", "Lookup", "batch_invariance", "default_axes", "entries", "gpus",
           "lookup"]
