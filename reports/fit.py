"""Rich renderings of ``tcprobe fit`` results for people."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text


def _value(v) -> str:
    if isinstance(v, (list, tuple)) and len(v) == 3 and isinstance(v[2], bool):
        block, unit, rev = v
        return f"L={block}, runs of {unit}" + (", reversed" if rev else "")
    return "None" if v is None else str(v)


def fit_summary_table(results) -> Table:
    """One row per fitted capture: where the search started, where it ended."""
    t = Table(title="Fits", title_justify="left")
    t.add_column("capture", no_wrap=True)
    t.add_column("start: mismatches", no_wrap=True)
    t.add_column("fit", justify="right")
    t.add_column("changed from start")
    t.add_column("tried", justify="right")
    t.add_column("s", justify="right")
    for r in results:
        style = "green" if r.mismatches == 0 else "red"
        label = r.label + (" [dim](sim)[/]" if r.capture.startswith("sim:") else "")
        t.add_row(label, f"{r.start}: {r.start_mismatches:,}", f"[{style}]{r.mismatches:,}[/]",
                  ", ".join(r.changed_from_start) or "-", f"{r.candidates:,}",
                  f"{r.seconds:.1f}")
    return t


def _unpinned_lines(r, k: int) -> list[str]:
    lines = []
    for dim, v in r.unpinned.items():
        if isinstance(v, dict):
            rng = v.get("range")
            text = f"{rng[0]}..{rng[1]}" if rng else "-"
            if v.get("none_fits"):
                text += " and None"
            lines.append(f"{dim}: {text}")
        elif dim == "split":
            fams = sorted({_split_family(s, k) for s in v})
            lines.append(f"split: {len(v)} other splits ({'; '.join(fams)})")
        else:
            lines.append(f"{dim}: {', '.join(_value(x) for x in v)}")
    return lines


def _split_family(s, k: int) -> str:
    block, unit, _ = s
    if block >= k:
        return "one block"
    if unit >= block:
        return "contiguous"
    return {1: "single positions", 2: "pairs", 4: "quads"}.get(unit, f"runs of {unit}")


def fit_detail(r):
    """The path, the candidates, what is not pinned and what is ruled out."""
    parts = [Text.from_markup(f"[bold]{r.label}[/]: {r.best_description} - "
                              f"[{'green' if r.mismatches == 0 else 'red'}]"
                              f"{r.mismatches:,} of {r.cases:,}[/] "
                              f"({r.candidates:,} candidates screened; stop: {r.stop})")]
    if r.path:
        t = Table(title="path from " + r.start, title_justify="left", show_edge=False)
        for col in ("change", "screen before", "after", "why this dimension"):
            t.add_column(col, overflow="fold")
        for s in r.path:
            if s.dim.startswith("prune:"):
                change = f"{s.dim[6:]} back to {_value(s.value)}"
                why = "the whole capture fits without the change"
            else:
                change, why = f"{s.dim} = {_value(s.value)}", s.reason or "-"
            t.add_row(change, str(s.before), str(s.after), why)
        parts.append(t)
    if len(r.top) > 1:
        t = Table(title="best candidates", title_justify="left", show_edge=False)
        t.add_column("mismatches", justify="right")
        t.add_column("candidate", overflow="fold")
        for c in r.top:
            t.add_row(f"{c['mismatches']:,}", c["description"])
        parts.append(t)
    k = int(r.datapath.split(".k")[1].split(".")[0]) if ".k" in r.datapath else 0
    lines = _unpinned_lines(r, k)
    if lines:
        parts.append(Text("not pinned by this capture (these fit too): " + "; ".join(lines)))
    if r.rejected:
        t = Table(title="ruled out", title_justify="left", show_edge=False)
        for col in ("family", "nearest member", "best tried", "case", "device", "candidate"):
            t.add_column(col, overflow="fold")
        t.columns[1].justify = t.columns[2].justify = "right"
        for j in r.rejected:
            best = "-" if j.best_tried_mismatches is None else f"{j.best_tried_mismatches:,}"
            if j.rules_out_best_tried:
                best += " (same case)"
            case = j.case or {}
            t.add_row(j.family, f"{j.member_mismatches:,}", best,
                      str(j.case_index), case.get("device", "-"), case.get("candidate", "-"))
        parts.append(t)
    if r.remaining:
        parts.append(Text(f"remaining mismatches: {r.remaining}"))
    return Group(*parts)
