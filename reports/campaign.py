"""Reports of a validation campaign: Markdown and a self-contained HTML page
with a datapath x suite table, each datapath linked to a page of its own with
its reproducers (``tcprobe run-case`` lines), rendered from the summary JSON
(:func:`tcprobe.validation.campaign.summarize`)."""

from __future__ import annotations

import html as _html

from .validate import ulps_text


def _cell(cell: dict | None) -> str:
    if not cell:
        return "-"
    if cell["status"] in ("skipped", "error"):
        return cell["status"]
    return f"{cell['mismatches']:,} / {cell['cases']:,}"


def markdown(summary: dict) -> str:
    """The campaign as a Markdown table: mismatches / cases per suite."""
    suites = summary["suites"]
    dev = summary.get("device") or {}
    lines = [f"# Validation campaign on {dev.get('device', '?')}"
             + (" (simulated)" if summary.get("simulated") else ""), "",
             f"{len(summary['datapaths'])} datapaths, {summary['cases']:,} cases, "
             f"{summary['mismatches']:,} mismatches, {summary['seconds']:.1f} s", "",
             "| datapath | model | " + " | ".join(suites) + " | seconds |",
             "| --- | --- | " + " | ".join("---:" for _ in suites) + " | ---: |"]
    for row in summary["datapaths"]:
        cells = [_cell(row["suites"].get(s)) for s in suites]
        lines.append(f"| `{row['datapath']}` | {row.get('model') or '-'} | " + " | ".join(cells)
                     + f" | {row['seconds']:.1f} |")
    if summary["mismatched_datapaths"]:
        lines += ["", "Mismatched: " + ", ".join(f"`{d}`" for d in summary["mismatched_datapaths"])]
    if summary.get("error_datapaths"):
        lines += ["", "Failed on the device (see the notes): "
                  + ", ".join(f"`{d}`" for d in summary["error_datapaths"])]
    shrunk = [r for r in summary["datapaths"] if r.get("reproducers")]
    if shrunk:
        lines += ["", "## Reproducers", ""]
        for r in shrunk:
            lines += [f"`{r['datapath']}` ({len(r['reproducers'])} shrunk of "
                      f"{r['mismatches']:,} mismatches; page `{r.get('page', '')}`):", ""]
            lines += [f"- {x['suite']}: device {x['device_word']}, model {x['model_word']}"
                      f"\n\n  ```\n  {x['command']}\n  ```" for x in r["reproducers"]]
            lines.append("")
    notes = [(r["datapath"], s, c["note"]) for r in summary["datapaths"]
             for s, c in r["suites"].items() if c.get("note")]
    if notes:
        lines += ["", "Notes:", ""] + [f"- `{d}` {s}: {n}" for d, s, n in notes]
    return "\n".join(lines) + "\n"


def html(summary: dict) -> str:
    """The campaign as one HTML page: the datapath x suite table, cells
    coloured by outcome."""
    e = _html.escape
    suites = summary["suites"]
    dev = summary.get("device") or {}
    colour = {"ok": "#d9f2d9", "mismatch": "#f8d0d0", "skipped": "#eeeeee", "error": "#f0b000"}
    head = "".join(f"<th>{e(s)}</th>" for s in suites)
    rows = []
    for row in summary["datapaths"]:
        tds = []
        for s in suites:
            c = row["suites"].get(s)
            st = c["status"] if c else "skipped"
            title = e(c.get("note", "")) if c else ""
            tds.append(f'<td style="background:{colour[st]}" title="{title}">{e(_cell(c))}</td>')
        name = f"<code>{e(row['datapath'])}</code>"
        if row.get("page"):
            name = f'<a href="{e(row["page"])}">{name}</a>'
        rows.append(f"<tr><td>{name}</td><td>{e(row.get('model') or '-')}"
                    f"</td>{''.join(tds)}<td>{row['seconds']:.1f}</td></tr>")
    title = (f"Validation campaign on {e(str(dev.get('device', '?')))}"
             + (" (simulated)" if summary.get("simulated") else ""))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child,td:nth-child(2){{text-align:left}}</style>
</head><body><h1>{title}</h1>
<p>{len(summary['datapaths'])} datapaths, {summary['cases']:,} cases, {summary['mismatches']:,}
mismatches (mismatches / cases per cell), {summary['seconds']:.1f} s.</p>
<table><tr><th>datapath</th><th>model</th>{head}<th>seconds</th></tr>
{''.join(rows)}
</table></body></html>
"""


def datapath_html(row: dict, summary: dict) -> str:
    """The page of one datapath of a campaign: its suites and every
    reproducer, one ``tcprobe run-case`` line each (linked from summary.html,
    one folder up)."""
    e = _html.escape
    dev = summary.get("device") or {}
    suites = "".join(
        f"<tr><td>{e(s)}</td><td>{e(c['status'])}</td><td>{e(_cell(c))}</td>"
        f"<td>{e(c.get('note', ''))}</td></tr>" for s, c in row["suites"].items())
    reps = row.get("reproducers") or []
    items = "".join(
        f"<li>{e(x['suite'])}: device {e(str(x['device_word']))}, model "
        f"{e(str(x['model_word']))}"
        + f" ({e(ulps_text(x.get('ulps')))})"
        + f"<pre>{e(x['command'])}</pre></li>" for x in reps)
    shrunk = (f"<h2>Reproducers</h2><p>{len(reps)} mismatches shrunk; each line reruns one "
              f"case on the device and the model.</p><ol>{items}</ol>" if reps else
              "<p>No reproducers: " + ("no mismatches." if not row["mismatches"] else
                                       "none shrunk (--shrink 0).") + "</p>")
    title = f"{e(row['datapath'])} on {e(str(dev.get('device', '?')))}" + (
        " (simulated)" if summary.get("simulated") else "")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px}}pre{{white-space:pre-wrap}}</style>
</head><body><p><a href="../summary.html">campaign summary</a></p><h1>{title}</h1>
<p>model {e(row.get('model') or '-')}: {row['mismatches']:,} mismatches in {row['cases']:,} cases,
{row['seconds']:.1f} s.</p>
<table><tr><th>suite</th><th>status</th><th>mismatches / cases</th><th>note</th></tr>
{suites}</table>
{shrunk}
</body></html>
"""
