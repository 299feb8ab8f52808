"""Run ``tcprobe gemm-probe`` cases through the local GPU's torch GEMMs.

    python -m tcprobe.capture.torch_gemm DIR [--fit]

reads DIR/manifest.json, runs every case through ``torch.matmul``,
``torch.addmm`` (cases with C; a 1-D bias for the ``bias`` case, also
through ``F.linear``), ``F.linear`` and, for fp8,
``torch._scaled_mm`` (unit scales, f32 output, with and without
``use_fast_accum``; OCP e4m3/e5m2, or MI300X's e4m3fnuz/e5m2fnuz), saves each D as raw words (DIR/<case>.<op>.d.npy) and
lists them in DIR/results.json with the ``tcprobe fit-gemm`` command that
fits each. ``--fit`` runs those fits here too (DIR/fits.json). torch is
imported only here, and only when this runs.
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

from tcprobe import npyfile
from tcprobe.jsontext import loads as load_json
from tcprobe.outfiles import atomic_file, write_atomic

FP8_TORCH_DTYPES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",  # OCP (NVIDIA, MI350)
                    "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz"}  # MI300X
TORCH_DTYPES = {"bf16": "bfloat16", "f16": "float16", "tf32": "float32", "f32": "float32",
                **FP8_TORCH_DTYPES}
WORD_DTYPES = {1: "int8", 2: "int16", 4: "int32"}
D_FORMATS = {"torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32"}


A_FORMATS = ("bf16", "f16", "tf32", *FP8_TORCH_DTYPES)  # gemm-probe's formats
C_FORMATS = ("bf16", "f16", "f32")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


class ManifestError(ValueError):
    """A manifest.json that gemm-probe did not write, or one that names a
    file outside its folder."""


def _file_name(folder: Path, value, where: str) -> str:
    """A file name the manifest gives: a plain name inside ``folder`` (no
    folder part, no ``..``); the runner reads and writes nothing elsewhere."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise ManifestError(f"{where}: {value!r} is not a plain file name inside {folder} "
                            "(letters, digits, '_', '.', '-'; no folder part, no '..')")
    return value


def check_manifest(folder: Path, manifest) -> dict:
    """``manifest`` as gemm-probe writes it (its keys, types and file names
    checked), or ManifestError naming the first thing wrong: before torch,
    before any case runs."""
    if not isinstance(manifest, dict):
        raise ManifestError("manifest.json holds no JSON object")
    for key, kind in (("gpu", str), ("format", str), ("k", int), ("cases", list)):
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            raise ManifestError(f"manifest.json: {key!r} is missing or not a {kind.__name__}")
    if manifest["format"] not in A_FORMATS:
        raise ManifestError(f"manifest.json: format {manifest['format']!r} is not one of "
                            f"{', '.join(A_FORMATS)}")
    if manifest["k"] < 1:
        raise ManifestError(f"manifest.json: k must be positive, not {manifest['k']}")
    if not manifest["cases"]:  # nothing to run: "running 0 cases" and an empty results.json
        raise ManifestError("manifest.json: 'cases' is empty (gemm-probe writes at least one)")
    from tcprobe.matrix.choice import gpu_name

    try:  # the fits name it: an unknown GPU, found only after every case ran on the GPU
        gpu_name(manifest["gpu"])
    except ValueError as e:
        raise ManifestError(f"manifest.json: {e}") from None
    names = set()
    for i, case in enumerate(manifest["cases"]):
        where = f"manifest.json: case {i}"
        if not isinstance(case, dict):
            raise ManifestError(f"{where} is not a JSON object")
        name = _file_name(folder, case.get("name"), f"{where}: name")
        where = f"manifest.json: case {name!r}"
        if name in names:
            raise ManifestError(f"{where} appears twice")
        names.add(name)
        for part in ("a", "b", "c"):
            if part == "c" and case.get("c") is None:
                continue
            f = _file_name(folder, case.get(part), f"{where}: {part}")
            if not (folder / f).is_file() or (folder / f).is_symlink():
                raise ManifestError(f"{where}: {part}: {folder / f} is not a file in {folder}")
        if case.get("c") is not None:
            if case.get("c_format") not in C_FORMATS:
                raise ManifestError(f"{where}: c_format {case.get('c_format')!r} is not one of "
                                    f"{', '.join(C_FORMATS)}")
        elif case.get("bias"):
            raise ManifestError(f"{where}: a bias case needs c")
        for key in ("alpha", "beta"):
            v = case.get(key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ManifestError(f"{where}: {key} {v!r} is not a finite number")
    return manifest


def _bits(path) -> np.ndarray:
    """The words of an operand file, its bits as unsigned integers: what the
    runner hands torch and what the fit reads (one reading of one file; a
    float16 file's words, never its values cast)."""
    words = npyfile.load(Path(path), str(path))
    return words.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[words.dtype.itemsize])


