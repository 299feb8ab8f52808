"""Validation campaigns: many datapaths, one after another, into one folder.

A campaign is ``tcprobe validate`` run over a list of datapaths (a target
suite of :mod:`tcprobe.targets`, or ids), each with its own per-suite case
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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tcprobe import suites as suites_mod
from tcprobe import validate as v
from tcprobe.devices.base import Device
from tcprobe.models import registry
from tcprobe.models.datapath import Datapath, DatapathError
from tcprobe.models.model import ModelError

SCHEMA = "tcprobe/campaign/1"
PIECE_SCHEMA = "tcprobe/campaign-piece/1"

# The write-up's bar per datapath (suite -> cases) and its sparse lane counts.
WRITE_UP_SUITES = (("raw", 1_000_000), ("finite", 200_000), ("edge", 10_000), ("sparse", 70_000))
WRITE_UP_LANES = (0, 1, 2, 3, 4, 7, 8)
PRESETS = {"write-up": (WRITE_UP_SUITES, WRITE_UP_LANES)}

# The GPU whose models a target of each architecture is scored against when the
# device does not name one (a custom sim profile): the modeled GPU of that arch.
ARCH_GPU = {"sm_75": "T4", "sm_120a": "RTX5090", "sm_80": "A100", "sm_89": "Ada", "sm_90a": "H100", "sm_100a": "B200"}


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
    from tcprobe import targets as targets_mod

    out: list[Target] = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        low = tok.lower()
        names = targets_mod.SUITES if low == "all" else (low,) if low in targets_mod.SUITES else None
        if names:
            for t in targets_mod.targets(names):
                out.append(Target(t.datapath, ARCH_GPU.get(t.arch)))
            continue
        try:
            dp = Datapath.parse(tok)
        except DatapathError as e:
            raise CampaignError(f"--targets: {tok!r} is neither a target suite "
                                f"({', '.join(targets_mod.SUITES)}, all) nor a datapath id: {e}") from None
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
    if text is None or not text.strip():
        return None
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


@dataclass
class Piece:
    """One (datapath, suite) validate run of a campaign."""

    datapath: str
    suite: str
    cases: int
    mismatches: int | None  # of the selected model; None when it did not run
    seconds: float
    model: str | None
    status: str  # ok | mismatch | skipped
    note: str = ""
    models: dict = field(default_factory=dict)  # model name -> mismatches
    resumed_cases: int = 0
    reproducers: list = field(default_factory=list)  # shrunk mismatches of the selected model

    def as_dict(self) -> dict:
        return {"schema": PIECE_SCHEMA, **self.__dict__}


def _piece_dir(out: Path, dp: Datapath) -> Path:
    return out / dp.id


def page_path(datapath_id: str) -> str:
    """The per-datapath report page, relative to the campaign folder."""
    return f"{datapath_id}/report.html"


def _models_for(spec: Spec, target: Target, device: Device) -> list:
    gpu = device.info().get("gpu") or target.gpu
    names = spec.models or ("auto",)
    return [registry.resolve(n, target.datapath, gpu) for n in names]


def run_piece(spec: Spec, target: Target, device: Device, suite: str, count: int, out: Path,
              progress: Callable[[int, int], None] | None = None, shrink: int = 3) -> Piece:
    """Run (or read back, or resume) one piece and write its result file; up
    to ``shrink`` mismatches of the selected model are shrunk to reproducers
    (``tcprobe run-case`` lines)."""
    dp = target.datapath
    folder = _piece_dir(out, dp)
    done_file = folder / f"{suite}.json"
    if done_file.exists():
        data = json.loads(done_file.read_text())
        data.pop("schema", None)
        return Piece(**data)
    if not device.supports(dp):
        return Piece(dp.id, suite, 0, None, 0.0, None, "skipped", f"{device.name} does not run {dp.id}")
    try:
        models = _models_for(spec, target, device)
    except ModelError as e:
        return Piece(dp.id, suite, 0, None, 0.0, None, "skipped", str(e))
    if not suites_mod.generators(dp, suite):
        return Piece(dp.id, suite, 0, None, 0.0, models[0].name, "skipped",
                     f"no {suite} generator for {dp.id}")
    lanes = None
    if suite == "sparse" and spec.lanes is not None:
        # a datapath with fewer lanes takes the counts it has
        lanes = tuple(m for m in spec.lanes if m <= suites_mod.Ctx.of(dp).max_lanes)
        if not lanes:
            return Piece(dp.id, suite, 0, None, 0.0, models[0].name, "skipped",
                         f"{dp.id} has none of the lane counts {list(spec.lanes)}")
    plan = suites_mod.Plan((suite,), count, spec.chunk, lanes=lanes)
    folder.mkdir(parents=True, exist_ok=True)
    cap = folder / f"{suite}.tcap"
    result = v.run(dp, device, models, plan, spec.seed, capture=cap, resume=cap.exists(),
                   progress=progress)
    primary = result.tallies[0].total
    if primary and shrink:
        v.make_reproducers(result, device, per_model=shrink)
    piece = Piece(dp.id, suite, result.cases_run, primary, round(result.seconds, 3),
                  models[0].name, "mismatch" if primary else "ok",
                  models={t.model.name: t.total for t in result.tallies},
                  resumed_cases=result.resumed_cases,
                  reproducers=[{**r, "suite": suite} for r in
                               result.reproducers.get(models[0].name, [])])
    if result.complete:
        tmp = done_file.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(piece.as_dict(), indent=2) + "\n")
        tmp.replace(done_file)
    return piece


def run(spec: Spec, device: Device, out: Path,
        on_piece: Callable[[Piece], None] | None = None,
        progress: Callable[[str, int, int], None] | None = None, shrink: int = 3) -> dict:
    """Run every piece of the campaign into ``out`` and return its summary
    (``shrink``: reproducers a mismatched piece keeps)."""
    out.mkdir(parents=True, exist_ok=True)
    meta = out / "campaign.json"
    want = {"schema": SCHEMA, "spec": spec.as_dict(), "device": device.name}
    if meta.exists():
        have = json.loads(meta.read_text())
        if have.get("spec") != want["spec"] or have.get("device") != device.name:
            raise CampaignError(f"{out} holds a campaign with other options or another device; "
                                "use the same options to resume it, or another --out")
    else:
        meta.write_text(json.dumps(want, indent=2) + "\n")
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
    summary = summarize(pieces, device.info(), spec.as_dict(), time.perf_counter() - t0)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def summarize(pieces: list[Piece], device: dict, spec: dict | list, seconds: float) -> dict:
    """The campaign summary: a ``datapaths`` list with per-suite figures."""
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
        row["status"] = ("mismatch" if "mismatch" in st else "ok" if "ok" in st else "skipped")
    rows = list(by_dp.values())
    caught = [r["datapath"] for r in rows if r["status"] == "mismatch"]
    return {"schema": SCHEMA, "device": device, "simulated": bool(device.get("simulated", False)),
            "spec": spec, "suites": suites, "datapaths": rows,
            "cases": sum(r["cases"] for r in rows), "mismatches": sum(r["mismatches"] for r in rows),
            "mismatched_datapaths": caught,
            "skipped_datapaths": [r["datapath"] for r in rows if r["status"] == "skipped"],
            "seconds": round(seconds, 3), "exit_status": 1 if caught else 0}


def merge(folders: list[Path]) -> dict:
    """Join the summaries of campaign folders (shards of one campaign, or any)."""
    pieces, devices, specs, seconds = [], [], [], 0.0
    for f in folders:
        s = f / "summary.json"
        if not s.exists():
            raise CampaignError(f"{f} has no summary.json (is it a campaign folder that finished?)")
        try:
            data = json.loads(s.read_text())
        except json.JSONDecodeError as e:
            raise CampaignError(f"{s}: not a campaign summary ({e})") from None
        if data.get("schema") != SCHEMA:
            raise CampaignError(f"{s}: not a campaign summary (schema {data.get('schema')!r})")
        devices.append(data.get("device") or {})
        specs.append(data.get("spec"))
        seconds += float(data.get("seconds") or 0)
        for row in data["datapaths"]:
            for suite, cell in row["suites"].items():
                pieces.append(Piece(row["datapath"], suite, cell["cases"], cell["mismatches"],
                                    cell.get("seconds", 0.0), row.get("model"), cell["status"],
                                    cell.get("note", ""),
                                    reproducers=list(cell.get("reproducers", []))))
    names = {d.get("device") for d in devices}
    device = devices[0] if len(names) == 1 else {"device": ", ".join(sorted(map(str, names))),
                                                 "simulated": all(d.get("simulated") for d in devices)}
    return summarize(pieces, device, specs, seconds)
