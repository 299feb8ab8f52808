"""tcprobe ladder: make a device confess its datapath, one probe at a time."""

from __future__ import annotations

import time

import click

from tcprobe.commands.choose import open_and_choose
from tcprobe.commands.options import (
    SEED,
    Count,
    OneName,
    family_option,
    json_option,
    renamed_option,
)
from tcprobe.console import STEP_QUIET_S, Heartbeat, console, err_console, say, write_json
from tcprobe.devices.sim import AMD_BUILTIN, BUILTIN
from tcprobe.ladder import STEPS, TITLES, parse_steps, run_ladder
from tcprobe.reports.ladder import fingerprint_table, step_table, summary_table


@click.command("ladder")
@click.option("--format", "fmt",
              help="Input format: tf32, bf16, f16, e4m3, e5m2, e2m3, e3m2, e2m1.")
@click.option("--datapath", "dp_id",
              help="A datapath id instead of --format/--instr, for block-scaled, sparse and "
                   "mixed kinds (e.g. tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4; `tcprobe targets`).")
@family_option("Instruction family (default: the newest the device runs for the format).")
@click.option("--device", "device_spec",
              help=f"sim:NAME ({', '.join([*BUILTIN, *AMD_BUILTIN])}), sim:PATH.toml, "
                   "mmasim:ARCH:INSTRUCTION, or cuda. Default: the GPU, else a sim device.")
@renamed_option("--dtype", "--output", "d_type", "Output type D: f32, f16, s32 (default f32).")
@click.option("--steps", help=f"Comma-separated steps to run (default all: {','.join(STEPS)}).")
@json_option("Write findings, evidence and fingerprint as JSON")
@click.option("--cases", "--validate", "validate_cases", cls=OneName, shown=("--cases",),
              default="10000", show_default=True, type=Count(minimum=0),
              help="Random cases the fingerprint's model is checked on (0: none; 1e4, 10k), as "
                   "--cases in validate and smoke; --validate, its older name here, still works.")
@click.option("--show", "--evidence", "evidence", cls=OneName, shown=("--show",), default=6,
              show_default=True, type=click.IntRange(0, 1000),
              help="Proving cases shown per step, as --show in score and replay; --evidence, "
                   "its older name, still works.")
@click.option("--seed", default=0, show_default=True, type=SEED, help="Seed of the probes' random cases (the validation's seed is derived from it).")
def command(fmt, dp_id, family, device_spec, d_type, steps, json_path, validate_cases, evidence,
            seed):
    """Run the probe ladder on a device and print what each step found.

    Exit 1 when a step fails or, after the whole ladder, the fingerprint's
    model mismatches the device on a validation case.
    """
    wanted = parse_steps(steps)
    device, dp = open_and_choose(device_spec, fmt, family, dp_id, d_type)
    start, count, done = time.perf_counter(), len(wanted or STEPS), [0]
    begun = time.monotonic()  # the heartbeat's clock (the speaker's)

    def progress(f) -> None:  # a line a step on stderr as it ends: no blank screen meanwhile
        done[0] += 1
        err_console.print(f"ladder step {done[0]}/{count} {f.step}: {f.status} "
                          f"({time.perf_counter() - start:.1f} s)", markup=False,
                          highlight=False)
    def around(step):  # a slow step says it is running: no blank screen over 2 s
        label = (f"ladder step {done[0] + 1}/{count} {step}" if step != "validation"
                 else f"ladder: validating the model on {validate_cases:,} cases")
        # speaks before the command's own heartbeat, which it holds off
        return Heartbeat(f"{label}: running ({{s}} s)", quiet=STEP_QUIET_S, since=begun)

    result = run_ladder(device, dp, wanted, validate_cases=validate_cases, seed=seed,
                        on_finding=progress, around_step=around)
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
        partial = result.skipped_steps
        say(f"the ladder's model on {v.cases:,} validation cases{tag}: ",
            ("0 mismatches", "green") if v.mismatches == 0
            else (f"{v.mismatches:,} mismatches", "yellow" if partial else "red"))
        if partial:
            say(f"a partial ladder (not run: {', '.join(partial)}): the keys of those steps "
                "are the model's defaults, so the fingerprint is not validated")
    if json_path:
        write_json(json_path, result.as_dict())
    failed = any(f.status == "failed" for f in result.findings)
    # a partial ladder's mismatches are its unmeasured keys: shown, not an error
    bad = result.validation and result.validation.mismatches and not result.skipped_steps
    raise SystemExit(1 if failed or bad else 0)
