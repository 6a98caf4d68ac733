"""The command line: the only layer that prints, reads the terminal or chooses exit codes.

Subcommands live one per module and are imported lazily, so ``sweepgen --help`` does not pay for
jinja2, deepdiff, pydantic or rich. Each command callback returns its exit code.
Exit codes: 0 ok, 1 a check found problems, 2 bad input, 70 internal error (a bug).
"""

from __future__ import annotations

from sweepgen.run.core.stopping import stop_signals as _stop_signals

if _stop_signals.is_program():  # first: a SIGTERM/SIGHUP from here on is remembered, not a kill
    _stop_signals.defer()

import contextlib
import errno
import importlib
import importlib.util
import io
import os
import stat
import sys
import traceback
from collections.abc import Sequence
from typing import Any

import click

import sweepgen
from sweepgen.cli import _console
from sweepgen.errors import SweepgenError

# name -> "module:attribute"; a module that does not exist yet is simply not offered.
COMMANDS = {
    "render": "sweepgen.cli.render_cmd:render",
    "check": "sweepgen.cli.check_cmd:check",
    "diff": "sweepgen.cli.diff_cmd:diff",
    "list": "sweepgen.cli.list_cmd:list_variants",
    "schema": "sweepgen.cli.schema_cmd:schema",
    "run": "sweepgen.cli.run_cmd:run",
    "status": "sweepgen.cli.status_cmd:status",
    "cancel": "sweepgen.cli.status_cmd:cancel",
    "report": "sweepgen.cli.report_cmd:report",
    "init": "sweepgen.cli.init_cmd:init",
}

# name -> the first paragraph of its help: `sweepgen --help` lists the commands from here instead of
# importing (and, without bytecode caches, compiling) every command module for one line each.
# tests/cli/test_help_summaries.py holds the listing byte-equal to click's own at every width.
SUMMARIES = {
    "render": "Expand, validate and render SPECs; all or nothing, plus sweep.lock.json per sweep.",
    "check": "Check SPECs (default: the specs of [tool.sweepgen] in pyproject.toml, else every YAML under "
    "specs/ and every *.sweep.yaml): valid, and generated files up to date.",
    "diff": "Compare two configs path by path, type-strictly (1, 1.0 and True differ).",
    "list": "Show the variants SPEC expands to and the values that differ between them.",
    "schema": "Print the JSON Schema of the spec format (e.g. > spec.schema.json for your editor).",
    "run": "Run every generated config of the sweep in DIR (the folder holding sweep.lock.json).",
    "status": "Show the state of every run of the sweep in DIR (the folder holding sweep.lock.json).",
    "cancel": "Cancel the queued and running runs of the sweep in DIR; return once they have ended.",
    "report": "Summarise the runs of DIR: a generated sweep folder (with sweep.lock.json) or a runs folder.",
    "init": "Write a starting spec and template from an existing config (a grid from --grid and --seeds, "
    "else a first seed axis; one run folder per run; with --schema the schema exported as a JSON Schema "
    "file), render it, and print the command that runs it.",
}

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
BUG_REPORT = "this is a bug in sweepgen; please report it with the traceback above"


