"""Reports of a validate run: the JSON (docs/report-schema.md), Markdown, HTML.

:func:`report` turns a :class:`tcprobe.validation.validate.Result` into the JSON
document; :func:`markdown` and :func:`html` render that document, so a
saved JSON report can be rendered again later.
"""

from __future__ import annotations

import html as _html
import math
from datetime import UTC, datetime

SCHEMA = "tcprobe/validate-report/1"
SUITE_COLORS = {"raw": "#4c78a8", "finite": "#72b7b2", "edge": "#f58518",
                "adversarial": "#e45756", "sparse": "#54a24b"}


def report(result, exit_status: int | None = None) -> dict:
    """The JSON report of a run (schema: docs/report-schema.md)."""
    from tcprobe import __version__
    from tcprobe import suites as suites_mod

    docs = {g.key: g.doc for s in result.plan.suites for g in suites_mod.generators(result.datapath, s)}
    models = []
    for i, t in enumerate(result.tallies):
        by_suite = {s: {"cases": result.suite_cases.get(s, 0), "mismatches": t.by_suite.get(s, 0),
                        "first_case": t.first_by_suite.get(s),
                        "first_in_suite": t.first_in_suite.get(s)} for s in result.plan.suites}
        by_gen = {k: {"cases": n, "mismatches": t.by_generator.get(k, 0)}
                  for k, n in result.generator_cases.items()}
        pts = t.points
        models.append({
            "name": t.model.name, "selected": i == 0, "model": t.model.describe(),
            "mismatches": t.total,
            "rate": t.total / result.cases_run if result.cases_run else 0.0,
            "first_mismatch": t.first, "caught_by": t.caught_by(),
            "by_suite": by_suite, "by_generator": by_gen,
            "reproducers": result.reproducers.get(t.model.name, []),
            "points": {"spread": [p[0] for p in pts], "ulps": [p[1] for p in pts],
                       "suite": [p[2] for p in pts], "kept": len(pts)},
        })
    primary = result.tallies[0].total
    return {
        "schema": SCHEMA, "tcprobe": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "datapath": result.datapath.id, "device": result.device,
        "simulated": bool(result.device.get("simulated", False)),
        "seed": result.seed, "suites": list(result.plan.suites),
        "cases": {"planned": result.plan.cases, "run": result.cases_run,
                  "resumed": result.resumed_cases, "complete": result.complete,
                  "chunk": result.plan.chunk},
        "seconds": round(result.seconds, 3),
        "cases_per_second": round(result.cases_run / result.seconds) if result.seconds else None,
        "capture": result.capture,
        "suite_cases": dict(result.suite_cases),
        "generator_cases": dict(result.generator_cases),
        "generators": [{"key": k, "doc": docs.get(k, "")} for k in result.generators],
        "models": models,
        "exit_status": (1 if primary else 0) if exit_status is None else exit_status,
    }


# ---------------------------------------------------------------------------
# Markdown.


