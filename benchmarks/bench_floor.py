"""The engine's GEMM against a practical floor, both timed in one run.

    NUMBA_NUM_THREADS=1 python3 benchmarks/bench_floor.py [--size 512] [--repeat 5]
    python3 benchmarks/bench_floor.py --kinds bf16,f16,tf32,fp8,s8 --dot 100,1000,20000,200000

The floor is this file's own numba kernel for the H100 bf16 ``mma`` chain
(m16n8k16, f32 C and D: window 25 bits, anchor floor -133, truncation, Inf
on overflow): decoded int32 panels, int32 lanes for the 16 products of a
block, no NaN or Inf handling at all, no model parameter but these. Its
products are the engine's own int32 lane code
(``models/kernels/gemm_ir.panel_block``: numba alone widens int32
arithmetic to int64 and does not vectorize the variable shifts), its decode
and its rounding are its own scalar loops for exactly this format. It is
what a kernel that knows only finite bf16 operands needs; the engine (``tcprobe.matmul``, ``schedule=
'chain'``) does the same blocks with every special and every model's
parameter honoured. Both run on the same random finite operands, their
words are compared (the floor is checked, not trusted), and the figures are
ns per K=16 block per output (M * N * K / 16 blocks), the best of
``--repeat`` interleaved calls in CPU seconds of this process (robust when
other processes share the cores; run with NUMBA_NUM_THREADS=1).

A third line times the floor's lane passes alone (anchors and cut sums,
no addend, no rounding, no decode): a bound below both, since every
kernel reading these lanes does at least that. On an AVX2 host the floor's
scalar rounding loop costs as much as its products, and the engine, which
rounds 16 columns in vector lanes, can beat the floor; the products line
says how far the engine is from the lane code itself.

The other kinds (``--kinds``, :data:`KINDS`): f16, tf32 (blocks of 8
products), fp8 e4m3 on the H100's mma (emulated as the compiler does it:
f16 sub-products, C added after each instruction) and wgmma (blocks of
32), the B200's tcgen05 bf16 and e4m3, and s8 (integer, K=32) run through
``tcprobe.matmul`` on the same shape; each is quoted per block and against
the bf16 floor scaled by its products per block. ``--dot``
times ``tcprobe.dot`` (bf16, K=16, the H100 profile) in steady state at
each batch size, in ns per dot.

:func:`measure` returns the figures as a dict; the CLI prints them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from numba import njit  # noqa: E402

import tcprobe  # noqa: E402  (sets numba's cache folder before the kernels below)
from tcprobe.models.bits import bit_length  # noqa: E402
from tcprobe.models.kernels.gemm_ir import LANES, config, panel_block  # noqa: E402

ZERO_EXP = -(1 << 24)
FLOOR = -133  # the H100 mma window's anchor floor (f32 accumulation)
WINDOW = 25
PANEL = 128
BLOCK = 16
CONFIG = config(7, 7, WINDOW, FLOOR, BLOCK)  # bf16 x bf16, the window, its floor


@njit(cache=True, nogil=True)
def _decode_bf16(words, sig, exp):
    """bf16 words into signed significands and raw exponents (zero: ZERO_EXP)."""
    flat, s_out, e_out = words.ravel(), sig.ravel(), exp.ravel()
    for x in range(flat.size):
        w = np.int32(flat[x])
        e = (w >> 7) & 0xFF
        m = (w & 0x7F) | ((1 if e != 0 else 0) << 7)
        s_out[x] = -m if (w >> 15) & 1 else m
        e_out[x] = (e if e != 0 else 1) - 127 if m != 0 else ZERO_EXP


@njit(cache=True, nogil=True)
def _floor_panel(a_sig, a_exp, b_mag, b_neg, b_exp, c, j0, out):
    """D words of columns j0 .. j0 + n (one panel of B): the chain over K in
    blocks of 16, finite operands only, int32 lanes."""
    n = b_mag.shape[1]
    n_out = min(n, out.shape[1] - j0)
    blocks = a_sig.shape[1] // BLOCK
    acc = np.zeros(n, np.int32)
    top = np.empty(n, np.int32)
    ctop = np.empty(n, np.int32)
    k_a = a_sig.shape[1]
    s32 = np.empty(n, np.int32)
    for i in range(a_sig.shape[0]):
        for j in range(n_out):
            acc[j] = np.int32(c[i, j0 + j])
        for blk in range(blocks):
            lo = blk * BLOCK
            for j in range(n):  # C's exponent joins the anchor
                w = acc[j]
                e = (w >> 23) & 0xFF
                cm = (w & 0x7FFFFF) | (e != 0) << 23
                ctop[j] = (e if e != 0 else 1) - 127 if cm != 0 else ZERO_EXP
            for j in range(0, n, LANES):  # the anchors and cut sums, int32 lanes
                panel_block(a_sig, a_exp, b_mag, b_neg, b_exp, i * k_a + lo, lo * n, n, ctop, top,
                            s32, j, CONFIG)
            for j in range(n):  # C's cut term, the sum, f32 by truncation
                w = acc[j]
                e = (w >> 23) & 0xFF
                cm = np.int64((w & 0x7FFFFF) | (e != 0) << 23)
                r = top[j] - ((e if e != 0 else 1) - 127)
                r = min(max(r, 0), 63)  # a nonzero C lies at or below the anchor
                ct = (cm << 2) >> r
                total = np.int64(s32[j]) + (-ct if w < 0 else ct)
                neg = total < 0
                mag = -total if neg else total
                q = top[j] - WINDOW
                msb = q + bit_length(mag) - 1
                ex = msb if msb > -126 else -126
                sh = ex - 23 - q
                kept = mag >> sh if sh >= 0 else mag << -sh
                biased = ex + 127 if kept >> 23 else 0
                word = (biased << 23) | (kept & 0x7FFFFF)
                if biased >= 255:
                    word = 0x7F800000
                if neg and word != 0:
                    word |= 0x80000000
                acc[j] = np.int32(np.int64(word) - ((word >> 31) << 32))
        for j in range(n_out):
            out[i, j0 + j] = acc[j]



@njit(cache=True, nogil=True)
def _products_panel(a_sig, a_exp, b_mag, b_neg, b_exp):
    """The floor's product passes alone (anchors and cut sums of every
    block, no addend, no rounding): a bound no kernel with these lanes beats."""
    n = b_mag.shape[1]
    k_a = a_sig.shape[1]
    ctop = np.full(n, ZERO_EXP, np.int32)
    top = np.empty(n, np.int32)
    s32 = np.empty(n, np.int32)
    check = 0
    for i in range(a_sig.shape[0]):
        for blk in range(k_a // BLOCK):
            for j in range(0, n, LANES):
                panel_block(a_sig, a_exp, b_mag, b_neg, b_exp, i * k_a + blk * BLOCK,
                            blk * BLOCK * n, n, ctop, top, s32, j, CONFIG)
            check += s32[0]
    return check


def floor_matmul(a_words: np.ndarray, b_words: np.ndarray, c_words: np.ndarray,
                 products_only: bool = False) -> np.ndarray:
    """D words (uint32) of the H100 bf16 mma chain, finite operands only:
    A (M, K) and B (K, N) bf16 words, C (M, N) f32 words, K a multiple of 16."""
    a_sig = np.empty(a_words.shape, np.int32)
    a_exp = np.empty(a_words.shape, np.int32)
    b_sig = np.empty(b_words.shape, np.int32)
    b_exp = np.empty(b_words.shape, np.int32)
    _decode_bf16(np.ascontiguousarray(a_words), a_sig, a_exp)
    _decode_bf16(np.ascontiguousarray(b_words), b_sig, b_exp)
    c = np.ascontiguousarray(c_words).view(np.int32)
    out = np.empty(c.shape, np.int32)
    for j0 in range(0, b_words.shape[1], PANEL):  # panels padded to LANES columns
        width = -(-min(PANEL, b_words.shape[1] - j0) // LANES) * LANES
        bs = np.zeros((b_sig.shape[0], width), np.int32)
        be = np.full((b_sig.shape[0], width), ZERO_EXP, np.int32)
        bs[:, :min(width, b_sig.shape[1] - j0)] = b_sig[:, j0:j0 + width]
        be[:, :min(width, b_sig.shape[1] - j0)] = b_exp[:, j0:j0 + width]
        mag = (np.abs(bs) << 11).astype(np.int32)  # shifted to the window (gemm_ir.magnitudes)
        if products_only:
            _products_panel(a_sig, a_exp, mag, (bs >> 31).astype(np.int32), be)
            continue
        _floor_panel(a_sig, a_exp, mag, (bs >> 31).astype(np.int32), be, c, j0, out)
    return out.view(np.uint32)


# label: (numpy dtype name, products a block, C dtype, GPU, instruction)
KINDS = {
    "bf16": ("bfloat16", 16, "float32", "H100", "mma"),
    "f16": ("float16", 16, "float32", "H100", "mma"),
    "tf32": ("float32", 8, "float32", "H100", "mma"),
    "fp8": ("float8_e4m3fn", 16, "float32", "H100", "mma"),  # emulated: f16 sub-MMAs, C added
    "fp8-wgmma": ("float8_e4m3fn", 32, "float32", "H100", "wgmma"),
    "tcgen05-bf16": ("bfloat16", 16, "float32", "B200", "tcgen05"),
    "tcgen05-fp8": ("float8_e4m3fn", 32, "float32", "B200", "tcgen05"),
    "s8": ("int8", 32, "int32", "H100", "mma"),
}


def _operands(kind: str, m: int, n: int, k: int, seed: int):
    import ml_dtypes

    rng = np.random.default_rng(seed)
    name, _per, c_name, _gpu, _instr = KINDS[kind]
    if name == "int8":
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
        c = rng.integers(-1 << 20, 1 << 20, (m, n)).astype(np.int32)
        return a, b, c
    dt = getattr(ml_dtypes, name, None) or np.dtype(name)
    a = rng.standard_normal((m, k)).astype(np.float32).astype(dt)
    b = rng.standard_normal((k, n)).astype(np.float32).astype(dt)
    c = rng.standard_normal((m, n)).astype(np.float32).astype(c_name)
    return a, b, c


def _engine(a, b, c, gpu="H100", instr="mma"):
    return tcprobe.matmul(a, b, c, gpu=gpu, instr=instr, schedule="chain", progress=False,
                          jobs=1)


def _best(fns, repeat: int) -> list[float]:
    """Best CPU seconds of each function, the calls interleaved."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for x, fn in enumerate(fns):
            t = time.process_time()
            fn()
            best[x] = min(best[x], time.process_time() - t)
    return best


