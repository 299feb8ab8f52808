"""The engine's fast path: the same fused dot product, faster.

:func:`fast_dot` computes exactly what the plain kernel
(:func:`tcprobe.models.engine.fdp_kernel`) computes: both walk the same
blocks through the arithmetic core's steps (``tests/test_fastpath.py``
compares them word for word on random raw cases over many parameter
sets). What changes is speed:

* One kernel is compiled per configuration: its :class:`KernelParams` is a
  compile-time constant, so the scalar decoder and encoder fold to the few
  bit operations the configuration needs. Numba caches each kernel on disk,
  keyed by its constants: only the first run of a configuration compiles.
* Windowed, raw-aligned float configurations (nearly every model) take the
  lane kernel (:mod:`.kernels.lane_kernel`): each block's lanes as explicit vector
  code (:mod:`.kernels.lanes_ir`), the rounding vectorized over chunks of cases;
  the others the core_loop's block loop with the classed decoder.
* The words go in as they are (uint32), with no int64 copies.
* The kernel releases the GIL, and :func:`fast_dot` splits a large batch
  over ``jobs`` threads.

When ``fused_dot`` takes this path by itself, and on how many threads, is
the caller's :class:`Speed`, passed with every call: no state of the flow
lives here.

Only parameters this path was written for take it; a parameter added to
EngineParams later, set away from its default, or a block-scaled datapath
sends the model to the plain kernel (see :func:`supports`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np
from numba import njit

from . import numba_internals
from .formats import Format, convert_input, get_format
from .kernels.core import new_terms
from .kernels.core_loop import case_word, prepare
from .kernels.kernel_params import KernelParams, kernel_params
from .kernels.kernel_stamp import SOURCE_STAMP
from .kernels.lane_decoder import scan_reads_words_as_given, stray_pair, stray_word, word_pairs

# Fields of EngineParams this path implements. A field added later (by a new
# mechanism) sends every model that sets it away from its default to the
# plain kernel, so the fast path can never silently ignore it.
KNOWN_FIELDS = frozenset({
    "window_bits", "block_size", "zero_floor", "input_conversion", "output_rounding",
    "output_frac_bits", "zero_sign", "nan", "overflow", "align", "carry_bits", "carry_top",
    "k_order",
    "c_join", "c_convert", "inter_type", "inter_rounding", "inter_frac_bits", "c_add_rounding",
})
MIN_CASES_PER_JOB = 8192  # below this a batch runs on one thread
# When fused_dot takes this path on its own (Speed.policy 'auto'): a kernel
# costs about 2 s to compile (0.3 s to load from numba's disk cache), the
# plain kernel about 0.5 us a case, so a one-off batch (a fit trying hundreds
# of parameter sets on a few thousand cases) is faster on the plain kernel.
# The count is of the cases a configuration has had in this process, this
# batch's included: a loop of small batches takes the fast path once its
# cases add up (no cliff below the threshold), a one-off small batch never.
AUTO_MIN_CASES = 200_000
POLICIES = ("auto", "always", "never")
# Configurations this process has run on this path (a cache, like the
# kernels': what it holds changes only how fast a word comes, never the word).
_RAN: set = set()
_SUPPORTED: dict = {}  # supports(), per configuration and KNOWN_FIELDS
_SEEN: dict = {}  # cases each configuration has had here on the plain kernel (Speed.worthwhile)


@dataclass(frozen=True)
class Speed:
    """How a batch is evaluated, never what it gives: when fused_dot takes the
    fast path by itself (``policy``: auto: batches of AUTO_MIN_CASES or more,
    or a configuration already run here; always: whenever supported; never)
    and how many threads it splits a batch over (``jobs``)."""

    policy: str = "auto"
    jobs: int = 1

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise ValueError(f"fast-path policy must be auto, always or never, not {self.policy!r}")
        if int(self.jobs) < 1:
            raise ValueError(f"jobs must be at least 1, not {self.jobs}")

    @classmethod
    def threads(cls, jobs: int | None, policy: str = "auto") -> Speed:
        """``jobs`` threads (None or 0: one per core)."""
        return cls(policy, max(1, int(jobs)) if jobs else max(1, os.cpu_count() or 1))

    def worthwhile(self, dp, params, n_cases: int) -> bool:
        """Whether the fast path pays for its compile here: under 'auto', once
        this configuration's cases in this process (these ``n_cases``
        counted) reach AUTO_MIN_CASES, or it ran on a fast path before."""
        if self.policy != "auto":
            return self.policy == "always"
        key = (dp, params)
        if key in _RAN:
            return True
        seen = _SEEN.get(key, 0) + n_cases
        _SEEN[key] = seen
        return seen >= AUTO_MIN_CASES


def remember(dp, params) -> None:
    """Note that this configuration ran on a fast path here (Speed.worthwhile)."""
    _RAN.add((dp, params))


def supports(dp, params) -> bool:
    """Whether the fast path computes this datapath and parameter set (kept
    per configuration and KNOWN_FIELDS: a loop of small batches asks on
    every call)."""
    key = (dp, params, KNOWN_FIELDS)
    known = _SUPPORTED.get(key)
    if known is None:
        known = _SUPPORTED[key] = _supports(dp, params)
    return known


def _supports(dp, params) -> bool:
    if dp.block_scaled:
        return False
    for f in fields(params):
        if f.name not in KNOWN_FIELDS and getattr(params, f.name) != f.default:
            return False
    return True


def _build_kernel(kp: KernelParams):
    """A kernel for one configuration, ``kp`` a compile-time constant, so the
    decoders and the rounding fold to the few bit operations that this
    configuration needs. Numba caches each on disk by its constants."""
    size = kp.block + 2
    a_stray, b_stray = np.uint64(stray_pair(kp.a_spec.width)), np.uint64(stray_pair(kp.b_spec.width))
    c_stray = np.uint64(stray_word(kp.c_spec.width))
    stamp = SOURCE_STAMP

    @njit(cache=True, nogil=True)
    def kernel(a, b, c, order, out, a64, b64):
        """Every case's word into ``out``; returns whether an A, B or C word
        has bits above its format (A and B read as pairs, see word_pairs)."""
        assert len(stamp) > 0  # a constant of the cached kernel (kernel_stamp)
        t = new_terms(size)
        high = np.uint64(0)
        for i in range(a.shape[0]):
            for j in range(a64.shape[1]):
                high |= (a64[i, j] & a_stray) | (b64[i, j] & b_stray)
            high |= np.uint64(c[i]) & c_stray
            out[i] = case_word(a, b, i, np.int64(c[i]), order, kp, t)
        return high != 0

    return kernel


@lru_cache(maxsize=64)
def kernel_for(kp: KernelParams):
    """The compiled kernel of one configuration (built once per process)."""
    return _build_kernel(kp)


def _input_words(words: np.ndarray, fmt: Format, mode: str) -> np.ndarray:
    """A or B words as the kernel reads them: truncation is the table's own
    (it ignores the dropped bits); a rounding conversion is applied first."""
    if fmt.drop_bits and mode != "truncate":
        words = convert_input(words, fmt, mode) & fmt.word_mask
    return np.ascontiguousarray(words, dtype=np.uint32)


def scans_words(dp, cases, p) -> bool:
    """Whether the kernel reads the A, B and C words as the cases give them
    (uint32, no sparse mask, no input or C conversion), so that its scan for
    bits above their formats is the scan Cases.check makes."""
    converted = any(get_format(t).drop_bits and p.input_conversion != "truncate"
                    for t in (dp.a_type, dp.b_type))
    return scan_reads_words_as_given(cases) and not converted and p.c_convert is None


def fast_dot(dp, cases, p, jobs: int = 1, scan_words: bool = False) -> np.ndarray:
    """Output words (uint32): the same as the plain kernel, see the module doc.
    ``scan_words``: raise CasesError for a word with bits above its format
    (the kernel makes that scan as it reads the words where scans_words
    allows, else Cases.check makes it first)."""
    lanes = _lanes_as_given(dp, p, cases.k, numba_internals.kernel_form())
    if lanes is not None and scan_reads_words_as_given(cases):
        # the words as they are, the lane kernel known: no per-call preparation, so a
        # loop of small batches pays a few microseconds a call
        remember(dp, p)
        return _run(lanes, np.ascontiguousarray(cases.a), np.ascontiguousarray(cases.b),
                    np.ascontiguousarray(cases.c), jobs, cases, dp, scan_words)
    if scan_words and not scans_words(dp, cases, p):
        cases.check(dp)
        scan_words = False
    prep = prepare(dp, cases, p, _input_words)
    a_words, b_words, c_words, order = prep.a, prep.b, prep.c, prep.order
    c_words = np.ascontiguousarray(c_words, dtype=np.uint32)  # words below 2**32
    out = np.empty(len(cases), np.uint32)
    remember(dp, p)
    lane_kernel = numba_internals.ir_module("lane_kernel")
    if lane_kernel is not None and lane_kernel.applies(prep.params):
        # the lane kernel reads a block's lanes side by side: K order first
        if prep.params.ordered:
            a_words = np.ascontiguousarray(a_words[:, order])
            b_words = np.ascontiguousarray(b_words[:, order])
        return _run(lane_kernel.kernel_for(prep.params), a_words, b_words, c_words, jobs, cases,
                    dp, scan_words)
    kernel = kernel_for(prep.params)

    def run(lo, hi):
        a, b = a_words[lo:hi], b_words[lo:hi]
        return kernel(a, b, c_words[lo:hi], order, out[lo:hi], *word_pairs(a, b))
    return _split(run, out, jobs, cases, dp, scan_words)


def _run(lanes, a_words, b_words, c_words, jobs, cases, dp, scan_words) -> np.ndarray:
    """The lane kernel over the cases (split over ``jobs`` threads)."""
    out = np.empty(len(c_words), np.uint32)

    def run(lo, hi):
        return lanes(a_words[lo:hi], b_words[lo:hi], c_words[lo:hi], out[lo:hi])
    return _split(run, out, jobs, cases, dp, scan_words)


def _split(run, out, jobs, cases, dp, scan_words) -> np.ndarray:
    """``run(lo, hi)`` over the cases, on one thread or ``jobs``; raises
    CasesError where it found a word above its format and ``scan_words``."""
    n = len(out)
    parts = min(max(1, int(jobs)), max(1, n // MIN_CASES_PER_JOB))
    if parts == 1:
        high = run(0, n)
    else:
        cuts = np.linspace(0, n, parts + 1).astype(int)
        with ThreadPoolExecutor(parts) as pool:
            high = any(pool.map(run, cuts[:-1], cuts[1:]))
    if scan_words and high:
        cases.check(dp)  # raises: a word does not fit its format
    return out


def ready_lane_kernel(dp, p):
    """The lane kernel that reads this configuration's uint32 words as given
    (no preparation), where it has already run in this process, else None:
    what a loop of small batches may call directly (``tcprobe.dot``), with
    the same words and the same scan (the kernel returns True where a word
    has bits above its format)."""
    if (dp, p) not in _RAN:
        return None
    return _lanes_as_given(dp, p, dp.k, numba_internals.kernel_form())


@lru_cache(maxsize=64)
def _lanes_as_given(dp, p, k: int, form: str):
    """The lane kernel of a configuration whose words the kernel reads as
    given (no input or C conversion, the K order 0..K-1), else None; built
    once per configuration and kernel form (``TCPROBE_KERNEL``)."""
    if form != "ir" or not supports(dp, p) or p.c_convert or p.k_order is not None:
        return None
    if any(get_format(t).drop_bits and p.input_conversion != "truncate"
           for t in (dp.a_type, dp.b_type)):
        return None
    lane_kernel = numba_internals.ir_module("lane_kernel")
    kp = kernel_params(dp, p, k)
    return lane_kernel.kernel_for(kp) if lane_kernel.applies(kp) else None
