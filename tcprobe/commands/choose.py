"""One rule for every command: which device, and which datapath a format runs.

``--datapath`` names the datapath itself; a device that runs one
instruction (``mmasim:ARCH:INSTRUCTION``) needs neither option. ``--format`` (with ``--instr``
if given) asks the device: the newest family it runs for the format, and
that family's datapath on the device (the ISA table's K, f32 output, or
what ``--output`` says). ``ladder``, ``validate``, ``run-case`` and
``smoke`` all choose this way.
"""

from __future__ import annotations

import click

from tcprobe.commands import open_device
from tcprobe.devices.base import Device
from tcprobe.models import amd_profiles
from tcprobe.models.datapath import Datapath, default_datapath
from tcprobe.models.formats import FormatError, get_format
from tcprobe.schema import check_instruction


def choose_datapath(device: Device, family: str | None, fmt: str,
                    d_type: str | None = None) -> Datapath:
    """The datapath ``device`` runs for input format ``fmt`` (and ``family``, if given)."""
    get_format(fmt)
    if family is None:
        pref = getattr(device, "preferred_family", None)
        family = pref(fmt) if pref else "mma"
    chooser = getattr(device, "datapath", None)
    if chooser is not None:
        return chooser(family, fmt, d_type)
    return default_datapath(family, fmt, d_type)


def open_and_choose(device_spec: str | None, fmt: str | None, family: str | None,
                    datapath: str | None, d_type: str | None = None) -> tuple[Device, Datapath]:
    """(device, datapath) from the options --device, --format, --instr, --datapath, --output."""
    if datapath:
        if fmt:
            raise click.UsageError("give --format or --datapath, not both")
        dp = Datapath.parse(datapath)
        # the id names the family and D: another --instr or --dtype beside it was ignored
        if family and family.lower() != dp.family:
            raise click.UsageError(f"--instr {family} differs from --datapath {datapath} "
                                   f"({dp.family}): give one of them")
        if d_type and _format_name(d_type) != dp.d_type:
            raise click.UsageError(f"--dtype {d_type} differs from --datapath {datapath} "
                                   f"(D in {dp.d_type}): give one of them")
        gate(dp, f"--datapath {datapath}")
        device = open_device(device_spec, dp.family)
        families = getattr(device, "families", None)
        if families and dp.family not in families:  # mma on sim:mi300x: as with --instr
            raise click.UsageError(f"--datapath {datapath}: {device.name} does not run "
                                   f"{dp.family} (it runs {', '.join(families)})")
        return device, dp
    if not fmt:
        if device_spec:  # a device that runs one instruction needs neither
            device = open_device(device_spec, family)
            dp = device.fixed_datapath()
            if dp is not None:
                return device, dp
        raise click.UsageError("give --format (with --instr) or --datapath")
    for option, name in (("--format", fmt), ("--dtype", d_type)):
        if name:  # a bad format is an error before any device is opened, naming its option
            try:
                get_format(name)
            except FormatError as e:
                raise click.UsageError(f"{option}: {e}") from None
    fmt = get_format(fmt).name  # any case (tcprobe.names)
    d_type = get_format(d_type).name if d_type else d_type
    device = open_device(device_spec, family)
    dp = choose_datapath(device, family, fmt, d_type)
    gate(dp, f"--dtype {d_type}" if d_type else f"--format {fmt}")  # bf16 -> e4m3 is no instruction
    return device, dp


def _format_name(name: str) -> str | None:
    try:
        return get_format(name).name
    except (FormatError, KeyError, ValueError):
        return None


def gate(dp: Datapath, where: str) -> None:
    """The ISA table's gate on a chosen datapath (AMD's v_mfma block for mfma)."""
    if dp.family == "mfma":  # AMD: the v_mfma block of the ISA table (models/isa_amd.py)
        amd_profiles.check_datapath(dp)
        return
    check_instruction(dp.family, dp.kind, dp.a_type, dp.b_type, dp.c, dp.d_type, dp.k,
                      dp.scale_type, dp.scale_vec, dp.sparse, dp.saturate, where)
