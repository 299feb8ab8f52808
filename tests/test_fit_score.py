"""fit-gemm's fast search (tcprobe/matrix/fit_score.py): the batched scores
are the pipeline's one schedule at a time, the plans it reuses are the
pipeline's, and fit-gemm reports what its cheap passes alone report."""

import ml_dtypes
import numpy as np
import pytest

import tcprobe
from tcprobe.matrix import fit_gemm, fit_score, pipeline
from tcprobe.matrix.compare import words_differ
from tcprobe.matrix.schedule import Schedule

GPU = "H100"


def words(x):
    return np.ascontiguousarray(x).view({2: np.uint16, 4: np.uint32}[x.dtype.itemsize]).astype(
        np.uint32)


def capture(m, n, k, seed, truth, out=None, with_c=False, alpha=1.0, beta=None):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    c = (rng.standard_normal((m, n)) * 4).astype(np.float32) if with_c else None
    kw = {"dtype": out} if out else {}
    d = tcprobe.matmul(a, b, c, gpu=GPU, schedule=truth, alpha=alpha, beta=beta,
                       progress=False, **kw)
    return words(a), words(b), None if c is None else words(c), words(d)


def _fit(a, b, c, d, d_fmt, **kw):
    return fit_gemm.fit(a, "bf16", b, "bf16", c, None if c is None else "f32", d, d_fmt,
                        gpu=GPU, **kw)


def _same(f1, f2):
    return (f1.explained, f1.schedules, f1.mismatches, f1.closest, f1.worst, f1.searched,
            f1.capped) == (f2.explained, f2.schedules, f2.mismatches, f2.closest, f2.worst,
                           f2.searched, f2.capped)


@pytest.mark.parametrize("out,with_c", [("bfloat16", False), (None, True)])
def test_batched_scores_are_the_pipelines_one_at_a_time(out, with_c):
    """Every candidate's mismatch count on a block of chosen rows and columns,
    scored in stacked batches (with and without the plans candidates() made),
    equals pipeline.run's words for that schedule alone, compared word by word."""
    truth = Schedule(split_k=3, split_kind="parallel", reduction="tree")
    a, b, c, d = capture(24, 20, 128, 1, truth, out, with_c, 0.5 if with_c else 1.0,
                         3.0 if with_c else None)
    d_fmt = "bf16" if out else "f32"
    al, be = (0x3F000000, 0x40400000) if with_c else (0x3F800000, 0x3F800000)
    fam, dp, mdl = fit_gemm.instructions(GPU, "bf16", "bf16", "f32")[0]
    made = []
    cands = [s.with_(instr=fam) for s in fit_gemm.candidates(
        dp, 128, False, with_c, d_fmt, unit_epilogue=not with_c, plans_out=made)]
    rows, cols = np.array([3, 7, 11, 20]), np.array([0, 5, 6, 19])
    p = pipeline.Problem(mdl, a[rows], "bf16", b[:, cols], "bf16", d_fmt,
                         None if c is None else c[np.ix_(rows, cols)], "f32", al, be,
                         full=d.shape)
    want = d[np.ix_(rows, cols)]
    alone = [int(words_differ(d_fmt, pipeline.run(p, s), want).sum()) for s in cands]
    assert fit_score.mismatches(cands, p, want, d_fmt) == alone
    assert fit_score.mismatches(cands, p, want, d_fmt, made) == alone
    assert 0 < alone.count(0) < len(cands) and max(alone) > 0  # the test can tell them apart


def test_the_plans_candidates_made_are_the_pipelines():
    fam, dp, mdl = fit_gemm.instructions(GPU, "bf16", "bf16", "f32")[0]
    made = []
    cands = fit_gemm.candidates(dp, 1000, False, True, "f32", plans_out=made)
    assert len(made) == len(cands) and any(pl is None for pl in made)
    z = np.zeros((2, 1000), np.uint32)
    p = pipeline.Problem(mdl, z, "bf16", z.T.copy(), "bf16", "f32", full=(64, 64))
    for s, pl in zip(cands, made, strict=True):
        if pl is not None:
            assert pl == pipeline.plan_of(p, s.with_(instr=fam)), s


