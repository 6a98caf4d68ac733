"""The study journal's files opened the way run files are: never through a link, regular files only.

Optuna's ``JournalFileBackend`` opens ``study.journal`` by path with ``open()``, which follows a link
at the journal or at the ``.search`` folder: a sweep folder committed (or left in a shared runs
folder) with ``.search/study.journal -> ~/.bashrc`` would have `run` append to it and `status` read
it. ``study.state_dir`` refuses such links when it names the paths, but a link made between that
check and the open would still be followed; here every open of the journal, its ``.flock`` and the
heal of a cut last line goes through ``open_in_state``: the folders from the working directory (or
the sweep folder named on the command line) down to ``.search`` walked by descriptor with
``O_DIRECTORY | O_NOFOLLOW`` (``runfs``), the file opened in that folder with ``O_NOFOLLOW |
O_NONBLOCK`` (a FIFO there never blocks) and checked to be a regular file before it is used.

``NoFollowJournal`` is Optuna's backend with its three file opens replaced; ``read_logs`` keeps
Optuna's own reading (offsets, a cut last line skipped, a bad line raised only when another follows).
Optuna keeps no descriptor between calls (it reopens the file for every read and append), so the
backend records the journal's identity (device and inode) when it first opens it and refuses any
later open that finds another file there: a journal swapped while the search runs (a shared runs
folder) is never read as this study's or appended to.

Durability: Optuna appends one line per operation (an ask is three or more: the trial, each of its
parameters, its owner), each written under the lock and fsynced by itself. Inside ``deferred()``
the lines are written at once (a killed process loses none of them: they are in the kernel's page
cache) and fsynced together at ``sync()`` or at the end, so a controller syncs once before it starts
a trial's runs (what must survive a crash of the machine) instead of once per line.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

# this module is itself imported only inside study.py's functions (a search sweep), never at start-up
from optuna.storages.journal import JournalFileBackend  # noqa: TID253 - see above
from optuna.storages.journal._file import BaseJournalFileLock, get_lock_file  # noqa: TID253 - see above

from sweepgen.errors import ConfigError, Location
from sweepgen.fs import runfs
from sweepgen.run.search import best_value


def _refused(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"{path} {why}",
        location=Location(str(path)),
        hint="sweepgen never reads or writes the search's state through a link or in anything but a "
        "plain file; delete it (the .search folder holds only what `sweepgen run` wrote)",
    )


def open_in_state(path: Path, flags: int, mode: int = 0o644) -> int:
    """A file descriptor for ``path`` (a file in the ``.search`` folder), neither the folder nor the
    file followed through a link; anything but a regular file is refused (ConfigError, exit 2).
    FileNotFoundError when it is missing and ``flags`` do not create it. A file of more than one
    name is never opened to write (a hard link: the journal appended to another file too), and read
    only as any run file whose text is shown is (``runfs.owners_name``: a `cp -al` backup of the
    person's own, never a link someone else could have made in a folder they write)."""
    writes = flags & (os.O_WRONLY | os.O_RDWR)
    try:
        fd = runfs.open_file(path, flags, mode, printed=not writes)
    except OSError as err:
        refused = _refusal(path, err)
        if refused is None:
            raise
        raise refused from None
    if writes and os.fstat(fd).st_nlink > 1:
        os.close(fd)
        raise _refused(path, "is a hard link (another name for the same file), never written to")
    return fd


def _refusal(path: Path, err: OSError) -> ConfigError | None:
    """What opening ``path`` met that the state folder never holds of its own; None: another error."""
    if err.errno == errno.EMLINK:
        return _refused(path, f"is {runfs.HARD_LINK_REFUSED}")
    if err.errno == errno.ELOOP:
        return _refused(Path(err.filename or path), "is a symbolic link")
    if err.errno == errno.ENOTDIR:
        return _refused(Path(err.filename or path.parent), "is not a folder")
    if err.errno == errno.ENXIO:  # a FIFO, socket or device
        return _refused(path, f"is {err.strerror}")
    return None


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


MAX_JOURNAL_BYTES = 1 << 30  # 1,000 trials reporting 1,000 steps each write about 150 MB
MAX_OP_BYTES = 16 << 20  # one operation: a trial's parameters, values and attributes (KBs)


def _size(fd: int) -> int:
    """The journal's size, refused past ``MAX_JOURNAL_BYTES`` (a folder others write: a 100 GB
    sparse file costs them nothing)."""
    size = os.fstat(fd).st_size
    if size > MAX_JOURNAL_BYTES:
        raise ValueError(f"{size:,} bytes, more than a study holds ({MAX_JOURNAL_BYTES:,})")
    return size


def _lines(f: BinaryIO, first: int) -> Iterator[bytes]:
    """The journal's lines from line ``first`` on, each read bounded: a 3 GB line of zeros was read
    whole (6 GB of memory); a longer one is refused, naming its line."""
    for number, line in enumerate(iter(lambda: f.readline(MAX_OP_BYTES + 1), b""), start=first + 1):
        if len(line) > MAX_OP_BYTES:
            raise ValueError(f"line {number}: longer than {MAX_OP_BYTES:,} bytes")
        yield line


# Optuna's replay copies a trial's whole dict of params (intermediate values, user or system
# attributes) for every operation that adds one: a trial of k values costs k**2/2 copies, so a 4 MB
# journal of one trial's values held `status` 49 s, and 100 MB for hours. Past this many copies a
# journal is refused (about 15 s of replay on a loaded 2-core machine; 1,000 trials reporting
# 1,000 steps each cost 5e8); the person running sweepgen raises it in their environment.
MAX_REPLAY_COPIES = 1_000_000_000
REPLAY_ENV = "SWEEPGEN_MAX_REPLAY_COPIES"


class CostlyReplay(ValueError):
    """A journal whose replay would copy more than the ceiling: exit 2 with how to raise it."""

    hint = (
        f"a study this large is replayed only when you say so: {REPLAY_ENV}=N in the environment "
        "(each `status` and `report` replays it whole); a journal from a shared runs folder may be "
        "made to cost this"
    )


_COPYING = {5: "parameters", 7: "intermediate values", 8: "user attributes", 9: "system attributes"}
_NAMED_BY = {5: "param_name", 7: "step", 8: "user_attr", 9: "system_attr"}  # the entries an op adds


class NoFollowJournal(JournalFileBackend):
    """Optuna's journal file backend whose opens never follow a link (see the module's note)."""

    def __init__(self, file_path: str, lock_obj: BaseJournalFileLock, *, read_only: bool = False) -> None:
        # Optuna's __init__ would create the file with open(); ours does, without following a link
        self._file_path = file_path
        self._lock = lock_obj
        self._log_number_offset: dict[int, int] = {0: 0}
        self._deferred = 0  # depth of deferred() blocks
        self._unsynced = False  # lines written since the last fsync
        self._held: dict[tuple[Any, int], set[Any]] = {}  # (trial, op) -> the entries its replay copies
        self._copies = 0  # what the replay of the lines of this read copies (a live search reads
        # a few new lines at a time for hours: only one read's burst is bounded, never their sum)
        self._read_only = read_only
        self.cut_line: int | None = None  # the cut last line the latest read left out (1-based)
        flags = os.O_RDONLY if read_only else os.O_WRONLY | os.O_APPEND | os.O_CREAT
        fd = open_in_state(Path(file_path), flags)
        self._identity = _identity(fd)
        os.close(fd)

    def _open(self, flags: int) -> int:
        """The journal opened by ``open_in_state``, refused when it is no longer the file this
        backend first opened (replaced by another: its offsets and its study are not ours)."""
        fd = open_in_state(Path(self._file_path), flags)
        if _identity(fd) != self._identity:
            os.close(fd)
            raise _refused(Path(self._file_path), "was replaced by another file while the search used it")
        return fd

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Appends inside are fsynced once, at ``sync()`` or when the outermost block ends."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1
            if not self._deferred:
                self.sync()

    def sync(self) -> None:
        """fsync what was appended since the last fsync (nothing to do when nothing was)."""
        if not self._unsynced:
            return
        with self._named_faults():
            fd = self._open(os.O_WRONLY | os.O_APPEND)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._unsynced = False

    def read_logs(self, log_number_from: int) -> Generator[dict[str, Any], None, None]:
        # Optuna 4/5's read_logs, the file opened by open_in_state and sized by fstat
        self._copies = 0
        with os.fdopen(self._open(os.O_RDONLY), "rb") as f:
            remaining_log_size = _size(f.fileno())
            log_number_start = 0
            if log_number_from in self._log_number_offset:
                f.seek(self._log_number_offset[log_number_from])
                log_number_start = log_number_from
                remaining_log_size -= self._log_number_offset[log_number_from]
            last_decode_error: Exception | None = None
            self.cut_line = None
            for log_number, line in enumerate(_lines(f, log_number_start), start=log_number_start):
                remaining_log_size -= len(line)
                if remaining_log_size < 0:
                    break  # written after the size was taken: the next read sees it whole
                if last_decode_error is not None:
                    raise last_decode_error
                if not line.endswith(b"\n"):  # a cut last line: skipped (the next writer heals it)
                    last_decode_error = ValueError("Invalid log format.")
                    self.cut_line = log_number + 1
                    continue
                if log_number + 1 not in self._log_number_offset:
                    self._log_number_offset[log_number + 1] = self._log_number_offset[log_number] + len(line)
                if log_number < log_number_from:
                    continue
                try:
                    log = json.loads(line)
                except json.JSONDecodeError as err:
                    last_decode_error = err
                    del self._log_number_offset[log_number + 1]
                    continue
                yield self._costed(checked_op(log, log_number + 1), log_number + 1)

    def _costed(self, log: Any, line: int) -> Any:
        """``log``, its replay's copies counted; past ``MAX_REPLAY_COPIES`` a ValueError naming
        the line (exit 2, as for a damaged journal)."""
        op = log.get("op_code") if isinstance(log, dict) else None
        if op in _COPYING:
            key = (log.get("trial_id"), op)
            held = self._held.setdefault(key, set())
            self._copies += len(held)
            named = log.get(_NAMED_BY[op])
            held.update(named if isinstance(named, dict) else [named])  # kinds checked: hashable
            ceiling = _ceiling()
            if self._copies > ceiling:
                raise CostlyReplay(
                    f"line {line}: trial {key[0]} holds {len(held):,} {_COPYING[op]}, which Optuna copies "
                    f"whole for each one it replays: past {ceiling:,} copies in all"
                )
        return log

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        if self._read_only:  # a reading command never writes the study (a bug, not a user error)
            raise RuntimeError("the study was opened to read (status, report): nothing is appended")
        with get_lock_file(self._lock), self._named_faults():
            text = "\n".join(json.dumps(log, separators=(",", ":")) for log in logs) + "\n"
            with os.fdopen(self._open(os.O_WRONLY | os.O_APPEND), "ab") as f:
                f.write(text.encode("utf-8"))
                f.flush()
                if self._deferred:
                    self._unsynced = True
                else:
                    os.fsync(f.fileno())

    @contextlib.contextmanager
    def _named_faults(self) -> Iterator[None]:
        """An OSError of a write to the journal (a full disk: ENOSPC) names the journal: a write to
        an open file names none, and the CLI took such an error for one of standard output ("cannot
        write to standard output: No space left on device") while stdout was fine."""
        try:
            yield
        except OSError as err:
            if err.filename is not None:
                raise
            raise OSError(err.errno, err.strerror or str(err), self._file_path) from err


class ReadOnlyLock(BaseJournalFileLock):
    """The lock of a journal opened to read: readers never take the writers' lock (appends are
    whole lines; a line cut by a writer still appending is left out of that read), so a reader
    creates no ``.flock`` and heals nothing; taking it is a bug, raised."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal

    def acquire(self) -> bool:
        raise RuntimeError(f"{self.journal} was opened to read: its writers' lock is never taken")

    def release(self) -> None:
        return None


def _ceiling() -> int:
    raised = os.environ.get(REPLAY_ENV, "")
    return int(raised) if raised.isascii() and raised.isdigit() and len(raised) < 19 else MAX_REPLAY_COPIES


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(_number(v) for v in value))


# sweepgen's own attributes that hold a list of numbers (a complete trial's per-seed final values);
# every other one holds text
_NUMBER_LISTS = frozenset({best_value.VALUES_ATTR})


def _sweepgen_attrs(value: Any) -> bool:
    """An attribute mapping whose sweepgen_ attributes hold what sweepgen writes there."""
    return isinstance(value, dict) and all(
        _own_attr(str(k), v) for k, v in value.items() if str(k).startswith("sweepgen_")
    )


def _own_attr(key: str, value: Any) -> bool:
    if key in _NUMBER_LISTS:
        return isinstance(value, list) and all(_number(v) for v in value)
    return isinstance(value, str)


_INT = ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
_TEXT = ("text", lambda v: isinstance(v, str))
_ATTRS = ("an object whose sweepgen_ attributes are text (sweepgen_values: numbers)", _sweepgen_attrs)
# What each operation of Optuna's journal (optuna.storages.journal.JournalOperation, 0-9) must hold
# for Optuna's replay and sweepgen's views of it: the journal may sit in a shared runs folder, and a
# step written as text (compared with the numbered ones) or a value that is not a number ended
# `status`, `list` and `run` in a TypeError (exit 70), after Optuna had replayed it without a word.
_OP_FIELDS: dict[int, dict[str, tuple[str, Any]]] = {
    0: {"study_name": _TEXT, "directions": ("a list of integers", lambda v: isinstance(v, list))},
    1: {"study_id": _INT},
    2: {"study_id": _INT, "user_attr": _ATTRS},
    3: {"study_id": _INT, "system_attr": ("an object", lambda v: isinstance(v, dict))},
    4: {"study_id": _INT},
    5: {
        "trial_id": _INT,
        "param_name": _TEXT,
        "param_value_internal": ("a number", _number),
        "distribution": _TEXT,
    },
    6: {"trial_id": _INT, "state": _INT, "values": ("a list of numbers or null", _numbers)},
    7: {
        "trial_id": _INT,
        "step": _INT,
        "intermediate_value": ("a number or null", lambda v: v is None or _number(v)),
    },
    8: {"trial_id": _INT, "user_attr": _ATTRS},
    9: {"trial_id": _INT, "system_attr": ("an object", lambda v: isinstance(v, dict))},
}


def checked_op(log: Any, line: int) -> Any:
    """``log`` when each field Optuna and sweepgen read from it has its kind; else ValueError naming
    the journal's line and the field (``study.unreadable_journal`` makes it exit 2). An operation
    this table does not know is left to Optuna (which refuses it)."""
    op = log.get("op_code") if isinstance(log, dict) else None
    fields = _OP_FIELDS.get(op) if isinstance(op, int) else None
    for key, (what, fits) in (fields or {}).items():
        if key in log and not fits(log[key]):
            raise ValueError(f"line {line}: {key} is not {what} ({type(log[key]).__name__})")
    return log
