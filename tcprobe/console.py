"""The shared rich console and the one-line error convention of the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape


def _width(stream) -> int | None:
    """Full terminal width on a terminal; a wide page when piped to a file."""
    return None if stream.isatty() else 140


console = Console(highlight=False, width=_width(sys.stdout))
err_console = Console(stderr=True, highlight=False, width=_width(sys.stderr))


class UsageError(ValueError):
    """Bad input from the user: printed as one line, exit status 2."""


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` in red on stderr and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    sys.exit(code)


def note(message: str) -> None:
    """A one-line remark on stderr (for example: no GPU, using a sim device)."""
    err_console.print(f"[yellow]note:[/] {escape(message)}", soft_wrap=True)


def write_json(path: str | Path, payload: dict) -> None:
    """Write ``payload`` as indented JSON, creating parent folders."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(payload, indent=2, default=_jsonable) + "\n")


def _jsonable(x):
    import numpy as np

    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (set, tuple)):
        return list(x)
    raise TypeError(f"cannot write {type(x).__name__} as JSON")
