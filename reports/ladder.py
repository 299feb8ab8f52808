"""Rendering of a ladder run: one rich table per step (its finding and the
cases that prove it), the fingerprint, the validation, and the cases each
step spent. Every title says when the device is simulated."""

from __future__ import annotations

from rich.table import Table

from tcprobe.models.engine import FOUND_KEYS, PARAM
from tcprobe.models.formats import describe, get_format
from tcprobe.models.words import pow2

STATUS_STYLE = {"found": "green", "partial": "yellow", "skipped": "dim", "failed": "red"}


def _words(fmt, d: dict, limit: int = 4) -> str:
    if not d:
        return "0"
    items = list(d.items())
    parts = []
    for k, v in items[:limit]:
        text = describe(fmt, v) if isinstance(v, int) else str(v)
        parts.append(f"{k}: {text}" if isinstance(k, int) else f"{k}={text}")
    if len(items) > limit:
        parts.append(f"(+{len(items) - limit} lanes)")
    return ", ".join(parts)


def _scales(sf, sa, sb) -> str:
    """Scale factors that are not 1, as A0=2 B1=0x70 (else 'all 1')."""
    unit = pow2(sf, 0)
    parts = [f"{side}{j}={describe(sf, int(x))}" for side, codes in (("A", sa), ("B", sb))
             for j, x in enumerate(codes) if int(x) != unit]
    return ", ".join(parts) or "all 1"


def step_table(finding, dp, simulated: bool, index: int, total: int, limit: int = 6,
               title: str = "") -> Table | str:
    """A step's finding with its proving cases (inputs and raw output words);
    ``title`` names what the step probes. A step with no case, evidence or
    note (one skipped on this datapath) is its two heading lines alone, no
    empty table."""
    sim = " [dim](simulated)[/]" if simulated else ""
    style = STATUS_STYLE.get(finding.status, "")
    pre = " [dim](prerequisite)[/]" if finding.prerequisite else ""
    title = (f"{index}/{total} {finding.step}: {title}{pre}{sim}\n"
             f"[{style}]{finding.status}[/]: {finding.summary}")
    if not finding.evidence and not finding.notes and not finding.cases:
        return title
    t = Table(title=title, title_justify="left", show_edge=True, min_width=100)
    fa, fb, fc, fd = (get_format(x) for x in (dp.a_type, dp.b_type, dp.c, dp.d_type))
    if not finding.evidence:
        t.add_column("note")
        for n in finding.notes or [f"{finding.cases} cases"]:
            t.add_row(n)
        return t
    scaled = any(getattr(e, "scale_a", None) is not None for e in finding.evidence[:limit])
    cols = ("case", "A", "B", "C", *(("scales A / B",) if scaled else ()), "device words", "meaning")
    for col in cols:
        t.add_column(col, overflow="fold")
    sf = get_format(dp.scale_type) if dp.block_scaled else None
    for e in finding.evidence[:limit]:
        c = "0" if e.c is None else describe(fc, e.c)
        seen = {}
        for w in e.words:
            seen[w] = seen.get(w, 0) + 1
        words = ", ".join((describe(fd, w) if w <= fd.word_mask else f"{w:#010x}")
                          + (f" x{n}" if n > 1 else "") for w, n in list(seen.items())[:3])
        extra = ()
        if scaled:
            sc = "-" if e.scale_a is None else _scales(sf, e.scale_a, e.scale_b)
            extra = (sc,)
        t.add_row(e.label, _words(fa, e.a), _words(fb, e.b), c, *extra, words, e.note)
    blank = [""] * (len(cols) - 1)
    if len(finding.evidence) > limit:
        t.add_row(f"... {len(finding.evidence) - limit} more in --json", *blank)
    for n in finding.notes:
        t.add_row("[dim]note[/]", *blank[:-1], n)
    return t


