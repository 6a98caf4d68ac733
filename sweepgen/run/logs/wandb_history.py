"""The history a W&B run logged, read from its local ``run-<id>.wandb`` file (offline runs' only record).

`sweepgen run` gives every run ``WANDB_DIR=<run folder>`` (run/core/plan/trackers.py), so wandb writes
``<run>/wandb/offline-run-<time>-<id>/run-<id>.wandb`` (``run-<time>-<id>/`` when online: a local
copy too), as the bundled trainer does with ``logging.report_to: [wandb]``. The file is a LevelDB-style
log (wandb's own format): a 7-byte header ``:W&B`` + magic + version, then 32 KiB blocks of records,
each ``crc32 | length | type`` and a chunk of one protobuf ``Record`` (FULL, or FIRST/MIDDLE/LAST
across blocks). The chunks are read here, checked against their crc, and each record is parsed by
wandb's own protobuf classes (never a hand-written protobuf parser); a record cut short (a run still
writing) ends the file. A history row's step is ``train/global_step`` when it logs one (the HF
Trainer's WandbCallback does), else wandb's own step; rows are ordered by their ``_timestamp``, so a
step logged twice keeps the value logged last, across the files of a run started again in its folder.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import math
import os
import stat
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sweepgen.errors import UserError
from sweepgen.fs import runfs
from sweepgen.run.core import runfiles

WANDB_FOLDER, RUN_FILES = "wandb", "run-*.wandb"  # <run>/wandb/<one run's folder>/run-<id>.wandb
HINT = "install it with `pip install 'sweepgen[track]'` (or `pip install wandb`)"
_HEADER = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
_BLOCK = 32768
_CHUNK = struct.Struct("<IHB")  # crc32, length, type
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_STEP_KEY = "train/global_step"


def files(run_dir: Path) -> list[Path]:
    """The run's ``.wandb`` files, found without following a link: a ``wandb``
    folder that links elsewhere (a pull request's, a shared runs folder's) is never listed, and
    wandb's own ``wandb/latest-run`` link to one of the folders is skipped (the file is read once,
    from its own folder)."""
    top = run_dir / WANDB_FOLDER
    folders = [top / name for name in _listed(top) if _real_folder(top / name)]
    return sorted(
        folder / name
        for folder in folders
        for name in _listed(folder)
        if fnmatch.fnmatchcase(name, RUN_FILES) and not (folder / name).is_dir()
    )


def _listed(folder: Path) -> list[str]:
    """The names in ``folder``, listed by descriptor (runfs): a folder swapped for a link after it
    was checked is never listed; none when it is not a folder (or a link, or gone); a RunFileError
    (naming it) when it holds more than MAX_LISTED entries."""
    try:
        return runfs.listdir(folder, MAX_LISTED)
    except OSError as err:
        if err.errno == errno.E2BIG:  # never listed whole: said, as a run file that cannot be read
            raise runfiles.RunFileError(
                folder, f"holds more than {MAX_LISTED:,} entries (not listed)"
            ) from None
        return []


MAX_LISTED = 10_000  # entries of a run's wandb folder (or one run's folder in it) looked through


def _real_folder(path: Path) -> bool:
    """A folder, not a link to one, and no link on the way to it (runfs)."""
    try:
        return stat.S_ISDIR(runfs.lstat(path).st_mode)
    except OSError:
        return False


def rows(paths: list[Path]) -> list[dict[str, Any]]:
    """Every history row of the files (each checked and bounded first) as ``{"step": N, name:
    value, ...}``, oldest first by ``_timestamp``, so a step logged twice keeps its last value."""
    _check_sizes(paths)
    record_class = _record_class(paths[0]) if paths else None  # wandb imported only for a file
    found: list[tuple[float, dict[str, Any]]] = []
    left = runfiles.MAX_EVENTS_BYTES
    for path in paths:
        data = _read_within(path, left)
        left -= len(data)
        for chunk in records(data, path):
            record = _parsed(record_class, chunk, path)
            if record.WhichOneof("record_type") == "history":
                found += _row(record.history)
    return [row for _, row in sorted(found, key=lambda stamped: stamped[0])]


def _read_within(path: Path, left: int) -> bytes:
    """The file's bytes, at most ``left`` (what the run's W&B files may still take): the total is
    bounded as the files are read, not only as they were listed (a live writer, or a shared folder's
    owner, can grow each file after ``_check_sizes``)."""
    try:
        return runfiles.read_bytes(path, limit=left) or b""
    except runfiles.RunFileError as err:
        if left == runfiles.MAX_EVENTS_BYTES or "larger than" not in err.reason:
            raise  # the file alone is too large, or not a plain file: its own reason
        raise runfiles.RunFileError(
            path, f"brings the run's W&B files past {runfiles.MAX_EVENTS_BYTES:,} bytes (it grew as read)"
        ) from None


def _check_sizes(paths: list[Path]) -> None:
    """Regular files (no link, no FIFO), together at most ``runfiles.MAX_EVENTS_BYTES``."""
    total = 0
    for path in paths:
        total += runfiles.regular_size(path)
        if total > runfiles.MAX_EVENTS_BYTES:
            raise runfiles.RunFileError(
                path, f"brings the run's W&B files past {runfiles.MAX_EVENTS_BYTES:,} bytes ({total:,})"
            )


def records(data: bytes, path: Path, *, tail: bool = False) -> Iterator[bytes]:
    """Every whole record of a ``.wandb`` file's bytes; a cut or damaged chunk ends the file.
    ``tail``: the bytes start at a block of the file past its first (``last_step``), where a record
    begun in an earlier block is left out (its chunks there are its middle and end only)."""
    if not data:
        return  # gone since it was listed, or nothing written yet
    if not tail:
        _check_header(data, path)
    parts: bytearray | None = None
    for kind, body in _chunks(data, 0 if tail else len(_HEADER)):
        parts = bytearray(body) if kind in (_FULL, _FIRST) else _continued(parts, body)
        if kind in (_FULL, _LAST) and parts is not None:
            yield bytes(parts)
            parts = None


def _continued(parts: bytearray | None, body: bytes) -> bytearray | None:
    """A record's chunks so far and its next; None for a record whose start was not read."""
    return None if parts is None else parts + body


