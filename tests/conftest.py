"""Shared test fixtures: where the published captures are, and skips."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # test helpers (engine_reference, ...)

SHARED = ROOT.parent / "shared"
HWDATA = SHARED / "hwdata" / "khattak-mikaitis-2025"
SUBSET = ROOT / "tests" / "data" / "khattak-mikaitis-2025"

needs_shared = pytest.mark.skipif(not HWDATA.is_dir(),
                                  reason="../shared/hwdata is absent (published captures)")
