"""Campaign 13 (docs/campaign-13.md): the broken cases of the AMD path's
edges, the names rule, the atlas, captures, TOML profiles and TCPROBE_DEBUG,
as exact words, error lines and exceptions. Words are worked out by hand:
sixteen products of ones sum to 16.0 = 2^4 (0x41800000 in f32), seventeen to
17.0 = 2^4 + 1 (0x41880000); 0.5 is 0x38 in e4m3fnuz (bias 8: exponent
field 7), so 32 products of 0.5 x 0.5 sum to 8.0 = 2^3 (0x41000000); with
alpha = 1/2 sixteen ones give 8.0 too."""

from __future__ import annotations

import fractions
from decimal import Decimal

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
import tcprobe.atlas as atlas
from tcprobe.matrix.operands import MatmulError

try:
    import torch
except ImportError:  # pragma: no cover - the torch tests skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

W16, W17, W8, W1 = 0x41800000, 0x41880000, 0x41000000, 0x3F800000
ONES_A = np.ones((8, 16), np.float16)
ONES_B = np.ones((16, 8), np.float16)
E4Z = ml_dtypes.float8_e4m3fnuz
MI300X_PROFILE = ('name = "p"\ngpu = " mi300x "\n[mfma]\ndesign = "truncated"\nblock = 8\n'
                  'window = 24\nwindow2 = 31\n')


def _words(d) -> set[int]:
    return set(np.asarray(d, np.float32).view(np.uint32).ravel().tolist())


# ---------------------------------------------------------------------------
# schedule 'auto' under the names rule, for empty products, and for fp8


@pytest.mark.parametrize("name", ["AUTO", " auto ", "Auto\t"])
def test_auto_is_a_name_in_any_case(name):
    a, b = np.ones((8, 17), np.float16), np.ones((17, 8), np.float16)
    assert _words(tcprobe.matmul(a, b, gpu="MI300X", schedule=name)) == {W17}


def test_auto_on_an_empty_product_is_exact_not_refused():
    d = tcprobe.matmul(np.zeros((0, 16), np.float16), ONES_B, gpu="MI300X", schedule="auto",
                       strict_auto=True)
    assert d.shape == (0, 8)
    # K = 0 on H200 (which has an atlas): D = alpha * (+0) + beta * C = C = 1.0, nothing guessed
    d = tcprobe.matmul(np.zeros((8, 0), np.float16), np.zeros((0, 8), np.float16),
                       np.ones((8, 8), np.float32), gpu="H200", schedule="auto", strict_auto=True)
    assert _words(d) == {W1}


def test_auto_takes_fp8_operands_as_the_atlas_scaled_mm():
    a, b = np.full((8, 32), 0.5, E4Z), np.full((32, 8), 0.5, E4Z)
    assert _words(tcprobe.matmul(a, b, gpu="MI300X", schedule="auto")) == {W8}
    e4 = ml_dtypes.float8_e4m3fn
    d = tcprobe.matmul(a.astype(np.float32).astype(e4), b.astype(np.float32).astype(e4),
                       gpu="H200", schedule="auto")
    assert _words(d) == {W8}


def test_auto_on_mixed_fp8_is_a_default_guess_said():
    a = np.full((32, 64), 0.5, ml_dtypes.float8_e4m3fn)
    b = np.full((64, 32), 0.5, ml_dtypes.float8_e5m2)
    assert _words(tcprobe.matmul(a, b, gpu="H200", schedule="auto")) == {W16}  # 64 x 1/4
    with pytest.raises(MatmulError, match="no atlas holds mixed formats"):
        tcprobe.matmul(a, b, gpu="H200", schedule="auto", strict_auto=True)


def test_gemm_schedule_auto_in_upper_case(tmp_path):
    np.save(tmp_path / "a.npy", np.ones((8, 17), np.float16))
    np.save(tmp_path / "b.npy", np.ones((17, 8), np.float16))
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--gpu", "MI300X",
               "--schedule", " AUTO ", "--out", out)
    assert r.exit_code == 0, r.output
    assert _words(np.load(out)) == {W17}


# ---------------------------------------------------------------------------
# atlas.lookup: names in any case; a layout that is no layout refused; fnuz on a
# GPU with no atlas a default guess, said


def test_lookup_reads_names_in_any_case():
    f = atlas.lookup(" h200 ", "MM", " BF16 ", 256, 256, 4096, form=" Plain ", layout="ROW/row")
    assert f.provenance == "measured"


