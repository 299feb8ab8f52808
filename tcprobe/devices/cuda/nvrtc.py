"""Compile CUDA C++ to a cubin for any named architecture with NVRTC.

No GPU and no driver are needed: NVRTC comes from the ``nvidia-cuda-nvrtc``
wheel through ``cuda-bindings`` (both in tcprobe's core install).
Cubins are cached on disk (:mod:`.cache`) by (source, headers, arch,
options, NVRTC version); the cached file name carries the key, so a changed
source never reads a stale cubin.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tcprobe.kernels import catalog

from . import cache as cubin_cache
from .cache import CACHE_FORMAT, cache_dir, write_cubin

ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")
INSTALL_HINT = ("tcprobe's core install brings them: pip install tcprobe "
                "(cuda-bindings, nvidia-cuda-nvrtc and nvidia-cuda-nvdisasm 13.x)")


class NvrtcUnavailable(RuntimeError):
    """cuda-bindings or the NVRTC library cannot be loaded."""


class CompileError(RuntimeError):
    """NVRTC rejected the source; the message carries the first errors."""


@dataclass
class Cubin:
    """A compiled cubin and where it came from."""

    arch: str
    data: bytes = field(repr=False)
    key: str  # cache key (hex)
    path: Path | None  # the cached file, None when caching is off
    cached: bool  # read from the cache rather than compiled
    seconds: float  # time to compile or to read
    log: str = ""

    @property
    def sha256(self) -> str:
        """Hash of the cubin bytes: what a report records."""
        return hashlib.sha256(self.data).hexdigest()


def check_arch(arch: str) -> str:
    """``arch`` normalized (``sm_90a``); ValueError if it is not an SM name."""
    a = arch.strip().lower()
    if not ARCH_RE.match(a):
        raise ValueError(f"not a GPU architecture: {arch!r} (e.g. sm_90a, sm_100a)")
    return a


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise NvrtcUnavailable(f"NVRTC is not available ({e.name or e}); {INSTALL_HINT}") from None
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as e:  # the shared library itself failed to load
        raise NvrtcUnavailable(f"the NVRTC library cannot be loaded ({e}); {INSTALL_HINT}") from None
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise NvrtcUnavailable(f"NVRTC does not answer ({err.name}); {INSTALL_HINT}")
    return nvrtc


def version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library; NvrtcUnavailable without it."""
    nvrtc = _nvrtc()
    _, major, minor = nvrtc.nvrtcVersion()
    return int(major), int(minor)


def available() -> bool:
    try:
        _nvrtc()
    except NvrtcUnavailable:
        return False
    return True


def supported_archs() -> list[int]:
    """Compute capabilities this NVRTC can target, e.g. [75, 80, ..., 120]."""
    nvrtc = _nvrtc()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    return [int(a) for a in archs]


def cache_key(source: str, arch: str, options: tuple[str, ...] = (),
              headers: dict[str, str] | None = None) -> str:
    """The key a cubin is cached under."""
    h = hashlib.sha256()
    ver = version()
    for part in (f"tcprobe-cubin-{CACHE_FORMAT}", f"nvrtc-{ver[0]}.{ver[1]}", arch, *options):
        h.update(part.encode() + b"\0")
    for name in sorted(headers or {}):
        h.update(name.encode() + b"\0" + headers[name].encode() + b"\0")
    h.update(source.encode())
    return h.hexdigest()


def _check(nvrtc, result, what: str) -> None:
    err = result[0] if isinstance(result, tuple) else result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CompileError(f"NVRTC {what} failed: {err.name}")


def _first_errors(log: str, limit: int = 4) -> str:
    lines = [ln.strip() for ln in log.splitlines() if "error" in ln.lower()]
    return "; ".join(lines[:limit]) or log.strip()[:400]


