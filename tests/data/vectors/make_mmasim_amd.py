"""Write tests/data/vectors/mmasim-amd.jsonl: MMA-Sim 2.1.1's words for every
AMD v_mfma string of its table (mmasim/amd/isa_mfma.py), CASES cases each
(half random-bit, half special-heavy: models/amd_cases.py), numpy PCG64 seed 30.
A simulator's outputs, not silicon's.

Run:  python tests/data/vectors/make_mmasim_amd.py [OUT.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tcprobe.devices.mmasim import AMD_ARCH_GPU, MmaSimDevice  # noqa: E402
from tcprobe.models.amd_cases import amd_cases  # noqa: E402

OUT = Path(__file__).with_name("mmasim-amd.jsonl")
CASES = 8


def main(out: Path = OUT) -> None:
    from mmasim.amd import isa_mfma

    rng = np.random.default_rng(30)
    lines = ["// MMA-Sim 2.1.1 output (a simulator, not silicon); made by make_mmasim_amd.py"]
    for arch, suffixes in isa_mfma.arch_mfma_suffix.items():
        for s in suffixes:
            dev = MmaSimDevice(f"{arch}:v_mfma_{s}")
            dp = dev.dp
            cases = amd_cases(dp, CASES, rng)
            words = dev.run(dp, cases)
            for i in range(CASES):
                lines.append(json.dumps({
                    "name": f"v_mfma_{s} #{i}", "arch": arch, "gpu": AMD_ARCH_GPU[arch],
                    "datapath": dp.id, "a": [hex(int(x)) for x in cases.a[i]],
                    "b": [hex(int(x)) for x in cases.b[i]], "c": hex(int(cases.c[i])),
                    "d": hex(int(words[i]))}))
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
