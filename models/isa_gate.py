"""The ISA table's gate: is a combination an instruction, and does an architecture have it.

Every surface (JSON Lines records, ``tcprobe.matmul``, ``tcprobe.dot``,
``tcprobe gemm``) asks here before it computes; the facts themselves are
:mod:`tcprobe.models.isa`'s.
"""

from __future__ import annotations

from tcprobe.models.isa import (  # noqa: F401 - IsaError is raised from here too
    ARCH_FAMILIES,
    ARCH_MMA_SHAPES,
    F64_TYPES,
    FP8_EMULATED_ARCHS,
    FP8_NATIVE_ARCHS,
    FP8_TYPES,
    INPUT_K,
    MMA_KINDS,
    MMA_ONLY_TYPES,
    MMA_SHAPES,
    MMA_SP_K,
    SM120_ARCHS,
    SUB_BYTE_TYPES,
    TCGEN05_KIND_ARCHS,
    WGMMA_SP_TYPES,
    IsaError,
    arch_shapes_error,
    check_mma_kind,
    check_tcgen05,
    f64_shapes,
    input_types,
    instruction_k,
    output_types,
)


def instruction_ks(family: str, kind: str, a_type: str, sparse: bool) -> tuple[int, ...]:
    """Every K one instruction of this family, kind and A type has."""
    if family == "mma":
        if sparse:  # mma.sp: its own shapes (m16n8kK with K twice a dense m16n8 K)
            return MMA_SP_K.get(a_type, ())
        return tuple(dict.fromkeys(k for _, _, k in MMA_SHAPES.get(a_type, ())))
    return (instruction_k(family, kind, a_type, sparse),)


def check_instruction(family, kind, a_type, b_type, c_type, d_type, k, scale_type, scale_vec,
                      sparse, saturate) -> None:
    """Raise IsaError unless the PTX ISA defines this instruction (kind, A/B/C/D
    types, K, block scales, sparsity); types are canonical format names."""
    if family == "tcgen05":
        check_tcgen05(kind, a_type, b_type, c_type, d_type, k,
                      (scale_type, scale_vec) if scale_type else None, sparse, saturate)
        return
    if family == "mma" and kind in MMA_KINDS:  # sm_120a's mma.sync .kind::
        check_mma_kind(kind, a_type, b_type, c_type, d_type, k,
                       (scale_type, scale_vec or 1) if scale_type else None, sparse, saturate)
        return
    if kind == f"{a_type}x{b_type}":  # an id such as wgmma.e4m3xe5m2.f16.k32
        kind = a_type
    f64 = family == "mma" and kind in F64_TYPES
    if (kind not in INPUT_K and not f64) or kind in SUB_BYTE_TYPES:
        raise IsaError(f"kind {kind!r} is not an input type of {family} (allowed: "
                       f"{', '.join(t for t in INPUT_K if t not in SUB_BYTE_TYPES)})")
    if family == "wgmma" and kind in MMA_ONLY_TYPES:
        raise IsaError(f"wgmma takes no {kind} inputs (mma.sync only)")
    allowed = input_types(family, kind)
    if a_type not in allowed or b_type not in allowed:
        raise IsaError(f"{family} kind {kind} takes A/B in {', '.join(allowed)}, "
                       f"not {a_type}x{b_type}")
    outs = output_types(family, kind, a_type)
    if d_type not in outs:
        raise IsaError(f"{family} {kind} writes D in {', '.join(outs)}, not {d_type}")
    if c_type not in outs:
        raise IsaError(f"{family} {kind} takes C in {', '.join(outs)}, not {c_type}")
    if scale_type:
        raise IsaError(f"{family} takes no block scales (scale_type is for tcgen05)")
    if sparse and family == "wgmma" and a_type not in WGMMA_SP_TYPES:
        raise IsaError(f"wgmma.sp takes A in {', '.join(WGMMA_SP_TYPES)}, not {a_type}")
    ks = instruction_ks(family, kind, a_type, sparse)
    if k not in ks:
        raise IsaError(f"k: one {family}{'.sp' if sparse else ''} {kind} instruction has K "
                       f"{' or '.join(map(str, ks)) or '(none)'}, not {k}")


def _arch_in(arch: str, archs) -> bool:
    return arch in archs or arch + "a" in archs


def arch_families(arch: str) -> tuple[str, ...]:
    """The instruction families of ``arch``: its own, with the arch-specific
    target's (sm_90a, sm_100a) where one exists."""
    for name in (arch + "a", arch):
        if name in ARCH_FAMILIES:
            return ARCH_FAMILIES[name]
    return ("mma",)


def check_arch(arch: str, family: str, kind: str, a_type: str, k: int) -> None:
    """Raise IsaError unless a GPU of ``arch`` has this instruction (a family,
    a kind, an input type and K the table gives that architecture)."""
    fams = arch_families(arch)
    if family not in fams:
        raise IsaError(f"{arch} has no {family} (it has {', '.join(fams)})")
    if family == "tcgen05":
        if not _arch_in(arch, TCGEN05_KIND_ARCHS[kind]):
            raise IsaError(f"{arch} has no tcgen05 kind::{kind} "
                           f"(it is on {', '.join(TCGEN05_KIND_ARCHS[kind])})")
        return
    if family != "mma":
        return
    if kind in MMA_KINDS:
        if not _arch_in(arch, SM120_ARCHS):
            raise IsaError(f"{arch} has no mma.sync kind::{kind} (only {', '.join(SM120_ARCHS)})")
        return
    if a_type in F64_TYPES:
        ks = sorted({kk for _m, _n, kk in f64_shapes(arch)})
        if k not in ks:
            raise IsaError(f"{arch} has no f64 mma.sync with K={k} "
                           f"(K: {', '.join(map(str, ks)) or 'none before sm_80'})")
        return
    shapes = ARCH_MMA_SHAPES.get(arch)
    if shapes is not None:
        if a_type not in shapes:
            raise IsaError(arch_shapes_error(arch, shapes, a_type))
        ks = sorted({kk for _m, _n, kk in shapes[a_type]})
        if k not in ks:
            raise IsaError(f"{arch}'s mma.sync {a_type} has K {' or '.join(map(str, ks))}, not {k}")
    if a_type in FP8_TYPES and not _arch_in(arch, (*FP8_NATIVE_ARCHS, *FP8_EMULATED_ARCHS)):
        raise IsaError(f"{arch} has no fp8 mma.sync (from sm_89)")
