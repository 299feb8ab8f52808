"""The atlas files (tcprobe/atlas/data/*.json): what was measured, per GPU.

One file per GPU, built by ``scripts/build_atlas.py`` from a committed
silicon run, never by hand. Each entry is one (op, A and B formats, layout,
M, N, K) measured on that GPU's library: the kernel configuration observed
(``kernel``: the split starts and where they were read) and, per form of
torch call, the schedule (a dict of axes of
:class:`tcprobe.matrix.schedule.Schedule`) that reproduced every call of it,
with those calls' D files as evidence. Forms: ``plain`` (matmul, linear, mm,
addmm whose beta is not 1), ``addmm_beta1`` (addmm with beta = 1 and a 2-D
C), ``bias`` (a 1-D bias with beta = 1: cuBLASLt's bias epilogue),
``scaled_mm`` and ``scaled_mm_fast`` (torch._scaled_mm without and with
``use_fast_accum``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
FORMS = ("plain", "addmm_beta1", "bias", "scaled_mm", "scaled_mm_fast")
FP8 = ("e4m3", "e5m2")
# Formats whose kernels are one family in the atlas: a shape measured for one
# predicts the others (bf16 and f16 gave the same splits at every shape both ran).
GROUPS = {"bf16": "16-bit", "f16": "16-bit", "tf32": "tf32", "e4m3": "fp8", "e5m2": "fp8"}
BLOCK = {"16-bit": 64, "tf32": 32, "fp8": 128}  # 128 bytes of K: the split granule


@cache
def load(gpu: str) -> dict | None:
    """The atlas of ``gpu`` (a profile's spelling), or None where none is committed."""
    path = DATA / f"{gpu}.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def gpus() -> list[str]:
    return sorted(p.stem for p in DATA.glob("*.json"))


def entries(gpu: str) -> list[dict]:
    data = load(gpu)
    return [] if data is None else data["entries"]


def find(gpu: str, op: str, fmt: str, m: int, n: int, k: int) -> list[dict]:
    """The entries of this op, format and shape (any layout)."""
    return [e for e in entries(gpu) if e["op"] == op and e["a"] == fmt
            and (e["m"], e["n"], e["k"]) == (m, n, k)]
