"""NVRTC compilation and the cubin cache (no GPU needed)."""

from __future__ import annotations

import sys

import pytest
from cuda_support import cubin_cache, needs_nvrtc  # noqa: F401

from tcprobe.devices.cuda import nvrtc
from tcprobe.kernels import catalog

pytestmark = [needs_nvrtc, pytest.mark.usefixtures("cubin_cache")]

SMALL = r'''
typedef unsigned int u32;
extern "C" __global__ void add_one(u32* x) { x[threadIdx.x] += 1u; }
'''


def test_compiles_to_an_elf_cubin_for_the_named_arch():
    cub = nvrtc.compile_cubin(SMALL, "sm_90a", name="small.cu")
    assert cub.data[:4] == b"\x7fELF"
    assert cub.arch == "sm_90a" and not cub.cached
    assert len(cub.sha256) == 64
    assert cub.path is not None and cub.path.read_bytes() == cub.data


def test_second_compile_reads_the_cache():
    first = nvrtc.compile_cubin(SMALL + "// v2\n", "sm_80", name="small.cu")
    second = nvrtc.compile_cubin(SMALL + "// v2\n", "sm_80", name="small.cu")
    assert not first.cached and second.cached
    assert second.data == first.data and second.sha256 == first.sha256


def test_cache_key_depends_on_source_arch_options_and_headers():
    base = nvrtc.cache_key(SMALL, "sm_90a", ("-std=c++17",))
    assert nvrtc.cache_key(SMALL + " ", "sm_90a", ("-std=c++17",)) != base
    assert nvrtc.cache_key(SMALL, "sm_100a", ("-std=c++17",)) != base
    assert nvrtc.cache_key(SMALL, "sm_90a", ("-std=c++17", "-lineinfo")) != base
    assert nvrtc.cache_key(SMALL, "sm_90a", ("-std=c++17",), {"h.cuh": "x"}) != base
    assert nvrtc.cache_key(SMALL, "sm_90a", ("-std=c++17",)) == base


def test_cache_off_compiles_every_time():
    a = nvrtc.compile_cubin(SMALL, "sm_86", use_cache=False)
    b = nvrtc.compile_cubin(SMALL, "sm_86", use_cache=False)
    assert not a.cached and not b.cached and a.path is None and a.data == b.data


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TCPROBE_CACHE", str(tmp_path))
    assert nvrtc.cache_dir() == tmp_path / "cubin"


def test_a_corrupt_cache_file_is_recompiled():
    cub = nvrtc.compile_cubin(SMALL + "// corrupt\n", "sm_80")
    cub.path.write_bytes(b"not a cubin")
    again = nvrtc.compile_cubin(SMALL + "// corrupt\n", "sm_80")
    assert not again.cached and again.data == cub.data


def test_compile_error_is_one_clear_line():
    with pytest.raises(nvrtc.CompileError) as e:
        nvrtc.compile_cubin("extern \"C\" __global__ void k() { undefined_thing(); }", "sm_80",
                            name="bad.cu", use_cache=False)
    msg = str(e.value)
    assert "bad.cu does not compile for sm_80" in msg and "undefined_thing" in msg
    assert "\n" not in msg


def test_ptxas_rejections_are_reported():
    # e4m3 mma.sync needs sm_89: ptxas refuses it for sm_80.
    v = catalog.by_name("mma.e4m3.f32")
    unit = catalog.translation_unit("sm_89", only=(v,))
    with pytest.raises(nvrtc.CompileError, match="requires .target sm_89"):
        nvrtc.compile_cubin(unit.source, "sm_80", headers=unit.headers, use_cache=False)


@pytest.mark.parametrize("bad", ["sm90", "compute_90", "sm_9x", ""])
def test_arch_names_are_checked(bad):
    with pytest.raises(ValueError, match="not a GPU architecture"):
        nvrtc.check_arch(bad)


def test_missing_nvrtc_is_one_line_with_the_install_hint(monkeypatch):
    import cuda.bindings

    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    monkeypatch.delattr(cuda.bindings, "nvrtc", raising=False)
    with pytest.raises(nvrtc.NvrtcUnavailable, match=r"pip install tcprobe .*nvidia-cuda-nvrtc"):
        nvrtc.compile_cubin(SMALL, "sm_90a")
    assert not nvrtc.available()


def test_supported_archs_cover_every_harness_arch():
    ccs = set(nvrtc.supported_archs())
    for arch in catalog.ARCH_FAMILIES:
        assert int(arch[3:].rstrip("af")) in ccs


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("arch", list(catalog.ARCH_FAMILIES))
def test_every_harness_unit_compiles_with_every_kernel(arch):
    cub = nvrtc.compile_harness(arch)
    names = catalog.for_arch(arch)
    for v in names:
        assert v.symbol.encode() + b"\0" in cub.data, v.symbol
    assert b"tcp_pack_probe\0" in cub.data


def test_an_empty_log_leaves_the_shared_one_byte_strings_alone(tmp_path):
    """NVRTC writes a NUL into the buffer it is given for an empty log (size
    1): a buffer that was CPython's shared b" " turned every later " " path
    into "embedded null byte" (validate --out " " then failed as an internal
    error after any in-process compile)."""
    import os

    nvrtc.compile_cubin(SMALL + "// empty log\n", "sm_80", name="small.cu")
    nvrtc.compile_ptx(SMALL, "sm_80", name="small.cu")
    assert b" " * 1 == bytes([0x20])
    with pytest.raises(FileNotFoundError):
        os.stat(str(tmp_path / " "))
    with pytest.raises(FileNotFoundError):
        os.stat(" ")
