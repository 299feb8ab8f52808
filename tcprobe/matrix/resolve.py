"""From what a caller names to a :class:`~.pipeline.Problem`: shapes, memory,
formats, scales, the instruction and its model.

One function, :func:`problem`, serves ``tcprobe.matmul`` and ``tcprobe
gemm`` (operands as :class:`~.operands.Operand`); fit-gemm and same_bits
build their problems from a model they already hold.
"""

from __future__ import annotations

import numpy as np

import tcprobe.matrix.choice as choice
import tcprobe.matrix.epilogue as epilogue
from tcprobe.models.formats import get_format
from tcprobe.npyfile import available_memory

from .mainloop import check_backend
from .operands import MatmulError, Operand
from .pipeline import Problem


def check_shapes(a_shape, b_shape) -> tuple[int, int]:
    """(M, N) of A (M, K) @ B (K, N); an error naming B when K differs, and
    naming the size when the product cannot fit in memory (checked before
    anything of that size is made)."""
    (m, k), (k_b, n) = a_shape, b_shape
    if k != k_b:
        raise MatmulError(f"B has {k_b} rows but A has {k} columns (A is {m}x{k}, B {k_b}x{n})")
    if k == 0:  # fill_empty_k makes an empty sum one +0 product where it can be
        raise MatmulError("A has no columns: K must be at least 1 (with block scales)")
    check_memory(m, n, k)
    return m, n


def fill_empty_k(a: Operand, b: Operand) -> tuple[Operand, Operand]:
    """A (M, 0) @ B (0, N), an empty sum, as BLAS has it: one product of +0
    words (K = 1), so the accumulator stays +0 and D is the epilogue's
    alpha*(+0) + beta*C (+ bias) in D's type. The one rule for tcprobe.matmul,
    emulate and gemm (unmeasured on silicon: the words the epilogue gives)."""
    if a.words.ndim == 2 and b.words.ndim == 2 and a.words.shape[1] == 0 == b.words.shape[0]:
        m, n = a.words.shape[0], b.words.shape[1]
        return (a._replace(words=np.zeros((m, 1), a.words.dtype)),
                b._replace(words=np.zeros((1, n), b.words.dtype)))
    return a, b


