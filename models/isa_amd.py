"""AMD CDNA matrix-core instructions (``v_mfma_*``): the AMD block of the ISA table.

Facts from AMD's Instinct ISA reference guides (CDNA1 "MI100", CDNA2
"MI200", CDNA3 "MI300": "Matrix Arithmetic Instructions"), in the spelling
MMA-Sim 2.1.1 lists them (``mmasim/amd/isa_mfma.py``). An instruction is
``v_mfma_<D>_<M>x<N>x<K>[_<B>b]_<A>[_<B-type>]`` (CDNA3) or
``v_mfma_<D>_<M>x<N>x<K><A>[_1k]`` (CDNA1/2). ``_Nb`` is the number of
independent blocks one instruction computes (CDNA1/2 leave it unsaid: the
same shapes have the same blocks); ``_1k`` is CDNA2's bf16 form that takes
four bf16 a lane (K doubled) instead of two. A block is an M x N x K product,
so the dot product of one output element is K long whatever the blocks.

Types: f64, f32, xf32 (CDNA3: an f32 operand of which the datapath keeps
the top 1+8+10 bits: tcprobe's ``tf32`` format), f16, bf16, fp8 and bf8
(CDNA3: the "fnuz" e4m3fnuz / e5m2fnuz of models/formats.py, bias 8 and 16,
0x80 the only NaN, no Inf, no -0). D is f32 (f64 for f64). Int8 MFMA exists
on CDNA1-3 but MMA-Sim does not model it; it is not in this table.

RDNA3/4 ``v_wmma_*`` is not modelled: no published capture and no recorded
vector exists here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import gpus

AMD_FAMILIES = ("mfma",)
ARCHS = ("CDNA1", "CDNA2", "CDNA3")
ARCH_GPUS = gpus.arch_gpus(ARCHS, "amd")  # the GPU catalogue, models/gpus.py
GPU_ARCH = {g: a for a, gs in ARCH_GPUS.items() for g in gs}
GFX = {"CDNA1": "gfx908", "CDNA2": "gfx90a", "CDNA3": "gfx942"}
WAVE = 64  # lanes of a CDNA wavefront: an MFMA's operands are spread over 64 lanes

# AMD's type names -> tcprobe format names.
AMD_TYPES = {"f64": "f64", "f32": "f32", "xf32": "tf32", "f16": "f16", "bf16": "bf16",
             "fp8": "e4m3fnuz", "bf8": "e5m2fnuz"}

_CDNA1 = ("f32_32x32x2f32", "f32_32x32x1f32", "f32_16x16x4f32", "f32_16x16x1f32", "f32_4x4x1f32",
          "f32_32x32x8f16", "f32_32x32x4f16", "f32_16x16x16f16", "f32_16x16x4f16", "f32_4x4x4f16",
          "f32_32x32x4bf16", "f32_32x32x2bf16", "f32_16x16x8bf16", "f32_16x16x2bf16",
          "f32_4x4x2bf16")
_CDNA2_NEW = ("f64_16x16x4f64", "f64_4x4x4f64", "f32_32x32x8bf16_1k", "f32_32x32x4bf16_1k",
              "f32_16x16x16bf16_1k", "f32_16x16x4bf16_1k", "f32_4x4x4bf16_1k")
_CDNA3 = ("f64_16x16x4_f64", "f64_4x4x4_4b_f64",
          "f32_32x32x1_2b_f32", "f32_16x16x1_4b_f32", "f32_4x4x1_16b_f32", "f32_32x32x2_f32",
          "f32_16x16x4_f32", "f32_16x16x8_xf32", "f32_32x32x4_xf32",
          "f32_32x32x4_2b_f16", "f32_16x16x4_4b_f16", "f32_4x4x4_16b_f16", "f32_32x32x8_f16",
          "f32_16x16x16_f16",
          "f32_32x32x4_2b_bf16", "f32_16x16x4_4b_bf16", "f32_4x4x4_16b_bf16", "f32_32x32x8_bf16",
          "f32_16x16x16_bf16",
          *(f"f32_{s}_{a}_{b}" for s in ("16x16x32", "32x32x16") for a in ("bf8", "fp8")
            for b in ("bf8", "fp8")))
# The instruction suffixes (after ``v_mfma_``) of each generation.
MFMA = {"CDNA1": _CDNA1, "CDNA2": _CDNA2_NEW + _CDNA1, "CDNA3": _CDNA3}

# Blocks of the CDNA1/2 shapes that CDNA3 spells with ``_Nb`` (the same
# instruction renamed): (M, N, K, A type) -> blocks; every other shape is 1.
_OLD_BLOCKS = {(32, 32, 1, "f32"): 2, (16, 16, 1, "f32"): 4, (4, 4, 1, "f32"): 16,
               (32, 32, 4, "f16"): 2, (16, 16, 4, "f16"): 4, (4, 4, 4, "f16"): 16,
               (32, 32, 2, "bf16"): 2, (16, 16, 2, "bf16"): 4, (4, 4, 2, "bf16"): 16,
               (32, 32, 4, "bf16_1k"): 2, (16, 16, 4, "bf16_1k"): 4, (4, 4, 4, "bf16_1k"): 16,
               (4, 4, 4, "f64"): 4}


class MfmaError(ValueError):
    """An MFMA instruction that the table does not define."""


@dataclass(frozen=True)
class Mfma:
    """One v_mfma instruction: its generation, shape, blocks and types."""

    arch: str
    suffix: str  # MMA-Sim's spelling, after v_mfma_
    m: int
    n: int
    k: int
    blocks: int
    kind: str  # f64 | f32 | xf32 | f16 | bf16 | bf16_1k | fp8 (fp8 and bf8 inputs)
    a_type: str  # tcprobe format names
    b_type: str
    d_type: str

    @property
    def name(self) -> str:
        return f"v_mfma_{self.suffix}"

    @property
    def a_per_lane(self) -> int:
        """Elements of A (and of B: M = N) each of the 64 lanes holds."""
        return self.m * self.k * self.blocks // WAVE

    @property
    def d_per_lane(self) -> int:
        """Elements of C and D each lane holds."""
        return self.m * self.n * self.blocks // WAVE


_OLD = re.compile(r"(f32|f64)_(\d+)x(\d+)x(\d+)(f32|f16|bf16|f64)(_1k)?")
_NEW = re.compile(r"(f32|f64)_(\d+)x(\d+)x(\d+)(?:_(\d+)b)?_(f64|f32|xf32|f16|bf16|fp8|bf8)"
                  r"(?:_(fp8|bf8))?")


def parse(arch: str, text: str) -> Mfma:
    """The instruction ``text`` (``v_mfma_`` optional) of generation ``arch``
    (CDNA1/2/3 or a GPU name: MI100, MI250X, MI300X)."""
    gen = GPU_ARCH.get(arch.upper(), arch.upper())
    if gen not in MFMA:
        raise MfmaError(f"arch: unknown AMD generation {arch!r} (known: {', '.join(ARCHS)}, "
                        f"{', '.join(GPU_ARCH)})")
    suffix = text.strip().lower().removeprefix("v_mfma_")
    if suffix not in MFMA[gen]:
        raise MfmaError(f"{gen} has no v_mfma_{suffix} (e.g. v_mfma_{MFMA[gen][0]})")
    if m := _NEW.fullmatch(suffix):
        d, mm, nn, kk, blocks, a, b = m.groups()
        b = b or a
        kind = "fp8" if a in ("fp8", "bf8") else a
        blocks = int(blocks or 1)
    else:
        d, mm, nn, kk, a, onek = _OLD.fullmatch(suffix).groups()
        b, kind = a, a + (onek or "")
        blocks = _OLD_BLOCKS.get((int(mm), int(nn), int(kk), kind), 1)
    return Mfma(gen, suffix, int(mm), int(nn), int(kk), blocks, kind, AMD_TYPES[a], AMD_TYPES[b],
                AMD_TYPES[d])


def instructions(arch: str | None = None) -> list[Mfma]:
    """Every instruction of the table (of one generation)."""
    return [parse(g, s) for g in ([arch] if arch else ARCHS) for s in MFMA[GPU_ARCH.get(g, g)]]
