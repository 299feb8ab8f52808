"""The fixed-point GEMM chain as a CUDA kernel (``kernels/tc_gemm.cu``), and
the same source built for the host.

:func:`gemm_words_cuda` has the contract of the chain of
:func:`tcprobe.models.gemm.gemm_words`: words in, words out, D (M, N) of the
chain over instruction tiles ``lo .. hi`` of A (M, K) and B (K, N) from the
start words C (M, N). NumPy arrays run the host build
(:mod:`.host_build`); torch CUDA tensors run the kernel on their device, on
torch's current stream (compiled by NVRTC for the device's architecture).
:func:`supports` says which models it computes (:mod:`.cuda_params`).

The kernel has compiled here for sm_80/sm_90 (tests/test_cuda_backend.py) but
has not run on a GPU: docs/cuda-backend.md says what is measured.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tcprobe.kernels import source

from . import cuda_params, host_build
from .cuda_params import Unsupported, pack, supports

__all__ = ["KERNEL", "KERNELS", "Unsupported", "compile_kernel", "gemm_words_cuda", "headers",
           "product_words_cuda", "supports"]

KERNEL = "tc_gemm_chain"
KERNELS = (KERNEL, "tc_gemm_wide")  # AMD designs, exact sums: the same tile, its own registers
TILE = host_build.TILE
MAX_GRID_Y = 65535


def _tiles(mdl, a, b, c, lo: int, hi: int, sa=None, sb=None, active=None) -> tuple[int, int]:
    """Blocks blk_lo..blk_hi of tiles lo..hi, with the shapes checked."""
    dp = mdl.datapath
    if len(a.shape) != 2 or len(b.shape) != 2 or len(c.shape) != 2:
        raise ValueError("A, B and C must be matrices of words")
    m, k = a.shape
    if b.shape[0] != k or tuple(c.shape) != (m, b.shape[1]):
        raise ValueError(f"shapes do not chain: A {tuple(a.shape)}, B {tuple(b.shape)}, "
                         f"C {tuple(c.shape)}")
    sbk = cuda_params.scale_blocks(mdl)
    if not sbk and (sa is not None or sb is not None):
        raise ValueError(f"{dp.id} takes no block scales")
    if sbk:
        want = ((m, k // sbk), (b.shape[1], k // sbk))
        for name, s, shape in (("SA", sa, want[0]), ("SB", sb, want[1])):
            if s is None or tuple(s.shape) != shape:
                got = None if s is None else tuple(s.shape)
                raise ValueError(f"{dp.id}: {name} must be {shape} scale words, not {got}")
    if dp.sparse and (active is None or tuple(active.shape) != (m, k)):
        got = None if active is None else tuple(active.shape)
        raise ValueError(f"{dp.id}: a sparse datapath takes active, A's kept positions "
                         f"({m}, {k}), not {got}")
    if not dp.sparse and active is not None:
        raise ValueError(f"{dp.id} is not sparse: no active positions")
    if not 0 <= lo <= hi or hi * dp.k > k:
        raise ValueError(f"tiles {lo}..{hi} of K={dp.k} do not fit in K={k}")
    per = cuda_params.per_instr(mdl)
    return lo * per, hi * per


def gemm_words_cuda(mdl, a, b, c, lo: int, hi: int, *, sa=None, sb=None, active=None,
                    jobs: int = 1):
    """D words of the chain over tiles lo..hi (see the module doc): uint32
    NumPy arrays in, a uint32 array out (the host build, rows over ``jobs``
    threads); torch CUDA tensors (uint32 words, or int32 holding them) in,
    an int32 CUDA tensor of the words out. ``sa``, ``sb``: the block scales
    of a block-scaled kind (and only there); ``active`` (M, K) bool: the
    positions a sparse A keeps (sparse datapaths only, and always there; a
    left-out position is a zero that no B word there can make NaN, as
    models.gemm's MASKED). Unsupported for a model the backend does not compute."""
    params = pack(mdl)
    blk_lo, blk_hi = _tiles(mdl, a, b, c, lo, hi, sa, sb, active)
    a, b, active = _k_ordered(mdl, a, b, active)
    extra = [x for x in (sa, sb, active) if x is not None]
    if all(isinstance(x, np.ndarray) for x in (a, b, c, *extra)):
        return host_build.run(params, a, b, c, blk_lo, blk_hi, jobs, sa, sb, active)
    return _run_torch(params, a, b, c, blk_lo, blk_hi, sa, sb, active)


def _k_ordered(mdl, a, b, active):
    """A's columns and B's rows (and sparse A's kept positions) in the order a
    model consumes each instruction's K positions (a ``k_order``, a split
    model's parts: cuda_params.k_order): position j of
    tile T holds position ``k_order[j]`` of T. A block's sum is the same in any
    order of its products (integers), so the order decides only which
    products share a block, and the kernel's blocks of consecutive positions
    are then the engine's (core_loop: order[lo:hi])."""
    order = cuda_params.k_order(mdl)
    if order is None:
        return a, b, active
    dk = mdl.datapath.k
    k = a.shape[1]
    idx = np.arange(k)
    full = k - k % dk
    idx[:full] = (idx[:full] // dk) * dk + np.asarray(order, np.int64)[idx[:full] % dk]
    if isinstance(a, np.ndarray):
        return a[:, idx], b[idx], None if active is None else active[:, idx]
    import torch

    t = torch.as_tensor(idx, device=a.device)
    return (a.index_select(1, t), b.index_select(0, t),
            None if active is None else active.index_select(1, t))


# ---------------------------------------------------------------------------
# The kernel: NVRTC, then torch's device through the driver API


def headers() -> dict[str, str]:
    """The headers tc_gemm.cu includes, by name (host_build.SOURCES but the .cu)."""
    return {n: source(n) for n in host_build.SOURCES[1:]}


def compile_kernel(arch: str, use_cache: bool = True):
    """The kernels' cubin for ``arch`` (sm_80, sm_90, ...), by NVRTC."""
    from tcprobe.devices.cuda import nvrtc

    return nvrtc.compile_cubin(source("tc_gemm.cu"), arch, name="tc_gemm.cu",
                               headers=headers(), options=("-default-device",),
                               use_cache=use_cache)


_FUNCTIONS: dict[tuple[int, str], tuple] = {}  # (device index, kernel) -> (function, context)


def _function(torch, device_index: int, kernel: str = KERNEL):
    """The loaded ``kernel`` for torch's device ``device_index`` (its primary context)."""
    if (device_index, kernel) in _FUNCTIONS:
        return _FUNCTIONS[(device_index, kernel)]
    from cuda.bindings import driver

    major, minor = torch.cuda.get_device_capability(device_index)
    cubin = compile_kernel(f"sm_{major}{minor}")
    torch.cuda.init()
    with torch.cuda.device(device_index):
        torch.empty(1, device=f"cuda:{device_index}")  # torch's primary context exists
        ctx = _primary_context(driver, device_index)
        err, module = driver.cuModuleLoadData(cubin.data)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuModuleLoadData failed: {err.name}")
        err, fn = driver.cuModuleGetFunction(module, kernel.encode())
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuModuleGetFunction({kernel}) failed: {err.name}")
    _FUNCTIONS[(device_index, kernel)] = (fn, ctx)
    return fn, ctx


def _primary_context(driver, device_index: int):
    """The device's primary context (the one torch's runtime uses), made
    current on this thread: the module and every launch live in it."""
    (err,) = driver.cuInit(0)
    if err == driver.CUresult.CUDA_SUCCESS:
        err, dev = driver.cuDeviceGet(device_index)
    if err == driver.CUresult.CUDA_SUCCESS:
        err, ctx = driver.cuDevicePrimaryCtxRetain(dev)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"no primary context on CUDA device {device_index}: {err.name}")
    (err,) = driver.cuCtxSetCurrent(ctx)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuCtxSetCurrent failed: {err.name}")
    return ctx


def _words(torch, x):
    """A CUDA tensor of 32-bit words as a contiguous int32 tensor (same bits)."""
    if x.dtype not in (torch.int32, torch.uint32):
        raise ValueError(f"words must be int32 or uint32 tensors, not {x.dtype}")
    x = x.contiguous()
    return x.view(torch.int32) if x.dtype == torch.uint32 else x


def _run_torch(params: np.ndarray, a, b, c, blk_lo: int, blk_hi: int, sa=None, sb=None,
               active=None):
    import torch
    from cuda.bindings import driver

    scales = [x for x in (sa, sb, active) if x is not None]
    if not all(isinstance(x, torch.Tensor) and x.is_cuda for x in (a, b, c, *scales)):
        raise ValueError("A, B and C (and the scales) must all be NumPy arrays (host build) or "
                         "all CUDA tensors")
    dev = a.device
    if any(x.device != dev for x in (b, c, *scales)):
        raise ValueError("A, B and C (and the scales) must be on one CUDA device")
    a, b, c = (_words(torch, x) for x in (a, b, c))
    sa, sb = (None if x is None else _words(torch, x) for x in (sa, sb))
    nsc = 0 if sa is None else sa.shape[1]
    act = None if active is None else active.to(torch.uint8).contiguous()
    m, k = a.shape
    n = b.shape[1]
    out = torch.empty((m, n), dtype=torch.int32, device=dev)
    if m == 0 or n == 0:
        return out
    fn, ctx = _function(torch, dev.index, cuda_params.kernel_name(params))
    (err,) = driver.cuCtxSetCurrent(ctx)  # this thread may never have made it current
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuCtxSetCurrent failed: {err.name}")
    p = (ctypes.c_longlong * params.size)(*params.tolist())
    stream = torch.cuda.current_stream(dev).cuda_stream
    for r0 in range(0, m, MAX_GRID_Y * TILE):  # the grid's y dimension holds 65,535 CTAs
        rows = min(m - r0, MAX_GRID_Y * TILE)
        ptr = (a.data_ptr() + 4 * r0 * k, b.data_ptr(), c.data_ptr() + 4 * r0 * n,
               out.data_ptr() + 4 * r0 * n, 0 if sa is None else sa.data_ptr() + 4 * r0 * nsc,
               0 if sb is None else sb.data_ptr(), 0 if act is None else act.data_ptr() + r0 * k)
        args = [p, *(ctypes.c_void_p(x) for x in ptr),
                *(ctypes.c_longlong(v) for v in (rows, n, k, blk_lo, blk_hi))]
        ptrs = (ctypes.c_void_p * len(args))(*(ctypes.addressof(x) for x in args))
        (err,) = driver.cuLaunchKernel(fn, -(-n // TILE), -(-rows // TILE), 1, TILE, TILE, 1,
                                       0, stream, ctypes.addressof(ptrs), 0)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"launching {cuda_params.kernel_name(params)} failed: "
                               f"{err.name}")
    return out



def product_words_cuda(mdl, a, b, c, *, sa=None, sb=None, active=None, jobs: int = 1):
    """D words of A (M, K) @ B (K, N) + C over every instruction tile, K any
    length: A's columns and B's rows padded with +0 words to whole tiles (as
    :class:`tcprobe.matrix.mainloop.MainLoop` pads them; a zero product never sets
    the anchor, so the padding changes no word); block scales (``sa``, ``sb``:
    one a scale block of the padded K) padded with the scale of one."""
    k = a.shape[1]
    tiles = -(-k // mdl.datapath.k)
    pad = tiles * mdl.datapath.k - k
    sbk = cuda_params.scale_blocks(mdl)
    spad = 0 if not sbk or sa is None else tiles * mdl.datapath.k // sbk - sa.shape[1]
    if pad or spad:
        if isinstance(a, np.ndarray):
            a = np.pad(np.asarray(a, np.uint32), ((0, 0), (0, pad)))
            b = np.pad(np.asarray(b, np.uint32), ((0, pad), (0, 0)))
            if active is not None:
                active = np.pad(np.asarray(active, bool), ((0, 0), (0, pad)))
            if spad:
                one = cuda_params.scale_one(mdl)
                sa, sb = (np.pad(np.asarray(s, np.uint32), ((0, 0), (0, spad)),
                                 constant_values=one) for s in (sa, sb))
        else:
            import torch
            import torch.nn.functional as tf

            a, b = tf.pad(a, (0, pad)), tf.pad(b, (0, 0, 0, pad))
            if active is not None:
                active = tf.pad(active.to(torch.uint8), (0, pad))
            if spad:
                one = cuda_params.scale_one(mdl)
                sa, sb = (tf.pad(s, (0, spad), value=one) for s in (sa, sb))
    return gemm_words_cuda(mdl, a, b, c, 0, tiles, sa=sa, sb=sb, active=active, jobs=jobs)