def markdown(rep: dict) -> str:
    """A Markdown summary: the run, mismatches per suite and model, reproducers."""
    dev = rep["device"]
    sim = " (simulated)" if rep["simulated"] else ""
    lines = [f"# tcprobe validate: {rep['datapath']} on {dev.get('device', '?')}{sim}", "",
             f"{rep['cases']['run']:,} cases (seed {rep['seed']}, suites "
             f"{', '.join(rep['suites'])}) in {rep['seconds']:.2f} s"
             + ("" if rep["cases"]["complete"] else
                f", **incomplete**: {rep['cases']['planned']:,} planned") + ".", ""]
    names = [m["name"] for m in rep["models"]]
    lines.append("| suite | cases | " + " | ".join(f"{n} mismatches" for n in names) + " |")
    lines.append("| --- | ---: | " + " | ".join("---:" for _ in names) + " |")
    for s in rep["suites"]:
        row = [s, f"{rep['suite_cases'].get(s, 0):,}"]
        row += [f"{m['by_suite'][s]['mismatches']:,}" for m in rep["models"]]
        lines.append("| " + " | ".join(row) + " |")
    total = ["**all**", f"**{rep['cases']['run']:,}**"] + [f"**{m['mismatches']:,}**"
                                                           for m in rep["models"]]
    lines.append("| " + " | ".join(total) + " |")
    lines.append("")
    for m in rep["models"]:
        tag = " (selected)" if m["selected"] else ""
        if not m["mismatches"]:
            lines.append(f"- **{m['name']}**{tag}: no mismatch.")
            continue
        first = m["first_mismatch"]
        lines.append(f"- **{m['name']}**{tag}: {m['mismatches']:,} mismatches "
                     f"({100 * m['rate']:.3f}%), first at case {first:,}; caught by "
                     f"{', '.join(m['caught_by'])}.")
    for m in rep["models"]:
        if not m["reproducers"]:
            continue
        lines += ["", f"## Reproducers: {m['name']}", ""]
        for r in m["reproducers"]:
            ulps = ulps_text(r["ulps"])
            lines += [f"- `{r['generator']}` case {r['case']:,}: device {r['device_word']}, "
                      f"model {r['model_word']} ({ulps}); {r['lanes_before']} -> {r['lanes']} "
                      "active lanes", "", f"      {r['command']}", ""]
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------
# HTML with inline SVG.


def ulps_text(ulps: int | None) -> str:
    """A mismatch's distance: ``None`` is a NaN on one side; 0 ulps between two
    different words is +0 against -0 (the same value, the other sign)."""
    if ulps is None:
        return "NaN involved"
    return "+0 vs -0 (the sign of zero)" if ulps == 0 else f"{ulps:+,} ulps"


def _esc(x) -> str:
    return _html.escape(str(x))


def _symlog(u: int) -> float:
    return math.copysign(math.log10(1 + abs(u)), u)


def _scatter(m: dict, width: int = 760, height: int = 340) -> str:
    """Error in ulps (symmetric log scale) against exponent spread, by suite;
    mismatches where a NaN is involved sit in a band at the top."""
    pts = m["points"]
    xs, us, ss = pts["spread"], pts["ulps"], pts["suite"]
    left, right, top, bottom = 64, 16, 34, 44
    pw, ph = width - left - right, height - top - bottom
    nan_band = 18
    xmax = max([1, *xs])
    ys = [_symlog(u) for u in us if u is not None]
    ymax = max([1.0, *(abs(y) for y in ys)])
    ymax = math.ceil(ymax)

    def px(x):
        return left + pw * x / xmax

    def py(y):
        return top + nan_band + (ph - nan_band) * (0.5 - y / (2 * ymax))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="mismatches of {_esc(m["name"])}">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#ccc"/>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{nan_band}" fill="#f0f0f0"/>',
           f'<text x="{left - 6}" y="{top + 13}" text-anchor="end" font-size="11">NaN</text>']
    every = 1 if ymax <= 6 else 2 if ymax <= 12 else 3
    for e in range(-ymax, ymax + 1):
        y = py(e)
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="{"#999" if e == 0 else "#e4e4e4"}"/>')
        if e % every == 0:
            label = "0" if e == 0 else f"{'-' if e < 0 else '+'}1e{abs(e)}"
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
                       f'{label}</text>')
    step = max(1, round(xmax / 8 / 10) * 10) if xmax > 40 else max(1, math.ceil(xmax / 8))
    for x in range(0, xmax + 1, step):
        out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top + ph}" y2="{top + ph + 4}" '
                   'stroke="#666"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + ph + 17}" text-anchor="middle" '
                   f'font-size="11">{x}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle" font-size="12">'
               'exponent spread of the terms (binades between the largest and smallest)</text>')
    out.append(f'<text x="14" y="{top + ph / 2}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 14 {top + ph / 2})">model - device (ulps)</text>')
    for i, (x, u, s) in enumerate(zip(xs, us, ss, strict=True)):
        color = SUITE_COLORS.get(s, "#888")
        jit = ((i * 7919) % 7 - 3) * 0.8  # a fixed jitter keeps equal points visible
        y = top + nan_band / 2 + jit if u is None else py(_symlog(u)) + jit
        out.append(f'<circle cx="{px(x) + jit:.1f}" cy="{y:.1f}" r="2.6" fill="{color}" '
                   f'fill-opacity="0.55"><title>{_esc(s)}: spread {x}, '
                   f'{"NaN" if u is None else ulps_text(u)}</title></circle>')
    lx = left
    present = set(ss)
    for s in [x for x in SUITE_COLORS if x in present] + sorted(present - set(SUITE_COLORS)):
        out.append(f'<circle cx="{lx + 6}" cy="{top - 14}" r="5" fill="{SUITE_COLORS.get(s, "#888")}"/>'
                   f'<text x="{lx + 15}" y="{top - 10}" font-size="12">{_esc(s)}</text>')
        lx += 22 + 8 * len(s)
    out.append("</svg>")
    return "\n".join(out)


