"""Which Hugging Face Trainer states an attempt found in its run folder when it started, so the step
shown for a foreign trainer (`trl grpo` writes no metrics.jsonl) is never an earlier attempt's.

A state's file time compared with the attempt's start is wrong by as much as the wall clock was
moved between them: moved back after an attempt saved checkpoint-800, the next attempt (which starts
over) showed 800 as its step from its first second. The supervisor records each state that is there
at the start with its file time (``ids.trainer_states_before``); a state is this attempt's when it is
not in that record or its time is another (written again). Equality, never order: no clock jump
changes it. Standard library only: the supervisor imports it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Final

from sweepgen.fs import filenames, runfs

TRAINER_STATE = filenames.TRAINER_STATE
_DIR_NOFOLLOW: Final = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
BEFORE = "trainer_states_before"  # in ids: {path in the run folder: its st_mtime_ns} at the start
CHECKPOINT = "checkpoint-"
# more checkpoints than a run keeps (save_total_limit) means a hostile or odd folder: not recorded
# (the step then falls back to the start's time), so a status file stays small
MAX_RECORDED = 1000
MAX_LISTED = 10_000  # entries of a run folder looked through: a real one holds tens
# said in the run's log where ``present`` is None: the record is missing, never quietly
NOT_RECORDED = (
    "sweepgen: the run folder holds more than {entries:,} entries or {states:,} checkpoints (not "
    "listed whole): the trainer states an earlier attempt left there are not recorded, so the step "
    "shown for this attempt is told from its start time (a wall clock moved back since can show an "
    "earlier attempt's step)"
)


def not_recorded() -> str:
    """The run log's line where ``present`` found too many entries to record."""
    return NOT_RECORDED.format(entries=MAX_LISTED, states=MAX_RECORDED)


def present(run_dir: Path) -> dict[str, int] | None:
    """Each trainer state in ``run_dir`` (its own, and each ``checkpoint-N``'s) with its file time
    (never through a link at the file); None where there are more than MAX_RECORDED, or the folder
    holds more than MAX_LISTED entries (never listed whole)."""
    names = _checkpoints(run_dir)
    if names is None or len(names) > MAX_RECORDED:
        return None
    found: dict[str, int] = {}
    for rel in (TRAINER_STATE, *(f"{name}/{TRAINER_STATE}" for name in names)):
        written = state_time(run_dir, rel)
        if written is not None:
            found[rel] = written
    return found


def state_time(run_dir: Path, rel: str) -> int | None:
    """The file time of the state ``rel`` (``trainer_state.json`` or ``checkpoint-N/...``) in
    ``run_dir``, reached through no link (``state_stat``); None where there is none."""
    info = state_stat(run_dir, rel)
    return None if info is None else info.st_mtime_ns


def state_stat(run_dir: Path, rel: str) -> os.stat_result | None:
    """``lstat`` of the state ``rel`` in ``run_dir`` reached through no link: a ``checkpoint-N``
    that is a link (to a folder anywhere) is never looked into; None where there is none."""
    folder, _, name = rel.rpartition("/")
    try:
        if not folder:
            return os.lstat(run_dir / name)
        fd = os.open(run_dir / folder, _DIR_NOFOLLOW)
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)
    except OSError:  # missing, or a link in the way (ELOOP, ENOTDIR)
        return None


def is_link(run_dir: Path, name: str) -> bool:
    """Whether the entry ``name`` of ``run_dir`` is a link (never followed)."""
    try:
        return stat.S_ISLNK(os.lstat(run_dir / name).st_mode)
    except OSError:
        return False


def _checkpoints(run_dir: Path) -> list[str] | None:
    """The ``checkpoint-*`` names in ``run_dir``; None past MAX_LISTED entries (never listed whole)."""
    try:
        listed = runfs.first_names(run_dir, MAX_LISTED)
    except OSError:  # no folder yet (a first attempt), or none to read: nothing was there
        return []
    return None if listed is None else [name for name in listed if name.startswith(CHECKPOINT)]


def recorded(ids: dict[str, Any]) -> dict[str, int] | None:
    """The record in a status's ``ids``; None where it has none (an older status, another executor,
    one too many) or one that is not such a record (a status file is data)."""
    value = ids.get(BEFORE)
    if not isinstance(value, dict):
        return None
    ok = all(isinstance(k, str) and type(v) is int for k, v in value.items())
    return value if ok else None


def written_since(run_dir: Path, path: Path, before: dict[str, int]) -> bool:
    """Whether the state ``path`` (in ``run_dir``) was written by this attempt: not there at its
    start, or written again since (another file time)."""
    rel = path.relative_to(run_dir).as_posix()
    written = state_time(run_dir, rel)
    return written is not None and before.get(rel) != written
