"""The physical nouns of one harness launch: a tile's buffer sizes and a batch of tiles.

Slots are element positions (see :mod:`tcprobe.tiles.layout`): a
shared-memory element offset, or ``thread * E + e`` for the e-th element of
a thread's register fragment. A dump is the words a tile reads back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
