"""Codecs against ml_dtypes (every code of the small formats, samples of the
large ones) and against an exact Fraction reference for RZ."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcprobe.models.formats import (
    Class,
    FormatError,
    Overflow,
    Rounding,
    convert,
    convert_input,
    decode,
    encode,
    from_container,
    get_format,
    to_fraction,
)

ML = {
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
    "ue8m0": ml_dtypes.float8_e8m0fnu,
    "bf16": ml_dtypes.bfloat16,
    "f16": np.float16,
    "f32": np.float32,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def ml_values(name, codes):
    """The float64 values ml_dtypes gives the words (fp6/fp4 are one per byte)."""
    t = ML[name]
    return np.asarray(codes).astype(UINT[np.dtype(t).itemsize]).view(t).astype(np.float64)


def exact_values(name, codes):
    """Our decode as float64 (exact for all these formats) with NaN/Inf spelled."""
    fmt = get_format(name)
    d = decode(fmt, codes)
    out = np.empty(len(codes))
    for i in range(len(codes)):
        v = to_fraction(fmt, int(codes[i]))
        out[i] = {"nan": np.nan, "+inf": np.inf, "-inf": -np.inf}.get(v, None) if isinstance(v, str) else float(v)
        if d.cls[i] == Class.ZERO and d.sign[i]:
            out[i] = -0.0
    return out


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "bf16", "f16"])
def test_decode_every_code_matches_ml_dtypes(name):
    codes = get_format(name).words()
    ours, theirs = exact_values(name, codes), ml_values(name, codes)
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(ours)
    assert np.array_equal(ours[ok], theirs[ok])
    assert np.array_equal(np.signbit(ours[ok]), np.signbit(theirs[ok]))


def test_decode_f32_sample_matches_numpy():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    d = decode("f32", codes)
    f = codes.view(np.float32).astype(np.float64)
    fin = d.cls <= Class.FINITE
    vals = np.where(d.sign[fin] == 1, -1.0, 1.0) * np.ldexp(d.sig[fin].astype(np.float64), d.lsb[fin])
    assert np.array_equal(vals, f[fin])
    assert np.array_equal(d.cls == Class.NAN, np.isnan(f))
    assert np.array_equal(d.cls == Class.INF, np.isinf(f))


def test_raw_exponent_of_subnormals_is_emin():
    d = decode("f16", [0x0001, 0x0400, 0x3C00])
    assert list(d.raw) == [-14, -14, 0]
    assert list(d.lsb) == [-24, -24, -10]


def test_tf32_keeps_top_19_bits_and_classifies_after():
    # a NaN whose payload lies only in the dropped bits is an infinity
    d = decode("tf32", [0x7F800001, 0x3F801FFF, 0x3F802000])
    assert list(d.cls) == [Class.INF, Class.FINITE, Class.FINITE]
    assert list(d.sig) == [0, 1024, 1025]


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "bf16", "f16", "f32"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_encode_rne_matches_ml_dtypes(name, data):
    mag = data.draw(st.integers(0, (1 << 40) - 1))
    q = data.draw(st.integers(-190, 140))
    sign = data.draw(st.integers(0, 1))
    fmt = get_format(name)
    word = int(encode(fmt, sign, mag, q, Rounding.RNE)[()])
    exact = float(Fraction(mag) * Fraction(2) ** q) if q < 900 else None
    if exact is None or np.isinf(exact):
        return
    expect = np.array([-exact if sign else exact], np.float64).astype(ML[name])
    assert ml_values(name, [word])[0] == expect.astype(np.float64)[0] or (
        np.isnan(ml_values(name, [word])[0]) and np.isnan(expect.astype(np.float64)[0]))


def rz_reference(fmt, sign, mag, q):
    """The largest-magnitude value of fmt not above |mag * 2**q|, by search."""
    v = Fraction(mag) * Fraction(2) ** q
    best = 0
    for code in range(0, 1 << (fmt.width - 1)):
        x = to_fraction(fmt, code)
        if not isinstance(x, str) and x <= v and x >= to_fraction(fmt, best):
            best = code
    return best | ((sign << (fmt.width - 1)) if best or sign else 0)


@pytest.mark.parametrize("name", ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
@settings(max_examples=200, deadline=None)
@given(mag=st.integers(0, 4095), q=st.integers(-20, 12), sign=st.integers(0, 1))
def test_encode_rz_matches_exhaustive_search(name, mag, q, sign):
    fmt = get_format(name)
    word = int(encode(fmt, sign, mag, q, Rounding.RZ)[()])
    assert word == rz_reference(fmt, sign, mag, q)


def test_encode_f32_rz_overflow_and_subnormals():
    f32 = get_format("f32")
    # RZ keeps the largest finite value, RNE goes to Inf, the INF policy always Inf
    assert encode(f32, 0, 1, 128, Rounding.RZ) == 0x7F7FFFFF
    assert encode(f32, 0, 1, 128, Rounding.RNE) == 0x7F800000
    assert encode(f32, 1, 1, 128, Rounding.RZ, overflow=Overflow.INF) == 0xFF800000
    # smallest subnormal, and RZ below it
    assert encode(f32, 0, 1, -149, Rounding.RZ) == 1
    assert encode(f32, 0, 1, -150, Rounding.RZ) == 0
    assert encode(f32, 0, 3, -151, Rounding.RNE) == 1  # 0.75 of the smallest step rounds up
    assert encode(f32, 0, 1, -150, Rounding.RNE) == 0  # a tie rounds to even
    # a sticky bit breaks a tie
    assert encode(f32, 0, 0b1000, -153, Rounding.RNE, sticky=True) == 1


def test_encode_reduced_precision_keeps_13_fraction_bits():
    # 1 + 2**-13 + 2**-14 in fp32 with only 13 fraction bits kept
    w = encode("f32", 0, (1 << 14) + 2 + 1, -14, Rounding.RZ, keep=13)
    assert w == 0x3F800400


def test_convert_f32_to_f16_rne_and_nan():
    words = np.array([0x3F800000, 0x7FC00001, 0xFF800000, 0x33800000, 0x477FF000], np.uint32)
    out = convert(words, "f32", "f16")
    expect = words.view(np.float32).astype(np.float16).view(np.uint16)
    assert out[0] == expect[0] and out[2] == expect[2] and out[3] == expect[3] and out[4] == expect[4]
    assert out[1] == 0x7FFF


def test_from_container_and_input_conversion():
    assert list(from_container([0x3F800000, 0xBF810000], "bf16")) == [0x3F80, 0xBF81]
    with pytest.raises(FormatError):
        from_container([0x3F800001], "bf16")
    assert list(from_container([0x3F000000], "e2m1")) == [0x1]
    w = np.array([0x3F801000, 0x3F803000, 0x3F800FFF, 0x7F800001], np.int64)
    assert list(convert_input(w, "tf32", "truncate")) == [0x3F800000, 0x3F802000, 0x3F800000, 0x7F800000]
    assert list(convert_input(w, "tf32", "rne")[:3]) == [0x3F800000, 0x3F804000, 0x3F800000]
    assert decode("tf32", convert_input(w, "tf32", "rne")[3:]).cls[0] == Class.NAN


def test_unknown_format_is_a_clear_error():
    with pytest.raises(FormatError, match="unknown format 'fp7'"):
        get_format("fp7")


def test_integer_formats():
    d = decode("s8", [0x80, 0x7F, 0xFF, 0])
    assert list(d.sign) == [1, 0, 1, 0] and list(d.sig) == [128, 127, 1, 0]
    d = decode("u8", [0x80, 0xFF])
    assert list(d.sign) == [0, 0] and list(d.sig) == [128, 255]
    d = decode("s32", [0x80000000])
    assert d.sig[0] == 1 << 31 and d.sign[0] == 1


def test_ue4m3_ignores_the_sign_bit():
    d = decode("ue4m3", [0x7F, 0xFF, 0x38, 0xB8])
    assert list(d.cls) == [Class.NAN, Class.NAN, Class.FINITE, Class.FINITE]
    assert d.sig[2] == d.sig[3] and d.lsb[2] == d.lsb[3]


@pytest.mark.parametrize("src, dst", [("e4m3", "f16"), ("e5m2", "f16"), ("e2m1", "f16"),
                                      ("e3m2", "f32"), ("e2m3", "bf16"), ("e4m3fnuz", "f16"),
                                      ("e5m2", "e4m3"), ("ue8m0", "f32")])
def test_an_8_bit_batch_converts_through_its_table_to_the_same_words(src, dst):
    """convert() reads a table for batches of 8-bit words larger than the
    table; its words and dtype are the arithmetic's on every word, every
    rounding and overflow, in any integer container."""
    from tcprobe.models import formats

    fmt = get_format(src)
    rng = np.random.default_rng(7)
    for dtype in (np.uint8, np.uint16, np.int32, np.int64):
        codes = rng.integers(0, fmt.word_mask + 1, (40, 30)).astype(dtype)
        for rounding in (Rounding.RNE, Rounding.RZ):
            for overflow in formats.Overflow:
                got = convert(codes, src, dst, rounding, overflow=overflow)
                want = formats._convert(codes, fmt, get_format(dst), rounding, overflow)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert np.array_equal(got, want)
    # a word above the format takes the arithmetic's path (the table has no entry)
    wide = np.full(400, fmt.word_mask + 1, np.int64)
    try:
        want = formats._convert(wide, fmt, get_format(dst), Rounding.RNE, formats.Overflow.IEEE)
    except Exception as e:  # noqa: BLE001 (whatever the arithmetic says, convert says)
        with pytest.raises(type(e)):
            convert(wide, src, dst)
    else:
        assert np.array_equal(convert(wide, src, dst), want)
