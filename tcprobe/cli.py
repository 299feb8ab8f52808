"""The ``tcprobe`` command line: a thin click group over the commands.

Exit status: 0 fine, 1 a mismatch or a failed check, 2 bad input (one
``error:`` line, click's usage errors included), 3 an internal error (a
bug: one line and the hint to rerun with TCPROBE_DEBUG=1 for the
traceback), 130 interrupted (Ctrl-C), 143 stopped by SIGTERM (``kill``,
``timeout``: as Ctrl-C, the finished work kept and one line).
"""

from __future__ import annotations

from tcprobe import startsignal  # first: Ctrl-C while the rest imports

# isort: split

import errno
import importlib
import importlib.abc
import importlib.util
import os
import stat
import sys
import warnings

import click

from tcprobe import __version__
from tcprobe.console import fail, say, send_output_to_stderr

# One module per command in tcprobe/commands; each defines ``command``.
# Command name -> (module, the first sentence of its help). The modules are
# imported when their command runs (or shows its own --help), so that
# ``tcprobe --help`` starts without numba, ml_dtypes or the models;
# tests/test_cli_startup.py checks every summary against its command's help.
COMMANDS = {
    "score": ("score", "Score models against captured output bits (exit 1 on any mismatch)."),
    "sass-check": ("sass_check", "Compile the harnesses with NVRTC, disassemble with nvdisasm, "
                                 "and check that each kernel uses the expected tensor-core "
                                 "opcode; flag emulated ones."),
    "mfma-check": ("mfma_check", "Compile a kernel for every v_mfma instruction of the ISA table "
                                 "with LLVM's AMDGPU backend (llvmlite's LLVM: the code generator "
                                 "hipcc drives) and check that its assembly has the instruction's "
                                 "own v_mfma opcode."),
    "devices": ("devices", "List the devices found: GPUs (through the driver), the simulated "
                           "devices, and MMA-Sim where it is installed."),
    "replay": ("replay", "Send a capture's recorded inputs through a device and count the cases "
                         "whose word differs from the recorded one (exit 1 on any difference)."),
    "targets": ("targets", "List datapaths: the id --datapath takes (family, kind, types, K, "
                           "scales, sparsity), scaling, arch and instruction descriptor."),
    "fit": ("fit", "Find the model that explains each capture (exit 1 unless every fit is exact)."),
    "validate": ("validate", "Run generated cases (raw, finite, edge, adversarial, sparse suites) "
                             "on a device, stream them to a capture, score models, and shrink "
                             "every kind of mismatch to a one-line reproducer."),
    "run-case": ("run_case", "Run one case on a device and print its word beside each model's "
                             "(exit 1 when a model differs): the reproducers `tcprobe validate` "
                             "prints."),
    "ladder": ("ladder", "Run the probe ladder on a device and print what each step found."),
    "smoke": ("smoke", "Smoke-test a device: SASS check, ladder and validation per family (exit 1 "
                       "on any failure)."),
    "report": ("report", "Work with saved reports."),
    "gemm": ("gemm", "Multiply A @ B + C as GPU's library kernel computes it, every word."),
    "fit-gemm": ("fit_gemm", "Find every schedule that explains every word of D (exit 0), or the "
                             "closest ones with their mismatches (exit 1)."),
    "gemm-probe": ("gemm_probe", "Write the probe cases (A, B, C as raw-word .npy) and a manifest "
                                 "that ``python -m tcprobe.capture.torch_gemm DIR`` runs."),
    "warm": ("warm", "Compile the kernels the main jobs use, so that later runs load them from "
                     "the cache."),
    "batch-invariance": ("batch_invariance", "For a GPU, operand format, N and K: which M give "
                                             "row i the same bits as M = --ref, where the library's choice "
                                             "changes and by what mechanism (split count, kernel "
                                             "family), with each range's provenance (measured, "
                                             "predicted, default guess)."),
}
COMMAND_MODULES = [module for module, _ in COMMANDS.values()]

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM
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
        from tcprobe.outfiles import READ_REFUSED, PathError, os_error

        unreadable = _unreadable(e)
        if unreadable and not isinstance(e, PathError):  # a file read, not one written
            return f"{unreadable}: {READ_REFUSED}"
        e = os_error(e)
        if e.filename is not None:
            return f"{e.filename}: {e.strerror or e}"
        return e.strerror or str(e)
    return str(e) or type(e).__name__


