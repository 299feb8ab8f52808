"""models/f32_sums.py writes f32 out for itself (inlined into the AMD kernels);
here it is held word for word to the generic codec it stands in for
(models/formats.py decode_scalar, and encode_scalar with RNE and IEEE overflow):
every exponent, subnormals, Inf/NaN, halfway cases with and without a sticky
bit, and magnitudes past the largest finite."""

import numpy as np

from tcprobe.models.f32_sums import decode32, encode32
from tcprobe.models.formats import Overflow, Rounding, decode_scalar, encode_scalar, get_format

F32 = get_format("f32")


def test_decode32_reads_every_kind_of_word_as_the_codec():
    rng = np.random.default_rng(1)
    words = np.concatenate([rng.integers(0, 1 << 32, 20000),
                            [0, 0x80000000, 1, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000,
                             0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF]])
    for w in words.tolist():
        assert tuple(decode32(np.int64(w))) == tuple(decode_scalar(np.int64(w), F32.spec)), hex(w)


def test_encode32_rounds_as_the_codec():
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(20000):
        bits = int(rng.integers(1, 62))
        mag = int(rng.integers(1 << (bits - 1), 1 << bits))
        cut = bits - 24  # the bits below a normal result's 24
        if cut > 0 and rng.random() < 0.3:  # exactly halfway between two results
            mag = (mag >> cut << cut) | (1 << (cut - 1))
        q = int(rng.integers(-200, 160))
        sticky = bits >= 27 and bool(rng.integers(0, 2))
        neg = int(rng.integers(0, 2))
        want = encode_scalar(neg, mag, q, sticky, F32.spec, int(Rounding.RNE), F32.frac_bits,
                             int(Overflow.IEEE))
        assert encode32(neg, np.int64(mag), q, sticky) == want, (neg, mag, q, sticky)
        checked += 1
    assert checked == 20000
    assert encode32(0, np.int64(0), 5, False) == 0 and encode32(1, np.int64(0), 5, False) == 1 << 31
