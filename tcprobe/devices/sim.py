"""Simulated silicon: ``--device sim:NAME``.

A sim device executes cases with the model of a GPU profile. (Raw mode, the
physical harness layouts and custom TOML profiles build on this.)
"""

from __future__ import annotations

import numpy as np

from tcprobe.cases import Cases
from tcprobe.datapath import Datapath
from tcprobe.models import registry
from tcprobe.models.model import ModelError

from .base import Device, DeviceError

# Built-in sim profiles: name -> (GPU whose profile it runs, families it runs).
BUILTIN = {
    "v100": ("V100", ("mma",)),
    "a100": ("A100", ("mma",)),
    "ada": ("Ada", ("mma",)),
    "h100": ("H100", ("mma", "wgmma")),
    "h200": ("H200", ("mma", "wgmma")),
    "b200": ("B200", ("mma", "tcgen05")),
}


class SimDevice(Device):
    simulated = True

    def __init__(self, name: str):
        key = name.lower()
        if key not in BUILTIN:
            raise DeviceError(f"unknown sim profile {name!r} (known: {', '.join(BUILTIN)})")
        self.key = key
        self.gpu, self.families = BUILTIN[key]
        self.name = f"sim:{key}"

    def supports(self, dp: Datapath) -> bool:
        if dp.family not in self.families:
            return False
        try:
            registry.auto(dp, self.gpu)
        except ModelError:
            return False
        return True

    def model(self, dp: Datapath):
        if dp.family not in self.families:
            raise DeviceError(f"{self.name} does not run {dp.family} "
                              f"(it runs {', '.join(self.families)})")
        return registry.auto(dp, self.gpu)

    def run(self, dp: Datapath, cases: Cases) -> np.ndarray:
        return self.model(dp).evaluate(cases)

    def info(self) -> dict:
        return {**super().info(), "gpu": self.gpu, "profile": self.key}
