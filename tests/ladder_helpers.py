"""Shared by the ladder tests: which datapaths a device runs, and how a
fingerprint is compared with the parameters the device was built from."""

from __future__ import annotations

from tcprobe.datapath import DatapathError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.probes.common import exp_range

FORMATS = ("tf32", "bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def datapaths(dev):
    """(family, format, datapath) for every float format the device runs."""
    out = []
    for fam in dev.families:
        for fmt in FORMATS:
            try:
                dp = dev.datapath(fam, fmt)
            except (DatapathError, FormatError, ValueError):
                continue
            if dev.supports(dp):
                out.append((fam, fmt, dp))
    return out


def lowest_raw(dp) -> int:
    """The smallest raw exponent a product of this datapath can align on."""
    _, na, _ = exp_range(dp.a_type)
    _, nb, _ = exp_range(dp.b_type)
    return na + nb


def expected(dp, truth) -> dict:
    """The fingerprint keys a ladder must report for engine parameters ``truth``."""
    d = get_format(dp.d_type)
    return {
        "window_bits": truth.window_bits,
        "block_size": min(truth.block_size, dp.k),
        "zero_floor": truth.zero_floor,
        "input_conversion": truth.input_conversion,
        "output_rounding": truth.output_rounding,
        "zero_sign": truth.zero_sign,
        "nan": d.canonical_nan if truth.nan is None else truth.nan,
        "output_frac_bits": truth.output_frac_bits,
    }


def mismatched_keys(fp, dp, truth) -> dict:
    """Keys whose found value differs from the truth, or that are missing
    without a reason that holds on this datapath."""
    bad = {}
    for key, want in expected(dp, truth).items():
        got = getattr(fp, key)
        if got is None and key in fp.undetermined:
            if key == "input_conversion" and get_format(dp.a_type).drop_bits == 0:
                continue  # no dropped bits: nothing to convert
            if key == "zero_floor" and (want is None or want <= lowest_raw(dp)):
                continue  # no product anchors below it: the floor never binds
            bad[key] = ("undetermined", fp.undetermined[key], want)
        elif key == "output_frac_bits" and got is None and want in (None, d_frac(dp)):
            continue
        elif got != want:
            bad[key] = (got, want)
    return bad


def d_frac(dp) -> int:
    return get_format(dp.d_type).frac_bits
