"""The schedule axes as one table: :data:`AXES`.

A library kernel is an instruction plus a schedule. Every axis of a
schedule is one row here, as ``models/engine.PARAMS`` is for the engine:
its name, the values it takes, its default, what it computes, the pipeline
stage that reads it (:mod:`tcprobe.matrix.pipeline`), the mechanism
``same_bits`` names when two set-ups differ in it, and the values
``fit-gemm`` searches. :class:`~tcprobe.matrix.schedule.Schedule` (its
fields, validation and JSON), fit-gemm's search space, same_bits'
mechanisms and the axis table of ``docs/library-gemm.md`` are derived from
this table (``tests/test_pipeline.py`` holds the docs to it).

A new axis is one row here and the stage that reads it.

Stages, in the order a product passes them (:mod:`.pipeline`):

* ``instruction``: which instruction and accumulator run (resolved before
  the product);
* ``operands``: what the kernel does to A and B before the instruction;
* ``plan``: the K ranges of each accumulator chain (:mod:`.plan`);
* ``reduction``: how the chains' partials meet;
* ``epilogue``: alpha, beta, C and bias;
* ``output``: the conversion to the output type.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from tcprobe.names import match

STAGES = ("instruction", "operands", "plan", "reduction", "epilogue", "output")
OUT_FORMATS = ("f32", "f16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "s32")  # fnuz: MI300X
MAX_SEARCHED_SPLIT = 16  # fit-gemm's default split counts: 1..16


@dataclass(frozen=True)
class Axis:
    """One schedule axis (module doc).

    ``kind``: ``choice`` (one of ``choices``), ``count`` (a positive integer),
    ``bool``, ``format`` (a format name of ``choices``), ``name`` (a string),
    ``offsets`` (a tuple of increasing positive integers). ``none_ok``: None
    is allowed (and means what ``meaning`` says). ``search``: the values
    fit-gemm tries (None: the axis is not searched, or set by the search's
    context: the instruction, the output type)."""

    name: str
    kind: str
    default: object
    stage: str
    mechanism: str | None  # None: not an arithmetic difference (same_bits skips it)
    meaning: str
    choices: tuple = ()
    none_ok: bool = False
    search: tuple | None = None


AXES: tuple[Axis, ...] = (
    Axis("instr", "name", None, "instruction", None,
         "mma, wgmma, tcgen05 or a datapath id (None: the GPU's newest family that takes "
         "the formats)", none_ok=True),
    Axis("acc", "format", None, "instruction", "accumulator",
         "the instruction's accumulator (None: f32, s32 for integers; the chain: C's type)",
         choices=OUT_FORMATS, none_ok=True),
    Axis("operand_round", "choice", None, "operands", "operand rounding",
         "f32 operand words rounded to tf32 by the kernel before the instruction (rne, rna; "
         "None: the words go in as they are and the instruction reads their top 19 bits). "
         "tf32 operands only", choices=("rne", "rna"), none_ok=True,
         search=(None, "rne", "rna")),
    Axis("k_block", "count", None, "plan", "split",
         "K elements of one main-loop block (a CTA tile's K), the unit splits are cut in "
         "(None: one instruction's K)", none_ok=True, search=(None, 32, 64, 128, 256)),
    Axis("k_order", "choice", "forward", "plan", "K order",
         "the instructions of each split in K order, or last first",
         choices=("forward", "reverse"), search=("forward", "reverse")),
    Axis("split_k", "count", 1, "plan", "split",
         "S contiguous ranges of K blocks, each accumulated from +0",
         search=tuple(range(1, MAX_SEARCHED_SPLIT + 1))),
    Axis("split_rule", "choice", "even", "plan", "split",
         "how blocks are shared out: as evenly as possible (even), or ceil(blocks/S) each "
         "with the last taking the rest (ceil: CUTLASS's gemm_k_size; cuBLAS on an H200)",
         choices=("even", "ceil"), search=("even", "ceil")),
    Axis("split_starts", "offsets", None, "plan", "split",
         "explicit split starts as K offsets (each a multiple of the block; overrides "
         "split_k and split_rule): what a splits probe reads off D", none_ok=True),
    Axis("k_tail", "choice", "pad", "plan", "K tail",
         "K not a multiple of the block: pad (the tail padded with +0, exact) or drop (where "
         "K is split, only the first K - K % block values are read: the bug some cuBLAS "
         "versions showed, a versioned quirk; unmeasured here)", choices=("pad", "drop"),
         search=("pad", "drop")),
    Axis("tile_m", "count", None, "plan", "tiles",
         "rows of one output tile (with tile_n and stream_units: per-tile plans; None: D is "
         "one tile)", none_ok=True),
    Axis("tile_n", "count", None, "plan", "tiles",
         "columns of one output tile (None: D is one tile)", none_ok=True),
    Axis("raster", "choice", "along_n", "plan", "tiles",
         "the order tiles are numbered in: along N (row by row) or along M",
         choices=("along_n", "along_m"), search=("along_n", "along_m")),
    Axis("stream_units", "count", None, "plan", "split",
         "stream-K: the K blocks of the stream tiles (the last stream_tiles tiles in raster "
         "order) are shared out in order among this many units, the first (total % units) "
         "one block longer (CUTLASS's stream-K scheduler); each tile's partials are the "
         "pieces its units cover, reduced as parallel ones, then one epilogue (None: no "
         "stream-K)", none_ok=True),
    Axis("stream_tiles", "count", None, "plan", "split",
         "stream-K: how many tiles, the last in raster order, run stream-K; the others run "
         "data-parallel, all of K in one unit (None: every tile)", none_ok=True),
    Axis("promote", "count", None, "plan", "promotion",
         "fp8: the instruction accumulates this many instructions from +0, then its "
         "accumulator is added into an f32 register with one RNE add (None: never, fast "
         "accumulation)", none_ok=True, search=(None, 1, 2, 4, 8)),
    Axis("kernel", "choice", "tensor", "instruction", "kernel family",
         "tensor: the instruction chains above; fma: a CUDA-core kernel (cuBLAS's gemv and "
         "small-M kernels): operands widened to f32 exactly, each of `lanes` lanes an f32 "
         "fma chain over its K positions from +0, the lanes then reduced by `reduction`",
         choices=("tensor", "fma")),
    Axis("lanes", "count", 1, "plan", "lane order",
         "fma kernels: the partial sums a dot keeps (K position k goes to lane k % lanes "
         "when lane_order is interleaved, to lane k // ceil(K / lanes) when blocked)",
         search=(1, 2, 4, 8, 16, 32)),
    Axis("lane_order", "choice", "interleaved", "plan", "lane order",
         "fma kernels: how K positions are dealt to lanes", choices=("interleaved", "blocked"),
         search=("interleaved", "blocked")),
    Axis("split_kind", "choice", "serial", "reduction", "split",
         "serial: split s > 0 runs the epilogue with beta = 1 onto split s-1's D, written in "
         "the output type; parallel and stream: the partials meet in the reduction, the "
         "epilogue runs once", choices=("serial", "parallel", "stream"),
         search=("serial", "parallel")),
    Axis("reduction", "choice", "forward", "reduction", "split",
         "the order parallel partials are added, one f32 RNE add each: forward (P0 + P1 + "
         "...), reverse (the last first) or tree (pairwise: (P0 + P1) + (P2 + P3))",
         choices=("forward", "reverse", "tree"), search=("forward", "reverse", "tree")),
    Axis("partials", "choice", "f32", "reduction", "partial type",
         "the type parallel partials are stored in before they are added: f32, or the "
         "output type, each rounded RNE and added in f32 (cuBLASLt REDUCTION_SCHEME "
         "OUTPUT_TYPE; the form is assumed, unmeasured)",
         choices=("f32", "output"), search=("f32", "output")),
    Axis("c", "choice", "epilogue", "epilogue", "epilogue",
         "where C enters: the epilogue (D = alpha*acc + beta*C), the output (D = "
         "out(out(alpha*acc) + beta*C)) or the first instruction's accumulator (the chain)",
         choices=("epilogue", "output", "accumulator"), search=("epilogue", "output")),
    Axis("fused", "bool", True, "epilogue", "epilogue",
         "the epilogue as one fma, or two rounded products and an add", search=(True, False)),
    Axis("fma_on", "choice", "acc", "epilogue", "epilogue",
         "the product the fma keeps exact: fma(alpha, acc, beta*C) (acc, CUTLASS) or "
         "fma(beta, C, alpha*acc) (c, cuBLAS's split-K reduction on an H200)",
         choices=("acc", "c"), search=("acc", "c")),
    Axis("bias_form", "choice", "add", "epilogue", "bias",
         "add: the bias added to the epilogue's rounded D (cuBLASLt's BIAS epilogue, as "
         "measured on an H200); fma: fma(alpha, acc, fma(beta, C, bias)), fma(alpha, acc, "
         "bias) where C is unread (CUTLASS 3's per-row-bias fusion; unmeasured)",
         choices=("add", "fma"), search=("add", "fma")),
    Axis("out", "format", None, "output", None,
         "the output format (None: C's, else dtype=, else acc), converted RNE from f32",
         choices=OUT_FORMATS, none_ok=True),
    Axis("saturate", "bool", None, "output", "epilogue",
         "fp8 outputs: the largest finite value past the range (None: saturate for fp8 only)",
         none_ok=True),
)

BY_NAME = {a.name: a for a in AXES}


def check(axis: Axis, value, normalize) -> object:
    """``value`` checked against ``axis``'s row: the value (formats normalized
    by ``normalize(name) -> format name or None``, offsets as a tuple);
    ValueError("must be ...") naming the allowed values otherwise."""
    def bad():
        return ValueError(f"must be {_want(axis)}, not {value!r}")
    if value is None:
        if axis.none_ok:
            return None
        raise bad()
    k = axis.kind
    if k == "choice":  # a name in any case (tcprobe.names)
        got = match(value, axis.choices)
        ok = got is not None
        value = got if ok else value
    elif k == "count":  # numpy's integers too (np.int64(2) is 2), returned as int
        ok = isinstance(value, Integral) and not isinstance(value, bool) and value >= 1
        value = int(value) if ok else value
    elif k == "bool":
        ok = isinstance(value, bool)
    elif k == "name":
        ok = isinstance(value, str)
    elif k == "format":
        value_fmt = normalize(value) if isinstance(value, str) else None
        if value_fmt not in axis.choices:
            raise bad()
        return value_fmt
    elif k == "offsets":
        seq = tuple(value) if isinstance(value, (list, tuple)) else ()
        if not seq or any(not isinstance(v, Integral) or isinstance(v, bool) or v < 1
                          for v in seq) \
                or any(b <= a for a, b in zip(seq, seq[1:], strict=False)):
            raise bad()
        return tuple(int(v) for v in seq)
    else:
        raise AssertionError(f"axis kind {k!r}")
    if not ok:
        raise bad()
    return value


def _want(axis: Axis) -> str:
    base = {"count": "a positive integer", "bool": "true or false", "name": "a string",
            "offsets": "a list of increasing positive K offsets"}.get(
        axis.kind, " or ".join(str(c) for c in axis.choices))
    return base + (" or None" if axis.none_ok else "")


def docs_table() -> str:
    """The axis table of docs/library-gemm.md, rendered from :data:`AXES`."""
    rows = ["| axis | stage | values | default | what it computes |",
            "| --- | --- | --- | --- | --- |"]
    for a in AXES:
        values = {"count": "positive integer", "bool": "true, false", "name": "string",
                  "offsets": "K offsets"}.get(a.kind, ", ".join(str(c) for c in a.choices))
        if a.none_ok:
            values += ", None"
        rows.append(f"| `{a.name}` | {a.stage} | {values} | {a.default} | {a.meaning} |")
    return "\n".join(rows) + "\n"
