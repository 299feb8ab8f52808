"""Random designs from the whole engine parameter space, and the judge of a
ladder run on a sim device of each (tests/test_ladder_designs.py,
benchmarks/ladder_sweep.py).

:func:`draw` picks a family, an A/B format and a D type, then every engine
parameter (models/engine.PARAMS) a TOML profile can set: the window (exact
too), blocks, floor, input conversion, output rounding and kept bits, zero
sign, NaN word, overflow, carry bits and top, K order, and the corners the
ladder must also name: C added after the blocks (``c_join = "last"``, its
own rounding), blocks chained through another intermediate type with its
own rounding (``inter_type``), products aligned on their true leading bit
(``align = "normalized"``), a window equal to the output's visible bits,
blocks of 1 under RNA with few kept bits, floors near zero under an f16 D.

:func:`judge` runs the ladder and sorts every key of the truth into exact,
open (None in the fingerprint with a reason) or wrong; an open key must be
truly open: the fingerprint's model gives the device's words on a held-out
set (random cases, the validate suites, tiny products, stress cases, from
a seed neither the probes nor the ladder's validation draw from) and no
range the ladder checked holds a value that gives other words. A
fingerprint called validated whose model misses a held-out word is
``wrong_validated``: that must never happen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from ladder_helpers import false_ranges, stress_cases, tiny_product_cases

from tcprobe.models.formats import get_format

FORMATS = {"mma": ["tf32", "bf16", "f16", "e4m3", "e5m2"],
           "wgmma": ["tf32", "bf16", "f16", "e4m3"],
           "tcgen05": ["tf32", "bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]}
HELD_OUT_SEED = 0xD351_6E  # neither the probes' seed (0) nor the validation's
ROUNDINGS = ("rz", "rne", "rna")


def draw_k_order(rng, p: dict, cuts: tuple[float, float, float]) -> None:
    """One uniform draw sets ``p["k_order"]``: reversed below cuts[0], pairs
    below cuts[1], random below cuts[2], else K in order (unset)."""
    r = rng.random()
    for cut, order in zip(cuts, ("reversed", "pairs", "random"), strict=True):
        if r < cut:
            p["k_order"] = order
            return


def draw(rng) -> tuple[str, str, str, dict]:
    """(family, A/B format, D type, engine parameters) of one random design."""
    fam = str(rng.choice(list(FORMATS)))
    fmt = str(rng.choice(FORMATS[fam]))
    d = "f32" if fmt in ("tf32", "bf16") or rng.random() < 0.6 else "f16"
    dfrac = get_format(d).frac_bits
    p = {"window_bits": int(rng.integers(12, 31)),
         "block_size": int(rng.choice([1, 2, 4, 8, 16, 32])),
         "input_conversion": str(rng.choice(["truncate", "rne", "rna"])),
         "output_rounding": str(rng.choice(ROUNDINGS))}
    if d == "f32":
        p["zero_floor"] = int(rng.integers(-150, -95))
        p["nan"] = int(rng.choice([0x7FFFFFFF, 0x7FC00000]))
        if rng.random() < 0.3:
            p["output_frac_bits"] = int(rng.integers(8, 23))
    else:
        # floors near zero too: fp6/fp4 products anchor at 2^-4 .. 2^-1
        p["zero_floor"] = int(rng.integers(-26, 0))
        p["nan"] = int(rng.choice([0x7FFF, 0x7E00]))
        if rng.random() < 0.3:
            p["output_frac_bits"] = int(rng.integers(4, 10))
    p["zero_sign"] = str(rng.choice(["positive", "ieee"]))
    if rng.random() < 0.5:
        p["carry_bits"] = int(rng.integers(2, 6))
        p["carry_top"] = str(rng.choice(["wrap", "saturate", "normalize"]))
    r = rng.random()
    if r < 0.1:
        p["window_bits"] = "exact"
    elif r < 0.25:  # a window equal to the output's visible bits (or one more)
        p["window_bits"] = p.get("output_frac_bits", dfrac) + int(rng.integers(0, 2))
    if p["block_size"] == 1 and rng.random() < 0.3:
        p["output_rounding"] = "rna"
        p["output_frac_bits"] = 7 if d == "f16" else int(rng.integers(7, 23))
    p["overflow"] = str(rng.choice(["inf", "saturate"]))
    draw_k_order(rng, p, (0.15, 0.25, 0.3))
    # the corners: C after the blocks, another intermediate type, normalized alignment
    if rng.random() < 0.2:
        p["c_join"] = "last"
        p["c_add_rounding"] = str(rng.choice(ROUNDINGS))
    if d == "f16" and rng.random() < 0.3:
        p["inter_type"] = "f32"
        p["inter_rounding"] = str(rng.choice(ROUNDINGS))
    if rng.random() < 0.15:
        p["align"] = "normalized"
    return fam, fmt, d, p


C_CONVERTS = ("e2m1", "e2m3", "e3m2", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "bf16", "f16",
              "tf32", "f32", "f64")  # every signed float format the engine converts C to
INTER_TYPES = ("f32", "f16", "bf16", "tf32", "e4m3", "e5m2")  # formats with a NaN word


# the intermediate types INTER_TYPES leaves out (engine.PARAMS allows them):
# each drawn in place of its twin half the time
TWINS = {"e4m3": "e4m3fnuz", "e5m2": "e5m2fnuz", "f32": "f64"}


def _twin(rng, inter: str) -> str:
    """``inter``, or half the time its twin of :data:`TWINS`, from a side
    stream seeded by ``rng``'s state (``rng`` itself does not move, so the
    rest of a design, and every design drawn after it, is as before)."""
    if inter not in TWINS:
        return inter
    side = np.random.default_rng(int(rng.bit_generator.state["state"]["state"]))
    return TWINS[inter] if side.random() < 0.5 else inter


def _nan_word(rng, d: str) -> int:
    """A NaN word of D: the canonical ones, or a random payload of either sign."""
    f = get_format(d)
    if rng.random() < 0.6:
        return int(rng.choice([f.canonical_nan, (1 << (f.width - 1)) - 1]))
    top = ((1 << (f.width - f.frac_bits - 1)) - 1) << f.frac_bits
    payload = int(rng.integers(1, 1 << f.frac_bits))
    return (int(rng.integers(0, 2)) << (f.width - 1)) | top | payload


def draw_wide(rng) -> tuple[str, str, str, dict]:
    """(family, A/B format, D type, engine parameters) of one random design
    over every value a TOML profile takes (models/engine.PARAMS: lo..hi and
    choices): windows 0..56 or exact, blocks 1..1024, floors from +8 down to
    -160 or none, any kept bits, carries 0..64 with every top, IEEE
    overflow, NaN words with payloads, C converted to every signed float
    format, blocks chained through any type with a NaN (fnuz and f64 in
    place of their twins half the time, :func:`_twin`), its kept bits."""
    fam = str(rng.choice(list(FORMATS)))
    fmt = str(rng.choice(FORMATS[fam]))
    d = "f32" if fmt in ("tf32", "bf16") or rng.random() < 0.6 else "f16"
    dfrac = get_format(d).frac_bits
    r = rng.random()
    window = ("exact" if r < 0.08 else int(rng.integers(0, 12)) if r < 0.2
              else int(rng.integers(12, 57)))
    p = {"window_bits": window,
         "block_size": int(rng.choice([1, 2, 3, 4, 5, 8, 16, 32, 64, 1024])),
         "input_conversion": str(rng.choice(["truncate", "rne", "rna"])),
         "output_rounding": str(rng.choice(ROUNDINGS))}
    r = rng.random()
    if r < 0.1:
        p["zero_floor"] = "none"
    elif r < 0.25:
        p["zero_floor"] = int(rng.integers(-30, 9))
    else:
        p["zero_floor"] = int(rng.integers(-160, -90)) if d == "f32" else int(rng.integers(-40, 0))
    p["nan"] = _nan_word(rng, d)
    if rng.random() < 0.3:
        p["output_frac_bits"] = int(rng.integers(0, dfrac + 1))
    p["zero_sign"] = str(rng.choice(["positive", "ieee"]))
    if rng.random() < 0.4:
        p["carry_bits"] = int(rng.integers(0, 9)) if rng.random() < 0.8 else int(rng.integers(9, 65))
        p["carry_top"] = str(rng.choice(["wrap", "saturate", "normalize"]))
    p["overflow"] = str(rng.choice(["inf", "saturate", "ieee"]))
    draw_k_order(rng, p, (0.15, 0.25, 0.35))
    if rng.random() < 0.2:
        p["c_join"] = "last"
        p["c_add_rounding"] = str(rng.choice(ROUNDINGS))
    if rng.random() < 0.35:
        p["c_convert"] = str(rng.choice(C_CONVERTS))
    if rng.random() < 0.25:
        inter = _twin(rng, str(rng.choice(INTER_TYPES)))
        p["inter_type"] = inter
        p["inter_rounding"] = str(rng.choice(ROUNDINGS))
        if rng.random() < 0.4:
            p["inter_frac_bits"] = int(rng.integers(0, get_format(inter).frac_bits + 1))
    elif rng.random() < 0.1:  # kept bits of a block result passed on in the output's type
        p["inter_frac_bits"] = int(rng.integers(0, dfrac + 1))
    if rng.random() < 0.15:
        p["align"] = "normalized"
    return fam, fmt, d, p


def draw_c(rng) -> tuple[str, str, str, dict]:
    """:func:`draw`'s design with C converted on entry to a random float
    format (a second generator, so the rest is draw's own)."""
    fam, fmt, d, p = draw(rng)
    p["c_convert"] = str(np.random.default_rng(rng.integers(1 << 32)).choice(C_CONVERTS))
    return fam, fmt, d, p


DRAWS = {"draw": draw, "wide": draw_wide, "c_convert": draw_c}


def write_device(path: Path, fam: str, fmt: str, d: str, p: dict, order_seed: int):
    """The sim device of one design (a K order drawn for the datapath's K)."""
    from tcprobe.devices.sim import SimDevice

    prof = dict(p)
    order = prof.pop("k_order", None)
    prof.setdefault("zero_floor", -133)
    lines = [f"{k} = {json.dumps(v)}" for k, v in prof.items()] + [f'families = ["{fam}"]']
    path.write_text("\n".join(lines) + "\n")
    if order is not None:
        k = SimDevice.from_toml(path).datapath(fam, fmt, d).k
        perm = {"reversed": list(range(k))[::-1], "pairs": [j ^ 1 for j in range(k)],
                "random": [int(x) for x in np.random.default_rng(order_seed).permutation(k)]}
        path.write_text("\n".join(lines + [f"k_order = {json.dumps(perm[order])}"]) + "\n")
    return SimDevice.from_toml(path)


def designs(seed: int, count: int, wide: bool | str = False) -> list[tuple[str, str, str, dict]]:
    """``count`` designs of ``seed``: ``wide`` True is :func:`draw_wide`'s, a
    name one of :data:`DRAWS`, else :func:`draw`'s."""
    rng = np.random.default_rng(seed)
    fn = DRAWS[wide] if isinstance(wide, str) else draw_wide if wide else draw
    return [fn(rng) for _ in range(count)]


# ---------------------------------------------------------------------------
# What a fingerprint must say about each key of the truth


def _blocks(dp, order, block) -> list:
    """The K positions' blocks in the order they run (the sum within a block
    does not depend on the order inside it)."""
    order = list(range(dp.k)) if order is None else list(order)
    block = min(block, dp.k)
    return [sorted(order[i:i + block]) for i in range(0, dp.k, block)]


def truth_keys(dp, t) -> dict:
    """The truth as the fingerprint writes each key (None where a key has a
    'default' spelling: the output's own kept bits, K in order, no carry limit)."""
    d = get_format(dp.d_type)
    keep = None if t.output_frac_bits in (None, d.frac_bits) else t.output_frac_bits
    inter = None if t.inter_type in (None, d.name) else get_format(t.inter_type).name
    return {
        "window_bits": t.window_bits, "zero_floor": t.zero_floor,
        "input_conversion": t.input_conversion, "output_rounding": t.output_rounding,
        "output_frac_bits": keep, "zero_sign": t.zero_sign,
        "nan": d.canonical_nan if t.nan is None else t.nan, "overflow": _overflow(t),
        "carry_bits": t.carry_bits, "carry_top": t.carry_top if t.carry_bits is not None else None,
        "blocks": _blocks(dp, t.k_order, t.block_size), "c_join": t.c_join,
        "c_add_rounding": t.c_add_rounding if t.c_join == "last" else None,
        "inter_type": inter,
        "inter_rounding": (t.inter_rounding or t.output_rounding) if inter else None,
        "align": t.align,
        "c_convert": _converted(dp, t.c_convert),
        "inter_frac_bits": _inter_keep(dp, t.inter_type, t.inter_frac_bits, keep),
    }


def _overflow(t) -> str:
    """The overflow as a fingerprint names it: IEEE overflow is Inf under an
    RNE or RNA output and the largest finite value under RZ
    (models/formats.Overflow), so it is spelled as the one it is."""
    if t.overflow != "ieee":
        return t.overflow
    return "saturate" if t.output_rounding == "rz" else "inf"


def _inter_keep(dp, inter_type, bits, out_keep):
    """A block result's kept bits as the fingerprint names them: None where
    they are the default (the output's kept bits when the types agree, else
    the intermediate type's own)."""
    d = get_format(dp.d_type)
    i = get_format(inter_type) if inter_type else d
    default = (out_keep if out_keep is not None else d.frac_bits) if i == d else i.frac_bits
    return None if bits in (None, default) else bits


def _converted(dp, c_convert):
    """C's conversion on entry as the fingerprint names it: None where the
    conversion changes no C word (judged by the engine's own conversion on
    C's extreme words, not by the ladder's step): the largest and smallest
    finite magnitudes and a significand of all ones, both signs."""
    from tcprobe.models.formats import convert
    from tcprobe.models.words import exp_range, max_sig, word

    if c_convert is None:
        return None
    c = get_format(dp.c)
    lo, _, hi = exp_range(c)
    mags = [(max_sig(c), hi - c.frac_bits), (1, lo), ((1 << (c.frac_bits + 1)) - 1, -c.frac_bits)]
    words = np.array([word(c, s, m, q) for s in (0, 1) for m, q in mags], np.int64)
    back = convert(convert(words, c, c_convert), c_convert, c)
    return None if np.array_equal(back, words) else get_format(c_convert).name


def found_keys(dp, fp) -> tuple[dict, set]:
    """(the fingerprint's value of every truth key, the keys it names open)."""
    d = get_format(dp.d_type)
    opened = set(fp.undetermined)
    keep = None if fp.output_frac_bits in (None, d.frac_bits) else fp.output_frac_bits
    block = fp.block_size
    blocks = None
    if block is not None and "k_order" not in opened:
        blocks = _blocks(dp, fp.k_order, block)
    if "block_size" in opened or "k_order" in opened:
        opened.add("blocks")
    if fp.split:
        blocks = [sorted(part) for part in fp.split["parts"]]
    c_join = getattr(fp, "c_join", None)
    if c_join is None and fp.split:
        c_join = "last"
    c_add = getattr(fp, "c_add_rounding", None)
    if c_add is None and fp.split:
        c_add = fp.split.get("c_add_rounding")
    inter = getattr(fp, "inter_type", None)
    inter = None if inter in (None, d.name) else get_format(inter).name
    out = {"window_bits": fp.window_bits, "zero_floor": fp.zero_floor,
           "input_conversion": fp.input_conversion, "output_rounding": fp.output_rounding,
           "output_frac_bits": keep, "zero_sign": fp.zero_sign, "nan": fp.nan,
           "overflow": fp.overflow, "carry_bits": fp.carry_bits,
           "carry_top": fp.carry_top if fp.carry_bits is not None else None,
           "blocks": blocks, "c_join": c_join or "first",
           "c_add_rounding": c_add if (c_join or "first") == "last" else None,
           "inter_type": inter,
           "inter_rounding": getattr(fp, "inter_rounding", None) if inter else None,
           "align": getattr(fp, "align", None) or "raw",
           "c_convert": _converted(dp, getattr(fp, "c_convert", None)),
           "inter_frac_bits": _inter_keep(dp, getattr(fp, "inter_type", None),
                                          getattr(fp, "inter_frac_bits", None), keep)}
    # a key named open stays None (not its default spelling)
    for key in ("c_join", "align"):
        if key in opened and getattr(fp, key, None) is None:
            out[key] = None
    if "window_bits" in opened or fp.window_bits is None and "window_bits" in fp.assumed:
        opened.add("window_bits")
    if "carry_bits" in opened:
        opened.add("carry_top")
    for key in ("c_add_rounding", "inter_rounding"):
        for name in (key, f"split.{key}"):
            if name in fp.undetermined:
                opened.add(key)
    return out, opened


def held_out(dp, n: int, seed: int = HELD_OUT_SEED):
    """Held-out cases: random ones, the validate suites, stress cases and
    lone tiny products, from a seed of their own."""
    from tcprobe import suites
    from tcprobe.models.cases import Cases
    from tcprobe.suites.mix import random_cases

    rng = np.random.default_rng(seed)
    parts = [random_cases(dp, n // 4, rng), stress_cases(dp, n // 4, seed),
             tiny_product_cases(dp, n // 4, seed)]
    names = [s for s in ("raw", "finite", "edge", "adversarial") if suites.generators(dp, s)]
    for s in names:
        cs, _ = suites.generate(dp, s, seed, 0, max(1, n // 4 // len(names)))
        parts.append(Cases(cs.a, cs.b, cs.c, cs.scale_a, cs.scale_b, cs.active))
    return Cases.concat(parts)


@dataclass
class Verdict:
    validated: bool
    held_out_mismatches: int
    exact: list = field(default_factory=list)
    open: list = field(default_factory=list)
    wrong: dict = field(default_factory=dict)  # key -> (found, truth) or why
    failed_steps: list = field(default_factory=list)
    untrue_ranges: dict = field(default_factory=dict)

    @property
    def wrong_validated(self) -> bool:
        """Called validated while its model misses the device somewhere."""
        return self.validated and self.held_out_mismatches > 0

    @property
    def kind(self) -> str:
        """recovered (every key exact), open (the rest truly open) or wrong."""
        if (self.wrong or self.failed_steps or self.untrue_ranges or not self.validated
                or self.held_out_mismatches):
            return "wrong"
        return "open" if self.open else "recovered"

    def text(self) -> str:
        return (f"{self.kind}: validated {self.validated}, held-out mismatches "
                f"{self.held_out_mismatches}, open {self.open}, wrong {self.wrong}, failed "
                f"{self.failed_steps}, untrue ranges {self.untrue_ranges}")


def judge(dev, dp, n_held_out: int = 8000) -> tuple[Verdict, object]:
    """Run the ladder on ``dev`` for ``dp`` and judge its fingerprint."""
    from tcprobe.ladder import run_ladder

    res = run_ladder(dev, dp)
    truth = dev.model(dp).params
    fp = res.fingerprint
    failed = [(f.step, f.summary[:160]) for f in res.findings if f.status == "failed"]
    if fp is None:
        return Verdict(res.validated, -1, wrong={"fingerprint": "none"}, failed_steps=failed), res
    ctx = res.context
    cases = ctx.complete(held_out(dp, n_held_out))
    got = ctx.run(cases)
    try:
        miss = int((fp.model(dp).evaluate(cases) != got).sum())
    except ValueError as e:  # a model that cannot run is a miss of every case
        miss, failed = len(cases), failed + [("model", str(e))]
    v = Verdict(res.validated, miss, failed_steps=failed)
    want = truth_keys(dp, truth)
    have, opened = found_keys(dp, fp)
    for key, w in want.items():
        h = have[key]
        if h == w:
            v.exact.append(key)
        elif key in opened and h is None:
            v.open.append(key)
        else:
            v.wrong[key] = (h, w)
    if ctx.ranges:
        v.untrue_ranges = false_ranges(res, dp, cases)
    return v, res


def judge_profile(path: Path, fam: str, fmt: str, d: str, profile: dict, order_seed: int,
                  validated: bool = True) -> tuple[Verdict, object]:
    """Write one design's profile, run the ladder on it and judge it as the
    design tests ask: no wrong model called validated, every key exact or
    truly open (none wrong); ``validated``: the ladder validated its model
    and it gives every held-out word."""
    dev = write_device(path, fam, fmt, d, profile, order_seed)
    dp = dev.datapath(fam, fmt, d)
    v, res = judge(dev, dp)
    assert not v.wrong_validated, f"a wrong model called validated: {v.text()}"
    assert v.kind in ("recovered", "open") and not v.wrong, f"{path.stem}: {v.text()}"
    if validated:
        assert res.validated and v.held_out_mismatches == 0, f"{path.stem}: {v.text()}"
    return v, res


def sweep(seed: int, count: int, tmp: Path, only=None, n_held_out: int = 8000,
          wide: bool = False):
    """Yield (index, design, Verdict or the exception text) for each design."""
    import traceback

    for idx, (fam, fmt, d, p) in enumerate(designs(seed, count, wide)):
        if only is not None and idx not in only:
            continue
        try:
            dev = write_device(tmp / f"d{idx}.toml", fam, fmt, d, p, seed * 1000 + idx)
            dp = dev.datapath(fam, fmt, d)
            if not dev.supports(dp):
                yield idx, (fam, fmt, d, p), "unsupported"
                continue
            yield idx, (fam, fmt, d, p), judge(dev, dp, n_held_out)[0]
        except Exception:  # a crash is a finding of its own
            yield idx, (fam, fmt, d, p), traceback.format_exc()[-800:]


# The profile keys the hand-written design tables (test_ladder_few_bits,
# test_ladder_wide_classes) write their designs over: H100-like bf16.
DESIGN_BASE = {"window_bits": 25, "block_size": 8, "zero_floor": -133,
               "input_conversion": "truncate", "output_rounding": "rz",
               "zero_sign": "positive", "nan": 0x7FFFFFFF}


def judge_design(tmp_path: Path, name: str, design: tuple):
    """Judge one row of such a table, (family, A/B format, D, profile keys over
    DESIGN_BASE, fingerprint keys written by hand, keys that must be named
    open): every hand-written key read as written, every named key open.
    Returns (verdict, ladder result)."""
    fam, fmt, d, p, expect, opened = design
    v, res = judge_profile(tmp_path / f"{name}.toml", fam, fmt, d, {**DESIGN_BASE, **p}, 42)
    fp = res.fingerprint
    for key, want in expect.items():
        assert getattr(fp, key) == want, (key, getattr(fp, key))
    for key in opened:
        assert key in fp.undetermined and getattr(fp, key) is None, key
    return v, res

