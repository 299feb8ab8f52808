"""GPU profiles of AMD's CDNA matrix cores: MI100 (CDNA1), MI250X (CDNA2), MI300X (CDNA3).

Every parameter restates MMA-Sim 2.1.1 (``mmasim/amd/sim.py``: which design
each generation and type runs, with its L, P, F and F2), itself fitted by its
authors to MI100/MI250X/MI300X measurements. None of it is measured by
tcprobe on silicon (no AMD GPU here); the designs are in models/amd.py.
"""

from __future__ import annotations

from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Kind, get_format

from . import isa_amd
from .amd import MfmaModel, MfmaParams
from .model import ModelError

EVIDENCE = ("MMA-Sim 2.1.1 (mmasim/amd/sim.py), fitted by its authors to {gpu}; "
            "not measured on silicon by tcprobe")


def params_for(arch: str, kind: str) -> MfmaParams:
    """The design of ``kind`` (an isa_amd kind) on generation ``arch``."""
    if kind in ("f64", "f32"):
        return MfmaParams("fma")
    if kind == "fp8":
        return MfmaParams("grouped", 16)
    if arch == "CDNA1":
        return MfmaParams("exact", 4 if kind == "f16" else 2)
    if arch == "CDNA2":
        return MfmaParams("ftz", 2 if kind == "bf16" else 4)
    return MfmaParams("truncated", 4 if kind == "xf32" else 8)


def model_for(dp: Datapath, gpu: str) -> MfmaModel:
    """The MfmaModel of a v_mfma datapath on ``gpu`` (MI100, MI250X, MI300X):
    the ISA table's gate for every surface (``dot``, ``matmul``, ``gemm``,
    emulate, ``--device sim:``): some v_mfma of the GPU's generation runs
    ``dp`` exactly (kind, A/B/D types and K), else ModelError."""
    arch = isa_amd.GPU_ARCH.get(str(gpu).upper())
    if arch is None:
        raise ModelError(f"gpu: no AMD profile for {gpu!r} (known: {', '.join(isa_amd.GPU_ARCH)})")
    kinds = {i.kind for i in isa_amd.instructions(arch)}
    if dp.family != "mfma" or dp.kind not in kinds:
        raise ModelError(f"{gpu} ({arch}) has no v_mfma of kind {dp.kind} ({dp.id})")
    instruction_for(gpu, dp)  # its types and K too
    return MfmaModel(gpu.lower(), dp, EVIDENCE.format(gpu=gpu), params_for(arch, dp.kind))


def instruction_for(gpu: str, dp: Datapath) -> isa_amd.Mfma:
    """The first v_mfma of ``gpu``'s generation whose datapath is ``dp`` (kind,
    types and K); ModelError naming the GPU's datapaths when none is."""
    arch = isa_amd.GPU_ARCH.get(str(gpu).upper())
    if arch is None:
        raise ModelError(f"gpu: no AMD profile for {gpu!r} (known: {', '.join(isa_amd.GPU_ARCH)})")
    ins = isa_amd.instructions(arch)
    for i in ins:
        if datapath(i).id == dp.id:
            return i
    known = ", ".join(dict.fromkeys(datapath(i).id for i in ins))
    raise ModelError(f"{gpu} ({arch}) has no v_mfma running {dp.id} (its datapaths: {known})")


def check_datapath(dp: Datapath) -> None:
    """ModelError unless some v_mfma of the table (any generation) runs ``dp``."""
    ids = {datapath(i).id for i in isa_amd.instructions()}
    if dp.id not in ids:
        raise ModelError(f"no v_mfma runs {dp.id} (e.g. {', '.join(sorted(ids)[:4])}; "
                         "tcprobe.models.isa_amd lists them)")


def auto_model(dp: Datapath, gpu: str | None) -> MfmaModel:
    """``--model auto`` for an mfma datapath: the profile of its GPU (default MI300X)."""
    return model_for(dp, gpu or "MI300X")


def datapath(ins: isa_amd.Mfma) -> Datapath:
    """The datapath of one v_mfma instruction (one output element's dot product)."""
    return Datapath("mfma", ins.kind, ins.a_type, ins.b_type, ins.d_type, ins.k)


# The instruction a GEMM of each input type runs on each generation: the
# single-block v_mfma with the largest K of the type. ASSUMED, not measured:
# rocBLAS/hipBLASLt's MFMA kernels are named by their instruction
# (MI16x16x16 ...), and with L dividing K the chain over K gives the same
# words whichever of the type's single-block shapes runs; f32 runs v_mfma_f32
# (the FMA chain), xf32 only when asked for by name (instr="mfma.xf32...").
def blas_datapath(gpu: str, a: str, b: str, d: str) -> Datapath:
    """The datapath of an A (a) x B (b) -> D (d) product on AMD ``gpu``;
    ValueError naming A when the generation has no such v_mfma."""
    arch = isa_amd.GPU_ARCH[gpu.upper()]
    if a == b == "tf32":  # f32 operands (NVIDIA's reading of them): AMD has a true f32 MFMA
        a = b = "f32"
    fits = [i for i in isa_amd.instructions(arch) if i.blocks == 1 and i.kind != "xf32"
            and (i.a_type, i.b_type, i.d_type) == (a, b, d)]
    if not fits and get_format(a).kind == Kind.INT:  # CDNA has i8 MFMAs; tcprobe's table has none
        raise ModelError(f"A: tcprobe does not model {gpu}'s integer v_mfma ({a} x {b}: not in "
                         "its AMD ISA table, docs/amd.md)")
    if not fits:
        raise ModelError(f"A: {gpu} ({arch}) has no v_mfma taking {a} x {b} -> {d}")
    best = max(fits, key=lambda i: (i.k, i.kind == "bf16_1k"))
    return datapath(best)


# What hipBLASLt issues for an f32 GEMM that PyTorch lets run as TF32 on
# MI300X (torch.set_float32_matmul_precision("high") / allow_tf32): the native
# v_mfma_f32_*_xf32, which truncates each f32 operand to xf32 in hardware
# (ROCm/rocm-libraries PR 9176, "round before gfx942 xf32 mfma to avoid bias
# from hardware truncation", open: hipBLASLt does not round them today;
# pytorch/pytorch PR 188168 on the same path). Generations without xf32 run
# the f32 MFMA. The largest-K single-block instruction, as for the others.
def xf32_datapath(gpu: str) -> Datapath | None:
    """The xf32 datapath an f32 GEMM runs on ``gpu`` under TF32 (None: none)."""
    arch = isa_amd.GPU_ARCH[gpu.upper()]
    fits = [i for i in isa_amd.instructions(arch) if i.kind == "xf32" and i.blocks == 1]
    return datapath(max(fits, key=lambda i: i.k)) if fits else None
