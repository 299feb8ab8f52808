"""The one reader of model files: a ladder fingerprint or a fit result as a Model.

``tcprobe ladder --json fp.json`` writes ``{"fingerprint": {...}}``;
``tcprobe fit --json fit.json`` writes ``{"results": [{"datapath": ...,
"params": {...}}, ...]}`` (one engine model per fitted capture: the one of
the datapath asked for is taken); a bare ``{"params": {...}}`` is one
engine model. ``tcprobe.matmul(model=...)``, ``tcprobe.dot(model=...)``,
``tcprobe gemm --model``, ``validate --model`` and campaigns all read them
here. Every field is checked for its type (``window_bits: true`` is not 1),
and a model is only ever the model of the datapath it is asked to run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tcprobe.jsontext import loads as load_json
from tcprobe.jsontext import read_text
from tcprobe.models import registry
from tcprobe.models.datapath import Datapath
from tcprobe.models.engine import EngineParams, ParamError
from tcprobe.models.model import FixedPointModel, Model, ModelError

MAX_BYTES = 64 << 20  # a model file is a few kB; refuse to read a huge one


def is_model_file(name) -> bool:
    return isinstance(name, (str, Path)) and str(name).strip().lower().endswith(".json")


def load_model_file(name, dp: Datapath, what: str = "--model") -> Model:
    """The model the .json file ``name`` describes for datapath ``dp``;
    ModelError whose message starts with ``what`` and the path."""
    path = Path(name)
    where = f"{what} {path}"
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ModelError(f"{where}: {path.stat().st_size:,} bytes is no model file")
        text = read_text(path, encoding="utf-8-sig")  # a FIFO or a device: refused
    except OSError as e:
        raise ModelError(f"{where}: cannot read it ({e.strerror or e}); check the path") from None
    except UnicodeDecodeError:
        raise ModelError(f"{where}: not a text file") from None
    try:
        data = load_json(text)
    except ValueError as e:
        raise ModelError(f"{where}: not JSON ({e})") from None
    except RecursionError:
        raise ModelError(f"{where}: JSON nested too deeply to be a model file") from None
    if not isinstance(data, dict):
        data = {}  # a list or a number: no key of a model file
    if isinstance(data.get("fingerprint"), dict):
        return _from_fingerprint(where, path, data["fingerprint"], dp)
    if isinstance(data.get("results"), list):
        return _from_fit(where, path, data["results"], dp)
    if isinstance(data.get("params"), dict):
        return _from_params(where, path, data["params"], dp)
    raise ModelError(f"{where}: neither a ladder fingerprint (tcprobe ladder --json) nor a fit "
                     "result (tcprobe fit --json)")


def _check_types(where: str, cls, values: dict) -> None:
    """Each value of the dataclass ``cls``'s fields of the annotated kind."""
    for f in dataclasses.fields(cls):
        if f.name not in values or values[f.name] is None:
            continue
        v, kind = values[f.name], str(f.type)
        want = [t for t, ok in (("int", "int" in kind), ("str", "str" in kind),
                                ("list", "list" in kind or "tuple" in kind),
                                ("dict", "dict" in kind)) if ok]
        if not want:
            continue
        good = ((isinstance(v, int) and not isinstance(v, bool) and "int" in want)
                or (isinstance(v, str) and "str" in want)
                or (isinstance(v, list) and "list" in want)
                or (isinstance(v, dict) and "dict" in want))
        if not good:
            raise ModelError(f"{where}: {f.name} must be {' or '.join(want)}, not {v!r}")
    if isinstance(values.get("k_order"), list) and not all(
            isinstance(x, int) and not isinstance(x, bool) for x in values["k_order"]):
        raise ModelError(f"{where}: k_order must be a list of integers")


def _from_fingerprint(where: str, path: Path, fp: dict, dp: Datapath) -> Model:
    from tcprobe.ladder.fingerprint import Fingerprint

    if fp.get("datapath") != dp.id:
        raise ModelError(f"{where} is the fingerprint of {fp.get('datapath')}, not of {dp.id} "
                         f"(ask for {fp.get('datapath')})")
    known = {f.name for f in dataclasses.fields(Fingerprint)}
    values = {k: v for k, v in fp.items() if k in known}
    _check_types(where, Fingerprint, values)
    try:
        model = Fingerprint(**values).model(dp)
    except (TypeError, ValueError, KeyError) as e:
        raise ModelError(f"{where}: not a usable fingerprint ({e})") from None
    model.name = f"fingerprint ({path.name})"
    return model


def _from_fit(where: str, path: Path, results: list, dp: Datapath) -> Model:
    mine = [r for r in results if isinstance(r, dict) and r.get("datapath") == dp.id]
    if not mine:
        have = sorted({str(r.get("datapath")) for r in results if isinstance(r, dict)})
        raise ModelError(f"{where} fitted no capture of {dp.id} (it has: "
                         f"{', '.join(have) or 'none'})")
    if not isinstance(mine[0].get("params"), dict):
        raise ModelError(f"{where}: the fit of {dp.id} is not one engine model")
    return _from_params(where, path, mine[0]["params"], dp, "fit")


def _from_params(where: str, path: Path, params: dict, dp: Datapath,
                 source: str = "params") -> Model:
    _check_types(where, EngineParams, params)
    try:
        p = EngineParams.from_dict(params)
        p.check()
    except (ParamError, TypeError, ValueError) as e:
        raise ModelError(f"{where}: {e}") from None
    return FixedPointModel(f"{source} ({path.name})", dp, f"tcprobe fit {path.name}", p)


def resolve_model(name: str, dp: Datapath, gpu: str | None):
    """A model name (auto, a profile, a baseline) or a .json fingerprint / fit result."""
    if is_model_file(name):
        return load_model_file(name, dp)
    try:
        return registry.resolve(name, dp, gpu)
    except ModelError as e:
        if name.strip().lower() == "auto" and not gpu:
            raise ModelError(f"{e}: this device names no GPU, so give the model: --model NAME "
                             "(a profile, e.g. b200-hmma) or --model fp.json (tcprobe ladder "
                             "--json fp.json)") from None
        raise


def fingerprint_harness(name, dp: Datapath):
    """The measured harness a ladder fingerprint file names for ``dp`` (None:
    not a fingerprint, or one that names no layout)."""
    from tcprobe.ladder.fingerprint import FingerprintError, measured_harness

    if not is_model_file(name):
        return None
    try:
        data = load_json(read_text(name, encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None
    fp = data.get("fingerprint") if isinstance(data, dict) else None
    if not isinstance(fp, dict) or fp.get("datapath") != dp.id:
        return None
    try:
        return measured_harness(dp, fp.get("layout"))
    except FingerprintError as e:
        raise ModelError(f"--model {name}: {e}") from None
