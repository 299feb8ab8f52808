"""The Model noun: a datapath plus ``evaluate(cases) -> words``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

from .engine import EngineParams, Speed, fused_dot


class ModelError(ValueError):
    """A model that cannot be built for, or run on, a datapath."""


@dataclass
class Model:
    """Base class: subclasses compute ``evaluate``."""

    name: str
    datapath: Datapath
    evidence: str = ""

    def evaluate(self, cases: Cases, speed: Speed | None = None) -> np.ndarray:  # pragma: no cover
        """Output words of every case; ``speed`` (how the engine runs, never
        what it gives) is the caller's, for the models that use the engine."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {"name": self.name, "datapath": self.datapath.id, "evidence": self.evidence}


@dataclass
class FixedPointModel(Model):
    """The engine with one set of named parameters."""

    params: EngineParams = field(default_factory=EngineParams)

    def evaluate(self, cases: Cases, speed: Speed | None = None) -> np.ndarray:
        cases.check(self.datapath, words=False)  # the engine scans the words
        return fused_dot(self.datapath, cases, self.params, speed=speed, scan_words=True)

    def describe(self) -> dict:
        return {**super().describe(), "params": self.params.as_dict()}


@dataclass
class IntegerModel(Model):
    """Integer MMA: the exact sum of products and C, wrapped modulo 2**32
    or saturated once after the exact sum (tcgen05 kind::i8, mma s8/u8/s4/u4,
    .satfinite); b1: C plus the count of ones of a AND b (or a XOR b) over K.
    A sparse datapath's disabled positions contribute nothing."""

    saturate: bool = False

    def evaluate(self, cases: Cases, speed: Speed | None = None) -> np.ndarray:
        from .formats import decode

        cases.check(self.datapath)
        a_words, b_words = cases.masked()
        a = decode(self.datapath.a_type, a_words)
        b = decode(self.datapath.b_type, b_words)
        c = decode(self.datapath.c, cases.c)
        signed = lambda d: np.where(d.sign == 1, -d.sig, d.sig)  # noqa: E731
        if self.datapath.bitop == "xor":  # popc(a ^ b); b1 is never sparse
            terms = signed(a) ^ signed(b)
        else:  # products; for b1 .and, popc(a & b) = sum of a * b
            terms = signed(a) * signed(b)
        total = terms.sum(axis=1) + signed(c)
        if self.saturate:
            total = np.clip(total, -(1 << 31), (1 << 31) - 1)
        return (total & 0xFFFFFFFF).astype(np.uint32)

    def describe(self) -> dict:
        return {**super().describe(), "saturate": self.saturate}
