"""tcprobe ladder: make a device confess its datapath, one probe at a time."""

from __future__ import annotations

import click

from tcprobe.commands import open_device
from tcprobe.console import console, write_json
from tcprobe.ladder import STEPS, TITLES, parse_steps, run_ladder
from tcprobe.models.datapath import FAMILIES, Datapath, default_datapath
from tcprobe.models.formats import get_format
from tcprobe.reports.ladder import fingerprint_table, step_table, summary_table


def choose_datapath(device, family, fmt, d_type):
    """The datapath the device runs for this format (and family, if given)."""
    get_format(fmt)
    if family is None:
        pref = getattr(device, "preferred_family", None)
        family = pref(fmt) if pref else "mma"
    chooser = getattr(device, "datapath", None)
    if chooser is not None:
        return chooser(family, fmt, d_type)
    return default_datapath(family, fmt, d_type)


@click.command("ladder")
@click.option("--format", "fmt",
              help="Input format: tf32, bf16, f16, e4m3, e5m2, e2m3, e3m2, e2m1.")
@click.option("--datapath", "dp_id",
              help="A datapath id instead of --format/--instr, for block-scaled, sparse and "
                   "mixed kinds (e.g. tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4; `tcprobe targets`).")
@click.option("--instr", "family", type=click.Choice(FAMILIES),
              help="Instruction family (default: the newest the device runs for the format).")
@click.option("--device", "device_spec",
              help="sim:NAME (v100, a100, ada, h100, h200, b200), sim:PATH.toml, "
                   "mmasim:ARCH:INSTRUCTION, or cuda. Default: the GPU, else a sim device.")
@click.option("--output", "d_type", help="Output type D (default f32).")
@click.option("--steps", help=f"Comma-separated steps to run (default all: {','.join(STEPS)}).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Write findings, evidence and fingerprint as JSON.")
@click.option("--validate", "validate_cases", default=10_000, show_default=True,
              help="Random cases the fingerprint's model is checked on (0: none).")
@click.option("--evidence", default=6, show_default=True, help="Proving cases shown per step.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random cases.")
def command(fmt, dp_id, family, device_spec, d_type, steps, json_path, validate_cases, evidence,
            seed):
    """Run the probe ladder on a device and print what each step found.

    Exit 1 when a step fails or the fingerprint's model mismatches the device.
    """
    wanted = parse_steps(steps)
    if dp_id:
        dp = Datapath.parse(dp_id)
        device = open_device(device_spec, dp.family)
    else:
        if not fmt:
            raise click.UsageError("give --format (or --datapath)")
        get_format(fmt)  # a bad format is an error before any device is opened
        device = open_device(device_spec, family)
        dp = choose_datapath(device, family, fmt, d_type)
    result = run_ladder(device, dp, wanted, validate_cases=validate_cases, seed=seed)
    total = len(result.findings)
    for i, f in enumerate(result.findings, 1):
        console.print(step_table(f, dp, result.simulated, i, total, evidence, TITLES[f.step]))
        console.print()
    if result.fingerprint is not None:
        console.print(fingerprint_table(result.fingerprint, result.simulated))
    console.print(summary_table(result))
    if result.validation is not None:
        v = result.validation
        tag = " (simulated)" if result.simulated else ""
        console.print(f"the ladder's model on {v.cases:,} random cases{tag}: "
                      + ("[green]0 mismatches[/]" if v.mismatches == 0
                         else f"[red]{v.mismatches:,} mismatches[/]"))
    if json_path:
        write_json(json_path, result.as_dict())
    failed = any(f.status == "failed" for f in result.findings)
    raise SystemExit(1 if failed or (result.validation and result.validation.mismatches) else 0)
