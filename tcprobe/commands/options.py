"""Options several commands share: counts, --json (``-`` is stdout), --instr."""

from __future__ import annotations

import click

from tcprobe.console import send_output_to_stderr
from tcprobe.models.isa import FAMILIES
from tcprobe.optiontext import comma_names
from tcprobe.validation.counts import MAX_CASES, CountError, parse_count

# every command's --seed: a non-negative 64-bit integer (numpy's generators take no other)
SEED = click.IntRange(0, 2 ** 63 - 1)


class Names(click.Choice):
    """click's Choice read by the rule for names (tcprobe.names): white space
    around the value stripped, any case; the value is the choice's spelling."""

    def __init__(self, choices):
        super().__init__(list(choices), case_sensitive=False)

    def convert(self, value, param, ctx):
        return super().convert(value.strip() if isinstance(value, str) else value, param, ctx)


class Count(click.ParamType):
    """A count written as 1e6, 1_000_000, 1,000,000, 10k or 1000.0."""

    name = "count"

    def __init__(self, minimum: int = 1, maximum: int = MAX_CASES, what: str = "cases"):
        self.minimum, self.maximum, self.what = minimum, maximum, what

    def convert(self, value, param, ctx):
        try:
            return parse_count(value, minimum=self.minimum, maximum=self.maximum, what=self.what)
        except CountError as e:
            self.fail(str(e), param, ctx)


class Scalar(click.ParamType):
    """A float option (``--alpha``, ``--beta``) read as the number written:
    text naming a finite, nonzero number that a float cannot hold is refused
    (``1e400`` read as inf, ``1e-400`` read as 0, silently, by float()); inf
    and nan spelt out stay (their words are the epilogue's to compute)."""

    name = "float"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        from decimal import Decimal, InvalidOperation

        text = str(value).strip()
        try:
            number = float(text)
            written = Decimal(text)
        except (ValueError, InvalidOperation):
            self.fail(f"{value!r} is not a number", param, ctx)
        if written.is_finite() and written != 0 and (number == 0 or abs(number) == float("inf")):
            what = "infinite" if number else "zero"
            self.fail(f"{text} is beyond what a float holds (it would be read as {what}); write "
                      f"{'inf' if number else '0'} if that is meant", param, ctx)
        return number


SCALAR = Scalar()


def named_path(ctx, param, value):
    """An output path that names something: '' (or blanks) would be the
    current folder, silently."""
    if value is not None and not str(value).strip():
        raise click.BadParameter("an empty path names no file or folder")
    if str(value) == "-" and isinstance(param.type, click.Path) and not param.type.allow_dash:
        what = "folder" if not param.type.file_okay else "file"
        raise click.BadParameter(f"- would be a {what} named '-': this option names a {what} "
                                 "(stdout is for the options that say '- writes it to stdout')")
    return value


def comma_list(values, option: str) -> list[str]:
    """The names a repeatable comma-list option gives, each once (``sm_90,SM_90``
    is one architecture); given but naming nothing ('' or ' , ') is an error,
    never "all" (which leaving it out means)."""
    names = list(comma_names(",".join(values)))
    if values and not names:
        raise click.BadParameter("names nothing (leave it out for all)", param_hint=option)
    once: dict[str, str] = {}
    for name in names:  # a name given twice (in any case) is one name, run once
        once.setdefault(name.lower(), name)
    return list(once.values())


def needs(*rules) -> None:
    """Options that mean something only beside another: each rule is (given,
    "--option", present, "--other ..."); an option given without its other is
    one error (never silently ignored)."""
    from tcprobe.console import UsageError

    for given, option, present, other in rules:
        if given not in (None, False, "") and present in (None, False, ""):
            raise UsageError(f"{option} needs {other} (alone it would be ignored)")


def beta_for(beta, c_given: bool, unset, integer: bool = False):
    """--beta of gemm and fit-gemm: tcprobe.matmul's one rule
    (epilogue.beta_given: with no --c, C is +0 and a nonzero beta would
    multiply nothing, so it is refused, never silently ignored); unset,
    ``unset``."""
    from tcprobe.console import UsageError
    from tcprobe.matrix.epilogue import beta_given
    from tcprobe.matrix.operands import MatmulError

    if beta is None:
        return unset
    try:
        return beta_given(beta, c_given, integer, "--beta", "--c")
    except MatmulError as e:
        raise UsageError(str(e)) from None


def file_target(ctx, param, value):
    """An output FILE (every --json, report merge --json): one rule for every
    command that writes a file: it is written only where asked, so its folder
    must exist (tcprobe makes no folder for a file), the path must not be a
    folder, a device or a pipe, and the folder must be writable: all refused
    when the option is read, before any work (a ladder, a campaign)."""
    named_path(ctx, param, value)
    if value is not None and value != "-":
        from tcprobe.outfiles import check_out_file

        check_out_file(value, param.opts[0] if param.opts else "--json")
    return value


