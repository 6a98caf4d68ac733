"""Runs whose result files came with the repository, or from another user: a report says so.

A run folder committed to git with a finished status and a ``summary.json`` is listed and ranked
like a run this machine trained (refusing git-tracked run files would break people who commit their
runs), so a reviewer reading a pull request's report is told which rows hold numbers nobody ran
here. Likewise a run folder of a shared runs root whose result files another user owns, or anyone
but this user can write (group- or world-writable, the group not this user's own): a teammate's
results, or numbers planted there; `report`, `status` and `run` (which takes such a run as
finished and starts it no more) say which.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from sweepgen.errors import SweepgenError
from sweepgen.fs import filenames, gitquery, runfs
from sweepgen.run.core.base import read_status

# the files a run's state and numbers are read from (with the done file its status names: foreign_files)
RESULT_FILES = (
    filenames.STATUS,
    filenames.SUMMARY,
    filenames.METRICS,
    filenames.METRICS_CSV,
    filenames.TRAINER_STATE,
)


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
    holding = _folders_holding(tracked)
    return [name for name, d in folders.items() if os.path.relpath(d, top) in holding]


def _folders_holding(tracked: Iterable[str]) -> set[str]:
    """Every folder on the way to a tracked file (relative paths, as git lists them)."""
    holding: set[str] = set()
    for path in tracked:
        parent = os.path.dirname(path)
        while parent and parent not in holding:
            holding.add(parent)
            parent = os.path.dirname(parent)
    return holding


def warning(names_dirs: Sequence[tuple[str, Path]]) -> list[str]:
    """The report's warnings about committed runs (none when no run holds a file git tracks), and
    about runs whose result files are not this user's alone (``foreign_warning``)."""
    return [*_committed_warning(names_dirs), *foreign_warning(names_dirs)]


def _committed_warning(names_dirs: Sequence[tuple[str, Path]]) -> list[str]:
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


def foreign_files(run_dir: Path) -> list[str]:
    """The run's result files (``RESULT_FILES``, and the done file its status names, whose being
    there makes the run finished: ``--done-file``), looked at without following a link, that
    another user owns or that someone else can write, each as ``name (why)``."""
    found = []
    for name in (*RESULT_FILES, *_done_file(run_dir)):
        try:
            info = runfs.lstat(run_dir / name)
        except (OSError, ValueError):
            continue
        why = _why(name, info)
        if why is not None:
            found.append(f"{name} ({why})")
    return found


def _done_file(run_dir: Path) -> list[str]:
    """The done file the run's status names, where it is not one of ``RESULT_FILES``."""
    try:
        status = read_status(run_dir)
    except (SweepgenError, OSError):
        return []
    done = status.done_file if status is not None else None
    return [done] if done and done not in RESULT_FILES else []


def _why(name: str, info: os.stat_result) -> str | None:
    """``not_mine`` of a result file; a link (never read) only as the done file, which counts as
    there through it (``is_finished``), by its owner alone (a link's mode is every user's). A done
    file behind a linked folder is looked at by neither: it does not finish the run."""
    if stat.S_ISREG(info.st_mode):
        return not_mine(info)
    if name in RESULT_FILES or info.st_uid == os.geteuid():
        return None
    return f"owned by {_user(info.st_uid)}"


def not_mine(info: os.stat_result, *, group: bool = True) -> str | None:
    """Why a file is not this user's alone (another user owns it, or someone else can write it: the
    group bit counts unless the group is the user's private one, or ``group`` is false); None when it is."""
    if info.st_uid != os.geteuid():
        return f"owned by {_user(info.st_uid)}"
    if info.st_mode & stat.S_IWOTH:
        return "writable by every user"
    if group and info.st_mode & stat.S_IWGRP and not runfs.private_group(info.st_uid, info.st_gid):
        return "writable by its group"
    return None


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def foreign_warning(names_dirs: Sequence[tuple[str, Path]]) -> list[str]:
    """The warning about runs whose result files are not this user's alone (none when none is)."""
    held = [(name, files) for name, run_dir in names_dirs if (files := foreign_files(run_dir))]
    if not held:
        return []
    shown = "; ".join(f"{name}: {', '.join(files)}" for name, files in held[:8])
    more = f"; and {len(held) - 8} more" if len(held) > 8 else ""
    return [
        f"{len(held)} run(s) hold result files that are not yours alone ({shown}{more}): in a shared "
        "runs folder another user wrote or could have changed these numbers; check where they came from "
        "before trusting them (keep a runs folder writable by you alone)"
    ]
