"""Random cases for fit's recovery tests: numpy words that exercise what a
blocked fixed-point datapath can differ in (window, block, order, floor,
rounding, zero signs), and a simulated capture of a model on them.

Words come from the suites' one word builder (``tcprobe.suites.words``); integer words only.
"""

from __future__ import annotations

import numpy as np

from tcprobe.capture import Capture
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import get_format
from tcprobe.suites.words import with_exponent


def _words(fmt: str, sign, exp, frac) -> np.ndarray:
    """Words of a float format from sign, unbiased exponent and fraction
    fields (exponents below the normal range give subnormals of the same
    fraction pattern, shifted): the suites' word builder."""
    f = get_format(fmt)
    return with_exponent(f, exp, sign, np.asarray(frac) & ((1 << f.frac_bits) - 1))


def random_cases(dp: Datapath, n: int, seed: int = 0, floor_hint: int = -133) -> Cases:
    """``n`` cases for ``dp`` mixing kinds: ordinary, wide exponent spread,
    cancellation to zero, tiny (near ``floor_hint``), signed zeros, C that
    dominates and C that is negligible."""
    rng = np.random.default_rng(seed)
    fa, fc = get_format(dp.a_type), get_format(dp.c)
    k = dp.k
    kind = rng.integers(0, 7, n)
    sign_a = rng.integers(0, 2, (n, k))
    sign_b = rng.integers(0, 2, (n, k))
    frac_a = rng.integers(0, 1 << fa.frac_bits, (n, k))
    frac_b = rng.integers(0, 1 << fa.frac_bits, (n, k))
    ea = rng.integers(-3, 4, (n, k))
    eb = rng.integers(-3, 4, (n, k))
    spread = kind == 1
    ea[spread] = rng.integers(-12, 13, (spread.sum(), k))
    eb[spread] = rng.integers(-12, 13, (spread.sum(), k))
    # Tiny: products spread from just above the floor hint to far below it,
    # so a window anchored at the floor cuts other bits than one anchored
    # at the largest product.
    tiny = np.flatnonzero(kind == 3)
    target = floor_hint + 2 - rng.integers(0, 40, (len(tiny), k))
    lo = np.maximum(target // 2, fa.emin)
    ea[tiny] = lo
    eb[tiny] = target - lo
    a = _words(dp.a_type, sign_a, ea, frac_a)
    b = _words(dp.b_type, sign_b, eb, frac_b)
    # Cancellation: the second half repeats the first with A negated.
    cancel = np.flatnonzero(kind == 2)
    h = k // 2
    a[cancel, h:2 * h] = a[cancel, :h] ^ np.uint32(1 << (fa.width - 1 + fa.drop_bits))
    b[cancel, h:2 * h] = b[cancel, :h]
    # Signed zeros: every product a zero, all of one sign in half the cases.
    zero = np.flatnonzero(kind == 4)
    same = rng.integers(0, 2, len(zero)) == 1
    zsign = np.where(same[:, None], rng.integers(0, 2, (len(zero), 1)), sign_a[zero])
    a[zero] = zsign.astype(np.uint32) << np.uint32(fa.width - 1 + fa.drop_bits)
    b[zero] = b[zero] & np.uint32(~(1 << (fa.width - 1 + fa.drop_bits)) & 0xFFFFFFFF)
    c_sign = rng.integers(0, 2, n)
    c_exp = rng.integers(-4, 5, n)
    c_exp[kind == 5] = rng.integers(8, 20, (kind == 5).sum())  # C dominates
    c_exp[kind == 6] = rng.integers(-40, -20, (kind == 6).sum())  # C negligible
    c_exp[tiny] = floor_hint + rng.integers(-12, 3, len(tiny))
    c_frac = rng.integers(0, 1 << fc.frac_bits, n)
    c = _words(dp.c, c_sign, c_exp, c_frac)
    c[np.isin(np.arange(n), np.concatenate([cancel, zero])) & (rng.integers(0, 2, n) == 1)] = 0
    c[zero] = (c_sign[zero].astype(np.uint32) << np.uint32(fc.width - 1 + fc.drop_bits))
    return Cases(a, b, c)


def simulated_capture(model, cases: Cases, label: str = "sim") -> Capture:
    """A capture whose device is ``model`` (a custom profile standing in for silicon)."""
    return Capture("sim:custom", model.datapath, cases, model.evaluate(cases), None, label,
                   {"simulated": True})
