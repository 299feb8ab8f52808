"""The host side of a CUDA harness launch: everything but the driver calls.

Which kernel runs a datapath, the tile geometry it implies (TileSpec), the
default operand layouts and the descriptors that match them, the typed host
buffers a PhysicalBatch becomes, the kernel's parameter block, and the
reassembly of a result-mode readback. All of it is pure and runs without a
GPU; :mod:`tcprobe.devices.cuda.device` adds the driver. Result mode packs
cases with the tiles layer's harness (:mod:`tcprobe.tiles.tables`).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from tcprobe.kernels import catalog
from tcprobe.kernels.catalog import (
    PACK_B4,
    PACK_B4X16P64,
    PACK_B6X16P32,
    PACK_B8,
    PACK_B16,
    PACK_B32,
    Variant,
)
from tcprobe.models import isa
from tcprobe.models.datapath import Datapath
from tcprobe.tiles import tmem
from tcprobe.tiles.descriptors import descriptor_for_layout, instruction_descriptor
from tcprobe.tiles.layout import MMA_FRAGMENTS, Layout, core_matrix_layout, mma_fragment_layouts
from tcprobe.tiles.spec import PhysicalBatch, TileSpec

from ..base import DeviceError

# Most tiles one launch carries; larger batches go in several launches.
MAX_TILES_PER_LAUNCH = 1 << 18


def variant_key(dp: Datapath) -> str:
    """The catalog key of the harness variant that runs ``dp`` (see catalog)."""
    a, d = dp.a_type, dp.d_type
    if dp.family == "tcgen05":
        key = dp.kind + (f".{dp.scale_vec or 1}x" if dp.block_scaled else "")
        return key + (".sparse" if dp.sparse else "")
    if dp.a_type != dp.b_type or dp.c != d or dp.sparse:
        return "?"  # mixed types, f16-to-f32 C, sparse mma.sp / wgmma.sp: no harness variant
    sat = ".sat" if dp.saturate else ""  # integer .satfinite variants
    if dp.bitop:
        return f"b1.{dp.bitop}"
    if dp.family == "wgmma":
        return f"{a}.{d}{sat}"
    if dp.kind == "f8f6f4":
        return f"f8f6f4.{a}.{d}"
    if dp.kind == "mxf8f6f4":  # its one scale form (the ISA table: ue8m0, scale_vec::1X)
        legal = (dp.scale_type, dp.scale_vec or 1) in isa.MMA_KIND_SCALES[dp.kind]
        return f"mxf8f6f4.{a}.{d}" if legal else "?"
    if dp.block_scaled:
        return f"{dp.kind}.{dp.scale_vec or 1}x.{dp.scale_type}"
    if dp.kind != a:
        return "?"
    return f"{a}.{d}{sat}" + ("" if dp.k == isa.INPUT_K.get(a) else f".k{dp.k}")  # m16n8k8: f16.f32.k8


def variant_for(dp: Datapath, arch: str) -> Variant:
    """The harness kernel that runs ``dp`` on ``arch``; LookupError if none."""
    key = variant_key(dp)
    for v in catalog.for_arch(arch):
        if v.family != dp.family or v.key != key or v.k != dp.k:
            continue
        if v.a_bits == 64:  # f64: compiled and sass-checked; no 64-bit tile is launched yet
            continue
        if dp.a_type not in v.formats or dp.b_type not in v.formats or dp.d_type not in v.d_types:
            continue
        if v.family == "tcgen05":
            if dp.c != dp.d_type:
                continue
            if dp.block_scaled and (dp.scale_type, dp.scale_vec or 1) not in isa.scale_choices(dp.kind):
                continue
        return v
    raise LookupError(f"no CUDA harness runs {dp.id} on {arch}")


_PACK_CODES = {name: code for code, name in catalog.PACK_NAMES.items()}


def operand_pack(dp: Datapath, t: str) -> int:
    """Shared-memory packing (TCP_PACK_*) of operand type ``t`` under ``dp``'s
    kind (which packing: the ISA table's :func:`isa.operand_packing`)."""
    try:
        return _PACK_CODES[isa.operand_packing(dp.kind, t)]
    except isa.IsaError as e:
        raise DeviceError(str(e)) from None


def slots_per_16_bytes(pack: int) -> int:
    """Operand slots in the 16 bytes of a core-matrix row."""
    return {PACK_B32: 4, PACK_B16: 8, PACK_B8: 16, PACK_B6X16P32: 16, PACK_B4X16P64: 16, PACK_B4: 32}[pack]


def smem_words(pack: int, slots: int) -> int:
    """32-bit shared-memory words of a packed buffer (tcp_words in common.cuh)."""
    per = {PACK_B32: 1, PACK_B16: 2, PACK_B8: 4, PACK_B6X16P32: 4, PACK_B4X16P64: 4, PACK_B4: 8}[pack]
    words = -(-slots // per)
    if pack in (PACK_B6X16P32, PACK_B4X16P64):
        words = (words + 3) & ~3
    return words


def pack_smem_words(codes, pack: int) -> np.ndarray:
    """The shared-memory words one tile's slot codes become (tcp_pack_word in
    common.cuh, restated): slot s of a b32/b16/b8/b4 buffer at bits
    (s % per) * width of word s // per; b6x16_p32 and b4x16_p64 pack each
    16 slots into 12 or 8 bytes (code j at bits width * j, low bits first),
    then zero bytes up to 16."""
    codes = np.asarray(codes, np.uint64)
    slots = len(codes)
    out = np.zeros(smem_words(pack, slots), np.uint64)
    if pack in (PACK_B6X16P32, PACK_B4X16P64):
        width = 6 if pack == PACK_B6X16P32 else 4
        for g in range(-(-slots // 16)):
            chunk = codes[16 * g:16 * g + 16] & ((1 << width) - 1)
            bits = 0
            for j, c in enumerate(chunk.tolist()):
                bits |= c << (width * j)
            for q in range(4):
                out[4 * g + q] = (bits >> (32 * q)) & 0xFFFFFFFF
        return out.astype(np.uint32)
    per = {PACK_B32: 1, PACK_B16: 2, PACK_B8: 4, PACK_B4: 8}[pack]
    width = 32 // per
    mask = (1 << width) - 1
    for s_, c in enumerate(codes.tolist()):
        out[s_ // per] |= (c & mask) << (width * (s_ % per))
    return out.astype(np.uint32)


def smem_bytes(a_pack: int, a_slots: int, b_pack: int, b_slots: int) -> int:
    """Dynamic shared memory of a wgmma/tcgen05 tile: A, then B from a 128-byte boundary."""
    b_off = (smem_words(a_pack, a_slots) + 31) & ~31
    return 4 * (b_off + smem_words(b_pack, b_slots))


SMEM_LIMIT = 48 * 1024  # a block's shared memory without an opt-in attribute (static + dynamic)


def stage_bytes(v) -> int:
    """Static shared memory of a wgmma/tcgen05 kernel: its ``stage[]`` of D,
    every thread's accumulator words (wgmma: registers; tcgen05: the columns
    a lane reads back), 4 bytes each (kernels/wgmma.cu, tcgen05.cu)."""
    return 4 * v.threads * v.acc_regs


def container_dtype(bits_or_pack: int, family: str) -> type:
    """numpy dtype of one slot code in the launch buffers."""
    if family == "mma":
        return {32: np.uint32, 16: np.uint16}.get(bits_or_pack, np.uint8)
    return {PACK_B32: np.uint32, PACK_B16: np.uint16}.get(bits_or_pack, np.uint8)


def packs(v: Variant, dp: Datapath) -> tuple[int, int]:
    if v.family == "wgmma":
        return v.a_pack, v.b_pack
    return operand_pack(dp, dp.a_type), operand_pack(dp, dp.b_type)


def tile_spec(v: Variant, dp: Datapath) -> TileSpec:
    """Buffer sizes of one raw-mode tile of variant ``v`` running ``dp``."""
    if v.family == "mma":
        # the fragment registers the kernel loads a lane (m16n8k8 f16: A 2, B 1)
        ea = v.a_regs * (32 // v.a_bits)
        eb = v.b_regs * (32 // v.b_bits)
        labels = tuple(f"t{t}.r{r}" for t in range(32) for r in range(v.acc_regs))
        return TileSpec(v.m, v.n, v.k, 32 * ea, 32 * eb, 32 * v.acc_regs, 32 * v.acc_regs, labels,
                        32 if v.scaled else 0, 0, v.ptx)
    if v.family == "wgmma":
        labels = tuple(f"t{t}.r{r}" for t in range(128) for r in range(v.acc_regs))
        return TileSpec(64, 8, v.k, 64 * v.k, 8 * v.k, 128 * v.acc_regs, 128 * v.acc_regs, labels,
                        0, 0, v.ptx)
    labels = tuple(f"l{lane}.c{c}" for lane in range(tmem.LANES) for c in range(tmem.D_COLS))
    words = tmem.LANES * tmem.D_COLS
    return TileSpec(v.m, v.n, v.k, v.m * dp.stored_k, v.n * v.k, words, words, labels,
                    tmem.LANES * tmem.SCALE_COLS if v.scaled else 0,
                    tmem.LANES * tmem.META_COLS if v.sparse else 0, v.ptx)


def default_layouts(v: Variant, dp: Datapath) -> tuple[Layout, Layout]:
    """Operand layouts the CUDA harness uses when no harness packing says
    otherwise: mma, the PTX register fragments; wgmma and tcgen05, K-major
    unswizzled core matrices, 8-row groups contiguous (SBO = 16 bytes x 8
    rows), then K blocks (LBO = all row groups). Each (row, k) has its own slot."""
    if v.family == "mma":
        shape = v.ptx.split(".m16n8k")[1].split(".")[0]
        if v.formats[0] in isa.MMA_ONLY_TYPES:  # s4/u4, b1: the rule the PTX tables follow
            a, b, _ = mma_fragment_layouts(int(shape), v.a_bits)
            return a, b
        bits = 8 if v.a_bits == 4 else v.a_bits  # packed e2m1 has no table of its own
        key = (f"m16n8k{shape}", bits)
        if key not in MMA_FRAGMENTS:
            raise LookupError(f"no register-fragment layout for {v.name}")
        a, b, _ = MMA_FRAGMENTS[key]
        return a, b
    ap, bp = packs(v, dp)
    k_a = dp.stored_k if v.family == "tcgen05" else v.k
    out = []
    for rows, k, pack in ((v.m if v.family == "tcgen05" else 64, k_a, ap), (v.n, v.k, bp)):
        t = slots_per_16_bytes(pack)
        out.append(core_matrix_layout(rows, k, t, lbo=rows * t, sbo=8 * t))
    return out[0], out[1]


def descriptors(v: Variant, dp: Datapath, a_layout: Layout, b_layout: Layout, m: int | None = None
                ) -> tuple[int, int, int]:
    """(A descriptor, B descriptor, instruction descriptor) for a smem launch;
    zeros where the family has none."""
    if v.family == "mma":
        return 0, 0, 0
    ap, bp = packs(v, dp)
    adesc = descriptor_for_layout(v.family, a_layout, slots_per_16_bytes(ap))
    bdesc = descriptor_for_layout(v.family, b_layout, slots_per_16_bytes(bp))
    idesc = instruction_descriptor(dp, m or v.m, v.n) if v.family == "tcgen05" else 0
    return adesc, bdesc, idesc


@dataclass
class HostBuffers:
    """A PhysicalBatch as the typed, contiguous arrays a launch copies."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    scale_a: np.ndarray | None
    scale_b: np.ndarray | None
    meta: np.ndarray | None
    tiles: int
    a_slots: int
    b_slots: int


def _as_container(x: np.ndarray, dtype, what: str) -> np.ndarray:
    x = np.asarray(x)
    if x.size and int(x.max()) > np.iinfo(dtype).max:
        raise DeviceError(f"a code of {what} ({int(x.max()):#x}) does not fit its {np.dtype(dtype).name} container")
    return np.ascontiguousarray(x, dtype=dtype)


def host_buffers(v: Variant, dp: Datapath, batch: PhysicalBatch, spec: TileSpec) -> HostBuffers:
    """Check a batch against the kernel's tile and convert it to launch arrays."""
    t = len(batch)
    if t == 0:
        raise DeviceError("an empty batch")
    if batch.c.shape != (t, spec.c_slots):
        raise DeviceError(f"C of {v.name} needs {spec.c_slots} words a tile, got {batch.c.shape[1:]}")
    if v.family == "mma":
        if batch.a.shape[1] != spec.a_slots or batch.b.shape[1] != spec.b_slots:
            raise DeviceError(f"{v.name} takes {spec.a_slots} A and {spec.b_slots} B slots a tile, "
                              f"got {batch.a.shape[1]} and {batch.b.shape[1]}")
        adt, bdt = container_dtype(v.a_bits, "mma"), container_dtype(v.b_bits, "mma")
    else:
        ap, bp = packs(v, dp)
        adt, bdt = container_dtype(ap, v.family), container_dtype(bp, v.family)
        dynamic = smem_bytes(ap, batch.a.shape[1], bp, batch.b.shape[1])
        need = dynamic + stage_bytes(v)
        if need > SMEM_LIMIT:
            raise DeviceError(f"{v.name}: {need} bytes of shared memory a tile ({dynamic} for A and "
                              f"B, {stage_bytes(v)} for the D stage) is more than 48 KiB")
    extras = {}
    for name, slots in (("scale_a", spec.scale_slots), ("scale_b", spec.scale_slots), ("meta", spec.meta_slots)):
        arr = getattr(batch, name)
        if slots == 0:
            extras[name] = None
            continue
        if arr is None or arr.shape != (t, slots):
            raise DeviceError(f"{v.name} needs {name} with {slots} words a tile")
        extras[name] = _as_container(arr, np.uint32, name)
    return HostBuffers(_as_container(batch.a, adt, "A"), _as_container(batch.b, bdt, "B"),
                       _as_container(batch.c, np.uint32, "C"), extras["scale_a"], extras["scale_b"],
                       extras["meta"], t, batch.a.shape[1], batch.b.shape[1])


# Parameter types of each family's kernels, in order (see the .cu sources).
_PTR, _U32, _U64 = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64
PARAM_TYPES = {
    "mma": ("A", "B", "C", "SA", "SB", "pick", ("npick", _U32), "out", ("ntiles", _U32)),
    "wgmma": ("A", "B", "C", ("a_slots", _U32), ("b_slots", _U32), ("adesc", _U64), ("bdesc", _U64),
              "pick", ("npick", _U32), "out", ("ntiles", _U32)),
    "tcgen05": ("A", "B", "C", "META", "SA", "SB", ("a_slots", _U32), ("b_slots", _U32),
                ("apack", _U32), ("bpack", _U32), ("adesc", _U64), ("bdesc", _U64), ("idesc", _U32),
                "pick", ("npick", _U32), "out", ("ntiles", _U32)),
}


def kernel_params(family: str, values: dict) -> list[tuple[str, object]]:
    """The kernel's parameters as (name, ctypes value), device pointers as
    64-bit integers (0 for an absent buffer)."""
    out = []
    for p in PARAM_TYPES[family]:
        name, ctype = (p, _PTR) if isinstance(p, str) else p
        if name not in values:
            raise DeviceError(f"kernel parameter {name} of the {family} harness is missing")
        val = int(values[name] or 0)
        if val < 0 or val >> (8 * ctypes.sizeof(ctype)):
            raise DeviceError(f"kernel parameter {name} = {val} does not fit {ctype.__name__}")
        out.append((name, ctype(val)))
    return out


class ParamBlock:
    """The ``void**`` array cuLaunchKernel reads; keeps its values alive."""

    def __init__(self, params: list[tuple[str, object]]):
        self.values = [v for _, v in params]
        self.array = (ctypes.c_void_p * len(self.values))(*[ctypes.addressof(v) for v in self.values])

    @property
    def address(self) -> int:
        return ctypes.addressof(self.array)

    def raw(self, i: int) -> bytes:
        """The bytes parameter i points at (what the driver copies)."""
        v = self.values[i]
        return ctypes.string_at(self.array[i], ctypes.sizeof(v))


def expand_picked(picked: np.ndarray, pick: np.ndarray, dump_words: int) -> np.ndarray:
    """A full (T, dump_words) dump from result-mode words: ``picked`` holds,
    per tile, the words at ``pick``; every other word is 0."""
    picked = np.asarray(picked, np.uint32)
    pick = np.asarray(pick, np.int64)
    if picked.ndim != 2 or picked.shape[1] != len(pick):
        raise DeviceError(f"readback of shape {picked.shape} does not match {len(pick)} picked words")
    if len(pick) and (pick.min() < 0 or pick.max() >= dump_words):
        raise DeviceError(f"a picked word lies outside the {dump_words}-word dump")
    full = np.zeros((picked.shape[0], dump_words), np.uint32)
    full[:, pick] = picked
    return full
