"""sass: prove the compiler emitted the real tensor-core op, not an emulation.

On a CUDA device this is the SASS check of the harness kernel that runs the
datapath (:func:`tcprobe.sass.check_arch`: NVRTC compiles the harness for the
GPU's architecture, nvdisasm reads the cubin, the kernel's tensor-core
opcodes are compared with the expected one). On a simulated device no
kernel runs, so the step says why it is skipped; ``tcprobe sass-check``
checks the kernels without a GPU.
"""

from __future__ import annotations

import importlib

from .common import Evidence, Finding


def run(ctx) -> Finding:
    dev = ctx.device
    if getattr(dev, "simulated", True):
        return Finding("sass", "skipped",
                       f"{dev.name} is simulated: no kernel is launched, so there is no SASS "
                       "to inspect (tcprobe sass-check compiles and checks the harness "
                       "kernels without a GPU)")
    arch = getattr(dev, "arch", None) or dev.info().get("arch")
    if not arch:
        return Finding("sass", "skipped", f"{dev.name} names no GPU architecture to check")
    try:
        sass = importlib.import_module("tcprobe.sass")
        launch = importlib.import_module("tcprobe.devices.cuda_launch")
        variant = launch.variant_for(ctx.dp, arch)
        report = sass.check_arch(arch, (ctx.dp.family,))
    except ImportError as e:
        return Finding("sass", "skipped", f"the SASS check is not available here ({e})")
    except Exception as e:  # no harness kernel, no NVRTC, no nvdisasm: say which
        return Finding("sass", "skipped", f"the SASS check could not run: {e}")
    verdict = next((v for v in report.verdicts if v.harness == variant.name), None)
    if verdict is None:
        return Finding("sass", "failed", f"no verdict for kernel {variant.name} on {arch}")
    ev = [Evidence(f"kernel {variant.symbol} ({arch})", {}, {}, None, [],
                   f"expected {verdict.expected}; found {', '.join(verdict.found) or 'nothing'}")]
    values = {"opcodes": list(verdict.found), "expected": verdict.expected, "arch": arch,
              "kernel": variant.name, "verdict": verdict.status}
    if verdict.status == "ok":
        return Finding("sass", "found", f"{variant.ptx} compiles to {verdict.expected} on {arch}: "
                       "the real tensor-core op", values, ev)
    if verdict.status == "emulated":
        values["emulation"] = verdict.emulation
        return Finding("sass", "partial",
                       f"{variant.ptx} is emulated on {arch} ({verdict.note}); the ladder measures "
                       f"the emulation (model profile {verdict.profile})", values, ev)
    return Finding("sass", "failed", f"{variant.ptx} on {arch}: {verdict.note or verdict.status}",
                   values, ev)
