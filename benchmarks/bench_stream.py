"""Peak memory of `tcprobe score` and `tcprobe validate --resume` on big captures.

    python benchmarks/bench_stream.py [--sizes 1e6,3e6,1e7] [--keep DIR]

Writes a capture file of each size (mma.bf16.f32.k16, 73 bytes a case, the
header `validate` would write for that plan, recorded words made up: the
reading is what is measured), then runs in a fresh process each of

    tcprobe score --capture FILE --model auto
    tcprobe validate ... --cases N --out DIR --resume   (re-scores every chunk)

and prints the peak resident memory of that process and its wall time.
Both read the capture chunk by chunk, so the peak must not grow with the
capture (goal: under 400 MB at every size).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATAPATH = "mma.bf16.f32.k16"
CHUNK = 16384

PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
        "sys.stderr.write(r.stderr.decode()[-300:] if r.returncode > 1 else ''); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def write_capture(folder: Path, n: int) -> Path:
    from tcprobe import suites
    from tcprobe.capture import binary
    from tcprobe.devices.sim import SimDevice
    from tcprobe.models.cases import Cases
    from tcprobe.models.datapath import Datapath

    dp = Datapath.parse(DATAPATH)
    plan = suites.Plan(suites.SUITES, n, CHUNK)
    keys = suites.generator_keys(dp, plan.suites)
    head = binary.make_header(dp, device=SimDevice("b200").info(), seed=0,
                              suites=list(plan.suites), generators=keys,
                              plan={"cases": plan.cases, "chunk": plan.chunk,
                                    "suites": list(plan.suites)})
    rng = np.random.default_rng(0)
    a = rng.integers(0, 1 << 16, (CHUNK, dp.k), dtype=np.uint32)
    b = rng.integers(0, 1 << 16, (CHUNK, dp.k), dtype=np.uint32)
    c = rng.integers(0, 1 << 32, CHUNK, dtype=np.uint32)
    words = rng.integers(0, 1 << 32, CHUNK, dtype=np.uint32)
    codes = rng.integers(0, len(keys), CHUNK, dtype=np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "capture.tcap"
    with binary.Writer(path, head) as w:
        for i in range(plan.n_chunks):
            m = plan.chunk_size(i)
            w.append(Cases(a[:m], b[:m], c[:m]), words[:m], codes[:m])
    return path


def peak(cmd: list[str]) -> tuple[int, float, int]:
    """(exit status, seconds, peak RSS in MB) of ``cmd`` in a fresh process."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "200"})
    dt = time.perf_counter() - t
    sys.stderr.write(r.stderr)
    status, kb = r.stdout.split()
    return int(status), dt, int(kb) // 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,3e6,1e7")
    ap.add_argument("--keep", help="Folder for the captures (default: a temporary one, removed).")
    args = ap.parse_args()
    from tcprobe.validation.counts import parse_count

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tcprobe-stream-"))
    tcprobe = [sys.executable, "-m", "tcprobe"]
    print(f"{'cases':>12} {'capture':>9} {'score peak':>11} {'score s':>8} "
          f"{'resume peak':>12} {'resume s':>9}")
    try:
        for text in args.sizes.split(","):
            n = parse_count(text)
            folder = root / f"n{n}"
            cap = write_capture(folder, n)
            size = cap.stat().st_size
            s_status, s_dt, s_mb = peak([*tcprobe, "score", "--capture", str(cap), "--model",
                                         "auto", "--show", "0"])
            r_status, r_dt, r_mb = peak([*tcprobe, "validate", "--datapath", DATAPATH,
                                         "--device", "sim:b200", "--cases", str(n), "--chunk",
                                         str(CHUNK), "--out", str(folder), "--resume",
                                         "--model", "auto", "--shrink", "0"])
            for what, st in (("score", s_status), ("resume", r_status)):
                if st > 1:
                    sys.exit(f"{what} of {n:,} cases failed (exit {st})")
            print(f"{n:>12,} {size / 1e6:>7.0f}MB {s_mb:>9}MB {s_dt:>8.1f} {r_mb:>10}MB "
                  f"{r_dt:>9.1f}", flush=True)
            if not args.keep:
                shutil.rmtree(folder)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
