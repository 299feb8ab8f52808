"""tcprobe fit-gemm: which library schedules compute a captured D, word for word."""

from __future__ import annotations

import time
from pathlib import Path

import click

from tcprobe.commands.options import SCALAR, beta_for, json_option, needs
from tcprobe.console import console, write_json
from tcprobe.outfiles import check_out_file, refuse_same_files

# tcprobe.matrix (numba, ml_dtypes) is imported when the command runs, not
# for its --help


def brief(s) -> str:
    """The axes where a schedule differs from the default preset."""
    from tcprobe.matrix.schedule import Schedule

    defaults = Schedule().to_dict()
    d = {k: v for k, v in s.to_dict().items() if v != defaults[k] and k != "out"}
    return ", ".join(f"{k}={v}" for k, v in d.items()) or "default (cublas)"


def read_bounds(splits_path, bounds, fmt: str, d, k: int) -> tuple[int, ...] | None:
    """The split starts --splits (a splits-case D) or --bounds gives, or None."""
    from tcprobe.matrix import split_probe
    from tcprobe.matrix.operands import OUT_NAMES, MatmulError

    from .gemm_run import load
    if splits_path and bounds is not None:
        raise MatmulError("--bounds: give --splits or --bounds, not both")
    if bounds is not None:
        if not bounds.strip():
            raise MatmulError("--bounds: '' names no K offset (write 'none' for one split)")
        if bounds.strip().lower() == "none":
            return ()
        try:
            starts = tuple(sorted({int(x) for x in bounds.split(",")}))
        except ValueError:
            raise MatmulError(f"--bounds: {bounds!r} is not a comma-separated list of K "
                              "offsets") from None
        from tcprobe.matrix.fit_gemm import check_bounds

        return check_bounds(starts, k, "--bounds")
    if not splits_path:
        return None
    probe = load(splits_path, "splits", OUT_NAMES, d.fmt, "--splits (the splits case, in D's format)")
    if probe.words.shape != d.words.shape:
        raise MatmulError(f"--splits: the probe's D is {probe.words.shape}, the capture's "
                          f"{d.words.shape}")
    got = split_probe.read(fmt, probe.words, k)
    if got.unexpected:
        raise MatmulError(f"--splits: {got.unexpected} words of {splits_path} are no split "
                          "probe's (is it gemm-probe's splits case of this shape and format?)")
    uniform = got.uniform()
    if uniform is None:
        raise MatmulError("--splits: the blocks of D split K differently (stream-K?); "
                          "--splits takes one set of split starts: leave it out, and "
                          "fit-gemm's stream-K search reads the tiles from D")
    return uniform


def load_vector(path: str, what: str, fmt: str | None):
    """A 1-D operand (the bias) from a .npy file, read as ``gemm --c`` reads a
    matrix."""
    import numpy as np

    from tcprobe.matrix.operands import C_FORMATS, MatmulError, Operand

    from .gemm_run import array_words
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise MatmulError(f"--{what}: cannot read {path}: {e}") from None
    if not isinstance(arr, np.ndarray) or arr.ndim != 1:
        raise MatmulError(f"--{what}: {path} is not one vector (np.save of a 1-D array)")
    m = array_words(arr[None, :], path, what, C_FORMATS, fmt)
    return Operand(m.words[0], m.fmt, False)


@click.command("fit-gemm")
@click.option("--a", "a_path", required=True, type=click.Path(dir_okay=False), help="A (M, K), .npy.")
@click.option("--b", "b_path", required=True, type=click.Path(dir_okay=False), help="B (K, N), .npy.")
@click.option("--c", "c_path", type=click.Path(dir_okay=False), help="C (M, N), .npy (default: none).")
@click.option("--bias", "bias_path", type=click.Path(dir_okay=False),
              help="The bias (N,), .npy: one value per column, added in the epilogue "
                   "(both forms are searched: added to D, or inside the fma).")
@click.option("--bias-format", help="Format of a raw-word bias file (f32, f16, bf16).")
@click.option("--d", "d_path", required=True, type=click.Path(dir_okay=False),
              help="The captured D (M, N), .npy.")
@click.option("--gpu", required=True, help="GPU that computed D (A100, H100, H200, B200, ...).")
@click.option("--alpha", type=SCALAR, default=1.0, show_default=True, help="The GEMM's alpha.")
@click.option("--beta", type=SCALAR, default=None,
              help="The GEMM's beta (default: 1 with --c, else 0).")
@click.option("--format", "ab_format", help="Format of raw-word A and B files (bf16, e4m3, ...).")
@click.option("--a-format", help="Format of a raw-word A file (overrides --format).")
@click.option("--b-format", help="Format of a raw-word B file (overrides --format).")
@click.option("--c-format", help="Format of a raw-word C file (f32, f16, bf16).")
@click.option("--d-format", "--dtype", "d_format",
              help="Format of a raw-word D file (f32, f16, bf16, e4m3, e5m2; e4m3fnuz, e5m2fnuz on "
                   "MI300X); --dtype is the "
                   "same option, as gemm names D's type.")
