"""The engine's fast path gives the plain kernel's words, bit for bit, on
random raw cases (NaN, Inf, subnormals and zeros included) over the GPU
profiles, the baselines and every structural knob."""

import numpy as np
import pytest

from tcprobe.models import fastpath
from tcprobe.models.cases import Cases, CasesError
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, Speed, fused_dot
from tcprobe.models.formats import get_format
from tcprobe.models.profiles import BASELINES, PROFILES


def raw_cases(dp: Datapath, n: int, seed: int) -> Cases:
    rng = np.random.default_rng(seed)
    words = lambda t, shape: rng.integers(0, get_format(t).word_mask + 1, shape,  # noqa: E731
                                          dtype=np.uint64).astype(np.uint32)
    a = words(dp.a_type, (n, dp.k))
    b = words(dp.b_type, (n, dp.k))
    c = words(dp.c, n)
    # a share of special-heavy rows: zeros of both signs and tiny values
    tiny = rng.random(n) < 0.2
    a[tiny] &= np.uint32((1 << (get_format(dp.a_type).width - 1)) | 0x3)
    c[tiny[::-1]] &= np.uint32(0x80000003 & get_format(dp.c).word_mask)
    return Cases(a, b, c)


def same_words(dp, params, n=3000, seed=1):
    cases = raw_cases(dp, n, seed)
    assert fastpath.supports(dp, params)
    fast = fused_dot(dp, cases, params, fast=True)
    plain = fused_dot(dp, cases, params, fast=False)
    bad = np.flatnonzero(fast != plain)
    assert bad.size == 0, (f"{dp.id} {params}: {bad.size} words differ, first case "
                           f"{int(bad[0])}: fast {int(fast[bad[0]]):#x} plain {int(plain[bad[0]]):#x}")


BF16 = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16)
F16_F16 = Datapath("mma", "f16", "f16", "f16", "f16", 16)
TF32 = Datapath("mma", "tf32", "tf32", "tf32", "f32", 8)
E4M3 = Datapath("mma", "e4m3", "e4m3", "e4m3", "f32", 32)
MIXED = Datapath("tcgen05", "f8f6f4", "e5m2", "e2m1", "f16", 32)


PROFILE_CASES = [(BF16, p) for p in ("v100", "a100", "ada", "h100", "b200-hmma")] + [
    (F16_F16, "v100"), (F16_F16, "h100"), (TF32, "a100"), (TF32, "h100"), (E4M3, "ada"),
    (E4M3, "h100"), (E4M3, "b200-hmma")]


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("dp,profile", PROFILE_CASES, ids=lambda x: getattr(x, "id", x))
def test_profiles(dp, profile):
    same_words(dp, PROFILES[profile].params(dp))


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("dp", [BF16, F16_F16, MIXED], ids=lambda d: d.id)
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_baselines(dp, name):
    model = BASELINES[name](dp)
    # a composed baseline (two-stage) runs the engine on its product stage
    same_words(dp, model.params if hasattr(model, "params") else model.stage)


KNOBS = {
    "narrow-window-carry": dict(window_bits=3, carry_bits=2, block_size=5),
    "saturating-carry-rna": dict(window_bits=25, carry_bits=3, carry_top="saturate",
                                 output_rounding="rna"),
    "normalizing-carry-k8": dict(window_bits=23, carry_bits=2, carry_top="normalize",
                                 block_size=8, output_rounding="rne"),
    "normalized-align": dict(align="normalized", zero_floor=None, block_size=3),
    "k-order-inter-f16": dict(k_order=tuple(reversed(range(16))), block_size=4,
                              inter_type="f16", inter_rounding="rne"),
    "c-last-rna": dict(c_join="last", block_size=8, c_add_rounding="rna",
                       output_rounding="rna", overflow="saturate"),
    "c-convert-keep13": dict(c_convert="f16", output_frac_bits=13, zero_sign="ieee",
                             nan=0x7FC00000, overflow="ieee", output_rounding="rne"),
    "exact-blocks": dict(window_bits=None, block_size=2, inter_type="bf16",
                         inter_frac_bits=5),
}


@pytest.mark.fast_first(1)
@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_structural_knobs(knob):
    same_words(BF16, EngineParams(**KNOBS[knob]))


@pytest.mark.slow
@pytest.mark.parametrize("conv", ["truncate", "rne", "rna"])
def test_tf32_input_conversions(conv):
    same_words(TF32, EngineParams(input_conversion=conv, block_size=4, window_bits=24))


