"""A library GEMM's schedule as data: :class:`Schedule` and its named presets.

A library kernel is an instruction plus a schedule. The axes, their values,
defaults, meaning and the pipeline stage that reads each are one table,
:data:`tcprobe.matrix.axes.AXES`; :class:`Schedule` is made from it (its
fields, defaults and checks), and :mod:`tcprobe.matrix.pipeline` runs it.
Rules that tie axes together live here: the chain (``c='accumulator'``,
C as the first instruction's accumulator) runs forward, serial, without
promotion, operand rounding, a reduction order, partials in the output
type or a bias form; explicit ``split_starts`` replace ``split_k`` and
``split_rule``.

Evidence for the measured axes (reports/silicon/2026-12-04-h200): cuBLAS's
split-K kernels on an H200 share blocks out ``ceil`` (4096 = 3 x 1408 - 128
for bf16 at 256x256x4096); torch.matmul on f32 with TF32 allowed rounds the
operands RNE; torch.addmm with beta = 1 and a 2-D bf16/f16 C writes the
product in the output type before adding C (``c='output'``); cuBLAS's
split-K tf32 GEMM with alpha 0.5, beta 3 computes fma(beta, C, alpha*acc)
(``fma_on='c'``); its serial split-K bias GEMM adds the bias in the first
split's epilogue.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, make_dataclass, replace
from pathlib import Path

from tcprobe.jsontext import loads as load_json
from tcprobe.jsontext import read_text
from tcprobe.models.formats import FormatError, get_format
from tcprobe.names import match

from .axes import AXES, BY_NAME, OUT_FORMATS, check

MAX_FILE_BYTES = 64 << 20  # a schedule file is a few kB (a FIFO refused, a BOM read)

KINDS = BY_NAME["split_kind"].choices
SPLIT_RULES = BY_NAME["split_rule"].choices
ORDERS = BY_NAME["k_order"].choices
C_ENTRIES = BY_NAME["c"].choices
OPERAND_ROUNDINGS = BY_NAME["operand_round"].choices
FMA_ON = BY_NAME["fma_on"].choices
__all__ = ["OUT_FORMATS", "PRESETS", "Schedule", "ScheduleError", "from_value"]
_JSON_DEPTH = 64  # nesting a schedule file may have (a deeper one is refused, not recursed)


class ScheduleError(ValueError):
    """A bad schedule; the message starts with ``schedule``."""


def _format_name(value: str) -> str | None:
    try:
        return get_format(value).name
    except (FormatError, KeyError, ValueError):
        return None


# The chain's rule: the axes it must leave at their defaults.
CHAIN_FIXED = ("k_order", "promote", "split_kind", "operand_round", "reduction", "partials",
               "bias_form", "kernel", "stream_units", "k_tail")
# A CUDA-core fma kernel's rule: the axes of the instruction chains it has no use for.
FMA_FIXED = ("k_block", "k_order", "split_k", "split_starts", "promote", "operand_round",
             "stream_units", "k_tail")


def _post_init(self) -> None:
    _check_axes(self, AXES)
    _check_rules(self)


_CHECKED: dict = {}  # (axis, type, value) -> the value checked and normalized
_CHECKED_MAX = 4096


def _check_axes(self, axes) -> None:
    """Each of ``axes`` checked against its row (the value normalized; a
    value checked before is looked up: fit-gemm makes thousands of schedules)."""
    for axis in axes:
        value = getattr(self, axis.name)
        key = (axis.name, type(value), value)
        try:
            got = _CHECKED[key]
        except (KeyError, TypeError):  # not seen, or unhashable (a list of offsets)
            try:
                got = check(axis, value, _format_name)
            except ValueError as e:
                raise ScheduleError(f"schedule: {axis.name} {e}") from None
            if len(_CHECKED) < _CHECKED_MAX and isinstance(key[2], (str, int, type(None))):
                _CHECKED[key] = got
        object.__setattr__(self, axis.name, got)


def _check_rules(self) -> None:
    """The rules that tie axes together (module doc)."""
    if self.c == "accumulator":
        bad = [a for a in CHAIN_FIXED if getattr(self, a) != BY_NAME[a].default]
        if bad:
            raise ScheduleError(f"schedule: c='accumulator' (the chain) runs forward, serial, "
                                f"from C, with no {bad[0]} (it is {getattr(self, bad[0])!r})")
    if self.kernel == "fma":
        bad = [a for a in FMA_FIXED if getattr(self, a) != BY_NAME[a].default]
        if bad:
            raise ScheduleError(f"schedule: kernel='fma' (CUDA-core fma chains) has no {bad[0]} "
                                f"(it is {getattr(self, bad[0])!r}): its order is lanes and "
                                "lane_order")
    elif self.lanes != 1 or self.lane_order != "interleaved":
        raise ScheduleError("schedule: lanes and lane_order are for kernel='fma'")
    if self.stream_units is None:
        for a in ("tile_m", "tile_n", "stream_tiles"):
            if getattr(self, a) is not None:
                raise ScheduleError(f"schedule: {a} is for stream-K: give stream_units too")
    elif self.split_kind != "stream" or self.split_k != 1 or self.split_starts is not None:
        raise ScheduleError("schedule: stream_units needs split_kind='stream' and no split_k "
                            "or split_starts (the units cut K per tile)")
    if self.bias_form == "fma" and (not self.fused or self.fma_on != "acc"):
        raise ScheduleError("schedule: bias_form='fma' is the fused fma(alpha, acc, "
                            "fma(beta, C, bias)): it takes fused=true and fma_on='acc'")
    if self.split_starts is not None and self.split_k != 1:
        raise ScheduleError("schedule: give split_starts or split_k, not both "
                            f"(split_starts {list(self.split_starts)}, split_k {self.split_k})")


def _to_dict(self) -> dict:
    """Every axis, JSON-ready (``from_value`` reads it back)."""
    d = asdict(self)
    if d["split_starts"] is not None:
        d["split_starts"] = list(d["split_starts"])
    return d


def _with(self, **axes):
    """``self`` with ``axes`` set, checked as a new Schedule is: the axes
    given and the rules between axes (the others were checked when ``self``
    was made; fit-gemm makes thousands this way)."""
    if not axes.keys() <= BY_NAME.keys():
        return replace(self, **axes)  # its TypeError names the unknown axis
    old = self.__dict__
    changed = {k: v for k, v in axes.items()  # a value equal to the old one is checked
               if not (type(v) is type(old[k]) and v == old[k])}
    new = object.__new__(type(self))
    new.__dict__.update(old)
    new.__dict__.update(changed)
    _check_axes(new, [a for a in AXES if a.name in changed])
    _check_rules(new)
    return new


def _splits(self) -> int | None:
    """How many partials the plan makes (None: it depends on K only through
    split_k, which says it)."""
    return len(self.split_starts) + 1 if self.split_starts is not None else self.split_k


def with_split_k(sched, split_k: int, option: str = "split_k"):
    """``sched`` with the split count a caller gave beside it (``split_k=``,
    ``--split-k``): a schedule that names another count is an error naming
    both, never silently overridden (as instr= beside the schedule's instr)."""
    if sched.split_k not in (1, split_k):
        raise ScheduleError(f"{option}: {split_k} differs from the schedule's split_k "
                            f"{sched.split_k} (give one or the other)")
    return sched.with_(split_k=split_k)


Schedule = make_dataclass(
    "Schedule", [(a.name, object, field(default=a.default)) for a in AXES], frozen=True,
    namespace={"__post_init__": _post_init, "to_dict": _to_dict, "with_": _with,
               "splits": property(_splits),
               "__doc__": "The schedule of a library GEMM: one field per row of "
                          "tcprobe.matrix.axes.AXES (its meaning there)."})
Schedule.__module__ = __name__


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


def _json_kind(data) -> str:
    kinds = {type(None): "null", bool: "true or false", list: "a list", str: "a string"}
    return kinds.get(type(data), "a number")


def from_value(value, _seen: tuple = ()) -> Schedule:
    """A Schedule from a Schedule, a preset name, a dict of axes (with an
    optional ``preset`` it starts from) or a path of a JSON file holding one
    (a fit-gemm JSON: its first schedule); None is the default preset. A file
    whose ``preset`` leads back to itself, or JSON nested past
    ``_JSON_DEPTH``, is refused."""
    if len(_seen) > _JSON_DEPTH:
        raise ScheduleError(f"schedule: presets nested more than {_JSON_DEPTH} deep")
    if value is None:
        return PRESETS[DEFAULT].schedule
    if isinstance(value, Schedule):
        return value
    if isinstance(value, os.PathLike):  # a pathlib.Path of a JSON file: as its text
        value = os.fspath(value)
        value = value.decode(errors="surrogateescape") if isinstance(value, bytes) else value
    if isinstance(value, str):
        preset = match(value, PRESETS)  # a preset's name in any case (tcprobe.names)
        if preset is not None:
            return PRESETS[preset].schedule
        path = Path(value)
        if value.endswith(".json") or path.is_file():
            key = str(path.resolve())
            if key in _seen:
                raise ScheduleError(f"schedule: {value} names itself as its preset")
            try:
                data = load_json(read_text(path, encoding="utf-8-sig", limit=MAX_FILE_BYTES))
            except RecursionError:
                raise ScheduleError(f"schedule: {value} is JSON nested too deep") from None
            except OSError as e:
                raise ScheduleError(f"schedule: cannot read {value}: {e.strerror or e}") from None
            except ValueError as e:
                raise ScheduleError(f"schedule: cannot read {value}: {e}") from None
            if isinstance(data, dict) and isinstance(data.get("schedules"), list):
                if not data["schedules"]:
                    raise ScheduleError(f"schedule: {value} holds no schedule")
                data = data["schedules"][0]
            if not isinstance(data, dict):  # `null` would be read as the default preset
                raise ScheduleError(f"schedule: {value} holds {_json_kind(data)}, not an object "
                                    "of axes ({\"split_k\": 2, ...}) or a fit-gemm result")
            return from_value(data, (*_seen, key))
        raise ScheduleError(f"schedule: {value!r} is no preset ({', '.join(PRESETS)}) "
                            "or JSON file")
    if isinstance(value, dict):
        axes = dict(value)
        base = axes.pop("preset", None)
        start = PRESETS[DEFAULT].schedule if base is None else from_value(base, (*_seen, "+"))
        known = [a.name for a in AXES]
        extra = sorted(set(axes) - set(known))
        if extra:
            raise ScheduleError(f"schedule: unknown axis {extra[0]!r} (axes: "
                                f"{', '.join(sorted(known))})")
        return replace(start, **axes)
    raise ScheduleError(f"schedule must be a Schedule, a preset name or a dict, "
                        f"not {type(value).__name__}")
