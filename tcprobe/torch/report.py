"""What an :func:`~tcprobe.torch.emulate` block did: per-op counts, shapes, time, differences."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OpStats:
    """One aten op's tally: calls routed to tcprobe and run as torch would
    (fallback), the (A, B) shapes seen, seconds in tcprobe, and with
    ``compare`` the largest difference from torch's own CPU result."""

    routed: int = 0
    fallback: int = 0
    shapes: list = field(default_factory=list)
    seconds: float = 0.0
    max_ulp: int = 0  # in the output format, over every routed call
    max_rel: float = 0.0  # |ours - torch's| / (|A| @ |B|), the largest element


@dataclass
class Record:
    """One routed 2-D product as it was computed: A (M, K), B (K, N), C (M, N)
    f32 or None, alpha, beta and D's f32 (or int32) words as a tensor."""

    op: str
    a: object
    b: object
    c: object
    alpha: float
    beta: float
    d: object


@dataclass
class Report:
    """Pass as ``emulate(report=Report())``. ``compare=True`` also runs each
    routed op as torch would and records the difference; ``record=True``
    keeps every 2-D product (:class:`Record`) so a check can redo it."""

    compare: bool = False
    record: bool = False
    ops: dict = field(default_factory=dict)
    fallbacks: list = field(default_factory=list)  # (op, reason)
    records: list = field(default_factory=list)

    def stats(self, op: str) -> OpStats:
        return self.ops.setdefault(op, OpStats())

    @property
    def routed(self) -> int:
        return sum(s.routed for s in self.ops.values())

    @property
    def fallback(self) -> int:
        return sum(s.fallback for s in self.ops.values())

    def rows(self) -> list[dict]:
        """One plain dict per op, for a table or JSON."""
        return [{"op": op, "routed": s.routed, "fallback": s.fallback,
                 "shapes": sorted({str(x) for x in s.shapes}), "seconds": round(s.seconds, 6),
                 "max_ulp": s.max_ulp, "max_rel": s.max_rel} for op, s in sorted(self.ops.items())]
