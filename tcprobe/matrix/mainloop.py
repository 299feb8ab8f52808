"""The main loop: instruction chains over ranges of K tiles, operands decoded once.

:class:`MainLoop` prepares a product's operands once (K padded with +0
words, which is exact: a zero product never sets the anchor, since only
nonzero terms do, and adds nothing to the sum; block scales padded with
the scale 1; a sparse A's kept positions) and runs the instruction chain
over any range of K tiles, from any start words, forward or last tile
first: each instruction takes the previous one's D as its C, as a CUTLASS
main loop issues them. Words come from the GPU's dot-level model
(``tcprobe.models``): the compiled GEMM kernel of
:mod:`tcprobe.models.gemm`, which decodes each row of A and column of B
once, where it covers the model (the fixed-point HMMA and tcgen05
datapaths, integers), else the model evaluated tile by tile on every (row,
column) pair (block-scaled kinds, the fp8 mma.sync emulation, baselines).
With ``backend='cuda'`` the chains run as the CUDA kernel of
:mod:`tcprobe.backends.cuda_gemm` on torch CUDA tensors (``'host'``: the same
source built for this machine), for the models that backend computes; any
other model is refused by name, never run elsewhere in silence.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral

import numpy as np

from tcprobe.models import gemm, sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath
from tcprobe.models.fastpath import Speed
from tcprobe.models.formats import Class, decode, get_format
from tcprobe.models.model import Model
from tcprobe.names import match

from .operands import MatmulError

CASES_PER_CHUNK = 1 << 21  # (row, column) pairs x K the tile-by-tile path holds at once
Step = Callable[[int], None]
# (rows x columns x instructions) below which a chain runs on one thread: the
# threads' start costs more than they save (fit-gemm's 8 x 8 passes)
THREADED_WORK = 1 << 16  # called with the (rows x tiles) units just done


def threads(jobs: int | None) -> int:
    """Threads a product runs on: ``jobs``, or numba's thread count (every
    core unless NUMBA_NUM_THREADS or numba.set_num_threads says otherwise)."""
    if jobs is not None:
        if not isinstance(jobs, Integral) or isinstance(jobs, bool | np.bool_) or jobs < 1:
            raise MatmulError(f"jobs must be a positive integer, not {jobs!r}")
        return int(jobs)  # numpy's integers too, as split_k
    import numba

    return numba.get_num_threads()


def pad(x: np.ndarray, cols: int, fill: int) -> np.ndarray:
    """``x`` (rows, k) widened to ``cols`` columns of ``fill`` words."""
    if x.shape[1] == cols:
        return np.ascontiguousarray(x)
    out = np.full((x.shape[0], cols), fill, np.uint32)
    out[:, :x.shape[1]] = x
    return out


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
    datapath's pattern. Where a group holds fewer nonzeros than the pattern
    keeps, the metadata also selects zeros; which ones changes no word while B
    is finite there (zero products never set the anchor), but the model gives
    a selected +0 times an Inf or NaN of B the NaN of a dense product (no
    sparse GPU run has measured it). tcprobe.matmul takes the
    metadata to select no such zero (README: B is never read where A keeps
    no nonzero); ``tcprobe.dot``'s ``active`` mask names the selected
    positions where that matters."""
    nonzero = decode(dp.a_type, a).cls != Class.ZERO
    units = kept_units(dp, nonzero, "A")
    per_field = sparsity.PATTERNS[sparsity.pattern(dp)][1]
    return np.repeat(units, per_field, axis=1)


