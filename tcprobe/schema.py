"""Declarative schemas of what users hand tcprobe, checked before anything runs.

A schema is a table of fields, each a small value type (:class:`Int`,
:class:`Word`, :class:`Choice`, :class:`Flag`, ...). :func:`check` reads a
mapping against it and returns the values normalized (words as ints,
names in their canonical spelling), or raises :class:`SchemaError` with one
line naming where (file and line, or TOML key path), the field, what is
wrong and what is allowed. The schemas themselves: :data:`VECTOR` (a JSON
Lines record, :mod:`tcprobe.capture.jsonl`) and :data:`HEADER` (a capture
file header); a TOML sim profile's are :mod:`tcprobe.schema_profile`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tcprobe.models import isa, isa_gate
from tcprobe.models.engine import PARAMS, Param
from tcprobe.models.formats import FormatError, get_format
from tcprobe.optiontext import hidden_character


class SchemaError(ValueError):
    """An input that does not fit its schema (the message names the field)."""


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------
# Value types. Each ``read(value, ctx)`` returns the normalized value or
# raises ValueError with what is wrong (the field is added by check()).


def _read_each(items: list, reader, ctx, what: str | None) -> list:
    """``reader.read`` of every item; an error names the item (``what i``)
    unless ``what`` is None (a single value given without a list)."""
    out = []
    for i, x in enumerate(items):
        try:
            out.append(reader.read(x, ctx))
        except ValueError as e:
            raise ValueError(f"{what} {i}: {e}" if what else str(e)) from None
    return out


@dataclass(frozen=True)
class Int:
    """A whole number in lo..hi (true/false and 1.0 are not numbers);
    ``hex_text``: "0x7fc00000" written as a string is read too."""

    lo: int | None = None
    hi: int | None = None
    hex_text: bool = False

    def read(self, v, ctx):
        if self.hex_text and isinstance(v, str):
            v = _hex_text(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{_show(v)} is not a whole number{self._range()}")
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            raise ValueError(f"{v} is out of range{self._range()}")
        return v

    def _range(self) -> str:
        if self.hex_text and self.lo is not None and self.hi is not None:
            return f" ({self.lo:#x}..{self.hi:#x})"
        if self.lo is not None and self.hi is not None:
            return f" ({self.lo}..{self.hi})"
        if self.lo is not None:
            return f" (at least {self.lo})"
        return ""


def _hex_text(v: str):
    s = v.strip().lower().replace("_", "")
    try:
        return int(s, 16) if s.startswith("0x") else int(s, 10)
    except ValueError:
        return v


@dataclass(frozen=True)
class Word:
    """A raw word of a format (``fmt`` names the context key holding the
    format, or a format): an int or a hex string ("0x3f80", "3f80"), 0 up to
    the format's width."""

    fmt: str | None = None
    bits: int = 32  # without a format: a plain word of this many bits

    def read(self, v, ctx):
        if self.fmt is None:
            name, width = f"{self.bits}-bit word", self.bits
        else:
            f = get_format(ctx.get(self.fmt, self.fmt))
            name, width = f.name, f.width
        mask = (1 << width) - 1
        if isinstance(v, str):
            s = v.strip().lower().replace("_", "")
            s = s[2:] if s.startswith("0x") else s
            try:
                w = int(s, 16)
            except ValueError:
                raise ValueError(f"{_show(v)} is not a hex word") from None
            if not s or s.startswith(("-", "+")):
                raise ValueError(f"{_show(v)} is not a hex word")
        elif isinstance(v, int) and not isinstance(v, bool):
            w = v
        else:
            raise ValueError(f"{_show(v)} is not a word (a hex string such as \"0x3f80\")")
        if not 0 <= w <= mask:
            raise ValueError(f"{_show(v)} does not fit {name} ({width} bits: 0x0..{mask:#x})")
        return w


@dataclass(frozen=True)
class Words:
    """One word or a list of words; ``most`` (a context key or an int) caps the count."""

    word: Word
    most: str | int | None = None

    def read(self, v, ctx):
        items = v if isinstance(v, list) else [v]
        most = ctx.get(self.most) if isinstance(self.most, str) else self.most
        if most is not None and len(items) > most:
            raise ValueError(f"{len(items)} words, more than {most}")
        return _read_each(items, self.word, ctx, "word" if isinstance(v, list) else None)


