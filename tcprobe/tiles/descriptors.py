"""The descriptors the smem harnesses pass to wgmma and tcgen05.mma.

Shared-memory matrix descriptors (64 bits; PTX ISA, "matrix descriptor"):

=========  ===========================================================
bits       field
=========  ===========================================================
0-13       start address >> 4 (the kernel adds the buffer's address)
16-29      leading-dimension byte offset (LBO) >> 4
32-45      stride-dimension byte offset (SBO) >> 4
46-48      tcgen05 only: the fixed version value 0b001
49-51      matrix base offset (0 for the layouts used here)
52         tcgen05 only: LBO mode (0: relative offset)
62-63      wgmma swizzle: 0 none, 1 128B, 2 64B, 3 32B
61-63      tcgen05 swizzle: 0 none, 1 128B (32B atom), 2 128B, 4 64B, 6 32B
=========  ===========================================================

The tcgen05.mma instruction descriptor, the 32-bit ``idesc`` word: bit
fields from the PTX ISA, section "Instruction descriptor" of tcgen05
(tables for .kind::tf32/f16/f8f6f4/i8, for .kind::mxf8f6f4, and for
.kind::mxf4/mxf4nvf4). The kind itself and scale_vec are qualifiers of the
instruction, not descriptor bits, so decoding needs the kind.

Checked against the words the tcgen05 write-up's authors used on B200
(../shared/notes/tcgen05-published-parameters.md): tf32 M64N8 0x04020910,
bf16 0x04020490, s8 x s8 -> s32 0x040204A0, nvfp4 M128N8 0x08020480 (ue4m3)
and 0x08820480 (ue8m0).
"""

from __future__ import annotations

from dataclasses import dataclass

from tcprobe.models import isa
from tcprobe.models.datapath import Datapath
from tcprobe.models.tcgen05 import check_datapath
from tcprobe.tiles.layout import Layout


class DescriptorError(ValueError):
    """A descriptor word or field PTX does not define, a field that does not
    fit, or a layout no descriptor describes."""


# ---------------------------------------------------------------------------
# Shared-memory matrix descriptors

WGMMA_SWIZZLE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
TCGEN05_SWIZZLE = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}

def _field(value: int, bits: int, name: str) -> int:
    if not 0 <= value < (1 << bits):
        raise DescriptorError(f"{name} = {value} does not fit in {bits} bits")
    return value


def _offset16(nbytes: int, name: str) -> int:
    if nbytes % 16:
        raise DescriptorError(f"{name} = {nbytes} bytes is not a multiple of 16")
    return _field(nbytes >> 4, 14, name)


def smem_descriptor(family: str, lbo_bytes: int, sbo_bytes: int, start_bytes: int = 0,
                    swizzle: str = "none", base_offset: int = 0) -> int:
    """The 64-bit shared-memory matrix descriptor of ``family`` (wgmma or tcgen05)."""
    d = _offset16(start_bytes, "start address")
    d |= _offset16(lbo_bytes, "LBO") << 16
    d |= _offset16(sbo_bytes, "SBO") << 32
    d |= _field(base_offset, 3, "base offset") << 49
    if family == "wgmma":
        if swizzle not in WGMMA_SWIZZLE:
            raise DescriptorError(f"wgmma swizzle {swizzle!r} (known: {', '.join(WGMMA_SWIZZLE)})")
        d |= WGMMA_SWIZZLE[swizzle] << 62
    elif family == "tcgen05":
        if swizzle not in TCGEN05_SWIZZLE:
            raise DescriptorError(f"tcgen05 swizzle {swizzle!r} (known: {', '.join(TCGEN05_SWIZZLE)})")
        d |= 0b001 << 46
        d |= TCGEN05_SWIZZLE[swizzle] << 61
    else:
        raise DescriptorError(f"no matrix descriptor for family {family!r}")
    return d


def decode_smem_descriptor(desc: int, family: str) -> dict:
    """The fields of a matrix descriptor (bytes for addresses and offsets)."""
    out = {"start_bytes": (desc & 0x3FFF) << 4, "lbo_bytes": ((desc >> 16) & 0x3FFF) << 4,
           "sbo_bytes": ((desc >> 32) & 0x3FFF) << 4, "base_offset": (desc >> 49) & 7}
    if family == "tcgen05":
        out["version"] = (desc >> 46) & 7
        out["lbo_mode"] = (desc >> 52) & 1
        inv = {v: k for k, v in TCGEN05_SWIZZLE.items()}
        out["swizzle"] = inv.get((desc >> 61) & 7, f"reserved {(desc >> 61) & 7}")
    else:
        inv = {v: k for k, v in WGMMA_SWIZZLE.items()}
        out["swizzle"] = inv[(desc >> 62) & 3]
    return out


