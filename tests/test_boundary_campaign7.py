"""Issue 36, a seventh campaign (docs/campaign-7.md): each test one class of
fix, asserting the exact answer (exit 2 and one ``error:`` line naming the
problem, nothing written, the right words)."""

from __future__ import annotations

import pytest
from cli_helpers import invoke, one_error

# ---------------------------------------------------------------------------
# One rule for every output FILE (commands/options.file_target): written only
# where asked. Its folder must exist (no command makes one for a file); the
# refusal comes when the option is read, before any work, and nothing is made.

JSON_INTO_MISSING = [
    ["ladder", "--format", "bf16", "--device", "sim:h100"],
    ["validate", "--format", "bf16", "--device", "sim:h100", "--cases", "100", "--out", "{t}/v"],
    ["sass-check"],
    ["targets"],
    ["devices"],
    ["score", "--capture", "{t}"],
    ["fit-gemm", "--gpu", "H100"],
    ["gemm", "--random", "8x8x16", "--format", "bf16", "--gpu", "H100"],
    ["mfma-check"],
    ["report", "merge", "{t}", "--out", "{t}/m"],
]


@pytest.mark.parametrize("args", JSON_INTO_MISSING, ids=[a[0] + (" " + a[1] if a[0] == "report"
                                                                  else "") for a in JSON_INTO_MISSING])
def test_json_into_a_missing_folder_is_refused_by_every_command(tmp_path, args):
    args = [a.replace("{t}", str(tmp_path)) for a in args]
    r = invoke(*args, "--json", tmp_path / "nodir" / "x.json")
    one_error(r, "--json", "nodir", "does not exist", notes=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no folder made, no --out either
