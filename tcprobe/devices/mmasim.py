"""MMA-Sim as a black box: ``--device mmasim:ARCH:INSTRUCTION``.

For example ``mmasim:Hopper:wgmma.m64n8k16.f32.bf16.bf16`` or
``mmasim:Blackwell:tcgen05.m64n8k16.kind::f16.f32.f16.f16`` (MMA-Sim's own
spelling of shape and types after the family). MMA-Sim 2.1.1 is an optional
extra (``pip install 'tcprobe[peer]'``): an implementation nobody here wrote.

Result mode only (MMA-Sim computes dot products, it has no tile or dump):
raw words become torch tensors by reinterpreting their bits (no float
rounding of an input), go through the simulator's ``dpa``, and come back
as words the same way. fp6 and fp4 codes sit one per byte as MMA-Sim wants
them: fp6 in bits 5:0, e2m1 in bits 5:2; the mxf4 kinds take e2m1 two a byte
(element 2i in the high nibble). Block-scaled strings (``.blockB.`` after the
kind: ``mma.m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3``) run
MMA-Sim's MMABlockScale / TCGen05MMABlockScale, whose ``dpa(a, b, c, alpha,
beta)`` takes the scale codes of A and B (ue8m0, ue4m3 as their torch fp8
views) one per block of B K positions: scale_vec = K / B.

The device runs one instruction, so that instruction is the datapath when
no ``--format``/``--datapath`` is given, and it names the GPU of its arch
(:data:`ARCH_GPU`) for ``--model auto``.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models import isa
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format

from .base import Device, DeviceError

FAMILY_CLASS = {"mma": "MMA", "wgmma": "WGMMA", "tcgen05": "TCGen05MMA"}
# MMA-Sim's architectures and the GPU whose profile ``--model auto`` picks for
# each (models/profiles.py; tcgen05 through the tcgen05 models, B200).
ARCH_GPU = {"Volta": "V100", "Turing": "T4", "Ampere": "A100", "Ada Lovelace": "Ada",
            "Hopper": "H100", "Blackwell": "B200", "RTX Blackwell": "RTX5090"}
ARCHS = tuple(ARCH_GPU)
# AMD: MMA-Sim's CDNA generations (mmasim/amd), ``mmasim:CDNA3:v_mfma_f32_16x16x16_f16``
# (the v_mfma_ prefix optional; MI100 / MI250X / MI300X stand for their generation).
AMD_ARCH_GPU = {"CDNA1": "MI100", "CDNA2": "MI250X", "CDNA3": "MI300X"}


def _import():
    import importlib.util

    if importlib.util.find_spec("mmasim") is None:  # refused before torch's import (seconds)
        raise DeviceError("MMA-Sim is not installed (pip install 'tcprobe[peer]', which brings "
                          "mmasim 2.1.1 and torch)")
    try:
        import torch
        from mmasim import nv_ptx
    except ImportError:
        raise DeviceError("MMA-Sim is not installed (pip install 'tcprobe[peer]', which brings "
                          "mmasim 2.1.1 and torch)") from None
    return torch, nv_ptx


def _block_scale(k: int, block_field: str, scale_type: str) -> tuple[str, int]:
    """(scale type, scale_vec) of a block-scaled string: one scale every B
    (``blockB``) K positions is scale_vec::(K/B)X."""
    return scale_type, k // int(block_field.removeprefix("block"))


def parse_instruction(text: str) -> tuple[str, str, Datapath, bool]:
    """``FAMILY.SHAPE.TYPES`` -> (family, MMA-Sim shape_and_type, Datapath,
    block-scaled). mma and tcgen05 strings with ``.blockB.`` after the kind are
    MMA-Sim's block-scaled instructions (MMABlockScale, TCGen05MMABlockScale)."""
    family, _, shape_and_type = text.partition(".")
    family = family.lower()
    if family not in FAMILY_CLASS or not shape_and_type:
        raise DeviceError(f"not an MMA-Sim instruction: {text!r} (e.g. "
                          "wgmma.m64n8k16.f32.bf16.bf16, tcgen05.m64n8k16.kind::f16.f32.f16.f16)")
    parts = shape_and_type.split(".")
    scaled = len(parts) > 2 and parts[2].startswith("block")
    scale = (None, None)
    try:
        k = int(parts[0].split("k")[-1])
        kind = parts[1].removeprefix("kind::") if parts[1].startswith("kind::") else None
        if family == "tcgen05":
            if scaled:  # m128nNkK.kind::K.blockB.D.A.B.S
                d, a, b = parts[3], parts[4], parts[5]
                scale = _block_scale(k, parts[2], parts[6])
            else:
                d, a, b = parts[2], parts[3], parts[4]
            c = d
        elif family == "wgmma":
            d, a, b = parts[1], parts[2], parts[3]
            kind, c = a, d
        elif scaled:  # mma: m16n8kK.kind::K.blockB.D.A.B.C.S
            d, a, b, c = parts[3], parts[4], parts[5], parts[6]
            scale = _block_scale(k, parts[2], parts[7])
        else:
            off = 1 if kind else 0
            d, a, b, c = parts[1 + off], parts[2 + off], parts[3 + off], parts[4 + off]
            kind = kind or a
    except (IndexError, ValueError):
        raise DeviceError(f"cannot read the shape and types of {text!r}") from None
    try:
        dp = Datapath(family, kind, a, b, d, k, None if c == d else c, *scale)
    except ValueError as e:
        raise DeviceError(f"{text!r}: {e}") from None
    return family, shape_and_type, dp, scaled


