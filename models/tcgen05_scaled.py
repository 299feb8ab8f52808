"""The block-scaled tcgen05 accumulator (kind::mxf8f6f4, mxf4, mxf4nvf4).

One parameterized mechanism, in integer arithmetic only (tcgen05 write-up,
section "Block-scaled"; ../shared/notes/tcgen05-published-parameters.md):

1. Specials first: a NaN element or scale (ue8m0 0xff, ue4m3 0x7f) gives the
   canonical NaN; Inf x 0 and +Inf + -Inf give NaN; otherwise an infinite
   product or C gives that infinity.
2. Each product folds the scales in exactly: significand
   a * b * scale_a * scale_b, exponent the sum of the four; its raw exponent
   R_k is the sum of the four raw exponents and its scale exponent S_k the
   sum of the two scale raw exponents (scale_a by A's K block, scale_b by B's).
3. With R and S the largest R_k and S_k over nonzero products, the quantum is
   q = max(R - product_window, raw(C) - c_window [C nonzero],
           S - scale_window, q_floor), each term only where set.
4. Products are summed exactly in aligned groups of ``product_group`` and each
   group sum is cut toward zero to q (1: every product on its own). With
   ``per_group_c_merge`` a group that C outranks (raw(C) >= the group's
   largest R_k) is first cut to raw(C) - c_merge_bits.
5. C-dominant merge (``c_dominant``): when a nonzero C's raw exponent reaches
   R, q = raw(C) - c_merge_bits and the exact sums of the aligned
   ``merge_group`` blocks are each cut to q instead.
6. The group floor (``group_floor``): when the f32 result is a nonzero
   subnormal, groups whose scale exponent is below S and whose cut value is
   smaller than 2**group_floor are dropped and the sum is formed again.
7. The units are summed exactly and converted to f32 by truncation; an exact
   zero is +0. With no nonzero product the result is C (its sign of zero set
   by ``zero_c``).

The kernels (the plain one and the compiled-per-configuration fast path)
are in :mod:`.kernels.scaled_kernel`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from tcprobe.models.cases import Cases

from . import fastpath, kernel_cache, numba_internals
from .formats import get_format
from .kernels.kernel_params import OVERFLOWS
from .kernels.lane_decoder import scan_reads_words_as_given, word_pairs
from .kernels.scaled_kernel import fast_applies, fast_kernel, kernel_params, scaled_kernel
from .model import Model, ModelError

SMALL_RANGE = ("e2m1",)  # element formats whose exact group sums fit an int64


@dataclass(frozen=True)
class ScaledParams:
    """Every knob of the block-scaled accumulator, named (see the module doc)."""

    product_window: int | None = 25  # R - F
    c_window: int | None = 25  # raw(C) - F_c (None: C does not set the quantum)
    scale_window: int | None = None  # S - offset: the scale-anchored floor
    q_floor: int | None = None  # the quantum is never below this
    product_group: int = 1  # K positions summed exactly before the cut
    c_dominant: bool = False  # the C-dominant merge of step 5
    merge_group: int = 16  # K positions of one C-dominant merge block
    c_merge_bits: int = 35  # window below raw(C) of the C-relative cuts
    per_group_c_merge: bool = False  # step 4's C-relative cut of outranked groups
    group_floor: int | None = None  # step 6 (-174 for the MXF4 family)
    zero_c: str = "positive"  # positive: all products zero and C = -0 gives +0 | keep
    overflow: str = "inf"  # a finite sum past f32: inf | saturate | ieee

    def replace(self, **changes) -> ScaledParams:
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------
# The model.


@dataclass
class BlockScaledModel(Model):
    """tcgen05 block-scaled MMA with one set of :class:`ScaledParams`."""

    params: ScaledParams = ScaledParams()

    def __post_init__(self):
        dp = self.datapath
        if not dp.block_scaled:
            raise ModelError(f"{dp.id} is not block-scaled")
        if get_format(dp.c).name != "f32" or get_format(dp.d_type).name != "f32":
            raise ModelError(f"{dp.id}: block-scaled tcgen05 kinds accumulate into f32")
        p = self.params
        sizes = [(p.product_group, "product_group")]
        if p.c_dominant:
            sizes.append((p.merge_group, "merge_group"))
        for size, what in sizes:
            if size > 1 and (dp.a_type not in SMALL_RANGE or dp.b_type not in SMALL_RANGE):
                raise ModelError(f"{what} > 1 needs e2m1 elements (exact group sums in int64)")
            if size > 1 and dp.scale_block % size:
                raise ModelError(f"{what} {size} straddles the {dp.scale_block}-wide scale blocks")
        if p.zero_c not in ("positive", "keep"):
            raise ModelError(f"zero_c must be positive or keep, not {p.zero_c!r}")
        if p.overflow not in OVERFLOWS:
            raise ModelError(f"overflow must be one of {', '.join(OVERFLOWS)}")

    def evaluate(self, cases: Cases, speed: fastpath.Speed | None = None) -> np.ndarray:
        """Result words (uint32); ``speed`` decides, as for the engine, when
        the compiled-per-configuration fast kernel runs (the same words)."""
        dp = self.datapath
        kernel_cache.working_on(dp.id)
        kp = kernel_params(dp, self.params)
        speed = speed or fastpath.Speed()
        fast = fast_applies(kp) and speed.worthwhile(dp, self.params, len(cases))
        # the fast kernel scans the words for bits above their formats as it
        # reads them (the words as given: lane_decoder.scan_reads_words_as_given)
        scan = fast and scan_reads_words_as_given(cases)
        cases.check(dp, words=not scan)
        a, b = cases.masked()
        if fast:
            fastpath.remember(dp, self.params)
            words = lambda x: np.ascontiguousarray(x, dtype=np.uint32)  # noqa: E731
            a, b = words(a), words(b)
            out = np.empty(len(cases), np.uint32)
            c, sa, sb = words(cases.c), words(cases.scale_a), words(cases.scale_b)
            scaled_groups = numba_internals.ir_module("scaled_groups")
            if scaled_groups is not None and scaled_groups.applies(kp):
                high = scaled_groups.kernel_for(kp)(a, b, c, sa, sb, out)
            else:
                high = fast_kernel(kp)(a, b, c, sa, sb, out, *word_pairs(a, b))
            if high:
                cases.check(dp)  # raises: a word does not fit its format
            return out
        out = np.empty(len(cases), np.int64)
        scaled_kernel(
            np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64),
            np.asarray(cases.c, np.int64),
            np.ascontiguousarray(cases.scale_a, dtype=np.int64),
            np.ascontiguousarray(cases.scale_b, dtype=np.int64), kp, out)
        return out.astype(np.uint32)

    def describe(self) -> dict:
        return {**super().describe(), "params": self.params.as_dict()}

