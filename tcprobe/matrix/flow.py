"""Bit-exact matrix products: ``matmul`` on whole matrices (``dot`` on raw words: :mod:`.words`).

The K order is the one a CUTLASS main loop issues: D starts at C, one
instruction per K tile of the instruction's K, in order, each taking the
previous D as its C. K that is not a multiple of the instruction's K is
padded with +0 words, which is exact: a zero product never sets the
anchor (only nonzero terms do) and adds nothing to the sum, and a block of
zero products passes its C through unchanged (a D word has at most the
window's significant bits above the floor). ``split_k=S`` cuts the K tiles
into S contiguous ranges, each accumulated from +0, and reduces them into C
the way a serial split-K epilogue does: D = C, then D = D + P_s for s = 0,
1, ..., S-1, each add in f32 rounded to nearest even (an f16 C and D are
converted to f32 and back, RNE; integers add modulo 2**32).

Words are computed by the GPU's dot-level model (``tcprobe.models``): by
the compiled GEMM kernel of :mod:`tcprobe.models.gemm`, which decodes each
row of A and column of B once, where it covers the model (the
fixed-point HMMA and tcgen05 datapaths, integers), else by evaluating the
model tile by tile on every (row, column) pair (block-scaled kinds, the fp8
mma.sync emulation, baselines).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable

import numpy as np

import tcprobe.matrix.choice as choice
from tcprobe.models import gemm, sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.fastpath import Speed
from tcprobe.models.formats import Class, convert, decode, get_format
from tcprobe.models.model import Model
from tcprobe.models.structures import ieee_add

from .operands import (
    OUTPUT_FORMATS,
    MatmulError,
    output_format,
    read,
)

CASES_PER_CHUNK = 1 << 21  # (row, column) pairs x K the tile-by-tile path holds at once
Progress = Callable[[int, int], None]


def matmul_words(a, a_fmt: str, b, b_fmt: str, c, d_fmt: str, *, gpu, instr=None, model=None,
                 scale_a=None, scale_b=None, split_k: int = 1, progress: Progress | None = None,
                 fast: bool | None = None, jobs: int | None = None
                 ) -> tuple[np.ndarray, Datapath, Model]:
    """:func:`matmul` on words: A (M, K) of ``a_fmt``, B (K, N) of ``b_fmt``, C
    (M, N) of ``d_fmt``; scales as :class:`~.operands.Operand`. Returns D's
    words, the datapath of one instruction and the model."""
    m, n = check_shapes(a.shape, b.shape)
    k = a.shape[1]
    if c.shape != (m, n):
        raise MatmulError(f"C is {c.shape} but A @ B is {(m, n)}")
    gpu = choice.gpu_name(gpu)
    scale, block, sa, sb = _scales(scale_a, scale_b, m, n, k)
    dp = choice.datapath(gpu, instr, a_fmt, b_fmt, d_fmt, scale, block)
    if dp.c != dp.d_type:
        raise MatmulError(f"instr: {dp.id} takes C in {dp.c} but writes D in {dp.d_type}; "
                         "a chain over K needs them equal")
    if dp.block_scaled != (scale is not None):
        raise MatmulError(f"scale_a: {dp.id} {'needs' if dp.block_scaled else 'takes no'} "
                         "block scales")
    mdl = choice.model_for(dp, gpu, model)
    if not isinstance(split_k, int) or isinstance(split_k, bool) or split_k < 1:
        raise MatmulError(f"split_k must be a positive integer, not {split_k!r}")
    words = product_words(mdl, a, b, c, sa, sb, split_k=split_k, progress=progress, fast=fast,
                          jobs=jobs)
    return words, dp, mdl


def check_shapes(a_shape, b_shape) -> tuple[int, int]:
    """(M, N) of A (M, K) @ B (K, N); ValueError naming B when K differs, and
    naming the size when the product cannot fit in memory (checked before
    anything of that size is made)."""
    (m, k), (k_b, n) = a_shape, b_shape
    if k != k_b:
        raise MatmulError(f"B has {k_b} rows but A has {k} columns (A is {m}x{k}, B {k_b}x{n})")
    if k == 0:
        raise MatmulError("A has no columns: K must be at least 1")
    check_memory(m, n, k)
    return m, n


def bytes_needed(m: int, n: int, k: int) -> int:
    """About the memory a product takes at once: C, D and the partial sums
    (4 bytes a word, a few copies of M x N), the operands padded and decoded
    (about 48 bytes a K element of every row of A and column of B)."""
    return 4 * m * n * 4 + 48 * (m + n) * (-(-k // 64) * 64)


def available_memory() -> int | None:
    """Bytes of memory this machine can give now (MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(m: int, n: int, k: int) -> None:
    """Refuse a product this machine's memory cannot hold, naming its size."""
    need, have = bytes_needed(m, n, k), available_memory()
    if have is not None and need > have:
        raise MatmulError(f"A ({m}x{k}) @ B ({k}x{n}) makes a {m}x{n} D that takes about "
                          f"{need / 1e9:,.1f} GB of memory, and this machine has "
                          f"{have / 1e9:,.1f} GB available: multiply it in blocks of rows "
                          "(A[i:j] @ B), or on a machine with more memory")


def _dtype(dtype, out):
    """``dtype``, or ``out`` (its deprecated spelling, with a warning)."""
    if out is None:
        return dtype
    warnings.warn("matmul(out=...) is deprecated: use dtype=", DeprecationWarning, stacklevel=3)
    if dtype is not None:
        raise MatmulError("dtype: give dtype= or out= (deprecated), not both")
    return out


def _output(C, out, a_fmt: str, shape: tuple[int, int]) -> tuple[str, np.ndarray]:
    """The output format and C's words (+0 words when C is None)."""
    if C is not None:
        c = read(C, "C", OUTPUT_FORMATS)
        if tuple(c.words.shape) != shape:
            raise MatmulError(f"C is {tuple(c.words.shape)} but A @ B is {shape}")
        if out is not None and output_format(out) != c.fmt:
            raise MatmulError(f"dtype: {out!r} differs from C's dtype ({c.fmt})")
        return c.fmt, c.words
    if out is not None:
        fmt = output_format(out)
    else:
        fmt = "s32" if get_format(a_fmt).kind.name == "INT" else "f32"
    return fmt, np.zeros(shape, np.uint32)


def _scales(sa, sb, m: int, n: int, k: int):
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


def _pad(x: np.ndarray, cols: int, fill: int) -> np.ndarray:
    if x.shape[1] == cols:
        return np.ascontiguousarray(x)
    out = np.full((x.shape[0], cols), fill, np.uint32)
    out[:, :x.shape[1]] = x
    return out


def threads(jobs: int | None) -> int:
    """Threads a product runs on: ``jobs``, or numba's thread count (every
    core unless NUMBA_NUM_THREADS or numba.set_num_threads says otherwise)."""
    if jobs is not None:
        if not isinstance(jobs, int) or jobs < 1:
            raise MatmulError(f"jobs must be a positive integer, not {jobs!r}")
        return jobs
    import numba

    return numba.get_num_threads()


def split_ranges(tiles: int, split_k: int) -> list[tuple[int, int]]:
    """``split_k`` contiguous ranges of K tiles, as even as possible: range i
    ends at tile round((i + 1) * tiles / split_k) (Python's round, half to
    even), so lengths differ by at most one and the longer ones fall where
    that rounding puts them (5 tiles in 2: 2 then 3; 7 in 3: 2, 3, 2)."""
    if split_k > tiles:
        raise MatmulError(f"split_k={split_k} but K has only {tiles} instruction tile(s)")
    cuts = [round(i * tiles / split_k) for i in range(split_k + 1)]
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def kept_units(dp: Datapath, marked: np.ndarray, what: str) -> np.ndarray:
    """The (rows, K / per-field) units ``marked`` (rows, K) touches, refused
    (naming ``what``) past the datapath's pattern: 2 of 4, 1 of 2, 2 pairs of 8."""
    width, per_field = sparsity.PATTERNS[sparsity.pattern(dp)]
    rows, k = marked.shape
    units = marked.reshape(rows, k // per_field, per_field).any(axis=2)
    kept = units.reshape(rows, k // width, width // per_field).sum(axis=2)
    if (kept > (1 if width == 2 else 2)).any():
        limit = {4: "2 of every 4", 2: "1 of every 2", 8: "2 pairs of every 8"}[width]
        raise MatmulError(f"{what} is not sparse as {dp.id} needs: it keeps {limit} K positions")
    return units


def active_positions(dp: Datapath, a: np.ndarray) -> np.ndarray:
    """The K positions a sparse A keeps: its nonzero words, checked against the
    datapath's pattern (2 of 4, 1 of 2, or 2 pairs of 8). Which zero
    positions the metadata also selects changes no word (zero products never
    set the anchor), so only the nonzero ones are marked."""
    nonzero = decode(dp.a_type, a).cls != Class.ZERO
    units = kept_units(dp, nonzero, "A")
    per_field = sparsity.PATTERNS[sparsity.pattern(dp)][1]
    return np.repeat(units, per_field, axis=1)


def product_words(mdl: Model, a: np.ndarray, b: np.ndarray, c: np.ndarray, sa=None, sb=None,
                  *, split_k: int = 1, progress: Progress | None = None,
                  fast: bool | None = None, jobs: int | None = None) -> np.ndarray:
    """D words (M, N) of A (M, K) @ B (K, N) + C, every operand as words of
    ``mdl``'s datapath; scales (M, blocks) and (N, blocks) where block-scaled."""
    dp = mdl.datapath
    m, k = a.shape
    speed = Speed(policy="auto", jobs=threads(jobs))
    tiles = -(-k // dp.k)
    if not m or not b.shape[1]:  # an empty D: no instruction runs (split_k still checked)
        split_ranges(tiles, split_k)
        return np.array(c, np.uint32, copy=True)
    kp = tiles * dp.k
    a = _pad(a, kp, 0)
    b_t = _pad(np.ascontiguousarray(b.T), kp, 0)
    b = np.ascontiguousarray(b_t.T)
    if dp.block_scaled:
        one = get_format(dp.scale_type).bias << get_format(dp.scale_type).frac_bits
        per_tile = dp.n_scales
        sa, sb = (_pad(s, tiles * per_tile, one) for s in (sa, sb))
    active = None
    if dp.sparse:
        active = active_positions(dp, a)
        a = np.where(active, a, np.uint32(0)).astype(np.uint32)
    ranges = split_ranges(tiles, split_k)
    total = max(1, tiles * m)
    done = [0]

    def step(units: int) -> None:
        done[0] += units
        if progress is not None:
            progress(done[0], total)

    use_fast = gemm.supports(mdl) if fast is None else bool(fast) and gemm.supports(mdl)
    zero = np.zeros_like(c)
    partials = []
    decoded = None
    if use_fast and not dp.is_integer:
        decoded = gemm.decoders(mdl, a, b, active)
    for lo, hi in ranges:
        start = c if split_k == 1 else zero
        if use_fast:
            partials.append(_fast_chain(mdl, a, b, start, lo, hi, decoded, step, progress,
                                        speed.jobs))
        else:
            partials.append(_tile_chain(mdl, a, b_t, start, sa, sb, active, lo, hi, step,
                                        speed))
    if split_k == 1:
        return partials[0]
    return reduce_split(dp.d_type, c, partials)


def _fast_chain(mdl, a, b, c, lo, hi, decoded, step, progress, jobs: int) -> np.ndarray:
    """The compiled chain over tiles lo..hi, in row chunks when progress is shown."""
    m = a.shape[0]
    rows = max(1, m) if progress is None else max(16, -(-m // 40))
    out = np.empty_like(c)
    for r0 in range(0, m, rows):
        r1 = min(m, r0 + rows)
        part = None
        if decoded is not None:
            part = (tuple(x[r0:r1] for x in decoded[0]), decoded[1])
        out[r0:r1] = gemm.gemm_words(mdl, a[r0:r1], b, c[r0:r1], (lo, hi), part, jobs)
        step((r1 - r0) * (hi - lo))
    return out


def _tile_chain(mdl, a, b_t, c, sa, sb, active, lo, hi, step, speed) -> np.ndarray:
    """The chain over tiles lo..hi by the dot-level model on every (row, column)."""
    dp = mdl.datapath
    m, n = c.shape
    rows = max(1, CASES_PER_CHUNK // max(1, n * dp.k))
    acc = c.copy()
    for t in range(lo, hi):
        ks = slice(t * dp.k, (t + 1) * dp.k)
        ss = slice(t * dp.n_scales, (t + 1) * dp.n_scales) if dp.block_scaled else None
        for r0 in range(0, m, rows):
            r1 = min(m, r0 + rows)
            cases = Cases(
                np.repeat(a[r0:r1, ks], n, axis=0), np.tile(b_t[:, ks], (r1 - r0, 1)),
                acc[r0:r1].ravel(),
                None if ss is None else np.repeat(sa[r0:r1, ss], n, axis=0),
                None if ss is None else np.tile(sb[:, ss], (r1 - r0, 1)),
                None if active is None else np.repeat(active[r0:r1, ks], n, axis=0))
            acc[r0:r1] = mdl.evaluate(cases, speed).reshape(r1 - r0, n)
            step(r1 - r0)
    return acc


def reduce_split(d_type: str, c: np.ndarray, partials: list[np.ndarray]) -> np.ndarray:
    """The serial split-K reduction (module doc): D = C + P_0 + P_1 + ..., in order."""
    fmt = get_format(d_type).name
    if fmt == "s32":
        acc = c.astype(np.int64)
        for p in partials:
            acc = (acc + p.astype(np.int64)) & 0xFFFFFFFF
        return acc.astype(np.uint32)
    to32 = (lambda w: w) if fmt == "f32" else (lambda w: convert(w, fmt, "f32"))  # noqa: E731
    acc = to32(c).ravel()
    for p in partials:
        acc = ieee_add("f32", acc, to32(p).ravel())
    if fmt != "f32":
        acc = convert(acc, "f32", fmt)
    return acc.reshape(c.shape).astype(np.uint32)
