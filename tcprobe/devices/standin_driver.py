"""The project's stand-in for the CUDA driver and the harness kernels, for
machines with no GPU (tests, CI, ``scripts/gpu-check.sh --stand-in``).

:class:`StandInDriver` answers the driver calls :class:`~tcprobe.devices.cuda.CudaDevice`
makes: "device memory" is host memory (a device pointer is the address of a
numpy buffer), and ``cuLaunchKernel`` reads the parameter block the way the
driver does and runs :class:`KernelStandIn`, which restates what a harness
kernel computes from the documented semantics: register fragments for
mma.sync, and for the shared-memory families the operand addresses that the
matrix descriptors' LBO and SBO fields give, over the packed shared-memory
image. Arithmetic comes from the model ``--model auto`` picks for the
stand-in's GPU. What this checks is the host side: argument packing,
descriptor encoding, packing, the pick list and result decoding all fitting
together; it says nothing about silicon.

``TCPROBE_CUDA_DRIVER=standin`` makes ``--device cuda`` open this driver
(an H200, compute capability 9.0, CUDA 13.0) in place of libcuda.
"""

from __future__ import annotations

import ctypes
from dataclasses import replace
from functools import cached_property

import numpy as np
from cuda.bindings import driver as real

from tcprobe.devices.cuda import launch as L
from tcprobe.kernels import catalog
from tcprobe.models import isa, registry
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.tiles.descriptors import decode_smem_descriptor
from tcprobe.tiles.layout import MMA_FRAGMENTS, wgmma_d_layout

OK = real.CUresult.CUDA_SUCCESS
TMEM_COLS = 8  # C/D words a tensor-memory lane in the kernels' dump
STAND_IN_GPU, STAND_IN_CC, STAND_IN_CUDA = "NVIDIA H200", (9, 0), 13000
# Slot codes a 32-bit shared-memory word holds, for the packings whose slots
# tile the word exactly (the 6- and 4-bit group packings are read back by
# unpack_smem_words).
_PLAIN_PER_WORD = {catalog.PACK_B32: 1, catalog.PACK_B16: 2, catalog.PACK_B8: 4, catalog.PACK_B4: 8}


