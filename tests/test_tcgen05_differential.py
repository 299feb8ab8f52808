"""Every tcgen05 datapath against the independent slow reference
(tests/reference_model.py) on random cases of four suites: raw words, finite
words, cancellation (C aimed at the products) and edge cases (zero floors,
group floor, far-apart scale blocks); see tests/tcgen05_gen.py.

Default: 1,000 cases per suite for each datapath of the write-up's suite
(and kind::f16 f16 -> f16), 300 per suite for the other mixed pairs.
TCPROBE_TCGEN05_CASES=10000 runs that many per suite for every datapath
(about 40,000 per datapath; several minutes)."""

import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from tcprobe.models.datapath import Datapath
from tcprobe.models.tcgen05 import model_for
from tcprobe.validation.targets import blog_targets, mixed_targets

sys.path.insert(0, str(Path(__file__).parent))
from reference_model import reference_words  # noqa: E402
from tcgen05_gen import SUITES, random_cases  # noqa: E402

CASES = int(os.environ.get("TCPROBE_TCGEN05_CASES", "0"))
EXTRA = ["tcgen05.f16.f16.k16", "tcgen05.f16.f16.k32.sparse"]  # kind::f16 with an f16 D
MAIN = list(dict.fromkeys([t.datapath.id for t in blog_targets()] + EXTRA))
MIXED = [t.datapath.id for t in mixed_targets() if t.datapath.id not in MAIN]


def _check(dp_id: str, n: int) -> None:
    dp = Datapath.parse(dp_id)
    model = model_for(dp)
    for suite in SUITES:
        cases = random_cases(dp, n, suite, seed=zlib.crc32(f"{dp_id}/{suite}".encode()))
        got = model.evaluate(cases)
        want = np.array(reference_words(dp, cases), dtype=np.uint32)
        bad = np.flatnonzero(got != want)
        if len(bad):
            i = int(bad[0])
            pytest.fail(f"{dp_id} {suite}: {len(bad)} of {n} differ; first: "
                        f"a={[hex(x) for x in cases.a[i]]} b={[hex(x) for x in cases.b[i]]} "
                        f"c={int(cases.c[i]):#x} "
                        f"sa={None if cases.scale_a is None else list(cases.scale_a[i])} "
                        f"sb={None if cases.scale_b is None else list(cases.scale_b[i])} "
                        f"model={int(got[i]):#x} reference={int(want[i]):#x}")


@pytest.mark.slow
@pytest.mark.parametrize("dp_id", MAIN)
def test_suite_datapath_matches_reference(dp_id):
    _check(dp_id, CASES or 1000)


@pytest.mark.slow
@pytest.mark.parametrize("dp_id", MIXED)
def test_mixed_pair_matches_reference(dp_id):
    _check(dp_id, CASES or 300)
