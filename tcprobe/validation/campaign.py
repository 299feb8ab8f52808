"""Validation campaigns: many datapaths, one after another, into one folder.

A campaign is ``tcprobe validate`` run over a list of datapaths (a target
suite of :mod:`tcprobe.validation.targets`, or ids), each with its own per-suite case
counts. Every (datapath, suite) piece is its own validate run with its own
capture (``DIR/<datapath>/<suite>.tcap``) and its own result
(``DIR/<datapath>/<suite>.json``, written when the piece completes), so a
killed campaign resumes where it stopped: finished pieces are read back,
the interrupted one resumes from its capture, the rest run.

``--shard I/N`` takes every N-th datapath starting at the I-th (1-based), so
an existing scheduler (a Slurm array, a CI matrix, GNU parallel) splits a
campaign over machines; :func:`merge` joins the shards' folders into one
summary.

The write-up's bar (``--preset write-up``): 1,000,000 raw random cases,
200,000 finite-only, edge vectors, and the sparse product-lane suite at 0,
1, 2, 3, 4, 7 and 8 active lanes, per datapath (../shared/seeds/tcgen05-blog.txt).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tcprobe import suites as suites_mod
from tcprobe.devices.base import Device, DeviceError
from tcprobe.models import amd_profiles
from tcprobe.models.datapath import Datapath, DatapathError
from tcprobe.models.model import ModelError
from tcprobe.outfiles import make_folder, refuse_link, write_atomic
from tcprobe.tiles.harness import HarnessError
from tcprobe.validation import validate as v

SCHEMA = "tcprobe/campaign/1"
PIECE_SCHEMA = "tcprobe/campaign-piece/1"

# The write-up's bar per datapath (suite -> cases) and its sparse lane counts.
WRITE_UP_SUITES = (("raw", 1_000_000), ("finite", 200_000), ("edge", 10_000), ("sparse", 70_000))
WRITE_UP_LANES = (0, 1, 2, 3, 4, 7, 8)
PRESETS = {"write-up": (WRITE_UP_SUITES, WRITE_UP_LANES)}

# A target of an architecture is scored, where the device names no GPU (a
# custom sim profile), against the models of that architecture's GPU
# (isa.arch_gpu).


class CampaignError(ValueError):
    """Options that do not make a campaign (targets, suite counts, shards, folders)."""


@dataclass(frozen=True)
class Target:
    """One datapath of a campaign and the GPU its default model belongs to."""

    datapath: Datapath
    gpu: str | None = None


@dataclass(frozen=True)
class Spec:
    """What a campaign runs: targets, (suite, cases) per datapath, lanes, seed."""

    targets: tuple[Target, ...]
    suites: tuple[tuple[str, int], ...]
    lanes: tuple[int, ...] | None = None
    seed: int = 0
    models: tuple[str, ...] = ()
    shard: tuple[int, int] = (1, 1)
    chunk: int = 16384
    whole: tuple[str, ...] = ()  # every datapath of the campaign, before sharding (merge checks)

    def as_dict(self) -> dict:
        return {"targets": [t.datapath.id for t in self.targets],
                "suites": [list(s) for s in self.suites],
                "lanes": None if self.lanes is None else list(self.lanes), "seed": self.seed,
                "models": list(self.models), "shard": f"{self.shard[0]}/{self.shard[1]}",
                "chunk": self.chunk}


# ---------------------------------------------------------------------------
# Options


def parse_targets(text: str) -> tuple[Target, ...]:
    """``blog``, ``mixed``, ``hmma``, ``all`` or a comma list of suites and ids."""
    from tcprobe.schema import check_instruction
    from tcprobe.validation import targets as targets_mod

    out: list[Target] = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        low = tok.lower()
        names = targets_mod.SUITES if low == "all" else (low,) if low in targets_mod.SUITES else None
        if names:
            for t in targets_mod.targets(names):
                out.append(Target(t.datapath, targets_mod.target_gpu(t)))
            continue
        try:
            dp = Datapath.parse(tok)
        except DatapathError as e:
            raise CampaignError(f"--targets: {tok!r} is neither a target suite "
                                f"({', '.join(targets_mod.SUITES)}, all) nor a datapath id: {e}") from None
        try:  # the ISA table is the gate: an instruction it lacks is no target
            if dp.family == "mfma":  # AMD: the v_mfma block (models/isa_amd.py)
                try:
                    amd_profiles.check_datapath(dp)
                except ModelError as e:
                    raise CampaignError(f"--targets {tok}: {e}") from None
            else:
                check_instruction(dp.family, dp.kind, dp.a_type, dp.b_type, dp.c, dp.d_type,
                                  dp.k, dp.scale_type, dp.scale_vec, dp.sparse, dp.saturate,
                                  f"--targets {tok}")
        except ValueError as e:
            raise CampaignError(str(e)) from None
        out.append(Target(dp, None))
    seen, unique = set(), []
    for t in out:  # a datapath listed twice (two write-up runners) runs once
        if t.datapath.id not in seen:
            seen.add(t.datapath.id)
            unique.append(t)
    if not unique:
        raise CampaignError("--targets names no datapath")
    return tuple(unique)


def parse_suite_counts(text: str | None, cases: int | None) -> tuple[tuple[str, int], ...]:
    """``raw=1e6,finite=2e5,edge,sparse``: suites with their own counts; a
    suite without one gets its share (by the suites' weights) of ``cases``
    per datapath. No text: every suite, ``cases`` split by weight."""
    entries = []
    names_none = CampaignError("--suite names no suite (known: "
                               f"{', '.join(suites_mod.SUITES)}; leave it out for every suite)")
    if text is not None and not text.strip():
        raise names_none
    for tok in (t.strip() for t in (text or ",".join(suites_mod.SUITES)).split(",")):
        if not tok:
            continue
        name, eq, count = tok.partition("=")
        name = name.strip().lower()
        if name not in suites_mod.SUITES:
            raise CampaignError(f"--suite: unknown suite {name!r} (known: {', '.join(suites_mod.SUITES)})")
        if any(name == e[0] for e in entries):
            raise CampaignError(f"--suite: {name} is named twice")
        entries.append((name, v.parse_count(count) if eq else None))
    if not entries:
        raise names_none
    free = [s for s, n in entries if n is None]
    if free:
        if cases is None:
            raise CampaignError(f"--suite: give {', '.join(free)} a count (e.g. {free[0]}=1e4) "
                                "or give --cases")
        split = suites_mod.Plan(tuple(free), cases).suite_totals() if cases >= len(free) else {}
        entries = [(s, n if n is not None else split.get(s, 1)) for s, n in entries]
    return tuple((s, n) for s, n in entries if n > 0)


def parse_lanes(text: str | None) -> tuple[int, ...] | None:
    """``0,1,2,3,4,7,8`` -> the active-lane counts of the sparse suite."""
    if text is None:
        return None
    if not text.replace(",", "").strip():  # names nothing: an error, never the default counts
        raise CampaignError("--sparse-lanes names no count (leave it out for the default)")
    try:
        lanes = tuple(sorted({int(t) for t in text.split(",") if t.strip()}))
    except ValueError:
        raise CampaignError(f"--sparse-lanes takes whole numbers (e.g. 0,1,2,3,4,7,8), not {text!r}") from None
    if not lanes or lanes[0] < 0:
        raise CampaignError(f"--sparse-lanes: counts must be 0 or more, not {text!r}")
    return lanes


def parse_shard(text: str | None) -> tuple[int, int]:
    """``I/N`` (1-based) -> (I, N)."""
    if not text:
        return (1, 1)
    i, slash, n = text.partition("/")
    try:
        shard = (int(i), int(n))
    except ValueError:
        shard = None
    if not slash or shard is None or not 1 <= shard[0] <= shard[1]:
        raise CampaignError(f"--shard takes I/N with 1 <= I <= N (e.g. 2/8), not {text!r}")
    return shard


def shard_targets(targets: tuple[Target, ...], shard: tuple[int, int]) -> tuple[Target, ...]:
    """Every N-th target starting at the I-th."""
    i, n = shard
    return tuple(t for j, t in enumerate(targets) if j % n == i - 1)


# ---------------------------------------------------------------------------
# Running


def device_failure(e: BaseException) -> bool:
    """Whether ``e`` is a datapath failing on the device (its launch, its
    kernel, its harness packing): the piece is an error, the campaign goes on."""
    return isinstance(e, (DeviceError, HarnessError)) or (
        isinstance(e, RuntimeError) and type(e).__module__.startswith("tcprobe.devices"))


@dataclass
class Piece:
    """One (datapath, suite) validate run of a campaign."""

    datapath: str
    suite: str
    cases: int
    mismatches: int | None  # of the selected model; None when it did not run
    seconds: float
    model: str | None
    status: str  # ok | mismatch | skipped | error (the device failed on it)
    note: str = ""
    models: dict = field(default_factory=dict)  # model name -> mismatches
    resumed_cases: int = 0
    reproducers: list = field(default_factory=list)  # shrunk mismatches of the selected model

    def as_dict(self) -> dict:
        return {"schema": PIECE_SCHEMA, **self.__dict__}


STATUSES = ("ok", "mismatch", "skipped", "error")


def _piece_dir(out: Path, dp: Datapath) -> Path:
    return out / dp.id


def page_path(datapath_id: str) -> str:
    """The per-datapath report page, relative to the campaign folder."""
    return f"{datapath_id}/report.html"


def models_for(spec: Spec, target: Target, device: Device) -> tuple[list, list[str]]:
    """The models of a target, read as ``validate`` reads them (names, ladder
    fingerprints and fit results): the first must resolve (ModelError), a
    later one that does not is left out with a note."""
    from tcprobe.model_file import resolve_model

    gpu = device.info().get("gpu") or target.gpu
    models, notes = [], []
    for i, name in enumerate(spec.models or ("auto",)):
        try:
            models.append(resolve_model(name, target.datapath, gpu))
        except ModelError as e:
            if i == 0:
                raise
            notes.append(f"model {name} left out: {e}")
    return models, notes


def _lanes(spec: Spec, dp: Datapath) -> tuple[int, ...] | None:
    """The sparse suite's lane counts ``dp`` has (a datapath with fewer lanes
    takes the counts it has); None: every count."""
    if spec.lanes is None:
        return None
    return tuple(m for m in spec.lanes if m <= suites_mod.Ctx.of(dp).max_lanes)


def why_not(spec: Spec, target: Target, device: Device, suite: str) -> str | None:
    """Why the (target, suite) piece would run no case, or None."""
    dp = target.datapath
    if not device.supports(dp):
        return f"{device.name} does not run {dp.id}"
    try:
        models_for(spec, target, device)
    except ModelError as e:
        return str(e)
    if not suites_mod.generators(dp, suite):
        return f"no {suite} generator for {dp.id}"
    if suite == "sparse" and _lanes(spec, dp) == ():
        return f"{dp.id} has none of the lane counts {list(spec.lanes)}"
    return None


def preflight(spec: Spec, device: Device) -> None:
    """Refuse, before anything is written, a campaign that would run no case,
    naming why (a device that runs none of the targets, a model that none of
    them takes, suites without generators)."""
    if not any(device.supports(t.datapath) for t in spec.targets):
        ids = [t.datapath.id for t in spec.targets]
        raise CampaignError(f"the campaign would run no case: {device.name} runs none of its "
                            f"{len(ids)} datapath(s) ({', '.join(ids[:3])}"
                            f"{', ...' if len(ids) > 3 else ''}); choose a device that runs "
                            "them (tcprobe devices lists them) or other --targets")
    reasons: list[str] = []
    for t in spec.targets:
        for suite, _ in spec.suites:
            why = why_not(spec, t, device, suite)
            if why is None:
                return
            if why not in reasons:
                reasons.append(why)
    more = f"; and {len(reasons) - 3} more" if len(reasons) > 3 else ""
    raise CampaignError(f"the campaign would run no case: {'; '.join(reasons[:3])}{more}")


def _read_json(path: Path, what: str, todo: str):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as e:
        raise CampaignError(f"{path}: not {what} ({getattr(e, 'strerror', None) or e}); "
                            f"{todo}") from None


def read_piece(path: Path, dp: Datapath, suite: str) -> Piece:
    """A finished piece's result file, checked (a damaged one is named)."""
    todo = "delete it to run that piece again"
    data = _read_json(path, "a campaign piece result", todo)
    ok = (isinstance(data, dict) and data.pop("schema", None) == PIECE_SCHEMA
          and data.get("datapath") == dp.id and data.get("suite") == suite
          and data.get("status") in STATUSES and set(data) <= {f for f in Piece.__dataclass_fields__})
    try:
        piece = Piece(**data) if ok else None
    except TypeError:
        piece = None
    if piece is None or not all(isinstance(x, int) and not isinstance(x, bool)
                                for x in (piece.cases, piece.mismatches or 0)):
        raise CampaignError(f"{path}: not the result of the {dp.id} {suite} piece; {todo}")
    return piece


