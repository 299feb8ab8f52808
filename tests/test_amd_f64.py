"""f64 v_mfma (design fma) over a batch: models/amd.py runs it through the
models' one f64 FMA (models/f64.py, NVIDIA's DMMA chain), where it had run
one case at a time. Held here to the scalar path (models/amd.py's
``fma_word``, which the MMA-Sim tests hold to MMA-Sim's AMD words) on words
drawn to cancel, to be subnormal, to overflow and to be NaN or Inf, and to
words worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

import tcprobe
from tcprobe.models.amd import MfmaModel, MfmaParams
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

DP = Datapath.parse("mfma.f64.f64.k4")
ONE, TWO, HALF_ULP = 0x3FF0000000000000, 0x4000000000000000, 0x3CA0000000000000  # 1, 2, 2^-53
SNAN, QNAN_NEG = 0x7FF0000000000123, 0xFFF800000000BEEF
INF, NEG_INF, NEG_ZERO, MAX = 0x7FF0000000000000, 0xFFF0000000000000, 1 << 63, 0x7FEFFFFFFFFFFFFF


def _special_heavy(rng, shape) -> np.ndarray:
    """f64 words: exponents near one another (sums cancel, ties), subnormals,
    zeros of both signs, the largest finite, Inf, quiet and signalling NaNs
    with payloads, any bit pattern."""
    sign = rng.integers(0, 2, shape).astype(np.uint64) << np.uint64(63)
    frac = rng.integers(0, 1 << 52, shape, dtype=np.uint64)
    exp = rng.integers(1018, 1030, shape).astype(np.uint64) << np.uint64(52)
    w = sign | exp | frac
    pick = rng.random(shape)
    pool = np.array([0, NEG_ZERO, INF, NEG_INF, SNAN, QNAN_NEG, MAX, MAX | NEG_ZERO, 1,
                     0x000FFFFFFFFFFFFF, 0x8000000000000001], np.uint64)
    w = np.where(pick < 0.06, pool[rng.integers(0, len(pool), shape)], w)
    w = np.where((pick >= 0.06) & (pick < 0.12), sign | frac, w)  # subnormals
    w = np.where((pick >= 0.12) & (pick < 0.16), sign | (np.uint64(2045) << np.uint64(52)) | frac,
                 w)  # near the largest: sums overflow
    return np.where(pick >= 0.97, rng.integers(0, 1 << 64, shape, dtype=np.uint64), w)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_batch_path_gives_the_scalar_paths_words(seed):
    rng = np.random.default_rng(seed)
    n = 6000
    cases = Cases(_special_heavy(rng, (n, 4)), _special_heavy(rng, (n, 4)), _special_heavy(rng, n))
    model = MfmaModel("fma", DP, "test", MfmaParams("fma"))
    batch, scalar = model.evaluate(cases), model.scalar_words(cases)
    assert batch.dtype == np.uint64
    differ = np.flatnonzero(batch != scalar)
    assert differ.size == 0, [(hex(batch[i]), hex(scalar[i])) for i in differ[:5]]


def _one(a, b, c) -> int:
    model = MfmaModel("fma", DP, "test", MfmaParams("fma"))
    cases = Cases(np.array([a], np.uint64), np.array([b], np.uint64), np.array([c], np.uint64))
    return int(model.evaluate(cases)[0])


def test_hand_worked_words():
    # a chain, not a fused sum: 1 + 2^-53 ties to 1 twice (fused: 1 + 2^-52)
    assert _one([HALF_ULP, HALF_ULP, 0, 0], [ONE, ONE, 0, 0], ONE) == ONE
    # 2^-53 * 2 added to 1 is one ulp: exact
    assert _one([HALF_ULP, 0, 0, 0], [TWO, 0, 0, 0], ONE) == 0x3FF0000000000001
    # a signalling NaN comes out quieted, payload and sign kept; A's before C's
    assert _one([SNAN, ONE, ONE, ONE], [ONE] * 4, QNAN_NEG) == 0x7FF8000000000123
    # Inf * 0 is x86's default NaN (sign set), whatever came before
    assert _one([ONE, INF, ONE, ONE], [ONE, 0, ONE, ONE], ONE) == 0xFFF8000000000000
    # -0 products on a -0 C stay -0; a +0 C makes the sum +0
    assert _one([NEG_ZERO, 0, NEG_ZERO, 0], [0, NEG_ZERO, 0, NEG_ZERO], NEG_ZERO) == NEG_ZERO
    assert _one([NEG_ZERO, 0, NEG_ZERO, 0], [0, NEG_ZERO, 0, NEG_ZERO], 0) == 0
    # the smallest subnormal product is kept
    assert _one([1, 0, 0, 0], [ONE, 0, 0, 0], 0) == 1
    # the largest finite doubled overflows to Inf; -Inf then gives the default NaN
    assert _one([MAX, 0, 0, 0], [TWO, 0, 0, 0], 0) == INF
    assert _one([MAX, NEG_INF, 0, 0], [TWO, ONE, 0, 0], 0) == 0xFFF8000000000000


def test_dot_runs_the_batch_path():
    # MI300X f64 through tcprobe.dot: four products of 1 + 2^-52 by itself onto
    # C = -4: each FMA drops the 2^-104 of the exact product's 1 + 2^-51 + 2^-104,
    # so the chain goes -3 + 2^-51, -2 + 2^-50, -1 + 3 * 2^-51 and ends at
    # 4 * 2^-51 = 2^-49 (worked out by hand)
    x = 0x3FF0000000000001
    rows = [[x] * 4] * 3
    d = tcprobe.dot(rows, rows, [0xC010000000000000] * 3, datapath="mfma.f64.f64.k4",
                    gpu="MI300X")
    assert [int(w) for w in np.asarray(d).ravel()] == [0x3CE0000000000000] * 3
