"""Shared by the ladder tests: which datapaths a device runs, and how a
fingerprint is compared with the parameters the device was built from."""

from __future__ import annotations

from tcprobe.models.datapath import DatapathError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.words import exp_range

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


def mismatched_keys(fp, dp, truth, oracle=None) -> dict:
    """Keys whose found value differs from the truth, or that are missing
    without a reason that holds on this datapath (``oracle``, the LadderResult:
    a key left open is fine where the fingerprint's model and the device agree
    on a stress set)."""
    bad = {}
    agree = None
    for key, want in expected(dp, truth).items():
        got = getattr(fp, key)
        if got is None and key in fp.undetermined:
            if key == "input_conversion" and get_format(dp.a_type).drop_bits == 0:
                continue  # no dropped bits: nothing to convert
            if key == "zero_floor" and (want is None or want <= lowest_raw(dp)):
                continue  # no product anchors below it: the floor never binds
            if oracle is not None:
                if agree is None:
                    agree = unobservable(oracle, dp)
                if agree:
                    continue
            bad[key] = ("undetermined", fp.undetermined[key], want)
        elif key == "output_frac_bits" and got is None and want in (None, d_frac(dp)):
            continue
        elif got != want:
            bad[key] = (got, want)
    return bad


def d_frac(dp) -> int:
    return get_format(dp.d_type).frac_bits


def stress_cases(dp, n: int, seed: int = 0):
    """Cases aimed at what a ladder may call unobservable: tiny products near
    the output's last steps (floors, zero signs, subnormal rounding), sums of
    many random significands at one exponent with a small C (rounding,
    carries), and the ladder's own random mix."""
    import numpy as np

    from tcprobe.models.cases import Cases
    from tcprobe.suites.mix import random_cases

    rng = np.random.default_rng(seed)
    k = dp.k
    fa, fb, fc = (get_format(t) for t in (dp.a_type, dp.b_type, dp.c))

    def words(f, e, shape, sign_p=0.5):
        """Finite words with unbiased exponents e (clipped into the format)."""
        top = (1 << f.exp_bits) - 1 - (1 if f.specials == 0 else 0)
        field = np.clip(np.broadcast_to(e, shape) + f.bias, 0, top)
        frac = rng.integers(0, 1 << f.frac_bits, shape)
        if f.specials == 1:  # e4m3: all ones is NaN
            frac = np.where((field == top) & (frac == (1 << f.frac_bits) - 1), frac - 1, frac)
        sign = (rng.random(shape) < sign_p).astype(np.int64) if f.signed else 0 * field
        return ((sign << (f.width - 1)) | (field << (f.frac_bits + f.drop_bits))
                | (frac << f.drop_bits)).astype(np.uint32)

    q = n // 3
    osub, _, _ = exp_range(get_format(dp.d_type))
    # products whose exponents sum to around the output's last steps
    half = osub // 2
    ea = rng.integers(half - 14, half + 14, (q, 1))
    eb = osub - ea + rng.integers(-12, 12, (q, 1))
    c = np.where(rng.random(q) < 0.5,
                 (rng.random(q) < 0.5).astype(np.uint32) << np.uint32(fc.width - 1),
                 words(fc, rng.integers(osub, osub + 30, q), (q,)))
    parts = [Cases(words(fa, ea, (q, k)), words(fb, eb, (q, k)), c.astype(np.uint32))]
    # many random significands at one exponent, C small
    parts.append(Cases(words(fa, 0, (q, k), 0.15), words(fb, 0, (q, k), 0.15),
                       words(fc, rng.integers(-30, -8, q), (q,))))
    parts.append(random_cases(dp, n - 2 * q, rng))
    return Cases.concat(parts)


def unobservable(result, dp, n: int = 30_000) -> bool:
    """Whether the device (through the ladder's own harness, whose lanes the
    fingerprint names) and the fingerprint's model agree on a stress set: then
    a key the ladder left undetermined made no difference."""
    import numpy as np

    cases = stress_cases(dp, n)
    got = result.context.run(cases)
    return bool(np.array_equal(got, result.fingerprint.model(dp).evaluate(cases)))


def recovered(dev, dp):
    """Run the ladder on ``dev`` for ``dp`` and assert what every recovery test
    asks first: no failed step and no key found wrong or left open where it
    shows (mismatched_keys with the stress-set oracle). Returns (result,
    the device's parameters, the fingerprint)."""
    from tcprobe.ladder import run_ladder

    result = run_ladder(dev, dp)
    assert not [(f.step, f.summary) for f in result.findings if f.status == "failed"]
    truth = dev.model(dp).params
    fp = result.fingerprint
    assert mismatched_keys(fp, dp, truth, oracle=result) == {}
    return result, truth, fp


def tiny_product_cases(dp, n: int, seed: int = 0):
    """One product in a random lane, both factors from the bottom half of
    their exponent range (any significand, any signs), C a zero of either
    sign or a tiny word: the cases where a zero floor binds."""
    import numpy as np

    from tcprobe.models.cases import Cases
    from tcprobe.models.words import emax_biased, max_frac, pack

    rng = np.random.default_rng(seed)
    k = dp.k
    fa, fb, fc = (get_format(t) for t in (dp.a_type, dp.b_type, dp.c))

    def low(f):
        biased = rng.integers(0, emax_biased(f) // 2 + 2, n)
        frac = np.minimum(rng.integers(0, 1 << f.frac_bits, n), max_frac(f, biased))
        sign = rng.integers(0, 2, n) if f.signed else 0
        return pack(f, sign, biased, frac).astype(f.dtype)

    a = np.zeros((n, k), fa.dtype)
    b = np.zeros((n, k), fb.dtype)
    lane = rng.integers(0, k, n)
    a[np.arange(n), lane] = low(fa)
    b[np.arange(n), lane] = low(fb)
    sign = (rng.integers(0, 2, n).astype(fc.dtype) << fc.dtype(fc.width - 1)) if fc.signed \
        else np.zeros(n, fc.dtype)
    tiny = pack(fc, 0, rng.integers(0, 3, n), rng.integers(1, 1 << fc.frac_bits, n))
    c = np.where(rng.random(n) < 0.7, sign, tiny.astype(fc.dtype) | sign).astype(fc.dtype)
    return Cases(a, b, c)


def false_ranges(result, dp, cases) -> dict:
    """The values of each range the ladder says it checked (``context.ranges``)
    that no reading of the other open keys (every output rounding, the
    assumed carry bits or none) makes give the device's words on ``cases``
    (through the ladder's harness): a range named undetermined must hold on
    any cases. {key: [values]}; empty when every range is true."""
    from dataclasses import replace

    import numpy as np

    fp = result.fingerprint
    got = result.context.run(cases)
    roundings = ["rz", "rne", "rna"] if "output_rounding" in fp.undetermined \
        else [fp.output_rounding]
    carries = list(dict.fromkeys([fp.assumed.get("carry_bits"), None])) \
        if "carry_bits" in fp.undetermined else [fp.carry_bits]
    bad = {}
    for key, values in result.context.ranges.items():
        if len(values) < 2:
            continue
        for v in values:
            fits = False
            for r in roundings:
                for c in carries:
                    over = {key: v, "output_rounding": r, "carry_bits": c}
                    assumed = {k: a for k, a in fp.assumed.items() if k not in over}
                    if np.array_equal(replace(fp, **over, assumed=assumed).model(dp)
                                      .evaluate(cases), got):
                        fits = True
                        break
                if fits:
                    break
            if not fits:
                bad.setdefault(key, []).append(v)
    return bad
