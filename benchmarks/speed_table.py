"""The README's speed table: every workload of issue 37 beside its reference,
measured in one run on one machine.

    python3 benchmarks/speed_table.py [--quick] [--readme README.md] [--json FILE]

Each row times tcprobe and its reference in the same process (or, for the
start-up rows, in fresh processes started one after the other), prints the
two figures and their ratio, and says whether issue 37's target is met. The
arithmetic rows run on one thread (``NUMBA_NUM_THREADS=1``, torch one
thread) and check the words equal where two simulators ran. ``--readme``
rewrites the table between the ``speed-table`` markers of that file;
``--quick`` runs smaller sizes (a smoke run, not the figures to quote).

Rows: the engine against a practical floor (``bench_floor.py``, where it
exists), against MMA-Sim at MMA-Sim's best batch, ``tcprobe.dot`` at small
and large batches (the cliff), ``emulate`` against plain torch and against
MMA-Sim routing the same GEMMs (``bench_torch.py``), ``fit-gemm`` against
one product of the same size (``bench_fit_gemm.py``), ``tcprobe --help``
against ``python -c pass``, and the first product of a new process with a
warm and with an empty kernel cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

BEGIN, END = "<!-- speed-table:begin -->", "<!-- speed-table:end -->"


def _best(fn, repeat: int = 3, clock=time.process_time) -> float:
    """Best of ``repeat`` calls of ``fn`` (CPU seconds of this process by default)."""
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def _row(workload, ours, reference, ratio, target, met, note=""):
    return {"workload": workload, "tcprobe": ours, "reference": reference,
            "ratio": ratio, "target": target, "met": met, "note": note}


def engine_vs_floor(quick: bool) -> list[dict]:
    """bench_floor.py's figures (the engine's GEMM chain against a practical
    floor on the same operands), where that benchmark exists."""
    try:
        import bench_floor
    except ImportError:
        return [_row("engine vs a practical floor", "-", "-", None, "<= 1.3x, <= 3 ns/block",
                     None, "benchmarks/bench_floor.py is not in this tree: not measured")]
    size = 128 if quick else 512
    r = bench_floor.measure(size=size, repeat=2 if quick else 5,
                            kinds=tuple(bench_floor.KINDS))
    shape = "x".join(str(x) for x in r["shape"])
    ns = r["engine_ns"]
    rows = [_row(f"engine bf16 GEMM chain {shape} (H100 mma), ns per K=16 block per output",
                 f"{ns:.2f} ns", f"floor {r['floor_ns']:.2f} ns", r["ratio"],
                 "<= 1.3x the floor, <= 3 ns", r["ratio"] <= 1.3 and ns <= 3,
                 "words equal; the products alone "
                 f"{r['products_ns']:.2f} ns, the engine {r['products_ratio']:.2f}x that; with "
                 f"0.1% NaN/Inf words {r['specials_ns']:.2f} ns")]
    for kind, fig in r["kinds"].items():
        if kind == "bf16":
            continue
        rows.append(_row(f"engine {kind} ({fig['datapath']}), ns per {fig['per_block']}-product "
                         "block", f"{fig['ns']:.2f} ns", "the floor scaled to the block",
                         fig["ratio"], "<= 1.3x", fig["ratio"] <= 1.3))
    return rows


def _bf16_cases(n: int, seed: int = 2024):
    from tcprobe.models.cases import Cases

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    b = rng.integers(0, 1 << 16, (n, 16), dtype=np.uint32)
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return Cases(a, b, c)


def engine_vs_mmasim(quick: bool) -> list[dict]:
    """Raw bf16 K=16 dots (NaN, Inf, subnormal words) on H100's mma.sync:
    tcprobe's engine against MMA-Sim 2.1.1 at its best batch (20,000), one
    thread, CPU time, words compared on the cases both ran."""
    from tcprobe.models.datapath import Datapath
    from tcprobe.models.engine import Speed, fused_dot
    from tcprobe.models.profiles import PROFILES

    n, m = (50_000, 5_000) if quick else (200_000, 20_000)
    cases = _bf16_cases(n)
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
    params = PROFILES["h100"].params(dp)
    one = Speed(jobs=1)
    fused_dot(dp, cases.take(slice(0, 8)), params, fast=True)
    ours = _best(lambda: fused_dot(dp, cases, params, fast=True, speed=one)) / n * 1e9
    try:
        import torch
        from mmasim.nv_ptx import MMA
    except ImportError:
        return [_row("raw bf16 K=16 dots, ns/dot", f"{ours:.1f} ns", "MMA-Sim not installed",
                     None, ">= 30x", None)]
    torch.set_num_threads(1)
    mma = MMA("Hopper", "m16n8k16.f32.bf16.bf16.f32")
    part = cases.take(slice(0, m))
    ta = torch.from_numpy(part.a.astype(np.uint16).view(np.int16)).view(torch.bfloat16)
    tb = torch.from_numpy(part.b.astype(np.uint16).view(np.int16)).view(torch.bfloat16)
    tc = torch.from_numpy(part.c.view(np.int32)).view(torch.float32)
    out = {}

    def peer():
        out["d"] = mma.dpa(ta, tb, tc)
    theirs = _best(peer) / m * 1e9
    same = np.array_equal(out["d"].view(torch.int32).numpy().view(np.uint32),
                          fused_dot(dp, part, params, fast=True))
    ratio = theirs / ours
    return [_row(f"raw bf16 K=16 dots ({n:,}; MMA-Sim on {m:,}), ns/dot", f"{ours:.1f} ns",
                 f"MMA-Sim {theirs:.0f} ns", 1 / ratio, ">= 30x faster",
                 ratio >= 30, "words equal" if same else "WORDS DIFFER")]


def dot_batches(quick: bool) -> list[dict]:
    """tcprobe.dot's ns/dot at small batches against its rate at 200,000
    (issue 37: no cliff; the ratio to the large batch's rate)."""
    import tcprobe

    big = 50_000 if quick else 200_000
    cases = _bf16_cases(big)
    dp = "mma.bf16.f32.k16"
    tcprobe.dot(cases.a[:4], cases.b[:4], cases.c[:4], datapath=dp, gpu="H100")
    tcprobe.dot(cases.a, cases.b, cases.c, datapath=dp, gpu="H100")
    rate = _best(lambda: tcprobe.dot(cases.a, cases.b, cases.c, datapath=dp, gpu="H100")) / big
    rows = []
    for size in (100, 1_000, 20_000):
        reps = max(1, 20_000 // size)
        a, b, c = cases.a[:size], cases.b[:size], cases.c[:size]

        def calls(a=a, b=b, c=c, reps=reps):
            for _ in range(reps):
                tcprobe.dot(a, b, c, datapath=dp, gpu="H100")
        ns = _best(calls) / (reps * size) * 1e9
        rows.append(_row(f"tcprobe.dot, batches of {size:,}, ns/dot", f"{ns:.0f} ns",
                         f"{rate * 1e9:.0f} ns at {big:,}", ns / (rate * 1e9),
                         "no cliff (<= 3x)", ns <= 3 * rate * 1e9))
    return rows


def emulate_vs_torch(quick: bool) -> list[dict]:
    """bench_torch.py's transformer block (bf16 forward+backward) under
    emulate(gpu='H100') against plain torch and against MMA-Sim's route."""
    import bench_torch

    size = dict(batch=1, seq=32, d=64, heads=2) if quick else {}
    try:
        import mmasim  # noqa: F401
        peer = True
    except ImportError:
        peer = False
    r = bench_torch.measure(**size, mmasim=peer, out=None)
    note = (f"{r['gemms']} GEMMs, {r['fallbacks']} fallbacks; "
            + ("words equal" if not r["differ"] else "WORDS DIFFER"))
    rows = [_row("emulate(H100): transformer block fwd+bwd, s", f"{r['emulate_s']:.2f} s",
                 f"torch {r['torch_s']:.3f} s", r["emulate_s"] / r["torch_s"], "<= 10x",
                 r["emulate_s"] <= 10 * r["torch_s"], note)]
    if r["mmasim_s"] is not None:
        ratio = r["mmasim_s"] / r["emulate_s"]
        rows.append(_row("the same GEMMs routed through MMA-Sim, s", f"{r['emulate_s']:.2f} s",
                         f"MMA-Sim {r['mmasim_s']:.1f} s", 1 / ratio,
                         ">= 100x faster", ratio >= 100))
    return rows


def fit_gemm_vs_product(quick: bool) -> list[dict]:
    import bench_fit_gemm

    k = 256 if quick else 1024
    r = bench_fit_gemm.measure(k)
    return [_row(f"fit-gemm 256x256x{k} bf16 ({r['searched']} schedules), s",
                 f"{r['fit_s']:.2f} s", f"one product {r['product_s']:.3f} s", r["ratio"],
                 "<= 5x", r["ratio"] <= 5,
                 f"explained: {r['explained']}, class of {r['class']}")]


def _child_cpu(argv: list[str], env=None) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, stdout) of a fresh process."""
    before = os.times()
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return cpu, wall, done.stdout


FIRST_PRODUCT = """
import time, numpy as np
t = time.perf_counter()
import tcprobe
import tcprobe.matrix  # the matrix layer, and numba with it
a = np.ones((64, 64), np.float32)
t1 = time.perf_counter()
from numba.core import registry
registry.cpu_target.target_context.refresh()  # numba's one-time set-up of its CPU target
t2 = time.perf_counter()
tcprobe.matmul(a, a, gpu="H100", dtype="bfloat16", progress=False)
t3 = time.perf_counter()
tcprobe.matmul(a, a, gpu="H100", dtype="bfloat16", progress=False)
t4 = time.perf_counter()
print(t1 - t, t2 - t1, t3 - t2, t4 - t3)
"""


def start_times(quick: bool) -> list[dict]:
    """Fresh processes: ``tcprobe --help`` against ``python -c pass``, and
    the first 64x64x64 product with the kernel cache warm (the imports and
    numba's one-time target set-up apart from the kernels' load), then empty."""
    py = sys.executable
    base = min(_child_cpu([py, "-c", "pass"])[0] for _ in range(3))
    helps = min(_child_cpu([py, "-m", "tcprobe", "--help"])[0] for _ in range(3))
    rows = [_row("tcprobe --help, CPU s", f"{helps:.2f} s", f"python -c pass {base:.2f} s",
                 helps / base, "< 0.3 s", helps < 0.3)]
    _child_cpu([py, "-c", FIRST_PRODUCT])  # the usual cache, filled
    runs = [[float(x) for x in _child_cpu([py, "-c", FIRST_PRODUCT])[2].split()]
            for _ in range(3)]
    imports, setup, first, second = (min(r[i] for r in runs) for i in range(4))
    load = max(first - second, 0.0)
    rows.append(_row("kernel load: first product in a new process, warm cache, less the "
                     "second call's time, s", f"{load:.3f} s", f"second call {second:.3f} s",
                     first / max(second, 1e-6), "kernel load < 0.1 s", load < 0.1))
    rows.append(_row("before it, once a process: imports (numba among them) + numba's CPU "
                     "target set-up, s", f"{imports:.2f} + {setup:.2f} s",
                     f"python -c pass {base:.2f} s", (imports + setup + first) / base,
                     "first output within 2 s", imports + setup + first < 2.0))
    if quick:
        return rows
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TCPROBE_CACHE=cache)
        env.pop("NUMBA_CACHE_DIR", None)
        cpu, wall, out = _child_cpu([py, "-c", FIRST_PRODUCT], env)
        cold = [float(x) for x in out.split()]
    rows.append(_row("first product with an empty kernel cache (compiles), wall s",
                     f"{cold[2]:.1f} s", f"warm {first:.2f} s", cold[2] / max(first, 1e-6),
                     "< 60 s cold", cold[2] < 60, f"{cpu:.0f} s CPU in all"))
    rows.append(_cold_ladder(py))
    return rows


def _cold_ladder(py: str) -> dict:
    """The README's main job, ``tcprobe ladder --format bf16``, from an empty
    kernel cache: its wall and CPU time and when its first line came."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TCPROBE_CACHE=cache, TCPROBE_HEARTBEAT="1")
        env.pop("NUMBA_CACHE_DIR", None)
        before = os.times()
        t = time.perf_counter()
        proc = subprocess.Popen([py, "-m", "tcprobe", "ladder", "--format", "bf16"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=env)
        first = None
        for _line in proc.stderr:
            if first is None:
                first = time.perf_counter() - t
        proc.wait()
        wall = time.perf_counter() - t
        after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return _row("tcprobe ladder --format bf16 with an empty kernel cache, wall s",
                f"{wall:.1f} s", f"{cpu:.0f} s CPU in all", None,
                "< 60 s cold, a line within 2 s", wall < 60 and (first or 99) < 2,
                f"first line on stderr at {first or 0:.1f} s; exit {proc.returncode}")


SECTIONS = (engine_vs_floor, engine_vs_mmasim, dot_batches, emulate_vs_torch,
            fit_gemm_vs_product, start_times)


def _ratio_text(r: dict) -> str:
    """tcprobe's time over the reference's; "Nx faster" where below 1."""
    if r["ratio"] is None:
        return "-"
    return f"{r['ratio']:.3g}x" if r["ratio"] >= 1 else f"{1 / r['ratio']:.3g}x faster"


def markdown(rows: list[dict], header: str) -> str:
    lines = [header, "",
             "| workload | tcprobe | reference | ratio | target | met |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ratio = _ratio_text(r)
        met = {True: "yes", False: "**no**", None: "-"}[r["met"]]
        note = f" ({r['note']})" if r["note"] else ""
        lines.append(f"| {r['workload']}{note} | {r['tcprobe']} | {r['reference']} | {ratio} "
                     f"| {r['target']} | {met} |")
    return "\n".join(lines)


def rewrite(readme: Path, table: str) -> None:
    text = readme.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"error: {readme} has no {BEGIN} ... {END} block to rewrite")
    readme.write_text(pattern.sub(lambda _: f"{BEGIN}\n{table}\n{END}", text))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--readme", type=Path, help="rewrite this file's speed-table block")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--only", help="comma-separated section names (e.g. start_times)")
    args = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported (one core)
    want = None if args.only is None else set(args.only.split(","))
    rows = []
    for section in SECTIONS:
        if want is not None and section.__name__ not in want:
            continue
        t = time.perf_counter()
        got = section(args.quick)
        rows += got
        for r in got:
            ratio = _ratio_text(r)
            print(f"{r['workload']}: {r['tcprobe']} vs {r['reference']} {ratio} "
                  f"target {r['target']} met {r['met']} {r['note']}", flush=True)
        print(f"  ({section.__name__}: {time.perf_counter() - t:.0f} s)", file=sys.stderr)
    import numba

    header = (f"Measured by `python3 benchmarks/speed_table.py` on {time.strftime('%Y-%m-%d')}: "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"numba threads {numba.get_num_threads()}; one run, CPU seconds unless marked "
              "wall; ratios are tcprobe's time over the reference's.")
    table = markdown(rows, header)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    if args.readme:
        rewrite(args.readme, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
