"""A library GEMM's schedule as data: :class:`Schedule` and its named presets.

A library kernel is an instruction plus a schedule. The axes, all applied on
top of the instruction models (:mod:`tcprobe.matrix.scheduled` runs them):

* ``instr``: mma, wgmma, tcgen05 or a datapath id (None: the GPU's newest
  family that takes the formats, as ``tcprobe.matmul`` picks it);
  ``acc``: the instruction's accumulator (None: f32, s32 for integers).
* ``k_block``: K elements of one main-loop block (a CTA tile's K), the unit
  that splits and stream-K units are cut in (None: one instruction's K).
* ``k_order``: the instructions of each split in K order (``forward``) or
  last first (``reverse``).
* ``split_k`` and ``split_kind``: S contiguous ranges of K blocks, each
  accumulated from +0; ``split_rule``: how the blocks are shared out:
  ``even`` (as even as possible, :func:`tcprobe.matrix.flow.split_ranges`)
  or ``ceil`` (ceil(blocks / S) blocks a split, the last takes the rest: CUTLASS's
  gemm_k_size; what cuBLAS's split-K kernels on an H200 showed through
  gemm-probe's splits case, e.g. 4096 = 3 x 1408 - 128 for bf16 at
  256x256x4096, reports/silicon/2026-12-04-h200). ``serial`` (CUTLASS serial split-K): split 0 runs the
  epilogue with C, split s > 0 runs it with beta = 1 onto split s-1's D, as
  written in the output type. ``parallel`` (CUTLASS GemmSplitKParallel) and
  ``stream`` (stream-K: ``split_k`` units per tile, a fix-up adding their
  partials): the f32 partials are added in ``reduction`` order (forward:
  P0 + P1 + ...; reverse: the last first), one RNE add each, and the
  epilogue runs once. parallel and stream compute the same words for one
  split: they are one equivalence class.
* ``promote``: an fp8 promotion interval in instructions: the instruction
  accumulates that many instructions from +0 in its own accumulator, which
  is then added into an f32 register (+0 at the start) with one RNE add
  (DeepGEMM). None: never (fast accumulation).
* ``operand_round``: how the kernel turns f32 operand words into the
  instruction's tf32 inputs: None (the words go in as they are; the
  instruction reads their top 19 bits), ``rne`` or ``rna`` (the kernel
  rounds them to tf32 first, as CUTLASS's ``NumericConverter<tfloat32_t,
  float>`` does). Only tf32 operands have it. Measured: torch.matmul on f32
  with TF32 allowed on an H200 (cuBLAS 13.1) rounds RNE
  (reports/silicon/2026-12-04-h200).
* ``c``: where C enters: ``epilogue`` (cuBLAS, CUTLASS: accumulators start
  at +0, D = alpha*acc + beta*C), ``output`` (D = out(out(alpha*acc) +
  beta*C): the product is written in the output type first and C added to
  it in f32 after; measured for torch.addmm with beta = 1 and a 2-D C in
  bf16 and f16 on an H200, torch 2.11, reports/silicon/2026-12-04-h200) or
  ``accumulator`` (C is the first instruction's accumulator: tcprobe's
  chain before schedules, the ``chain`` preset). ``fused``: the epilogue as
  one fma or two rounded products and an add; ``fma_on``: the product the
  fma keeps exact: ``acc``, fma(alpha, acc, beta*C) (CUTLASS
  LinearCombination), or ``c``, fma(beta, C, alpha*acc) (measured for
  cuBLAS's split-K tf32 GEMM on an H200 with alpha 0.5, beta 3,
  reports/silicon/2026-12-04-h200).
* ``out``: the output format (None: C's, else ``out=``, else ``acc``),
  converted RNE from f32, ``saturate`` (fp8 outputs: the largest finite
  value past the range, as cuBLASLt's fp8 outputs and CUTLASS's
  NumericConverter with satfinite; None: saturate for fp8 only).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from tcprobe.models.formats import FormatError, get_format

KINDS = ("serial", "parallel", "stream")
SPLIT_RULES = ("even", "ceil")
ORDERS = ("forward", "reverse")
C_ENTRIES = ("epilogue", "output", "accumulator")
OPERAND_ROUNDINGS = ("rne", "rna")
FMA_ON = ("acc", "c")
OUT_FORMATS = ("f32", "f16", "bf16", "e4m3", "e5m2", "s32")


class ScheduleError(ValueError):
    """A bad schedule; the message starts with ``schedule``."""


@dataclass(frozen=True)
class Schedule:
    """The schedule of a library GEMM (module doc for every axis)."""

    instr: str | None = None
    acc: str | None = None
    k_block: int | None = None
    k_order: str = "forward"
    split_k: int = 1
    split_kind: str = "serial"
    split_rule: str = "even"
    reduction: str = "forward"
    promote: int | None = None
    operand_round: str | None = None
    c: str = "epilogue"
    fused: bool = True
    fma_on: str = "acc"
    out: str | None = None
    saturate: bool | None = None

    def __post_init__(self):
        def bad(what, value, want):
            raise ScheduleError(f"schedule: {what} must be {want}, not {value!r}")
        for name, allowed in (("k_order", ORDERS), ("split_kind", KINDS),
                              ("reduction", ORDERS), ("c", C_ENTRIES), ("fma_on", FMA_ON),
                              ("split_rule", SPLIT_RULES)):
            if getattr(self, name) not in allowed:
                bad(name, getattr(self, name), " or ".join(allowed))
        for name, none_ok in (("k_block", True), ("split_k", False), ("promote", True)):
            v = getattr(self, name)
            if (v is None and not none_ok) or (v is not None and (
                    not isinstance(v, int) or isinstance(v, bool) or v < 1)):
                bad(name, v, "a positive integer" + (" or None" if none_ok else ""))
        for name in ("fused",):
            if not isinstance(getattr(self, name), bool):
                bad(name, getattr(self, name), "true or false")
        if self.operand_round is not None and self.operand_round not in OPERAND_ROUNDINGS:
            bad("operand_round", self.operand_round, "rne, rna or None")
        if self.saturate is not None and not isinstance(self.saturate, bool):
            bad("saturate", self.saturate, "true, false or None")
        for name in ("instr", "acc", "out"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                bad(name, v, "a string or None")
        for name in ("acc", "out"):
            v = getattr(self, name)
            if v is not None:
                try:
                    fmt = get_format(v).name
                except (FormatError, KeyError):
                    fmt = None
                if fmt not in OUT_FORMATS:
                    bad(name, v, " or ".join(OUT_FORMATS))
                object.__setattr__(self, name, fmt)
        if self.c == "accumulator" and (self.k_order != "forward" or self.promote is not None
                                        or self.split_kind != "serial"
                                        or self.operand_round is not None):
            raise ScheduleError("schedule: c='accumulator' (the chain) runs forward, serial, "
                                "without promotion or operand rounding")

    def to_dict(self) -> dict:
        """Every axis, JSON-ready (``from_value`` reads it back)."""
        return asdict(self)

    def with_(self, **axes) -> Schedule:
        return replace(self, **axes)


@dataclass(frozen=True)
class Preset:
    schedule: Schedule
    evidence: str


PRESETS = {
    "cublas": Preset(Schedule(), (
        "C in the epilogue, D = fma(alpha, acc, beta*C) in f32, C unread when beta = 0: "
        "cuBLAS's documented D = alpha*op(A)op(B) + beta*C with 'C need not be valid when "
        "beta is zero', CUTLASS epilogue/thread/linear_combination.h (mul_add_accumulator). "
        "No split-K and forward K order are assumed (heuristics pick split-K per shape; "
        "unmeasured here).")),
    "chain": Preset(Schedule(c="accumulator"), (
        "tcprobe's chain before schedules: C is the first instruction's accumulator, each "
        "instruction's D the next one's C (a CUTLASS main loop run with its accumulators "
        "loaded from C). No library is known to do this for addmm; kept for reproducibility.")),
    "cutlass-splitk-serial": Preset(Schedule(split_k=2, split_kind="serial"), (
        "CUTLASS GemmSplitKSerial / SplitKMode::kSerial: partition k > 0 waits on a semaphore and "
        "runs the epilogue with beta = 1 on the D that partition k-1 wrote "
        "(LinearCombination::set_k_partition). split_k is a parameter; 2 assumed.")),
    "splitk-parallel": Preset(Schedule(split_k=2, split_kind="parallel"), (
        "CUTLASS GemmSplitKParallel: each partition writes f32 partials, ReduceSplitK adds them "
        "in partition order and applies the epilogue once. The order is assumed forward.")),
    "stream-k": Preset(Schedule(split_k=2, split_kind="stream"), (
        "CUTLASS stream-K (sm90 PersistentTileSchedulerSm90StreamK, deterministic fix-up): "
        "the units of a tile add their partials in K order, the last runs the epilogue. Two "
        "units per tile assumed; the real count depends on the grid (unmeasured).")),
    "torch-addmm-beta1": Preset(Schedule(c="output"), (
        "torch.addmm(C, A, B) with beta = 1 and a 2-D C in bf16 or f16 where cuBLAS does not "
        "split K: D = out(out(alpha*acc) + C), the product written in the output type before C "
        "is added. Measured on an H200 (torch 2.11.0+cu130, cuBLAS 13.1) at 64x64x512 (alpha 1 "
        "and 2) and 512x512x2048, every word; with beta = 2 or 3, and where K is split "
        "(256x256x4096, 128x128x16384), the same torch takes the fused cublas epilogue "
        "(reports/silicon/2026-12-04-h200).")),
    "cublas-tf32": Preset(Schedule(operand_round="rne"), (
        "cuBLAS's TF32 GEMM on f32 operands (torch.matmul with allow_tf32): the operands rounded "
        "to tf32 RNE before the instruction, C in the fused epilogue. Measured on an H200 "
        "(reports/silicon/2026-12-04-h200); the split count is the shape's (split_k=8 for "
        "64x64x512 there).")),
    "deepgemm-fp8": Preset(Schedule(instr="wgmma", k_block=128, promote=4), (
        "DeepGEMM fp8_gemm.cuh: every BLOCK_K = 128 (4 wgmma of K = 32) the wgmma accumulator "
        "is added into f32 registers (final_accum += accum) and restarts; the NVIDIA "
        "Transformer Engine note that wgmma fp8 accumulates in fewer than 32 bits.")),
    "fp8-fast-accum": Preset(Schedule(instr="wgmma"), (
        "torch._scaled_mm(use_fast_accum=True) / cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM: the "
        "wgmma accumulator is never promoted.")),
}
DEFAULT = "cublas"  # what a cuBLAS/CUTLASS kernel of every modeled GPU does (module doc)


def from_value(value) -> Schedule:
    """A Schedule from a Schedule, a preset name, a dict of axes (with an
    optional ``preset`` it starts from) or a path of a JSON file holding one
    (a fit-gemm JSON: its first schedule); None is the default preset."""
    if value is None:
        return PRESETS[DEFAULT].schedule
    if isinstance(value, Schedule):
        return value
    if isinstance(value, str):
        if value in PRESETS:
            return PRESETS[value].schedule
        path = Path(value)
        if value.endswith(".json") or path.is_file():
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError) as e:
                raise ScheduleError(f"schedule: cannot read {value}: {e}") from None
            if isinstance(data, dict) and isinstance(data.get("schedules"), list):
                if not data["schedules"]:
                    raise ScheduleError(f"schedule: {value} holds no schedule")
                data = data["schedules"][0]
            return from_value(data)
        raise ScheduleError(f"schedule: {value!r} is no preset ({', '.join(PRESETS)}) "
                            "or JSON file")
    if isinstance(value, dict):
        axes = dict(value)
        base = axes.pop("preset", None)
        start = PRESETS[DEFAULT].schedule if base is None else from_value(base)
        known = {f.name for f in fields(Schedule)}
        extra = sorted(set(axes) - known)
        if extra:
            raise ScheduleError(f"schedule: unknown axis {extra[0]!r} (axes: "
                                f"{', '.join(sorted(known))})")
        return replace(start, **axes)
    raise ScheduleError(f"schedule must be a Schedule, a preset name or a dict, "
                        f"not {type(value).__name__}")
