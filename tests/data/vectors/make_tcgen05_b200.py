"""Write tests/data/vectors/tcgen05-b200.jsonl: recorded tcgen05 result words.

Two sources, both recorded on silicon:

1. The B200 result words frozen in the release of the tcgen05 write-up
   (github.com/sf-tensor/tcgen05, tcgen05_model/validation.py, MIT licence;
   ../shared/notes/tcgen05-published-parameters.md, "What was measured how").
   Their inputs are drawn from Python's ``random.Random(seed)`` in a fixed
   order; this script draws the same sequence (seeds, counts and ranges are
   facts of that release) and writes the words out, so the data file holds
   explicit inputs and outputs. Only the result words are hardware facts.
2. The tcgen05 vectors of the MMA-Sim pull request
   (../shared/seeds/mmasim-pr-zero-sign-and-fp6.txt; B200 and B300).

Run:  python tests/data/vectors/make_tcgen05_b200.py [OUT.jsonl]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).with_name("tcgen05-b200.jsonl")
RELEASE = "sf-tensor/tcgen05 release, frozen B200 word"
PR = "MMA-Sim PR vector (B200, B300)"


def finite_f32(rng: random.Random) -> int:
    """A random f32 word with an all-ones exponent turned into a finite one
    (the release's generator: clear the exponent field's top bits)."""
    bits = rng.getrandbits(32)
    if bits & 0x7F800000 == 0x7F800000:
        bits &= 0x807FFFFF
    return bits


def rec(name, source, kind, a_type, b_type, d_type, k, a, b, c, d, **extra):
    r = {"name": name, "gpu": "B200", "source": source, "family": "tcgen05", "kind": kind,
         "a_type": a_type, "b_type": b_type, "d_type": d_type, "k": k,
         "a": [f"{x:#x}" for x in a], "b": [f"{x:#x}" for x in b], "c": f"{c:#x}",
         "d": f"{d:#x}"}
    for key, v in extra.items():
        r[key] = [f"{x:#x}" for x in v] if isinstance(v, list) else v
    return r


def unscaled():
    kinds = {"tf32": "tf32", "bf16": "f16", "f16": "f16"}
    specs = (
        ("tf32", 8, 104, finite_f32, (0xFF800000, 0xFC347E7C)),
        ("bf16", 16, 104, finite_f32, (0x7F800000, 0x7F800000)),
        ("f16", 16, 103, lambda r: r.getrandbits(16), (0x7FFFFFFF, 0x49776BBA)),
        ("e4m3", 32, 104, lambda r: r.randrange(0x7F), (0xEC63D12A, 0x452AF963)),
        ("e5m2", 32, 300, lambda r: r.randrange(0x7C), (0x4D92B09A, 0x4C9C1102)),
        ("e2m3", 32, 301, lambda r: r.randrange(0x40), (0xC29DD800, 0x449D14C1)),
        ("e3m2", 32, 302, lambda r: r.randrange(0x40), (0x52C9EC63, 0xC33B7700)),
        ("e2m1", 32, 303, lambda r: r.randrange(0x10), (0xC1FE0000, 0xDC3B62A3)),
    )
    for fmt, k, seed, element, words in specs:
        rng = random.Random(seed)
        for i, d in enumerate(words):
            a = [element(rng) for _ in range(k)]
            b = [element(rng) for _ in range(k)]
            c = finite_f32(rng)
            if fmt == "bf16":  # the f32 words reach the MMA truncated to bf16
                a, b = [x >> 16 for x in a], [x >> 16 for x in b]
            yield rec(f"{fmt}-random-{i}", RELEASE, kinds.get(fmt, "f8f6f4"), fmt, fmt, "f32",
                      k, a, b, c, d)


def integer():
    specs = (("u8", "u8", False, 500, 0x078A5C64), ("s8", "u8", False, 501, 0xF66E2FA6),
             ("u8", "s8", False, 502, 0xD73F1A46), ("s8", "s8", True, 503, 0x8063D12F),
             ("s8", "s8", False, 504, 0xA4679E93), ("u8", "u8", True, 505, 0x55DB8BB8),
             ("s8", "u8", True, 506, 0xB47F6330), ("u8", "s8", True, 507, 0x8533C14D))
    for at, bt, sat, seed, d in specs:
        rng = random.Random(seed)
        a = [rng.randrange(256) for _ in range(32)]
        b = [rng.randrange(256) for _ in range(32)]
        c = finite_f32(rng)
        yield rec(f"i8-{at}-{bt}-{'sat' if sat else 'wrap'}", RELEASE, "i8", at, bt, "s32", 32,
                  a, b, c, d, saturate=sat)


def nvfp4():
    rng = random.Random(700)
    for i, d in enumerate((0x4429730B, 0xC30545D3)):
        a = [rng.randrange(16) for _ in range(64)]
        b = [rng.randrange(16) for _ in range(64)]
        c = finite_f32(rng)
        sa = [rng.randrange(0x77) for _ in range(4)]
        sb = [rng.randrange(0x77) for _ in range(4)]
        yield rec(f"nvfp4-random-{i}", RELEASE, "mxf4nvf4", "e2m1", "e2m1", "f32", 64, a, b, c,
                  d, scale_type="ue4m3", scale_vec=4, scale_a=sa, scale_b=sb)


def ue8m0():
    rng = random.Random(910)
    a = [rng.randrange(16) for _ in range(32)]
    b = [rng.randrange(16) for _ in range(32)]
    sa, sb = [rng.randrange(115, 140)], [rng.randrange(115, 140)]
    yield rec("mxf8f6f4-e2m1-random", RELEASE, "mxf8f6f4", "e2m1", "e2m1", "f32", 32, a, b, 0,
              0x3F094000, scale_type="ue8m0", scale_vec=1, scale_a=sa, scale_b=sb)
    for kind, vec, seed, d in (("mxf4", 2, 920, 0x46BA8000), ("mxf4nvf4", 2, 921, 0x40580000),
                               ("mxf4nvf4", 4, 922, 0xC6A88896)):
        rng = random.Random(seed)
        a = [rng.randrange(16) for _ in range(64)]
        b = [rng.randrange(16) for _ in range(64)]
        sa = [rng.randrange(115, 140) for _ in range(vec)]
        sb = [rng.randrange(115, 140) for _ in range(vec)]
        yield rec(f"{kind}-{vec}x-random", RELEASE, kind, "e2m1", "e2m1", "f32", 64, a, b, 0, d,
                  scale_type="ue8m0", scale_vec=vec, scale_a=sa, scale_b=sb)


def edges():
    specs = (("tf32", "tf32", 8, 0x3F800000, 0x00002000, 0x7FC00000, 0x7F800000, 0x00002000),
             ("bf16", "f16", 16, 0x3F80, 0x0001, 0x7FC0, 0x7F80, 0x00010000),
             ("f16", "f16", 16, 0x3C00, 0x0001, 0x7E00, 0x7C00, 0x33800000),
             ("e4m3", "f8f6f4", 32, 0x38, 0x01, 0x7F, None, 0x3B000000),
             ("e5m2", "f8f6f4", 32, 0x3C, 0x01, 0x7F, 0x7C, 0x37800000))
    for fmt, kind, k, one, sub, nan, inf, sub_d in specs:
        def case(name, a0, b0, c, d, fmt=fmt, kind=kind, k=k):
            return rec(f"{fmt}-{name}", RELEASE, kind, fmt, fmt, "f32", k,
                       [a0] + [0] * (k - 1), [b0] + [0] * (k - 1), c, d)
        yield case("negative-zero", 0, 0, 0x80000000, 0)
        yield case("minimum-subnormal", sub, one, 0, sub_d)
        yield case("nan", nan, one, 0, 0x7FFFFFFF)
        if inf is not None:
            yield case("infinity", inf, one, 0, 0x7F800000)
            yield case("infinity-times-zero", inf, 0, 0, 0x7FFFFFFF)
    # f32 word 0x7f800001: a NaN only in the bits tf32 drops; it arrives as +Inf
    yield rec("tf32-low-payload-pretruncate", RELEASE, "tf32", "tf32", "tf32", "f32", 8,
              [0x7F800001] + [0] * 7, [0x3F800000] + [0] * 7, 0, 0x7F800000)
    yield rec("bf16-low-payload-pretruncate (f32 0x7f800001 cut to bf16)", RELEASE, "f16", "bf16",
              "bf16", "f32", 16, [0x7F800001 >> 16] + [0] * 15, [0x3F80] + [0] * 15, 0, 0x7F800000)
    yield rec("nvfp4-scale-nan", RELEASE, "mxf4nvf4", "e2m1", "e2m1", "f32", 64, [1] * 64,
              [1] * 64, 0, 0x7FFFFFFF, scale_type="ue4m3", scale_vec=4,
              scale_a=[0x7F, 0x38, 0x38, 0x38], scale_b=[0x38] * 4)
    carry_a = bytes.fromhex(
        "0e 0e 0b 06 00 08 0f 09 0a 0b 03 09 0f 07 0e 00 02 06 01 05 0a 08 06 04 07 0c 06 0b 01 0c 06 0d "
        "0b 0b 08 06 0c 08 0c 05 00 04 01 0f 01 06 0f 05 02 04 06 05 0a 07 0b 07 00 01 0a 0d 0b 0f 0e 07")
    carry_b = bytes.fromhex(
        "06 0c 0b 02 08 09 0b 04 03 0d 02 09 09 0c 01 08 07 02 06 03 0d 02 09 0a 05 09 0f 05 0a 08 06 00 "
        "08 0d 0d 02 0c 0c 05 02 08 03 04 0f 0f 01 01 0a 0b 0a 05 0b 0f 03 0b 0e 0a 05 07 01 01 07 08 0a")
    yield rec("nvfp4-k4-product-carry", RELEASE, "mxf4nvf4", "e2m1", "e2m1", "f32", 64,
              list(carry_a), list(carry_b), 0x094E5986, 0x49FCAFB7, scale_type="ue4m3",
              scale_vec=4, scale_a=[0x09, 0x7C, 0x6D, 0x44], scale_b=[0x07, 0x78, 0x26, 0x79])
    yield rec("mxf8f6f4-scale-nan", RELEASE, "mxf8f6f4", "e2m1", "e2m1", "f32", 32, [1] * 32,
              [1] * 32, 0, 0x7FFFFFFF, scale_type="ue8m0", scale_vec=1, scale_a=[0xFF],
              scale_b=[0x7F])
    yield rec("mixed-e2m1-e4m3-f16-input-nan", RELEASE, "f8f6f4", "e2m1", "e4m3", "f16", 32,
              [1] * 32, [0x7F] + [0] * 31, 0, 0x7FFF)
    yield rec("mixed-e2m1-e4m3-f16-c-nan", RELEASE, "f8f6f4", "e2m1", "e4m3", "f16", 32, [0] * 32,
              [0] * 32, 0x7E00, 0x7FFF)


def pr_vectors():
    yield rec("pr-zero-result-f16 (1+2^-10)2^-5 x (1-2^-10)2^-5 - 2^-10", PR, "f16", "f16", "f16",
              "f16", 16, [0x2801] + [0] * 15, [0x27FE] + [0] * 15, 0x9400, 0x0)
    yield rec("pr-zero-result-bf16 ((1+2^-7)2^-75)^2 - 2^-149", PR, "f16", "bf16", "bf16", "f32", 16,
              [0x1A01] + [0] * 15, [0x1A01] + [0] * 15, 0x80000001, 0x0)
    yield rec("pr-f16-zero-accumulator-anchor-2^-21 (tie)", PR, "f16", "f16", "f16", "f16", 16,
              [0x0E00, 0x0800, 0x8001] + [0] * 13, [0x1000, 0x0C00, 0x0002] + [0] * 13, 0x0, 0x4)
    yield rec("pr-e2m1-subnormal 0.5 x 0.5 - (0.25 - 2^-26)", PR, "f8f6f4", "e2m1", "e2m1", "f32",
              32, [1] + [0] * 31, [1] + [0] * 31, 0xBE7FFFFF, 0x33000000)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    rows = [*unscaled(), *integer(), *nvfp4(), *ue8m0(), *edges(), *pr_vectors()]
    with open(out, "w") as fh:
        fh.write("// tcgen05.mma result words recorded on B200; written by "
                 "make_tcgen05_b200.py (sources in its docstring)\n")
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    print(f"{len(rows)} vectors -> {out}")


if __name__ == "__main__":
    main()
