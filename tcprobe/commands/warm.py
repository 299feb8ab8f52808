"""tcprobe warm: compile the kernels the main jobs use, with a line per step.

For container images and CI: run once after installing, and the first
``tcprobe.matmul``, ``tcprobe.dot``, ``validate`` or ``ladder`` of a later
process loads its kernels from the cache instead of compiling them.
"""

from __future__ import annotations

import time

import click

from tcprobe.commands.options import OneName
from tcprobe.console import say


def _matmul(dtype: str, gpu: str, m: int = 8, n: int = 8, k: int = 64, **kw):
    def run():
        import ml_dtypes
        import numpy as np

        import tcprobe

        rng = np.random.default_rng(0)
        t = getattr(ml_dtypes, dtype, None) or getattr(np, dtype)
        if np.dtype(t).kind in "iu":
            a = rng.integers(-8, 8, (m, k)).astype(t)
            b = rng.integers(-8, 8, (k, n)).astype(t)
        else:
            a = rng.standard_normal((m, k)).astype(t)
            b = rng.standard_normal((k, n)).astype(t)
        if kw.get("scaled"):
            s = np.full((m, k // 32), 127, np.uint8).view(ml_dtypes.float8_e8m0fnu)
            kw2 = {"scale_a": s, "scale_b": s.T.copy()}
        else:
            kw2 = {}
        tcprobe.matmul(a, b, gpu=gpu, progress=False, instr=kw.get("instr"),
                       dtype=np.dtype(kw["d_type"]) if kw.get("d_type") else None, **kw2)
    return run


def _each(*works):
    def run():
        for work in works:
            work()
    return run


def _engine(fast: bool, align: str | None = None):
    def run():
        from dataclasses import replace

        import numpy as np

        from tcprobe.models.cases import Cases
        from tcprobe.models.datapath import Datapath
        from tcprobe.models.engine import fused_dot
        from tcprobe.models.profiles import PROFILES

        dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
        rng = np.random.default_rng(0)
        w = rng.integers(0, 1 << 16, (64, 16)).astype(np.uint32)
        c = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
        p = PROFILES["h100"].params(dp)
        if align:
            p = replace(p, align=align)
        fused_dot(dp, Cases(w, w, c), p, fast=fast)
    return run


def _f64():
    import numpy as np

    import tcprobe

    w = np.random.default_rng(0).integers(0, 1 << 62, (4, 4), dtype=np.uint64)
    tcprobe.dot(w, w, w[:, 0].copy(), datapath="mma.f64.f64.k4", gpu="H100")


# name -> (what it serves, the work that compiles its kernels)
STEPS = {
    # the README's first example: bf16 on H100 (wgmma and mma) and A100, f16 to f16 on B200
    "matmul-bf16": ("tcprobe.matmul / gemm, bf16 on H100 (wgmma, mma) and A100 (GEMM kernel, "
                    "f32 epilogue)",
                    _each(_matmul("bfloat16", "H100"), _matmul("bfloat16", "A100"),
                          _matmul("bfloat16", "H100", instr="mma"))),
    "matmul-large": ("tcprobe.matmul past 200,000 outputs (the epilogue's large path)",
                     _matmul("bfloat16", "H100", 512, 512, 16)),
    "matmul-f16": ("f16 on A100 (mma.sync), f16 to f16 on B200 (tcgen05)",
                   _each(_matmul("float16", "A100"),
                         _matmul("float16", "B200", d_type="float16"))),
    "matmul-tf32": ("f32 (tf32) on H100", _matmul("float32", "H100")),
    "matmul-fp8": ("e4m3 on H100", _matmul("float8_e4m3fn", "H100")),
    "matmul-int8": ("int8 on H100 (the integer GEMM kernel)", _matmul("int8", "H100")),
    "matmul-mx": ("block-scaled e4m3 and e2m1 on B200", None),
    "dot": ("tcprobe.dot, validate, ladder: the engine's lane kernel", _engine(True)),
    "dot-plain": ("the engine's plain kernel (small batches)", _engine(False)),
    "dot-normalized": ("the core loop (align = normalized)", _engine(True, "normalized")),
    "dot-f64": ("f64 DMMA", _f64),
}


def _mx():
    _matmul("float8_e4m3fn", "B200", 4, 4, 64, scaled=True)()
    _matmul("float4_e2m1fn", "B200", 4, 4, 64, scaled=True)()


STEPS["matmul-mx"] = (STEPS["matmul-mx"][0], _mx)


def _steps(ctx, param, values):
    """--steps a,b (as ladder's --steps), repeatable; --only, its older name, the same."""
    from tcprobe.names import match, once

    names = [x.strip() for v in values for x in str(v).split(",") if x.strip()]
    unknown = [x for x in names if match(x, STEPS) is None]
    if unknown:
        raise click.BadParameter(f"no step {unknown[0]!r} (steps: {', '.join(sorted(STEPS))})",
                                 ctx, param)
    if values and not names:
        raise click.BadParameter("names no step (leave it out to warm every step)", ctx, param)
    return once(match(x, STEPS) for x in names)  # any case (docs/names.md), each step once


@click.command("warm")
@click.option("--steps", "--only", "only", cls=OneName, shown=("--steps",), multiple=True,
              callback=_steps, metavar="STEP,...",
              help=f"Warm only these steps, comma-separated or repeated (default: all: "
                   f"{','.join(STEPS)}); --only, its older name, still works.")
@click.option("--list", "listing", is_flag=True, help="List the steps and exit.")
def command(only, listing):
    """Compile the kernels the main jobs use, so that later runs load them
    from the cache."""
    steps = [s for s in STEPS if not only or s in only]
    if listing:
        for name in steps:
            say((name, "bold"), f": {STEPS[name][0]}")
        return 0
    from numba.core import event

    from tcprobe.models import kernel_cache

    say(f"warming {len(steps)} step(s); kernels go to {kernel_cache.FOLDER}")
    total = time.perf_counter()
    compiled = 0
    for i, name in enumerate(steps, 1):
        what, work = STEPS[name]
        say(f"[{i}/{len(steps)}] ", (name, "bold"), f": {what} ...")
        t0 = time.perf_counter()
        with event.install_recorder("numba:compile") as rec:
            work()
        n = sum(1 for _w, ev in rec.buffer if ev.is_start)
        compiled += n
        say(f"[{i}/{len(steps)}] ", (name, "bold"), f": {n} numba function(s) compiled, "
            f"{time.perf_counter() - t0:.1f} s")
    say(f"done: {compiled} numba function(s) compiled in {time.perf_counter() - total:.1f} s"
        + ("; everything was already in the cache" if not compiled else ""))
    return 0
