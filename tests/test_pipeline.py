"""One matrix pipeline: every entry point computes the same words for the same
schedule (every preset and random schedules drawn from the axes table,
the chain with splits and blocks included), the table drives Schedule,
fit-gemm's search and the docs, and a new axis' stage is the only reader."""

import json
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

import tcprobe
from tcprobe.cli import main
from tcprobe.matrix import axes, fit_gemm, pipeline, plan, same_bits
from tcprobe.matrix.operands import MatmulError
from tcprobe.matrix.schedule import PRESETS, Schedule, ScheduleError, from_value

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "tf32": np.float32}
GPU = "H100"


def operands(fmt, seed, m=5, n=4, k=200):
    rng = np.random.default_rng(seed)
    scale = np.exp2(rng.integers(-6, 7, (m, k)))  # wide exponents: splits and orders show
    a = (rng.standard_normal((m, k)) * scale).astype(np.float32).astype(DTYPES[fmt])
    b = rng.standard_normal((k, n)).astype(np.float32).astype(DTYPES[fmt])
    c = (rng.standard_normal((m, n)) * 8).astype(np.float32)
    return a, b, c


def random_schedule(rng, fmt) -> Schedule:
    """A schedule drawn from the axes table's values (the chain included)."""
    while True:
        axes_drawn = {}
        for ax in axes.AXES:
            if ax.name in ("instr", "acc", "out", "saturate"):
                continue
            values = ax.search or ax.choices
            if ax.name == "split_starts":
                values = (None, None, (64,), (32, 128))
            if ax.name == "operand_round" and fmt != "tf32":
                values = (None,)
            if ax.name == "promote" and fmt != "e4m3":
                values = (None,)
            if ax.name == "c":
                values = ("epilogue", "output", "accumulator")
            if values:
                axes_drawn[ax.name] = values[rng.integers(len(values))]
        if axes_drawn["c"] == "accumulator":  # the chain: only its own axes vary
            axes_drawn = {k: v for k, v in axes_drawn.items()
                          if k in ("c", "k_block", "split_k", "split_rule", "split_starts")}
        if axes_drawn.get("split_starts") is not None:
            axes_drawn["split_k"] = 1
        if axes_drawn.get("bias_form") == "fma":
            axes_drawn.update(fused=True, fma_on="acc")
        try:
            s = Schedule(**axes_drawn)
        except ScheduleError:
            continue
        return s


def schedules():
    out = [(name, fmt) for name in PRESETS for fmt in ("bf16",)]
    out += [("deepgemm-fp8", "e4m3"), ("cublas-tf32", "tf32")]
    rng = np.random.default_rng(34)
    for i in range(18):
        fmt = ("bf16", "e4m3", "tf32")[i % 3]
        out.append((random_schedule(rng, fmt), fmt))
    return out


def _label(x):
    s, fmt = x
    return f"{s}-{fmt}" if isinstance(s, str) else f"random-{fmt}-" + str(zlib.crc32(
        json.dumps(s.to_dict(), sort_keys=True).encode()) % 10**6)


def _api(a, b, c, s):
    try:
        return np.asarray(tcprobe.matmul(a, b, c, gpu=GPU, schedule=s, progress=False)).view(
            np.uint32 if c.dtype == np.float32 else np.uint16)
    except (MatmulError, ScheduleError) as e:
        return str(e)


