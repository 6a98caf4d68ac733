"""The data file a trainer config names, as part of its fingerprint: changed data makes a run stale
as a changed config does (tasks.config_fingerprint).

The path is read from a generated config, data a pull request may have written, so it follows the
project's rule for such paths (sweepgen.fs.confine): a file inside the project is hashed, opened as run
files are (no link on the way, regular files only, never blocking); a path that leads outside it
(absolute, climbing out with ``..``, or through a link) is never opened by sweepgen: `report` and
`status` on an unreviewed project read nothing outside. Such data is the trainer's to read, so a run
goes stale by its config's words alone (the path as written), as for a Hub dataset.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from typing import TYPE_CHECKING, Any

from sweepgen.fs import filenames, runfs
from sweepgen.fs.confine import project_root, within
from sweepgen.run.core import runfiles

if TYPE_CHECKING:
    from pathlib import Path

    from sweepgen.run.core.base import RunTask

MISSING = "missing"


def data_file_digest(parsed: Any) -> str | None:
    """sha256 of the ``.jsonl`` file a config's ``data.source`` names (relative to where runs start);
    None when it names none (a builtin dataset, another config layout), ``missing`` when no regular
    file is there, ``outside:<path>`` for a path outside the project."""
    source = parsed.get("data", {}).get("source") if isinstance(parsed, dict) else None
    if not isinstance(source, str) or source.startswith("builtin:") or not source.endswith(".jsonl"):
        return None
    try:
        real = os.path.realpath(source)
    except (ValueError, OSError):
        return MISSING
    root = os.path.realpath(project_root() or ".")
    if not within(real, root):
        return "outside:" + source
    try:
        info = os.lstat(real)  # no link left in `real`: the file itself
        return _file_digest(real, info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else MISSING
    except OSError:
        return MISSING


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    # Keyed by size and mtime too: one sweep's thousands of configs share one data file, hashed once.
    fd = runfs.open_file(path, os.O_RDONLY)  # swapped for a link or a FIFO since: refused (OSError)
    try:
        digest = hashlib.sha256()
        while block := os.read(fd, 1 << 20):
            digest.update(block)
        return digest.hexdigest()
    finally:
        os.close(fd)


def stale_cause(task: RunTask) -> str:
    """Why a stale run is stale, for the message: its data file (the bundled trainer records the
    file's sha256 in the run's data.json) or the config itself. The data file is read as for the
    fingerprint (``data_file_digest``: inside the project, no link, never blocking); before, any
    path the config named was read whole (an absolute path, a link out of the project, /proc/kcore)."""
    digest = data_file_digest(task.config)
    recorded = task.run_dir / filenames.DATA
    if digest is None or digest == MISSING or digest.startswith("outside:") or not runfs.is_file(recorded):
        return "its config changed"
    old = _recorded_sha256(recorded)
    if isinstance(old, str) and old != digest:
        return (
            f"its data file {task.config['data']['source']} changed (sha256 {old[:12]}… now {digest[:12]}…)"
        )
    return "its config changed"


def _recorded_sha256(recorded: Path) -> Any:
    """The data file's sha256 as the run's data.json records it (unchecked); None when that file
    does not read: the cause then falls back to the config, it never fails the plan."""
    try:  # a run file: never through a link, bounded
        return runfiles.read_json(recorded, limit=64 << 10).get("sha256")
    except (OSError, ValueError, AttributeError, runfiles.RunFileError):
        return None
