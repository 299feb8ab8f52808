"""The SASS each PTX MMA instruction compiles to (NVRTC/ptxas 13.5 and
nvdisasm, checked by tests/test_sass.py; kernels/README.md).

The instructions and the architecture groups are the ISA table's
(:mod:`tcprobe.models.isa`); this module names the opcodes ptxas emits for
them, and where it emulates an instruction with others.
"""

from __future__ import annotations

from .isa import (
    BIT_TYPES,
    F64_NATIVE_ARCHS,
    F64_SHAPES,
    F64_SM80_ARCHS,
    FP8_TYPES,
    INTEGER_INPUT_TYPES,
    IsaError,
    f64_shapes,
    instruction_k,
)


def f64_opcode(shape: tuple[int, int, int], arch: str) -> tuple[str, bool]:
    """(the SASS opcode an f64 mma.sync shape compiles to on ``arch``,
    whether the compiler emulates the shape with smaller DMMAs)."""
    m, n, k = shape
    if shape not in f64_shapes(arch):
        raise IsaError(f"{arch} has no f64 mma.sync m{m}n{n}k{k}")
    if arch in F64_SM80_ARCHS:
        return "DMMA.884", False
    if arch in F64_NATIVE_ARCHS:
        return f"DMMA.{m}x{n}x{k}", False
    return "DMMA.8x8x4", shape != F64_SHAPES[0]


def integer_mma_opcode(a_type: str, k: int, bitop: str | None = None, sparse: bool = False,
                       emulated: bool | str = False, saturate: bool = False) -> str:
    """The SASS opcode of integer mma.sync / mma.sp m16n8kK (logical K);
    ``emulated``: the 8-bit IMMA an s4/u4 emulation issues (same signedness),
    the BMMA.AND of b1 .xor on sm_90 (True), or "imma": b1 on sm_100a and later;
    ``saturate``: .satfinite (.SAT)."""
    T = a_type.upper()
    if a_type in BIT_TYPES:
        if emulated == "imma":
            return "IMMA.16832.U8.U8"
        return f"BMMA.168{k}.{'AND' if emulated else bitop.upper()}.POPC"
    sat = ".SAT" if saturate else ""
    if emulated:  # the emulation saturates outside the IMMA: no .SAT on it
        t8 = "S8" if a_type.startswith("s") else "U8"
        return f"IMMA.SP.16864.{t8}.{t8}" if sparse else f"IMMA.16832.{t8}.{t8}"
    return f"IMMA{'.SP' if sparse else ''}.168{k}.{T}.{T}{sat}"


def sparse_mma_opcode(a_type: str, d_type: str, k: int) -> str:
    """The SASS opcode of float mma.sp m16n8kK (logical K)."""
    D = d_type.upper()
    if a_type in FP8_TYPES:
        return f"QMMA.SP.168{k}.{D}.{a_type.upper()}.{a_type.upper()}"
    suffix = {"bf16": ".BF16", "tf32": ".TF32"}.get(a_type, "")
    return f"HMMA.SP.168{k}.{D}{suffix}"


def mma_shape_opcode(a_type: str, d_type: str, k: int) -> str:
    """The SASS opcode of ``mma.sync`` m16n8kK (a K below the largest) with A/B
    of ``a_type`` into ``d_type``: HMMA.1688 for m16n8k8 f16, HMMA.884 steps for
    m8n8k4 f16 (nvdisasm 13.5 on sm_75, tests/test_sass.py)."""
    if (a_type, k) == ("f16", 8):
        return f"HMMA.1688.{d_type.upper()}"
    if (a_type, k) == ("f16", 4):  # sm_75: STEP0..3 into f32, STEP0..1 into f16; the first
        return f"HMMA.884.{d_type.upper()}.{d_type.upper()}.STEP0"
    raise IsaError(f"no recorded opcode for mma.sync k{k} with {a_type}")


def mma_opcode(a_type: str, d_type: str, emulated: bool = False) -> str:
    """The SASS opcode of ``mma.sync`` m16n8kK with A/B of ``a_type`` (its
    largest K) into ``d_type``; ``emulated``: the HMMA that an fp8 emulation issues."""
    D = d_type.upper()
    if a_type in FP8_TYPES:
        return f"HMMA.16816.{D}" if emulated else f"QMMA.16832.{D}.{a_type.upper()}.{a_type.upper()}"
    return {"f16": f"HMMA.16816.{D}", "bf16": "HMMA.16816.F32.BF16", "tf32": "HMMA.1688.F32.TF32",
            "s8": "IMMA.16832.S8.S8", "u8": "IMMA.16832.U8.U8"}[a_type]


def mma_kind_opcode(kind: str, a_type: str, scale_type: str | None = None,
                    scale_vec: int | None = None) -> str:
    """The SASS opcode of sm_120a's ``mma.sync .kind::`` forms (into f32)."""
    T = a_type.upper()
    if kind == "f8f6f4":
        return f"QMMA.16832.F32.{T}.{T}"
    if kind == "mxf8f6f4":
        return f"QMMA.SF.16832.F32.{T}.{T}.E8"
    # ue8m0 x4 prints .E8.4X (nvdisasm 13.5); 2X is the default and unprinted
    sc = ("E8" if scale_type == "ue8m0" else "UE4M3") + (f".{scale_vec}X" if scale_vec == 4 else "")
    return f"OMMA.SF.16864.F32.E2M1.E2M1.{sc}"


def wgmma_opcode(a_type: str, d_type: str, saturate: bool = False, sparse: bool = False) -> str:
    """The SASS opcode of ``wgmma.mma_async`` m64n8kK (K of one instruction;
    ``saturate``: .satfinite; ``sparse``: wgmma.mma_async.sp, K doubled)."""
    k, D, T = instruction_k("wgmma", a_type, sparse=sparse), d_type.upper(), a_type.upper()
    sp = ".SP" if sparse else ""
    if a_type in FP8_TYPES:
        return f"QGMMA{sp}.64x8x{k}.{D}.{T}.{T}"
    if a_type in INTEGER_INPUT_TYPES:
        return f"IGMMA{sp}.64x8x{k}.{T}.{T}{'.SAT' if saturate else ''}"
    suffix = {"bf16": ".BF16", "tf32": ".TF32"}.get(a_type, "")
    return f"HGMMA{sp}.64x8x{k}.{D}{suffix}"


# tcgen05.mma: one opcode a kind (the types sit in the runtime instruction
# descriptor, so f16, bf16 and tf32 all run UTCHMMA).
TCGEN05_OPCODES = {"tf32": "UTCHMMA", "f16": "UTCHMMA", "f8f6f4": "UTCQMMA", "i8": "UTCIMMA",
                   "mxf8f6f4": "UTCQMMA", "mxf4": "UTCOMMA", "mxf4nvf4": "UTCOMMA"}


def tcgen05_opcode(kind: str, arch: str, scale_vec: int | None = None) -> str:
    """The SASS opcode of ``tcgen05.mma`` of ``kind`` on ``arch``: the same PTX
    of mxf4nvf4.scale_vec::4X disassembles as UTCOMMA.4X on sm_100a and
    UTCOMMA.BLOCK16 on sm_103a."""
    if kind == "mxf4nvf4" and scale_vec == 4:
        return "UTCOMMA.BLOCK16" if arch == "sm_103a" else "UTCOMMA.4X"
    return TCGEN05_OPCODES[kind]
