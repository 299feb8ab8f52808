"""The schema of a TOML sim profile (docs/sim-profiles.md), read with
:mod:`tcprobe.schema`'s value types: NVIDIA's engine keys and tables, or an
AMD profile's one [mfma] table. :func:`check_profile` returns the tables
normalized or raises :class:`~tcprobe.schema.SchemaError` naming the key."""

from __future__ import annotations

from tcprobe.models import amd, gpus, isa, tcgen05
from tcprobe.models.engine import PROFILE_KEYS
from tcprobe.models.formats import FormatError, get_format
from tcprobe.schema import (
    ORDER,
    Choice,
    F,
    Flag,
    Int,
    ListOf,
    Maybe,
    Order,
    SchemaError,
    Text,
    check,
    engine_schema,
)

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
    # name, gpu and families read first: what kind of profile it is turns on them
    check({k: v for k, v in top.items() if k in PROFILE_META}, PROFILE_META, where)
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

