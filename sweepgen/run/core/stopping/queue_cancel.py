"""`sweepgen cancel` reaching runs a live local `sweepgen run` has queued but not started (waiting
for `--jobs`, a GPU slot, the next `--until-decided` round): such runs have no record a cancel can
stop, so ``.sweepgen-cancel.json`` beside the run folders names them, each with the time it was
asked on this machine's boot clock. A `sweepgen run` drops (as cancelled, never started) a queued run
named there at or after its own start; a `run` started after the cancel is not held by it.

The file is data (read bounded, never through a link; what cannot be read asks nothing) and written
atomically. A request of another boot, or one that names no run of ours, changes nothing. Each
`cancel` reads, adds its runs and writes it holding an flock on the runs folder itself, so two at
once both stay asked (before, the later write dropped the other's runs, which its `run` started).

A run asked by `cancel --only` is named under ``alone`` too, so its drop says so (``DROPPED_ALONE``):
a search's controller reads a whole-search cancel's drop (``DROPPED``) as the search cancelled even
where a second `sweepgen run` withdrew the search's stop request meanwhile, and leaves the trial
open; an `--only` drop is that run's alone. A whole cancel's ask of a run outweighs an `--only` one.
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
# the same, asked by `sweepgen cancel --only RUN`: that run alone (its search goes on)
DROPPED_ALONE = (
    "not started: cancelled by `sweepgen cancel` (--only: this run alone) while queued; "
    "start it with `sweepgen run`"
)
# every reason a run dropped from a `run`'s queue is shown with
DROPPED_REASONS = (DROPPED, DROPPED_ALONE)


def ask(runs_dir: Path, names: Iterable[str], *, alone: bool = False) -> None:
    """Ask every live `sweepgen run` with runs ``names`` (folders of ``runs_dir``) queued to drop
    them (``alone``: asked by `cancel --only`). Names asked before on this boot stay asked at their
    own time. Raises OSError."""
    now, boot = boot_clock.now_s(), boot_clock.boot_id()
    if now is None or boot is None:
        return  # no clock to tell a later `run` from an earlier one: nothing is asked
    names = list(names)
    with _held(runs_dir):  # another `cancel`'s runs, read, added to and written by it meanwhile
        asked = _asked(runs_dir, boot)
        only = _alone_after(_alone(runs_dir, boot), set(asked), names, alone)
        asked.update(dict.fromkeys(names, now))
        record = {"boot_id": boot, "runs": asked, "alone": sorted(only)}
        runfs.write_atomic(runs_dir / REQUEST_FILE, (json.dumps(record, sort_keys=True) + "\n").encode())


def _alone_after(only: set[str], asked: set[str], names: list[str], alone: bool) -> set[str]:
    """The runs asked by `cancel --only` alone once ``names`` are asked (``alone``: by one): a run
    a whole cancel asked stays asked by it, before or after an `--only` one."""
    if not alone:
        return only - set(names)
    return only | {n for n in names if n in only or n not in asked}


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


def asked_since(runs_dir: Path, since_s: float | None) -> dict[str, str]:
    """The run folder names of ``runs_dir`` whose drop was asked at or after ``since_s`` (a `run`'s
    start on the boot clock) on this boot, each with the reason its drop is recorded with."""
    boot = boot_clock.boot_id()
    if since_s is None or boot is None:
        return {}
    asked = [name for name, at in _asked(runs_dir, boot).items() if at >= since_s]
    return _reasons(asked, _alone(runs_dir, boot))


def _reasons(asked: list[str], only: set[str]) -> dict[str, str]:
    """Each run of ``asked`` with the reason of its drop: `cancel --only`'s for those of ``only``."""
    return {name: DROPPED_ALONE if name in only else DROPPED for name in asked}


def _alone(runs_dir: Path, boot: str) -> set[str]:
    """The runs asked on boot ``boot`` by `cancel --only` alone; nothing for a file not this one."""
    named = (_record(runs_dir, boot) or {}).get("alone")
    return {n for n in named if isinstance(n, str)} if isinstance(named, list) else set()


def _record(runs_dir: Path, boot: str) -> dict[str, object] | None:
    """The request file's record of boot ``boot``; None for a file that is not this file."""
    try:
        data = runfiles.read_json(runs_dir / REQUEST_FILE, limit=_MAX_BYTES)
    except (OSError, runfiles.RunFileError):
        return None
    if not isinstance(data, dict) or data.get("boot_id") != boot or not isinstance(data.get("runs"), dict):
        return None
    return data


def _asked(runs_dir: Path, boot: str) -> dict[str, float]:
    """The runs asked on boot ``boot``; nothing for a file that is not this file (a link, FIFO,
    folder, too large, not JSON, nested deeper than a run file may be: a thousand ``[`` ended
    `cancel` and `run` in a RecursionError), another boot's, or a time that is no finite number."""
    runs = (_record(runs_dir, boot) or {}).get("runs")
    if not isinstance(runs, dict):
        return {}
    asked = {name: _seconds(at) for name, at in runs.items() if isinstance(name, str)}
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
