"""The committed H200 library calls replayed through ``tcprobe.torch.emulate``.

Each call of ``reports/silicon/2026-12-04-h200/library`` (``captures/*`` and
``run1-64x64x512/*``) is run again on the CPU by the same torch code that ran
on the GPU (:func:`tcprobe.capture.torch_gemm.runs`: ``torch.matmul``,
``F.linear``, ``torch.addmm``, ``torch._scaled_mm``), inside
``emulate(gpu="H200")`` with no schedule given, and its D words are compared
with the words the H200 wrote. Operands are the stored ones, or gemm-probe's
made again from the seed and checked against the GPU machine's hashes.
torch is imported by the functions, not by this module.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
LIBRARY = Path("reports") / "silicon" / "2026-12-04-h200" / "library"
FOLDERS = ("run1-64x64x512/bf16", "run1-64x64x512/f16", "run1-64x64x512/tf32",
           "run1-64x64x512/e4m3", "captures/bf16-64x64x512", "captures/f16-64x64x512",
           "captures/tf32-64x64x512", "captures/tf32-128x128x1024",
           "captures/bf16-256x256x4096", "captures/f16-256x256x4096",
           "captures/tf32-256x256x4096", "captures/bf16-512x512x2048",
           "captures/bf16-128x128x16384", "captures/e4m3-256x256x4096",
           "captures/e4m3-128x128x16384")
WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32}


@dataclass(frozen=True)
class Call:
    """One library call the H200 ran: its folder (relative to the tree), the
    case and op, and the runner's result entry."""

    folder: str
    case: str
    op: str
    fmt: str
    shape: tuple
    result: dict

    @property
    def id(self) -> str:
        return f"{self.folder}/{self.case}.{self.op}"


def calls(root: Path = ROOT, splits: bool = False) -> list[Call]:
    """Every committed call (the splits probe's own calls only with ``splits``)."""
    out = []
    for rel in FOLDERS:
        folder = root / LIBRARY / rel
        if not (folder / "results.json").is_file():
            continue
        man = json.loads((folder / "manifest.json").read_text())
        for r in json.loads((folder / "results.json").read_text())["results"]:
            if r["case"] == "splits" and not splits:
                continue
            out.append(Call(str(LIBRARY / rel), r["case"], r["op"], man["format"],
                            (man["m"], man["n"], man["k"]), r))
    return out


def operands(call: Call, root: Path = ROOT) -> dict:
    """A, B, C words (uint arrays) of a call's case: stored, or made again by
    gemm-probe and checked against the GPU machine's sha256.txt."""
    from tcprobe.matrix import gemm_probe

    folder = root / call.folder
    if (folder / f"{call.case}.a.npy").exists():
        return {p: np.load(folder / f"{call.case}.{p}.npy") for p in "abc"
                if (folder / f"{call.case}.{p}.npy").exists()}
    m, n, k = call.shape
    made = next(c for c in gemm_probe.cases(call.fmt, m, n, k, 0) if c["name"] == call.case)
    sums = dict(line.split()[::-1] for line in (folder / "sha256.txt").read_text().splitlines())
    out = {}
    for p in "abc":
        if made[p] is None:
            continue
        words = np.ascontiguousarray(made[p]).view(WORDS[made[p].dtype.itemsize])
        buf = io.BytesIO()
        np.save(buf, words)
        name = f"{call.case}.{p}.npy"
        if hashlib.sha256(buf.getvalue()).hexdigest() != sums[name]:
            raise ValueError(f"{call.id}: {name} made again differs from the GPU's hash")
        out[p] = words
    return out


def run(call: Call, emulate, root: Path = ROOT, **kw):
    """(differing words, words, D tensor) of one call replayed inside
    ``emulate(gpu="H200", **kw)`` (``emulate``: the function, so an older one
    can be compared)."""
    import torch

    from tcprobe.capture import torch_gemm

    ops = operands(call, root)
    man = json.loads((root / call.folder / "manifest.json").read_text())
    case = next(c for c in man["cases"] if c["name"] == call.case)

    def tensor(words, fmt):
        signed = words.view({1: np.int8, 2: np.int16, 4: np.int32}[words.dtype.itemsize])
        return torch.from_numpy(np.ascontiguousarray(signed)).view(
            getattr(torch, torch_gemm.TORCH_DTYPES[fmt]))

    a, b = tensor(ops["a"], call.fmt), tensor(ops["b"], call.fmt)
    c = tensor(ops["c"], case["c_format"]) if "c" in ops else None
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = call.fmt == "tf32"
    try:
        with emulate(gpu="H200", **kw):
            made = {op: out for op, out, *_ in torch_gemm.runs(torch, case, call.fmt, a, b, c)}
        if call.op not in made:
            raise ValueError(f"{call.id}: the runner makes no {call.op} call")
        d = made[call.op]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    d = d.detach().contiguous()
    got = d.view({1: torch.int8, 2: torch.int16, 4: torch.int32}[d.element_size()]).numpy()
    got = got.view(WORDS[d.element_size()])
    want = np.load(root / call.folder / call.result["d"])
    if got.shape != want.shape or got.dtype != want.dtype:
        return want.size, want.size, d
    return int((got != want).sum()), want.size, d
