"""The ladder on random hidden-style sim profiles: how often it misses.

    python benchmarks/ladder_sweep.py [--seed 505] [--count 40] [--only 3,7] [--judge 100000]

Each profile draws a family (mma, wgmma, tcgen05), an A/B format, a D type
and every engine key the ladder measures (window, blocks, input conversion,
output rounding and kept bits, zero floor and sign, NaN word, carry bits and
top, overflow, K order: reversed, pairs swapped or a random permutation),
writes it as a sim device, runs the ladder and checks the fingerprint the
way tests/test_ladder_*.py do: no failed step, every key found equal to the
profile's or left open where the device and the fingerprint's model agree on
a stress set (``ladder_helpers.mismatched_keys``), the carry bits and top
found or named undetermined, the overflow likewise, and 0 validation
mismatches. With ``--judge N`` each recovered fingerprint is then judged
independently: its model against the device on N cases of the validate
suites (raw, finite, edge, adversarial) drawn from a seed neither the probes
nor the ladder's validation use, through the raw harness the ladder measured
(as ``tcprobe validate --model FINGERPRINT.json`` runs it); any mismatch is a
miss, and so is a range named undetermined that does not hold: a value in
it that gives other words on stress cases and lone tiny products of seeds
of their own. Prints one line
per profile (the misses with what went wrong) and the count of misses; exit
1 when there is any. A miss becomes a test in tests/test_ladder_sweep.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
# the checkout's own tcprobe (run as a script, the installed one would come first)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ladder_designs import draw_k_order  # noqa: E402 - after the paths above

FORMATS = {"mma": ["tf32", "bf16", "f16", "e4m3", "e5m2"],
           "wgmma": ["tf32", "bf16", "f16", "e4m3"],
           "tcgen05": ["tf32", "bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]}


def draw(rng) -> tuple[str, str, str, dict]:
    """(family, A/B format, D type, engine keys) of one random profile."""
    fam = str(rng.choice(list(FORMATS)))
    fmt = str(rng.choice(FORMATS[fam]))
    d = "f32" if fmt in ("tf32", "bf16") or rng.random() < 0.7 else "f16"
    p = {"window_bits": int(rng.integers(12, 31)),
         "block_size": int(rng.choice([1, 2, 4, 8, 16, 32])),
         "input_conversion": str(rng.choice(["truncate", "rne", "rna"])),
         "output_rounding": str(rng.choice(["rz", "rne", "rna"]))}
    if d == "f32":
        # floors down to where only a tiny C alone reaches them (fp6/fp4 products never do)
        p["zero_floor"] = int(rng.integers(-150, -95))
        p["nan"] = int(rng.choice([0x7FFFFFFF, 0x7FC00000]))
        if rng.random() < 0.3:
            p["output_frac_bits"] = int(rng.integers(8, 23))
    else:
        p["zero_floor"] = int(rng.integers(-26, -14))
        p["nan"] = int(rng.choice([0x7FFF, 0x7E00]))
        if rng.random() < 0.3:
            p["output_frac_bits"] = int(rng.integers(4, 10))
    p["zero_sign"] = str(rng.choice(["positive", "ieee"]))
    if rng.random() < 0.75:
        p["carry_bits"] = int(rng.integers(2, 6))
        p["carry_top"] = str(rng.choice(["wrap", "saturate", "normalize"]))
    if p["block_size"] == 1 and rng.random() < 0.5:
        p["window_bits"] = int(rng.integers(24, 31))  # a window wider than the output
    p["overflow"] = str(rng.choice(["inf", "saturate"]))
    draw_k_order(rng, p, (0.2, 0.3, 0.4))
    return fam, fmt, d, p


def device(path: Path, fam: str, fmt: str, d: str, p: dict, order_seed: int):
    """The sim device of one profile (a K order drawn for the datapath's K)."""
    from test_ladder_carry import BASE  # the ladder tests' base profile

    from tcprobe.devices.sim import SimDevice

    prof = {**BASE, **p}
    order = prof.pop("k_order", None)
    lines = [f"{k} = {json.dumps(v)}" for k, v in prof.items()] + [f'families = ["{fam}"]']
    path.write_text("\n".join(lines) + "\n")
    if order is not None:
        k = SimDevice.from_toml(path).datapath(fam, fmt, d).k
        perm = {"reversed": list(range(k))[::-1], "pairs": [j ^ 1 for j in range(k)],
                "random": [int(x) for x in np.random.default_rng(order_seed).permutation(k)]}
        path.write_text("\n".join(lines + [f"k_order = {json.dumps(perm[order])}"]) + "\n")
    return SimDevice.from_toml(path)


def judge(dev, dp, res, n: int) -> tuple[int, int, dict]:
    """(cases, mismatches, per suite) of the fingerprint's model against the
    device on n cases of the validate suites, from a seed of their own,
    through the harness the ladder measured."""
    from tcprobe import suites

    ctx = res.context
    model = res.fingerprint.model(dp)
    names = [s for s in ("raw", "finite", "edge", "adversarial") if suites.generators(dp, s)]
    per, total, bad = {}, 0, 0
    for s in names:
        cs, _ = suites.generate(dp, s, 0xC0FFEE, 0, max(1, n // len(names)))
        got = ctx.run(cs)
        miss = int((got != model.evaluate(ctx.complete(cs))).sum())
        per[s] = miss
        total += len(cs)
        bad += miss
    return total, bad, per


def untrue_ranges(dp, res, n: int) -> dict:
    """The values of every range the ladder left open (and checked) that no
    reading gives the device's words with, on n / 4 stress cases and n / 4
    lone tiny products of seeds of their own (``ladder_helpers``)."""
    from ladder_helpers import false_ranges, stress_cases, tiny_product_cases

    from tcprobe.models.cases import Cases

    if not res.context.ranges:
        return {}
    m = max(1, n // 4)
    cs = res.context.complete(Cases.concat([stress_cases(dp, m, 0xC0FFEE),
                                            tiny_product_cases(dp, m, 0xC0FFEE)]))
    return {k: f"{len(v)} values ({v[0]} ...)" for k, v in false_ranges(res, dp, cs).items()}


def check(dev, dp, judge_n: int = 0) -> tuple[bool, str]:
    """Run the ladder; (recovered, what went wrong)."""
    from ladder_helpers import mismatched_keys

    from tcprobe.ladder import run_ladder

    res = run_ladder(dev, dp)
    truth = dev.model(dp).params
    fp = res.fingerprint
    failed = [(f.step, f.summary[:120]) for f in res.findings if f.status == "failed"]
    bad = mismatched_keys(fp, dp, truth, oracle=res)
    v = res.validation
    carry = ((fp.carry_bits, fp.carry_top) == (truth.carry_bits, truth.carry_top)
             or "carry_bits" in fp.undetermined)
    overflow = fp.overflow == truth.overflow or "overflow" in fp.undetermined
    ok = not failed and not bad and v.mismatches == 0 and carry and overflow
    jtext = ""
    if judge_n and fp is not None:
        jc, jm, per = judge(dev, dp, res, judge_n)
        false = untrue_ranges(dp, res, judge_n)
        ok = ok and jm == 0 and not false
        jtext = f"judge {jm} of {jc} {per}; untrue ranges {false}; "
    why = (f"failed steps {failed}; keys {bad}; validation {v.mismatches} of {v.cases}; {jtext}"
           f"carry {fp.carry_bits},{fp.carry_top} (profile {truth.carry_bits},{truth.carry_top}); "
           f"overflow {fp.overflow} (profile {truth.overflow})")
    return ok, why


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=505)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--only", default=None, help="profile numbers to run (comma-separated)")
    ap.add_argument("--judge", type=int, default=0,
                    help="cases of the independent check of each fingerprint (0: none)")
    args = ap.parse_args()
    only = None if args.only is None else {int(x) for x in args.only.split(",")}
    rng = np.random.default_rng(args.seed)
    tmp = Path(tempfile.mkdtemp())
    misses = runs = 0
    t0 = time.time()
    for idx in range(args.count):
        fam, fmt, d, p = draw(rng)
        if only is not None and idx not in only:
            continue
        desc = f"{fam} {fmt}->{d} {json.dumps(p)}"
        try:
            dev = device(tmp / f"p{idx}.toml", fam, fmt, d, p, args.seed * 1000 + idx)
            dp = dev.datapath(fam, fmt, d)
            if not dev.supports(dp):
                continue
            t = time.time()
            ok, why = check(dev, dp, args.judge)
        except Exception:  # a crash is a miss too: print it and go on
            ok, why, t = False, traceback.format_exc()[-600:], time.time()
        runs += 1
        misses += not ok
        print(f"{idx:3} {'ok  ' if ok else 'MISS'} {time.time() - t:5.1f} s  {desc}", flush=True)
        if not ok:
            print(f"      {why}", flush=True)
    print(f"seed {args.seed}: {misses} of {runs} profiles missed ({time.time() - t0:.0f} s)")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
