"""tcprobe targets: list the datapaths tcprobe models (the tcgen05 suites)."""

from __future__ import annotations

import click
from rich.table import Table

from tcprobe.commands.options import Names, json_option
from tcprobe.console import console, note, say, write_json
from tcprobe.validation.targets import SUITES, targets


@click.command("targets")
@click.option("--set", "suites", multiple=True, type=Names([*SUITES, "all"]),
              help="blog: the 46 B200 tcgen05 datapaths of the write-up; mixed: the 50 "
                   "mixed A/B pairs; hmma: mma.sync/wgmma; integer: integer mma.sync/wgmma (s8, "
                   "u8, s4, u4, b1; wrap and satfinite); sparse: mma.sp and wgmma.sp; mma-new: "
                   "Turing and sm_120a mma.sync; dmma: f64 mma.sync; mfma: AMD v_mfma (each CDNA "
                   "generation). "
                   "Repeatable; default blog and mixed.")
@click.option("--suite", "old_suites", multiple=True, hidden=True,
              type=Names([*SUITES, "all"]))
@json_option("Write the targets as JSON")
def command(suites, old_suites, json_path):
    """List datapaths: the id --datapath takes (family, kind, types, K, scales,
    sparsity), scaling, arch and instruction descriptor."""
    if old_suites:  # the old name (validate's --suite names case suites, not these)
        note("targets --suite is deprecated: use --set")
        suites = tuple(suites) + tuple(old_suites)
    suites = tuple(dict.fromkeys(suites))  # a set named twice is listed once
    chosen = SUITES if "all" in suites else (suites or ("blog", "mixed"))
    rows = targets(chosen)
    t = Table(title=f"{len(rows)} targets", title_justify="left")
    for col, just in (("#", "right"), ("set", "left"), ("group", "left"), ("name", "left"),
                      ("datapath (what --datapath takes)", "left"), ("scaling", "left"),
                      ("arch", "left"), ("idesc", "left")):
        t.add_column(col, justify=just, overflow="fold", no_wrap=col.startswith("datapath"))
    for i, r in enumerate(rows, 1):
        d = r.descriptor
        t.add_row(str(i), r.suite, r.group, r.name, r.datapath.id, r.scaling, r.arch,
                  "-" if d is None else f"{d:#010x}")
    console.print(t)
    counts = {s: sum(r.suite == s for r in rows) for s in chosen}
    say(", ".join(f"{s}: {n}" for s, n in counts.items()))
    if json_path:
        write_json(json_path, {"targets": [r.as_dict() for r in rows], "counts": counts})
