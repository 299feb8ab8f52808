"""Replay every committed H200 library call through ``emulate(gpu="H200")``.

    python3 scripts/replay_h200_emulate.py [--module tcprobe.torch] [--only SUBSTR] [--splits]

prints one line per call (words that differ) and the count of calls that
reproduce every word under a plain ``emulate(gpu="H200")`` (no schedule
given). ``--module`` names the package whose ``emulate`` runs (to measure an
older copy of tcprobe.torch).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from tcprobe.atlas import replay


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--module", default="tcprobe.torch")
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--splits", action="store_true", help="also the splits probe's calls")
    args = p.parse_args(argv)
    emulate = importlib.import_module(args.module).emulate
    todo = [c for c in replay.calls(splits=args.splits)
            if not args.only or any(s in c.id for s in args.only)]
    ok = 0
    for c in todo:
        t0 = time.perf_counter()
        differ, size, _ = replay.run(c, emulate)
        ok += differ == 0
        print(f"{c.id}: {differ} of {size} words differ ({time.perf_counter() - t0:.1f} s)",
              flush=True)
    print(f"{ok} of {len(todo)} calls reproduce every word under emulate(gpu='H200')")
    return 0 if ok == len(todo) else 1


if __name__ == "__main__":
    sys.exit(main())