@pytest.mark.parametrize("layout", ["zzz", "row", "col/col/col", "row/diag", 3])
def test_lookup_refuses_a_layout_that_is_none(layout):
    with pytest.raises(atlas.AtlasError, match="layout"):
        atlas.lookup("H200", "gemm", "bf16", 256, 256, 4096, layout=layout)


def test_lookup_of_fnuz_on_mi300x_is_a_default_guess_said():
    f = atlas.lookup("MI300X", "scaled_mm", "e4m3fnuz", 64, 64, 512)
    assert f.provenance == "default guess" and "no atlas for MI300X" in f.describe()
    with pytest.raises(atlas.AtlasError, match="e4m3fnuz"):  # H200's atlas holds no fnuz
        atlas.lookup("H200", "scaled_mm", "e4m3fnuz", 64, 64, 512)


# ---------------------------------------------------------------------------
# jobs and alpha: numpy's integers are integers; Fraction and Decimal are numbers


@pytest.mark.parametrize("jobs", [np.int64(2), np.uint8(3)])
def test_numpy_integer_jobs(jobs):
    assert _words(tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", jobs=jobs)) == {W16}


@pytest.mark.parametrize("jobs", [np.bool_(True), True, 0, -1, 2.5])
def test_jobs_that_are_no_count_are_refused(jobs):
    with pytest.raises(MatmulError, match="jobs must be a positive integer"):
        tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", jobs=jobs)


@pytest.mark.parametrize("alpha", [fractions.Fraction(1, 2), Decimal("0.5")])
def test_exact_fraction_and_decimal_alpha(alpha):
    assert _words(tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", alpha=alpha)) == {W8}


@pytest.mark.parametrize("alpha", [fractions.Fraction(1, 3), Decimal("0.1"), Decimal("sNaN"),
                                   fractions.Fraction(10 ** 400)])
def test_a_fraction_no_float_holds_is_refused_not_rounded_twice(alpha):
    with pytest.raises(MatmulError, match="is no binary float"):
        tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", alpha=alpha)


def test_complex_alpha_is_no_real_number():
    with pytest.raises(MatmulError, match="must be a number"):
        tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", alpha=complex(2, 0))


# ---------------------------------------------------------------------------
# an AMD TOML profile's gpu under the names rule (was: refused by run-case, an
# internal error, exit 3, in ladder)


def test_toml_gpu_with_white_space(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(MI300X_PROFILE)
    r = invoke("run-case", "--device", f"sim:{p}", "--datapath", "mfma.f16.f32.k16",
               "--a", "0x3c00", "--b", "0x3c00", "--c", "0")
    assert r.exit_code == 0, r.output
    assert "0x3f800000" in r.output  # 1.0 x 1.0 = 1.0


@pytest.mark.slow
def test_toml_gpu_with_white_space_runs_the_ladder(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(MI300X_PROFILE)
    r = invoke("ladder", "--format", "f16", "--device", f"sim:{p}", "--validate", "0",
               "--steps", "mfma")
    assert r.exit_code == 0 and "internal error" not in r.output, r.output


# ---------------------------------------------------------------------------
# replay of a v_mfma capture (was: "unknown family 'mfma'", exit 2)


@pytest.mark.slow
def test_replay_of_an_mfma_capture(tmp_path):
    r = invoke("validate", "--format", "f16", "--device", "sim:mi300x", "--cases", "64",
               "--out", tmp_path / "v")
    assert r.exit_code == 0, r.output
    cap = tmp_path / "v" / "capture.tcap"
    r = invoke("replay", "--capture", cap, "--device", "sim:mi300x")
    assert r.exit_code == 0, r.output
    assert "64 cases, 0 differ" in r.output
    # MI250X writes other NaN words than MI300X's 0x7FFFFFFF (docs/amd.md): exit 1, shown
    r = invoke("replay", "--capture", cap, "--device", "sim:mi250x")
    assert r.exit_code == 1 and "recorded 0x7fffffff" in r.output, r.output
    one_error(invoke("replay", "--capture", cap, "--device", "sim:h100"), "runs none")


# ---------------------------------------------------------------------------
# gemm --compare counts NaN against NaN as alike once (was: "0 of 64 elements
# differ", then "in this run, of the 64 elements that differ:")


def test_compare_of_nans_counts_no_difference_twice(tmp_path):
    np.save(tmp_path / "a.npy", np.full((8, 16), np.inf, np.float16))
    np.save(tmp_path / "b.npy", np.zeros((16, 8), np.float16))
    r = invoke("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--gpu", "MI300X",
               "--compare", "MI250X", "--verdict-seconds", "0")
    assert r.exit_code == 0, r.output
    assert "0 of 64 elements differ" in r.output
    assert "elements that differ" not in r.output


# ---------------------------------------------------------------------------
# gemm's scale files: their errors name --scale-format, the option there is (was:
# --scale-a-format, which no command has)


def test_scale_file_errors_name_scale_format(tmp_path):
    e4 = ml_dtypes.float8_e4m3fn
    np.save(tmp_path / "a.npy", np.ones((8, 32), e4))
    np.save(tmp_path / "b.npy", np.ones((32, 8), e4))
    np.save(tmp_path / "sa16.npy", np.ones((8, 1), np.float16))
    np.save(tmp_path / "sa.npy", np.ones((8, 1), ml_dtypes.float8_e8m0fnu))
    np.save(tmp_path / "sb.npy", np.ones((1, 8), ml_dtypes.float8_e8m0fnu))
    base = ("gemm", "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy", "--format", "e4m3",
            "--gpu", "B200", "--scale-b", tmp_path / "sb.npy")
    line = one_error(invoke(*base, "--scale-a", tmp_path / "sa16.npy", "--scale-format", "ue8m0"),
                     "--scale-format:", "not raw words")
    assert "--scale-a-format" not in line
    line = one_error(invoke(*base, "--scale-a", tmp_path / "sa.npy"),
                     "give --scale-format (ue8m0, ue4m3)")
    assert "--scale-a-format" not in line


# ---------------------------------------------------------------------------
# TCPROBE_DEBUG: a value neither on nor off is refused (was: read as on, so every
# bad input printed a traceback)


@pytest.mark.parametrize("value", ["maybe", "2", "\u00e9"])
def test_tcprobe_debug_misspelt_is_refused(monkeypatch, value):
    monkeypatch.setenv("TCPROBE_DEBUG", value)
    r = invoke("gemm", "--random", "8x8x16", "--format", "f16", "--gpu", "MI300X", "--dtype",
               "nope")
    one_error(r, "TCPROBE_DEBUG=", "neither off", "nor on")


@pytest.mark.parametrize("value", [" OFF ", "No", "0"])
def test_tcprobe_debug_off_in_any_case(monkeypatch, value):
    monkeypatch.setenv("TCPROBE_DEBUG", value)
    r = invoke("gemm", "--random", "8x8x16", "--format", "f16", "--gpu", "MI300X", "--dtype",
               "nope")
    one_error(r, "--dtype", "nope")


# ---------------------------------------------------------------------------
# emulate: an f64 product's fallback says what is not modelled (was: "no
# tensor-core GEMM here", untrue of A100, H100, MI250X and MI300X, whose f64
# instructions tcprobe.dot models)


@needs_torch
def test_f64_fallback_names_what_is_unmodelled():
    from tcprobe.torch import Report, emulate

    rep = Report()
    x = torch.ones(8, 16, dtype=torch.float64)
    with emulate("MI300X", report=rep):
        d = x @ x.t()
    assert (d == 16).all() and rep.routed == 0
    why = str(rep.fallbacks)
    assert "models no tensor-core GEMM" in why and "one instruction at a time" in why
    # which is so: v_mfma_f64 on MI300X, four products of 1.0 = 4.0 (0x4010000000000000)
    one = 0x3FF0000000000000
    x = tcprobe.dot([one] * 4, [one] * 4, 0, datapath="mfma.f64.f64.k4", gpu="MI300X")
    assert int(np.asarray(x).ravel()[0]) == 0x4010000000000000


@needs_torch
@pytest.mark.parametrize("name", ["auto", " AUTO "])
def test_emulate_takes_schedule_auto_as_the_atlas(name):
    from tcprobe.torch import Report, emulate

    rep = Report()
    x = torch.ones(8, 16, dtype=torch.bfloat16)
    with emulate("MI300X", schedule=name, report=rep):
        d = x @ x.t()
    assert (d == 16).all()
    assert rep.rows()[0]["gemms"][0]["provenance"] == "default guess"  # no atlas: said

