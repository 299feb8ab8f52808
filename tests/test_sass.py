"""sass-check: real NVRTC compiles and nvdisasm, no GPU."""

from __future__ import annotations

import dataclasses
import json

import pytest
from cli_helpers import one_error
from click.testing import CliRunner
from cuda_support import cubin_cache, needs_nvdisasm, needs_nvrtc  # noqa: F401

from tcprobe.cli import main
from tcprobe.devices.cuda import nvrtc, sass
from tcprobe.kernels import catalog

pytestmark = [needs_nvrtc, needs_nvdisasm, pytest.mark.usefixtures("cubin_cache")]

_REPORTS: dict[str, sass.ArchReport] = {}


def report(arch: str) -> sass.ArchReport:
    if arch not in _REPORTS:
        _REPORTS[arch] = sass.check_arch(arch)
    return _REPORTS[arch]


def verdict(arch: str, name: str) -> sass.Verdict:
    return next(v for v in report(arch).verdicts if v.harness == name)


@pytest.mark.fast_first(3)
@pytest.mark.parametrize("arch", list(catalog.ARCH_FAMILIES))
def test_every_harness_has_its_expected_opcode(arch):
    rep = report(arch)
    built = [v for v in rep.verdicts if v.status != "unsupported"]
    assert built, arch
    for v in built:
        assert v.status in ("ok", "emulated"), (v.harness, v.arch, v.expected, v.found, v.note)
        assert v.expected in v.found
    assert {v.harness for v in built} == {v.name for v in catalog.for_arch(arch)}


def integer_emulated(arch: str, harness: str) -> bool:
    """s4/u4 from sm_90 (8-bit IMMA), b1 .xor on sm_90 (BMMA.AND), every b1
    from sm_100a (IMMA): what ptxas 13.5 printed."""
    if harness.startswith(("mma.s4.", "mma.u4.")):
        return arch not in ("sm_80", "sm_86", "sm_89")
    if harness == "mma.b1.xor":
        return arch not in ("sm_80", "sm_86", "sm_89")
    if harness == "mma.b1.and":
        return arch in ("sm_100a", "sm_103a", "sm_120a")
    return False


@pytest.mark.parametrize("arch", list(catalog.ARCH_FAMILIES))
def test_emulation_is_flagged_exactly_for_fp8_mma_on_hopper_and_blackwell(arch):
    """... and for the f64 m16n8 shapes that sm_100a, sm_103a and sm_120a
    split into DMMA.8x8x4s (tests/test_f64_sass.py checks those)."""
    for v in report(arch).verdicts:
        fp8_mma = v.harness in ("mma.e4m3.f32", "mma.e4m3.f16", "mma.e5m2.f32", "mma.e5m2.f16")
        f64_split = v.harness.startswith("mma.f64.f64.m16n8") and arch in (
            "sm_100a", "sm_103a", "sm_120a")
        if integer_emulated(arch, v.harness):
            assert v.status == "emulated", v
            assert v.profile == "auto (exact integer sum)"
            assert not any(op.startswith(("IMMA.16864", "BMMA.168256.XOR")) for op in v.found)
        elif fp8_mma and arch in ("sm_90", "sm_90a", "sm_100a", "sm_103a"):
            assert v.status == "emulated", v
            want = "hopper-fp8-emulated" if arch.startswith("sm_90") else "b200-fp8-emulated"
            assert v.profile == want
            assert not any(op.startswith("QMMA") for op in v.found)
        elif f64_split:
            assert v.status == "emulated" and v.found == ["DMMA.8x8x4"], v
        else:
            assert v.status != "emulated" and v.emulation is None, v