def _unreadable(e: OSError) -> str | None:
    """The path of a permission error that is an existing file (or folder)
    this user may not read, or None (a write's refusal, say)."""
    if e.errno not in (errno.EACCES, errno.EPERM) or e.filename is None:
        return None
    path = os.fsdecode(e.filename) if isinstance(e.filename, (str, bytes)) else str(e.filename)
    try:
        os.stat(path)
    except PermissionError:
        return path  # a folder above it may not be searched
    except (OSError, ValueError):
        return None  # not there: a file being made, refused by its folder
    return path if not os.access(path, os.R_OK) else None


def _notes_as_lines(message, category, filename, lineno, file=None, line=None):
    """A tcprobe warning (the kernel cache's note) as one ``note:`` line on
    stderr; any other warning as Python shows it."""
    if category.__module__.startswith("tcprobe"):
        click.echo(f"note: {message}", err=True)
    else:
        _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning


def _load_command(name: str) -> click.Command:
    from tcprobe.commands.options import guard_outputs

    return guard_outputs(importlib.import_module(f"tcprobe.commands.{COMMANDS[name][0]}").command)


def _models_loaded() -> None:
    from tcprobe.compile_notes import announce_compiles

    announce_compiles()
    from tcprobe.models import host_ieee, numba_internals

    numba_internals.kernel_form()
    host_ieee.engine_forced()  # a misspelt TCPROBE_EPILOGUE, before any work



_RAN = []


def _reader_left(e: OSError) -> bool:
    """Whether ``e`` is stdout's reader gone (a pipe closed: ``| head -1``). A
    write to a closed pipe through a buffer can say only "N requested and 0
    written", with no errno; stdout's pipe is then asked."""
    if isinstance(e, BrokenPipeError) or e.errno == errno.EPIPE:
        return True
    try:
        import select

        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        return bool(select.select([], [fd], [], 0)[1]) and _pipe_closed(fd)
    except (OSError, ValueError, AttributeError):
        return False


def _pipe_closed(fd: int) -> bool:
    import select

    p = select.poll()
    p.register(fd, select.POLLERR)
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in p.poll(0))


def _first_command() -> bool:
    """Whether this is the process's first command, begun within 10 s of its
    start (the console script's): only then is its start-up a blank screen."""
    import time

    from tcprobe.activity import START

    first = not _RAN and time.monotonic() - START < 10.0
    _RAN.append(True)
    return first

