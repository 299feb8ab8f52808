"""MMA-Sim 2.1.1 as a black-box device under ``--model auto`` (skipped where
it is not installed): a sample of its instruction strings, one per (arch,
family, kind, output, scales), read from its own ISA tables by
``benchmarks/mmasim_sweep.py``, each validated on every suite; the Turing and
RTX Blackwell profiles against MMA-Sim's words and hand-derived ones."""

import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcprobe.cli import main
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.profiles import PROFILES

pytestmark = [pytest.mark.peer, pytest.mark.usefixtures("mmasim_peer")]

_spec = importlib.util.spec_from_file_location(
    "mmasim_sweep", Path(__file__).parents[1] / "benchmarks" / "mmasim_sweep.py")
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)

from tcprobe.devices.mmasim import MmaSimDevice, parse_instruction  # noqa: E402


def _sample() -> list[tuple[str, str]]:
    seen, out = set(), []
    for arch, instr in sweep.instruction_strings():
        try:
            dp = parse_instruction(instr)[2]
            key = (arch, dp.family, dp.kind, dp.d_type, dp.c, dp.scale_type, dp.scale_vec, dp.k)
        except Exception:
            key = (arch, instr.split(".")[0], "refused")
        if key not in seen:
            seen.add(key)
            out.append((arch, instr))
    return out


SAMPLE = _sample()


def test_the_strings_come_from_mmasim_and_cover_every_arch_and_class():
    strings = sweep.instruction_strings()
    assert len(strings) > 4800
    archs = {a for a, _ in strings}
    assert archs == {"Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell",
                     "RTX Blackwell"}
    assert ("RTX Blackwell", "mma.m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3") in strings
    assert ("Turing", "mma.m8n8k4.f32.f16.f16.f16") in strings


@pytest.mark.fast_first(10)
@pytest.mark.parametrize("arch,instr", SAMPLE, ids=[f"{a}:{i}" for a, i in SAMPLE])
def test_auto_agrees_with_mmasim(arch, instr):
    row = sweep.validate_one(arch, instr, cases=64)
    assert row["status"] == "agree", row  # f64 too, since issue 12's f64 part landed


def _words(arch, instr, a, b, c):
    dev = MmaSimDevice(f"{arch}:{instr}")
    k = dev.dp.k
    pad = lambda v: [v + [0] * (k - len(v))]  # noqa: E731
    cases = Cases(pad(a), pad(b), [c])
    return int(dev.run(dev.dp, cases)[0]), int(PROFILES["t4"].model(dev.dp).evaluate(cases)[0])


def test_turing_runs_volta_settings_on_m8n8k4_only():
    # products 1, 2**-24, 2**-24 (f16 2**-12 = 0x0c00), C = +0 in f32: a 24-bit
    # window keeps both small products (1 + 2**-23 = 0x3f800001); Volta's 23
    # bits cut each to zero (0x3f800000).
    a = b = [0x3C00, 0x0C00, 0x0C00]
    assert _words("Turing", "mma.m16n8k8.f32.f16.f16.f32", a, b, 0) == (0x3F800001, 0x3F800001)
    f16_c = _words("Turing", "mma.m8n8k4.f32.f16.f16.f16", a, b, 0)
    assert f16_c == (0x3F800000, 0x3F800000)


def test_rtx_blackwell_block_scaled_words():
    # mxf8f6f4 e4m3: A = B = (1, 0, ...) with ue8m0 scales 2**1 and 2**-1
    # (codes 128, 126): 1 * 1 * 2 * 0.5 + C(1.0) = 2.0 = 0x40000000.
    dev = MmaSimDevice("RTX Blackwell:mma.m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.f32.ue8m0")
    assert dev.dp == Datapath.parse("mma.mxf8f6f4.e4m3.f32.k32.ue8m0x1")
    a = [[0x38] + [0] * 31]
    cases = Cases(a, a, [0x3F800000], [[128]], [[126]])
    assert int(dev.run(dev.dp, cases)[0]) == 0x40000000
    assert int(PROFILES["rtx5090"].model(dev.dp).evaluate(cases)[0]) == 0x40000000
    # mxf4nvf4 ue4m3 x4: e2m1 6.0 (0x7) times 6.0 in block 3 only, scales 1.0
    # (ue4m3 0x38) for A and 2.0 (0x40) for B: 72 + C(0) = 0x42900000.
    dev = MmaSimDevice("RTX Blackwell:mma.m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3")
    assert dev.dp == Datapath.parse("mma.mxf4nvf4.e2m1.f32.k64.ue4m3x4")
    a = [[0] * 48 + [0x7] + [0] * 15]
    cases = Cases(a, a, [0], [[0x38] * 4], [[0x40] * 4])
    assert int(dev.run(dev.dp, cases)[0]) == 0x42900000
    assert int(PROFILES["rtx5090"].model(dev.dp).evaluate(cases)[0]) == 0x42900000


def test_cli_validate_needs_no_format_on_mmasim(tmp_path):
    res = CliRunner().invoke(main, ["validate", "--device", "mmasim:Turing:mma.m16n8k8.f32.f16.f16.f32",
                                    "--model", "auto", "--cases", "300", "--out", str(tmp_path / "v")])
    assert res.exit_code == 0, res.output
    assert "mma.f16.f32.k8" in res.output and "t4" in res.output


def test_f64_validates_in_one_command(tmp_path):
    """(Refused in one line until issue 12's f64 part landed; now it runs.)"""
    res = CliRunner().invoke(main, ["validate", "--device", "mmasim:Ampere:mma.m8n8k4.f64.f64.f64.f64",
                                    "--model", "auto", "--cases", "300", "--out", str(tmp_path / "v")])
    assert res.exit_code == 0, res.output
    assert "mma.f64.f64.k4" in res.output and "a100" in res.output
    assert "Traceback" not in res.output
