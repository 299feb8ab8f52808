"""Engine speed against MMA-Sim: the same bf16 K=16 cases, both simulators.

    python benchmarks/bench_engine.py [--cases 1000000] [--peer-cases 100000]
                                      [--kinds all|none|LABEL,...] [--kind-cases 200000]

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

Then one line per datapath kind (``--kinds``): bf16, f16, tf32 and fp8 mma,
tcgen05 f16 and f8f6f4, and the block-scaled mxf8f6f4, mxf4 and mxf4nvf4;
raw random words (NaN, Inf, subnormals; random scales), tcprobe's model of
MMA-Sim's datapath (the Hopper/Ada profiles, the ``mmasim-tcgen05`` profile)
timed on ``--kind-cases`` cases on one thread, MMA-Sim on ``--kind-peer-cases``
of them (one call, its best size), both in CPU seconds of this process; the
ratio and the words compared on the cases both evaluated. Use
``NUMBA_NUM_THREADS=1`` for one-core figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

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
    ap.add_argument("--kinds", default="all",
                    help="datapath kinds of the table: all, none, or labels (comma-separated)")
    ap.add_argument("--kind-cases", type=int, default=200_000)
    ap.add_argument("--kind-peer-cases", type=int, default=20_000)
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
    if args.kinds != "none":
        kinds_table(args)


# label, datapath, MMA-Sim architecture and instruction (None: tcgen05, the
# bridge names it), the tcprobe profile of that datapath
KINDS = [
    ("bf16 mma", "mma.bf16.f32.k16", "Hopper", "m16n8k16.f32.bf16.bf16.f32", "h100"),
    ("f16 mma", "mma.f16.f32.k16", "Hopper", "m16n8k16.f32.f16.f16.f32", "h100"),
    ("tf32 mma", "mma.tf32.f32.k8", "Hopper", "m16n8k8.f32.tf32.tf32.f32", "h100"),
    ("fp8 mma", "mma.e4m3.f32.k32", "Ada Lovelace", "m16n8k32.f32.e4m3.e4m3.f32", "ada"),
    ("tcgen05 f16", "tcgen05.f16.f32.k16", "Blackwell", None, "mmasim-tcgen05"),
    ("tcgen05 f8f6f4", "tcgen05.f8f6f4.e4m3.f32.k32", "Blackwell", None, "mmasim-tcgen05"),
    ("mxf8f6f4", "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1", "Blackwell", None, "mmasim-tcgen05"),
    ("mxf4", "tcgen05.mxf4.e2m1.f32.k64.ue8m0x2", "Blackwell", None, "mmasim-tcgen05"),
    ("mxf4nvf4", "tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", "Blackwell", None, "mmasim-tcgen05"),
]


def kinds_table(args) -> None:
    """One line per datapath kind: tcprobe and MMA-Sim on the same raw cases."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    try:
        import mmasim_bridge as bridge
        import torch
        from mmasim.nv_ptx import MMA, TCGen05MMA, TCGen05MMABlockScale
        from tcgen05_gen import random_cases
    except ImportError:
        print("MMA-Sim is not installed: no table of kinds")
        return
    from tcprobe.models.registry import resolve

    torch.set_num_threads(1)
    global CPU_TIME
    CPU_TIME = True
    want = None if args.kinds == "all" else {x.strip() for x in args.kinds.split(",")}
    n, m = args.kind_cases, min(args.kind_peer_cases, args.kind_cases)
    print(f"\nper kind: {n:,} raw random cases for tcprobe, the first {m:,} for MMA-Sim, "
          f"one thread, CPU seconds, best of {args.repeat}")
    print(f"{'kind':15} {'datapath':40} {'tcprobe ns':>10} {'MMA-Sim ns':>10} {'ratio':>7}  words")
    for label, dp_id, arch, instr, profile in KINDS:
        if want is not None and label not in want:
            continue
        dp = Datapath.parse(dp_id)
        cases = random_cases(dp, n, "raw", seed=args.seed)
        model = resolve(profile, dp)
        model.evaluate(cases.take(slice(0, 8)), Speed("always"))
        one = Speed("always", 1)
        ours = best_time(lambda model=model, cases=cases, one=one: model.evaluate(cases, one),
                         args.repeat) / n * 1e9
        part = cases.take(slice(0, m))
        view = bridge._view
        if instr is not None:
            op = MMA(arch, instr)
            inputs = (view(part.a, dp.a_type), view(part.b, dp.b_type), view(part.c, dp.c))
        elif not dp.block_scaled:
            op = TCGen05MMA(arch, bridge.shape_and_type(dp))
            inputs = (view(part.a, dp.a_type), view(part.b, dp.b_type), view(part.c, dp.c))
        else:
            op = TCGen05MMABlockScale(arch, bridge.shape_and_type(dp))
            if dp.kind == "mxf8f6f4":
                ab = (view(part.a, dp.a_type), view(part.b, dp.b_type))
            else:
                ab = (bridge._e2m1_values(part.a), bridge._e2m1_values(part.b))
            inputs = (*ab, view(part.c, dp.c), view(part.scale_a, dp.scale_type),
                      view(part.scale_b, dp.scale_type))
        out = {}

        def peer(op=op, inputs=inputs, out=out):
            out["d"] = op.dpa(*inputs)

        theirs = best_time(peer, args.repeat) / m * 1e9
        peer_words = bridge._words(out["d"], dp.d_type)
        ours_words = model.evaluate(part)
        diff = int((peer_words != ours_words).sum())
        print(f"{label:15} {dp_id:40} {ours:10.1f} {theirs:10.1f} {theirs / ours:6.1f}x  "
              f"{m - diff:,} of {m:,} equal")


if __name__ == "__main__":
    main()