def measure(size: int = 512, repeat: int = 5, kinds=("bf16",), dot_batches=(), seed: int = 0,
            k: int | None = None) -> dict:
    """The figures of one run: ns per block per output of the floor and of
    the engine on the bf16 chain (``size`` x ``size`` x ``k``) and their
    ratio, each other kind's ns per block and its ratio to the floor scaled
    to its block's products, and ``tcprobe.dot``'s ns per dot at each batch
    size. Raises AssertionError when the engine's and the floor's words
    differ."""
    k = k or size
    out: dict = {"shape": (size, size, k), "repeat": repeat, "kinds": {}, "dot": {}}
    a, b, c = _operands("bf16", size, size, k, seed)
    aw, bw, cw = a.view(np.uint16), b.view(np.uint16), c.view(np.uint32)
    ours = _engine(a, b, c).view(np.uint32)  # warm: loads or compiles the kernels
    floor_words = floor_matmul(aw, bw, cw)
    differ = int((ours != floor_words).sum())
    assert differ == 0, f"the engine and the floor differ on {differ} words"
    floor_matmul(aw, bw, cw, True)
    t_floor, t_engine, t_products = _best([lambda: floor_matmul(aw, bw, cw),
                                           lambda: _engine(a, b, c),
                                           lambda: floor_matmul(aw, bw, cw, True)], repeat)
    blocks = size * size * (k // BLOCK)
    floor_ns = t_floor / blocks * 1e9
    out["floor_ns"] = floor_ns
    out["engine_ns"] = t_engine / blocks * 1e9
    out["ratio"] = t_engine / t_floor
    out["products_ns"] = t_products / blocks * 1e9  # the products alone: a bound below both
    out["products_ratio"] = t_engine / t_products
    # the same operands with one A and one B word in 1,000 a NaN or an Inf: the
    # flagged column groups take the core's specials (the floor has none to take)
    rng = np.random.default_rng(seed + 1)
    sa, sb = aw.copy(), bw.copy()
    for w in (sa, sb):
        hit = rng.random(w.shape) < 0.001
        w[hit] = rng.choice(np.array([0x7F80, 0xFF80, 0x7FC0], np.uint16), int(hit.sum()))
    sa, sb = sa.view(a.dtype), sb.view(b.dtype)
    _engine(sa, sb, c)
    out["specials_ns"] = _best([lambda: _engine(sa, sb, c)], repeat)[0] / blocks * 1e9
    for kind in kinds:
        if kind == "bf16":
            out["kinds"][kind] = {"ns": out["engine_ns"], "per_block": 16, "ratio": out["ratio"],
                                  "datapath": "H100 mma"}
            continue
        per, gpu, instr = KINDS[kind][1], KINDS[kind][3], KINDS[kind][4]
        xa, xb, xc = _operands(kind, size, size, k, seed)
        _engine(xa, xb, xc, gpu, instr)
        t_floor, t_kind = _best([lambda: floor_matmul(aw, bw, cw),
                                 lambda xa=xa, xb=xb, xc=xc, g=gpu, x=instr: _engine(xa, xb, xc, g, x)],
                                repeat)
        ns = t_kind / (size * size * (k // per)) * 1e9
        scaled = t_floor / blocks * 1e9 * per / BLOCK
        out["kinds"][kind] = {"ns": ns, "per_block": per, "ratio": ns / scaled,
                              "datapath": f"{gpu} {instr}"}
    for batch in dot_batches:
        out["dot"][int(batch)] = dot_ns(int(batch), repeat, seed)
    return out


def dot_ns(batch: int, repeat: int = 5, seed: int = 0) -> float:
    """``tcprobe.dot``'s steady-state ns per dot on ``batch`` random bf16 K=16
    cases (H100 mma datapath), calls of that size repeated."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((batch, 16)).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((batch, 16)).astype(np.float32).astype(ml_dtypes.bfloat16)
    c = rng.standard_normal(batch).astype(np.float32)
    aw, bw, cw = a.view(np.uint16), b.view(np.uint16), c.view(np.uint32)
    dp = "mma.bf16.f32.k16"
    calls = max(1, 200_000 // batch)

    def run():
        for _ in range(calls):
            tcprobe.dot(aw, bw, cw, datapath=dp, gpu="H100")

    run()
    return _best([run], repeat)[0] / (calls * batch) * 1e9


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512, help="M = N (default 512)")
    ap.add_argument("--k", type=int, default=None, help="K (default: the size)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--dot", default="100,1000,20000,200000", help="dot batch sizes ('' none)")
    args = ap.parse_args(argv)
    import numba

    if numba.get_num_threads() != 1:
        print(f"warning: numba runs {numba.get_num_threads()} threads; set NUMBA_NUM_THREADS=1",
              file=sys.stderr)
    kinds = [x for x in args.kinds.split(",") if x]
    bad = [x for x in kinds if x not in KINDS]
    if bad:
        print(f"error: unknown kind {bad[0]!r} (one of {', '.join(KINDS)})", file=sys.stderr)
        return 2
    batches = [int(float(x)) for x in args.dot.split(",") if x]
    r = measure(args.size, args.repeat, kinds, batches, args.seed, args.k)
    m, n, k = r["shape"]
    print(f"{m}x{n}x{k}, H100 mma chain, best of {r['repeat']}, CPU time, words equal")
    print(f"floor  bf16 : {r['floor_ns']:6.2f} ns per K=16 block per output")
    print(f"engine bf16 : {r['engine_ns']:6.2f} ns per K=16 block per output, "
          f"{r['ratio']:.2f}x the floor")
    print(f"products    : {r['products_ns']:6.2f} ns per K=16 block per output (the floor's "
          f"lane passes alone); the engine {r['products_ratio']:.2f}x that")
    print(f"engine bf16 : {r['specials_ns']:6.2f} ns per K=16 block per output with 0.1% of "
          "the A and B words NaN or Inf")
    for kind, f in r["kinds"].items():
        if kind != "bf16":
            print(f"engine {kind:<12}: {f['ns']:6.2f} ns per {f['per_block']}-product block "
                  f"({f['datapath']}), {f['ratio']:.2f}x the floor scaled to it")
    for batch, ns in r["dot"].items():
        print(f"dot {batch:>8,} : {ns:7.1f} ns/dot (steady state)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
