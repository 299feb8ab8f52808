"""Random custom AMD sim profiles (a ``gpu`` of CDNA and an ``[mfma]`` table),
and the judge of a ladder run on each (tests/test_ladder_amd_designs.py).

:func:`draw` picks an AMD GPU, one of its v_mfma instructions (every kind:
f32 with K = 1, 2, 4, f64, xf32, f16, bf16, bf16_1k, fp8/bf8 in all four
pairings) and a design of models/amd.py with its keys over the whole range
models/amd.py and the profile schema take (block 1 to 64, ftz P = 2 or 4;
with ``narrow`` window 0 to 64 and window2 from max(0, window - 1) to 64, else
both from 24 (F2 from max(24, window - 1)), as seeds drawn before; ``wide``:
L, F, F2 past 64 too, up to the exact bound + 40 or huge), redrawn until the
GPU's profile runs the instruction under it (an f64 v_mfma runs fma only,
ftz needs K a multiple of P).

:func:`judge` runs the ladder and sorts every key the design reads into
exact, open (named in ``fingerprint.undetermined`` as ``mfma.KEY``) or
wrong. An open key must be truly open: the fingerprint's model gives the
device's words on a held-out set (random and special-heavy words, the
ladder's validation mix, its tie cases and far products, from a seed neither
the probes nor the validation draw from), and every value of the range the
step names open (``values["open"]``; hi None: without end) gives them too,
and the step's own words (:func:`untrue_ranges`: proven on those rows for F
and F2, tests/amd_ranges.py). A fingerprint called validated
whose model misses a held-out word is ``wrong_validated``: never allowed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ladder_designs import Verdict as DesignVerdict

from tcprobe.models import amd_profiles, isa_amd
from tcprobe.models.amd import (
    DESIGN_KEYS,
    DESIGNS,
    WINDOW2_MIN,
    WINDOW_MIN,
    MfmaModel,
    MfmaParams,
    check_params,
    check_ranges,
    exact_bound,
)
from tcprobe.models.model import ModelError

HELD_OUT_SEED = 0xA3D_36
MMASIM_F = 24  # MMA-Sim's F (f32's significand): the draws' neighbourhood
GPUS = tuple(isa_amd.GPU_ARCH)
BLOCKS = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 64)
DRAW_MAX = 64  # F and F2 drawn up to 64 (as seeds drawn before), L up to 64; --wide: past them


def _instructions(gpu):
    return [amd_profiles.datapath(i) for i in isa_amd.instructions(isa_amd.GPU_ARCH[gpu])]


def draw(rng, narrow: bool = False, below: bool = False, wide: bool = False) -> tuple[str, str, dict]:
    """(GPU, datapath id, [mfma] table) of one random design the GPU runs
    (``below``: as ``narrow``, and F2 below F - 1 half the time, from 0; ``wide``:
    as ``below``, then L, F or F2 past 64, where a profile takes any value)."""
    narrow = narrow or below or wide
    below = below or wide
    while True:
        gpu = str(rng.choice(GPUS))
        dps = {dp.id: dp for dp in _instructions(gpu)}
        dp = dps[str(rng.choice(sorted(dps)))]
        design = str(rng.choice(DESIGNS))
        t = {"design": design}
        if "block" in DESIGN_KEYS[design]:
            t["block"] = int(rng.choice((2, 4))) if design == "ftz" else \
                int(rng.choice(BLOCKS)) if rng.random() < 0.7 else int(rng.integers(1, 65))
        if "window" in DESIGN_KEYS[design]:
            # the whole range models/amd.py takes, MMA-Sim's neighbourhood drawn more often
            # (``narrow``: F below 24 a third of the time; without it F from 24, as seeds
            # drawn before F went below 24)
            lo, hi = (WINDOW_MIN if narrow else MMASIM_F), DRAW_MAX
            if narrow and rng.random() < 1 / 3:
                t["window"] = int(rng.integers(WINDOW_MIN, MMASIM_F))
            else:
                t["window"] = int(rng.integers(lo, hi + 1)) if rng.random() < 0.5 else \
                    int(rng.integers(MMASIM_F, MMASIM_F + 8))
            low2 = max(MMASIM_F, t["window"] - 1)
            if narrow and rng.random() < 1 / 3:  # F2 below 24 (from F - 1)
                low2 = max(WINDOW2_MIN, t["window"] - 1)
                if low2 < MMASIM_F:
                    t["window2"] = int(rng.integers(low2, MMASIM_F))
                    t["window"] = min(t["window"], t["window2"] + 1)
            if below and "window2" not in t and t["window"] >= 2 and rng.random() < 0.5:
                t["window2"] = int(rng.integers(WINDOW2_MIN, t["window"] - 1))  # F2 + 1 < F
            if "window2" not in t:
                t["window2"] = int(rng.integers(low2, hi + 1)) if rng.random() < 0.5 else \
                    min(hi, low2 + int(rng.integers(0, 10)))
        if wide:
            _widen(rng, dp, t)
        try:
            check_ranges(MfmaParams(**t))
            check_params(MfmaParams(**t), dp)
        except ModelError:
            continue
        return gpu, dp.id, t


def _widen(rng, dp, t: dict) -> None:
    """``t`` with L, F and F2 each past 64 a third of the time: up to
    exact_bound + 40 (the datapath's whole reach and past it), or a huge value."""
    bound = exact_bound(dp)
    for key in ("block", "window", "window2"):
        if key not in t or t["design"] == "ftz" or rng.random() >= 1 / 3:
            continue
        if key == "block":
            t[key] = int(rng.integers(65, 1000)) if rng.random() < 0.8 else 2 ** 40
        else:
            t[key] = int(rng.integers(65, bound + 41)) if rng.random() < 0.85 else \
                int(rng.choice((bound, 10 ** 6, 2 ** 62)))


def designs(seed: int, count: int, narrow: bool = False,
            below: bool = False, wide: bool = False) -> list[tuple[str, str, dict]]:
    rng = np.random.default_rng(seed)
    return [draw(rng, narrow, below, wide) for _ in range(count)]


def write_device(path: Path, gpu: str, table: dict):
    """The sim device of one design: a TOML profile with an [mfma] table."""
    from tcprobe.devices.sim import SimDevice

    lines = [f'name = "{path.stem}"', f'gpu = "{gpu}"', "[mfma]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    path.write_text("\n".join(lines) + "\n")
    return SimDevice.from_toml(path)


def held_out(dp, n: int, seed: int = HELD_OUT_SEED):
    """Random and special-heavy words, the validation mix and its AMD tie cases
    (``n`` of them), and n // 3 more of its far products (a window misread short
    of F: tcprobe.ladder.validation.mfma_far), from a stream of their own."""
    from tcprobe.ladder.validation import _mfma_ties, mfma_far
    from tcprobe.models.amd_cases import amd_cases
    from tcprobe.models.cases import Cases
    from tcprobe.suites.mix import random_cases

    rng = np.random.default_rng(seed)
    return Cases.concat([amd_cases(dp, n // 3, rng), random_cases(dp, n // 3, rng),
                         _mfma_ties(dp, n - 2 * (n // 3), rng),
                         mfma_far(dp, n // 3, np.random.default_rng([seed, 3]))])


@dataclass
class Verdict(DesignVerdict):
    """The NVIDIA designs' verdict (tests/ladder_designs.py) with the mfma step's status."""

    status: str = ""

    def text(self) -> str:
        return f"({self.status}) " + super().text()


def _words(dp, params, cases):
    """The design's words, None outside the ranges a profile takes."""
    try:
        check_ranges(params)
        return MfmaModel("judge", dp, "", params).evaluate(cases)
    except ModelError:
        return None


def judge(dev, dp, n_held_out: int = 1500, validate_cases: int = 2000):
    """Run the ladder on ``dev`` for ``dp`` and judge its fingerprint."""
    from tcprobe.ladder import run_ladder

    res = run_ladder(dev, dp, validate_cases=validate_cases)
    truth = dev.model(dp).params
    step = res.finding("mfma")
    fp = res.fingerprint
    if fp is None or fp.mfma is None:
        return Verdict(res.validated, -1, wrong={"design": (None, truth.design)},
                       status=step.status), res
    cases = held_out(dp, n_held_out)
    got = dev.run(dp, cases)
    mine = _words(dp, MfmaParams(**fp.mfma), cases)
    miss = len(cases) if mine is None else int((mine != got).sum())
    v = Verdict(res.validated, miss, status=step.status)
    opened = {k.removeprefix("mfma.") for k in fp.undetermined if k.startswith("mfma.")}
    for key in ("design", *DESIGN_KEYS[truth.design]):
        want, have = getattr(truth, key), fp.mfma.get(key)
        if have == want:
            v.exact.append(key)
        elif key in opened or "design" in opened:
            v.open.append(key)
        else:
            v.wrong[key] = (have, want)
    v.untrue_ranges = untrue_ranges(res, dp, cases, got)
    return v, res


def range_values(key: str, lo: int, hi, dp) -> tuple[list[int], list[int]]:
    """(every value, sampled values) of an open range [lo, hi] (hi None: every value
    from lo) the judge tries. F and F2: every value from lo to the exact bound (past
    it every value gives the bound's words, models/amd.exact_bound), and of them the
    ends, middle, lo + 1, and 10**6 and 2**62 past it; L: its ends, middle and 10**6."""
    if key == "block":
        top = hi if hi is not None else 10 ** 6
        return [], sorted({lo, min(lo + 1, top), (lo + top) // 2, top})
    top = exact_bound(dp) if hi is None else min(hi, exact_bound(dp))
    sample = {lo, min(lo + 1, top), (lo + top) // 2, top} | ({10 ** 6, 2 ** 62} if hi is None else {hi})
    return list(range(lo, top + 1)), sorted(sample)


def untrue_ranges(res, dp, held, got) -> dict:
    """{key: values} of the ranges the mfma step names open where a value does not
    give the device's words, on the held-out cases (``held``, words ``got``) and on
    the step's own cases (``ctx.mfma_words``, NaN words aside: each value of the
    range gives the step's words, as the NVIDIA judge's false_ranges proves its
    ranges).

    An open F or F2 range of a truncated or grouped design (hi None) is proven on
    every one of those rows: the limit (the key at exact_bound, where every larger
    value gives its words) on every row, and every value from lo up to the row's
    S (tests/amd_ranges.py: from S on the row's word is the limit's). Other ranges
    (a block from K on: every L >= K is one block, proven by the blocks' slicing;
    any other) are sampled: the sampled values on every row, every value of the
    range on the rows where their words differ from each other or the device's."""
    step, fp = res.finding("mfma"), res.fingerprint
    sets = [(held, np.asarray(got), False)]
    if getattr(res.context, "mfma_words", None) is not None:
        sets.append((*res.context.mfma_words, True))
    bad = {}
    for key, (lo, hi) in step.values.get("open", {}).items():
        base = dict(fp.mfma)
        coupled = key == "window" and "window2" in step.values["open"]  # both open: F2 >= F - 1

        def params(val, key=key, base=base, coupled=coupled):
            other = {key: val}
            if coupled:
                other["window2"] = max(base["window2"], val - 1)
            return MfmaParams(**{**base, **other})

        proven = hi is None and key in ("window", "window2") and base["design"] in ("truncated",
                                                                                    "grouped")
        if key == "block" and lo >= dp.k:  # every L from K is one block of all K products
            continue
        for cases, words, nan_ok in sets:
            words = np.asarray(words)
            found = _proven(dp, key, lo, params, cases, words, nan_ok, coupled) if proven else \
                _sampled(dp, key, lo, hi, params, cases, words, nan_ok)
            bad.setdefault(key, []).extend(found)
        if bad.get(key):
            bad[key] = sorted(set(bad[key]))
        else:
            bad.pop(key, None)
    return bad


def _proven(dp, key, lo, params, cases, words, nan_ok, coupled) -> list:
    """The values of [lo, no end) that miss a word of ``cases``: the limit on every
    row, each value below a row's S on that row."""
    from amd_ranges import stable_from

    top = exact_bound(dp)
    bad = []
    lim = _words(dp, params(top), cases)
    if lim is None or _differ(lim, words, nan_ok).any():
        bad.append(top)
    stable = stable_from(dp, params(lo), key, cases, coupled)
    for val in range(lo, min(int(stable.max(initial=lo - 1)), top - 1) + 1):
        rows = np.flatnonzero(stable >= val)
        w = _words(dp, params(val), cases.take(rows))
        if w is None or _differ(w, words[rows], nan_ok).any():
            bad.append(val)
    return bad


def _sampled(dp, key, lo, hi, params, cases, words, nan_ok) -> list:
    every, sample = range_values(key, lo, hi, dp)
    bad, tell, first = [], np.zeros(len(words), bool), None
    for val in sample:
        w = _words(dp, params(val), cases)
        if w is None or _differ(w, words, nan_ok).any():
            bad.append(val)
            continue
        first = w if first is None else first
        tell |= (w != words) | (w != first)
    rows = np.flatnonzero(tell)
    if rows.size:
        sub, sub_words = cases.take(rows), words[rows]
        for val in every:
            w = _words(dp, params(val), sub)
            if w is None or _differ(w, sub_words, nan_ok).any():
                bad.append(val)
    return bad


def _differ(w, words, nan_ok: bool) -> np.ndarray:
    d = np.asarray(w) != words
    return d & ~(_is_nan32(w) & _is_nan32(words)) if nan_ok else d


def _is_nan32(w) -> np.ndarray:
    w = np.asarray(w).astype(np.uint64)
    return ((w & 0x7F800000) == 0x7F800000) & ((w & 0x7FFFFF) != 0)


def sweep(seed: int, count: int, tmp: Path, only=None, narrow: bool = False,
          below: bool = False, wide: bool = False):
    """Yield (index, design, Verdict or the exception text) for each design."""
    import traceback

    from tcprobe.models.datapath import Datapath

    for idx, (gpu, dp_id, t) in enumerate(designs(seed, count, narrow, below, wide)):
        if only is not None and idx not in only:
            continue
        try:
            dev = write_device(tmp / f"a{idx}.toml", gpu, t)
            yield idx, (gpu, dp_id, t), judge(dev, Datapath.parse(dp_id))[0]
        except Exception:  # a crash is a finding of its own
            yield idx, (gpu, dp_id, t), traceback.format_exc()[-800:]


def main(argv=None) -> int:
    """``python3 tests/amd_designs.py SEED COUNT [--narrow | --below | --wide]``: the sweep's verdicts
    one a line and their tally (docs/amd.md's tables)."""
    import argparse
    import collections
    import tempfile

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("seed", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("--narrow", action="store_true", help="F from 0 and F2 from max(0, F - 1)")
    ap.add_argument("--below", action="store_true",
                    help="as --narrow, and F2 below F - 1 (from 0) half the time")
    ap.add_argument("--wide", action="store_true",
                    help="as --below, then L, F, F2 past 64 a third of the time each")
    args = ap.parse_args(argv)
    print(f"{args.count} random designs from seed {args.seed}, a line each as its ladder ends",
          flush=True)
    tally = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for idx, d, v in sweep(args.seed, args.count, Path(tmp), narrow=args.narrow,
                                  below=args.below, wide=args.wide):
            kind = "crash" if isinstance(v, str) else v.kind
            tally[kind] += 1
            tally["wrong validated"] += not isinstance(v, str) and v.wrong_validated
            print(idx, d, v if isinstance(v, str) else v.text(), flush=True)
    print("tally:", dict(tally))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