def _bars(rep: dict, width: int = 760) -> str:
    """Mismatch rate per suite, one bar per model (log scale of the rate)."""
    suites, models = rep["suites"], rep["models"]
    row_h, bar_h = 14 * len(models) + 12, 12
    left, top = 110, 24
    height = top + row_h * len(suites) + 30
    pw = width - left - 150
    floor = 1e-6

    def bx(rate):
        if rate <= 0:
            return 0
        return pw * (math.log10(max(rate, floor)) - math.log10(floor)) / -math.log10(floor)

    palette = ["#e45756", "#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="mismatch rate per suite">']
    for i, m in enumerate(models):
        out.append(f'<rect x="{left + i * 170}" y="4" width="10" height="10" '
                   f'fill="{palette[i % len(palette)]}"/><text x="{left + i * 170 + 14}" y="13" '
                   f'font-size="12">{_esc(m["name"])}</text>')
    for j, s in enumerate(suites):
        y0 = top + j * row_h
        out.append(f'<text x="{left - 8}" y="{y0 + row_h / 2 + 4}" text-anchor="end" '
                   f'font-size="12">{_esc(s)}</text>')
        for i, m in enumerate(models):
            cell = m["by_suite"][s]
            rate = cell["mismatches"] / cell["cases"] if cell["cases"] else 0
            w = bx(rate)
            y = y0 + 6 + i * 14
            out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                       f'fill="{palette[i % len(palette)]}"><title>{_esc(m["name"])} on {_esc(s)}: '
                       f'{cell["mismatches"]:,} of {cell["cases"]:,}</title></rect>')
            label = "0" if not cell["mismatches"] else f'{cell["mismatches"]:,} ({100 * rate:.3g}%)'
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + 10}" font-size="11">{label}</text>')
    for e in range(-6, 1):
        x = left + bx(10.0 ** e)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - 26}" stroke="#eee"/>'
                   f'<text x="{x:.1f}" y="{height - 12}" text-anchor="middle" font-size="10">'
                   f'{"1" if e == 0 else f"1e{e}"}</text>')
    out.append("</svg>")
    return "\n".join(out)


CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto;
       max-width: 820px; color: #222; }
