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
from typing import Any

from sweepgen.fs import runfs
from sweepgen.fs.confine import project_root, within

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
