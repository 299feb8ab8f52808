"""The pure parts of the cuBLASLt heuristic reader (scripts/atlas_heuristic_dump.py).

On a GPU machine the script asks ``cublasLtMatmulAlgoGetHeuristic`` which
kernel configuration it picks per shape and records it; here live the parts
that need no GPU, so that they are tested on a recorded dump
(tests/data/heuristic-synthetic.npz): the shape sampler, the record
packing, the operands and row hashes of the verification set, and the
mapping of a recorded configuration to a Schedule.

The mapping (unverified on silicon: the script has not run yet):

* ALGO_ID 13/14 (gemv) and 11/16 (gemmSN, M 2-16) are CUDA-core kernels:
  unmodelled (public notes: Meta's cublas_match).
* ``SPLITK_NUM`` = 1: no split. ``SPLITK_NUM`` = S > 1: S ranges of K cut
  with ``split_rule='ceil'`` in blocks of 128 bytes of K (64 bf16/f16, 128
  fp8 elements: Meta's G; 32 tf32 elements by the same 128 bytes, which the
  H200's tf32 split starts agree with), the count cut to what those blocks
  allow. ``REDUCTION_SCHEME`` COMPUTE_TYPE (f32 partials added in a separate
  step) is ``split_kind='parallel'`` (what the H200's split kernels showed);
  INPLACE (partials added in the output buffer in order) is ``serial``
  (assumed); OUTPUT_TYPE (partials stored in the output type) is unmodelled.
* ``SPLITK_NUM`` = -2 is stream-K: unmodelled (its partition depends on
  inputs cuBLAS chooses and does not expose).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from .predict import effective

DTYPES = ("bf16", "f16", "tf32", "e4m3")
LAYOUTS = ("nn", "tn")  # torch.matmul on row-major A, B; F.linear and _scaled_mm (B^T stored)
FIELDS = ("m", "n", "k", "dtype", "layout", "fast", "status", "algo_id", "tile_id", "splitk_num",
          "reduction_scheme", "cta_swizzling", "custom_option", "stages_id", "inner_shape_id",
          "cluster_shape_id", "workspace")
GEMV_ALGOS = (13, 14)
SMALL_M_ALGOS = (11, 16)
REDUCTION = {0: "none", 1: "inplace", 2: "compute_type", 4: "output_type"}
BLOCK = {"bf16": 64, "f16": 64, "tf32": 32, "e4m3": 128, "e5m2": 128}
STREAM_K = -2


def sample_shapes(count: int, seed: int, lo: int = 1, hi: int = 16384,
                  max_macs: int | None = None) -> np.ndarray:
    """``count`` (M, N, K) rows, each log-uniform over lo..hi (unaligned:
    every integer can come), drawn from ``seed``; with ``max_macs`` a shape
    over M*N*K is drawn again (so a CPU can replay the set)."""
    if count < 0 or lo < 1 or hi < lo:
        raise ValueError(f"sample_shapes: count {count}, range {lo}..{hi}")
    rng = np.random.default_rng(seed)
    out = np.empty((count, 3), np.int64)
    filled = 0
    while filled < count:
        draw = np.floor(np.exp(rng.uniform(np.log(lo), np.log(hi + 1), size=(count, 3))))
        draw = np.clip(draw, lo, hi).astype(np.int64)
        if max_macs is not None:
            draw = draw[draw.prod(axis=1) <= max_macs]
        take = min(len(draw), count - filled)
        out[filled:filled + take] = draw[:take]
        filled += take
    return out


def pack(records: list[dict], meta: dict) -> dict:
    """Records (dicts of FIELDS) as columns for ``np.savez_compressed``; ``meta``
    (versions, workspace, seed, ...) as one JSON string."""
    cols = {}
    for f in FIELDS:
        values = [r[f] for r in records]
        if f == "dtype":
            cols[f] = np.array([DTYPES.index(v) for v in values], np.int8)
        elif f == "layout":
            cols[f] = np.array([LAYOUTS.index(v) for v in values], np.int8)
        elif f == "workspace":
            cols[f] = np.array(values, np.int64)
        else:
            cols[f] = np.array(values, np.int32)
    cols["meta"] = np.array(json.dumps(meta, sort_keys=True))
    return cols


def unpack(npz) -> tuple[list[dict], dict]:
    """(records, meta) from a loaded .npz (or the dict :func:`pack` made)."""
    meta = json.loads(str(npz["meta"]))
    n = len(npz["m"])
    rows = []
    for i in range(n):
        r = {f: int(npz[f][i]) for f in FIELDS}
        r["dtype"] = DTYPES[r["dtype"]]
        r["layout"] = LAYOUTS[r["layout"]]
        rows.append(r)
    return rows, meta


@dataclass(frozen=True)
class Mapped:
    """A recorded configuration as a schedule: ``axes`` (None where unmodelled)
    and a note saying which rule made it or why not."""

    axes: dict | None
    note: str

    @property
    def modelled(self) -> bool:
        return self.axes is not None


def schedule_of(rec: dict, fast_accum: bool = False) -> Mapped:
    """The Schedule axes of one recorded heuristic choice (module doc)."""
    fmt, k = rec["dtype"], rec["k"]
    algo, splits = rec["algo_id"], rec["splitk_num"]
    if rec.get("status", 0) != 0:
        return Mapped(None, f"the heuristic returned status {rec['status']}: no algorithm")
    if algo in GEMV_ALGOS:
        return Mapped(None, f"ALGO_ID {algo}: gemv on CUDA cores (unmodelled)")
    if algo in SMALL_M_ALGOS:
        return Mapped(None, f"ALGO_ID {algo}: gemmSN on CUDA cores (unmodelled)")
    if splits == STREAM_K or splits < 0:
        return Mapped(None, f"SPLITK_NUM {splits}: stream-K (unmodelled)")
    axes: dict = {}
    if fmt == "tf32":
        axes.update({"operand_round": "rne", "fma_on": "c"})
    if fmt in ("e4m3", "e5m2"):
        axes["instr"] = "wgmma"
        if not fast_accum:
            axes["promote"] = 4
    if splits <= 1:
        return Mapped(axes, "SPLITK_NUM 1: no split")
    scheme = REDUCTION.get(rec["reduction_scheme"], str(rec["reduction_scheme"]))
    if scheme == "output_type":
        return Mapped(None, f"SPLITK_NUM {splits} with partials in the output type (unmodelled)")
    block = BLOCK[fmt]
    count = effective(k, block, splits)
    if count == 1:
        return Mapped(axes, f"SPLITK_NUM {splits}: K = {k} holds one block of {block}: no split")
    kind = "serial" if scheme == "inplace" else "parallel"
    axes.update({"k_block": block, "split_k": count, "split_kind": kind, "split_rule": "ceil"})
    return Mapped(axes, f"SPLITK_NUM {splits}, REDUCTION_SCHEME {scheme}: {count} {kind} ceil "
                        f"splits in blocks of {block}")


def block_k(stages_id: int) -> int:
    """The main loop's K block a STAGES_ID names (public notes: 16 << ((id - 1) // 6))."""
    return 16 << ((stages_id - 1) // 6)


def operands(seed: int, index: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A (M, K) and B (K, N) of verification shape ``index`` as float32 values
    (normal, scaled by powers of two so that cancellation and rounding show),
    from numpy's PCG64 seeded by (seed, index): made again anywhere."""
    rng = np.random.default_rng([seed, index])
    a = rng.standard_normal((m, k), dtype=np.float32) * np.exp2(
        rng.integers(-4, 5, size=(m, 1))).astype(np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32) * np.exp2(
        rng.integers(-4, 5, size=(1, n))).astype(np.float32)
    return a, b


def row_hashes(words: np.ndarray) -> np.ndarray:
    """One uint64 per row of D: the first 8 bytes of BLAKE2b over the row's words."""
    words = np.ascontiguousarray(words)
    return np.array([int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8).digest(),
                                    "little") for row in words], np.uint64)
