"""Shrink a mismatching case to a minimal reproducer (Hypothesis style).

A case mismatches when the device's word differs from the model's. Each
round builds every one-step simplification of the current case, runs them
all on the device and the model in one batch, and keeps the first that
still mismatches, in this order of preference:

1. fewer active lanes: a lane's A and B words become +0;
2. C becomes +0; then two lanes, or a lane and C, at once (terms that
   cancel each other go only in pairs);
3. simpler words: +0, sign cleared, dropped bits cleared, fraction
   cleared, the lowest fraction bit cleared, the exponent moved to 1.0's
   (then halfway, then one step) toward it; scales toward 1; integers
   toward 0.

Each step makes one word simpler (fewer lanes, fewer bits set, an exponent
nearer 1.0's); ``max_rounds`` bounds the search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcprobe.devices.base import Device
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.formats import Format, Kind, describe, get_format
from tcprobe.models.model import Model
from tcprobe.models.words import ulps_or_none


@dataclass
class Shrunk:
    case: Cases  # one case
    device_word: int
    model_word: int
    rounds: int
    start_lanes: int
    lanes: int


def _simpler_words(fmt: Format, w: int) -> list[int]:
    """One-step simplifications of the word ``w`` of ``fmt``."""
    out = []
    if fmt.kind == Kind.INT:
        v = w - (1 << fmt.width) if fmt.signed and w >> (fmt.width - 1) else w
        for x in (0, v // 2 if v > 0 else -((-v) // 2), v - 1 if v > 0 else v + 1):
            if abs(x) < abs(v):
                out.append(x & fmt.word_mask)
        return out
    if fmt.kind == Kind.E8M0:
        bias = fmt.bias
        for x in (bias, (w + bias) // 2, w - 1 if w > bias else w + 1):
            if abs(x - bias) < abs(w - bias):
                out.append(x)
        return out
    if w & ((1 << (fmt.width - 1)) - 1):  # a nonzero value: zero is simplest
        out.append(0)
    drop = fmt.drop_bits
    if drop and w & ((1 << drop) - 1):
        out.append(w & ~((1 << drop) - 1))
    body = w >> drop
    fb, eb = fmt.frac_bits, fmt.exp_bits
    frac = body & ((1 << fb) - 1)
    biased = (body >> fb) & ((1 << eb) - 1)
    sign = (body >> (fb + eb)) & 1 if fmt.signed else 0
    pack = lambda s, e, f: (((s << (fb + eb)) | (e << fb) | f) << drop) | (w & ((1 << drop) - 1))  # noqa: E731
    if sign:
        out.append(pack(0, biased, frac))
    if frac:
        out.append(pack(sign, biased, 0))
        low = frac & -frac
        if low != frac:
            out.append(pack(sign, biased, frac ^ low))
    if biased != fmt.bias and (biased or frac):
        for e in (fmt.bias, (biased + fmt.bias) // 2, biased - 1 if biased > fmt.bias else biased + 1):
            if abs(e - fmt.bias) < abs(biased - fmt.bias):
                out.append(pack(sign, e, frac))
    return list(dict.fromkeys(x for x in out if x != w))


def _candidates(dp: Datapath, case: Cases) -> list[Cases]:
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
    a, b, c = case.a[0], case.b[0], int(case.c[0])
    out = []

    def variant(**changes):
        new = Cases(changes.get("a", a).copy(), changes.get("b", b).copy(),
                    np.array([changes.get("c", c)], fc.dtype),
                    None if case.scale_a is None else changes.get("scale_a", case.scale_a[0]).copy(),
                    None if case.scale_b is None else changes.get("scale_b", case.scale_b[0]).copy(),
                    None if case.active is None else case.active.copy())
        out.append(new)

    live = [lane for lane in range(dp.k) if a[lane] or b[lane]]

    def without(*lanes):
        na, nb = a.copy(), b.copy()
        na[list(lanes)] = 0
        nb[list(lanes)] = 0
        return na, nb

    for lane in live:
        na, nb = without(lane)
        variant(a=na, b=nb)
    if c:
        variant(c=0)
    # terms that cancel go in pairs: two lanes, or a lane and C
    for i, lane in enumerate(live):
        for other in live[i + 1:]:
            na, nb = without(lane, other)
            variant(a=na, b=nb)
        if c:
            na, nb = without(lane)
            variant(a=na, b=nb, c=0)
    for name, fmt, arr in (("a", fa, a), ("b", fb, b)):
        for lane in range(dp.k):
            if not arr[lane]:
                continue
            for w in _simpler_words(fmt, int(arr[lane])):
                new = arr.copy()
                new[lane] = w
                variant(**{name: new})
    for w in _simpler_words(fc, c):
        variant(c=w)
    if case.scale_a is not None:
        fs = get_format(dp.scale_type)
        for name, arr in (("scale_a", case.scale_a[0]), ("scale_b", case.scale_b[0])):
            for j in range(len(arr)):
                for w in _simpler_words(fs, int(arr[j])):
                    new = arr.copy()
                    new[j] = w
                    variant(**{name: new})
    return out


class NotAlone(ValueError):
    """The case mismatches in its batch but not when run alone (the device's
    word depends on the cases run beside it): nothing to shrink."""


def active_lanes(case: Cases) -> int:
    a, b = case.masked()
    return int(((a[0] != 0) | (b[0] != 0)).sum())


def shrink(dp: Datapath, device: Device, model: Model, case: Cases, max_rounds: int = 200) -> Shrunk:
    """The simplest case reached from ``case`` that still mismatches on ``device``."""
    return minimize(dp, case, lambda cases: device.run(dp, cases), model.evaluate, max_rounds)


def minimize(dp: Datapath, case: Cases, device_words, model_words, max_rounds: int = 200) -> Shrunk:
    """The simplest case reached from ``case`` on which ``device_words(cases)``
    (a device, or a live oracle) and ``model_words(cases)`` still differ."""
    dw = int(device_words(case)[0])
    mw = int(model_words(case)[0])
    if dw == mw:
        raise NotAlone("the case does not mismatch when run alone: nothing to shrink")
    start = active_lanes(case)
    rounds = 0
    current = case
    if current.active is not None:  # clear the positions the metadata does not select
        a, b = current.masked()
        current = Cases(a, b, current.c, current.scale_a, current.scale_b, current.active)
        d2, m2 = int(device_words(current)[0]), int(model_words(current)[0])
        if d2 != m2:
            dw, mw = d2, m2
        else:
            current = case
    while rounds < max_rounds:
        cands = _candidates(dp, current)
        if not cands:
            break
        batch = Cases.concat(cands)
        word = get_format(dp.d_type).dtype
        dws = np.asarray(device_words(batch)).astype(word, copy=False)
        mws = np.asarray(model_words(batch)).astype(word, copy=False)
        hit = np.flatnonzero(dws != mws)
        if hit.size == 0:
            break
        j = int(hit[0])
        current, dw, mw = cands[j], int(dws[j]), int(mws[j])
        rounds += 1
    return Shrunk(current, dw, mw, rounds, start, active_lanes(current))


def _list(fmt: Format, words, trim: bool = True) -> str:
    words = [int(w) for w in np.ravel(words)]
    if trim:
        while words and words[-1] == 0:
            words.pop()
    return ",".join(f"{w:#x}" if w else "0" for w in words) or "0"


def command(dp: Datapath, device_name: str, model_name: str, case: Cases) -> str:
    """The ``tcprobe run-case`` command line that reruns one case."""
    fa, fb, fc = get_format(dp.a_type), get_format(dp.b_type), get_format(dp.c)
    parts = ["tcprobe", "run-case", "--device", device_name, "--datapath", dp.id,
             "--model", model_name, "--a", _list(fa, case.a[0]), "--b", _list(fb, case.b[0]),
             "--c", _list(fc, case.c, trim=False)]
    if case.scale_a is not None:
        fs = get_format(dp.scale_type)
        parts += ["--scale-a", _list(fs, case.scale_a[0], False),
                  "--scale-b", _list(fs, case.scale_b[0], False)]
    if case.active is not None:
        parts += ["--active", ",".join(str(i) for i in np.flatnonzero(case.active[0]))]
    return " ".join(parts)


def reproducer(dp: Datapath, device: Device, model: Model, s: Shrunk) -> dict:
    """A shrunk mismatch as the report stores it."""
    fd = get_format(dp.d_type)
    ulps = ulps_or_none(fd, s.model_word, s.device_word)
    return {"command": command(dp, device.name, model.name, s.case),
            "device_word": describe(fd, s.device_word), "model_word": describe(fd, s.model_word),
            "ulps": ulps, "lanes": s.lanes, "lanes_before": s.start_lanes, "rounds": s.rounds}
