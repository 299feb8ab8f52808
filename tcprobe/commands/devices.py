"""tcprobe devices: list the devices ``--device`` can open on this machine."""

from __future__ import annotations

import click
from rich.table import Table

from tcprobe.commands.options import json_option
from tcprobe.console import console, plain, say, write_json


def _gpus() -> tuple[list[dict], str]:
    from tcprobe.devices.cuda.device import driver_versions, gpu_status
    from tcprobe.kernels import catalog

    found, why = gpu_status()
    versions = driver_versions() if found else {}
    rows = []
    for index, name, (major, minor) in found:
        try:
            arch = catalog.arch_for_cc(major, minor)
            families = ", ".join(catalog.ARCH_FAMILIES[arch])
        except LookupError:
            arch, families = "-", "no harness for this compute capability"
        rows.append({"device": f"cuda:{index}", "kind": "GPU", "name": name, "arch": arch,
                     "compute_capability": f"{major}.{minor}",
                     "detail": f"compute capability {major}.{minor}, harness {arch}"
                               + ("; the stand-in driver, no GPU" if "stand_in_driver" in versions else ""),
                     "families": families, **versions})
    return rows, why


def _sims() -> list[dict]:
    from tcprobe.devices.sim import BUILTIN
    from tcprobe.models.profiles import profile_for_gpu

    def detail(gpu):
        measured = profile_for_gpu(gpu).measured
        return f"model profile of the {gpu}" + ("" if measured else " (MMA-Sim's parameters)")

    from tcprobe.devices.sim import AMD_BUILTIN

    amd = "MMA-Sim's AMD v_mfma parameters, not measured; result mode"
    return [{"device": f"sim:{key}", "kind": "simulated", "name": gpu,
             "detail": detail(gpu), "families": ", ".join(fams)}
            for key, (gpu, fams) in BUILTIN.items()] + [
        {"device": f"sim:{key}", "kind": "simulated", "name": gpu, "detail": amd,
         "families": ", ".join(fams)} for key, (gpu, fams) in AMD_BUILTIN.items()]


def _mmasim() -> list[dict]:
    """MMA-Sim where it and torch are installed: found, not imported (its import
    brings torch's, 2-3 s; an mmasim device imports it when it runs)."""
    import importlib.metadata as md
    from importlib.util import find_spec

    try:
        if find_spec("mmasim") is None or find_spec("torch") is None:
            return []
        md.version("mmasim")
    except (ImportError, ValueError, md.PackageNotFoundError):
        return []
    return [{"device": "mmasim", "kind": "peer simulator", "name": f"MMA-Sim {md.version('mmasim')}",
             "detail": "the independent simulator tcprobe is compared against",
             "families": "mma, wgmma, tcgen05"}]


def _tools() -> list[str]:
    out = []
    from tcprobe.devices.cuda import nvrtc

    try:
        out.append(f"NVRTC {'.'.join(map(str, nvrtc.version()))}: harness cubins compile here "
                   f"(cache {nvrtc.cache_dir()})")
    except nvrtc.NvrtcUnavailable as e:
        out.append(f"no NVRTC: {e}")
    try:
        from tcprobe.devices.cuda import sass

        out.append(f"nvdisasm {sass.nvdisasm_version()}: sass-check runs here")
    except Exception as e:
        out.append(f"no nvdisasm: {e}")
    return out


@click.command("devices")
@json_option("Write the list as JSON")
def command(json_path):
    """List the devices found: GPUs (through the driver), the simulated
    devices, and MMA-Sim where it is installed."""
    gpus, why = _gpus()
    rows = gpus + _sims() + _mmasim()
    table = Table(title="Devices", header_style="bold")
    for col in ("device", "kind", "name", "detail", "families"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*[plain(r[k]) for k in ("device", "kind", "name", "detail", "families")])
    console.print(table)
    if not gpus:
        say(("no GPU:", "yellow"), f" {why}; --device cuda is unavailable, the sim devices run "
            "everywhere")
    tools = _tools()
    for line in tools:
        say(line)
    if json_path:
        write_json(json_path, {"devices": rows, "gpu_note": why, "tools": tools})
