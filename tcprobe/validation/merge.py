"""``tcprobe report merge``: the shards of one campaign joined into one summary.

The shards are checked against each other before anything is added up:
each is a finished campaign folder (its ``summary.json``); all are shards
of the same campaign (the same datapaths before sharding, suites and
their counts, sparse lane counts, seed, models, chunk size, shard count
N, and device); no shard is given twice; together they cover every shard
1/N .. N/N, each holding exactly the datapaths its shard takes, so no
datapath is counted twice or left out. The merged summary is written to
a folder that is none of the shards (nor inside one).
"""

from __future__ import annotations

import json
from pathlib import Path

from tcprobe.validation.campaign import SCHEMA, CampaignError, Piece, summarize

# The options that make two shards shards of one campaign, as a refusal names them.
SAME = {"suites": "other suite counts", "lanes": "other sparse lane counts", "seed": "another seed",
        "models": "other models", "chunk": "another chunk size"}


def _read(folder: Path) -> dict:
    s = folder / "summary.json"
    if not s.is_file():
        raise CampaignError(f"{folder} has no summary.json (is it a campaign folder that finished?)")
    try:
        data = json.loads(s.read_text())
    except (OSError, ValueError, RecursionError) as e:
        raise CampaignError(f"{s}: not a campaign summary ({getattr(e, 'strerror', None) or e})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise CampaignError(f"{s}: not a campaign summary (schema {schema!r})")
    spec = data.get("spec")
    if not isinstance(spec, dict) or not isinstance(data.get("datapaths"), list):
        raise CampaignError(f"{s}: not a campaign summary (no spec or datapaths)")
    return data


def _shard(folder: Path, data: dict) -> tuple[int, int]:
    text = str(data["spec"].get("shard", "1/1"))
    i, _, n = text.partition("/")
    try:
        return int(i), int(n)
    except ValueError:
        raise CampaignError(f"{folder}/summary.json: shard {text!r} is not I/N") from None


def _whole(folder: Path, data: dict, shard: tuple[int, int]) -> list[str]:
    """Every datapath of the campaign the shard belongs to."""
    whole = data.get("campaign_targets")
    if isinstance(whole, list):
        return whole
    if shard == (1, 1):  # a whole campaign: its own datapaths
        return list(data["spec"].get("targets") or [])
    raise CampaignError(f"{folder}/summary.json names no datapaths of the whole campaign (written "
                        "by an older tcprobe): run that shard again to merge it")


def _device_key(data: dict) -> tuple:
    d = data.get("device") or {}
    return (d.get("gpu") or d.get("device"), bool(d.get("simulated")))


def check_shards(folders: list[Path], shards: list[dict]) -> tuple[list[str], int]:
    """(every datapath of the campaign, N) when the shards are the whole of
    one campaign; CampaignError naming the shard otherwise."""
    first, first_data = folders[0], shards[0]
    seen: dict[Path, Path] = {}
    by_index: dict[int, Path] = {}
    owner: dict[str, Path] = {}
    n0 = _shard(first, first_data)[1]
    whole0 = _whole(first, first_data, _shard(first, first_data))
    for folder, data in zip(folders, shards, strict=True):
        real = folder.resolve()
        if real in seen:
            raise CampaignError(f"{folder} is given twice (as {seen[real]}): give each shard once")
        seen[real] = folder
        i, n = _shard(folder, data)
        if n != n0:
            raise CampaignError(f"{folder} is shard {i}/{n} but {first} is one of {n0} shards: "
                                "merge the shards of one campaign")
        if i in by_index:
            raise CampaignError(f"{folder} and {by_index[i]} are both shard {i}/{n}: give each "
                                "shard once")
        by_index[i] = folder
        whole = _whole(folder, data, (i, n))
        if whole != whole0:
            raise CampaignError(f"{folder} is a shard of a campaign over other datapaths than "
                                f"{first}'s: merge the shards of one campaign")
        for key, what in SAME.items():
            if data["spec"].get(key) != first_data["spec"].get(key):
                raise CampaignError(f"{folder} ran with {what} than {first} "
                                    f"({data['spec'].get(key)!r}, not "
                                    f"{first_data['spec'].get(key)!r}): merge the shards of one "
                                    "campaign")
        if _device_key(data) != _device_key(first_data):
            raise CampaignError(f"{folder} ran on {_device_key(data)[0]}, {first} on "
                                f"{_device_key(first_data)[0]}: merge the shards of one campaign")
        mine = [row.get("datapath") for row in data["datapaths"]]
        for dp in mine:
            if dp in owner:
                raise CampaignError(f"{folder} and {owner[dp]} both hold {dp}: shards overlap")
            owner[dp] = folder
        want = [t for j, t in enumerate(whole0) if j % n == i - 1]
        if sorted(map(str, mine)) != sorted(want):
            raise CampaignError(f"{folder} does not hold the datapaths of shard {i}/{n} "
                                f"({len(mine)} held, {len(want)} in that shard)")
    missing = [f"{i}/{n0}" for i in range(1, n0 + 1) if i not in by_index]
    if missing:
        raise CampaignError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                            f"missing: run {'them' if len(missing) > 1 else 'it'} (validate "
                            "--shard I/N with the same options) and merge all "
                            f"{n0} shards")
    return whole0, n0


def check_out(out: Path, folders: list[Path]) -> None:
    """The merged summary never goes into a shard's folder (nor inside one)."""
    o = out.resolve()
    for f in folders:
        r = f.resolve()
        if o == r or r in o.parents:
            raise CampaignError(f"--out {out} is {'the shard' if o == r else 'inside the shard'} "
                                f"{f}: merge never writes into a shard; choose another --out")


def merge(folders: list[Path]) -> dict:
    """The summary of the whole campaign from its shards' folders (checked:
    :func:`check_shards`)."""
    shards = [_read(f) for f in folders]
    whole, _ = check_shards(folders, shards)
    pieces, seconds = [], 0.0
    for folder, data in zip(folders, shards, strict=True):
        try:
            seconds += float(data.get("seconds") or 0)
            for row in data["datapaths"]:
                for suite, cell in row["suites"].items():
                    pieces.append(Piece(row["datapath"], suite, int(cell["cases"]),
                                        cell["mismatches"], cell.get("seconds", 0.0),
                                        row.get("model"), cell["status"], cell.get("note", ""),
                                        reproducers=list(cell.get("reproducers", []))))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise CampaignError(f"{folder}/summary.json is malformed ({type(e).__name__}: "
                                f"{e})") from None
    order = {dp: i for i, dp in enumerate(whole)}
    pieces.sort(key=lambda p: order.get(p.datapath, len(order)))
    spec = {**shards[0]["spec"], "targets": whole, "shard": "1/1"}
    summary = summarize(pieces, shards[0].get("device") or {}, spec, seconds, whole)
    summary["merged_from"] = [f"{f} ({d['spec'].get('shard', '1/1')})"
                              for f, d in zip(folders, shards, strict=True)]
    return summary
