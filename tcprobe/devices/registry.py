"""Open a device from its ``--device`` spelling, or pick the default."""

from __future__ import annotations

from tcprobe.console import note

from .base import Device, DeviceError

# Newest modeled GPU that runs each family: the default sim device.
DEFAULT_SIM = {"mma": "b200", "wgmma": "h200", "tcgen05": "b200"}


def open_device(spec: str | None, family: str = "mma") -> Device:
    """``sim:NAME``, or None for the default: the GPU where one is present,
    else (with a one-line note) the sim device of the newest modeled GPU
    that runs ``family``."""
    if spec is None:
        name = DEFAULT_SIM.get(family, "b200")
        note(f"no GPU device found; running on the simulated device sim:{name} "
             "(results are labelled simulated)")
        return open_device(f"sim:{name}", family)
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind == "sim":
        from .sim import SimDevice

        return SimDevice(rest)
    if kind == "cuda":
        from .cuda import open_cuda

        return open_cuda(rest)
    raise DeviceError(f"unknown device {spec!r} (sim:NAME, cuda[:N])")
