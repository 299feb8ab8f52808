"""The ISA table: every fact about NVIDIA's MMA instructions, written once.

Families, kinds, the K of one instruction, the A/B/C/D types each takes, block
scales, sparsity and the legal combinations are read from the PTX ISA
(``mma.sync``: "Warp-level matrix multiply-accumulate"; ``wgmma.mma_async``:
"Asynchronous warpgroup level matrix multiply-accumulate"; ``tcgen05.mma``:
"TensorCore 5th Generation family"). Every other module reads these facts
from here; none restates them.

The same module holds the default datapath parameters per output type (the
HMMA/tcgen05 convention measured on H100/H200/B200: a 25-bit window, an f32 D
truncated with the anchor floored at 2**-133, an f16 D rounded to nearest even
with the floor at 2**-21), which profiles, sim devices, the ladder and fit
start from.

Evidence for the defaults: Khattak & Mikaitis 2025 captures
(../shared/hwdata: H100/H200/B200 fp16, bf16, tf32), the MMA-Sim pull-request
vectors (../shared/seeds/mmasim-pr-zero-sign-and-fp6.txt: an f16 accumulator
of zero anchors at 2**-21 on H200/B200/B300) and the tcgen05 write-up
(../shared/seeds/tcgen05-blog.txt: F=25, RZ into f32).

The SASS opcodes ptxas emits for these instructions: :mod:`.isa_sass`.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import gpus

# ---------------------------------------------------------------------------
# Families and kinds

FAMILIES = ("mma", "wgmma", "tcgen05")
# AMD CDNA v_mfma: its own block of the table, models/isa_amd.py. Datapaths take
# every family of ALL_FAMILIES; the NVIDIA harnesses, suites and CLI keep FAMILIES.
from .isa_amd import AMD_FAMILIES  # noqa: E402

ALL_FAMILIES = FAMILIES + AMD_FAMILIES

# tcgen05.mma .kind qualifiers (PTX ISA 8.6+, sm_100a/sm_103a).
TCGEN05_KINDS = ("tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4")

# The kinds whose products are multiplied by per-block scale factors; the rest are plain.
BLOCK_SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
TCGEN05_PLAIN_KINDS = tuple(k for k in TCGEN05_KINDS if k not in BLOCK_SCALED_KINDS)
# The scaled kinds that pack two e2m1 a byte (K doubles); f8f6f4 and mxf8f6f4
# hold one e2m1 in each 8-bit container.
PACKED_E2M1_KINDS = ("mxf4", "mxf4nvf4")
# Block-scale factor types (.scale_type of tcgen05.mma / mma.sync .block_scale).
SCALE_TYPES = ("ue8m0", "ue4m3")

# The element types of kind::f8f6f4 / mxf8f6f4, each in an 8-bit container.
F8F6F4_TYPES = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")

# The 8-bit float types of mma.sync / wgmma (.e4m3, .e5m2).
FP8_TYPES = ("e4m3", "e5m2")

# Input types that need tcgen05 (or mma kind::f8f6f4 on sm_120a).
SUB_BYTE_TYPES = ("e2m3", "e3m2", "e2m1")

INTEGER_INPUT_TYPES = ("s8", "u8")


class IsaError(ValueError):
    """An instruction, type or combination the PTX ISA does not define."""


# ---------------------------------------------------------------------------
# K of one instruction

# K of one dense instruction per input type: 256 bits of K per row, each
# element in its container (tf32 in 32 bits, f16/bf16 in 16, every 8-bit,
# 6-bit and 4-bit float of kind::f8f6f4 in 8). This is the K of
# mma.sync.m16n8kK's largest shape, of wgmma.m64nNkK and of tcgen05's
# unscaled kinds.
INPUT_K = {"tf32": 8, "bf16": 16, "f16": 16, "e4m3": 32, "e5m2": 32, "e2m3": 32,
           "e3m2": 32, "e2m1": 32, "s8": 32, "u8": 32}

# K of one dense tcgen05.mma per kind (the block-scaled fp4 kinds pack two
# e2m1 a byte, so K doubles).
TCGEN05_K = {"tf32": INPUT_K["tf32"], "f16": INPUT_K["f16"], "f8f6f4": INPUT_K["e4m3"],
             "i8": INPUT_K["s8"], "mxf8f6f4": INPUT_K["e4m3"],
             **{kind: 2 * INPUT_K["e2m1"] for kind in PACKED_E2M1_KINDS}}

# mma.sync shapes (m, n, k) per input type: every K one instruction can have.
MMA_SHAPES = {
    "f16": ((8, 8, 4), (16, 8, 8), (16, 8, 16)),
    "bf16": ((16, 8, 8), (16, 8, 16)),
    "tf32": ((16, 8, 4), (16, 8, 8)),
    "e4m3": ((16, 8, 16), (16, 8, 32)),
    "e5m2": ((16, 8, 16), (16, 8, 32)),
    "s8": ((8, 8, 16), (16, 8, 16), (16, 8, 32)),
    "u8": ((8, 8, 16), (16, 8, 16), (16, 8, 32)),
}

# Architectures whose mma.sync has fewer shapes than MMA_SHAPES (input type ->
# shapes): sm_70 (Volta) has only m8n8k4, with f16 inputs (PTX ISA, mma.sync
# shapes by target; bf16/tf32 arrive with sm_80, integer mma with sm_75).
ARCH_MMA_SHAPES = {"sm_70": {"f16": ((8, 8, 4),)},
                   "sm_75": {"f16": ((8, 8, 4), (16, 8, 8))}}  # sm_75: m16n8k8 arrives

# ---------------------------------------------------------------------------
# f64 DMMA (issue 12, the f64 part; PTX ISA, mma.sync shapes by target):
# mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 from sm_80, and
# m16n8k4, m16n8k8, m16n8k16 .f64 from sm_90. A, B, C and D are all f64 (one
# 64-bit register an element). MMA-Sim lists the m16n8 shapes for Hopper only;
# the PTX ISA gives them to sm_90 "and higher".

F64_TYPES = ("f64",)
F64_K = 4  # K of m8n8k4.f64, the shape of every DMMA architecture: the default f64 datapath
F64_SHAPES = ((8, 8, F64_K), (16, 8, 4), (16, 8, 8), (16, 8, 16))
F64_SM80_ARCHS = ("sm_80", "sm_86", "sm_89")  # m8n8k4 only
MMA_SHAPES["f64"] = F64_SHAPES
# (kept apart from ARCH_MMA_SHAPES, whose entries list every type of an architecture)


F64_FIRST_SM = 80  # no DMMA before sm_80 (V100's sm_70, T4's sm_75)


def f64_shapes(arch: str) -> tuple[tuple[int, int, int], ...]:
    """The f64 mma.sync shapes an architecture has (none before sm_80)."""
    digits = "".join(ch for ch in arch if ch.isdigit())
    if not digits or int(digits) < F64_FIRST_SM:
        return ()
    return F64_SHAPES[:1] if arch in F64_SM80_ARCHS else F64_SHAPES


# The SASS of each f64 shape (models/isa_sass.py: NVRTC/ptxas 13.5 and nvdisasm):
# sm_80/86/89 spell m8n8k4 DMMA.884; sm_90 has one native opcode a shape
# (DMMA.8x8x4, DMMA.16x8x4, DMMA.16x8x8, DMMA.16x8x16); sm_100a, sm_103a and
# sm_120a compile every m16n8 shape to DMMA.8x8x4s chained through the
# accumulator (two row halves times K/4, e.g. eight for m16n8k16): emulated.
F64_NATIVE_ARCHS = ("sm_90", "sm_90a")
F64_SPLIT_ARCHS = ("sm_100a", "sm_103a", "sm_120a")


# wgmma.mma_async M and N: M = 64, N = 8..256 in steps of 8 (integers: of 8 up
# to 24, then of 16); K per input type is INPUT_K.
WGMMA_M = 64


def instruction_k(family: str, kind: str, a_type: str | None = None, sparse: bool = False) -> int:
    """The K of one instruction of ``family`` and ``kind`` (for mma/wgmma the
    kind is the input type): the largest dense shape, doubled for sparse."""
    if family not in FAMILIES:
        raise IsaError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    if family == "tcgen05":
        if kind not in TCGEN05_K:
            raise IsaError(f"unknown tcgen05 kind {kind!r} (known: {', '.join(TCGEN05_KINDS)})")
        k = TCGEN05_K[kind]
    elif family == "mma" and (a_type or kind) in F64_TYPES:
        k = F64_K
    else:
        t = a_type or kind
        if t not in INPUT_K or t in SUB_BYTE_TYPES or (family == "wgmma" and t in MMA_ONLY_TYPES):
            raise IsaError(f"{t} is not an input type of {family}")
        k = INPUT_K[t]
    return 2 * k if sparse else k


# ---------------------------------------------------------------------------
# Integer and sparse mma.sync / mma.sp and wgmma (issue 12, "integer and
# sparse"; PTX ISA: "Warp-level matrix multiply-accumulate instructions",
# "Sparse matrix storage", "wgmma.mma_async.sp")

# Sub-byte integer and single-bit inputs: mma.sync only (sm_75+; no wgmma,
# no tcgen05). s4/u4 pack eight elements a 32-bit register, b1 thirty-two.
SUBBYTE_INTEGER_TYPES = ("s4", "u4")
BIT_TYPES = ("b1",)
MMA_ONLY_TYPES = (*SUBBYTE_INTEGER_TYPES, *BIT_TYPES)
# Integer A and B types one instruction mixes freely: mma.sync and mma.sp
# take .atype and .btype each in {.u8, .s8} or each in {.u4, .s4}; wgmma
# (and wgmma.sp) each in {.s8, .u8} ("wgmma...s32.s8.u8" is a valid form).
INTEGER_MIXES = (("s8", "u8"), SUBBYTE_INTEGER_TYPES)
# mma .b1: d = c + popc(a OP b) over K, OP the .and.popc or .xor.popc qualifier.
BIT_OPS = ("and", "xor")
# 256 bits of K a row, as for every other input type.
INPUT_K.update({"s4": 64, "u4": 64, "b1": 256})
MMA_SHAPES.update({
    "s4": ((8, 8, 32), (16, 8, 32), (16, 8, 64)),
    "u4": ((8, 8, 32), (16, 8, 32), (16, 8, 64)),
    "b1": ((8, 8, 128), (16, 8, 128), (16, 8, 256)),
})
# Types .satfinite applies to (it clamps the s32 result; the others wrap).
SATFINITE_TYPES = ("s8", "u8", "s4", "u4")

# mma.sp (sparse A, K doubled): shapes m16n8kK per input type, and the
# legal sparsity selectors of each K (which threads of a group of four hold
# the metadata: two of them, T0/T1 or T2/T3, at the smaller K; all four at
# the larger, selector 0 only). fp8 mma.sp needs sm_89.
MMA_SP_K = {"f16": (16, 32), "bf16": (16, 32), "tf32": (8, 16), "e4m3": (64,), "e5m2": (64,),
            "s8": (32, 64), "u8": (32, 64), "s4": (64, 128), "u4": (64, 128)}


def sparsity_selectors(family: str, a_type: str, k: int) -> tuple[int, ...]:
    """The sparsity-selector values (operand f of mma.sp, the selector of
    wgmma.sp) a sparse instruction of logical K ``k`` takes."""
    if family == "mma":
        ks = MMA_SP_K.get(a_type, ())
        if k not in ks:
            raise IsaError(f"mma.sp has no {a_type} shape with K={k} "
                           f"(K: {', '.join(map(str, ks)) or 'none'})")
        return (0, 1) if k == ks[0] and len(ks) > 1 else (0,)
    return (0,)


# Metadata nibbles of mma.sp / wgmma.sp: a 2-bit index per kept value (a
# pair index for 4-bit types), the low field first; two equal indices
# (0b0000, 0b0101, 0b1010, 0b1111) are undefined. mma.sp::ordered_metadata
# needs the indices increasing (low field < high field). tf32 keeps one of
# two: only 0b0100 and 0b1110. The ordered ones are listed first: they are
# the canonical encoding of a mask.
SP_ORDERED_NIBBLES = (0x4, 0x8, 0xC, 0x9, 0xD, 0xE)
SP_NIBBLES = (*SP_ORDERED_NIBBLES, 0x1, 0x2, 0x3, 0x6, 0x7, 0xB)
SP_TF32_NIBBLES = (0x4, 0xE)

# wgmma.mma_async.sp: input types, K doubled (f16/bf16 32, tf32 16, 8-bit 64).
WGMMA_SP_TYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")

# SASS of the integer and sparse forms (models/isa_sass.py: NVRTC/ptxas 13.5).
# Hopper and later have no 4-bit IMMA: ptxas emulates mma .s4/.u4 there with
# 8-bit IMMA (the nibbles unpacked by integer ALU code).
S4_NATIVE_ARCHS = ("sm_80", "sm_86", "sm_89")
S4_EMULATED_ARCHS = ("sm_90", "sm_90a", "sm_100a", "sm_103a", "sm_120a")


# b1: BMMA up to Hopper. .xor.popc is BMMA.XOR on sm_80-sm_89; sm_90 issues
# BMMA.AND.POPC for it (and derives the XOR count: popc(a ^ b) = popc(a) +
# popc(b) - 2 popc(a & b)); sm_100a and later have no BMMA: both forms run
# through 8-bit IMMA (IMMA.16832.U8.U8).
B1_XOR_NATIVE_ARCHS = ("sm_80", "sm_86", "sm_89")
BMMA_ARCHS = (*B1_XOR_NATIVE_ARCHS, "sm_90", "sm_90a")


# ---------------------------------------------------------------------------
# Types per kind

# tcgen05.mma: the A/B types of each kind.
TCGEN05_INPUT_TYPES = {
    "tf32": ("tf32",), "f16": ("f16", "bf16"), "f8f6f4": F8F6F4_TYPES, "i8": ("u8", "s8"),
    "mxf8f6f4": F8F6F4_TYPES, "mxf4": ("e2m1",), "mxf4nvf4": ("e2m1",),
}

# tcgen05.mma block scales: (scale type, scale_vec::NX) each scaled kind takes.
TCGEN05_SCALES = {
    "mxf8f6f4": frozenset({("ue8m0", 1)}),
    "mxf4": frozenset({("ue8m0", 2)}),
    "mxf4nvf4": frozenset({("ue8m0", 2), ("ue8m0", 4), ("ue4m3", 4)}),
}

# The tcgen05 kind that runs each input type unscaled.
TCGEN05_KIND_OF_INPUT = {"tf32": "tf32", "bf16": "f16", "f16": "f16", "s8": "i8", "u8": "i8",
                         **{t: "f8f6f4" for t in F8F6F4_TYPES}}


def input_types(family: str, kind: str) -> tuple[str, ...]:
    """The A/B element types an instruction of ``family``/``kind`` takes."""
    if family == "tcgen05":
        if kind not in TCGEN05_INPUT_TYPES:
            raise IsaError(f"unknown tcgen05 kind {kind!r} (known: {', '.join(TCGEN05_KINDS)})")
        return TCGEN05_INPUT_TYPES[kind]
    if kind in FP8_TYPES:
        return FP8_TYPES  # mma/wgmma fp8 mix e4m3 and e5m2 freely
    mix = next((m for m in INTEGER_MIXES if kind in m), None)
    if mix is not None:
        return mix  # signed and unsigned integers mix freely (INTEGER_MIXES)
    if family == "mma" and kind in F64_TYPES:
        return (kind,)
    if kind in INPUT_K and kind not in SUB_BYTE_TYPES:
        return (kind,)
    raise IsaError(f"{kind} is not an input type of {family}")


# tcgen05.mma: the D types of each kind (PTX ISA 9.7.16.2.1 "Matrix Shape",
# Table 39 "Various combinations of .kind and shapes": kind::f16 has dtype
# .f16 with atype/btype .f16, and dtype .f32 with .f16 or .bf16, so a bf16
# product is written to f32 only). The block-scaled kinds write f32.
TCGEN05_D_TYPES = {"tf32": ("f32",), "f16": ("f32", "f16"), "f8f6f4": ("f32", "f16"),
                   "i8": ("s32",), **{kind: ("f32",) for kind in BLOCK_SCALED_KINDS}}
TCGEN05_F32_ONLY_INPUTS = ("bf16",)  # kind::f16 with these A/B: no f16 D


def tcgen05_d_types(kind: str, a_type: str) -> tuple[str, ...]:
    """The C/D types of a tcgen05.mma of ``kind`` with A of ``a_type``."""
    if kind not in TCGEN05_D_TYPES:
        raise IsaError(f"unknown tcgen05 kind {kind!r} (known: {', '.join(TCGEN05_KINDS)})")
    return ("f32",) if a_type in TCGEN05_F32_ONLY_INPUTS else TCGEN05_D_TYPES[kind]


def output_types(family: str, kind: str, a_type: str) -> tuple[str, ...]:
    """The C/D types an instruction with A of ``a_type`` writes."""
    if family == "tcgen05":
        return tcgen05_d_types(kind, a_type) if kind in TCGEN05_D_TYPES else ("f32",)
    if a_type in INTEGER_INPUT_TYPES or a_type in MMA_ONLY_TYPES:
        return ("s32",)
    if a_type in F64_TYPES:
        return ("f64",)
    if a_type == "f16" or a_type in FP8_TYPES:
        return ("f32", "f16")
    return ("f32",)


def scale_choices(kind: str) -> frozenset:
    """The (scale type, vector size) pairs a tcgen05 block-scaled kind takes
    (empty for the unscaled kinds)."""
    return TCGEN05_SCALES.get(kind, frozenset())


def scale_forms(kind: str) -> tuple[tuple[str, int], ...]:
    """:func:`scale_choices` in order: by vector size, ue8m0 before ue4m3."""
    return tuple(sorted(scale_choices(kind), key=lambda c: (c[1], SCALE_TYPES.index(c[0]))))


def scale_vecs(kind: str) -> tuple[int, ...]:
    """The scale_vec::NX sizes a block-scaled kind takes, smallest first."""
    return tuple(dict.fromkeys(v for _t, v in scale_forms(kind)))


def default_scale_vec(kind: str) -> int:
    """The scale_vec a descriptor of ``kind`` decodes to when the instruction's
    qualifier is not given: the kind's largest (1X, 2X, 4X)."""
    if kind not in TCGEN05_SCALES:
        raise IsaError(f"kind::{kind} takes no block scales")
    return scale_vecs(kind)[-1]


