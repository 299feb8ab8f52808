"""Same bits? Two GEMM configurations (GPU, instruction, schedule, model)
compared from their parameters, then by search.

A configuration resolves to a datapath, its model and a schedule. Where the
two agree on every parameter that takes part in the arithmetic (the model's
engine parameters and the instruction's K, or the same opaque model, and
every schedule axis), they compute the same words on every input: the
verdict is ``identical`` and needs no run. Otherwise the differences are
named as *mechanisms* (window, block, rounding, instruction K, split, K
order, promotion, epilogue, ...), and a search over small generated GEMMs
looks for an input on which the words differ, shrinks it (one element of D,
fewer K terms, simpler values) and says which mechanism explains it. On a
real run, :func:`attribute` says for every element that differs which single
mechanism, switched from the first configuration to the second, gives the
second's word. A search that finds nothing says so; it proves nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace

import ml_dtypes
import numpy as np

from tcprobe.models.engine import EngineParams
from tcprobe.models.formats import get_format
from tcprobe.models.model import FixedPointModel, Model

from . import choice, epilogue, pipeline
from .axes import AXES
from .compare import words_differ
from .operands import MatmulError
from .schedule import from_value

# engine parameters -> the mechanism they belong to
PARAM_MECHANISMS = {
    "window_bits": "window", "block_size": "block", "zero_floor": "zero floor",
    "input_conversion": "input conversion", "output_rounding": "rounding",
    "inter_rounding": "rounding", "c_add_rounding": "rounding",
    "output_frac_bits": "kept bits", "inter_frac_bits": "kept bits", "carry_bits": "carry",
    "carry_top": "carry", "k_order": "K order in the instruction", "zero_sign": "zero sign",
    "nan": "NaN word", "overflow": "overflow", "align": "alignment", "c_join": "C join",
    "c_convert": "C join", "inter_type": "C join"}
# schedule axes -> mechanism: the axes table's column (None: not compared)
SCHEDULE_MECHANISMS = {a.name: a.mechanism for a in AXES if a.mechanism is not None}
VALUE_DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "tf32": np.float32,
                "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
                "f32": np.float32}


@dataclass(frozen=True)
class Config:
    """One side of the comparison, as the user names it."""

    gpu: str
    instr: str | None = None
    schedule: object = None
    model: object = None

    def label(self) -> str:
        return self.gpu + (f" {self.instr}" if self.instr else "")


@dataclass
class Resolved:
    mdl: Model
    sched: object  # a Schedule

    @property
    def dp(self):
        return self.mdl.datapath


@dataclass
class Mechanism:
    """One way the two configurations compute differently."""

    name: str
    first: dict  # the first configuration's values of its parameters
    second: dict
    kind: str  # param, schedule, instruction, model

    def text(self) -> str:
        both = ", ".join(f"{k} {self.first[k]} vs {self.second[k]}" for k in self.first)
        return f"{self.name} ({both})" if both else self.name


@dataclass
class Verdict:
    identical: bool | None  # True: same parameters; False: a counterexample; None: none found
    mechanisms: list[Mechanism]
    counterexample: dict | None = None
    searched: int = 0
    explained_by: list[str] = field(default_factory=list)
    why: str = ""  # where identical although parameters differ: the reason


def resolve(cfg: Config, a_fmt: str, b_fmt: str, acc: str) -> Resolved:
    """The datapath, model and schedule a configuration names."""
    sched = from_value(cfg.schedule)
    instr = sched.instr or cfg.instr
    dp = choice.datapath(choice.gpu_name(cfg.gpu), instr, a_fmt, b_fmt, acc)
    return Resolved(choice.model_for(dp, choice.gpu_name(cfg.gpu), cfg.model),
                    sched.with_(instr=None))


def mechanisms(x: Resolved, y: Resolved) -> list[Mechanism]:
    """Every parameter the two differ in, grouped by mechanism (module doc)."""
    out: dict[str, Mechanism] = {}

    def note(name, key, a, b, kind):
        m = out.setdefault(name, Mechanism(name, {}, {}, kind))
        m.first[key], m.second[key] = a, b
    if isinstance(x.mdl, FixedPointModel) and isinstance(y.mdl, FixedPointModel):
        for f in fields(EngineParams):
            a, b = getattr(x.mdl.params, f.name), getattr(y.mdl.params, f.name)
            if a != b:
                note(PARAM_MECHANISMS.get(f.name, f.name), f.name, a, b, "param")
        if x.dp.k != y.dp.k:
            note("instruction K", "K", x.dp.k, y.dp.k, "instruction")
    elif type(x.mdl) is not type(y.mdl) or x.mdl.describe() | {"name": ""} != \
            y.mdl.describe() | {"name": ""} or x.dp.k != y.dp.k:
        note("model", "model", x.mdl.name, y.mdl.name, "model")
    for name, mech in SCHEDULE_MECHANISMS.items():
        a, b = getattr(x.sched, name), getattr(y.sched, name)
        if a != b:
            note(mech, name, a, b, "schedule")
    return list(out.values())


def hybrid(x: Resolved, y: Resolved, mech: Mechanism) -> Resolved:
    """``x`` with one mechanism switched to ``y``'s values."""
    if mech.kind == "param":
        params = replace(x.mdl.params, **mech.second)
        return Resolved(FixedPointModel(f"{x.mdl.name}+{mech.name}", x.dp, x.mdl.evidence,
                                        params), x.sched)
    if mech.kind == "instruction":
        return Resolved(FixedPointModel(f"{x.mdl.name}@K{y.dp.k}", y.dp, x.mdl.evidence,
                                        x.mdl.params), x.sched)
    if mech.kind == "model":
        return Resolved(y.mdl, x.sched)
    return Resolved(x.mdl, x.sched.with_(**mech.second))


