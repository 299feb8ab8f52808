"""Campaign 12 (docs/campaign-12.md): the AMD surfaces' broken cases, as
exact words, error lines and exceptions. Words are worked out by hand:
sixteen products of ones sum to 16.0 = 2^4, which is 0x41800000 in f32,
0x60 in e4m3fnuz (bias 8: exponent field 12, 0 1100 000), 0x50 in e5m2fnuz
(bias 16: exponent field 20, 0 10100 00) and 0xD0 for -16 in e5m2fnuz;
0.5 is 0x38 in e4m3fnuz (exponent field 7 = 8 - 1), so 32 products of
0.5 x 0.5 sum to 8.0 (0x41000000) and 16 x 2 x 2 scales that to 32."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from cli_helpers import invoke, one_error

import tcprobe
from tcprobe.matrix.operands import MatmulError

try:
    import torch
except ImportError:  # pragma: no cover - the torch tests skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

ONES_A = np.ones((8, 16), np.float16)
ONES_B = np.ones((16, 8), np.float16)


def _bytes(d) -> set[int]:
    return set(np.asarray(d).view(np.uint8).ravel().tolist())


# ---------------------------------------------------------------------------
# an fp8 D in the GPU's own fp8 family (was: MI300X wrote OCP e4m3, which CDNA3
# has no conversion to, and e4m3fnuz was no output type at all)


def test_mi300x_writes_fnuz_fp8():
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", dtype="e4m3fnuz")
    assert d.dtype == ml_dtypes.float8_e4m3fnuz and _bytes(d) == {0x60}
    d = tcprobe.matmul(-ONES_A, ONES_B, gpu="MI300X", dtype=ml_dtypes.float8_e5m2fnuz)
    assert d.dtype == ml_dtypes.float8_e5m2fnuz and _bytes(d) == {0xD0}
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", dtype="E5M2FNUZ")
    assert _bytes(d) == {0x50}


@pytest.mark.parametrize("gpu, dtype, needle", [
    ("MI300X", "e4m3", "give e4m3fnuz"), ("MI300X", "e5m2", "give e5m2fnuz"),
    ("MI250X", "e4m3fnuz", r"MI250X \(CDNA2\) has no fp8"), ("MI100", "e5m2fnuz", "has no fp8"),
    ("H100", "e4m3fnuz", "H100 writes OCP e4m3"),
])
def test_an_fp8_d_outside_the_gpus_family_is_refused(gpu, dtype, needle):
    with pytest.raises(MatmulError, match=needle):
        tcprobe.matmul(ONES_A, ONES_B, gpu=gpu, dtype=dtype)


def test_nvidia_still_writes_ocp_e4m3():
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="H100", dtype="e4m3")
    assert d.dtype == ml_dtypes.float8_e4m3fn and _bytes(d) == {0x58}  # 16 = 2^4: 0 1011 000


def test_gemm_dtype_fnuz_and_its_refusals(tmp_path):
    a, b, out = tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "d.npy"
    np.save(a, np.ones((8, 16), np.float32))
    np.save(b, np.ones((16, 8), np.float32))
    r = invoke("gemm", "--a", a, "--b", b, "--gpu", "MI300X", "--dtype", "e4m3fnuz", "--out", out)
    assert r.exit_code == 0, r.output
    assert _bytes(np.load(out)) == {0x60}
    for gpu, dtype, extra, needle in (("MI300X", "e4m3", (), "--dtype: MI300X's fp8 is AMD's fnuz"),
                                      ("H100", "e5m2fnuz", (), "--dtype: e5m2fnuz is AMD's fp8"),
                                      ("MI300X", "e4m3fnuz", ("--compare", "H100"), "H100 writes OCP")):
        out.unlink(missing_ok=True)
        one_error(invoke("gemm", "--a", a, "--b", b, "--gpu", gpu, "--dtype", dtype, *extra,
                         "--out", out), needle)
        assert not out.exists()


# ---------------------------------------------------------------------------
# --random draws MI300X's fnuz fp8 (was refused); --format's errors name --format


def test_random_draws_fnuz(tmp_path):
    out = tmp_path / "d.npy"
    r = invoke("gemm", "--random", "8x8x40", "--format", "e4m3fnuz", "--gpu", "MI300X", "--out", out)
    assert r.exit_code == 0, r.output
    assert "mfma.fp8.e4m3fnuz.f32" in r.output
    assert np.load(out).shape == (8, 8)
    one_error(invoke("gemm", "--random", "8x8x40", "--format", "e4m3", "--gpu", "MI300X"),
              "no v_mfma taking e4m3 x e4m3")


def test_format_errors_name_format(tmp_path):
    a = tmp_path / "a.npy"
    np.save(a, np.full((8, 32), 0x38, np.uint8))
    line = one_error(invoke("gemm", "--a", a, "--b", a, "--gpu", "MI300X", "--format", "fp8"),
                     "unknown format 'fp8'")
    assert line.startswith("error: --format:"), line
    line = one_error(invoke("gemm", "--a", a, "--b", a, "--gpu", "MI300X", "--format", "e4m3fnuz",
                            "--a-format", "fp8"), "unknown format 'fp8'")
    assert line.startswith("error: --a-format:"), line


def test_fnuz_raw_words_multiply_by_hand(tmp_path):
    a, b, out = tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "d.npy"
    np.save(a, np.full((8, 32), 0x38, np.uint8))  # 0.5
    np.save(b, np.full((32, 8), 0x38, np.uint8))
    r = invoke("gemm", "--a", a, "--b", b, "--format", "e4m3fnuz", "--gpu", "MI300X", "--out", out)
    assert r.exit_code == 0, r.output
    assert set(np.load(out).view(np.uint32).ravel().tolist()) == {0x41000000}


# ---------------------------------------------------------------------------
# emulate routes MI300X's fnuz _scaled_mm (was: a fallback saying "_scaled_mm
# routes fp8 operands, not torch.float8_e4m3fnuz")


def _half_fp8(dt_a, dt_b):
    a = torch.full((16, 32), 0.5).to(dt_a)
    b = torch.full((32, 16), 0.5).to(dt_b).t().contiguous().t()
    return a, b


@needs_torch
def test_emulate_routes_fnuz_scaled_mm():
    from tcprobe.torch import Report, emulate

    a, b = _half_fp8(torch.float8_e4m3fnuz, torch.float8_e4m3fnuz)
    rep = Report()
    with emulate("MI300X", report=rep, strict="routes"):
        d = torch._scaled_mm(a, b, scale_a=torch.tensor(2.0), scale_b=torch.tensor(2.0),
                             out_dtype=torch.float32)
    assert rep.routed == 1 and not rep.fallbacks
    assert set(d.view(torch.int32).flatten().tolist()) == {0x42000000}  # 32.0
    a, b = _half_fp8(torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)  # 0.5 x 0.5 in e5m2fnuz too
    rep = Report()
    with emulate("MI300X", report=rep):
        d = torch._scaled_mm(a, b, scale_a=torch.tensor(1.0), scale_b=torch.tensor(1.0),
                             out_dtype=torch.bfloat16)
    assert rep.routed == 1 and d.dtype == torch.bfloat16
    assert set(d.view(torch.int16).flatten().tolist()) == {0x4100}  # 8.0 in bf16


@needs_torch
def test_emulate_names_the_fp8_a_gpu_lacks():
    from tcprobe.torch import Report, emulate

    for gpu, dt in (("MI300X", torch.float8_e4m3fn), ("H100", torch.float8_e4m3fnuz)):
        a, b = _half_fp8(dt, dt)
        with pytest.raises(ValueError, match="e4m3"):
            with emulate(gpu, report=Report(), strict="routes"):
                torch._scaled_mm(a, b, scale_a=torch.tensor(1.0), scale_b=torch.tensor(1.0),
                                 out_dtype=torch.float32)


# ---------------------------------------------------------------------------
# fit-gemm reads an fnuz D (was: "D in e4m3fnuz is no GEMM output"), and refuses
# an OCP e4m3 D on MI300X (was: fnuz words read as OCP's, fitted, exit 1)


def test_fit_gemm_takes_an_fnuz_d(tmp_path):
    # A of 0.5 (0x38), B of 1.0 (0x40: exponent field 8 = bias): 32 products sum to 16,
    # written 0x60 in e4m3fnuz, which the MI300X fnuz design reproduces
    a, b, d = tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "d.npy"
    np.save(a, np.full((8, 32), 0x38, np.uint8))
    np.save(b, np.full((32, 8), 0x40, np.uint8))
    np.save(d, np.full((8, 8), 0x60, np.uint8))
    r = invoke("fit-gemm", "--a", a, "--b", b, "--format", "e4m3fnuz", "--d", d, "--d-format",
               "e4m3fnuz", "--gpu", "MI300X")
    assert r.exit_code == 0, r.output
    one_error(invoke("fit-gemm", "--a", a, "--b", b, "--format", "e4m3fnuz", "--d", d,
                     "--d-format", "e4m3", "--gpu", "MI300X"), "d: MI300X's fp8 is AMD's fnuz")
    d = tcprobe.matmul(ONES_A, ONES_B, gpu="MI300X", schedule={"out": "e4m3fnuz"})
    assert _bytes(d) == {0x60}


# ---------------------------------------------------------------------------
# Ctrl-C that lands in a C extension's import (seen in the reruns: 1 of 25 tries at
# 0.35-0.75 s into `python -m tcprobe gemm`, numpy's import_array turned the
# KeyboardInterrupt into "ImportError: numpy._core.multiarray failed to import",
# which ended as an internal error, exit 3): the command line ends it as Ctrl-C


def test_an_error_a_ctrl_c_became_ends_as_ctrl_c(monkeypatch):
    import tcprobe.console as console
    from tcprobe import startsignal

    def boom(*a, **k):
        raise ImportError("numpy._core.multiarray failed to import")
    monkeypatch.setattr(console, "heartbeat_wanted", boom)  # cli imports it per command
    r = invoke("targets")
    assert r.exit_code == 3, r.output  # no Ctrl-C: the internal error it is
    monkeypatch.setattr(startsignal, "HEARD", True)
    r = invoke("targets")
    assert r.exit_code == 130, r.output
    assert [ln for ln in r.output.splitlines() if ln.strip()][-1] == "interrupted"
    assert "internal error" not in r.output
