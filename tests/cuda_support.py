"""Shared by the CUDA tests: one cubin cache for the whole test session, and
the skip conditions (no NVRTC, no nvdisasm, no GPU)."""

from __future__ import annotations

import atexit
import shutil
import tempfile

import pytest

from tcprobe.devices.cuda import nvrtc

_CACHE: dict[str, str] = {}

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC (nvidia-cuda-nvrtc, a core dependency) is not installed")


def _has_nvdisasm() -> bool:
    try:
        from tcprobe.devices.cuda import sass

        sass.nvdisasm_path()
    except Exception:
        return False
    return True


needs_nvdisasm = pytest.mark.skipif(not _has_nvdisasm(), reason="nvdisasm (nvidia-cuda-nvdisasm, a core dependency) is not installed")


def _gpus():
    from tcprobe.devices.cuda.device import probe_gpu

    return probe_gpu()


GPUS = _gpus()
gpu_only = pytest.mark.skipif(not GPUS, reason="no NVIDIA GPU and driver here")


@pytest.fixture
def cubin_cache(monkeypatch):
    """Point TCPROBE_CACHE at one folder shared by every test of the session,
    so each architecture's harness compiles once."""
    if "dir" not in _CACHE:
        _CACHE["dir"] = tempfile.mkdtemp(prefix="tcprobe-test-cubins-")
    monkeypatch.setenv("TCPROBE_CACHE", _CACHE["dir"])
    return _CACHE["dir"]


@atexit.register
def _cleanup() -> None:  # pragma: no cover - runs at interpreter exit
    if "dir" in _CACHE:
        shutil.rmtree(_CACHE["dir"], ignore_errors=True)