def fingerprint_table(fp, simulated: bool) -> Table:
    sim = " [dim](simulated)[/]" if simulated else ""
    t = Table(title=f"fingerprint of {fp.datapath}{sim}", title_justify="left")
    t.add_column("key")
    t.add_column("value")
    t.add_column("note", overflow="fold")
    scaled = getattr(fp, "scaled", None)
    keys = FOUND_KEYS  # the engine keys a finding may set (models/engine.PARAMS)
    if scaled is not None:  # block-scaled: the scale step's keys instead of the engine's
        keys = ("scale_block", "product_window_bits", "scale_floor_offset", "nan")
    chain = getattr(fp, "chain", None)
    if chain is not None:  # f64: the chain step's keys instead of the engine's
        keys = ()
        for key, v in chain.items():
            if key == "nan" and isinstance(v, int):
                v = f"{v:#018x}"
            note = {"k_order": "K in order" if v is None else "",
                    "c_at": "C starts the chain" if v == 0 else "products before C"}.get(key, "")
            t.add_row(f"chain.{key}", "-" if v is None else str(v), note)
    amd = getattr(fp, "mfma", None)
    if amd is not None or "mfma" in fp.undetermined:  # AMD: the mfma step's design instead
        keys = ()
        notes = {"design": "models/amd.py", "block": "L (exact, truncated, grouped) or P (ftz)",
                 "window": "F: bits kept below a block's largest product",
                 "window2": "F2: fraction bits of the join with C"}
        for key, v in (amd or {}).items():
            t.add_row(f"mfma.{key}", str(v), notes.get(key, ""))
        for key, why in fp.undetermined.items():
            if key.startswith("mfma"):
                t.add_row(key, "-", why)
    for key in keys:
        v = getattr(fp, key)
        if key == "nan" and v is not None:
            v = f"{v:#x}"
        note = fp.undetermined.get(key, "")
        if key in fp.assumed:
            note += f" (the model uses {fp.assumed[key]})"
        if v is None and not note and key in PARAM:
            note = PARAM[key].unset
        t.add_row(key, "-" if v is None else str(v), note)
    if scaled is not None:
        for key, v in scaled.items():
            if key in ("product_window", "scale_window"):
                continue
            note = fp.undetermined.get(f"scaled.{key}", "")
            if f"scaled.{key}" in fp.assumed:
                note += " (assumed)"
            t.add_row(f"scaled.{key}", "-" if v is None else str(v), note)
    split = getattr(fp, "split", None)
    if split:
        first = split["parts"][0]
        t.add_row("split", split["name"], f"sub-MMAs in order, the first takes {first[:6]}...; "
                  f"C added after by an ordinary add ({split['c_add_rounding']})")
    sp = getattr(fp, "sparsity", None)
    if sp:
        t.add_row("sparsity", str(sp.get("pattern", "-")),
                  "selectors as documented" if sp.get("selectors_documented") else
                  ("selectors differ from the documented ones" if "selectors" in sp else ""))
        t.add_row("disabled positions", "ignored" if sp.get("disabled_ignored") else "-",
                  "removed before specials" if sp.get("disabled_ignored") else "")
    if fp.slice is not None:
        t.add_row("slice", f"{len(fp.slice)} words", "")
    return t


def summary_table(result) -> Table:
    sim = " [dim](simulated)[/]" if result.simulated else ""
    t = Table(title=f"ladder on {result.device.get('device')} for {result.datapath}{sim}",
              title_justify="left")
    for col, just in (("step", "left"), ("status", "left"), ("cases", "right"),
                      ("seconds", "right")):
        t.add_column(col, justify=just)
    for f in result.findings:
        style = STATUS_STYLE.get(f.status, "")
        t.add_row(f.step + (" (pre)" if f.prerequisite else ""), f"[{style}]{f.status}[/]",
                  f"{f.cases:,}", f"{f.seconds:.2f}")
    if result.validation is not None:
        v = result.validation
        style = "green" if v.mismatches == 0 else "red"
        t.add_row("validation", f"[{style}]{v.mismatches} mismatches[/]", f"{v.cases:,}",
                  f"{v.seconds:.2f}")
    t.add_row("total", "", f"{sum(f.cases for f in result.findings) + (result.validation.cases if result.validation else 0):,}",
              f"{result.seconds:.2f}")
    return t