def _json_target(ctx, param, value):
    file_target(ctx, param, value)
    if value == "-":
        send_output_to_stderr()
    return value


def json_option(help_text: str):
    """--json PATH; ``-`` writes the JSON to stdout and the tables to stderr."""
    return click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True),
                        callback=_json_target, expose_value=True,
                        help=help_text + " (- writes it to stdout)")


def family_option(help_text: str, default: str | None = None):
    """--instr: an instruction family in any case (mma, MMA, wgmma, tcgen05; mfma on an
    AMD device, whose families the device checks)."""
    from tcprobe.models.isa_amd import AMD_FAMILIES

    return click.option("--instr", "family",
                        type=Names((*FAMILIES, *AMD_FAMILIES)),
                        default=default, show_default=default is not None, help=help_text)


def renamed_option(new: str, old: str, dest: str, help_text: str, **kw):
    """Option ``new`` into ``dest``, with ``old`` its deprecated spelling: still
    accepted, with a one-line note (hidden from --help; both at once is an error)."""
    from tcprobe.console import note

    def keep(ctx, param, value):
        have = ctx.params.get(dest)
        if value is not None and have is not None and have != value:
            raise click.BadParameter(f"give {new} or {old}, not both", ctx, param)
        return value if value is not None else have

    def alias(ctx, param, value):
        if value is None:
            return value
        note(f"{old} is deprecated: use {new}")
        if ctx.params.get(dest) not in (None, value):
            raise click.BadParameter(f"give {new} or {old}, not both", ctx, param)
        ctx.params[dest] = value
        return value

    def decorate(f):
        f = click.option(old, f"{dest}_deprecated", hidden=True, expose_value=False,
                         callback=alias, **kw)(f)
        return click.option(new, dest, callback=keep, help=help_text, **kw)(f)

    return decorate


class OneName(click.Option):
    """An option shown in ``--help`` under one name (``shown``), whose other
    spellings are the same option and keep working with no note: the name
    another command gives the idea, or this command's older one, which its help
    text names."""

    def __init__(self, *args, shown: tuple[str, ...] = (), **kw):
        super().__init__(*args, **kw)
        self.shown = shown

    def get_help_record(self, ctx):
        opts = self.opts
        self.opts = [o for o in opts if o in self.shown] or opts
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts

    def get_error_hint(self, ctx) -> str:  # "Missing option '--format'", not every spelling
        return " / ".join(f"'{o}'" for o in self.shown) or super().get_error_hint(ctx)


class Instr(click.ParamType):
    """--instr where a datapath id is also taken: a family in any case
    (mma, wgmma, tcgen05) or a datapath id; anything else is refused here."""

    name = "mma|wgmma|tcgen05|DATAPATH"

    def convert(self, value, param, ctx):
        from tcprobe.models.datapath import Datapath, DatapathError
        from tcprobe.models.isa_amd import AMD_FAMILIES

        families = (*FAMILIES, *AMD_FAMILIES)  # mfma too: the GPU's gate says who has it
        if value is None or str(value).strip().lower() in families:  # any case (tcprobe.names)
            return None if value is None else str(value).strip().lower()
        try:
            return Datapath.parse(str(value)).id
        except DatapathError as e:
            self.fail(f"{value!r} is neither a family ({', '.join(families)}) nor a datapath "
                      f"id ({e})", param, ctx)


# One idea, one option name across commands; where a command takes the idea
# under another name, the name a user brings from elsewhere gets this hint
# instead of click's nearest spelling. (unknown option, the command's option
# for that idea, what to say)
OPTION_HINTS = (
    ("--gpu", "--device", "this command runs on a device: --device sim:h100 is H100's model "
                          "(tcprobe devices lists them), the GPU itself when there is one"),
    ("--device", "--gpu", "this command computes as a GPU's model: --gpu H100 (a GPU name, "
                          "not a device id)"),
    ("--family", "--instr", "the instruction family is --instr (mma, wgmma, tcgen05)"),
    ("--d-format", "--dtype", "D's format is --dtype here"),
    ("--dtype", "--d-format", "D's format is --d-format here (with --a-format, --b-format)"),
    ("--output", "--out", "the output is --out"),
    ("--suite", "--set", "targets' datapath sets are --set (--suite is validate's case "
                         "suites)"),
    ("--set", "--suite", "validate's case suites are --suite (--set is targets' datapath "
                         "sets)"),
)


def unknown_option_message(e: click.NoSuchOption) -> str:
    """What to say of an unknown option: the hint of OPTION_HINTS where the
    command takes that idea under another name, else click's message with
    only the visible options as its suggestions (a deprecated spelling is
    hidden, never suggested)."""
    names = {o for p in e.ctx.command.params if not getattr(p, "hidden", False)
             for o in p.opts}
    for given, theirs, hint in OPTION_HINTS:
        if e.option_name == given and theirs in names:
            return f"no option {given} here: {hint}"
    shown = [p for p in (e.possibilities or ()) if p in names]
    return click.NoSuchOption(e.option_name, possibilities=shown, ctx=e.ctx).format_message()