def _read_as_measured(spec: Spec, device: Device, dp: Datapath) -> str:
    """A sim device checked against a ladder fingerprint runs its cases
    through the layout the ladder measured (as ``validate`` does); the note."""
    from tcprobe.model_file import fingerprint_harness

    if not hasattr(device, "read_through"):
        return ""
    for name in spec.models:
        h = fingerprint_harness(name, dp)
        if h is not None:
            device.read_through(dp, h)
            return f"cases run through the layout measured in {name}"
    return ""


def run_piece(spec: Spec, target: Target, device: Device, suite: str, count: int, out: Path,
              progress: Callable[[int, int], None] | None = None, shrink: int = 3) -> Piece:
    """Run (or read back, or resume) one piece and write its result file; up
    to ``shrink`` mismatches of the selected model are shrunk to reproducers
    (``tcprobe run-case`` lines). A device failure makes an error piece."""
    dp = target.datapath
    folder = _piece_dir(out, dp)
    done_file = folder / f"{suite}.json"
    if done_file.exists():
        return read_piece(done_file, dp, suite)
    if not device.supports(dp):
        return Piece(dp.id, suite, 0, None, 0.0, None, "skipped", f"{device.name} does not run {dp.id}")
    try:
        models, notes = models_for(spec, target, device)
    except ModelError as e:
        return Piece(dp.id, suite, 0, None, 0.0, None, "skipped", str(e))
    if not suites_mod.generators(dp, suite):
        return Piece(dp.id, suite, 0, None, 0.0, models[0].name, "skipped",
                     f"no {suite} generator for {dp.id}")
    lanes = _lanes(spec, dp) if suite == "sparse" else None
    if lanes == ():
        return Piece(dp.id, suite, 0, None, 0.0, models[0].name, "skipped",
                     f"{dp.id} has none of the lane counts {list(spec.lanes)}")
    plan = suites_mod.Plan((suite,), count, spec.chunk, lanes=lanes)
    make_folder(folder, out)  # a link planted for the datapath's folder is refused
    cap = folder / f"{suite}.tcap"
    notes = [n for n in [_read_as_measured(spec, device, dp), *notes] if n]
    try:
        result = v.run(dp, device, models, plan, spec.seed, capture=cap, resume=cap.exists(),
                       progress=progress)
        primary = result.tallies[0].total
        if primary and shrink:
            v.make_reproducers(result, device, per_model=shrink)
    except Exception as e:
        if not device_failure(e):
            raise
        return Piece(dp.id, suite, 0, None, 0.0, models[0].name, "error",
                     f"{device.name} failed on {dp.id}: {e}")
    if result.set_aside:  # nothing captured is lost: say where it went
        notes.append(f"the capture was damaged; what followed the damage is kept in "
                     f"{result.set_aside}")
    piece = Piece(dp.id, suite, result.cases_run, primary, round(result.seconds, 3),
                  models[0].name, "mismatch" if primary else "ok", "; ".join(notes),
                  models={t.model.name: t.total for t in result.tallies},
                  resumed_cases=result.resumed_cases,
                  reproducers=[{**r, "suite": suite} for r in
                               result.reproducers.get(models[0].name, [])])
    if result.complete:
        write_atomic(done_file, json.dumps(piece.as_dict(), indent=2) + "\n")
    return piece


