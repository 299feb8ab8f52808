"""The ladder on hidden-style profiles of the accumulator's top: 2 to 5 carry
bits that wrap, saturate or normalize, RNA output, saturating overflow,
fewer kept result bits, other K orders, on mma (A100/H100-like K = 8 blocks)
and tcgen05 kind::f16, with f32 and f16 D. Every key that can show comes
back; the rest are named in ``undetermined`` with a reason, and the
fingerprint's model matches the device on 10,000 random cases."""

import pytest
from ladder_helpers import mismatched_keys

from tcprobe.devices.sim import SimDevice
from tcprobe.ladder import run_ladder

BASE = {"window_bits": 25, "block_size": 8, "zero_floor": -133, "input_conversion": "truncate",
        "output_rounding": "rz", "zero_sign": "positive", "nan": 0x7FFFFFFF}
F16_D = {"zero_floor": -21, "nan": 0x7FFF}

PROFILES = {
    "mma-f16-c2-wrap-rne": ("mma", "f16", "f32", dict(carry_bits=2, output_rounding="rne")),
    "mma-f16-c3-saturate": ("mma", "f16", "f32", dict(carry_bits=3, carry_top="saturate")),
    "mma-bf16-c4-wrap-rna": ("mma", "bf16", "f32", dict(carry_bits=4, output_rounding="rna")),
    "mma-f16-c5-wrap": ("mma", "f16", "f32", dict(carry_bits=5, window_bits=24)),
    "mma-bf16-c3-k-order": ("mma", "bf16", "f32",
                            dict(carry_bits=3, block_size=4,
                                 k_order=[3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12])),
    "tcgen05-f16-issue13": ("tcgen05", "f16", "f32",
                            dict(block_size=16, carry_bits=3, output_rounding="rna",
                                 overflow="saturate")),
    "tcgen05-f16d-c3-saturate-rna": ("tcgen05", "f16", "f16",
                                     dict(F16_D, block_size=16, carry_bits=3,
                                          carry_top="saturate", output_rounding="rna",
                                          overflow="saturate")),
    "tcgen05-f16d-c4-keep7-rne": ("tcgen05", "f16", "f16",
                                  dict(F16_D, block_size=16, carry_bits=4, output_frac_bits=7,
                                       output_rounding="rne")),
    # found by a sweep of random hidden-style profiles: an RNA tie bit read as
    # precision hid the block probes; several floors or kept widths that fit
    # must stay open rather than name one of them
    "tcgen05-f16-rna-blocks-of-2": ("tcgen05", "f16", "f32",
                                    dict(block_size=2, zero_floor=-138, carry_bits=3,
                                         output_rounding="rna", overflow="saturate")),
    "mma-f16d-f29-floor-23": ("mma", "f16", "f16",
                              dict(F16_D, window_bits=29, block_size=32, zero_floor=-23,
                                   output_rounding="rne", nan=0x7E00, carry_bits=5)),
    "tcgen05-tf32-f12-keep18-rna": ("tcgen05", "tf32", "f32",
                                    dict(window_bits=12, block_size=32, zero_floor=-122,
                                         input_conversion="rne", output_rounding="rna",
                                         output_frac_bits=18, carry_bits=4)),
    # a normalizing top under a nearest rounding: the dropped last bit turns a
    # sum just above a tie into a tie
    "mma-bf16-c2-normalize-rne": ("mma", "bf16", "f32",
                                  dict(block_size=4, zero_floor=-131, output_rounding="rne",
                                       zero_sign="ieee", nan=0x7FC00000, carry_bits=2,
                                       carry_top="normalize")),
    "mma-f16-c3-normalize-rne": ("mma", "f16", "f32",
                                 dict(block_size=4, output_rounding="rne", carry_bits=3,
                                      carry_top="normalize")),
    "mma-e4m3-c2-normalize-keep6": ("mma", "e4m3", "f32",
                                    dict(window_bits=22, block_size=16, zero_floor=-112,
                                         output_rounding="rne", carry_bits=2,
                                         carry_top="normalize", output_frac_bits=6)),
}


def write(tmp_path, name, params, families=("mma", "tcgen05")):
    lines = []
    for k, v in params.items():
        lines.append(f"{k} = {v!r}".replace("'", '"'))
    lines.append(f"families = {list(families)!r}".replace("'", '"'))
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return SimDevice.from_toml(path)


def recover(tmp_path, name):
    family, fmt, d_type, extra = PROFILES[name]
    params = {**BASE, **extra}
    dev = write(tmp_path, name, params)
    dp = dev.datapath(family, fmt, d_type)
    assert dev.supports(dp)
    result = run_ladder(dev, dp)
    failed = [(f.step, f.summary) for f in result.findings if f.status == "failed"]
    assert not failed
    truth = dev.model(dp).params
    return result, truth, dp


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_hidden_carry_profiles_are_recovered(tmp_path, name):
    result, truth, dp = recover(tmp_path, name)
    fp = result.fingerprint
    assert mismatched_keys(fp, dp, truth, oracle=result) == {}
    assert fp.carry_bits == truth.carry_bits
    assert fp.carry_top == truth.carry_top
    if dp.a_type == "f16" and dp.d_type == "f32":  # f16 products cannot overflow an f32 D
        assert fp.overflow is None and "cannot show" in fp.undetermined["overflow"]
    else:
        assert fp.overflow == truth.overflow
    assert result.validation.cases == 10_000 and result.validation.mismatches == 0, \
        result.validation.examples[:2]


@pytest.mark.parametrize("bits", [2, 3, 4, 5])
def test_khattak_mikaitis_enumeration_on_k8_blocks(tmp_path, bits):
    """A100-like: f16 mma, K = 8 blocks, F = 24 (the A100's 3 extra bits
    over f16's 21-bit product): the enumeration finds the carry bits."""
    params = {**BASE, "window_bits": 24, "carry_bits": bits}
    dev = write(tmp_path, f"a100-c{bits}", params)
    dp = dev.datapath("mma", "f16")
    result = run_ladder(dev, dp, steps=["block", "carry"], validate_cases=2000)
    f = result.finding("carry")
    assert f.status == "found" and f.values["carry_bits"] == bits, f.summary
    assert "Khattak-Mikaitis enumeration" in f.summary and "K = 8 block" in f.summary
    assert f"{bits - 1} and {bits + 1} do not" in f.summary
    assert result.validation.mismatches == 0


def test_wide_accumulator_is_named_undetermined(tmp_path):
    """With 8 carry bits nothing of K = 8 reaches the top: the step says at
    least how many bits the sums need, and that wider widths cannot show."""
    dev = write(tmp_path, "wide", {**BASE, "carry_bits": 8})
    dp = dev.datapath("mma", "f16")
    result = run_ladder(dev, dp, steps=["block", "carry"], validate_cases=2000)
    f = result.finding("carry")
    assert f.values["carry_bits"] is None
    assert "give the same words" in f.values["undetermined"]["carry_bits"]
    assert "at least 6 carry bits" in f.summary  # 8 * (2 - 2^-10)^2 + C = max: under 2^6
    assert result.validation.mismatches == 0
