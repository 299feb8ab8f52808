"""The parts of numba and llvmlite below their stable API that tcprobe uses,
named in one place, and the switch that turns the hand-written IR off.

Everything else in tcprobe calls numba's public API (``njit``, ``prange``,
``numba.extending.intrinsic``). Three things are not covered by it:

* the cache folder: numba reads ``numba.core.config.CACHE_DIR`` when a
  cached function is made (:func:`set_cache_dir`);
* compile events: ``numba.core.event`` (documented, but under ``core``),
  which the CLI listens to so that a cold compile is announced
  (:func:`on_compile_start`);
* numba's BLAS check: ``numba.np.arraymath`` asks at import whether scipy's
  BLAS is there by importing ``scipy.linalg`` (about half a second, on every
  first kernel load); :func:`answer_blas_check_lazily` answers it from
  whether scipy is installed, without importing it;
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


def check_numba_env() -> None:
    """The numba settings tcprobe cannot run under, named (KernelSwitchError):
    NUMBA_DISABLE_JIT on (the kernels use numba intrinsics, which pure Python
    cannot run) and NUMBA_NUM_THREADS below 1. Both ended mid-run in numba's
    own errors, reported as tcprobe's internal error (exit 3)."""
    for name, bad, why in (
            ("NUMBA_DISABLE_JIT", lambda n: n != 0,
             "tcprobe's kernels are compiled by numba (pure Python cannot run their "
             "intrinsics): unset it"),
            ("NUMBA_NUM_THREADS", lambda n: n < 1, "numba needs at least 1 thread: unset it "
             "(every core) or give a count")):
        raw = os.environ.get(name)
        if raw is None or not raw.strip():
            continue
        try:
            n = int(raw)
        except ValueError:  # numba warns and keeps its default
            continue
        if bad(n):
            raise KernelSwitchError(f"{name}={raw!r}: {why}")


def kernel_form() -> str:
    """The kernel form ``$TCPROBE_KERNEL`` asks for: 'ir' (the default: the
    hand-written vector kernels where they apply) or 'plain' (numba only).
    The numba settings tcprobe cannot run under are refused here too
    (:func:`check_numba_env`)."""
    check_numba_env()
    raw = os.environ.get(KERNEL_ENV)
    if not raw:  # unset: the default (the common case, asked on every small call)
        return KERNEL_FORMS[0]
    form = raw.strip().lower() or KERNEL_FORMS[0]
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


def key_cache_by_content(package_dir: str, stamp: str) -> None:
    """File the cached kernels of ``package_dir``'s modules (its subfolders'
    too) under
    ``CACHE_DIR/tcprobe-models-<stamp>`` (``stamp``: a digest of the
    package's sources), not under numba's default subfolder, which is named
    by a hash of the source folder's absolute path: so a second install of
    the same sources (another venv, another checkout) loads the kernels the
    first compiled, and different sources never share a folder. Functions
    of other packages keep numba's own locators. Uses numba's private
    ``numba.core.caching`` locator list (numba 0.6x)."""
    from numba.core import caching, config

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if impl is None or not hasattr(caching, "UserProvidedCacheLocator"):
        return  # another numba: its own locators (keyed by the install's path)
    package_dir = os.path.abspath(package_dir)
    if any(getattr(c, "_tcprobe", False) for c in impl._locator_classes):
        return

    class _ContentKeyedLocator(caching.UserProvidedCacheLocator):
        _tcprobe = True

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(config.CACHE_DIR, f"tcprobe-models-{stamp}")

        @classmethod
        def from_function(cls, py_func, py_file):
            folder = os.path.dirname(os.path.abspath(py_file))
            if folder != package_dir and not folder.startswith(package_dir + os.sep):
                return None  # not the package's (its subfolders, models/kernels, are)
            return super().from_function(py_func, py_file)

    impl._locator_classes.insert(0, _ContentKeyedLocator)


def when_numba_loaded(then) -> None:
    """``then()`` now if numba is imported, else right after its first import
    (a finder that wraps numba's loader), so that importing the models for
    their tables (formats, the ISA) does not import numba."""
    import sys

    if "numba" in sys.modules:
        then()
        return
    _around_import("numba", after=lambda _module: then())


def _around_import(fullname: str, before=None, after=None, *, restore=None) -> None:
    """On the first import of the module ``fullname``: ``before()`` right
    before it is executed, ``after(module)`` once it has run, and
    ``restore(module)`` after it whether it ran or failed (a finder that
    wraps the module's loader, and leaves once it has been asked)."""
    import importlib.abc
    import importlib.util
    import sys

    if fullname in sys.modules:
        return

    class _Around(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != fullname:
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                if before is not None:
                    before()
                try:
                    run(module)
                finally:
                    if restore is not None:
                        restore(module)
                if after is not None:
                    after(module)
            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Around())


def answer_blas_check_lazily() -> None:
    """Let ``numba.np.arraymath``'s import-time BLAS check (which only picks
    the inner product of ``np.convolve`` / ``np.correlate`` in jitted code)
    read whether scipy is installed instead of importing ``scipy.linalg``:
    the import cost about 0.45 s of every process's first kernel load. The
    real ``ensure_blas`` is back in place once the module has run, so every
    BLAS-backed function numba compiles later still imports and checks
    scipy's BLAS as it always does. Call once numba is imported."""
    import importlib.util

    box = {}

    def quick_check():
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy 0.16+ is required for linear algebra")

    def before():
        from numba.np import linalg

        box["real"] = linalg.ensure_blas
        linalg.ensure_blas = quick_check

    def after(module):
        from numba.np import linalg

        real = box.get("real")
        if real is not None:
            linalg.ensure_blas = real
            if getattr(module, "ensure_blas", None) is quick_check:
                module.ensure_blas = real

    _around_import("numba.np.arraymath", before, restore=after)


def on_compile_start(callback, on_end=None) -> None:
    """Call ``callback()`` whenever numba starts compiling a function (with
    ``callback(name)`` where it takes one: the function's qualified name),
    and ``on_end()`` when it is done, if given."""
    import inspect

    from numba.core import event

    named = len(inspect.signature(callback).parameters) == 1

    class _Listener(event.Listener):
        def on_start(self, ev):
            if not named:
                callback()
                return
            data = ev.data if isinstance(ev.data, dict) else {}
            dispatcher = data.get("dispatcher")
            func = getattr(dispatcher, "py_func", None)
            callback(getattr(func, "__qualname__", "a kernel"))

        def on_end(self, ev):
            if on_end is not None:
                on_end()

    event.register("numba:compile", _Listener())


def declared_function(module, fnty, name: str):
    """The function ``name`` of the llvmlite ``module``, declared with type
    ``fnty`` when the module has none yet (an LLVM intrinsic, for instance)."""
    from llvmlite import ir

    found = module.globals.get(name)
    return found if found is not None else ir.Function(module, fnty, name)
