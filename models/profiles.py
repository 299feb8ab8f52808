"""Named GPU profiles of the mma.sync (HMMA) datapath, and baseline models.

A profile is data: per input class, the block size L and window F; the zero
floors for f32 and f16 outputs; the roundings. Each names its evidence. A
profile derives from another with :meth:`GpuProfile.derive` rather than by
copying numbers.

Evidence for the numbers below: the Khattak-Mikaitis captures in
``../shared/hwdata`` (5,000 cases per file; the table in its README), which
these profiles reproduce with 0 mismatches on 40 of the 48 outputs
(``tests/test_published_captures.py``); the zero floors -133/-21 are pinned
also by the H200/B200 vectors of the MMA-Sim pull request in
``../shared/seeds`` (an exact zero result is +0; an f16 accumulator of zero
anchors at 2**-21).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tcprobe.models import gpus, isa
from tcprobe.models.datapath import Datapath

from .engine import EngineParams
from .f64 import ChainParams, f64_model, is_f64
from .formats import get_format
from .model import FixedPointModel, IntegerModel, Model, ModelError
from .structures import SplitModel
from .tcgen05 import MMASIM_TCGEN05, Tcgen05Profile

FP8 = ("e4m3", "e5m2")


def input_class(fmt: str) -> str:
    """The profile key of an input format: f16 (f16, bf16), tf32, fp8 or int."""
    f = get_format(fmt).name
    if f in ("f16", "bf16"):
        return "f16"
    if f in FP8:
        return "fp8"
    if f in ("s8", "u8"):
        return "int"
    if f in isa.SUB_BYTE_TYPES:
        return "f6f4"  # fp6/fp4 of mma kind::f8f6f4, each in an 8-bit container
    return f


@dataclass(frozen=True)
class GpuProfile:
    """The HMMA datapath of one GPU generation, as published parameters."""

    name: str
    gpus: tuple[str, ...]
    arch: str
    evidence: str
    block: dict = field(default_factory=dict)  # input class -> L
    window: dict = field(default_factory=dict)  # input class -> F
    keep: dict = field(default_factory=dict)  # input class -> fraction bits kept in an f32 result
    floor_f32: int = isa.output_defaults("f32").zero_floor
    floor_f16: int = isa.output_defaults("f16").zero_floor
    zero_sign: str = "positive"
    overflow: str = "inf"
    # (input class, K) -> the profile whose parameters that shape runs (Turing
    # runs Volta's m8n8k4 with Volta's datapath)
    by_shape: dict = field(default_factory=dict)
    # block-scaled mma.sync kinds (sm_120a): the tcgen05 profile whose
    # block-scaled parameters they run (models/tcgen05.py)
    scaled: Tcgen05Profile | None = None
    measured: bool = True  # False: published parameters only (MMA-Sim's), no capture

    def derive(self, name: str, **changes) -> GpuProfile:
        """A new profile that differs from this one only in ``changes``."""
        merged = {}
        for key in ("block", "window", "keep"):
            if key in changes:
                merged[key] = {**getattr(self, key), **changes.pop(key)}
        return replace(self, name=name, **merged, **changes)

    def supports(self, dp: Datapath) -> bool:
        if is_f64(dp):
            return any(k == dp.k for _m, _n, k in isa.f64_shapes(self.arch))
        if dp.block_scaled:
            return self.scaled is not None
        return input_class(dp.a_type) in self.block or input_class(dp.a_type) == "int"

    def params(self, dp: Datapath) -> EngineParams:
        """Engine parameters for datapath ``dp`` under this profile."""
        cls = input_class(dp.a_type)
        if (cls, dp.k) in self.by_shape:
            return self.by_shape[(cls, dp.k)].params(dp)
        if cls not in self.block:
            raise ModelError(f"profile {self.name} has no {dp.a_type} datapath")
        d = get_format(dp.d_type).name
        f16_out = d == "f16"
        return EngineParams(
            window_bits=self.window[cls],
            block_size=self.block[cls],
            zero_floor=self.floor_f16 if f16_out else self.floor_f32,
            output_rounding=isa.output_rounding(d),
            output_frac_bits=None if f16_out else self.keep.get(cls),
            zero_sign=self.zero_sign,
            overflow=self.overflow,
        )

    def model(self, dp: Datapath) -> Model:
        if dp.family == "mfma":  # an NVIDIA profile's parameters say nothing of AMD's v_mfma
            raise ModelError(f"profile {self.name} models NVIDIA tensor cores, not AMD's "
                             f"{dp.id} (give auto, mi100, mi250x, mi300x or a baseline)")
        if is_f64(dp):
            return self._f64_model(dp)
        if dp.is_integer:
            return IntegerModel(f"{self.name}", dp, "exact integer sum (PTX semantics)",
                                saturate=dp.saturate)
        if dp.block_scaled:
            if self.scaled is None:
                raise ModelError(f"profile {self.name} has no block-scaled datapath ({dp.id})")
            from .tcgen05_scaled import BlockScaledModel

            return BlockScaledModel(self.name, dp, self.evidence, self.scaled.scaled_params(dp))
        return FixedPointModel(self.name, dp, self.evidence, self.params(dp))


    def _f64_model(self, dp: Datapath) -> Model:
        """DMMA (every profile from A100 on): the model MMA-Sim gives every
        f64 mma, with the shapes the ISA table gives this architecture."""
        if dp.k not in {k for _m, _n, k in isa.f64_shapes(self.arch)}:
            shapes = ", ".join(f"m{m}n{n}k{k}" for m, n, k in isa.f64_shapes(self.arch)) or "none"
            raise ModelError(f"profile {self.name} ({self.arch}) has no f64 mma with K={dp.k} "
                             f"(f64 shapes: {shapes})")
        return f64_model(self.name, dp, F64_EVIDENCE)


# Every profile's f64 datapath: MMA-Sim's model, not a measurement.
F64_EVIDENCE = ("MMA-Sim 2.1.1's model of f64 mma (a chain of IEEE fp64 FMAs, C first, k = 0 .. "
                "K-1, one RNE rounding each, subnormals kept; NaN: the host FMA's rule); "
                "unmeasured on silicon: `tcprobe ladder --datapath mma.f64.f64.k4` on a GPU "
                "(its chain step) settles the order and the NaN word")

_KM = "Khattak & Mikaitis 2025 (arXiv 2512.07004) captures in ../shared/hwdata"

V100 = GpuProfile(
    "v100", gpus.profile_gpus("v100"), "sm_70",
    f"{_KM}: V100 fp16, 5,000 cases each to f32 and f16",
    block={"f16": 4}, window={"f16": 23}, floor_f32=-131, floor_f16=-19,
)
A100 = GpuProfile(
    "a100", gpus.profile_gpus("a100"), "sm_80",
    f"{_KM}: A100 and A2 fp16, bf16, tf32",
    block={"f16": 8, "tf32": 4}, window={"f16": 24, "tf32": 24}, floor_f32=-132, floor_f16=-20,
)
ADA = A100.derive(
    "ada", gpus=gpus.profile_gpus("ada"), arch="sm_89",
    evidence=f"{_KM}: Ada and L40S fp16, bf16, tf32, e4m3, e5m2",
    block={"fp8": 16}, window={"fp8": 13}, keep={"fp8": 13},
)
H100 = ADA.derive(
    "h100", gpus=gpus.profile_gpus("h100"), arch="sm_90",
    evidence=f"{_KM}: H100 and H200 fp16, bf16, tf32, and fp8 to f32; MMA-Sim PR vectors (H200)",
    block={"f16": 16, "tf32": 8, "fp8": 32},
    window={"f16": isa.DEFAULT_WINDOW_BITS, "tf32": isa.DEFAULT_WINDOW_BITS},
    # the default conversion of the ISA table is this measured one (-133 / -21)
    floor_f32=isa.output_defaults("f32").zero_floor, floor_f16=isa.output_defaults("f16").zero_floor,
)
B200_HMMA = H100.derive(
    "b200-hmma", gpus=gpus.profile_gpus("b200-hmma"), arch="sm_100a",
    evidence=f"{_KM}: B200 fp16, bf16, tf32 (legacy HMMA path); MMA-Sim PR vectors (B200, B300)",
    window={"fp8": 25}, keep={"fp8": None},
)

# Turing and RTX Blackwell: MMA-Sim 2.1.1's parameters (mmasim/nv_ptx/sim.py:
# _mma_F_bits, _mma_L_max_bytes, _mma_e_zero_for_fp16/_fp32, its Turing special
# case and MMABlockScale), not measured by tcprobe on silicon.
_MMASIM = "MMA-Sim 2.1.1 (mmasim/nv_ptx/sim.py), not measured by tcprobe on silicon"

T4 = V100.derive(  # f16 only, as V100; m16n8k8 at A100's F and L
    "t4", gpus=gpus.profile_gpus("t4"), arch="sm_75",
    evidence=f"{_MMASIM}: Turing F=24, L = 16 bytes of inputs (f16: 8), zero floors -20 (f16 D) "
             "/ -132 (f32 D); m8n8k4 runs Volta's F=23, L=4, floors -19/-131. Further evidence: "
             "Fasi, Higham, Mikaitis, Pranesh 2021 (PeerJ CS 7:e330) ran their feature tests on a "
             "T4 (subnormal support, rounding of the result, extra alignment bits, normalization "
             "of partial sums, carry-out bits, monotonicity) with the V100's answers; those do "
             "not separate F=23 from 24 or L=4 from 8 on m16n8k8 (the block and truncation "
             "probes of tcprobe ladder would)",
    block={"f16": 8}, window={"f16": 24}, floor_f32=-132, floor_f16=-20,
    by_shape={("f16", 4): V100}, measured=False,
)
# kind::mxf8f6f4: MMA-Sim's MMA_ST_FDPA, F=25 RZ, L=32, e_zero -133; mxf4 and
# mxf4nvf4: MMA_GST_FDPA, G=16 groups, F=35, e_zero -139, RZ. They are
# MMA-Sim's tcgen05 block-scaled rules too, so the mmasim-tcgen05 profile
# expresses them (models/tcgen05.py).
RTX5090 = B200_HMMA.derive(
    "rtx5090", gpus=gpus.profile_gpus("rtx5090"), arch="sm_120a",
    evidence=f"{_MMASIM}: RTX Blackwell F=25, L = 32 bytes of inputs (f16: 16, tf32: 8, "
             "8-bit containers: 32), zero floors -21/-133 (confirmed by MMA-Sim's maintainer in "
             "the pull-request thread, ../shared/seeds/mmasim-pr-zero-sign-and-fp6.txt); fp8 and "
             "kind::f8f6f4 to f32 truncated at F=25 (no 13-bit cut as Ada); block-scaled "
             "mma.sync as MMA-Sim's MMABlockScale",
    block={"f6f4": 32}, window={"f6f4": isa.DEFAULT_WINDOW_BITS}, keep={"f6f4": None},
    scaled=MMASIM_TCGEN05, measured=False,
)

PROFILES: dict[str, GpuProfile] = {p.name: p for p in (V100, T4, A100, ADA, H100, B200_HMMA,
                                                       RTX5090)}


def names_gpu(gpu: str, known: tuple[str, ...]) -> bool:
    """Whether ``gpu`` is one of the ``known`` GPUs: a short name ('H200') or
    the name the driver reports ('NVIDIA H200', 'NVIDIA H100 80GB HBM3',
    'NVIDIA A100-SXM4-80GB', 'NVIDIA GeForce RTX 4090')."""
    words = [w for w in re.split(r"[^A-Z0-9]+", gpu.strip().upper()) if w]
    spelled = {gpu.strip().upper(), *words, *(a + b for a, b in zip(words, words[1:], strict=False))}
    return any(x.upper() in spelled for x in known)


def profile_for_gpu(gpu: str) -> GpuProfile:
    """The HMMA profile that covers the GPU called ``gpu`` ('H200', 'NVIDIA H200')."""
    for p in PROFILES.values():
        if names_gpu(gpu, p.gpus):
            return p
    raise ModelError(f"no profile for GPU {gpu!r} (known: "
                     f"{', '.join(x for p in PROFILES.values() for x in p.gpus)})")


# ---------------------------------------------------------------------------
# Baselines: the candidates a user compares the measured datapath against.


def ieee_model(dp: Datapath) -> Model:
    """The obvious model: the exact sum of every product and C, rounded once
    to nearest even (what the tcgen05 write-up tried first); on f64, the
    fused fp64 dot product."""
    if is_f64(dp):
        return f64_model("ieee", dp, "IEEE 754 exact fp64 dot product, one RNE rounding",
                         ChainParams(structure="fused"))
    p = EngineParams(window_bits=None, block_size=dp.k, zero_floor=None,
                     output_rounding="rne", zero_sign="ieee", overflow="ieee")
    return FixedPointModel("ieee", dp, "IEEE 754 exact dot product, one RNE rounding", p)


def fma_chain_model(dp: Datapath) -> Model:
    """A chain of FMAs in the output format: d = fma(a_k, b_k, d), RNE each."""
    if is_f64(dp):
        return f64_model("fma-chain", dp, "sequential IEEE fp64 FMAs, RNE each")
    p = EngineParams(window_bits=None, block_size=1, zero_floor=None,
                     output_rounding="rne", zero_sign="ieee", overflow="ieee")
    return FixedPointModel("fma-chain", dp, "sequential IEEE FMAs, RNE each", p)


def two_stage_model(dp: Datapath) -> Model:
    """The write-up's two-stage candidate ("fusing the product group and then
    merging C"), read as: the products fused in the 25-bit window below their
    largest raw exponent, each cut toward zero, the group truncated into an
    output word; then C merged with it the same fixed-point way (both cut into
    the window below the larger raw exponent, truncated). Of the 20 readings
    that ``benchmarks/two_stage_study.py`` scores, this is the one near the
    write-up's figure: 14.0 of 2,000 raw TF32 cases against the B200 model
    (10 seeds, 10-20), where the write-up reports 12 (``ieee``: 128.9 there,
    the write-up 144)."""
    rounding = isa.output_rounding(get_format(dp.d_type).name)
    stage = EngineParams(window_bits=isa.DEFAULT_WINDOW_BITS, block_size=dp.k, zero_floor=None,
                         output_rounding=rounding, zero_sign="ieee", overflow="inf")
    return SplitModel("two-stage", dp, "products fused in the window, truncated, then C merged "
                      "in the window (the write-up's second candidate)", parts=(tuple(range(dp.k)),),
                      stage=stage, c_entry="last", c_add_rounding=rounding,
                      c_add_window=isa.DEFAULT_WINDOW_BITS)


def two_stage_rne_model(dp: Datapath) -> Model:
    """Products fused exactly and rounded (RNE) to the output format, then C
    merged by an ordinary RNE add (the most literal reading of "two-stage";
    131 of 2,000 raw TF32 cases, no better than ``ieee``)."""
    p = EngineParams(window_bits=None, block_size=dp.k, zero_floor=None,
                     output_rounding="rne", zero_sign="ieee", overflow="ieee",
                     c_join="last", c_add_rounding="rne")
    return FixedPointModel("two-stage-rne", dp, "exact product sum rounded, then + C rounded", p)


# The baselines with an f64 form (the others are the fixed-point engine's, which has no 64-bit words).
F64_BASELINES = ("ieee", "fma-chain")
BASELINES = {"ieee": ieee_model, "fma-chain": fma_chain_model, "two-stage": two_stage_model,
             "two-stage-rne": two_stage_rne_model}
