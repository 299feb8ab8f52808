"""Cases for v_mfma datapaths: random-bit and special-heavy words (for sweeps and tests)."""

from __future__ import annotations

import numpy as np

from .cases import Cases
from .datapath import Datapath
from .formats import get_format


def _specials(fmt) -> np.ndarray:
    """Words around every boundary of ``fmt``: zeros, subnormals, the smallest
    and largest normals, +-1, Inf and NaN (where it has them), both signs."""
    f = get_format(fmt)
    one = f.bias << (f.frac_bits + f.drop_bits)
    e_all = ((1 << f.exp_bits) - 1) << (f.frac_bits + f.drop_bits)
    lo = 1 << f.drop_bits
    base = [0, lo, 2 * lo, (1 << (f.frac_bits + f.drop_bits)) - lo, 1 << (f.frac_bits + f.drop_bits),
            one, one + lo, one - lo, e_all - lo, e_all, e_all | lo, e_all - (1 << (f.frac_bits + f.drop_bits)),
            e_all | (1 << (f.frac_bits + f.drop_bits - 1))]
    sign = 1 << (f.width - 1)
    words = [w & f.word_mask for w in base] + [(w | sign) & f.word_mask for w in base]
    return np.unique(np.array(words, np.uint64))


def amd_cases(dp: Datapath, n: int, rng: np.random.Generator) -> Cases:
    """n cases: half uniform random words, half drawn from the special words
    mixed with random ones (each word special with probability 1/2)."""
    def draw(fmt, shape):
        f = get_format(fmt)
        rand = rng.integers(0, 1 << f.width, shape, dtype=np.uint64)
        sp = _specials(fmt)
        pick = sp[rng.integers(0, len(sp), shape)]
        heavy = (np.arange(shape[0]) >= shape[0] // 2).reshape((-1,) + (1,) * (len(shape) - 1))
        use = heavy & (rng.integers(0, 2, shape) == 1)
        w = np.where(use, pick, rand)
        return w.astype(f.dtype)
    return Cases(draw(dp.a_type, (n, dp.k)), draw(dp.b_type, (n, dp.k)), draw(dp.c, (n,)))
