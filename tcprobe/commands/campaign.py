"""``tcprobe validate --targets ...``: a validation campaign over many datapaths."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
from rich.table import Table
from rich.text import Text

from tcprobe.capture.lock import hold_out_folder
from tcprobe.commands import open_device, write_report_set
from tcprobe.console import console, note, say
from tcprobe.console import progress as progress_bar
from tcprobe.models.engine import Speed
from tcprobe.outfiles import make_folder, write_atomic
from tcprobe.validation import campaign as camp


def _table(summary: dict) -> Table:
    dev = summary.get("device") or {}
    t = Table(title=f"campaign on {dev.get('device', '?')}"
              + (" (simulated)" if summary.get("simulated") else ""), title_justify="left")
    t.add_column("datapath")
    t.add_column("model")
    for s in summary["suites"]:
        t.add_column(s, justify="right")
    t.add_column("s", justify="right")
    for row in summary["datapaths"]:
        cells = []
        for s in summary["suites"]:
            c = row["suites"].get(s)
            if not c or c["status"] == "skipped":
                cells.append(Text("skipped", style="dim"))
            elif c["status"] == "error":
                cells.append(Text("error", style="bold red"))
            else:
                cells.append(Text(f"{c['mismatches']:,}", style="red" if c["mismatches"] else "green"))
        t.add_row(Text(row["datapath"]), Text(row.get("model") or "-"), *cells, f"{row['seconds']:.1f}")
    return t


def write_reports(summary: dict, out: Path, json_path: str | None) -> None:
    """summary.json, summary.md and summary.html in ``out`` (and --json), and
    each datapath's page (its reproducers) where the summary links it."""
    from tcprobe.reports.campaign import datapath_html, html, markdown

    write_report_set(out, "summary", summary, markdown, html, json_path)
    for row in summary["datapaths"]:
        if row.get("page"):
            page = out / row["page"]
            make_folder(page.parent, out)  # a planted link is refused, the page renamed in
            write_atomic(page, datapath_html(row, summary))


def finish(summary: dict, out: Path, json_path: str | None) -> None:
    """Write the reports, print the table and the line; exit 1 on a mismatch
    or a datapath the device failed on, 2 when no case ran (naming why)."""
    write_reports(summary, out, json_path)
    console.print(_table(summary))
    caught = summary["mismatched_datapaths"]
    failed = summary.get("error_datapaths") or []
    line = (f"{len(summary['datapaths'])} datapaths, {summary['cases']:,} cases, "
            f"{summary['mismatches']:,} mismatches in {summary['seconds']:.1f} s")
    if caught:
        line += f"; mismatched: {', '.join(caught)}"
    if failed:
        line += f"; failed on the device: {', '.join(failed)}"
    if summary["skipped_datapaths"]:
        line += f"; skipped: {', '.join(summary['skipped_datapaths'])}"
    console.print(Text(line + f"; report {out / 'summary.html'}"), soft_wrap=True)
    if not summary["cases"]:
        raise camp.CampaignError(f"the campaign ran no case: {camp.why_no_case(summary)}")
    for row in summary["datapaths"]:
        for suite, cell in row["suites"].items():
            if cell["status"] == "error":
                say(("failed", "red"), f" {row['datapath']} {suite}: {cell['note']}", err=True)
            elif cell["status"] in ("ok", "mismatch") and cell.get("note"):
                note(f"{row['datapath']} {suite}: {cell['note']}")
    raise SystemExit(summary["exit_status"])


def run_campaign(*, targets_text, device_spec, cases, suite_text, suite_given, preset, lanes_text,
                 shard_text, model_names, seed, out_dir, json_path, chunk, shrink=3,
                 jobs=0) -> None:
    """The campaign form of ``tcprobe validate``: checked before anything is
    written (a campaign that would run no case, the disk room), under the
    --out lock."""
    targets = camp.parse_targets(targets_text)
    lanes = camp.parse_lanes(lanes_text)
    if preset:
        if suite_given:
            raise click.UsageError("give --preset or --suite, not both")
        suites, preset_lanes = camp.PRESETS[preset]
        lanes = lanes if lanes is not None else preset_lanes
    else:
        suites = camp.parse_suite_counts(suite_text, cases)
    shard = camp.parse_shard(shard_text)
    mine = camp.shard_targets(targets, shard)
    if not mine:
        raise camp.CampaignError(f"shard {shard[0]}/{shard[1]} of {len(targets)} datapaths is empty")
    if not suites:
        raise camp.CampaignError("--suite: every suite has 0 cases: nothing to run")
    spec = camp.Spec(mine, tuple(suites), lanes, seed, tuple(model_names), shard, chunk,
                     tuple(t.datapath.id for t in targets))
    families = {t.datapath.family for t in mine}
    device = open_device(device_spec, None if device_spec or len(families) > 1 else families.pop())
    device.speed = Speed.threads(jobs, "always")  # --jobs, as validate takes it
    out = Path(out_dir) if out_dir else Path("out") / "campaign" / (
        f"{targets_text.replace(',', '+')}.s{seed}" + (f".shard{shard[0]}of{shard[1]}"
                                                       if shard != (1, 1) else ""))
    camp.preflight(spec, device)
    camp.check_room(spec, device, out)
    with hold_out_folder(out):
        _run(spec, device, out, mine, suites, json_path, shrink)


def _run(spec, device, out, mine, suites, json_path, shrink) -> None:
    with progress_bar(TextColumn("[bold]{task.description}"), BarColumn(),
                      MofNCompleteColumn()) as bar:
        total = len(mine) * len(suites)
        task = bar.add_task("campaign", total=total)
        sub = bar.add_task("", total=1)
        done = [0]

        def on_piece(piece):
            # a line a finished piece (as fit's a line a capture): piped, the bar shows
            # nothing, and a campaign of hours said only "working (N s)"
            done[0] += 1
            bar.update(task, completed=done[0])
            found = ("" if piece.mismatches is None
                     else f", {piece.mismatches:,} mismatch{'es' if piece.mismatches != 1 else ''}")
            bar.console.print(f"campaign {done[0]}/{total} {piece.datapath} {piece.suite}: "
                              f"{piece.status} ({piece.cases:,} cases{found}, "
                              f"{piece.seconds:.1f} s)", markup=False, highlight=False)

        def progress(label, d, t):
            bar.update(sub, description=label, completed=d, total=t)

        summary = camp.run(spec, device, out, on_piece=on_piece, progress=progress, shrink=shrink)
    finish(summary, out, json_path)
