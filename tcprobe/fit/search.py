"""Search model space for the model that explains a capture.

The search is a beam of candidates (:class:`~tcprobe.fit.space.Recipe`)
started from the published HMMA profiles and moved one dimension at a time:

1. Each seed profile is scored on a screening subset of the capture (256
   cases by default); the best few form the beam.
2. The best candidate not yet fully expanded is diagnosed
   (:mod:`tcprobe.fit.diagnose`): the sign and size of its errors, whether
   the device gives the exact result rounded to nearest, whether failures
   sit at tiny magnitudes or where C dominates. The diagnosis orders the
   dimensions; the first dimension whose values beat the candidate is
   taken, and the new best is diagnosed afresh (coordinate descent).
3. A neighbour is scored first on the cases its parent fails (how many it
   fixes), then on the rest of the screen in chunks, stopping as soon as it
   cannot enter the beam.
4. When every single change of every beam member has been tried, pairs of
   changes are tried, built from the values that fixed the most failing cases.
5. A candidate with no mismatch on the screen is confirmed on the whole
   capture; where it fails there, the failing cases join the screen.

The winner is then checked against its neighbours on the whole capture:
the ones that also fit say what the capture does not pin; for each
structural family that does not fit, one case (the simplest that rules out
the family's nearest member, and its best member tried where possible) is
reported with the device word and the candidate word.
"""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np

from tcprobe.capture import Capture
from tcprobe.models.engine import EngineParams
from tcprobe.models.formats import describe as describe_word
from tcprobe.models.formats import get_format
from tcprobe.models.isa import output_defaults
from tcprobe.models.model import FixedPointModel, ModelError
from tcprobe.models.profiles import PROFILES, profile_for_gpu
from tcprobe.validation.shrink import minimize

from .diagnose import CaseFeatures, Diagnosis, diagnose, simplest
from .evaluate import INF, Evaluator, FitConfig, Record
from .result import FitResult, Rejection, Step, _jsonable
from .space import (
    DIMS,
    FAMILY_DIMS,
    SINGLE_DIMS,
    Recipe,
    family_members,
    family_of,
    moves,
    values,
)


class FitError(ValueError):
    """A capture that fit cannot search (integer or block-scaled datapaths)."""


def seed_recipes(capture: Capture, start: str | None = None) -> list[tuple[str, Recipe]]:
    """Where the search starts: the published HMMA profiles that cover the
    capture's input format, the capture's own GPU first (``start``: only the
    named model, which must be a single-engine model)."""
    dp = capture.datapath
    if start:
        from tcprobe.models import registry

        model = registry.resolve(start, dp, capture.gpu)
        if not isinstance(model, FixedPointModel):
            raise FitError(f"--start {start}: fit starts from a single-engine profile")
        return [(start, Recipe.from_params(model.params).canonical(dp))]
    order = list(PROFILES.values())
    if capture.gpu:
        try:
            own = profile_for_gpu(capture.gpu)
            order.remove(own)
            order.insert(0, own)
        except ModelError:
            pass
    out, seen = [], set()
    for prof in order:
        if not prof.supports(dp):
            continue
        r = Recipe.from_params(prof.params(dp)).canonical(dp)
        if r not in seen:
            seen.add(r)
            out.append((prof.name, r))
    if not out:
        floor = output_defaults(get_format(dp.d_type).name).zero_floor
        r = Recipe.from_params(EngineParams(block_size=dp.k, zero_floor=floor)).canonical(dp)
        out.append(("engine defaults", r))
    return out


# ---------------------------------------------------------------------------
# The search.


