"""``tcprobe.matmul``: the entry point, the arrays read and the pipeline run.

The product runs through :mod:`.pipeline` under a schedule (C in the
epilogue by default; the ``chain`` preset puts C in the first
instruction's accumulator): the same path as ``tcprobe gemm``, fit-gemm,
same_bits and ``tcprobe.torch``.
"""

from __future__ import annotations

import sys
import warnings
from numbers import Integral

from tcprobe.models.formats import get_format
from tcprobe.names import fold

from . import epilogue, pipeline
from .operands import (
    BIAS_FORMATS,
    C_FORMATS,
    INPUT_FORMATS,
    SCALE_FORMATS,
    MatmulError,
    out_name,
    read,
    result_array,
    result_device,
)
from .resolve import check_memory_of, check_shapes, fill_empty_k, problem
from .schedule import from_value, with_split_k

Progress = pipeline.Progress


def agreed_instr(instr, sched):
    """The instruction ``instr=`` and a schedule's ``instr`` axis name
    together (either, or both alike); two different ones are an error."""
    if sched.instr is None:
        return instr
    if instr is not None and fold(instr) != fold(sched.instr):  # any case (tcprobe.names)
        raise MatmulError(f"instr: {instr!r} differs from the schedule's {sched.instr!r}")
    return sched.instr


def check_switches() -> None:
    """TCPROBE_KERNEL and TCPROBE_EPILOGUE read at the door: a misspelt value
    is refused on every product, not only where a path consults it (an AMD
    product never asked TCPROBE_KERNEL, and 'zzz' ran unremarked)."""
    from tcprobe.models import host_ieee, numba_internals

    numba_internals.kernel_form()
    host_ieee.engine_forced()


def matmul(A, B, C=None, *, gpu, instr=None, dtype=None, model=None, schedule=None, alpha=1,
           beta=None, bias=None, scale_a=None, scale_b=None, split_k: int = 1,
           progress: Progress | None = None, fast: bool | None = None, jobs: int | None = None,
           out=None, backend: str | None = None, strict_auto: bool = False):
    """D = alpha * A @ B + beta * C (+ bias), every word as ``gpu``'s library
    kernel computes it: its instruction run by ``schedule``.

    ``A`` (M, K) and ``B`` (K, N): arrays whose dtype names the element
    format (float16, bfloat16, float8_e4m3fn/e5m2, float6_e2m3fn/e3m2fn,
    float4_e2m1fn, float32 for tf32, int8/uint8); numpy arrays or torch
    tensors, on the CPU or a GPU (a GPU's tensors are read exactly and D is
    a tensor on their device). ``C`` (M, N): float32,
    float16, bfloat16 or int32. ``schedule``: a
    :class:`~tcprobe.matrix.schedule.Schedule`, its dict, a preset name or a
    JSON file (None: ``cublas``, C in the epilogue, D = fma(alpha, acc,
    beta*C) in f32, C unread when beta = 0; ``chain`` is tcprobe's chain
    with C as the first instruction's accumulator, alpha = beta = 1).
    ``alpha``, ``beta``: numbers (f32 words; integers for an integer
    product; beta unset: 1 with C, and with no C a nonzero beta is refused:
    it would multiply nothing); ``dtype`` with C must be C's type (D is
    written in it); ``bias`` (N,): one value per column of D, added last. ``dtype``
    names the output when C is None and the schedule names none (float32,
    float16, bfloat16, float8_e4m3fn, float8_e5m2, int32; ``out=`` is its deprecated spelling, with a
    DeprecationWarning). ``instr``: mma,
    wgmma, tcgen05 or a datapath id (default: the GPU's newest family that
    takes the formats). ``model``: a ``--model`` name or a fit/ladder JSON.
    ``scale_a`` (M, K/block) and ``scale_b`` (K/block, N): float8_e8m0fnu
    (ue8m0) or float8_e4m3fn (ue4m3) scale codes of a block-scaled kind.
    ``split_k`` sets the schedule's split count. ``progress(done, total)``
    is called as the work proceeds (None: a progress bar on stderr when it
    is a terminal; False: none); ``fast=False`` forces the tile-by-tile
    path; ``jobs`` threads (None: numba's thread count). ``backend``: where
    the instruction chains run: None or 'cpu' (the engine), 'cuda' (the
    CUDA kernel on torch's GPU; docs/cuda-backend.md: unrun on silicon) or
    'host' (the same kernel source built for this CPU); the same words.
    ``schedule='auto'``: the schedule the GPU's library atlas gives this
    shape (:func:`auto_schedule`: measured, predicted or a default guess;
    ``strict_auto=True`` refuses a guess)."""
    check_switches()
    named = "dtype" if dtype is not None else "out"
    out = _dtype(dtype, out)
    if progress not in (None, False) and not callable(progress):
        raise MatmulError(f"progress must be a callable (done, total), None or False, not "
                          f"{progress!r}")
    from tcprobe.flags import check_flag

    check_flag(fast, "fast", (None,), MatmulError)
    check_flag(strict_auto, "strict_auto", (), MatmulError)
    out_fmt = None
    if out is not None:
        try:
            out_fmt = out_name(out)
        except MatmulError as e:
            raise MatmulError(f"{named}: " + str(e).split(": ", 1)[1]) from None
    auto = is_auto(schedule)
    if strict_auto and not auto:  # as the command line's options.needs: never ignored
        raise MatmulError("strict_auto=True needs schedule='auto' (alone it would be ignored)")
    sched = from_value(None if auto else schedule)
    if split_k != 1 or type(split_k).__name__ in ("bool", "bool_"):  # numpy's bool too, as jobs
        if not isinstance(split_k, Integral) or type(split_k).__name__ in ("bool", "bool_") \
                or split_k < 1:
            raise MatmulError(f"split_k must be a positive integer, not {split_k!r}")
        sched = with_split_k(sched, int(split_k))
    instr = agreed_instr(instr, sched)
    check_memory_of(A, B)  # before a word is read: a huge broadcast view is never copied
    a = read(A, "A", INPUT_FORMATS)
    b = read(B, "B", INPUT_FORMATS)
    k_given = int(a.words.shape[1])
    if scale_a is None and scale_b is None:
        a, b = fill_empty_k(a, b)  # K = 0: +0 accumulators, D from the epilogue alone
    m, n = check_shapes(a.words.shape, b.words.shape)
    c = None if C is None else read(C, "C", C_FORMATS)
    beta = epilogue.beta_given(beta, c is not None, get_format(a.fmt).kind.name == "INT")
    bias_o = None if bias is None else read(bias, "bias", BIAS_FORMATS, ndim=1)
    sa = None if scale_a is None else read(scale_a, "scale_a", SCALE_FORMATS)
    sb = None if scale_b is None else read(scale_b, "scale_b", SCALE_FORMATS)
    device = result_device(a, b, c, bias_o, sa, sb)  # D goes back to the operands' GPU
    if auto:  # the library's schedule for this shape, from the atlas (measured or predicted)
        if split_k != 1:
            raise MatmulError("split_k: schedule='auto' takes the atlas' split; give one or "
                              "the other")
        sched = auto_schedule(gpu, a, b, c, bias_o, beta, strict=strict_auto, k=k_given).schedule
    from tcprobe.compile_notes import announce_compiles, quiet_compiles

    announce_compiles()  # a cold first call says it is compiling (progress=False: silent)
    bar = None
    if progress is None and sys.stderr.isatty():  # a bar on a terminal, none in a pipe
        from tcprobe.console import ProgressBar

        bar = progress = ProgressBar(f"matmul {m}x{n}x{a.words.shape[1]} on {gpu}")
        bar.__enter__()
    try:
        p = problem(a, b, c, sched, gpu=gpu, instr=instr, out=out_fmt, model=model,
                    alpha=alpha, beta=beta, bias=bias_o, scale_a=sa, scale_b=sb, fast=fast,
                    jobs=jobs, progress=progress or None, backend=backend)
        with quiet_compiles(progress is False):
            words = pipeline.run(p, sched)
        return result_array(words, p.out_fmt, a.torch or b.torch, device)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def _dtype(dtype, out):
    """``dtype``, or ``out`` (its deprecated spelling, with a warning)."""
    if out is None:
        return dtype
    warnings.warn("matmul(out=...) is deprecated: use dtype=", DeprecationWarning, stacklevel=3)
    if dtype is not None:
        raise MatmulError("dtype: give dtype= or out= (deprecated), not both")
    return out


