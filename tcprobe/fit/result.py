"""What a fit reports: the winner, its steps from the seed, what the capture
does not pin, and the families it rules out with a case each."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .space import Recipe


@dataclass
class Step:
    """One move of the search path."""

    dim: str
    value: object
    before: int  # screen mismatches of the parent
    after: int  # screen mismatches of the child (when found)
    reason: str  # why the diagnosis put this dimension first

    def as_dict(self) -> dict:
        return {"dim": self.dim, "value": _jsonable(self.value), "before": self.before,
                "after": self.after, "reason": self.reason}


@dataclass
class Rejection:
    """One family the capture rules out, and a case that shows it."""

    dim: str
    family: str
    member: str  # the family's member nearest the winner
    member_mismatches: int
    best_tried: str | None
    best_tried_mismatches: int | None
    case_index: int | None
    case: dict | None  # a, b, c, device, candidate (words as hex and value)
    rules_out_best_tried: bool = False
    shrunk: dict | None = None  # a smaller case, device word from a live oracle

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class FitResult:
    label: str
    capture: str
    gpu: str | None
    datapath: str
    cases: int
    seeds: list[dict]
    start: str
    start_mismatches: int
    best: Recipe
    best_description: str
    mismatches: int
    params: dict | None  # engine parameters when one engine computes it
    candidates: int  # distinct candidates screened
    full_evaluations: int
    seconds: float
    stop: str
    path: list[Step] = field(default_factory=list)
    top: list[dict] = field(default_factory=list)
    unpinned: dict = field(default_factory=dict)  # dim -> the values that also fit
    rejected: list[Rejection] = field(default_factory=list)
    remaining: str = ""  # what the best candidate's mismatches share
    changed_from_start: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "label": self.label, "capture": self.capture, "gpu": self.gpu,
            "datapath": self.datapath, "cases": self.cases, "seeds": self.seeds,
            "start": self.start, "start_mismatches": self.start_mismatches,
            "best": {k: _jsonable(v) for k, v in self.best.as_dict().items()},
            "best_description": self.best_description, "mismatches": self.mismatches,
            "params": self.params, "candidates": self.candidates,
            "full_evaluations": self.full_evaluations, "seconds": round(self.seconds, 3),
            "stop": self.stop, "changed_from_start": self.changed_from_start,
            "path": [s.as_dict() for s in self.path], "top": self.top,
            "unpinned": {k: v if isinstance(v, dict) else [_jsonable(x) for x in v]
                         for k, v in self.unpinned.items()},
            "rejected": [r.as_dict() for r in self.rejected], "remaining": self.remaining,
        }


def _jsonable(v):
    if isinstance(v, tuple):
        return list(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


# ---------------------------------------------------------------------------
# Seeds.
