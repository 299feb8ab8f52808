"""The public API's speed: ``tcprobe.dot`` against its own kernel and MMA-Sim.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_api.py [--cases 300000] [--peer-cases 100000]

The same N random raw bf16 K=16 dot products (f32 C and D; NaN, Inf and
subnormal words included) on H100's datapath, one thread: through
``tcprobe.dot`` (words given as uint32, and as the uint16 words of a
bfloat16 array's ``.view()``), through the engine's kernel directly
(``fused_dot``, the fast path), and through MMA-Sim 2.1.1 (torch on the
CPU, one thread; timed on ``--peer-cases`` of the cases). Prints ns per
dot, the API's time over its kernel's, the API's rate over MMA-Sim's, and
whether the words agree. Times are the best of ``--repeat`` runs after a
warm-up call (which loads or compiles the kernel).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tcprobe  # noqa: E402
from tcprobe.models.cases import Cases  # noqa: E402
from tcprobe.models.datapath import Datapath  # noqa: E402
from tcprobe.models.engine import Speed, fused_dot  # noqa: E402
from tcprobe.models.profiles import PROFILES  # noqa: E402

DATAPATH = "mma.bf16.f32.k16"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300_000)
    ap.add_argument("--peer-cases", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = args.cases
    rng = np.random.default_rng(args.seed)
    a = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    b = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    a16, b16 = a.astype(np.uint16), b.astype(np.uint16)
    dp = Datapath.parse(DATAPATH)
    params = PROFILES["h100"].params(dp)
    one = Speed(jobs=1)
    cases = Cases(a, b, c)

    def api32():
        return tcprobe.dot(a, b, c, datapath=DATAPATH, gpu="H100")

    def api16():
        return tcprobe.dot(a16, b16, c, datapath=DATAPATH, gpu="H100")

    def kernel():
        return fused_dot(dp, cases, params, fast=True, speed=one)

    for fn in (api32, api16, kernel):
        fn()  # warm-up: load or compile
    print(f"{n:,} random raw bf16 K=16 dot products on H100 ({DATAPATH}), one thread "
          f"(NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}), best of {args.repeat}")
    t_k = best(kernel, args.repeat)
    t_32 = best(api32, args.repeat)
    t_16 = best(api16, args.repeat)
    ns = {name: t / n * 1e9 for name, t in (("kernel", t_k), ("api32", t_32), ("api16", t_16))}
    print(f"engine kernel (fused_dot):       {ns['kernel']:7.1f} ns/dot")
    print(f"tcprobe.dot, uint32 words:       {ns['api32']:7.1f} ns/dot  "
          f"{t_32 / t_k:.2f}x the kernel's time")
    print(f"tcprobe.dot, uint16 (.view) words: {ns['api16']:5.1f} ns/dot  "
          f"{t_16 / t_k:.2f}x the kernel's time")
    same = bool((api32() == kernel()).all() and (api16() == kernel()).all())
    print(f"API words equal the kernel's on all {n:,}: {same}")
    try:
        import torch
        from mmasim.nv_ptx import MMA
    except ImportError:
        print("MMA-Sim is not installed: no ratio")
        return
    torch.set_num_threads(1)
    m = min(args.peer_cases, n)
    mma = MMA("Hopper", "m16n8k16.f32.bf16.bf16.f32")
    ta = torch.from_numpy(a16[:m].view(np.int16)).view(torch.bfloat16)
    tb = torch.from_numpy(b16[:m].view(np.int16)).view(torch.bfloat16)
    tc = torch.from_numpy(c[:m].view(np.int32)).view(torch.float32)
    mma.dpa(ta[:8], tb[:8], tc[:8])
    out = {}

    def peer():
        out["d"] = mma.dpa(ta, tb, tc)

    t_p = best(peer, max(1, args.repeat // 2)) / m * 1e9
    print(f"MMA-Sim 2.1.1 (timed on {m:,}):   {t_p:7.1f} ns/dot")
    print(f"ratio: tcprobe.dot is {t_p / ns['api32']:.1f}x MMA-Sim's rate (uint32 words), "
          f"{t_p / ns['api16']:.1f}x (uint16 words); the kernel {t_p / ns['kernel']:.1f}x")
    peer_words = out["d"].view(torch.int32).numpy().view(np.uint32)
    diff = int((peer_words != api32()[:m]).sum())
    print(f"agreement with MMA-Sim on {m:,}: {m - diff:,} equal words, {diff:,} differ")


if __name__ == "__main__":
    main()