def slot_bytes(slots_per_16_bytes: int) -> float:
    return 16 / slots_per_16_bytes


def descriptor_for_layout(family: str, layout: Layout, slots_per_16_bytes: int) -> int:
    """The descriptor of a K-major, unswizzled core-matrix layout over
    (row or column, k), as :func:`tcprobe.tiles.layout.core_matrix_layout` builds:
    shape ((8, R/8), (T, K/T)), stride ((T, SBO), (1, LBO)) in slots, where T
    slots fill the 16 bytes of a core-matrix row. Offsets are converted to
    bytes; a layout of another form raises DescriptorError."""
    if not isinstance(layout, Layout):
        raise DescriptorError(f"layout {layout} has no (shape):(stride) form a descriptor describes")
    (rows, ks), (rs, kstr) = layout.shape, layout.stride
    rows, ks, rs, kstr = (tuple(x) if isinstance(x, tuple) else (x,) for x in (rows, ks, rs, kstr))
    t = slots_per_16_bytes
    ok = (len(rows) in (1, 2) and rows[0] == 8 and rs[0] == t and ks[0] == t and kstr[0] == 1
          and len(ks) in (1, 2))
    if not ok:
        raise DescriptorError(f"layout {layout} is not a K-major unswizzled core-matrix layout "
                              f"with {t} slots a 16-byte row")
    sbo = rs[1] if len(rows) == 2 else 8 * t
    lbo = kstr[1] if len(ks) == 2 else 8 * t
    per = 16 // t if t <= 16 else None
    if per is not None:
        lbo_b, sbo_b = lbo * per, sbo * per
    else:  # several slots a byte (packed fp4: 32 slots in 16 bytes)
        if (lbo * 16) % t or (sbo * 16) % t:
            raise DescriptorError(f"layout {layout}: offsets are not whole bytes")
        lbo_b, sbo_b = lbo * 16 // t, sbo * 16 // t
    return smem_descriptor(family, lbo_b, sbo_b)


def instruction_descriptor(dp: Datapath, m: int, n: int, *, sparse_id2: int = 0,
                           negate_a: bool = False, negate_b: bool = False,
                           a_major_mn: bool = False, b_major_mn: bool = False,
                           scale_a_id: int = 0, scale_b_id: int = 0, max_shift: int = 0) -> int:
    """The 32-bit tcgen05 instruction descriptor of datapath ``dp`` at shape
    M x N, in the harness's spelling of the fields (the encoder itself is
    :class:`InstrDescriptor`)."""
    if dp.family != "tcgen05":
        raise DescriptorError(f"{dp.id} is not a tcgen05 datapath")
    if m not in (64, 128, 256) or n % 8 or not 8 <= n <= 256:
        raise DescriptorError(f"no tcgen05 shape M={m}, N={n}")
    try:
        return encode(dp, m=m, n=n, sparse_selector=sparse_id2, negate_a=negate_a,
                                 negate_b=negate_b, transpose_a=a_major_mn,
                                 transpose_b=b_major_mn, a_sf_id=scale_a_id,
                                 b_sf_id=scale_b_id, max_shift=max_shift)
    except ValueError as e:  # the encoder's DescriptorError, or a ModelError for the types
        raise DescriptorError(str(e)) from None


# ---------------------------------------------------------------------------
# The tcgen05 instruction descriptor

PLAIN_KINDS = isa.TCGEN05_PLAIN_KINDS
SCALED_KINDS = isa.BLOCK_SCALED_KINDS
F8F6F4_CODES = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}
TYPE_CODES = {
    "tf32": {"tf32": 2},
    "f16": {"f16": 0, "bf16": 1},
    "f8f6f4": F8F6F4_CODES,
    "i8": {"u8": 0, "s8": 1},
    "mxf8f6f4": F8F6F4_CODES,
    "mxf4": {"e2m1": 1},
    "mxf4nvf4": {"e2m1": 1},
}
D_CODES = {"f16": 0, "f32": 1, "s32": 2}
SCALE_CODES = {"ue4m3": 0, "ue8m0": 1}