class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then()`` right after the module ``name`` is first imported."""

    def __init__(self, name: str, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        run, then = spec.loader.exec_module, self.then

        def exec_module(module):
            run(module)
            then()
        spec.loader.exec_module = exec_module
        return spec


def _after_import(name: str, then) -> None:
    """``then()`` now if ``name`` is imported, else right after it is."""
    if name in sys.modules:
        then()
    elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, then))


class _Commands(dict):
    """``main.commands``: each command loaded on first use; listing them
    (items, values, iteration) loads every one."""

    def __missing__(self, name):
        if name not in COMMANDS:
            raise KeyError(name)
        self[name] = cmd = _load_command(name)
        return cmd

    def _all(self):
        for name in COMMANDS:
            if not dict.__contains__(self, name):
                self[name]  # noqa: B018 (loads it)

    def get(self, name, default=None):
        return self[name] if name in COMMANDS or dict.__contains__(self, name) else default

    def __contains__(self, name):
        return name in COMMANDS or dict.__contains__(self, name)

    def __iter__(self):
        self._all()
        return dict.__iter__(self)

    def __len__(self):
        self._all()
        return dict.__len__(self)

    def keys(self):
        self._all()
        return dict.keys(self)

    def values(self):
        self._all()
        return dict.values(self)

    def items(self):
        self._all()
        return dict.items(self)


class Group(click.Group):
    """The command group; each command's module is imported when it is used."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx):
        return sorted(set(COMMANDS) | set(dict.keys(self.commands)))

    def get_command(self, ctx, name):
        return self.commands.get(name)

    def resolve_command(self, ctx, args):
        """The command and its arguments, its options as given checked first
        (an option given twice or blank is one error: options.check_given)."""
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is None or any(a in ("-h", "--help") for a in rest):
            return name, cmd, rest
        from tcprobe.commands.options import check_given

        if not isinstance(cmd, click.Group):
            check_given(name, cmd, rest)
        elif rest and not rest[0].startswith("-"):  # report merge: its subcommand's options
            sub = cmd.get_command(ctx, rest[0])
            if sub is not None and not isinstance(sub, click.Group):
                check_given(f"{name} {rest[0]}", sub, rest[1:])
        return name, cmd, rest

    def format_commands(self, ctx, formatter):
        """The command list of ``tcprobe --help`` from COMMANDS (nothing imported)."""
        limit = formatter.width - 6 - max(len(n) for n in COMMANDS)
        rows = [(name, click.utils.make_default_short_help(
                    COMMANDS[name][1] if name in COMMANDS
                    else self.commands[name].get_short_help_str(limit), limit))
                for name in self.list_commands(ctx) if name in COMMANDS
                or not self.commands[name].hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _named(self, ctx) -> str:
        """The command about to run (click names it only once it runs), from
        the command table: resolving it would import its module first, and
        the heartbeat must be open before that import (numba's, under load,
        took the first line past 2 s)."""
        words = [*(getattr(ctx, "_protected_args", None) or
                   getattr(ctx, "protected_args", None) or []), *ctx.args]
        return words[0] if words and words[0] in self.list_commands(ctx) else ""

    def invoke(self, ctx):
        try:
            # when a command first imports the models (none does for --help, --list):
            # announce compiles, and a misspelt TCPROBE_KERNEL fails before any work
            _after_import("tcprobe.models", _models_loaded)
            from tcprobe.console import COMMAND_QUIET_S, Heartbeat, debug_wanted, heartbeat_wanted

            heartbeat_wanted(strict=True)  # a misspelt TCPROBE_HEARTBEAT, before any work
            debug_wanted(strict=True)  # and TCPROBE_DEBUG: never read as on

            from tcprobe.activity import START

            # after 1.5 s of silence counted from the process's start (the interpreter's
            # and the imports' start-up included): the first line within 2 s, even on a
            # loaded machine whose start-up alone takes longer (a later command of one
            # process, as in the tests, counts from its own start)
            with Heartbeat(f"tcprobe {self._named(ctx)}: working ({{s}} s)"
                           .replace(" :", ":"), quiet=COMMAND_QUIET_S,
                           start=START if _first_command() else None):
                rv = super().invoke(ctx)
            _no_ctrl_c_lost()
            return rv
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit) as e:
            if getattr(e, "exit_code", getattr(e, "code", None)) != EXIT_INTERRUPTED:
                _no_ctrl_c_lost()
            raise
        except KeyboardInterrupt:
            say(("interrupted", "yellow"), err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Exception as e:
            if startsignal.HEARD:  # Ctrl-C, made into another error by a library's import
                say(("interrupted", "yellow"), err=True)
                sys.exit(EXIT_INTERRUPTED)
            if isinstance(e, OSError) and _reader_left(e):
                from tcprobe.console import closed_pipe

                closed_pipe()  # exit 141, nothing more written
            from tcprobe.console import debug_wanted

            # TCPROBE_DEBUG=0 (or no, off, false) is off, as TCPROBE_HEARTBEAT's words
            if debug_wanted():
                raise
            if is_input_error(e):
                fail(describe(e), EXIT_BAD_INPUT)
            fail(f"internal error ({type(e).__name__}: {e}); this is a bug in tcprobe, not in "
                 f"your input: {DEBUG_HINT} and report it", EXIT_INTERNAL)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Click's usage errors as one ``error:`` line (exit 2), like every other error."""
        try:
            return self._main(args, prog_name, complete_var, standalone_mode, **extra)
        except SystemExit as e:
            if startsignal.TERMINATED and e.code == EXIT_INTERRUPTED:
                _ending(EXIT_TERMINATED)
                raise SystemExit(EXIT_TERMINATED) from None
            _ending(e.code)
            raise

    def _main(self, args, prog_name, complete_var, standalone_mode, **extra):
        send_output_to_stderr(False)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help(), err=True)
            sys.exit(EXIT_BAD_INPUT)
        except click.ClickException as e:
            hint, message = "", e.format_message()
            if isinstance(e, click.UsageError) and e.ctx is not None:
                hint = f" (see {e.ctx.command_path} --help)"
                if isinstance(e, click.NoSuchOption):
                    from tcprobe.commands.options import unknown_option_message

                    message = unknown_option_message(e)
            fail(message + hint, EXIT_BAD_INPUT if e.exit_code == 2 else e.exit_code)
        except click.exceptions.Abort:
            say(("interrupted", "yellow"), err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            sys.exit(0)
        sys.exit(rv if isinstance(rv, int) else 0)


def _no_ctrl_c_lost() -> None:
    """A Ctrl-C the command's handler heard (startsignal.HEARD) but that
    never reached the command line as KeyboardInterrupt, because code
    between swallowed it (a ``__del__`` or a weakref callback it landed in,
    whose exceptions Python only prints; a library's broad except): the
    command ends as interrupted (exit 130), never as if no Ctrl-C had come
    (exit 0, seen once while numba compiled a first run's kernels)."""
    if startsignal.HEARD:
        say(("interrupted", "yellow"), err=True)
        sys.exit(EXIT_INTERRUPTED)


def _ending(code) -> None:
    """The command has answered and Python is about to tear down (numba's
    and torch's modules take a second or two): a Ctrl-C from here on ends the
    process at once with the command's own status, its output flushed, where
    Python would have died of the signal with no line (exit -2); in the
    last moments of Python's teardown it is ignored. Only where
    Python was started as the command line (never in a caller's process)."""
    import tcprobe

    if not tcprobe._AS_CLI:
        return
    # CPython notes a KeyboardInterrupt leaving any exec() of source text (a dataclass's
    # or namedtuple's methods are made so as modules import) and, started as `-m`, kills
    # itself with SIGINT at exit when the note stands, even after the command caught the
    # Ctrl-C and said `interrupted`: exit -2, not 130 (campaign 12's open race). Each
    # exec of text clears the note first; this one, the last, leaves it clear.
    exec("None")  # noqa: S102 - constant text, run for its side effect above
    status = 0 if code is None else code if isinstance(code, int) else 1

    def _done(signum, frame):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
    import atexit
    import signal

    try:
        signal.signal(signal.SIGINT, _done)
    except ValueError:  # not the main thread
        return
    if signal.getsignal(signal.SIGTERM) is startsignal._terminated:  # at once, as Ctrl-C
        signal.signal(signal.SIGTERM, _done)
        atexit.register(signal.signal, signal.SIGTERM, signal.SIG_DFL)
    # Python's own finalization puts SIGINT back to its default (death by the
    # signal, no line) after the atexit functions; ignored from the last of
    # them on, while modules are torn down (threads joined already, so no wait)
    atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"],
                                          "max_content_width": 100})
@click.version_option(__version__, prog_name="tcprobe")
def main():
    """Find out exactly how NVIDIA tensor-core instructions compute, bit for bit.

    Bad input exits 2 with one error line; an internal error exits 3. Set
    TCPROBE_DEBUG=1 to see a traceback instead of a one-line error.
    """


warnings.showwarning = _notes_as_lines  # before the commands import the models
startsignal.restore()  # imported: Ctrl-C is KeyboardInterrupt again (invoke says it)


if __name__ == "__main__":  # pragma: no cover
    main()
