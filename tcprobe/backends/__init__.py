"""Engines that compute a model's words elsewhere than the numba CPU kernels
(:mod:`.cuda_gemm`: the fixed-point GEMM chain as a CUDA kernel, and the host
build of the same source)."""
