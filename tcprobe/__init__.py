"""tcprobe: find out exactly how NVIDIA tensor-core instructions compute, bit for bit.

``tcprobe.matmul(A, B, C, gpu=...)`` multiplies matrices as a GPU's tensor
cores do, every word; ``tcprobe.dot`` runs one instruction on raw words.
"""

from pathlib import Path as _Path

__version__ = "0.1.0"
__all__ = ["__version__", "dot", "matmul"]

# The subpackages that pyproject maps in from the checkout's top level
# (package-dir): installed, they sit inside this folder; in a checkout they
# sit beside it. Where Python starts in a checkout (its root on sys.path, as
# `python3 -m tcprobe` or `python3 -` there), this folder is the package, so
# the checkout's root joins the package's search path and `tcprobe.models`
# is the checkout's models/: the tree imports whole wherever Python starts,
# and an installed copy is never half shadowed.
_MAPPED = ("models", "probes", "reports", "kernels")
_here = _Path(__file__).resolve().parent
_root = _here.parent
if not (_here / "models").is_dir() and all(
    (_root / name / "__init__.py").is_file() for name in _MAPPED
):
    __path__.append(str(_root))  # noqa: F821 (the package's own __path__)
del _here, _root


def __getattr__(name):
    # Imported on first use, so that the command line starts without them.
    if name in ("matmul", "dot"):
        from tcprobe import matrix

        value = globals()[name] = getattr(matrix, name)  # later lookups skip this function
        return value
    raise AttributeError(f"module 'tcprobe' has no attribute {name!r}")
