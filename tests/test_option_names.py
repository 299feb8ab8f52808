"""One idea, one option name: the name a user brings from another command
gets a hint naming this command's option (OPTION_HINTS), and the old
spellings still work with a deprecation note."""

import pytest
from cli_helpers import invoke, one_error


@pytest.mark.parametrize("args, needles", [
    (["ladder", "--gpu", "H100", "--format", "bf16"], ["--gpu", "--device sim:h100"]),
    (["validate", "--gpu", "H100"], ["--gpu", "--device"]),
    (["gemm", "--device", "sim:h100", "--random", "8x8x16", "--format", "bf16"],
     ["--device", "--gpu H100"]),
    (["fit-gemm", "--device", "sim:h100"], ["--device", "--gpu"]),
    (["gemm", "--family", "mma", "--gpu", "H100"], ["--family", "--instr"]),
    (["targets", "--sets", "blog"], ["--sets"]),  # no hint: click's own message, one line
    (["validate", "--set", "raw"], ["--set", "validate's case suites are --suite"]),
])
def test_foreign_option_names_get_a_hint(args, needles):
    one_error(invoke(*args), *needles)


def test_hidden_old_names_are_not_suggested():
    line = one_error(invoke("ladder", "--outpt", "f32"))
    assert "--output" not in line.replace("--outpt", "")


def test_replay_takes_instr_and_the_old_family(tmp_path):
    r = invoke("replay", "--instr", "mma", "--capture", tmp_path / "missing.tcap")
    one_error(r, "missing.tcap")  # past option parsing: the file is what is wrong
    r = invoke("replay", "--family", "mma", "--capture", tmp_path / "missing.tcap")
    assert r.exit_code == 2 and "--family is deprecated: use --instr" in r.stderr


def test_fit_gemm_takes_dtype_as_gemm_names_it():
    from tcprobe.commands.fit_gemm import command

    opts = {o for p in command.params for o in p.opts}
    assert {"--dtype", "--d-format"} <= opts
