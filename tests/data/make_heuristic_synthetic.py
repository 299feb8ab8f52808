"""Writes tests/data/heuristic-synthetic.npz: a SYNTHETIC heuristic dump (no GPU
recorded it), records typed by hand in the layout scripts/atlas_heuristic_dump.py
writes, to test the offline mapping. The split counts of the first three are
the ones the H200 showed (reports/silicon/2026-12-04-h200); the rest exercise
each branch (no split, gemv, gemmSN, stream-K, output-type partials, in-place
partials, a count the blocks cut, a failed query)."""

from pathlib import Path

import numpy as np

from tcprobe.atlas import heuristic as H


def rec(m, n, k, dtype, algo, splitk, red=2, layout="nn", fast=0, status=0):
    return {"m": m, "n": n, "k": k, "dtype": dtype, "layout": layout, "fast": fast,
            "status": status, "algo_id": algo, "tile_id": 20, "splitk_num": splitk,
            "reduction_scheme": red, "cta_swizzling": 0, "custom_option": 0, "stages_id": 13,
            "inner_shape_id": 0, "cluster_shape_id": 2, "workspace": 1 << 20}


RECORDS = [
    rec(256, 256, 4096, "bf16", 66, 3),
    rec(128, 128, 16384, "bf16", 66, 11),
    rec(256, 256, 4096, "tf32", 66, 12),
    rec(64, 64, 512, "f16", 66, 1, red=0),
    rec(1, 4096, 4096, "bf16", 13, 1, red=0),
    rec(8, 4096, 512, "bf16", 11, 1, red=0),
    rec(128, 128, 16384, "e4m3", 66, 6, layout="tn", fast=1),
    rec(1000, 1000, 1000, "e4m3", 74, -2, layout="tn"),
    rec(300, 300, 5000, "bf16", 66, 4, red=4),
    rec(2000, 64, 700, "bf16", 66, 16),
    rec(77, 91, 3001, "f16", 66, 5, red=1, layout="tn"),
    rec(5, 5, 5, "tf32", 0, 0, red=0, status=15),
]

if __name__ == "__main__":
    out = Path(__file__).with_name("heuristic-synthetic.npz")
    meta = {"synthetic": True, "note": "typed by hand, not recorded: see make_heuristic_synthetic.py"}
    np.savez_compressed(out, **H.pack(RECORDS, meta))
    print(out)