def is_auto(schedule) -> bool:
    """Whether ``schedule`` is the name ``auto`` (names.md: in any case, stripped)."""
    from tcprobe.names import fold

    return isinstance(schedule, str) and fold(schedule) == "auto"


def auto_schedule(gpu, a, b, c, bias, beta, strict: bool = False, k: int | None = None):
    """The atlas' :class:`~tcprobe.atlas.Lookup` for this product (operands
    read): its schedule and its provenance (measured here, predicted from the
    atlas, or a default guess, which ``strict`` refuses). An empty product (M,
    N or K = 0) has no arithmetic to schedule: ``exact``, as emulate's. fp8
    operands are the atlas' ``scaled_mm`` (its fp8 kernels). ``k``: K as
    given, where ``a`` and ``b`` hold K = 0 filled (resolve.fill_empty_k)."""
    import tcprobe.atlas as atlas
    from tcprobe.atlas.query import OTHER_FP8
    from tcprobe.atlas.store import FP8

    from .choice import gpu_name

    m, k_read = a.words.shape
    n = b.words.shape[1]
    k = k_read if k is None else k
    if 0 in (m, n, k):  # +0, or the epilogue on C: no split or order to choose
        return atlas.query.empty_product(m, n, k)
    op, form = "gemm", "plain"
    if a.fmt in FP8 + OTHER_FP8:
        op = form = "scaled_mm"
    elif bias is not None:
        form = "bias"
    elif c is not None and not isinstance(beta, bool) and beta == 1 and c.fmt in ("bf16",
                                                                                    "f16"):
        form = "addmm_beta1"
    try:
        if a.fmt != b.fmt:  # mixed A and B (e4m3 x e5m2): no atlas holds one
            axes = atlas.default_axes(gpu_name(gpu), a.fmt, form)
            found = atlas.Lookup(atlas.query.from_value(axes), axes, "default guess",
                                 reason=f"{a.fmt} x {b.fmt}: no atlas holds mixed formats")
        else:
            found = atlas.lookup(gpu_name(gpu), op, a.fmt, m, n, k, form=form)
    except ValueError as e:
        raise MatmulError(f"schedule: auto: {e}") from None
    if strict and found.provenance == "default guess":
        raise MatmulError(f"schedule: auto: {m}x{n}x{k} {a.fmt} on {gpu} has no measured or "
                          f"predicted schedule ({found.reason})")
    return found
