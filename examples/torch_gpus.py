"""The same small bf16 model run as A100, H100 and B200: where the outputs first differ, which op.

    NUMBA_NUM_THREADS=1 python3 examples/torch_gpus.py

Runs a 2-layer MLP under tcprobe.torch.emulate for each GPU with every GEMM
recorded, then walks the GEMMs in order and prints the first one whose D
words differ between two GPUs (op, shape, how many words), and whether the
final outputs differ.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import tcprobe.torch as tt  # noqa: E402

F = torch.nn.functional


def model(x, p):
    return F.linear(F.gelu(F.linear(x, p[0], p[1])), p[2], p[3])


def main() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 128, generator=g).bfloat16()
    p = [(torch.randn(*s, generator=g) / 8).bfloat16()
         for s in ((256, 128), (256,), (64, 256), (64,))]
    runs = {}
    for gpu in ("A100", "H100", "B200"):
        rep = tt.Report(record=True)
        with tt.emulate(gpu=gpu, report=rep):
            y = model(x, p)
        runs[gpu] = (y, rep.records)
    base_y, base = runs["A100"]
    for gpu in ("H100", "B200"):
        y, recs = runs[gpu]
        first = next(((i, r, o) for i, (r, o) in enumerate(zip(recs, base, strict=True))
                      if not torch.equal(r.d.view(torch.int32), o.d.view(torch.int32))), None)
        if first is None:
            print(f"A100 vs {gpu}: every GEMM's words equal")
        else:
            i, r, o = first
            n = int((r.d.view(torch.int32) != o.d.view(torch.int32)).sum())
            print(f"A100 vs {gpu}: first differ at GEMM {i} (aten.{r.op}, "
                  f"{tuple(r.a.shape)} @ {tuple(r.b.shape)}): {n} of {r.d.numel()} f32 words of D (before the bf16 epilogue)")
        diff = int((y.view(torch.int16) != base_y.view(torch.int16)).sum())
        print(f"  final outputs: {diff} of {y.numel()} bf16 words differ")


if __name__ == "__main__":
    main()
