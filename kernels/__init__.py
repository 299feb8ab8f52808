"""CUDA C++ harness sources (one per instruction family). Installed as ``tcprobe.kernels``."""

from importlib import resources


def source(name: str) -> str:
    """The text of the harness source ``name`` (for example ``mma_sync.cu``)."""
    return resources.files(__name__).joinpath(name).read_text()