@pytest.mark.parametrize("arch,name,opcode", [
    ("sm_75", "mma.f16.f32.k8", "HMMA.1688.F32"),
    ("sm_75", "mma.f16.f16.k8", "HMMA.1688.F16"),
    ("sm_120a", "mma.f16.f32.k8", "HMMA.1688.F32"),
    ("sm_120a", "mma.f8f6f4.e3m2.f32", "QMMA.16832.F32.E3M2.E3M2"),
    ("sm_120a", "mma.mxf8f6f4.e2m1.f32", "QMMA.SF.16832.F32.E2M1.E2M1.E8"),
    ("sm_120a", "mma.mxf4.2x.ue8m0", "OMMA.SF.16864.F32.E2M1.E2M1.E8"),
    ("sm_120a", "mma.mxf4nvf4.4x.ue8m0", "OMMA.SF.16864.F32.E2M1.E2M1.E8.4X"),
    ("sm_80", "mma.bf16.f32", "HMMA.16816.F32.BF16"),
    ("sm_80", "mma.tf32.f32", "HMMA.1688.F32.TF32"),
    ("sm_80", "mma.s8.s32", "IMMA.16832.S8.S8"),
    ("sm_80", "mma.s8.s32.sat", "IMMA.16832.S8.S8.SAT"),
    ("sm_80", "mma.s4.s32", "IMMA.16864.S4.S4"),
    ("sm_89", "mma.u4.s32.sat", "IMMA.16864.U4.U4.SAT"),
    ("sm_80", "mma.b1.xor", "BMMA.168256.XOR.POPC"),
    ("sm_90a", "mma.b1.and", "BMMA.168256.AND.POPC"),
    ("sm_120a", "mma.u8.s32.sat", "IMMA.16832.U8.U8.SAT"),
    ("sm_80", "mma.f16.f32.sparse", "HMMA.SP.16832.F32"),
    ("sm_80", "mma.f16.f32.sparse.ordered", "HMMA.SP.16832.F32"),
    ("sm_86", "mma.bf16.f32.sparse", "HMMA.SP.16832.F32.BF16"),
    ("sm_90", "mma.tf32.f32.sparse", "HMMA.SP.16816.F32.TF32"),
    ("sm_89", "mma.e4m3.f32.sparse", "QMMA.SP.16864.F32.E4M3.E4M3"),
    ("sm_80", "mma.s8.s32.sparse.sat", "IMMA.SP.16864.S8.S8.SAT"),
    ("sm_89", "mma.u4.s32.sparse", "IMMA.SP.168128.U4.U4"),
    ("sm_90a", "wgmma.s8.s32.sat", "IGMMA.64x8x32.S8.S8.SAT"),
    ("sm_90a", "wgmma.u8.s32.sparse", "IGMMA.SP.64x8x64.U8.U8"),
    ("sm_90a", "wgmma.f16.f32.sparse", "HGMMA.SP.64x8x32.F32"),
    ("sm_90a", "wgmma.e5m2.f32.sparse", "QGMMA.SP.64x8x64.F32.E5M2.E5M2"),
    ("sm_89", "mma.e4m3.f32", "QMMA.16832.F32.E4M3.E4M3"),
    ("sm_120a", "mma.e5m2.f16", "QMMA.16832.F16.E5M2.E5M2"),
    ("sm_120a", "mma.f8f6f4.e2m1.f32", "QMMA.16832.F32.E2M1.E2M1"),
    ("sm_120a", "mma.mxf8f6f4.e3m2.f32", "QMMA.SF.16832.F32.E3M2.E3M2.E8"),
    ("sm_120a", "mma.mxf4nvf4.4x.ue4m3", "OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X"),
    ("sm_90a", "wgmma.bf16.f32", "HGMMA.64x8x16.F32.BF16"),
    ("sm_90a", "wgmma.f16.f16", "HGMMA.64x8x16.F16"),
    ("sm_90a", "wgmma.tf32.f32", "HGMMA.64x8x8.F32.TF32"),
    ("sm_90a", "wgmma.e4m3.f16", "QGMMA.64x8x32.F16.E4M3.E4M3"),
    ("sm_90a", "wgmma.u8.s32", "IGMMA.64x8x32.U8.U8"),
    ("sm_100a", "tcgen05.f16", "UTCHMMA"),
    ("sm_100a", "tcgen05.tf32.sparse", "UTCHMMA"),
    ("sm_100a", "tcgen05.f8f6f4", "UTCQMMA"),
    ("sm_100a", "tcgen05.i8", "UTCIMMA"),
    ("sm_100a", "tcgen05.mxf8f6f4.1x", "UTCQMMA"),
    ("sm_100a", "tcgen05.mxf4.2x", "UTCOMMA"),
    ("sm_100a", "tcgen05.mxf4nvf4.4x", "UTCOMMA.4X"),
    ("sm_103a", "tcgen05.mxf4nvf4.4x.sparse", "UTCOMMA.BLOCK16"),
])
def test_opcodes_found_in_the_disassembly(arch, name, opcode):
    v = verdict(arch, name)
    assert v.found == [opcode]
    assert v.status == "ok"


