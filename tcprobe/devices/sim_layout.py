"""The sim device's own harness: the documented one, moved as a TOML profile says.

Each ``[layout]`` key is a composition with the documented layout
(:mod:`tcprobe.tiles.layout`), never a hand-permuted table:

- ``a_lbo`` / ``a_sbo`` / ``b_lbo`` / ``b_sbo`` (shared-memory families):
  the core-matrix layout with other strides;
- ``a_k_order`` / ``b_k_order``: the operand layout with its K mode
  reordered (device lane k reads the slots the documented layout gives lane
  order[k]);
- ``dump_permutation``: the inverse reordering of the dump words after the
  D layout (word j of the dump is documented word perm[j]).

Orders are a list, ``reverse``, ``shuffle[:SEED]`` or ``rotate[:N]``.
"""

from __future__ import annotations

import numpy as np

from tcprobe.models.datapath import Datapath
from tcprobe.tiles import layout as lay
from tcprobe.tiles.harness import Harness, HarnessError
from tcprobe.tiles.tables import harness_for

from .base import DeviceError


def _order(spec, k: int, what: str, seed: int) -> lay.TableLayout | None:
    """A reordering of 0..k-1 from a list, 'reverse', 'shuffle[:SEED]' or 'rotate[:N]'."""
    if spec is None:
        return None
    if isinstance(spec, str):
        word, _, arg = spec.partition(":")
        if word == "reverse":
            return lay.reverse(k)
        if word == "shuffle":
            return lay.shuffle(k, int(arg or seed))
        if word == "rotate":
            return lay.rotate(k, int(arg or 1))
        raise DeviceError(f"{what}: unknown order {spec!r} (a list, reverse, shuffle[:SEED], "
                          "rotate[:N])")
    order = np.asarray(spec, np.int64)
    if sorted(order.tolist()) != list(range(k)):
        raise DeviceError(f"{what} must be a permutation of 0..{k - 1} here ({len(order)} entries)")
    return lay.reorder(order)


def _operand_layout(h: Harness, op: str, layout: dict, seed: int):
    """The device's layout of operand ``op`` (a or b): strides, then K order."""
    dp = h.datapath
    base = h.a_layout if op == "a" else h.b_layout
    lbo, sbo = layout.get(f"{op}_lbo"), layout.get(f"{op}_sbo")
    if (lbo is not None or sbo is not None) and dp.family != "mma":
        # shared-memory strides: mma.sync reads registers and ignores them
        (_, _), (t, _) = base.shape
        (_, sbo0), (_, lbo0) = base.stride
        rows, k = base.dims
        base = lay.core_matrix_layout(rows, k, t, int(lbo if lbo is not None else lbo0),
                                      int(sbo if sbo is not None else sbo0))
        size = h.tile.a_slots if op == "a" else h.tile.b_slots
        read = base.table[h.word_rows if op == "a" else h.word_cols]  # the rows the slice reads
        if read.max() >= size:
            raise DeviceError(f"{op}_lbo/{op}_sbo put {op.upper()} past its {size}-slot buffer")
    order = _order(layout.get(f"{op}_k_order"), base.dims[1], f"{op}_k_order", seed)
    return base if order is None else base.permute(1, order)


def _dump_order(h: Harness, spec, layout: dict, seed: int) -> lay.TableLayout | None:
    """Where the device puts each documented dump word: the inverse of the
    profile's permutation (word j of the dump is documented word perm[j])."""
    if spec is None:
        return None
    n = h.tile.dump_words
    if isinstance(spec, str):
        if spec == "reverse":
            perm = lay.reverse(n)
        elif spec.startswith("shuffle"):
            arg = spec.partition(":")[2]
            perm = lay.shuffle(n, int(arg or layout.get("dump_seed", seed)))
        else:
            raise DeviceError(f"dump_permutation: unknown {spec!r} (reverse, shuffle[:SEED], "
                              "or a list)")
    else:
        perm = np.asarray(spec, np.int64)
        if sorted(perm.tolist()) != list(range(n)):
            raise DeviceError(f"dump_permutation must be a permutation of 0..{n - 1} "
                              f"for {h.datapath.id}")
        perm = lay.reorder(perm)
    return lay.inverse(perm)


def device_harness(dp: Datapath, layout: dict, seed: int = 0) -> Harness:
    """The documented harness of ``dp`` with the profile's layout changes
    (see the module doc)."""
    h = harness_for(dp)
    if not layout:
        return h
    a_lay = _operand_layout(h, "a", layout, seed)
    b_lay = _operand_layout(h, "b", layout, seed)
    d_lay, elems = h.d_layout, h.elems
    words = _dump_order(h, layout.get("dump_permutation"), layout, seed)
    if words is not None:
        # elements: (half, word) -> the moved word's element; D goes through it
        moved = lay.Layout((h.halves, h.tile.dump_words), (1, h.halves)).permute(1, words)
        d_lay = moved.compose(h.d_layout)
        elems = moved.flat[h.elems]
    try:
        return Harness.from_reads(dp, h.tile, elems, a_lay.table[h.word_rows],
                                  b_lay.table[h.word_cols], h.c_read, c_slots=h.c_slots,
                                  sa_read=h.sa_read, sb_read=h.sb_read, meta_read=h.meta_read,
                                  a_layout=a_lay, b_layout=b_lay, c_layout=h.c_layout,
                                  d_layout=d_lay, word_rows=h.word_rows, word_cols=h.word_cols,
                                  a_packing=h.a_packing, b_packing=h.b_packing,
                                  halves=h.halves, elem_mask=h.elem_mask, source="device truth",
                                  sa_copies=h.sa_copies, sb_copies=h.sb_copies)
    except HarnessError as e:
        raise DeviceError(f"the profile's layout is not a usable harness for {dp.id}: {e}") from None
