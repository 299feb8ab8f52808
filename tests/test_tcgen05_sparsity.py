"""Sparse metadata (../shared/notes: selectors, least significant nibble first)."""

import numpy as np
import pytest

from tcprobe.models import sparsity
from tcprobe.models.datapath import Datapath
from tcprobe.models.sparsity import SparsityError

TF32 = Datapath.parse("tcgen05.tf32.f32.k16.sparse")
F16 = Datapath.parse("tcgen05.f16.f32.k32.sparse")
FP8 = Datapath.parse("tcgen05.f8f6f4.e4m3.f32.k64.sparse")
NV = Datapath.parse("tcgen05.mxf4nvf4.e2m1.f32.k128.ue4m3x4.sparse")


def test_tf32_one_of_two():
    m = sparsity.active_positions(TF32, [0xE4E4E4E4])  # lower, upper, lower, ...
    assert m.tolist() == [True, False, False, True] * 4
    with pytest.raises(SparsityError):
        sparsity.active_positions(TF32, [0x44444448])  # 0x8 is not a tf32 selector


@pytest.mark.parametrize("sel, kept", [(0x4, [0, 1]), (0x8, [0, 2]), (0xC, [0, 3]),
                                       (0x9, [1, 2]), (0xD, [1, 3]), (0x6, [1, 2]),
                                       (0xE, [2, 3])])
def test_two_of_four_selectors(sel, kept):
    m = sparsity.active_positions(F16, [sel * 0x11111111])
    assert np.flatnonzero(m[:4]).tolist() == kept
    assert m.sum() == 16


def test_stored_order_follows_the_fields():
    # 0x6: low field 2, high field 1 -> the first stored value goes to position 2
    assert sparsity.stored_positions(F16, [0x44444446])[:2].tolist() == [2, 1]


@pytest.mark.parametrize("sel", [0x0, 0x5, 0xA, 0xF, 0x1, 0x2, 0x3, 0x7, 0xB])
def test_illegal_selectors(sel):
    with pytest.raises(SparsityError):
        sparsity.active_positions(F16, [0x44444440 | sel])


def test_nvfp4_adjacent_pairs_of_eight():
    m = sparsity.active_positions(NV, [0x0000000E | 0x44444440, 0x44444444])
    assert np.flatnonzero(m[:8]).tolist() == [4, 5, 6, 7]  # 0xe: pairs 2 and 3
    assert np.flatnonzero(m[8:16]).tolist() == [0, 1, 2, 3]
    assert m.sum() == 64


def test_word_counts():
    assert [sparsity.n_words(d) for d in (TF32, F16, FP8, NV)] == [1, 1, 2, 2]
    with pytest.raises(SparsityError):
        sparsity.active_positions(FP8, [0x44444444])  # needs two words
    with pytest.raises(SparsityError):
        sparsity.pattern(Datapath.parse("tcgen05.tf32.f32.k8"))


@pytest.mark.parametrize("dp", [TF32, F16, FP8, NV], ids=lambda d: d.id)
def test_round_trips(dp):
    rng = np.random.default_rng(1)
    meta = sparsity.random_metadata(dp, 200, rng)
    masks = sparsity.active_batch(dp, meta)
    assert (masks.sum(axis=1) == dp.k // 2).all()
    again = sparsity.metadata_batch(dp, masks)
    assert (sparsity.active_batch(dp, again) == masks).all()
    canonical = np.vectorize(lambda w: w)(meta)
    same = (again == canonical).all(axis=1)
    # only selectors 0x6 (written back as 0x9) can change
    has6 = np.array([any(((int(w) >> (4 * i)) & 0xF) == 0x6 for w in row for i in range(8))
                     for row in meta])
    assert (same | has6).all()


def test_jsonl_places_stored_values_in_metadata_order(tmp_path):
    from tcprobe.capture import load

    line = ('{"family": "tcgen05", "kind": "f16", "a_type": "f16", "b_type": "f16", '
            '"d_type": "f32", "k": 32, "sparse_metadata": "0x44444446", '
            '"a": ["0x3c00", "0x4000"' + ', "0x0"' * 14 + '], "b": ["0x3c00"], "c": "0x0", '
            '"d": "0x0"}')
    p = tmp_path / "s.jsonl"
    p.write_text(line + "\n")
    cap = load(p)[0]
    assert int(cap.cases.a[0, 2]) == 0x3C00 and int(cap.cases.a[0, 1]) == 0x4000


def test_sparse_scale_blocks_double():
    assert NV.scale_block == 32 and NV.n_scales == 4  # notes: sparse NVFP4 K=32 blocks
    assert Datapath.parse("tcgen05.mxf4nvf4.e2m1.f32.k64.ue4m3x4").scale_block == 16
    mx = Datapath.parse("tcgen05.mxf8f6f4.e4m3.f32.k64.ue8m0x1.sparse")
    assert mx.scale_block == 64 and mx.n_scales == 1
