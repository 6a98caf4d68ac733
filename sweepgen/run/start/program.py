"""The program a local `--command` starts is there before any run starts.

`run --command 'trl grpo --config {config}'` from a shell where the environment with trl is not
active started every run, each failed at once ("could not start: No such file or directory"), and
the runs were then failed-before: the right environment needed `--rerun-failed` too. The program is
looked for as the run's own start looks for it (``subprocess.Popen``: a word without a slash on the
PATH sweepgen runs with, which the supervisor hands on; a path from the working folder, where runs
start), once, and a missing one stops `run` with nothing started. A Slurm node has its own PATH:
not judged there. A word with a placeholder (``{config_dir}/train.sh``) is known only per run.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence

from sweepgen.errors import Location, UserError

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


def check_found(argv: Sequence[str]) -> None:
    """Refuse (exit 2, at ``--command``) a program that would not start: missing, or not executable."""
    program = argv[0]
    if "{" in program:
        return
    if "/" not in program:
        _on_path(program)
    else:
        _executable(program)


def _on_path(program: str) -> None:
    if _ASSIGNMENT.fullmatch(program):  # a shell's `X=1 python ...`: without a shell, a program name
        raise UserError(
            f"--command starts with `{program}`, an environment assignment, which only a shell reads",
            location=Location("--command"),
            hint=f"write `env {program} ...` (env sets it and starts the rest), or add --shell; "
            "nothing was started",
        )
    if shutil.which(program) is None:
        raise UserError(
            f"--command starts `{program}`, which is not on PATH: every run would fail to start",
            location=Location("--command"),
            hint=f"activate the environment where {program} is installed (or install it), "
            "or give its path in --command; nothing was started",
        )


def _executable(program: str) -> None:
    if not os.path.isfile(program) or not os.access(program, os.X_OK):
        what = "is not an executable file" if os.path.exists(program) else "does not exist"
        raise UserError(
            f"--command starts `{program}`, which {what} (from {os.getcwd()})",
            location=Location("--command"),
            hint="give the program's path from the project root, make it executable (chmod +x), "
            "or start it through its interpreter (`bash train.sh ...`); nothing was started",
        )
