"""docs/campaign-8-cases.tsv from campaign 8's runs (scripts/campaign8.py):
before (the branch's start, cdc8b9b, through PYTHONPATH at a copy of it) and
after (this branch), matched by command. The harness judges most cases
alone; a case it left for review ("review") was read by hand and is kept
unless BROKEN names it, and its first guesses that were wrong are kept with
the reason in WHY_KEPT.

    python3 scripts/campaign8_table.py BEFORE.tsv[,MORE] AFTER.tsv[,MORE] OUT.tsv
"""

from __future__ import annotations

import collections
import sys

# (a piece of the command, why the answer is right although the harness's guess differed)
WHY_KEPT = [
    ("--split-k 16", "K=64 is 4 blocks of 16: 16 splits are rightly refused"),
    ("split_k=np.", "K=16 is one block: 2 splits are rightly refused"),
    ("--resume --out v2", "documented: a note says the folder holds no capture yet"),
    ("--sparse-lanes 0,1 --out v5", "the default suites include sparse: the lanes are used"),
    ("--jobs 0 ", "documented: 0 is the default, every core"),
    ("--jobs -0 ", "documented: 0 is the default, every core"),
    ("--a 0x3f80,", "documented: a missing word is +0 (trailing commas are the padding)"),
    ("--a ,0x3f80", "documented: a missing word is +0, in its own place"),
    ("--instr mma --family mma", "the deprecated alias gives the same value"),
    ("--gpu MI300X --out gp39", "the GPU's library runs bf16 (choice.library_datapath); the "
                                "probe's runner is torch, which ROCm runs"),
    ("fit-gemm --a a.npy --b b.npy --d ", "an 8x16 D beside an 8x8 A @ B is rightly refused"),
    ("$--gpu H100 ", "lenient as elsewhere: surrounding white space (a tab) is dropped"),
    ("$--compare H100 ", "lenient as elsewhere: surrounding white space (a tab) is dropped"),
    ("$--gpu H100\\n", "lenient as elsewhere: surrounding white space is dropped"),
    ("--gpu H100\r", "lenient as elsewhere: surrounding white space is dropped"),
    ("--compare H100\t", "lenient as elsewhere: surrounding white space is dropped"),
    ("$--compare H100\\n", "lenient as elsewhere: surrounding white space is dropped"),
    ("--compare H100\r", "lenient as elsewhere: surrounding white space is dropped"),
    ("mma.bf16.f32.k16\\n'", "lenient as elsewhere: surrounding white space is dropped"),
    ("np.int8), [0x3F80]", "not a tcprobe case: numpy refuses to build the int8 array"),
    ("np.ones((8, 8), np.float16), gpu='H100', dtype='f32'",
     "the documented rule (matrix/resolve): the f32 epilogue reads an f16 C exactly; only the "
     "chain refuses another D (the command line refuses it: left)"),
    ("FORCE_COLOR", "FORCE_COLOR asks for colour: escapes are what was asked"),
    ("--json oloop", "a link (a loop) where an output FILE goes is replaced by the rename, "
                     "never written through (outfiles.write_atomic)"),
    ("--bounds 8,8", "the same offset twice is that offset"),
    ("COLUMNS=' 80 '", "80 columns show every column (folded); the first harness's check read "
                       "folded headers as lost"),
    ("TCPROBE_KERNEL=''", "documented: a blank TCPROBE_KERNEL is the default form"),
    ("TCPROBE_CUDA_DRIVER='nope'", "no CUDA device is asked for here (unmeasured without a GPU)"),
    ("TCPROBE_NVDISASM=", "no SASS is disassembled here (unmeasured without a CUDA toolkit)"),
]
# cases the harness left for review that break the promise: (a piece, class)
BROKEN = [
    ("MFMA.F16.F32.K16", "unclear"),
    ("--datapath mma.bf16.f32.k16 --a -0", "silent"),
    ("--datapath mma.bf16.f32.k16 --c -0", "silent"),
    ("strict_auto=True)", "silent"),
    ("TCPROBE_EPILOGUE='ENGINE'", "silent"),
    ("TCPROBE_EPILOGUE=''", "silent"),
]
# still broken, outside what tcprobe's code can reach: (a piece, why)
LEFT = [
    ("SIGINT after 0.2 s", "Ctrl-C in Python's own start-up (site's .pth files, before the "
                           "console script imports tcprobe): Python's KeyboardInterrupt traceback"),
]
# before: an input replaced by the output (checked by hand where an earlier case of the
# run had already replaced the input, so that the harness saw a refusal)
UNSAFE_BEFORE = [
    "--schedule sched_keep.json --json sched_keep.json",
    "--device sim:p_keep.toml",
    "--json cap_in/H200/bf16/a_H200_bf16.txt",
    "--json cap_in/H200/bf16/d_H200_fp32.txt",
    "--json v_keep/capture.tcap",
    "3 at once: tcprobe gemm-probe",  # three runs' words in one folder: possible, by reading
]


