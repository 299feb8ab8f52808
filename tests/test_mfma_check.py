"""mfma-check: real LLVM AMDGPU code generation (llvmlite's LLVM), no GPU, no HIP compiler.

The expected mnemonics are written out here as AMD's ISA guides spell them
(CDNA1 "MI100", CDNA2 "MI200", CDNA3 "MI300" instruction set references),
not read from the ISA table under test.
"""

from __future__ import annotations

import json

import pytest
from cli_helpers import one_error
from click.testing import CliRunner

from tcprobe.cli import main
from tcprobe.devices.amd import codegen
from tcprobe.models import isa_amd

pytestmark = pytest.mark.skipif(codegen.backend_missing() is not None,
                                reason=f"no AMDGPU target: {codegen.backend_missing()}")

_REPORTS: dict[str, codegen.TargetReport] = {}


def report(target: str) -> codegen.TargetReport:
    if target not in _REPORTS:
        _REPORTS[target] = codegen.check_target(target)
    return _REPORTS[target]


def found(target: str, suffix: str) -> codegen.Verdict:
    return next(v for v in report(target).verdicts if v.instruction == "v_mfma_" + suffix)


# (target, the table's suffix, the mnemonic in the assembly, LLVM's intrinsic)
SAMPLE = [
    ("gfx908", "f32_32x32x1f32", "v_mfma_f32_32x32x1f32", "llvm.amdgcn.mfma.f32.32x32x1f32"),
    ("gfx908", "f32_16x16x16f16", "v_mfma_f32_16x16x16f16", "llvm.amdgcn.mfma.f32.16x16x16f16"),
    ("gfx908", "f32_4x4x2bf16", "v_mfma_f32_4x4x2bf16", "llvm.amdgcn.mfma.f32.4x4x2bf16"),
    ("gfx90a", "f32_16x16x16bf16_1k", "v_mfma_f32_16x16x16bf16_1k",
     "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"),
    ("gfx90a", "f64_4x4x4f64", "v_mfma_f64_4x4x4f64", "llvm.amdgcn.mfma.f64.4x4x4f64"),
    ("gfx90a", "f32_32x32x8f16", "v_mfma_f32_32x32x8f16", "llvm.amdgcn.mfma.f32.32x32x8f16"),
    ("gfx942", "f32_32x32x1_2b_f32", "v_mfma_f32_32x32x1_2b_f32", "llvm.amdgcn.mfma.f32.32x32x1f32"),
    ("gfx942", "f64_4x4x4_4b_f64", "v_mfma_f64_4x4x4_4b_f64", "llvm.amdgcn.mfma.f64.4x4x4f64"),
    ("gfx942", "f32_16x16x16_bf16", "v_mfma_f32_16x16x16_bf16",
     "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"),
    ("gfx942", "f32_16x16x8_xf32", "v_mfma_f32_16x16x8_xf32", "llvm.amdgcn.mfma.f32.16x16x8.xf32"),
    ("gfx942", "f32_32x32x16_fp8_bf8", "v_mfma_f32_32x32x16_fp8_bf8",
     "llvm.amdgcn.mfma.f32.32x32x16.fp8.bf8"),
]


@pytest.mark.parametrize("target,suffix,mnemonic,intrinsic", SAMPLE)
def test_sampled_strings_compile_to_their_opcode(target, suffix, mnemonic, intrinsic):
    v = found(target, suffix)
    assert (v.intrinsic, v.status, v.found) == (intrinsic, "ok", [mnemonic])


@pytest.mark.parametrize("target,count", [("gfx908", 15), ("gfx90a", 22), ("gfx942", 27)])
def test_every_string_of_a_generation_is_ok(target, count):
    rep = report(target)
    assert len(rep.verdicts) == count
    bad = [(v.instruction, v.found, v.note) for v in rep.verdicts if v.status != "ok"]
    assert not bad
    assert all(v.found == [v.expected] for v in rep.verdicts)


