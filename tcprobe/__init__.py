"""tcprobe: find out exactly how NVIDIA tensor-core instructions compute, bit for bit.

``tcprobe.matmul(A, B, C, gpu=...)`` multiplies matrices as a GPU's tensor
cores do, every word; ``tcprobe.dot`` runs one instruction on raw words.
"""

import sys as _sys


def _started_as_cli() -> bool:
    """Python was started as the command line (``python -m tcprobe`` or the
    ``tcprobe`` script) and is importing this package on its way there."""
    argv = list(getattr(_sys, "orig_argv", ()))
    by_m = any(a == "-m" and b == "tcprobe" for a, b in zip(argv, argv[1:], strict=False)) \
        or "-mtcprobe" in argv
    script = _sys.argv[:1] and _sys.argv[0].replace("\\", "/").rsplit("/", 1)[-1]
    return (by_m and _sys.argv[:1] == ["-m"]) or script in ("tcprobe", "tcprobe.exe",
                                                              "tcprobe-script.py")


def _interrupted(signum, frame):
    _sys.stderr.write("interrupted\n")
    _sys.exit(130)


_AS_CLI = _started_as_cli()  # read once: runpy changes sys.argv[0] later
if _AS_CLI:  # Ctrl-C from here on: one line, exit 130 (tcprobe/startsignal.py)
    import _signal  # built in: no search of sys.path (signal.py's would be one)

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _interrupted)

from pathlib import Path as _Path  # noqa: E402

__version__ = "0.1.0"
__all__ = ["__version__", "dot", "matmul"]

# The subpackages that pyproject maps in from the checkout's top level
# (package-dir): installed, they sit inside this folder; in a checkout they
# sit beside it. Where Python starts in a checkout (its root on sys.path, as
# `python3 -m tcprobe` or `python3 -` there), this folder is the package, so
# the checkout's root joins the package's search path and `tcprobe.models`
# is the checkout's models/: the tree imports whole wherever Python starts,
# and an installed copy is never half shadowed.
_MAPPED = ("models", "probes", "reports", "kernels")
_here = _Path(__file__).resolve().parent
_root = _here.parent
if not (_here / "models").is_dir() and all(
    (_root / name / "__init__.py").is_file() for name in _MAPPED
):
    __path__.append(str(_root))  # noqa: F821 (the package's own __path__)
del _here, _root


def __getattr__(name):
    # Imported on first use, so that the command line starts without them.
    if name in ("matmul", "dot"):
        from tcprobe import matrix

        value = globals()[name] = getattr(matrix, name)  # later lookups skip this function
        return value
    hint = {"gemm": "tcprobe.matmul multiplies as a GPU's library GEMM (the command line's "
                    "`tcprobe gemm`)", "mm": "tcprobe.matmul", "emulate": "tcprobe.torch.emulate",
            "fit_gemm": "tcprobe.matrix.fit_gemm.fit"}.get(name.lower())
    raise AttributeError(f"module 'tcprobe' has no attribute {name!r}"
                         + (f": use {hint}" if hint else ""))
