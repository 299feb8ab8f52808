"""``tcprobe report merge``: join campaign folders (shards) into one summary."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tcprobe import campaign as camp
from tcprobe.commands.campaign import finish


@click.group("report")
def command():
    """Work with saved reports."""


@command.command("merge")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Folder for the merged summary.{json,md,html}.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Also write the merged JSON here.")
def merge(folders, out_dir, json_path):
    """Join the summaries of campaign folders (the shards of one campaign run
    with --shard I/N) into one. Exit 1 when any datapath mismatched."""
    paths = [Path(f) for f in folders]
    for p in paths:
        if not p.is_dir():
            raise camp.CampaignError(f"{p} is not a folder")
    try:
        summary = camp.merge(paths)
    except (KeyError, TypeError, json.JSONDecodeError) as e:
        raise camp.CampaignError(f"a summary.json in {', '.join(folders)} is malformed ({e})") from None
    finish(summary, Path(out_dir), json_path)

