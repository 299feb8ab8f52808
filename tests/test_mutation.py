"""The mutation check: a device whose datapath differs from the true one in
a single parameter must be caught by the default suites within 100,000
cases, and the report must say which suite caught it. The random-only
suites (raw, finite) miss the zero floor and the zero sign: that is what
the adversarial and edge suites are for (docs/validation.md)."""

import pytest
from model_device import altered

from tcprobe import suites as suites_mod
from tcprobe.models.datapath import Datapath
from tcprobe.models.profiles import PROFILES
from tcprobe.reports.validate import report
from tcprobe.validation import validate as v

BF16 = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
F16 = Datapath("mma", "f16", "f16", "f16", "f16", 16)
CASES = 100_000

ALTERATIONS = {
    "window-1": lambda p: dict(window_bits=p.window_bits - 1),
    "window+1": lambda p: dict(window_bits=p.window_bits + 1),
    "block/2": lambda p: dict(block_size=p.block_size // 2),
    "floor+1": lambda p: dict(zero_floor=p.zero_floor + 1),
    "floor-1": lambda p: dict(zero_floor=p.zero_floor - 1),
    "rounding": lambda p: dict(output_rounding="rne" if p.output_rounding == "rz" else "rz"),
    "zero-sign": lambda p: dict(zero_sign="ieee"),
}
# Alterations that uniformly random cases never reach (the docs name them).
RANDOM_MISSES = {"floor+1", "floor-1", "zero-sign"}


def check(dp, profile, name, suites=suites_mod.SUITES):
    truth = PROFILES[profile].model(dp)
    device = altered(dp, truth.params, name, **ALTERATIONS[name](truth.params))
    plan = suites_mod.Plan(tuple(suites), CASES)
    return v.run(dp, device, [truth], plan, seed=0, capture=None)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ALTERATIONS))
@pytest.mark.parametrize("dp,profile", [(BF16, "b200-hmma"), (F16, "h100")], ids=["bf16", "f16"])
def test_default_suites_catch_every_alteration(dp, profile, name):
    result = check(dp, profile, name)
    rep = report(result)["models"][0]
    assert rep["mismatches"] > 0, f"{name} went unnoticed in {CASES:,} cases"
    assert rep["caught_by"], "the report must name the suite that caught it"
    first = rep["caught_by"][0]
    assert rep["by_suite"][first]["first_case"] == rep["first_mismatch"]
    assert rep["first_mismatch"] < CASES


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RANDOM_MISSES))
@pytest.mark.parametrize("dp,profile", [(BF16, "b200-hmma"), (F16, "h100")], ids=["bf16", "f16"])
def test_random_suites_alone_miss_the_floor_and_zero_sign(dp, profile, name):
    result = check(dp, profile, name, suites=("raw", "finite"))
    assert result.primary.total == 0