def compile_cubin(source: str, arch: str, *, name: str = "harness.cu",
                  headers: dict[str, str] | None = None, options: tuple[str, ...] = (),
                  use_cache: bool = True) -> Cubin:
    """Compile ``source`` to a cubin for ``arch`` (sm_80, sm_90a, sm_100a, ...),
    or read it from the cache. ``headers`` maps include names to their text."""
    arch = check_arch(arch)
    nvrtc = _nvrtc()
    opts = (f"--gpu-architecture={arch}", "-std=c++17", *options)
    key = cache_key(source, arch, opts, headers)
    path = cache_dir() / f"{Path(name).stem}-{arch}-{key[:24]}.cubin" if use_cache else None
    t0 = time.perf_counter()
    if path is not None:
        data = cubin_cache.read(path, key, arch)  # key, sha256, ELF arch and owner verified
        if data is not None:
            return Cubin(arch, data, key, path, True, time.perf_counter() - t0)
    prog = _program(nvrtc, source, name, headers)
    try:
        bopts = [o.encode() for o in opts]
        (cerr,) = nvrtc.nvrtcCompileProgram(prog, len(bopts), bopts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        buf = _out_buffer(size)
        nvrtc.nvrtcGetProgramLog(prog, buf)
        log = buf.rstrip(b"\0 ").decode(errors="replace")
        if cerr != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"{name} does not compile for {arch}: {_first_errors(log)}")
        res, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check(nvrtc, res, "cubin size")
        if size == 0:
            raise CompileError(f"NVRTC produced no cubin for {arch} (a virtual architecture?)")
        buf = _out_buffer(size)
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, buf), "cubin")
        data = buf[:size]
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    seconds = time.perf_counter() - t0
    if path is not None:
        cubin_cache.write(path, data, key, arch, write_cubin)
    return Cubin(arch, data, key, path, False, seconds, log)


def _out_buffer(size: int) -> bytes:
    """A fresh bytes object of at least ``size`` + 1 bytes for NVRTC to write
    into. Never ``b" " * size``: for a size of 1 (an empty log) that is
    CPython's shared one-byte b" ", which NVRTC's terminating NUL would turn
    into b"\\0" for the whole process (os.stat(" ") then fails with
    "embedded null byte")."""
    return bytes(max(size, 1) + 1)


def _program(nvrtc, source: str, name: str, headers: dict[str, str] | None):
    """An NVRTC program of ``source`` with its named in-memory headers."""
    hnames = sorted(headers or {})
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), len(hnames),
                                         [headers[n].encode() for n in hnames],
                                         [n.encode() for n in hnames])
    _check(nvrtc, err, "program creation")
    return prog


def compile_ptx(source: str, arch: str, *, name: str = "harness.cu",
                headers: dict[str, str] | None = None, options: tuple[str, ...] = ()) -> str:
    """The PTX of ``source`` for ``arch``'s virtual architecture (sm_90a ->
    compute_90a); not cached. The kernel signatures can be read from it."""
    arch = check_arch(arch)
    nvrtc = _nvrtc()
    opts = [o.encode() for o in (f"--gpu-architecture=compute_{arch[3:]}", "-std=c++17", *options)]
    prog = _program(nvrtc, source, name, headers)
    try:
        (cerr,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if cerr != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            buf = _out_buffer(size)
            nvrtc.nvrtcGetProgramLog(prog, buf)
            raise CompileError(f"{name} does not compile for {arch}: {_first_errors(buf.decode(errors='replace'))}")
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = _out_buffer(size)
        _check(nvrtc, nvrtc.nvrtcGetPTX(prog, buf), "PTX")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buf.rstrip(b"\0 ").decode()


def compile_harness(arch: str, families: tuple[str, ...] | None = None,
                    use_cache: bool = True) -> Cubin:
    """The harness cubin of ``arch``: every harness variant that the
    architecture supports (all families, or ``families``), in one cubin."""
    unit = catalog.translation_unit(arch, families)
    return compile_cubin(unit.source, arch, name=f"tcprobe-{'-'.join(unit.families)}.cu",
                         headers=unit.headers, use_cache=use_cache)
