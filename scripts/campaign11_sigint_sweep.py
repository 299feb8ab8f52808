"""Campaign 11's Ctrl-C sweeps (docs/campaign-11.md): a command started N
times, sent Ctrl-C at LO, LO + STEP, ... (40 delays, round again), each end
tallied: one line and 130, killed by the signal with no line, a traceback
through tcprobe's files, one of Python's own start-up, or answered.

    python3 scripts/campaign11_sigint_sweep.py 80 0.02 0.005 tcprobe targets
"""

import collections
import re
import signal
import subprocess
import sys
import time


def verdict(code: int, err: str) -> str:
    files = re.findall(r'File "([^"]+)", line \d+, in', err)
    own = [f for f in files if "/tcprobe/" in f or "/models/" in f or f.endswith("/bin/tcprobe")]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if own:
        return "traceback through tcprobe's files"
    if files:
        return "Python start-up traceback (site, .pth, runpy)"
    if code == 130 and lines and lines[-1].startswith("interrupted"):
        return "130, one line"
    if code == -signal.SIGINT:
        return "killed by the signal, no line"
    if code in (0, 1):
        return "answered (own status)"
    return f"exit {code}"


def main(argv):
    n, lo, step, cmd = int(argv[0]), float(argv[1]), float(argv[2]), argv[3:]
    tally: collections.Counter = collections.Counter()
    for i in range(n):
        # SIGINT at its default in the child, as a terminal's Ctrl-C finds it (a
        # sweep started with & would hand the child SIGINT ignored)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(lo + step * (i % 40))
        p.send_signal(signal.SIGINT)
        _, err = p.communicate()
        tally[verdict(p.returncode, err.decode(errors="replace"))] += 1
    print(dict(tally))


if __name__ == "__main__":
    main(sys.argv[1:])
