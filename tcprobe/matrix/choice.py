"""Which instruction and which model compute a product on a GPU.

A GPU is any that a tcprobe profile names (``models/profiles.py``). Its
architecture names the instruction families it has (the ISA table's
architecture facts); by default a product runs on the newest family that
takes its element formats, as cuBLAS and CUTLASS choose: ``mma.sync`` on
V100, A100 and Ada, ``wgmma`` on H100/H200, ``tcgen05.mma`` on B200/B300.
"""

from __future__ import annotations

from pathlib import Path

from tcprobe.model_file import is_model_file, load_model_file
from tcprobe.models import amd_profiles, isa, isa_gate, registry
from tcprobe.models.datapath import Datapath, DatapathError, datapath_for
from tcprobe.models.engine import ParamError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.model import Model, ModelError
from tcprobe.models.profiles import PROFILES, profile_for_gpu

from .operands import MatmulError


def known_gpus() -> list[str]:
    from tcprobe.models import isa_amd  # AMD CDNA: models/amd_profiles.py

    return [g for p in PROFILES.values() for g in p.gpus] + list(isa_amd.GPU_ARCH)


def gpu_name(gpu) -> str:
    """The GPU's name as the profiles spell it; ValueError naming ``gpu``."""
    if not isinstance(gpu, str) or not gpu.strip():
        raise MatmulError(f"gpu must name a GPU ({', '.join(known_gpus())}), not {gpu!r}")
    for g in known_gpus():
        if g.upper() == gpu.strip().upper():
            return g
    raise MatmulError(f"gpu: unknown GPU {gpu!r} (known: {', '.join(known_gpus())})")


def arch(gpu: str) -> str:
    return profile_for_gpu(gpu).arch


def families(gpu: str) -> tuple[str, ...]:
    """The instruction families of ``gpu``'s architecture (the ISA table; an
    AMD CDNA GPU has v_mfma alone)."""
    if gpu in amd_profiles.isa_amd.GPU_ARCH:
        return ("mfma",)
    return isa_gate.arch_families(arch(gpu))


def check_datapath(dp: Datapath, gpu: str | None, what: str = "instr") -> None:
    """The ISA table's gate: ``dp`` is an instruction the PTX ISA defines
    (types, K, scales, sparsity) and, given ``gpu``, one its architecture has;
    ValueError starting with ``what`` otherwise. AMD's v_mfma is checked
    against its own table (models/isa_amd.py) through its GPU's profile."""
    amd_gpu = gpu is not None and gpu in amd_profiles.isa_amd.GPU_ARCH
    if dp.family == "mfma" or amd_gpu:
        if dp.family != "mfma":
            raise MatmulError(f"{what}: {gpu} has no {dp.family} (it has mfma)")
        if gpu is not None and not amd_gpu:
            raise MatmulError(f"{what}: {gpu} has no mfma (an AMD CDNA instruction)")
        try:
            amd_profiles.model_for(dp, gpu or "MI300X")
        except ModelError as e:
            raise MatmulError(f"{what}: {e}") from None
        return
    t = {x: get_format(getattr(dp, x)).name for x in ("a_type", "b_type", "d_type")}
    try:
        isa_gate.check_instruction(dp.family, dp.kind, t["a_type"], t["b_type"],
                              get_format(dp.c).name, t["d_type"], dp.k, dp.scale_type,
                              dp.scale_vec, dp.sparse, dp.saturate)
        if gpu is not None:
            isa_gate.check_arch(arch(gpu), dp.family, dp.kind, t["a_type"], dp.k)
    except isa.IsaError as e:
        on = f" ({gpu} is {arch(gpu)})" if gpu is not None and arch(gpu) in str(e) else ""
        raise MatmulError(f"{what}: {dp.id}: {e}{on}") from None


def block_scaled_datapath(a: str, b: str, scale: str, block: int,
                          family: str = "tcgen05") -> Datapath:
    """The block-scaled kind that elements ``a``, ``b`` with ``scale`` codes
    every ``block`` K positions select (the ISA table's :func:`isa.block_scaled_kind`)."""
    try:
        kind, vec = isa.block_scaled_kind(a, b, scale, block)
    except isa.IsaError as e:
        raise MatmulError(f"scale_a: {e}") from None
    return Datapath(family, kind, a, b, "f32", isa.arch_instruction_k(None, family, kind, a),
                    scale_type=scale, scale_vec=vec)


def _family_datapath(family: str, a: str, b: str, d: str, gpu: str) -> Datapath:
    """The datapath of ``family`` on ``gpu``'s architecture for the pair (the
    ISA table's rule: models/datapath.datapath_for)."""
    try:
        return datapath_for(arch(gpu), family, a, b, d)
    except isa.IsaError as e:
        raise MatmulError(f"{'B' if a != b else 'A'}: {e} ({gpu} is {arch(gpu)})") from None


def datapath(gpu: str, instr: str | None, a: str, b: str, d: str,
             scale: str | None = None, block: int | None = None) -> Datapath:
    """The datapath of one instruction of the product (module doc), checked
    against the ISA table and ``gpu``'s architecture."""
    if isinstance(instr, Datapath):
        instr = instr.id
    if instr is not None and not isinstance(instr, str):
        raise MatmulError(f"instr must name a family (mma, wgmma, tcgen05) or a datapath id, "
                          f"not {instr!r}")
    if instr is not None and "." not in instr:
        instr = instr.strip().lower()  # a family in any case, as the command line takes it
    if gpu in amd_profiles.isa_amd.GPU_ARCH:
        return _amd_datapath(gpu, instr, a, b, d, scale)
    dp = _datapath(gpu, instr, a, b, d, scale, block)
    check_datapath(dp, gpu, "instr" if instr and "." in instr else "A")
    return dp


