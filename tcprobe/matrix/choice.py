"""Which instruction and which model compute a product on a GPU.

A GPU is any that a tcprobe profile names (``models/profiles.py``). Its
architecture names the instruction families it has (the ISA table's
architecture facts); by default a product runs on the newest family that
takes its element formats, as cuBLAS and CUTLASS choose: ``mma.sync`` on
V100, A100 and Ada, ``wgmma`` on H100/H200, ``tcgen05.mma`` on B200/B300.
"""

from __future__ import annotations

import json
from pathlib import Path

from tcprobe.models import amd_profiles, isa, registry
from tcprobe.models.datapath import Datapath, DatapathError, default_datapath
from tcprobe.models.engine import EngineParams, ParamError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.model import FixedPointModel, Model, ModelError
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
    """The instruction families of ``gpu``: its architecture's, with the
    arch-specific target (sm_90a, sm_100a) where one exists."""
    a = arch(gpu)
    for name in (a + "a", a):
        if name in isa.ARCH_FAMILIES:
            return isa.ARCH_FAMILIES[name]
    return ("mma",)


def _instr_k(family: str, kind: str, a_type: str, gpu: str) -> int:
    """K of one instruction: the largest shape the GPU's architecture has."""
    shapes = isa.ARCH_MMA_SHAPES.get(arch(gpu)) if family == "mma" else None
    if shapes is None:
        return isa.instruction_k(family, kind, a_type)
    if a_type not in shapes:
        raise MatmulError(f"{gpu}'s mma.sync takes {', '.join(shapes)} inputs, not {a_type}")
    return max(k for _m, _n, k in shapes[a_type])


def block_scaled_datapath(a: str, b: str, scale: str, block: int) -> Datapath:
    """The tcgen05 kind that block-scaled elements ``a``, ``b`` with ``scale``
    codes every ``block`` K positions select: e2m1 pairs take mxf4 (ue8m0, 32)
    or mxf4nvf4 (16); other elements kind::mxf8f6f4 (ue8m0, 32)."""
    if a == b == "e2m1":
        vec = {("ue8m0", 32): 2, ("ue8m0", 16): 4, ("ue4m3", 16): 4}.get((scale, block))
        kind = "mxf4" if (scale, block) == ("ue8m0", 32) else "mxf4nvf4"
    else:
        vec = 1 if (scale, block) == ("ue8m0", 32) else None
        kind = "mxf8f6f4"
    if vec is None:
        raise MatmulError(f"scale_a: {scale} scales every {block} K positions fit no "
                         f"block-scaled kind for {a}x{b} (mxf8f6f4: ue8m0 every 32; "
                         "mxf4: ue8m0 every 32; mxf4nvf4: ue8m0 or ue4m3 every 16)")
    return Datapath("tcgen05", kind, a, b, "f32", isa.instruction_k("tcgen05", kind),
                    scale_type=scale, scale_vec=vec)


def _family_datapath(family: str, a: str, b: str, d: str, gpu: str) -> Datapath:
    if a == b:
        dp = default_datapath(family, a, d)
        return dp.with_k(_instr_k(family, dp.kind, a, gpu))
    if family == "tcgen05":
        if a in isa.F8F6F4_TYPES and b in isa.F8F6F4_TYPES:
            return Datapath("tcgen05", "f8f6f4", a, b, d, isa.instruction_k("tcgen05", "f8f6f4"))
    elif a in isa.FP8_TYPES and b in isa.FP8_TYPES:
        return Datapath(family, a, a, b, d, _instr_k(family, a, a, gpu))
    raise MatmulError(f"B: {family} takes no {a} x {b} product")


def datapath(gpu: str, instr: str | None, a: str, b: str, d: str,
             scale: str | None = None, block: int | None = None) -> Datapath:
    """The datapath of one instruction of the product (module doc)."""
    if gpu in amd_profiles.isa_amd.GPU_ARCH:
        return _amd_datapath(gpu, instr, a, b, d, scale)
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
        if instr not in (None, "tcgen05") or "tcgen05" not in fams:
            raise MatmulError(f"scale_a: block scales need tcgen05, which {gpu} "
                             f"{'has' if 'tcgen05' in fams else 'lacks'}")
        return block_scaled_datapath(a, b, scale, block)
    if instr is not None:
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
            model_for(dp, gpu)
            return dp
        except (DatapathError, ValueError) as e:
            errors.append(f"{family}: {e}")
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
        return dp
    if instr not in (None, "mfma"):
        raise MatmulError(f"instr: {gpu} has no {instr} (it has mfma)")
    try:
        return amd_profiles.blas_datapath(gpu, a, b, d)
    except ModelError as e:
        raise MatmulError(str(e)) from None


def _json_model(path: Path, dp: Datapath) -> Model:
    """A model from a ``tcprobe fit`` JSON (its engine parameters) or a
    ``tcprobe ladder`` JSON (its fingerprint)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise MatmulError(f"model: cannot read {path}: {e}") from None
    if isinstance(data.get("params"), dict):
        try:
            params = EngineParams.from_dict(data["params"])
            params.check()
        except (ParamError, TypeError) as e:
            raise MatmulError(f"model: {path}: {e}") from None
        return FixedPointModel(f"fit:{path.name}", dp, f"tcprobe fit {path}", params)
    if isinstance(data.get("fingerprint"), dict):
        from dataclasses import fields

        from tcprobe.ladder import Fingerprint

        known = {f.name for f in fields(Fingerprint)}
        fp = Fingerprint(**{k: v for k, v in data["fingerprint"].items() if k in known})
        return fp.model(dp)
    raise MatmulError(f"model: {path} is neither a fit JSON (params) nor a ladder JSON "
                     "(fingerprint)")


def model_for(dp: Datapath, gpu: str, model=None) -> Model:
    """The model of ``dp`` on ``gpu``: the GPU's profile, or ``model`` (a
    ``--model`` name, a fit/ladder JSON path, or a Model)."""
    if isinstance(model, Model):
        return model
    try:
        if model is None:
            return registry.resolve("auto", dp, gpu)
        if str(model).endswith(".json"):
            return _json_model(Path(model), dp)
        return registry.resolve(str(model), dp, gpu)
    except (ModelError, ParamError, FormatError, DatapathError) as e:
        raise MatmulError(f"{'gpu' if model is None else 'model'}: {e}") from None
