"""A small transformer block, forward and backward in bf16, under tcprobe.torch.emulate.

    NUMBA_NUM_THREADS=1 python3 benchmarks/bench_torch.py [--batch 4 --seq 128 --d 256]

Runs the block (d_model 256, 4 heads, sequence 128, batch 4: a qkv linear,
q @ k^T and softmax @ v as batched matmuls, an output linear, a 4x GELU MLP,
two layer norms) three ways: plain torch on the CPU; under
``emulate(gpu="H100")`` (every GEMM through tcprobe.matmul, wgmma on H100);
and with the same GEMMs routed through MMA-Sim 2.1.1's H100 instruction
(WGMMA m64n8k16.f32.bf16.bf16) chained over K. The emulated step is timed warm:
after one step under emulate has loaded (or compiled) every kernel it takes. Prints each time, the ratios,
how many GEMMs ran, and checks op by op that every word the mode wrote equals
tcprobe.matmul on the same operands (and MMA-Sim's, where it ran).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def block(x, p, heads: int):
    import torch.nn.functional as F

    b, s, d = x.shape
    h = F.layer_norm(x, (d,))
    qkv = F.linear(h, p["w_qkv"], p["b_qkv"]).reshape(b, s, 3, heads, d // heads)
    q, k, v = qkv.permute(2, 0, 3, 1, 4)
    att = (q @ k.transpose(-1, -2)) * (d // heads) ** -0.5
    o = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
    x = x + F.linear(o, p["w_o"], p["b_o"])
    h = F.gelu(F.linear(F.layer_norm(x, (d,)), p["w_1"], p["b_1"]))
    return x + F.linear(h, p["w_2"], p["b_2"])


def params(d: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    shapes = {"w_qkv": (3 * d, d), "b_qkv": (3 * d,), "w_o": (d, d), "b_o": (d,),
              "w_1": (4 * d, d), "b_1": (4 * d,), "w_2": (d, 4 * d), "b_2": (d,)}
    return {k: (torch.randn(*s, generator=g) * (s[-1] ** -0.5 if len(s) == 2 else 0.1)
                ).bfloat16().requires_grad_() for k, s in shapes.items()}


def step(x, p, heads):
    for t in p.values():
        t.grad = None
    y = block(x, p, heads)
    y.float().square().mean().backward()
    return y


def mmasim_mode():
    """emulate(gpu='H100') with each 2-D product computed by MMA-Sim's chain."""
    import numpy as np
    import torch
    from mmasim.nv_ptx import WGMMA

    import tcprobe.torch as tt
    from tcprobe.torch.adapter import f32_words

    sim = WGMMA("Hopper", "m64n8k16.f32.bf16.bf16")

    class SimMode(tt.Emulate):
        def product(self, op, a, b, c=None, alpha=1, beta=1, *, bias=None, form="plain",
                    out_dtype=None, batch=1):
            """MMA-Sim's chain from +0, then the epilogue: D = alpha*acc +
            beta*C (+ bias) in f32 (one fma, as the pipeline's default)."""
            from tcprobe.matrix import epilogue

            m, k = a.shape
            kp = -(-k // 16) * 16
            A = torch.zeros(m, kp, dtype=a.dtype)
            A[:, :k] = a
            B = torch.zeros(kp, b.shape[1], dtype=b.dtype)
            B[:k] = b
            d = torch.zeros(m, b.shape[1])
            for t in range(0, kp, 16):
                d = sim(A[:, t:t + 16], B[t:t + 16], d)
            words = f32_words(d)
            one = np.uint32(0x3F800000)
            al = np.array([alpha], np.float32).view(np.uint32)[0]
            if c is not None and beta != 0:
                bc = f32_words(c.float()) if beta == 1 else epilogue.mul(
                    np.array([beta], np.float32).view(np.uint32)[0], f32_words(c.float()))
                words = epilogue.fma(al, words, bc)
            elif al != one:
                words = epilogue.mul(al, words)
            if bias is not None:
                words = epilogue.add(words, f32_words(bias.float()).reshape(1, -1))
            self.report.stats(op).shapes.append((tuple(a.shape), tuple(b.shape)))
            return words

    return SimMode


def measure(batch=4, seq=128, d=256, heads=4, mmasim=True, out=print) -> dict:
    """The block's times (seconds: torch, emulate, MMA-Sim routed or None),
    the GEMM count, and ``differ``: words that differ from tcprobe.matmul op
    by op, plus 1 where MMA-Sim's route gave other outputs or gradients.
    ``out`` receives the printed lines (None: silent)."""
    import numba
    import torch

    import tcprobe
    import tcprobe.torch as tt

    say = out or (lambda *a, **k: None)
    torch.set_num_threads(numba.get_num_threads())
    p = params(d, 0)
    x = torch.randn(batch, seq, d, generator=torch.Generator().manual_seed(1)).bfloat16()
    t0 = time.perf_counter()
    step(x, p, heads)
    plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    step(x, p, heads)
    plain = min(plain, time.perf_counter() - t0)
    with tt.emulate(gpu="H100"):  # warm-up: numba compiles or loads every kernel the step takes
        step(x, p, heads)
    rep = tt.Report(record=True)
    t0 = time.perf_counter()
    with tt.emulate(gpu="H100", report=rep):
        y_ours = step(x, p, heads)
    ours = time.perf_counter() - t0
    grads_ours = [t.grad.clone() for t in p.values()]
    say(f"block: batch {batch}, sequence {seq}, d_model {d}, {heads} heads, bf16, "
        f"forward+backward; numba/torch threads {numba.get_num_threads()}")
    say(f"torch CPU        : {plain:9.3f} s")
    say(f"emulate(H100)    : {ours:9.3f} s  ({ours / plain:.0f}x torch), "
        f"{len(rep.records)} GEMMs, {rep.fallback} fallbacks")
    for row in rep.rows():
        if "seconds" not in row:
            continue  # the unmodelled ops' rows
        say(f"  {row['op']:12s} routed {row['routed']:3d}  {row['seconds']:8.3f} s")
    differ = 0
    for r in rep.records:  # each product again, as the record says it ran
        dtype = None if r.c is not None else ("bfloat16" if r.bias is not None else "float32")
        want = tcprobe.matmul(r.a.contiguous(), r.b.contiguous(),
                              None if r.c is None else r.c.contiguous(), gpu="H100",
                              alpha=r.alpha, beta=r.beta, dtype=dtype, progress=False,
                              bias=None if r.bias is None else r.bias.float().contiguous(),
                              schedule=r.schedule or None).float()
        differ += int((want.view(torch.int32) != r.d.view(torch.int32)).sum())
    say(f"words vs tcprobe.matmul op by op: {differ} differ over {len(rep.records)} GEMMs")
    sim = None
    if mmasim:
        sim_rep = tt.Report()
        t0 = time.perf_counter()
        with mmasim_mode()(gpu="H100", report=sim_rep):
            y_sim = step(x, p, heads)
        sim = time.perf_counter() - t0
        same_y = torch.equal(y_sim.view(torch.int16), y_ours.view(torch.int16))
        same_g = all(torch.equal(t.grad.view(torch.int16), g.view(torch.int16))
                     for t, g in zip(p.values(), grads_ours, strict=True))
        say(f"MMA-Sim routed   : {sim:9.3f} s  ({sim / plain:.0f}x torch); "
            f"emulate is {sim / ours:.1f}x faster")
        say(f"outputs and gradients equal to MMA-Sim's route: {same_y and same_g}")
        differ += 0 if same_y and same_g else 1
    return {"torch_s": plain, "emulate_s": ours, "mmasim_s": sim, "gemms": len(rep.records),
            "fallbacks": rep.fallback, "differ": differ}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--no-mmasim", action="store_true")
    args = ap.parse_args(argv)
    r = measure(args.batch, args.seq, args.d, args.heads, not args.no_mmasim)
    return 1 if r["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