class MainLoop:
    """Instruction chains of one product over ranges of K tiles (module doc).
    ``a`` (M, K), ``b`` (K, N) words of the datapath's formats; scales (M,
    blocks) and (N, blocks) where block-scaled."""

    def __init__(self, mdl: Model, a, b, sa=None, sb=None, fast: bool | None = None,
                 jobs: int | None = None, backend: str | None = None):
        dp = self.dp = mdl.datapath
        self.mdl = mdl
        self.backend = check_backend(backend, mdl)
        self.m, k = a.shape
        self.n = b.shape[1]
        self.speed = Speed(policy="auto", jobs=threads(jobs))
        self.tiles = -(-k // dp.k)
        kp = self.tiles * dp.k
        a = pad(a, kp, 0)
        self.b_t = pad(np.ascontiguousarray(b.T), kp, 0)
        b = np.ascontiguousarray(self.b_t.T)
        if dp.block_scaled:
            one = get_format(dp.scale_type).bias << get_format(dp.scale_type).frac_bits
            sa, sb = (pad(s, self.tiles * dp.n_scales, one) for s in (sa, sb))
        self.active = None
        if dp.sparse:
            self.active = active_positions(dp, a)
            a = np.where(self.active, a, np.uint32(0)).astype(np.uint32)
        self.a, self.b, self.sa, self.sb = a, b, sa, sb
        self.fast = gemm.supports(mdl) if fast is None else bool(fast) and gemm.supports(mdl)
        self.decoded = None
        if self.backend is not None:
            self.fast = False
            self._device = _to_device(self.backend, a, b, sa, sb, self.active)
        if self.fast and not dp.is_integer and self.m and self.n:
            self.decoded = gemm.decoders(mdl, a, b, self.active)
        self._rev = None

    def run(self, start: np.ndarray | None, lo: int, hi: int, reverse: bool = False,
            step: Step | None = None, rows: int | None = None) -> np.ndarray:
        """D words (M, N) of the chain over tiles lo..hi-1 (last first where
        ``reverse``) from ``start`` words of the accumulator (None: +0);
        ``step(units)`` after every ``rows`` rows (None: all at once)."""
        acc = np.zeros((self.m, self.n), np.uint32) if start is None else start
        if hi <= lo or not self.m or not self.n:
            return np.array(acc, np.uint32, copy=True)
        if reverse:  # tiles hi-1, ..., lo are tiles T-hi .. T-lo-1 of the reversed operands
            return self.reversed().run(start, self.tiles - hi, self.tiles - lo, False, step, rows)
        step = step or (lambda _units: None)
        if self.backend is not None:
            return self._backend_chain(acc, lo, hi, step)
        if self.fast:
            return self._fast_chain(acc, lo, hi, step, rows or self.m)
        return self._tile_chain(acc, lo, hi, step)

    def _fast_chain(self, c, lo, hi, step: Step, rows: int) -> np.ndarray:
        """The compiled chain over tiles lo..hi, ``rows`` rows at a time."""
        out = np.empty_like(c)
        for r0 in range(0, self.m, rows):
            r1 = min(self.m, r0 + rows)
            part = None
            if self.decoded is not None:
                part = (tuple(x[r0:r1] for x in self.decoded[0]), self.decoded[1])
            jobs = self.speed.jobs if (r1 - r0) * self.n * (hi - lo) >= THREADED_WORK else 1
            out[r0:r1] = gemm.gemm_words(self.mdl, self.a[r0:r1], self.b, c[r0:r1], (lo, hi),
                                         part, jobs)
            step((r1 - r0) * (hi - lo))
        return out

    def _backend_chain(self, c, lo, hi, step: Step) -> np.ndarray:
        """The chain over tiles lo..hi on the CUDA backend (or its host build)."""
        from tcprobe.backends import cuda_gemm

        a, b, sa, sb, active = self._device
        if self.backend == "host":
            out = cuda_gemm.gemm_words_cuda(self.mdl, a, b, np.ascontiguousarray(c), lo, hi,
                                            sa=sa, sb=sb, active=active, jobs=self.speed.jobs)
        else:
            import torch

            cc = torch.from_numpy(np.ascontiguousarray(c).view(np.int32)).to(a.device)
            out = cuda_gemm.gemm_words_cuda(self.mdl, a, b, cc, lo, hi, sa=sa, sb=sb,
                                            active=active).cpu().numpy().view(np.uint32)
        step(self.m * (hi - lo))
        return out

    def _tile_chain(self, c, lo, hi, step: Step) -> np.ndarray:
        """The chain over tiles lo..hi by the dot-level model on every (row, column)."""
        dp, m, n = self.dp, self.m, self.n
        rows = max(1, CASES_PER_CHUNK // max(1, n * dp.k))
        acc = c.copy()
        for t in range(lo, hi):
            ks = slice(t * dp.k, (t + 1) * dp.k)
            ss = slice(t * dp.n_scales, (t + 1) * dp.n_scales) if dp.block_scaled else None
            for r0 in range(0, m, rows):
                r1 = min(m, r0 + rows)
                cases = Cases(
                    np.repeat(self.a[r0:r1, ks], n, axis=0), np.tile(self.b_t[:, ks], (r1 - r0, 1)),
                    acc[r0:r1].ravel(),
                    None if ss is None else np.repeat(self.sa[r0:r1, ss], n, axis=0),
                    None if ss is None else np.tile(self.sb[:, ss], (r1 - r0, 1)),
                    None if self.active is None else np.repeat(self.active[r0:r1, ks], n, axis=0))
                acc[r0:r1] = self.mdl.evaluate(cases, self.speed).reshape(r1 - r0, n)
                step(r1 - r0)
        return acc

    def reversed(self) -> MainLoop:
        """The same product with its K tiles in reverse order (each tile's own K
        order kept), so a reversed chain runs as one forward chain."""
        if self._rev is None:
            rev = object.__new__(MainLoop)
            rev.__dict__.update(self.__dict__)
            k, t = self.dp.k, self.tiles

            def cols(x, per):  # (rows, tiles * per) with the tile blocks reversed
                return None if x is None else np.ascontiguousarray(
                    x.reshape(x.shape[0], t, per)[:, ::-1].reshape(x.shape[0], t * per))
            rev.a, rev.b_t = cols(self.a, k), cols(self.b_t, k)
            rev.b = np.ascontiguousarray(rev.b_t.T)
            rev.active = cols(self.active, k)
            if self.dp.block_scaled:
                rev.sa = cols(self.sa, self.dp.n_scales)
                rev.sb = cols(self.sb, self.dp.n_scales)
            if self.decoded is not None:
                rev.decoded = gemm.decoders(self.mdl, rev.a, rev.b, rev.active)
            if self.backend is not None:
                rev._device = _to_device(self.backend, rev.a, rev.b, rev.sa, rev.sb,
                                         rev.active)
            rev._rev, self._rev = self, rev
        return self._rev


BACKENDS = (None, "cpu", "cuda", "host")


def check_backend_name(backend, error=ValueError) -> str | None:
    """``backend`` as one of BACKENDS (a name in any case: tcprobe.names), or ``error``."""
    got = None if backend is None else match(backend, BACKENDS[1:])
    if backend is not None and got is None:
        raise error(f"backend must be cpu, cuda or host, not {backend!r}")
    return got


def check_backend(backend, mdl: Model) -> str | None:
    """``backend`` checked: None or 'cpu' (the engine here), 'cuda' (the CUDA
    kernel on torch's GPU) or 'host' (the same CUDA source built for this
    machine), refused by name where the backend does not compute the model."""
    backend = check_backend_name(backend, MatmulError)
    if backend in (None, "cpu"):
        return None
    from tcprobe.backends import cuda_gemm

    ok, why = cuda_gemm.supports(mdl)
    if not ok:
        raise MatmulError(f"backend: the CUDA backend does not compute {mdl.name}: {why}")
    if backend == "cuda":
        try:
            import torch
        except ImportError:
            raise MatmulError("backend: 'cuda' runs on torch CUDA tensors, and torch is not "
                              "installed") from None
        if not torch.cuda.is_available():
            raise MatmulError("backend: 'cuda' needs a CUDA GPU, and torch sees none "
                              "('host' runs the same kernel source on this CPU)")
    return backend


def _to_device(backend: str, a: np.ndarray, b: np.ndarray, sa=None, sb=None, active=None):
    """A, B, the block scales and sparse A's kept positions (None where there
    are none) where the backend reads them: numpy arrays, or torch CUDA tensors."""
    words = [None if x is None else np.ascontiguousarray(x, np.uint32) for x in (a, b, sa, sb)]
    act = None if active is None else np.ascontiguousarray(active, np.uint8)
    if backend == "host":
        return (*words, act)
    import torch

    return (*(None if x is None else torch.from_numpy(x.view(np.int32)).cuda() for x in words),
            None if act is None else torch.from_numpy(act).cuda())
