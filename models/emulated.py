"""fp8 ``mma.sync`` as the compiler emulates it on sm_90 and sm_100.

There is no fp8 HMMA on Hopper or Blackwell's legacy path: the compiler
unpacks the fp8 registers to f16 (F2FP, exact) and issues two
``HMMA.16816`` (SASS facts of issue 7). The profiles below say how that
chain computes, each derived from the HMMA profile it runs on rather than
from copied numbers:

- K is split into two sub-MMAs of 16 positions by **interleaved pairs**:
  positions 0,1, 4,5, 8,9, ... go to the HMMA that runs first, 2,3, 6,7,
  ... to the second (measured on the f16 outputs: the same pairs run in
  the other order miss 1,229 to 1,557 of 5,000; see the evidence). This is what unpacking gives if the low half of
  each 32-bit register of 4 consecutive fp8 values feeds the first HMMA and
  the high half the second (an inference from the layout, not measured).
- Each HMMA is that GPU's f16-input HMMA datapath accumulating in the
  output type: for f32 output HMMA.F32 (one block of 16, F=25, RZ, floor
  -133), for f16 output HMMA.F16 (F=25, RNE, floor -21). The first starts
  from +0, the second from the first's result.
- C does not enter the HMMAs: it is added after by an ordinary add in the
  output type, rounded to nearest even.

Found by ``tcprobe fit`` (issue 7), not by hand: it starts from the
published HMMA profiles and reaches this structure on every output below.
What the captures pin and what they leave open is in the evidence strings.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcprobe.models import isa
from tcprobe.models.datapath import Datapath

from .formats import get_format
from .model import Model, ModelError
from .profiles import B200_HMMA, FP8, H100, GpuProfile, names_gpu
from .structures import SplitModel, deal

HMMA_K = 16  # K of one HMMA.16816


@dataclass(frozen=True)
class EmulatedFp8Profile:
    """fp8 mma.sync run as F2FP unpacks plus a chain of f16 HMMA.16816."""

    name: str
    hmma: GpuProfile  # the HMMA datapath the emulation runs on
    gpus: tuple[str, ...]
    evidence: str
    unit: int = 2  # runs of K positions dealt to the HMMAs: interleaved pairs
    c_entry: str = "last"  # C added after the HMMAs by an ordinary add
    c_add_rounding: str = "rne"

    def supports(self, dp: Datapath) -> bool:
        return (dp.family == "mma" and get_format(dp.a_type).name in FP8
                and get_format(dp.b_type).name in FP8 and not dp.block_scaled
                and not dp.sparse and dp.k % HMMA_K == 0
                and get_format(dp.d_type).name in ("f32", "f16"))

    def model(self, dp: Datapath) -> Model:
        if not self.supports(dp):
            raise ModelError(f"{self.name} models fp8 mma.sync (K a multiple of 16, "
                             f"f32 or f16 out), not {dp.id}")
        hmma_dp = Datapath("mma", "f16", "f16", "f16", dp.d_type, HMMA_K)
        return SplitModel(
            self.name, dp, self.evidence,
            parts=deal(dp.k, dp.k // HMMA_K, self.unit),
            stage=self.hmma.params(hmma_dp),
            c_entry=self.c_entry, c_add_rounding=self.c_add_rounding, unpack="f16")


_KM = "Khattak-Mikaitis captures in ../shared/hwdata/khattak-mikaitis-2025"

B200_FP8_EMULATED = EmulatedFp8Profile(
    "b200-fp8-emulated", B200_HMMA, B200_HMMA.gpus,
    f"tcprobe fit on the {_KM}: B200/E4M3 and B200/E5M2, d_B200_fp32.txt and "
    "d_B200_fp16.txt, 0 mismatches of 5,000 each (the published b200-hmma parameters miss "
    "1,597 to 1,892 of each). The f16 outputs pin the split into interleaved pairs (the "
    "nearest other splits, from one block to single positions and the same pairs run in "
    "the other order, miss 759 to 1,579), HMMAs accumulating in the output type (f32 "
    "accumulators converted at the end miss 759 and 1,071) and C added after (C in the first HMMA misses 1,846 and 1,967); the "
    "f32 outputs pin C added after less firmly (the nearest C-first models miss 1,764 and "
    "1,793, the best C-first candidates tried 1 and 246) and fit most splits. The "
    "captures pin F >= 18 (f16) and F >= 23 (f32), not the zero floors: F=25 and the "
    "floors are the b200-hmma f16-input datapath's. B300 is assumed to match (unmeasured).",
)

HOPPER_FP8_EMULATED = EmulatedFp8Profile(
    "hopper-fp8-emulated", H100, H100.gpus,
    f"tcprobe fit on the {_KM}: H100/E4M3, H100/E5M2, H200/E4M3 and H200/E5M2, "
    "d_*_fp16.txt, 0 mismatches of 5,000 each, C being the c file rounded to f16 (the "
    "published h100 parameters miss 1,600 to 1,887 of each; the nearest other splits, "
    "the same pairs run in the other order included, miss 770 to 1,580, f32 accumulators "
    "770 to 1,069, C in the first HMMA 1,847 to 1,962). The captures pin F >= 18, not the zero floor: F=25 and the floor are the h100 "
    "f16-input datapath's. The f32 output follows from the same structure and is "
    "unmeasured: the published H100/H200 fp8-to-f32 files were run by the authors "
    "through wgmma with C = 0; this profile misses 2,989 (E4M3) and 1,797 (E5M2) of "
    "them, which the h100 profile's native fp8 datapath (F=13, 13 kept bits) explains.",
)

EMULATED: dict[str, EmulatedFp8Profile] = {
    p.name: p for p in (B200_FP8_EMULATED, HOPPER_FP8_EMULATED)}

# The emulation profile of each architecture whose compiler emulates fp8
# mma.sync (tcprobe sass-check names it): the profile of that arch's GPUs.
EMULATION_BY_ARCH: dict[str, str] = {
    arch: next(p.name for p in EMULATED.values() if set(isa.ARCH_GPUS[arch]) & set(p.gpus))
    for arch in isa.FP8_EMULATED_ARCHS}


def emulated_for(dp: Datapath, gpu: str | None) -> EmulatedFp8Profile | None:
    """The emulation profile that ``mma`` datapath ``dp`` runs as on ``gpu``, if any."""
    if not gpu:
        return None
    for p in EMULATED.values():
        if names_gpu(gpu, p.gpus) and p.supports(dp):
            return p
    return None