def library_datapath(gpu: str, fmt: str, what: str = "format") -> Datapath:
    """The instruction ``gpu``'s library runs for a ``fmt`` x ``fmt`` product
    (as ``tcprobe.matmul`` picks it); a GPU with none (bf16 on a V100, fp8 on
    an A100, OCP fp8 on CDNA) is an error naming ``what``, one gate for every
    surface that takes a GPU and a format."""
    spec, gpu = get_format(fmt), gpu_name(gpu)  # an unknown GPU is its own error
    name = spec.name
    try:  # the accumulator tcprobe.matmul takes (resolve.problem): s32 for integers
        return datapath(gpu, None, name, name, "s32" if spec.kind.name == "INT" else "f32")
    except MatmulError as e:
        raise MatmulError(f"{what} {fmt}: " + str(e).split(": ", 1)[-1]) from None


def _datapath(gpu: str, instr: str | None, a: str, b: str, d: str,
              scale: str | None, block: int | None) -> Datapath:
    fams = families(gpu)
    if instr and "." in instr:
        try:
            dp = Datapath.parse(instr)
        except (DatapathError, FormatError) as e:
            raise MatmulError(f"instr: {e}") from None
        if dp.family not in fams:
            raise MatmulError(f"instr: {gpu} has no {dp.family} (it has {', '.join(fams)})")
        for what, want, got in (("A", dp.a_type, a), ("B", dp.b_type, b), ("C", dp.d_type, d)):
            if get_format(want).name != got:
                raise MatmulError(f"{what}: {dp.id} takes {want}, not {got}")
        return dp
    if scale is not None:
        scaled = [f for f in ("tcgen05", "mma") if f in fams
                  and (f == "tcgen05" or arch(gpu) in isa.SM120_ARCHS)]
        if not scaled or instr not in (None, *scaled):
            raise MatmulError(f"scale_a: block scales need tcgen05 (B200, B300) or sm_120a's "
                              f"mma.sync (RTX5090); {gpu}"
                              + (f" runs them on {scaled[0]}" if scaled else " has neither"))
        return block_scaled_datapath(a, b, scale, block, instr or scaled[0])
    if instr is not None:
        if instr in amd_profiles.isa_amd.AMD_FAMILIES:
            raise MatmulError(f"instr: {gpu} has no {instr} (an AMD CDNA instruction; it has "
                              f"{', '.join(fams)})")
        if instr not in isa.FAMILIES:
            raise MatmulError(f"instr: {instr!r} is no family ({', '.join(isa.FAMILIES)}) "
                             "or datapath id")
        if instr not in fams:
            raise MatmulError(f"instr: {gpu} has no {instr} (it has {', '.join(fams)})")
        try:
            return _family_datapath(instr, a, b, d, gpu)
        except DatapathError as e:
            raise MatmulError(f"A: {e}") from None
    errors = []
    for family in reversed(fams):
        try:
            dp = _family_datapath(family, a, b, d, gpu)
            check_datapath(dp, gpu)
            model_for(dp, gpu)
            return dp
        except (DatapathError, ValueError) as e:
            errors.append(f"{family}: {e}")
    if errors and all("does not model" in e for e in errors):  # the ISA has it; tcprobe not
        raise MatmulError(f"A: tcprobe does not model {gpu}'s {a} x {b} -> {d} product "
                          f"({'; '.join(errors)})")
    raise MatmulError(f"A: {gpu}'s instructions take no {a} x {b} -> {d} product "
                     f"({'; '.join(errors)})")


def _amd_datapath(gpu: str, instr, a: str, b: str, d: str, scale) -> Datapath:
    """An AMD GPU's v_mfma for the product (models/amd_profiles.blas_datapath)."""
    if scale is not None:
        raise MatmulError(f"scale_a: {gpu} has no block-scaled v_mfma here")
    if instr and "." in instr:
        try:
            dp = Datapath.parse(instr)
        except (DatapathError, FormatError) as e:
            raise MatmulError(f"instr: {e}") from None
        if dp.family != "mfma":
            raise MatmulError(f"instr: {gpu} has no {dp.family} (it has mfma)")
        for what, want, got in (("A", dp.a_type, a), ("B", dp.b_type, b)):
            if get_format(want).name != got and not (got == "tf32" and want == "f32"):
                raise MatmulError(f"{what}: {dp.id} takes {want}, not {got}")
        return dp
    if instr not in (None, "mfma"):
        raise MatmulError(f"instr: {gpu} has no {instr} (it has mfma)")
    try:
        return amd_profiles.blas_datapath(gpu, a, b, d)
    except ModelError as e:
        raise MatmulError(str(e)) from None


def model_for(dp: Datapath, gpu: str | None, model=None) -> Model:
    """The model of ``dp`` on ``gpu``: the GPU's profile, or ``model`` (a
    ``--model`` name, a fit/ladder JSON path, or a Model of ``dp``)."""
    if isinstance(model, Model):
        if model.datapath != dp:
            raise MatmulError(f"model: {model.name} models {model.datapath.id}, not {dp.id}")
        return model
    if model is not None and not isinstance(model, (str, Path)):
        raise MatmulError(f"model must be a name, a .json path or a Model, not "
                          f"{type(model).__name__}")
    try:
        if model is None:
            return registry.resolve("auto", dp, gpu)
        if is_model_file(model):
            return load_model_file(model, dp, "model")
        return registry.resolve(str(model), dp, gpu)
    except (ModelError, ParamError, FormatError, DatapathError) as e:
        msg = str(e)
        raise MatmulError(msg if msg.startswith("model") else
                          f"{'gpu' if model is None else 'model'}: {msg}") from None
