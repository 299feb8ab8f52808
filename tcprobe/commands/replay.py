"""tcprobe replay: run a capture's inputs on a device and compare with its recorded words."""

from __future__ import annotations

import click
from rich.table import Table

from tcprobe.capture import streams
from tcprobe.commands import open_device
from tcprobe.commands.options import Count, Names, json_option, renamed_option
from tcprobe.console import console, plain, say, write_json
from tcprobe.devices.base import DeviceError
from tcprobe.models.isa import FAMILIES
from tcprobe.validation.replay import replay


def replay_pieces(pieces, dev, family, limit, show):
    """One ReplayResult over a capture's pieces (case numbers in the whole capture)."""
    total = None
    for piece in pieces:
        left = None if limit is None else limit - (total.cases if total else 0)
        if left is not None and left <= 0:
            break
        r = replay(piece, dev, family, left, show)
        for m in r.examples:
            m.index += piece.meta.get("offset", 0)
        if total is None:
            total = r
        else:
            total.cases += r.cases
            total.mismatches += r.mismatches
            total.examples = (total.examples + r.examples)[:show]
        if r.skipped:
            break
    return total


@click.command("replay")
@click.option("--capture", "captures", multiple=True, required=True, type=click.Path(),
              help="A capture folder (a/b/c/d text files, or a validate --out folder: its capture "
                   "files), a .jsonl file or a capture file. Repeatable.")
@click.option("--device", "device_spec",
              help="Device to replay on: cuda[:N], sim:NAME or sim:PATH.toml (default: the GPU, "
                   "else a sim device).")
@renamed_option("--instr", "--family", "family",
                "Replay on this instruction family instead of the capture's own.",
                type=Names(FAMILIES))
@click.option("--limit", type=Count(), help="Replay at most this many cases per capture (1e4, 10k).")
@click.option("--show", default=3, show_default=True, type=click.IntRange(0, 10_000),
              help="Differing cases shown per capture.")
@json_option("Write the results as JSON")
def command(captures, device_spec, family, limit, show, json_path):
    """Send a capture's recorded inputs through a device and count the cases whose
    word differs from the recorded one (exit 1 on any difference)."""
    caps = [c for path in captures for c in streams(path)]
    dev = open_device(device_spec, family or caps[0][0].datapath.family)
    try:
        results = [replay_pieces(pieces(), dev, family, limit, show) for _, pieces in caps]
        info = dev.info()
    finally:
        dev.close()
    table = Table(title=plain(f"Replay on {dev.name}"), header_style="bold")
    for col in ("capture", "recorded as", "replayed as", "cases", "differ", "note"):
        table.add_column(col, overflow="fold")
    for r in results:
        differ = "skipped" if r.skipped else ("[green]0[/]" if not r.mismatches else f"[red]{r.mismatches:,}[/]")
        table.add_row(plain(r.label), r.recorded_datapath, r.datapath, f"{r.cases:,}", differ,
                      plain("; ".join(r.notes + ([r.skipped] if r.skipped else []))))
    console.print(table)
    for r in results:
        for m in r.examples:
            say(f"  {r.label} case {m.index}: recorded {m.device}, {dev.name} {m.model}")
    ran = [r for r in results if not r.skipped]
    total = sum(r.mismatches for r in ran)
    say(f"{len(ran)} captures replayed ({len(results) - len(ran)} skipped), "
                  f"{sum(r.cases for r in ran):,} cases, {total:,} differ from the recorded words")
    if json_path:
        write_json(json_path, {"device": info, "results": [r.as_dict() for r in results]})
    if not ran:
        raise DeviceError(f"{dev.name} runs none of these captures")
    raise SystemExit(1 if total else 0)
