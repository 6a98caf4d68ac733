"""The step a run's newest TensorBoard event file last logged, for `status` and the live table.

A `trl` run that keeps no trainer state (``save_strategy: "no"``) and logs only to TensorBoard has
its step in its event files alone: `status` showed ``-/N`` for it. Reading the files as `report`
does (tensorboard's reader, every scalar) on every `status` costs seconds a run; here only the
newest file written since the attempt started is read, its records walked by their length headers
(an event file is a sequence of ``length, length's checksum, data, data's checksum`` records) and
the last whole record's ``step`` (field 2 of TensorBoard's ``Event`` protobuf, a varint) decoded,
without tensorboard. A file is read again only when its size or time changed. Display only:
`report` reads the files with tensorboard's own reader.
"""

from __future__ import annotations

import functools
import os
import struct
from pathlib import Path

from sweepgen.run.core import runfiles
from sweepgen.run.logs import tb_files

# files and folders looked at in a run folder: the live table asks twice a second, and a display
# never lists millions (past it `status` shows no step; `report` says why it cannot read the run)
_MAX_ENTRIES = 10_000
_STEP_FIELD = 2  # Event.step (int64), tensorflow/core/util/event.proto


def last_step(run_dir: Path, since_ns: int | None) -> int | None:
    """The step of the last whole event record of the run's newest event file written since
    ``since_ns`` (None: any); None without one, or one whose last record holds no step."""
    newest = _newest_events(run_dir, since_ns)
    return _step_of(*newest) if newest is not None else None


def _newest_events(run_dir: Path, since_ns: int | None) -> tuple[str, int, int] | None:
    """(path, size, time) of the newest event file under ``run_dir`` (no link entered or read)."""
    found = [f for f in _event_files(run_dir) if since_ns is None or f[2] >= since_ns]
    return max(found, key=lambda f: f[2]) if found else None


def _event_files(run_dir: Path) -> list[tuple[str, int, int]]:
    """(path, size, time) of each regular event file under ``run_dir`` (tb_files' rule and walk);
    none past _MAX_ENTRIES or in a run that walk refuses."""
    try:
        found = tb_files.event_files(run_dir, limit=_MAX_ENTRIES)
    except runfiles.RunFileError:
        return []
    named = (os.path.join(folder, n) for folder, names in found.items() for n in names)
    return [r for r in map(_regular, named) if r is not None]


def _regular(path: str) -> tuple[str, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    regular = (info.st_mode & 0o170000) == 0o100000  # S_ISREG: never a link, FIFO or device
    return (path, info.st_size, info.st_mtime_ns) if regular else None


@functools.lru_cache(maxsize=256)
def _step_of(path: str, size: int, mtime_ns: int) -> int | None:
    """The last whole record's step (the file as it was at ``size`` and ``mtime_ns``)."""
    try:
        fd = runfiles.open_regular(Path(path))
    except (OSError, runfiles.RunFileError):
        return None
    try:
        record = _last_record(fd, size)
        return _event_step(os.pread(fd, record[1], record[0])) if record is not None else None
    except OSError:
        return None
    finally:
        os.close(fd)


_CHUNK = 1 << 20  # headers are read from 1 MiB at a time, not one read each


def _last_record(fd: int, size: int) -> tuple[int, int] | None:
    """(offset, length) of the data of the last record wholly within ``size`` bytes (the trainer may
    be writing the next one now)."""
    at, last = 0, None
    start, chunk = 0, b""
    while at + 12 <= size:
        if at + 8 > start + len(chunk):  # the header is past what was read: read on from it
            start, chunk = at, os.pread(fd, min(_CHUNK, size - at), at)
            if len(chunk) < 8:
                break
        (length,) = struct.unpack_from("<Q", chunk, at - start)
        if at + 16 + length > size:
            break
        last, at = (at + 12, length), at + 16 + length
    return last


def _event_step(data: bytes) -> int | None:
    """Field 2 (``step``) of a serialized ``Event``; None when absent (0, or no event) or unreadable."""
    at = 0
    try:
        while at < len(data):
            key, at = _varint(data, at)
            field, wire = key >> 3, key & 7
            if field == _STEP_FIELD and wire == 0:
                return _varint(data, at)[0]
            at = _skip(data, at, wire)
    except (IndexError, ValueError):
        return None
    return None


def _skip(data: bytes, at: int, wire: int) -> int:
    """The offset after a field's value of wire type ``wire``."""
    if wire == 0:
        return _varint(data, at)[1]
    if wire in (1, 5):
        return at + (8 if wire == 1 else 4)
    if wire == 2:
        length, at = _varint(data, at)
        return at + length
    raise ValueError(f"wire type {wire}")  # groups (3, 4) are not in an Event


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")
