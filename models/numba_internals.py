"""The parts of numba and llvmlite below their stable API that tcprobe uses,
named in one place, and the switch that turns the hand-written IR off.

Everything else in tcprobe calls numba's public API (``njit``, ``prange``,
``numba.extending.intrinsic``). Three things are not covered by it:

* the cache folder: numba reads ``numba.core.config.CACHE_DIR`` when a
  cached function is made (:func:`set_cache_dir`);
* compile events: ``numba.core.event`` (documented, but under ``core``),
  which the CLI listens to so that a cold compile is announced
  (:func:`on_compile_start`);
* the hand-written LLVM IR of the vector kernels (:mod:`.kernels.vector_ir`,
  :mod:`.kernels.lanes_ir`, :mod:`.kernels.groups_ir`), which builds llvmlite IR with typed
  pointers (``as_pointer``, ``llvm.prefetch.p0i8``). LLVM has dropped typed
  pointers; llvmlite still accepts them, and ``pyproject.toml`` bounds numba
  and llvmlite to the releases this IR is tested on.

When a newer numba or llvmlite breaks the IR, ``TCPROBE_KERNEL=plain`` runs
every path on the plain numba kernels (:func:`ir_kernels`), which compute
the same bits more slowly (``tests/test_kernel_switch.py`` holds the two
forms against each other).
"""

from __future__ import annotations

import importlib
import os

KERNEL_ENV = "TCPROBE_KERNEL"
KERNEL_FORMS = ("ir", "plain")  # the default first


class KernelSwitchError(ValueError):
    """TCPROBE_KERNEL names no kernel form."""


def kernel_form() -> str:
    """The kernel form ``$TCPROBE_KERNEL`` asks for: 'ir' (the default: the
    hand-written vector kernels where they apply) or 'plain' (numba only)."""
    form = os.environ.get(KERNEL_ENV, "").strip().lower() or KERNEL_FORMS[0]
    if form not in KERNEL_FORMS:
        raise KernelSwitchError(f"{KERNEL_ENV}={os.environ[KERNEL_ENV]!r} is not a kernel form "
                                f"(choose {' or '.join(KERNEL_FORMS)})")
    return form


def ir_kernels() -> bool:
    """Whether the hand-written IR kernels may run (read on every call, so a
    change of the variable takes effect at once)."""
    return kernel_form() == "ir"


def ir_module(name: str):
    """The IR kernel module ``name`` of the kernels (``kernels/lane_kernel``,
    ``kernels/scaled_groups``) where the IR is switched on, else None. Imported on
    first use, so that with ``TCPROBE_KERNEL=plain`` an llvmlite that cannot
    build the IR is never asked to."""
    if not ir_kernels():
        return None
    return importlib.import_module(f".kernels.{name}", __package__)


def set_cache_dir(folder: str) -> None:
    """Point numba's disk cache at ``folder`` (before any cached function is made)."""
    from numba.core import config

    config.CACHE_DIR = folder


def on_compile_start(callback) -> None:
    """Call ``callback()`` whenever numba starts compiling a function."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            callback()

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Listener())


def declared_function(module, fnty, name: str):
    """The function ``name`` of the llvmlite ``module``, declared with type
    ``fnty`` when the module has none yet (an LLVM intrinsic, for instance)."""
    from llvmlite import ir

    found = module.globals.get(name)
    return found if found is not None else ir.Function(module, fnty, name)
