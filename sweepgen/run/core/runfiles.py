"""Reading what a trainer left in its run folder, which may be anything.

A foreign trainer writes what it writes: ``summary.json`` may be a FIFO (opening it would block
forever), a link to ``/dev/zero`` (reading it never ends), gigabytes, JSON nested a million deep
(Python's parser overflows its recursion limit) or text with ``NaN``. Every read here opens the file
without blocking and without following a link (a committed ``run.log`` or ``config.yaml`` that links
to a file outside must not be printed), insists on a regular file, checks its size before reading
and reads at most that much, and turns every problem into a ``RunFileError`` naming the file and
the reason, so ``report`` can list the run with it and go on, and nothing ends in a hang or an internal error.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sweepgen import paths
from sweepgen.errors import ConfigError, Location, SweepgenError
from sweepgen.fs import runfs
from sweepgen.fs.safefs import kind_of

MAX_JSON_BYTES = 16 << 20  # summary.json, status files: a few KB in practice
MAX_LOG_BYTES = 256 << 20  # metrics.jsonl / metrics.csv: a long run logging every step stays far below
MAX_INT_DIGITS = 4000  # below Python's int-from-text limit (4,300 digits)
MAX_DEPTH = 100  # JSON nesting; a summary nests two or three levels
# TensorBoard event files of one run, together: tensorboard's reader takes about 1 s per 3 MB of
# scalar events (measured on a loaded 2-core machine), so this is a report's run read in ~20 s; a run
# logging 20 scalars for 50,000 steps writes about 45 MB
MAX_EVENTS_BYTES = 64 << 20


# Every run file one `report` reads, together: each is bounded above, but in a shared runs folder a
# sparse file of that size costs its writer nothing, and 20 runs of a 250 MB metrics.jsonl cost a
# report 36 s and 4 GB of memory. A real report reads far less (1,000 runs x 1,000 logged steps of
# 20 metrics: about 0.5 GB); past this only the command line goes (`report --max-read-bytes`).
REPORT_BYTES = 2 << 30


class ReadBudgetError(SweepgenError):
    """The run files of one command together past its budget. No UserError: it never joins one run's
    problems (the report would go on without the metrics of every run after it); it ends the command."""


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self.error: ReadBudgetError | None = None


_budgets: list[_Budget] = []  # the command's, while one is set (`read_budget`)


@contextlib.contextmanager
def read_budget(limit: int) -> Iterator[None]:
    """Within the block, the run files read (and the event files handed to tensorboard) together
    hold at most ``limit`` bytes (``charge``). Once past it, every read is refused, and the block
    ends with the error even where a caller took it for one run's problem and went on."""
    budget = _Budget(limit)
    _budgets.append(budget)
    try:
        yield
    finally:
        _budgets.pop()
    if budget.error is not None:
        raise budget.error


HELD_BYTES = 16  # a logged value held (points.py), counted against the budget as bytes read


def charge(path: Path, size: int, held: int = 0) -> None:
    """Count ``size`` bytes of ``path`` against the command's budget, before they are read, and
    ``held`` logged values kept from it (``HELD_BYTES`` each: a CSV of one-digit cells holds eight
    times the bytes it is read from)."""
    if not _budgets:
        return
    budget = _budgets[-1]
    counted = size + held * HELD_BYTES
    if budget.error is None and counted > budget.left:
        budget.error = ReadBudgetError(
            f"the run files this command reads{' and the logged values it holds' if held else ''} "
            f"pass its budget of {budget.limit:,} bytes here ({_charged(size, held)}, after "
            f"{budget.limit - budget.left:,} counted before)",
            location=Location(str(path)),
            hint="a shared runs folder can hold files that cost their writer nothing; when you trust "
            f"who wrote these runs, raise it: `--max-read-bytes {_raised(budget, counted)}M`",
        )
    if budget.error is not None:
        raise budget.error
    budget.left -= counted


def _raised(budget: _Budget, charge: int) -> int:
    """MiB to suggest: four times the budget, and at least twice what was counted with this charge
    (four times 1 MiB said to raise it to 4M where one 5 MB file was being read)."""
    need = budget.limit - budget.left + charge
    return -(-max(4 * budget.limit, 2 * need) >> 20)


