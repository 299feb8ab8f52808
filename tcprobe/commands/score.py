"""tcprobe score: score models against recorded captures."""

from __future__ import annotations

import click

from tcprobe.capture import load
from tcprobe.console import console, write_json
from tcprobe.models import registry
from tcprobe.models.model import ModelError
from tcprobe.reports.tables import mismatch_table, score_table
from tcprobe.scoring import score


@click.command("score")
@click.option("--capture", "captures", multiple=True, required=True, type=click.Path(),
              help="A capture folder (a/b/c/d text files), a .jsonl file of recorded "
                   "vectors, or a tcprobe capture file. Repeatable.")
@click.option("--model", "models", multiple=True, default=("auto",), show_default=True,
              help="Model to score (repeatable): auto, a GPU profile, or a baseline "
                   "(ieee, fma-chain, two-stage).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the scores as JSON.")
@click.option("--show", default=3, show_default=True, help="Mismatches shown per score.")
def command(captures, models, json_path, show):
    """Score models against captured output bits (exit 1 on any mismatch)."""
    caps = [c for path in captures for c in load(path)]
    results, skipped = [], []
    for cap in caps:
        for name in models:
            try:
                model = registry.resolve(name, cap.datapath, cap.gpu)
            except ModelError as e:
                skipped.append(f"{cap.label}: {e}")
                continue
            results.append(score(cap, model, examples=max(show, 3)))
    if not results:
        raise ModelError("no model applies to these captures: " + "; ".join(skipped[:3]))
    console.print(score_table(results))
    for r in results:
        if r.mismatches and show:
            console.print(mismatch_table(r, show))
    for s in skipped:
        console.print(f"[yellow]skipped[/] {s}")
    total = sum(r.mismatches for r in results)
    console.print(f"{len(results)} scores, {sum(r.mismatches == 0 for r in results)} without "
                  f"a mismatch, {total:,} mismatches in all")
    if json_path:
        write_json(json_path, {"results": [r.as_dict() for r in results],
                               "skipped": skipped})
    raise SystemExit(1 if total else 0)