def test_the_llvm_knows_the_cdna_targets():
    assert {"gfx908", "gfx90a", "gfx942"} <= set(codegen.known_cpus())


def test_cdna3_strings_fail_on_cdna2():
    """gfx90a has no xf32 or fp8 MFMA (LLVM refuses the intrinsic) and prints
    the others under their CDNA1/2 names: every CDNA3 string is a failure."""
    ins = isa_amd.instructions("CDNA3")
    asm, refused = codegen.compile_asm("gfx90a", ins)
    ops = codegen.kernel_ops(asm)
    verdicts = {i.suffix: codegen.judge(i, "gfx90a", ops.get(codegen.symbol(i)), refused.get(i.suffix))
                for i in ins}
    assert all(v.status == "missing" for v in verdicts.values())
    assert set(refused) == {"f32_16x16x8_xf32", "f32_32x32x4_xf32",
                            *(f"f32_{s}_{a}_{b}" for s in ("16x16x32", "32x32x16")
                              for a in ("bf8", "fp8") for b in ("bf8", "fp8"))}
    assert verdicts["f32_32x32x1_2b_f32"].found == ["v_mfma_f32_32x32x1f32"]
    assert verdicts["f32_16x16x16_bf16"].found == ["v_mfma_f32_16x16x16bf16_1k"]


def test_judge_flags_an_emulation():
    ins = isa_amd.parse("CDNA3", "f32_16x16x16_f16")
    v = codegen.judge(ins, "gfx942", ([], ["v_fma_mix_f32", "v_fma_mix_f32"]), None)
    assert (v.status, v.failed) == ("emulated", True)
    assert "v_fma_mix_f32 x2" in v.note


def run(*args):
    return CliRunner().invoke(main, ["mfma-check", *args])


def test_cli_passes_and_writes_json(tmp_path):
    out = tmp_path / "m.json"
    res = run("--arch", "gfx942", "--json", str(out))
    assert res.exit_code == 0, res.output
    assert "27 ok, 0 emulated, 0 missing" in res.output
    data = json.loads(out.read_text())
    assert data["summary"] == {"ok": 27, "emulated": 0, "missing": 0}
    assert [t["target"] for t in data["targets"]] == ["gfx942"]


def test_cli_exit_1_when_an_opcode_is_missing(monkeypatch):
    monkeypatch.setitem(isa_amd.GFX, "CDNA3", "gfx90a")  # CDNA3's strings on a CDNA2 target
    res = run("--arch", "CDNA3")
    assert res.exit_code == 1, res.output
    assert "missing: v_mfma_f32_16x16x8_xf32 on gfx90a" in res.output
    assert "0 ok, 0 emulated, 27 missing" in res.output


@pytest.mark.parametrize("arch", ["gfx1100", "sm_90a", "CDNA9", ","])
def test_cli_bad_arch_is_one_error_line(arch):
    res = run("--arch", arch)
    if arch == ",":  # names nothing: an error, never every target (leaving it out is that)
        one_error(res, "--arch", "names nothing")
        return
    one_error(res, "gfx942")


def test_cli_skips_without_the_backend(monkeypatch):
    monkeypatch.setattr(codegen, "backend_missing", lambda: "llvmlite's LLVM has no AMDGPU target")
    res = run()
    assert res.exit_code == 0
    assert res.output.strip().splitlines() == [
        "skipped: llvmlite's LLVM has no AMDGPU target; no v_mfma was checked"]


def test_cli_skips_a_target_this_llvm_lacks(monkeypatch):
    monkeypatch.setattr(codegen, "known_cpus", lambda: ("gfx908", "gfx90a"))
    res = run("--arch", "gfx942,gfx908")
    assert res.exit_code == 0, res.output
    assert "skipped: gfx942: llvmlite's LLVM" in res.output
    assert "(gfx908 15/15)" in res.output
