"""Rich tables for people: scores and mismatches."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table


def score_table(results, title: str = "Scores") -> Table:
    """One row per (capture, output, model)."""
    t = Table(title=title, title_justify="left")
    for col, just in (("capture", "left"), ("gpu", "left"), ("format", "left"),
                      ("output", "left"), ("model", "left"), ("cases", "right"),
                      ("mismatches", "right")):
        t.add_column(col, justify=just)
    for r in results:
        style = "green" if r.mismatches == 0 else "red"
        label = escape(r.label) + (" [dim](simulated)[/]" if r.simulated else "")
        t.add_row(label, escape(r.gpu or "-"), r.input_format, r.output, escape(r.model),
                  f"{r.cases:,}",
                  f"[{style}]{r.mismatches:,}[/]")
    return t


def mismatch_table(result, limit: int = 3) -> Table:
    """The first mismatches of one score: inputs, both words, ulp difference."""
    t = Table(title=escape(f"{result.label}: {result.model} mismatches "
                           f"({result.mismatches:,} of {result.cases:,})"), title_justify="left")
    for col in ("case", "a", "b", "c", "device", "model", "ulps"):
        t.add_column(col, overflow="fold")
    for m in result.examples[:limit]:
        case = escape(str(m.name or m.index))
        t.add_row(case, " ".join(m.a), " ".join(m.b), m.c, m.device, m.model,
                  "nan" if m.ulps is None else f"{m.ulps:+d}")
    return t
