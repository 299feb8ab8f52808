"""The ``tcprobe`` command line: a thin click group over the commands."""

from __future__ import annotations

import importlib
import os
import sys

import click

from tcprobe import __version__
from tcprobe.console import err_console, fail

# One module per command in tcprobe/commands; each defines ``command``.
COMMAND_MODULES = [
    "score",
    "sass_check",
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
]

# Errors that mean bad input or an unusable device: one line, exit 2.
USER_ERRORS = (ValueError, LookupError, OSError, RuntimeError)


class Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            err_console.print("[yellow]interrupted[/]")
            sys.exit(130)
        except USER_ERRORS as e:
            if os.environ.get("TCPROBE_DEBUG"):
                raise
            fail(str(e) or type(e).__name__)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"],
                                          "max_content_width": 100})
@click.version_option(__version__, prog_name="tcprobe")
def main():
    """Find out exactly how NVIDIA tensor-core instructions compute, bit for bit.

    Set TCPROBE_DEBUG=1 to see a traceback instead of a one-line error.
    """


for _name in COMMAND_MODULES:
    _mod = importlib.import_module(f"tcprobe.commands.{_name}")
    main.add_command(_mod.command)


if __name__ == "__main__":  # pragma: no cover
    main()
