"""Record what cuBLASLt's heuristic picks per shape, and a verification set (GPU machine).

    OUT=DIR python3 scripts/atlas_heuristic_dump.py [--shapes 100000] [--verify 2000]
        [--seed S] [--workspace BYTES] [--seconds 480]

UNRUN: written for an H100 or H200 with torch 2.11 (cu130); no GPU has run it
yet, so nothing it would record is in the atlas. What it does:

1. Loads the libcublasLt that torch ships (ctypes, after ``import torch``)
   and, per dtype (bf16, f16, tf32, e4m3), for ``--shapes`` shapes M, N, K
   log-uniform over 1..16384 (unaligned; tcprobe.atlas.heuristic.sample_shapes)
   and each layout torch uses (``nn``: torch.matmul; ``tn``: F.linear and
   _scaled_mm, fp8 with and without fast accumulation), asks
   ``cublasLtMatmulAlgoGetHeuristic`` for its first algorithm under the
   workspace given and records ALGO_ID, TILE_ID, SPLITK_NUM,
   REDUCTION_SCHEME, CTA_SWIZZLING, CUSTOM_OPTION, STAGES_ID,
   INNER_SHAPE_ID, CLUSTER_SHAPE_ID, the workspace it needs and its status:
   $OUT/heuristic.npz (columns of tcprobe.atlas.heuristic.FIELDS).
2. A verification set from a printed seed: ``--verify`` shapes, M, N, K
   log-uniform over 1..8192 with M*N*K <= 2^24 (a CPU replays them), operands
   from (seed, index) (heuristic.operands), each run through torch.matmul in
   bf16, f16 and tf32 (and torch._scaled_mm for e4m3 where the shape is
   aligned to 16), D reduced to one hash per row (heuristic.row_hashes), the
   heuristic's record of the same call beside it, and for every 25th shape
   the kernels torch launched (torch.profiler): $OUT/verify.npz.

Offline, ``tcprobe.atlas.heuristic.schedule_of`` maps each record to a
Schedule (stream-K and the CUDA-core families declared unmodelled) and the
verification hashes say which rows tcprobe reproduces, measured and
predicted shapes counted apart.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from tcprobe.atlas import heuristic as H

CUDA_R = {"f32": 0, "f16": 2, "bf16": 14, "e4m3": 28}
COMPUTE_32F, COMPUTE_32F_FAST_TF32 = 68, 77
DESC_TRANSA, DESC_TRANSB, DESC_FAST_ACCUM = 3, 4, 25
PREF_MAX_WORKSPACE_BYTES = 1
CONFIG = {"algo_id": 0, "tile_id": 1, "splitk_num": 2, "reduction_scheme": 3,
          "cta_swizzling": 4, "custom_option": 5, "stages_id": 6, "inner_shape_id": 7,
          "cluster_shape_id": 8}
OUT_TYPE = {"bf16": "bf16", "f16": "f16", "tf32": "f32", "e4m3": "f32"}


class HeuristicResult(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspaceSize", ctypes.c_size_t),
                ("state", ctypes.c_int), ("wavesCount", ctypes.c_float),
                ("reserved", ctypes.c_int * 4)]


def load_cublaslt():
    """The libcublasLt torch loaded (its wheel's copy), by path."""
    import torch

    torch.zeros(1, device="cuda") @ torch.zeros(1, 1, device="cuda")  # loads cuBLAS(Lt)
    roots = [Path(p) for p in sys.path if p and Path(p).is_dir()]
    found = []
    for root in roots:
        found += glob.glob(str(root / "nvidia" / "**" / "libcublasLt.so*"), recursive=True)
        found += glob.glob(str(root / "torch" / "lib" / "libcublasLt.so*"))
    if not found:
        import ctypes.util

        name = ctypes.util.find_library("cublasLt")
        found = [name] if name else []
    if not found:
        raise SystemExit("error: no libcublasLt found beside torch")
    path = sorted(found)[0]
    return ctypes.CDLL(path), path


class Lt:
    def __init__(self, lib, workspace: int):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        self._ok(lib.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.pref = ctypes.c_void_p()
        self._ok(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(self.pref)), "pref")
        ws = ctypes.c_uint64(workspace)
        self._ok(lib.cublasLtMatmulPreferenceSetAttribute(
            self.pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ws), ctypes.c_size_t(8)), "ws")
        self.descs = {}

    @staticmethod
    def _ok(status, what):
        if status != 0:
            raise RuntimeError(f"{what}: cuBLAS status {status}")

    def desc(self, fmt: str, layout: str, fast: int):
        key = (fmt, layout, fast)
        if key not in self.descs:
            d = ctypes.c_void_p()
            compute = COMPUTE_32F_FAST_TF32 if fmt == "tf32" else COMPUTE_32F
            self._ok(self.lib.cublasLtMatmulDescCreate(ctypes.byref(d), compute, CUDA_R["f32"]),
                     "desc")
            ta = ctypes.c_int32(1 if layout == "tn" else 0)
            tb = ctypes.c_int32(0)
            self._ok(self.lib.cublasLtMatmulDescSetAttribute(d, DESC_TRANSA, ctypes.byref(ta),
                                                             ctypes.c_size_t(4)), "transa")
            self._ok(self.lib.cublasLtMatmulDescSetAttribute(d, DESC_TRANSB, ctypes.byref(tb),
                                                             ctypes.c_size_t(4)), "transb")
            if fmt == "e4m3":
                fa = ctypes.c_int8(fast)
                self._ok(self.lib.cublasLtMatmulDescSetAttribute(
                    d, DESC_FAST_ACCUM, ctypes.byref(fa), ctypes.c_size_t(1)), "fast_accum")
            self.descs[key] = d
        return self.descs[key]

    def layout(self, fmt: str, rows: int, cols: int, ld: int):
        lay = ctypes.c_void_p()
        self._ok(self.lib.cublasLtMatrixLayoutCreate(ctypes.byref(lay), CUDA_R[fmt],
                                                      ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                                      ctypes.c_int64(ld)), "layout")
        return lay

    def query(self, fmt: str, layout: str, fast: int, m: int, n: int, k: int) -> dict:
        """torch's (M, N, K) call as cuBLASLt sees it (column-major, operands
        swapped: D^T (N x M) = B^T A^T) and the first algorithm it picks."""
        in_t = "f32" if fmt == "tf32" else fmt
        out_t = OUT_TYPE[fmt]
        a = (self.layout(in_t, k, n, k) if layout == "tn" else self.layout(in_t, n, k, n))
        b = self.layout(in_t, k, m, k)
        c = self.layout(out_t, n, m, n)
        res = HeuristicResult()
        got = ctypes.c_int(0)
        rec = {"m": m, "n": n, "k": k, "dtype": fmt, "layout": layout, "fast": fast}
        try:
            status = self.lib.cublasLtMatmulAlgoGetHeuristic(
                self.handle, self.desc(fmt, layout, fast), a, b, c, c, self.pref, 1,
                ctypes.byref(res), ctypes.byref(got))
        finally:
            for lay in (a, b, c):
                self.lib.cublasLtMatrixLayoutDestroy(lay)
        rec["status"] = int(status) if status != 0 else (0 if got.value else -1)
        rec["workspace"] = int(res.workspaceSize) if got.value else 0
        for name, attr in CONFIG.items():
            value = ctypes.c_int32(0)
            if got.value:
                written = ctypes.c_size_t(0)
                self.lib.cublasLtMatmulAlgoConfigGetAttribute(
                    ctypes.byref(res.algo), attr, ctypes.byref(value), ctypes.c_size_t(4),
                    ctypes.byref(written))
            rec[name] = int(value.value)
        return rec


