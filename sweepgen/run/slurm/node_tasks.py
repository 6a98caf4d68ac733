"""What each task of a job array runs, as the node reads it: plain JSON, never a pickle.

submitit's node program (``python -m submitit.core._submit FOLDER``) unpickles the job's
``%j_submitted.pkl`` from the runs root: whoever could write there between the submission and the
job's start (a runs root others write, a folder renamed and planted in its place) ran their code as
the person on the node. sweepgen's array runs ``python -m sweepgen.run.slurm.task FILE SHA256``
instead (``command``): FILE is this module's JSON list of node tasks, written by ``run`` before
sbatch, and SHA256 its digest, carried by the batch script itself, which Slurm keeps as it was
given (nobody changes a job's script after sbatch). The node reads FILE without following a link
(a FIFO or a file past ``MAX_BYTES`` refused), checks the digest before it parses a byte, and runs
the entry at its array index as data: a changed file is refused, nothing run. submitit still
writes its pickle beside it (its submission does); nothing loads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.fs import runfs
from sweepgen.run.core import runfiles

PREFIX = "tasks-"  # in the runs root's Slurm folder, one file per submission
MODULE = "sweepgen.run.slurm.task"  # the node program (its __main__)
MAX_BYTES = 256 << 20
_NAME = re.compile(r"tasks-[0-9a-f]{32}\.json")  # what ``write`` names a file, nothing else


def write(folder: Path, entries: Sequence[Mapping[str, Any]]) -> tuple[Path, str]:
    """The node tasks ``entries`` (in array order) as a new file in ``folder``, written atomically
    by descriptor (no link followed on the way); its path and the sha256 of its bytes."""
    data = (json.dumps(list(entries), sort_keys=True) + "\n").encode("utf-8")
    path = folder / f"{PREFIX}{uuid.uuid4().hex}.json"
    runfs.write_atomic(path, data)
    return path, hashlib.sha256(data).hexdigest()


def remove(folder: Path, name: object) -> bool:
    """Remove the node tasks file ``name`` (a journal entry's ``tasks_file``) from ``folder`` once no
    job can read it any more: only a name as ``write`` gives it (no folder, no ``..``), a plain file
    of this user's with no other name (a hard link to a file elsewhere is that file's name too),
    never through a link (a link in its place, a file another user planted, a folder: left as they
    are), and only in a folder nobody else can write: there, someone could swap another file of
    this user's in under the name between the check and the unlink. Checked and removed at one
    descriptor of the folder. Whether it was removed (or was gone already)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return False
    try:
        with runfs.parent(folder / name) as (fd, base):
            return _unlink_mine(fd, base)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False


def _unlink_mine(folder: int, name: str) -> bool:
    mine = runfs.only_owner_writes(os.fstat(folder), os.geteuid()) and _written_by_me(
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    )
    if mine:
        os.unlink(name, dir_fd=folder)
    return mine


def _written_by_me(info: os.stat_result) -> bool:
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_nlink == 1


def command(path: Path, digest: str) -> str:
    """The command each array task runs (what submitit's batch script calls): this Python, the
    working folder kept off sys.path where Python allows (``-P``: a module committed in the job's
    working folder is never imported in place of a library's)."""
    flags = "-u -P" if sys.version_info >= (3, 11) else "-u"
    return f"{shlex.quote(sys.executable)} {flags} -m {MODULE} {shlex.quote(str(path))} {digest}"


class TasksRefused(ConfigError):
    """The node tasks file is not the one `run` wrote (changed, missing, not a plain file)."""


def load(path: Path, digest: str, index: int) -> Mapping[str, Any]:
    """The entry ``index`` of the node tasks file ``path``, once its bytes are proven to be those
    whose sha256 is ``digest``; TasksRefused (naming the file) otherwise."""
    try:
        raw = runfiles.read_bytes(path, limit=MAX_BYTES)
    except runfiles.RunFileError as err:
        raise _refused(path, f"{path.name} {err.reason}") from None
    if raw is None:
        raise _refused(path, "the node tasks file is missing", hint=_GONE)
    if hashlib.sha256(raw).hexdigest() != digest:
        raise _refused(
            path,
            "the node tasks file was changed after it was submitted (its sha256 is not the one the "
            "job's batch script carries)",
        )
    entries = json.loads(raw)
    if not isinstance(entries, list) or not 0 <= index < len(entries) or not isinstance(entries[index], dict):
        raise _refused(path, f"the node tasks file has no task {index}")
    return dict(entries[index])


_WRITTEN = (
    "the runs root's .sweepgen_slurm folder was written by someone else after `sweepgen run` "
    "submitted this job (keep a runs root used with --executor slurm writable by you alone); "
    "`sweepgen run` submits the run again"
)
# the next `run` removes a submission's tasks file once Slurm holds no job of its array, so a job
# started again after that (a person's `scontrol requeue` of an ended job) finds none: said as such
_GONE = (
    "`sweepgen run` removes a submission's tasks file once Slurm holds no job of its array, so this job "
    "was started again after it ended (e.g. `scontrol requeue`), or someone else removed the file (keep a "
    "runs root used with --executor slurm writable by you alone); `sweepgen status` shows the run as its "
    "latest job left it, and `sweepgen run` says how to start it again if it still needs to run"
)


def _refused(path: Path, message: str, hint: str = _WRITTEN) -> TasksRefused:
    return TasksRefused(f"{message}; nothing was run", location=Location(str(path)), hint=hint)


def array_index(env: Mapping[str, str]) -> int:
    """This job's index in its array (0 for a job submitted alone, which has none)."""
    return int(env.get("SLURM_ARRAY_TASK_ID") or 0)
