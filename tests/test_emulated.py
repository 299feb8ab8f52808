"""The fp8 mma.sync emulation profiles (models/emulated.py) on the published captures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tcprobe.capture import load
from tcprobe.models import registry
from tcprobe.models.emulated import B200_FP8_EMULATED, HOPPER_FP8_EMULATED, emulated_for
from tcprobe.models.structures import SplitModel, deal
from tcprobe.validation.scoring import score

HERE = Path(__file__).resolve().parent
SUBSET = HERE / "data" / "khattak-mikaitis-2025"
FULL = HERE.parent.parent / "shared" / "hwdata" / "khattak-mikaitis-2025"
needs_shared = pytest.mark.skipif(not FULL.exists(), reason="needs ../shared/hwdata (published captures)")

B200_FP8 = ["B200/E4M3 -> f32", "B200/E4M3 -> f16", "B200/E5M2 -> f32", "B200/E5M2 -> f16"]
HOPPER_F16 = ["H100/E4M3 -> f16", "H100/E5M2 -> f16", "H200/E4M3 -> f16", "H200/E5M2 -> f16"]
HOPPER_F32 = ["H100/E4M3 -> f32", "H100/E5M2 -> f32", "H200/E4M3 -> f32", "H200/E5M2 -> f32"]


def _captures(root):
    return {c.label: c for c in load(root)}


@pytest.fixture(scope="module")
def subset():
    return _captures(SUBSET)


def test_profile_structure_is_the_compiler_emulation():
    cap_dp = load(SUBSET / "B200" / "E4M3")[0].datapath
    model = B200_FP8_EMULATED.model(cap_dp)
    assert isinstance(model, SplitModel)
    assert model.parts == deal(32, 2, 2)
    assert model.parts[0][:4] == (0, 1, 4, 5)
    assert model.c_entry == "last" and model.c_add_rounding == "rne" and model.unpack == "f16"
    # Each HMMA is the b200-hmma f16-input datapath: one block of 16, F=25.
    assert (model.stage.block_size, model.stage.window_bits) == (16, 25)
    assert "0 mismatches of 5,000" in model.evidence


@pytest.mark.parametrize("label", B200_FP8 + HOPPER_F16)
def test_emulated_profiles_explain_the_subset(subset, label):
    cap = subset[label]
    name = "b200-fp8-emulated" if label.startswith("B200") else "hopper-fp8-emulated"
    model = registry.resolve(name, cap.datapath, cap.gpu)
    assert score(cap, model).mismatches == 0
    assert registry.resolve("auto", cap.datapath, cap.gpu).name == name


@pytest.mark.parametrize("label", HOPPER_F32)
def test_hopper_f32_files_are_wgmma_not_the_emulation(subset, label):
    """The H100/H200 fp8->f32 files were run through wgmma with C = 0: auto
    keeps the h100 native fp8 datapath for them, and the emulated mma.sync
    misses many of them."""
    cap = subset[label]
    assert cap.datapath.family == "wgmma"
    assert registry.resolve("auto", cap.datapath, cap.gpu).name == "h100"
    assert score(cap, registry.resolve("auto", cap.datapath, cap.gpu)).mismatches == 0
    as_mma = replace(cap.datapath, family="mma")
    emulated = HOPPER_FP8_EMULATED.model(as_mma)
    missed = int((emulated.evaluate(cap.cases) != cap.words).sum())
    assert missed > len(cap) // 5


def test_emulation_applies_to_fp8_mma_only():
    f16 = load(SUBSET / "B200" / "fp16")[0]
    assert emulated_for(f16.datapath, "B200") is None
    fp8 = load(SUBSET / "B200" / "E4M3")[0]
    assert emulated_for(fp8.datapath, "B200") is B200_FP8_EMULATED
    assert emulated_for(fp8.datapath, "H200") is HOPPER_FP8_EMULATED
    assert emulated_for(fp8.datapath, "Ada") is None
    assert emulated_for(fp8.datapath, None) is None
    from tcprobe.models.model import ModelError
    with pytest.raises(ModelError):
        registry.resolve("hopper-fp8-emulated", f16.datapath)


@needs_shared
@pytest.mark.shared
def test_emulated_profiles_explain_the_full_captures():
    caps = _captures(FULL)
    for label in B200_FP8 + HOPPER_F16:
        cap = caps[label]
        model = registry.resolve("auto", cap.datapath, cap.gpu)
        assert model.name in ("b200-fp8-emulated", "hopper-fp8-emulated")
        assert len(cap) == 5000 and score(cap, model).mismatches == 0, label
    # The same pairs run in the other order: ruled out on every f16 output.
    for label in B200_FP8 + HOPPER_F16:
        cap = caps[label]
        if cap.datapath.d_type != "f16":
            continue
        model = registry.resolve("auto", cap.datapath, cap.gpu)
        other = replace(model, parts=model.parts[::-1])
        missed = int((other.evaluate(cap.cases) != cap.words).sum())
        assert 1229 <= missed <= 1557, (label, missed)
    # The figures the hopper profile's evidence quotes for the wgmma f32 files.
    for label, want in (("H100/E4M3 -> f32", 2989), ("H100/E5M2 -> f32", 1797),
                        ("H200/E4M3 -> f32", 2989), ("H200/E5M2 -> f32", 1797)):
        cap = caps[label]
        emulated = HOPPER_FP8_EMULATED.model(replace(cap.datapath, family="mma"))
        assert int((emulated.evaluate(cap.cases) != cap.words).sum()) == want, label


@needs_shared
@pytest.mark.shared
def test_auto_explains_every_published_output():
    caps = load(FULL)
    assert len(caps) == 48
    bad = {c.label: score(c, registry.resolve("auto", c.datapath, c.gpu)).mismatches
           for c in caps}
    assert {k: v for k, v in bad.items() if v} == {}
    assert np.sum(list(bad.values())) == 0
