"""The ladder judged on random designs (tests/ladder_designs.py): one line a
design and the totals.

    python benchmarks/ladder_design_scan.py --seed 42 [--count 20] [--wide | --draw c_convert]

``--wide`` draws from every value a TOML profile takes (``draw_wide``: C
converted to every float format, windows 0..56, blocks to 1024, floors near
zero or none, carries 0..64, IEEE overflow, NaN payloads, intermediate
types and their kept bits); without it, ``draw``'s narrower space. Each
design's verdict is ``judge``'s: recovered (every key exact), open (the rest
named open and truly open), wrong (a key neither exact nor open, a failed
step, or no validation), and whether a wrong model was called validated.
A crash counts as failed. Exit 1 when any design is wrong-validated.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    from ladder_designs import sweep

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--wide", action="store_true", help="draw_wide's designs")
    ap.add_argument("--draw", choices=("draw", "wide", "c_convert"), default=None,
                    help="the drawing function (c_convert: draw's with C converted on entry)")
    ap.add_argument("--only", default=None, help="design numbers to run (comma-separated)")
    ap.add_argument("--held-out", type=int, default=8000, help="held-out cases a design")
    args = ap.parse_args()
    only = None if args.only is None else {int(x) for x in args.only.split(",")}
    tally = dict.fromkeys(("count", "recovered", "open", "wrong", "wrong_validated", "failed"), 0)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        t = time.time()
        for idx, (fam, fmt, d, p), v in sweep(args.seed, args.count, Path(tmp), only,
                                              args.held_out, args.draw or args.wide):
            if v == "unsupported":
                print(f"{idx:3} skip  {fam} {fmt}->{d} (not run on this profile)", flush=True)
                t = time.time()
                continue
            tally["count"] += 1
            desc = f"{fam} {fmt}->{d} {json.dumps(p)}"
            if isinstance(v, str):
                tally["failed"] += 1
                print(f"{idx:3} CRASH {time.time() - t:5.1f} s  {desc}\n      {v}", flush=True)
            else:
                tally[v.kind] += 1
                tally["wrong_validated"] += v.wrong_validated
                print(f"{idx:3} {v.kind:9} {time.time() - t:5.1f} s  {desc}", flush=True)
                if v.kind != "recovered":
                    print(f"      {v.text()}", flush=True)
            t = time.time()
    print(f"seed {args.seed} {args.draw or ('wide' if args.wide else 'draw')}: "
          + ", ".join(f"{k} {n}" for k, n in tally.items()) + f" ({time.time() - t0:.0f} s)")
    return 1 if tally["wrong_validated"] else 0


if __name__ == "__main__":
    sys.exit(main())
