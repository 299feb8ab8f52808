"""tcprobe: find out exactly how NVIDIA tensor-core instructions compute, bit for bit.

``tcprobe.matmul(A, B, C, gpu=...)`` multiplies matrices as a GPU's tensor
cores do, every word; ``tcprobe.dot`` runs one instruction on raw words.
"""

__version__ = "0.1.0"
__all__ = ["__version__", "dot", "matmul"]


def __getattr__(name):
    # Imported on first use, so that the command line starts without them.
    if name in ("matmul", "dot"):
        from tcprobe import matrix

        return getattr(matrix, name)
    raise AttributeError(f"module 'tcprobe' has no attribute {name!r}")
