"""The boundary promise on the new surfaces (issue 26): one case per surface and kind."""

from __future__ import annotations

import json
import struct
import zlib

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.capture import binary
from tcprobe.models.datapath import Datapath
from tcprobe.schema import SchemaError, engine_schema

ONE_BF16 = np.full(16, 0x3F80, np.uint32)
F32_16 = 0x41800000  # 16.0: sixteen products of 1 x 1


def refused(match, fn, *args, **kw):
    with pytest.raises(ValueError, match=match):
        fn(*args, **kw)


# --- the ISA table is the gate: matmul ----------------------------------------

@pytest.mark.parametrize("kw,match", [
    (dict(gpu="H100", instr="mma.bf16.f32.k7"), r"^instr: .*K 8 or 16, not 7"),
    # the chain accumulates in D's type; the default epilogue converts f32 to f16
    (dict(gpu="H100", dtype=np.float16, schedule="chain"),
     r"^A: .*bf16 writes D in f32, not f16"),
    (dict(gpu="V100"), r"^A: V100.*not bf16"),
    (dict(gpu="A100", instr="wgmma"), r"^instr: A100 has no wgmma"),
])
def test_matmul_refuses_what_the_isa_table_lacks(kw, match):
    a = np.ones((4, 16), ml_dtypes.bfloat16)
    refused(match, tcprobe.matmul, a, a.T.copy(), **kw)


def test_rtx5090_defaults_fp4_and_block_scales_to_mma_kinds():
    a = np.ones((4, 32), ml_dtypes.float4_e2m1fn)
    sa = np.ones((4, 1), ml_dtypes.float8_e8m0fnu)
    sb = np.ones((1, 4), ml_dtypes.float8_e8m0fnu)
    assert tcprobe.matmul(a, a.T.copy(), gpu="RTX5090").view(np.uint32)[0, 0] == 0x42000000
    got = tcprobe.matmul(a, a.T.copy(), gpu="RTX5090", scale_a=sa, scale_b=sb)
    assert got.view(np.uint32)[0, 0] == 0x42000000  # 32 x 1 x 1, scales 2**0
    refused(r"^scale_a: block scales need", tcprobe.matmul, a, a.T.copy(), gpu="H100",
            scale_a=sa, scale_b=sb)


# --- the gate and the words: dot ----------------------------------------------

@pytest.mark.parametrize("dp,gpu,match", [
    ("mma.bf16.f32.k16", "V100", r"^datapath: .*not bf16 \(V100 is sm_70\)"),
    ("wgmma.bf16.f32.k16", "A100", r"^datapath: .*has no wgmma"),
    ("tcgen05.f16.bf16.f32.k16", "H100", r"^datapath: .*has no tcgen05"),
])
def test_dot_computes_only_what_the_gpu_has(dp, gpu, match):
    refused(match, tcprobe.dot, ONE_BF16, ONE_BF16, 0, datapath=dp, gpu=gpu)


@pytest.mark.parametrize("a,kw,match", [
    (np.full(16, 0x13F80, np.uint32), {}, r"^a: .*does not fit bf16"),
    (np.ones(16), {}, r"^a: a float64 array holds values.*view"),
    (np.ones(16, np.float16), {}, r"^a: a float16 array holds values"),
    (-ONE_BF16.astype(np.int32), {}, r"^a: a word is negative"),
    (ONE_BF16, dict(active=np.ones(16, bool)), r"^active: .*dense"),
    (ONE_BF16, dict(scale_a=[[127]], scale_b=[[127]]), r"^scale_a: .*no block scales"),
])
def test_dot_checks_its_words(a, kw, match):
    refused(match, tcprobe.dot, a, ONE_BF16, 0, datapath="mma.bf16.f32.k16", gpu="A100", **kw)


def test_dot_checks_masks_and_scale_widths():
    h = np.full(32, 0x3C00, np.uint32)
    refused(r"^active is not sparse", tcprobe.dot, h, h, 0,
            datapath="mma.f16.f32.k32.sparse", gpu="A100", active=np.ones(32, bool))
    kept = np.tile([1, 1, 0, 0], 8).astype(bool)
    assert tcprobe.dot(h, h, 0, datapath="mma.f16.f32.k32.sparse", gpu="A100",
                       active=kept) == F32_16
    e = np.full(32, 0x2, np.uint32)  # e2m1 1.0
    dp = "tcgen05.mxf8f6f4.e2m1.f32.k32.ue8m0x1"
    refused(r"^scale_a: a word does not fit ue8m0", tcprobe.dot, e, e, 0, datapath=dp,
            scale_a=[[0x1FF]], scale_b=[[127]])
    assert tcprobe.dot(e, e, 0, datapath=dp, scale_a=[[127]], scale_b=[[127]]) == 0x42000000


def test_dot_takes_f64_words_of_every_sign():
    one = 0x3FF0000000000000
    a = np.array([[0xBFF8000000000000, 0x8000000000000000, 0, 0],  # -1.5, -0
                  [0xFFF0000000000000, 0, 0, 0],  # -Inf
                  [0xFFF8000000000000, 0, 0, 0]], np.uint64)  # a negative NaN
    b = np.full((3, 4), one, np.uint64)
    got = tcprobe.dot(a, b, [0, 0, 0], datapath="mma.f64.f64.k4", gpu="H100")
    assert got[0] == 0xBFF8000000000000 and got[1] == 0xFFF0000000000000
    assert (int(got[2]) >> 52) & 0x7FF == 0x7FF and int(got[2]) & ((1 << 52) - 1)
    # the same words as Python ints and as an int64 view
    assert tcprobe.dot([0xBFF8000000000000, 0, 0, 0], [one, 0, 0, 0], 0,
                       datapath="mma.f64.f64.k4", gpu="H100") == 0xBFF8000000000000
    ints = np.array([-2.0, 0, 0, 0]).view(np.int64)
    assert tcprobe.dot(ints, np.array([1.0, 0, 0, 0]).view(np.int64), 0,
                       datapath="mma.f64.f64.k4", gpu="H100") == 0xC000000000000000


# --- captures, JSON Lines and profiles ----------------------------------------


@pytest.mark.parametrize("change,needle", [({"record": 5}, "record:"),
                                           ({"device": "x"}, "device:"),
                                           ({"plan": "x"}, "plan:"),
                                           ({"record": {"size": "8"}}, "record.size")])
def test_capture_header_fields_of_the_wrong_type(tmp_path, change, needle):
    head = binary.make_header(Datapath.parse("mma.bf16.f32.k16"), device={"device": "x"})
    text = json.dumps({**head, **change}).encode()
    p = tmp_path / "h.tcap"
    p.write_bytes(struct.pack("<8sHHII", binary.MAGIC, 1, 0, len(text), zlib.crc32(text)) + text)
    one_error(invoke("score", "--capture", p), "h.tcap", "header", needle)


def test_deeply_nested_json_is_one_error_line(tmp_path):
    p = tmp_path / "deep.jsonl"
    p.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    one_error(invoke("score", "--capture", p), "deep.jsonl:1", "nested too deeply")


def test_a_floor_that_never_binds_is_legal():
    field = engine_schema()["zero_floor"].type
    assert field.read(-100_000, {}) == -100_000
    with pytest.raises(ValueError):
        field.read(1 << 40, {})
    with pytest.raises(ValueError):
        field.read(1.5, {})
    assert SchemaError  # the profile reader turns these into one line
