"""Counts as people write them: 1e6, 1_000_000, 1,000,000, 10k, 2.5M, 1000.0.
An underscore stands only between digits (as in Python: ``1_0_`` is no
number), and commas only between groups of three (``1,5``, a decimal comma
elsewhere, is not read as 15).

One parser for every option that takes a number of cases (validate,
smoke, ladder --validate, replay --limit), so that a spelling one command
accepts every command accepts.
"""

from __future__ import annotations

import re
from decimal import Decimal

NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?")
SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9}
LOOSE_UNDERSCORE = re.compile(r"(?<![0-9])_|_(?![0-9])")
THOUSANDS = re.compile(r"[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?(e[+-]?[0-9]+)?[kmgb]?")
# The most cases one run may ask for: 1e11 cases of the smallest record
# (about 40 bytes) would be 4 TB of capture and days of device time.
MAX_CASES = 10**11


class CountError(ValueError):
    """A count that is not a whole number in range."""


def parse_count(text, *, minimum: int = 1, maximum: int = MAX_CASES, what: str = "cases") -> int:
    """The whole number ``text`` spells (see the module docstring), in
    ``minimum..maximum``."""
    if isinstance(text, bool):
        raise CountError(f"not a number of {what}: {text!r}")
    if isinstance(text, int):
        value = text
    else:
        s = str(text).strip().lower()
        if LOOSE_UNDERSCORE.search(s) or ("," in s and not THOUSANDS.fullmatch(s)):
            raise CountError(f"not a whole number of {what}: {text!r} (an underscore goes "
                             "between digits, commas between groups of three: write 1e6, "
                             "1_000_000, 1,000,000 or 10k)")
        s = s.replace("_", "").replace(",", "")
        scale = 1
        if s[-1:] in SUFFIXES:
            s, scale = s[:-1], SUFFIXES[s[-1]]
        if not NUMBER.fullmatch(s):
            raise CountError(f"not a whole number of {what}: {text!r} "
                             "(write 1e6, 1_000_000, 1000000 or 10k)")
        try:
            number = Decimal(s) * scale
            whole = number == number.to_integral_value()
        except ArithmeticError:  # an exponent too large for Decimal
            number, whole = Decimal(maximum) * 10, True
        if not whole:
            raise CountError(f"not a whole number of {what}: {text!r} "
                             "(write 1e6, 1_000_000, 1000000 or 10k)")
        if abs(number) > Decimal(maximum) * 10:
            value = int(number.copy_sign(Decimal(maximum) * 10))
        else:
            value = int(number)
    if value < minimum:
        least = "positive" if minimum == 1 else f"at least {minimum:,}"
        raise CountError(f"the number of {what} must be {least}, not {text!r}")
    if value > maximum:
        raise CountError(f"{text!r} {what} is more than one run can take ({maximum:,} at most)")
    return value