h1 { font-size: 20px; margin-bottom: 4px; } h2 { font-size: 16px; margin-top: 28px; }
.sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 12px 0; } td, th { padding: 3px 10px; }
th { text-align: left; border-bottom: 1px solid #bbb; } td.n { text-align: right; }
tr.total td { border-top: 1px solid #bbb; font-weight: 600; }
.ok { color: #1a7f37; } .bad { color: #c62828; font-weight: 600; }
code, pre { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
pre { background: #f5f5f5; padding: 8px; overflow-x: auto; white-space: pre-wrap; }
.note { color: #666; font-size: 12px; }
"""


def html(rep: dict) -> str:
    """A self-contained page: summary, table, charts (inline SVG), reproducers."""
    dev = rep["device"]
    sim = " (simulated)" if rep["simulated"] else ""
    title = f"tcprobe validate: {rep['datapath']} on {dev.get('device', '?')}{sim}"
    p = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_esc(title)}</title>"
         f"<style>{CSS}</style></head><body>", f"<h1>{_esc(title)}</h1>",
         f"<p class='sub'>{rep['cases']['run']:,} cases, seed {rep['seed']}, "
         f"{rep['seconds']:.2f} s, {_esc(rep['created'])}"
         + ("" if rep["cases"]["complete"] else
            f", <b>incomplete</b> ({rep['cases']['planned']:,} planned)") + "</p>"]
    verdicts = []
    for m in rep["models"]:
        cls = "ok" if not m["mismatches"] else "bad"
        text = "no mismatch" if not m["mismatches"] else (
            f"{m['mismatches']:,} mismatches ({100 * m['rate']:.3g}%), caught first by "
            f"{', '.join(m['caught_by'])}")
        verdicts.append(f"<li><b>{_esc(m['name'])}</b>{' (selected)' if m['selected'] else ''}: "
                        f"<span class='{cls}'>{_esc(text)}</span></li>")
    p.append("<ul>" + "".join(verdicts) + "</ul>")
    p.append("<table><tr><th>suite</th><th>cases</th>" + "".join(
        f"<th>{_esc(m['name'])}</th>" for m in rep["models"]) + "</tr>")
    for s in rep["suites"]:
        cells = "".join(
            f"<td class='n {'bad' if m['by_suite'][s]['mismatches'] else 'ok'}'>"
            f"{m['by_suite'][s]['mismatches']:,}</td>" for m in rep["models"])
        p.append(f"<tr><td>{_esc(s)}</td><td class='n'>{rep['suite_cases'].get(s, 0):,}</td>{cells}</tr>")
    p.append("<tr class='total'><td>all</td><td class='n'>" f"{rep['cases']['run']:,}</td>" + "".join(
        f"<td class='n'>{m['mismatches']:,}</td>" for m in rep["models"]) + "</tr></table>")
    p.append("<h2>Mismatch rate per suite</h2>" + _bars(rep))
    for m in rep["models"]:
        if not m["mismatches"]:
            continue
        kept = m["points"]["kept"]
        p.append(f"<h2>Where {_esc(m['name'])} mismatches</h2>")
        p.append(f"<p class='note'>Each dot is one mismatching case ({kept:,} of "
                 f"{m['mismatches']:,}, spread evenly over the run): the error of the model in units in the last place of "
                 "the output, against how many binades separate the largest and smallest term. "
                 "Colour: the suite that made the case.</p>")
        p.append(_scatter(m))
        gens = sorted(((k, v["mismatches"], v["cases"]) for k, v in m["by_generator"].items()
                       if v["mismatches"]), key=lambda x: -x[1])
        if gens:
            p.append("<table><tr><th>generator</th><th>mismatches</th><th>cases</th></tr>" + "".join(
                f"<tr><td>{_esc(k)}</td><td class='n'>{n:,}</td><td class='n'>{c:,}</td></tr>"
                for k, n, c in gens) + "</table>")
        for r in m["reproducers"]:
            ulps = ulps_text(r["ulps"])
            p.append(f"<p><b>{_esc(r['generator'])}</b>, case {r['case']:,}: device "
                     f"<code>{_esc(r['device_word'])}</code>, model <code>{_esc(r['model_word'])}"
                     f"</code> ({_esc(ulps)}); shrunk from {r['lanes_before']} to {r['lanes']} "
                     f"active lanes</p><pre>{_esc(r['command'])}</pre>")
    p.append(f"<p class='note'>Device: {_esc(dev)}. Capture: {_esc(rep['capture'])}. "
             f"Report schema {_esc(rep['schema'])}.</p></body></html>")
    return "\n".join(p)
