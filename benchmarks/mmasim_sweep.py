"""Every NVIDIA instruction MMA-Sim 2.1.1 models, validated with ``--model auto``.

    python benchmarks/mmasim_sweep.py [--cases 200] [--rest 16] [--arch Turing] [--json out.json]

The instruction strings are read from MMA-Sim's own tables
(``mmasim/nv_ptx/isa_mma.py``, ``isa_wgmma.py``, ``isa_tcgen05mma.py``: plain
and block-scaled, every arch), nothing listed by hand. Each runs what
``tcprobe validate --device mmasim:ARCH:INSTR --model auto`` runs (every
suite, seed 0): the mmasim device's own datapath, the model ``auto`` picks for
its arch's GPU. Strings that differ only in M or N share a datapath (M and N
do not change a dot product): the first string of each (arch, datapath) runs
``--cases`` cases, the others ``--rest``.

It prints, per arch, how many strings agree (0 mismatches), disagree, and
are refused (by MMA-Sim, or by tcprobe: no datapath, no model), with each
refusal's reason once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tcprobe import suites as suites_mod  # noqa: E402
from tcprobe.devices.base import DeviceError  # noqa: E402
from tcprobe.devices.mmasim import ARCHS, MmaSimDevice, parse_instruction  # noqa: E402
from tcprobe.models import registry  # noqa: E402
from tcprobe.models.engine import Speed  # noqa: E402
from tcprobe.models.model import ModelError  # noqa: E402
from tcprobe.schema import SchemaError, check_instruction  # noqa: E402
from tcprobe.validation import validate as v  # noqa: E402


def instruction_strings() -> list[tuple[str, str]]:
    """(arch, FAMILY.SHAPE_AND_TYPE) for every string in MMA-Sim's ISA tables."""
    from mmasim.nv_ptx import isa_mma, isa_tcgen05mma, isa_wgmma

    tables = (("mma", isa_mma.mma_shape_and_type), ("mma", isa_mma.mma_block_scale_shape_and_type),
              ("wgmma", isa_wgmma.wgmma_shape_and_type),
              ("tcgen05", isa_tcgen05mma.tcgen05mma_shape_and_type),
              ("tcgen05", isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type))
    out = []
    for family, table in tables:
        for arch, strings in table.items():
            out.extend((arch, f"{family}.{s}") for s in strings)
    return out


def validate_one(arch: str, instr: str, cases: int, seed: int = 0) -> dict:
    """What ``validate --device mmasim:ARCH:INSTR --model auto --cases N`` finds:
    {status: agree | disagree | refused, datapath, model, mismatches, reason}."""
    row = {"arch": arch, "instruction": instr, "cases": cases}
    try:
        device = MmaSimDevice(f"{arch}:{instr}")
        dp = device.fixed_datapath()
        row["datapath"] = dp.id
        check_instruction(dp.family, dp.kind, dp.a_type, dp.b_type, dp.c, dp.d_type, dp.k,
                          dp.scale_type, dp.scale_vec, dp.sparse, dp.saturate, dp.id)
        model = registry.resolve("auto", dp, device.info().get("gpu"))
        row["model"] = model.name
        plan = suites_mod.Plan(suites_mod.SUITES, cases)
        # the plain kernel: the fast path compiles one kernel per configuration,
        # which costs more than a few hundred cases (the words are the same)
        result = v.run(dp, device, [model], plan, seed, capture=None, speed=Speed("never"))
    except (DeviceError, ModelError, SchemaError, v.ValidateError) as e:
        return {**row, "status": "refused", "reason": str(e).splitlines()[0]}
    n = result.primary.total
    return {**row, "status": "disagree" if n else "agree", "mismatches": n,
            "caught_by": result.primary.caught_by()}


def sweep(strings, cases: int, rest: int, progress=None) -> list[dict]:
    """Validate every string: the first of each (arch, datapath) at ``cases``."""
    seen, rows = set(), []
    for i, (arch, instr) in enumerate(strings):
        try:
            key = (arch, parse_instruction(instr)[2].id)
        except DeviceError:
            key = (arch, instr)
        n = rest if key in seen else cases
        seen.add(key)
        rows.append(validate_one(arch, instr, n))
        if progress:
            progress(i + 1, len(strings), rows[-1])
    return rows


def summary(rows: list[dict]) -> dict:
    """{arch: Counter(status)} in MMA-Sim's arch order, and 'all'."""
    by = defaultdict(Counter)
    for r in rows:
        by[r["arch"]][r["status"]] += 1
        by["all"][r["status"]] += 1
    return {a: dict(by[a]) for a in (*ARCHS, "all") if a in by}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200, help="cases of each datapath's first string")
    ap.add_argument("--rest", type=int, default=16, help="cases of the strings that share it")
    ap.add_argument("--arch", action="append", help="only these archs (repeatable)")
    ap.add_argument("--json", help="write every row here")
    args = ap.parse_args(argv)
    strings = [s for s in instruction_strings() if not args.arch or s[0] in args.arch]
    t0 = time.perf_counter()

    def progress(i, n, row):
        if row["status"] != "agree" or i % 250 == 0 or i == n:
            print(f"[{i}/{n} {time.perf_counter() - t0:.0f}s] {row['arch']} {row['instruction']}: "
                  f"{row['status']} {row.get('mismatches', row.get('reason', ''))}", flush=True)

    rows = sweep(strings, args.cases, args.rest, progress)
    table = summary(rows)
    print(f"\n{len(rows):,} MMA-Sim instruction strings in {time.perf_counter() - t0:.0f} s "
          f"({sum(r['cases'] for r in rows if r['status'] != 'refused'):,} cases)")
    print(f"{'arch':<14} {'strings':>8} {'agree':>7} {'disagree':>9} {'refused':>8}")
    for arch, c in table.items():
        print(f"{arch:<14} {sum(c.values()):>8,} {c.get('agree', 0):>7,} "
              f"{c.get('disagree', 0):>9,} {c.get('refused', 0):>8,}")
    reasons = Counter(r["reason"] for r in rows if r["status"] == "refused")
    for reason, n in reasons.most_common():
        print(f"refused x{n}: {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": table, "rows": rows}, indent=1))
    return 1 if table.get("all", {}).get("disagree") else 0


if __name__ == "__main__":
    raise SystemExit(main())
