"""Engine speed against MMA-Sim: the same bf16 K=16 cases, both simulators.

    python benchmarks/bench_engine.py [--cases 1000000] [--peer-cases 100000]

Evaluates N random raw bf16 dot products (K=16, f32 C and D; NaN, Inf and
subnormal words included) with tcprobe's engine (the h100 profile, which is
MMA-Sim's Hopper m16n8k16.f32.bf16.bf16.f32 datapath) on one thread and on
every core, and with MMA-Sim 2.1.1 (torch on the CPU, one thread). MMA-Sim
is timed on the first ``--peer-cases`` of the same cases
(default: all of them), once in one call and once in batches of 100,000
(its best rate: larger calls spill its float64 temporaries out of the
caches). Prints both rates, their ratio, and whether the two agree bit
for bit on the cases both evaluated. Times are the best of ``--repeat`` runs
after one warm-up call (which also loads or compiles the kernel).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import Speed, fused_dot
from tcprobe.models.profiles import PROFILES

BATCH = 100_000


def best_time(fn, repeat: int) -> float:
    """Best of ``repeat`` calls, in CPU seconds of this process when
    ``CPU_TIME`` (one-thread runs: robust when other processes share the
    cores), else in wall seconds."""
    clock = time.process_time if CPU_TIME else time.perf_counter
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


CPU_TIME = False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1_000_000)
    ap.add_argument("--peer-cases", type=int, default=None,
                    help="cases MMA-Sim is timed on (default: all of them)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--cpu-time", action="store_true",
                    help="time the one-thread runs in CPU time of the process (for a shared "
                         "machine); the multi-thread run stays in wall time")
    args = ap.parse_args()
    global CPU_TIME

    n = args.cases
    rng = np.random.default_rng(args.seed)
    a = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    b = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    cases = Cases(a, b, c)
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
    params = PROFILES["h100"].params(dp)

    print(f"{n:,} random raw bf16 K=16 dot products (f32 C and D), seed {args.seed}")
    t = time.perf_counter()
    fused_dot(dp, cases.take(slice(0, 8)), params, fast=True)
    print(f"tcprobe kernel ready in {time.perf_counter() - t:.2f} s (compile or cache load)")
    one = Speed(jobs=1)
    CPU_TIME = args.cpu_time
    clock = "CPU" if CPU_TIME else "wall"
    print(f"one-thread times are {clock} seconds, best of {args.repeat}")
    ours = best_time(lambda: fused_dot(dp, cases, params, fast=True, speed=one), args.repeat)
    ours_ns = ours / n * 1e9
    print(f"tcprobe engine, 1 thread:   {ours:7.3f} s  {ours_ns:8.1f} ns/dot  "
          f"{n / ours / 1e6:6.2f} M dots/s")
    cores = os.cpu_count() or 1
    if cores > 1:
        CPU_TIME = False
        many = best_time(lambda: fused_dot(dp, cases, params, fast=True, speed=Speed(jobs=cores)),
                         args.repeat)
        CPU_TIME = args.cpu_time
        print(f"tcprobe engine, {cores} threads (wall):  {many:7.3f} s  {many / n * 1e9:8.1f} ns/dot  "
              f"{n / many / 1e6:6.2f} M dots/s")
    plain_n = min(n, 50_000)
    fused_dot(dp, cases.take(slice(0, 8)), params, fast=False)
    plain = best_time(lambda: fused_dot(dp, cases.take(slice(0, plain_n)), params, fast=False), 1)
    print(f"tcprobe plain kernel:       {plain / plain_n * 1e9:8.1f} ns/dot "
          f"(timed on {plain_n:,}; the reference the fast path is tested against)")

    try:
        import torch
        from mmasim.nv_ptx import MMA
    except ImportError:
        print("MMA-Sim is not installed (pip install 'tcprobe[peer]'): no ratio")
        return
    torch.set_num_threads(1)
    m = n if args.peer_cases is None else min(args.peer_cases, n)
    mma = MMA("Hopper", "m16n8k16.f32.bf16.bf16.f32")
    ta = torch.from_numpy(a[:m].astype(np.uint16).view(np.int16)).view(torch.bfloat16)
    tb = torch.from_numpy(b[:m].astype(np.uint16).view(np.int16)).view(torch.bfloat16)
    tc = torch.from_numpy(c[:m].view(np.int32)).view(torch.float32)
    mma.dpa(ta[:8], tb[:8], tc[:8])
    out = {}

    def peer():
        out["d"] = mma.dpa(ta, tb, tc)

    theirs = best_time(peer, args.repeat)
    theirs_ns = theirs / m * 1e9
    scaled = "" if m == n else f" (timed on {m:,}, scaled to {n:,}: {theirs_ns * n / 1e9:.1f} s)"
    print(f"MMA-Sim 2.1.1, 1 thread:    {theirs:7.3f} s  {theirs_ns:8.1f} ns/dot  "
          f"{1e3 / theirs_ns:6.2f} M dots/s{scaled}")
    print(f"ratio (one core): tcprobe is {theirs_ns / ours_ns:.1f}x MMA-Sim's rate")
    if m >= 2 * BATCH:
        # MMA-Sim's float64 temporaries outgrow the caches on large calls; in
        # batches of 100k it runs at its best rate, the fairest figure for it.
        def batched():
            for lo in range(0, m, BATCH):
                mma.dpa(ta[lo:lo + BATCH], tb[lo:lo + BATCH], tc[lo:lo + BATCH])

        def ours_batched():
            for lo in range(0, m, BATCH):
                fused_dot(dp, parts[lo // BATCH], params, fast=True, speed=one)

        parts = [cases.take(slice(lo, lo + BATCH)) for lo in range(0, m, BATCH)]
        best = best_time(batched, args.repeat) / m * 1e9
        ours_b = best_time(ours_batched, args.repeat) / m * 1e9
        print(f"in batches of {BATCH:,}: MMA-Sim {best:.1f} ns/dot, tcprobe {ours_b:.1f} ns/dot; "
              f"ratio (one core): {best / ours_b:.1f}x")
    peer_words = out["d"].view(torch.int32).numpy().view(np.uint32)
    ours_words = fused_dot(dp, cases.take(slice(0, m)), params, fast=True)
    diff = int((peer_words != ours_words).sum())
    print(f"agreement on the {m:,} cases both evaluated: {m - diff:,} equal words, {diff:,} differ")


if __name__ == "__main__":
    main()
