"""A test-only device whose silicon is a FixedPointModel with chosen
parameters: the "true datapath" of the mutation checks, altered at will."""

from __future__ import annotations

import numpy as np

from tcprobe.devices.base import Device
from tcprobe.models.engine import EngineParams
from tcprobe.models.model import FixedPointModel


class ModelDevice(Device):
    """Result mode only: ``run`` evaluates the model."""

    simulated = True

    def __init__(self, name: str, model: FixedPointModel):
        self.name = name
        self.model = model

    def supports(self, dp) -> bool:
        return dp == self.model.datapath

    def run(self, dp, cases) -> np.ndarray:
        return self.model.evaluate(cases)

    def info(self) -> dict:
        return {**super().info(), "gpu": None, "params": self.model.params.as_dict()}


def altered(dp, params: EngineParams, name: str, **changes) -> ModelDevice:
    """A device running ``params`` with ``changes`` applied."""
    return ModelDevice(f"test:{name}", FixedPointModel(name, dp, "test device", params.replace(**changes)))