class Search:
    """One fit of one capture (see the module doc)."""

    def __init__(self, capture: Capture, config: FitConfig | None = None, seeds=None,
                 oracle=None):
        dp = capture.datapath
        if dp.is_integer:
            raise FitError(f"{capture.label}: fit searches floating-point datapaths, not {dp.id}")
        if dp.block_scaled:
            raise FitError(f"{capture.label}: block-scaled datapaths are not in fit's model space")
        if get_format(dp.a_type).width == 64:
            raise FitError(f"{capture.label}: an f64 datapath is fp64 FMAs, not in fit's "
                           "fixed-point model space (tcprobe ladder's chain step measures it)")
        self.cap, self.dp = capture, dp
        self.cfg = config or FitConfig()
        self.ev = Evaluator(capture, self.cfg)
        self.seeds = seeds if seeds is not None else seed_recipes(capture)
        self.oracle = oracle  # cases -> device words, for shrinking (a live device)
        self.feats = CaseFeatures.of(dp, capture.cases)
        self.dims_done: dict[Recipe, set] = {}
        self.pairs_done: set[Recipe] = set()
        self.parent: dict[Recipe, tuple[Recipe, str, object]] = {}
        self.reason: dict[tuple[Recipe, str], str] = {}
        self.seed_names: dict[Recipe, str] = {}
        self.depth: dict[Recipe, int] = {}
        self.plateaus: dict[tuple, list[Recipe]] = {}  # fail set -> fully expanded recipes
        self._beam: list[Record] = []
        self._beam_version = 0

    # -- beam --------------------------------------------------------------
    def _key(self, rec: Record):
        return (rec.score, self.depth.get(rec.recipe, 0), rec.order)

    def offer(self, rec: Record) -> None:
        """Put a complete record in the beam if it is among the best."""
        if not rec.complete or rec.error or any(x.recipe == rec.recipe for x in self._beam):
            return
        self._beam.append(rec)
        self._beam.sort(key=self._key)
        del self._beam[self.cfg.beam:]

    def beam(self) -> list[Record]:
        """The best complete candidates on the current screen."""
        if self._beam_version != self.ev.version:
            # The screen grew: top up every complete record, then rank again.
            self._beam_version = self.ev.version
            recs = [self.ev.screen(r) for r, x in list(self.ev.records.items()) if x.complete]
            self._beam = sorted([x for x in recs if x.complete and not x.error],
                                key=self._key)[: self.cfg.beam]
        return self._beam

    def threshold(self) -> int:
        b = self.beam()
        return b[-1].count if len(b) >= self.cfg.beam else INF

    def ranked(self) -> list[Record]:
        """Every complete candidate on the current screen, best first."""
        recs = [x for x in self.ev.records.values()
                if x.complete and not x.error and x.version == self.ev.version]
        return sorted(recs, key=self._key)

    def next_action(self) -> tuple[str, Record] | None:
        """The best candidate with work left: its single changes, then pairs
        of changes. A candidate that fails the same screen cases as one
        already expanded without gain, and differs from it in one or two
        dimensions, is a plateau twin: it is passed over."""
        ranked = self.ranked()
        if ranked and self._exhausted(ranked[0].recipe):
            # Stuck at the best: pairs of changes from the path that led
            # here, nearest first, before other candidates of the plateau.
            r = ranked[0].recipe
            while r in self.parent:
                r = self.parent[r][0]
                if r not in self.pairs_done and len(self.dims_done.get(r, ())) >= len(DIMS):
                    return "pairs", self.ev.screen(r)
        for rec in ranked:
            r = rec.recipe
            if not self.dims_done.get(r):
                key = tuple(np.sort(rec.fails).tolist())
                if any(len(r.changed(t)) <= 2 for t in self.plateaus.get(key, [])):
                    self.dims_done[r] = set(DIMS)
                    self.pairs_done.add(r)
                    continue
            if len(self.dims_done.get(r, ())) < len(DIMS):
                return "single", rec
            if r not in self.pairs_done:
                return "pairs", rec
        return None

    def _exhausted(self, r: Recipe) -> bool:
        return len(self.dims_done.get(r, ())) >= len(DIMS) and r in self.pairs_done

    def diagnose(self, rec: Record) -> Diagnosis:
        idx = self.ev.screen_idx
        words = self.cap.words[idx].copy()
        bad = np.isin(idx, rec.fails)
        model = words.copy()
        if bad.any():
            model[bad] = self.ev.words(rec.recipe, idx[bad])
        return diagnose(self.dp, self.feats, idx, self.cap.words[idx], model)

    def _try(self, parent: Record, cand: Recipe, dim: str, value) -> Record | None:
        cand = cand.canonical(self.dp)
        if cand == parent.recipe:
            return None
        known = cand in self.ev.records
        if not known and self.ev.screened >= self.cfg.budget:
            return None
        rec = self.ev.screen(cand, self.threshold(), first=parent.fails)
        if not known and cand not in self.seed_names:
            self.parent[cand] = (parent.recipe, dim, value)
            self.depth[cand] = self.depth.get(parent.recipe, 0) + 1
        self.offer(rec)
        return rec

    def expand(self, rec: Record) -> bool:
        """Single changes of ``rec``'s recipe, dimension by dimension in the
        diagnosis's order; the best child wins (steepest descent). A
        dimension the diagnosis singles out strongly is taken at once when
        it fixes at least half the mismatches."""
        r = rec.recipe
        diag = self.diagnose(rec)
        done = self.dims_done.setdefault(r, set())
        best = None
        # the carry and overflow only once no other single change helps: they can
        # mimic a narrower window or kept precision on a few cases
        dims = diag.priorities([d for d in DIMS if d not in done and d not in SINGLE_DIMS])
        dims += [d for d in SINGLE_DIMS if d not in done]
        for dim in dims:
            if dim in SINGLE_DIMS and best is not None:
                break
            self.reason[(r, dim)] = diag.reasons.get(dim, "")
            for v, cand in moves(r, dim, self.dp, up=diag.up, floors=diag.floors):
                child = self._try(rec, cand, dim, v)
                if (child is not None and child.complete and child.score < rec.score
                        and (best is None or child.score < best.score)):
                    best = child
            done.add(dim)
            if self.ev.screened >= self.cfg.budget:
                break
            if best is not None and (best.count == 0 or (
                    diag.strong(dim) and 2 * best.count <= rec.count)):
                break
        if best is None:
            self.plateaus.setdefault(tuple(np.sort(rec.fails).tolist()), []).append(r)
        return best is not None

    def _fixed(self, parent: Record, child: Record | None) -> int:
        """How many of ``parent``'s failing screen cases ``child`` gets right."""
        if child is None or child.error:
            return 0
        if child.complete:
            return len(np.setdiff1d(parent.fails, child.fails))
        first = self.parent.get(child.recipe)
        return (child.fixed or 0) if first and first[0] == parent.recipe else 0

    def expand_pairs(self, rec: Record) -> bool:
        """Pairs of changes built from the values that fixed the most of
        ``rec``'s failing cases."""
        r = rec.recipe
        self.pairs_done.add(r)
        diag = self.diagnose(rec)
        tops = []
        for dim in diag.priorities([d for d in DIMS if d not in SINGLE_DIMS]):
            scored = []
            for v in values(r, dim, self.dp, up=diag.up, floors=diag.floors):
                c = self.ev.records.get(r.set(dim, v).canonical(self.dp))
                fixed = self._fixed(rec, c)
                if c is not None and (fixed or (c.complete and c.score < rec.score)):
                    scored.append((-fixed, c.score, len(scored), v))
            if scored:
                tops.append((dim, [x[-1] for x in sorted(scored)[: self.cfg.pair_values]]))
            if len(tops) >= self.cfg.pair_dims:
                break
        improved = False
        for (d1, vs1), (d2, vs2) in combinations(tops, 2):
            for v1 in vs1:
                for v2 in vs2:
                    child = self._try(rec, r.set(d1, v1).set(d2, v2), f"{d1}+{d2}", (v1, v2))
                    if child is not None and child.complete and child.score < rec.score:
                        improved = True
            if self.ev.screened >= self.cfg.budget:
                break
        return improved

    def run(self) -> FitResult:
        t0 = time.perf_counter()
        cfg = self.cfg
        seed_info = []
        for name, r in self.seeds:
            self.seed_names.setdefault(r, name)
            rec = self.ev.screen(r)
            self.offer(rec)
            seed_info.append({"name": name, "screen_mismatches": rec.count})
        stop = "budget"
        winner = None
        while True:
            beam = self.beam()
            if not beam:
                stop = "no candidate could be built"
                break
            best = beam[0]
            if best.count == 0:
                fails = self.ev.full_fails(best.recipe)
                if len(fails) == 0:
                    winner, stop = best, "fit"
                    break
                self.ev.grow(fails[: cfg.grow])
                continue
            if self.ev.screened >= cfg.budget:
                break
            action = self.next_action()
            if action is None:
                stop = "no change of one or two dimensions improves on the best candidate"
                break
            kind, state = action
            (self.expand if kind == "single" else self.expand_pairs)(state)
        best = winner or self.beam()[0]
        if winner is not None:
            best = self.prune(best)
        return self._result(best, seed_info, stop, time.perf_counter() - t0)

    def prune(self, rec: Record) -> Record:
        """Undo what the capture does not need: each dimension the winner
        changed goes back to its start's value, else to a value of the other
        seeds (the capture's own GPU first), where the whole capture still
        fits. Among models the capture cannot tell apart, the one nearest
        the published profiles is reported."""
        r = rec.recipe
        _, start, _ = self._origin(r)
        others = [start] + [x for _, x in self.seeds if x != start]
        for dim in r.changed(start):
            for src in others:
                cand = r.set(dim, src.get(dim)).canonical(self.dp)
                if cand == r:
                    break
                if len(self.ev.full_fails(cand)) == 0:
                    self.parent.setdefault(cand, (r, f"prune:{dim}", src.get(dim)))
                    r = cand
                    break
        if r == rec.recipe:
            return rec
        got = self.ev.screen(r)
        self.offer(got)
        return got

    # -- the report ----------------------------------------------------------
    def _origin(self, r: Recipe) -> tuple[str, Recipe, list[Step]]:
        steps = []
        while r in self.parent:
            p, dim, v = self.parent[r]
            before = self.ev.records[p].count if p in self.ev.records else -1
            after = self.ev.records[r].count if r in self.ev.records else -1
            if "+" in dim:
                reason = "pair of changes built from the values that fixed most failing cases"
            elif dim.startswith("prune:"):
                reason = "the whole capture fits without the change"
            else:
                reason = self.reason.get((p, dim), "") or "no direct signal: best single change"
            steps.append(Step(dim, v, before, after, reason))
            r = p
        return self.seed_names.get(r, "?"), r, steps[::-1]

    def _case(self, i: int, model_words: dict) -> dict:
        dp, cases = self.dp, self.cap.cases
        fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
        out = {"a": [f"0x{int(w) & fa.word_mask:0{fa.hex_digits}x}" for w in cases.a[i]],
               "b": [f"0x{int(w) & fb.word_mask:0{fb.hex_digits}x}" for w in cases.b[i]],
               "c": f"0x{int(cases.c[i]) & fc.word_mask:0{fc.hex_digits}x}",
               "device": describe_word(dp.d_type, int(self.cap.words[i]))}
        for k, w in model_words.items():
            out[k] = describe_word(dp.d_type, int(w))
        return out

    def _word(self, r: Recipe, i: int) -> int:
        return int(self.ev.words(r, np.array([i]))[0])

    def _shrink(self, r: Recipe, i: int) -> dict | None:
        """The simplest case (by the one shrinker) on which the live oracle
        and candidate ``r`` still differ, from capture case ``i``."""
        if self.oracle is None:
            return None
        try:
            s = minimize(self.dp, self.cap.cases.take([i]), self.oracle, r.model(self.dp).evaluate)
        except ValueError:  # the oracle agrees with the candidate here
            return None
        small = s.case
        fa, fc = get_format(self.dp.a_type), get_format(self.dp.c)
        nz = [k for k in range(self.dp.k) if small.a[0, k] or small.b[0, k]]
        return {"lanes": {str(k): [f"0x{int(small.a[0, k]):0{fa.hex_digits}x}",
                                   f"0x{int(small.b[0, k]):0{fa.hex_digits}x}"] for k in nz},
                "c": f"0x{int(small.c[0]):0{fc.hex_digits}x}",
                "device": describe_word(self.dp.d_type, s.device_word),
                "candidate": describe_word(self.dp.d_type, s.model_word),
                "note": "device word from the live oracle, not the capture"}

    def _fits(self, r: Recipe) -> bool:
        return len(self.ev.full_fails(r.canonical(self.dp))) == 0

    def _edge(self, win: Recipe, dim: str, start: int, bound: int) -> int:
        """The farthest value from ``start`` toward ``bound`` that still fits
        the whole capture, by galloping then bisection (the values that fit
        are taken to form an interval)."""
        sign = 1 if bound > start else -1
        ok, step = start, 1
        while True:
            v = start + sign * step
            if sign * (v - bound) >= 0:
                v = bound
            if not self._fits(win.set(dim, v)):
                bad = v
                break
            ok = v
            if v == bound:
                return ok
            step *= 2
        while abs(bad - ok) > 1:
            mid = (ok + bad) // 2
            if self._fits(win.set(dim, mid)):
                ok = mid
            else:
                bad = mid
        return ok

    def _unpinned(self, win: Recipe) -> dict:
        """What the capture does not pin: for window, floor and kept bits the
        interval of values that also fit (and whether None does), for the
        other dimensions the values that also fit."""
        d = get_format(self.dp.d_type)
        limits = {"window": (0, 56), "floor": (-400, 40), "frac_bits": (1, d.frac_bits)}
        none_as = {"window": 56, "floor": -400, "frac_bits": d.frac_bits}
        out = {}
        for dim in DIMS:
            if dim in limits:
                lo, hi = limits[dim]
                cur = win.get(dim)
                at = none_as[dim] if cur is None else cur
                if cur is None and not self._fits(win.set(dim, at)):
                    out_range = None
                else:
                    out_range = (self._edge(win, dim, at, lo), self._edge(win, dim, at, hi))
                none_fits = cur is None or self._fits(win.set(dim, None))
                wide = out_range is not None and out_range[0] != out_range[1]
                if wide or (cur is not None and none_fits):
                    out[dim] = {"range": list(out_range) if out_range else None,
                                "none_fits": bool(none_fits)}
                continue
            ok = [v for v in values(win, dim, self.dp)
                  if win.set(dim, v).canonical(self.dp) != win and self._fits(win.set(dim, v))]
            if ok:
                out[dim] = ok
        return out

    def _rejections(self, win: Recipe, win_fails: np.ndarray) -> list[Rejection]:
        out = []
        for dim in FAMILY_DIMS:
            for fam, member in family_members(win, dim, self.dp).items():
                fails = self.ev.full_fails(member)
                if len(fails) == 0:
                    continue
                # The best candidate the search tried in this family.
                tried = [rec for rec in self.ev.records.values()
                         if not rec.error and family_of(rec.recipe, dim, self.dp.k) == fam]
                best_t = min(tried, key=lambda x: (not x.complete, x.count, x.order),
                             default=None)
                bt_fails = self.ev.full_fails(best_t.recipe) if best_t else None
                pool = np.setdiff1d(fails, win_fails)
                both = np.intersect1d(pool, bt_fails) if bt_fails is not None else pool
                pick_from = both if len(both) else pool
                i = simplest(self.dp, self.cap.cases, pick_from) if len(pick_from) else None
                case = None
                if i is not None:
                    words = {"candidate": self._word(member, i)}
                    if best_t is not None and best_t.recipe != member:
                        words["best_tried"] = self._word(best_t.recipe, i)
                    case = self._case(int(i), words)
                    if not len(both) and bt_fails is not None:
                        # No one case rules out both: show the best tried's own.
                        own = np.setdiff1d(bt_fails, win_fails)
                        if len(own):
                            j = simplest(self.dp, self.cap.cases, own)
                            case["best_tried_case"] = self._case(
                                int(j), {"best_tried": self._word(best_t.recipe, j)})
                            case["best_tried_case"]["index"] = int(j)
                out.append(Rejection(
                    dim=dim, family=fam, member=member.describe(self.dp),
                    member_mismatches=int(len(fails)),
                    best_tried=best_t.recipe.describe(self.dp) if best_t else None,
                    best_tried_mismatches=int(len(bt_fails)) if bt_fails is not None else None,
                    case_index=None if i is None else int(i), case=case,
                    rules_out_best_tried=bool(i is not None and bt_fails is not None
                                              and i in set(bt_fails.tolist())),
                    shrunk=None if i is None else self._shrink(member, int(i))))
        return out

    def _result(self, best: Record, seed_info, stop, seconds) -> FitResult:
        r = best.recipe
        fails = self.ev.full_fails(r)
        start_name, start, path = self._origin(r)
        for s in seed_info:
            s["mismatches"] = int(len(self.ev.full_fails(
                next(x for n, x in self.seeds if n == s["name"]))))
        top = []
        for cand in [r] + [x.recipe for x in self.beam() if x.recipe != r]:
            n = len(self.ev.full_fails(cand))
            top.append({"description": cand.describe(self.dp), "mismatches": int(n),
                        "recipe": {k: _jsonable(v) for k, v in cand.as_dict().items()}})
        top[1:] = sorted(top[1:], key=lambda x: x["mismatches"])
        unpinned, rejected = {}, []
        if self.cfg.analyse:
            if len(fails) == 0:
                unpinned = self._unpinned(r)
            rejected = self._rejections(r, fails)
        remaining = ""
        if len(fails):
            words = r.model(self.dp).evaluate(self.cap.cases)
            idx = np.arange(len(self.cap))
            remaining = diagnose(self.dp, self.feats, idx, self.cap.words, words).summary()
        params = None if r.acc else r.params(self.dp).as_dict()
        return FitResult(
            label=self.cap.label or self.cap.source, capture=self.cap.source, gpu=self.cap.gpu,
            datapath=self.dp.id, cases=len(self.cap), seeds=seed_info, start=start_name,
            start_mismatches=int(len(self.ev.full_fails(start))), best=r,
            best_description=r.describe(self.dp), mismatches=int(len(fails)), params=params,
            candidates=self.ev.screened, full_evaluations=self.ev.full_evals,
            seconds=seconds + 0.0, stop=stop, path=path, top=top, unpinned=unpinned,
            rejected=rejected, remaining=remaining, changed_from_start=r.changed(start))


def fit(capture: Capture, config: FitConfig | None = None, seeds=None, oracle=None) -> FitResult:
    """Fit one capture (see the module doc)."""
    t0 = time.perf_counter()
    res = Search(capture, config, seeds, oracle).run()
    res.seconds = time.perf_counter() - t0
    return res