def words(r: Resolved, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha: int, beta: int):
    """D words of ``r`` on one product (operand words; alpha, beta as f32 words)."""
    p = pipeline.Problem(r.mdl, a, a_fmt, b, b_fmt, out_fmt, c, c_fmt, alpha, beta)
    return pipeline.run(p, r.sched.with_(out=out_fmt))


def attribute(x: Resolved, y: Resolved, mechs: list[Mechanism], a, a_fmt, b, b_fmt, c, c_fmt,
              out_fmt, alpha: int, beta: int, dx, dy) -> dict[str, int]:
    """For the elements where ``dx`` and ``dy`` differ: how many each single
    mechanism explains (switched in ``x``, it gives ``dy``'s word), and how
    many need several together."""
    differ = words_differ(out_fmt, dx, dy)
    counts: dict[str, int] = {}
    alone = np.zeros(differ.shape, bool)
    for m in mechs:
        try:
            dh = words(hybrid(x, y, m), a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta)
        except (MatmulError, ValueError):
            continue
        hit = differ & ~words_differ(out_fmt, dh, dy)
        counts[m.name] = int(hit.sum())
        alone |= hit
    counts["several together"] = int((differ & ~alone).sum())
    return counts


def explain_run(first: Config, second: Config, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha,
                beta, d1, d2) -> dict[str, int]:
    """:func:`attribute` for two configurations as the user names them
    (alpha, beta as numbers), on a run's words ``d1``, ``d2``."""
    acc = "s32" if get_format(a_fmt).kind.name == "INT" else "f32"
    x, y = resolve(first, a_fmt, b_fmt, acc), resolve(second, a_fmt, b_fmt, acc)
    if acc == "f32":
        alpha, beta = epilogue.f32_word(alpha, "alpha"), epilogue.f32_word(beta, "beta")
    return attribute(x, y, mechanisms(x, y), a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha,
                     beta, d1, d2)


def _values(rng, fmt: str, shape, kind: str) -> np.ndarray:
    """Operand values of one generator kind, as words of ``fmt``."""
    x = rng.standard_normal(shape)
    if kind == "wide":
        x = x * np.exp2(rng.integers(-12, 13, shape))
    elif kind == "cancel" and shape[-1] >= 2:
        h = shape[-1] // 2
        x[..., h:2 * h] = -x[..., :h] * (1 + 2.0 ** -6 * rng.standard_normal(x[..., :h].shape))
    elif kind == "integers":
        x = rng.integers(-8, 9, shape).astype(np.float64)
        x[..., 0] = 2.0 ** 11
    v = x.astype(np.float32).astype(VALUE_DTYPES[fmt])
    w = np.ascontiguousarray(v).view({1: np.uint8, 2: np.uint16, 4: np.uint32}[v.itemsize])
    return w.astype(np.uint32)


def search(x: Resolved, y: Resolved, a_fmt, b_fmt, c_fmt, out_fmt, alpha: int, beta: int,
           seconds: float = 10.0, seed: int = 0) -> tuple[dict | None, int]:
    """A small input on which ``x`` and ``y`` differ, shrunk (module doc), and
    how many products were tried."""
    if a_fmt not in VALUE_DTYPES or b_fmt not in VALUE_DTYPES:
        return None, 0
    rng = np.random.default_rng(seed)
    unit = int(np.lcm(x.dp.k, y.dp.k))
    t0, tried = time.perf_counter(), 0
    for mult in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        k = unit * mult
        for kind in ("normal", "wide", "cancel", "integers"):
            a = _values(rng, a_fmt, (4, k), kind)
            b = _values(rng, b_fmt, (k, 4), "normal" if kind == "cancel" else kind)
            c = None if c_fmt is None else _values(rng, "f32" if c_fmt == "f32" else c_fmt,
                                                   (4, 4), "normal")
            try:
                dx = words(x, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta)
                dy = words(y, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta)
            except MatmulError:
                continue  # a schedule that cannot cut this K (too few blocks to split)
            tried += 1
            bad = np.argwhere(words_differ(out_fmt, dx, dy))
            if len(bad):
                i, j = (int(v) for v in bad[0])
                return _shrink(x, y, a[i:i + 1], a_fmt, b[:, j:j + 1], b_fmt,
                               None if c is None else c[i:i + 1, j:j + 1], c_fmt, out_fmt,
                               alpha, beta), tried
            if time.perf_counter() - t0 > seconds:
                return None, tried
    return None, tried


