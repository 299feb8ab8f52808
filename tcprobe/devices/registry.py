"""Open a device from its ``--device`` spelling, or pick the default.

Spellings: ``sim:NAME`` (a built-in profile: the ``sim`` names of the GPU
catalogue, ``models/gpus.py``), ``sim:PATH.toml`` (a custom profile, docs/sim-profiles.md),
``mmasim:ARCH:INSTRUCTION`` (MMA-Sim as a black box) and ``cuda[:N]`` (the
harness kernels on a GPU, :mod:`tcprobe.devices.cuda`).

A device prints nothing: :func:`choose_device` returns the device and the
notes worth telling the user (a sim device chosen for want of a GPU); the
CLI prints them.
"""

from __future__ import annotations

from typing import NamedTuple

from tcprobe.models import gpus

from .base import Device, DeviceError

# Newest modeled GPU that runs each family: the default sim device (the GPU
# catalogue's default_for).
DEFAULT_SIM = gpus.default_sims()


class Opened(NamedTuple):
    """A device and the notes that say how it was chosen."""

    device: Device
    notes: tuple[str, ...] = ()


def _cuda_module():
    """tcprobe.devices.cuda.device where it imports, else None."""
    try:
        from .cuda import device
    except ImportError:
        return None
    return device


def probe_gpu() -> Device | None:
    """A CUDA device for this machine's first GPU, or None (no module, no
    driver, no GPU, or a GPU the harness does not cover)."""
    mod = _cuda_module()
    probe = getattr(mod, "probe_gpu", None) if mod else None
    if probe is None:
        return None
    try:
        found = probe()
        if isinstance(found, Device):
            return found
        if not found:
            return None
        index = found[0][0] if isinstance(found[0], (tuple, list)) else 0
        return mod.open_cuda(str(index))
    except Exception:  # a broken driver means no usable GPU here, not a crash
        return None


def default_device(family: str | None = None) -> Opened:
    """The GPU where one is present; else, with a one-line note, the sim
    device of the newest modeled GPU that runs ``family``."""
    gpu = probe_gpu()
    if gpu is not None:
        return Opened(gpu)
    name = DEFAULT_SIM.get(family or "tcgen05", "b200")
    if family == "mfma":  # the newest modeled AMD GPU (models/isa_amd.py)
        from tcprobe.models import isa_amd

        name = list(isa_amd.GPU_ARCH)[-1].lower()
    from .sim import SimDevice

    return Opened(SimDevice.builtin(name),
                  (f"no GPU found; running on the simulated device sim:{name} "
                   "(results are labelled simulated)",))


def open_device(spec: str | None, family: str | None = None) -> Device:
    """The device ``spec`` names, or the default (see :func:`choose_device`)."""
    return choose_device(spec, family).device


def choose_device(spec: str | None, family: str | None = None) -> Opened:
    """The device ``spec`` names, or the default (see :func:`default_device`),
    with the notes that say how it was chosen."""
    if spec is None or spec.strip() == "":
        return default_device(family)
    return Opened(_open(spec))


def _open(spec: str) -> Device:
    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "sim":
        from .sim import SimDevice

        if not rest:
            raise DeviceError("sim needs a profile: sim:NAME or sim:PATH.toml")
        return SimDevice.open(rest)
    if kind == "mmasim":
        from .mmasim import MmaSimDevice

        return MmaSimDevice(rest)
    if kind == "cuda":
        mod = _cuda_module()
        if mod is None:
            from tcprobe.devices.cuda.nvrtc import INSTALL_HINT

            raise DeviceError(f"no CUDA support in this install: cuda-bindings does not import; {INSTALL_HINT}")
        return mod.open_cuda(rest)
    raise DeviceError(f"unknown device {spec!r} (sim:NAME, sim:PATH.toml, "
                      "mmasim:ARCH:INSTRUCTION, cuda[:N])")
