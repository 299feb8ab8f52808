"""Validation at scale: generate cases, run them on a device, capture, score.

:func:`run` is the whole of ``tcprobe validate`` below the command line:

    plan (suites, cases, chunk) -> for each chunk: generate -> device.run
    -> append to the capture -> score every model -> tally
    then: shrink a few mismatches per model -> reproducers

A run resumed from a capture first re-scores every chunk the capture holds
(the device words come from the file, the device is not asked again) and
then goes on with the next chunk, so its counts equal an uninterrupted
run's. Each chunk is the same whatever came before it (see
:class:`tcprobe.suites.Plan`), so the chunks a resumed run makes are the
ones the first run would have made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcprobe import suites as suites_mod
from tcprobe.capture import CaptureError, binary
from tcprobe.devices.base import Device
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import Speed
from tcprobe.models.formats import Class, decode, get_format
from tcprobe.models.model import Model
from tcprobe.models.words import distance
from tcprobe.outfiles import refuse_link
from tcprobe.validation.counts import parse_count  # noqa: F401  (the one count parser)

POINTS_PER_MODEL = 4000  # mismatches kept per model for the chart, spread over the run


class ValidateError(ValueError):
    """A run that cannot start or continue (a capture that does not match)."""


# ---------------------------------------------------------------------------
# Tallies.


@dataclass
class Example:
    """The first mismatch of one generator against one model."""

    index: int  # position in the run
    generator: str
    case: Cases  # one case
    device_word: int
    model_word: int


@dataclass
class Tally:
    """Mismatches of one model, by suite and by generator."""

    model: Model
    by_suite: dict = field(default_factory=dict)  # suite -> mismatches
    first_by_suite: dict = field(default_factory=dict)  # suite -> first run position
    first_in_suite: dict = field(default_factory=dict)  # suite -> first index among its cases
    by_generator: dict = field(default_factory=dict)
    examples: dict = field(default_factory=dict)  # generator key -> Example
    points: list = field(default_factory=list)  # (spread, ulps or None, suite)
    total: int = 0
    first: int | None = None

    def caught_by(self) -> list[str]:
        """Suites that found a mismatch, the earliest first."""
        return sorted(self.first_by_suite, key=self.first_by_suite.get)


def exponent_spread(dp: Datapath, cases: Cases) -> np.ndarray:
    """Per case: largest minus smallest raw exponent among the finite nonzero
    terms (products A*B and C); 0 with fewer than two."""
    a_words, b_words = cases.masked()
    da, db = decode(dp.a_type, a_words), decode(dp.b_type, b_words)
    dc = decode(dp.c, cases.c)
    live = (da.cls == Class.FINITE) & (db.cls == Class.FINITE)
    t = np.where(live, da.raw + db.raw, 0)
    c_live = dc.cls == Class.FINITE
    hi = np.where(live, t, -(1 << 40)).max(axis=1)
    lo = np.where(live, t, 1 << 40).min(axis=1)
    hi = np.where(c_live, np.maximum(hi, dc.raw), hi)
    lo = np.where(c_live, np.minimum(lo, dc.raw), lo)
    n_terms = live.sum(axis=1) + c_live
    return np.where(n_terms >= 2, hi - lo, 0)


@dataclass
class Result:
    """Everything a validate run found (the JSON report is its as_dict)."""

    datapath: Datapath
    device: dict
    seed: int
    plan: suites_mod.Plan
    generators: list
    capture: str | None
    tallies: list
    suite_cases: dict
    generator_cases: dict
    cases_run: int = 0
    resumed_cases: int = 0
    seconds: float = 0.0
    complete: bool = False
    reproducers: dict = field(default_factory=dict)  # model name -> list of dicts
    set_aside: str | None = None  # where a resume kept bytes after a damaged chunk

    @property
    def primary(self) -> Tally:
        return self.tallies[0]


def _score_chunk(dp: Datapath, tallies: list, offset: int, cases: Cases, words: np.ndarray,
                 codes: np.ndarray, keys: list, local: np.ndarray, result: Result,
                 quota: int, speed: Speed) -> None:
    """Tally one chunk: ``offset`` is its first case's run position, ``local``
    each case's index among its suite's cases; up to ``quota`` mismatches
    per model, evenly spread over the chunk's, are kept for the chart."""
    gen_count = np.bincount(codes, minlength=len(keys))
    for g, n in enumerate(gen_count):
        if n:
            key = keys[g]
            result.generator_cases[key] = result.generator_cases.get(key, 0) + int(n)
            s = key.split("/")[0]
            result.suite_cases[s] = result.suite_cases.get(s, 0) + int(n)
    fd = get_format(dp.d_type)
    spread = None
    for tally in tallies:
        mw = tally.model.evaluate(cases, speed)
        bad = np.flatnonzero(mw != words)
        if bad.size == 0:
            continue
        tally.total += int(bad.size)
        if tally.first is None:
            tally.first = offset + int(bad[0])
        bad_codes = codes[bad]
        for g in np.unique(bad_codes):
            key = keys[int(g)]
            s = key.split("/")[0]
            sel = bad[bad_codes == g]
            tally.by_generator[key] = tally.by_generator.get(key, 0) + int(sel.size)
            tally.by_suite[s] = tally.by_suite.get(s, 0) + int(sel.size)
            first = offset + int(sel[0])
            if s not in tally.first_by_suite or first < tally.first_by_suite[s]:
                tally.first_by_suite[s] = first
                tally.first_in_suite[s] = int(local[sel[0]])
            if key not in tally.examples:
                i = int(sel[0])
                tally.examples[key] = Example(first, key, cases.take([i]), int(words[i]), int(mw[i]))
        room = min(quota, POINTS_PER_MODEL - len(tally.points))
        if room > 0:
            pick = bad[np.unique(np.linspace(0, bad.size - 1, min(room, bad.size)).astype(np.int64))]
            if spread is None:
                spread = exponent_spread(dp, cases)
            ulps, nan_model, nan_device = distance(fd, mw[pick], words[pick])
            nan = nan_model | nan_device
            for i, u, isnan in zip(pick, ulps, nan, strict=True):
                tally.points.append((int(spread[i]), None if isnan else int(u),
                                     keys[int(codes[i])].split("/")[0]))


