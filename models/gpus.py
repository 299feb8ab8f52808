"""The GPU catalogue: every GPU tcprobe knows by name, in one table.

One row per GPU: the profile whose arithmetic it runs, the harness
architectures it is, its built-in ``sim:`` device and the families that
device runs, and the other GPU names that share its profile. Everything
that lists GPUs is derived from it: ``isa.ARCH_GPUS`` (and ``arch_gpu``),
``isa_amd.ARCH_GPUS``, each HMMA profile's ``gpus`` (``models/profiles.py``),
the fp8-emulation profiles' GPUs (``models/emulated.py``), the built-in sim
devices (``tcprobe/devices/sim_profile.py``) and the default sim device per
family (``tcprobe/devices/registry.py``); ``tests/test_gpu_catalogue.py``
checks the lists in README.md and docs/sim-profiles.md against it.

A new GPU on an existing profile is one row here; a new profile adds its
parameters in ``models/profiles.py`` (the arithmetic) and its rows here.
This module imports nothing: the ISA table reads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str  # the short name a profile, `--gpu` and a capture use ("H100")
    profile: str  # its mma.sync profile (models/profiles.py), or its AMD generation
    archs: tuple[str, ...]  # the harness architectures it is (isa.ARCH_FAMILIES keys; CDNA)
    sim: str | None = None  # its built-in `sim:NAME` device, None without one
    families: tuple[str, ...] = ()  # the families that sim device runs
    also: tuple[str, ...] = ()  # other GPUs that run its profile (named by `--gpu`)
    default_for: tuple[str, ...] = ()  # families whose default sim device it is (no GPU here)
    vendor: str = "nvidia"


GPUS: tuple[Gpu, ...] = (
    Gpu("V100", "v100", ("sm_70",), "v100", ("mma",)),
    Gpu("A100", "a100", ("sm_80",), "a100", ("mma",), also=("A2", "A30")),
    Gpu("Ada", "ada", ("sm_89",), "ada", ("mma",), also=("L40S", "RTX4090")),
    Gpu("H100", "h100", ("sm_90", "sm_90a"), "h100", ("mma", "wgmma")),
    Gpu("H200", "h100", ("sm_90", "sm_90a"), "h200", ("mma", "wgmma"), default_for=("wgmma",)),
    Gpu("B200", "b200-hmma", ("sm_100a",), "b200", ("mma", "tcgen05"),
        default_for=("mma", "tcgen05")),
    Gpu("B300", "b200-hmma", ("sm_103a",)),
    # MMA-Sim's parameters, not measured by tcprobe (models/profiles.py: t4, rtx5090)
    Gpu("T4", "t4", ("sm_75",), "t4", ("mma",),
        also=("RTX2080", "RTX2070", "RTX2060", "TITANRTX", "QuadroRTX")),
    Gpu("RTX5090", "rtx5090", ("sm_120a",), "rtx5090", ("mma",),
        also=("RTX5080", "RTX5070", "RTXPRO6000")),
    # AMD CDNA (v_mfma): MMA-Sim's parameters per generation (models/amd_profiles.py),
    # not measured by tcprobe; result mode only (AMD's lane layouts are not modelled).
    Gpu("MI100", "CDNA1", ("CDNA1",), "mi100", ("mfma",), vendor="amd"),
    Gpu("MI250X", "CDNA2", ("CDNA2",), "mi250x", ("mfma",), vendor="amd"),
    Gpu("MI300X", "CDNA3", ("CDNA3",), "mi300x", ("mfma",), vendor="amd"),
)


def gpus(vendor: str = "nvidia") -> tuple[Gpu, ...]:
    return tuple(g for g in GPUS if g.vendor == vendor)


def arch_gpus(archs, vendor: str = "nvidia") -> dict[str, tuple[str, ...]]:
    """Each architecture of ``archs`` -> the catalogue's GPUs that are it."""
    return {a: tuple(g.name for g in gpus(vendor) if a in g.archs) for a in archs}


def profile_gpus(profile: str) -> tuple[str, ...]:
    """Every GPU name that runs ``profile``: its rows, then the names they share it with."""
    rows = [g for g in GPUS if g.profile == profile]
    return tuple(g.name for g in rows) + tuple(n for g in rows for n in g.also)


def builtin_sims(vendor: str = "nvidia") -> dict[str, tuple[str, tuple[str, ...]]]:
    """The built-in sim devices: name -> (the GPU it runs, its families)."""
    return {g.sim: (g.name, g.families) for g in gpus(vendor) if g.sim}


def default_sims() -> dict[str, str]:
    """Family -> the sim device that runs it where no GPU is found."""
    return {f: g.sim for g in GPUS for f in g.default_for}



def archs_of(name: str) -> set[str]:
    """The architectures of the catalogue's GPU of that name (any case; none: empty)."""
    return {a for g in GPUS if g.name.upper() == name.strip().upper() for a in g.archs}
