"""Build the library atlas (tcprobe/atlas/data/H200.json) from the committed H200 run.

    python3 scripts/build_atlas.py [--check]

Reads, never types in: each shape's manifest and the runner's results
(reports/silicon/2026-12-04-h200/library/{captures,run1-64x64x512}/*), the
split starts the splits probe read off D and the schedules fit-gemm found
(library/FITS.md; run1's fits.json for the shapes FITS.md does not list),
and the run's versions. Per shape it records the kernel configuration
observed (the split starts, or for fp8, which has no splits case, the split
of the fast-accumulation fit with the fewest schedules) and, per form of
torch call, the Schedule (a dict of axes) that reproduces it with the calls
that are its evidence. How a form's schedule is made from what was observed
is the silicon README's table (reports/silicon/2026-12-04-h200/README.md):

* the instruction: the fits' first (mma; mma and wgmma give the same words
  for bf16, f16, tf32) and wgmma for fp8;
* the split: ``parallel``, ``split_rule='ceil'``, in blocks of 128 bytes of K
  (64 bf16/f16, 32 tf32, 128 fp8 elements: Meta's G, checked against every
  start the probe read);
* tf32: operands rounded RNE and the split-K epilogue fma(beta, C, alpha*acc);
* ``addmm`` with beta = 1 and a 2-D C: ``c='output'`` where the fits of those
  calls show it and K is not split;
* a 1-D bias: the split the bias calls' fits show (the cuBLASLt bias epilogue);
* fp8 ``_scaled_mm``: promoted every 4 instructions, never with fast accumulation.

``--check`` fails if the committed file differs from what this builds.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = Path("reports/silicon/2026-12-04-h200")
LIB = RUN / "library"
OUT = ROOT / "tcprobe" / "atlas" / "data" / "H200.json"
BLOCK_BYTES = 128
WIDTH = {"bf16": 2, "f16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}
DEFAULTS = {"k_order": "forward", "split_k": 1, "split_kind": "serial", "split_rule": "even",
            "reduction": "forward", "c": "epilogue", "fused": True, "fma_on": "acc"}
SPLIT_AXES = ("k_block", "split_k", "split_kind", "split_rule")


def fits_md() -> dict:
    """{(fmt, (m, n, k)): {call: (text, n)}} from FITS.md's table."""
    rows: dict = {}
    for line in (ROOT / LIB / "FITS.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not re.fullmatch(r"\w+ \d+x\d+x\d+", cells[0]):
            continue
        fmt, dims = cells[0].split()
        shape = tuple(int(x) for x in dims.split("x"))
        of = re.search(r"\(of (\d+)\)$", cells[3])
        rows.setdefault((fmt, shape), {})[cells[1]] = (cells[3], int(of.group(1)) if of else 0)
    return rows


def axes_of(text: str) -> dict:
    """'instr=mma, split_k=8 (of 6)' -> {'instr': 'mma', 'split_k': 8}."""
    text = re.sub(r"\s*\(of \d+\)$", "", text)
    out = {}
    for part in text.split(","):
        key, value = part.strip().split("=")
        out[key] = int(value) if value.isdigit() else value
    return out


def run1_fits(fmt: str) -> dict:
    """run1's fits.json as FITS.md's rows: {call: (axes text, n)}."""
    path = ROOT / LIB / "run1-64x64x512" / fmt / "fits.json"
    rows = {}
    for f in json.loads(path.read_text()):
        if f.get("explained"):
            s = {k: v for k, v in f["schedules"][0].items()
                 if k not in ("out", "acc", "saturate") and v is not None and DEFAULTS.get(k) != v}
            text = ", ".join(f"{k}={v}" for k, v in s.items())
            rows[f"{f['case']}.{f['op']}"] = (f"{text} (of {len(f['schedules'])})",
                                              len(f["schedules"]))
    return rows


def ceil_starts(k: int, block: int, splits: int) -> list[int]:
    blocks = -(-k // block)
    size = -(-blocks // splits)
    return [i * size * block for i in range(1, splits) if i * size < blocks]


def split_from_starts(fmt: str, k: int, starts: list[int]) -> dict:
    if not starts:
        return {}
    block = BLOCK_BYTES // WIDTH[fmt]
    s = {"k_block": block, "split_k": len(starts) + 1, "split_kind": "parallel",
         "split_rule": "ceil"}
    if ceil_starts(k, block, s["split_k"]) != starts:
        raise SystemExit(f"error: {fmt} K={k}: starts {starts} are not ceil splits in "
                         f"blocks of {block}")
    return s


def split_from_fits(rows: dict, calls: list[str]) -> tuple[dict, str]:
    """The split axes of the fit with the fewest schedules among ``calls``."""
    best = min((rows[c][1], c) for c in calls if c in rows)[1]
    axes = axes_of(rows[best][0])
    split = {a: axes[a] for a in SPLIT_AXES if a in axes}
    if split.get("split_k", 1) > 1:
        split = {**{a: DEFAULTS.get(a) for a in SPLIT_AXES if a != "k_block"}, **split}
    else:
        split = {}
    return split, best


def form_of(op: str, beta: float) -> str:
    if op in ("matmul", "linear"):
        return "plain"
    if op in ("addmm_bias", "linear_bias"):
        return "bias"
    if op == "addmm":
        return "addmm_beta1" if beta == 1.0 else "plain"
    return op  # scaled_mm, scaled_mm_fast


def build() -> dict:
    fits = fits_md()
    shapes: dict = {}
    meta = None
    for folder in sorted((ROOT / LIB / "captures").iterdir()) + sorted(
            (ROOT / LIB / "run1-64x64x512").iterdir()):
        man = json.loads((folder / "manifest.json").read_text())
        res = json.loads((folder / "results.json").read_text())
        meta = meta or {"torch": res["torch"], "cuda": res["cuda"], "device": res["device"]}
        key = (man["format"], (man["m"], man["n"], man["k"]))
        e = shapes.setdefault(key, {"calls": [], "rows": dict(fits.get(key, {}))})
        if folder.parent.name == "run1-64x64x512" and not e["rows"]:
            e["rows"] = run1_fits(man["format"])
        rel = folder.relative_to(ROOT)
        for r in res["results"]:
            e["calls"].append({"call": f"{r['case']}.{r['op']}", "op": r["op"],
                               "beta": r["beta"], "d": r["d_format"],
                               "evidence": str(rel / r["d"])})
    versions = (ROOT / RUN / "README.md").read_text()
    cublas = re.search(r"nvidia-cublas (\S+)", versions).group(1)
    entries = []
    for (fmt, shape), e in sorted(shapes.items()):
        m, n, k = shape
        rows = e["rows"]
        probe = rows.get("splits probe")
        if probe is not None:
            text = probe[0]
            starts = [] if text.endswith("none") else [
                int(x) for x in text.split("=")[1].split(",")]
            split = split_from_starts(fmt, k, starts)
            kernel = {"split_starts": starts, "read_from": "the splits probe (gemm-probe's "
                      "splits case, split_probe.read) on this shape's splits.matmul D",
                      "evidence": [c["evidence"] for c in e["calls"]
                                   if c["call"].startswith("splits.")]}
        else:
            fitted, best = split_from_fits(rows, [c for c in rows if c.endswith("_fast")])
            if fitted and fitted.get("split_rule") != "ceil":
                raise SystemExit(f"error: {fmt} {shape}: the fit's split is not a ceil split")
            starts = (ceil_starts(k, fitted["k_block"], fitted["split_k"]) if fitted else [])
            split = split_from_starts(fmt, k, starts)
            kernel = {"split_starts": starts,
                      "read_from": f"fit-gemm's fit of {best} (fewest schedules; fp8 has no "
                      "splits case)", "evidence": []}
        kernel.update({"split_k": split.get("split_k", 1),
                       "k_block": split.get("k_block")})
        tf32 = fmt == "tf32"
        fp8 = fmt in ("e4m3", "e5m2")
        base = {"instr": "wgmma" if fp8 else "mma", **split}
        if tf32:
            base.update({"operand_round": "rne", "fma_on": "c"})
        forms: dict = {}
        calls = [c for c in e["calls"] if not c["call"].startswith("splits.")]
        for c in calls:
            form = form_of(c["op"], c["beta"])
            if form not in forms:
                if form == "plain":
                    s = dict(base)
                elif form == "addmm_beta1":
                    shown = [axes_of(rows[x["call"]][0]).get("c") for x in calls
                             if form_of(x["op"], x["beta"]) == form and x["call"] in rows]
                    s = dict(base)
                    if shown and all(v == "output" for v in shown) and not split:
                        s["c"] = "output"
                elif form == "bias":
                    bias_split, _ = split_from_fits(rows, [x["call"] for x in calls
                                                           if form_of(x["op"], 1) == "bias"])
                    s = {k2: v for k2, v in base.items() if k2 not in SPLIT_AXES}
                    s.update(bias_split)
                elif form == "scaled_mm":
                    s = {**base, "promote": 4}
                else:
                    s = dict(base)
                forms[form] = {"schedule": s, "d": c["d"], "evidence": []}
            forms[form]["evidence"].append(c["evidence"])
        entries.append({"op": "scaled_mm" if fp8 else "gemm", "a": fmt, "b": fmt,
                        "layout": "row/col" if fp8 else "row/row",
                        "m": m, "n": n, "k": k, "kernel": kernel, "forms": forms})
    return {"gpu": "H200", "library": f"cuBLAS {cublas}", "torch": meta["torch"],
            "cuda": meta["cuda"], "device": meta["device"],
            "source": f"{RUN} (scripts/build_atlas.py)", "block_bytes": BLOCK_BYTES,
            "entries": entries}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = json.dumps(build(), indent=1) + "\n"
    if "--check" in argv:
        if OUT.read_text() != text:
            print(f"error: {OUT} differs from what scripts/build_atlas.py builds", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(ROOT)} is current")
        return 0
    OUT.write_text(text)
    data = json.loads(text)
    print(f"{OUT.relative_to(ROOT)}: {len(data['entries'])} shapes, "
          f"{sum(len(f['evidence']) for e in data['entries'] for f in e['forms'].values())} "
          f"calls, {data['library']}, torch {data['torch']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