def _charged(size: int, held: int) -> str:
    """What one charge counts, in words: the bytes read and the values held (at what they count)."""
    read = f"{size:,} bytes read" if size or not held else ""
    kept = f"{held:,} logged values held, {HELD_BYTES} bytes each: {held * HELD_BYTES:,}" if held else ""
    return " and ".join(w for w in (read, kept) if w)


_PLAIN_FILES = "the trainer (or something else) wrote this file; sweepgen reads only plain files"


class RunFileError(ConfigError):
    """A run file that cannot be used, with the reason; ``reason`` is short enough for a table."""

    def __init__(self, path: Path, reason: str, hint: str = _PLAIN_FILES) -> None:
        super().__init__(
            f"{path.name} {reason}",  # the location names the whole path
            location=Location(str(path)),
            hint=hint,
        )
        self.path = path
        self.reason = reason


def read_bytes(path: Path, *, limit: int, own_only: bool = False) -> bytes | None:
    """The bytes of ``path``, None when nothing is there; a link (at the file or at a folder on the
    way, ``runfs``), FIFO, device, folder or a file over ``limit`` bytes is a RunFileError, found
    without blocking and before reading. ``own_only``: None also where the file opened is not this
    user's own (``runfs.is_own``, judged on the descriptor read): its text is then nobody's proof."""
    fd = _open_within(path, limit)
    if fd is None:
        return None
    try:
        info = os.fstat(fd)
        if own_only and not runfs.is_own(info):
            return None
        # the whole file in one read when it is as large as it says (chunks joined would hold it
        # twice); a file that grew since is read on in chunks, up to the limit
        chunks, size = [], 0
        while size <= limit and (
            chunk := os.read(fd, min(max(1 << 20, info.st_size + 1 - size), limit + 1 - size))
        ):
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # grew while read
            raise RunFileError(path, f"is larger than {limit:,} bytes")
        return b"".join(chunks)
    except OSError as err:
        raise RunFileError(path, f"cannot be read ({err.strerror})") from None
    finally:
        os.close(fd)


def read_pieces(path: Path, *, limit: int, piece: int) -> Iterator[bytes]:
    """The bytes of ``path`` as ``read_bytes`` gives them, ``piece`` bytes at a time (nothing when
    nothing is there): a log is parsed as it is read, never held whole."""
    fd = _open_within(path, limit)
    if fd is None:
        return
    try:
        size = 0
        while chunk := os.read(fd, min(piece, limit + 1 - size)):
            size += len(chunk)
            if size > limit:  # grew while read
                raise RunFileError(path, f"is larger than {limit:,} bytes")
            yield chunk
    except OSError as err:
        raise RunFileError(path, f"cannot be read ({err.strerror})") from None
    finally:
        os.close(fd)


def _open_within(path: Path, limit: int) -> int | None:
    """A descriptor reading ``path`` (None when nothing is there), its size within ``limit`` and
    charged to the command's budget; refused as ``read_bytes`` says."""
    try:
        fd = runfs.open_file(path, os.O_RDONLY, printed=True)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        raise _refused(path, err) from None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise RunFileError(path, f"is larger than {limit:,} bytes ({size:,})")
        charge(path, size)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: Path) -> int:
    """A descriptor reading the regular file ``path``, opened as ``read_bytes`` opens it (no link at
    the file or a folder on the way, never a FIFO or device, never blocking); a RunFileError for
    anything else, a file gone since it was listed included."""
    try:
        return runfs.open_file(path, os.O_RDONLY, printed=True)
    except OSError as err:
        raise _refused(path, err) from None


def _refused(path: Path, err: OSError) -> RunFileError:
    """The RunFileError for an open ``runfs`` refused: the link in the way named, or the kind."""
    if err.errno == errno.ELOOP:
        where = Path(err.filename) if err.filename else path
        return RunFileError(where, "is a symbolic link (never followed)")
    if err.errno == errno.ENXIO:
        return RunFileError(path, f"is {err.strerror}")
    if err.errno == errno.EMLINK:  # runfs.owners_name
        return RunFileError(
            path,
            f"is {err.strerror}",
            hint="its other name may be any file of yours, outside the project: copy the file there "
            "instead of linking it, or keep the folder writable by the file's owner alone",
        )
    return RunFileError(path, f"cannot be opened ({err.strerror})")


