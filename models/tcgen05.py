"""Bit-exact models of Blackwell tcgen05.mma, one named profile per source.

Every tcgen05 datapath is one of three mechanisms:

- unscaled floats (kind::tf32, f16, f8f6f4, any A/B pair of f8/f6/f4): the
  fixed-point engine (:mod:`.engine`) with one block of K products, a 25-bit
  window on raw exponent sums, inputs truncated to their container before
  classification, every term cut toward zero, the sum truncated into f32 (or
  rounded to nearest even into f16), +0 for an exact zero, canonical NaN;
- kind::i8: the exact integer sum, wrapped or saturated (:class:`IntegerModel`);
- block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4): :mod:`.tcgen05_scaled`.

Sparse datapaths are the dense arithmetic on the positions the metadata
keeps: :meth:`Cases.masked` turns the others into +0 before classification.

Evidence: the tcgen05 write-up (../shared/seeds/tcgen05-blog.txt: B200,
0 mismatches on 1,000,000 raw and 200,000 finite random cases per datapath,
46 datapaths); the parameters of its release restated in
../shared/notes/tcgen05-published-parameters.md; the B200 result words
frozen in that release (tests/data/vectors/tcgen05-b200.jsonl); and the
MMA-Sim pull-request vectors (../shared/seeds/mmasim-pr-zero-sign-and-fp6.txt:
B200/B300 tcgen05, an exact zero is +0, an f16 accumulator of zero anchors
at 2**-21, e2m1 subnormals are not normalized).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tcprobe.models import isa
from tcprobe.models.datapath import Datapath

from .engine import EngineParams
from .formats import get_format
from .model import FixedPointModel, IntegerModel, Model, ModelError
from .tcgen05_scaled import BlockScaledModel, ScaledParams

ARCH = "sm_100a"
# The groups of block-scaled datapaths that share one ScaledParams (fields of
# Tcgen05Profile; the [scaled.GROUP] tables of a TOML sim profile).
SCALED_GROUPS = ("mx", "mxf4", "nvfp4")


def scaled_group(dp: Datapath) -> str:
    """The group of a block-scaled datapath: mx (kind::mxf8f6f4), nvfp4
    (ue4m3 scales) or mxf4 (mxf4, and mxf4nvf4 with ue8m0)."""
    if dp.kind == "mxf8f6f4":
        return "mx"
    return "nvfp4" if dp.scale_type == "ue4m3" else "mxf4"


def check_datapath(dp: Datapath) -> None:
    """Raise ModelError unless ``dp`` is a tcgen05.mma datapath the PTX ISA
    defines (:func:`isa.check_tcgen05`)."""
    if dp.family != "tcgen05":
        raise ModelError(f"{dp.id} is not a tcgen05 datapath")
    a, b, c, d = (get_format(t).name for t in (dp.a_type, dp.b_type, dp.c, dp.d_type))
    scale = (dp.scale_type, dp.scale_vec or 1) if dp.block_scaled else None
    try:
        isa.check_tcgen05(dp.kind, a, b, c, d, dp.k, scale, dp.sparse, dp.saturate)
    except isa.IsaError as e:
        raise ModelError(f"{dp.id}: {e}") from None


@dataclass(frozen=True)
class Tcgen05Profile:
    """The named parameters of every tcgen05 mechanism (module doc).

    Unstated rules are parameters here, each with the probe that settles it:

    - ``zero_floor_f32``: the anchor exponent is never below this when D is
      f32. The write-up states no lower limit; -133 is MMA-Sim's and the
      B200 HMMA path's value. Probe: tf32, C = +0, A = (2**-70, -2**-80),
      B = (2**-70, 2**-80): 0x00000200 with the floor, 0x000001ff without.
    - ``zero_floor_f16``: the same for an f16 D; -21 is pinned for kind::f16
      f16->f16 by the MMA-Sim PR tie vector (B200, B300); carried over to
      f8f6f4 with an f16 D unmeasured.
    - ``overflow``: a finite sum past f32 gives Inf (frozen B200 vector
      tf32-0 of the write-up's release: finite inputs, -Inf); the f16 D and
      the block-scaled kinds follow unmeasured.
    - ``mx.q_floor``, ``mxf4.q_floor``, ``nvfp4.q_floor``, ``zero_c`` of the
      block-scaled kinds: see :data:`B200_TCGEN05`.
    """

    name: str
    evidence: str
    window_bits: int = isa.DEFAULT_WINDOW_BITS
    zero_floor_f32: int | None = isa.output_defaults("f32").zero_floor
    zero_floor_f16: int | None = isa.output_defaults("f16").zero_floor
    zero_sign: str = "positive"
    overflow: str = "inf"
    mx: ScaledParams = field(default_factory=ScaledParams)  # kind::mxf8f6f4
    mxf4: ScaledParams = field(default_factory=ScaledParams)  # mxf4, mxf4nvf4 with ue8m0
    nvfp4: ScaledParams = field(default_factory=ScaledParams)  # mxf4nvf4 with ue4m3
    sparse_nvfp4_merge: int = 32  # C-dominant merge blocks of sparse NVFP4

    def derive(self, name: str, **changes) -> Tcgen05Profile:
        """A profile that differs from this one only in ``changes``."""
        return replace(self, name=name, **changes)

    def engine_params(self, dp: Datapath) -> EngineParams:
        """Engine parameters of an unscaled float datapath."""
        d = get_format(dp.d_type).name
        return EngineParams(
            window_bits=self.window_bits, block_size=dp.k,
            zero_floor=self.zero_floor_f16 if d == "f16" else self.zero_floor_f32,
            input_conversion="truncate", output_rounding=isa.output_rounding(d),
            zero_sign=self.zero_sign, overflow=self.overflow, align="raw",
        )

    def scaled_params(self, dp: Datapath) -> ScaledParams:
        """Block-scaled parameters of ``dp`` (kind, scale type, sparsity)."""
        group = scaled_group(dp)
        p = getattr(self, group)
        if group == "nvfp4" and dp.sparse:
            p = p.replace(merge_group=self.sparse_nvfp4_merge)
        return p.replace(overflow=self.overflow)

    def model(self, dp: Datapath) -> Model:
        """The model of ``dp`` under this profile."""
        check_datapath(dp)
        if dp.kind == "i8":
            return IntegerModel(self.name, dp, "exact integer sum, wrapped or saturated once "
                                "(write-up: kind::i8; frozen B200 vectors)", saturate=dp.saturate)
        if dp.block_scaled:
            return BlockScaledModel(self.name, dp, self.evidence, self.scaled_params(dp))
        return FixedPointModel(self.name, dp, self.evidence, self.engine_params(dp))


B200_TCGEN05 = Tcgen05Profile(
    "b200-tcgen05",
    "B200 tcgen05.mma: write-up (1M raw + 200k finite random cases per datapath, 0 "
    "mismatches), published parameters (../shared/notes), frozen B200 vectors, MMA-Sim PR",
    # kind::mxf8f6f4: the unscaled 25-bit window on the scaled raw exponents,
    # products cut one by one, no scale floor (notes: "the same 25-bit window
    # as unscaled f8f6f4"). q_floor = zero_floor_f32 - 25, unmeasured like it.
    mx=ScaledParams(product_window=25, c_window=25, scale_window=None, q_floor=-158),
    # MXF4 / MXF4NVF4 with ue8m0 (notes): q = max(R - 39, S - 35, raw(C) - 39);
    # K=16 product groups; the C-relative 35-bit cut of each group C outranks;
    # the 2**-174 subnormal group floor for lower-scale groups. No other lower
    # limit is stated (q_floor None). For e2m1, R <= S + 4, so R - 39 never
    # binds and raw(C) - 39 binds only when C outranks every group; a global
    # C-dominant merge (as NVFP4's) would then give the same words, so it is
    # left off (tests/test_tcgen05_rules.py checks the equivalence).
    mxf4=ScaledParams(product_window=39, c_window=39, scale_window=35, q_floor=None,
                      product_group=16, c_dominant=False, c_merge_bits=35,
                      per_group_c_merge=True, group_floor=-174),
    # NVFP4 (mxf4nvf4, ue4m3, 4X; notes): q = max(max(R, raw(C)) - 39, S - 35);
    # exact K=4 groups (the nvfp4-k4-product-carry vector); the C-dominant
    # merge of the four K=16 block sums into raw(C) - 35 (K=32 when sparse).
    nvfp4=ScaledParams(product_window=39, c_window=39, scale_window=35, q_floor=None,
                       product_group=4, c_dominant=True, merge_group=16, c_merge_bits=35),
)
# zero_c: with every product zero, C = -0 gives +0 in all three (unmeasured
# for the block-scaled kinds; measured +0 for the unscaled ones by the frozen
# "negative-zero" vectors). Probe: any block-scaled kind, A = 0, C = 0x80000000.

MMASIM_TCGEN05 = B200_TCGEN05.derive(
    "mmasim-tcgen05",
    evidence="MMA-Sim 2.1.1 TCGen05MMA / TCGen05MMABlockScale parameters restated "
             "(F=25, e_zero -133/-21; mxf4 kinds: G=16, F=35, e_zero=-139, anchored on "
             "scale exponents and C); a peer to compare against, not a measurement",
    mxf4=ScaledParams(product_window=None, c_window=35, scale_window=35, q_floor=-174,
                      product_group=16),
    nvfp4=ScaledParams(product_window=None, c_window=35, scale_window=35, q_floor=-174,
                       product_group=16),
)

PROFILES = {p.name: p for p in (B200_TCGEN05, MMASIM_TCGEN05)}


def model_for(dp: Datapath, profile: str | Tcgen05Profile = B200_TCGEN05) -> Model:
    """The tcgen05 model of ``dp`` (the B200 profile unless told otherwise)."""
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise ModelError(f"unknown tcgen05 profile {profile!r} (known: {', '.join(PROFILES)})")
        profile = PROFILES[profile]
    return profile.model(dp)


def auto_model(dp: Datapath, gpu: str | None = None) -> Model:
    """``--model auto`` for tcgen05 captures: the B200 profile (sm_100a is the
    only arch measured; B300 is covered only by the MMA-Sim PR vectors)."""
    return model_for(dp)
