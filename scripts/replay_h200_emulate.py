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
from pathlib import Path

from tcprobe.atlas import replay

# The captures are the checkout's (reports/silicon/), not the installed
# package's: a non-editable install holds none, and found 0 of 0 calls.
CHECKOUT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--module", default="tcprobe.torch")
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--splits", action="store_true", help="also the splits probe's calls")
    args = p.parse_args(argv)
    found = replay.calls(CHECKOUT, splits=args.splits)
    if not found:
        print(f"error: no committed H200 library calls under {CHECKOUT / replay.LIBRARY}",
              file=sys.stderr)
        return 2
    todo = [c for c in found if not args.only or any(s in c.id for s in args.only)]
    if not todo:
        print(f"error: --only {', '.join(args.only)}: no call's id holds it", file=sys.stderr)
        return 2
    print(f"replaying {len(todo)} H200 library calls under {args.module}.emulate(gpu='H200') "
          "(torch's import first)", file=sys.stderr, flush=True)
    try:
        emulate = importlib.import_module(args.module).emulate
    except ImportError as e:  # tcprobe.torch without torch: its one line, no traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    ok = 0
    for c in todo:
        t0 = time.perf_counter()
        differ, size, _ = replay.run(c, emulate, root=CHECKOUT)
        ok += differ == 0
        print(f"{c.id}: {differ} of {size} words differ ({time.perf_counter() - t0:.1f} s)",
              flush=True)
    print(f"{ok} of {len(todo)} calls reproduce every word under emulate(gpu='H200')")
    return 0 if ok == len(todo) else 1


if __name__ == "__main__":
    sys.exit(main())