class MmaSimDevice(Device):
    """One MMA-Sim instruction, run in result mode."""

    simulated = True

    def __init__(self, spec: str):
        arch, _, instr = spec.partition(":")
        if self._amd(arch, instr):
            return
        arch = next((a for a in ARCHS if a.lower() == arch.strip().lower()), arch.strip())
        if not instr:
            raise DeviceError("mmasim needs ARCH:INSTRUCTION, e.g. "
                              "mmasim:Hopper:wgmma.m64n8k16.f32.bf16.bf16")
        self.family, self.shape_and_type, self.dp, scaled = parse_instruction(instr.strip())
        self.arch = arch
        self.name = f"mmasim:{arch}:{instr.strip()}"
        self.torch, nv_ptx = _import()
        cls = getattr(nv_ptx, FAMILY_CLASS[self.family] + ("BlockScale" if scaled else ""))
        try:
            self.op = cls(arch, self.shape_and_type)
        except AssertionError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else "unsupported"
            raise DeviceError(f"MMA-Sim refuses {self.name}: {first}") from None

    def _amd(self, arch: str, instr: str) -> bool:
        """Set up an AMD v_mfma instruction; False when ``arch`` is no AMD generation."""
        from tcprobe.models import amd_profiles, isa_amd

        gen = isa_amd.GPU_ARCH.get(arch.strip().upper(), arch.strip().upper())
        if gen not in AMD_ARCH_GPU:
            return False
        try:
            ins = isa_amd.parse(gen, instr)
        except isa_amd.MfmaError as e:
            raise DeviceError(f"mmasim: {e}") from None
        self.family, self.shape_and_type, self.arch = "mfma", ins.suffix, gen
        self.dp = amd_profiles.datapath(ins)
        self.name = f"mmasim:{gen}:{ins.name}"
        self.torch, _ = _import()
        from mmasim.amd import MFMA

        self.op = MFMA(gen, ins.suffix)
        return True

    def supports(self, dp: Datapath) -> bool:
        return dp.id == self.dp.id  # an explicit C type equal to D is the same datapath

    def fixed_datapath(self) -> Datapath:
        """The instruction's datapath: what runs when no --format/--datapath is given."""
        return self.dp

    def datapath(self, family: str, fmt: str, d_type: str | None = None) -> Datapath:
        """The one datapath this device runs (checked against what was asked)."""
        if family != self.family or get_format(fmt).name != get_format(self.dp.a_type).name:
            raise DeviceError(f"{self.name} runs {self.dp.id}, not {family} {fmt}")
        if d_type and get_format(d_type).name != get_format(self.dp.d_type).name:
            raise DeviceError(f"{self.name} writes {self.dp.d_type}, not {d_type}")
        return self.dp

    def preferred_family(self, fmt: str) -> str:
        return self.family

    # -- bit-exact conversions ------------------------------------------------
    def _tensor(self, words: np.ndarray, fmt_name: str, ptx_type: str):
        torch = self.torch
        f = get_format(fmt_name)
        if f.width == 64:  # f64 (DMMA): the 64-bit words as torch float64, bit for bit
            w = np.ascontiguousarray(np.asarray(words).astype(np.uint64))
            return torch.from_numpy(w.view(np.int64).copy()).view(torch.float64)
        w = np.ascontiguousarray(np.asarray(words, np.uint32))
        if f.width == 32:
            return torch.from_numpy(w.view(np.int32).copy()).view(torch.float32)
        if f.width == 16:
            t = torch.from_numpy(w.astype(np.uint16).view(np.int16).copy())
            return t.view(torch.bfloat16 if f.name == "bf16" else torch.float16)
        if f.name in ("e4m3fnuz", "e5m2fnuz"):
            t = torch.from_numpy(w.astype(np.uint8).copy())
            return t.view(torch.float8_e4m3fnuz if f.name == "e4m3fnuz" else torch.float8_e5m2fnuz)
        if f.name in ("e4m3", "e5m2"):
            t = torch.from_numpy(w.astype(np.uint8).copy())
            return t.view(torch.float8_e4m3fn if f.name == "e4m3" else torch.float8_e5m2)
        if f.name in ("e2m3", "e3m2"):
            return torch.from_numpy((w & 0x3F).astype(np.uint8))
        if f.name == "e2m1" and self.dp.kind in isa.PACKED_E2M1_KINDS:
            # two codes a byte, element 2i in the high nibble (MMA-Sim's packing)
            return torch.from_numpy((((w[:, 0::2] & 0xF) << 4) | (w[:, 1::2] & 0xF))
                                    .astype(np.uint8))
        if f.name == "e2m1":
            return torch.from_numpy(((w & 0xF) << 2).astype(np.uint8))
        if f.name == "ue8m0":
            return torch.from_numpy(w.astype(np.uint8)).view(torch.float8_e8m0fnu)
        if f.name == "ue4m3":
            return torch.from_numpy(w.astype(np.uint8)).view(torch.float8_e4m3fn)
        raise DeviceError(f"no MMA-Sim encoding for {fmt_name}")

    def _words(self, d) -> np.ndarray:
        torch = self.torch
        if d.dtype == torch.float64:
            return d.contiguous().view(torch.int64).numpy().view(np.uint64).copy()
        if d.dtype == torch.float32:
            return d.contiguous().view(torch.int32).numpy().view(np.uint32).copy()
        if d.dtype == torch.float16:
            return d.contiguous().view(torch.int16).numpy().view(np.uint16).astype(np.uint32)
        raise DeviceError(f"unexpected MMA-Sim output type {d.dtype}")

    def run(self, dp: Datapath, cases: Cases) -> np.ndarray:
        if dp.id != self.dp.id:
            raise DeviceError(f"{self.name} runs {self.dp.id}, not {dp.id}")
        cases.check(dp)
        out = np.empty(len(cases), get_format(dp.d_type).dtype)
        step = 65536
        for lo in range(0, len(cases), step):
            part = cases.take(slice(lo, lo + step))
            a = self._tensor(part.a, dp.a_type, dp.a_type)
            b = self._tensor(part.b, dp.b_type, dp.b_type)
            c = self._tensor(part.c, dp.c, dp.c)
            if dp.block_scaled:
                d = self.op.dpa(a, b, c, self._tensor(part.scale_a, dp.scale_type, dp.scale_type),
                                self._tensor(part.scale_b, dp.scale_type, dp.scale_type))
            else:
                d = self.op.dpa(a, b, c)
            out[lo:lo + len(part)] = self._words(d)
        return out

    def info(self) -> dict:
        import importlib.metadata as md

        try:
            version = md.version("mmasim")
        except md.PackageNotFoundError:
            version = "unknown"
        return {**super().info(), "arch": self.arch, "gpu": ARCH_GPU.get(self.arch) or AMD_ARCH_GPU.get(self.arch),
                "instruction": self.shape_and_type,
                "family": self.family, "mmasim": version}
