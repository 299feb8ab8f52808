"""Scoring fit candidates on a capture: a growing screen with early stopping,
the whole capture (cached), and the error size of a candidate's mismatches."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcprobe.capture import Capture
from tcprobe.models.engine import ParamError
from tcprobe.models.model import ModelError
from tcprobe.models.words import distance

from .diagnose import bit_lengths
from .space import Recipe

INF = 1 << 60


def error_bits(d_type: str, got: np.ndarray, want: np.ndarray) -> int:
    """Sum of the bit lengths of the ulp distances (a NaN on one side: 64)."""
    if len(got) == 0:
        return 0
    dist, nan_got, nan_want = distance(d_type, got, want)
    return int(np.where(nan_got != nan_want, 64, bit_lengths(np.abs(dist))).sum())


@dataclass
class FitConfig:
    """Knobs of the search."""

    budget: int = 2000  # distinct candidates screened, at most
    screen: int = 256  # cases in the screening subset
    beam: int = 4
    grow: int = 32  # failing cases that join the screen after a failed confirmation
    chunk: int = 64  # screening chunk: a candidate stops after the chunk that rules it out
    pair_dims: int = 5
    pair_values: int = 3
    seed: int = 0
    analyse: bool = True  # check the winner's neighbours and families on the whole capture


@dataclass
class Record:
    """A candidate's score on the screen: ``count`` mismatches (a lower
    bound when ``complete`` is false: it stopped early)."""

    recipe: Recipe
    count: int
    complete: bool
    fails: np.ndarray  # capture indices it fails (all of them when complete)
    fixed: int | None  # of its parent's failing cases, how many it gets right
    version: int
    order: int  # when it was first screened
    error: str | None = None
    distance: int = 0  # sum over its failures of the bit length of the ulp error

    @property
    def score(self) -> tuple[int, int]:
        """Mismatches first; among equal counts, the smaller errors (so a
        search can move where every case still fails)."""
        return (self.count, self.distance)


class Evaluator:
    """Scores recipes on a capture: a growing screen with early stopping,
    and the whole capture (cached)."""

    def __init__(self, capture: Capture, config: FitConfig):
        self.cap, self.dp, self.cfg = capture, capture.datapath, config
        n = len(capture)
        rng = np.random.default_rng(config.seed)
        pick = rng.choice(n, size=min(n, config.screen), replace=False)
        self.screen_idx = np.sort(pick)
        self.added: list[np.ndarray] = []  # cases added at each version
        self.records: dict[Recipe, Record] = {}
        self.full: dict[Recipe, np.ndarray] = {}
        self.full_evals = 0

    @property
    def version(self) -> int:
        return len(self.added)

    @property
    def screened(self) -> int:
        return len(self.records)

    def words(self, recipe: Recipe, idx: np.ndarray) -> np.ndarray:
        return recipe.model(self.dp).evaluate(self.cap.cases.take(idx))

    def _fails(self, recipe: Recipe, idx: np.ndarray) -> tuple[np.ndarray, int]:
        """The cases of ``idx`` that ``recipe`` fails, and their distance."""
        if len(idx) == 0:
            return idx, 0
        got, want = self.words(recipe, idx), self.cap.words[idx]
        bad = got != want
        return idx[bad], error_bits(self.dp.d_type, got[bad], want[bad])

    def grow(self, idx: np.ndarray) -> None:
        new = np.setdiff1d(np.asarray(idx), self.screen_idx)
        if len(new):
            self.screen_idx = np.sort(np.concatenate([self.screen_idx, new]))
            self.added.append(new)

    def screen(self, recipe: Recipe, threshold: int = INF, first=None) -> Record:
        """Score ``recipe`` on the screen, stopping once it exceeds ``threshold``;
        ``first``: cases to score first (its parent's failures)."""
        rec = self.records.get(recipe)
        if rec is not None and rec.error:
            return rec
        if rec is not None and rec.version == self.version:
            if rec.complete or rec.count > threshold:
                return rec
        elif rec is not None and rec.complete:
            new = np.concatenate(self.added[rec.version:])
            extra, dist = self._fails(recipe, new)
            rec.fails = np.concatenate([rec.fails, extra])
            rec.count += len(extra)
            rec.distance += dist
            rec.version = self.version
            return rec
        order = len(self.records) if rec is None else rec.order
        try:
            first_idx = (np.intersect1d(first, self.screen_idx) if first is not None
                         else np.empty(0, np.int64))
            f, dist = self._fails(recipe, first_idx)
            fails = [f]
            fixed = len(first_idx) - len(f) if first is not None else None
            count = len(f)
            complete = True
            rest = np.setdiff1d(self.screen_idx, first_idx)
            for s in range(0, len(rest), self.cfg.chunk):
                if count > threshold:
                    complete = False
                    break
                f, d = self._fails(recipe, rest[s:s + self.cfg.chunk])
                fails.append(f)
                count += len(f)
                dist += d
            rec = Record(recipe, count, complete, np.concatenate(fails), fixed, self.version,
                         order, distance=dist)
        except (ModelError, ParamError) as e:
            rec = Record(recipe, INF, False, np.empty(0, np.int64), None, self.version, order,
                         error=str(e))
        self.records[recipe] = rec
        return rec

    def full_fails(self, recipe: Recipe) -> np.ndarray:
        """The capture indices ``recipe`` fails, over the whole capture."""
        if recipe not in self.full:
            self.full_evals += 1
            try:
                self.full[recipe] = np.flatnonzero(
                    recipe.model(self.dp).evaluate(self.cap.cases) != self.cap.words)
            except (ModelError, ParamError):
                self.full[recipe] = np.arange(len(self.cap))
        return self.full[recipe]


# ---------------------------------------------------------------------------
# Results.