@dataclass(frozen=True)
class Choice:
    """One of ``values``, in any case; ``aliases`` maps other spellings."""

    values: tuple
    aliases: dict = field(default_factory=dict)

    def read(self, v, ctx):
        key = v.strip().lower() if isinstance(v, str) else v
        if isinstance(key, (bool, list, dict)):  # no choice is one (a list is unhashable)
            key = None
        key = self.aliases.get(key, key)
        for allowed in self.values:
            if key == allowed or (isinstance(allowed, str) and isinstance(key, str)
                                  and key == allowed.lower()):
                return allowed
        raise ValueError(f"{_show(v)} is not allowed (allowed: "
                         f"{', '.join(str(x) for x in self.values)})")


@dataclass(frozen=True)
class Format:
    """A format name in any case or alias (bf16, BF16, bfloat16); ``among``
    limits the choice."""

    among: tuple | None = None

    def read(self, v, ctx):
        if not isinstance(v, str):
            raise ValueError(f"{_show(v)} is not a format name")
        try:
            name = get_format(v).name
        except FormatError as e:
            raise ValueError(str(e)) from None
        if self.among is not None and name not in self.among:
            raise ValueError(f"{v!r} is not allowed (allowed: {', '.join(self.among)})")
        return name


@dataclass(frozen=True)
class Flag:
    """true or false (also "true"/"false", "yes"/"no", 0/1)."""

    def read(self, v, ctx):
        if isinstance(v, bool):
            return v
        if isinstance(v, int) and v in (0, 1):
            return bool(v)
        if isinstance(v, str) and v.strip().lower() in ("true", "false", "yes", "no"):
            return v.strip().lower() in ("true", "yes")
        raise ValueError(f"{_show(v)} is not true or false")


@dataclass(frozen=True)
class Text:
    """Free text; ``named``: text that names something (blank is refused)."""
    named: bool = False

    def read(self, v, ctx):
        if not isinstance(v, str):
            raise ValueError(f"{_show(v)} is not text")
        if self.named and not v.strip():
            raise ValueError(f"{_show(v)} names nothing (leave the key out for its default)")
        if self.named and (bad := hidden_character(v)):  # a name is shown on the terminal
            raise ValueError(f"{_show(v)} holds {bad}, a control or invisible character")
        return v


@dataclass(frozen=True)
class Anything:
    """Kept as given (free-form notes)."""

    def read(self, v, ctx):
        return v


@dataclass(frozen=True)
class Table:
    """A JSON object / TOML table (its keys are read by their own schema)."""

    def read(self, v, ctx):
        if not isinstance(v, dict):
            raise ValueError(f"{_show(v)} is not a table of keys (a JSON object)")
        return v


@dataclass(frozen=True)
class ListOf:
    """A list of items of one type; ``one_ok``: a single item stands for a list of one."""

    item: Any
    one_ok: bool = False
    least: int = 0

    def read(self, v, ctx):
        if not isinstance(v, list):
            if not self.one_ok:
                raise ValueError(f"{_show(v)} is not a list")
            v = [v]
        if len(v) < self.least:
            raise ValueError(f"needs at least {self.least} entries")
        return _read_each(v, self.item, ctx, "entry")


@dataclass(frozen=True)
class Either:
    """The first of ``types`` that reads the value."""

    types: tuple
    what: str

    def read(self, v, ctx):
        for t in self.types:
            try:
                return t.read(v, ctx)
            except ValueError:
                continue
        raise ValueError(f"{_show(v)} is not {self.what}")


@dataclass(frozen=True)
class F:
    """One field of a schema."""

    type: Any
    required: bool = False
    null_ok: bool = True  # null (JSON) means absent


