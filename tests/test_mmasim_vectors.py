"""The Turing and RTX Blackwell profiles against MMA-Sim 2.1.1's frozen words
(tests/data/vectors/mmasim-sm75-sm120.jsonl, written by its make_ script from
MMA-Sim's own instruction tables): every Turing string, every sm_120
kind::f8f6f4 A/B pair and every block-scaled mma.sync string. Runs without
MMA-Sim installed; where it is, the frozen words are checked against it."""

from pathlib import Path

import numpy as np
import pytest

from tcprobe.capture import load
from tcprobe.models import registry

VECTORS = Path(__file__).parent / "data" / "vectors" / "mmasim-sm75-sm120.jsonl"
CAPTURES = load(VECTORS)


def test_the_file_covers_every_new_datapath():
    ids = {c.datapath.id for c in CAPTURES}
    assert len(CAPTURES) == 84 and len(ids) == 84  # 5 Turing, 50 f8f6f4 pairs, 29 block-scaled
    assert {c.gpu for c in CAPTURES} == {"T4", "RTX5090"}
    assert "mma.mxf4nvf4.e2m1.f32.k64.ue4m3x4" in ids and "mma.f16.f16tof32.k4" in ids
    assert sum(len(c) for c in CAPTURES) == 336


@pytest.mark.parametrize("cap", CAPTURES, ids=[c.label or c.datapath.id for c in CAPTURES])
def test_auto_reproduces_mmasim(cap):
    model = registry.resolve("auto", cap.datapath, cap.gpu)
    assert model.name == {"T4": "t4", "RTX5090": "rtx5090"}[cap.gpu]
    got = model.evaluate(cap.cases)
    bad = np.flatnonzero(got != cap.words)
    assert not len(bad), [(hex(int(got[i])), hex(int(cap.words[i]))) for i in bad[:3]]


def test_frozen_words_are_mmasims():
    pytest.importorskip("torch", reason="MMA-Sim needs torch")
    pytest.importorskip("mmasim", reason="MMA-Sim 2.1.1 is not installed")
    from mmasim.nv_ptx import isa_mma

    from tcprobe.devices.mmasim import MmaSimDevice

    by_id = {c.datapath.id: c for c in CAPTURES}
    strings = [("Turing", s) for s in isa_mma.mma_shape_and_type["Turing"]] + [
        ("RTX Blackwell", s) for s in isa_mma.mma_block_scale_shape_and_type["RTX Blackwell"]]
    for arch, s in strings:
        dev = MmaSimDevice(f"{arch}:mma.{s}")
        cap = by_id[dev.dp.id]
        assert (dev.run(cap.datapath, cap.cases) == cap.words).all(), s