class _SweepgenGroup(click.Group):
    """A lazy group whose ``main`` is the single error funnel, so CliRunner tests exercise it too."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name, target in COMMANDS.items() if _module_exists(target)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None or not _module_exists(target):
            return None
        module, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing (same rows, same truncation) from SUMMARIES, no command imported."""
        from gettext import gettext  # as click translates its section titles

        names = self.list_commands(ctx)
        if names:
            limit = formatter.width - 6 - max(map(len, names))
            with formatter.section(gettext("Commands")):
                formatter.write_dl(
                    [
                        (name, click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit))
                        for name in names
                    ]
                )

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except OSError as err:
            raise _OsFault(err) from err
        except SystemExit as exit_:  # rich turns a broken stdout pipe into a silent exit 1
            cause = exit_.__context__
            if isinstance(cause, OSError) and cause.errno == errno.EPIPE:
                raise _OsFault(cause) from cause
            raise

    def _command_main(
        self, args: list[str], prog_name: str | None, complete_var: str | None, **extra: Any
    ) -> Any:
        """click's own main; SIGTERM/SIGHUP stay remembered for `run` (its loops act on them), any
        other command gets their handlers back (run/core/stopping/stop_signals.py); Ctrl-C is an interrupt
        again for every command, one pressed while the program loaded raised now."""
        _stop_signals.interrupt_back()
        if next((a for a in args if not a.startswith("-")), None) != "run":
            _stop_signals.give_back()
        return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)

    def main(  # noqa: C901, PLR0912 - the one error funnel: each failure kind and its exit code, side by side
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:

        if sys.stdout is None:  # started with stdout closed (`>&-`): fail before doing anything
            _echo_err(
                "<stdout>: error: standard output is closed\n"
                "  hint: to discard the output, redirect it to /dev/null instead of closing it"
            )
            if not standalone_mode:
                return EXIT_USAGE
            sys.exit(EXIT_USAGE)
        _safe_streams()
        try:
            os.getcwd()
        except FileNotFoundError:
            _echo_err(
                "error: the working directory no longer exists (deleted or unmounted)\n"
                '  hint: cd to an existing folder (e.g. `cd "$PWD"` if it was re-created) and run again'
            )
            if not standalone_mode:
                return EXIT_USAGE
            sys.exit(EXIT_USAGE)
        try:
            args = _hoist_console_flags(list(sys.argv[1:] if args is None else args))
            rc = self._command_main(args, prog_name, complete_var, **extra)
        except SweepgenError as err:
            # a location is data (a spec named `::error::x.sweep.yaml`): no line of it may start a
            # CI workflow command (_console.safe_text)
            click.echo(_console.safe_text(err.format()), err=True)
            rc = err.exit_code
        except click.exceptions.Exit as exit_:
            rc = exit_.exit_code
        except click.UsageError as err:
            click.echo(_usage_error(err), err=True)
            rc = EXIT_USAGE
        except click.ClickException as err:
            click.echo(f"error: {err.format_message()}", err=True)
            rc = EXIT_USAGE
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            rc = 130
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            rc = 130
        except _OsFault as fault:  # the machine, not the input: full or read-only disk, permissions, pipes
            rc = _os_fault(fault.err)
        except OSError as err:
            rc = _os_fault(err)
        except MemoryError:  # sizes the inputs asked for (every limit raised as far as it goes)
            _echo_err(
                "error: out of memory\n  hint: the sweep is larger than this machine holds: lower "
                "`limits:` in the spec (variants, output_bytes, input_bytes) or shrink the sweep"
            )
            rc = EXIT_USAGE
        except Exception:  # noqa: BLE001 - the funnel for bugs: show everything, ask for a report
            traceback.print_exc()
            click.echo(f"internal error: {BUG_REPORT}", err=True)
            rc = EXIT_INTERNAL
        try:  # a full or closed stdout must fail here, with a message, not at interpreter exit
            sys.stdout.flush()
        except OSError as err:
            rc = _stdout_fault(err)
        _stop_signals.forget_handled_interrupt()  # so that 130 is the exit, not CPython's -2
        if not standalone_mode:
            return rc
        sys.exit(rc if isinstance(rc, int) else 0)


# -q/-v belong to the group (they set the console for every command); a command whose own option
# has the same spelling keeps it
_CONSOLE_FLAGS = {"-q": "-q", "--quiet": "-q", "-v": "-v", "--verbose": "-v"}
_OWN_FLAGS = {"check": {"-v", "--verbose"}}


def _hoist_console_flags(args: list[str]) -> list[str]:
    """``sweepgen run X -q`` as ``sweepgen -q run X``: the habit of putting flags last, honoured."""
    command = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if command is None:
        return args
    rest, moved = [], []
    for i, arg in enumerate(args[command + 1 :], start=command + 1):
        if arg == "--":
            rest += args[i:]
            break
        if arg in _CONSOLE_FLAGS and arg not in _OWN_FLAGS.get(args[command], ()):
            moved.append(arg)
        else:
            rest.append(arg)
    return [*args[:command], *moved, args[command], *rest]


def _print_version(ctx: click.Context, value: bool) -> None:
    # click.version_option would need the version at import time; reading it costs start-up
    if not value or ctx.resilient_parsing:
        return

    click.echo(f"sweepgen, version {sweepgen.__version__}")
    ctx.exit()


def _usage_error(err: click.UsageError) -> str:
    """A usage error in the same ``error:`` + hint shape as every other user error."""
    ctx = err.ctx
    command = ctx.command_path if ctx is not None else "sweepgen"
    usage = ctx.get_usage().replace("\n", " ").strip() if ctx is not None else ""
    hint = f"{usage}; see `{command} --help`" if usage else f"see `{command} --help`"
    return f"error: {err.format_message()}\n  hint: {hint}"


def _os_fault(err: OSError) -> int:
    """Exit 2 with the path and a hint for an environment fault; anything else is a bug (70)."""
    from sweepgen.fs.safefs import hint_for, is_environment_fault

    if not is_environment_fault(err):
        traceback.print_exc()
        click.echo(f"internal error: {BUG_REPORT}", err=True)
        return EXIT_INTERNAL
    if err.filename is None and not _stdout_cannot_be(err):  # sweepgen names its own files' faults
        return _stdout_fault(err)
    if err.filename is None:  # a write of sweepgen's that named no file: never blamed on stdout
        _echo_err(
            f"error: a write of sweepgen's records failed: {err.strerror or err} (standard output is "
            "not the cause; sweepgen did not name the file: a gap in sweepgen, please report it)\n"
            f"  hint: {hint_for(err)}"
        )
        return EXIT_USAGE
    where = f"{err.filename}: " if err.filename is not None else ""
    _echo_err(f"{where}error: {err.strerror or err}\n  hint: {hint_for(err)}")
    return EXIT_USAGE


_DEV_FULL = (1, 7)  # Linux's /dev/full: every write is ENOSPC


def _stdout_cannot_be(err: OSError) -> bool:
    """A full-disk error (ENOSPC) that standard output cannot have raised: stdout is a pipe or a
    terminal (they never answer ENOSPC), or a file on a file system with room. Any other error, or a
    stdout not a real descriptor (tests), is not judged (False)."""
    if err.errno != errno.ENOSPC:
        return False
    try:
        fd = sys.stdout.fileno()
        info = os.fstat(fd)
        if stat.S_ISCHR(info.st_mode):
            return (os.major(info.st_rdev), os.minor(info.st_rdev)) != _DEV_FULL
        if stat.S_ISREG(info.st_mode):
            return os.fstatvfs(fd).f_bavail > 0
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode)


