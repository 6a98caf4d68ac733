"""TensorBoard event files read by tensorboard's own reader from files sweepgen opened itself.

tensorboard's EventAccumulator lists a folder and opens each event file by its name: a file checked
first (a regular file, reached without a link, within the size limit) and then swapped for a link
(to any file of the person running `report`) or a FIFO (a hang) was read in its place. Here each
file is opened once, by descriptor (``runfs``), checked on that descriptor, and handed to
tensorboard's loader as ``/dev/fd/N``: the open file itself, never its name again. The order and the
files and their order are the accumulator's own rule, found by tb_files' one walk.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import UserError
from sweepgen.run.core import runfiles

FD_FOLDER = "/dev/fd"  # a process's open files by number (Linux: /proc/self/fd; macOS: fdesc)
_CHANGED = "its EventAccumulator reads a folder only by name (no _generator to hand the files to)"

Files = list[tuple[Path, int]]  # (the file, its descriptor) in tensorboard's order


def scalars(found: Mapping[Path, Sequence[str]]) -> Iterator[tuple[str, Sequence[Any]]]:
    """(tag, its scalar events) of each folder of ``found`` (folder -> its event files' names, from
    ``tb_files.event_files``), tensorboard's EventAccumulator reading the files opened here; a run's
    files together at most ``runfiles.MAX_EVENTS_BYTES``."""
    dirs = list(found)
    opened = _open_all(found)  # before tensorboard is imported: its refusals need none
    try:
        from tensorboard.backend.event_processing import (  # type: ignore[import-untyped]
            event_accumulator,
            event_file_loader,
        )

        for folder, files in zip(dirs, opened):
            # size_guidance 0: keep every scalar (the default samples down to 10,000 per tag)
            acc = event_accumulator.EventAccumulator(
                str(folder), size_guidance={event_accumulator.SCALARS: 0}
            )
            if not hasattr(acc, "_generator"):  # never a reader that opens the files by name again
                raise UserError(f"this tensorboard cannot be handed open files: {_CHANGED}", hint=_PIN)
            acc._generator = _Opened(files, event_file_loader.LegacyEventFileLoader)
            acc.Reload()
            for tag in acc.Tags().get("scalars", []):
                yield tag, acc.Scalars(tag)
    finally:
        for fd in (fd for files in opened for _, fd in files):
            os.close(fd)


_PIN = "install a tensorboard release sweepgen was tested with (`pip install 'tensorboard<3'`)"


def _open_all(found: Mapping[Path, Sequence[str]]) -> list[Files]:
    """Per folder, each of its event files, opened and checked (kind, size, records)."""
    limit, total = runfiles.MAX_EVENTS_BYTES, 0
    opened: list[Files] = []
    try:
        for folder, names in found.items():
            opened.append(files := [])
            for name in names:
                path = folder / name
                files.append((path, runfiles.open_regular(path)))
                size = os.fstat(files[-1][1]).st_size
                total += size
                if total > limit:
                    raise runfiles.RunFileError(
                        path, f"brings the run's TensorBoard event files past {limit:,} bytes ({total:,})"
                    )
                runfiles.charge(path, size)  # tensorboard reads them: the command's budget counts them
                _check_records(path, files[-1][1], size)
    except BaseException:
        for fd in (fd for files in opened for _, fd in files):
            os.close(fd)
        raise
    return opened


def _check_records(path: Path, fd: int, size: int) -> None:
    """Refuse an event file holding a record longer than any event file may be: tensorboard's
    reader allocates the length a record's header gives before it finds the file shorter (a 112-byte
    file saying 2**36 ended `report` "out of memory"). A record is its 8-byte length, the length's
    4-byte checksum, the data and the data's checksum; a length past the file's end that a file
    within the limit can hold is a record still being written, where tensorboard stops by itself."""
    data = os.pread(fd, size, 0)
    at = 0
    while at + 8 <= len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        if length > runfiles.MAX_EVENTS_BYTES:
            raise runfiles.RunFileError(
                path, f"holds a record of {length:,} bytes at byte {at:,}: no event file"
            )
        at += 16 + length


class _Opened:
    """In place of the EventAccumulator's directory watcher, which it only asks to ``Load()``
    events: the events of the files opened here, each read by tensorboard's own loader."""

    def __init__(self, files: Files, loader: Any) -> None:
        self.files, self.loader = files, loader

    def Load(self) -> Iterator[Any]:  # tensorboard's name
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]  # noqa: PLC0415 - tensorboard's own dependency

        for path, fd in self.files:
            try:
                yield from self.loader(f"{FD_FOLDER}/{fd}").Load()
            except DecodeError as err:  # a record whose checksums hold but whose bytes are no event
                raise runfiles.RunFileError(
                    path, f"holds a record that is no TensorBoard event ({err})"
                ) from None