@pytest.mark.parametrize("truth,out,flip", [
    (Schedule(split_k=2, split_kind="serial", k_order="reverse"), "bfloat16", None),
    (Schedule(k_block=32, split_k=3, split_rule="ceil", split_kind="parallel",
              partials="output"), "bfloat16", None),
    (Schedule(c="accumulator", k_block=32, split_k=2), None, None),
    pytest.param(None, "bfloat16", (0, 0), marks=pytest.mark.slow),  # nothing explains
])  # the first pass: the passes report (then both search stream-K)
def test_fit_gemm_reports_what_its_passes_alone_report(truth, out, flip, monkeypatch):
    a, b, c, d = capture(40, 24, 256, 2, truth, out, with_c=out is None)
    if flip:
        d = d.copy()
        d[flip] ^= 1
    d_fmt = "bf16" if out else "f32"
    fast = _fit(a, b, c, d, d_fmt)
    monkeypatch.setattr(fit_score, "explainers", lambda *args, **kw: None)
    assert _same(fast, _fit(a, b, c, d, d_fmt))
    assert fast.explained == (flip is None)


def test_a_family_nothing_explains_is_reported_alike(monkeypatch):
    """fp8 on an H100 under DeepGEMM's promotion: wgmma's schedules explain D,
    mma.sync's (another accumulator) none; with five or more explaining, the
    fast search skips mma.sync's passes, whose closest would sort past them."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((24, 512)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((512, 16)).astype(ml_dtypes.float8_e4m3fn)
    d = tcprobe.matmul(a, b, gpu=GPU, schedule="deepgemm-fp8", progress=False)
    aw, bw = (np.ascontiguousarray(x).view(np.uint8).astype(np.uint32) for x in (a, b))

    def fit():
        return fit_gemm.fit(aw, "e4m3", bw, "e4m3", None, None, d.view(np.uint32), "f32",
                            gpu=GPU)
    fast = fit()
    monkeypatch.setattr(fit_score, "explainers", lambda *args, **kw: None)
    assert _same(fast, fit())
    assert fast.explained and len(fast.schedules) >= fit_gemm.CLOSEST
    assert {s.instr for s in fast.schedules} == {"wgmma"}


@pytest.mark.slow
def test_a_mismatch_past_the_last_pass_is_reported_alike(monkeypatch):
    """D off by one ulp in a row below the passes' last block: the fast
    search keeps the schedule that explains that block and scores it on all
    of D, as the passes do (then both search stream-K)."""
    a, b, c, d = capture(136, 16, 64, 3, None, "bfloat16")
    d = d.copy()
    d[133, 2] ^= 1
    fast = _fit(a, b, c, d, "bf16")
    monkeypatch.setattr(fit_score, "explainers", lambda *args, **kw: None)
    assert _same(fast, _fit(a, b, c, d, "bf16"))
    assert not fast.explained and fast.mismatches == 1


def test_the_telling_rank_skips_specials_and_finds_a_tie():
    """An element whose exact value is a bf16 tie ranks first; a NaN word of D
    ranks last (inf)."""
    a = np.full((2, 4), 0x3F80, np.uint32)  # bf16 1.0
    b = np.full((4, 3), 0x3F80, np.uint32)
    b[0, 1] = 0x3C00  # 2**-7: column 1 sums to 3 + 2**-7, halfway between bf16 words
    d = np.full((2, 3), 0x4080, np.uint32)  # 4.0 as bf16
    d[:, 1] = 0x4040  # 3.0, the even neighbour of the tie
    d[1, 2] = 0x7FC0  # NaN
    rank = fit_score.telling(a, "bf16", b, "bf16", None, None, d, "bf16", 0x3F800000,
                             0x3F800000)
    assert rank[0, 1] == rank[1, 1] == 0 and rank[1, 2] == np.inf
    assert np.all(rank[:, [0]] > 0)