def plan_header(plan: suites_mod.Plan) -> dict:
    """What a capture records of its plan (and a resume must match)."""
    out = {"cases": plan.cases, "chunk": plan.chunk, "suites": list(plan.suites)}
    if plan.lanes is not None:
        out["lanes"] = list(plan.lanes)
    return out


def _check_header(head: dict, dp: Datapath, seed: int, plan: suites_mod.Plan, keys: list,
                  path: Path, device: Device) -> None:
    if (head.get("device") or {}).get("device") != device.name:
        raise ValidateError(f"{path} holds words of {(head.get('device') or {}).get('device')!r}, "
                            f"not of {device.name!r}; resume it on the same device")
    want = {"datapath": dp.id, "seed": seed, "suites": list(plan.suites),
            "generators": keys,
            "plan": plan_header(plan)}
    for k, v in want.items():
        if head.get(k) != v:
            raise ValidateError(f"{path} was started with {k} = {head.get(k)!r}, this run has "
                                f"{v!r}; resume it with the same options (or use a new --out)")


def run(dp: Datapath, device: Device, models: list[Model], plan: suites_mod.Plan, seed: int, *,
        capture: str | Path | None, resume: bool = False,
        progress: Callable[[int, int], None] | None = None, speed: Speed | None = None) -> Result:
    """Run ``plan`` on ``device``, stream it to ``capture`` and score ``models``
    (the first is the selected one), each run at ``speed`` (default: the
    engine's fast path always, on the device's threads). ``progress(done, total)`` is called after
    every chunk. KeyboardInterrupt leaves every written chunk in the capture."""
    if not models:
        raise ValidateError("no model to score")
    if not device.supports(dp):
        raise ValidateError(f"{device.name} does not run {dp.id}")
    keys = suites_mod.generator_keys(dp, plan.suites)
    if len(keys) > 255:
        raise ValidateError("too many generators for one capture (255 at most)")
    result = Result(dp, device.info(), seed, plan, keys, str(capture) if capture else None,
                    [Tally(m) for m in models], {}, {})
    t0 = time.perf_counter()
    quota = -(-POINTS_PER_MODEL // plan.n_chunks)  # chart points per chunk, per model
    speed = speed or Speed("always", device.speed.jobs)  # every chunk runs the same configurations
    writer = None
    start_chunk = 0
    path = Path(capture) if capture else None
    if path is not None:
        refuse_link(path)  # a capture is never read or written through a planted link
    try:
        if path is not None and resume and path.exists() and path.stat().st_size > 0:
            def refuse_unless_same_run(scan):  # before the file is touched
                _check_header(scan.header, dp, seed, plan, keys, path, device)
                sizes = scan.chunk_sizes
                if len(sizes) > plan.n_chunks or sizes != [plan.chunk_size(i)
                                                           for i in range(len(sizes))]:
                    raise ValidateError(f"{path} holds {sum(sizes):,} cases in {len(sizes)} "
                                        "chunks, which is not a prefix of this plan")
            try:
                writer, scan = binary.Writer.reopen(path, check=refuse_unless_same_run)
            except CaptureError as e:
                raise ValidateError(str(e)) from None
            offset = 0
            for rec in scan.iter_chunks():
                cases, words, codes = binary.from_records(dp, rec)
                _score_chunk(dp, result.tallies, offset, cases, words, codes, keys,
                             suites_mod.suite_positions(plan, start_chunk), result, quota, speed)
                offset += len(words)
                start_chunk += 1
                if progress:
                    progress(offset, plan.cases)
            result.resumed_cases = offset
            result.set_aside = scan.set_aside
        elif path is not None:
            if path.exists() and not resume:
                empty = path.stat().st_size == 0
                raise ValidateError(f"{path} exists{' but is empty (0 bytes)' if empty else ''}: "
                                    "add --resume to continue it"
                                    f"{' (it starts over)' if empty else ''}, or choose "
                                    "another --out")
            header = binary.make_header(
                dp, device=device.info(), seed=seed, suites=list(plan.suites), generators=keys,
                plan=plan_header(plan))
            writer = binary.Writer(path, header)
        done = result.resumed_cases
        for i in range(start_chunk, plan.n_chunks):
            cases, codes, _ = suites_mod.make_chunk(dp, plan, seed, i)
            words = np.asarray(device.run(dp, cases)).astype(get_format(dp.d_type).dtype, copy=False)
            if writer is not None:
                writer.append(cases, words, codes)
            _score_chunk(dp, result.tallies, done, cases, words, codes, keys,
                         suites_mod.suite_positions(plan, i), result, quota, speed)
            done += len(words)
            if progress:
                progress(done, plan.cases)
        result.complete = True
    finally:
        if writer is not None:
            writer.close()
        result.cases_run = sum(result.suite_cases.values())
        result.seconds = time.perf_counter() - t0
    return result


def make_reproducers(result: Result, device: Device, per_model: int = 5,
                     max_rounds: int = 200) -> None:
    """Shrink up to ``per_model`` mismatches of every model (the first of
    each generator, earliest first) and store them as reproducers."""
    from tcprobe.validation.shrink import NotAlone, Shrunk, active_lanes, reproducer, shrink

    for tally in result.tallies:
        chosen = sorted(tally.examples.values(), key=lambda e: e.index)[:per_model]
        out = []
        for ex in chosen:
            alone = None
            try:
                shrunk = shrink(result.datapath, device, tally.model, ex.case,
                                max_rounds=max_rounds)
            except NotAlone:  # the device's word depends on the batch (MMA-Sim's CDNA1 NaNs)
                lanes = active_lanes(ex.case)
                shrunk = Shrunk(ex.case, ex.device_word, ex.model_word, 0, lanes, lanes)
                alone = ("does not mismatch when run alone: the device's word for this case "
                         "depends on the cases run beside it; not shrunk")
            rep = reproducer(result.datapath, device, tally.model, shrunk)
            if alone:
                rep["note"] = alone
            rep.update({"generator": ex.generator, "case": ex.index,
                        "original": {"device": f"{ex.device_word:#x}",
                                     "model": f"{ex.model_word:#x}"}})
            out.append(rep)
        result.reproducers[tally.model.name] = out
