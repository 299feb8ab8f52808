"""tcprobe score: score models against recorded captures.

A capture file is scored piece by piece (:func:`tcprobe.capture.streams`),
so memory does not grow with the capture; other layouts are read whole.
"""

from __future__ import annotations

import click

from tcprobe.capture import CaptureError, streams
from tcprobe.commands.options import json_option
from tcprobe.console import console, note, say, write_json
from tcprobe.models import registry
from tcprobe.models.model import ModelError
from tcprobe.names import once
from tcprobe.reports.tables import mismatch_table, score_table
from tcprobe.validation.scoring import score


def score_pieces(pieces, model, show: int):
    """One ScoreResult over every piece (mismatch positions in the whole capture)."""
    total = None
    for piece in pieces:
        r = score(piece, model, examples=show)
        offset = piece.meta.get("offset", 0)
        for m in r.examples:
            m.index += offset
        if total is None:
            total = r
            continue
        total.cases += r.cases
        total.mismatches += r.mismatches
        total.examples = (total.examples + r.examples)[:show]
    total.mismatch_index = None
    return total


@click.command("score")
@click.option("--capture", "captures", multiple=True, required=True, type=click.Path(),
              help="A capture folder (a/b/c/d text files, or a validate --out folder: its "
                   "capture files), a .jsonl file of recorded "
                   "vectors, or a tcprobe capture file. Repeatable.")
@click.option("--model", "models", multiple=True, default=("auto",), show_default=True,
              help="Model to score (repeatable): auto, a GPU profile, or a baseline "
                   "(ieee, fma-chain, two-stage).")
@json_option("Write the scores as JSON")
@click.option("--show", default=3, show_default=True, type=click.IntRange(0, 10_000),
              help="Mismatches shown per score.")
def command(captures, models, json_path, show):
    """Score models against captured output bits (exit 1 on any mismatch)."""
    models = once(models)  # a model named twice (in any case) is scored once
    for name in models:  # a misspelt model is bad input, not one that skips every capture
        registry.check_name(name)
    found = [c for path in captures for c in streams(path)]
    results, skipped, incomplete = [], [], []
    for first, pieces in found:
        if first.meta.get("problem"):
            raise CaptureError(first.meta["problem"])
        if not first.meta.get("complete", True):
            incomplete.append(f"{first.source} is incomplete: {first.meta.get('recorded', 0):,} "
                              f"of {first.meta.get('planned'):,} planned cases (continue it with "
                              "tcprobe validate --resume and the same options); scored what "
                              "it holds")
        for name in models:
            try:
                model = registry.resolve(name, first.datapath, first.gpu)
            except ModelError as e:
                skipped.append(f"{first.label}: {e}")
                continue
            results.append(score_pieces(pieces(), model, max(show, 3)))
    if not results:
        raise ModelError("no model applies to these captures: " + "; ".join(skipped[:3]))
    console.print(score_table(results))
    for r in results:
        if r.mismatches and show:
            console.print(mismatch_table(r, show))
    for s in skipped:
        say(("skipped", "yellow"), " ", s)
    for s in incomplete:
        note(s)
    total = sum(r.mismatches for r in results)
    say(f"{len(results)} scores, {sum(r.mismatches == 0 for r in results)} without "
        f"a mismatch, {total:,} mismatches in all")
    if json_path:
        write_json(json_path, {"results": [r.as_dict() for r in results],
                               "skipped": skipped, "incomplete": incomplete})
    raise SystemExit(1 if total else 0)
