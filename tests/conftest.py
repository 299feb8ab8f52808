"""Shared test fixtures: where the published captures are, and skips."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# The suite's property tests draw the same examples on every run (a CI run
# fails only on a change, never on a new draw); TCPROBE_HYPOTHESIS=explore
# draws fresh examples each run, to hunt for new counterexamples.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("TCPROBE_HYPOTHESIS", "repeatable"))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # test helpers (engine_reference, ...)

SHARED = ROOT.parent / "shared"
HWDATA = SHARED / "hwdata" / "khattak-mikaitis-2025"
SUBSET = ROOT / "tests" / "data" / "khattak-mikaitis-2025"

needs_shared = pytest.mark.skipif(not HWDATA.is_dir(),
                                  reason="../shared/hwdata is absent (published captures)")
