"""The engine parameters are one table (models/engine.PARAMS): EngineParams,
the TOML schema, the fingerprint, the sim profiles and the ladder report read it."""

from dataclasses import fields

import pytest

from tcprobe.ladder.fingerprint import ENGINE_KEYS, FINGERPRINT_KEYS, Fingerprint
from tcprobe.models.engine import PARAMS, PROFILE_KEYS, EngineParams, ParamError
from tcprobe.schema import engine_schema
from tcprobe.schema_profile import PROFILE_REQUIRED


def test_one_table_of_engine_parameters():
    names = [p.name for p in PARAMS]
    assert names == [f.name for f in fields(EngineParams)]
    assert names == list(engine_schema())
    assert [f.default for f in fields(EngineParams)] == [p.default for p in PARAMS]
    # the seven keys every TOML profile sets (docs/sim-profiles.md) and every fingerprint reports
    assert PROFILE_KEYS == PROFILE_REQUIRED == FINGERPRINT_KEYS == (
        "window_bits", "block_size", "zero_floor", "input_conversion", "output_rounding",
        "zero_sign", "nan")
    assert set(ENGINE_KEYS) <= {f.name for f in fields(Fingerprint)}


def test_the_defaults_are_the_hopper_blackwell_f32_datapath():
    # F=25, L=16, floor -133, RZ, +0 (the HMMA/tcgen05 convention, models/isa.py)
    p = EngineParams()
    assert (p.window_bits, p.block_size, p.zero_floor, p.output_rounding, p.zero_sign) == (
        25, 16, -133, "rz", "positive")


@pytest.mark.parametrize("change", [dict(block_size=0), dict(window_bits=57),
                                    dict(output_rounding="rd"), dict(carry_top="clip"),
                                    dict(zero_sign=None)])
def test_check_reads_the_table(change):
    with pytest.raises(ParamError):
        EngineParams(**change).check()
