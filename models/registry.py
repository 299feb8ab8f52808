"""Model names a user can pass to ``--model``, and how ``auto`` picks one."""

from __future__ import annotations

from collections.abc import Callable

from tcprobe.models.datapath import Datapath

from .emulated import EMULATED, emulated_for
from .f64 import is_f64
from .model import Model, ModelError
from .profiles import BASELINES, F64_BASELINES, PROFILES, profile_for_gpu

# Extra resolvers register here: name -> builder(datapath) (tcgen05 models,
# fitted profiles). Each builder raises ModelError for datapaths it lacks.
EXTRA: dict[str, Callable[[Datapath], Model]] = {}
# Resolvers for 'auto' by family, tried before the HMMA GPU profiles.
AUTO_BY_FAMILY: dict[str, Callable[[Datapath, str | None], Model]] = {}

# fp8 mma.sync as the compiler emulates it on sm_90/sm_100 (models/emulated.py).
EXTRA.update({name: prof.model for name, prof in EMULATED.items()})


def names() -> list[str]:
    return ["auto", *PROFILES, *EXTRA, *BASELINES]


def auto(dp: Datapath, gpu: str | None) -> Model:
    """The profile that the GPU and the datapath's family name."""
    if dp.family in AUTO_BY_FAMILY:
        return AUTO_BY_FAMILY[dp.family](dp, gpu)
    if not gpu:
        raise ModelError(f"--model auto needs the GPU of the capture ({dp.id} has none)")
    emulated = emulated_for(dp, gpu) if dp.family == "mma" else None
    if emulated is not None:
        return emulated.model(dp)
    return profile_for_gpu(gpu).model(dp)


def check_name(name: str) -> str:
    """``name``'s key when a model is called that (whatever the datapath); an
    unknown name is an error of its own, never a model that "does not apply"."""
    key = name.strip().lower()
    if key.endswith(".toml"):  # a custom sim profile is a device, not a model
        raise ModelError(f"{name!r} is a sim device profile, not a model: run it as --device "
                         f"sim:PATH.toml (a model is one of {', '.join(names())}, or a "
                         "fit/ladder JSON)")
    if key not in ("auto", *PROFILES, *EXTRA, *BASELINES):
        raise ModelError(f"unknown model {name!r} (known: {', '.join(names())})")
    return key


def resolve(name: str, dp: Datapath, gpu: str | None = None) -> Model:
    """The model called ``name`` for datapath ``dp``."""
    key = check_name(name)
    if key == "auto":
        return auto(dp, gpu)
    if key in PROFILES:
        return PROFILES[key].model(dp)
    if key in EXTRA:
        return EXTRA[key](dp)
    if key in BASELINES:
        if dp.is_integer:
            raise ModelError(f"baseline {key} is for floating-point datapaths")
        if is_f64(dp) and key not in F64_BASELINES:
            raise ModelError(f"baseline {key} has no f64 form (f64: {', '.join(F64_BASELINES)})")
        if dp.block_scaled:
            raise ModelError(f"baseline {key} knows no block scales, so it cannot score "
                             f"{dp.id} (use auto or a tcgen05 profile)")
        return BASELINES[key](dp)
    raise AssertionError(key)  # check_name knows every name


def _register_tcgen05() -> None:
    """tcgen05.mma models: ``--model auto`` on tcgen05 captures, and by name."""
    from . import tcgen05

    AUTO_BY_FAMILY["tcgen05"] = tcgen05.auto_model
    for _name in tcgen05.PROFILES:
        EXTRA[_name] = lambda dp, _p=_name: tcgen05.model_for(dp, _p)


_register_tcgen05()


def _register_amd() -> None:
    """AMD v_mfma models (models/amd_profiles.py): ``--model auto`` on mfma
    datapaths, and mi100 / mi250x / mi300x by name."""
    from . import amd_profiles, isa_amd

    AUTO_BY_FAMILY["mfma"] = amd_profiles.auto_model
    for _gpu in isa_amd.GPU_ARCH:
        EXTRA[_gpu.lower()] = lambda dp, _g=_gpu: amd_profiles.model_for(dp, _g)


_register_amd()
