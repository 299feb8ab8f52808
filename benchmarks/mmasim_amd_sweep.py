"""Every AMD v_mfma string MMA-Sim 2.1.1 models, against tcprobe's auto model.

    python benchmarks/mmasim_amd_sweep.py [--cases 300] [--seed 0]

The strings are read from MMA-Sim's table (``mmasim/amd/isa_mfma.py``). Each
runs random-bit cases (every A/B/C word uniform) and special-heavy ones
(words drawn from zeros, subnormals, the largest finites, Inf, NaN, +-1 and
ulps around them), through MMA-Sim (the ``mmasim`` device) and through
``--model auto`` for the generation's GPU; it prints the disagreements, and
apart from them the NaN results whose NaN word alone differs (MI100/MI250X:
MMA-Sim takes that word from torch's float kernels, and it changes with the
batch size for the same inputs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tcprobe.devices.mmasim import MmaSimDevice  # noqa: E402
from tcprobe.models import registry  # noqa: E402
from tcprobe.models.amd_cases import amd_cases  # noqa: E402
from tcprobe.models.formats import Class, decode  # noqa: E402


def strings() -> list[tuple[str, str]]:
    from mmasim.amd import isa_mfma

    return [(arch, s) for arch, ss in isa_mfma.arch_mfma_suffix.items() for s in ss]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"comparing every v_mfma string with MMA-Sim, {args.cases} cases each (MMA-Sim's "
          "import brings torch's first)", file=sys.stderr, flush=True)
    total = bad_strings = payloads = 0
    for arch, s in strings():
        dev = MmaSimDevice(f"{arch}:v_mfma_{s}")
        dp = dev.fixed_datapath()
        model = registry.resolve("auto", dp, dev.info()["gpu"])
        cases = amd_cases(dp, args.cases, np.random.default_rng(args.seed))
        want, got = dev.run(dp, cases), model.evaluate(cases)
        nan = (decode(dp.d_type, want).cls == Class.NAN) & (decode(dp.d_type, got).cls == Class.NAN)
        bad = np.flatnonzero((want != got) & ~nan)
        payload = int(((want != got) & nan).sum())
        total += len(cases)
        bad_strings += bool(len(bad))
        payloads += payload
        print(f"{arch} v_mfma_{s} ({dp.id}, {model.name}): {len(bad)} of {len(cases)} disagree"
              f" (+{payload} NaN payloads)"
              + "".join(f"\n   a={[hex(int(x)) for x in cases.a[i]]} b={[hex(int(x)) for x in cases.b[i]]}"
                        f" c={hex(int(cases.c[i]))} mmasim={hex(int(want[i]))} tcprobe={hex(int(got[i]))}"
                        for i in bad[:2]), flush=True)
    print(f"{len(strings())} strings, {total:,} cases: {bad_strings} strings disagree; "
          f"{payloads} NaN results differ only in the NaN word (MI100: host-dependent, docs/amd.md)")
    return 1 if bad_strings else 0


if __name__ == "__main__":
    raise SystemExit(main())
