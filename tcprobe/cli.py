"""The ``tcprobe`` command line: a thin click group over the commands.

Exit status: 0 fine, 1 a mismatch or a failed check, 2 bad input (one
``error:`` line, click's usage errors included), 3 an internal error (a
bug: one line and the hint to rerun with TCPROBE_DEBUG=1 for the
traceback), 130 interrupted.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import warnings

import click

from tcprobe import __version__
from tcprobe.console import fail, say, send_output_to_stderr

# One module per command in tcprobe/commands; each defines ``command``.
COMMAND_MODULES = [
    "score",
    "sass_check",
    "mfma_check",
    "devices",
    "replay",
    "targets",
    "fit",
    "validate",
    "run_case",
    "ladder",
    "smoke",
    "report",
    "gemm",
    "fit_gemm",
    "gemm_probe",
    "batch_invariance",
]

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
DEBUG_HINT = "rerun with TCPROBE_DEBUG=1 to see the traceback"

# File-system errors that are the user's to fix (a path, a permission, a full disk).
USER_OS_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EEXIST, errno.EISDIR,
                  errno.ENOTDIR, errno.ENOSPC, errno.EROFS, errno.ENAMETOOLONG, errno.EDQUOT,
                  errno.ELOOP, errno.EFBIG}
# The stdlib bases the project's own error classes derive from.
PROJECT_ERROR_BASES = (ValueError, RuntimeError, LookupError)


def is_input_error(e: BaseException) -> bool:
    """Whether ``e`` is the project's word for bad input or an unusable
    device (an error class of tcprobe's own), or a file-system problem of a
    path the user gave; anything else is a bug."""
    if isinstance(e, OSError):
        return e.errno in USER_OS_ERRNOS
    cls = type(e)
    own = any(k.__module__.startswith("tcprobe") for k in cls.__mro__)
    return own and isinstance(e, PROJECT_ERROR_BASES)


def describe(e: BaseException) -> str:
    """One line for an input error; a file-system error names its path and
    what to do (a full disk, a read-only file system, no permission)."""
    if isinstance(e, OSError):
        from tcprobe.outfiles import os_error

        e = os_error(e)
        if e.filename is not None:
            return f"{e.filename}: {e.strerror or e}"
        return e.strerror or str(e)
    return str(e) or type(e).__name__


def _notes_as_lines(message, category, filename, lineno, file=None, line=None):
    """A tcprobe warning (the kernel cache's note) as one ``note:`` line on
    stderr; any other warning as Python shows it."""
    if category.__module__.startswith("tcprobe"):
        click.echo(f"note: {message}", err=True)
    else:
        _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning


_ANNOUNCING = False


def _announce_compiles() -> None:
    """One ``compiling kernels for DATAPATH (first run only)`` line the
    first time numba compiles while a datapath is being evaluated, so a cold
    run never sits on a blank screen (numba's compile events; the datapath is
    the one the engine named last)."""
    global _ANNOUNCING
    if _ANNOUNCING:  # once a process: every command run in it shares the one listener
        return
    _ANNOUNCING = True
    from tcprobe.models import kernel_cache, numba_internals

    shown = set()

    def announce():
        label = kernel_cache.WORKING_ON or "this run"
        if label not in shown:
            shown.add(label)
            click.echo(f"note: compiling kernels for {label} (first run only; later runs "
                       f"load them from {kernel_cache.FOLDER})", err=True)

    numba_internals.on_compile_start(announce)


class Group(click.Group):
    def invoke(self, ctx):
        try:
            _announce_compiles()
            from tcprobe.models import numba_internals

            numba_internals.kernel_form()  # a misspelt TCPROBE_KERNEL fails before any work
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            say(("interrupted", "yellow"), err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Exception as e:
            if os.environ.get("TCPROBE_DEBUG"):
                raise
            if is_input_error(e):
                fail(describe(e), EXIT_BAD_INPUT)
            fail(f"internal error ({type(e).__name__}: {e}); this is a bug in tcprobe, not in "
                 f"your input: {DEBUG_HINT} and report it", EXIT_INTERNAL)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Click's usage errors as one ``error:`` line (exit 2), like every other error."""
        send_output_to_stderr(False)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help(), err=True)
            sys.exit(EXIT_BAD_INPUT)
        except click.ClickException as e:
            hint = ""
            if isinstance(e, click.UsageError) and e.ctx is not None:
                hint = f" (see {e.ctx.command_path} --help)"
            fail(e.format_message() + hint, EXIT_BAD_INPUT if e.exit_code == 2 else e.exit_code)
        except click.exceptions.Abort:
            say(("interrupted", "yellow"), err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            sys.exit(0)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"],
                                          "max_content_width": 100})
@click.version_option(__version__, prog_name="tcprobe")
def main():
    """Find out exactly how NVIDIA tensor-core instructions compute, bit for bit.

    Bad input exits 2 with one error line; an internal error exits 3. Set
    TCPROBE_DEBUG=1 to see a traceback instead of a one-line error.
    """


warnings.showwarning = _notes_as_lines  # before the commands import the models
for _name in COMMAND_MODULES:
    _mod = importlib.import_module(f"tcprobe.commands.{_name}")
    main.add_command(_mod.command)


if __name__ == "__main__":  # pragma: no cover
    main()
