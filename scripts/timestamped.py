"""Run a command and time its output: seconds to the first byte on stdout or
stderr (a blank screen before it), the longest silence between lines, the
exit status and the first lines. One JSON line per run on stdout.

    python3 scripts/timestamped.py [--timeout S] [--stdin FILE] -- CMD ARGS...

Campaign 7 (docs/campaign-7.md) ran every README line through it."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time


def run(cmd: list[str], timeout: float, stdin=None, shell: bool = False) -> dict:
    t0 = time.monotonic()
    stamps: list[float] = []
    lines: list[str] = []  # in arrival order, as the stamps
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=stdin if stdin is not None else subprocess.DEVNULL, shell=shell,
                            start_new_session=True)  # its own group: a timeout ends it whole

    lock = threading.Lock()

    def pump(stream, tag):
        for raw in iter(stream.readline, b""):
            with lock:
                stamps.append(time.monotonic() - t0)
                lines.append(f"{tag}{raw.decode(errors='replace').rstrip()}")

    threads = [threading.Thread(target=pump, args=(proc.stdout, "")),
               threading.Thread(target=pump, args=(proc.stderr, "! "))]
    for t in threads:
        t.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the shell and what it started
        rc = "timeout"
    for t in threads:
        t.join()
    end = time.monotonic() - t0
    marks = stamps  # appended in order under the lock
    gaps = [b - a for a, b in zip([0.0, *marks], [*marks, end], strict=True)]
    return {"cmd": cmd if not shell else cmd, "rc": rc, "wall_s": round(end, 2),
            "first_output_s": round(marks[0], 2) if marks else None,
            "longest_silence_s": round(max(gaps), 2), "lines": len(lines),
            "after_longest_silence": (lines[gaps.index(max(gaps))] if gaps.index(max(gaps)) <
                                      len(lines) else "(the end)"),
            "head": lines[:6], "tail": lines[-4:],
            "traceback": any("Traceback" in ln for ln in lines)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--shell", action="store_true")
    p.add_argument("cmd", nargs="+")
    a = p.parse_args()
    cmd = " ".join(a.cmd) if a.shell else a.cmd
    print(json.dumps(run(cmd, a.timeout, shell=a.shell)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
