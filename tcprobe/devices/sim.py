"""Simulated silicon: ``--device sim:NAME`` and ``--device sim:PATH.toml``.

A sim device behaves like the hardware harness, not like a model call. In
raw mode (:meth:`SimDevice.launch`) it takes the physical buffers of each
tile, reads every operand through the device's own layout (register
fragments or shared-memory core matrices, see :mod:`tcprobe.harness`),
computes D for every slice word with its datapath model, and returns the
raw dump: the slice words carry D, every other word is garbage that differs
from launch to launch (like stale tensor memory). Result mode
(:meth:`SimDevice.run`) is a validated harness on top: pack, launch, unpack.

Built-in profiles run the named GPU profiles (``models/profiles.py``; tcgen05
through ``registry.auto``, so the tcgen05 models plug in where registered).
A TOML profile sets the datapath parameters and may move the operand layout
and permute the dump; the schema is in ``docs/sim-profiles.md``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from tcprobe.devices.base import Device, DeviceError, PhysicalBatch, TileSpec
from tcprobe.layout import core_matrix_layout
from tcprobe.models import registry
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, DatapathError, default_datapath
from tcprobe.models.engine import EngineParams, ParamError
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.model import FixedPointModel, Model, ModelError
from tcprobe.schema import SchemaError, check_profile

# Built-in sim profiles: name -> (GPU whose profile it runs, families it runs).
BUILTIN = {
    "v100": ("V100", ("mma",)),
    "a100": ("A100", ("mma",)),
    "ada": ("Ada", ("mma",)),
    "h100": ("H100", ("mma", "wgmma")),
    "h200": ("H200", ("mma", "wgmma")),
    "b200": ("B200", ("mma", "tcgen05")),
}
FAMILIES = ("mma", "wgmma", "tcgen05")
# Input formats a GPU's instructions take where its profile would accept more
# (V100's mma.sync is m8n8k4 with f16 only; bf16 and tf32 arrive with sm_80).
ONLY_FORMATS = {"V100": ("f16",)}
REQUIRED_KEYS = ("window_bits", "block_size", "zero_floor", "input_conversion",
                 "output_rounding", "zero_sign", "nan")
LAYOUT_KEYS = {"a_k_order", "b_k_order", "a_lbo", "a_sbo", "b_lbo", "b_sbo",
               "dump_permutation", "dump_seed"}
CHUNK = 128  # tiles evaluated together in launch


def tcgen05_plain_params(dp: Datapath) -> EngineParams:
    """Unscaled tcgen05 kinds where no tcgen05 model is registered: one block
    of K products, the 25-bit window, floors -133 (f32 D) / -21 (f16 D), inputs
    truncated, RZ into f32 or RNE into f16, +0 (notes: published parameters;
    MMA-Sim PR for the floors and the zero sign)."""
    f16_out = get_format(dp.d_type).name == "f16"
    return EngineParams(window_bits=25, block_size=dp.k, zero_floor=-21 if f16_out else -133,
                        input_conversion="truncate", output_rounding="rne" if f16_out else "rz",
                        zero_sign="positive")


@dataclass
class SimProfile:
    """What a sim device runs: per datapath a model, and its harness changes."""

    name: str
    gpu: str | None
    families: tuple[str, ...]
    params: dict | None = None  # custom profiles: EngineParams fields
    per_format: dict = field(default_factory=dict)  # input format -> overriding fields
    per_output: dict = field(default_factory=dict)  # output type -> overriding fields
    layout: dict = field(default_factory=dict)
    seed: int = 0
    source: str = "built-in"
    scaled: dict = field(default_factory=dict)  # [scaled.mx|mxf4|nvfp4]: ScaledParams fields

    def model(self, dp: Datapath) -> Model:
        if dp.family not in self.families:
            raise ModelError(f"sim:{self.name} does not run {dp.family} "
                             f"(it runs {', '.join(self.families)})")
        only = ONLY_FORMATS.get(self.gpu or "")
        if only and (get_format(dp.a_type).name not in only or get_format(dp.b_type).name not in only):
            raise ModelError(f"sim:{self.name} ({self.gpu}) takes {', '.join(only)} inputs only")
        if self.params is None:
            if dp.family == "tcgen05" and "tcgen05" not in registry.AUTO_BY_FAMILY:
                if dp.block_scaled or dp.is_integer:
                    raise ModelError(f"no tcgen05 model registered for {dp.id}")
                return FixedPointModel(f"sim:{self.name}", dp, "tcgen05 published parameters",
                                       tcgen05_plain_params(dp))
            return registry.auto(dp, self.gpu)
        if dp.block_scaled:
            return self._scaled_model(dp)
        if dp.is_integer:
            raise ModelError(f"sim:{self.name} (a TOML profile) runs float datapaths")
        fields_ = dict(self.params)
        fields_.update(self.per_format.get(get_format(dp.a_type).name, {}))
        fields_.update(self.per_output.get(get_format(dp.d_type).name, {}))
        try:
            p = EngineParams.from_dict(fields_)
            p.check()
        except (ParamError, TypeError) as e:
            raise DeviceError(f"sim:{self.name}: {e}") from None
        return FixedPointModel(f"sim:{self.name}", dp, self.source, p)


    def _scaled_model(self, dp: Datapath) -> Model:
        """Block-scaled kinds of a TOML profile: the B200 tcgen05 parameters of
        the kind, with the profile's [scaled.GROUP] keys over them."""
        from tcprobe.models.tcgen05 import B200_TCGEN05, check_datapath
        from tcprobe.models.tcgen05_scaled import BlockScaledModel

        if dp.family != "tcgen05":
            raise ModelError(f"{dp.id}: block scales are a tcgen05 feature")
        check_datapath(dp)
        params = B200_TCGEN05.scaled_params(dp).replace(**self.scaled.get(scaled_group(dp), {}))
        return BlockScaledModel(f"sim:{self.name}", dp, self.source, params)