def _shrink(x, y, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta) -> dict:
    """A 1x1 counterexample with as few nonzero K terms and as plain values as
    keep the two words apart."""
    def differs(a_, b_, c_):
        try:
            return bool(words_differ(out_fmt, words(x, a_, a_fmt, b_, b_fmt, c_, c_fmt, out_fmt,
                                                 alpha, beta),
                                  words(y, a_, a_fmt, b_, b_fmt, c_, c_fmt, out_fmt,
                                        alpha, beta)).any())
        except MatmulError:
            return False
    unit = int(np.lcm(x.dp.k, y.dp.k))
    while a.shape[1] > unit:  # halves of K, while one still tells them apart
        h = a.shape[1] // 2 // unit * unit
        for lo, hi in ((0, h), (h, a.shape[1])):
            if hi - lo >= unit and differs(a[:, lo:hi], b[lo:hi], c):
                a, b = a[:, lo:hi].copy(), b[lo:hi].copy()
                break
        else:
            break
    for k in reversed(range(a.shape[1])):  # drop terms
        if a[0, k]:
            a2 = a.copy()
            a2[0, k] = 0
            if differs(a2, b, c):
                a = a2
    if c is not None and c[0, 0] and differs(a, b, np.zeros_like(c)):
        c = np.zeros_like(c)
    for k in range(a.shape[1]):  # plainer values: one significant bit
        for arr, fmt, idx in ((a, a_fmt, (0, k)), (b, b_fmt, (k, 0))):
            if arr[idx]:
                trial = arr.copy()
                trial[idx] = _one_bit(int(arr[idx]), fmt)
                if trial[idx] != arr[idx] and (differs(trial, b, c) if arr is a else
                                               differs(a, trial, c)):
                    arr[idx] = trial[idx]
    dx = words(x, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta)
    dy = words(y, a, a_fmt, b, b_fmt, c, c_fmt, out_fmt, alpha, beta)
    terms = [(k, int(a[0, k]), int(b[k, 0])) for k in range(a.shape[1]) if a[0, k] and b[k, 0]]
    return {"m": 1, "n": 1, "k": int(a.shape[1]), "a": a, "b": b, "c": c,
            "terms": terms, "c_word": None if c is None else int(c[0, 0]),
            "first": int(dx[0, 0]), "second": int(dy[0, 0])}


def _one_bit(word: int, fmt: str) -> int:
    """The word with its fraction bits cleared (a signed power of two)."""
    f = get_format(fmt)
    return word & ~((1 << (f.frac_bits + f.drop_bits)) - 1) if f.frac_bits else word


def verdict(first: Config, second: Config, a_fmt: str, b_fmt: str, c_fmt: str | None,
            out_fmt: str, alpha=1, beta=1, seconds: float = 10.0) -> Verdict:
    """Same bits on every input? (module doc)."""
    acc = "s32" if get_format(a_fmt).kind.name == "INT" else "f32"
    x, y = resolve(first, a_fmt, b_fmt, acc), resolve(second, a_fmt, b_fmt, acc)
    mechs = mechanisms(x, y)
    if not mechs:
        return Verdict(True, [])
    if acc == "s32":  # integer products are exact sums: only saturation can differ
        def saturates(r):
            return getattr(r.mdl, "saturate", None), r.sched.saturate
        if all(type(r.mdl).__name__ == "IntegerModel" for r in (x, y)) and \
                saturates(x) == saturates(y):
            return Verdict(True, mechs, why="both sum the integer products exactly, wrapping "
                                             "mod 2**32 without saturation: K order, splits, "
                                             "instruction and model leave every word alone")
        return Verdict(None, mechs)
    al, be = epilogue.f32_word(alpha, "alpha"), epilogue.f32_word(beta, "beta")
    ce, tried = search(x, y, a_fmt, b_fmt, c_fmt, out_fmt, al, be, seconds)
    if ce is None:
        return Verdict(None, mechs, searched=tried)
    counts = attribute(x, y, mechs, ce["a"], a_fmt, ce["b"], b_fmt, ce["c"], c_fmt, out_fmt,
                       al, be, np.array([[ce["first"]]]), np.array([[ce["second"]]]))
    return Verdict(False, mechs, ce, tried, [k for k, v in counts.items() if v])
