"""A recorded command line is replayed only from a file this machine's `sweepgen run` wrote.

``.sweepgen-run.json`` records `--command` so that a later plain `sweepgen run DIR` runs the same
trainer. The file sits in the generated sweep folder, which is committed: a pull request that
commits its own ``.sweepgen-run.json`` would choose what a reviewer's plain `sweepgen run DIR`
executes. So a command read from a file git tracks is never executed; the person running sweepgen
gives it on the command line (where they see it), and the file is kept out of git.
"""

from __future__ import annotations

from pathlib import Path

from sweepgen.errors import Location, UserError
from sweepgen.fs import gitquery


def refuse_tracked_command(path: Path, command: str) -> None:
    """Exit 2 when ``command`` (about to be replayed from ``path``) comes from a file git tracks."""
    known = gitquery.tracked(str(path.parent), path.name)
    if known is None:
        raise UserError(
            f"git could not say whether {path} (which records the command {command!r}) is committed: "
            "it failed, is missing or did not answer in time in this repository, and a recorded "
            "command is replayed only from a file git says it does not track",
            location=Location(str(path)),
            hint=f"give the command yourself (`--command '...'`) after reading it; "
            f"`git -C {path.parent} ls-files -- {path.name}` shows what git says",
        )
    if known:
        raise UserError(
            f"{path} is committed to git and records the command {command!r}: a recorded command is "
            "replayed only from a file `sweepgen run` wrote on this machine, never from one that came "
            "with the repository",
            location=Location(str(path)),
            hint="give the command yourself (`--command '...'`) after reading it; then "
            f"`git rm --cached {path}` and add `**/.sweepgen-run.json` to .gitignore",
        )


def refuse_tracked_state(path: Path, what: str) -> None:
    """Exit 2 when ``what`` (run state about to be taken from ``path``: `run`'s options, which say how
    many runs go at once, on which GPUs, under an MPS daemon, how long a stop waits; a sequential
    test's rule and looks, which decide its arms) comes from a file git tracks: a pull request's
    file would choose them for the person running `run`, past every limit they set."""
    known = gitquery.tracked(str(path.parent), path.name)
    if known is False:
        return
    why = (
        "is committed to git"
        if known
        else "may be committed to git (git failed, is missing or did not answer in time here)"
    )
    raise UserError(
        f"{path} {why} and records {what}: run state is taken only from a file `sweepgen run` wrote "
        "on this machine, never from one that came with the repository",
        location=Location(str(path)),
        hint=f"`git rm --cached {path}` and add `**/{path.name}` to .gitignore (only this machine's "
        "`sweepgen run` writes it); give the options you want on the command line",
    )
