"""The heartbeat's voice in a child process: lines that come on time even
while this process cannot run its own threads.

A thread's heartbeat waits for the interpreter lock; numba's compiler (LLVM
optimising one kernel) or an extension's import can hold it for seconds, and
the screen stays blank meanwhile (campaign 7 saw one silence of 7.1 s). The
speaker is a small Python process started beside the command (its own
session: a Ctrl-C at the terminal reaches only the command). Through a pipe
it hears when something was last shown (:func:`tcprobe.activity.mark`) and
which heartbeats are open, and writes their lines to the command's stderr
itself. It ends when the last heartbeat closes, or at once when the command
dies (the pipe's end of file); it says nothing while the command is stopped
(Ctrl-Z).

One speaker per process; :class:`tcprobe.console.Heartbeat` opens and closes
its lines here, and falls back to a thread where stderr is no real file (a
test's captured stream, a notebook).
"""

from __future__ import annotations

import json
import os
import sys
import threading

# The child's whole program: reads messages (one a line) from stdin, writes
# heartbeat lines to the descriptor named by argv[1], acknowledges a close on
# stdout. Messages: "M t" something was shown until monotonic time t;
# "P id quiet every since template" opens a heartbeat (template: JSON text with
# {s}, the seconds since `since`); "Q id" closes one (acknowledged with one
# byte: no line of it comes after).
_CHILD = r"""
import json, os, select, sys, time
fd, parent, last = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
tty = os.isatty(fd)
beats, buf = {}, b""

def stopped():
    try:
        with open("/proc/%d/stat" % parent) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False

while True:
    ready = select.select([0], [], [], 0.05)[0]
    if ready:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            kind, _, rest = line.decode().partition(" ")
            if kind == "M":
                last = max(last, float(rest))
            elif kind == "P":
                key, quiet, every, since, template = rest.split(" ", 4)
                beats[key] = (float(quiet), float(every), float(since), json.loads(template))
            elif kind == "Q":
                beats.pop(rest, None)
                os.write(1, b".")
    if os.getppid() != parent:
        break
    now = time.monotonic()
    for key in reversed(list(beats)):  # the newest speaks first and holds the others off
        quiet, every, since, template = beats[key]
        if now - last >= quiet and not stopped():
            text = ("\r\033[K" if tty else "") + template.replace("{s}", "%.0f" % (now - since))
            try:
                os.write(fd, (text + "\n").encode())
            except OSError:
                sys.exit(0)
            last = now + every - quiet
            break
"""


class Speaker:
    """The parent's end of one speaker process."""

    def __init__(self, fd: int, last: float):
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CHILD, str(fd), str(os.getpid()), repr(last)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(fd,),
            start_new_session=True, bufsize=0)
        self._out = self.proc.stdin.fileno()
        os.set_blocking(self._out, False)  # a stalled speaker drops marks, never blocks us
        self.keys: list[str] = []
        self.owner = os.getpid()  # a forked child must not speak through its parent's

    def send(self, text: str, must: bool = False) -> bool:
        """Write one message; a full pipe drops it unless ``must``."""
        data = (text + "\n").encode()
        try:
            if must:
                os.set_blocking(self._out, True)
            os.write(self._out, data)
            return True
        except (BlockingIOError, BrokenPipeError, OSError):
            return False
        finally:
            if must:
                os.set_blocking(self._out, False)

    def close_beat(self, key: str) -> None:
        """Close one heartbeat and wait until the speaker has heard it (so no
        line of it comes after), at most a second."""
        import select

        if self.send(f"Q {key}", must=True) and self.proc.stdout is not None:
            if select.select([self.proc.stdout], [], [], 1.0)[0]:
                os.read(self.proc.stdout.fileno(), 1)

    def end(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=1.0)
        except Exception:  # noqa: BLE001 - a speaker that will not end is killed
            self.proc.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_LOCK = threading.Lock()
_STATE: dict = {"speaker": None, "count": 0}


def stderr_fd() -> int | None:
    """The descriptor of the real stderr, or None where it is no file."""
    if os.name != "posix":
        return None
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def open_beat(template: str, quiet: float, every: float, since: float, last: float) -> str | None:
    """Open a heartbeat in the speaker (started if none runs); its key, or
    None where no speaker can run (the caller uses a thread)."""
    fd = stderr_fd()
    if fd is None:
        return None
    with _LOCK:
        sp = _STATE["speaker"]
        if sp is not None and sp.owner != os.getpid():
            return None  # a forked child: its parent's speaker is not its own
        if sp is None:
            try:
                sp = Speaker(fd, last)
            except Exception:  # noqa: BLE001 - no process to be had: the caller's thread speaks
                return None
            _STATE["speaker"] = sp
        _STATE["count"] += 1
        key = str(_STATE["count"])
        sp.keys.append(key)
        if not sp.send(f"P {key} {quiet!r} {every!r} {since!r} {json.dumps(template)}",
                       must=True):
            sp.keys.remove(key)
            return None
        return key


def close_beat(key: str) -> None:
    """Close a heartbeat; the speaker ends with the last one."""
    with _LOCK:
        sp = _STATE["speaker"]
        if sp is None or key not in sp.keys:
            return
        sp.keys.remove(key)
        if sp.keys:
            sp.close_beat(key)
        else:
            sp.end()
            _STATE["speaker"] = None


def shown(until: float) -> None:
    """Tell the speaker something was shown until monotonic ``until``."""
    sp = _STATE["speaker"]
    if sp is not None and sp.owner == os.getpid():
        sp.send(f"M {until!r}")