@pytest.mark.fast_first(6)
@pytest.mark.parametrize("case", schedules(), ids=[_label(x) for x in schedules()])
def test_every_entry_point_gets_the_same_words(case, tmp_path):
    name, fmt = case
    s = from_value(name)
    a, b, c = operands(fmt, 1)
    want = _api(a, b, c, s)
    # the words of the pipeline run directly on a problem of words
    fmt_name = "tf32" if fmt == "tf32" else fmt
    raw = {1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize]
    aw, bw = (np.ascontiguousarray(x).view(raw).astype(np.uint32) for x in (a, b))
    cw = c.view(np.uint32)
    if isinstance(want, str):  # refused: every entry point refuses it
        with pytest.raises((MatmulError, ScheduleError)):
            tcprobe.matmul(a, b, c, gpu=GPU, schedule=s, progress=False)
        return
    # same_bits' words for the configuration
    r = same_bits.resolve(same_bits.Config(GPU, schedule=s), fmt_name, fmt_name,
                          "f32" if s.acc is None else s.acc)
    got = same_bits.words(r, aw, fmt_name, bw, fmt_name, cw, "f32", "f32",
                          0x3F800000, 0x3F800000)
    assert np.array_equal(got, want), "same_bits"
    # tcprobe gemm on .npy files, the schedule as a JSON file
    np.save(tmp_path / "a.npy", aw.astype(raw))
    np.save(tmp_path / "b.npy", bw.astype(raw))
    np.save(tmp_path / "c.npy", c)
    (tmp_path / "s.json").write_text(json.dumps(s.to_dict()))
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), "--b",
                                  str(tmp_path / "b.npy"), "--c", str(tmp_path / "c.npy"),
                                  "--format", fmt_name, "--gpu", GPU, "--schedule",
                                  str(tmp_path / "s.json"), "--out", str(tmp_path / "d.npy")])
    assert r.exit_code == 0, r.output
    assert np.array_equal(np.load(tmp_path / "d.npy").view(np.uint32), want), "tcprobe gemm"
    # tcprobe.torch routes torch.addmm (bf16 C and D, as torch has them) the same way
    torch = pytest.importorskip("torch")
    from tcprobe.torch import emulate

    c16 = c.astype(ml_dtypes.bfloat16)
    want16 = _api(a, b, c16, s)
    if fmt == "bf16" and not isinstance(want16, str):
        tt = [torch.from_numpy(np.asarray(x, np.float32)).to(torch.bfloat16) for x in (a, b, c16)]
        with emulate(GPU, schedule=s):
            d = torch.addmm(tt[2], tt[0], tt[1])
        assert np.array_equal(d.view(torch.int16).numpy().view(np.uint16), want16), \
            "tcprobe.torch"


@pytest.mark.parametrize("seed", range(4))
def test_fit_gemm_explains_what_matmul_computes_with_splits_and_blocks(seed):
    """fit-gemm's words are the pipeline's: D made by matmul under a schedule
    with splits, blocks and a tree or parallel reduction is explained, and the
    schedule it names computes D again through tcprobe.matmul."""
    truths = [Schedule(k_block=32, split_k=3, split_rule="ceil", split_kind="parallel",
                       reduction="tree"),
              Schedule(split_k=2, split_kind="serial", k_order="reverse"),
              Schedule(c="accumulator", k_block=32, split_k=2),
              Schedule(split_starts=(64, 128), split_kind="parallel", fma_on="c")]
    truth = truths[seed]
    a, b, c = operands("bf16", 200 + seed, 4, 4, 256)
    d = tcprobe.matmul(a, b, c, gpu=GPU, schedule=truth, progress=False).view(np.uint32)
    aw, bw = (np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) for x in (a, b))
    f = fit_gemm.fit(aw, "bf16", bw, "bf16", c.view(np.uint32), "f32", d, "f32", gpu=GPU,
                     bounds=(64, 128) if seed == 3 else None)
    assert f.explained, (truth, f.closest)
    for s in f.schedules[:3]:
        again = tcprobe.matmul(a, b, c, gpu=GPU, schedule=s, progress=False).view(np.uint32)
        assert np.array_equal(again, d), s


def test_same_bits_finds_the_split_the_old_runner_ignored():
    """Two set-ups that differ only in the split of K: the search must find a
    counterexample (the old runner ran the chain as one range)."""
    v = same_bits.verdict(same_bits.Config(GPU, schedule="chain"),
                          same_bits.Config(GPU, schedule={"preset": "chain", "split_k": 2}),
                          "bf16", "bf16", "f32", "f32", seconds=20)
    assert v.identical is False and "split" in v.explained_by


