"""Shared test fixtures: where the published captures are, and skips."""

import os
import shutil
import sys
from pathlib import Path

import pytest

try:  # absent where only the GPU tests run (gpu-check on a lent machine)
    from hypothesis import settings
except ImportError:  # pragma: no cover
    settings = None

# The suite's property tests draw the same examples on every run (a CI run
# fails only on a change, never on a new draw); TCPROBE_HYPOTHESIS=explore
# draws fresh examples each run, to hunt for new counterexamples.
if settings is not None:
    settings.register_profile("repeatable", derandomize=True, print_blob=True)
    settings.register_profile("explore", derandomize=False, print_blob=True)
    settings.load_profile(os.environ.get("TCPROBE_HYPOTHESIS", "repeatable"))

# The command line's heartbeat ("tcprobe X: working (N s)" on stderr after 2 s
# of silence) is off in the tests, whose runners mix stderr into the output
# they read; tests/test_heartbeat.py turns it on where it is the subject.
os.environ.setdefault("TCPROBE_HEARTBEAT", "0")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # test helpers (engine_reference, ...)

SHARED = ROOT.parent / "shared"

# Two tiers. The fast tier (the default: python3 -m pytest) is what a
# developer runs between changes: unit tests, differential tests on small
# case counts, one ladder per family, under 10 minutes on 2 cores from a
# cold kernel cache. Tests marked `slow` (many kernel configurations, large
# case counts, every ladder, fresh installs, subprocess campaigns) run with
# --tier all (everything) or --tier slow (only them: .ci/run runs the fast
# tier and this side by side, so that every test runs once).
TIERS = ("fast", "slow", "all")


def pytest_addoption(parser):
    parser.addoption("--tier", choices=TIERS, default="fast",
                     help="fast: skip tests marked slow (default); slow: only them; all: every test")


def pytest_collection_modifyitems(config, items):
    seen = {}
    for item in items:  # @pytest.mark.fast_first(n): the test's first n cases are fast
        mark = item.get_closest_marker("fast_first")
        if mark is not None:
            key = (item.module.__name__, getattr(item, "originalname", item.name))
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > mark.args[0]:
                item.add_marker(pytest.mark.slow)
    tier = config.getoption("--tier")
    if tier == "all" or config.getoption("-m"):  # an explicit -m expression decides alone
        return
    keep, drop = [], []
    for item in items:
        slow = item.get_closest_marker("slow") is not None
        (keep if slow == (tier == "slow") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
HWDATA = SHARED / "hwdata" / "khattak-mikaitis-2025"
SUBSET = ROOT / "tests" / "data" / "khattak-mikaitis-2025"

needs_shared = pytest.mark.skipif(not HWDATA.is_dir(),
                                  reason="../shared/hwdata is absent (published captures)")


@pytest.fixture(scope="session")
def mmasim_peer():
    """MMA-Sim (and torch, which it needs), imported when a test first asks
    for it rather than at collection (torch alone costs a second or more);
    a skip with the reason where either is absent."""
    pytest.importorskip("torch", reason="MMA-Sim needs torch")
    return pytest.importorskip(
        "mmasim", reason="MMA-Sim 2.1.1 is not installed (pip install 'tcprobe[peer]')")


@pytest.fixture(scope="session")
def fresh_install(tmp_path_factory):
    """A fresh venv with tcprobe installed as a user installs it (not
    editable), offline: the dependencies come from this Python's own
    packages (--system-site-packages, pip --no-index --no-deps). Its python."""
    import subprocess

    venv = tmp_path_factory.mktemp("fresh") / "venv"
    # no pip or setuptools of its own: this Python's (newer) ones build the wheel
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True,
                   timeout=300)
    python = venv / "bin" / "python"
    build = tmp_path_factory.mktemp("build")
    source = build / "tcprobe-src"  # a copy: pip builds in the source folder
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", "*.egg-info", "build", "out", "shared", ".venv", ".pytest_cache"))
    r = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                        "--no-build-isolation", "--disable-pip-version-check", str(source)],
                       capture_output=True, text=True, timeout=600, cwd=build,
                       env={**os.environ, "PIP_NO_INDEX": "1"})
    if r.returncode != 0:
        pytest.fail(f"pip install . failed: {r.stderr[-2000:]}")
    site = subprocess.run([str(python), "-c", "import tcprobe, tcprobe.models as m; print(m.__file__)"],
                          capture_output=True, text=True, cwd=build, timeout=120)
    assert str(venv) in site.stdout, site.stdout + site.stderr  # the install, not the tree
    return python
