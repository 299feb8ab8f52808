"""The Cases noun: a batch of dot products as raw words in numpy arrays.

Every generator, device, model and capture speaks in Cases. Case i is

    D[i] = C[i] + sum_k A[i, k] * B[i, k]     (times scales, where block-scaled)

with words of the datapath's types. For sparse datapaths ``active`` marks
the logical K positions that the metadata selects; the words at the other
positions are ignored (they may hold anything, NaN included).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format


class CasesError(ValueError):
    """Arrays that do not form a batch of cases for the datapath."""


@dataclass
class Cases:
    a: np.ndarray  # (N, K) uint32; uint64 where the given words are (f64)
    b: np.ndarray  # (N, K) uint32 / uint64
    c: np.ndarray  # (N,) uint32 / uint64
    scale_a: np.ndarray | None = None  # (N, n_scales) uint32
    scale_b: np.ndarray | None = None  # (N, n_scales) uint32
    active: np.ndarray | None = None  # (N, K) bool, sparse only
    names: list[str] | None = field(default=None, compare=False)

    def __post_init__(self):
        self.a = np.atleast_2d(_words(self.a))
        self.b = np.atleast_2d(_words(self.b))
        self.c = np.atleast_1d(_words(self.c))
        for name in ("scale_a", "scale_b"):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, np.atleast_2d(np.asarray(v, dtype=np.uint32)))
        if self.active is not None:
            self.active = np.atleast_2d(np.asarray(self.active, dtype=bool))
        n = len(self.c)
        for name in ("a", "b", "scale_a", "scale_b", "active"):
            v = getattr(self, name)
            if v is not None and v.shape[0] != n:
                raise CasesError(f"{name} has {v.shape[0]} rows but there are {n} cases")
        if self.a.shape != self.b.shape:
            raise CasesError(f"A is {self.a.shape} but B is {self.b.shape}")

    def __len__(self) -> int:
        return len(self.c)

    @property
    def k(self) -> int:
        return self.a.shape[1]

    def take(self, idx) -> Cases:
        """The cases at ``idx`` (an index array, slice or boolean mask)."""
        def pick(v):
            return None if v is None else v[idx]

        names = None
        if self.names is not None:
            names = list(np.asarray(self.names, dtype=object)[idx])
        return Cases(self.a[idx], self.b[idx], self.c[idx], pick(self.scale_a),
                     pick(self.scale_b), pick(self.active), names)

    @classmethod
    def concat(cls, parts: list[Cases]) -> Cases:
        if not parts:
            raise CasesError("no cases to join")
        def cat(name):
            vals = [getattr(p, name) for p in parts]
            return None if any(v is None for v in vals) else np.concatenate(vals)
        names = None
        if all(p.names is not None for p in parts):
            names = [n for p in parts for n in p.names]
        return cls(cat("a"), cat("b"), cat("c"), cat("scale_a"), cat("scale_b"), cat("active"), names)

    def check(self, dp: Datapath, words: bool = True) -> None:
        """Raise CasesError unless these cases fit datapath ``dp``
        (``words=False``: all but the scan of every word for bits above its
        format, for a kernel that makes that scan as it reads the words)."""
        if self.k != dp.k:
            raise CasesError(f"cases have K={self.k} but {dp.id} has K={dp.k}")
        for name, fmt in (("a", dp.a_type), ("b", dp.b_type), ("c", dp.c)) if words else ():
            v = getattr(self, name)
            limit = get_format(fmt).word_mask
            if v.size and int(v.max()) > limit:
                raise CasesError(f"a word of {name} does not fit {fmt} ({int(v.max()):#x})")
        if dp.block_scaled:
            for name in ("scale_a", "scale_b"):
                v = getattr(self, name)
                if v is None or v.shape[1] != dp.n_scales:
                    raise CasesError(f"{dp.id} needs {name} with {dp.n_scales} scales per case")
        if dp.sparse and self.active is None:
            raise CasesError(f"{dp.id} is sparse: the cases need the active positions")

    def masked(self, zero_a: int = 0, zero_b: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """A and B with inactive (sparse-disabled) positions replaced by +0
        words, so a NaN there cannot poison the result (tcgen05 write-up)."""
        if self.active is None:
            return self.a, self.b
        return (np.where(self.active, self.a, self.a.dtype.type(zero_a)),
                np.where(self.active, self.b, self.b.dtype.type(zero_b)))


def _words(v) -> np.ndarray:
    """Words as uint32, or as uint64 where they come as uint64 (the 64-bit
    words of f64 datapaths; every other datapath keeps uint32)."""
    given = v
    v = np.asarray(v)
    if v.dtype.kind in "fO" and not isinstance(given, np.ndarray):
        v = np.array(given, dtype=np.uint64)  # Python ints past 2**63 (negative f64 words)
    if v.dtype in (np.uint32, np.uint64):
        return v
    if v.dtype.kind in "iu" and v.dtype.itemsize > 4 and v.size and int(v.max()) > 0xFFFFFFFF:
        return v.astype(np.uint64)
    return np.asarray(v, dtype=np.uint32)
