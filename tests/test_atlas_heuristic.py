"""The pure parts of scripts/atlas_heuristic_dump.py (unrun on a GPU): shape
sampling, record packing, verification operands and row hashes, and the
mapping of a recorded cuBLASLt configuration to a Schedule, on a synthetic
dump (tests/data/heuristic-synthetic.npz, typed by hand)."""

from pathlib import Path

import numpy as np
import pytest

from tcprobe import atlas
from tcprobe.atlas import heuristic as H
from tcprobe.atlas import predict

DUMP = Path(__file__).resolve().parent / "data" / "heuristic-synthetic.npz"


def test_shapes_are_log_uniform_unaligned_and_seeded():
    s = H.sample_shapes(20000, 7)
    assert s.shape == (20000, 3) and s.min() >= 1 and s.max() <= 16384
    assert np.array_equal(s, H.sample_shapes(20000, 7))
    assert not np.array_equal(s, H.sample_shapes(20000, 8))
    # log-uniform over 1..16385: half the draws below sqrt(16385) ~ 128
    assert 0.47 < (s < 128).mean() < 0.53
    assert (s % 64 == 0).mean() < 0.05  # unaligned, not only multiples of a tile
    capped = H.sample_shapes(500, 1, hi=8192, max_macs=1 << 24)
    assert capped.prod(axis=1).max() <= 1 << 24 and len(capped) == 500


def test_pack_round_trip():
    with np.load(DUMP) as z:
        recs, meta = H.unpack(z)
    assert meta["synthetic"] is True and len(recs) == 12
    again = H.pack(recs, meta)
    recs2, _ = H.unpack(again)
    assert recs2 == recs
    assert recs[6] == {**recs[6], "dtype": "e4m3", "layout": "tn", "fast": 1, "splitk_num": 6}


@pytest.fixture(scope="module")
def recs():
    with np.load(DUMP) as z:
        return H.unpack(z)[0]


def test_the_h200s_splits_map_to_its_measured_starts(recs):
    """SPLITK_NUM 3, 11, 12 at the H200's shapes give the starts its splits probe read."""
    for r, fmt in zip(recs[:3], ("bf16", "bf16", "tf32"), strict=True):
        got = H.schedule_of(r)
        assert got.modelled and got.axes["split_kind"] == "parallel"
        measured = atlas.lookup("H200", "gemm", fmt, r["m"], r["n"], r["k"])
        assert measured.provenance == "measured"
        assert predict.starts(r["k"], got.axes["k_block"], got.axes["split_k"]) == \
            measured.kernel["split_starts"]


def test_each_branch(recs):
    m = [H.schedule_of(r, fast_accum=bool(r["fast"])) for r in recs]
    assert m[3].axes == {} and "no split" in m[3].note
    assert not m[4].modelled and "gemv" in m[4].note
    assert not m[5].modelled and "gemmSN" in m[5].note
    assert m[6].axes == {"instr": "wgmma", "k_block": 128, "split_k": 6,
                         "split_kind": "parallel", "split_rule": "ceil"}  # fast: no promote
    assert not m[7].modelled and "stream-K" in m[7].note
    assert not m[8].modelled and "output type" in m[8].note
    # K = 700 is 11 blocks of 64: 16 splits of ceil(11 / 16) = 1 block are 11 splits
    assert m[9].axes["split_k"] == 11
    assert m[10].axes["split_kind"] == "serial" and m[10].axes["split_k"] == 5
    assert not m[11].modelled and "status 15" in m[11].note
    assert H.schedule_of(recs[6]).axes["promote"] == 4  # the same call without fast accumulation


def test_block_k_from_stages_id():
    assert [H.block_k(i) for i in (1, 6, 7, 13, 19)] == [16, 16, 32, 64, 128]


def test_operands_and_row_hashes():
    a, b = H.operands(5, 3, 4, 6, 9)
    a2, b2 = H.operands(5, 3, 4, 6, 9)
    assert a.shape == (4, 9) and b.shape == (9, 6) and a.dtype == np.float32
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    assert not np.array_equal(a, H.operands(5, 4, 4, 6, 9)[0])
    w = np.arange(12, dtype=np.uint16).reshape(3, 4)
    h = H.row_hashes(w)
    w2 = w.copy()
    w2[1, 2] ^= 1
    h2 = H.row_hashes(w2)
    assert h.dtype == np.uint64 and h[0] == h2[0] and h[2] == h2[2] and h[1] != h2[1]
    assert H.row_hashes(np.vstack([w[0], w[0]]))[0] == h[0]