_STDOUT_HINTS = {
    errno.EPIPE: "the program reading sweepgen's output exited first (e.g. `| head`); "
    "the inputs are fine, the output was cut short",
    errno.ENOSPC: "standard output goes to a full disk (or /dev/full): redirect it to a file "
    "on a disk with free space",
}


class _OsFault(Exception):
    """An OSError carried past click, which would turn EPIPE into a silent exit 1 ("problems found")."""

    def __init__(self, err: OSError) -> None:
        super().__init__(str(err))
        self.err = err


def _stdout_fault(err: OSError) -> int:
    from sweepgen.fs.safefs import hint_for

    # later flushes (at interpreter exit) go nowhere instead of failing again; CliRunner has no fd
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    hint = _STDOUT_HINTS.get(err.errno or 0) or hint_for(err)
    _echo_err(f"<stdout>: error: cannot write to standard output: {err.strerror or err}\n  hint: {hint}")
    return EXIT_USAGE


def _safe_streams() -> None:
    """Output in the locale's encoding, with what it cannot encode escaped (``\\xe9``, and a file
    name's undecodable bytes as ``\\udcff``) instead of a UnicodeEncodeError: under LANG=C with an
    ASCII stdout, or a non-UTF-8 file name in a message, a report must still print."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        # under LC_ALL=C/POSIX Python's UTF-8 mode gives surrogateescape, which writes a file name's
        # undecodable bytes raw: those are escaped too
        if reconfigure is not None and getattr(stream, "errors", "strict") in ("strict", "surrogateescape"):
            with contextlib.suppress(ValueError, io.UnsupportedOperation):
                reconfigure(errors="backslashreplace")


def _echo_err(text: str) -> None:
    with contextlib.suppress(OSError):  # stderr is gone too: the exit code is all that is left
        click.echo(_console.safe_text(text), err=True)  # a file name in it is data


def _module_exists(target: str) -> bool:
    return importlib.util.find_spec(target.split(":")[0]) is not None


@click.group(cls=_SweepgenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _print_version(ctx, value),
    help="Show the version and exit.",
)
@click.option("-q", "--quiet", is_flag=True, help="print only results, problems and errors")
@click.option("-v", "--verbose", is_flag=True, help="also print what each step did and how long it took")
def main(quiet: bool, verbose: bool) -> None:
    """Compile, validate, diff and run RL post-training sweeps.

    -q / -v apply to every command, before or after it (`sweepgen -q check`, `sweepgen run X -q`).
    """
    from sweepgen.cli import _console

    if quiet and verbose:
        raise click.UsageError("-q and -v contradict each other; give one")
    _console.set_verbosity(-1 if quiet else 1 if verbose else 0)
