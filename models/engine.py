"""The fixed-point accumulator engine: one parameterized fused dot-product-add.

What it computes, for each case (the mechanism the Khattak-Mikaitis models
and the tcgen05 write-up both measured, in integer arithmetic only):

1. Inputs are decoded to exact (sign, integer significand, exponent); a
   product is the exact integer product of significands.
2. K is walked in ``k_order`` and cut into blocks of ``block_size`` products.
   A block's terms are its products plus the addend (C for the first block,
   else the previous block's result word).
3. The block aligns on one exponent: the largest alignment exponent of its
   nonzero terms (raw exponent sums, or the products' true leading bit when
   ``align='normalized'``), never below ``zero_floor``. Every term is cut
   toward zero to ``window_bits`` fraction bits below it and the integers are
   summed exactly (``window_bits=None``: no cut, an exact sum).
4. The sum is rounded into the stage's format: intermediate blocks into
   ``inter_type``, the last into the output type, each with its rounding and
   kept fraction bits.

Specials come first in every block: a NaN input, Inf*0 or +Inf + -Inf give
the canonical NaN; otherwise an Inf gives that Inf. The sign of an exact
zero is +0 (``zero_sign='positive'``) or follows IEEE 754 (``'ieee'``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import NamedTuple

import numpy as np
from numba import njit

from tcprobe.models import isa
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath

from .bits import bit_length, low_bits, shl
from .formats import (
    Format,
    Overflow,
    Rounding,
    convert,
    convert_input,
    decode_scalar,
    encode_scalar,
    get_format,
    inf_word,
)

ROUNDINGS = {"rz": Rounding.RZ, "rne": Rounding.RNE, "rna": Rounding.RNA}
OVERFLOWS = {"ieee": Overflow.IEEE, "inf": Overflow.INF, "saturate": Overflow.SATURATE}
NO_FLOOR = -(1 << 40)


class ParamError(ValueError):
    """A parameter value the engine does not know."""


@dataclass(frozen=True)
class EngineParams:
    """Every knob of the engine, named. Defaults are the Hopper/Blackwell
    HMMA datapath for f32 output (F=25, L=16, floor -133, RZ, +0)."""

    window_bits: int | None = isa.DEFAULT_WINDOW_BITS  # F: fraction bits kept below the anchor
    block_size: int = 16  # L: products fused per block
    zero_floor: int | None = isa.output_defaults("f32").zero_floor  # anchor never below this
    input_conversion: str = "truncate"  # A/B words wider than their format (tf32)
    output_rounding: str = "rz"  # rz | rne | rna
    output_frac_bits: int | None = None  # None: the output format's own
    zero_sign: str = "positive"  # positive | ieee
    nan: int | None = None  # canonical NaN word of the output (None: the format's)
    overflow: str = "inf"  # inf | saturate | ieee (unmeasured on silicon; MMA-Sim gives Inf)
    align: str = "raw"  # raw exponent sums | normalized products
    carry_bits: int | None = None  # integer bits of the accumulator above the anchor
    k_order: tuple[int, ...] | None = None  # order the K positions are consumed in
    c_join: str = "first"  # first: C is the first block's addend | last: added after
    c_convert: str | None = None  # convert C (RNE) to this type before the MMA
    inter_type: str | None = None  # type of a block result passed on (None: output)
    inter_rounding: str | None = None  # None: output_rounding
    inter_frac_bits: int | None = None  # None: output_frac_bits, if the types agree
    c_add_rounding: str = "rne"  # rounding of the final add when c_join='last'

    def replace(self, **changes) -> EngineParams:
        return replace(self, **changes)

    def as_dict(self) -> dict:
        d = asdict(self)
        if d["k_order"] is not None:
            d["k_order"] = list(d["k_order"])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> EngineParams:
        known = {f.name for f in fields(cls)}
        extra = set(d) - known
        if extra:
            raise ParamError(f"unknown engine parameter(s): {', '.join(sorted(extra))}")
        d = dict(d)
        if d.get("k_order") is not None:
            d["k_order"] = tuple(int(x) for x in d["k_order"])
        return cls(**d)

    def check(self) -> None:
        for name, value, table in (
            ("output_rounding", self.output_rounding, ROUNDINGS),
            ("inter_rounding", self.inter_rounding or "rz", ROUNDINGS),
            ("c_add_rounding", self.c_add_rounding, ROUNDINGS),
            ("overflow", self.overflow, OVERFLOWS),
        ):
            if value not in table:
                raise ParamError(f"{name} must be one of {', '.join(table)}, not {value!r}")
        choices = (("zero_sign", self.zero_sign, ("positive", "ieee")),
                   ("align", self.align, ("raw", "normalized")),
                   ("c_join", self.c_join, ("first", "last")),
                   ("input_conversion", self.input_conversion, ("truncate", "rne", "rna")))
        for name, value, allowed in choices:
            if value not in allowed:
                raise ParamError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.block_size < 1:
            raise ParamError("block_size must be at least 1")
        if self.window_bits is not None and not 0 <= self.window_bits <= 56:
            raise ParamError("window_bits must be between 0 and 56 (or None for exact)")


# ---------------------------------------------------------------------------
# The compiled kernel.

_WIDE_LIMBS = 26  # 32-bit limbs of the exact accumulator: exponents -352 .. 480
_WIDE_BASE = -352
_M32 = (1 << 32) - 1


@njit(cache=True)
def _wide_add(acc, sign, sig, lsb):
    """Add (-1)**sign * sig * 2**lsb into the limbs (sig < 2**63)."""
    off = lsb - _WIDE_BASE
    li = off >> 5
    bi = off & 31
    parts0 = sig & _M32
    parts1 = sig >> 32
    s = -1 if sign else 1
    v0 = parts0 << bi
    v1 = parts1 << bi
    acc[li] += s * (v0 & _M32)
    acc[li + 1] += s * ((v0 >> 32) + (v1 & _M32))
    acc[li + 2] += s * (v1 >> 32)


@njit(cache=True)
def _wide_result(acc):
    """Normalize the limbs: (negative, mag, q, sticky) with the value
    (mag + d) * 2**q, mag holding up to 62 bits, d in [0, 1) and d > 0 iff sticky."""
    carry = 0
    for j in range(_WIDE_LIMBS):
        v = acc[j] + carry
        acc[j] = v & _M32
        carry = v >> 32
    neg = carry < 0
    if neg:
        borrow = 0
        for j in range(_WIDE_LIMBS):
            v = -acc[j] + borrow
            acc[j] = v & _M32
            borrow = v >> 32
    top = -1
    for j in range(_WIDE_LIMBS - 1, -1, -1):
        if acc[j] != 0:
            top = j
            break
    if top < 0:
        return neg, 0, 0, False
    top_bit = top * 32 + bit_length(acc[top]) - 1
    start = top_bit - 61
    if start < 0:
        start = 0
    mag = 0
    sticky = False
    for j in range(top, -1, -1):
        lo = j * 32
        if lo + 32 <= start:
            if acc[j] != 0:
                sticky = True
            continue
        mag += shl(acc[j], lo - start)
        if lo < start and low_bits(acc[j], start - lo) != 0:
            sticky = True
    return neg, mag, start + _WIDE_BASE, sticky


@njit(cache=True)
def _round_block(n, tsign, tsig, tlsb, talign, all_neg, window, floor, carry_bits,
                 spec, rounding, keep, overflow, zero_pos, acc):
    """Align the n finite nonzero terms on one anchor, cut each to the window,
    sum exactly and round the sum into ``spec``."""
    if n == 0:
        neg = all_neg and not zero_pos
        return encode_scalar(1 if neg else 0, 0, 0, False, spec, rounding, keep, overflow)
    anchor = talign[0]
    for t in range(1, n):
        if talign[t] > anchor:
            anchor = talign[t]
    if anchor < floor:
        anchor = floor
    if window >= 0:
        q = anchor - window
        m = 0
        for t in range(n):
            u = shl(tsig[t], tlsb[t] - q)
            m += -u if tsign[t] else u
        if carry_bits >= 0:
            width = window + carry_bits + 1
            m = ((m + (1 << (width - 1))) & ((1 << width) - 1)) - (1 << (width - 1))
        neg = m < 0
        mag = -m if neg else m
        sticky = False
    else:
        for j in range(_WIDE_LIMBS):
            acc[j] = 0
        for t in range(n):
            _wide_add(acc, tsign[t], tsig[t], tlsb[t])
        neg, mag, q, sticky = _wide_result(acc)
    if mag == 0 and not sticky:
        neg = all_neg and not zero_pos
        return encode_scalar(1 if neg else 0, 0, 0, False, spec, rounding, keep, overflow)
    word = encode_scalar(1 if neg else 0, mag, q, sticky, spec, rounding, keep, overflow)
    kind, width, ebits, fbits, bias, specials, signed, drop = spec
    if zero_pos and (word & ((1 << (width - 1)) - 1)) == 0:
        word = 0
    return word


@njit(cache=True)
def _add_term(code, spec, normalized, n, tsign, tsig, tlsb, talign, state):
    """Decode one addend word and append it as a term; state = [nan, +inf, -inf, all_neg]."""
    cls, s, sig, lsb, raw = decode_scalar(code, spec)
    if cls == 3:
        state[0] = 1
    elif cls == 2:
        state[2 if s else 1] = 1
    else:
        if s == 0:
            state[3] = 0
        if cls == 1:
            tsign[n] = s
            tsig[n] = sig
            tlsb[n] = lsb
            talign[n] = (lsb + bit_length(sig) - 1) if normalized else raw
            return n + 1
    return n


@njit(cache=True)
def fdp_kernel(a, b, c, order, block, a_spec, b_spec, c_spec, i_spec, d_spec,
               window, floor, carry_bits, normalized, zero_pos, overflow,
               i_round, i_keep, i_nan, d_round, d_keep, d_nan, c_last, c_add_round, out):
    """The blocked fused dot product over every case (see the module doc)."""
    n_cases, k = a.shape
    n_blocks = (k + block - 1) // block
    tsign = np.zeros(block + 2, np.int64)
    tsig = np.zeros(block + 2, np.int64)
    tlsb = np.zeros(block + 2, np.int64)
    talign = np.zeros(block + 2, np.int64)
    state = np.zeros(4, np.int64)
    acc = np.zeros(_WIDE_LIMBS, np.int64)
    for i in range(n_cases):
        have_acc = not c_last
        acc_word = np.int64(c[i])
        acc_spec = c_spec
        for blk in range(n_blocks):
            last = blk == n_blocks - 1 and not c_last
            spec = d_spec if last else i_spec
            rnd = d_round if last else i_round
            keep = d_keep if last else i_keep
            nan_word = d_nan if last else i_nan
            state[0] = 0
            state[1] = 0
            state[2] = 0
            state[3] = 1
            n = 0
            if have_acc:
                n = _add_term(acc_word, acc_spec, normalized, n, tsign, tsig, tlsb, talign, state)
            lo = blk * block
            hi = min(lo + block, k)
            for j in range(lo, hi):
                kk = order[j]
                ca, sa, ma, la, ra = decode_scalar(np.int64(a[i, kk]), a_spec)
                cb, sb, mb, lb, rb = decode_scalar(np.int64(b[i, kk]), b_spec)
                s = sa ^ sb
                if ca == 3 or cb == 3:
                    state[0] = 1
                elif ca == 2 or cb == 2:
                    if ca == 0 or cb == 0:
                        state[0] = 1
                    else:
                        state[2 if s else 1] = 1
                elif ca == 0 or cb == 0:
                    if s == 0:
                        state[3] = 0
                else:
                    if s == 0:
                        state[3] = 0
                    tsign[n] = s
                    tsig[n] = ma * mb
                    tlsb[n] = la + lb
                    if normalized:
                        talign[n] = la + lb + bit_length(ma * mb) - 1
                    else:
                        talign[n] = ra + rb
                    n += 1
            if state[0] == 1 or (state[1] == 1 and state[2] == 1):
                acc_word = nan_word
            elif state[1] == 1 or state[2] == 1:
                acc_word = inf_word(1 if state[2] == 1 else 0, spec)
            else:
                acc_word = _round_block(n, tsign, tsig, tlsb, talign, state[3] == 1, window,
                                        floor, carry_bits, spec, rnd, keep, overflow, zero_pos, acc)
            acc_spec = spec
            have_acc = True
        if c_last:
            state[0] = 0
            state[1] = 0
            state[2] = 0
            state[3] = 1
            n = _add_term(acc_word, acc_spec, normalized, 0, tsign, tsig, tlsb, talign, state)
            n = _add_term(np.int64(c[i]), c_spec, normalized, n, tsign, tsig, tlsb, talign, state)
            if state[0] == 1 or (state[1] == 1 and state[2] == 1):
                acc_word = d_nan
            elif state[1] == 1 or state[2] == 1:
                acc_word = inf_word(1 if state[2] == 1 else 0, d_spec)
            else:
                acc_word = _round_block(n, tsign, tsig, tlsb, talign, state[3] == 1, -1,
                                        NO_FLOOR, -1, d_spec, c_add_round, d_keep, overflow,
                                        zero_pos, acc)
        out[i] = acc_word


# ---------------------------------------------------------------------------
# Python entry point.


def _nan_word(fmt: Format, override: int | None) -> int:
    if override is not None:
        return int(override)
    if fmt.canonical_nan is None:
        raise ParamError(f"{fmt.name} has no NaN")
    return fmt.canonical_nan


class Prepared(NamedTuple):
    """What a kernel needs: words as it reads them, format specs, and the
    parameters as the ints the kernel takes (``settings``, in its order)."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: np.ndarray
    block: int
    a_spec: tuple
    b_spec: tuple
    c_spec: tuple
    i_spec: tuple
    d_spec: tuple
    settings: tuple  # window .. c_add_rounding, as fdp_kernel takes them


