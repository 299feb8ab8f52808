"""The multi-word GEMM study: an fp32 product emulated with split bf16 (or tf32) words.

    python3 examples/multiword_gemm.py                       # the table
    python3 examples/multiword_gemm.py --plot multiword.png  # and a plot (pip install tcprobe[plot])
    python3 examples/multiword_gemm.py --csv multiword.csv   # the table as CSV

An fp32 matrix A is split into words A = A1 + A2 + A3 (A1 = bf16(A),
A2 = bf16(A - A1), ...; the host's split is part of the algorithm being
studied) and the product is emulated by tensor-core products of the words,
accumulated in f32 on the tensor cores, smallest terms first: "bf16x3" is
A2 B1 + A1 B2 + A1 B1, "bf16x6" adds A3 B1 + A2 B2 + A1 B3 in front,
"tf32x3" is the same three products with tf32 words (the question of
Khattak & Mikaitis, arXiv 2512.07004, run here on the modeled datapaths).
Each product runs on the GPU's default instruction (A100: mma.sync, H100:
wgmma, B200: tcgen05.mma), D of one product as C of the next. The error is
against the exact product E of the fp32 matrices (the exact sum rounded
once to f32): the largest componentwise error |D - E| / (|A| |B|), the
median relative error |D - E| / |E|, and the share of elements that are
the correctly rounded f32 word (error figures in float64, for the table).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tcprobe  # noqa: E402
from tcprobe.matrix.compare import exact_words  # noqa: E402

METHODS = {
    # name: (word dtype name, products (i, j) of A_i B_j, smallest first)
    "bf16x1": ("bf16", [(0, 0)]),
    "bf16x3": ("bf16", [(1, 0), (0, 1), (0, 0)]),
    "bf16x6": ("bf16", [(2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)]),
    "tf32x1": ("tf32", [(0, 0)]),
    "tf32x3": ("tf32", [(1, 0), (0, 1), (0, 0)]),
}


def split(x: np.ndarray, word: str, parts: int) -> list[np.ndarray]:
    """x = sum of ``parts`` words of bf16 (rounded to nearest) or tf32 (the
    top 19 bits of the f32 word, kept in f32 containers)."""
    import ml_dtypes

    out, rest = [], x.astype(np.float32)
    for _ in range(parts):
        if word == "bf16":
            w = rest.astype(ml_dtypes.bfloat16)
            rest = (rest - w.astype(np.float32)).astype(np.float32)
        else:
            w = (rest.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
            rest = (rest - w).astype(np.float32)
        out.append(w)
    return out


def emulate(a32, b32, method: str, gpu: str) -> np.ndarray:
    word, products = METHODS[method]
    parts = 1 + max(max(p) for p in products)
    a_words, b_words = split(a32, word, parts), split(b32, word, parts)
    d = np.zeros((a32.shape[0], b32.shape[1]), np.float32)
    for i, j in products:  # each word product accumulates into D (C as the accumulator)
        d = tcprobe.matmul(a_words[i], b_words[j], d, gpu=gpu, schedule="chain")
    return d


def errors(d: np.ndarray, exact: np.ndarray, scale: np.ndarray) -> tuple[float, float]:
    """(the largest componentwise error |d - exact| / (|A| |B|), the median
    relative error |d - exact| / |exact|), in float64 for the table."""
    e = exact.astype(np.float64)
    diff = np.abs(d.astype(np.float64) - e)
    keep = e != 0
    return float((diff / scale).max()), float(np.median(diff[keep] / np.abs(e[keep])))


def matrices(rng, m: int, k: int, n: int, spread: int):
    """Normal values times 2**u, u uniform in [-spread, spread]: a wide range of exponents."""
    def one(shape):
        x = rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))
        return x.astype(np.float32)

    return one((m, k)), one((k, n))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="multi-word fp32 GEMM emulation on modeled GPUs")
    ap.add_argument("--gpus", nargs="+", default=["A100", "H100", "B200"])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--k", nargs="+", type=int, default=[64, 512, 4096])
    ap.add_argument("--size", type=int, default=48, help="M = N")
    ap.add_argument("--spread", type=int, default=4, help="exponent spread of the inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", help="write a plot here (needs matplotlib)")
    ap.add_argument("--csv", help="write the table here as CSV")
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    rows = []
    print(f"{'K':>6} {'GPU':>5} {'method':>7} {'max |D-E|/|A||B|':>17} {'median |D-E|/|E|':>13} "
          f"{'correctly rounded':>18}")
    for k in args.k:
        a32, b32 = matrices(rng, args.size, k, args.size, args.spread)
        zero = np.zeros((args.size, args.size), np.uint32)
        exact = exact_words(a32.view(np.uint32), "f32", b32.view(np.uint32), "f32", zero,
                            "f32").view(np.float32)
        scale = np.abs(a32.astype(np.float64)) @ np.abs(b32.astype(np.float64))
        for gpu in args.gpus:
            for method in args.methods:
                d = emulate(a32, b32, method, gpu)
                worst, median = errors(d, exact, scale)
                same = float((d.view(np.uint32) == exact.view(np.uint32)).mean())
                rows.append((k, gpu, method, worst, median, same))
                print(f"{k:>6} {gpu:>5} {method:>7} {worst:>17.3e} {median:>13.2e} "
                      f"{100 * same:>17.1f}%", flush=True)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("k,gpu,method,max_componentwise_error,median_relative_error,"
                    "correctly_rounded\n")
            for r in rows:
                f.write(",".join(str(x) for x in r) + "\n")
        print(f"wrote {args.csv}")
    if args.plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("error: --plot needs matplotlib (pip install tcprobe[plot])", file=sys.stderr)
            return 2
        fig, ax = plt.subplots(figsize=(7, 4.5))
        # a colour per method and a line style and marker per GPU: every series
        # tells itself apart (no colour cycle recycled past its ten entries)
        palette = plt.get_cmap("tab10" if len(args.methods) <= 10 else "tab20")
        styles = ["-", "--", ":", "-."]
        markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
        for g, gpu in enumerate(args.gpus):
            for i, method in enumerate(args.methods):
                pts = [(r[0], r[3]) for r in rows if r[1] == gpu and r[2] == method]
                ax.loglog(*zip(*pts, strict=True), color=palette(i % palette.N),
                          linestyle=styles[g % len(styles)], marker=markers[g % len(markers)],
                          label=f"{gpu} {method}")
        ax.axhline(2.0 ** -24, color="grey", linestyle=":", label="fp32 unit roundoff")
        ax.set_xlabel("K")
        ax.set_ylabel("largest |D - exact| / (|A| |B|)")
        ax.set_title("fp32 GEMM emulated with multi-word tensor-core products")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
