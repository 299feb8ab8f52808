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
class Tile:
    """An output tile whose partials differ from the plan's (stream-K):
    rows r0..r1-1 and columns c0..c1-1."""

    r0: int
    r1: int
    c0: int
    c1: int
    partials: tuple[Partial, ...]


@dataclass(frozen=True)
class Plan:
    """Everything that decides the partials' words (module doc). ``tiles``:
    per-tile partials where output tiles differ (every element of D lies in
    exactly one; empty: every element has ``partials``). ``k_limit``: K
    elements read (None: all). ``lanes``: a CUDA-core fma kernel's
    (count, order), None for the instruction chains."""

    operand_round: str | None
    partials: tuple[Partial, ...]
    c_start: bool = False  # C is the first chain's accumulator (the chain, one split)
    tiles: tuple[Tile, ...] = ()
    k_limit: int | None = None
    lanes: tuple[int, str] | None = None


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


def make(s, k_inst: int, tiles: int, float_acc: bool = True, *, k: int | None = None,
         m: int | None = None, n: int | None = None) -> Plan:
    """The plan of schedule ``s`` for an instruction of K ``k_inst`` over
    ``tiles`` K tiles (module doc); ``k`` the K elements (for ``k_tail``),
    ``m``, ``n`` D's shape (for per-tile plans)."""
    if s.kernel == "fma":
        return Plan(s.operand_round, (), lanes=(s.lanes, s.lane_order))
    k_limit = None
    kb = k_inst if s.k_block is None else s.k_block
    if s.k_tail == "drop" and s.splits > 1 and k is not None and k % kb and k > kb:
        k_limit = k - k % kb  # the quirk reads whole blocks only (axes table)
        tiles = k_limit // k_inst
    partials = tuple(_partial(s, lo, hi, float_acc) for lo, hi in split_ranges(s, k_inst, tiles))
    chain = s.c == "accumulator"
    per_tile = ()
    if s.stream_units is not None:
        if m is None or n is None:
            raise MatmulError("schedule: stream_units needs D's shape")
        per_tile = stream_tiles(s, k_inst, tiles, m, n, float_acc)
    return Plan(s.operand_round, partials, c_start=chain and len(partials) == 1,
                tiles=per_tile, k_limit=k_limit)


def _partial(s, lo: int, hi: int, float_acc: bool) -> Partial:
    """The partial over tiles lo..hi: one chain, or promoted chunks."""
    reverse = s.k_order == "reverse"
    if s.promote is None:
        return Partial((Chain(lo, hi, reverse),))
    if not float_acc:
        raise MatmulError("schedule: promote needs a float accumulator")
    starts = list(range(lo, hi, s.promote))
    if reverse:
        starts.reverse()
    return Partial(tuple(Chain(t, min(hi, t + s.promote), reverse) for t in starts),
                   promoted=True)


def stream_tiles(s, k_inst: int, tiles: int, m: int, n: int, float_acc: bool
                 ) -> tuple[Tile, ...]:
    """Every output tile's partials under stream-K (axes table): tiles of
    tile_m x tile_n numbered in raster order; the last ``stream_tiles`` share
    their K blocks out among ``stream_units`` units in order, the first
    (total % units) units one block longer; a tile's partials are the pieces
    of its K the units cover, in K order. The others take all of K."""
    tm, tn = s.tile_m or m, s.tile_n or n
    rows, cols = -(-m // tm), -(-n // tn)
    count = rows * cols
    kb = k_inst if s.k_block is None else s.k_block
    per = kb // k_inst
    blocks = -(-tiles // per)
    sk = count if s.stream_tiles is None else s.stream_tiles
    if sk > count:
        raise MatmulError(f"schedule: stream_tiles={sk} but D has {count} tile(s) of "
                          f"{tm}x{tn}")
    total = sk * blocks
    units = s.stream_units
    if units > total:
        raise MatmulError(f"schedule: stream_units={units} but the stream tiles hold only "
                          f"{total} block(s) of {kb}")
    short, big = divmod(total, units)
    edges, at = set(), 0
    for u in range(units):  # unit boundaries in the stream tiles' blocks
        at += short + (u < big)
        edges.add(at)
    out = []
    for t in range(count):
        i, j = (t // cols, t % cols) if s.raster == "along_n" else (t % rows, t // rows)
        first = t - (count - sk)  # index among the stream tiles
        if first < 0:
            cuts = [0, blocks]
        else:
            base = first * blocks
            cuts = [0, *sorted(e - base for e in edges if base < e < base + blocks), blocks]
        parts = tuple(_partial(s, min(lo * per, tiles), min(hi * per, tiles), float_acc)
                      for lo, hi in zip(cuts[:-1], cuts[1:], strict=True))
        out.append(Tile(i * tm, min(m, (i + 1) * tm), j * tn, min(n, (j + 1) * tn), parts))
    return tuple(out)
