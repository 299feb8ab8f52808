"""tcprobe fit: search model space for the model that explains each capture."""

from __future__ import annotations

import time

import click

from tcprobe.capture import load
from tcprobe.commands.options import Names, json_option
from tcprobe.console import console, err_console, note, plain, say, write_json
from tcprobe.fit import FitConfig, FitError, fit, seed_recipes
from tcprobe.reports.fit import fit_detail, fit_summary_table


@click.command("fit")
@click.option("--capture", "captures", multiple=True, required=True, type=click.Path(),
              help="A capture folder (a/b/c/d text files, every output below it is fitted; or a "
                   "validate --out folder, its capture files), "
                   "a .jsonl file of recorded vectors, or a tcprobe capture file. Repeatable.")
@json_option("Write every fit (path, candidates, cases) as JSON")
@click.option("--budget", default=2000, show_default=True, type=click.IntRange(1),
              help="Most distinct candidates screened per capture.")
@click.option("--screen", default=256, show_default=True, type=click.IntRange(8),
              help="Cases in the screening subset (it grows by the cases a candidate fails "
                   "on the whole capture).")
@click.option("--start", default=None,
              help="Start only from this model (a profile name) instead of every published "
                   "HMMA profile that covers the input format.")
@click.option("--only", default=None,
              help="Fit only the captures whose label contains this text (e.g. B200/E4M3).")
@click.option("--details", type=Names(["auto", "all", "none"]), default="auto",
              show_default=True,
              help="Path, unpinned dimensions and ruled-out families: for captures the start "
                   "does not explain (auto), for all, or none.")
@click.option("--quick", is_flag=True,
              help="Skip the checks around the winner (what is not pinned, what is ruled out).")
def command(captures, json_path, budget, screen, start, only, details, quick):
    """Find the model that explains each capture (exit 1 unless every fit is exact).

    The search starts from the published HMMA profiles, reads each candidate's
    mismatches to choose the dimension to change next (window, floor,
    rounding, kept bits, zero signs, alignment, how K is split into blocks
    and in what order, block results' type, sub-MMA accumulators, where C
    enters and in what type), screens candidates on a subset with early
    stopping, and confirms on the whole capture.
    """
    caps = [c for path in captures for c in load(path)]
    if only:
        caps = [c for c in caps if only.lower() in (c.label or c.source).lower()]
        if not caps:
            raise FitError(f"no capture label contains {only!r}")
    cfg = FitConfig(budget=budget, screen=screen, analyse=not quick)
    results, skipped = [], []
    t0 = time.perf_counter()
    with console.status("fitting") as status:
        for i, cap in enumerate(caps, 1):
            status.update(plain(f"fitting {cap.label} ({i}/{len(caps)})"))
            try:
                seeds = seed_recipes(cap, start) if start else None
                results.append(fit(cap, cfg, seeds=seeds))
            except FitError as e:
                skipped.append(str(e))
            if not console.is_terminal:  # piped: a line a capture on stderr, no blank screen
                err_console.print(f"fit {i}/{len(caps)} {cap.label or cap.source}: done "
                                  f"({time.perf_counter() - t0:.1f} s)", markup=False,
                                  highlight=False)
    if not results:
        raise FitError("nothing to fit: " + "; ".join(skipped[:3]))
    console.print(fit_summary_table(results))
    for r in results:
        show = details == "all" or (details == "auto" and (r.start_mismatches or r.mismatches))
        if show:
            console.print()
            console.print(fit_detail(r))
    for s in skipped:
        note(f"skipped {s}")
    exact = sum(r.mismatches == 0 for r in results)
    say(f"{len(results)} captures, {exact} fitted without a mismatch; "
        f"{sum(r.candidates for r in results):,} candidates screened in "
        f"{time.perf_counter() - t0:.1f} s")
    if json_path:
        write_json(json_path, {"config": cfg.__dict__, "results": [r.as_dict() for r in results],
                               "skipped": skipped})
    raise SystemExit(0 if exact == len(results) else 1)
