"""tcprobe sass-check: prove the harnesses compile to the real tensor-core op."""

from __future__ import annotations

import time

import click
from rich.table import Table

from tcprobe.commands.options import comma_list, json_option
from tcprobe.console import console, err_console, say, write_json
from tcprobe.devices.cuda import nvrtc, sass
from tcprobe.kernels import catalog
from tcprobe.models.emulated import EMULATION_BY_ARCH

FAMILY_ALIASES = {"mma": "mma", "mma.sync": "mma", "wgmma": "wgmma", "wgmma.mma_async": "wgmma",
                  "tcgen05": "tcgen05", "tcgen05.mma": "tcgen05"}
STATUS_STYLE = {"ok": "[green]ok[/]", "emulated": "[yellow]emulated[/]", "missing": "[bold red]MISSING[/]",
                "unsupported": "[dim]not built[/]"}


def parse_families(values) -> tuple[str, ...] | None:
    names = comma_list(values, "--instr")
    if not names:
        return None
    out = []
    for n in names:
        if n.lower() == "mfma":  # AMD's: LLVM's code generation, not NVRTC's SASS
            raise click.BadParameter("mfma is AMD's v_mfma: tcprobe mfma-check checks it",
                                     param_hint="--instr")
        if n.lower() not in FAMILY_ALIASES:
            raise click.BadParameter(f"unknown instruction family {n!r} (mma, wgmma, tcgen05)",
                                     param_hint="--instr")
        out.append(FAMILY_ALIASES[n.lower()])
    return tuple(dict.fromkeys(out))


def run_check(archs, families, formats, use_cache=True) -> list[sass.ArchReport]:
    """Check every selected architecture (one compile and one nvdisasm call each)."""
    reports = []
    for arch in archs:
        if not _selected(arch, families, formats):
            continue  # nothing of this arch's harness is asked for: no compile, no line
        t0 = time.perf_counter()  # progress on stderr, piped or not: no blank screen
        err_console.print(f"sass-check {arch}: compiling the harnesses and reading their SASS",
                          markup=False, highlight=False)
        rep = sass.check_arch(arch, families, use_cache=use_cache)
        n = count_status(rep.verdicts)
        err_console.print(f"sass-check {arch}: {len(rep.verdicts)} kernel(s) judged, {n['ok']} ok, "
                          f"{n['emulated']} emulated, {n['missing']} missing "
                          f"({time.perf_counter() - t0:.1f} s)", markup=False, highlight=False)
        if formats:
            rep.verdicts = [v for v in rep.verdicts if set(v.formats) & set(formats)]
        if rep.verdicts:
            reports.append(rep)
    return reports


def _selected(arch, families, formats) -> bool:
    """Whether any kernel of ``arch``'s harness (built, or named not built there)
    runs a selected family and format."""
    if families is not None and not set(families) & set(catalog.ARCH_FAMILIES[arch]):
        return False
    if not formats:
        return True
    kernels = [*catalog.for_arch(arch, families),
               *(v for v in catalog.variants() if (v.name, arch) in catalog.UNSUPPORTED
                 and (families is None or v.family in families))]
    return any(set(v.formats) & set(formats) for v in kernels)


def verdict_table(reports: list[sass.ArchReport]) -> Table:
    t = Table(title="Tensor-core opcodes of the harness kernels", header_style="bold")
    for col in ("harness", "arch", "formats", "expected", "found", "verdict"):
        t.add_column(col, overflow="fold")
    for rep in reports:
        for v in rep.verdicts:
            verdict = STATUS_STYLE[v.status] + (f" -> {v.profile}" if v.profile and v.status == "emulated" else "")
            t.add_row(v.harness, v.arch, ",".join(v.formats), v.expected, " ".join(v.found) or "-", verdict)
    return t


@click.command("sass-check")
@click.option("--instr", "instrs", multiple=True,
              help="Instruction families to check: mma, wgmma, tcgen05 (comma list; default all).")
@click.option("--format", "formats", multiple=True,
              help="Only harnesses that run these input formats (comma list, e.g. bf16,e4m3).")
