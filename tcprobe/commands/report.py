"""``tcprobe report merge``: join the shards of a campaign into one summary."""

from __future__ import annotations

from pathlib import Path

import click

from tcprobe.capture.lock import hold_out_folder
from tcprobe.commands.campaign import finish
from tcprobe.commands.options import file_target, named_path
from tcprobe.outfiles import refuse_inside
from tcprobe.validation import campaign as camp
from tcprobe.validation import merge as campaign_merge


@click.group("report")
def command():
    """Work with saved reports."""


@command.command("merge")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--out", "out_dir", callback=named_path, type=click.Path(file_okay=False), required=True,
              help="Folder for the merged summary.{json,md,html} (none of the shards).")
@click.option("--json", "json_path", callback=file_target, type=click.Path(dir_okay=False),
              help="Also write the merged JSON here.")
def merge(folders, out_dir, json_path):
    """Join the summaries of the shards of one campaign (run with --shard I/N,
    every shard once) into one. Exit 1 when any datapath mismatched or failed
    on the device."""
    refuse_inside(json_path, out_dir, "--json", "--out")
    paths = [Path(f) for f in folders]
    for p in paths:
        if not p.is_dir():
            raise camp.CampaignError(f"{p} is not a folder")
    out = Path(out_dir)
    summary = campaign_merge.merge(paths)
    campaign_merge.check_out(out, paths)
    with hold_out_folder(out):
        finish(summary, out, json_path)
