"""Issue 36, a fifth campaign (docs/campaign-5.md): cases no earlier campaign
used, each a bad input that now gives one ``error:`` line and exit 2, an
option that was silently ignored and is now refused, or an input that was
wrongly refused or silently wrong and now gives the right words."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.matrix.operands import MatmulError

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module")
def ab(tmp_path_factory):
    """A (8, 32) and B (32, 8) f16 .npy files."""
    d = tmp_path_factory.mktemp("ab")
    np.save(d / "a.npy", RNG.standard_normal((8, 32)).astype(np.float16))
    np.save(d / "b.npy", RNG.standard_normal((32, 8)).astype(np.float16))
    np.save(d / "d.npy", np.zeros((8, 8), np.float32))
    np.save(d / "a8.npy", RNG.integers(-4, 4, (8, 32)).astype(np.int8))
    np.save(d / "b8.npy", RNG.integers(-4, 4, (32, 8)).astype(np.int8))
    return d


# ---------------------------------------------------------------------------
# Options that mean something only beside another: refused alone, never ignored.


@pytest.mark.parametrize("extra,needles", [
    (["--compare-instr", "wgmma"], ["--compare-instr needs --compare GPU"]),
    (["--compare-schedule", "chain"], ["--compare-schedule needs --compare GPU"]),
    (["--compare-model", "h100"], ["--compare-model needs --compare GPU"]),
    (["--scale-format", "ue8m0"], ["--scale-format needs --scale-a or --scale-b"]),
])
def test_gemm_options_without_their_partner_are_refused(ab, extra, needles):
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100", *extra),
              *needles)


def test_gemm_random_needs_its_format_and_no_file_formats():
    one_error(invoke("gemm", "--random", "8x8x16", "--gpu", "H100"),
              "--random needs --format", "bf16")
    one_error(invoke("gemm", "--random", "8x8x16", "--format", "bf16", "--gpu", "H100",
                     "--a-format", "f16"), "--a-format needs --a FILE")


@pytest.mark.parametrize("extra,needles", [
    (["--bounds", ""], ["--bounds", "names no K offset", "'none'"]),
    (["--c-format", "f16"], ["--c-format needs --c FILE"]),
    (["--bias-format", "f32"], ["--bias-format needs --bias FILE"]),
])
def test_fit_gemm_options_that_would_be_ignored_are_refused(ab, extra, needles):
    one_error(invoke("fit-gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--d", ab / "d.npy",
                     "--gpu", "H100", *extra), *needles)


@pytest.mark.parametrize("cmd,option", [
    ("sass-check", "--arch"), ("sass-check", "--instr"), ("sass-check", "--format"),
    ("mfma-check", "--arch"),
])
@pytest.mark.parametrize("value", ["", " , "])
def test_an_empty_comma_list_names_nothing(cmd, option, value):
    one_error(invoke(cmd, option, value), option, "names nothing")


# ---------------------------------------------------------------------------
# One gate for a GPU and a format: every surface that takes both.


@pytest.mark.parametrize("gpu,fmt,needle", [
    ("V100", "bf16", "sm_70's mma.sync takes f16 inputs"),
    ("A100", "e4m3", "sm_80 has no fp8 mma.sync"),
    ("MI250X", "e4m3", "MI250X (CDNA2) has no v_mfma taking e4m3"),
    ("MI300X", "e4m3", "MI300X (CDNA3) has no v_mfma taking e4m3"),
])
def test_a_format_the_gpu_lacks_is_refused_by_gemm_probe_and_batch_invariance(
        tmp_path, gpu, fmt, needle):
    out = tmp_path / "probe"
    one_error(invoke("gemm-probe", "--gpu", gpu, "--format", fmt, "--out", out, "--k", "64"),
              f"format {fmt}", needle)
    assert not out.exists()
    one_error(invoke("batch-invariance", "--gpu", gpu, "--dtype", fmt, "-n", "64", "-k", "64",
                     "--m", "1:4"), f"dtype {fmt}", needle)


def test_gemm_probe_still_writes_what_the_gpu_runs(tmp_path):
    r = invoke("gemm-probe", "--gpu", "MI300X", "--format", "tf32", "--out", tmp_path / "p",
               "--m", "8", "--n", "8", "--k", "64")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p" / "manifest.json").is_file()


# ---------------------------------------------------------------------------
# AMD: one gate on every surface.


def test_a_datapath_id_with_an_empty_type_is_named():
    for r in (invoke("gemm", "--random", "8x8x16", "--format", "tf32", "--gpu", "MI100",
                     "--instr", "mfma.xf32.f32.k8"),):
        one_error(r, "cannot read the input types of 'mfma.xf32.f32.k8'", "mfma.xf32.tf32.f32.k8")
    with pytest.raises(MatmulError, match="cannot read the input types"):
        tcprobe.dot([0] * 8, [0] * 8, 0, datapath="mfma.xf32.f32.k8", gpu="MI300X")


def test_an_nvidia_profile_never_models_an_mfma_datapath(ab):
    with pytest.raises(MatmulError, match="profile h100 models NVIDIA tensor cores, not AMD's "
                                          "mfma.bf16.f32.k16"):
        tcprobe.dot([0] * 16, [0] * 16, 0, datapath="mfma.bf16.f32.k16", gpu="MI300X",
                    model="h100")
    one_error(invoke("run-case", "--datapath", "mfma.bf16.f32.k16", "--device", "sim:mi300x",
                     "--a", "0x3f80", "--b", "0x3f80", "--model", "h100"),
              "profile h100 models NVIDIA tensor cores")
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "MI300X",
                     "--model", "a100"), "profile a100 models NVIDIA tensor cores")


@pytest.mark.parametrize("cmd", [
    ["run-case", "--a", "1", "--b", "1"],
    ["validate", "--cases", "100"],
    ["ladder"],
])
def test_an_amd_sim_device_refuses_an_nvidia_family(tmp_path, cmd):
    one_error(invoke(*cmd, "--format", "f16", "--instr", "mma", "--device", "sim:mi300x",
                     *(["--out", tmp_path / "v"] if cmd[0] == "validate" else [])),
              "sim:mi300x does not run mma (it runs mfma)")
    assert not (tmp_path / "v").exists()


def test_amd_int8_is_refused_as_unmodelled(ab):
    one_error(invoke("gemm", "--a", ab / "a8.npy", "--b", ab / "b8.npy", "--gpu", "MI300X"),
              "tcprobe does not model MI300X's integer v_mfma")


def test_fnuz_fp8_arrays_run_on_mi300x_and_nowhere_else():
    # small integers: every product and sum exact, so D is the exact product
    a = RNG.integers(-3, 4, (4, 32)).astype(ml_dtypes.float8_e4m3fnuz)
    b = RNG.integers(-3, 4, (32, 4)).astype(ml_dtypes.float8_e4m3fnuz)
    exact = a.astype(np.int64).astype(np.float64) @ b.astype(np.int64).astype(np.float64)
    d = tcprobe.matmul(a, b, gpu="MI300X", progress=False)
    assert d.dtype == np.float32 and np.array_equal(d.astype(np.float64), exact)
    with pytest.raises(MatmulError, match="H100's instructions take no e4m3fnuz"):
        tcprobe.matmul(a, b, gpu="H100", progress=False)
    with pytest.raises(MatmulError, match="MI250X .CDNA2. has no v_mfma taking e4m3fnuz"):
        tcprobe.matmul(a, b, gpu="MI250X", progress=False)


def test_smoke_refuses_a_format_the_device_lacks_and_runs_amd():
    from tcprobe.devices.sim import SimDevice
    from tcprobe.smoke import families_of

    one_error(invoke("smoke", "--device", "sim:mi300x", "--format", "e4m3", "--no-sass",
                     "--cases", "100"), "--format: sim:mi300x runs no e4m3 datapath")
    assert [dp.id for dp in families_of(SimDevice.builtin("mi300x"), "bf16")] == [
        "mfma.bf16.f32.k16"]
    assert [dp.id for dp in families_of(SimDevice.builtin("v100"), "f16")] == ["mma.f16.f32.k4"]


def test_fit_gemm_runs_on_an_amd_gpu(tmp_path, ab):
    d = tmp_path / "d.npy"
    assert invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "MI300X",
                  "--out", d).exit_code == 0
    r = invoke("fit-gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--d", d, "--gpu", "MI300X")
    assert r.exit_code == 0, r.output
    assert "on MI300X" in r.output and "instr=mfma" in r.output


# ---------------------------------------------------------------------------
# run-case: scales and masks on datapaths without them; unknown model names.


@pytest.mark.parametrize("extra,needle", [
    (["--scale-a", "1"], "--scale-a: mma.bf16.f32.k16 takes no block scales"),
    (["--scale-b", "1"], "--scale-b: mma.bf16.f32.k16 takes no block scales"),
    (["--active", "0,1"], "--active: mma.bf16.f32.k16 is dense"),
])
def test_run_case_refuses_scales_and_masks_a_datapath_lacks(extra, needle):
    one_error(invoke("run-case", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100",
                     "--a", "1", "--b", "1", *extra), needle)


def test_an_unknown_model_beside_a_known_one_is_refused(tmp_path):
    one_error(invoke("run-case", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100",
                     "--a", "1", "--b", "1", "--model", "h100", "--model", "nope"),
              "unknown model 'nope'")
    out = tmp_path / "v"
    one_error(invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100",
                     "--cases", "100", "--model", "h100", "--model", "nope", "--out", out),
              "unknown model 'nope'")
    assert not out.exists()


def test_score_refuses_an_unknown_model_beside_a_known_one(tmp_path):
    out = tmp_path / "v"
    r = invoke("validate", "--datapath", "mma.bf16.f32.k16", "--device", "sim:h100",
               "--cases", "100", "--suite", "raw", "--shrink", "0", "--out", out)
    assert r.exit_code in (0, 1), r.output
    one_error(invoke("score", "--capture", out / "capture.tcap", "--model", "h100",
                     "--model", "nope"), "unknown model 'nope'")


# ---------------------------------------------------------------------------
# Numbers: numpy integers are counts; an alpha that rounds to 0 is refused.


def test_numpy_integers_are_counts():
    a = np.ones((8, 32), np.float16)
    b = np.ones((32, 8), np.float16)
    for d in (tcprobe.matmul(a, b, gpu="H100", split_k=np.int64(2), progress=False),
              tcprobe.matmul(a, b, gpu="H100", schedule={"split_k": np.int32(2)},
                             progress=False)):
        assert d.dtype == np.float32 and (d == 32.0).all()


def test_an_alpha_or_beta_that_underflows_f32_is_refused(ab):
    a = np.ones((4, 32), np.float16)
    b = np.ones((32, 4), np.float16)
    for x in (1e-50, -1e-46):
        with pytest.raises(MatmulError, match="underflows f32 to zero"):
            tcprobe.matmul(a, b, gpu="H100", alpha=x, progress=False)
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100",
                     "--beta", "1e-60"), "--beta: 1e-60 underflows f32 to zero")
    one_error(invoke("fit-gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--d", ab / "d.npy",
                     "--gpu", "H100", "--alpha", "1e-60"), "alpha: 1e-60 underflows f32")
    # the smallest subnormal is a word, not zero: 32 * 2^-149 = 2^-144, word 0x20
    d = tcprobe.matmul(a, b, gpu="H100", alpha=2.0 ** -149, progress=False)
    assert (d.view(np.uint32) == 0x20).all()


# ---------------------------------------------------------------------------
# tcprobe.torch: instr= through the ISA gate; Report's flags; f32 scalars.


@pytest.mark.parametrize("gpu,instr,needle", [
    ("H100", "mma.bf16.f32.k7", "K 8 or 16, not 7"),
    ("A100", "mma.e4m3.f32.k32", "sm_80 has no fp8 mma.sync"),
    ("MI300X", "mfma.f16.f32.k15", "has no v_mfma running mfma.f16.f32.k15"),
])
def test_emulate_refuses_an_instruction_the_gpu_lacks_at_once(gpu, instr, needle):
    tt = pytest.importorskip("tcprobe.torch")
    with pytest.raises(ValueError, match=needle):
        tt.emulate(gpu=gpu, instr=instr)


@pytest.mark.parametrize("kw", [{"compare": "yes"}, {"record": 1}])
def test_report_flags_are_booleans(kw):
    tt = pytest.importorskip("tcprobe.torch")
    with pytest.raises(ValueError, match=f"Report: {next(iter(kw))} must be True or False"):
        tt.Report(**kw)


def test_emulate_hands_the_library_f32_scalars():
    torch = pytest.importorskip("torch")
    import tcprobe.torch as tt

    a = torch.ones(8, 32, dtype=torch.bfloat16)
    b = torch.ones(32, 8, dtype=torch.bfloat16)
    c = torch.full((8, 8), 0.5, dtype=torch.bfloat16)
    rep = tt.Report()
    with tt.emulate(gpu="H100", schedule="cublas", report=rep, strict=True):
        tiny = torch.addmm(c, a, b, alpha=1e-50)  # f32(1e-50) = 0: D = C
        huge = torch.addmm(c, a, b, alpha=1e39)  # f32(1e39) = inf: D = inf
    assert torch.equal(tiny, c) and torch.isposinf(huge).all()
    assert rep.fallbacks == [] and rep.ops["addmm"].routed == 2


@pytest.mark.parametrize("cmd", [["replay", "--device", "sim:mi300x"], ["score"]])
def test_amd_vectors_are_refused_by_name(cmd):
    from pathlib import Path

    vectors = Path(__file__).parent / "data" / "vectors" / "mmasim-amd.jsonl"
    one_error(invoke(*cmd, "--capture", vectors), "an AMD v_mfma vector (mfma.f32.f32.k2)",
              "family mfma are not read")


@pytest.mark.parametrize("gpu,kw,needle", [
    ("MI300X", {"schedule": {"instr": "mma", "split_k": 2}}, "MI300X has no 'mma' (it has mfma)"),
    ("MI300X", {"schedule": "deepgemm-fp8"}, "MI300X has no 'wgmma'"),
    ("A100", {"schedule": {"instr": "wgmma"}}, "A100 has no 'wgmma'"),
    ("H100", {"instr": "mma", "schedule": {"instr": "wgmma"}},
     "instr: 'mma' differs from the schedule's 'wgmma'"),
])
def test_emulate_refuses_a_schedule_whose_instruction_cannot_run(gpu, kw, needle):
    tt = pytest.importorskip("tcprobe.torch")
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        tt.emulate(gpu=gpu, **kw)


@pytest.mark.parametrize("dtype", ["e4m3", "f64"])
def test_an_output_type_no_instruction_writes_is_refused_before_the_ladder(dtype):
    # exit 3 (an internal error) before: the ladder ran bf16 -> e4m3 and broke
    one_error(invoke("ladder", "--format", "bf16", "--device", "sim:h100", "--dtype", dtype),
              f"--dtype {dtype}: wgmma bf16 writes D in f32, not {dtype}")


@pytest.mark.parametrize("cmd,needle", [
    (["ladder", "--format", "bf16", "--device", "sim:h100", "--steps", " , "],
     "--steps names no step"),
    (["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100",
      "--sparse-lanes", ""], "--sparse-lanes names no count"),
])
def test_a_list_naming_nothing_is_never_everything(tmp_path, cmd, needle):
    extra = ["--out", tmp_path / "v"] if cmd[0] == "validate" else []
    one_error(invoke(*cmd, *extra), needle)
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("table,needle", [
    ('design = "fma"\nwindow = 24\n', "window: design fma has no window (it reads none)"),
    ('design = "exact"\nblock = 4\nwindow2 = 30\n', "window2: design exact has no window2"),
])
def test_an_amd_profile_key_its_design_does_not_read_is_refused(tmp_path, table, needle):
    toml = tmp_path / "amd.toml"
    toml.write_text(f'gpu = "MI300X"\nfamilies = ["mfma"]\n[mfma]\n{table}')
    one_error(invoke("run-case", "--datapath", "mfma.f16.f32.k16", "--device", f"sim:{toml}",
                     "--a", "1", "--b", "1"), "[mfma]", needle)


def test_instr_mfma_is_a_family_the_gpu_gate_judges(ab):
    # wrongly refused before on an AMD GPU ("neither a family ... nor a datapath id")
    r = invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "MI300X",
               "--instr", "MFMA")
    assert r.exit_code == 0, r.output
    assert "MI300X: mfma.f16.f32.k16" in r.output
    one_error(invoke("gemm", "--a", ab / "a.npy", "--b", ab / "b.npy", "--gpu", "H100",
                     "--instr", "mfma"), "instr: H100 has no mfma (an AMD CDNA instruction")
    r = invoke("run-case", "--format", "f16", "--instr", "mfma", "--a", "0x3c00", "--b", "0x3c00")
    assert r.exit_code == 0, r.output  # no --device: the newest AMD sim device runs it
    assert "sim:mi300x" in r.output and "0x3f800000" in r.output
    one_error(invoke("run-case", "--format", "f16", "--instr", "mfma", "--device", "sim:h100",
                     "--a", "1", "--b", "1"), "sim:h100 does not run mfma (it runs mma, wgmma)")


def test_sass_check_points_mfma_to_mfma_check():
    one_error(invoke("sass-check", "--instr", "mfma"), "--instr", "tcprobe mfma-check checks it")


def test_dot_takes_a_scalar_c_for_every_case():
    # refused before ("c has 1 words but there are 3 cases"); the doc says "(cases,) or a scalar"
    a = np.full((3, 16), 0x3C00, np.uint16)  # f16 1.0: 16 products of 1, plus C = 1.0
    d = tcprobe.dot(a, a, 0x3F800000, datapath="mma.f16.f32.k16", gpu="H100")
    assert d.tolist() == [0x41880000] * 3  # 17.0
    with pytest.raises(MatmulError, match="c has 2 words but there are 3 cases"):
        tcprobe.dot(a, a, [0, 0], datapath="mma.f16.f32.k16", gpu="H100")


@pytest.mark.parametrize("command", [["validate", "--format", "bf16", "--device", "sim:b200"],
                                     ["ladder", "--format", "bf16"], ["smoke"], ["gemm-probe"],
                                     ["gemm", "--random", "8x8x16", "--format", "bf16",
                                      "--gpu", "H100"]])
def test_every_seed_option_refuses_a_negative_seed(command):
    from click.testing import CliRunner

    from tcprobe.cli import main

    r = CliRunner().invoke(main, [*command, "--seed", "-1"])
    assert r.exit_code == 2 and "--seed" in r.output and "-1" in r.output


@pytest.mark.parametrize("gpu, instr", [("H100", "mma"), ("H100", "wgmma"), ("A100", None),
                                        ("B200", None)])
def test_signed_and_unsigned_integers_mix_as_ptx_allows(gpu, instr):
    """PTX's mma.sync/mma.sp take .atype and .btype each in {.u8, .s8} (or
    each in {.u4, .s4}) and wgmma each in {.s8, .u8}: a uint8 x int8
    product is the exact integer product (no s32 overflow here)."""
    import tcprobe

    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (16, 64)).astype(np.uint8)
    b = rng.integers(-128, 128, (64, 24)).astype(np.int8)
    want = a.astype(np.int64) @ b.astype(np.int64)
    for x, y, exact in ((a, b, want), (b.T.copy(), a.T.copy(), want.T)):
        d = tcprobe.matmul(x, y, gpu=gpu, instr=instr)
        assert d.dtype == np.int32 and np.array_equal(d.astype(np.int64), exact)


def test_a_mix_no_instruction_takes_is_still_refused():
    import tcprobe
    from tcprobe.matrix.operands import MatmulError

    four = np.zeros((2, 64), np.uint8)
    with pytest.raises(MatmulError, match="wgmma takes no u4 inputs"):
        tcprobe.dot(four, four, np.zeros(2, np.uint32), datapath="wgmma.u4.u4xs4.s32.k64",
                    gpu="H100")
    with pytest.raises(MatmulError, match="not u8xs4"):
        tcprobe.dot(four[:, :32], four[:, :32], np.zeros(2, np.uint32),
                    datapath="mma.u8.u8xs4.s32.k32", gpu="H100")
