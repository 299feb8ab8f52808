"""tcprobe gemm-probe: operand sets that separate a library GEMM's schedules."""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from tcprobe.capture.lock import hold_out_folder
from tcprobe.commands.options import SEED, Names, named_path
from tcprobe.console import console
from tcprobe.matrix import gemm_probe
from tcprobe.matrix.choice import gpu_name, library_datapath
from tcprobe.outfiles import atomic_file, write_atomic

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def save_words(path: Path, x: np.ndarray) -> None:
    """An array as raw words (.npy of unsigned ints; the manifest names the format),
    renamed into place (a link planted in --out is replaced, never written through)."""
    with atomic_file(path) as fh:
        np.save(fh, np.ascontiguousarray(x).view(_UNSIGNED[x.dtype.itemsize]))


@click.command("gemm-probe")
@click.option("--gpu", required=True, help="GPU the library runs on (H100, H200, A100, ...).")
@click.option("--format", "fmt", required=True, type=Names(sorted(gemm_probe.FORMATS)),
              help="Element format of A and B.")
@click.option("--out", "out_dir", required=True, callback=named_path, type=click.Path(file_okay=False),
              help="Folder to write the cases and manifest.json into.")
@click.option("--m", default=128, show_default=True, type=int)
@click.option("--n", default=128, show_default=True, type=int)
@click.option("--k", default=4096, show_default=True, type=int)
@click.option("--seed", default=0, show_default=True, type=SEED,
              help="Seed of the random operands (a non-negative integer).")
def command(gpu, fmt, out_dir, m, n, k, seed):
    """Write the probe cases (A, B, C as raw-word .npy) and a manifest that
    ``python -m tcprobe.capture.torch_gemm DIR`` runs."""
    gpu = gpu_name(gpu)
    library_datapath(gpu, fmt)  # cases for a format the GPU's library runs, or one error
    cases = gemm_probe.cases(fmt, m, n, k, seed)
    out = Path(out_dir)
    with hold_out_folder(out):  # one writer: runs at once into one folder mixed their cases
        entries = _write(out, cases)
        manifest = {"gpu": gpu, "format": fmt, "m": m, "n": n, "k": k, "seed": seed,
                    "cases": entries}
        write_atomic(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    console.print(f"wrote {len(entries)} cases ({m}x{n}x{k} {fmt}) to {out}; run "
                  f"python -m tcprobe.capture.torch_gemm {out} on the GPU")


def _write(out: Path, cases) -> list[dict]:
    """The cases' words into ``out``, their manifest entries returned. An
    earlier run's manifest goes first, so that a run stopped half way leaves
    no manifest over a mix of two runs' words (the runner then refuses it)."""
    (out / "manifest.json").unlink(missing_ok=True)
    entries = []
    for case in cases:
        e = {"name": case["name"], "alpha": case["alpha"], "beta": case["beta"]}
        if case["name"] == "bias":
            e["bias"] = True  # the runner passes C's first row as a 1-D bias
        for part in ("a", "b", "c"):
            if case[part] is None:
                continue
            name = f"{case['name']}.{part}.npy"
            save_words(out / name, case[part])
            e[part] = name
        e["c_format"] = None if case["c"] is None else {
            "bfloat16": "bf16", "float16": "f16", "float32": "f32"}[case["c"].dtype.name]
        entries.append(e)
    return entries
