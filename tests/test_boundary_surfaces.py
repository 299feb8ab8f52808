"""Issue 26 as tests: tcprobe.dot's word checks, the ISA gate and the model-file reader."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tcprobe
from tcprobe.matrix import dot

ONE_BF16 = 0x3F80
ONE_F64, NEG_ONE_F64 = 0x3FF0000000000000, 0xBFF0000000000000
BF16 = "mma.bf16.f32.k16"


def words16(x):
    return np.full(16, x, np.uint32)


def test_dot_bf16_sixteen_ones():
    assert dot(words16(ONE_BF16), words16(ONE_BF16), 0, datapath=BF16, gpu="H100") == 0x41800000


@pytest.mark.parametrize("bad, hint", [
    (np.ones(16, np.float32), r"^a: a float32 array holds values.*view\(np.uint32\)"),
    (np.ones(16, np.float16), r"^a: a float16 array holds values"),
    ([-1] * 16, r"^a: a word is negative"),
    (words16(0x10000), r"^a: a word (of a )?does not fit bf16"),
])
def test_dot_refuses_bad_words(bad, hint):
    with pytest.raises(ValueError, match=hint):
        dot(bad, words16(ONE_BF16), 0, datapath=BF16, gpu="H100")


def test_dot_takes_f64_words_of_every_sign():
    pos = np.full(4, ONE_F64, np.uint64)
    neg = np.array([NEG_ONE_F64, 0, 0, 0], np.uint64)
    assert dot(neg, pos, 0, datapath="mma.f64.f64.k4", gpu="H100") == NEG_ONE_F64
    assert dot(neg.view(np.int64), pos, 0, datapath="mma.f64.f64.k4", gpu="H100") == NEG_ONE_F64
    assert dot([NEG_ONE_F64, 0, 0, 0], [ONE_F64] * 4, 0x8000000000000000,
               datapath="mma.f64.f64.k4", gpu="H100") == NEG_ONE_F64
    nan = np.array([0xFFF8000000000000, 0, 0, 0], np.uint64)
    assert dot(nan, pos, 0, datapath="mma.f64.f64.k4", gpu="H100") == 0xFFF8000000000000


def test_dot_masks_and_scales_are_checked():
    with pytest.raises(ValueError, match=r"^active: .* is dense"):
        dot(words16(ONE_BF16), words16(ONE_BF16), 0, datapath=BF16, gpu="H100",
            active=np.ones(16, bool))
    sp, one = "tcgen05.f16.f32.k32.sparse", 0x3C00
    with pytest.raises(ValueError, match=r"^active is not sparse"):
        dot(np.full(32, one), np.full(32, one), 0, datapath=sp, active=np.ones(32, bool))
    kept = np.tile([1, 1, 0, 0], 8).astype(bool)
    assert dot(np.full(32, one), np.full(32, one), 0, datapath=sp, active=kept) == 0x41800000
    mx = "tcgen05.mxf8f6f4.e4m3.f32.k32.ue8m0x1"
    with pytest.raises(ValueError, match=r"^scale_a: a word does not fit ue8m0"):
        dot(np.full(32, 0x38), np.full(32, 0x38), 0, datapath=mx, scale_a=[[0x1FF]],
            scale_b=[[127]])
    with pytest.raises(ValueError, match=r"^scale_a: .* takes no block scales"):
        dot(words16(ONE_BF16), words16(ONE_BF16), 0, datapath=BF16, gpu="H100",
            scale_a=[[127]], scale_b=[[127]])


@pytest.mark.parametrize("dp, gpu", [("mma.bf16.f32.k16", "V100"), ("wgmma.bf16.f32.k16", "A100"),
                                     ("mma.bf16.f32.k7", "H100")])
def test_dot_refuses_instructions_the_isa_or_gpu_lacks(dp, gpu):
    with pytest.raises(ValueError, match=r"^(datapath|gpu): "):
        dot(np.full(16, ONE_BF16), np.full(16, ONE_BF16), 0, datapath=dp, gpu=gpu)


def test_model_files_one_reader(tmp_path):
    import ml_dtypes

    from tcprobe.models.datapath import Datapath
    from tcprobe.models.profiles import PROFILES

    a = np.ones((4, 16), ml_dtypes.bfloat16)
    params = PROFILES["h100"].params(Datapath.parse(BF16)).as_dict()
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps({"results": [{"datapath": BF16, "params": params}]}))
    d = tcprobe.matmul(a, a.T.copy(), gpu="H100", instr=BF16, model=str(fit))
    assert d.view(np.uint32)[0, 0] == 0x41800000
    fit.write_text(json.dumps({"results": [{"datapath": BF16,
                                            "params": {**params, "window_bits": True}}]}))
    with pytest.raises(ValueError, match=r"^model .*window_bits must be int"):
        tcprobe.matmul(a, a.T.copy(), gpu="H100", instr=BF16, model=str(fit))
    fit.write_text("[" * 100_000)
    with pytest.raises(ValueError, match=r"^model .*nested too deeply"):
        tcprobe.matmul(a, a.T.copy(), gpu="H100", instr=BF16, model=str(fit))
    fit.write_text(json.dumps({"results": [{"datapath": "mma.f16.f32.k16", "params": params}]}))
    with pytest.raises(ValueError, match=r"^model .*fitted no capture of mma.bf16.f32.k16"):
        tcprobe.matmul(a, a.T.copy(), gpu="H100", instr=BF16, model=str(fit))
