"""The mutation check as a table: which suite catches each altered parameter.

    python benchmarks/mutation_table.py [--cases 100000]

For each datapath and each single-parameter alteration of its true profile
(window bits +-1, block size halved, zero floor +-1, output rounding
switched, IEEE zero sign), runs the default suites on a device that computes
with the altered parameters and scores the true profile. Prints, per
alteration, the suite that caught it first, the case number of the first
mismatch (cases needed: its position in the run, where the suites are
interleaved chunk by chunk, and among the catching suite's own cases), and
the mismatches per suite. The same check is
asserted by tests/test_mutation.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from model_device import altered  # noqa: E402
from test_mutation import ALTERATIONS  # noqa: E402

from tcprobe import suites as suites_mod  # noqa: E402
from tcprobe.models.datapath import Datapath  # noqa: E402
from tcprobe.models.profiles import PROFILES  # noqa: E402
from tcprobe.validation import validate as v  # noqa: E402

TARGETS = [("mma.bf16.f32.k16", "b200-hmma"), ("mma.f16.f16.k16", "h100"),
           ("mma.tf32.f32.k8", "a100")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    plan = suites_mod.Plan(suites_mod.SUITES, args.cases)
    for dp_id, profile in TARGETS:
        dp = Datapath.parse(dp_id)
        truth = PROFILES[profile].model(dp)
        print(f"\n{dp_id}, true datapath {profile}, {args.cases:,} cases, seed {args.seed}\n")
        print("| alteration | caught first by | cases needed (run / that suite) | "
              + " | ".join(suites_mod.SUITES) + " |")
        print("| --- | --- | ---: | " + " | ".join("---:" for _ in suites_mod.SUITES) + " |")
        for name, change in ALTERATIONS.items():
            ch = change(truth.params)
            dev = altered(dp, truth.params, name, **ch)
            r = v.run(dp, dev, [truth], plan, args.seed, capture=None)
            t = r.primary
            desc = ", ".join(f"{k}={val}" for k, val in ch.items())
            first = t.caught_by()[0] if t.total else "NOT CAUGHT"
            need = "-"
            if t.first is not None:
                need = f"{t.first + 1:,} / {t.first_in_suite[first] + 1:,}"
            cells = [f"{t.by_suite.get(s, 0):,}" for s in suites_mod.SUITES]
            print(f"| {desc} | {first} | {need} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