def room_needed(spec: Spec, device: Device, out: Path) -> int:
    """Bytes the captures the campaign has still to write take."""
    from tcprobe.capture.lock import capture_bytes

    need = 0
    for t in spec.targets:
        if not device.supports(t.datapath):
            continue
        folder = _piece_dir(out, t.datapath)
        for suite, count in spec.suites:
            if (folder / f"{suite}.json").exists():
                continue
            n = capture_bytes(t.datapath, count, spec.chunk)
            cap = folder / f"{suite}.tcap"
            if cap.is_file():
                n -= cap.stat().st_size
            need += max(0, n)
    return need


def check_room(spec: Spec, device: Device, out: Path) -> None:
    """Refuse, before writing, a campaign whose captures the disk cannot hold."""
    from tcprobe.capture.lock import size_text

    need = room_needed(spec, device, out)
    where = Path(out)
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if need > free:
        raise CampaignError(f"the campaign's captures need {size_text(need)} more and {where} "
                            f"has {size_text(free)} free: ask for fewer cases, free some space "
                            "or choose another --out")


def run(spec: Spec, device: Device, out: Path,
        on_piece: Callable[[Piece], None] | None = None,
        progress: Callable[[str, int, int], None] | None = None, shrink: int = 3) -> dict:
    """Run every piece of the campaign into ``out`` and return its summary
    (``shrink``: reproducers a mismatched piece keeps)."""
    out.mkdir(parents=True, exist_ok=True)
    meta = out / "campaign.json"
    want = {"schema": SCHEMA, "spec": spec.as_dict(), "device": device.name}
    refuse_link(meta)
    if os.path.lexists(meta):
        have = _read_json(meta, "a campaign record", "delete it (finished pieces are kept and "
                          "read back) or choose another --out")
        if not isinstance(have, dict) or have.get("schema") != SCHEMA:
            raise CampaignError(f"{meta}: not a campaign record; delete it (finished pieces are "
                                "kept and read back) or choose another --out")
        if have.get("spec") != want["spec"] or have.get("device") != device.name:
            raise CampaignError(f"{out} holds a campaign with other options or another device; "
                                "use the same options to resume it, or another --out")
    else:
        write_atomic(meta, json.dumps(want, indent=2) + "\n")
    t0 = time.perf_counter()
    pieces = []
    for target in spec.targets:
        for suite, count in spec.suites:
            label = f"{target.datapath.id} {suite}"
            piece = run_piece(spec, target, device, suite, count, out,
                              None if progress is None else (lambda d, t, _l=label: progress(_l, d, t)),
                              shrink=shrink)
            pieces.append(piece)
            if on_piece:
                on_piece(piece)
    whole = list(spec.whole) or [t.datapath.id for t in spec.targets]
    summary = summarize(pieces, device.info(), spec.as_dict(), time.perf_counter() - t0, whole)
    write_atomic(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    return summary


def summarize(pieces: list[Piece], device: dict, spec: dict, seconds: float,
              whole: list[str] | None = None) -> dict:
    """The campaign summary: a ``datapaths`` list with per-suite figures;
    ``whole``: every datapath of the campaign (the shards' union)."""
    by_dp: dict[str, dict] = {}
    suites: list[str] = []
    for p in pieces:
        if p.suite not in suites:
            suites.append(p.suite)
        row = by_dp.setdefault(p.datapath, {"datapath": p.datapath, "cases": 0, "mismatches": 0,
                                            "seconds": 0.0, "model": p.model, "status": "ok",
                                            "suites": {}, "reproducers": [],
                                            "page": page_path(p.datapath)})
        row["suites"][p.suite] = {"cases": p.cases, "mismatches": p.mismatches,
                                  "status": p.status, "note": p.note, "seconds": p.seconds,
                                  "reproducers": list(p.reproducers)}
        row["reproducers"] += p.reproducers
        row["cases"] += p.cases
        row["mismatches"] += p.mismatches or 0
        row["seconds"] = round(row["seconds"] + p.seconds, 3)
        row["model"] = row["model"] or p.model
    for row in by_dp.values():
        st = [s["status"] for s in row["suites"].values()]
        row["status"] = next((x for x in ("mismatch", "error", "ok") if x in st), "skipped")
    rows = list(by_dp.values())
    caught = [r["datapath"] for r in rows if r["status"] == "mismatch"]
    failed = [r["datapath"] for r in rows
              if any(c["status"] == "error" for c in r["suites"].values())]
    return {"schema": SCHEMA, "device": device, "simulated": bool(device.get("simulated", False)),
            "spec": spec, "campaign_targets": list(whole or by_dp), "suites": suites,
            "datapaths": rows,
            "cases": sum(r["cases"] for r in rows), "mismatches": sum(r["mismatches"] for r in rows),
            "mismatched_datapaths": caught, "error_datapaths": failed,
            "skipped_datapaths": [r["datapath"] for r in rows if r["status"] == "skipped"],
            "seconds": round(seconds, 3), "exit_status": 1 if caught or failed else 0}


def why_no_case(summary: dict) -> str:
    """Why a summary holds no case: the notes of its pieces, each once."""
    notes: list[str] = []
    for row in summary["datapaths"]:
        for cell in row["suites"].values():
            if cell.get("note") and cell["note"] not in notes:
                notes.append(cell["note"])
    more = f"; and {len(notes) - 3} more" if len(notes) > 3 else ""
    return "; ".join(notes[:3]) + more if notes else "every piece was skipped"
