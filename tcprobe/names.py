"""One rule for every name a user gives (docs/names.md): a name (a GPU, a
format or dtype, an instruction family, a datapath id, a schedule preset or
axis value, a model, a device, a suite, a step, a set, a backend, a flag
word such as 'routes') is read with its surrounding white space stripped and
in any case: ``'F16'``, ``' chain'`` and ``'CHAIN'`` are ``'f16'`` and
``'chain'``. Paths, dictionary keys (schedule axes, TOML keys, keyword
arguments) and hex words are read exactly as given."""

from __future__ import annotations


def fold(value):
    """``value`` stripped and in lower case when it is a string; else itself."""
    return value.strip().lower() if isinstance(value, str) else value


def match(value, choices):
    """The choice that ``value`` names under :func:`fold` (the choice as it
    is spelled in ``choices``), or None; a value that is not a string is
    matched only by equality of the same type."""
    if isinstance(value, str):
        key = fold(value)
        return next((c for c in choices if isinstance(c, str) and c.lower() == key), None)
    return next((c for c in choices if type(c) is type(value) and c == value), None)


def once(names) -> tuple:
    """``names`` each once, in the order first given (the first spelling
    kept): two spellings of one name are one name. A path (holding a slash,
    or a .json or .toml file) is compared exactly, as paths are read."""
    seen, out = set(), []
    for name in names:
        path = isinstance(name, str) and ("/" in name or name.strip().lower().endswith(
            (".json", ".toml")))
        key = name if path or not isinstance(name, str) else fold(name)
        if key not in seen:
            seen.add(key)
            out.append(name)
    return tuple(out)
