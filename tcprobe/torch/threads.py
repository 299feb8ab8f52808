"""Threads started inside an emulate block, counted in its Report.

Dispatch modes are thread-local: a thread started inside ``emulate`` runs
plain torch, its products unseen. ``threading.Thread.start`` is wrapped
once (the first block entered); the wrapper counts a start in the report of
every block the starting thread is inside, and does nothing else."""

from __future__ import annotations

import threading

_BLOCKS: dict[int, list] = {}  # thread ident -> the reports of the blocks it is inside
_ORIGINAL = None


def _start(thread, *args, **kwargs):
    seen = set()
    for report in _BLOCKS.get(threading.get_ident(), ()):
        if id(report) not in seen:  # nested blocks with one report count a thread once
            seen.add(id(report))
            report.threads += 1
    return _ORIGINAL(thread, *args, **kwargs)


def entered(report) -> None:
    """The calling thread is inside a block reporting to ``report``."""
    global _ORIGINAL
    if _ORIGINAL is None:
        _ORIGINAL = threading.Thread.start
        threading.Thread.start = _start
    _BLOCKS.setdefault(threading.get_ident(), []).append(report)


def left(report) -> None:
    """The calling thread has left its innermost block reporting to ``report``."""
    stack = _BLOCKS.get(threading.get_ident(), [])
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is report:
            del stack[i]
            break
    if not stack:
        _BLOCKS.pop(threading.get_ident(), None)