def test_turing_builds_only_its_own_shapes():
    assert {v.harness for v in report("sm_75").verdicts} == {"mma.f16.f32.k8", "mma.f16.f16.k8",
                                                             "mma.f16.f32.k4", "mma.f16.f16.k4"}
    # m8n8k4 is four HMMA.884 steps into f32, two into f16 (nvdisasm 13.5)
    assert verdict("sm_75", "mma.f16.f32.k4").found == [f"HMMA.884.F32.F32.STEP{i}" for i in range(4)]
    assert verdict("sm_75", "mma.f16.f16.k4").found == ["HMMA.884.F16.F16.STEP0", "HMMA.884.F16.F16.STEP1"]
    assert verdict("sm_75", "mma.f16.f32.k4").status == "ok"


@pytest.mark.parametrize("arch,name,opcode", [
    ("sm_90", "mma.s4.s32", "IMMA.16832.S8.S8"),
    ("sm_90a", "mma.u4.s32.sat", "IMMA.16832.U8.U8"),  # no .SAT: saturated outside
    ("sm_90", "mma.b1.xor", "BMMA.168256.AND.POPC"),
    ("sm_100a", "mma.b1.and", "IMMA.16832.U8.U8"),
    ("sm_120a", "mma.s4.s32", "IMMA.16832.S8.S8"),
    ("sm_100a", "mma.u4.s32.sparse.sat", "IMMA.SP.16864.U8.U8"),
])
def test_integer_emulations_name_their_substitute(arch, name, opcode):
    v = verdict(arch, name)
    assert v.found == [opcode] and v.status == "emulated"
    assert "unmeasured" in v.note


def test_utchmma_serves_f16_bf16_and_tf32_and_says_so():
    f16, tf32 = verdict("sm_100a", "tcgen05.f16"), verdict("sm_100a", "tcgen05.tf32")
    assert f16.found == tf32.found == ["UTCHMMA"]
    assert set(f16.formats) == {"f16", "bf16"}
    assert "instruction descriptor" in f16.note and "cannot tell them apart" in f16.note


@pytest.mark.parametrize("arch", ["sm_90", "sm_100a"])
def test_emulation_summary_reads_the_instructions(arch):
    f32 = verdict(arch, "mma.e4m3.f32").emulation
    assert f32["unpacks"] == {"F2FP.F16.E4M3.UNPACK_B": 12}
    assert f32["hmma_chain"] == ["HMMA.16816.F32", "HMMA.16816.F32"]
    assert f32["first_c_zero"] is True
    assert f32["c_added_by"] == {"FADD": 4}
    f16 = verdict(arch, "mma.e5m2.f16").emulation
    assert f16["unpacks"] == {"F2FP.F16.E5M2.UNPACK_B": 12}
    assert f16["hmma_chain"] == ["HMMA.16816.F16", "HMMA.16816.F16"]
    assert f16["c_added_by"] == {"HADD2": 2}


def test_kind_i8_is_rejected_for_sm_103a():
    v = catalog.by_name("tcgen05.i8")
    unit = catalog.translation_unit("sm_100a", only=(v,))
    nvrtc.compile_cubin(unit.source, "sm_100a", headers=unit.headers)  # builds for sm_100a
    with pytest.raises(nvrtc.CompileError, match="kind::i8"):
        nvrtc.compile_cubin(unit.source, "sm_103a", headers=unit.headers)
    assert verdict("sm_103a", "tcgen05.i8").status == "unsupported"


