"""Issue 36, AMD: one gate for every surface, MMA-Sim's NaN words on CDNA2,
``validate`` on a device whose NaN words depend on the batch.

The gate: ``tcprobe.dot``, ``tcprobe.matmul`` and ``tcprobe gemm`` refuse
what ``--device sim:mi300x`` refuses (a K no v_mfma has, an f16 D, OCP fp8
on CDNA3, f16 operands under an xf32 instruction): the GPU's profile
(models/amd_profiles.model_for) accepts only a datapath some v_mfma of its
generation runs, types and K included.

The NaN words on CDNA2 (MMA-Sim 2.1.1's ``MMA_FTZ_MUL_ADD``: f32 products
and pair sums on torch's CPU float kernels): of two NaN operands the second
comes out, quieted (each product b's before a's, each sum the right
operand's: c + s gives s's). The words below were read off MMA-Sim 2.1.1 in
this repository's environment (bf16 K=2, the same in a batch of 1 and of
64)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import tcprobe
from tcprobe.cli import main
from tcprobe.devices.registry import open_device
from tcprobe.matrix.operands import MatmulError
from tcprobe.models import amd_profiles, isa_amd
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

REFUSED = ["mfma.f16.f32.k15", "mfma.f16.f32.k1024", "mfma.f16.f16.k16",
           "mfma.fp8.e4m3.f32.k32", "mfma.fp8.e4m3.f32.k16", "mfma.xf32.f16.f32.k8",
           "mfma.bf16_1k.bf16.f32.k16"]  # CDNA2's _1k: not on CDNA3


@pytest.mark.parametrize("dp_id", REFUSED)
def test_every_surface_refuses_what_the_sim_device_refuses(dp_id, tmp_path):
    dp = Datapath.parse(dp_id)
    assert not open_device("sim:mi300x").supports(dp)
    z = np.zeros((1, dp.k), np.uint32)
    with pytest.raises(MatmulError, match="MI300X \\(CDNA3\\) has no v_mfma"):
        tcprobe.dot(z, z, np.zeros(1, np.uint32), datapath=dp_id, gpu="MI300X")
    a = np.zeros((4, 64), np.float16)  # refused by the gate, or first for A's format
    with pytest.raises(MatmulError, match="MI300X \\(CDNA3\\) has no v_mfma|^A: .* takes"):
        tcprobe.matmul(a, a.T.copy(), gpu="MI300X", instr=dp_id)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a.T.copy())
    r = CliRunner().invoke(main, ["gemm", "--gpu", "MI300X", "--instr", dp_id, "--a",
                                  str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy")])
    assert r.exit_code == 2 and r.stderr.strip().startswith("error: ")
    assert "has no v_mfma" in r.stderr or " takes " in r.stderr


def test_the_gate_takes_every_instruction_of_the_table():
    for gpu, arch in (("MI100", "CDNA1"), ("MI250X", "CDNA2"), ("MI300X", "CDNA3")):
        for ins in isa_amd.instructions(arch):
            assert amd_profiles.model_for(amd_profiles.datapath(ins), gpu).datapath.k == ins.k


def test_a_kind_of_another_generation_keeps_its_message():
    with pytest.raises(ValueError, match="MI100 \\(CDNA1\\) has no v_mfma of kind xf32"):
        amd_profiles.model_for(Datapath.parse("mfma.xf32.tf32.f32.k8"), "MI100")


def test_matmul_refuses_operands_of_another_format_than_the_amd_instruction():
    import ml_dtypes

    a = np.ones((4, 32), ml_dtypes.float8_e4m3fn)  # OCP e4m3fn words, not e4m3fnuz
    with pytest.raises(MatmulError, match="A: .* takes e4m3fnuz, not e4m3"):
        tcprobe.matmul(a, a.T.copy(), gpu="MI300X", instr="mfma.fp8.e4m3fnuz.f32.k32")


# ---------------------------------------------------------------------------
# CDNA2 NaN words: MMA-Sim 2.1.1's, read off it (module doc)

N1, N2 = 0x7F81, 0xFFC3  # bf16: a signalling NaN of payload 1; a negative quiet NaN
ONE, INF = 0x3F80, 0x7F80


@pytest.mark.parametrize("a,b,c,want", [
    ([N1, ONE], [N2, ONE], 0, 0xFFC30000),  # a NaN x b NaN: b's
    ([N2, ONE], [N1, ONE], 0, 0x7FC10000),
    ([N1, ONE], [ONE, N2], 0, 0xFFC30000),  # p0 NaN + p1 NaN: p1's
    ([N2, ONE], [ONE, N1], 0, 0x7FC10000),
    ([N1, ONE], [ONE, ONE], 0x7FC00005, 0x7FC10000),  # C NaN + s NaN: s's
    ([INF, N1], [0, ONE], 0, 0x7FC10000),  # Inf*0 (default NaN) + p1 NaN: p1's
    ([N1, INF], [ONE, 0], 0, 0xFFC00000),  # p0 NaN + Inf*0: the default NaN
    ([INF, ONE], [0, ONE], 0x7FC00005, 0xFFC00000),  # C NaN + Inf*0: the default NaN
    ([INF, INF | 0x8000], [ONE, ONE], 0, 0xFFC00000),  # Inf - Inf
])
def test_cdna2_nan_words_are_mmasims(a, b, c, want):
    dp = Datapath.parse("mfma.bf16.f32.k2")
    got = amd_profiles.model_for(dp, "MI250X").evaluate(
        Cases(np.array([a], np.uint32), np.array([b], np.uint32), np.array([c], np.uint32)))
    assert int(got[0]) == want, hex(int(got[0]))


@pytest.mark.peer
@pytest.mark.usefixtures("mmasim_peer")
@pytest.mark.parametrize("suffix", ["f32_32x32x2bf16", "f32_16x16x8bf16", "f32_32x32x4f16",
                                    "f32_16x16x16f16", "f32_16x16x16bf16_1k"])
def test_cdna2_special_heavy_words_match_mmasim(suffix):
    """Special-heavy batches (NaNs of both signs and payloads, Infs, zeros):
    every word MMA-Sim 2.1.1 gives, NaNs included."""
    ins = isa_amd.parse("CDNA2", suffix)
    dp = amd_profiles.datapath(ins)
    rng = np.random.default_rng(3)
    sp16 = {"f16": [0x7C00, 0xFC00, 0x7C01, 0xFE01, 0x7E00, 0x7FFF, 0, 0x8000, 0x3C00, 1],
            "bf16": [0x7F80, 0xFF80, 0x7F81, 0xFFC1, 0x7FC0, 0x7FFF, 0, 0x8000, 0x3F80, 1]}
    n = 400
    a = rng.choice(np.array(sp16[dp.a_type], np.uint32), (n, dp.k))
    b = rng.choice(np.array(sp16[dp.a_type], np.uint32), (n, dp.k))
    c = rng.choice(np.array([0x7FC00000, 0xFFC12345, 0x7F800001, 0, 0x80000000, 0x3F800000,
                             0x7F800000], np.uint32), n)
    cases = Cases(a, b, c)
    want = open_device(f"mmasim:CDNA2:v_mfma_{suffix}").run(dp, cases)
    got = amd_profiles.model_for(dp, "MI250X").evaluate(cases)
    assert np.array_equal(got, want), int((got != want).sum())


# ---------------------------------------------------------------------------
# validate on MMA-Sim's CDNA1 f16: a mismatch that does not recur alone


@pytest.mark.peer
@pytest.mark.usefixtures("mmasim_peer")
def test_validate_on_batch_dependent_nan_words_exits_1_not_3(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--device", "mmasim:CDNA1:v_mfma_f32_16x16x16f16",
                                  "--cases", "1000", "--out", str(tmp_path / "v"),
                                  "--suite", "edge"])
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.output
    assert "does not mismatch when run alone" in r.output


# ---------------------------------------------------------------------------
# custom AMD sim profiles (TOML): [mfma], gpu = an AMD GPU, nothing NVIDIA


def _toml(tmp_path, text):
    p = tmp_path / "p.toml"
    p.write_text(text)
    return str(p)


def test_a_custom_amd_profile_runs_its_design(tmp_path):
    dev = open_device("sim:" + _toml(tmp_path, 'name = "mine"\ngpu = "MI300X"\n'
                                    'families = ["mfma"]\n[mfma]\ndesign = "truncated"\n'
                                    "block = 4\nwindow = 24\nwindow2 = 31\n"))
    dp = dev.datapath("mfma", "f16")
    assert dp.id == "mfma.f16.f32.k16" and dev.families == ("mfma",)
    # a case where L = 4 and L = 8 blocks round apart (found by a search over
    # random words; models/amd.py _truncated): the profile's block runs
    a = np.array([[0, 0, 0, 0x48B5, 0, 0, 0, 0, 0x6A7D, 0, 0, 0, 0, 0x79EE, 0, 0]], np.uint32)
    b = np.array([[0x17D9, 0x3811, 0xFA3, 0x4065, 0xB17, 0x10B3, 0x5B95, 0x7ACB, 0x756, 0x2D14,
                   0x9BF, 0x6892, 0x7277, 0x2063, 0x581A, 0x6AB]], np.uint32)
    c = np.array([0x2C782F3E], np.uint32)
    mine = dev.profile.model(dp).evaluate(Cases(a, b, c))
    stock = amd_profiles.model_for(dp, "MI300X").evaluate(Cases(a, b, c))
    assert int(stock[0]) == 0x43DA9F9D  # MI300X: L = 8
    assert int(mine[0]) == 0x43DA9F9E  # the profile: L = 4
    assert not dev.supports(Datapath.parse("mfma.f16.f32.k15"))
    assert not dev.supports(Datapath.parse("wgmma.f16.f32.k16"))


def test_an_amd_gpu_without_a_design_runs_its_own_profile(tmp_path):
    dev = open_device("sim:" + _toml(tmp_path, 'gpu = "MI250X"\n'))
    dp = dev.datapath("mfma", "bf16")
    assert dev.families == ("mfma",)
    assert dev.profile.model(dp).params == amd_profiles.model_for(dp, "MI250X").params


@pytest.mark.parametrize("text,needle", [
    ('gpu = "MI300X"\nwindow_bits = 25\n', "not engine keys"),
    ('gpu = "MI300X"\nfamilies = ["mma", "mfma"]\n', "runs mfma, not mma"),
    ('gpu = "H100"\nfamilies = ["mfma"]\n', "names its AMD GPU"),
    ('families = ["mfma"]\n', "names its AMD GPU"),
    ('gpu = "MI300X"\n[mfma]\ndesign = "exact"\n', "needs block"),
    ('gpu = "MI300X"\n[mfma]\ndesign = "ftz"\nblock = 3\n', "ftz sums pairs"),
    ('gpu = "MI300X"\n[mfma]\ndesign = "wide"\n', "design"),
    ('gpu = "MI300X"\n[format.f16]\nwindow_bits = 25\n', "one table, [mfma]"),
])
def test_a_mixed_or_bad_amd_profile_is_one_error(tmp_path, text, needle):
    r = CliRunner().invoke(main, ["validate", "--device", "sim:" + _toml(tmp_path, text),
                                  "--format", "f16", "--cases", "10", "--out",
                                  str(tmp_path / "v")])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r.stderr
