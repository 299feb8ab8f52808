"""tcprobe smoke: the short check a GPU runner in CI runs."""

from __future__ import annotations

import click
from rich.table import Table

from tcprobe.commands import open_device
from tcprobe.commands.options import SEED, Count, json_option
from tcprobe.console import UsageError, console, plain, say, write_json
from tcprobe.models.formats import FormatError, get_format
from tcprobe.smoke import families_of, run_smoke

STYLE = {"passed": "green", "failed": "red", "skipped": "yellow"}


@click.command("smoke")
@click.option("--device", "device_spec",
              help="cuda[:N], sim:NAME or sim:PATH.toml (default: the GPU, else a sim device).")
@click.option("--format", "fmt", default="bf16", show_default=True,
              help="The input format checked on every family the device runs.")
@click.option("--cases", default="10000", show_default=True, type=Count(),
              help="Cases validated per family (1e4, 10k, 10_000).")
@click.option("--seed", default=0, show_default=True, type=SEED, help="Seed of the generated cases.")
@click.option("--no-sass", is_flag=True, help="Skip the SASS check.")
@json_option("Write the report as JSON")
def command(device_spec, fmt, cases, seed, no_sass, json_path):
    """Smoke-test a device: SASS check, ladder and validation per family (exit 1 on any failure)."""
    try:  # a bad format is an error before any device is opened
        get_format(fmt)
    except FormatError as e:
        raise UsageError(f"--format: {e}") from None
    device = open_device(device_spec)
    if not families_of(device, fmt):  # asking for a format it lacks is bad input, not a failure
        raise UsageError(f"--format: {device.name} runs no {fmt} datapath")
    tag = " (simulated)" if device.simulated else ""
    say(f"smoke run on {device.name}{tag}")

    def show(step):
        say("  ", (f"{step.status:7}", STYLE[step.status]), f" {step.name:16} {step.detail} ",
            (f"{step.seconds:.1f} s", "dim"))

    result = run_smoke(device, fmt=fmt, cases=cases, seed=seed, sass_check=not no_sass,
                       on_step=show)
    t = Table(title=plain(f"smoke on {device.name}{tag}: {'passed' if result.ok else 'FAILED'}"),
              title_justify="left")
    for col in ("step", "status", "seconds"):
        t.add_column(col)
    for s in result.steps:
        t.add_row(s.name, f"[{STYLE[s.status]}]{s.status}[/]", f"{s.seconds:.1f}")
    console.print(t)
    if json_path:
        write_json(json_path, result.as_dict())
    raise SystemExit(0 if result.ok else 1)
