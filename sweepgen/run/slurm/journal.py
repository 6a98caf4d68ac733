"""The jobs journal of a runs root (``<runs root>/.sweepgen_slurm/jobs.json``) and its submission
lock: read as data by the client and by each job on its node.

Every array is recorded here before it is released, under the submission lock. So a job that finds,
under that lock, no entry naming it as its run's latest submission is one whose `sweepgen run` died
before recording it (its array released by hand), or an old job Slurm requeued after the run was
submitted again: it starts nothing (task.py).

A job waits at most ``SUBMIT_LOCK_WAIT_S`` for that lock, then refuses to start and says why. The
wait is read from this module when the job looks, so a test sets ``journal.SUBMIT_LOCK_WAIT_S`` in
the job's own process (the tests' only seam; no environment variable or option sets it).

A `sweepgen run` that finds the lock held says so within ``NOTICE_AFTER_S``: by which process on
this machine (the kernel's /proc/locks, never the lock file's content), whether it is stopped
(SIGSTOP, Ctrl-Z), what this `run` waits for and how to go on; behind a holder stopped the whole
``STOPPED_WAIT_S`` it gives up (exit 2) rather than wait the full ``SUBMIT_LOCK_WAIT_S`` in silence.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location, SweepgenError, UserError
from sweepgen.fs import filenames, runfs
from sweepgen.run.core import runfiles, runlock

JOURNAL = filenames.SLURM_JOBS
SUBMIT_LOCK = filenames.SLURM_SUBMIT_LOCK  # in SLURM_DIR: one submission of a sweep at a time
SUBMIT_LOCK_WAIT_S = 600.0
NOTICE_AFTER_S = 2.0  # a submission holds the lock for seconds: a `run` held longer says so
STOPPED_WAIT_S = 30.0  # how long a `run` waits behind a holder that stays stopped (SIGSTOP, Ctrl-Z)
_PROC_LOCKS = Path("/proc/locks")

_JOB_ID = re.compile(r"[0-9]{1,18}(?:_[0-9]{1,9})?")  # "123" or an array task "123_4", as Slurm writes them


def read_journal(path: Path) -> dict[str, Any]:
    """The jobs journal of a runs root, read as data: never through a link, a regular file of at most
    ``runfiles.MAX_JSON_BYTES`` (a RunFileError, exit 2, otherwise); nesting and numbers bounded."""
    raw = runfiles.read_bytes(path, limit=runfiles.MAX_JSON_BYTES)
    if raw is None:
        return {"arrays": []}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"the Slurm jobs journal is not UTF-8 text (byte {err.start})",
            location=Location(str(path)),
            hint="sweepgen writes it atomically; move the broken file away",
        ) from None
    data = runfiles.parse_json(text, path, "the Slurm jobs journal")
    if not isinstance(data, dict) or not isinstance(data.get("arrays"), list):
        return {"arrays": []}
    return data


def submitted_as(journal: Mapping[str, Any], path: Path | None = None) -> dict[str, str]:
    """Run name -> the job id of its latest submission, as the journal records every array. The
    journal is data (a shared runs folder may hold anyone's): a job id that is not Slurm's digits
    is refused (exit 2 naming the journal and the key), never handed to squeue or scancel."""
    out: dict[str, str] = {}
    for i, array in enumerate(journal.get("arrays", [])):
        if isinstance(array, dict) and isinstance(array.get("runs"), dict):
            for job_id, name in array["runs"].items():
                if not isinstance(name, str):
                    continue
                if not _JOB_ID.fullmatch(job_id):
                    raise ConfigError(
                        f"the Slurm jobs journal names job id {job_id!r}, which is not a Slurm job id",
                        location=Location(str(path) if path else JOURNAL),
                        key=f"arrays[{i}].runs",
                        hint="sweepgen writes only Slurm's own job ids there; move the file away "
                        "(it is not sweepgen's) and run `sweepgen status` again",
                    )
                out[name] = job_id
    return out


class SubmitLockBusy(UserError):
    """The submission lock stayed held by another process for the whole wait; ``holder``: that
    process where this machine can name it."""

    holder: Holder | None = None


@dataclass(frozen=True)
class Holder:
    """The process of this machine that holds the submission lock, as the kernel says."""

    pid: int
    command: str  # its command line, shortened (read as data from /proc)
    stopped: bool  # SIGSTOP or Ctrl-Z: it acts on nothing until SIGCONT

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.command}{', stopped: SIGSTOP or Ctrl-Z' if self.stopped else ''})"


@contextlib.contextmanager
def submission_lock(
    root: Path,
    wait_s: float = SUBMIT_LOCK_WAIT_S,
    *,
    note: Callable[[str], None] | None = None,
    give_up_stopped: bool = False,
) -> Iterator[None]:
    """The sweep's submission lock (an flock on ``<runs root>/.sweepgen_slurm/submit.lock``), held
    while a submission re-reads its runs, submits, records the job ids and releases the array.
    ``note``: told within NOTICE_AFTER_S that the lock is held, by whom, and how to go on;
    ``give_up_stopped``: SubmitLockBusy once its holder has stayed stopped for STOPPED_WAIT_S."""
    runfs.makedirs(root)  # a linked .sweepgen_slurm (or folder on the way) is ELOOP, never followed
    fd = runfs.open_file(root / SUBMIT_LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # regular, never a link
    try:
        _take(fd, root / SUBMIT_LOCK, wait_s, note, give_up_stopped)
        yield
    finally:
        os.close(fd)


def _take(
    fd: int, path: Path, wait_s: float, note: Callable[[str], None] | None, give_up_stopped: bool
) -> None:
    """Take the flock on ``fd`` (submission_lock's wait); SubmitLockBusy naming the holder if not."""
    began = time.monotonic()
    if runlock.flock_within(fd, min(wait_s, NOTICE_AFTER_S), every_s=0.2):
        return
    if note is not None:
        note(_waiting_words(path, lock_holder(fd), wait_s, give_up_stopped))
    stopped_since: tuple[int, float] | None = None  # (the holder's pid, since when it is seen stopped)
    while True:
        holder, now = lock_holder(fd), time.monotonic()
        stopped_since = _seen_stopped(stopped_since, holder, now)
        stopped_long = (
            give_up_stopped and stopped_since is not None and now - stopped_since[1] >= STOPPED_WAIT_S
        )
        if stopped_long or now - began >= wait_s:
            raise _busy(path, holder, now - began)
        if runlock.flock_within(fd, min(1.0, max(0.0, wait_s - (now - began))), every_s=0.2):
            return


def _seen_stopped(
    seen: tuple[int, float] | None, holder: Holder | None, now: float
) -> tuple[int, float] | None:
    """(the holder's pid, since when it is seen stopped), kept while that same process stays stopped."""
    if holder is None or not holder.stopped:
        return None
    if seen is None or seen[0] != holder.pid:
        return (holder.pid, now)
    return seen


def lock_holder(fd: int) -> Holder | None:
    """The live process of this machine holding an flock on ``fd``'s file, from the kernel's
    /proc/locks; None when not known (no /proc, a holder on another node of a shared folder)."""
    info = os.fstat(fd)
    # as the kernel writes it; a file system whose locks name another device (an overlay) is not
    # matched by its inode alone (another file's holder, stopped, would end a `run`'s wait): unknown
    key = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        lines = _PROC_LOCKS.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()  # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:2457936 0 EOF"; "->": a waiter
        if len(parts) < 6 or parts[1] != "FLOCK" or not parts[4].isdigit():
            continue
        if parts[5] == key:
            return _process(int(parts[4]))
    return None


def _process(pid: int) -> Holder | None:
    try:
        raw = (Path("/proc") / str(pid) / "cmdline").read_bytes()[:4096]
        state = (Path("/proc") / str(pid) / "stat").read_text(errors="replace").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None  # gone meanwhile (or another pid namespace's): not known
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    command = shlex.join(words) or "?"
    return Holder(pid, command if len(command) <= 160 else command[:157] + "...", state in ("T", "t"))


def _waiting_words(path: Path, holder: Holder | None, wait_s: float, give_up_stopped: bool) -> str:
    """What a `run` held at the submission lock is told at once: by whom, what for, how to go on."""
    who = str(holder) if holder is not None else "a process this machine cannot name (on another node?)"
    limit = (
        f"up to {wait_s:.0f} s ({STOPPED_WAIT_S:g} s while it stays stopped)"
        if give_up_stopped
        else f"up to {wait_s:.0f} s"
    )
    return (
        f"waiting for this sweep's Slurm submission lock {path}, held by {who}: another `sweepgen run` "
        "or `cancel` of this sweep is submitting or settling it; this command submits nothing until it "
        f"lets go (then it skips the runs that one submitted), for {limit}. {_how_to_go_on(holder)}"
    )


def _how_to_go_on(holder: Holder | None) -> str:
    stop_this = "or stop this command (Ctrl-C; it has submitted nothing) and run it again once that one ended"
    if holder is not None and holder.stopped:
        return f"To go on: `kill -CONT {holder.pid}` (or `fg` in its shell) lets it finish, {stop_this}"
    return f"To go on: let it finish, {stop_this}"


def _busy(path: Path, holder: Holder | None, waited_s: float) -> SubmitLockBusy:
    who = str(holder) if holder is not None else "a process this machine cannot name (on another node?)"
    stopped = holder is not None and holder.stopped
    busy = SubmitLockBusy(
        f"this sweep's Slurm submission lock {path} has been held for {waited_s:.0f} s by {who}"
        f"{' and it stays stopped' if stopped else ''}; nothing was submitted by this command",
        hint=(
            f"`kill -CONT {holder.pid}` (or `fg` in its shell) lets it finish; then run this command again"
            if stopped and holder is not None
            else "wait for it to finish, then run this command again"
        ),
    )
    busy.holder = holder
    return busy


def why_unnamed(root: Path, name: str, job_id: str) -> str | None:
    """Why the job ``job_id`` may not start the run ``name`` (None: the journal of ``root`` names it
    as that run's latest submission). Read under the submission lock, so a live submission has
    recorded its array before this looks (a held array released by hand meanwhile waits for it)."""
    path = root / JOURNAL
    try:
        with submission_lock(root, SUBMIT_LOCK_WAIT_S):  # read now: the tests' seam (module docstring)
            latest = submitted_as(read_journal(path), path).get(name)
    except SubmitLockBusy:
        return (
            f"could not take the submission lock {root / SUBMIT_LOCK} within {SUBMIT_LOCK_WAIT_S:.0f} s "
            f"to check that the Slurm jobs journal names this job {job_id} (a `sweepgen run` stuck "
            "while submitting this sweep?)"
        )
    except (OSError, SweepgenError) as err:
        return f"has no readable Slurm jobs journal to name this job {job_id} ({path}: {err})"
    if latest == job_id:
        return None
    if latest is None:
        return (
            f"is not named in the Slurm jobs journal {path} for this job {job_id} (a held array a killed "
            "`sweepgen run` never recorded, released by hand?)"
        )
    return f"is named in the Slurm jobs journal {path} for Slurm job {latest}, not this job {job_id}"
