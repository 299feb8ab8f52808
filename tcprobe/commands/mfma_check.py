"""tcprobe mfma-check: prove every v_mfma of the ISA table compiles to its own opcode."""

from __future__ import annotations

import time

import click
from rich.table import Table

from tcprobe.commands.options import comma_list, json_option
from tcprobe.console import console, say, write_json
from tcprobe.devices.amd import codegen
from tcprobe.models import isa_amd

STATUS_STYLE = {"ok": "[green]ok[/]", "emulated": "[yellow]emulated[/]",
                "missing": "[bold red]MISSING[/]"}


def parse_archs(values) -> list[str]:
    """The generations named by --arch (gfx targets, CDNA names or GPUs), in table order."""
    names = comma_list(values, "--arch")
    if not names:
        return list(isa_amd.ARCHS)
    try:
        chosen = {codegen.resolve(n) for n in names}
        return [a for a in isa_amd.ARCHS if a in chosen]
    except isa_amd.MfmaError as e:
        raise click.BadParameter(str(e), param_hint="--arch") from None


def verdict_table(reports: list[codegen.TargetReport]) -> Table:
    t = Table(title="v_mfma opcodes of LLVM's AMDGPU code generation", header_style="bold")
    for col in ("instruction", "target", "intrinsic", "found", "verdict"):
        t.add_column(col, overflow="fold")
    for rep in reports:
        for v in rep.verdicts:
            t.add_row(v.instruction, v.target, v.intrinsic, " ".join(v.found) or "-",
                      STATUS_STYLE[v.status])
    return t


@click.command("mfma-check")
@click.option("--arch", "archs", multiple=True,
              help=f"gfx targets (comma list; default {','.join(isa_amd.GFX.values())}); "
                   f"{', '.join(isa_amd.ARCHS)} or {', '.join(isa_amd.GPU_ARCH)} name theirs.")
@json_option("Write the verdicts as JSON")
def command(archs, json_path):
    """Compile a kernel for every v_mfma instruction of the ISA table with LLVM's
    AMDGPU backend (llvmlite's LLVM: the code generator hipcc drives) and check
    that its assembly has the instruction's own v_mfma opcode.

    Needs no GPU and no HIP compiler; nothing runs. Exit 1 when an opcode is
    missing or emulated; a target this LLVM lacks is skipped with its reason.
    """
    gens = parse_archs(archs)
    why = codegen.backend_missing()
    if why:
        say(("skipped:", "yellow"), f" {why}; no v_mfma was checked")
        if json_path:
            write_json(json_path, {"skipped": why})
        raise SystemExit(0)
    t0 = time.perf_counter()
    reports, skipped = [], {}
    known = codegen.known_cpus()
    for gen in gens:
        target = isa_amd.GFX[gen]
        if target not in known:
            skipped[target] = f"llvmlite's LLVM {codegen.llvm_version()} does not know {target}"
            continue
        reports.append(codegen.check_target(gen))
    if reports:
        console.print(verdict_table(reports))
    verdicts = [v for r in reports for v in r.verdicts]
    for v in verdicts:
        if v.failed:
            say(("missing:" if v.status == "missing" else "emulated:", "bold red"),
                f" {v.instruction} on {v.target} ({v.intrinsic}): found "
                f"{' '.join(v.found) or 'no v_mfma'}" + (f"; {v.note}" if v.note else ""))
    for target, reason in skipped.items():
        say(("skipped:", "yellow"), f" {target}: {reason}")
    n = {s: sum(v.status == s for v in verdicts) for s in ("ok", "emulated", "missing")}
    per = ", ".join(f"{r.target} {sum(not v.failed for v in r.verdicts)}/{len(r.verdicts)}"
                    for r in reports)
    say(f"{len(verdicts)} v_mfma kernels on {len(reports)} gfx targets ({per or 'none'}): "
        f"{n['ok']} ok, {n['emulated']} emulated, {n['missing']} missing; LLVM "
        f"{codegen.llvm_version()} AMDGPU code generation, no GPU run; "
        f"{time.perf_counter() - t0:.1f} s")
    if json_path:
        write_json(json_path, {"llvm": codegen.llvm_version(), "targets": [r.as_dict() for r in reports],
                               "skipped": skipped, "summary": n})
    raise SystemExit(1 if n["emulated"] or n["missing"] else 0)
