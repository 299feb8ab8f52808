"""The Datapath noun: one instruction datapath, immutable and hashable.

A datapath is what a model computes and what a device executes: the
instruction family, the PTX kind, operand types, K, block scaling, sparsity
and saturation. It prints to and parses from one short id, for example::

    mma.bf16.f32.k16
    wgmma.e4m3xe5m2.f16.k32
    tcgen05.f16.bf16.f32.k16
    tcgen05.f8f6f4.e4m3xe2m1.f32.k32
    tcgen05.i8.s8xu8.s32.k32.sat
    tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4.sparse
    mma.s4.s32.k64.sat
    mma.b1.s32.k256.xor
    mma.e4m3.f32.k64.sparse.ordered

The flags after K: a block-scale pair (``ue8m0x2``), ``sparse``, ``sat``
(.satfinite), the single-bit operation of ``b1`` (``and``: .and.popc,
``xor``: .xor.popc) and ``ordered`` (mma.sp::ordered_metadata: the same
arithmetic, metadata indices increasing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace

from tcprobe.models import isa
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.isa import FAMILIES


class DatapathError(ValueError):
    """A datapath id or combination that does not exist."""


def field_hash(self) -> int:
    """The hash of a frozen dataclass's fields (what dataclass would compute),
    computed once per instance: the engine looks a configuration up in a
    few dicts on every call, and a loop of small batches makes many calls."""
    h = self.__dict__.get("_hash")
    if h is None:
        h = hash(tuple(getattr(self, f.name) for f in fields(self)))
        object.__setattr__(self, "_hash", h)
    return h


def state_without_hash(self) -> dict:
    """The pickled state of a field_hash record: its fields, never the kept
    hash (another process hashes strings differently)."""
    return {k: v for k, v in self.__dict__.items() if k != "_hash"}


@dataclass(frozen=True)
class Datapath:
    family: str
    kind: str
    a_type: str
    b_type: str
    d_type: str
    k: int
    c_type: str | None = None  # None: the same as d_type
    scale_type: str | None = None  # ue8m0 or ue4m3 for block-scaled kinds
    scale_vec: int | None = None  # scale_vec::1X, 2X or 4X
    sparse: bool = False
    saturate: bool = False
    bitop: str | None = None  # b1 only: and / xor (popc of a AND / XOR b)
    ordered: bool = False  # mma.sp::ordered_metadata

    __hash__ = field_hash
    __getstate__ = state_without_hash

    def __post_init__(self):
        if self.family not in isa.ALL_FAMILIES:
            raise DatapathError(f"unknown family {self.family!r} "
                                f"(known: {', '.join(isa.ALL_FAMILIES)})")
        for t in (self.a_type, self.b_type, self.d_type, self.c_type or self.d_type):
            get_format(t)
        if self.scale_type is not None:
            get_format(self.scale_type)
        if self.k <= 0:
            raise DatapathError(f"K must be positive, not {self.k}")
        bits = get_format(self.a_type).name in isa.BIT_TYPES
        if bits and self.bitop not in isa.BIT_OPS:
            raise DatapathError(f"b1 needs its operation: .and or .xor (e.g. mma.b1.s32.k{self.k}.xor)")
        if not bits and self.bitop is not None:
            raise DatapathError(f".{self.bitop} is for b1 inputs only")
        if self.saturate and self.family != "tcgen05" and \
                get_format(self.a_type).name not in isa.SATFINITE_TYPES:
            raise DatapathError(f".satfinite is for {', '.join(isa.SATFINITE_TYPES)} inputs "
                                f"(not {self.a_type})")
        if self.ordered and not self.sparse:
            raise DatapathError("ordered (ordered_metadata) needs a sparse datapath")

    # -- derived facts ---------------------------------------------------
    @property
    def c(self) -> str:
        return self.c_type or self.d_type

    @property
    def is_integer(self) -> bool:
        return get_format(self.a_type).kind.name == "INT"

    @property
    def block_scaled(self) -> bool:
        return self.scale_type is not None

    @property
    def scale_block(self) -> int | None:
        """K positions that share one scale factor."""
        if not self.block_scaled:
            return None
        return isa.scale_block(self.k, self.scale_vec, self.sparse)

    @property
    def n_scales(self) -> int:
        return 0 if not self.block_scaled else max(1, self.k // self.scale_block)

    @property
    def stored_k(self) -> int:
        """A values stored per row: K, or K/2 for sparse A."""
        return self.k // 2 if self.sparse else self.k

    # -- the id ------------------------------------------------------------
    @property
    def id(self) -> str:
        parts = [self.family, self.kind]
        if not (self.a_type == self.b_type == self.kind):
            parts.append(self.a_type if self.a_type == self.b_type else f"{self.a_type}x{self.b_type}")
        parts.append(self.d_type if self.c_type in (None, self.d_type) else f"{self.c_type}to{self.d_type}")
        parts.append(f"k{self.k}")
        if self.scale_type:
            parts.append(f"{self.scale_type}x{self.scale_vec or 1}")
        if self.sparse:
            parts.append("sparse")
        if self.saturate:
            parts.append("sat")
        if self.bitop:
            parts.append(self.bitop)
        if self.ordered:
            parts.append("ordered")
        return ".".join(parts)

    def __str__(self) -> str:
        return self.id

    def with_k(self, k: int) -> Datapath:
        return replace(self, k=k)

    @classmethod
    def parse(cls, text: str) -> Datapath:
        """Parse an id written by :attr:`id`."""
        # a name in any case, white space around it stripped (docs/names.md)
        parts = text.strip().lower().split(".")
        if len(parts) < 4:
            raise DatapathError(f"not a datapath id: {text!r} (e.g. mma.bf16.f32.k16)")
        family, kind, *rest = parts
        kpos = next((i for i, p in enumerate(rest) if re.fullmatch(r"k\d+", p)), None)
        if kpos is None or kpos == 0:
            raise DatapathError(f"datapath id {text!r} has no K (e.g. .k16)")
        types, k, flags = rest[:kpos], int(rest[kpos][1:]), rest[kpos + 1 :]
        if len(types) == 1:
            ab, dt = kind, types[0]
        elif len(types) == 2:
            ab, dt = types
        else:
            raise DatapathError(f"cannot read the types of {text!r}")
        a, _, b = ab.partition("x")
        b = b or a
        if not a or not b:  # 'mfma.xf32.f32.k8': a kind read as a type pair with one side empty
            raise DatapathError(f"cannot read the input types of {text!r} from {ab!r} (A, or "
                                "AxB: e.g. mma.bf16.f32.k16, mfma.xf32.tf32.f32.k8)")
        ct = None
        if "to" in dt:
            ct, dt = dt.split("to")
        scale_type = scale_vec = None
        sparse = saturate = ordered = False
        bitop = None
        for f in flags:
            m = re.fullmatch(r"(ue8m0|ue4m3)x(\d)", f)
            if m:
                scale_type, scale_vec = m.group(1), int(m.group(2))
            elif f in ("sparse", "sp"):
                sparse = True
            elif f in ("sat", "satfinite"):
                saturate = True
            elif f in isa.BIT_OPS:
                bitop = f
            elif f in ("ordered", "ordered_metadata"):
                ordered = True
            else:
                raise DatapathError(f"unknown flag {f!r} in datapath id {text!r}")
        if not a or not dt or (ct is not None and not ct):
            raise DatapathError(f"datapath id {text!r} has an empty type (its types read as "
                                f"{a or '?'}x{b or '?'} -> {dt or '?'}; e.g. mma.bf16.f32.k16, "
                                "mfma.xf32.tf32.f32.k8)")
        try:
            return cls(family, kind, a, b, dt, k, ct, scale_type, scale_vec, sparse, saturate,
                       bitop, ordered)
        except FormatError as e:
            raise DatapathError(f"datapath id {text!r}: {e}") from None


def default_datapath(family: str, fmt: str, d_type: str | None = None) -> Datapath:
    """The usual datapath of ``family`` for input format ``fmt``: the largest
    K of one instruction (the ISA table), f32 output (s32 for integers)."""
    f = get_format(fmt).name
    if family not in FAMILIES:
        raise DatapathError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    f64 = family == "mma" and f in isa.F64_TYPES  # DMMA: f64 in, f64 out
    if f not in isa.INPUT_K and not f64:
        raise DatapathError(f"{f} is not an input format of {family}")
    if family in ("mma", "wgmma") and f in isa.SUB_BYTE_TYPES:
        raise DatapathError(f"{f} inputs need tcgen05 (or mma kind::f8f6f4 on sm_120a)")
    if family == "tcgen05":
        if f not in isa.TCGEN05_KIND_OF_INPUT:
            raise DatapathError(f"{f} is not an input format of tcgen05")
        kind = isa.TCGEN05_KIND_OF_INPUT[f]
        out = d_type or isa.output_types(family, kind, f)[0]
        return Datapath("tcgen05", kind, f, f, out, isa.instruction_k("tcgen05", kind))
    out = d_type or isa.output_types(family, f, f)[0]
    if family == "wgmma" and f in isa.MMA_ONLY_TYPES:
        raise DatapathError(f"{f} inputs are mma.sync only (no wgmma)")
    bitop = isa.BIT_OPS[-1] if f in isa.BIT_TYPES else None  # b1: xor, the sm_75 form
    return Datapath(family, f, f, f, out, isa.instruction_k(family, f), bitop=bitop)


def datapath_for(arch: str | None, family: str, a: str, b: str, d: str | None = None) -> Datapath:
    """The datapath ``family`` runs on ``arch`` for A of ``a`` and B of ``b``
    (canonical names) into ``d`` (None: the kind's first D type): the pair's
    kind (:func:`isa.pair_kind`; else the input type's own, as
    :func:`default_datapath`) at the largest K one instruction has on ``arch``
    (:func:`isa.arch_instruction_k`). IsaError where none takes the pair."""
    kind = isa.pair_kind(arch, family, a, b)
    if kind is None:
        dp = default_datapath(family, a, d)
        return dp.with_k(isa.arch_instruction_k(arch, family, dp.kind, a))
    return Datapath(family, kind, a, b, d or isa.output_types(family, kind, a)[0],
                    isa.arch_instruction_k(arch, family, kind, a))