@click.option("--arch", "archs", multiple=True,
              help=f"Architectures (comma list; default {','.join(catalog.ARCH_FAMILIES)}).")
@json_option("Write the verdicts as JSON")
@click.option("--no-cache", is_flag=True, help="Recompile the cubins instead of reading the cache.")
def command(instrs, formats, archs, json_path, no_cache):
    """Compile the harnesses with NVRTC, disassemble with nvdisasm, and check that
    each kernel uses the expected tensor-core opcode; flag emulated ones.

    Needs no GPU and no driver. Exit 1 when an expected opcode is missing.
    """
    families = parse_families(instrs)
    fmts = tuple(f.lower() for f in comma_list(formats, "--format"))
    from tcprobe.models.formats import FormatError, get_format

    for f in fmts:  # a misspelt format is named, not "no harness matches"
        try:
            get_format(f)
        except FormatError as e:
            raise click.BadParameter(str(e), param_hint="--format") from None
    arch_list = ([a.lower() for a in comma_list(archs, "--arch")]
                 or list(catalog.ARCH_FAMILIES))
    for a in arch_list:
        if not nvrtc.ARCH_RE.match(a):
            raise click.BadParameter(f"not a GPU architecture: {a!r} (e.g. sm_90a, sm_100a)",
                                     param_hint="--arch")
        if a not in catalog.ARCH_FAMILIES:
            raise click.BadParameter(f"no harness for {a} (known: "
                                     f"{', '.join(catalog.ARCH_FAMILIES)})", param_hint="--arch")
    t0 = time.perf_counter()
    reports = run_check(arch_list, families, fmts, use_cache=not no_cache)
    if not reports:
        having = [a for a in catalog.ARCH_FAMILIES
                  if families is None or set(families) & set(catalog.ARCH_FAMILIES[a])]
        hint = (f": {'/'.join(families)} is on {', '.join(having)}, not on "
                f"{', '.join(arch_list)}" if families and having and not set(having) & set(arch_list)
                else "")
        raise click.UsageError("no harness matches the selection (--instr, --format, --arch)"
                               + hint)
    console.print(verdict_table(reports))
    verdicts = [v for r in reports for v in r.verdicts]
    for note in dict.fromkeys(v.note for v in verdicts if v.note and v.status == "ok"):
        say(("note:", "cyan"), f" {note}")
    for v in verdicts:
        if v.status == "unsupported":
            say(("not built:", "dim"), f" {v.harness} on {v.arch}: {v.note}")
    for v in verdicts:
        if v.status == "emulated":
            say(("emulated:", "yellow"), f" {v.harness} on {v.arch} ({v.ptx}) is not a native "
                f"tensor-core op: {v.emulation['summary'] if v.emulation else '?'}; "
                f"model profile {v.profile}")
        elif v.status == "missing":
            say(("missing:", "bold red"), f" {v.harness} on {v.arch}: expected {v.expected}, "
                f"found {' '.join(v.found) or 'no tensor-core op'}"
                + (f" ({v.note})" if v.note else ""))
    n = count_status(verdicts)
    compiled = sum(not r.cached for r in reports)
    say(f"{len(verdicts) - n['unsupported']} kernel builds on {len(reports)} architectures: "
                  f"{n['ok']} ok, {n['emulated']} emulated (flagged), {n['missing']} missing; NVRTC "
                  f"{'.'.join(map(str, nvrtc.version()))}, nvdisasm {sass.nvdisasm_version()}; "
                  f"cubins: {compiled} compiled, {len(reports) - compiled} from the cache; "
                  f"{time.perf_counter() - t0:.1f} s")
    if json_path:
        write_json(json_path, {
            "nvrtc": ".".join(map(str, nvrtc.version())), "nvdisasm": sass.nvdisasm_version(),
            "emulation_profiles": EMULATION_BY_ARCH,
            "archs": [r.as_dict() for r in reports],
            "summary": dict(n)})
    raise SystemExit(1 if n["missing"] else 0)


def count_status(verdicts) -> dict:
    n = {"ok": 0, "emulated": 0, "missing": 0, "unsupported": 0}
    for v in verdicts:
        n[v.status] += 1
    return n
