"""tcprobe replay: run a capture's inputs on a device and compare with its recorded words."""

from __future__ import annotations

import click
from rich.table import Table

from tcprobe.capture import load
from tcprobe.commands import open_device
from tcprobe.console import console, write_json
from tcprobe.replay import replay


@click.command("replay")
@click.option("--capture", "captures", multiple=True, required=True, type=click.Path(),
              help="A capture folder (a/b/c/d text files), a .jsonl file or a capture file. Repeatable.")
@click.option("--device", "device_spec", required=True, help="Device to replay on: cuda[:N] or sim:NAME.")
@click.option("--family", type=click.Choice(["mma", "wgmma", "tcgen05"]),
              help="Replay on this instruction family instead of the capture's own.")
@click.option("--limit", type=int, help="Replay at most this many cases per capture.")
@click.option("--show", default=3, show_default=True, help="Differing cases shown per capture.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the results as JSON.")
def command(captures, device_spec, family, limit, show, json_path):
    """Send a capture's recorded inputs through a device and count the cases whose
    word differs from the recorded one (exit 1 on any difference)."""
    caps = [c for path in captures for c in load(path)]
    family_of = {"mma": "mma", "wgmma": "wgmma", "tcgen05": "tcgen05"}
    dev = open_device(device_spec, family_of.get(family or caps[0].datapath.family, "mma"))
    try:
        results = [replay(c, dev, family, limit, show) for c in caps]
        info = dev.info()
    finally:
        dev.close()
    table = Table(title=f"Replay on {dev.name}", header_style="bold")
    for col in ("capture", "recorded as", "replayed as", "cases", "differ", "note"):
        table.add_column(col, overflow="fold")
    for r in results:
        differ = "skipped" if r.skipped else ("[green]0[/]" if not r.mismatches else f"[red]{r.mismatches:,}[/]")
        table.add_row(r.label, r.recorded_datapath, r.datapath, f"{r.cases:,}", differ,
                      "; ".join(r.notes + ([r.skipped] if r.skipped else [])))
    console.print(table)
    for r in results:
        for m in r.examples:
            console.print(f"  {r.label} case {m.index}: recorded {m.device}, {dev.name} {m.model}")
    ran = [r for r in results if not r.skipped]
    total = sum(r.mismatches for r in ran)
    console.print(f"{len(ran)} captures replayed ({len(results) - len(ran)} skipped), "
                  f"{sum(r.cases for r in ran):,} cases, {total:,} differ from the recorded words")
    if json_path:
        write_json(json_path, {"device": info, "results": [r.as_dict() for r in results]})
    if not ran:
        raise LookupError(f"{dev.name} runs none of these captures")
    raise SystemExit(1 if total else 0)
