"""tcprobe gemm: multiply two matrices from .npy files (or drawn: --m, --n, --k) as a
GPU's tensor cores do.

The options live here and the work in :mod:`.gemm_run`, imported when the
command runs, so that ``tcprobe gemm --help`` starts without numba."""

from __future__ import annotations

import math

import click

from tcprobe.commands.options import (
    SCALAR,
    SEED,
    Instr,
    Names,
    json_option,
    named_path,
    renamed_option,
)


def _finite(v: float | None, option: str) -> float | None:
    if v is not None and not math.isfinite(v):
        raise click.BadParameter(f"{v} is not a number of seconds")
    return v


@click.command("gemm")
@click.option("--a", "a_path", type=click.Path(dir_okay=False),
              help="A (M, K) as .npy; its dtype names the format (float32 is tf32).")
@click.option("--b", "b_path", type=click.Path(dir_okay=False),
              help="B (K, N) as .npy.")
@click.option("--m", "m", type=click.IntRange(min=0),
              help="M, with --n and --k instead of --a and --b: random normal A (M, K) and B "
                   "(K, N) in --format (bf16, f16, tf32, e4m3, e5m2; e4m3fnuz, e5m2fnuz on "
                   "MI300X), drawn from --seed. --random MxNxK, the older spelling, still works.")
@click.option("--n", "n", type=click.IntRange(min=0), help="N, the columns of D (with --m, --k).")
@click.option("--k", "k", type=click.IntRange(min=0), help="K, the reduction length (with --m, "
                                                          "--n).")
@click.option("--random", "random_shape", metavar="MxNxK", hidden=True,
              help="--m M --n N --k K as one value (the older spelling).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the random operands of --m/--n/--k.")
@click.option("--c", "c_path", type=click.Path(dir_okay=False),
              help="C (M, N) as .npy: float32, float16, int32, or bf16 words with --c-format bf16 "
                   "(default +0).")
@click.option("--gpu", required=True, help="GPU whose tensor cores compute (V100, A100, H100, B200, ...).")
@click.option("--instr", type=Instr(), help="mma, wgmma, tcgen05 or a datapath id (default: what a CUDA "
                              "library issues on that GPU).")
@click.option("--model", help="Model instead of the GPU's profile (a --model name or a fit/ladder JSON).")
@click.option("--out", "out_path", callback=named_path, type=click.Path(dir_okay=False, allow_dash=True),
              help="Write D here (.npy; - writes the .npy to stdout, the tables to stderr).")
@renamed_option("--dtype", "--out-type", "out_type", "Output type when there is no C: f32, f16, bf16, e4m3, e5m2 or s32 (as tcprobe.matmul's dtype=).")
@click.option("--format", "ab_format", help="Format of raw-word A and B files (np.save drops "
                                            "ml_dtypes' names): bf16, e4m3, e2m1, ...")
@click.option("--a-format", help="Format of a raw-word A file (overrides --format).")
@click.option("--b-format", help="Format of a raw-word B file (overrides --format).")
@click.option("--c-format", help="Format of a raw-word C file (bf16: np.save drops its name; "
                                 "float32, float16 and int32 arrays need none), as fit-gemm's.")
@click.option("--scale-a", "sa_path", type=click.Path(dir_okay=False), help="Scales of A (M, K/block).")
@click.option("--scale-b", "sb_path", type=click.Path(dir_okay=False), help="Scales of B (K/block, N).")
@click.option("--scale-format", type=Names(["ue8m0", "ue4m3"]),
              help="Format of raw-word scale files.")
@click.option("--split-k", type=int, default=1, show_default=True,
              help="Split K into this many ranges (the schedule's split_k).")
@click.option("--schedule", help="Library schedule: a preset (cublas, chain, stream-k, "
                                 "deepgemm-fp8, ...), a JSON file (a fit-gemm --json result) "
                                 "or auto (the GPU's library atlas for this shape).")
@click.option("--alpha", type=SCALAR, default=1.0, show_default=True, help="D = alpha*A@B + beta*C.")
@click.option("--beta", type=SCALAR, help="D = alpha*A@B + beta*C (with --c; default 1).")
@click.option("--compare", "compare_gpu", help="Also compute on this GPU, show how D differs and "
                                               "whether the two give the same bits on every input.")
@click.option("--compare-instr", type=Instr(), help="Instruction on the --compare GPU (default: its library's).")
@click.option("--compare-schedule", help="Schedule on the --compare side (default: --schedule's).")
@click.option("--compare-model", help="Model on the --compare side (default: its GPU's profile).")
@click.option("--verdict-seconds", type=click.FloatRange(0, 3600),
              callback=lambda ctx, p, v: _finite(v, "--verdict-seconds"),
              help="With --compare: how long the same-bits search may look for a "
                   "counterexample.  [default: 10]")
@click.option("--exact", is_flag=True, help="Show each product's error against the exact one.")
@click.option("--picture", "picture_path", callback=named_path,
              type=click.Path(dir_okay=False),
              help="With --compare: draw where the two D differ, and by how many ulps, as a "
                   "PNG here (one pixel an element, or a block of a large D).")
@json_option("Write the figures as JSON")
def command(a_path, b_path, m, n, k, random_shape, seed, c_path, gpu, instr, model, out_path, out_type, ab_format, a_format,
            b_format, c_format, sa_path, sb_path, scale_format, split_k, schedule, alpha, beta, compare_gpu,
            compare_instr, compare_schedule, compare_model, verdict_seconds, exact, picture_path,
            json_path):
    """Multiply A @ B + C as GPU's library kernel computes it, every word.

    The instruction runs one K tile after another (K padded with zeros, which
    is exact) under the schedule: by default cuBLAS's, C in the f32 epilogue
    (``--schedule chain``: C as the first instruction's accumulator)."""
    options = dict(locals())
    from .gemm_run import run

    options.update(random_shape=_shape(options.pop("m"), options.pop("n"), options.pop("k"),
                                       random_shape))
    return run(**options)


def _shape(m, n, k, random_shape):
    """The shape of the drawn operands, as --m/--n/--k give it (all three) or
    --random MxNxK (its older spelling), which names itself in its errors."""
    dims = {"--m": m, "--n": n, "--k": k}
    if all(v is None for v in dims.values()):
        return random_shape
    if random_shape is not None:
        raise click.UsageError("give --m/--n/--k or --random MxNxK (their older spelling), "
                               "not both")
    missing = [o for o, v in dims.items() if v is None]
    if missing:
        raise click.UsageError(f"{', '.join(missing)}: --m, --n and --k give the drawn "
                               "operands' shape together (give all three)")
    return DrawnShape(m, n, k)


class DrawnShape(str):
    """--m/--n/--k as the MxNxK text --random takes, naming the options typed."""

    option = "--m/--n/--k"

    def __new__(cls, m, n, k):
        return super().__new__(cls, f"{m}x{n}x{k}")