SCALED_GROUPS = ("mx", "mxf4", "nvfp4")


def scaled_group(dp: Datapath) -> str:
    """The [scaled.GROUP] table that sets a block-scaled datapath: mx
    (kind::mxf8f6f4), nvfp4 (ue4m3 scales) or mxf4 (mxf4, mxf4nvf4 with ue8m0)."""
    if dp.kind == "mxf8f6f4":
        return "mx"
    return "nvfp4" if dp.scale_type == "ue4m3" else "mxf4"


def _order(spec, k: int, what: str, seed: int) -> np.ndarray | None:
    """A K permutation from a list, 'reverse', 'shuffle' or 'rotate:N'."""
    if spec is None:
        return None
    if isinstance(spec, str):
        word, _, arg = spec.partition(":")
        if word == "reverse":
            return np.arange(k)[::-1].copy()
        if word == "shuffle":
            return np.random.default_rng(int(arg or seed)).permutation(k)
        if word == "rotate":
            return np.roll(np.arange(k), -int(arg or 1))
        raise DeviceError(f"{what}: unknown order {spec!r} (a list, reverse, shuffle[:SEED], "
                          "rotate[:N])")
    order = np.asarray(spec, np.int64)
    if sorted(order.tolist()) != list(range(k)):
        raise DeviceError(f"{what} must be a permutation of 0..{k - 1} here ({len(order)} entries)")
    return order


