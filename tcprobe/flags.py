"""One rule for every True/False argument of the Python API (``fast=``,
``strict_auto=``, ``emulate(strict=)``, ``Report(compare=, record=)``): the
bool objects themselves, never 1, 0 or 'yes'. ``1 in (True, False)`` is true
in Python, so a check by equality let ``emulate(strict=1)`` through, and the
block was then strict about unroutable ops but not about a guessed schedule
(``strict is True`` is false for 1)."""

from __future__ import annotations

from tcprobe.names import match


def check_flag(value, what: str, also: tuple = (), error: type = ValueError):
    """``value`` when it is True, False, or one of ``also`` (None, 'routes'),
    compared by identity for None and bools; else ``error`` naming ``what``."""
    if isinstance(value, str):  # a word such as 'routes' in any case (tcprobe.names)
        word = match(value, [a for a in also if isinstance(a, str)])
        if word is not None:
            return word
    if isinstance(value, bool) or any(
            value is a if a is None or isinstance(a, bool) else
            (type(value) is type(a) and value == a) for a in also):
        return value
    names = [*("None" for a in also if a is None), "True", "False",
             *(repr(a) for a in also if a is not None)]
    raise error(f"{what} must be {', '.join(names[:-1])} or {names[-1]}, not {value!r}")
