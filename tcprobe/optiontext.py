"""Lists as people type them into an option: ``raw, edge,,raw``.

One reader for every comma-list option (suites, ladder steps, sass-check's
kernels and architectures, mfma-check's), so that a spelling one accepts
every one accepts; whether naming nothing is an error, and which names are
known, is each caller's to say.
"""

from __future__ import annotations


def comma_names(text: str) -> tuple[str, ...]:
    """The names of a comma list as given (``' raw, edge,,raw'`` -> ``('raw',
    'edge')``): stripped, empty ones dropped, each once in its first place."""
    return tuple(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))
