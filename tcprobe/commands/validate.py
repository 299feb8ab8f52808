"""tcprobe validate: score models against a device on many generated cases."""

from __future__ import annotations

import re
import time
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from tcprobe import suites as suites_mod
from tcprobe.capture.lock import check_room, hold_out_folder
from tcprobe.commands import write_report_set
from tcprobe.commands.choose import open_and_choose
from tcprobe.commands.options import (
    SEED,
    Count,
    Names,
    family_option,
    json_option,
    named_path,
    needs,
)
from tcprobe.console import console, note, plain, say
from tcprobe.console import progress as progress_bar
from tcprobe.model_file import resolve_model
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import Speed
from tcprobe.models.model import ModelError
from tcprobe.names import once
from tcprobe.outfiles import refuse_inside
from tcprobe.validation import campaign as camp
from tcprobe.validation import validate as v


def resolve_models(names, dp: Datapath, gpu: str | None) -> list:
    from tcprobe.model_file import is_model_file
    from tcprobe.models import registry

    for name in names:  # a misspelt name is bad input; a model that does not apply is a note
        if not is_model_file(name):
            registry.check_name(name)
    models = []
    for i, name in enumerate(names):
        try:
            models.append(resolve_model(name, dp, gpu))
        except ModelError as e:
            if i == 0:
                raise
            note(f"skipping model {name}: {e}")
    return models


def suite_table(rep: dict) -> Table:
    t = Table(title=plain(f"{rep['datapath']} on {rep['device'].get('device', '?')}"
                          + (" (simulated)" if rep["simulated"] else "")), title_justify="left")
    t.add_column("suite")
    t.add_column("cases", justify="right")
    for m in rep["models"]:
        t.add_column(plain(f"{m['name']}{' *' if m['selected'] else ''}"), justify="right")
    for s in rep["suites"]:
        cells = []
        for m in rep["models"]:
            n = m["by_suite"][s]["mismatches"]
            cells.append(f"[{'red' if n else 'green'}]{n:,}[/]")
        t.add_row(s, f"{rep['suite_cases'].get(s, 0):,}", *cells)
    t.add_section()
    t.add_row("[b]all[/]", f"[b]{rep['cases']['run']:,}[/]",
              *[f"[b]{m['mismatches']:,}[/]" for m in rep["models"]])
    return t


def default_out(dp: Datapath, device_name: str, seed: int) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", device_name)
    return Path("out") / "validate" / f"{dp.id}.{safe}.s{seed}"


def next_free(out: Path) -> Path:
    """``out.run2``, ``out.run3``, ...: the first that holds no capture."""
    n = 2
    while (out.parent / f"{out.name}.run{n}" / "capture.tcap").exists():
        n += 1
    return out.parent / f"{out.name}.run{n}"


@click.command("validate")
@click.option("--format", "fmt", help="Input format (bf16, f16, tf32, e4m3, ...).")
@family_option("Instruction family (default: the newest the device runs for the format, "
               "as in ladder).")
@click.option("--datapath", help="A full datapath id instead of --format/--instr "
                                 "(e.g. tcgen05.f8f6f4.e4m3xe2m1.f32.k32).")
@click.option("--device", "device_spec", help="Device to validate (sim:b200, ...). "
                                               "Default: the GPU, else a sim device.")
@click.option("--cases", "n_cases", default="100000", show_default=True, type=Count(),
              help="Cases to run: 1e6, 1_000_000, 1000000 or 100k.")
@click.option("--model", "model_names", multiple=True,
              help="Model to score (repeatable): a name, or PATH.json, a ladder fingerprint "
                   "(tcprobe ladder --json) or a fit result (tcprobe fit --json); the first is "
                   "the selected one, whose mismatches make the exit status 1. Default: auto, "
                   "then ieee (auto alone for integer and block-scaled datapaths).")
@click.option("--suite", "suite_text", default=",".join(suites_mod.SUITES), show_default=True,
              help="Comma-separated suites.")