def bytes_needed(m: int, n: int, k: int) -> int:
    """About the memory a product takes at once: C, D and the partial sums
    (4 bytes a word, a few copies of M x N), the operands padded and decoded
    (about 48 bytes a K element of every row of A and column of B)."""
    return 4 * m * n * 4 + 48 * (m + n) * (-(-k // 64) * 64)


def check_memory(m: int, n: int, k: int) -> None:
    """Refuse a product this machine's memory cannot hold, naming its size."""
    need, have = bytes_needed(m, n, k), available_memory()
    if have is not None and need > have:
        raise MatmulError(f"A ({m}x{k}) @ B ({k}x{n}) makes a {m}x{n} D that takes about "
                          f"{need / 1e9:,.1f} GB of memory, and this machine has "
                          f"{have / 1e9:,.1f} GB available: multiply it in blocks of rows "
                          "(A[i:j] @ B), or on a machine with more memory")


def check_memory_of(A, B) -> None:
    """check_memory from two operands' shapes, before a word is read: a
    broadcast view of a product this machine cannot hold is refused, not
    copied into a MemoryError (tcprobe.matmul and fit_gemm.fit, one rule)."""
    def shape(x):
        try:
            return x.shape
        except (AttributeError, RuntimeError, TypeError):  # a nested tensor has no one
            return None  # shape: the operand gate names it when it reads the words
    sa, sb = shape(A), shape(B)
    if isinstance(sa, tuple) and isinstance(sb, tuple) and len(sa) == 2 and len(sb) == 2:
        check_memory(int(sa[0]), int(sb[1]), int(sa[1]))


def scales(sa: Operand | None, sb: Operand | None, m: int, n: int, k: int):
    """(scale type, block size, scale_a words (M, blocks), scale_b words (N, blocks))
    from the scale operands (None: not block-scaled)."""
    if sa is None and sb is None:
        return None, None, None, None
    if sa is None or sb is None:
        raise MatmulError(f"{'scale_b' if sb is None else 'scale_a'} is missing: "
                          "block-scaled kinds take both")
    if sa.fmt != sb.fmt:
        raise MatmulError(f"scale_b is {sb.fmt} but scale_a is {sa.fmt}")
    if sa.fmt is None:
        raise MatmulError("scale_a: give the scales as float8_e8m0fnu (ue8m0) or "
                          "float8_e4m3fn (ue4m3)")
    if sa.fmt == "ue4m3" and ((sa.words & 0x80).any() or (sb.words & 0x80).any()):
        raise MatmulError("scale_a: a ue4m3 scale has its sign bit set")
    if sa.words.ndim != 2 or sb.words.ndim != 2:
        raise MatmulError("scale_a and scale_b must be 2-D")
    blocks = sa.words.shape[1]
    block = next((bs for bs in (32, 16) if -(-k // bs) == blocks), None)
    if sa.words.shape[0] != m or block is None:
        raise MatmulError(f"scale_a is {tuple(sa.words.shape)}; A ({m}x{k}) takes "
                          f"({m}, {-(-k // 32)}) for blocks of 32 or ({m}, {-(-k // 16)}) of 16")
    if tuple(sb.words.shape) != (blocks, n):
        raise MatmulError(f"scale_b is {tuple(sb.words.shape)} but scale_a's blocks "
                          f"need ({blocks}, {n})")
    return sa.fmt, block, sa.words, np.ascontiguousarray(sb.words.T)


def check_out_type(out: str | None, c_fmt: str | None, what: str = "dtype") -> None:
    """One rule for tcprobe.matmul's dtype= and gemm's --dtype: beside C, the
    output type asked for must be C's (D is written in C's type: the
    epilogue's D = alpha*acc + beta*C, the chain's accumulator); a schedule's
    own output type may differ (an fp8 kernel's D beside a bf16 C)."""
    if out is not None and c_fmt is not None and out != c_fmt:
        raise MatmulError(f"{what}: {out!r} differs from C's dtype ({c_fmt}): D is written in "
                          "C's type (give C in the type D should have, or no dtype)")


def check_fp8_out(gpu: str, out_fmt: str) -> None:
    """An fp8 D in the fp8 family ``gpu`` has: OCP e4m3/e5m2 on NVIDIA, AMD's fnuz
    on MI300X (CDNA3 converts to fnuz only), none on MI100/MI250X (no fp8 at all).
    One gate for matmul's dtype=, the schedule's out and gemm's --dtype."""
    from tcprobe.models import isa_amd

    if out_fmt not in ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"):
        return
    arch = isa_amd.GPU_ARCH.get(gpu.upper())
    if arch is None:
        if out_fmt.endswith("fnuz"):
            raise MatmulError(f"dtype: {out_fmt} is AMD's fp8 (MI300X); {gpu} writes OCP "
                              f"{out_fmt.removesuffix('fnuz')}")
        return
    fnuz = {i.a_type for i in isa_amd.instructions(arch)} & {"e4m3fnuz", "e5m2fnuz"}
    if not fnuz:
        raise MatmulError(f"dtype: {gpu} ({arch}) has no fp8 (no v_mfma or conversion of it): "
                          f"it writes no {out_fmt} D")
    if not out_fmt.endswith("fnuz"):
        raise MatmulError(f"dtype: {gpu}'s fp8 is AMD's fnuz (e4m3fnuz, e5m2fnuz), not OCP's "
                          f"{out_fmt}: give {out_fmt}fnuz")


def problem(a: Operand, b: Operand, c: Operand | None, s, *, gpu, instr=None, out=None,
            model=None, alpha=1, beta=1, bias: Operand | None = None, scale_a=None,
            scale_b=None, fast=None, jobs=None, progress=None, backend=None) -> Problem:
    """The problem of A @ B (+ C) under schedule ``s`` (operands as words;
    ``out`` an output format name or None; alpha, beta numbers), its
    instruction and model resolved: the accumulator is the schedule's
    ``acc``, else f32 (s32 for integers), else, for the chain, C's type."""
    m, n = check_shapes(a.words.shape, b.words.shape)
    k = a.words.shape[1]
    c_fmt = None if c is None else c.fmt
    if c is not None and tuple(c.words.shape) != (m, n):
        raise MatmulError(f"C is {tuple(c.words.shape)} but A @ B is {(m, n)}")
    integer = get_format(a.fmt).kind.name == "INT"
    chain = s.c == "accumulator"
    if out is not None and s.out is not None and out != s.out:
        raise MatmulError(f"dtype: {out!r} differs from the schedule's out ({s.out})")
    base = "s32" if integer else "f32"
    check_out_type(out, c_fmt)
    if chain:
        out_fmt = s.out or out or c_fmt or s.acc or base
        acc = s.acc or out_fmt
    else:
        acc = s.acc or base
        out_fmt = s.out or out or c_fmt or acc
    if integer != (out_fmt == "s32") or (c_fmt is not None and integer != (c_fmt == "s32")):
        who = "C" if c_fmt is not None and integer != (c_fmt == "s32") else "dtype"
        raise MatmulError(f"{who}: {'an integer' if integer else 'a float'} product writes "
                          f"{'s32' if integer else 'a float'}, not "
                          f"{out_fmt if c_fmt is None else c_fmt}")
    if integer:
        al, be = epilogue.s32_scalar(alpha, "alpha"), epilogue.s32_scalar(beta, "beta")
    else:
        al, be = epilogue.f32_word(alpha, "alpha"), epilogue.f32_word(beta, "beta")
    bias_w = None
    if bias is not None:
        if integer != (bias.fmt == "s32"):
            raise MatmulError(f"bias: dtype does not suit {'an integer' if integer else 'a float'} "
                              "product")
        if tuple(bias.words.shape) != (n,):
            raise MatmulError(f"bias is {tuple(bias.words.shape)} but D has {n} columns")
        bias_w = bias.words if integer else epilogue.to_f32(bias.words, bias.fmt)
    gpu = choice.gpu_name(gpu)
    check_fp8_out(gpu, out_fmt)
    scale, block, sa, sb = scales(scale_a, scale_b, m, n, k)
    dp = choice.datapath(gpu, s.instr or instr, a.fmt, b.fmt, acc, scale, block)
    if dp.c != dp.d_type:
        raise MatmulError(f"instr: {dp.id} takes C in {dp.c} but writes D in {dp.d_type}; "
                          "a chain over K needs them equal")
    if dp.block_scaled != (scale is not None):
        raise MatmulError(f"scale_a: {dp.id} {'needs' if dp.block_scaled else 'takes no'} "
                          "block scales")
    mdl = choice.model_for(dp, gpu, model)
    check_backend(backend, mdl)
    return Problem(mdl, a.words, a.fmt, b.words, b.fmt, out_fmt, None if c is None else c.words,
                   c_fmt, al, be, bias_w, sa, sb, fast, jobs, progress, backend=backend)