def test_the_chain_honours_k_block_and_split_rule():
    a, b, c = operands("bf16", 7, 4, 4, 320)
    one = tcprobe.matmul(a, b, c, gpu=GPU, schedule={"preset": "chain", "split_k": 3},
                         progress=False).view(np.uint32)
    blocks = tcprobe.matmul(a, b, c, gpu=GPU, progress=False,
                            schedule={"preset": "chain", "split_k": 3, "k_block": 64,
                                      "split_rule": "ceil"}).view(np.uint32)
    # K = 320: 20 tiles of 16. even thirds of tiles: 7, 6, 7; ceil thirds of 5 blocks
    # of 64: 2, 2, 1 blocks = 8, 8, 4 tiles. The plans differ, so must some words.
    p_even = plan.make(from_value({"preset": "chain", "split_k": 3}), 16, 20)
    p_ceil = plan.make(from_value({"preset": "chain", "split_k": 3, "k_block": 64,
                                   "split_rule": "ceil"}), 16, 20)
    assert [(x.chains[0].lo, x.chains[0].hi) for x in p_even.partials] == [(0, 7), (7, 13),
                                                                            (13, 20)]
    assert [(x.chains[0].lo, x.chains[0].hi) for x in p_ceil.partials] == [(0, 8), (8, 16),
                                                                            (16, 20)]
    assert (one != blocks).any()


def test_tree_reduction_and_output_partials_by_hand():
    """The reduction stage on hand-made f32 partials: tree pairs (P0+P1)+(P2+P3);
    partials in the output type round each one first."""
    one, tiny = 0x3F800000, 0x33800000  # 1.0 and 2^-24
    parts = [np.array([[w]], np.uint32) for w in (one, tiny, tiny, 0xBF800000)]
    # forward: ((1 + t) + t) - 1: 1 + 2^-24 ties to 1, twice: 0
    assert pipeline.reduce_parallel(parts, "forward")[0, 0] == 0
    # tree: (1 + t) + (t - 1) = 1 + (-(1 - 2^-24)) = 2^-24
    assert pipeline.reduce_parallel(parts, "tree")[0, 0] == tiny
    # reverse: ((-1 + t) + t) + 1: -1 + 2^-24 exact, + 2^-24 exact, + 1 = 2^-23
    assert pipeline.reduce_parallel(parts, "reverse")[0, 0] == 0x34000000


def test_bias_fma_rounds_once():
    """bias_form='fma': fma(alpha, acc, bias) keeps alpha*acc exact (CUTLASS 3's
    per-row bias); 'add' rounds alpha*acc first. alpha = 1 + 2^-23, acc = 1 +
    2^-7: alpha*acc = 1 + 2^-7 + 2^-23 + 2^-30 exactly, 1 + 2^-7 + 2^-23
    rounded; with the bias minus the rounded product, add gives +0 and the
    fma 2^-30."""
    a = np.array([[1 + 2.0 ** -7]], ml_dtypes.bfloat16)  # acc = 1 + 2^-7 exactly
    b = np.array([[1.0]], ml_dtypes.bfloat16)
    alpha = 1 + 2.0 ** -23
    bias = np.array([-np.float32(alpha) * np.float32(1 + 2.0 ** -7)], np.float32)  # rounded
    add = tcprobe.matmul(a, b, gpu=GPU, alpha=alpha, bias=bias, progress=False)
    fma = tcprobe.matmul(a, b, gpu=GPU, alpha=alpha, bias=bias, progress=False,
                         schedule={"bias_form": "fma"})
    assert add.view(np.uint32)[0, 0] == 0  # the rounded product minus itself
    assert bias[0] == np.float32(-(1 + 2.0 ** -7 + 2.0 ** -23))
    assert fma.view(np.uint32)[0, 0] == 0x30800000  # 2^-30


def test_schedule_fields_json_and_mechanisms_come_from_the_table():
    names = [a.name for a in axes.AXES]
    assert list(Schedule().to_dict()) == names
    assert set(same_bits.SCHEDULE_MECHANISMS) == {a.name for a in axes.AXES if a.mechanism}
    for a in axes.AXES:
        assert a.stage in axes.STAGES and getattr(Schedule(), a.name) == (
            None if a.default is None else a.default)
    s = Schedule(split_starts=[64, 128], reduction="tree", split_kind="parallel")
    assert from_value(json.loads(json.dumps(s.to_dict()))) == s
    with pytest.raises(ScheduleError, match="split_starts must be"):
        Schedule(split_starts=[128, 64])
    with pytest.raises(ScheduleError, match="give split_starts or split_k"):
        Schedule(split_starts=[64], split_k=2)


