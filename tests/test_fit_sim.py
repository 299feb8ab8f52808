"""fit recovers custom profiles from simulated captures of 5,000 random cases.

The "device" is a model with altered parameters standing in for silicon
(window 10..30, block 2..64, RZ/RNE, floors, zero signs, and structures:
interleaved splits, block results in f32, C added after, normalized
products). The cases come from tests/_fitcases.py (numpy, integer words).
"""

from __future__ import annotations

import numpy as np
import pytest
from _fitcases import random_cases, simulated_capture

from tcprobe.fit import FitConfig, fit
from tcprobe.fit.space import Recipe
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams
from tcprobe.models.model import FixedPointModel

ENGINE_PROFILES = [
    # (inputs, output, K, window, block, floor, rounding, zero sign, case seed)
    ("bf16", "f32", 32, 11, 8, -150, "rne", "ieee", 2),
    ("bf16", "f32", 16, 28, 4, -123, "rz", "positive", 1),
    ("bf16", "f32", 64, 14, 8, -125, "rz", "ieee", 5),
    ("bf16", "f32", 64, 30, 2, -124, "rne", "positive", 24),
    ("f16", "f16", 64, 19, 4, -19, "rz", "positive", 3),
    ("bf16", "f32", 32, 12, 32, -139, "rz", "ieee", 4),
]


@pytest.mark.parametrize("fmt,out,k,window,block,floor,rounding,zero_sign,seed", ENGINE_PROFILES)
def test_fit_recovers_an_engine_profile(fmt, out, k, window, block, floor, rounding, zero_sign,
                                        seed):
    dp = Datapath("mma", fmt, fmt, fmt, out, k)
    params = EngineParams(window_bits=window, block_size=block, zero_floor=floor,
                          output_rounding=rounding, zero_sign=zero_sign)
    device = FixedPointModel("custom", dp, "a simulated device", params)
    cap = simulated_capture(device, random_cases(dp, 5000, seed=seed, floor_hint=floor))
    res = fit(cap, FitConfig(analyse=False))
    assert res.mismatches == 0, res.best_description
    b = res.best
    assert (b.window, b.block, b.floor, b.rounding, b.zero_sign) == (
        window, block, floor, rounding, zero_sign), res.best_description
    assert res.candidates < FitConfig().budget


STRUCTURES = [
    # The emulation's shape with other numbers: e4m3 to f16, 4 blocks of
    # interleaved pairs run last first, f32 block results, C added after (RZ).
    ("e4m3", "f16", Recipe(window=11, block=8, floor=-21, rounding="rne", unit=2, reverse=True,
                           inter="f32:rz", c_entry="last:rz", align="normalized",
                           zero_sign="ieee"), 4),
    # f16 to f32, 8 blocks of interleaved pairs, C added after (RNE).
    ("f16", "f32", Recipe(window=25, block=4, floor=-133, rounding="rne", unit=2,
                          c_entry="last:rne", align="normalized"), 9),
    # bf16 to f32, 2 blocks of interleaved quads, last first, C added after.
    ("bf16", "f32", Recipe(window=22, block=16, floor=-143, rounding="rz", unit=4, reverse=True,
                           c_entry="last:rne"), 5),
]


@pytest.mark.parametrize("fmt,out,device_recipe,seed", STRUCTURES)
def test_fit_recovers_a_structure(fmt, out, device_recipe, seed):
    dp = Datapath("mma", fmt, fmt, fmt, out, 32)
    r = device_recipe.canonical(dp)
    device = r.model(dp, "custom")
    cap = simulated_capture(device, random_cases(dp, 5000, seed=seed, floor_hint=r.floor))
    res = fit(cap, FitConfig(analyse=False))
    assert res.mismatches == 0, res.best_description
    b = res.best
    for dim in ("split", "c_entry", "inter", "align", "window"):
        assert b.get(dim) == r.get(dim), (dim, res.best_description)
    # The fitted model is the device on fresh cases too (up to what the
    # capture could not pin, e.g. a floor below every case).
    fresh = random_cases(dp, 5000, seed=seed + 1000, floor_hint=r.floor)
    assert int((b.model(dp).evaluate(fresh) != device.evaluate(fresh)).sum()) <= 5


