"""``--device cuda[:N]``: the harness kernels on a real GPU, through the driver API.

The device compiles (or reads from the cache) the harness cubin of the GPU's
own architecture, loads it with ``cuda.bindings.driver``, launches one tile a
CTA for a whole batch, and copies back the raw words. Without a driver or a
GPU, opening it fails with one line (DeviceError, exit 2); :func:`probe_gpu`
never raises.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from tcprobe.kernels import catalog
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.tiles.harness import Harness
from tcprobe.tiles.spec import PhysicalBatch, TileSpec
from tcprobe.tiles.tables import harness_for

from ..base import Device, DeviceError, KernelCheck
from . import launch as L
from . import nvrtc, sass

# The environment variable that puts the project's stand-in driver
# (tcprobe.devices.standin_driver) in place of libcuda: TCPROBE_CUDA_DRIVER=standin.
DRIVER_ENV = "TCPROBE_CUDA_DRIVER"


def _driver():
    chosen = os.environ.get(DRIVER_ENV, "").strip().lower()
    if chosen == "standin":
        from tcprobe.devices.standin_driver import StandInDriver

        return StandInDriver()
    if chosen not in ("", "libcuda"):
        raise DeviceError(f"{DRIVER_ENV}={chosen!r}: the CUDA driver is 'libcuda' (the default) or 'standin'")
    try:
        from cuda.bindings import driver
    except ImportError:
        raise DeviceError(f"the CUDA device needs cuda-bindings; {nvrtc.INSTALL_HINT}") from None
    try:
        (err,) = driver.cuInit(0)
    except Exception as e:  # libcuda.so is not on this machine
        what = "libcuda not found" if "NotFound" in type(e).__name__ else f"{type(e).__name__}: {e}"
        raise DeviceError(f"no NVIDIA driver on this machine ({what})") from None
    if err != driver.CUresult.CUDA_SUCCESS:
        raise DeviceError(f"the NVIDIA driver does not start: {err.name}")
    return driver


def _ok(driver, result, what: str):
    """The values of a driver call, or DeviceError naming the CUDA error."""
    if isinstance(result, tuple):
        err, vals = result[0], result[1:]
    else:
        err, vals = result, ()
    if err != driver.CUresult.CUDA_SUCCESS:
        raise DeviceError(f"{what} failed: {getattr(err, 'name', err)}")
    return vals[0] if len(vals) == 1 else vals


def gpu_status() -> tuple[list[tuple[int, str, tuple[int, int]]], str]:
    """The GPUs the driver sees, and a one-line account of why there are none."""
    try:
        driver = _driver()
        count = _ok(driver, driver.cuDeviceGetCount(), "cuDeviceGetCount")
        out = []
        for i in range(count):
            dev = _ok(driver, driver.cuDeviceGet(i), "cuDeviceGet")
            out.append((i, _name(driver, dev), _cc(driver, dev)))
    except Exception as e:
        return [], str(e)
    return out, "" if out else "the NVIDIA driver sees no GPU"


def probe_gpu() -> list[tuple[int, str, tuple[int, int]]]:
    """(index, name, compute capability) of every GPU the driver sees; [] when
    there is no driver, no GPU or no cuda-bindings (never raises)."""
    return gpu_status()[0]


def _name(driver, dev) -> str:
    raw = _ok(driver, driver.cuDeviceGetName(256, dev), "cuDeviceGetName")
    return raw.split(b"\0")[0].decode(errors="replace")


def _cc(driver, dev) -> tuple[int, int]:
    attr = driver.CUdevice_attribute
    major = _ok(driver, driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc")
    minor = _ok(driver, driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc")
    return int(major), int(minor)


def kernel_driver_version() -> str | None:
    """The NVIDIA kernel driver version (e.g. 580.105.08), from NVML or /proc."""
    try:
        from cuda.bindings import nvml

        nvml.init_v2()
        try:
            v = nvml.system_get_driver_version()
            return v.decode() if isinstance(v, bytes) else str(v)
        finally:
            nvml.shutdown()
    except Exception:
        pass
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        m = re.search(r"Kernel Module\s+(\S+)", text)
        return m.group(1) if m else None
    except OSError:
        return None


def driver_versions(driver=None) -> dict:
    """What ran: the kernel driver, the CUDA version the driver implements, and
    whether it is the stand-in driver; {} where there is no driver."""
    try:
        driver = driver or _driver()
        v = _ok(driver, driver.cuDriverGetVersion(), "cuDriverGetVersion")
    except Exception:
        return {}
    out = {"driver_cuda_version": f"{v // 1000}.{(v % 1000) // 10}", "driver_version": kernel_driver_version()}
    if getattr(driver, "stand_in", False):
        out["stand_in_driver"] = "tcprobe.devices.standin_driver: no GPU ran these kernels"
    return out


class CudaDevice(Device):
    """A GPU running the tcprobe harness kernels."""

    simulated = False

    def __init__(self, index: int = 0, tcgen05_smem: str = "canonical"):
        """``tcgen05_smem``: tcgen05's A layout, canonical (general tiles) or
        published (the write-up's overlapping offsets, for replaying its release)."""
        self.tcgen05_smem = tcgen05_smem
        self.driver = driver = _driver()
        count = _ok(driver, driver.cuDeviceGetCount(), "cuDeviceGetCount")
        if count == 0:
            raise DeviceError("the NVIDIA driver sees no GPU")
        if not 0 <= index < count:
            raise DeviceError(f"no GPU cuda:{index} (this machine has {count}: cuda:0..cuda:{count - 1})")
        self.index = index
        self.name = f"cuda:{index}"
        self.dev = _ok(driver, driver.cuDeviceGet(index), "cuDeviceGet")
        self.gpu = _name(driver, self.dev)
        self.cc = _cc(driver, self.dev)
        self.arch = catalog.arch_for_cc(*self.cc)
        self.ctx = _ok(driver, driver.cuDevicePrimaryCtxRetain(self.dev), "cuDevicePrimaryCtxRetain")
        _ok(driver, driver.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self._module = None
        self._cubin: nvrtc.Cubin | None = None
        self._functions: dict[str, object] = {}
        self._used: dict[str, str] = {}  # datapath id -> variant name

    # -- the cubin ---------------------------------------------------------
    @property
    def cubin(self) -> nvrtc.Cubin:
        if self._cubin is None:
            self._cubin = nvrtc.compile_harness(self.arch)
        return self._cubin

    def _function(self, v: catalog.Variant):
        if self._module is None:
            data = self.cubin.data
            self._module = _ok(self.driver, self.driver.cuModuleLoadData(data), "cuModuleLoadData")
        if v.symbol not in self._functions:
            self._functions[v.symbol] = _ok(
                self.driver, self.driver.cuModuleGetFunction(self._module, v.symbol.encode()),
                f"cuModuleGetFunction({v.symbol})")
        return self._functions[v.symbol]

    # -- Device interface ------------------------------------------------------
    def variant(self, dp: Datapath) -> catalog.Variant:
        try:
            return L.variant_for(dp, self.arch)
        except LookupError as e:
            raise DeviceError(f"{self.name} ({self.gpu}, {self.arch}): {e}") from None

    def supports(self, dp: Datapath) -> bool:
        try:
            L.variant_for(dp, self.arch)
        except LookupError:
            return False
        return True

    def tile(self, dp: Datapath) -> TileSpec:
        v = self.variant(dp)
        return L.tile_spec(v, dp)

    def launch(self, dp: Datapath, batch: PhysicalBatch, pick=None, layouts=None) -> np.ndarray:
        """Raw mode: (T, dump_words) words for T tiles, or (T, len(pick)) with
        ``pick`` (the dump words to read back). ``layouts``: the (A, B) operand
        layouts the slots follow (default: the harness's own, see
        :func:`tcprobe.devices.cuda.launch.default_layouts`)."""
        v = self.variant(dp)
        spec = L.tile_spec(v, dp)
        bufs = L.host_buffers(v, dp, batch, spec)
        a_layout, b_layout = layouts or self._layouts(v, dp)
        adesc, bdesc, idesc = L.descriptors(v, dp, a_layout, b_layout)
        pick_arr = None if pick is None else np.ascontiguousarray(pick, np.uint32)
        if pick_arr is not None and not len(pick_arr):
            raise DeviceError("an empty pick list (pass pick=None for every word)")
        if pick_arr is not None and int(pick_arr.max()) >= spec.dump_words:
            raise DeviceError(f"a picked word lies outside the {spec.dump_words}-word dump")
        width = spec.dump_words if pick_arr is None else len(pick_arr)
        out = np.empty((bufs.tiles, width), np.uint32)
        step = L.MAX_TILES_PER_LAUNCH
        for lo in range(0, bufs.tiles, step):
            hi = min(bufs.tiles, lo + step)
            out[lo:hi] = self._launch_chunk(v, dp, bufs, lo, hi, adesc, bdesc, idesc, pick_arr, width)
        self._used[dp.id] = v.name
        return out

    def run(self, dp: Datapath, cases: Cases) -> np.ndarray:
        """Result mode: the harness (:mod:`tcprobe.tiles.tables`) places each
        case in a tile, the kernel reads back the slice that carries D, the
        harness turns it into one word a case."""
        cases.check(dp)
        v = self.variant(dp)
        h = self.packing(dp)
        mine = L.tile_spec(v, dp)
        fields = ("c_slots", "dump_words", "scale_slots", "meta_slots")
        if v.family == "mma":  # register fragments: the kernel loads exactly the tile's slots
            fields += ("a_slots", "b_slots")
        for f in fields:
            if getattr(h.tile, f) != getattr(mine, f):
                raise DeviceError(f"the harness packing of {dp.id} has {f} = {getattr(h.tile, f)} "
                                  f"but the CUDA kernel has {getattr(mine, f)}")
        batch = h.pack(cases)
        pick = np.asarray(h.slice, np.uint32)
        layouts = (h.a_layout, h.b_layout) if v.family != "mma" else None
        dump = L.expand_picked(self.launch(dp, batch, pick=pick, layouts=layouts), pick,
                               mine.dump_words)
        return np.asarray(h.unpack(dump), np.uint32)

    def packing(self, dp: Datapath) -> Harness:
        """The result-mode packing of ``dp``: its documented harness."""
        return harness_for(dp, smem=self.tcgen05_smem)

    def sass_verdict(self, dp: Datapath) -> KernelCheck:
        """The SASS check of the kernel that runs ``dp`` on this GPU's architecture."""
        v = self.variant(dp)
        report = sass.check_arch(self.arch, (dp.family,))
        verdict = next((x for x in report.verdicts if x.harness == v.name), None)
        if verdict is None:
            return KernelCheck(v.name, v.symbol, self.arch, v.ptx, "?", (), "missing",
                               f"no verdict for kernel {v.name} on {self.arch}")
        return KernelCheck(v.name, v.symbol, self.arch, v.ptx, verdict.expected,
                           tuple(verdict.found), verdict.status, verdict.note,
                           verdict.emulation, verdict.profile)

    def info(self) -> dict:
        out = {**super().info(), "gpu": self.gpu, "compute_capability": f"{self.cc[0]}.{self.cc[1]}",
               "arch": self.arch}
        out.update(driver_versions(self.driver))
        try:
            out["nvrtc_version"] = ".".join(map(str, nvrtc.version()))
            from cuda.bindings import __version__ as cb_version

            out["cuda_bindings_version"] = cb_version
        except Exception:
            pass
        try:
            from . import sass

            out["nvdisasm_version"] = sass.nvdisasm_version()
        except Exception:
            pass
        try:
            out["cubin_sha256"] = self.cubin.sha256
            out["opcodes"] = self._opcodes()
        except Exception as e:  # the report still records what is known
            out["cubin_error"] = str(e)
        return out

    def close(self) -> None:
        if getattr(self, "_module", None) is not None:
            self.driver.cuModuleUnload(self._module)
            self._module = None
        if getattr(self, "ctx", None) is not None:
            self.driver.cuDevicePrimaryCtxRelease(self.dev)
            self.ctx = None

    # -- internals -------------------------------------------------------------
    def _opcodes(self) -> dict:
        """Tensor-core opcodes (from the SASS) of the kernels this device ran."""
        try:
            ops = sass.kernel_opcodes(self._cubin)
        except Exception as e:
            return {"error": f"SASS not read: {e}"}
        out = {}
        for dpid, name in self._used.items():
            v = catalog.by_name(name)
            out[dpid] = {"harness": name, "opcodes": ops.get(v.symbol, [])}
        return out

    def _layouts(self, v, dp):
        if v.family == "mma":
            return None, None
        try:
            h = self.packing(dp)
            return h.a_layout, h.b_layout
        except Exception:
            return L.default_layouts(v, dp)

    def _launch_chunk(self, v, dp, bufs, lo, hi, adesc, bdesc, idesc, pick, width) -> np.ndarray:
        d = self.driver
        n = hi - lo
        allocs = []

        def upload(arr):
            if arr is None:
                return 0
            part = np.ascontiguousarray(arr[lo:hi]) if arr.ndim == 2 and arr.shape[0] == bufs.tiles else arr
            ptr = _ok(d, d.cuMemAlloc(max(part.nbytes, 4)), "cuMemAlloc")
            allocs.append(ptr)
            _ok(d, d.cuMemcpyHtoD(ptr, part.ctypes.data, part.nbytes), "cuMemcpyHtoD")
            return int(ptr)

        try:
            vals = {"A": upload(bufs.a), "B": upload(bufs.b), "C": upload(bufs.c),
                    "SA": upload(bufs.scale_a), "SB": upload(bufs.scale_b), "META": upload(bufs.meta),
                    "pick": upload(pick), "npick": 0 if pick is None else len(pick), "ntiles": n,
                    "a_slots": bufs.a_slots, "b_slots": bufs.b_slots, "adesc": adesc, "bdesc": bdesc,
                    "idesc": idesc}
            ap, bp = L.packs(v, dp) if v.family != "mma" else (0, 0)
            vals["apack"], vals["bpack"] = ap, bp
            out = np.empty((n, width), np.uint32)
            optr = _ok(d, d.cuMemAlloc(out.nbytes), "cuMemAlloc")
            allocs.append(optr)
            vals["out"] = int(optr)
            params = L.ParamBlock(L.kernel_params(v.family, vals))
            smem = 0 if v.family == "mma" else L.smem_bytes(ap, bufs.a_slots, bp, bufs.b_slots)
            _ok(d, d.cuLaunchKernel(self._function(v), n, 1, 1, v.threads, 1, 1, smem, 0,
                                    params.address, 0), f"launching {v.symbol}")
            _ok(d, d.cuCtxSynchronize(), f"running {v.symbol}")
            _ok(d, d.cuMemcpyDtoH(out.ctypes.data, optr, out.nbytes), "cuMemcpyDtoH")
            return out
        finally:
            for p in allocs:
                d.cuMemFree(p)


def open_cuda(spec_rest: str) -> CudaDevice:
    """``cuda`` or ``cuda:N`` -> the device (DeviceError with one line otherwise)."""
    rest = spec_rest.strip()
    if rest and not rest.isdigit():
        raise DeviceError(f"cuda device index must be a number, not {rest!r} (cuda:0)")
    return CudaDevice(int(rest or 0))

