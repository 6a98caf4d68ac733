"""The sweep folder a run's status file names, found from wherever `report` or `status` runs now.

A status file records the sweep folder (and the config) as `sweepgen run` was given them: relative
to the folder `run` was started in, the project root (``generated/<sweep>``). Read from another
folder (``cd runs && sweepgen report <sweep>``) that path names nothing. The run directory itself
sits under that same root (``runs/<sweep>/<run>``), so the root is the nearest folder above the run
directory in which the recorded path holds a sweep lock. The caller still checks that the lock
found describes the run (by its run directory), so a look-alike sweep elsewhere is never taken.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sweepgen.compile.run_api import LOCK_NAME
from sweepgen.fs.confine import project_root, resolve_inside, within


@dataclass(frozen=True)
class Origin:
    root: Path  # the folder `run` was started in: the recorded paths are relative to it
    sweep_dir: Path  # the sweep folder, as a path that works from here

    def relative(self, path: Path | str) -> str:
        """``path`` (a run directory as found from here) as the sweep's lock names it: from the root."""
        return os.path.normpath(os.path.relpath(os.path.abspath(path), os.path.abspath(self.root)))


def locate(run_dir: Path, recorded: str) -> Origin | None:
    """Where the sweep folder ``recorded`` (from ``run_dir``'s status file) is from here: as written
    (relative to the current folder, or absolute), else under the nearest folder above ``run_dir``
    that holds it; None when no such folder has its lock. The status file is data: the recorded path,
    links and ``..`` resolved, must lie inside the folder it is taken from (the working directory,
    or a folder above the run directory that is inside the project: ``confine.project_root``, the
    nearest folder above the working directory with .git or pyproject.toml); a path that leads
    anywhere else names no sweep (it could name anyone's) and is never looked into."""
    if not recorded or "\0" in recorded:
        return None
    here = os.path.realpath(".")
    project = project_root(here)
    real = _resolved(here, recorded)
    if _holds_lock(real):
        return Origin(Path("."), Path(recorded))
    if Path(recorded).is_absolute():
        return None
    return _found_above(run_dir, recorded, project)


def _found_above(run_dir: Path, recorded: str, project: str | None) -> Origin | None:
    """The nearest folder above ``run_dir``, within ``project`` when there is one, under which the
    relative path ``recorded`` holds a sweep's lock."""
    for root in Path(os.path.abspath(run_dir)).parents:
        real_root = os.path.realpath(root)
        if project is not None and not within(real_root, project):
            break  # above the project: nothing there is this user's sweep
        found = resolve_inside(str(root), recorded)
        if _holds_lock(found):
            return Origin(root, root / recorded)
    return None


def _holds_lock(folder: str | None) -> bool:
    """Whether ``folder`` (None: none found) holds a sweep's lock."""
    return folder is not None and (Path(folder) / LOCK_NAME).is_file()


def _resolved(here: str, recorded: str) -> str | None:
    """``recorded`` resolved from the working directory ``here``: an absolute path only when it lies
    inside ``here`` (links resolved), a relative one when it does not climb out (confine's rule)."""
    if os.path.isabs(recorded):
        try:
            real = os.path.realpath(recorded)
        except (ValueError, OSError):
            return None
        return real if within(real, here) else None
    return resolve_inside(here, recorded)


def lost_note(recorded: str) -> str:
    """Why a report of runs whose sweep folder is found nowhere has neither the sweep's lock nor, for
    a search, its search section, and how to get them."""
    return (
        f"the runs' status files name the sweep folder {recorded}, relative to the folder `sweepgen "
        "run` was started in, and it is found neither from here nor from a folder above the runs: "
        "without its lock the report has no search section (best so far, pruned trials, best trial) "
        f"for a search sweep; report the sweep folder itself: `sweepgen report <path to {recorded}>`"
    )