def open_append(path: Path) -> int:
    """A file descriptor appending to ``path`` (created when missing, mode 0666 minus the umask),
    never through a link (at the file or a folder on the way, ``runfs``), never a FIFO or device,
    never a file of more than one name; raises OSError (ELOOP for a link, ENXIO for anything but a
    regular file, EMLINK for a hard link), which the callers report with a hint."""
    fd = runfs.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    if os.fstat(fd).st_nlink > 1:
        # written in place, a hard link's bytes are every other name's too: a shared runs folder's
        # writer could so have a run's log appended to a file of the person's outside the project
        # (where hard links to others' files are allowed: macOS, fs.protected_hardlinks=0)
        os.close(fd)
        raise OSError(
            errno.EMLINK, "a hard link (another name for the same file), never appended to", str(path)
        )
    return fd


def read_end(path: Path, max_bytes: int) -> bytes:
    """The last ``max_bytes`` of the regular file ``path``, opened as ``read_bytes`` opens; nothing
    for a missing file, a link, FIFO or device."""
    try:
        fd = runfs.open_file(path, os.O_RDONLY, printed=True)
    except OSError:
        return b""
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - max_bytes), os.SEEK_SET)
        return os.read(fd, max_bytes)
    except OSError:
        return b""
    finally:
        os.close(fd)


def unread_why(path: Path) -> str | None:
    """Why ``path`` is not read (a link, FIFO, another's hard link: ``read_end`` gave nothing for
    it), or None when it is missing or readable, for a caller to say instead of "empty"."""
    try:
        os.close(runfs.open_file(path, os.O_RDONLY, printed=True))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        return _refused(path, err).reason
    return None


def regular_size(path: Path) -> int:
    """The size of ``path`` (a link is not followed, nor a linked folder on the way), which must be
    a regular file: anything else is a RunFileError. Only looked at, never opened, so a FIFO cannot
    block it."""
    try:
        info = runfs.lstat(path)
    except OSError as err:
        raise _refused(path, err) from None
    if not stat.S_ISREG(info.st_mode):
        raise RunFileError(path, f"is not a regular file (a {kind_of(info.st_mode)})")
    return info.st_size


def bounded_int(digits: str) -> int | float:
    """A JSON integer; one longer than Python converts (4,300 digits) is read as a float, which is
    then infinite and refused like 1e999, instead of a ValueError."""
    return int(digits) if len(digits) <= MAX_INT_DIGITS else float(digits)


def parse_json(text: str, path: Path, what: str = "") -> Any:
    """JSON text bounded in depth; NaN and Infinity are errors (JSON has neither)."""
    where = f"{what} " if what else ""

    def refuse(constant: str) -> Any:
        raise RunFileError(path, f"{where}holds {constant}, which is not a number")

    try:
        data = json.loads(text, parse_constant=refuse, parse_int=bounded_int)
    except json.JSONDecodeError as err:
        raise invalid_json(path, err, where) from None
    except RecursionError:
        raise RunFileError(path, f"{where}is nested too deeply") from None
    if paths.too_deep(data, MAX_DEPTH):
        raise RunFileError(path, f"{where}is nested more than {MAX_DEPTH} levels deep")
    bad = _non_finite(data)  # 1e999 parses as inf
    if bad:
        raise RunFileError(path, f"{where}holds a number too large for a float at {bad[0]}")
    return data


def invalid_json(path: Path, err: json.JSONDecodeError, where: str = "") -> RunFileError:
    """The refusal of text that is not JSON, at its path:line:col as for a spec."""
    refused = RunFileError(path, f"{where}is not valid JSON ({err.msg}, line {err.lineno})")
    refused.location = Location(str(path), err.lineno, err.colno)
    return refused


def read_json(path: Path, *, limit: int = MAX_JSON_BYTES) -> Any:
    """The JSON document at ``path`` (None when there is none); anything unusable is a RunFileError."""
    raw = read_bytes(path, limit=limit)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RunFileError(path, f"is not UTF-8 text (byte {err.start})") from None
    return parse_json(text, path)


def _non_finite(value: Any, prefix: str = "") -> list[str]:
    """Dotted paths of the non-finite floats in plain JSON data (bounded depth assumed)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [prefix or "(the value)"]
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _non_finite(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _non_finite(item, f"{prefix}[{i}]")
    return found