def prepare(dp: Datapath, cases: Cases, p: EngineParams, convert_inputs=convert_input) -> Prepared:
    """Apply the input and C conversions and turn ``p`` into kernel arguments
    (shared by the plain kernel and the fast path)."""
    a_fmt, b_fmt = get_format(dp.a_type), get_format(dp.b_type)
    d_fmt = get_format(dp.d_type)
    c_fmt = get_format(dp.c)
    i_fmt = get_format(p.inter_type) if p.inter_type else d_fmt
    a_words, b_words = cases.masked()
    a_words = convert_inputs(a_words, a_fmt, p.input_conversion)
    b_words = convert_inputs(b_words, b_fmt, p.input_conversion)
    c_words = np.asarray(cases.c, np.int64)
    if p.c_convert:
        c_words = convert(c_words, c_fmt, p.c_convert).astype(np.int64)
        c_fmt = get_format(p.c_convert)
    k = cases.k
    order = np.arange(k, dtype=np.int64) if p.k_order is None else np.asarray(p.k_order, np.int64)
    if sorted(order.tolist()) != list(range(k)):
        raise ParamError(f"k_order must be a permutation of 0..{k - 1}")
    d_keep = d_fmt.frac_bits if p.output_frac_bits is None else p.output_frac_bits
    if p.inter_frac_bits is not None:
        i_keep = p.inter_frac_bits
    elif i_fmt == d_fmt:
        i_keep = d_keep
    else:
        i_keep = i_fmt.frac_bits
    settings = (
        -1 if p.window_bits is None else p.window_bits,
        NO_FLOOR if p.zero_floor is None else p.zero_floor,
        -1 if p.carry_bits is None else p.carry_bits,
        p.align == "normalized",
        p.zero_sign == "positive",
        int(OVERFLOWS[p.overflow]),
        int(ROUNDINGS[p.inter_rounding or p.output_rounding]), i_keep,
        _nan_word(i_fmt, p.nan if i_fmt == d_fmt else None),
        int(ROUNDINGS[p.output_rounding]), d_keep, _nan_word(d_fmt, p.nan),
        p.c_join == "last",
        int(ROUNDINGS[p.c_add_rounding]),
    )
    return Prepared(a_words, b_words, c_words, order, min(p.block_size, max(k, 1)), a_fmt.spec,
                    b_fmt.spec, c_fmt.spec, i_fmt.spec, d_fmt.spec, settings)


def fused_dot(dp: Datapath, cases: Cases, p: EngineParams, *,
              fast: bool | None = None) -> np.ndarray:
    """Output words (uint32) of the blocked fixed-point dot product for every case.

    The same words come from two kernels: this module's plain one, and the
    compiled-per-configuration, multi-threaded one of :mod:`.fastpath`.
    ``fast=None`` lets fastpath decide (large batches, or a configuration it
    already ran; ``fastpath.set_policy``), True takes it wherever it applies,
    False forces the plain kernel (the reference the fast one is tested
    against)."""
    p.check()
    if fast is not False:
        from . import fastpath

        if fastpath.supports(dp, p) and (fast or fastpath.worthwhile(dp, p, len(cases))):
            return fastpath.fast_dot(dp, cases, p)
    k = prepare(dp, cases, p)
    out = np.empty(len(cases), np.int64)
    fdp_kernel(
        np.ascontiguousarray(k.a, dtype=np.int64),
        np.ascontiguousarray(k.b, dtype=np.int64),
        k.c, k.order, k.block, k.a_spec, k.b_spec, k.c_spec, k.i_spec, k.d_spec,
        *k.settings, out,
    )
    return out.astype(np.uint32)
