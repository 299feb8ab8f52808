"""The Device interface: anything that can execute cases on a datapath.

Two levels, as a hardware harness has them:

* ``launch`` (raw mode) takes the physical operand buffers of T tiles, one
  array row a tile, exactly as the harness places them (shared-memory
  element offsets, or ``thread * E + e`` register-fragment slots; see
  :mod:`tcprobe.layout`), and returns every word the harness reads back per
  tile: for mma.sync and wgmma the accumulator registers of every thread,
  for tcgen05 the tensor-memory words of 128 lanes. Only a slice of that
  dump carries D; finding which, and the operand layout, is the ladder's job.
* ``run`` (result mode) takes logical cases and returns one output word a
  case, the way a validated harness does (each case replicated across the
  tile, its result read from the known slice).

``TileSpec`` says how big the buffers of one tile are. Devices that cannot
do raw mode (a replayed capture, MMA-Sim) raise :class:`RawModeUnsupported`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath


class DeviceError(RuntimeError):
    """A device that cannot be opened or cannot run what was asked."""


class RawModeUnsupported(DeviceError):
    """The device returns results only, not the harness's raw dump."""


@dataclass(frozen=True)
class TileSpec:
    """Physical buffer sizes of one tile of a harness launch."""

    m: int
    n: int
    k: int
    a_slots: int  # element slots of the A buffer
    b_slots: int
    c_slots: int  # slots the harness writes C into (accumulator words)
    dump_words: int  # words read back per tile
    dump_labels: tuple[str, ...] = field(default=(), compare=False)  # e.g. "t17.r2"
    scale_slots: int = 0  # scale words per operand per tile (block-scaled kinds)
    meta_slots: int = 0  # sparsity metadata words per tile
    instruction: str = ""  # the PTX the harness issues, e.g. mma.sync.aligned.m16n8k16...


@dataclass
class PhysicalBatch:
    """The physical buffers of T tiles (one row a tile), element codes as uint32."""

    a: np.ndarray  # (T, a_slots)
    b: np.ndarray  # (T, b_slots)
    c: np.ndarray  # (T, c_slots)
    scale_a: np.ndarray | None = None  # (T, scale_slots)
    scale_b: np.ndarray | None = None
    meta: np.ndarray | None = None  # (T, meta_slots)

    def __len__(self) -> int:
        return len(self.a)


class Device(ABC):
    """Executes cases. ``name`` is what ``--device`` takes (sim:h200, cuda:0)."""

    name: str = "device"
    simulated: bool = True  # reports label results from simulated devices

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

    def info(self) -> dict:
        """Metadata recorded in every report (GPU, driver, profile, ...)."""
        return {"device": self.name, "simulated": self.simulated}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the device holds."""