def _tensor(torch, path: Path, fmt: str, device: str):
    words = _bits(path)
    signed = words.view({1: np.int8, 2: np.int16, 4: np.int32}[words.dtype.itemsize])
    t = torch.from_numpy(np.ascontiguousarray(signed))
    return t.view(getattr(torch, TORCH_DTYPES[fmt])).to(device)


def _save(torch, path: Path, d) -> str:
    d = d.detach().cpu().contiguous()
    size = d.element_size()
    words = d.view(getattr(torch, WORD_DTYPES[size])).numpy()
    with atomic_file(path) as fh:
        np.save(fh, words.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[size]))
    return D_FORMATS.get(str(d.dtype), str(d.dtype))


def runs(torch, case: dict, fmt: str, a, b, c):
    """(op, D tensor, alpha, beta, uses C) of every library call of one case."""
    import torch.nn.functional as F

    al, be = case["alpha"], case["beta"]
    if fmt in FP8_TORCH_DTYPES:
        one = torch.tensor(1.0, device=a.device)
        bt = b.t().contiguous().t()  # column-major B, as _scaled_mm needs
        for fast in (False, True):
            d = torch._scaled_mm(a, bt, scale_a=one, scale_b=one, out_dtype=torch.float32,
                                 use_fast_accum=fast)
            yield (f"scaled_mm{'_fast' if fast else ''}", d, 1.0, 0.0, False)
        return
    if case.get("bias"):  # C's rows are one row: torch takes it as a 1-D bias
        bias = c[0].contiguous()
        yield "addmm_bias", torch.addmm(bias, a, b), 1.0, 1.0, True
        yield "linear_bias", F.linear(a, b.t(), bias), 1.0, 1.0, True
        return
    if c is None or (al == 1.0 and be == 0.0):
        yield "matmul", torch.matmul(a, b), 1.0, 0.0, False
        yield "linear", F.linear(a, b.t()), 1.0, 0.0, False
    if c is not None:
        yield "addmm", torch.addmm(c, a, b, beta=be, alpha=al), al, be, True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if not argv:  # bad input: one error line (the usage is -h's)
        print("error: DIR: give the folder gemm-probe wrote (python -m tcprobe.capture.torch_gemm "
              "DIR [--fit]; -h says more)", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    extra = list(argv[1:])
    fit = "--fit" in extra
    if fit:
        extra.remove("--fit")
    if extra:  # a second folder, --fit twice, a misspelt option: one error, not ignored
        print(f"error: unexpected argument {extra[0]!r} (python -m tcprobe.capture.torch_gemm "
              "DIR [--fit]: one folder, --fit at most once)", file=sys.stderr)
        return 2
    try:
        manifest = load_json((folder / "manifest.json").read_text())
    except (OSError, ValueError, RecursionError) as e:
        print(f"error: DIR: cannot read {folder / 'manifest.json'}: {e}", file=sys.stderr)
        return 2
    try:
        manifest = check_manifest(folder, manifest)
    except ManifestError as e:
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    # what it does, before torch's import (seconds): a machine with no GPU then hears why
    # it stops, not a blank screen for 3 s
    print(f"running {len(manifest['cases'])} {manifest['format']} cases of {folder} through "
          "torch on this machine's GPU (torch's import first)", file=sys.stderr, flush=True)
    try:
        import torch
    except ImportError:
        print("error: torch is not installed (the runner needs torch with CUDA)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: torch sees no CUDA GPU", file=sys.stderr)
        return 2
    fmt = manifest["format"]
    torch.backends.cuda.matmul.allow_tf32 = fmt == "tf32"
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    results = []
    for case in manifest["cases"]:
        a = _tensor(torch, folder / case["a"], fmt, "cuda")
        b = _tensor(torch, folder / case["b"], fmt, "cuda")
        c = None if case.get("c") is None else _tensor(torch, folder / case["c"], case["c_format"],
                                                 "cuda")
        for op, d, al, be, uses_c in runs(torch, case, fmt, a, b, c):
            torch.cuda.synchronize()
            name = f"{case['name']}.{op}.d.npy"
            d_fmt = _save(torch, folder / name, d)
            cmd = ["tcprobe", "fit-gemm", "--a", str(folder / case["a"]), "--b",
                   str(folder / case["b"]), "--d", str(folder / name), "--gpu", manifest["gpu"],
                   "--format", fmt, "--d-format", d_fmt, "--alpha", str(al), "--beta", str(be)]
            if uses_c:
                cmd += ["--c", str(folder / case["c"]), "--c-format", case["c_format"]]
            results.append({"case": case["name"], "op": op, "d": name, "d_format": d_fmt,
                            "alpha": al, "beta": be, "c": case.get("c") if uses_c else None,
                            "c_format": case["c_format"] if uses_c else None,
                            "fit": cmd})
    info = {"torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0), "results": results}
    write_atomic(folder / "results.json", json.dumps(info, indent=2) + "\n")
    print(f"{len(results)} library calls on {info['device']} (torch {info['torch']}): "
          f"{folder / 'results.json'}")
    if fit:
        return _fit(folder, manifest, results)
    return 0


def split_bounds(folder: Path, manifest: dict, results: list[dict]) -> tuple[int, ...] | None:
    """The K offsets where the kernel's splits start, read off the D that
    torch.matmul computed for gemm-probe's splits case (None where there is
    none, or its blocks differ)."""
    from tcprobe.matrix import split_probe

    for r in results:
        if r["case"] == "splits" and r["op"] == "matmul":
            got = split_probe.read(manifest["format"], np.load(folder / r["d"]), manifest["k"])
            return None if got.unexpected else got.uniform()
    return None


def _fit(folder: Path, manifest: dict, results: list[dict]) -> int:
    """Every result through fit-gemm's search (DIR/fits.json), with the split
    starts the splits case shows joining the search; the splits case itself
    is read, not fitted."""
    from tcprobe.matrix import fit_gemm

    fmt = manifest["format"]
    bounds = split_bounds(folder, manifest, results)
    fits = [] if bounds is None else [{"case": "splits", "op": "matmul", "bounds": list(bounds)}]
    for r in results:
        if r["case"] == "splits":
            continue
        t0 = time.perf_counter()
        ab = {"tf32": "tf32"}.get(fmt, fmt)
        a = _bits(r["fit"][3]).astype(np.uint32)
        b = _bits(r["fit"][5]).astype(np.uint32)
        c = None if r["c"] is None else _bits(folder / r["c"]).astype(np.uint32)
        d = _bits(folder / r["d"]).astype(np.uint32)
        try:
            f = fit_gemm.fit(a, ab, b, ab, c, r["c_format"], d, r["d_format"],
                             gpu=manifest["gpu"], alpha=r["alpha"], beta=r["beta"],
                             bounds=bounds)
        except ValueError as e:
            fits.append({"case": r["case"], "op": r["op"], "error": str(e)})
            continue
        fits.append({"case": r["case"], "op": r["op"], "explained": f.explained,
                     "mismatches": f.mismatches, "elements": f.elements,
                     "schedules": [s.to_dict() for s in f.schedules],
                     "seconds": round(time.perf_counter() - t0, 2)})
        print(f"{r['case']}.{r['op']}: {'explained' if f.explained else 'not explained'} "
              f"({f.mismatches} of {f.elements} differ, {len(f.schedules)} schedule(s))",
              flush=True)
        # after every fit, so a run cut short keeps what it fitted
        write_atomic(folder / "fits.json", json.dumps(fits, indent=2) + "\n")
    write_atomic(folder / "fits.json", json.dumps(fits, indent=2) + "\n")
    return 0 if all(x.get("explained") for x in fits if "bounds" not in x) else 1


if __name__ == "__main__":
    sys.exit(main())
