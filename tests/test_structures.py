"""models/structures.py: K splits, the sub-MMA chain, the ordinary add."""

from __future__ import annotations

import numpy as np
import pytest
from _fitcases import random_cases

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams
from tcprobe.models.formats import convert
from tcprobe.models.model import FixedPointModel, ModelError
from tcprobe.models.structures import SplitModel, deal, ieee_add, split_name


def test_deal_interleaved_pairs_follow_register_halves():
    first, second = deal(32, 2, 2)
    assert first == (0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29)
    assert second == tuple(i + 2 for i in first)


def test_deal_contiguous_single_positions_and_reverse():
    assert deal(8, 2, 4) == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert deal(8, 2, 99) == ((0, 1, 2, 3), (4, 5, 6, 7))  # a run past the part: contiguous
    assert deal(8, 4, 1) == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert deal(8, 2, 1, reverse=True) == ((1, 3, 5, 7), (0, 2, 4, 6))
    assert split_name(32, 2, 2) == "2 blocks of interleaved pairs"
    assert split_name(32, 1, 32) == "one block"
    with pytest.raises(ModelError):
        deal(10, 4, 1)
    with pytest.raises(ModelError):
        deal(12, 2, 4)  # runs of 4 do not fill parts of 6


@pytest.mark.parametrize("out", ["f32", "f16"])
def test_split_chain_equals_engine_with_the_same_order(out):
    """A chain of sub-MMAs that share the engine's parameters is the engine
    with K consumed in the split's order (bit for bit, specials included)."""
    dp = Datapath("mma", "e4m3", "e4m3", "e4m3", out, 32)
    cases = random_cases(dp, 3000, seed=3, floor_hint=-21 if out == "f16" else -133)
    a = cases.a.copy()
    a[::97, 5] = 0x7F  # e4m3 NaN in some cases
    cases = Cases(a, cases.b, cases.c)
    parts = deal(32, 2, 2)
    floor, rnd = (-21, "rne") if out == "f16" else (-133, "rz")
    stage = EngineParams(window_bits=25, block_size=16, zero_floor=floor, output_rounding=rnd)
    for c_entry in ("first", "last"):
        split = SplitModel("s", dp, parts=parts, stage=stage, c_entry=c_entry, unpack="f16")
        flat = FixedPointModel("e", dp, params=stage.replace(
            k_order=parts[0] + parts[1], c_join=c_entry, c_add_rounding="rne"))
        got, want = split.evaluate(cases), flat.evaluate(cases)
        assert np.array_equal(got, want), (c_entry, int((got != want).sum()))


def test_split_acc_type_is_converted_at_the_end():
    """f32 sub-MMAs then one RNE conversion to f16 differ from f16 sub-MMAs
    (double rounding): the model must run the chain in the accumulator type."""
    dp = Datapath("mma", "f16", "f16", "f16", "f16", 32)
    cases = random_cases(dp, 2000, seed=5, floor_hint=-21)
    stage32 = EngineParams(window_bits=25, block_size=16, zero_floor=-133, output_rounding="rz")
    stage16 = stage32.replace(zero_floor=-21, output_rounding="rne")
    wide = SplitModel("w", dp, parts=deal(32, 2, 16), stage=stage32, acc_type="f32")
    narrow = SplitModel("n", dp, parts=deal(32, 2, 16), stage=stage16)
    # The wide chain is the f32 engine on the same two blocks, converted once.
    f32_dp = Datapath("mma", "f16", "f16", "f16", "f32", 32, c_type="f16")
    f32_words = FixedPointModel("h", f32_dp, params=stage32).evaluate(cases)
    assert np.array_equal(wide.evaluate(cases), convert(f32_words, "f32", "f16"))
    assert (wide.evaluate(cases) != narrow.evaluate(cases)).any()


def test_split_checks_its_parts():
    dp = Datapath("mma", "e4m3", "e4m3", "e4m3", "f32", 32)
    cases = random_cases(dp, 4)
    bad = SplitModel("s", dp, parts=((0, 1), (2, 3)))
    with pytest.raises(ModelError):
        bad.evaluate(cases)
    with pytest.raises(ModelError):
        SplitModel("s", dp, parts=deal(32, 2, 2), c_entry="middle")


@pytest.mark.parametrize("fmt,np_type", [("f32", np.float32), ("f16", np.float16)])
def test_ieee_add_is_an_ordinary_rne_add(fmt, np_type):
    rng = np.random.default_rng(0)
    width = 32 if fmt == "f32" else 16
    x = rng.integers(0, 1 << width, 20000, dtype=np.uint64).astype(np.uint32)
    y = rng.integers(0, 1 << width, 20000, dtype=np.uint64).astype(np.uint32)
    view = np.uint32 if width == 32 else np.uint16
    fx, fy = x.astype(view).view(np_type), y.astype(view).view(np_type)
    with np.errstate(all="ignore"):
        total = fx + fy
    ref = total.view(view).astype(np.uint32)
    got = ieee_add(fmt, x, y, host=False)  # the engine's add, against numpy's
    nan = np.isnan(total)
    assert np.array_equal(got[~nan], ref[~nan])
    assert np.isnan(got.astype(view).view(np_type)[nan]).all()
    # the default (the host's float32 where exact, models/host_ieee.py): the same words
    assert np.array_equal(np.asarray(ieee_add(fmt, x, y), np.uint32), np.asarray(got, np.uint32))
