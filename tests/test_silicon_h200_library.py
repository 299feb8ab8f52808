"""torch's GEMMs on a real H200 (torch 2.11.0+cu130, cuBLAS 13.1), word for
word: the D words captured on 2026-12-04 (reports/silicon/2026-12-04-h200)
against tcprobe.matmul under the schedule each library call was found to
run. The operands of run 1 are stored; those of run 2 are made again by
gemm-probe from its seed and checked against the hashes taken on the GPU
machine before they are used."""

import hashlib
import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tcprobe
from tcprobe.matrix import gemm_probe

LIB = Path(__file__).resolve().parent.parent / "reports" / "silicon" / "2026-12-04-h200" / "library"
DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "tf32": np.float32,
          "f32": np.float32, "e4m3": ml_dtypes.float8_e4m3fn}
WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def schedule_of(fmt: str, shape: tuple[int, int, int], op: str, beta: float) -> dict:
    """The schedule each library call ran, as measured (reports/silicon/.../README.md)."""
    if fmt == "e4m3":
        return {"instr": "wgmma"} if op == "scaled_mm_fast" else {"instr": "wgmma", "promote": 4}
    if fmt == "tf32" and op.endswith("_bias"):  # cuBLASLt's bias epilogue: no split there
        return {"preset": "cublas-tf32", "instr": "mma"}
    if fmt == "tf32":
        return {"preset": "cublas-tf32", "split_k": 8, "split_kind": "parallel", "fma_on": "c"}
    if op == "addmm" and beta == 1.0:
        return {"preset": "torch-addmm-beta1", "instr": "mma"}
    return {"instr": "mma"}


def _calls(folder: Path):
    """(folder, manifest, result) of every captured call of a capture folder."""
    if not folder.is_dir():
        return []
    info = json.loads((folder / "results.json").read_text())
    return [(folder, r) for r in info["results"]]


def _operands(folder: Path, case: str) -> dict[str, np.ndarray]:
    """A, B, C words of one case: stored, or made again by gemm-probe and
    checked against the hashes the GPU machine took."""
    if (folder / f"{case}.a.npy").exists():
        return {p: np.load(folder / f"{case}.{p}.npy") for p in "abc"
                if (folder / f"{case}.{p}.npy").exists()}
    fmt, dims = folder.name.split("-")
    m, n, k = (int(x) for x in dims.split("x"))
    made = next(c for c in gemm_probe.cases(fmt, m, n, k, 0) if c["name"] == case)
    sums = dict(line.split()[::-1] for line in (folder / "sha256.txt").read_text().splitlines())
    out = {}
    for p in "abc":
        if made[p] is None:
            continue
        words = np.ascontiguousarray(made[p]).view(WORDS[made[p].dtype.itemsize])
        name = f"{case}.{p}.npy"
        import io

        buf = io.BytesIO()
        np.save(buf, words)
        assert hashlib.sha256(buf.getvalue()).hexdigest() == sums[name], name
        out[p] = words
    return out


CALLS = (_calls(LIB / "run1-64x64x512" / "bf16") + _calls(LIB / "run1-64x64x512" / "f16")
         + _calls(LIB / "run1-64x64x512" / "tf32") + _calls(LIB / "run1-64x64x512" / "e4m3")
         + _calls(LIB / "captures" / "bf16-64x64x512")
         + _calls(LIB / "captures" / "f16-64x64x512")
         + _calls(LIB / "captures" / "tf32-64x64x512"))


def test_the_captures_are_there():
    assert len(CALLS) >= 90, len(CALLS)


@pytest.mark.parametrize("folder,r", CALLS,
                         ids=[f"{f.parent.name}/{f.name}/{r['case']}.{r['op']}" for f, r in CALLS])
def test_torch_gemm_on_h200_word_for_word(folder, r):
    manifest = json.loads((folder / "manifest.json").read_text())
    fmt = manifest["format"]
    shape = (manifest["m"], manifest["n"], manifest["k"])
    ops = _operands(folder, r["case"])
    a = ops["a"].view(DTYPES[fmt])
    b = ops["b"].view(DTYPES[fmt])
    d = np.load(folder / r["d"])
    out = DTYPES[r["d_format"]]
    s = schedule_of(fmt, shape, r["op"], r["beta"])
    kw = {"gpu": "H200", "schedule": s, "dtype": out, "progress": False}
    if r["op"] in ("addmm_bias", "linear_bias"):  # a 1-D bias: C's first row
        bias = ops["c"].view(DTYPES[r["c_format"]])[0].astype(np.float32)
        D = tcprobe.matmul(a, b, bias=bias, **kw)
    elif r["c"] is not None:
        c = ops["c"].view(DTYPES[r["c_format"]])
        D = tcprobe.matmul(a, b, c, alpha=r["alpha"], beta=r["beta"], **kw)
    else:
        D = tcprobe.matmul(a, b, alpha=r["alpha"], **kw)
    got = np.asarray(D).view(WORDS[np.asarray(D).dtype.itemsize])
    assert got.shape == d.shape
    differ = int((got != d).sum())
    assert differ == 0, f"{differ} of {d.size} words differ from the H200's"