class SimDevice(Device):
    """A simulated GPU (see the module doc)."""

    simulated = True

    def __init__(self, profile: SimProfile | str):
        if isinstance(profile, str):  # SimDevice("h200") or SimDevice("path.toml")
            profile = SimDevice.open(profile).profile
        self.profile = profile
        self.name = f"sim:{profile.name}" if profile.source == "built-in" else \
            f"sim:{profile.source}"
        self.gpu = profile.gpu
        self.families = profile.families
        self._rng = np.random.default_rng(profile.seed + 0x5EED)
        self._harness: dict = {}

    # -- opening ------------------------------------------------------------
    @classmethod
    def builtin(cls, name: str) -> SimDevice:
        key = name.lower()
        if key not in BUILTIN:
            raise DeviceError(f"unknown sim profile {name!r} (known: {', '.join(BUILTIN)}, "
                              "or a .toml file)")
        gpu, families = BUILTIN[key]
        return cls(SimProfile(key, gpu, families))

    @classmethod
    def from_toml(cls, path: str | Path) -> SimDevice:
        return cls(load_profile(path))

    @classmethod
    def open(cls, rest: str) -> SimDevice:
        if rest.lower().endswith(".toml") or Path(rest).suffix == ".toml":
            return cls.from_toml(rest)
        return cls.builtin(rest)

    # -- what it runs ---------------------------------------------------------
    def model(self, dp: Datapath) -> Model:
        return self.profile.model(dp)

    def supports(self, dp: Datapath) -> bool:
        try:
            self.model(dp)
            self.harness(dp)
        except (ModelError, DeviceError, ValueError):
            return False
        return True

    def datapath(self, family: str, fmt: str, d_type: str | None = None) -> Datapath:
        """The datapath this device runs for an input format (V100's mma is m8n8k4)."""
        dp = default_datapath(family, fmt, d_type)
        if self.gpu == "V100" and family == "mma" and dp.a_type == "f16":
            dp = dp.with_k(4)
        return dp

    def preferred_family(self, fmt: str) -> str:
        """The newest family this device runs for ``fmt``."""
        for fam in reversed(self.families):
            try:
                if self.supports(self.datapath(fam, fmt)):
                    return fam
            except (DatapathError, FormatError):
                continue
        return self.families[0]

    # -- raw mode -------------------------------------------------------------
    def harness(self, dp: Datapath):
        """The device's own harness: the documented one, moved as the profile says."""
        if dp not in self._harness:
            self._harness[dp] = device_harness(dp, self.profile.layout, self.profile.seed)
        return self._harness[dp]

    def tile(self, dp: Datapath) -> TileSpec:
        self.model(dp)
        return self.harness(dp).tile

    def launch(self, dp: Datapath, batch: PhysicalBatch) -> np.ndarray:
        model = self.model(dp)
        h = self.harness(dp)
        t = h.tile
        n = len(batch)
        bufs = [("a", batch.a, t.a_slots), ("b", batch.b, t.b_slots), ("c", batch.c, t.c_slots)]
        if dp.block_scaled:
            bufs += [("scale_a", batch.scale_a, t.scale_slots),
                     ("scale_b", batch.scale_b, t.scale_slots)]
        if dp.sparse:
            bufs.append(("meta", batch.meta, t.meta_slots))
        for name, arr, size in bufs:
            if arr is None or arr.ndim != 2 or arr.shape != (n, size):
                shape = None if arr is None else arr.shape
                raise DeviceError(f"launch: {name} buffers must be ({n}, {size}), not {shape}")
        dump = self._rng.integers(0, 1 << 32, (n, t.dump_words), dtype=np.uint64).astype(np.uint32)
        d = np.zeros((n, len(h.elems)), np.uint32)  # D of every slice element
        c_el = h.elements(batch.c)
        # tiles whose every lane holds one value (a replicated case): one dot each
        uniform = np.ones(n, bool)
        for buf, lanes in ((batch.a, h.a_lanes), (batch.b, h.b_lanes)):
            for slots in lanes:
                v = buf[:, slots]
                uniform &= (v == v[:, :1]).all(axis=1)
        cv = c_el[:, np.unique(h.c_read)]
        uniform &= (cv == cv[:, :1]).all(axis=1)
        if dp.block_scaled:
            for buf, read in ((batch.scale_a, h.sa_read), (batch.scale_b, h.sb_read)):
                for j in range(read.shape[1]):
                    v = _scale_bytes(buf, np.unique(read[:, j]))
                    uniform &= (v == v[:, :1]).all(axis=1)
        if dp.sparse:
            for j in range(h.meta_read.shape[1]):
                v = batch.meta[:, np.unique(h.meta_read[:, j])]
                uniform &= (v == v[:, :1]).all(axis=1)
        rep = np.flatnonzero(uniform)
        if len(rep):
            pick = lambda buf, read: None if buf is None else _scale_bytes(buf[rep], read[0])  # noqa: E731
            meta = batch.meta[rep][:, h.meta_read[0]] if dp.sparse else None
            cases = _cases(dp, batch.a[rep][:, h.a_read[0]], batch.b[rep][:, h.b_read[0]],
                           c_el[rep, h.c_read[0]],
                           pick(batch.scale_a, h.sa_read) if dp.block_scaled else None,
                           pick(batch.scale_b, h.sb_read) if dp.block_scaled else None, meta)
            d[rep] = model.evaluate(cases)[:, None]
        rest = np.flatnonzero(~uniform)
        for lo in range(0, len(rest), CHUNK):
            idx = rest[lo:lo + CHUNK]
            d[idx] = self._tile_results(dp, model, h, batch, c_el, idx)
        # place the elements into their words (an f16 pair shares a register)
        word, half = np.divmod(h.elems, h.halves)
        if h.halves == 2:
            el = h.elements(dump)
            el[:, h.elems] = d
            dump = (el[:, 0::2] | (el[:, 1::2] << np.uint32(16))).astype(np.uint32)
        else:
            dump[:, word] = d
        return dump

    def _tile_results(self, dp, model, h, batch, c_el, idx) -> np.ndarray:
        """D of every slice element of tiles ``idx``, each distinct operand set once."""
        a = batch.a[idx][:, h.a_read]  # (t, W, K) (K/2 stored values for a sparse A)
        b = batch.b[idx][:, h.b_read]
        c = c_el[idx][:, h.c_read]  # (t, W)
        t, w, ka = a.shape
        k = b.shape[2]
        parts = [a.reshape(-1, ka), b.reshape(-1, k), c.reshape(-1, 1)]
        if dp.block_scaled:
            parts.append(_scale_bytes(batch.scale_a[idx], h.sa_read).reshape(t * w, -1))
            parts.append(_scale_bytes(batch.scale_b[idx], h.sb_read).reshape(t * w, -1))
        if dp.sparse:
            parts.append(batch.meta[idx][:, h.meta_read].reshape(t * w, -1))
        rows = np.ascontiguousarray(np.concatenate(parts, axis=1).astype(np.uint32))
        keys = rows.view(np.dtype((np.void, 4 * rows.shape[1]))).ravel()
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        pick = lambda x: None if x is None else x[first]  # noqa: E731
        n_s = 2 if dp.block_scaled else 0
        cases = _cases(dp, parts[0][first], parts[1][first], parts[2][first, 0],
                       pick(parts[3]) if n_s else None, pick(parts[4]) if n_s else None,
                       pick(parts[3 + n_s]) if dp.sparse else None)
        words = model.evaluate(cases)
        return words[inverse.ravel()].reshape(t, w)

    # -- result mode ----------------------------------------------------------
    def run(self, dp: Datapath, cases: Cases) -> np.ndarray:
        """One word a case. A harness in result mode replicates each case
        across a tile through the device's own layout and reads the slice,
        where every word is that one dot product; on simulated silicon that
        is exactly one evaluation of the device's datapath, so it is
        computed directly (:meth:`run_through_tiles` takes the long way and
        the tests hold the two equal)."""
        return self.model(dp).evaluate(cases)

    def run_through_tiles(self, dp: Datapath, cases: Cases) -> np.ndarray:
        """Result mode the long way: pack each case into a tile, launch, read the slice."""
        self.model(dp)
        h = self.harness(dp)
        out = np.empty(len(cases), np.uint32)
        step = 2048
        for lo in range(0, len(cases), step):
            part = cases.take(slice(lo, lo + step))
            out[lo:lo + len(part)] = h.unpack(self.launch(dp, h.pack(part)))
        return out

    def info(self) -> dict:
        p = self.profile
        out = {**super().info(), "profile": p.name, "gpu": p.gpu, "families": list(p.families),
               "source": p.source}
        if p.params is not None:
            out["params"] = p.params
        if p.layout:
            out["layout"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                             for k, v in p.layout.items()}
        return out


