"""One module per CLI command; ``tcprobe.cli`` registers them."""

from __future__ import annotations


def open_device(spec: str | None, family: str | None = None):
    """The device ``spec`` names (or the default), its registry notes printed."""
    from tcprobe.console import note
    from tcprobe.devices.registry import choose_device

    device, notes = choose_device(spec, family)
    for line in notes:
        note(line)
    return device
