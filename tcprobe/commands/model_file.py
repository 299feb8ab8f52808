"""--model PATH.json: the model a ladder fingerprint or a fit result describes.

``tcprobe ladder --json fp.json`` then ``tcprobe validate --model fp.json
--cases 1e6`` checks the ladder's model at scale; ``tcprobe fit --json
fit.json`` gives one engine model per fitted capture (the one of the
datapath being validated is taken).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, ParamError
from tcprobe.models.model import FixedPointModel, Model, ModelError


def is_model_file(name: str) -> bool:
    return name.strip().lower().endswith(".json")


def load_model_file(name: str, dp: Datapath) -> Model:
    """The model ``name`` (a .json file) describes for datapath ``dp``."""
    path = Path(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as e:
        raise ModelError(f"--model {name}: {e.strerror or e}") from None
    except ValueError as e:
        raise ModelError(f"--model {name}: not JSON ({e})") from None
    if isinstance(data, dict) and isinstance(data.get("fingerprint"), dict):
        return _from_fingerprint(name, data["fingerprint"], dp)
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return _from_fit(name, data["results"], dp)
    raise ModelError(f"--model {name}: neither a ladder fingerprint (tcprobe ladder --json) nor "
                     "a fit result (tcprobe fit --json)")


def _from_fingerprint(name: str, fp: dict, dp: Datapath) -> Model:
    from tcprobe.ladder import Fingerprint

    if fp.get("datapath") != dp.id:
        raise ModelError(f"--model {name} is the fingerprint of {fp.get('datapath')}, not of "
                         f"{dp.id} (pass --datapath {fp.get('datapath')})")
    known = {f.name for f in dataclasses.fields(Fingerprint)}
    try:
        model = Fingerprint(**{k: v for k, v in fp.items() if k in known}).model(dp)
    except (TypeError, ValueError) as e:
        raise ModelError(f"--model {name}: not a usable fingerprint ({e})") from None
    model.name = f"fingerprint ({path_name(name)})"
    return model


def _from_fit(name: str, results: list, dp: Datapath) -> Model:
    mine = [r for r in results if isinstance(r, dict) and r.get("datapath") == dp.id]
    if not mine:
        have = sorted({str(r.get("datapath")) for r in results if isinstance(r, dict)})
        raise ModelError(f"--model {name} fitted no capture of {dp.id} (it has: "
                         f"{', '.join(have) or 'none'})")
    if not mine[0].get("params"):
        raise ModelError(f"--model {name}: the fit of {dp.id} is not one engine model")
    try:
        params = EngineParams.from_dict(mine[0]["params"])
        params.check()
    except (ParamError, TypeError) as e:
        raise ModelError(f"--model {name}: {e}") from None
    return FixedPointModel(f"fit ({path_name(name)})", dp, "tcprobe fit", params)


def path_name(name: str) -> str:
    return Path(name).name


def fingerprint_harness(name: str, dp: Datapath):
    """The measured harness a ladder fingerprint file names for ``dp`` (None:
    not a fingerprint, or one that names no layout)."""
    from tcprobe.fingerprint import FingerprintError, measured_harness

    if not is_model_file(name):
        return None
    try:
        data = json.loads(Path(name).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    fp = data.get("fingerprint") if isinstance(data, dict) else None
    if not isinstance(fp, dict) or fp.get("datapath") != dp.id:
        return None
    try:
        return measured_harness(dp, fp.get("layout"))
    except FingerprintError as e:
        raise ModelError(f"--model {name}: {e}") from None