def test_rejected_families_shrink_with_a_live_oracle():
    """With the device at hand (a sim), the case that rules a family out is
    shrunk: fewer lanes, simpler words, still telling the two apart."""
    dp = Datapath("mma", "e4m3", "e4m3", "e4m3", "f16", 32)
    device_recipe = Recipe(window=25, block=16, floor=-21, rounding="rne", unit=2,
                           c_entry="last:rne").canonical(dp)
    device = device_recipe.model(dp, "custom")
    cap = simulated_capture(device, random_cases(dp, 1000, seed=11, floor_hint=-21))
    res = fit(cap, FitConfig(), oracle=device.evaluate)
    assert res.mismatches == 0
    shrunk = [j for j in res.rejected if j.shrunk]
    assert shrunk
    for j in shrunk:
        assert j.shrunk["device"] != j.shrunk["candidate"]
        assert len(j.shrunk["lanes"]) < 32
    assert min(len(j.shrunk["lanes"]) for j in shrunk) <= 4


def test_generator_exercises_zero_signs_and_the_floor():
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 32)
    cases = random_cases(dp, 2000, seed=0, floor_hint=-140)
    ieee = FixedPointModel("a", dp, params=EngineParams(zero_sign="ieee")).evaluate(cases)
    pos = FixedPointModel("b", dp, params=EngineParams(zero_sign="positive")).evaluate(cases)
    assert (ieee != pos).sum() > 10
    hi = FixedPointModel("c", dp, params=EngineParams(zero_floor=-130, window_bits=14))
    lo = FixedPointModel("d", dp, params=EngineParams(zero_floor=-140, window_bits=14))
    assert (hi.evaluate(cases) != lo.evaluate(cases)).sum() > 10
    assert np.all(cases.a.max() < (1 << 16))


def _carry_rows(dp, seed):
    """n lanes of 1*1 or max*max (n = 1 .. K), C = 0 or max, both signs:
    sums that walk up the accumulator's top (random cases rarely do)."""
    rng = np.random.default_rng(seed)
    rows_a, rows_b, cs = [], [], []
    for sign in (0, 0x8000):
        for sig in (0x3F80, 0x3FFF, 0x3F81):
            for n in range(1, dp.k + 1):
                for c in (0, 0x3FFF0000 | (sign << 16)):
                    a = np.zeros(dp.k, np.uint32)
                    lanes = rng.permutation(dp.k)[:n]
                    a[lanes] = sig | sign
                    b = np.zeros(dp.k, np.uint32)
                    b[lanes] = sig
                    rows_a.append(a)
                    rows_b.append(b)
                    cs.append(c)
    return Cases(np.array(rows_a), np.array(rows_b), np.array(cs, np.uint32))


@pytest.mark.parametrize("bits,top,overflow", [(3, "wrap", "inf"), (4, "saturate", "saturate")])
def test_fit_searches_carry_bits_top_and_overflow(bits, top, overflow):
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
    params = EngineParams(window_bits=25, block_size=16, zero_floor=-133, carry_bits=bits,
                          carry_top=top, overflow=overflow)
    device = FixedPointModel("custom", dp, "a simulated device", params)
    cases = Cases.concat([random_cases(dp, 3000, seed=7), _carry_rows(dp, 8)])
    # the largest sums past f32 (C = max f32 and the largest bf16 products): saturation shows
    big = Cases(np.full((4, 16), 0x7F7F, np.uint32), np.full((4, 16), 0x7F7F, np.uint32),
                np.full(4, 0x7F7FFFFF, np.uint32))
    cap = simulated_capture(device, Cases.concat([cases, big]))
    res = fit(cap, FitConfig(analyse=False))
    assert res.mismatches == 0, res.best_description
    assert (res.best.carry_bits, res.best.carry_top) == (bits, top), res.best_description
    assert res.best.overflow == overflow, res.best_description