@click.option("--seed", default=0, show_default=True, type=SEED, help="Seed of every generator.")
@json_option("Also write the JSON report here")
@click.option("--out", "out_dir", callback=named_path, type=click.Path(file_okay=False),
              help="Folder for capture.tcap and report.{json,md,html} "
                   "(default out/validate/DATAPATH.DEVICE.sSEED).")
@click.option("--resume", is_flag=True, help="Continue the capture in --out (re-scores what "
                                             "it holds, then runs the rest).")
@click.option("--jobs", type=click.IntRange(0, 1024), default=0,
              help="Threads for the models (0, the default: every core).")
@click.option("--shrink", "shrink_n", default=5, show_default=True, type=click.IntRange(0, 1000),
              help="Mismatches shrunk to reproducers per model.")
@click.option("--chunk", default=16384, show_default=True, hidden=True,
              type=click.IntRange(1, 1 << 22), help="Cases per capture chunk.")
@click.option("--targets", "targets_text",
              help="A campaign: one datapath after another into one folder (blog, mixed, hmma, "
                   "all, or datapath ids, comma-separated); --cases is then per datapath and "
                   "--suite may give per-suite counts (raw=1e6,finite=2e5,edge,sparse).")
@click.option("--preset", type=Names(sorted(camp.PRESETS)),
              help="Campaign suite counts: write-up = raw 1e6, finite 2e5, edge 1e4, "
                   "sparse 7e4 at 0,1,2,3,4,7,8 active lanes per datapath.")
@click.option("--sparse-lanes", "lanes_text",
              help="Active-lane counts of the sparse suite (e.g. 0,1,2,3,4,7,8).")
@click.option("--shard", "shard_text", help="Campaign shard I/N: every N-th datapath from the "
                                            "I-th (join the folders with tcprobe report merge).")
@click.pass_context
def command(click_ctx, fmt, family, datapath, device_spec, n_cases, model_names, suite_text, seed,
            json_path, out_dir, resume, jobs, shrink_n, chunk, targets_text, preset, lanes_text,
            shard_text):
    """Run generated cases (raw, finite, edge, adversarial, sparse suites) on a
    device, stream them to a capture, score models, and shrink every kind of
    mismatch to a one-line reproducer. Exit 1 when the selected model mismatches."""

    refuse_inside(json_path, out_dir, "--json", "--out")
    model_names = once(model_names)  # a model named twice (in any case) is scored once
    if targets_text is not None or preset or shard_text:
        from click.core import ParameterSource

        from tcprobe.commands.campaign import run_campaign

        if targets_text is None:
            raise click.UsageError("--preset and --shard are for campaigns: give --targets")
        if fmt or datapath:
            raise click.UsageError("give --targets or --format/--datapath, not both")
        given = click_ctx.get_parameter_source("suite_text") != ParameterSource.DEFAULT
        run_campaign(targets_text=targets_text, device_spec=device_spec,
                     cases=n_cases, suite_text=suite_text, suite_given=given,
                     preset=preset, lanes_text=lanes_text, shard_text=shard_text,
                     model_names=model_names, seed=seed, out_dir=out_dir, json_path=json_path,
                     chunk=chunk, shrink=shrink_n, jobs=jobs)
        return
    suites = suites_mod.parse_suites(suite_text)
    needs((lanes_text, "--sparse-lanes", "sparse" in suites or None, "the sparse suite in --suite"))
    device, dp = open_and_choose(device_spec, fmt, family, datapath)
    plan = suites_mod.Plan(suites, n_cases, chunk, lanes=camp.parse_lanes(lanes_text))
    device.speed = Speed.threads(jobs, "always")  # every chunk runs the same configurations
    gpu = device.info().get("gpu")
    if not model_names:
        # the baselines are exact float sums; they know no block scales
        model_names = ("auto",) if dp.is_integer or dp.block_scaled else ("auto", "ieee")
    models = resolve_models(model_names, dp, gpu)
    _read_as_measured(device, dp, model_names)
    out = Path(out_dir) if out_dir else default_out(dp, device.name, seed)
    if not out_dir and not resume and (out / "capture.tcap").exists():
        earlier, out = out, next_free(out)  # the same command again: a folder beside it
        note(f"an earlier run's capture is in {earlier}: writing to {out} (--resume "
             "continues the earlier one)")
    refuse_inside(json_path, out, "--json", "--out")  # the folder chosen for it
    cap_path = out / "capture.tcap"
    if resume and not cap_path.exists():  # said, not silently read as a fresh run
        note(f"--resume: {out} holds no capture yet: starting a new one")
    check_room(cap_path, dp, plan, resume)
    with hold_out_folder(out):
        _run_and_report(dp, device, models, plan, seed, out, cap_path, resume, shrink_n,
                        json_path)