def test_function_parser_on_a_disassembly_fragment():
    text = """
        .section	.text.tcp_x,"ax",@progbits
        /*0040*/                   F2FP.F16.E4M3.UNPACK_B R8, R4 ;
        /*0050*/                   HMMA.16816.F32 R8, R8, R22, RZ ;
        /*0060*/              @!P0 BRA `(.L_x_1) ;
        /*0070*/                   HMMA.16816.F32 R8, R20, R18, R8 ;
        /*0080*/                   FADD R9, R2, R9 ;
        .section	.text.tcp_y,"ax",@progbits
        /*0000*/                   UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR11], UPT ;
    """
    funcs = sass.functions(text)
    assert [i.opcode for i in funcs["tcp_x"]] == ["F2FP.F16.E4M3.UNPACK_B", "HMMA.16816.F32", "BRA",
                                                  "HMMA.16816.F32", "FADD"]
    assert sass.tensor_opcodes(funcs["tcp_x"]) == ["HMMA.16816.F32"]
    assert sass.tensor_opcodes(funcs["tcp_y"]) == ["UTCHMMA"]
    emu = sass.emulation_summary(funcs["tcp_x"])
    assert emu["first_c_zero"] and emu["c_added_by"] == {"FADD": 1}
    assert sass.emulation_summary(funcs["tcp_y"]) is None


def test_cli_writes_verdicts_and_exits_0(tmp_path):
    out = tmp_path / "sass.json"
    res = CliRunner().invoke(main, ["sass-check", "--arch", "sm_90a,sm_100a", "--format", "e4m3",
                                    "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    verdicts = [v for a in data["archs"] for v in a["verdicts"]]
    emulated = {(v["harness"], v["arch"]) for v in verdicts if v["status"] == "emulated"}
    assert ("mma.e4m3.f32", "sm_90a") in emulated and ("mma.e4m3.f16", "sm_100a") in emulated
    assert data["emulation_profiles"]["sm_100a"] == "b200-fp8-emulated"
    assert {v["harness"] for v in verdicts if v["arch"] == "sm_90a"} >= {"wgmma.e4m3.f32", "mma.e4m3.f32"}
    assert all("e4m3" in v["formats"] for v in verdicts)
    assert data["summary"]["missing"] == 0
    for a in data["archs"]:
        assert len(a["cubin_sha256"]) == 64


def test_cli_exits_1_when_an_expected_opcode_is_missing(monkeypatch):
    real = catalog.variants()
    wrong = tuple(dataclasses.replace(v, expects=(catalog.Expect(v.archs, "HMMA.16816.F32.NOPE"),))
                  if v.name == "mma.bf16.f32" else v for v in real)
    monkeypatch.setattr(catalog, "variants", lambda: wrong)
    res = CliRunner().invoke(main, ["sass-check", "--arch", "sm_80", "--instr", "mma"])
    assert res.exit_code == 1
    assert "missing:" in res.output and "mma.bf16.f32" in res.output


def test_cli_filters_by_family():
    res = CliRunner().invoke(main, ["sass-check", "--instr", "wgmma"])
    assert res.exit_code == 0, res.output
    assert "wgmma.tf32.f32" in res.output and "│ mma." not in res.output


@pytest.mark.fast_first(2)
@pytest.mark.parametrize("args,msg", [
    (["--instr", "hmma"], "unknown instruction family"),
    (["--arch", "sm_70"], "no harness for sm_70"),
    (["--arch", "compute_90"], "not a GPU architecture"),
    (["--format", "s32"], "no harness matches"),  # (f64 has a harness now: DMMA)
])
def test_cli_bad_input_is_one_line_exit_2(args, msg):
    res = CliRunner().invoke(main, ["sass-check", *args])
    one_error(res, msg)


def test_cli_says_each_architecture_as_it_is_judged_when_piped():
    """Piped (no terminal), each architecture's verdict counts reach stderr as
    soon as it is judged, before the table at the end."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "tcprobe", "sass-check", "--arch", "sm_80,sm_90a",
                          "--instr", "mma", "--format", "bf16"], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if " kernel(s) judged, " in ln]
    assert [ln.split(":")[0] for ln in lines] == ["sass-check sm_80", "sass-check sm_90a"]
    assert all(" 0 missing " in ln for ln in lines)
