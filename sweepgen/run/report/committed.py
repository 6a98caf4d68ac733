"""Runs whose result files came with the repository: a report says so.

A run folder committed to git with a finished status and a ``summary.json`` is listed and ranked
like a run this machine trained (refusing git-tracked run files would break people who commit their
runs), so a reviewer reading a pull request's report is told which rows hold numbers nobody ran
here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sweepgen.fs import gitquery


def committed_runs(names_dirs: Sequence[tuple[str, Path]]) -> list[str] | None:
    """The names of the runs (name, run folder) holding a file git tracks; None when git, inside a
    work tree, cannot tell."""
    if not names_dirs:
        return []
    folders = {name: os.path.abspath(run_dir) for name, run_dir in names_dirs}
    top = os.path.commonpath([os.path.dirname(d) for d in folders.values()])
    if not os.path.isdir(top):
        return []
    tracked = gitquery.tracked_below(top)
    if tracked is None:
        return None
    holding: set[str] = set()
    for path in tracked:  # each tracked file marks every folder on its way as holding one
        parent = os.path.dirname(path)
        while parent and parent not in holding:
            holding.add(parent)
            parent = os.path.dirname(parent)
    return [name for name, d in folders.items() if os.path.relpath(d, top) in holding]


def warning(names_dirs: Sequence[tuple[str, Path]]) -> list[str]:
    """The report's warning about committed runs (none when no run holds a file git tracks)."""
    names = committed_runs(names_dirs)
    if names is None:
        return [
            "git could not say whether these runs' files are committed (it failed, is missing or did "
            "not answer in time): a committed run's results are numbers nobody ran here"
        ]
    if not names:
        return []
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return [
        f"{len(names)} run(s) hold files git tracks ({shown}): their results came with the "
        "repository, not from a run on this machine; check where they came from before trusting them"
    ]
