"""sass: prove the compiler emitted the real tensor-core op, not an emulation.

Delegates to ``tcprobe.sass`` (the SASS check of the harness kernels) where
a kernel exists. On a simulated device no kernel runs, so the step says why
it is skipped; ``tcprobe sass-check`` checks the kernels without a GPU.
"""

from __future__ import annotations

import importlib

from .common import Finding


def run(ctx) -> Finding:
    dev = ctx.device
    if getattr(dev, "simulated", True):
        return Finding("sass", "skipped",
                       f"{dev.name} is simulated: no kernel is launched, so there is no SASS "
                       "to inspect (tcprobe sass-check compiles and checks the harness "
                       "kernels without a GPU)")
    try:
        sass = importlib.import_module("tcprobe.sass")
    except ImportError as e:
        return Finding("sass", "skipped", f"the SASS check is not available here ({e})")
    check = getattr(sass, "check_datapath", None)
    if check is None:
        return Finding("sass", "skipped", "tcprobe.sass has no per-datapath check "
                       "(check_datapath); run tcprobe sass-check")
    try:
        verdict = check(ctx.dp, dev)
    except Exception as e:  # the check's own failure is the finding
        return Finding("sass", "failed", f"the SASS check failed: {e}")
    ok = bool(getattr(verdict, "ok", False))
    text = str(getattr(verdict, "summary", verdict))
    return Finding("sass", "found" if ok else "failed", text,
                   {"opcodes": list(getattr(verdict, "opcodes", []) or [])})
