"""The tcgen05 instruction descriptor: PTX ISA bit fields, round trips, and
the words the write-up's authors used on B200 (../shared/notes)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcprobe.models.datapath import Datapath
from tcprobe.tiles.descriptors import DescriptorError, InstrDescriptor, decode, encode
from tcprobe.validation.targets import targets


@pytest.mark.parametrize("dp_id, m, word", [
    ("tcgen05.tf32.f32.k8", 64, 0x04020910),
    ("tcgen05.f16.bf16.f32.k16", 64, 0x04020490),
    ("tcgen05.i8.s8.s32.k32", 64, 0x040204A0),
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4", 128, 0x08020480),
    ("tcgen05.mxf4nvf4.e2m1.f32.k64.ue8m0x4", 128, 0x08820480),
])
def test_published_descriptors(dp_id, m, word):
    dp = Datapath.parse(dp_id)
    assert encode(dp, m=m, n=8) == word
    assert decode(word, dp.kind).datapath(dp.scale_vec) == dp


def test_mma_sim_pr_e2m1_descriptor():
    # the PR's kernel: (N>>3<<17) | (M>>4<<24) | 1<<4 | 5<<7 | 5<<10 for M64N8 f32 e2m1
    dp = Datapath.parse("tcgen05.f8f6f4.e2m1.f32.k32")
    assert encode(dp) == (1 << 17) | (4 << 24) | (1 << 4) | (5 << 7) | (5 << 10)


def test_every_target_round_trips():
    for t in targets(("blog", "mixed")):
        dp = t.datapath
        d = InstrDescriptor.decode(t.descriptor, dp.kind)
        assert d.encode() == t.descriptor
        assert d.datapath(dp.scale_vec) == dp


def test_fields_land_where_ptx_puts_them():
    dp = Datapath.parse("tcgen05.f8f6f4.e3m2xe2m3.f16.k64.sparse")
    w = encode(dp, m=128, n=256, sparse_selector=3, negate_a=True, transpose_b=True, max_shift=2)
    assert w & 3 == 3 and w >> 2 & 1 == 1 and w >> 4 & 3 == 0  # selector, sparse, D f16
    assert w >> 7 & 7 == 4 and w >> 10 & 7 == 3  # e3m2, e2m3
    assert w >> 13 & 1 == 1 and w >> 16 & 1 == 1 and w >> 17 & 63 == 32 and w >> 24 & 31 == 8
    assert w >> 30 == 2
    s = encode(Datapath.parse("tcgen05.mxf8f6f4.e5m2.f32.k32.ue8m0x1"), m=256, n=16,
               a_sf_id=2, b_sf_id=1)
    assert s >> 23 & 1 == 1 and s >> 27 & 3 == 2 and s >> 29 & 3 == 2 and s >> 4 & 3 == 1


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << 32) - 1), st.sampled_from(
    ["tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4", "mxf4nvf4"]))
def test_decode_then_encode_is_the_identity(word, kind):
    try:
        d = decode(word, kind)
    except DescriptorError:
        return
    assert d.encode() == word


def test_bad_descriptors_are_refused():
    with pytest.raises(DescriptorError):
        decode(0x04020910 | 1 << 23, "tf32")  # reserved bit
    with pytest.raises(DescriptorError):
        decode(0x04020910 | 1 << 6, "tf32")
    with pytest.raises(DescriptorError):
        decode(0x08020480 | 1 << 12, "mxf4nvf4")  # mxf4 btype is 2 bits
    with pytest.raises(DescriptorError):
        decode(2 << 7, "f8f6f4")  # code 2 is no f8f6f4 type
    with pytest.raises(DescriptorError):
        encode(Datapath.parse("tcgen05.mxf4.e2m1.f32.k64.ue8m0x2"), m=64)  # M >> 7
    with pytest.raises(DescriptorError):
        encode(Datapath.parse("tcgen05.tf32.f32.k8"), n=12)
    with pytest.raises(ValueError):
        decode(0x04020910, "bogus")


def test_k96_bit_only_for_dense_mxf4_kinds():
    d = decode(0x08820480 | 1 << 31, "mxf4nvf4")
    assert d.k96 and d.datapath().k == 96
    with pytest.raises(DescriptorError):
        decode(0x08820000 | 1 << 31, "mxf8f6f4")
    with pytest.raises(DescriptorError):
        decode(0x08820484 | 1 << 31, "mxf4")  # sparse


def test_the_harness_encoder_gives_the_same_words():
    """tcprobe.tiles.descriptors.instruction_descriptor (the CUDA harness side) and this module encode every
    target alike, so the harness and the models name one datapath by one word."""
    from tcprobe.tiles import descriptors

    for t in targets(("blog", "mixed")):
        dp = t.datapath
        for m, n in ((128, 8), (256, 64)) if dp.block_scaled else ((64, 8), (128, 16)):
            assert descriptors.instruction_descriptor(dp, m, n) == encode(dp, m=m, n=n), dp.id


def test_bf16_kind_f16_writes_f32_only():
    # PTX ISA 9.7.16.2.1, Table 39: .kind::f16 with .bf16 A/B has dtype .f32 only
    # (dtype .f16 only with .f16 A/B); the descriptor's D field agrees.
    ok = InstrDescriptor("f16", "f16", "f16", "f16", 64, 8)
    assert ok.encode() & (0b11 << 4) == 0  # D = f16 (code 0, bits 4-5)
    with pytest.raises(DescriptorError):
        InstrDescriptor("f16", "bf16", "bf16", "f16", 64, 8).encode()
    with pytest.raises(DescriptorError):  # the same word decoded: bf16 (b=1, a=1) into f16
        decode((1 << 7) | (1 << 10) | (1 << 17) | (4 << 24), "f16")
    assert InstrDescriptor("f16", "bf16", "bf16", "f32", 64, 8).datapath().id.startswith(
        "tcgen05.f16.bf16.f32")
