"""Simulated silicon: ``--device sim:NAME`` and ``--device sim:PATH.toml``.

A sim device behaves like the hardware harness, not like a model call. In
raw mode (:meth:`SimDevice.launch`) it takes the physical buffers of each
tile, reads every operand through the device's own layout (register
fragments or shared-memory core matrices, see :mod:`tcprobe.tiles`),
computes D for every slice word with its datapath model, and returns the
raw dump: the slice words carry D, every other word is garbage that differs
from launch to launch (like stale tensor memory). Result mode
(:meth:`SimDevice.run`) is a validated harness on top: pack, launch, unpack.

What it runs is its profile (:mod:`tcprobe.devices.sim_profile`); where the
operands sit, its own harness (:mod:`tcprobe.devices.sim_layout`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcprobe.models import amd_profiles, isa, sparsity
from tcprobe.models.cases import Cases
from tcprobe.models.datapath import Datapath, DatapathError, datapath_for, default_datapath
from tcprobe.models.formats import FormatError, get_format
from tcprobe.models.model import Model, ModelError
from tcprobe.tiles.spec import PhysicalBatch, TileSpec

from .base import Device, DeviceError, RawModeUnsupported
from .sim_layout import device_harness
from .sim_profile import AMD_BUILTIN, BUILTIN, SimProfile, gpu_arch, load_profile

__all__ = ["AMD_BUILTIN", "BUILTIN", "SimDevice", "SimProfile"]
CHUNK = 128  # tiles evaluated together in launch


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
        self._reads: dict = {}  # datapath -> the harness result mode reads through

    # -- opening ------------------------------------------------------------
    @classmethod
    def builtin(cls, name: str) -> SimDevice:
        key = name.lower()
        known = {**BUILTIN, **AMD_BUILTIN}
        if key not in known:
            raise DeviceError(f"unknown sim profile {name!r} (known: {', '.join(known)}, "
                              "or a .toml file)")
        gpu, families = known[key]
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
        if dp.family == "mfma" and self.gpu in amd_profiles.isa_amd.GPU_ARCH:
            amd_profiles.instruction_for(self.gpu, dp)  # a datapath of some v_mfma of the GPU
        return self.profile.model(dp)

    def supports(self, dp: Datapath) -> bool:
        try:
            self.model(dp)
            if not _result_mode_only(dp):
                self.harness(dp)
        except (ModelError, DeviceError, ValueError):
            return False
        return True

    def datapath(self, family: str, fmt: str, d_type: str | None = None) -> Datapath:
        """The datapath this device runs for an input format: the largest K its
        architecture's mma.sync has (V100: m8n8k4, T4: m16n8k8; the ISA table),
        and fp6/fp4 as mma kind::f8f6f4 on sm_120a."""
        f = get_format(fmt).name
        if family not in self.families:  # --instr mma on sim:mi300x: one error, not a guess
            raise ModelError(f"{self.name} does not run {family} (it runs "
                             f"{', '.join(self.families)})")
        if family == "mfma":  # the v_mfma a GEMM of the type runs (amd_profiles.blas_datapath)
            d = d_type or ("f64" if f == "f64" else "f32")
            return amd_profiles.blas_datapath(self.gpu or "", f, f, get_format(d).name)
        try:
            return datapath_for(gpu_arch(self.gpu), family, f, f, d_type)
        except isa.IsaError:  # a type the architecture's mma.sync lacks: the model refuses it
            return default_datapath(family, fmt, d_type)

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
        if _result_mode_only(dp):
            raise RawModeUnsupported(f"{self.name} runs {dp.id} in result mode only "
                                     f"({_no_tile_reason(dp)})")
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
            d[rep] = model.evaluate(cases, self.speed)[:, None]
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
        words = model.evaluate(cases, self.speed)
        return words[inverse.ravel()].reshape(t, w)

    # -- result mode ----------------------------------------------------------
    def run(self, dp: Datapath, cases: Cases) -> np.ndarray:
        """One word a case. A harness in result mode replicates each case
        across a tile through the device's own layout and reads the slice,
        where every word is that one dot product; on simulated silicon that
        is exactly one evaluation of the device's datapath, so it is
        computed directly (:meth:`run_through_tiles` takes the long way and
        the tests hold the two equal). After :meth:`read_through` result
        mode packs and reads through that harness instead, as a GPU harness
        built from a ladder's measured layout does."""
        if dp in self._reads:
            self.model(dp)
            return self._reads[dp].run(lambda batch: self.launch(dp, batch), cases)
        return self.model(dp).evaluate(cases, self.speed)

    def read_through(self, dp: Datapath, harness) -> None:
        """Result mode of ``dp`` through ``harness`` (a measured layout:
        what ``validate --model FINGERPRINT.json`` checks a fingerprint
        through); None: the device's own layout again."""
        if harness is None:
            self._reads.pop(dp, None)
        else:
            self._reads[dp] = harness

    def run_through_tiles(self, dp: Datapath, cases: Cases) -> np.ndarray:
        """Result mode the long way: pack each case into a tile, launch, read the slice."""
        self.model(dp)
        return self.harness(dp).run(lambda batch: self.launch(dp, batch), cases)

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


def _result_mode_only(dp: Datapath) -> bool:
    """Datapaths with no raw-mode tile: f64 (DMMA: 64-bit words), sm_120a's
    block-scaled mma.sync (the scale registers' byte and thread selectors are
    not modelled) and AMD's v_mfma (its 64-lane register layouts are not)."""
    return (get_format(dp.a_type).width == 64 or (dp.family == "mma" and dp.block_scaled)
            or dp.family == "mfma")


def _no_tile_reason(dp: Datapath) -> str:
    if dp.family == "mfma":
        return "AMD's v_mfma register layouts, 64 lanes a wave, are not modelled"
    if dp.block_scaled:
        return "the block-scale registers' byte and thread selectors are not modelled"
    return "the f64 register harness, two 32-bit words an element, is not modelled"


def _cases(dp: Datapath, a, b, c, sa, sb, meta) -> Cases:
    """Logical cases from what one slice word reads: a sparse A's stored
    values go to the positions its metadata selects (the others +0, inactive)."""
    active = None
    if dp.sparse:
        try:
            active, pos = sparsity.decode(dp, meta)
        except sparsity.SparsityError as e:
            raise DeviceError(f"launch: {e}") from None
        full = np.zeros((len(a), dp.k), np.uint32)
        np.put_along_axis(full, pos, a, axis=1)
        a = full
    return Cases(a, b, c, sa, sb, active)


def _scale_bytes(words: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Scale codes at byte slots (word * 4 + byte) of (T, words) scale buffers."""
    slots = np.asarray(slots)
    return (words[:, slots // 4] >> (8 * (slots % 4)).astype(np.uint32)) & np.uint32(0xFF)