def block_scaled_kind(a: str, b: str, scale_type: str, block: int) -> tuple[str, int]:
    """(kind, scale_vec) that block-scaled A/B of ``a`` x ``b`` with a
    ``scale_type`` code every ``block`` K positions select: e2m1 pairs take the
    packed kinds (mxf4 before mxf4nvf4), other elements kind::mxf8f6f4."""
    kinds = PACKED_E2M1_KINDS if a == b == "e2m1" else ("mxf8f6f4",)
    for kind in kinds:
        for st, vec in scale_forms(kind):
            if st == scale_type and scale_block(TCGEN05_K[kind], vec, False) == block:
                return kind, vec
    fits = "; ".join(f"{kind}: " + ", ".join(f"{st} every {scale_block(TCGEN05_K[kind], v, False)}"
                                            for st, v in scale_forms(kind)) for kind in kinds)
    raise IsaError(f"{scale_type} scales every {block} K positions fit no block-scaled kind "
                   f"for {a}x{b} ({fits})")


def scale_block(k: int, scale_vec: int | None, sparse: bool) -> int:
    """K positions that share one scale factor: 32 for scale_vec::1X/2X and 16
    for 4X (the PTX ISA's block sizes); sparse: scale_vec::NX still gives N
    scales a row, each over twice the positions (notes: sparse NVFP4 uses
    K=32 blocks)."""
    if sparse:
        return max(1, k // (scale_vec or 1))
    return 16 if scale_vec == 4 else 32


def check_tcgen05(kind: str, a: str, b: str, c: str, d: str, k: int, scale: tuple | None,
                  sparse: bool, saturate: bool) -> None:
    """Raise IsaError unless this is a tcgen05.mma the PTX ISA defines (kind,
    A/B/C/D types, scale type and vector, K: dense or twice for sparse).
    Types are canonical format names; ``scale`` is (type, vector) or None."""
    if kind not in TCGEN05_K:
        raise IsaError(f"unknown tcgen05 kind {kind!r} (known: {', '.join(TCGEN05_KINDS)})")
    allowed = TCGEN05_INPUT_TYPES[kind]
    if a not in allowed or b not in allowed:
        raise IsaError(f"kind::{kind} takes A/B in {', '.join(allowed)}, not {a}x{b}")
    if kind == "f16" and a != b:
        raise IsaError("kind::f16 needs A and B of the same type")
    outs = output_types("tcgen05", kind, a)
    if d not in outs or c != d:
        raise IsaError(f"kind::{kind} with {a} inputs writes C/D in {', '.join(outs)}")
    choices = scale_choices(kind)
    if choices and scale not in choices:
        raise IsaError(f"kind::{kind} needs block scales "
                       f"({', '.join(f'{t}x{v}' for t, v in sorted(choices))})")
    if not choices and scale:
        raise IsaError(f"kind::{kind} takes no block scales")
    if saturate and kind != "i8":
        raise IsaError("saturation is only for kind::i8")
    want = instruction_k("tcgen05", kind, sparse=sparse)
    if k != want:
        raise IsaError(f"one tcgen05 kind::{kind} instruction has K={want}, not {k}")


# ---------------------------------------------------------------------------
# Turing (sm_75) and RTX Blackwell (sm_120a) mma.sync (issue 12: MMA-Sim,
# Turing, RTX Blackwell). PTX ISA, mma.sync: Turing adds m16n8k8 (f16) to
# Volta's m8n8k4; sm_120a adds .kind::f8f6f4 (e4m3, e5m2, e2m3, e3m2, e2m1
# in 8-bit containers, any A/B pair, f32 or f16 D) and the block-scaled
# .kind::mxf8f6f4 / mxf4 / mxf4nvf4 with .block_scale.scale_vec::NX.

# The .kind:: qualifiers of mma.sync (sm_120a only).
MMA_KINDS = ("f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4")
MMA_KIND_INPUT_TYPES = {kind: TCGEN05_INPUT_TYPES[kind] for kind in MMA_KINDS}
# K of one mma.sync .kind:: instruction (m16n8k32, m16n8k64): tcgen05's K of the kind.
MMA_KIND_K = {kind: TCGEN05_K[kind] for kind in MMA_KINDS}
# Scale type and vector each scaled kind takes: the same as tcgen05.mma's.
MMA_KIND_SCALES = {kind: TCGEN05_SCALES[kind] for kind in BLOCK_SCALED_KINDS}


def mma_kind_outputs(kind: str) -> tuple[str, ...]:
    """The C/D types of mma.sync .kind::``kind`` (the scaled kinds write f32 only)."""
    return ("f32", "f16") if kind == "f8f6f4" else ("f32",)


def check_mma_kind(kind: str, a: str, b: str, c: str, d: str, k: int, scale: tuple | None,
                   sparse: bool, saturate: bool) -> None:
    """Raise IsaError unless this is an sm_120a ``mma.sync .kind::`` the PTX
    ISA defines (canonical type names; ``scale`` is (type, vector) or None)."""
    if kind not in MMA_KINDS:
        raise IsaError(f"unknown mma kind {kind!r} (known: {', '.join(MMA_KINDS)})")
    allowed = MMA_KIND_INPUT_TYPES[kind]
    if a not in allowed or b not in allowed:
        raise IsaError(f"mma kind::{kind} takes A/B in {', '.join(allowed)}, not {a}x{b}")
    outs = mma_kind_outputs(kind)
    if d not in outs or c != d:
        raise IsaError(f"mma kind::{kind} writes C/D in {', '.join(outs)}, not {c} -> {d}")
    choices = MMA_KIND_SCALES.get(kind, frozenset())
    if choices and scale not in choices:
        raise IsaError(f"mma kind::{kind} needs block scales "
                       f"({', '.join(f'{t}x{v}' for t, v in sorted(choices))})")
    if not choices and scale:
        raise IsaError(f"mma kind::{kind} takes no block scales")
    if sparse or saturate:
        raise IsaError(f"mma kind::{kind} has no sparse or saturating form here")
    if k != MMA_KIND_K[kind]:
        raise IsaError(f"one mma kind::{kind} instruction has K={MMA_KIND_K[kind]}, not {k}")



# ---------------------------------------------------------------------------
# Default parameters per output type

DEFAULT_WINDOW_BITS = 25  # F of H100/H200/B200 HMMA and of tcgen05


@dataclass(frozen=True)
class OutputDefaults:
    """How a datapath converts its sum into D by default: the rounding and
    the lowest anchor exponent (the zero floor)."""

    rounding: str  # rz / rne
    zero_floor: int
    window_bits: int = DEFAULT_WINDOW_BITS


_F32_OUT = OutputDefaults("rz", -133)
_F16_OUT = OutputDefaults("rne", -21)


def output_defaults(d_type: str) -> OutputDefaults:
    """The default conversion into D: an f16 D is rounded to nearest even with
    the anchor floored at 2**-21; every other D (f32) is truncated with the
    floor at 2**-133 (module doc for the evidence)."""
    return _F16_OUT if d_type == "f16" else _F32_OUT


def output_rounding(d_type: str) -> str:
    """rne into an f16 D, rz into f32: the convention of every HMMA/tcgen05
    profile, whatever its window and floors."""
    return output_defaults(d_type).rounding


# ---------------------------------------------------------------------------
# Operand containers

# Shared-memory packing of an element of each width (tcgen05/wgmma operands;
# fp6 and fp4 are packed 16 elements into 12/8 bytes, padded to 16 bytes),
# and of the packed kinds' e2m1 (two a byte).
ELEMENT_PACKINGS = {32: "b32", 16: "b16", 8: "b8", 6: "b6x16_p32", 4: "b4x16_p64"}
PACKED_E2M1_PACKING = "b4"


def operand_packing(kind: str, t: str) -> str:
    """The shared-memory packing of an A/B element of type ``t`` under
    ``kind``: its width's (tf32 in 32 bits), e2m1 two a byte under the
    packed kinds (:data:`PACKED_E2M1_KINDS`)."""
    from .formats import get_format  # numba-compiled decoders: not at import

    if t not in INPUT_K or t in MMA_ONLY_TYPES:
        raise IsaError(f"no shared-memory packing for {t}")
    if t == "e2m1" and kind in PACKED_E2M1_KINDS:
        return PACKED_E2M1_PACKING
    return ELEMENT_PACKINGS[32 if t == "tf32" else get_format(t).width]


# ---------------------------------------------------------------------------
# Architectures: what each harness architecture runs (the SASS it compiles to,
# NVRTC/ptxas 13.5: models/isa_sass.py, checked by tests/test_sass.py)

# Families each architecture's harness runs. sm_90a adds wgmma to the mma
# harness of sm_90; sm_100a and sm_103a add tcgen05.
ARCH_FAMILIES: dict[str, tuple[str, ...]] = {
    "sm_75": ("mma",),
    "sm_80": ("mma",),
    "sm_86": ("mma",),
    "sm_89": ("mma",),
    "sm_90": ("mma",),
    "sm_90a": ("mma", "wgmma"),
    "sm_100a": ("mma", "tcgen05"),
    "sm_103a": ("mma", "tcgen05"),
    "sm_120a": ("mma",),
}

# Harness architecture of each compute capability (the arch-specific target
# where a family needs one: sm_90a, sm_100a).
CC_ARCH = {75: "sm_75", 80: "sm_80", 86: "sm_86", 87: "sm_86", 89: "sm_89", 90: "sm_90a", 100: "sm_100a",
           103: "sm_103a", 120: "sm_120a"}

# The GPUs of each architecture that tcprobe has profiles for (the GPU
# catalogue, models/gpus.py).
ARCH_GPUS = gpus.arch_gpus(ARCH_FAMILIES)


def arch_gpu(arch: str | None) -> str | None:
    """The GPU whose profile stands for ``arch`` (the first of ARCH_GPUS),
    None for an architecture with none."""
    return next(iter(ARCH_GPUS.get(arch or "", ())), None)

# Architecture groups.
TURING_ARCHS = ("sm_75",)  # mma.sync m16n8k8 and m8n8k4 only (f16)
MMA_ARCHS = tuple(a for a in ARCH_FAMILIES if a not in TURING_ARCHS)  # mma.sync m16n8k16 and up
FP8_NATIVE_ARCHS = ("sm_89", "sm_120a")  # fp8 mma.sync is QMMA
FP8_EMULATED_ARCHS = ("sm_90", "sm_90a", "sm_100a", "sm_103a")  # F2FP unpacks + HMMA
SM120_ARCHS = ("sm_120a",)  # mma.sync kind::f8f6f4 and block scaling
HOPPER_ARCHS = ("sm_90a",)  # wgmma
BLACKWELL_ARCHS = ("sm_100a", "sm_103a")  # tcgen05
# ptxas 13.5 rejects kind::i8 for sm_103a ("Feature '.kind::i8' not supported
# on .target 'sm_103a'").
TCGEN05_KIND_ARCHS = {kind: ("sm_100a",) if kind == "i8" else BLACKWELL_ARCHS
                      for kind in TCGEN05_KINDS}


def arch_for_cc(major: int, minor: int) -> str:
    """The harness architecture of a GPU of compute capability major.minor."""
    cc = major * 10 + minor
    if cc in CC_ARCH:
        return CC_ARCH[cc]
    raise LookupError(f"no tcprobe harness for compute capability {major}.{minor} "
                      f"(harnesses: {', '.join(ARCH_FAMILIES)})")


# ---------------------------------------------------------------------------
# Which instruction multiplies a pair of input types on an architecture


def arch_instruction_k(arch: str | None, family: str, kind: str, a_type: str) -> int:
    """K of one instruction of ``family``/``kind`` on ``arch``: the largest
    shape its mma.sync has where ARCH_MMA_SHAPES lists fewer (V100: m8n8k4,
    T4: m16n8k8), an sm_120a ``mma .kind::``'s K, else :func:`instruction_k`."""
    if family == "mma" and kind in MMA_KINDS:
        return MMA_KIND_K[kind]
    shapes = ARCH_MMA_SHAPES.get(arch or "") if family == "mma" else None
    if shapes is None:
        return instruction_k(family, kind, a_type)
    if a_type not in shapes:
        raise IsaError(arch_shapes_error(arch, shapes, a_type))
    return max(k for _m, _n, k in shapes[a_type])


# Turing's integer mma.sync (PTX ISA, mma.sync shapes by target: m8n8k16 s8/u8,
# m8n8k32 s4/u4, m8n8k128 b1 from sm_75), which ARCH_MMA_SHAPES does not list.
TURING_INTEGER_SHAPES = {"s8": "m8n8k16", "u8": "m8n8k16", "s4": "m8n8k32", "u4": "m8n8k32",
                         "b1": "m8n8k128"}


def arch_shapes_error(arch: str, shapes: dict, a_type: str) -> str:
    """Why ``arch``'s mma.sync (ARCH_MMA_SHAPES: ``shapes``) runs no ``a_type``:
    the ISA lacks it, or (Turing's integer shapes) the ISA has it and tcprobe
    does not model it: said as such, never as the ISA's."""
    if arch in TURING_ARCHS and a_type in TURING_INTEGER_SHAPES:
        return (f"tcprobe does not model {arch}'s integer mma.sync ({a_type}: "
                f"{TURING_INTEGER_SHAPES[a_type]} in the PTX ISA); it models {arch}'s "
                f"{', '.join(shapes)} shapes only")
    return f"{arch}'s mma.sync takes {', '.join(shapes)} inputs, not {a_type}"


def pair_kind(arch: str | None, family: str, a: str, b: str) -> str | None:
    """The kind of ``family`` on ``arch`` that multiplies A of ``a`` by B of
    ``b`` where the input type's own instruction does not (None: it does):
    sm_120a's mma.sync kind::f8f6f4 for fp6/fp4 or two different f8f6f4
    types, tcgen05 kind::f8f6f4 for two different ones, the fp8 mixes of
    mma.sync and wgmma (kind: A's type). IsaError for a pair none takes."""
    if (family == "mma" and arch in SM120_ARCHS and (a != b or a in SUB_BYTE_TYPES)
            and {a, b} <= set(MMA_KIND_INPUT_TYPES["f8f6f4"])):
        return "f8f6f4"
    if a == b:
        return None
    if family == "tcgen05":
        if a in F8F6F4_TYPES and b in F8F6F4_TYPES:
            return "f8f6f4"
    elif a in FP8_TYPES and b in FP8_TYPES:
        return a
    elif any(a in m and b in m for m in INTEGER_MIXES):
        return a
    raise IsaError(f"{family} takes no {a} x {b} product")