# Options whose blank value the command reads itself, with its own message (a
# comma list naming nothing, --bounds' "no K offset"): the gate below leaves them be.
READS_BLANK = {("validate", "--suite"), ("validate", "--sparse-lanes"), ("validate", "--targets"),
               ("ladder", "--steps"), ("fit-gemm", "--bounds"), ("sass-check", "--instr"),
               ("sass-check", "--format"), ("sass-check", "--arch"), ("mfma-check", "--arch")}


def check_given(name: str, command: click.Command, args: list[str]) -> None:
    """The one gate of every command's options as given, before any is read:
    an option that takes one value given twice (``--gpu H100 --gpu A100``:
    click keeps the last, silently) or given a blank value (``--dtype ''``,
    which a command would read as "not given") is one error, as is a NUL
    byte in any argument (no path or value holds one). Options that
    take several values (``multiple``), flags and counts are left alone, as
    are the outputs' blank paths and the lists of READS_BLANK, which say
    themselves what is wrong."""
    opts = {o: p for p in command.params if isinstance(p, click.Option)
            for o in (*p.opts, *p.secondary_opts)}
    for j, token in enumerate(args):  # only a caller in Python can pass one (argv cannot)
        if "\x00" in token:
            flag = token.split("=", 1)[0] if token.startswith("--") and "=" in token else (
                args[j - 1] if j and args[j - 1] in opts else None)
            raise click.UsageError(f"{flag + ': ' if flag else ''}{token!r} holds a NUL byte, "
                                   "which no file name, name or value holds")
    seen: dict[str, list[tuple[str, str | None]]] = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            break
        flag, value = token, None
        if token.startswith("--") and "=" in token:
            flag, value = token.split("=", 1)
        elif not token.startswith("--") and token[:2] in opts and len(token) > 2 \
                and token.startswith("-"):
            flag, value = token[:2], token[2:]  # -n64
        param = opts.get(flag)
        if param is None:
            continue
        takes_value = not (param.is_flag or param.count)
        if takes_value and value is None and i < len(args):
            value = args[i]
            i += 1
        seen.setdefault(param.name, []).append((flag, value))
        if not takes_value or value is None or value.strip():
            continue
        if (name, flag) in READS_BLANK or param.callback in (named_path, _json_target, file_target):
            continue
        raise click.UsageError(f"{flag}: an empty value names nothing (" + (
            "give a value" if param.required else f"leave {flag} out for its default") + ")")
    for pname, given in seen.items():
        param = next(p for p in command.params if p.name == pname)
        if len(given) > 1 and not (param.multiple or param.is_flag or param.count):
            shown = ", ".join(repr(v) for _, v in given)
            raise click.UsageError(f"{given[0][0]} is given {len(given)} times ({shown}): give "
                                   "it once")


# The parameters that name an output FILE, and one that names an output FOLDER
# (never read as an input), whatever the command.
OUTPUT_FILES = ("json_path", "out_path", "picture_path")
OUTPUT_FOLDERS = ("out_dir",)


def guard_outputs(command: click.Command) -> click.Command:
    """``command`` (and a group's subcommands) made to refuse, before any
    work, an output FILE that names one of its inputs or lies inside an input
    folder: every file or folder an option names (``--a``, ``--schedule``,
    ``--model``, ``--capture``, report merge's folders, the TOML of ``--device
    sim:PATH.toml``) is an input (outfiles.refuse_same_files, one rule for
    every command). `gemm --schedule s.json --json s.json` replaced the
    schedule; `run-case --device sim:p.toml --json p.toml` the profile."""
    import functools
    import os

    if isinstance(command, click.Group):
        for sub in command.commands.values():
            guard_outputs(sub)
        return command
    if getattr(command, "_outputs_guarded", False) or command.callback is None:
        return command
    names = {p.name: p.opts[0] if isinstance(p, click.Option) else p.human_readable_name
             for p in command.params}
    inner = command.callback

    @functools.wraps(inner)
    def guarded(*args, **kwargs):
        from tcprobe.outfiles import refuse_same_files

        outputs = {names[k]: kwargs.get(k) for k in names if k in OUTPUT_FILES}
        inputs = []
        for key, value in kwargs.items():
            if key in OUTPUT_FILES or key in OUTPUT_FOLDERS:
                continue
            for v in value if isinstance(value, tuple) else (value,):
                if not isinstance(v, str | os.PathLike) or str(v) in ("", "-"):
                    continue
                path = str(v)[4:] if str(v).startswith("sim:") else str(v)
                if os.path.exists(path):
                    inputs.append((names.get(key, key), path))
        if any(v not in (None, "-") for v in outputs.values()):
            refuse_same_files(outputs, inputs)
        return inner(*args, **kwargs)

    command.callback = guarded
    command._outputs_guarded = True
    return command
