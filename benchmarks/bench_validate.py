"""End-to-end time of `tcprobe validate --format bf16 --cases 1e6 --device sim:b200`.

    python benchmarks/bench_validate.py [--cases 1e6] [--device sim:b200] [--repeat 2]

Runs the command in a fresh process (as a user would; the compiled kernels
come from numba's on-disk cache after the first run, which this script does
first and reports apart) into a temporary --out folder, and prints the wall
time of each run: generation, the device, the capture (73 MB for 1e6 bf16
cases), scoring the selected model and the IEEE baseline, shrinking and the
reports. Target: under 10 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def once(args, out: Path) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "tcprobe", "validate", "--format", args.format, "--cases",
           args.cases, "--device", args.device, "--out", str(out)]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    dt = time.perf_counter() - t
    if r.returncode not in (0, 1):
        sys.exit(f"validate failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return dt, r.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="1e6")
    ap.add_argument("--format", default="bf16")
    ap.add_argument("--device", default="sim:b200")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        first, _ = once(args, Path(tmp) / "warmup")
        print(f"first run (may compile kernels): {first:.2f} s")
        times = []
        for i in range(args.repeat):
            dt, out = once(args, Path(tmp) / f"run{i}")
            times.append(dt)
            print(f"run {i + 1}: {dt:.2f} s end to end")
        summary = [line for line in out.splitlines() if " cases in " in line]
        print(summary[-1].strip() if summary else "")
        print(f"best: {min(times):.2f} s for {args.cases} cases on {args.device} "
              f"(target: under 10 s)")


if __name__ == "__main__":
    main()
