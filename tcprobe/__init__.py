"""tcprobe: find out exactly how NVIDIA tensor-core instructions compute, bit for bit."""

__version__ = "0.1.0"
