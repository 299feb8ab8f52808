"""The kernel families and per-tile plans of the one pipeline (issue 35's list):
CUDA-core fma chains against an exact Fraction reference, stream-K tiles
cut by hand, the K-tail quirk, the bias inside the fma, and fit-gemm
finding each (and refusing a one-ulp change)."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from engine_reference import encode, value

import tcprobe
from tcprobe.matrix import fit_gemm, plan
from tcprobe.matrix.schedule import Schedule, ScheduleError, from_value

GPU = "H100"
BF16 = ml_dtypes.bfloat16


def ops(m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((m, k)) * np.exp2(rng.integers(-8, 8, (m, k)))).astype(BF16)
    b = rng.standard_normal((k, n)).astype(BF16)
    return a, b


def words(x):
    return np.ascontiguousarray(x).view(np.uint16).astype(np.uint32)


def f32_round(x: Fraction) -> int:
    """The f32 word of an exact value rounded once to nearest even."""
    return encode("f32", x < 0, abs(x), "rne", None, "ieee", zero_positive=True)


def f32_value(word: int) -> Fraction:
    kind, sign, mag, *_ = value("f32", word)
    assert kind == "num"
    return -mag if sign else mag


@pytest.mark.parametrize("lanes,order,reduction", [(3, "interleaved", "tree"),
                                                   (4, "blocked", "forward"),
                                                   (1, "interleaved", "forward")])
def test_fma_kernel_is_fma_chains_per_lane(lanes, order, reduction):
    a, b = ops(2, 3, 10, 1)
    d = tcprobe.matmul(a, b, gpu=GPU, progress=False, schedule={
        "kernel": "fma", "lanes": lanes, "lane_order": order, "reduction": reduction})
    k = a.shape[1]
    per = -(-k // lanes)
    for i in range(2):
        for j in range(3):
            accs = []
            for lane in range(lanes):
                ks = range(lane, k, lanes) if order == "interleaved" else range(
                    lane * per, min(k, (lane + 1) * per))
                acc = 0
                for kk in ks:  # one rounding a step: fma(a, b, acc)
                    exact = Fraction(float(a[i, kk])) * Fraction(float(b[kk, j])) + \
                        f32_value(acc)
                    acc = f32_round(exact)
                accs.append(acc)
            while len(accs) > 1:  # the lanes, one RNE add each
                if reduction == "tree":
                    pairs = [f32_round(f32_value(accs[x]) + f32_value(accs[x + 1]))
                             for x in range(0, len(accs) - 1, 2)]
                    accs = pairs + ([accs[-1]] if len(accs) % 2 else [])
                else:
                    accs = [f32_round(f32_value(accs[0]) + f32_value(accs[1]))] + accs[2:]
            assert int(d.view(np.uint32)[i, j]) == accs[0], (i, j)


def test_stream_k_tiles_cut_k_by_hand():
    """4x4 D in 2x2 tiles, K = 256 in blocks of 64 (4 a tile); the last 2 tiles
    run stream-K over 3 units: 8 blocks as 3, 3, 2 (the first 8 % 3 = 2 units
    one longer). Tile 2 holds blocks 0-3 of the stream: unit edges at 3: pieces
    [0, 3), [3, 4); tile 3 holds blocks 4-7: the edge at 6: [4, 6), [6, 8)."""
    s = from_value({"split_kind": "stream", "stream_units": 3, "tile_m": 2, "tile_n": 2,
                    "stream_tiles": 2, "k_block": 64})
    pl = plan.make(s, 16, 16, k=256, m=4, n=4)
    got = [((t.r0, t.r1, t.c0, t.c1), [(p.chains[0].lo, p.chains[0].hi) for p in t.partials])
           for t in pl.tiles]
    assert got == [((0, 2, 0, 2), [(0, 16)]), ((0, 2, 2, 4), [(0, 16)]),
                   ((2, 4, 0, 2), [(0, 12), (12, 16)]), ((2, 4, 2, 4), [(0, 8), (8, 16)])]
    along_m = plan.make(s.with_(raster="along_m"), 16, 16, k=256, m=4, n=4)
    assert [(t.r0, t.c0) for t in along_m.tiles] == [(0, 0), (2, 0), (0, 2), (2, 2)]


def test_stream_k_words_are_each_tiles_own_split():
    a, b = ops(4, 4, 256, 2)
    s = {"split_kind": "stream", "stream_units": 3, "tile_m": 2, "tile_n": 2,
         "stream_tiles": 2, "k_block": 64}
    d = tcprobe.matmul(a, b, gpu=GPU, schedule=s, progress=False).view(np.uint32)
    tile = {(0, 0): None, (0, 2): None, (2, 0): (192,), (2, 2): (128,)}
    for (r, c), starts in tile.items():
        one = {"split_kind": "parallel"} | ({} if starts is None else {"split_starts": starts})
        want = tcprobe.matmul(a[r:r + 2], b[:, c:c + 2], gpu=GPU, schedule=one,
                              progress=False).view(np.uint32)
        assert np.array_equal(d[r:r + 2, c:c + 2], want), (r, c)
    plain = tcprobe.matmul(a, b, gpu=GPU, progress=False).view(np.uint32)
    assert (plain[2:] != d[2:]).any() and np.array_equal(plain[:2], d[:2])


def test_k_tail_drop_reads_whole_blocks_only():
    a, b = ops(3, 3, 250, 3)
    s = {"split_k": 2, "k_block": 64}
    dropped = tcprobe.matmul(a, b, gpu=GPU, schedule=s | {"k_tail": "drop"}, progress=False)
    first = tcprobe.matmul(a[:, :192], b[:192], gpu=GPU, schedule=s, progress=False)
    assert np.array_equal(dropped.view(np.uint32), first.view(np.uint32))
    one = tcprobe.matmul(a, b, gpu=GPU, schedule={"k_block": 64, "k_tail": "drop"},
                         progress=False)  # one split: the quirk does not apply
    assert np.array_equal(one.view(np.uint32), tcprobe.matmul(
        a, b, gpu=GPU, schedule={"k_block": 64}, progress=False).view(np.uint32))


@pytest.mark.parametrize("bad,match", [
    ({"kernel": "fma", "split_k": 2}, "kernel='fma'.*no split_k"),
    ({"lanes": 4}, "lanes and lane_order are for kernel='fma'"),
    ({"tile_m": 64}, "tile_m is for stream-K"),
    ({"stream_units": 4}, "stream_units needs split_kind='stream'"),
    ({"bias_form": "fma", "fused": False}, "bias_form='fma'"),
])
def test_rules_between_axes(bad, match):
    with pytest.raises(ScheduleError, match=match):
        Schedule(**bad)


def _fit(a, b, d, **kw):
    return fit_gemm.fit(words(a), "bf16", words(b), "bf16", None, None, d, "f32", gpu=GPU,
                        **kw)


@pytest.mark.slow
@pytest.mark.parametrize("truth,shape", [
    ({"kernel": "fma", "lanes": 8, "lane_order": "blocked", "reduction": "tree"}, (1, 16, 256)),
    ({"split_kind": "stream", "stream_units": 5, "tile_m": 16, "tile_n": 16,
      "stream_tiles": 3, "k_block": 64}, (32, 32, 512)),
    ({"split_k": 11, "split_kind": "parallel", "reduction": "tree", "k_block": 64,
      "split_rule": "ceil"}, (8, 8, 1408)),
], ids=["gemv-fma", "stream-k", "eleven-splits-tree"])
def test_fit_gemm_explains_other_kernels_and_refuses_one_ulp(truth, shape):
    m, n, k = shape
    a, b = ops(m, n, k, 4)
    d = tcprobe.matmul(a, b, gpu=GPU, schedule=truth, progress=False).view(np.uint32)
    f = _fit(a, b, d)
    assert f.explained, f.closest[:2]
    again = tcprobe.matmul(a, b, gpu=GPU, schedule=f.schedules[0], progress=False)
    assert np.array_equal(again.view(np.uint32), d)
    d2 = d.copy()
    d2[-1, -1] ^= 1  # one ulp
    f2 = _fit(a, b, d2)
    assert not f2.explained and f2.mismatches >= 1


def test_fit_gemm_finds_the_bias_inside_the_fma():
    a, b = ops(4, 4, 64, 5)
    bias = (np.random.default_rng(6).standard_normal(4) * 64).astype(np.float32)
    d = tcprobe.matmul(a, b, gpu=GPU, bias=bias, alpha=0.75, progress=False,
                       schedule={"bias_form": "fma"}).view(np.uint32)
    f = _fit(a, b, d, alpha=0.75, beta=0, bias=bias.view(np.uint32), bias_fmt="f32")
    assert f.explained and {s.bias_form for s in f.schedules} == {"fma"}
    add = tcprobe.matmul(a, b, gpu=GPU, bias=bias, alpha=0.75, progress=False)
    assert (add.view(np.uint32) != d).any()  # the two forms differ on these words


def test_a_difference_map_shows_the_stream_k_tiles(tmp_path):
    """gemm --random with --compare-schedule: the picture of where D differs
    is blank over the data-parallel tiles and marked over the stream-K ones."""
    import json

    from click.testing import CliRunner

    from tcprobe.cli import main
    from tcprobe.matrix import compare

    a, b = ops(32, 32, 512, 7)
    s = {"split_kind": "stream", "stream_units": 3, "tile_m": 16, "tile_n": 32,
         "stream_tiles": 1, "k_block": 64}
    plain = tcprobe.matmul(a, b, gpu=GPU, progress=False).view(np.uint32)
    stream = tcprobe.matmul(a, b, gpu=GPU, schedule=s, progress=False).view(np.uint32)
    lines = compare.difference_map("f32", stream, plain, rows=4, cols=8)
    assert lines[:2] == [" " * 8, " " * 8]  # rows 0-15: one data-parallel tile
    assert all(line.strip() for line in lines[2:])  # rows 16-31: the stream-K tile
    (tmp_path / "s.json").write_text(json.dumps(s))
    r = CliRunner().invoke(main, ["gemm", "--random", "32x32x512", "--format", "bf16",
                                  "--gpu", GPU, "--compare", GPU, "--compare-schedule",
                                  str(tmp_path / "s.json"), "--verdict-seconds", "0"])
    assert r.exit_code == 0, r.output
    assert "where they differ" in r.output
    r = CliRunner().invoke(main, ["gemm", "--random", "32x32", "--format", "bf16", "--gpu", GPU])
    assert r.exit_code == 2 and "is not MxNxK" in r.output