def check(data: dict, schema: dict, where: str, *, unknown: str = "error",
          key_path: str = "", ctx: dict | None = None) -> dict:
    """``data`` read against ``schema`` (name -> F), in schema order; absent
    optional fields are left out. ``unknown``: "error" or "keep"."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected a table of keys, not {_show(data)}")
    prefix = f"{key_path}." if key_path else ""
    if unknown == "error":
        extra = [k for k in data if k not in schema]
        if extra:
            raise SchemaError(f"{where}: unknown key {prefix}{extra[0]} "
                              f"(keys: {', '.join(schema)})")
    ctx = dict(ctx or {})
    out = {}
    for name, spec in schema.items():
        if name not in data or (data[name] is None and spec.null_ok):
            if spec.required:
                raise SchemaError(f"{where}: missing field {prefix}{name}")
            continue
        try:
            out[name] = spec.type.read(data[name], ctx)
        except ValueError as e:
            raise SchemaError(f"{where}: {prefix}{name}: {e}") from None
        ctx[name] = out[name]
    if unknown == "keep":
        out.update({k: v for k, v in data.items() if k not in schema})
    return out


# ---------------------------------------------------------------------------
# JSON Lines: one recorded case a line (tcprobe/capture/jsonl.py).

MAX_K = 1024  # far above the K of any one instruction (a record holds 2K words)
KINDS = tuple(dict.fromkeys((*isa.TCGEN05_KINDS, *isa.INPUT_K, *isa.F64_TYPES)))
SCALE_VEC = Choice((1, 2, 4), {"1x": 1, "2x": 2, "4x": 4, "x1": 1, "x2": 2, "x4": 4,
                               "1": 1, "2": 2, "4": 4, "scale_vec::1x": 1,
                               "scale_vec::2x": 2, "scale_vec::4x": 4})
SCALE_TYPES = isa.SCALE_TYPES

VECTOR = {
    "name": F(Either((Text(), Int()), "text")),
    "gpu": F(Text()),
    "family": F(Choice(isa.FAMILIES), required=True),
    "kind": F(Choice(KINDS), required=True),
    "a_type": F(Format(), required=True),
    "b_type": F(Format(), required=True),
    "d_type": F(Format(), required=True),
    "c_type": F(Format()),
    "k": F(Int(1, MAX_K), required=True),
    "scale_type": F(Choice(SCALE_TYPES)),
    "scale_vec": F(SCALE_VEC),
    "sparse_metadata": F(Words(Word(bits=32))),
    "saturate": F(Flag()),
    "bitop": F(Choice(isa.BIT_OPS)),
    "ordered_metadata": F(Flag()),
    "a": F(Words(Word("a_type"), "k"), required=True),
    "b": F(Words(Word("b_type"), "k"), required=True),
    "c": F(Word("c_type"), required=True),
    "scale_a": F(Words(Word("scale_type"))),
    "scale_b": F(Words(Word("scale_type"))),
    "d": F(Word("d_type"), required=True),
    "source": F(Anything()),
    "note": F(Anything()),
    "notes": F(Anything()),
    "comment": F(Anything()),
}


def check_vector(rec: dict, where: str) -> dict:
    """A JSON Lines record read against :data:`VECTOR` and the ISA table."""
    if not isinstance(rec, dict):
        raise SchemaError(f"{where}: a line must be a JSON object")
    amd = rec.get("family") if rec.get("family") == "mfma" else rec.get("datapath")
    if isinstance(amd, str) and amd.startswith("mfma"):  # MMA-Sim's AMD words (tests/data)
        raise SchemaError(f"{where}: an AMD v_mfma vector ({amd}): vectors and captures of "
                          "family mfma are not read (docs/amd.md, Not done); tcprobe run-case "
                          "--device sim:mi300x runs one case")
    ctx = {}
    if "c_type" not in rec or rec.get("c_type") is None:
        ctx["c_type"] = rec.get("d_type")
    try:
        get_format(ctx.get("c_type") or "f32")
    except (FormatError, TypeError):
        ctx.pop("c_type", None)
    for scales in ("scale_a", "scale_b"):
        if rec.get(scales) is not None and rec.get("scale_type") is None:
            raise SchemaError(f"{where}: {scales} without scale_type (ue8m0 or ue4m3)")
    # the types come first so that the words can be read against them
    out = check(rec, VECTOR, where, unknown="error" if not _extra_ok(rec) else "keep", ctx=ctx)
    out.setdefault("c_type", out["d_type"])
    if "scale_type" in out and "scale_vec" not in out:
        out["scale_vec"] = 1
    if "scale_vec" in out and "scale_type" not in out:
        raise SchemaError(f"{where}: scale_vec without scale_type (ue8m0 or ue4m3)")
    check_instruction(out["family"], out["kind"], out["a_type"], out["b_type"], out["c_type"],
                      out["d_type"], out["k"], out.get("scale_type"), out.get("scale_vec"),
                      bool(out.get("sparse_metadata")), bool(out.get("saturate")), where)
    return out


def _extra_ok(rec: dict) -> bool:
    """Fields starting with an underscore are the writer's own notes."""
    return all(k in VECTOR or k.startswith("_") for k in rec)


