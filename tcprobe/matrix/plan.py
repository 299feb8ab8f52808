"""A schedule's plan: the K ranges of every accumulator chain, as data.

:func:`make` turns a :class:`~.schedule.Schedule` (the ``operands`` and
``plan`` stages of :mod:`.axes`) and the datapath's K into a :class:`Plan`:
which operand words the instruction reads, the partials (each one chain, or
with fp8 promotion the chunks added into an f32 register), the order of
every chain, and whether C is the first chain's start (the chain preset).
Plans are frozen and hashable: the pipeline caches chain words keyed by the
:class:`Chain` itself and partials by the :class:`Partial`, so schedules
that share a chain share its words and no two plans can share wrong ones.

The chain is one plan among others: one partial over every K tile that
starts from C.
"""

from __future__ import annotations

from dataclasses import dataclass

from .operands import MatmulError


@dataclass(frozen=True)
class Chain:
    """The instruction run over K tiles lo..hi-1 (the last first where
    ``reverse``), from +0 (or from C where the plan says so)."""

    lo: int
    hi: int
    reverse: bool = False


@dataclass(frozen=True)
class Partial:
    """One split's accumulator: its chains, and whether they are promoted
    (each chain from +0, added into an f32 register from +0 in the listed
    order, one RNE add each) or one chain (``promoted`` False)."""

    chains: tuple[Chain, ...]
    promoted: bool = False


@dataclass(frozen=True)
class Plan:
    """Everything that decides the partials' words (module doc)."""

    operand_round: str | None
    partials: tuple[Partial, ...]
    c_start: bool = False  # C is the first chain's accumulator (the chain, one split)


def even_ranges(units: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges of ``units``, as even as possible: range i
    ends at round((i + 1) * units / parts) (Python's round, half to even), so
    lengths differ by at most one (5 in 2: 2 then 3; 7 in 3: 2, 3, 2)."""
    if parts > units:
        raise MatmulError(f"split_k={parts} but K has only {units} instruction tile(s)")
    cuts = [round(i * units / parts) for i in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def split_ranges(s, k_inst: int, tiles: int) -> list[tuple[int, int]]:
    """The schedule's splits as ranges of instruction tiles (K = ``tiles`` x
    ``k_inst`` after padding)."""
    kb = k_inst if s.k_block is None else s.k_block
    if kb % k_inst:
        raise MatmulError(f"schedule: k_block={kb} is not a multiple of the instruction's K "
                          f"({k_inst})")
    per = kb // k_inst
    blocks = -(-tiles // per)
    if s.split_starts is not None:
        starts = []
        for off in s.split_starts:
            if off % kb:
                raise MatmulError(f"schedule: split_starts: {off} is not a multiple of the "
                                  f"block ({kb} K elements)")
            if off // kb >= blocks:
                raise MatmulError(f"schedule: split_starts: {off} is past K ({blocks} "
                                  f"block(s) of {kb})")
            starts.append(off // kb)
        cuts = [0, *starts, blocks]
        ranges = list(zip(cuts[:-1], cuts[1:], strict=True))
    elif s.split_k > blocks:
        raise MatmulError(f"split_k={s.split_k} but K has only {blocks} block(s) of {kb} "
                          "(the schedule's split count)")
    elif s.split_rule == "ceil":
        size = -(-blocks // s.split_k)
        if size * (s.split_k - 1) >= blocks:
            raise MatmulError(f"split_k={s.split_k}: {blocks} block(s) of {kb} in splits of "
                              f"{size} (split_rule='ceil') leave the last split empty")
        ranges = [(i * size, min(blocks, (i + 1) * size)) for i in range(s.split_k)]
    else:
        ranges = even_ranges(blocks, s.split_k)
    return [(min(lo * per, tiles), min(hi * per, tiles)) for lo, hi in ranges]


def make(s, k_inst: int, tiles: int, float_acc: bool = True) -> Plan:
    """The plan of schedule ``s`` for an instruction of K ``k_inst`` over
    ``tiles`` K tiles (module doc)."""
    reverse = s.k_order == "reverse"
    partials = []
    for lo, hi in split_ranges(s, k_inst, tiles):
        if s.promote is None:
            partials.append(Partial((Chain(lo, hi, reverse),)))
            continue
        if not float_acc:
            raise MatmulError("schedule: promote needs a float accumulator")
        starts = list(range(lo, hi, s.promote))
        if reverse:
            starts.reverse()
        partials.append(Partial(tuple(Chain(t, min(hi, t + s.promote), reverse)
                                      for t in starts), promoted=True))
    chain = s.c == "accumulator"
    return Plan(s.operand_round, tuple(partials), c_start=chain and len(partials) == 1)
