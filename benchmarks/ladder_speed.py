"""Seconds for a full ladder (every step, 10,000-case validation) on each
built-in sim profile, per family and format; the issue's target is "seconds"."""

import time

from tcprobe.devices.sim import BUILTIN, SimDevice
from tcprobe.ladder import run_ladder

FORMATS = ("tf32", "bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def main() -> None:
    rows = []
    for name in BUILTIN:
        dev = SimDevice.builtin(name)
        for fam in dev.families:
            for fmt in FORMATS:
                try:
                    dp = dev.datapath(fam, fmt)
                except ValueError:
                    continue
                if not dev.supports(dp):
                    continue
                t0 = time.perf_counter()
                r = run_ladder(dev, dp)
                dt = time.perf_counter() - t0
                cases = sum(f.cases for f in r.findings) + r.validation.cases
                rows.append(dt)
                print(f"sim:{name:5} {dp.id:32} {dt:6.2f} s  {cases:7,} cases  "
                      f"{r.validation.mismatches} mismatches")
    rows.sort()
    print(f"{len(rows)} ladders: median {rows[len(rows) // 2]:.2f} s, slowest {rows[-1]:.2f} s "
          "(target: seconds)")


if __name__ == "__main__":
    main()
