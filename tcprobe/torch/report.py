"""What an :func:`~tcprobe.torch.emulate` block did: per-op counts, shapes,
schedules and their provenance, time, differences, and every op it left to torch."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OpStats:
    """One aten op's tally: calls routed to tcprobe and run as torch would
    (fallback), the (A, B) shapes seen, the schedule of each GEMM shape with
    its provenance (``gemms``), seconds in tcprobe, and with ``compare`` the
    largest difference from torch's own CPU result."""

    routed: int = 0
    fallback: int = 0
    shapes: list = field(default_factory=list)
    seconds: float = 0.0
    max_ulp: int = 0  # in the output format, over every routed call
    max_rel: float = 0.0  # |ours - torch's| / (|A| @ |B|), the largest element
    gemms: dict = field(default_factory=dict)  # (m, k, n, form) -> dict, with a count

    def note(self, mkn: tuple, form: str, found) -> None:
        """One 2-D product of shape (m, k, n) under ``found`` (a tcprobe.atlas.Lookup)."""
        key = (*mkn, form, found.provenance, repr(sorted(found.axes.items())))
        row = self.gemms.get(key)
        if row is None:
            m, k, n = mkn
            row = self.gemms[key] = {"m": m, "n": n, "k": k, "form": form, "count": 0,
                                     **found.row()}
        row["count"] += 1


@dataclass
class Record:
    """One routed 2-D product as it was computed: A (M, K), B (K, N), C (M, N)
    in its dtype or None, alpha, beta, D's f32 (or int32) words as a tensor,
    the 1-D bias or None, the schedule's axes, its provenance, and
    ``out_dtype``: the torch dtype D was written in before it was widened to
    f32 (None: f32, or C's dtype where C is given). Redo a record with
    ``adapter.gemm(r.a, r.b, r.c, ..., bias=r.bias, out_dtype=r.out_dtype)``."""

    op: str
    a: object
    b: object
    c: object
    alpha: float
    beta: float
    d: object
    bias: object = None
    schedule: dict = field(default_factory=dict)
    provenance: str = ""
    out_dtype: object = None


@dataclass
class Report:
    """Pass as ``emulate(report=Report())``. ``compare=True`` also runs each
    routed op as plain torch would and records the difference;
    ``record=True`` keeps every 2-D product (:class:`Record`) so a check can
    redo it. ``torch_ops`` counts every other aten op the block ran (as torch
    runs it on the CPU); ``unmodelled`` names those whose arithmetic a GPU
    kernel may do otherwise (softmax, layer_norm, gelu, sums...), apart
    from the data movement and exact ops. ``threads`` counts the threads
    started inside the block: dispatch modes are thread-local, so their
    products ran as plain torch and are in no other count. ``processes``
    counts the processes started inside it (multiprocessing workers, a
    pool's, subprocesses, forks): a spawned worker or a subprocess runs plain
    torch, a forked child emulates into its own copy of the report; none of
    their products is in this report (tcprobe/torch/threads.py)."""

    compare: bool = False
    record: bool = False
    ops: dict = field(default_factory=dict)
    fallbacks: list = field(default_factory=list)  # (op, reason)
    records: list = field(default_factory=list)
    torch_ops: dict = field(default_factory=dict)  # op -> calls
    unmodelled: dict = field(default_factory=dict)  # op -> calls, arithmetic not modelled
    threads: int = 0  # threads started inside the block: they ran plain torch, unseen
    processes: int = 0  # processes started inside the block: their products are not here

    def __post_init__(self):
        from tcprobe.flags import check_flag

        for name in ("compare", "record"):  # Report(compare="yes") would compare silently
            check_flag(getattr(self, name), f"Report: {name}")

    def stats(self, op: str) -> OpStats:
        return self.ops.setdefault(op, OpStats())

    def count_torch(self, op: str, exact: bool) -> None:
        self.torch_ops[op] = self.torch_ops.get(op, 0) + 1
        if not exact:
            self.unmodelled[op] = self.unmodelled.get(op, 0) + 1

    @property
    def routed(self) -> int:
        return sum(s.routed for s in self.ops.values())

    @property
    def fallback(self) -> int:
        return sum(s.fallback for s in self.ops.values())

    def provenance(self) -> dict:
        """{provenance: products} over every routed product."""
        out: dict = {}
        for s in self.ops.values():
            for g in s.gemms.values():
                out[g["provenance"]] = out.get(g["provenance"], 0) + g["count"]
        return out

    def rows(self) -> list[dict]:
        """One plain dict per op, for a table or JSON: the matrix ops first
        (with each GEMM shape's schedule and provenance under ``gemms``), then
        every op left to torch (``torch`` calls; ``unmodelled``: whether its
        arithmetic is CPU torch's where a GPU kernel may differ)."""
        rows = [{"op": op, "routed": s.routed, "fallback": s.fallback,
                 "shapes": sorted({str(x) for x in s.shapes}), "seconds": round(s.seconds, 6),
                 "max_ulp": s.max_ulp, "max_rel": s.max_rel,
                 "gemms": [dict(g) for g in s.gemms.values()]}
                for op, s in sorted(self.ops.items())]
        rows += [{"op": op, "routed": 0, "fallback": 0, "torch": n,
                  "unmodelled": op in self.unmodelled}
                 for op, n in sorted(self.torch_ops.items())]
        return rows
