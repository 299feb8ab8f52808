"""The cases the ladder checks its fingerprint's model on.

A fingerprint is called validated only after cases that can fail on every
key it reports: the random mix (:mod:`tcprobe.suites.mix`), the same mix
with every dropped input bit live (tf32's low 13 bits: the bits an input
conversion reads), the raw, finite, edge and adversarial suites that
``tcprobe validate`` runs (and the sparse suite on sparse kinds), C alone
in a block (every product a zero: a floor that binds only through C), C
beside products that cancel exactly, and lone products that are exact ties
at an output step but for one deep bit (a window's end: floors, kept widths),
and on AMD v_mfma ties beside a deep product and negative products far below
a block's largest (F past C's floor). They are drawn from a seed that
differs from the probes' (:func:`validation_seed`), so no probe case is
replayed as its own check.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import PARAM, ROUNDINGS
from tcprobe.models.formats import get_format
from tcprobe.models.words import emax_biased, exp_range, max_frac, pack, product, word
from tcprobe.probes.common import complete, lone_ties
from tcprobe.suites import generate, generators
from tcprobe.suites.mix import random_cases

# The validation seed is the probes' seed moved by this (the probes draw from
# ``seed`` itself): any ladder seed gives validation cases no probe drew.
SEED_OFFSET = 0x5EED_0001

# Share of the cases per part (normalized over the parts that apply).
SHARES = {"mix": 3, "dropped-bits": 1, "raw": 1, "finite": 1, "edge": 1, "adversarial": 3,
          "sparse": 1, "c-alone": 1, "cancel": 1, "ties": 1, "mfma-ties": 2,
          "mfma-far": 1}


def validation_seed(seed: int) -> int:
    """The seed of the ladder's validation cases for a ladder run with ``seed``."""
    return (int(seed) + SEED_OFFSET) & 0xFFFF_FFFF_FFFF


def _parts(dp: Datapath) -> list[str]:
    names = ["mix"]
    if not dp.is_integer and (get_format(dp.a_type).drop_bits or get_format(dp.b_type).drop_bits):
        names.append("dropped-bits")
    for s in ("raw", "finite", "edge", "adversarial") + (("sparse",) if dp.sparse else ()):
        if generators(dp, s):
            names.append(s)
    if not dp.is_integer:
        names += ["c-alone", "cancel", "ties"]
    if dp.family == "mfma":  # AMD: the depths a truncated design keeps (F, F2)
        names += ["mfma-ties", "mfma-far"]
    return names