def check_instruction(family, kind, a_type, b_type, c_type, d_type, k, scale_type, scale_vec,
                      sparse, saturate, where: str) -> None:
    """Refuse a combination the PTX ISA does not define (:func:`isa.check_instruction`)."""
    try:
        isa_gate.check_instruction(family, kind, a_type, b_type, c_type, d_type, k, scale_type,
                              scale_vec, sparse, saturate)
    except isa.IsaError as e:
        raise SchemaError(f"{where}: {e}") from None


# ---------------------------------------------------------------------------
# Capture file header (tcprobe/capture/binary.py).

HEADER = {
    "format": F(Choice(("tcprobe-capture",)), required=True),
    "version": F(Int(1, 1), required=True),
    "datapath": F(Text(), required=True),
    "device": F(Table()),
    "seed": F(Either((Int(), Anything()), "a seed")),
    "suites": F(ListOf(Text())),
    "generators": F(ListOf(Text())),
    "plan": F(Table()),
    "record": F(Table(), required=True),
}
PLAN = {"cases": F(Int(0)), "chunk": F(Int(1)), "suites": F(ListOf(Text()))}
RECORD = {"size": F(Int(1), required=True), "fields": F(Anything())}


def check_header(head: dict, where: str) -> dict:
    """A capture header read against :data:`HEADER` (other keys are kept)."""
    out = check(head, HEADER, where, unknown="keep")
    if "plan" in out:
        check(out["plan"], PLAN, where, unknown="keep", key_path="plan")
    check(out["record"], RECORD, where, unknown="keep", key_path="record")
    return out


# ---------------------------------------------------------------------------
# TOML sim profile (docs/sim-profiles.md; read by tcprobe/devices/sim.py).


@dataclass(frozen=True)
class Maybe:
    """``type``, or one of ``words`` ("none", "exact") for no value (TOML has no null)."""

    type: Any
    words: tuple = ("none",)

    def read(self, v, ctx):
        if isinstance(v, str) and v.strip().lower() in self.words:
            return None
        try:
            return self.type.read(v, ctx)
        except ValueError as e:
            raise ValueError(f"{e}; or {' / '.join(repr(w) for w in self.words)}") from None


@dataclass(frozen=True)
class Order:
    """A reordering: a permutation of 0..n-1 as a list, or one of the named
    forms (``reverse``, ``shuffle[:SEED]``, ``rotate[:N]``, as ``forms`` allows)."""

    forms: tuple = ("reverse", "shuffle", "rotate")

    def read(self, v, ctx):
        if isinstance(v, list):
            items = ListOf(Int(0, 4095)).read(v, ctx)
            if sorted(items) != list(range(len(items))):
                raise ValueError(f"{_show(v)} is not a permutation of 0..{len(items) - 1}")
            return items
        if not self.forms:
            raise ValueError(f"{_show(v)} is not a list of K positions")
        pattern = "|".join({"reverse": "reverse", "shuffle": r"shuffle(:\d+)?",
                            "rotate": r"rotate(:-?\d+)?"}[f] for f in self.forms)
        if isinstance(v, str) and re.fullmatch(pattern, v.strip().lower()):
            return v.strip().lower()
        spelled = ", ".join(f"{f}[:N]" if f != "reverse" else f for f in self.forms)
        raise ValueError(f"{_show(v)} is not a permutation list or one of {spelled}")


ORDER = Order()


def _engine_field(p: Param, nan_bits: int) -> F:
    """The schema field of engine parameter ``p`` (models/engine.PARAMS)."""
    t = {"int": lambda: Int(p.lo, p.hi), "choice": lambda: Choice(p.choices),
         "word": lambda: Int(0, (1 << nan_bits) - 1, hex_text=True),
         "order": lambda: Order(forms=()), "format": lambda: Format(p.choices or None)
         }[p.kind]()
    return F(Maybe(t, p.null_words) if p.nullable else t)


def engine_schema(nan_bits: int = 32) -> dict:
    """The engine parameter keys (EngineParams) a profile table may set, read
    from the engine's own table of them (models/engine.PARAMS)."""
    return {p.name: _engine_field(p, nan_bits) for p in PARAMS}
