"""``tcprobe batch-invariance``: which M give row i the same bits as M = 1, from the atlas."""

from __future__ import annotations

import click

from tcprobe.commands.options import Names, OneName, json_option
from tcprobe.console import fail, say, write_json

DTYPES = ("bf16", "f16", "tf32", "e4m3", "e5m2")


def _range(text: str) -> tuple[int, int]:
    parts = str(text).split(":")
    try:
        lo, hi = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (int(text), int(text))
    except ValueError:
        fail(f"--m: {text!r} is not LO:HI (two positive integers)")
    return lo, hi


@click.command("batch-invariance")
@click.option("--gpu", required=True, help="The GPU whose library atlas answers (e.g. H200).")
@click.option("--format", "--dtype", "dtype", cls=OneName, shown=("--format",), required=True,
              type=Names(DTYPES),
              help="Operand format (tf32: float32 with TF32 allowed), as --format in every "
                   "command; --dtype, its older name here, still works (elsewhere --dtype is "
                   "D's type).")
@click.option("--n", "-n", "n", type=int, required=True, help="N, the columns of D.")
@click.option("--k", "-k", "k", type=int, required=True, help="K, the reduction length.")
@click.option("--m", "m_range", default="1:4096", show_default=True,
              help="The M range LO:HI (the batch of rows).")
@click.option("--ref", type=int, default=1, show_default=True,
              help="The M every other M is compared with.")
@click.option("--form", default="plain", show_default=True,
              type=Names(("plain", "addmm_beta1", "bias", "scaled_mm", "scaled_mm_fast")),
              help="The torch call's form (docs/atlas.md).")
@json_option("Also write the ranges as JSON here")
def command(gpu, dtype, n, k, m_range, ref, form, json_path):
    """For a GPU, operand format, N and K: which M give row i the same bits as
    M = --ref, where the library's choice changes and by what mechanism
    (split count, kernel family), with each range's provenance (measured,
    predicted, default guess). From the atlas (tcprobe.atlas); no GPU."""
    from tcprobe.atlas import AtlasError, batch_invariance
    from tcprobe.atlas.store import load

    lo, hi = _range(m_range)
    try:
        ranges = batch_invariance(gpu, dtype, n, k, lo, hi, ref=ref, form=form)
    except (AtlasError, ValueError) as e:
        text = str(e)
        for name, option in (("ref", "--ref"), ("n", "--n"), ("k", "--k"), ("m_lo", "--m"),
                             ("m_hi", "--m")):  # the API's argument, as the command's option
            if text.startswith(f"{name} must be"):
                text = option + text[len(name):]
        fail(text)
    from tcprobe.matrix.choice import gpu_name

    data = load(gpu_name(gpu))
    lib = f"{data['library']}, torch {data['torch']}" if data else "no atlas"
    say(f"{gpu_name(gpu)} {dtype}, N = {n}, K = {k}, M {lo}..{hi} ({lib}): row i against "
        f"M = {ref}")
    width = max(len(r.split_text(k)) for r in ranges)
    say(f"  {'M':<12} {'kernel':<{width}}  {'provenance':<13}  {'same bits':<9}  what changes")
    for r in ranges:
        ms = f"{r.lo}" if r.lo == r.hi else f"{r.lo}-{r.hi}"
        same = "(ref)" if r.lo == ref else r.same
        say(f"  {ms:<12} {r.split_text(k):<{width}}  {r.provenance:<13}  {same:<9}  "
            f"{r.change or ''}".rstrip())
    seen = []
    for r in ranges:
        if r.basis not in seen:
            seen.append(r.basis)
            say(f"  {r.provenance}: {r.basis}")
    if json_path:
        write_json(json_path, {"gpu": gpu_name(gpu), "dtype": dtype, "n": n, "k": k,
                               "ref": ref, "form": form, "library": lib,
                               "ranges": [r.row() for r in ranges]})