def _counts(dp: Datapath, n: int) -> dict[str, int]:
    names = _parts(dp)
    total = sum(SHARES[p] for p in names)
    counts = {p: n * SHARES[p] // total for p in names}
    counts["mix"] += n - sum(counts.values())
    return {p: c for p, c in counts.items() if c > 0}


def _live_drops(dp: Datapath, cases: Cases, rng) -> Cases:
    """``cases`` with random bits in every dropped low bit of A and B."""
    a, b = cases.a.copy(), cases.b.copy()
    for arr, fmt in ((a, get_format(dp.a_type)), (b, get_format(dp.b_type))):
        if fmt.drop_bits:
            low = rng.integers(0, 1 << fmt.drop_bits, arr.shape, dtype=np.uint64)
            arr |= low.astype(arr.dtype)
    return Cases(a, b, cases.c, cases.scale_a, cases.scale_b, cases.active)


def _c_words(fc, n: int, rng) -> np.ndarray:
    """C over its whole range, weighted to the bottom: half subnormal or
    within 30 binades of the smallest normal (the floors), the rest any
    finite exponent; random signs, random fractions."""
    biased = np.where(rng.integers(0, 2, n) == 0,
                      rng.integers(0, 31, n),
                      rng.integers(0, emax_biased(fc) + 1, n))
    biased = np.clip(biased, 0, emax_biased(fc))
    frac = np.minimum(rng.integers(0, 1 << fc.frac_bits, n, dtype=np.int64), max_frac(fc, biased))
    frac = np.where((biased == 0) & (frac == 0), 1, frac)  # a subnormal, not a zero
    sign = rng.integers(0, 2, n) if fc.signed else 0
    return pack(fc, sign, biased, frac).astype(fc.dtype)


def _signed_zeros(fmt, shape, rng) -> np.ndarray:
    z = np.zeros(shape, fmt.dtype)
    if fmt.signed:
        z |= (rng.integers(0, 2, shape).astype(fmt.dtype) << fmt.dtype(fmt.width - 1))
    return z


def _c_alone(dp: Datapath, n: int, rng) -> Cases:
    """Every product a zero (A or B a zero of random sign in each lane, the
    other factor random) and C anywhere, mostly tiny."""
    k = dp.k
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
    other = random_cases(dp, n, rng)
    zero_a = rng.integers(0, 2, (n, k)).astype(bool)
    a = np.where(zero_a, _signed_zeros(fa, (n, k), rng), other.a).astype(fa.dtype)
    b = np.where(zero_a, other.b, _signed_zeros(fb, (n, k), rng)).astype(fb.dtype)
    return Cases(a, b, _c_words(fc, n, rng), other.scale_a, other.scale_b, other.active)


def _cancel(dp: Datapath, n: int, rng) -> Cases:
    """Products that cancel exactly (lane 2j+1 is lane 2j with B negated; a
    lane left over is a zero) beside C anywhere, mostly tiny. A sparse mask
    that drops one of a pair leaves the other: fine, it is still a case."""
    k = dp.k
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
    base = random_cases(dp, n, rng)
    a, b = base.a.copy(), base.b.copy()
    m = k - k % 2
    if m:
        a[:, 1:m:2] = a[:, 0:m:2]
        b[:, 1:m:2] = b[:, 0:m:2] ^ fb.dtype(1 << (fb.width - 1))
    if k % 2:
        a[:, k - 1] = _signed_zeros(fa, n, rng)
    # an Inf or NaN does not cancel: such a row's A becomes zeros (C alone)
    a[~_finite_rows(dp, a, b)] = _signed_zeros(fa, k, rng)
    return Cases(a, b, _c_words(fc, n, rng), base.scale_a, base.scale_b, base.active)


def _ties(dp: Datapath, n: int, rng) -> Cases:
    """One product in a random lane (the others zeros of random sign). Half
    the rows: C a zero of random sign and the product an exact tie half an
    output step above zero (the step of a random kept width) but for one
    deeper set bit at a random depth (:func:`~tcprobe.probes.common.lone_ties`);
    the other half: C = 2^x plain or with a tie at a random kept width, the
    product a lone -2^y a random depth below. Whether the window (a
    floor-held anchor's) keeps that bit decides the rounding: a floor, a kept
    width and a nearest rounding can each fail here."""
    k = dp.k
    fa, fb, fc, fd = (get_format(t) for t in (dp.a_type, dp.b_type, dp.c, dp.d_type))
    pairs = sorted(lone_ties(fa.name, fb.name).values())
    base = random_cases(dp, n, rng)
    a, b = _signed_zeros(fa, (n, k), rng), _signed_zeros(fb, (n, k), rng)
    _, emin, _ = exp_range(fd)
    keeps = rng.integers(0, fd.frac_bits + 1, n)
    pick = rng.integers(0, len(pairs), n) if pairs else np.zeros(n, np.int64)
    signs, lanes = rng.integers(0, 2, n), rng.integers(0, k, n)
    c = _signed_zeros(fc, n, rng)
    csub, _, cmax = exp_range(fc)
    for i in range(n if pairs else 0):
        if i % 2:
            # C = 2^x with a tie at a random kept width (none, even, odd) and
            # a lone -2^y a random depth below: a floor above x anchors both
            kb = min(int(keeps[i]), fc.frac_bits - 1)
            tie = (0, 1 << (fc.frac_bits - kb - 1), 3 << (fc.frac_bits - kb - 1))[i % 3]
            x = int(rng.integers(csub + fc.frac_bits, min(cmax, 40) + 1))
            cw = word(fc, 0, (1 << fc.frac_bits) | tie, x - fc.frac_bits)
            p = product(fa, fb, x - int(rng.integers(1, 65)), 1)
            if cw is not None and p is not None:
                a[i, lanes[i]], b[i, lanes[i]], c[i] = p[0], p[1], cw
            continue
        m1, m2, top = pairs[int(pick[i])]
        e = emin - int(keeps[i]) - 1 - top + fa.frac_bits + fb.frac_bits
        p = product(fa, fb, e, int(signs[i]), (m1, m2), (fa.frac_bits, fb.frac_bits))
        if p is not None:
            a[i, lanes[i]], b[i, lanes[i]] = p[0], p[1]
    return Cases(a, b, c, base.scale_a, base.scale_b, base.active)


def _mfma_ties(dp: Datapath, n: int, rng) -> Cases:
    """Two products in a random pair of neighbouring lanes: half of the cases
    a C of random even significand beside a product of exactly half C's ulp
    (a tie) and one of its sign 1 to 16 bits below that, the other half a C that cancels the first
    product (2**h) beside one 1 to 40 bits below it. Where the small product
    reaches the final rounding breaks the tie or survives: a truncated
    design's F2 and F, one bit either way."""
    from tcprobe.models.words import exp_range, product, word

    fa, fb, fd = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.d_type)
    k, frac = dp.k, fd.frac_bits
    sa, _, xa = exp_range(fa)
    sb, _, xb = exp_range(fb)
    _, _, xd = exp_range(fd)
    lo, hi = sa + sb, xa + xb
    a = np.zeros((n, k), fa.dtype)
    b = np.zeros((n, k), fb.dtype)
    c = np.zeros(n, fd.dtype)
    for i in range(n):
        lane = int(rng.integers(0, k))
        lanes = (lane, lane ^ 1)  # a pair of neighbours: one block wherever blocks are
        tie = i % 2 == 0
        depth = int(rng.integers(1, 17 if tie else 41))
        s0, s1, sc = (int(x) for x in rng.integers(0, 2, 3))
        s1 = s0 if tie else s1  # a small product of the tie's sign breaks it either way
        top = min(hi, xd - frac - 2 if tie else xd - 2)
        if lo + depth > top:
            continue
        first = int(rng.integers(max(lo + depth, top - 20), top + 1))
        if tie:  # C of even significand: a tie rounds to C unless broken
            even = int(rng.integers(0, 1 << min(frac, 62))) & ~1
            cw = word(fd, sc, (1 << frac) | even, first + 1)
        else:  # C = -(the first product)
            cw = word(fd, 1 - s0, 1, first)
        p0 = product(fa, fb, first, s0)
        p1 = product(fa, fb, first - depth, s1)
        if cw is None or p0 is None or p1 is None or lanes[1] >= k:
            continue
        a[i, lanes[0]], b[i, lanes[0]] = p0[0], p0[1]
        a[i, lanes[1]], b[i, lanes[1]] = p1[0], p1[1]
        c[i] = cw
    return Cases(a, b, c)


