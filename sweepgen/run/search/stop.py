"""A request to stop a search: ``.search/stop`` in its sweep folder.

`sweepgen cancel DIR` writes it before it stops any run, so a controller that sees a trial's run end
cancelled finds the request already there: it asks no new trial and tells nothing of the cancelled
ones (they stay running in the study), then exits; the next `sweepgen run DIR` removes the request
and resumes them. Without it, a controller on a login node would read a cancelled Slurm job as a
failed trial and ask a new one, undoing the cancel.
"""

from __future__ import annotations

import stat
from pathlib import Path

from sweepgen.fs import filenames, runfs
from sweepgen.run.search.study import state_dir

REQUEST = filenames.SEARCH_STOP


def state_dir_of(sweep_dir: Path) -> Path | None:
    """The search's state folder, when ``sweep_dir`` is a search some `run` has started."""
    folder = state_dir(sweep_dir)
    return folder if folder.is_dir() else None


def request(state_dir: Path) -> None:
    """Ask every controller of the search to stop (written atomically, no link followed: runfs)."""
    runfs.write_atomic(state_dir / REQUEST, b"stop requested by `sweepgen cancel`\n")


def requested(state_dir: Path) -> bool:
    """Is the request there? Only a plain file sweepgen wrote counts: a link (committed, or left in
    a shared runs folder) is neither followed nor taken as a request, and its contents never read."""
    try:
        return stat.S_ISREG(runfs.lstat(state_dir / REQUEST).st_mode)
    except OSError:
        return False


def withdraw(state_dir: Path) -> None:
    """A new `sweepgen run` goes on with the search: the old request no longer holds."""
    runfs.unlink(state_dir / REQUEST)
