"""AMD CDNA v_mfma: the ISA block, the fnuz formats and the MI100/MI250X/MI300X
models against MMA-Sim 2.1.1's frozen words (tests/data/vectors/mmasim-amd.jsonl,
written by its make_ script from MMA-Sim's own table); runs without MMA-Sim."""

import json
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tcprobe.models import isa, isa_amd, registry
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Class, decode, encode, get_format

VECTORS = Path(__file__).parent / "data" / "vectors" / "mmasim-amd.jsonl"
RECORDS = [json.loads(line) for line in VECTORS.read_text().splitlines() if not line.startswith("//")]
# Designs whose NaN word MMA-Sim takes from the host's float arithmetic (which NaN
# operand wins depends on torch's kernels): there the NaN class is compared, not the bits.
HOST_NAN = ("mi100", "mi250x")


@pytest.mark.parametrize("name,dtype", [("e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
                                        ("e5m2fnuz", ml_dtypes.float8_e5m2fnuz)])
def test_fnuz_decode_every_word(name, dtype):
    words = np.arange(256, dtype=np.uint32)
    d = decode(name, words)
    ref = words.astype(np.uint8).view(dtype).astype(np.float64)
    for i in range(256):
        if np.isnan(ref[i]):
            assert i == 0x80 and d.cls[i] == Class.NAN
        else:
            v = Fraction(int(d.sig[i])) * Fraction(2) ** int(d.lsb[i])
            assert (-v if d.sign[i] else v) == Fraction(ref[i])


def test_fnuz_encode_has_no_negative_zero_and_nan_on_overflow():
    f = get_format("e4m3fnuz")
    assert int(encode(f, [1], [0], [0])[0]) == 0  # -0 -> 0x00
    assert int(encode(f, [1], [1], [-40])[0]) == 0  # underflow to zero: +0, never 0x80
    assert int(encode(f, [0], [1], [20])[0]) == 0x80  # overflow: the NaN
    assert int(encode(f, [0], [15], [4])[0]) == 0x7F  # 240, the largest finite
    assert f.bias == 8 and get_format("e5m2fnuz").bias == 16


def test_table_has_every_generation():
    ins = isa_amd.instructions()
    assert len(ins) == 64 and "mfma" in isa.ALL_FAMILIES and "mfma" not in isa.FAMILIES
    one = isa_amd.parse("MI300X", "v_mfma_f32_4x4x4_16b_f16")
    assert (one.arch, one.m, one.n, one.k, one.blocks, one.kind) == ("CDNA3", 4, 4, 4, 16, "f16")
    old = isa_amd.parse("CDNA2", "f32_32x32x4bf16_1k")
    assert (old.blocks, old.kind, old.k) == (2, "bf16_1k", 4)
    assert isa_amd.parse("CDNA3", "f32_16x16x8_xf32").a_type == "tf32"
    fp8 = isa_amd.parse("CDNA3", "f32_16x16x32_bf8_fp8")
    assert (fp8.a_type, fp8.b_type, fp8.k) == ("e5m2fnuz", "e4m3fnuz", 32)
    with pytest.raises(ValueError, match="CDNA1 has no v_mfma_f64"):
        isa_amd.parse("CDNA1", "f64_16x16x4f64")
    with pytest.raises(ValueError, match="^arch: unknown AMD generation"):
        isa_amd.parse("RDNA3", "f32_16x16x16_f16")


def test_datapath_ids_round_trip():
    for ins in isa_amd.instructions():
        from tcprobe.models.amd_profiles import datapath

        dp = datapath(ins)
        assert Datapath.parse(dp.id) == dp


def test_the_file_covers_every_string():
    assert len(RECORDS) == 64 * 8
    assert {r["gpu"] for r in RECORDS} == {"MI100", "MI250X", "MI300X"}


def _cases(dp, rec) -> Cases:
    dt = get_format(dp.d_type).dtype
    return Cases(np.array([[int(x, 16) for x in rec["a"]]], get_format(dp.a_type).dtype),
                 np.array([[int(x, 16) for x in rec["b"]]], get_format(dp.b_type).dtype),
                 np.array([int(rec["c"], 16)], dt))


@pytest.mark.parametrize("rec", RECORDS, ids=[f"{r['arch']}:{r['name']}" for r in RECORDS])
def test_auto_reproduces_mmasim(rec):
    dp = Datapath.parse(rec["datapath"])
    model = registry.resolve("auto", dp, rec["gpu"])
    assert model.name == rec["gpu"].lower()
    _same(dp, model.name, int(model.evaluate(_cases(dp, rec))[0]), int(rec["d"], 16))


def test_frozen_words_are_mmasims():
    pytest.importorskip("torch", reason="MMA-Sim needs torch")
    pytest.importorskip("mmasim", reason="MMA-Sim 2.1.1 is not installed")
    from tcprobe.devices.mmasim import MmaSimDevice

    for rec in RECORDS[::3]:
        dev = MmaSimDevice(f"{rec['arch']}:{rec['name'].split()[0]}")
        assert dev.dp.id == rec["datapath"] and dev.info()["gpu"] == rec["gpu"]
        cases = _cases(dev.dp, rec)
        _same(dev.dp, rec["gpu"].lower(), int(dev.run(dev.dp, cases)[0]), int(rec["d"], 16))


def _same(dp, model: str, got: int, want: int) -> None:
    """got == want, bit for bit; a NaN of the host-NaN designs by its class
    (MMA-Sim's own NaN word there changes with the batch: one case at a time
    and eight at a time give different payloads for the same inputs)."""
    dt = get_format(dp.d_type).dtype
    if model in HOST_NAN and decode(dp.d_type, np.array([want], dt)).cls[0] == Class.NAN:
        assert decode(dp.d_type, np.array([got], dt)).cls[0] == Class.NAN, (hex(got), hex(want))
    else:
        assert got == want, (hex(got), hex(want))


def test_model_by_name_and_bad_gpu():
    dp = Datapath("mfma", "f16", "f16", "f16", "f32", 16)
    assert registry.resolve("mi300x", dp).params.design == "truncated"
    assert registry.resolve("auto", dp, "MI250X").params.design == "ftz"
    with pytest.raises(ValueError, match="^gpu: no AMD profile"):
        registry.resolve("auto", dp, "H100")
