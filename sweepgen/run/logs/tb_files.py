"""Which files of a run are TensorBoard event files: one rule and one bounded walk, for `report`
and the search (metrics.py, read by tb_events.py) and for `status` (tb_step.py).

The three said it three ways: `report` walked for folders holding an ``events.out.tfevents.*``
that ``os.path.isfile`` (a link to a file counted, a dangling one did not), then read every name
holding ``tfevents`` there; `status` took any ``*tfevents*`` that was a regular file, a profiler's
``.profile-empty`` placeholder included. So a run whose events were in ``x.tfevents.bak`` alone
had a step in `status` and no metric in `report`, while the same file beside an
``events.out.tfevents.*`` was read. The rule is now tensorboard's own (``is_event_file``), which
is what `tensorboard --logdir` shows, and the walk is one: no link entered, every entry counted
against a bound, a folder that cannot be listed (too deep to be opened by name, no permission)
refused with the reason, never skipped. Every entry so named but a real folder is an event file
here: a link, FIFO or device is then refused by `report` with its reason and left out by `status`,
which shows only what it can read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from sweepgen.fs import safefs
from sweepgen.run.core import runfiles

MAX_RUN_ENTRIES = 200_000  # files and folders of one run walked; a real run holds hundreds
# a folder gone, or swapped for a file or a link, while the run is walked: a live run's checkpoint
# rotation removes folders, and safefs.walk never lists a swapped one; never a reason to refuse
_GONE = frozenset({errno.ENOENT, errno.ESTALE, errno.ENOTDIR, errno.ELOOP})
_PROFILE_EMPTY = ".profile-empty"


def is_event_file(name: str) -> bool:
    """tensorboard's own rule (io_wrapper.IsSummaryEventsFile): a name holding ``tfevents`` that is
    not the profiler's ``.profile-empty`` placeholder (no scalars in it)."""
    return "tfevents" in name and not name.endswith(_PROFILE_EMPTY)


def event_files(run_dir: Path, *, limit: int | None = None) -> dict[Path, list[str]]:
    """Each folder under ``run_dir`` holding event files -> their names, sorted (tensorboard's order);
    at most ``limit`` (default ``MAX_RUN_ENTRIES``) files and folders looked at, else a
    RunFileError (a shared runs folder's run of millions would hold the command while listed)."""
    bound = MAX_RUN_ENTRIES if limit is None else limit
    found: dict[Path, list[str]] = {}
    seen = 0
    for folder, dirs, files in safefs.walk(str(run_dir), lambda f, e: _unlisted(run_dir, f, e)):
        seen += len(dirs) + len(files)
        if seen > bound:
            raise runfiles.RunFileError(
                run_dir, f"holds more than {bound:,} files and folders (TensorBoard's are looked for)"
            )
        names = sorted(n for n in (*files, *dirs) if is_event_file(n) and not _real_folder(folder, n))
        if names:
            found[Path(folder)] = names
    return found


def _real_folder(folder: str, name: str) -> bool:
    """``name`` in ``folder`` is a folder itself, not a link to one (walked, never read)."""
    try:
        return stat.S_ISDIR(os.lstat(os.path.join(folder, name)).st_mode)
    except OSError:
        return False  # gone since it was listed: refused by name when read


def _unlisted(run_dir: Path, folder: str, err: OSError) -> None:
    if err.errno in _GONE:
        return
    depth = len(Path(os.path.relpath(folder, run_dir)).parts)
    raise runfiles.RunFileError(
        run_dir,
        f"holds a folder {depth:,} levels down that cannot be listed ({err.strerror}): "
        "TensorBoard's event files are looked for in every folder of a run",
    )
