"""Whether a Slurm job a run's status file names is provably that run's job, before `cancel` (or a
search taking a trial over) scancels it.

A status file is data: a shared runs folder or a pull request may name any job id, and a job name
alone (``sweepgen-<sweep>``) is shared by every sweep of that name, another user's or an older copy
of this one. So a job is scancelled only when Slurm itself says it bears the name sweepgen gave the
run's job, belongs to the user running sweepgen, and was submitted from a folder that holds the run
folder (every run folder lies below the folder `sweepgen run` was started in), and when the jobs
journal sweepgen wrote beside the submission names that very job as the run's latest. A job that
fails any of these is left alone (`cancel` names it and exits 1).
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from sweepgen.fs import filenames
from sweepgen.fs.confine import within
from sweepgen.run.core.base import RunStatus, RunTask
from sweepgen.run.slurm import query as slurm_query

JOB_PREFIX = "sweepgen-"  # every job sweepgen submits is named so (executor.job_name)


def named_ours(job: slurm_query.JobInfo, status: RunStatus | None) -> bool:
    """Whether the job Slurm describes bears the name sweepgen gave the run's job (where Slurm gives
    no name, an accounting record without one, the id decides)."""
    if not job.name:
        return True
    expected = status.ids.get("job_name") if status else None
    return job.name.startswith(JOB_PREFIX) and (not expected or job.name == expected)


def plausibly_ours(job: slurm_query.JobInfo, status: RunStatus | None, run_dir: Path | None = None) -> bool:
    """What `status` and `run` take a job's state from (cheaper than ``why_not_ours``: no journal
    read per run): the name sweepgen gave it and, where Slurm tells them (squeue for live jobs,
    sacct for ended ones), this user's job, submitted from a folder holding ``run_dir``."""
    if not named_ours(job, status):
        return False
    if job.user and job.user != _me():
        return False
    return not (job.workdir and run_dir is not None and not _holds(job.workdir, run_dir))


def _holds(folder: str, run_dir: Path) -> bool:
    return within(os.path.realpath(run_dir), os.path.realpath(folder))


def journal_folder(task: RunTask, status: RunStatus) -> Path | None:
    """The Slurm folder (jobs journal, submitit's files) the status names, if it is the one a
    submission of this run writes: a ``.sweepgen_slurm`` beside a folder holding the run folder."""
    folder = status.ids.get("submitit_folder")
    if not isinstance(folder, str) or not os.path.isabs(folder):
        return None
    path = Path(folder)
    if path.name != filenames.SLURM_DIR:
        return None
    if not within(os.path.realpath(task.run_dir), os.path.realpath(path.parent)):
        return None
    return path


def why_not_ours(
    task: RunTask, status: RunStatus, job: slurm_query.JobInfo, journal_job: str | None
) -> str | None:
    """Why the live job ``status`` names (``job``: squeue's view) is not provably this run's (None:
    it is)."""
    job_id = str(status.ids.get("job_id"))
    if not job.name or not named_ours(job, status):
        return f"Slurm knows job {job_id} under another name ({job.name or 'none'}) than sweepgen gave it"
    return _whose(job_id, job, task) or _journal_says(job_id, journal_job)


def _whose(job_id: str, job: slurm_query.JobInfo, task: RunTask) -> str | None:
    """Why the job is not this user's job submitted from a folder holding the run (None: it is)."""
    if job.user != _me():
        return f"job {job_id} is {job.user or 'an unknown user'}'s"
    if not job.workdir or not _holds(job.workdir, task.run_dir):
        return f"job {job_id} was submitted from {job.workdir or '?'}, which does not hold {task.run_dir}"
    return None


def _journal_says(job_id: str, journal_job: str | None) -> str | None:
    if journal_job != job_id:
        return f"the Slurm jobs journal does not name job {job_id} as this run's latest submission"
    return None


def me() -> str:
    """The user Slurm knows this process as (its jobs' ``%u``)."""
    return _me()


def _me() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid without a name: Slurm shows the number
        return str(os.getuid())
