"""Declarative schemas of what users hand tcprobe, checked before anything runs.

A schema is a table of fields, each a small value type (:class:`Int`,
:class:`Word`, :class:`Choice`, :class:`Flag`, ...). :func:`check` reads a
mapping against it and returns the values normalized (words as ints,
names in their canonical spelling), or raises :class:`SchemaError` with one
line naming where (file and line, or TOML key path), the field, what is
wrong and what is allowed. The schemas themselves: :data:`VECTOR` (a JSON
Lines record, :mod:`tcprobe.capture.jsonl`), :data:`PROFILE_*` (a TOML sim
profile, docs/sim-profiles.md) and :data:`HEADER` (a capture file header).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tcprobe.models import amd, gpus, isa, isa_gate, tcgen05
from tcprobe.models.engine import PARAMS, PROFILE_KEYS, Param
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


PROFILE_REQUIRED = PROFILE_KEYS
PROFILE_META = {
    "name": F(Text(named=True)),
    "gpu": F(Text(named=True)),
    "families": F(ListOf(Choice((*isa.FAMILIES, "mfma")), one_ok=True, least=1)),
    "seed": F(Int(0, (1 << 63) - 1)),
}
# [mfma]: an AMD profile's design (models/amd.MfmaParams; docs/sim-profiles.md)
MFMA_DESIGNS = ("fma", "exact", "ftz", "truncated", "grouped")
PROFILE_MFMA = {
    "design": F(Choice(MFMA_DESIGNS), required=True),
    # no upper bound past TOML's integers: L >= K, F or F2 >= amd.exact_bound give the same words
    "block": F(Int(1, (1 << 63) - 1)),
    "window": F(Int(amd.WINDOW_MIN, (1 << 63) - 1)),
    "window2": F(Int(amd.WINDOW2_MIN, (1 << 63) - 1)),
}
PROFILE_LAYOUT = {
    "a_k_order": F(ORDER), "b_k_order": F(ORDER),
    "a_lbo": F(Int(0, 1 << 20)), "a_sbo": F(Int(0, 1 << 20)),
    "b_lbo": F(Int(0, 1 << 20)), "b_sbo": F(Int(0, 1 << 20)),
    "dump_permutation": F(Order(("reverse", "shuffle"))), "dump_seed": F(Int(0, (1 << 63) - 1)),
}
OPTIONAL_INT = Maybe(Int(-1000, 1000))
PROFILE_SCALED = {
    "product_window": F(OPTIONAL_INT), "c_window": F(OPTIONAL_INT),
    "scale_window": F(OPTIONAL_INT), "q_floor": F(OPTIONAL_INT),
    "product_group": F(Int(1, 64)), "c_dominant": F(Flag()), "merge_group": F(Int(1, 64)),
    "c_merge_bits": F(Int(0, 200)), "per_group_c_merge": F(Flag()),
    "group_floor": F(OPTIONAL_INT), "zero_c": F(Choice(("positive", "keep"))),
    "overflow": F(Choice(("inf", "saturate", "ieee"))),
}
PROFILE_TABLES = ("format", "output", "layout", "scaled", "mfma")
SCALED_GROUPS = tcgen05.SCALED_GROUPS


AMD_GPUS = ("MI100", "MI250X", "MI300X")  # models/isa_amd.GPU_ARCH


def _amd_profile(top: dict, tables: dict, where: str) -> bool:
    """Whether a profile is AMD's (an AMD gpu, or families = ["mfma"]); one
    that mixes AMD and NVIDIA (an AMD gpu running mma, mfma beside wgmma, an
    NVIDIA gpu running mfma, engine keys or NVIDIA tables) is refused."""
    gpu = str(top.get("gpu", "")).strip().upper()
    fams = top.get("families")
    fams = [fams] if isinstance(fams, str) else fams if isinstance(fams, list) else []
    fams = [f.strip().lower() for f in fams if isinstance(f, str)]  # the schema checks the rest
    amd = gpu in AMD_GPUS or "mfma" in fams
    if not amd:
        return False
    if gpu not in AMD_GPUS:
        raise SchemaError(f"{where}: gpu: an mfma profile names its AMD GPU (gpu = "
                          f"{', '.join(AMD_GPUS)}), whose v_mfma table it runs, not "
                          f"{top.get('gpu', 'none')!r}")
    other = [f for f in fams if f != "mfma"]
    if other:
        raise SchemaError(f"{where}: families: {gpu} is an AMD GPU: it runs mfma, not "
                          f"{', '.join(other)}")
    keys = [k for k in top if k not in PROFILE_META]
    if keys:
        raise SchemaError(f"{where}: {keys[0]}: an AMD (mfma) profile sets its design in "
                          "[mfma] (design, block, window, window2), not engine keys")
    nvidia = [t for t in tables if t != "mfma"]
    if nvidia:
        raise SchemaError(f"{where}: [{nvidia[0]}]: an AMD (mfma) profile has one table, [mfma]")
    return True


def check_profile(data: dict, where: str) -> dict:
    """A parsed TOML profile read against its schema: the same tables with
    every value normalized ("RNE" -> "rne", "0x7fc00000" -> an int,
    window_bits = "exact" -> None). Errors name the key path."""
    top = {k: v for k, v in data.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    unknown = [k for k in tables if k not in PROFILE_TABLES]
    if unknown:
        raise SchemaError(f"{where}: unknown table [{unknown[0]}] "
                          f"(tables: {', '.join(f'[{t}]' for t in PROFILE_TABLES)})")
    engine = engine_schema()
    top_schema = {**PROFILE_META, **engine}
    if _amd_profile(top, tables, where):
        out = {**check(top, PROFILE_META, where), "gpu": top["gpu"].strip().upper()}  # names.md
        out["mfma"] = check(tables.get("mfma", {}), PROFILE_MFMA, where, key_path="mfma") \
            if "mfma" in tables else {}
        if out["mfma"].get("design", "fma") != "fma" and "block" not in out["mfma"]:
            raise SchemaError(f"{where}: [mfma]: design {out['mfma']['design']} needs block "
                              "(L, or P for ftz)")
        design = out["mfma"].get("design", "fma")
        unused = [k for k in out["mfma"] if k != "design" and k not in amd.DESIGN_KEYS[design]]
        if unused:  # window = 24 under fma would be read as set, and changes nothing
            raise SchemaError(f"{where}: [mfma]: {unused[0]}: design {design} has no "
                              f"{unused[0]} (it reads {', '.join(amd.DESIGN_KEYS[design]) or 'none'})")
        try:  # the design's own ranges (ftz's P, F2 from F - 1): models/amd.check_params
            if out["mfma"]:
                amd.check_ranges(amd.MfmaParams(**out["mfma"]))
        except ValueError as e:
            raise SchemaError(f"{where}: [mfma]: {e}") from None
        out.update({"format": {}, "output": {}, "scaled": {}})
        return out
    if "mfma" in tables:
        raise SchemaError(f"{where}: [mfma] is for an AMD profile (gpu = MI100, MI250X or "
                          "MI300X; families = [\"mfma\"])")
    for key in PROFILE_REQUIRED:
        if key not in top:
            raise SchemaError(f"{where}: missing key {key} (required: "
                              f"{', '.join(PROFILE_REQUIRED)}; see docs/sim-profiles.md)")
    out = check(top, top_schema, where)
    for group in ("format", "output"):
        out[group] = {}
        for name, table in tables.get(group, {}).items():
            path = f"{group}.{name}"
            try:
                fmt = get_format(name)
            except FormatError as e:
                raise SchemaError(f"{where}: [{path}]: {e}") from None
            if not isinstance(table, dict):
                raise SchemaError(f"{where}: [{path}] must be a table of engine keys")
            schema = engine_schema(fmt.width if group == "output" else 32)
            out[group][name] = check(table, schema, where, key_path=path)
    if "layout" in tables:
        out["layout"] = check(tables["layout"], PROFILE_LAYOUT, where, key_path="layout")
    out["scaled"] = {}
    for group, table in tables.get("scaled", {}).items():
        if group not in SCALED_GROUPS or not isinstance(table, dict):
            raise SchemaError(f"{where}: [scaled.{group}] is not a table of "
                              f"{', '.join(f'[scaled.{g}]' for g in SCALED_GROUPS)}")
        out["scaled"][group] = check(table, PROFILE_SCALED, where, key_path=f"scaled.{group}")
    fams = out.get("families") or isa.FAMILIES  # a [scaled] table runs on tcgen05 or sm_120a mma
    if out["scaled"] and not ("tcgen05" in fams or "mma" in fams and gpus.archs_of(
            str(out.get("gpu") or "")) & set(isa.SM120_ARCHS)):
        raise SchemaError(f"{where}: [scaled.{next(iter(out['scaled']))}]: the device runs no "
                          "block-scaled kind (tcgen05, or mma.sync on an sm_120a gpu)")
    return out

