"""sass: prove the compiler emitted the real tensor-core op, not an emulation.

The step asks its device for the verdict (``Device.sass_verdict``): a CUDA
device compiles the harness for the GPU's architecture with NVRTC, reads the
cubin with nvdisasm and compares the kernel's tensor-core opcodes with the
expected one. On a simulated device no
kernel runs, so the step says why it is skipped; ``tcprobe sass-check``
checks the kernels without a GPU.
"""

from __future__ import annotations

from .common import Evidence, Finding, StepInfo

STEP = StepInfo(order=10, title="SASS check: the real tensor-core opcode")


def run(ctx) -> Finding:
    dev = ctx.device
    if getattr(dev, "simulated", True):
        return Finding("sass", "skipped",
                       f"{dev.name} is simulated: no kernel is launched, so there is no SASS "
                       "to inspect (tcprobe sass-check compiles and checks the harness "
                       "kernels without a GPU)")
    try:
        check = dev.sass_verdict(ctx.dp)
    except ImportError as e:
        return Finding("sass", "skipped", f"the SASS check is not available here ({e})")
    except Exception as e:  # no harness kernel, no NVRTC, no nvdisasm: say which
        return Finding("sass", "skipped", f"the SASS check could not run: {e}")
    if check is None:
        return Finding("sass", "skipped", f"{dev.name} runs no kernel whose SASS could be checked")
    arch = check.arch
    ev = [Evidence(f"kernel {check.symbol} ({arch})", {}, {}, None, [],
                   f"expected {check.expected}; found {', '.join(check.found) or 'nothing'}")]
    values = {"opcodes": list(check.found), "expected": check.expected, "arch": arch,
              "kernel": check.kernel, "verdict": check.status}
    if check.status == "ok":
        return Finding("sass", "found", f"{check.ptx} compiles to {check.expected} on {arch}: "
                       "the real tensor-core op", values, ev)
    if check.status == "emulated":
        values["emulation"] = check.emulation
        return Finding("sass", "partial",
                       f"{check.ptx} is emulated on {arch} ({check.note}); the ladder measures "
                       f"the emulation (model profile {check.profile})", values, ev)
    return Finding("sass", "failed", f"{check.ptx} on {arch}: {check.note or check.status}",
                   values, ev)