def dump(lt: Lt, shapes: int, seed: int, deadline: float) -> list[dict]:
    recs = []
    for di, fmt in enumerate(H.DTYPES):
        draw = H.sample_shapes(shapes, seed + di)
        variants = [("tn", 0), ("tn", 1)] if fmt == "e4m3" else [("nn", 0), ("tn", 0)]
        for m, n, k in draw:
            for layout, fast in variants:
                recs.append(lt.query(fmt, layout, fast, int(m), int(n), int(k)))
            if time.time() > deadline:
                print(f"time: stopped {fmt} after {len(recs)} records", flush=True)
                return recs
        print(f"{fmt}: {len(recs)} records so far", flush=True)
    return recs


def verify(lt: Lt, count: int, seed: int, deadline: float, profile_every: int = 25) -> dict:
    import torch

    shapes = H.sample_shapes(count, seed, hi=8192, max_macs=1 << 24)
    cols = {"index": [], "dtype": [], "rows_from": [], "hashes": [], "kernels": []}
    recs = []
    one = torch.tensor(1.0, device="cuda")
    for i, (m, n, k) in enumerate(shapes):
        m, n, k = int(m), int(n), int(k)
        a32, b32 = H.operands(seed, i, m, n, k)
        for fmt in H.DTYPES:
            if fmt == "e4m3" and (m % 16 or n % 16 or k % 16):
                continue
            tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "tf32": torch.float32,
                   "e4m3": torch.float8_e4m3fn}[fmt]
            a = torch.from_numpy(a32).to(tdt).cuda()
            b = torch.from_numpy(b32).to(tdt).cuda()
            torch.backends.cuda.matmul.allow_tf32 = fmt == "tf32"

            def run(a=a, b=b, fmt=fmt):
                if fmt == "e4m3":
                    return torch._scaled_mm(a, b.t().contiguous().t(), scale_a=one, scale_b=one,
                                            out_dtype=torch.float32)
                return torch.matmul(a, b)
            names = ""
            if i % profile_every == 0:
                from torch.profiler import ProfilerActivity, profile

                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    d = run()
                    torch.cuda.synchronize()
                names = ";".join(e.name for e in prof.events()
                                 if str(e.device_type).endswith("CUDA"))
            else:
                d = run()
            d = d.cpu().contiguous()
            words = d.view({4: torch.int32, 2: torch.int16}[d.element_size()]).numpy()
            cols["index"].append(i)
            cols["dtype"].append(H.DTYPES.index(fmt))
            cols["rows_from"].append(sum(len(h) for h in cols["hashes"]))
            cols["hashes"].append(H.row_hashes(words))
            cols["kernels"].append(names)
            recs.append(lt.query(fmt, "tn" if fmt == "e4m3" else "nn", 0, m, n, k))
        if time.time() > deadline:
            print(f"time: verification stopped after {i + 1} shapes", flush=True)
            break
    packed = H.pack(recs, {"seed": seed})
    return {"shapes": shapes[:max(cols["index"]) + 1] if cols["index"] else shapes[:0],
            "index": np.array(cols["index"], np.int32), "vdtype": np.array(cols["dtype"], np.int8),
            "rows_from": np.array(cols["rows_from"], np.int64),
            "hashes": np.concatenate(cols["hashes"]) if cols["hashes"] else np.zeros(0, np.uint64),
            "kernels": np.array(cols["kernels"]), **{f"h_{k}": v for k, v in packed.items()}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", type=int, default=100_000)
    p.add_argument("--verify", type=int, default=2000)
    p.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    p.add_argument("--workspace", type=int, default=32 << 20)
    p.add_argument("--seconds", type=float, default=480)
    args = p.parse_args(argv)
    out = Path(os.environ.get("OUT", "."))
    start = time.time()
    import torch

    lib, path = load_cublaslt()
    lt = Lt(lib, args.workspace)
    meta = {"seed": args.seed, "workspace": args.workspace, "library": path,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0), "shapes_per_dtype": args.shapes,
            "allow_splitk": getattr(torch.backends.cuda.matmul, "allow_splitk", None)}
    print(f"seed {args.seed}; {meta['device']}; {path}", flush=True)
    recs = dump(lt, args.shapes, args.seed, start + args.seconds * 0.6)
    np.savez_compressed(out / "heuristic.npz", **H.pack(recs, meta))
    print(f"heuristic.npz: {len(recs)} records in {time.time() - start:.0f} s", flush=True)
    v = verify(lt, args.verify, args.seed, start + args.seconds)
    np.savez_compressed(out / "verify.npz", **v)
    (out / "dump-meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"verify.npz: {len(v['index'])} calls, {len(v['hashes'])} rows; "
          f"{time.time() - start:.0f} s in all", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