def mfma_far(dp: Datapath, n: int, rng) -> Cases:
    """A negative product far below a block's largest, to the product range's end:
    half of the cases 2**H and -2**H in two lanes of an aligned four and
    -2**(H - k) in the third (the first one's parity) beside C = +0, the other
    half 2**H and -2**(H - k) in neighbouring lanes beside C = -2**H. H the
    largest product below 2**128 half the time (a truncated block's largest),
    else any (past f32's range too), k any depth to the smallest product. A
    truncated design cuts the small product away (+0) while k > F whatever F2
    is: a window read short of F (C's depth stopped by F2's floor under a
    subnormal C, seed 3704's xf32 F = 533 read as 253) misses these words."""
    fa, fb, fd = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.d_type)
    k = dp.k
    sa, _, xa = exp_range(fa)
    sb, _, xb = exp_range(fb)
    lo, hi = sa + sb, xa + xb
    a, b, c = np.zeros((n, k), fa.dtype), np.zeros((n, k), fb.dtype), np.zeros(n, fd.dtype)
    for i in range(n):
        three = i % 2 == 0 and k >= 3
        top = min(hi, 127) if three else min(hi, exp_range(fd)[2])  # C = -2**H: an f32 word
        h = top if rng.random() < 0.5 else int(rng.integers(lo + 1, (hi if three else top) + 1))
        if k < 2 or h - lo < 1:
            continue
        depth = int(rng.integers(1, h - lo + 1))
        big, tiny = product(fa, fb, h), product(fa, fb, h - depth, 1)
        if three:
            base = 4 * int(rng.integers(0, (k - 3) // 4 + 1))
            lanes = {base: big, base + 1: product(fa, fb, h, 1), base + 2: tiny}
            cw = word(fd, 0, 0, 0)
        else:
            lane = int(rng.integers(0, k)) & ~1
            lanes = {lane: big, lane + 1: tiny}
            cw = word(fd, 1, 1, h)
        if cw is None or any(p is None for p in lanes.values()) or max(lanes) >= k:
            continue
        for j, p in lanes.items():
            a[i, j], b[i, j] = p[0], p[1]
        c[i] = cw
    return Cases(a, b, c)


def _finite_rows(dp: Datapath, a, b) -> np.ndarray:
    """Rows whose A and B words are all finite (an Inf or NaN does not cancel)."""
    from tcprobe.models.formats import Class, decode

    ok = np.ones(len(a), bool)
    for arr, t in ((a, dp.a_type), (b, dp.b_type)):
        cls = decode(get_format(t), arr).cls
        ok &= ~((cls == Class.NAN) | (cls == Class.INF)).any(axis=1)
    return ok


def validation_cases(dp: Datapath, n: int, seed: int) -> tuple[Cases, np.ndarray, list[str]]:
    """(about ``n`` cases, each case's part index, the part names) for a
    ladder run with ``seed``; every case complete (scales, sparse masks)."""
    vseed = validation_seed(seed)
    rng = np.random.default_rng(vseed)
    counts = _counts(dp, n)
    names = list(counts)
    parts, which = [], []
    for i, name in enumerate(names):
        m = counts[name]
        if name == "mix":
            cs = random_cases(dp, m, rng)
        elif name == "dropped-bits":
            cs = _live_drops(dp, random_cases(dp, m, rng), rng)
        elif name == "c-alone":
            cs = _c_alone(dp, m, rng)
        elif name == "cancel":
            cs = _cancel(dp, m, rng)
        elif name == "ties":
            cs = _ties(dp, m, rng)
        elif name == "mfma-ties":
            cs = _mfma_ties(dp, m, rng)
        elif name == "mfma-far":
            cs = mfma_far(dp, m, rng)
        else:
            cs, _ = generate(dp, name, vseed, 0, m)
        cs = complete(dp, Cases(cs.a, cs.b, cs.c, cs.scale_a, cs.scale_b, cs.active))
        if len(cs):
            parts.append(cs)
            which.append(np.full(len(cs), i, np.int16))
    return Cases.concat(parts), np.concatenate(which), names


def _span(values: list, none: str = "no floor") -> str:
    """Values as runs: 'no floor, -149 to -120, -118' (``none``: None's name)."""
    if any(isinstance(v, str) for v in values):  # names (an intermediate type)
        return ", ".join(str(v) for v in values)
    named = [none for v in values if v is None]
    nums = sorted(v for v in values if v is not None)
    runs, start = [], None
    for i, v in enumerate(nums):
        if start is None:
            start = v
        if i + 1 == len(nums) or nums[i + 1] != v + 1:
            runs.append(str(v) if v == start else f"{start} to {v}")
            start = None
    return ", ".join(named + runs)


def _settled(ctx, key: str, value):
    """``value`` as the fingerprint writes it: the output's own width of
    kept fraction bits is ``None`` (as every step reports it)."""
    if key == "output_frac_bits" and value == ctx.d_fmt.frac_bits:
        return None
    return value


def _companions(fp, ranged) -> dict:
    """Open keys a range's values are tried with (every value of each): an
    open output rounding (RZ, RNE, RNA) and open carry bits (the model's
    assumed top, or none). A value of a ranged key fits when the device's
    words come out with some reading of these: the key alone, at the
    others' assumed values, could name a range narrower than the truth."""
    out = {}
    if "output_rounding" in fp.undetermined and "output_rounding" not in ranged:
        out["output_rounding"] = list(ROUNDINGS)
    if "carry_bits" in fp.undetermined and "carry_bits" not in ranged:
        out["carry_bits"] = list(dict.fromkeys([fp.assumed.get("carry_bits"), None]))
    return out


class _Matcher:
    """Whether a model gives ``words`` on every one of ``cases``, judged first
    on a few cases (a spread sample, then every case a tried model has missed
    on the full set): a model that misses one of those is out without running
    the rest. The same verdict as comparing on every case, found in a
    fraction of the time when most models tried miss (a range's product of
    readings: thousands of models on 10,000 cases)."""

    SAMPLE, GROW, MOST = 192, 8, 1024

    def __init__(self, cases: Cases, words: np.ndarray):
        self.cases, self.words = cases, np.asarray(words, np.uint32)
        n = len(cases)
        self.probe = np.unique(np.linspace(0, n - 1, min(n, self.SAMPLE)).astype(np.int64))
        self._sub = None

    def __call__(self, model) -> bool:
        if len(self.probe) < len(self.cases):
            if self._sub is None:
                self._sub = self.cases.take(self.probe)
            if not np.array_equal(model.evaluate(self._sub), self.words[self.probe]):
                return False
        miss = np.flatnonzero(model.evaluate(self.cases) != self.words)
        if miss.size and len(self.probe) < self.MOST:  # these tell the next models apart
            self.probe, self._sub = np.union1d(self.probe, miss[:self.GROW]), None
        return not miss.size


def _trial(fp, over: dict):
    """``fp`` with the keys of ``over`` set to its values (taken out of the
    assumed ones)."""
    assumed = {k: a for k, a in fp.assumed.items() if k not in over}
    # None is a value of a nullable key (window_bits: an exact sum), not its default
    assumed.update({k: None for k, v in over.items() if v is None and k in PARAM
                    and PARAM[k].nullable})
    return replace(fp, **over, assumed=assumed)


def _fitting(ctx, fp, space: dict, ranged: dict, matches) -> dict:
    """For each ranged key, the values some reading of ``space`` (every key's
    values, combined) gives the device's words with (``matches``, a
    :class:`_Matcher`); a combination whose ranged values are all known to
    fit already is skipped."""
    keys = list(space)
    fits = {k: [] for k in ranged}
    for combo in itertools.product(*(space[k] for k in keys)):
        over = dict(zip(keys, combo, strict=True))
        if all(over[k] in fits[k] for k in ranged):
            continue
        if matches(_trial(fp, over).model(ctx.dp)):
            for k in ranged:
                if over[k] not in fits[k]:
                    fits[k].append(over[k])
    return {k: [v for v in ranged[k] if v in fits[k]] for k in ranged}


# The most models _unsettled_by tries for one key (a floor's hundred values,
# each with every rounding, under each other reading): past it, the settling stands.
UNSETTLE_TRIES = 4000


def _unsettled_by(ctx, fp, key: str, value, ranged: dict, fits: dict, space: dict,
                  matches) -> tuple | None:
    """(other key, its value, another value of ``key``) where an open key
    the ranges were not tried with (one of named choices: a rounding of the
    blocks' results, their type, the input conversion, ...) read another way
    lets another value of ``key`` give the device's words too; None where no
    such reading turns up. So a key only ``value`` fits is settled only when
    that does not hang on another key's assumed value. Each other key is
    read one at a time, the other ranges at a value that fits, the
    companions (:func:`_companions`) every way."""
    others = {k: [v for v in [*PARAM[k].choices, *([None] if PARAM[k].nullable else [])]
                  if v != fp.assumed.get(k, PARAM[k].default)]
              for k in fp.undetermined
              if k not in space and k in PARAM and PARAM[k].kind in ("choice", "format")}
    base = {k: fits[k][0] for k in ranged if k != key and fits[k]}
    rest = {k: v for k, v in space.items() if k not in ranged}
    tries = 0
    for other, alternatives in others.items():
        for alt in alternatives:
            sub = {**rest, other: [alt], key: [v for v in ranged[key] if v != value]}
            for combo in itertools.product(*sub.values()):
                tries += 1
                if tries > UNSETTLE_TRIES:
                    return None
                over = {**base, **dict(zip(sub, combo, strict=True))}
                try:
                    if matches(_trial(fp, over).model(ctx.dp)):
                        return other, alt, over[key]
                except ValueError:  # a reading the engine cannot run
                    continue
    return None


def check_ranges(ctx, fp, cases: Cases, device_words: np.ndarray) -> None:
    """Check every range a step left ``undetermined`` (its ``candidates``) on
    the validation cases: each value's model against the device's words,
    with every reading of the other open keys (the other ranges, an open
    rounding, open carry bits). A range that holds says it was checked;
    where some values give other words, the text names only those that fit,
    and a key only one value fits is settled. Changes ``fp`` in place."""
    n = len(cases)
    ranged, step_of, settle_only = {}, {}, set()
    for step in ctx.order:
        found = ctx.findings[step].values
        for key, values in found.get("candidates", {}).items():
            if key in fp.undetermined and len(values) >= 2:
                ranged[key], step_of[key] = list(values), step
        settle_only |= set(found.get("settle_only", ()))
        for key in found.get("refit_only", ()):  # candidates for refit_ranges alone
            ranged.pop(key, None)
    if not ranged:
        return
    space = {**ranged, **_companions(fp, ranged)}
    matches = _Matcher(cases, device_words)
    fits = _fitting(ctx, fp, space, ranged, matches)
    for key, values in ranged.items():
        ok = fits[key]
        if key in settle_only and len(ok) == len(values):
            continue  # settled where one value fits; else open as the step named it, unchecked
        ctx.ranges[key] = [_settled(ctx, key, v) for v in ok]
        span = lambda vs: _span(vs, "an exact sum" if key == "window_bits" else "no floor")  # noqa: E731,B023
        if len(ok) == len(values):
            fp.undetermined[key] += (f"; checked: each of {span(values)} gives the "
                                     f"device's words on the {n:,} validation cases")
        elif len(ok) == 1 and ok[0] is not None and (hung := _unsettled_by(
                ctx, fp, key, ok[0], ranged, fits, space, matches)):
            other, alt, also = hung
            fp.assumed[key] = ok[0]
            fp.undetermined[key] = (
                f"on the {n:,} validation cases only {span(ok)} of {span(values)} gives the "
                f"device's words with {other} as assumed, but with {other} = {alt}, "
                f"{span([also])} does too")
        elif len(ok) == 1 and ok[0] is not None:
            setattr(fp, key, _settled(ctx, key, ok[0]))
            fp.undetermined.pop(key)
            fp.assumed.pop(key, None)
            for other in _companions(fp, ranged):  # their texts may name the other values
                fp.undetermined[other] += (f"; the {n:,} validation cases settle {key} "
                                           f"at {ok[0]}, whatever {other} is")
        else:
            fp.undetermined[key] = (
                f"{step_of[key]} could not tell {span(values)} apart; on the {n:,} validation "
                f"cases only {span(ok) or 'none'} give the device's words")


def confirm_unsure(ctx, fp) -> list[str]:
    """The values a step took without confirming them on its own cases (its
    ``unsure``: the model takes them, the fingerprint names them open, as a
    split whose random sums no reading fitted before the later steps had
    read the rounding and carry) stated found, once the whole model gives
    every validation word. Call only then. Returns the keys stated."""
    stated = []
    for step in ctx.order:
        for key, why in ctx.findings[step].values.get("unsure", {}).items():
            if fp.undetermined.get(key) != why:
                continue  # a later step or the validation said more
            fp.undetermined.pop(key)
            if key in fp.assumed:
                setattr(fp, key, fp.assumed.pop(key))
            stated.append(key)
    return stated


def refit_ranges(ctx, fp, cases: Cases, device_words: np.ndarray) -> str | None:
    """Where ``fp``'s model misses some of ``device_words`` and a step left a
    key open over candidate values (its ``candidates``: a range its own
    cases could not narrow), take the first value whose model gives every
    word (``fp.assumed`` changed in place; :func:`check_ranges` then names
    which values fit). Returns the key changed, or None (``fp`` as it was)."""
    matches = _Matcher(cases, device_words)
    for step in ctx.order:
        for key, values in ctx.findings[step].values.get("candidates", {}).items():
            if key not in fp.undetermined or getattr(fp, key, None) is not None:
                continue
            had, old = key in fp.assumed, fp.assumed.get(key)
            for v in values:
                if had and v == old:
                    continue
                fp.assumed[key] = v
                try:
                    if matches(fp.model(ctx.dp)):
                        taken = _span([v], "an exact sum" if key == "window_bits" else "no floor")
                        fp.undetermined[key] += (f"; the model takes {taken}, the first value "
                                                 "of the range that gives every validation word")
                        return key
                except ValueError:
                    pass
            if had:
                fp.assumed[key] = old
            else:
                fp.assumed.pop(key, None)
    return None