def test_fit_gemm_searches_the_tables_values():
    from tcprobe.matrix import choice

    dp = choice.datapath("H100", "wgmma", "bf16", "bf16", "f32")
    cands = fit_gemm.candidates(dp, 1024, False, True, "f32")
    seen = {ax: {getattr(s, ax) for s in cands} for ax in ("k_block", "split_k", "split_rule",
                                                            "reduction", "k_order", "c")}
    assert seen["split_k"] >= set(range(1, axes.MAX_SEARCHED_SPLIT + 1))
    assert seen["reduction"] == {"forward", "reverse", "tree"}
    assert seen["k_block"] <= set(axes.BY_NAME["k_block"].search) and len(seen["k_block"]) > 2
    assert seen["c"] == {"epilogue", "output", "accumulator"}


def test_docs_axis_table_is_the_tables():
    text = (ROOT / "docs" / "library-gemm.md").read_text()
    assert axes.docs_table() in text


def test_schedule_file_that_names_itself_is_refused(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"preset": str(p)}))
    with pytest.raises(ScheduleError, match="names itself"):
        from_value(str(p))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ScheduleError):
        from_value(str(deep))


def _window_49():
    """H100's bf16 wgmma model with a 49-bit window: past what the CUDA backend holds."""
    from tcprobe.models import registry
    from tcprobe.models.datapath import Datapath
    from tcprobe.models.model import FixedPointModel

    base = registry.auto(Datapath.parse("wgmma.bf16.f32.k16"), GPU)
    return FixedPointModel("window-49", base.datapath, base.evidence,
                           base.params.replace(window_bits=49))


@pytest.mark.parametrize("schedule", [None, {"split_k": 3, "split_kind": "parallel"},
                                      {"split_kind": "stream", "stream_units": 3, "tile_m": 2,
                                       "tile_n": 2, "k_block": 64}], ids=["default", "split",
                                                                         "stream-k"])
def test_the_cuda_backend_runs_the_same_pipeline(schedule):
    """backend='host' (the CUDA kernel's source built for this CPU) runs the
    chains of the one pipeline: the same words as the engine; a model it does
    not compute is refused by name; 'cuda' without a GPU is refused."""
    import shutil

    if shutil.which("g++") is None and shutil.which("c++") is None:
        pytest.skip("no C++ compiler for the host build")
    a, b, c = operands("bf16", 9, 4, 4, 256)
    want = tcprobe.matmul(a, b, c, gpu=GPU, schedule=schedule, progress=False)
    got = tcprobe.matmul(a, b, c, gpu=GPU, schedule=schedule, progress=False, backend="host")
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    ints = np.arange(-64, 64, dtype=np.int8).reshape(2, 64)  # integer kinds: the same words
    assert np.array_equal(tcprobe.matmul(ints, ints.T.copy(), gpu=GPU, backend="host",
                                         progress=False),
                          tcprobe.matmul(ints, ints.T.copy(), gpu=GPU, progress=False))
    amd = tcprobe.matmul(a, b, gpu="MI300X", progress=False)  # an AMD design: the same words
    assert np.array_equal(tcprobe.matmul(a, b, gpu="MI300X", backend="host", progress=False)
                          .view(np.uint32), amd.view(np.uint32))
    with pytest.raises(MatmulError, match="backend: the CUDA backend does not compute"):
        tcprobe.matmul(a, b, gpu=GPU, model=_window_49(), backend="host", progress=False)
    with pytest.raises(MatmulError, match="backend must be"):
        tcprobe.matmul(a, b, gpu=GPU, backend="gpu", progress=False)