def read(paths: str) -> dict[tuple, list[str]]:
    """Rows keyed by (class, command, how many times it came before): the TSV shows a tab
    in a value as a space, so two cases may read alike."""
    rows = {}
    for path in paths.split(","):  # a later file's case replaces an earlier one's
        seen = collections.Counter()
        with open(path, errors="replace", newline="\n") as fh:
            next(fh)
            for line in fh:
                f = line.rstrip("\n").split("\t")
                rows[(f[1], f[4], seen[f[1], f[4]])] = f
                seen[f[1], f[4]] += 1
    return rows


def _has(cmd: str, piece: str) -> bool:
    """``piece`` in ``cmd``; a piece starting with '$' ends it."""
    return cmd.endswith(piece[1:]) if piece.startswith("$") else piece in cmd


def judge(row: list[str] | None, before: bool) -> tuple[str, str]:
    """(verdict, why kept) of one run of one case."""
    if row is None:
        return "not run", ""
    cmd, v = row[4], row[3]
    if before and any(piece in cmd for piece in UNSAFE_BEFORE):
        return "unsafe", ""
    if v == "kept":
        return v, ""
    for piece, why in LEFT:
        if piece in cmd and "KeyboardInterrupt" in row[5]:
            return "left", why
    if "KeyboardInterrupt" in row[5]:  # Ctrl-C while the command line imported
        return "traceback", ""
    for piece, cls in BROKEN:
        if _has(cmd, piece) and (before or v != "review"):
            return cls, ""
    for piece, why in WHY_KEPT:
        if _has(cmd, piece):
            return "kept", why
    if v == "review":
        return "kept", "read: the answer is right"
    return v, ""


def main() -> None:
    before, after = read(sys.argv[1]), read(sys.argv[2])
    counts = collections.defaultdict(collections.Counter)
    with open(sys.argv[3], "w", newline="\n") as out:
        out.write("id\tclass\texpected\tbefore\tafter\tcommand or code\tbefore: what happened\t"
                  "after: what happens\twhy kept\n")
        for i, (key, a) in enumerate(after.items(), 1):
            b, cmd = before.get(key), key[1]
            (vb, _), (va, why) = judge(b, True), judge(a, False)
            c = counts[a[1]]
            c["cases"] += 1
            c[f"before {vb}"] += 1
            c[f"after {va}"] += 1
            out.write("\t".join([f"H{i:03d}", a[1], a[2], vb, va, cmd, b[5] if b else "",
                                 a[5], why]) + "\n")
    total = collections.Counter()
    kinds = ["silent", "unsafe", "unclear", "traceback", "exit 3", "refused", "left"]
    print("| class | cases | kept before | " + " | ".join(f"{k} before" for k in kinds)
          + " | not run before | kept after | left after |")
    print("| --- " * (len(kinds) + 6) + "|")
    for cls, c in list(counts.items()) + [("**all**", None)]:
        if c is None:
            c = total
        else:
            total.update(c)
        cells = [c["cases"], c["before kept"], *(c[f"before {k}"] for k in kinds),
                 c["before not run"], c["after kept"],
                 sum(v for k, v in c.items() if k.startswith("after ") and k != "after kept")]
        print(f"| {cls} | " + " | ".join(str(x) if x else "" for x in cells) + " |")


if __name__ == "__main__":
    main()
