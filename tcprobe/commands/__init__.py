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


def write_report_set(out, stem: str, doc: dict, markdown, html, json_path=None) -> None:
    """``out/STEM.json``, ``.md`` and ``.html`` of a report document (and the
    JSON again at ``json_path``, ``-`` for stdout)."""
    from tcprobe.console import json_text, write_json
    from tcprobe.outfiles import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    # by rename: a link planted in --out is replaced, never written through
    write_atomic(out / f"{stem}.json", json_text(doc))
    write_atomic(out / f"{stem}.md", markdown(doc))
    write_atomic(out / f"{stem}.html", html(doc))
    if json_path:
        write_json(json_path, doc)
