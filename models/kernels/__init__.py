"""The engine's inner modules: the arithmetic core and the compiled kernels.

``core`` (one block of a fused dot product, written once), ``kernel_params``
(the kernels' parameters), ``core_loop`` (the block loop), ``lane_decoder``
(branch-free word fields), the engine's lane kernel (``lane_kernel``, with
the vector IR of ``lanes_ir`` and ``vector_ir``), the block-scaled kernels
(``scaled_kernel``, ``scaled_groups`` with ``groups_ir``), the split GEMM
chain (``gemm_split``) and ``kernel_stamp`` (the digest that keys numba's
disk cache). Nothing outside ``models/`` imports them: the engines
(``models/engine.py``, ``fastpath.py``, ``gemm.py``, ``tcgen05_scaled.py``)
are their callers. This package imports nothing itself.
"""