def test_sparse_masked_positions():
    dp = Datapath("mma", "bf16", "bf16", "bf16", "f32", 16, sparse=True)
    cases = raw_cases(BF16, 2000, 5)
    rng = np.random.default_rng(6)
    cases.active = rng.random((2000, 16)) < 0.5
    p = PROFILES["h100"].params(BF16)
    assert np.array_equal(fused_dot(dp, cases, p, fast=True), fused_dot(dp, cases, p, fast=False))


def test_threads_give_the_same_words():
    cases = raw_cases(BF16, 40_000, 9)
    p = PROFILES["b200-hmma"].params(BF16)
    one = fused_dot(BF16, cases, p, fast=True, speed=Speed(jobs=1))
    four = fused_dot(BF16, cases, p, fast=True, speed=Speed(jobs=4))
    assert np.array_equal(one, four)
    assert np.array_equal(one[:3000], fused_dot(BF16, cases.take(slice(0, 3000)), p, fast=False))


def test_unknown_parameter_falls_back(monkeypatch):
    """A parameter the fast path does not know, set away from its default,
    must send the model to the plain kernel."""
    monkeypatch.setattr(fastpath, "KNOWN_FIELDS", fastpath.KNOWN_FIELDS - {"carry_bits"})
    assert fastpath.supports(BF16, EngineParams())
    assert not fastpath.supports(BF16, EngineParams(carry_bits=3))


@pytest.mark.slow
def test_policy_keeps_small_one_off_batches_on_the_plain_kernel(monkeypatch):
    """A small batch of a configuration not run before stays on the plain
    kernel (no compile); a large one, one already run, or policy 'always'
    takes the fast path."""
    calls = []
    real = fastpath.fast_dot
    monkeypatch.setattr(fastpath, "fast_dot", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(fastpath, "_RAN", set())
    p = EngineParams(window_bits=21, block_size=4)
    small = raw_cases(BF16, 500, 3)
    fused_dot(BF16, small, p)
    assert not calls
    monkeypatch.setattr(fastpath, "AUTO_MIN_CASES", 400)
    fused_dot(BF16, small, p)
    assert len(calls) == 1
    monkeypatch.setattr(fastpath, "AUTO_MIN_CASES", 10**9)
    fused_dot(BF16, small.take(slice(0, 10)), p)  # ran before: fast
    assert len(calls) == 2
    fused_dot(BF16, small, p, speed=Speed("never"))
    assert len(calls) == 2
    fused_dot(BF16, small, EngineParams(window_bits=22), speed=Speed("always"))
    assert len(calls) == 3


def test_speed_is_checked():
    with pytest.raises(ValueError, match="policy"):
        Speed("sometimes")
    with pytest.raises(ValueError, match="jobs"):
        Speed(jobs=0)
    assert Speed.threads(3).jobs == 3


ODD_K = Datapath("mma", "f16", "f16", "f16", "f32", 5)
PROFILE_OF = {BF16: "h100", E4M3: "ada", ODD_K: "h100", F16_F16: "h100"}


@pytest.mark.parametrize("dp,operand,word", [
    (BF16, "a", 0x10000), (BF16, "b", 0x80000000), (F16_F16, "c", 0x13C00), (E4M3, "a", 0x100),
    (E4M3, "b", 0x1FF), (ODD_K, "a", 0x10000), (ODD_K, "b", 0x3C000)],
    ids=lambda x: getattr(x, "id", x))
@pytest.mark.parametrize("policy", ["always", "never"])
def test_word_out_of_range(dp, operand, word, policy):
    """A word with a bit above its format is refused on both kernels, with
    the words Cases.check names, wherever it sits (the fast kernel scans A and
    B as pairs of words; an odd K leaves the scan to the host)."""
    model = PROFILES[PROFILE_OF[dp]].model(dp)
    cases = raw_cases(dp, 40_000, seed=7)
    where = (33_333,) if operand == "c" else (33_333, dp.k - 1)
    getattr(cases, operand)[where] = word
    with pytest.raises(CasesError, match=f"a word of {operand} does not fit .* \\({word:#x}\\)"):
        model.evaluate(cases, Speed(policy))
    getattr(cases, operand)[where] = 0  # the same cases without it run, to the plain words
    assert np.array_equal(model.evaluate(cases, Speed(policy)),
                          fused_dot(dp, cases, model.params, fast=False))
