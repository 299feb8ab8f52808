"""Every AMD v_mfma string of MMA-Sim 2.1.1 against tcprobe's profile of its
generation, word for word (issue 36): random bits, special-heavy words (NaN
payloads of both signs, signalling and quiet, Inf, -0, subnormals, the
largest finites), the validation mix (cancellation, small exponents) and the
ladder's tie cases. Every word agrees but NaN words on CDNA1 f16/bf16, where
MMA-Sim's NaN is no function of the inputs (docs/amd.md: torch's vectorized
double sum picks it, and the same case alone and in a batch differ)."""

from __future__ import annotations

import numpy as np
import pytest

from tcprobe.ladder.validation import _mfma_ties
from tcprobe.models import registry
from tcprobe.models.amd_cases import amd_cases
from tcprobe.models.cases import Cases
from tcprobe.models.formats import Class, decode
from tcprobe.suites.mix import random_cases

pytestmark = [pytest.mark.peer, pytest.mark.usefixtures("mmasim_peer")]


def _strings():
    try:
        from mmasim.amd import isa_mfma
    except ImportError:
        return []
    return [(a, s) for a, ss in isa_mfma.arch_mfma_suffix.items() for s in ss]


def test_every_amd_string_of_mmasim_is_compared():
    assert len(_strings()) == 64  # CDNA1 15, CDNA2 22, CDNA3 27


@pytest.mark.parametrize("arch,suffix", _strings() or [("CDNA3", "f32_16x16x16_f16")])
def test_words_agree_with_mmasim(arch, suffix):
    from tcprobe.devices.mmasim import MmaSimDevice

    dev = MmaSimDevice(f"{arch}:v_mfma_{suffix}")
    dp = dev.fixed_datapath()
    model = registry.resolve("auto", dp, dev.info()["gpu"])
    rng = np.random.default_rng(36)
    cases = Cases.concat([amd_cases(dp, 120, rng), random_cases(dp, 60, rng),
                          _mfma_ties(dp, 30, rng)])
    want, got = dev.run(dp, cases), model.evaluate(cases)
    nan = (decode(dp.d_type, want).cls == Class.NAN) & (decode(dp.d_type, got).cls == Class.NAN)
    assert nan.sum() > 0  # the special-heavy half reaches NaN results
    assert not ((want != got) & ~nan).any(), int(((want != got) & ~nan).sum())
    if arch != "CDNA1" or dp.a_type in ("f32", "f64"):
        assert np.array_equal(want, got), int((want != got).sum())
