"""Integer mma.sync (s8/u8/s4/u4, b1 .and/.xor, .satfinite), sparse mma.sp
and integer / sparse wgmma, against a reference written here.

The reference is plain Python integers: each word read as the PTX ISA
defines the type (two's complement for s4/s8, unsigned for u4/u8, one bit
for b1), the products (or a AND / XOR b) summed exactly with C, then wrapped
modulo 2**32 or clamped to the s32 range. Sparse metadata is decoded here
too (a nibble per chunk, its low 2-bit field first), never by tcprobe's codec.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tcprobe.devices.sim import SimDevice
from tcprobe.ladder import run_ladder
from tcprobe.models import isa, sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, DatapathError, default_datapath
from tcprobe.models.model import IntegerModel
from tcprobe.tiles.layout import MMA_FRAGMENTS, mma_fragment_layouts
from tcprobe.tiles.tables import harness_for

WIDTH = {"s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1}


def value(t: str, word: int) -> int:
    """The integer a word of type ``t`` holds."""
    w = WIDTH[t]
    word &= (1 << w) - 1
    if t.startswith("s") and word >> (w - 1):
        return word - (1 << w)
    return word


def s32(word: int) -> int:
    return word - (1 << 32) if word >> 31 else word


def reference(dp: Datapath, a, b, c: int, active=None) -> int:
    """D of one case, as the PTX ISA states it (module doc)."""
    total = s32(int(c))
    for k in range(dp.k):
        if active is not None and not active[k]:
            continue
        x, y = value(dp.a_type, int(a[k])), value(dp.b_type, int(b[k]))
        if dp.bitop == "xor":
            total += x ^ y
        else:
            total += x * y  # b1 .and: a AND b is a * b for bits
    if dp.saturate:
        total = max(-(1 << 31), min((1 << 31) - 1, total))
    return total & 0xFFFFFFFF


def random_int_cases(dp: Datapath, n: int, seed: int) -> Cases:
    rng = np.random.default_rng(seed)
    w = WIDTH[dp.a_type]
    a = rng.integers(0, 1 << w, (n, dp.k))
    b = rng.integers(0, 1 << WIDTH[dp.b_type], (n, dp.k))
    c = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    c[: n // 4] = (1 << 31) - 1 - rng.integers(0, 1000, n // 4)  # near the top: wrap or clamp
    return Cases(a, b, c.astype(np.uint32))


DENSE = ["mma.s8.s32.k32", "mma.u8.s32.k16.sat", "mma.s4.s32.k64", "mma.u4.s32.k32",
         "mma.s4.s32.k64.sat", "mma.u4.s32.k64.sat", "mma.b1.s32.k256.xor",
         "mma.b1.s32.k128.and", "mma.b1.s32.k256.and", "wgmma.s8.s32.k32.sat",
         "wgmma.u8.s32.k32"]


# -- hand-derived words ---------------------------------------------------

def test_hand_words():
    cases = {
        # s4 -8 (0x8) times -8 on all 64 lanes: 64 * 64 = 4096
        ("mma.s4.s32.k64", 0x8, 0x8, 0): 0x1000,
        # u4 0xf is 15: 64 * 225 = 14400
        ("mma.u4.s32.k64", 0xF, 0xF, 0): 0x3840,
        # s4 7 * -8 on 64 lanes = -3584, plus C = 5: -3579
        ("mma.s4.s32.k64", 0x7, 0x8, 5): 0xFFFFF205,
        # b1 xor: all-ones A, all-zeros B: 256 ones; all-ones both: none
        ("mma.b1.s32.k256.xor", 1, 0, 0): 256,
        ("mma.b1.s32.k256.xor", 1, 1, 7): 7,
        ("mma.b1.s32.k256.and", 1, 1, 0): 256,
        ("mma.b1.s32.k256.and", 1, 0, 9): 9,
        # s8 -128 * -128 on 32 lanes = 524288 = 0x80000; C = INT_MAX
        ("mma.s8.s32.k32", 0x80, 0x80, 0x7FFFFFFF): 0x8007FFFF,  # wraps
        ("mma.s8.s32.k32.sat", 0x80, 0x80, 0x7FFFFFFF): 0x7FFFFFFF,  # satfinite clamps
        # -128 * 127 * 32 = -520192 below INT_MIN clamps there
        ("mma.s8.s32.k32.sat", 0x80, 0x7F, 0x80000000): 0x80000000,
        ("mma.s4.s32.k64.sat", 0x8, 0x7, 0x80000000): 0x80000000,
        ("mma.s4.s32.k64", 0x8, 0x7, 0x80000000): 0x7FFFF200,  # -2**31 - 3584 wraps
    }
    dev = SimDevice("h200")
    for (dp_id, a, b, c), want in cases.items():
        dp = Datapath.parse(dp_id)
        cs = Cases(np.full((1, dp.k), a), np.full((1, dp.k), b), np.array([c]))
        assert int(dev.run(dp, cs)[0]) == want, dp_id
        assert int(dev.run_through_tiles(dp, cs)[0]) == want, dp_id
        assert reference(dp, cs.a[0], cs.b[0], c) == want  # the reference agrees by hand


@pytest.mark.parametrize("dp_id", DENSE)
def test_random_against_reference(dp_id):
    dp = Datapath.parse(dp_id)
    cs = random_int_cases(dp, 60, seed=len(dp_id))
    want = [reference(dp, cs.a[i], cs.b[i], int(cs.c[i])) for i in range(len(cs))]
    dev = SimDevice("h200")
    assert dev.run(dp, cs).tolist() == want
    assert dev.run_through_tiles(dp, cs.take(slice(0, 20))).tolist() == want[:20]


def test_satfinite_differs_from_wrap():
    dp = Datapath.parse("mma.u4.s32.k64")
    cs = Cases(np.full((1, 64), 15), np.full((1, 64), 15), np.array([0x7FFFFFF0]))
    wrap = IntegerModel("w", dp, "").evaluate(cs)
    sat = IntegerModel("s", Datapath.parse("mma.u4.s32.k64.sat"), "", saturate=True).evaluate(cs)
    assert int(wrap[0]) == (0x7FFFFFF0 + 14400) & 0xFFFFFFFF
    assert int(sat[0]) == 0x7FFFFFFF


# -- sparse -----------------------------------------------------------------

def my_decode(dp: Datapath, words, chunk: int, per_field: int):
    """(mask, stored positions) of metadata words: nibble i for chunk i,
    the low field then the high one; a field names a position (or a pair)."""
    mask = [False] * dp.k
    order = []
    for ch in range(dp.k // chunk):
        nib = (int(words[ch // 8]) >> (4 * (ch % 8))) & 0xF
        if chunk == 2:  # tf32: 0b0100 keeps the first, 0b1110 the second
            fields = [{0x4: 0, 0xE: 1}[nib]]
        else:
            fields = [nib & 3, nib >> 2]
        for f in fields:
            for j in range(per_field):
                p = ch * chunk + f * per_field + j
                mask[p] = True
                order.append(p)
    return mask, order


SPARSE = [("mma.f16.f32.k32.sparse", 4, 1), ("mma.bf16.f32.k16.sparse", 4, 1),
          ("mma.tf32.f32.k16.sparse", 2, 1), ("mma.e4m3.f32.k64.sparse", 4, 1),
          ("mma.s8.s32.k64.sparse", 4, 1), ("mma.u8.s32.k32.sparse.sat", 4, 1),
          ("mma.s4.s32.k128.sparse", 8, 2), ("mma.u4.s32.k64.sparse.sat", 8, 2),
          ("wgmma.s8.s32.k64.sparse", 4, 1), ("wgmma.f16.f32.k32.sparse", 4, 1)]


@pytest.mark.parametrize("dp_id,chunk,per_field", SPARSE)
def test_sparse_metadata_and_positions(dp_id, chunk, per_field):
    dp = Datapath.parse(dp_id)
    shapes = isa.MMA_SP_K[dp.a_type] if dp.family == "mma" else \
        (2 * isa.instruction_k(dp.family, dp.a_type),)  # wgmma.sp: K doubled
    assert dp.k in shapes
    rng = np.random.default_rng(3)
    legal = [0x4, 0xE] if chunk == 2 else [n for n in range(16) if (n & 3) != (n >> 2)]
    chunks = dp.k // chunk
    for _ in range(20):
        nibs = rng.choice(legal, chunks)
        words = np.zeros((chunks + 7) // 8, np.uint32)
        for i, nib in enumerate(nibs):
            words[i // 8] |= np.uint32(int(nib) << (4 * (i % 8)))
        mask, order = my_decode(dp, words, chunk, per_field)
        got_mask, got_pos = sparsity.decode(dp, words[None, :])
        assert got_mask[0].tolist() == mask
        assert got_pos[0].tolist() == order


@pytest.mark.parametrize("dp_id", [s[0] for s in SPARSE if Datapath.parse(s[0]).is_integer])
def test_sparse_integer_against_reference(dp_id):
    dp = Datapath.parse(dp_id)
    rng = np.random.default_rng(11)
    cs = random_int_cases(dp, 40, seed=5)
    cs.active = sparsity.decode(dp, sparsity.random_metadata(dp, 40, rng))[0]
    # disabled positions hold junk the device must ignore
    want = [reference(dp, cs.a[i], cs.b[i], int(cs.c[i]), cs.active[i]) for i in range(40)]
    dev = SimDevice("h200")
    assert dev.run(dp, cs).tolist() == want
    assert dev.run_through_tiles(dp, cs.take(slice(0, 10))).tolist() == want[:10]


def test_sparse_float_keeps_only_selected_positions():
    """f16 2:4: ones everywhere in A and B, NaN words in A at the disabled
    positions; D counts the K/2 kept products: 16 of K=32 -> 16.0."""
    dp = Datapath.parse("mma.f16.f32.k32.sparse")
    a = np.full((1, 32), 0x3C00)  # f16 1.0
    active = np.zeros((1, 32), bool)
    active[0, 0::4] = active[0, 3::4] = True  # nibble 0xc in every chunk
    a[~active] = 0x7E00  # NaN where disabled
    cs = Cases(a, np.full((1, 32), 0x3C00), np.array([0]), active=active)
    for dev in (SimDevice("h200"), SimDevice("a100")):
        assert int(dev.run(dp, cs)[0]) == 0x41800000  # f32 16.0
        assert int(dev.run_through_tiles(dp, cs)[0]) == 0x41800000


def test_ordered_metadata_rejects_descending_nibbles():
    plain = Datapath.parse("mma.f16.f32.k32.sparse")
    ordered = Datapath.parse("mma.f16.f32.k32.sparse.ordered")
    word = np.array([[0x11111111]], np.uint32)  # nibble 0b0001: positions 1 then 0
    mask, pos = sparsity.decode(plain, word)
    assert pos[0, :2].tolist() == [1, 0] and mask[0, :4].tolist() == [True, True, False, False]
    with pytest.raises(sparsity.SparsityError):
        sparsity.decode(ordered, word)
    with pytest.raises(sparsity.SparsityError):  # two equal indices are undefined
        sparsity.decode(plain, np.array([[0x55555555]], np.uint32))
    assert "mma.sp::ordered_metadata" in harness_for(ordered).tile.instruction


# -- the ISA table, ids and fragments ----------------------------------------

def test_isa_facts():
    assert isa.instruction_k("mma", "s4") == 64 and isa.instruction_k("mma", "u4") == 64
    assert isa.instruction_k("mma", "b1") == 256
    assert isa.instruction_k("mma", "s4", sparse=True) == 128
    with pytest.raises(isa.IsaError):
        isa.instruction_k("wgmma", "s4")
    assert isa.sparsity_selectors("mma", "f16", 16) == (0, 1)
    assert isa.sparsity_selectors("mma", "f16", 32) == (0,)
    with pytest.raises(isa.IsaError):
        isa.sparsity_selectors("mma", "e4m3", 32)
    assert isa.output_types("mma", "b1", "b1") == ("s32",)


def test_ids_round_trip_and_errors():
    for text in ["mma.s4.s32.k64.sat", "mma.b1.s32.k256.xor", "mma.b1.s32.k128.and",
                 "mma.f16.f32.k32.sparse.ordered", "wgmma.s8.s32.k64.sparse.sat"]:
        assert Datapath.parse(text).id == text
    assert default_datapath("mma", "b1").id == "mma.b1.s32.k256.xor"
    assert default_datapath("mma", "u4").id == "mma.u4.s32.k64"
    with pytest.raises(DatapathError):
        Datapath.parse("mma.b1.s32.k256")  # b1 needs .and or .xor
    with pytest.raises(DatapathError):
        Datapath.parse("mma.s8.s32.k32.xor")
    with pytest.raises(DatapathError):
        default_datapath("wgmma", "s4")


def test_fragment_rule_reproduces_the_ptx_tables():
    for (shape, bits), layouts in MMA_FRAGMENTS.items():
        k = int(shape.split("k")[1])
        for want, got in zip(layouts, mma_fragment_layouts(k, bits), strict=True):
            assert np.array_equal(want.table, got.table), (shape, bits)


def test_fragment_rule_sub_byte_slots():
    # s4 m16n8k64 (PTX ISA): lane 6 (groupID 1, threadID_in_group 2), a20:
    # row groupID (16 <= i < 24), col 2*8 + (20 & 7) + 32 = 52; slot 6*32 + 20
    a, b, _ = mma_fragment_layouts(64, 4)
    assert int(a.table[1, 52]) == 6 * 32 + 20
    # b1 m16n8k256: lane 5 (groupID 1, tig 1), a71 (register 2, bit 7): row 1,
    # col 1*32 + 7 + 128 = 167
    a, b, _ = mma_fragment_layouts(256, 1)
    assert int(a.table[1, 167]) == 5 * 128 + 71
    # B of s4 m16n8k64: lane 9 (groupID 2, tig 1), b11: row 1*8 + 3 + 32 = 43, col 2
    _, b, _ = mma_fragment_layouts(64, 4)
    assert int(b.table[2, 43]) == 9 * 16 + 11


# -- the ladder on sim devices --------------------------------------------------

@pytest.mark.parametrize("dp_id,device,sat", [("mma.s4.s32.k64.sat", "a100", True),
                                              ("mma.b1.s32.k256.xor", "h200", False),
                                              ("mma.u8.s32.k32.sparse", "h200", False)])
def test_ladder_integer(dp_id, device, sat):
    dp = Datapath.parse(dp_id)
    result = run_ladder(SimDevice(device), dp, validate_cases=2000)
    carry = next(f for f in result.findings if f.step == "carry")
    assert carry.status == "found"
    assert carry.values["saturate"] is sat
    assert carry.values["a_signed"] is dp.a_type.startswith("s")
    assert result.validation.mismatches == 0


@pytest.mark.parametrize("dp_id", ["mma.f16.f32.k32.sparse", "wgmma.s8.s32.k64.sparse"])
def test_ladder_sparse(dp_id):
    dp = Datapath.parse(dp_id)
    result = run_ladder(SimDevice("h200"), dp, validate_cases=2000)
    status = {f.step: f.status for f in result.findings}
    assert status["sparsity"] == "found" and status["layout"] == "found"
    assert result.validation.mismatches == 0


def test_cli_b1_without_op_is_one_error_line():
    r = subprocess.run([sys.executable, "-m", "tcprobe", "ladder", "--device", "sim:h200",
                        "--datapath", "mma.b1.s32.k256"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("error:") and "Traceback" not in r.stderr


def test_targets_list_the_new_datapaths_and_sim_h200_runs_them():
    from tcprobe.suites.mix import random_cases
    from tcprobe.validation.targets import targets

    ts = targets(("integer", "sparse"))
    ids = {t.datapath.id for t in ts}
    assert {"mma.s4.s32.k64.sat", "mma.b1.s32.k256.and", "mma.b1.s32.k256.xor",
            "mma.u4.s32.k128.sparse", "wgmma.u8.s32.k32.sat", "wgmma.tf32.f32.k16.sparse",
            "mma.e5m2.f32.k64.sparse"} <= ids
    dev = SimDevice("h200")
    rng = np.random.default_rng(0)
    for t in ts:
        assert dev.supports(t.datapath), t.datapath.id
        cs = random_cases(t.datapath, 8, rng)
        assert np.array_equal(dev.run(t.datapath, cs), dev.run_through_tiles(t.datapath, cs))
        if t.datapath.is_integer:  # the pure-Python reference, disabled lanes skipped
            want = [reference(t.datapath, cs.a[i], cs.b[i], int(cs.c[i]),
                              None if cs.active is None else cs.active[i]) for i in range(8)]
            assert dev.run(t.datapath, cs).tolist() == want, t.datapath.id


def test_satfinite_needs_an_integer_type():
    with pytest.raises(DatapathError):
        Datapath.parse("mma.b1.s32.k256.and.sat")
    with pytest.raises(DatapathError):
        Datapath.parse("mma.f16.f32.k16.sat")


def test_jsonl_vectors_of_the_new_kinds(tmp_path):
    """Hand-written vectors: words and metadata as a person would type them."""
    import json

    from tcprobe.capture import CaptureError
    from tcprobe.capture.jsonl import read

    lines = [
        {"gpu": "A100", "family": "mma", "kind": "s4", "a_type": "s4", "b_type": "s4",
         "d_type": "s32", "k": 64, "a": ["0x8"] * 64, "b": ["0x8"] * 64, "c": 0, "d": "0x1000"},
        {"gpu": "A100", "family": "mma", "kind": "b1", "a_type": "b1", "b_type": "b1",
         "d_type": "s32", "k": 256, "bitop": "xor", "a": [1] * 256, "b": [0] * 256, "c": 5,
         "d": 261},
        # mma.sp s8 m16n8k64: nibble 0x4 keeps positions 0 and 1 of every chunk of 4;
        # 32 stored A values 2 meet B's 3s; B's 0x7f at the dropped positions is ignored
        {"gpu": "A100", "family": "mma", "kind": "s8", "a_type": "s8", "b_type": "s8",
         "d_type": "s32", "k": 64, "sparse_metadata": ["0x44444444", "0x44444444"],
         "a": [2] * 32, "b": [3, 3, 0x7F, 0x7F] * 16, "c": 16, "d": "0xd0"},
        # nibble 0x1 (position 1, then 0) is legal for mma.sp
        {"gpu": "A100", "family": "mma", "kind": "f16", "a_type": "f16", "b_type": "f16",
         "d_type": "f32", "k": 32, "sparse_metadata": "0x11111111",
         "a": ["0x3c00", "0x4000"] * 8, "b": ["0x3c00", "0x3c00", "0x7e00", "0x7e00"] * 8,
         "c": 0, "d": "0x41c00000"},  # 8 chunks of 1*1 + 2*1: 24.0
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    caps = {c.datapath.id: c for c in read(path)}
    assert set(caps) == {"mma.s4.s32.k64", "mma.b1.s32.k256.xor", "mma.s8.s32.k64.sparse",
                         "mma.f16.f32.k32.sparse"}
    sp = caps["mma.s8.s32.k64.sparse"]
    assert np.flatnonzero(sp.cases.active[0]).tolist()[:4] == [0, 1, 4, 5]
    for dp_id in ("mma.s4.s32.k64", "mma.b1.s32.k256.xor", "mma.s8.s32.k64.sparse"):
        cap = caps[dp_id]
        active = None if cap.cases.active is None else cap.cases.active[0]
        got = reference(cap.datapath, cap.cases.a[0], cap.cases.b[0], int(cap.cases.c[0]), active)
        assert got == int(cap.words[0]), dp_id
    f16 = caps["mma.f16.f32.k32.sparse"]
    assert f16.cases.a[0, :2].tolist() == [0x4000, 0x3C00]  # the stored order swaps them
    assert int(SimDevice("h200").run(f16.datapath, f16.cases)[0]) == 0x41C00000
    lines[3]["ordered_metadata"] = True  # 0x1 is descending: not ordered metadata
    path.write_text(json.dumps(lines[3]) + "\n")
    with pytest.raises(CaptureError, match="illegal sparse selector"):
        read(path)


@pytest.mark.parametrize("dp_id,cc", [("mma.s4.s32.k64.sat", (8, 0)), ("mma.b1.s32.k256.and", (9, 0)),
                                      ("mma.b1.s32.k256.xor", (10, 0)),
                                      ("wgmma.u8.s32.k32.sat", (9, 0))])
def test_cuda_device_on_the_stand_in_driver(monkeypatch, dp_id, cc):
    """The host side of the integer kernels (packing s4/b1 into registers,
    the variant, the readback) through the CUDA device and the stand-in."""
    pytest.importorskip("cuda.bindings")
    import fake_cuda

    from tcprobe.devices.cuda import device as cuda_mod

    dp = Datapath.parse(dp_id)
    fake = fake_cuda.FakeDriver("NVIDIA H200", cc, dp)
    monkeypatch.setattr(cuda_mod, "_driver", lambda: fake)
    dev = cuda_mod.CudaDevice(0)
    cs = random_int_cases(dp, 30, seed=9)
    want = [reference(dp, cs.a[i], cs.b[i], int(cs.c[i])) for i in range(len(cs))]
    assert dev.run(dp, cs).tolist() == want