def test_fit_gemm_never_explains_alpha_two_by_the_chain():
    """The chain takes alpha = beta = 1: a D the chain computed is not
    'explained' for a GEMM the user says ran with alpha = 2."""
    a, b, c = operands("bf16", 11, 4, 4, 64)
    d = tcprobe.matmul(a, b, c, gpu=GPU, schedule="chain", progress=False).view(np.uint32)
    aw, bw = (np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) for x in (a, b))
    f = fit_gemm.fit(aw, "bf16", bw, "bf16", c.view(np.uint32), "f32", d, "f32", gpu=GPU,
                     alpha=2)
    assert not f.explained and all(s.c != "accumulator" for s, _ in f.closest)
    f1 = fit_gemm.fit(aw, "bf16", bw, "bf16", c.view(np.uint32), "f32", d, "f32", gpu=GPU)
    assert f1.explained and any(s.c == "accumulator" for s in f1.schedules)


def test_gemm_refuses_an_instr_the_schedule_contradicts(tmp_path):
    a = np.ones((2, 32), ml_dtypes.float8_e4m3fn)
    np.save(tmp_path / "a.npy", a.view(np.uint8))
    np.save(tmp_path / "b.npy", a.T.copy().view(np.uint8))
    r = CliRunner().invoke(main, ["gemm", "--a", str(tmp_path / "a.npy"), "--b",
                                  str(tmp_path / "b.npy"), "--format", "e4m3", "--gpu", GPU,
                                  "--instr", "mma", "--schedule", "fp8-fast-accum"])
    assert r.exit_code == 2, r.output
    assert "differs from the schedule's 'wgmma'" in r.output


def test_emulate_runs_its_products_on_the_backend():
    """emulate(backend='host'): the products' chains run on the CUDA kernel's
    host build, with the engine's words; a product the backend does not
    compute runs as torch would, counted (strict refuses it)."""
    import shutil

    torch = pytest.importorskip("torch")
    if shutil.which("g++") is None and shutil.which("c++") is None:
        pytest.skip("no C++ compiler for the host build")
    from tcprobe.torch import Report, emulate

    a, b, _ = operands("bf16", 12, 8, 8, 128)
    ta, tb = (torch.from_numpy(np.asarray(x, np.float32)).to(torch.bfloat16) for x in (a, b))
    with emulate("H100"):
        want = ta @ tb
    rep = Report()
    ints = torch.from_numpy(np.arange(32 * 64, dtype=np.int64).reshape(32, 64) % 255 - 127).to(
        torch.int8)
    with emulate("H100"):
        want_int = torch._int_mm(ints, ints.t().contiguous())
    with emulate("H100", backend="host", report=rep):
        got = ta @ tb
        got_int = torch._int_mm(ints, ints.t().contiguous())  # an integer kind: the same words
    with emulate("H100", model=_window_49(), backend="host", report=rep):  # not the kernel's
        ta @ tb
    assert torch.equal(got.view(torch.int16), want.view(torch.int16))
    assert torch.equal(got_int, want_int)
    assert rep.ops["_int_mm"].routed == 1 and not rep.ops["_int_mm"].fallback
    assert any("CUDA backend does not compute" in why for _, why in rep.fallbacks), \
        rep.fallbacks
    with pytest.raises(ValueError, match="backend must be"):
        emulate("H100", backend="gpu")


def test_emulate_routes_the_out_dtype_overloads():
    """aten.mm.dtype and aten.addmm.dtype (torch.mm(..., out_dtype=float32), which
    plain torch has no CPU kernel for) route to the pipeline with an f32 D."""
    torch = pytest.importorskip("torch")
    from tcprobe.torch import emulate

    a, b, c = operands("bf16", 13, 4, 3, 64)
    ta, tb = (torch.from_numpy(np.asarray(x, np.float32)).to(torch.bfloat16) for x in (a, b))
    with emulate(GPU, schedule="cublas"):
        d = torch.mm(ta, tb, out_dtype=torch.float32)
        e = torch.addmm(torch.from_numpy(c[:, :3].copy()), ta, tb, out_dtype=torch.float32,
                        beta=2.0)
    want = tcprobe.matmul(a, b, gpu=GPU, dtype="float32", progress=False)
    want2 = tcprobe.matmul(a, b, c[:, :3].copy(), gpu=GPU, beta=2.0, progress=False)
    assert d.dtype == torch.float32 and np.array_equal(d.numpy().view(np.uint32),
                                                       want.view(np.uint32))
    assert np.array_equal(e.numpy().view(np.uint32), want2.view(np.uint32))
