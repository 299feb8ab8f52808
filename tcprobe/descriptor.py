"""The tcgen05.mma instruction descriptor: the 32-bit ``idesc`` word.

Bit fields from the PTX ISA, section "Instruction descriptor" of tcgen05
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

PLAIN_KINDS = ("tf32", "f16", "f8f6f4", "i8")
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
DEFAULT_SCALE_VEC = {"mxf8f6f4": 1, "mxf4": 2, "mxf4nvf4": 4}
D_TYPES = {"tf32": ("f32",), "f16": ("f16", "f32"), "f8f6f4": ("f16", "f32"), "i8": ("s32",)}

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


class DescriptorError(ValueError):
    """A descriptor word or field value that PTX does not define."""


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
        if table == "plain":
            if self.d_type not in D_TYPES[kind]:
                raise DescriptorError(f"kind::{kind} writes {', '.join(D_TYPES[kind])}, "
                                      f"not {self.d_type}")
            if self.saturate and kind != "i8":
                raise DescriptorError("only kind::i8 saturates")
            if self.scale_type:
                raise DescriptorError(f"kind::{kind} takes no scale type")
            v.update(sparse_selector=self.sparse_selector, saturate=int(self.saturate),
                     d=D_CODES[self.d_type], max_shift=self.max_shift)
        else:
            if self.d_type != "f32":
                raise DescriptorError(f"kind::{kind} writes f32, not {self.d_type}")
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
            kw.update(d_type="f32", scale_type=_name_of(SCALE_CODES, raw["scale"], "scale type"),
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
            vec = scale_vec or DEFAULT_SCALE_VEC[self.kind]
        return Datapath("tcgen05", self.kind, self.a_type, self.b_type, self.d_type, k,
                        scale_type=self.scale_type, scale_vec=vec, sparse=self.sparse,
                        saturate=self.saturate)


def encode(dp: Datapath, m: int | None = None, n: int = 8, **fields) -> int:
    """The descriptor word of datapath ``dp`` at shape MxN."""
    return InstrDescriptor.for_datapath(dp, m, n, **fields).encode()


def decode(word: int, kind: str) -> InstrDescriptor:
    """The fields of a kind::``kind`` descriptor word."""
    return InstrDescriptor.decode(word, kind)
