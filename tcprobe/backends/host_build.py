"""The host build of ``kernels/tc_gemm.cu``: the CUDA backend's source compiled
as plain C++ (``g++ -O2 -shared``), loaded through ctypes.

It runs the kernel's own tile code with the CTA's threads as loops, so the
words it gives are the ones the kernel's arithmetic gives; the tests compare
them with the CPU engine's (:func:`tcprobe.models.gemm.gemm_words`). The
library is cached by the hash of its sources and the compiler's version in
``$TCPROBE_CACHE/host-gemm`` (default ``~/.cache/tcprobe/host-gemm``).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from tcprobe.kernels import source

SOURCES = ("tc_gemm.cu", "tc_gemm_core.cuh", "tc_gemm_groups.cuh", "tc_gemm_exact.cuh",
           "tc_gemm_amd.cuh")
TILE = 16  # TC_TILE of kernels/tc_gemm.cu
FLAGS = ("-O3", "-std=c++17", "-shared", "-fPIC", "-fwrapv", "-x", "c++")
_LOCK = threading.Lock()
_LIB: dict[str, ctypes.CDLL] = {}


class HostBuildError(RuntimeError):
    """No C++ compiler, or the source did not build."""


def compiler() -> str:
    """The C++ compiler: $CXX, else g++ (HostBuildError when there is none)."""
    cxx = os.environ.get("CXX") or "g++"
    path = shutil.which(cxx)
    if path is None:
        raise HostBuildError(f"no C++ compiler ({cxx}) for the host build of the CUDA backend")
    return path


def cache_dir() -> Path:
    env = os.environ.get("TCPROBE_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME",
                                                     Path.home() / ".cache")) / "tcprobe"
    return base / "host-gemm"


def _key(cxx: str) -> str:
    h = hashlib.sha256()
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    for part in (version, *FLAGS, *(source(n) for n in SOURCES)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


def build(force: bool = False) -> Path:
    """The shared library, built if it is not cached (``force``: rebuild)."""
    cxx = compiler()
    out = cache_dir() / f"libtcgemm-{_key(cxx)}.so"
    if out.exists() and not force:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in SOURCES:
            Path(tmp, n).write_text(source(n))
        lib = Path(tmp, "lib.so")
        r = subprocess.run([cxx, *FLAGS, str(Path(tmp, "tc_gemm.cu")), "-o", str(lib)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise HostBuildError(f"the host build of tc_gemm.cu failed: {r.stderr.strip()[:600]}")
        fd, part = tempfile.mkstemp(dir=out.parent, prefix=".tmp-", suffix=".so")
        os.close(fd)
        shutil.copyfile(lib, part)
        os.replace(part, out)
    return out


def library() -> ctypes.CDLL:
    """The loaded host build (built on first use)."""
    with _LOCK:
        path = str(build())
        if path not in _LIB:
            lib = ctypes.CDLL(path)
            u32p = np.ctypeslib.ndpointer(np.uint32, flags="C_CONTIGUOUS")
            lib.tc_gemm_host.argtypes = [np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS"),
                                         ctypes.c_longlong, u32p, u32p, u32p, u32p,
                                         ctypes.c_void_p, ctypes.c_void_p,  # scales or NULL
                                         ctypes.c_void_p,  # sparse A's active positions or NULL
                                         *[ctypes.c_longlong] * 7]
            lib.tc_gemm_host.restype = ctypes.c_int
            lib.tc_gemm_params_size.restype = ctypes.c_longlong
            _LIB[path] = lib
        return _LIB[path]


def run(params: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, blk_lo: int,
        blk_hi: int, jobs: int = 1, sa: np.ndarray | None = None,
        sb: np.ndarray | None = None, active: np.ndarray | None = None) -> np.ndarray:
    """D words of the chain over blocks blk_lo..blk_hi (uint32 arrays: A (M, K),
    B (K, N), C (M, N); block scales SA (M, K / scale block) and SB (N, K /
    scale block) where the parameters have them; ``active`` (M, K) bool: the
    positions a sparse A keeps); rows of CTAs split over ``jobs`` threads
    (ctypes releases the GIL)."""
    lib = library()
    a, b, c = (np.ascontiguousarray(x, dtype=np.uint32) for x in (a, b, c))
    sa, sb = (None if x is None else np.ascontiguousarray(x, dtype=np.uint32) for x in (sa, sb))
    act = None if active is None else np.ascontiguousarray(active, dtype=np.uint8)
    sa_p, sb_p, act_p = (None if x is None else x.ctypes.data for x in (sa, sb, act))
    params = np.ascontiguousarray(params, dtype=np.int64)
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.uint32)
    if m == 0 or n == 0:
        return out
    rows = -(-m // TILE)
    parts = max(1, min(jobs, rows))
    cuts = np.linspace(0, rows, parts + 1).astype(int)

    def task(r0: int, r1: int) -> int:
        return lib.tc_gemm_host(params, params.size, a, b, c, out, sa_p, sb_p, act_p, m, n, k,
                                blk_lo, blk_hi, int(r0), int(r1))

    if parts == 1:
        codes = [task(0, rows)]
    else:
        with ThreadPoolExecutor(parts) as pool:
            codes = list(pool.map(lambda r: task(*r), zip(cuts[:-1], cuts[1:], strict=True)))
    if any(codes):
        raise HostBuildError(f"tc_gemm_host refused its parameters (code {max(codes)})")
    return out