# (name, low bit, width) of each table; the rest are reserved (must be 0).
PLAIN_FIELDS = (("sparse_selector", 0, 2), ("sparse", 2, 1), ("saturate", 3, 1),
                ("d", 4, 2), ("a", 7, 3), ("b", 10, 3), ("negate_a", 13, 1),
                ("negate_b", 14, 1), ("transpose_a", 15, 1), ("transpose_b", 16, 1),
                ("n", 17, 6), ("m", 24, 5), ("max_shift", 30, 2))
SCALED_FIELDS = (("sparse", 2, 1), ("b_sf_id", 4, 2), ("a", 7, 3), ("b", 10, 3),
                 ("negate_a", 13, 1), ("negate_b", 14, 1), ("transpose_a", 15, 1),
                 ("transpose_b", 16, 1), ("n", 17, 6), ("scale", 23, 1), ("m", 27, 2),
                 ("a_sf_id", 29, 2), ("k96", 31, 1))
M_SHIFT = {"plain": 4, "scaled": 7}  # M >> 4 (bits 24-28) or M >> 7 (bits 27-28)


def _fields(kind: str):
    if kind in PLAIN_KINDS:
        return PLAIN_FIELDS, "plain"
    if kind in SCALED_KINDS:
        if kind == "mxf8f6f4":  # bit 31 is reserved
            return tuple(f for f in SCALED_FIELDS if f[0] != "k96"), "scaled"
        # mxf4 kinds: btype is bits 10-11 (bit 12 reserved); bit 31 selects dense K=96
        return tuple(("b", 10, 2) if f[0] == "b" else f for f in SCALED_FIELDS), "scaled"
    raise DescriptorError(f"unknown tcgen05 kind {kind!r} (known: "
                          f"{', '.join(PLAIN_KINDS + SCALED_KINDS)})")


def _name_of(codes: dict, code: int, what: str) -> str:
    for name, c in codes.items():
        if c == code:
            return name
    raise DescriptorError(f"{what} code {code} is not defined")