def _read_as_measured(device, dp, model_names) -> None:
    """A sim device checked against a ladder fingerprint runs its cases
    through the layout the ladder measured (as the GPU harness that ran the
    ladder does), not through its own: the first fingerprint's layout."""
    from tcprobe.model_file import fingerprint_harness

    if not hasattr(device, "read_through"):
        return
    for name in model_names:
        h = fingerprint_harness(name, dp)
        if h is not None:
            device.read_through(dp, h)
            note(f"cases run through the layout measured in {name}")
            return


def _run_and_report(dp, device, models, plan, seed, out, cap_path, resume, shrink_n, json_path):
    from tcprobe.reports.validate import html, markdown, report

    n_cases = plan.cases

    with progress_bar(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[rate]}"), TimeRemainingColumn()) as bar:
        task = bar.add_task(f"validate {dp.id}", total=n_cases, rate="")
        t0 = time.perf_counter()

        def progress(done, total):
            dt = time.perf_counter() - t0
            bar.update(task, completed=done, rate=f"{done / dt:,.0f} cases/s" if dt > 0 else "")

        try:
            result = v.run(dp, device, models, plan, seed, capture=cap_path, resume=resume,
                           progress=progress)
        except KeyboardInterrupt:
            bar.stop()
            say(("interrupted", "yellow"), f": every finished chunk is in {cap_path}; run the "
                "same command with --resume to continue", err=True)
            from tcprobe.cli import EXIT_INTERRUPTED

            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None  # said once, not twice
    if not result.cases_run:  # never "0 cases, 0 mismatches" as if that were a pass
        raise v.ValidateError(f"validate ran no case: the suites {', '.join(plan.suites)} make "
                              f"no case for {dp.id}")
    if shrink_n:
        v.make_reproducers(result, device, per_model=shrink_n)
    rep = report(result)
    write_report_set(out, "report", rep, markdown, html, json_path)

    console.print(suite_table(rep))
    for m in rep["models"]:
        if m["mismatches"]:
            say((m["name"], "bold"), f": {m['mismatches']:,} mismatches, first at case "
                f"{m['first_mismatch']:,}, caught by {', '.join(m['caught_by'])}")
            for r in m["reproducers"][:3]:
                ulps = "NaN" if r["ulps"] is None else f"{r['ulps']:+d} ulps"
                say("  ", (r["generator"], "dim"), f" device {r['device_word']} model "
                    f"{r['model_word']} ({ulps})")
                say(f"    {r['command']}")
                if r.get("note"):
                    say(("    note: ", "yellow"), r["note"])
    rate = rep["cases_per_second"]
    if result.set_aside:
        note(f"the capture was damaged; what followed the damage is kept in {result.set_aside}")
    say(f"{rep['cases']['run']:,} cases in {rep['seconds']:.2f} s"
        + (f" ({rate:,} cases/s)" if rate else "")
        + (f", {result.resumed_cases:,} of them from the capture" if result.resumed_cases
           else "") + f"; capture {cap_path}, report {out / 'report.html'}")
    raise SystemExit(rep["exit_status"])
