"""What people type: lists in an option (``raw, edge,,raw``), names in a file.

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


def hidden_character(text: str) -> str | None:
    """The first character of ``text`` that a terminal does not show as
    itself (a control character, or a format one: U+202E turns the rest of
    the line around, U+200B shows nothing), as ``U+202E``; None when there is
    none. A name holding one would be printed as something else."""
    import unicodedata

    bad = next((ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf")), None)
    return None if bad is None else f"U+{ord(bad):04X}"