def last_step(run_dir: Path, since_ns: int | None) -> int | None:
    """The step of the last history row of the run's newest ``.wandb`` file written since
    ``since_ns`` (None: any), read from the file's last blocks alone (`status` asks twice a second,
    and a long run's file is large): display only, `report` reads the whole history. None without
    such a file or row in those blocks, or without wandb installed (whose classes parse records)."""
    try:
        newest = _newest(run_dir, since_ns)
        stamped = _tail_rows(newest) if newest is not None else []
    except (UserError, OSError):  # RunFileError is a UserError: a damaged record shows no step
        return None
    step = max(stamped, key=lambda row: row[0])[1]["step"] if stamped else None
    return int(step) if isinstance(step, (int, float)) and math.isfinite(step) else None


def _newest(run_dir: Path, since_ns: int | None) -> Path | None:
    """The run's newest regular ``.wandb`` file written since ``since_ns`` (None: any)."""
    dated = [(info.st_mtime_ns, p) for p in files(run_dir) if (info := _regular_info(p)) is not None]
    newest = max((d for d in dated if since_ns is None or d[0] >= since_ns), default=None)
    return newest[1] if newest is not None else None


def _tail_rows(path: Path) -> list[tuple[float, dict[str, Any]]]:
    """The stamped history rows whole in the file's last blocks."""
    record_class = _record_class(path)
    start, data = _last_blocks(path)
    found = [_parsed(record_class, chunk, path) for chunk in records(data, path, tail=start > 0)]
    return [row for r in found if r.WhichOneof("record_type") == "history" for row in _row(r.history)]


