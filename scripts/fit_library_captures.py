"""Fit every torch GEMM captured on a GPU, here, and write a Markdown table.

    python3 scripts/fit_library_captures.py CAPTURE_DIR [...] --out FITS.md

Each CAPTURE_DIR is one shape as scripts/gpu-library-capture.sh (or the
check's library step) left it: manifest.json, results.json, the D words and
either the operands or sha256.txt of them. Missing operands are made again
by ``tcprobe gemm-probe`` with the manifest's arguments and checked against
the hashes first (a mismatch stops the script). The fits are the runner's
own (tcprobe.capture.torch_gemm, with the split starts the splits case
shows); the table names, per call, whether every word is explained and the
schedules found (the first, and how many).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def prepare(src: Path, work: Path) -> Path:
    """A folder with the operands, D words and a results.json whose paths point there."""
    man = json.loads((src / "manifest.json").read_text())
    dst = work / src.name
    if (src / "sha256.txt").exists():
        subprocess.run([sys.executable, "-m", "tcprobe", "gemm-probe", "--gpu", man["gpu"],
                        "--format", man["format"], "--m", str(man["m"]), "--n", str(man["n"]),
                        "--k", str(man["k"]), "--seed", str(man["seed"]), "--out", str(dst)],
                       check=True, capture_output=True)
        for line in (src / "sha256.txt").read_text().splitlines():
            digest, name = line.split()
            got = hashlib.sha256((dst / name).read_bytes()).hexdigest()
            if got != digest:
                sys.exit(f"error: {src}/{name}: gemm-probe made other words here ({got})")
    else:
        shutil.copytree(src, dst)
    for f in src.glob("*.d.npy"):
        shutil.copy(f, dst / f.name)
    info = json.loads((src / "results.json").read_text())
    for r in info["results"]:
        r["fit"][3] = str(dst / Path(r["fit"][3]).name)
        r["fit"][5] = str(dst / Path(r["fit"][5]).name)
    (dst / "results.json").write_text(json.dumps(info))
    return dst


def brief(s: dict) -> str:
    from tcprobe.matrix.schedule import Schedule

    default = Schedule().to_dict()
    return ", ".join(f"{k}={v}" for k, v in s.items() if k != "out" and default[k] != v) or "cublas"


def main() -> int:
    args = sys.argv[1:]
    out = Path(args[args.index("--out") + 1]) if "--out" in args else None
    folders = [Path(a) for a in args if a != "--out" and (out is None or Path(a) != out)]
    from tcprobe.capture import torch_gemm

    rows = ["| shape | call | explained | schedule (first of n) | s |", "| --- | --- | --- | --- | ---: |"]
    with tempfile.TemporaryDirectory() as tmp:
        for src in folders:
            dst = prepare(src, Path(tmp))
            man = json.loads((dst / "manifest.json").read_text())
            results = json.loads((dst / "results.json").read_text())["results"]
            t0 = time.perf_counter()
            torch_gemm._fit(dst, man, results)
            fits = json.loads((dst / "fits.json").read_text())
            shape = f"{man['format']} {man['m']}x{man['n']}x{man['k']}"
            for f in fits:
                if "bounds" in f:
                    rows.append(f"| {shape} | splits probe | - | splits start at K = "
                                f"{', '.join(map(str, f['bounds'])) or 'none'} | |")
                elif "error" in f:
                    rows.append(f"| {shape} | {f['case']}.{f['op']} | error | {f['error']} | |")
                else:
                    first = brief(f["schedules"][0]) if f["schedules"] else "-"
                    verdict = "yes" if f["explained"] else f"no ({f['mismatches']} of {f['elements']})"
                    rows.append(f"| {shape} | {f['case']}.{f['op']} | {verdict} | {first} "
                                f"(of {len(f['schedules'])}) | {f['seconds']} |")
            print(f"{src}: {len(fits)} fits in {time.perf_counter() - t0:.0f} s", flush=True)
            if out:
                out.write_text("\n".join(rows) + "\n")
    if not out:
        print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