@dataclass(frozen=True)
class InstrDescriptor:
    """The fields of one tcgen05.mma instruction descriptor."""

    kind: str
    a_type: str
    b_type: str
    d_type: str
    m: int
    n: int
    sparse: bool = False
    sparse_selector: int = 0
    saturate: bool = False
    negate_a: bool = False
    negate_b: bool = False
    transpose_a: bool = False
    transpose_b: bool = False
    max_shift: int = 0
    scale_type: str | None = None
    a_sf_id: int = 0
    b_sf_id: int = 0
    k96: bool = False

    # -- encode ----------------------------------------------------------
    def values(self) -> dict:
        """Field name -> the integer PTX puts there."""
        kind = self.kind
        fields, table = _fields(kind)
        codes = TYPE_CODES[kind]
        for t in (self.a_type, self.b_type):
            if t not in codes:
                raise DescriptorError(f"kind::{kind} takes {', '.join(codes)}, not {t}")
        shift = M_SHIFT[table]
        if self.m <= 0 or self.m % (1 << shift) or self.m >> shift >= 1 << (5 if shift == 4 else 2):
            raise DescriptorError(f"M={self.m} cannot be encoded for kind::{kind}")
        if self.n < 8 or self.n > 256 or self.n % 8:
            raise DescriptorError(f"N={self.n} must be a multiple of 8 in 8..256")
        v = {"sparse": int(self.sparse), "a": codes[self.a_type], "b": codes[self.b_type],
             "negate_a": int(self.negate_a), "negate_b": int(self.negate_b),
             "transpose_a": int(self.transpose_a), "transpose_b": int(self.transpose_b),
             "n": self.n >> 3, "m": self.m >> shift}
        outs = isa.tcgen05_d_types(kind, self.a_type)
        if self.d_type not in outs:
            raise DescriptorError(f"kind::{kind} with {self.a_type} inputs writes "
                                  f"{', '.join(outs)}, not {self.d_type}")
        if table == "plain":
            if self.saturate and kind != "i8":
                raise DescriptorError("only kind::i8 saturates")
            if self.scale_type:
                raise DescriptorError(f"kind::{kind} takes no scale type")
            v.update(sparse_selector=self.sparse_selector, saturate=int(self.saturate),
                     d=D_CODES[self.d_type], max_shift=self.max_shift)
        else:
            if self.scale_type not in SCALE_CODES:
                raise DescriptorError(f"kind::{kind} needs a scale type (ue8m0 or ue4m3)")
            if self.sparse_selector or self.saturate or self.max_shift:
                raise DescriptorError(f"kind::{kind} has no sparse selector, saturation or shift")
            if self.k96 and (self.sparse or kind == "mxf8f6f4"):
                raise DescriptorError("K=96 is only for dense kind::mxf4 and mxf4nvf4")
            v.update(scale=SCALE_CODES[self.scale_type], a_sf_id=self.a_sf_id,
                     b_sf_id=self.b_sf_id, k96=int(self.k96))
        return v

    def encode(self) -> int:
        """The 32-bit descriptor word."""
        fields, _ = _fields(self.kind)
        values = self.values()
        word = 0
        for name, lo, width in fields:
            x = values.get(name, 0)
            if not 0 <= x < 1 << width:
                raise DescriptorError(f"{name}={x} does not fit {width} bit(s)")
            word |= x << lo
        return word

    # -- decode ----------------------------------------------------------
    @classmethod
    def decode(cls, word: int, kind: str) -> InstrDescriptor:
        """The fields of descriptor ``word`` of a kind::``kind`` instruction."""
        word = int(word)
        if not 0 <= word < 1 << 32:
            raise DescriptorError(f"{word:#x} is not a 32-bit word")
        fields, table = _fields(kind)
        used = 0
        raw = {}
        for name, lo, width in fields:
            used |= ((1 << width) - 1) << lo
            raw[name] = (word >> lo) & ((1 << width) - 1)
        if word & ~used:
            raise DescriptorError(f"{word:#010x}: reserved bits {word & ~used:#010x} are set")
        codes = TYPE_CODES[kind]
        kw = dict(kind=kind, a_type=_name_of(codes, raw["a"], "A type"),
                  b_type=_name_of(codes, raw["b"], "B type"),
                  m=raw["m"] << M_SHIFT[table], n=raw["n"] << 3, sparse=bool(raw["sparse"]),
                  negate_a=bool(raw["negate_a"]), negate_b=bool(raw["negate_b"]),
                  transpose_a=bool(raw["transpose_a"]), transpose_b=bool(raw["transpose_b"]))
        if table == "plain":
            kw.update(d_type=_name_of(D_CODES, raw["d"], "D type"),
                      sparse_selector=raw["sparse_selector"], saturate=bool(raw["saturate"]),
                      max_shift=raw["max_shift"])
        else:
            kw.update(d_type=isa.tcgen05_d_types(kind, kw["a_type"])[0], scale_type=_name_of(SCALE_CODES, raw["scale"], "scale type"),
                      a_sf_id=raw["a_sf_id"], b_sf_id=raw["b_sf_id"], k96=bool(raw.get("k96")))
        desc = cls(**kw)
        desc.values()  # M, N, D type and the other rules of the kind
        return desc

    # -- datapaths ---------------------------------------------------------
    @classmethod
    def for_datapath(cls, dp: Datapath, m: int | None = None, n: int = 8,
                     **fields) -> InstrDescriptor:
        """The descriptor of datapath ``dp`` (M64 unless block-scaled: M128)."""
        check_datapath(dp)
        if m is None:
            m = 128 if dp.block_scaled else 64
        return cls(kind=dp.kind, a_type=dp.a_type, b_type=dp.b_type, d_type=dp.d_type, m=m,
                   n=n, sparse=dp.sparse, saturate=dp.saturate, scale_type=dp.scale_type,
                   **fields)

    def datapath(self, scale_vec: int | None = None) -> Datapath:
        """The datapath this descriptor runs (scale_vec is an instruction
        qualifier, not a descriptor field: by default 1X, 2X, 4X per kind)."""
        k = 96 if self.k96 else isa.instruction_k("tcgen05", self.kind, sparse=self.sparse)
        vec = None
        if self.scale_type:
            vec = scale_vec or isa.default_scale_vec(self.kind)
        return Datapath("tcgen05", self.kind, self.a_type, self.b_type, self.d_type, k,
                        scale_type=self.scale_type, scale_vec=vec, sparse=self.sparse,
                        saturate=self.saturate)


def encode(dp: Datapath, m: int | None = None, n: int = 8, **fields) -> int:
    """The descriptor word of datapath ``dp`` at shape MxN."""
    return InstrDescriptor.for_datapath(dp, m, n, **fields).encode()


def decode(word: int, kind: str) -> InstrDescriptor:
    """The fields of a kind::``kind`` descriptor word."""
    return InstrDescriptor.decode(word, kind)
