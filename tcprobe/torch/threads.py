"""Threads and processes started inside an emulate block, counted in its Report.

Dispatch modes are thread-local: a thread started inside ``emulate`` runs
plain torch, its products unseen. A process started inside (a
``multiprocessing`` worker, a pool's, a ``subprocess``, an ``os.fork``)
is outside the block's report either way: a spawned or forkserver worker
and a subprocess run plain torch; a forked child inherits the block and
emulates, but counts into its own copy of the Report. ``Thread.start``,
``multiprocessing``'s ``BaseProcess.start``, ``subprocess.Popen``,
``os.system`` and ``os.posix_spawn[p]`` are wrapped once (the first block entered) and ``os.fork`` is hooked
(``os.register_at_fork``); each start counts in the report of every block
the starting thread is inside, once (a pool's fork is one process, not two),
and does nothing else."""

from __future__ import annotations

import os
import threading

_BLOCKS: dict[int, list] = {}  # thread ident -> the reports of the blocks it is inside
_ORIGINALS: dict = {}
_LOCAL = threading.local()  # .busy: inside a counted process start (its fork is no second one)


def _count(field: str) -> None:
    if getattr(_LOCAL, "busy", False):
        return
    seen = set()
    for report in _BLOCKS.get(threading.get_ident(), ()):
        if id(report) not in seen:  # nested blocks with one report count a start once
            seen.add(id(report))
            setattr(report, field, getattr(report, field) + 1)


def _start(thread, *args, **kwargs):
    _count("threads")
    return _ORIGINALS["thread"](thread, *args, **kwargs)


def _counted_process(key: str):
    def start(obj, *args, **kwargs):
        _count("processes")
        busy, _LOCAL.busy = getattr(_LOCAL, "busy", False), True
        try:
            return _ORIGINALS[key](obj, *args, **kwargs)
        finally:
            _LOCAL.busy = busy
    return start


def _counted_function(key: str):
    def call(*args, **kwargs):
        _count("processes")
        busy, _LOCAL.busy = getattr(_LOCAL, "busy", False), True
        try:
            return _ORIGINALS[key](*args, **kwargs)
        finally:
            _LOCAL.busy = busy
    return call


def _wrap() -> None:
    import multiprocessing.process
    import subprocess

    _ORIGINALS["thread"] = threading.Thread.start
    threading.Thread.start = _start
    _ORIGINALS["process"] = multiprocessing.process.BaseProcess.start
    multiprocessing.process.BaseProcess.start = _counted_process("process")
    _ORIGINALS["popen"] = subprocess.Popen.__init__
    subprocess.Popen.__init__ = _counted_process("popen")
    for name in ("system", "posix_spawn", "posix_spawnp"):  # C's own fork: no hook sees it
        if hasattr(os, name):
            _ORIGINALS[name] = getattr(os, name)
            setattr(os, name, _counted_function(name))
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lambda: _count("processes"))


def entered(report) -> None:
    """The calling thread is inside a block reporting to ``report``."""
    if not _ORIGINALS:
        _wrap()
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
