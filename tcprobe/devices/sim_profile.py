"""Sim profiles: what a ``sim:`` device runs, built in or read from TOML.

Built-in profiles run the named GPU profiles (``models/profiles.py``; tcgen05
through ``registry.auto``, so the tcgen05 models plug in where registered).
A TOML profile sets the datapath parameters and may move the operand layout
and permute the dump (:mod:`tcprobe.devices.sim_layout`); the schema is in
``docs/sim-profiles.md``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tcprobe.models import gpus, isa, registry
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, ParamError
from tcprobe.models.formats import get_format, to_fraction
from tcprobe.models.model import FixedPointModel, Model, ModelError
from tcprobe.models.profiles import profile_for_gpu
from tcprobe.schema import SchemaError
from tcprobe.schema_profile import PROFILE_META, check_profile

from .base import DeviceError

# Built-in sim profiles: name -> (GPU whose profile it runs, families it runs),
# from the GPU catalogue (models/gpus.py). AMD CDNA (v_mfma) runs MMA-Sim's
# parameters per generation (models/amd_profiles.py), not measured by tcprobe;
# result mode only (AMD's lane layouts are not modelled).
BUILTIN = gpus.builtin_sims("nvidia")
AMD_BUILTIN = gpus.builtin_sims("amd")
FAMILIES = isa.FAMILIES


def gpu_arch(gpu: str | None) -> str | None:
    """The architecture of a GPU's profile (sm_70 for V100), None without one."""
    if not gpu:
        return None
    try:
        return profile_for_gpu(gpu).arch
    except ModelError:
        return None


def only_formats(gpu: str | None) -> tuple[str, ...] | None:
    """Input formats a GPU's mma.sync takes where its profile would accept more
    (the ISA table's ARCH_MMA_SHAPES: V100 and T4 run f16 only), else None."""
    shapes = isa.ARCH_MMA_SHAPES.get(gpu_arch(gpu) or "")
    return tuple(shapes) if shapes else None


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
    mfma: dict | None = None  # an AMD TOML profile's [mfma] design (None: not one)

    def model(self, dp: Datapath) -> Model:
        if dp.family not in self.families:
            raise ModelError(f"sim:{self.name} does not run {dp.family} "
                             f"(it runs {', '.join(self.families)})")
        if self.mfma is not None:
            return self._mfma_model(dp)
        only = only_formats(self.gpu)
        if only and (get_format(dp.a_type).name not in only or get_format(dp.b_type).name not in only):
            raise ModelError(f"sim:{self.name} ({self.gpu}) takes {', '.join(only)} inputs only")
        if self.params is None:
            return registry.auto(dp, self.gpu)
        if dp.block_scaled:
            return self._scaled_model(dp)
        if dp.is_integer:
            raise ModelError(f"sim:{self.name} (a TOML profile) runs float datapaths")
        if get_format(dp.a_type).width == 64:
            raise ModelError(f"sim:{self.name} (a TOML profile) sets fixed-point engine "
                             "parameters; f64 datapaths run on the built-in sim devices")
        fields_ = dict(self.params)
        fields_.update(self.per_format.get(get_format(dp.a_type).name, {}))
        fields_.update(self.per_output.get(get_format(dp.d_type).name, {}))
        _check_nan(self.name, dp, fields_.get("nan"),
                   "nan" in self.per_output.get(get_format(dp.d_type).name, {}))
        try:
            p = EngineParams.from_dict(fields_)
            p.check()
        except (ParamError, TypeError) as e:
            raise DeviceError(f"sim:{self.name}: {e}") from None
        return FixedPointModel(f"sim:{self.name}", dp, self.source, p)


    def _mfma_model(self, dp: Datapath) -> Model:
        """An AMD profile: its GPU's v_mfma table gates the datapath; the
        [mfma] design (or, without one, the GPU's own) computes it."""
        from tcprobe.models import amd_profiles
        from tcprobe.models.amd import MfmaModel, MfmaParams

        base = amd_profiles.model_for(dp, self.gpu)  # ModelError: no v_mfma of the GPU runs dp
        if not self.mfma:
            return base
        from tcprobe.models.amd import check_params

        p = MfmaParams(**self.mfma)
        try:  # the design's own checks on dp: ftz's P dividing K, an f32 D but under fma
            check_params(p, dp)
            return MfmaModel(f"sim:{self.name}", dp, self.source, p)
        except ModelError as e:
            raise ModelError(f"sim:{self.name}: {e}") from None

    def _scaled_model(self, dp: Datapath) -> Model:
        """Block-scaled kinds of a TOML profile: the B200 tcgen05 parameters of
        the kind, with the profile's [scaled.GROUP] keys over them."""
        from tcprobe.models.tcgen05 import B200_TCGEN05, check_datapath, scaled_group
        from tcprobe.models.tcgen05_scaled import BlockScaledModel

        if dp.family != "tcgen05":
            raise ModelError(f"{dp.id}: block scales are a tcgen05 feature")
        check_datapath(dp)
        params = B200_TCGEN05.scaled_params(dp).replace(**self.scaled.get(scaled_group(dp), {}))
        return BlockScaledModel(f"sim:{self.name}", dp, self.source, params)


# ---------------------------------------------------------------------------
# TOML profiles.


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
    # what the schema read is the profile: every key, value and table checked
    top = {k: v for k, v in data.items() if not isinstance(v, dict)}
    meta = {k: top.pop(k) for k in PROFILE_META if k in top}
    if "mfma" in data:  # an AMD profile (the schema checked it is nothing else)
        return SimProfile(str(meta.get("name", p.stem)), str(meta["gpu"]).upper(), ("mfma",),
                          None, seed=int(meta.get("seed", 0)), source=str(p),
                          mfma=dict(data["mfma"]))
    per_format = {get_format(name).name: t for name, t in data["format"].items()}
    per_output = {get_format(name).name: t for name, t in data["output"].items()}
    return SimProfile(str(meta.get("name", p.stem)), meta.get("gpu"),
                      tuple(meta.get("families", FAMILIES)), top, per_format, per_output,
                      dict(data.get("layout", {})), int(meta.get("seed", 0)), str(p),
                      dict(data["scaled"]))


def load_profile(path: str | Path) -> SimProfile:
    """Read a TOML sim profile (schema: docs/sim-profiles.md)."""
    p = Path(path)
    if not p.is_file():
        raise DeviceError(f"no sim profile at {p}")
    return _load(str(p.resolve()), p.stat().st_mtime)


def _check_nan(name: str, dp: Datapath, nan, own: bool) -> None:
    """A profile's ``nan`` word is a NaN of the output it writes: a word wider
    than D (a top-level 32-bit word on an f16 D, which would be cut to its low
    bits) or one that is no NaN (``nan = 0x3f800000`` would write 1.0 for
    every NaN) is an error naming the key, never a silent guess. ``own``:
    the word came from the output's own [output.NAME] table."""
    if nan is None:
        return
    fmt = get_format(dp.d_type)
    key = f"output.{fmt.name}.nan" if own else "nan"
    if int(nan) > fmt.word_mask:
        raise DeviceError(f"sim:{name}: {key}: {int(nan):#x} does not fit {dp.id}'s "
                          f"{fmt.name} D ({fmt.word_mask.bit_length()} bits): set "
                          f"[output.{fmt.name}] nan to a {fmt.name} NaN word")
    if to_fraction(fmt, int(nan)) != "nan":
        raise DeviceError(f"sim:{name}: {key}: {int(nan):#x} is no NaN of {fmt.name} (it is "
                          f"{to_fraction(fmt, int(nan))}): a device writes a NaN word for a NaN")

