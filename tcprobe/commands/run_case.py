"""tcprobe run-case: run one case on a device and compare models (reproducers)."""

from __future__ import annotations

import click
import numpy as np
from rich.table import Table

from tcprobe.commands.choose import open_and_choose
from tcprobe.commands.options import family_option, json_option
from tcprobe.commands.validate import resolve_models
from tcprobe.console import console, plain, write_json
from tcprobe.models.cases import Cases
from tcprobe.models.formats import describe, get_format
from tcprobe.models.words import ulps_or_none
from tcprobe.names import once


def parse_words(text: str | None, fmt_name: str, count: int, what: str) -> np.ndarray:
    """'0x3f80,0,1' -> words of the format, padded with +0 words to ``count``;
    an empty entry ('0x3f80,,1') is a missing word, +0 in its own place (never
    skipped, which would move the words after it)."""
    fmt = get_format(fmt_name)
    words = []
    toks = (text or "").replace(" ", "").split(",")
    while toks and not toks[-1]:  # trailing commas: the padding's +0 words
        toks.pop()
    for tok in toks:
        if not tok:
            words.append(0)
            continue
        if tok.startswith("-"):  # int('-0') is 0: a user's negative zero read as +0
            raise click.BadParameter(f"{tok!r} is not a word: words are raw bits, never negative "
                                     "(a negative zero is its sign bit, in hex)",
                                     param_hint=f"--{what}")
        try:
            w = int(tok, 0)
        except ValueError:
            raise click.BadParameter(f"{tok!r} is not a word (hex 0x.. or decimal)",
                                     param_hint=f"--{what}") from None
        if not 0 <= w <= fmt.word_mask:
            raise click.BadParameter(f"{tok} does not fit {fmt.name}", param_hint=f"--{what}")
        words.append(w)
    if len(words) > count:
        raise click.BadParameter(f"{len(words)} words but {what} takes {count}",
                                 param_hint=f"--{what}")
    return np.array(words + [0] * (count - len(words)), fmt.dtype)


@click.command("run-case")
@click.option("--datapath", help="Datapath id (e.g. mma.bf16.f32.k16).")
@click.option("--format", "fmt", help="Input format, with --instr, instead of --datapath.")
@family_option("Instruction family (default: the newest the device runs for the format).")
@click.option("--device", "device_spec", help="Device (sim:b200, ...); default: the GPU, else a sim device.")
@click.option("--a", "a_text", default="", help="A words, comma-separated (missing ones are +0).")
@click.option("--b", "b_text", default="", help="B words, comma-separated (missing ones are +0).")
@click.option("--c", "c_text", default="0", show_default=True, help="The C word.")
@click.option("--scale-a", "sa_text", help="Scale words of A (block-scaled datapaths).")
@click.option("--scale-b", "sb_text", help="Scale words of B (block-scaled datapaths).")
@click.option("--active", "active_text", help="Selected K positions of a sparse datapath (e.g. 0,1,4,5).")
@click.option("--model", "model_names", multiple=True, default=("auto",), show_default=True,
              help="Model to compare (repeatable).")
@json_option("Write the result as JSON")
def command(datapath, fmt, family, device_spec, a_text, b_text, c_text, sa_text, sb_text,
            active_text, model_names, json_path):
    """Run one case on a device and print its word beside each model's
    (exit 1 when a model differs): the reproducers `tcprobe validate` prints."""
    model_names = once(model_names)  # a model named twice (in any case) is run once
    device, dp = open_and_choose(device_spec, fmt, family, datapath)
    a = parse_words(a_text, dp.a_type, dp.k, "a")
    b = parse_words(b_text, dp.b_type, dp.k, "b")
    c = parse_words(c_text, dp.c, 1, "c")
    from tcprobe.matrix.words import refuse_unused

    refuse_unused(dp, scales=bool(sa_text or sb_text), mask=bool(active_text),
                  scale_name="--scale-a" if sa_text else "--scale-b", mask_name="--active")
    sa = sb = active = None
    if dp.block_scaled:
        one = get_format(dp.scale_type).bias
        sa = parse_words(sa_text or str(one), dp.scale_type, dp.n_scales, "scale-a")
        sb = parse_words(sb_text or str(one), dp.scale_type, dp.n_scales, "scale-b")
        if not sa_text:
            sa[:] = one
        if not sb_text:
            sb[:] = one
    if dp.sparse:
        if not active_text:
            raise click.UsageError(f"{dp.id} is sparse: give --active (the selected K positions)")
        try:
            lanes = [int(x, 0) for x in active_text.split(",") if x.strip()]
        except ValueError:
            raise click.BadParameter(f"{active_text!r} is not a list of K positions "
                                     "(e.g. 0,1,4,5)", param_hint="--active") from None
        if any(not 0 <= x < dp.k for x in lanes):
            raise click.BadParameter(f"positions must be in 0..{dp.k - 1}", param_hint="--active")
        active = np.zeros((1, dp.k), bool)
        active[0, lanes] = True
    case = Cases(a[None, :], b[None, :], c, None if sa is None else sa[None, :],
                 None if sb is None else sb[None, :], active)
    case.check(dp)
    models = resolve_models(model_names, dp, device.info().get("gpu"))
    fd = get_format(dp.d_type)
    dw = int(device.run(dp, case)[0])
    t = Table(title=f"{dp.id}: one case", title_justify="left")
    for col in ("who", "word", "ulps vs device"):
        t.add_column(col)
    t.add_row(plain(device.name), describe(fd, dw), "")
    rows, differ = [], 0
    for m in models:
        mw = int(m.evaluate(case)[0])
        ulps = ulps_or_none(fd, mw, dw)
        same = mw == dw
        differ += not same
        t.add_row(plain(m.name), f"[{'green' if same else 'red'}]{describe(fd, mw)}[/]",
                  "same word" if same else ("NaN" if ulps is None else f"{ulps:+d}"))
        rows.append({"model": m.name, "word": f"{mw:#x}", "same": same, "ulps": ulps})
    console.print(t)
    if json_path:
        write_json(json_path, {"datapath": dp.id, "device": device.info(), "device_word": f"{dw:#x}",
                               "models": rows})
    raise SystemExit(1 if differ else 0)