def d_word(v: catalog.Variant, dp: Datapath, row: int, col: int) -> tuple[int, int]:
    """(dump word, half) where a harness kernel leaves D[row, col]: half 0 is
    the word (or its low 16 bits for f16 accumulators), half 1 the high 16
    bits. Register fragments from the PTX ISA; tensor memory: M=128 row r in
    lane r, M=64 rows 16*w + i in lanes 32*w + i (f16 D in the low half)."""
    if v.family == "tcgen05":
        lane = row if v.m == 128 else 32 * (row // 16) + row % 16
        return lane * TMEM_COLS + col, 0
    if v.family == "mma":
        slot = int(MMA_FRAGMENTS[("m16n8k16", 16)][2].offset(row, col))  # one D fragment for all m16n8
        per = 4  # D elements a lane
    else:
        slot = int(wgmma_d_layout(v.n).offset(row, col))
        per = v.n // 2
    lane, e = divmod(slot, per)
    if v.acc_regs * 2 == per:  # f16 accumulators: two halves a register
        return lane * v.acc_regs + e // 2, e % 2
    return lane * v.acc_regs + e, 0


def unpack_smem_words(words: np.ndarray, pack: int, slots: int) -> np.ndarray:
    """The slot codes of a packed shared-memory image (pack_smem_words inverted)."""
    w = np.asarray(words, np.uint64)
    if pack in (catalog.PACK_B6X16P32, catalog.PACK_B4X16P64):
        width = 6 if pack == catalog.PACK_B6X16P32 else 4
        out = []
        for g in range(len(w) // 4):
            bits = sum(int(w[4 * g + q]) << (32 * q) for q in range(4))
            out.extend((bits >> (width * j)) & ((1 << width) - 1) for j in range(16))
        return np.array(out[:slots], np.uint32)
    per = _PLAIN_PER_WORD[pack]
    width = 32 // per
    s = np.arange(slots)
    return ((w[s // per] >> (width * (s % per)).astype(np.uint64)) & ((1 << width) - 1)).astype(np.uint32)


def variant_datapath(v: catalog.Variant) -> Datapath:
    """The one datapath an mma or wgmma variant runs (its format, D type and K)."""
    if v.family == "tcgen05" or len(v.formats) != 1 or len(v.d_types) != 1:
        raise ValueError(f"{v.name} runs several datapaths: give the stand-in driver one")
    dp = default_datapath(v.family, v.formats[0], v.d_types[0])
    parts = v.key.split(".")  # integer variants: .sat, and b1's operation
    bitop = next((x for x in parts if x in isa.BIT_OPS), dp.bitop)
    dp = replace(dp, saturate="sat" in parts, bitop=bitop)
    return dp if dp.k == v.k else dp.with_k(v.k)


class KernelStandIn:
    """Executes one harness variant on host memory, every tile of a launch at once."""

    def __init__(self, variant: catalog.Variant, dp: Datapath, gpu: str = STAND_IN_GPU):
        self.v, self.dp = variant, dp
        if variant.family == "tcgen05":
            self.model = registry.resolve("h100", Datapath("mma", dp.a_type, dp.a_type, dp.a_type,
                                                           dp.d_type, dp.k))
        else:
            self.model = registry.auto(dp, gpu)
        self.launches = 0

    @cached_property
    def d_words(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Row, column, dump word and half of every D element."""
        v, dp = self.v, self.dp
        rc = [(r, c) for r in range(v.m) for c in range(v.n)]
        wh = [d_word(v, dp, r, c) for r, c in rc]
        return (np.array([r for r, _ in rc]), np.array([c for _, c in rc]),
                np.array([w for w, _ in wh]), np.array([h for _, h in wh]))

    def operand(self, which: str, slots: np.ndarray, desc: int, rows: int, k: int) -> np.ndarray:
        """(tiles, rows, k) codes of one operand of every tile."""
        v, dp = self.v, self.dp
        if v.family == "mma":
            a, b = L.default_layouts(v, dp)  # the PTX register fragments
            return slots[:, (a if which == "a" else b).table]
        pack = L.packs(v, dp)[0 if which == "a" else 1]
        per_row = L.slots_per_16_bytes(pack)
        first = slots[0]
        if pack in _PLAIN_PER_WORD:  # each code keeps its low bits; checked on the first tile
            codes = slots & np.uint32((1 << (32 // _PLAIN_PER_WORD[pack])) - 1)
            assert np.array_equal(unpack_smem_words(L.pack_smem_words(first, pack), pack, len(first)),
                                  codes[0])
        else:
            codes = np.stack([unpack_smem_words(L.pack_smem_words(t, pack), pack, len(t)) for t in slots])
        f = decode_smem_descriptor(desc, v.family)
        assert f["start_bytes"] == 0 and f["swizzle"] == "none"
        r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
        row_bytes = (r % 8) * 16 + (r // 8) * f["sbo_bytes"] + (kk // per_row) * f["lbo_bytes"]
        return codes[:, row_bytes // 16 * per_row + kk % per_row]

    def run(self, p: dict, mem) -> None:
        v, dp = self.v, self.dp
        self.launches += 1
        spec = L.tile_spec(v, dp)
        n = p["ntiles"]
        if v.family == "mma":
            adt, bdt = L.container_dtype(v.a_bits, "mma"), L.container_dtype(v.b_bits, "mma")
            a_slots, b_slots = spec.a_slots, spec.b_slots
        else:
            ap, bp = L.packs(v, dp)
            adt, bdt = L.container_dtype(ap, v.family), L.container_dtype(bp, v.family)
            a_slots, b_slots = p["a_slots"], p["b_slots"]
            if v.family == "tcgen05":
                assert (p["apack"], p["bpack"]) == (ap, bp)
                idesc = p["idesc"]
                assert ((idesc >> 17) & 0x3F) << 3 == v.n and ((idesc >> 24) & 0x1F) << 4 == v.m
        A = mem(p["A"], adt, n * a_slots).reshape(n, a_slots).astype(np.uint32)
        B = mem(p["B"], bdt, n * b_slots).reshape(n, b_slots).astype(np.uint32)
        C = mem(p["C"], np.uint32, n * spec.c_slots).reshape(n, spec.c_slots)
        width = p["npick"] or spec.dump_words
        out = mem(p["out"], np.uint32, n * width).reshape(n, width)
        pick = mem(p["pick"], np.uint32, p["npick"]).astype(np.int64) if p["npick"] else None
        rows, cols, words, halves = self.d_words
        if pick is not None:  # only the D elements the readback holds
            keep = np.isin(words, pick)
            rows, cols, words, halves = rows[keep], cols[keep], words[keep], halves[keep]
        a = self.operand("a", A, p.get("adesc", 0), v.m, dp.stored_k)
        b = self.operand("b", B, p.get("bdesc", 0), v.n, dp.k)
        half16 = dp.d_type == "f16"
        c_words = C[:, words]
        if half16:
            c_words = (c_words >> (16 * halves).astype(np.uint32)) & np.uint32(0xFFFF)
        d = self.model.evaluate(Cases(a[:, rows].reshape(-1, a.shape[2]), b[:, cols].reshape(-1, b.shape[2]),
                                      c_words.reshape(-1))).reshape(n, len(rows))
        dump = C.copy()
        if half16:
            for h in (0, 1):
                sel = halves == h
                keep_mask = np.uint32(0xFFFF0000 if h == 0 else 0xFFFF)
                dump[:, words[sel]] = (dump[:, words[sel]] & keep_mask) | (d[:, sel] << np.uint32(16 * h))
        else:
            dump[:, words] = d
        out[:] = dump if pick is None else dump[:, pick]


class StandInDriver:
    """The driver calls CudaDevice makes, answered on host memory.

    ``dp``: the datapath every launch runs; needed for tcgen05 kernels, whose
    variants run several. mma and wgmma kernels run one each and need none."""

    CUresult = real.CUresult
    CUdevice_attribute = real.CUdevice_attribute
    stand_in = True  # CudaDevice.info() records that no GPU ran

    def __init__(self, name: str = STAND_IN_GPU, cc: tuple[int, int] = STAND_IN_CC,
                 dp: Datapath | None = None):
        self.name, self.cc = name, cc
        self.buffers: dict[int, np.ndarray] = {}
        self.kernels: dict[str, KernelStandIn] = {}
        self.dp = dp
        self.launched: list[tuple[str, int, int, int]] = []  # symbol, grid, block, smem

    def _datapath(self, v: catalog.Variant) -> Datapath:
        return self.dp if self.dp is not None else variant_datapath(v)

    # -- device and context
    def cuInit(self, flags):
        return (OK,)

    def cuDeviceGetCount(self):
        return OK, 1

    def cuDeviceGet(self, i):
        return OK, i

    def cuDeviceGetName(self, n, dev):
        return OK, self.name.encode() + b"\0"

    def cuDeviceGetAttribute(self, attr, dev):
        major = attr == real.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return OK, self.cc[0] if major else self.cc[1]

    def cuDriverGetVersion(self):
        return OK, STAND_IN_CUDA

    def cuDevicePrimaryCtxRetain(self, dev):
        return OK, "ctx"

    def cuDevicePrimaryCtxRelease(self, dev):
        return (OK,)

    def cuCtxSetCurrent(self, ctx):
        return (OK,)

    def cuCtxSynchronize(self):
        return (OK,)

    # -- module
    def cuModuleLoadData(self, data):
        assert data[:4] == b"\x7fELF"
        return OK, "module"

    def cuModuleUnload(self, module):
        return (OK,)

    def cuModuleGetFunction(self, module, name):
        return OK, name.decode()

    # -- memory
    def cuMemAlloc(self, nbytes):
        buf = np.zeros(nbytes, np.uint8)
        addr = buf.ctypes.data
        self.buffers[addr] = buf
        return OK, addr

    def cuMemFree(self, addr):
        self.buffers.pop(int(addr))
        return (OK,)

    def cuMemcpyHtoD(self, dst, src, nbytes):
        assert int(dst) in self.buffers and nbytes <= self.buffers[int(dst)].nbytes
        ctypes.memmove(int(dst), int(src), nbytes)
        return (OK,)

    def cuMemcpyDtoH(self, dst, src, nbytes):
        assert int(src) in self.buffers and nbytes <= self.buffers[int(src)].nbytes
        ctypes.memmove(int(dst), int(src), nbytes)
        return (OK,)

    def _mem(self, addr, dtype, count):
        base = self.buffers[int(addr)]
        return base[: count * np.dtype(dtype).itemsize].view(dtype)

    # -- launch: read the parameter block as the driver would
    def cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        v = next(v for v in catalog.variants() if v.symbol == func)
        types = L.PARAM_TYPES[v.family]
        ptrs = (ctypes.c_void_p * len(types)).from_address(int(params))
        values = {}
        for i, t in enumerate(types):
            name, ctype = (t, ctypes.c_uint64) if isinstance(t, str) else t
            values[name] = ctype.from_address(ptrs[i]).value
        assert gx == values["ntiles"] and bx == v.threads and gy == gz == by == bz == 1
        dp = self._datapath(v)
        if v.family != "mma":
            ap, bp = L.packs(v, dp)
            assert smem == L.smem_bytes(ap, values["a_slots"], bp, values["b_slots"])
        self.launched.append((func, gx, bx, smem))
        self.kernels.setdefault(func, KernelStandIn(v, dp, self.name)).run(values, self._mem)
        return (OK,)
