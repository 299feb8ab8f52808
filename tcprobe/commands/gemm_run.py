"""The work of ``tcprobe gemm`` (tcprobe/commands/gemm.py holds its options), imported when it runs."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from rich.table import Table
from rich.text import Text

from tcprobe import npyfile
from tcprobe.commands.options import beta_for, needs
from tcprobe.console import ProgressBar, console, send_output_to_stderr, write_json
from tcprobe.matrix import compare, epilogue, pipeline, same_bits
from tcprobe.matrix.entry import auto_schedule, is_auto
from tcprobe.matrix.operands import (
    C_FORMATS,
    INPUT_FORMATS,
    SCALE_FORMATS,
    MatmulError,
    Operand,
    out_name,
    read,
    result_array,
)
from tcprobe.matrix.resolve import (
    check_memory,
    check_out_type,
    check_shapes,
    fill_empty_k,
    problem,
)
from tcprobe.matrix.schedule import from_value, with_split_k
from tcprobe.models.formats import FormatError, describe, get_format
from tcprobe.names import fold
from tcprobe.outfiles import atomic_file, check_out_file, refuse_same_files

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def load(path: str | None, what: str, table: dict, fmt: str | None,
         fmt_option: str | None = None, given: str | None = None) -> Operand | None:
    """An operand from a .npy file. np.save drops ml_dtypes' names (a bfloat16
    array comes back as 2-byte voids), so ``fmt`` names the format of raw
    words (void or unsigned arrays); ``fmt_option``: the option that gave it
    (default ``--WHAT-format``), named in its errors; ``given``: the option the
    user typed where it is not ``--WHAT-format`` (``--format``, shared by A and B)."""
    if path is None:
        return None
    npyfile.check(path, f"--{what}")  # a header claiming 10^10 words is refused unread
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise MatmulError(f"--{what}: cannot read {path}: {e}") from None
    if not isinstance(arr, np.ndarray):  # an .npz archive (np.savez) holds several arrays
        close = getattr(arr, "close", None)
        if close:
            close()
        raise MatmulError(f"--{what}: {path} is an .npz archive of arrays, not one .npy array: "
                          "save the matrix alone (np.save)")
    return array_words(arr, path, what, table, fmt, fmt_option, given)


def format_option(what: str, own: str | None, shared: str | None) -> str | None:
    """The option that gave operand ``what``'s format: its own (``--a-format``) or
    the shared ``--format``; None where neither was given."""
    return f"--{what}-format" if own else "--format" if shared else None


def array_words(arr: np.ndarray, path: str, what: str, table: dict, fmt: str | None,
                fmt_option: str | None = None, given: str | None = None) -> Operand:
    """The operand of an array read from ``path`` (:func:`load`'s rules)."""
    if not arr.dtype.isnative:  # saved in the other byte order: the same words, made native
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if fmt:
        option = fmt_option or given or f"--{what}-format"
        if arr.dtype.kind not in "Vu" and arr.dtype.name not in table:
            raise MatmulError(f"{option}: {path} holds {arr.dtype}, not raw words")
        try:
            name = get_format(fmt).name
        except FormatError as e:
            raise MatmulError(f"{option}: {e}") from None
        named = table.get(arr.dtype.name) if arr.dtype.kind not in "Vu" else None
        if named is not None and get_format(named).name != name:  # never re-read as another
            if fmt_option:  # a format the command chose (D's, for --splits)
                raise MatmulError(f"{option}: {path} holds {arr.dtype} ({named}) values, not "
                                  f"{name}")
            raise MatmulError(f"{option} {fmt}: {path} holds {arr.dtype} ({named}) values, "
                              "not raw words: leave the format out, or save the raw words")
        width = get_format(name).width
        if arr.dtype.itemsize not in _UNSIGNED:
            raise MatmulError(f"--{what}: {path} holds {arr.dtype.itemsize}-byte elements")
        words = np.ascontiguousarray(arr).view(_UNSIGNED[arr.dtype.itemsize]).astype(np.uint32)
        if arr.ndim != 2:
            raise MatmulError(f"--{what}: {path} is not a matrix (shape {arr.shape})")
        if words.size and int(words.max()) >> width:
            raise MatmulError(f"--{what}: a word of {path} does not fit {name}")
        return Operand(words, name, False)
    if arr.dtype.kind == "V":
        give = (f"--format (bf16, e4m3, ...; --{what}-format for this file alone)"
                if what in ("a", "b") else "--scale-format (ue8m0, ue4m3)"
                if what.startswith("scale") else f"--{what}-format (bf16, ...)")
        raise MatmulError(f"--{what}: {path} holds {arr.dtype.itemsize}-byte words without a "
                         f"dtype name (np.save drops ml_dtypes' names): give {give}")
    return read(arr, f"--{what}", table)


def run(a_path, b_path, random_shape, seed, c_path, gpu, instr, model, out_path, out_type, ab_format, a_format,
        b_format, c_format, sa_path, sb_path, scale_format, split_k, schedule, alpha, beta, compare_gpu,
        compare_instr, compare_schedule, compare_model, verdict_seconds, exact, picture_path,
        json_path):
    """``tcprobe gemm`` with its options (module doc)."""
    gpu, compare_gpu = (g.strip() if isinstance(g, str) else g for g in (gpu, compare_gpu))
    if picture_path and not compare_gpu:
        raise MatmulError("--picture draws where two products differ: give --compare GPU too")
    needs((compare_instr, "--compare-instr", compare_gpu, "--compare GPU"),
          (compare_schedule, "--compare-schedule", compare_gpu, "--compare GPU"),
          (compare_model, "--compare-model", compare_gpu, "--compare GPU"),
          (verdict_seconds is not None, "--verdict-seconds", compare_gpu, "--compare GPU"),
          (a_format, "--a-format", a_path, "--a FILE (--m/--n/--k draw --format)"),
          (b_format, "--b-format", b_path, "--b FILE (--m/--n/--k draw --format)"),
          (c_format, "--c-format", c_path, "--c FILE"),
          (scale_format, "--scale-format", sa_path or sb_path, "--scale-a or --scale-b"))
    if out_path == "-" and json_path == "-":
        raise MatmulError("--out - and --json - both ask for stdout: send one of them to a file")
    refuse_same_files({"--out": out_path, "--json": json_path, "--picture": picture_path},
                      {"--a": a_path, "--b": b_path, "--c": c_path, "--scale-a": sa_path,
                       "--scale-b": sb_path})
    if out_path == "-":
        send_output_to_stderr(True)  # stdout carries the .npy
    elif out_path:
        check_out_file(out_path, "--out")  # before the product, not after
    if json_path and json_path != "-":
        check_out_file(json_path, "--json")
    if picture_path:
        check_out_file(picture_path, "--picture")
    if random_shape is not None:
        if a_path or b_path:
            drawn = getattr(random_shape, "option", "--random")
            raise MatmulError(f"{drawn}: give {drawn} or --a and --b, not both")
        a, b = random_operands(random_shape, ab_format, seed)
    else:
        if not a_path or not b_path:
            raise MatmulError("--a: give --a and --b (.npy files), or --m, --n and --k (random "
                              "operands)")
        a = load(a_path, "a", INPUT_FORMATS, a_format or ab_format,
                 given=format_option("a", a_format, ab_format))
        b = load(b_path, "b", INPUT_FORMATS, b_format or ab_format,
                 given=format_option("b", b_format, ab_format))
    k_given = int(a.words.shape[1])  # the report's K (0 stays 0)
    if sa_path is None and sb_path is None:
        a, b = fill_empty_k(a, b)  # K = 0: tcprobe.matmul's empty sum, one rule
    m, n = check_shapes(a.words.shape, b.words.shape)
    if split_k != 1 and split_k < 1:
        raise MatmulError(f"--split-k must be a positive integer, not {split_k}")
    if split_k != 1 and is_auto(schedule):
        raise MatmulError("--split-k: --schedule auto takes the atlas' split; give one or the "
                          "other")
    c = load(c_path, "c", C_FORMATS, c_format)
    integer = get_format(a.fmt).kind.name == "INT"
    given, beta = beta, 1.0 if beta is None else beta
    if integer:
        alpha, beta = _integer(alpha, "alpha"), _integer(beta, "beta")
    else:  # refused before the product, not after it
        epilogue.f32_word(alpha, "--alpha"), epilogue.f32_word(beta, "--beta")
    beta = beta_for(None if given is None else beta, c is not None, beta, integer)
    out_fmt = None
    if out_type:
        try:  # the output types tcprobe.matmul's dtype= takes: one gate for both
            out_fmt = out_name(out_type)
        except MatmulError as e:
            raise MatmulError("--" + str(e)) from None
        check_out_type(out_fmt, None if c is None else c.fmt, "--dtype")
    scales = "--scale-format"  # one option for both scale files (there is no --scale-a-format)
    sa = load(sa_path, "scale-a", SCALE_FORMATS, scale_format, given=scales)
    sb = load(sb_path, "scale-b", SCALE_FORMATS, scale_format, given=scales)

    def schedule_of(g, name, option):
        """(schedule, where it comes from) of one side (--schedule auto: the atlas)."""
        if is_auto(name):
            found = auto_schedule(g, a, b, c, None, beta, k=k_given)
            return found.schedule, found.describe()
        sch = _schedule(name, option)
        if split_k != 1:
            sch = with_split_k(sch, split_k, "--split-k")
        if name is not None:
            return sch, "given"
        from tcprobe.matrix import choice
        from tcprobe.models import isa_amd

        name = choice.gpu_name(g)
        library = "hipBLASLt" if name in isa_amd.GPU_ARCH else "cuBLAS"
        return sch, (f"default (the cublas preset, no split, whatever {name}'s {library} picks "
                     "for this shape; --schedule auto asks the GPU's library atlas)")
    sched, origin = schedule_of(gpu, schedule, "--schedule")
    runs = [(gpu, instr, sched, model, origin)]
    if compare_gpu:
        other, other_origin = schedule_of(
            compare_gpu, schedule if compare_schedule is None else compare_schedule,
            "--schedule" if compare_schedule is None else "--compare-schedule")
        runs.append((compare_gpu, compare_instr, other, compare_model, other_origin))
    if out_fmt in ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"):  # the fp8 family of each GPU
        from tcprobe.matrix import choice
        from tcprobe.matrix.resolve import check_fp8_out

        for g, *_ in runs:
            try:
                check_fp8_out(choice.gpu_name(g), out_fmt)
            except MatmulError as e:
                raise MatmulError("--" + str(e)) from None
    report = {"m": m, "n": n, "k": k_given, "products": []}
    words = []
    for g, ins, sch, mdl_name, origin in runs:
        if sch.instr is not None and ins is not None and ins != sch.instr:
            raise MatmulError(f"--instr: {ins!r} differs from the schedule's {sch.instr!r} "
                              "(leave --instr out, or choose another --schedule)")
        t0 = time.perf_counter()
        with ProgressBar(f"{g}") as bar:
            p = problem(a, b, c, sch, gpu=g, instr=ins, out=out_fmt, model=mdl_name,
                        alpha=alpha, beta=beta, scale_a=sa, scale_b=sb, progress=bar)
            d = pipeline.run(p, sch)
        dp, mdl, d_type = p.dp, p.mdl, p.out_fmt
        words.append(d)
        report["products"].append({"gpu": g, "datapath": dp.id, "model": mdl.name,
                                   "schedule": sch.to_dict(), "provenance": origin,
                                   "seconds": round(time.perf_counter() - t0, 3)})
        console.print(f"{g}: {dp.id} ({mdl.name}), {m}x{n}x{report['k']}, "
                      f"{time.perf_counter() - t0:.2f} s; schedule {origin}")
    c_words = np.zeros((m, n), np.uint32) if c is None else c.words
    c_fmt = d_type if c is None else c.fmt
    floats = get_format(d_type).kind.name != "INT"
    scale = (compare.product_scale(a.words, a.fmt, b.words, b.fmt, c_words, c_fmt)
             if floats and (compare_gpu or exact) and sa is None else None)
    if out_path == "-":
        np.save(sys.stdout.buffer, result_array(words[0], d_type, False))
        sys.stdout.buffer.flush()
    elif out_path:
        with atomic_file(out_path) as fh:  # renamed into place: a link there is replaced
            np.save(fh, result_array(words[0], d_type, False))
        console.print(f"wrote {out_path} ({d_type})")
    if compare_gpu:
        diff = compare.difference(d_type, words[1], words[0])
        if scale is not None:
            diff["relative"] = compare.relative_error(d_type, words[1], words[0], scale)
        report["compare"] = diff
        _show_difference(f"{compare_gpu} vs {gpu}", diff, d_type, compare_gpu, gpu)
        levels = compare.difference_levels(d_type, words[1], words[0])
        if diff["differ"]:
            _show_map(levels, m, n)
        if picture_path:
            from tcprobe.matrix import picture

            with atomic_file(picture_path) as fh:
                fh.write(picture.png(levels))
            console.print(f"wrote {picture_path} ({picture.LEGEND})", markup=False)
        report["same_bits"] = _same_bits(runs, a, b, c, c_words, d_type, alpha, beta, words,
                                         sa is not None,
                                         10.0 if verdict_seconds is None else verdict_seconds)
    if exact:
        if sa is not None:
            raise MatmulError("--exact: the exact product of block-scaled kinds is not modeled here")
        if alpha != 1 or (c is not None and beta != 1):
            raise MatmulError("--exact: the exact product is A @ B + C: give --alpha 1 and "
                              "--beta 1")
        if c_fmt != d_type:  # C in the output's format, exactly (every float fits f32)
            if d_type != "f32":
                raise MatmulError(f"--exact: C in {c_fmt} is not the {d_type} output's format")
            c_words = epilogue.to_f32(c_words, c_fmt)
        with ProgressBar("exact") as bar:
            want = compare.exact_words(a.words, a.fmt, b.words, b.fmt, c_words, d_type, bar)
        report["exact"] = {}
        for (g, *_), d in zip(runs, words, strict=True):
            diff = compare.difference(d_type, d, want)
            if scale is not None:
                diff["relative"] = compare.relative_error(d_type, d, want, scale)
            report["exact"][g] = diff
            _show_difference(f"{g} vs the exact product (rounded once, RNE)", diff, d_type, g,
                             "exact")
    if json_path:
        write_json(Path(json_path), report)


RANDOM_FORMATS = {"bf16": "bfloat16", "f16": "float16", "tf32": "float32",
                  "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
                  "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz"}  # fnuz: MI300X's fp8


def random_operands(shape: str, fmt: str | None, seed: int) -> tuple[Operand, Operand]:
    """--m/--n/--k (or --random MxNxK): A and B of standard normal values in
    ``fmt`` (RNE from f32), drawn from ``seed``; errors name the options typed."""
    import ml_dtypes

    drawn = getattr(shape, "option", "--random")

    try:
        m, n, k = (int(x) for x in shape.lower().split("x"))
    except ValueError:
        raise MatmulError(f"--random: {shape!r} is not MxNxK (e.g. 1024x1024x1024)") from None
    if min(m, n, k) < 0:  # 0 is an empty product (exact), as a file of that shape
        raise MatmulError(f"{drawn}: {shape!r} needs M, N and K of at least 0")
    if fmt is None:
        raise MatmulError(f"{drawn} needs --format ({', '.join(RANDOM_FORMATS)}): the format "
                          "of the operands it draws")
    fmt = fold(fmt)  # any case (tcprobe.names)
    if fmt not in RANDOM_FORMATS:
        raise MatmulError(f"--format: {drawn} draws {', '.join(RANDOM_FORMATS)} operands, "
                          f"not {fmt!r}")
    check_memory(m, n, k)  # before anything of that size is made (K = 0: filled as a file's)
    rng = np.random.default_rng(seed)
    name = RANDOM_FORMATS[fmt]
    dt = getattr(ml_dtypes, name, None) or np.dtype(name)
    a = rng.standard_normal((m, k), np.float32).astype(dt)
    b = rng.standard_normal((k, n), np.float32).astype(dt)
    return read(a, "A", INPUT_FORMATS), read(b, "B", INPUT_FORMATS)


def _show_map(levels, m: int, n: int) -> None:
    """Where the two products differ, as a picture: D in blocks, each the
    largest |difference| inside it, as a character (coloured on a terminal)."""
    blocks = compare.block_max(levels, 16, 48)
    shades = compare.MAP_SHADES + compare.MAP_NAN
    styles = ("", "yellow", "dark_orange", "orange_red1", "red", "bold red", "bold blue")
    console.print(f"where they differ ({m}x{n} D in {blocks.shape[0]}x{blocks.shape[1]} blocks; "
                  "the largest |difference| in a block: ' ' none, '.' 1 ulp, ':' 2, '-' 3-4, "
                  "'=' 5-16, '#' more, 'N' NaN on one side):", markup=False)
    for row in blocks:
        line = Text("  |")
        for v in row:
            line.append(shades[v], style=styles[v] or None)
        line.append("|")
        console.print(line, highlight=False)


def _schedule(value: str | None, option: str):
    """The schedule ``option`` names; a JSON file nested past Python's
    recursion limit, or one whose ``preset`` names itself, is bad input."""
    from tcprobe.matrix.schedule import ScheduleError

    try:
        return from_value(value)
    except ScheduleError as e:  # named by the option that gave it
        raise MatmulError(f"{option}: {str(e).removeprefix('schedule: ')}") from None
    except RecursionError:
        raise MatmulError(f"{option}: {value} nests too deep, or names itself as its preset "
                          "(directly or through other files)") from None


def _integer(x: float, what: str) -> int:
    """--alpha or --beta of an integer product: an integer that fits s32."""
    if not math.isfinite(x) or x != int(x):
        raise MatmulError(f"--{what} must be an integer for an integer product, not {x}")
    try:
        return epilogue.s32_scalar(int(x), what)
    except MatmulError as e:
        raise MatmulError(f"--{e}") from None


def _same_bits(runs, a, b, c, c_words, d_type, alpha, beta, words, scaled, seconds) -> dict:
    """The verdict of the two configurations (tcprobe.matrix.same_bits), and
    which mechanism explains each element this run shows apart."""
    (g1, i1, s1, m1, _), (g2, i2, s2, m2, _) = runs
    first = same_bits.Config(g1, i1, s1, m1)
    second = same_bits.Config(g2, i2, s2, m2)
    c_fmt = None if c is None else c.fmt
    if scaled:
        console.print("[bold]same bits?[/] not judged for block-scaled products")
        return {"identical": None, "mechanisms": []}
    v = same_bits.verdict(first, second, a.fmt, b.fmt, c_fmt, d_type, alpha, beta, seconds)
    out = {"identical": v.identical, "mechanisms": [m.text() for m in v.mechanisms],
           "searched": v.searched}
    if v.identical:
        console.print("[bold]same bits?[/] yes, on every input: " + (
            v.why or "the two agree on every parameter of the arithmetic"))
        return out
    console.print(f"[bold]same bits?[/] they differ in: "
                  f"{'; '.join(m.text() for m in v.mechanisms)}")
    if v.counterexample is not None:
        ce = v.counterexample
        fmt = get_format(d_type)
        terms = ", ".join(f"k={k}: {describe(a.fmt, x)} x {describe(b.fmt, y)}"
                          for k, x, y in ce["terms"])
        c_text = "" if ce["c_word"] is None else f"; C = {describe(c_fmt, ce['c_word'])}"
        console.print(f"  smallest counterexample found: M = N = 1, K = {ce['k']}: {terms}"
                      f"{c_text} -> {g1} {describe(fmt, ce['first'])}, {g2} "
                      f"{describe(fmt, ce['second'])} (explained by "
                      f"{', '.join(v.explained_by) or 'several mechanisms together'})")
        out["counterexample"] = {"k": ce["k"], "terms": ce["terms"], "c": ce["c_word"],
                                 "first": ce["first"], "second": ce["second"],
                                 "explained_by": v.explained_by}
    elif v.identical is None:
        console.print(f"  no counterexample in {v.searched} generated products: not proven "
                      "either way")
    # the elements that differ as the difference counts them (two NaNs of any payload alike)
    n_differ = int(compare.words_differ(d_type, words[0], words[1]).sum())
    if n_differ and v.mechanisms:
        counts = same_bits.explain_run(first, second, a.words, a.fmt, b.words, b.fmt,
                                       c_words if c is not None else None, c_fmt, d_type, alpha,
                                       beta, words[0], words[1])
        out["attribution"] = counts
        together = counts.pop("several together")
        parts = [f"{name} alone explains {k:,}" for name, k in counts.items() if k]
        if together:
            parts.append(f"{together:,} need several together")
        console.print(f"  in this run, of the {n_differ:,} elements that differ: "
                      f"{'; '.join(parts)}")
        counts["several together"] = together
    return out


def _show_difference(title: str, diff: dict, d_type: str, got: str, want: str) -> None:
    """The heading, the histogram of differences and the worst element."""
    console.print(f"[bold]{title}[/]: {diff['differ']:,} of {diff['elements']:,} elements differ")
    if not diff["differ"]:
        return
    t = Table()
    t.add_column("|difference| (ulps)")
    t.add_column("elements", justify="right")
    for name, count in diff["histogram"].items():
        if count:
            t.add_row(name, f"{count:,}")
    if diff["nan_mismatch"]:
        t.add_row("NaN on one side only", f"{diff['nan_mismatch']:,}")
    w = diff["worst"]
    fmt = get_format(d_type)
    console.print(t)
    if w is not None:
        console.print(f"largest in ulps at row {w['row']}, column {w['column']}: {got} "
                      f"{describe(fmt, w['got'])}, {want} {describe(fmt, w['want'])} "
                      f"({_ulps(w['ulps'], w['got'], w['want'])})")
    rel = diff.get("relative")
    if rel is not None:
        console.print(f"error relative to |A||B| + |C|: componentwise {rel['componentwise']:.3e}, "
                      f"normwise {rel['normwise']:.3e}")
        rw = rel["worst"]
        if rw is not None:
            console.print(f"largest relative to |A||B| + |C| at row {rw['row']}, column "
                          f"{rw['column']}: {got} {describe(fmt, rw['got'])}, {want} "
                          f"{describe(fmt, rw['want'])} ({rw['relative']:.3e}; "
                          f"{_ulps(rw['ulps'], rw['got'], rw['want'])})")


def _ulps(ulps, got: int, want: int) -> str:
    """A distance in ulps as printed; words that differ by 0 ulps are zeros
    of opposite signs."""
    if ulps is None:
        return "NaN"
    if ulps == 0 and got != want:
        return "+0 and -0"
    return f"{ulps:+,} ulps"
