"""The jobs journal of a runs root (``<runs root>/.sweepgen_slurm/jobs.json``) and its submission
lock: read as data by the client and by each job on its node.

Every array is recorded here before it is released, under the submission lock. So a job that finds,
under that lock, no entry naming it as its run's latest submission is one whose `sweepgen run` died
before recording it (its array released by hand), or an old job Slurm requeued after the run was
submitted again: it starts nothing (task.py).

A job waits at most ``SUBMIT_LOCK_WAIT_S`` for that lock, then refuses to start and says why. The
wait is read from this module when the job looks, so a test sets ``journal.SUBMIT_LOCK_WAIT_S`` in
the job's own process (the tests' only seam; no environment variable or option sets it).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location, SweepgenError, UserError
from sweepgen.fs import filenames, runfs
from sweepgen.run.core import runfiles, runlock

JOURNAL = filenames.SLURM_JOBS
SUBMIT_LOCK = filenames.SLURM_SUBMIT_LOCK  # in SLURM_DIR: one submission of a sweep at a time
SUBMIT_LOCK_WAIT_S = 600.0

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
    """The submission lock stayed held by another process for the whole wait."""


@contextlib.contextmanager
def submission_lock(root: Path, wait_s: float = SUBMIT_LOCK_WAIT_S) -> Iterator[None]:
    """The sweep's submission lock (an flock on ``<runs root>/.sweepgen_slurm/submit.lock``), held
    while a submission re-reads its runs, submits, records the job ids and releases the array."""
    runfs.makedirs(root)  # a linked .sweepgen_slurm (or folder on the way) is ELOOP, never followed
    fd = runfs.open_file(root / SUBMIT_LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # regular, never a link
    try:
        if not runlock.flock_within(fd, wait_s, every_s=0.2):
            raise SubmitLockBusy(
                f"another `sweepgen run` has been submitting this sweep for "
                f"{wait_s:.0f} s ({root / SUBMIT_LOCK} is locked)",
                hint="wait for it to finish, then run this command again",
            )
        yield
    finally:
        os.close(fd)


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
