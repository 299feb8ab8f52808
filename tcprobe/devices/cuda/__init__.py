"""``--device cuda[:N]``: the harness kernels on a real GPU.

- :mod:`.device`: the Device (driver calls, result and raw mode, SASS verdicts);
- :mod:`.launch`: the host side of a launch (variant, tile, buffers,
  descriptors, parameter block), pure and GPU-free;
- :mod:`.nvrtc`: CUDA C++ to cubin with NVRTC; :mod:`.cache`: the cubin cache;
- :mod:`.sass`: nvdisasm and the opcode verdicts of ``tcprobe sass-check``.

The CUDA sources and their build manifest are in ``tcprobe.kernels``.
"""