@click.option("--splits", "splits_path", type=click.Path(dir_okay=False),
              help="D of gemm-probe's splits case for the same GEMM (.npy): the K offsets "
                   "where the kernel's splits start, read off it, join the search.")
@click.option("--bounds", help="The K offsets where the kernel's splits start, comma-separated "
                               "(as --splits reads them; 'none' for one split).")
@json_option("Write the fit as JSON")
def command(a_path, b_path, c_path, bias_path, bias_format, d_path, gpu, alpha, beta, ab_format,
            a_format, b_format, c_format, d_format, splits_path, bounds, json_path):
    """Find every schedule that explains every word of D (exit 0), or the
    closest ones with their mismatches (exit 1)."""
    from rich.table import Table

    from tcprobe.matrix import fit_gemm
    from tcprobe.matrix.operands import C_FORMATS, INPUT_FORMATS, OUT_NAMES
    from tcprobe.models.formats import describe

    from .gemm_run import format_option, load
    needs((c_format, "--c-format", c_path, "--c FILE"),
          (bias_format, "--bias-format", bias_path, "--bias FILE"))
    refuse_same_files({"--json": json_path}, {"--a": a_path, "--b": b_path, "--c": c_path,
                                              "--bias": bias_path, "--d": d_path,
                                              "--splits": splits_path})
    if json_path and json_path != "-":
        check_out_file(json_path, "--json")  # before the search, not after
    a = load(a_path, "a", INPUT_FORMATS, a_format or ab_format,
             given=format_option("a", a_format, ab_format))
    b = load(b_path, "b", INPUT_FORMATS, b_format or ab_format,
             given=format_option("b", b_format, ab_format))
    c = load(c_path, "c", C_FORMATS, c_format)
    d = load(d_path, "d", OUT_NAMES, d_format)
    bias = None if not bias_path else load_vector(bias_path, "bias", bias_format)
    beta = beta_for(beta, c is not None, 1.0 if c is not None else 0.0)
    starts = read_bounds(splits_path, bounds, a.fmt, d, a.words.shape[1])
    t0 = time.perf_counter()
    f = fit_gemm.fit(a.words, a.fmt, b.words, b.fmt, None if c is None else c.words,
                     None if c is None else c.fmt, d.words, d.fmt, gpu=gpu, alpha=alpha,
                     beta=beta, bounds=starts, bias=None if bias is None else bias.words,
                     bias_fmt=None if bias is None else bias.fmt)
    seconds = time.perf_counter() - t0
    m, k = a.words.shape
    n = b.words.shape[1]
    head = f"{m}x{n}x{k} {a.fmt} x {b.fmt} -> {d.fmt} on {gpu}: {f.searched} schedules, {seconds:.1f} s"
    if f.explained:
        console.print(f"[bold green]explained[/]: {head}; {len(f.schedules)} schedule(s) "
                      "compute every word of D")
    else:
        console.print(f"[bold red]not explained[/]: {head}; the closest leaves "
                      f"{f.mismatches:,} of {f.elements:,} elements different")
    from tcprobe.matrix import choice
    from tcprobe.models import isa_amd

    if choice.gpu_name(gpu) in isa_amd.GPU_ARCH:  # say what the search rests on: no AMD library was measured
        console.print(f"note: no hipBLASLt or rocBLAS call on {choice.gpu_name(gpu)} was ever captured: the "
                      "schedules searched are tcprobe's axes, measured on NVIDIA's libraries; "
                      "a fit names what computes this D, not what AMD's library picks")
    if f.capped:
        console.print(f"note: the stream-K search stopped at {fit_gemm.STREAM_LIMIT:,} "
                      "per-tile plans; larger ones were not tried")
    t = Table()
    t.add_column("schedule")
    t.add_column("mismatches", justify="right")
    rows = [(s, 0) for s in f.schedules] if f.explained else f.closest
    for s, x in rows:
        t.add_row(brief(s), f"{x:,}")
    console.print(t)
    for w in f.worst:
        console.print(f"  row {w['row']}, column {w['column']}: captured "
                      f"{describe(d.fmt, w['captured'])}, model {describe(d.fmt, w['model'])}")
    if json_path:
        write_json(Path(json_path), {
            "explained": f.explained, "schedules": [s.to_dict() for s in f.schedules],
            "mismatches": f.mismatches, "elements": f.elements,
            "closest": [{"schedule": s.to_dict(), "mismatches": x} for s, x in f.closest],
            "worst": f.worst, "searched": f.searched, "capped": f.capped,
            "seconds": round(seconds, 3),
            "gpu": gpu, "m": m, "n": n, "k": k, "alpha": alpha, "beta": beta})
    return 0 if f.explained else 1
