"""Write tests/data/vectors/mmasim-sm75-sm120.jsonl: MMA-Sim 2.1.1's words for
the Turing and RTX Blackwell mma.sync instructions.

These are a simulator's outputs, not silicon's: MMA-Sim's reading of T4 and
sm_120 (its parameters, which the t4 and rtx5090 profiles restate). Frozen
here so the tests compare tcprobe with an implementation nobody here wrote
even where MMA-Sim is not installed. Every Turing string and every sm_120
string of MMA-Sim's tables (kind::f8f6f4, the block-scaled kinds), CASES
cases each: raw A/B codes, C either raw or finite, block scales near 2**0
(ue8m0 codes 112..142, ue4m3 codes 0x20..0x50). The inputs are drawn from
numpy's PCG64 with seed 12.

Run:  python tests/data/vectors/make_mmasim_sm75_sm120.py [OUT.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tcprobe.devices.mmasim import MmaSimDevice  # noqa: E402
from tcprobe.models.cases import Cases  # noqa: E402
from tcprobe.models.formats import get_format  # noqa: E402

OUT = Path(__file__).with_name("mmasim-sm75-sm120.jsonl")
CASES = 4
GPU = {"Turing": "T4", "RTX Blackwell": "RTX5090"}
SOURCE = "MMA-Sim 2.1.1 output (a simulator, not silicon): mmasim:{arch}:{instr}"


def strings() -> list[tuple[str, str]]:
    from mmasim.nv_ptx import isa_mma

    out = [("Turing", f"mma.{s}") for s in isa_mma.mma_shape_and_type["Turing"]]
    out += [("RTX Blackwell", f"mma.{s}") for s in isa_mma.mma_shape_and_type["RTX Blackwell"]
            if "kind::" in s]
    out += [("RTX Blackwell", f"mma.{s}")
            for s in isa_mma.mma_block_scale_shape_and_type["RTX Blackwell"]]
    return out


def codes(rng, fmt: str, shape) -> np.ndarray:
    return rng.integers(0, 1 << get_format(fmt).width, shape, dtype=np.uint64).astype(np.uint32)


def cases_for(dp, rng) -> Cases:
    a, b = codes(rng, dp.a_type, (CASES, dp.k)), codes(rng, dp.b_type, (CASES, dp.k))
    c = codes(rng, dp.c, CASES)
    finite = rng.integers(0, 2, CASES).astype(bool)  # half the C words with a finite exponent
    top = 0x40000000 if get_format(dp.c).width == 32 else 0x4000
    c = np.where(finite, c & ~np.uint32(top), c)
    if not dp.block_scaled:
        return Cases(a, b, c)
    lo, hi = (112, 143) if dp.scale_type == "ue8m0" else (0x20, 0x51)
    sa = rng.integers(lo, hi, (CASES, dp.n_scales), dtype=np.uint32)
    sb = rng.integers(lo, hi, (CASES, dp.n_scales), dtype=np.uint32)
    return Cases(a, b, c, sa, sb)


def main(out: Path = OUT) -> None:
    rng = np.random.default_rng(12)
    lines = [f"// {SOURCE.format(arch='ARCH', instr='INSTRUCTION')}; made by {Path(__file__).name}"]
    for arch, instr in strings():
        dev = MmaSimDevice(f"{arch}:{instr}")
        dp = dev.dp
        cases = cases_for(dp, rng)
        words = dev.run(dp, cases)
        for i in range(CASES):
            rec = {"name": f"{instr} #{i}", "gpu": GPU[arch], "family": "mma", "kind": dp.kind,
                   "a_type": dp.a_type, "b_type": dp.b_type, "c_type": dp.c, "d_type": dp.d_type,
                   "k": dp.k, "a": [hex(int(x)) for x in cases.a[i]],
                   "b": [hex(int(x)) for x in cases.b[i]], "c": hex(int(cases.c[i])),
                   "d": hex(int(words[i])), "source": SOURCE.format(arch=arch, instr=instr)}
            if dp.block_scaled:
                rec.update(scale_type=dp.scale_type, scale_vec=dp.scale_vec,
                           scale_a=[hex(int(x)) for x in cases.scale_a[i]],
                           scale_b=[hex(int(x)) for x in cases.scale_b[i]])
            lines.append(json.dumps(rec))
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines) - 1} vectors -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
