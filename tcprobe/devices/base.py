"""The Device interface: anything that can execute cases on a datapath.

Two levels, as a hardware harness has them:

* ``launch`` (raw mode) takes the physical operand buffers of T tiles, one
  array row a tile, exactly as the harness places them (shared-memory
  element offsets, or ``thread * E + e`` register-fragment slots; see
  :mod:`tcprobe.tiles`), and returns every word the harness reads back per
  tile: for mma.sync and wgmma the accumulator registers of every thread,
  for tcgen05 the tensor-memory words of 128 lanes. Only a slice of that
  dump carries D; finding which, and the operand layout, is the ladder's job.
* ``run`` (result mode) takes logical cases and returns one output word a
  case, the way a validated harness does (each case replicated across the
  tile, its result read from the known slice).

``TileSpec`` (:mod:`tcprobe.tiles.spec`) says how big the buffers of one
tile are. Devices that cannot do raw mode (a replayed capture, MMA-Sim) raise :class:`RawModeUnsupported`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import Speed
from tcprobe.tiles.spec import PhysicalBatch, TileSpec


class DeviceError(RuntimeError):
    """A device that cannot be opened or cannot run what was asked."""


class RawModeUnsupported(DeviceError):
    """The device returns results only, not the harness's raw dump."""


@dataclass(frozen=True)
class KernelCheck:
    """A device's SASS verdict on the kernel that runs one datapath."""

    kernel: str  # harness variant, e.g. mma.e4m3.f32
    symbol: str  # the kernel's symbol in the cubin
    arch: str
    ptx: str
    expected: str  # the opcode expected
    found: tuple[str, ...]  # tensor-core opcodes found
    status: str  # ok | emulated | missing | unsupported
    note: str = ""
    emulation: dict | None = None
    profile: str | None = None  # the model profile of an emulation


class Device(ABC):
    """Executes cases. ``name`` is what ``--device`` takes (sim:h200, cuda:0)."""

    name: str = "device"
    simulated: bool = True  # reports label results from simulated devices
    speed: Speed = Speed()  # how a device that runs models runs them (never what they give)

    @abstractmethod
    def supports(self, dp: Datapath) -> bool:
        """Whether this device can execute datapath ``dp``."""

    @abstractmethod
    def run(self, dp: Datapath, cases: Cases) -> np.ndarray:
        """Result mode: one output word (uint32) per case."""

    def tile(self, dp: Datapath) -> TileSpec:
        """Buffer sizes of one raw-mode tile."""
        raise RawModeUnsupported(f"{self.name} has no raw mode")

    def launch(self, dp: Datapath, batch: PhysicalBatch) -> np.ndarray:
        """Raw mode: (T, dump_words) words read back for T tiles."""
        raise RawModeUnsupported(f"{self.name} has no raw mode")

    def fixed_datapath(self) -> Datapath | None:
        """The one datapath a device runs when it runs only one (MMA-Sim), else None."""
        return None

    def sass_verdict(self, dp: Datapath) -> KernelCheck | None:
        """The SASS check of the kernel that runs ``dp``; None where no kernel runs."""
        return None

    def info(self) -> dict:
        """Metadata recorded in every report (GPU, driver, profile, ...)."""
        return {"device": self.name, "simulated": self.simulated}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the device holds."""