def _cases(dp: Datapath, a, b, c, sa, sb, meta) -> Cases:
    """Logical cases from what one slice word reads: a sparse A's stored
    values go to the positions its metadata selects (the others +0, inactive)."""
    active = None
    if dp.sparse:
        from tcprobe.harness import HarnessError, sparse_decode

        try:
            active, pos = sparse_decode(dp, meta)
        except HarnessError as e:
            raise DeviceError(f"launch: {e}") from None
        full = np.zeros((len(a), dp.k), np.uint32)
        np.put_along_axis(full, pos, a, axis=1)
        a = full
    return Cases(a, b, c, sa, sb, active)


def _scale_bytes(words: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Scale codes at byte slots (word * 4 + byte) of (T, words) scale buffers."""
    slots = np.asarray(slots)
    return (words[:, slots // 4] >> (8 * (slots % 4)).astype(np.uint32)) & np.uint32(0xFF)


# ---------------------------------------------------------------------------
# The device's own harness.


def device_harness(dp: Datapath, layout: dict, seed: int = 0):
    """The documented harness of ``dp`` with the profile's layout changes:
    ``a_k_order``/``b_k_order`` (device lane k reads the slots the documented
    layout gives lane order[k]), ``a_lbo``/``a_sbo``/``b_lbo``/``b_sbo``
    (shared-memory families: other core-matrix strides), ``dump_permutation``
    (word j of the dump is documented word perm[j])."""
    from tcprobe.harness import Harness, HarnessError, harness_for

    h = harness_for(dp)
    if not layout:
        return h
    a_read, b_read, c_read = h.a_read.copy(), h.b_read.copy(), h.c_read.copy()
    for op in ("a", "b"):
        k = a_read.shape[1] if op == "a" else b_read.shape[1]  # a sparse A stores K/2
        lbo, sbo = layout.get(f"{op}_lbo"), layout.get(f"{op}_sbo")
        if (lbo is not None or sbo is not None) and dp.family != "mma":
            # shared-memory strides: mma.sync reads registers and ignores them
            lay = h.a_layout if op == "a" else h.b_layout
            (_, _), (t, _) = lay.shape
            (_, sbo0), (_, lbo0) = lay.stride
            rows = h.tile.m if op == "a" else h.tile.n
            new = core_matrix_layout(rows, k, t, int(lbo if lbo is not None else lbo0),
                                     int(sbo if sbo is not None else sbo0))
            idx = h.word_rows if op == "a" else h.word_cols
            table = new.table[idx]
            size = h.tile.a_slots if op == "a" else h.tile.b_slots
            if table.max() >= size:
                raise DeviceError(f"{op}_lbo/{op}_sbo put {op.upper()} past its "
                                  f"{size}-slot buffer")
            if op == "a":
                a_read = table
            else:
                b_read = table
    for op in ("a", "b"):
        k = a_read.shape[1] if op == "a" else b_read.shape[1]
        order = _order(layout.get(f"{op}_k_order"), k, f"{op}_k_order", seed)
        if order is not None:
            if op == "a":
                a_read = a_read[:, order]
            else:
                b_read = b_read[:, order]
    slice_ = h.elems
    spec = layout.get("dump_permutation")
    if spec is not None:
        n = h.tile.dump_words
        if isinstance(spec, str):
            if spec == "reverse":
                perm = np.arange(n)[::-1].copy()
            elif spec.startswith("shuffle"):
                arg = spec.partition(":")[2]
                perm = np.random.default_rng(int(arg or layout.get("dump_seed", seed))).permutation(n)
            else:
                raise DeviceError(f"dump_permutation: unknown {spec!r} (reverse, shuffle[:SEED], "
                                  "or a list)")
        else:
            perm = np.asarray(spec, np.int64)
            if sorted(perm.tolist()) != list(range(n)):
                raise DeviceError(f"dump_permutation must be a permutation of 0..{n - 1} "
                                  f"for {dp.id}")
        inv = np.argsort(perm)
        word, half = np.divmod(slice_, h.halves)
        slice_ = inv[word] * h.halves + half
    try:
        return Harness.from_reads(dp, h.tile, slice_, a_read, b_read, c_read, c_slots=h.c_slots,
                                  sa_read=h.sa_read, sb_read=h.sb_read, meta_read=h.meta_read,
                                  a_layout=None,
                                  b_layout=None, c_layout=h.c_layout, d_layout=None,
                                  word_rows=h.word_rows, word_cols=h.word_cols,
                                  a_packing=h.a_packing, b_packing=h.b_packing,
                                  halves=h.halves, elem_mask=h.elem_mask, source="device truth")
    except HarnessError as e:
        raise DeviceError(f"the profile's layout is not a usable harness for {dp.id}: {e}") from None


# ---------------------------------------------------------------------------
# TOML profiles.


def _engine_fields(table: dict, where: str) -> dict:
    known = set(EngineParams.__dataclass_fields__)
    out = {}
    for key, value in table.items():
        if key not in known:
            raise DeviceError(f"{where}: unknown key {key!r}")
        out[key] = value
    return out


@cache
def _load(path: str, mtime: float) -> SimProfile:
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as e:
        raise DeviceError(f"{p}: not a TOML profile ({e})") from None
    except UnicodeDecodeError as e:
        raise DeviceError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        data = check_profile(data, str(p))  # the declarative schema, before anything runs
    except SchemaError as e:
        raise DeviceError(str(e)) from None
    top = {k: v for k, v in data.items() if not isinstance(v, dict)}
    meta = {k: top.pop(k) for k in ("name", "gpu", "families", "seed") if k in top}
    missing = [k for k in REQUIRED_KEYS if k not in top]
    if missing:
        raise DeviceError(f"{p}: missing key(s) {', '.join(missing)} (see docs/sim-profiles.md)")
    params = _engine_fields(top, str(p))
    try:
        EngineParams.from_dict(params).check()
    except (ParamError, TypeError) as e:
        raise DeviceError(f"{p}: {e}") from None
    families = meta.get("families", list(FAMILIES))
    if isinstance(families, str):
        families = [families]
    bad = [f for f in families if f not in FAMILIES]
    if bad or not families:
        raise DeviceError(f"{p}: families must be among {', '.join(FAMILIES)}")
    per_format, per_output = {}, {}
    for name, table in data.get("format", {}).items():
        per_format[get_format(name).name] = _engine_fields(table, f"{p} [format.{name}]")
    for name, table in data.get("output", {}).items():
        per_output[get_format(name).name] = _engine_fields(table, f"{p} [output.{name}]")
    layout = dict(data.get("layout", {}))
    extra = set(layout) - LAYOUT_KEYS
    if extra:
        raise DeviceError(f"{p} [layout]: unknown key(s) {', '.join(sorted(extra))}")
    unknown_tables = set(k for k, v in data.items() if isinstance(v, dict)) - {
        "format", "output", "layout", "scaled"}
    if unknown_tables:
        raise DeviceError(f"{p}: unknown table(s) {', '.join(sorted(unknown_tables))}")
    scaled = _scaled_tables(data.get("scaled", {}), p)
    return SimProfile(str(meta.get("name", p.stem)), meta.get("gpu"), tuple(families), params,
                      per_format, per_output, layout, int(meta.get("seed", 0)), str(p), scaled)


def _scaled_tables(tables: dict, p: Path) -> dict:
    """[scaled.mx], [scaled.mxf4], [scaled.nvfp4]: ScaledParams fields, checked."""
    from tcprobe.models.tcgen05_scaled import ScaledParams

    known = set(ScaledParams.__dataclass_fields__)
    out = {}
    for group, table in tables.items():
        if group not in SCALED_GROUPS or not isinstance(table, dict):
            raise DeviceError(f"{p}: [scaled.{group}] is not a table of "
                              f"{', '.join(SCALED_GROUPS)}")
        bad = sorted(set(table) - known)
        if bad:
            raise DeviceError(f"{p} [scaled.{group}]: unknown key(s) {', '.join(bad)} "
                              f"(keys: {', '.join(sorted(known))})")
        try:
            ScaledParams().replace(**table)
        except TypeError as e:
            raise DeviceError(f"{p} [scaled.{group}]: {e}") from None
        out[group] = dict(table)
    return out


def load_profile(path: str | Path) -> SimProfile:
    """Read a TOML sim profile (schema: docs/sim-profiles.md)."""
    p = Path(path)
    if not p.is_file():
        raise DeviceError(f"no sim profile at {p}")
    return _load(str(p.resolve()), p.stat().st_mtime)

