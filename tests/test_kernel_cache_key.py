"""Issue 36 (the first hour): the kernel cache is keyed by the sources, not
by the install's path, so a second install of the same sources (another
venv, another checkout) loads the kernels the first compiled."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = ("tcprobe", "models", "probes", "reports", "kernels")
PROBE = """
from numba.core import event
with event.install_recorder("numba:compile") as rec:
    import tcprobe
    from tcprobe.models import formats
    import numpy as np
    formats.decode_scalar(np.uint32(0x3C00), formats.get_format("f16").spec)
print(tcprobe.__file__)
print("compiles", sum(1 for _w, ev in rec.buffer if ev.is_start))
"""


def _run(where: Path, cache: Path) -> tuple[str, int]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(where)}
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=where, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    path, count = r.stdout.strip().splitlines()[-2:]
    return path, int(count.split()[1])


def test_a_second_copy_of_the_sources_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    copy = tmp_path / "elsewhere"
    for name in TREES:
        shutil.copytree(ROOT / name, copy / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    first, compiled = _run(ROOT, cache)
    assert compiled >= 1 and first.startswith(str(ROOT))
    second, again = _run(copy, cache)
    assert second.startswith(str(copy))  # the copy's own sources ran
    assert again == 0  # and loaded the kernels the first compiled
    from tcprobe.models.kernels.kernel_stamp import SOURCE_STAMP

    assert [p.name for p in cache.iterdir()] == [f"tcprobe-models-{SOURCE_STAMP}"]


def test_other_sources_get_another_folder(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    copy = tmp_path / "edited"
    for name in TREES:
        shutil.copytree(ROOT / name, copy / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(copy / "models" / "bits.py", "a") as fh:
        fh.write("\n# an edit\n")
    _run(ROOT, cache)
    _, compiled = _run(copy, cache)
    assert compiled >= 1  # edited sources never load the first's kernels
    assert len(list(cache.iterdir())) == 2
