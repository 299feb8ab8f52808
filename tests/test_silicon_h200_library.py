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


# The split each shape's kernel ran, as the splits probe read it off D on the
# H200 (None: no split there); 'bias' is the cuBLASLt bias epilogue's own.
SPLITS = {
    ("bf16", (64, 64, 512)): None, ("f16", (64, 64, 512)): None,
    ("bf16", (512, 512, 2048)): None,
    ("bf16", (256, 256, 4096)): {"k_block": 64, "split_k": 3},
    ("f16", (256, 256, 4096)): {"k_block": 64, "split_k": 3},
    ("bf16", (128, 128, 16384)): {"k_block": 64, "split_k": 11},
    ("tf32", (64, 64, 512)): {"split_k": 8},
    ("tf32", (128, 128, 1024)): {"split_k": 16},
    ("tf32", (256, 256, 4096)): {"k_block": 32, "split_k": 12},
    ("e4m3", (64, 64, 512)): None, ("e4m3", (256, 256, 4096)): None,
    ("e4m3", (128, 128, 16384)): {"k_block": 128, "split_k": 6},  # read off fit-gemm's search
}
TF32_BIAS_SPLITS = {(64, 64, 512): None, (128, 128, 1024): None,
                    (256, 256, 4096): {"split_k": 4, "split_kind": "serial", "split_rule": "even"}}


def schedule_of(fmt: str, shape: tuple[int, int, int], op: str, beta: float) -> dict:
    """The schedule each library call ran, as measured (reports/silicon/.../README.md)."""
    split = SPLITS[(fmt, shape)]
    if fmt == "e4m3":  # torch._scaled_mm: wgmma, promoted every 4 unless fast accumulation
        s = {"instr": "wgmma"} if op == "scaled_mm_fast" else {"instr": "wgmma", "promote": 4}
        return s if split is None else {**s, "split_kind": "parallel", "split_rule": "ceil",
                                        **split}
    if fmt == "tf32" and op.endswith("_bias"):
        split = TF32_BIAS_SPLITS[shape]
    s = {"instr": "mma"}
    if split is not None:
        s.update({"split_kind": "parallel", "split_rule": "ceil", **split})
    if fmt == "tf32":
        s.update({"operand_round": "rne", "fma_on": "c"})
    elif op == "addmm" and beta == 1.0 and split is None:
        s["c"] = "output"  # torch's addmm with beta = 1 where the kernel does not split K
    return s


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
LARGE = [c for name in ("tf32-128x128x1024", "bf16-256x256x4096", "f16-256x256x4096",
                        "tf32-256x256x4096", "bf16-512x512x2048", "bf16-128x128x16384",
                        "e4m3-256x256x4096", "e4m3-128x128x16384")
         for c in _calls(LIB / "captures" / name)]


def test_the_captures_are_there():
    assert len(CALLS) >= 90, len(CALLS)


@pytest.mark.parametrize("folder,r", CALLS + [pytest.param(*c, marks=pytest.mark.slow)
                                              for c in LARGE],
                         ids=[f"{f.parent.name}/{f.name}/{r['case']}.{r['op']}"
                              for f, r in CALLS + LARGE])
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
