"""`sweepgen cancel` reaching runs a live local `sweepgen run` has queued but not started (waiting
for `--jobs`, a GPU slot, the next `--until-decided` round): such runs have no record a cancel can
stop, so ``.sweepgen-cancel.json`` beside the run folders names them, each with the time it was
asked on this machine's boot clock. A `sweepgen run` drops (as cancelled, never started) a queued run
named there at or after its own start; a `run` started after the cancel is not held by it.

The file is data (read bounded, never through a link; what cannot be read asks nothing) and written
atomically. A request of another boot, or one that names no run of ours, changes nothing. Each
`cancel` reads, adds its runs and writes it holding an flock on the runs folder itself, so two at
once both stay asked (before, the later write dropped the other's runs, which its `run` started).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from sweepgen.fs import filenames, runfs
from sweepgen.run.core import boot_clock, runfiles

REQUEST_FILE = filenames.CANCEL_QUEUED
_MAX_BYTES = 1024 * 1024  # a name and a time per run: far below this for any sweep sweepgen runs
DROPPED = "not started: cancelled by `sweepgen cancel` while queued; start it with `sweepgen run`"


def ask(runs_dir: Path, names: Iterable[str]) -> None:
    """Ask every live `sweepgen run` with runs ``names`` (folders of ``runs_dir``) queued to drop
    them. Names asked before on this boot stay asked at their own time. Raises OSError."""
    now, boot = boot_clock.now_s(), boot_clock.boot_id()
    if now is None or boot is None:
        return  # no clock to tell a later `run` from an earlier one: nothing is asked
    with _held(runs_dir):  # another `cancel`'s runs, read, added to and written by it meanwhile
        asked = _asked(runs_dir, boot)
        asked.update(dict.fromkeys(names, now))
        record = {"boot_id": boot, "runs": asked}
        runfs.write_atomic(runs_dir / REQUEST_FILE, (json.dumps(record, sort_keys=True) + "\n").encode())


@contextlib.contextmanager
def _held(runs_dir: Path) -> Iterator[None]:
    """An exclusive flock on the runs folder (never a link; no file added to it), waited for: a
    holder keeps it for one read and one write. A file system without locks (some network mounts)
    writes unheld, as render's output lock does (outtree.py): the request is made all the same."""
    fd = runfs.open_dir(runs_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as err:
            if err.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
        yield
    finally:
        os.close(fd)


def asked_since(runs_dir: Path, since_s: float | None) -> set[str]:
    """The run folder names of ``runs_dir`` whose drop was asked at or after ``since_s`` (a `run`'s
    start on the boot clock) on this boot."""
    boot = boot_clock.boot_id()
    if since_s is None or boot is None:
        return set()
    return {name for name, at in _asked(runs_dir, boot).items() if at >= since_s}


def _asked(runs_dir: Path, boot: str) -> dict[str, float]:
    """The runs asked on boot ``boot``; nothing for a file that is not this file (a link, FIFO,
    folder, too large, not JSON, nested deeper than a run file may be: a thousand ``[`` ended
    `cancel` and `run` in a RecursionError), another boot's, or a time that is no finite number."""
    try:
        data = runfiles.read_json(runs_dir / REQUEST_FILE, limit=_MAX_BYTES)
    except (OSError, runfiles.RunFileError):
        return {}
    if not isinstance(data, dict) or data.get("boot_id") != boot or not isinstance(data.get("runs"), dict):
        return {}
    asked = {name: _seconds(at) for name, at in data["runs"].items() if isinstance(name, str)}
    return {name: at for name, at in asked.items() if at is not None}


def _seconds(at: object) -> float | None:
    """A boot-clock time as written; None for anything else (a 400-digit integer is no float)."""
    if isinstance(at, bool) or not isinstance(at, (int, float)):
        return None
    try:
        seconds = float(at)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) else None