_TAIL_BYTES = 8 * _BLOCK  # what last_step reads of a file: its last blocks


def _last_blocks(path: Path) -> tuple[int, bytes]:
    """(the offset, a block's start, and the bytes) of the file's last ``_TAIL_BYTES`` or so."""
    fd = runfs.open_file(path, os.O_RDONLY, printed=True)  # never through a link (runfs)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - _TAIL_BYTES) // _BLOCK * _BLOCK
        os.lseek(fd, start, os.SEEK_SET)
        return start, os.read(fd, size - start)
    finally:
        os.close(fd)


def _regular_info(path: Path) -> os.stat_result | None:
    """``path``'s lstat where it is a regular file: looked at once (a file gone since is None)."""
    try:
        info = runfs.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _chunks(data: bytes, index: int) -> Iterator[tuple[int, bytes]]:
    """(kind, body) of each whole chunk from ``index`` (after the header, or a block's start), in
    order, up to the first cut or damaged one; a record may span chunks (``records`` joins them)."""
    while index + _CHUNK.size <= len(data):
        left = _BLOCK - index % _BLOCK
        if left < _CHUNK.size:
            index += left  # a block's tail too short for a chunk header is padding
            continue
        crc, length, kind = _CHUNK.unpack_from(data, index)
        body = data[index + _CHUNK.size : index + _CHUNK.size + length]
        index += _CHUNK.size + length
        if len(body) < length or zlib.crc32(body, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF != crc:
            return  # written only in part (the run is still writing): what came before stands
        yield kind, body


def _check_header(data: bytes, path: Path) -> None:
    if not data.startswith(_HEADER):
        known = data.startswith(_HEADER[:4])
        raise runfiles.RunFileError(
            path,
            "is a W&B run file of a format this sweepgen does not read (another wandb version)"
            if known
            else "is not a W&B run file (no `:W&B` header)",
        )


def _parsed(record_class: Any, chunk: bytes, path: Path) -> Any:
    record = record_class()
    try:
        record.ParseFromString(chunk)
    except Exception as err:  # noqa: BLE001 - protobuf's DecodeError, or whatever a bad record raises
        reason = f"holds a record wandb cannot read ({type(err).__name__})"
        raise runfiles.RunFileError(path, reason) from None
    return record


def _row(history: Any) -> list[tuple[float, dict[str, Any]]]:
    """One history record as ``[(timestamp, row)]``; empty without a step or a timestamp."""
    values = _values(history)
    step = values.get(_STEP_KEY, history.step.num)
    stamp = values.get("_timestamp")
    if not (_is_number(step) and isinstance(stamp, (int, float))):
        return []
    row = {k: v for k, v in values.items() if not k.startswith("_") and k not in (_STEP_KEY, "step")}
    return [(float(stamp), {"step": step, **row})]


def _values(history: Any) -> dict[str, Any]:
    """A history record's items by key (a nested key joined with dots); an item json cannot read
    is left out, not fatal: the rest of the record still stands. So is a list or an object: only
    numbers are metrics, and one nested ten thousand deep ended `report` in a RecursionError."""
    values: dict[str, Any] = {}
    for item in history.item:
        if item.value_json.lstrip()[:1] in ("[", "{"):
            continue
        try:  # wandb writes NaN and Infinity as JSON's extension words, which json reads
            values[item.key or ".".join(item.nested_key)] = json.loads(item.value_json)
        except ValueError:
            continue
    return values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _record_class(path: Path) -> Any:
    try:
        from wandb.proto import wandb_internal_pb2  # noqa: PLC0415 - the optional track extra
    except ImportError:
        raise UserError(
            f"{path.parent.parent.parent} has W&B run files but wandb is not installed", hint=HINT
        ) from None
    return getattr(wandb_internal_pb2, "Record")  # noqa: B009 - generated code mypy cannot see
