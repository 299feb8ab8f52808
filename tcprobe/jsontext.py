"""Reading JSON a user hands tcprobe (schedules, model files, manifests, vectors).

Python's ``json`` keeps the last of two equal keys silently
(``{"split_k": 2, "split_k": 3}`` is split 3): every user file goes through
:func:`loads`, which refuses a key given twice, naming it, like a TOML
profile's reader does. Other errors are json's (ValueError, RecursionError).
"""

from __future__ import annotations

import json


class DuplicateKeyError(ValueError):
    """A JSON object that gives one key twice."""


def _pairs(pairs: list) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"the key {key!r} is given twice in one object (JSON keeps "
                                    "the last silently: give it once)")
        out[key] = value
    return out


def loads(text: str):
    """``json.loads(text)``, but a key given twice in an object is a
    DuplicateKeyError (a ValueError)."""
    return json.loads(text, object_pairs_hook=_pairs)
