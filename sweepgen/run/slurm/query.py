"""Ask Slurm what happened to jobs: ``squeue`` for live ones, ``sacct`` for ended ones, ``scancel``.

Both queries are needed: ``squeue`` knows a job the moment it is submitted but forgets it minutes
after it ends (MinJobAge); ``sacct`` remembers it for good but learns about it a moment late (the
controller reports to slurmdbd asynchronously). A job in neither is reported as unknown, never
guessed. Each query is one call for all jobs of a sweep, whatever its size.

Jobs are matched by id *and* job name, so a status file from an older cluster whose job ids were
reused by someone else's jobs is never mistaken for a live run of this sweep.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from sweepgen.errors import UserError

QUERY_TIMEOUT_S = 60  # a busy controller can be slow; a hung one must not hang `sweepgen status`
# back-off between tries of a failed squeue/sacct (about 7 s in all): transient failures are common
# on busy clusters and must never be read as "the job is gone"
RETRY_DELAYS_S: tuple[float, ...] = (1.0, 2.0, 4.0)
PING_TIMEOUT_S = 10  # `scontrol ping` answers at once when the controller is up
CONTROLLER_OK_S = 30.0  # a controller that answered is not asked again for this long
_controller_ok_at = float("-inf")

# states after which Slurm will not run the job again; everything else is still queued or running
ENDED = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "BOOT_FAIL",
        "DEADLINE",
        "PREEMPTED",
        "REVOKED",
        "SPECIAL_EXIT",
    }
)
REQUEUE_STATES = frozenset({"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"})
# what sacct is asked of each job; its owner and the folder it was submitted from, as squeue gives
# them for live jobs, prove an ended job a run's too (ownership.plausibly_ours)
SACCT_FIELDS = "JobID,State,JobName,ExitCode,Elapsed,User,WorkDir"
_ARRAY_RANGE = re.compile(r"^(?P<main>\d+)_\[(?P<body>[0-9,\-]+)(%\d+)?\]$")


@dataclass(frozen=True)
class JobInfo:
    job_id: str  # "123_4" for an array task, "123" for a single job
    state: str  # Slurm's state word, upper case, without "by <uid>" ("CANCELLED by 0" -> CANCELLED)
    name: str = ""
    reason: str = ""  # squeue's pending reason, e.g. JobHeldUser, Resources, Priority
    exit_code: str = ""  # sacct's "code:signal"
    elapsed: str = ""
    # "squeue" (current, live jobs only) or "sacct" (complete but late: an array task that has run
    # may still be listed there as the folded PENDING range it was submitted as)
    source: str = ""
    # who submitted the job and from which folder (what proves it a run's: ownership.py); squeue's,
    # and sacct's where its records hold them
    user: str = ""
    workdir: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ENDED


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise UserError(
            f"`{tool}` is not on PATH: the Slurm executor must run where Slurm's client commands are",
            hint="run this on a Slurm login node (or a machine with slurm-client and a slurm.conf); "
            "for CI, ci/slurm/slurm_up.sh starts a one-node cluster",
        )
    return path


def _run(argv: list[str], *, check_invalid_ok: bool = False, retry: bool = False) -> str:
    """Run a Slurm client command. ``retry``: a failure is tried again after each of
    RETRY_DELAYS_S (a busy controller, slurmdbd restarting, a dropped connection) before it counts;
    only for queries, which are safe to repeat (scancel/sbatch are not retried blindly)."""
    delays = RETRY_DELAYS_S if retry else ()
    for delay in delays:
        try:
            return _run_once(argv, check_invalid_ok=check_invalid_ok)
        except ControllerDown:
            raise
        except UserError as err:
            if "accounting storage is disabled" in err.message:
                raise  # a configuration, not a hiccup: asking again changes nothing
            time.sleep(delay)
    return _run_once(argv, check_invalid_ok=check_invalid_ok)


class ControllerDown(UserError):
    """The Slurm controller does not answer: asking again at once changes nothing."""


def controller_answers() -> None:
    """``scontrol ping`` (at most every CONTROLLER_OK_S): a controller that is down is said at once,
    instead of after every client command's own retries and timeouts (80 s and more)."""
    global _controller_ok_at
    if time.monotonic() - _controller_ok_at < CONTROLLER_OK_S:
        return
    hint = "start slurmctld (or ask the admins); `sweepgen status` still answers from the status files"
    scontrol = shutil.which("scontrol")
    if scontrol is None:  # a client without it: each command then says for itself what is wrong
        return
    try:
        proc = subprocess.run([scontrol, "ping"], capture_output=True, text=True, timeout=PING_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ControllerDown(
            f"the Slurm controller did not answer `scontrol ping` within {PING_TIMEOUT_S} s", hint=hint
        ) from None
    if " is UP" not in proc.stdout:
        said = (proc.stdout.strip() or proc.stderr.strip() or f"exit {proc.returncode}").splitlines()[0]
        raise ControllerDown(f"the Slurm controller is down (`scontrol ping`: {said})", hint=hint)
    _controller_ok_at = time.monotonic()


def _run_once(argv: list[str], *, check_invalid_ok: bool = False) -> str:
    require(argv[0])
    controller_answers()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(
            f"`{' '.join(argv[:2])} …` did not answer within {QUERY_TIMEOUT_S} s",
            hint="the Slurm controller is busy or down; check `scontrol ping` and retry",
        ) from None
    if proc.returncode != 0:
        if check_invalid_ok and "Invalid job id" in proc.stderr:
            return ""  # squeue -j with only ended jobs: none of them is live
        if "accounting storage is disabled" in proc.stderr:
            hint = (
                "sweepgen needs Slurm accounting (slurmdbd) to learn how ended jobs ended; "
                "ask your admins, or see ci/slurm/slurm_up.sh (SLURM_CI_ACCOUNTING=1)"
            )
        else:
            hint = "check that the Slurm controller is up (`scontrol ping`)"
        raise UserError(
            f"`{' '.join(argv)}` failed (exit {proc.returncode}): {proc.stderr.strip()}", hint=hint
        )
    return proc.stdout


def _base_ids(job_ids: Iterable[str]) -> list[str]:
    """The job ids to ask about: an array task is asked for through its array ("123_4" -> "123")."""
    return sorted({j.split("_", 1)[0] for j in job_ids}, key=int)


def squeue(job_ids: Iterable[str]) -> dict[str, JobInfo]:
    ids = _base_ids(job_ids)
    if not ids:
        return {}
    out = _run(
        ["squeue", "-h", "-r", "-o", "%i|%T|%j|%r|%u|%Z", "-j", ",".join(ids)],
        check_invalid_ok=True,
        retry=True,
    )
    return parse_squeue(out)


@dataclass(frozen=True)
class Queued:
    """A job pending in the queue, found by its user rather than by an id sweepgen recorded: what
    proves it a submission of one runs root before its id is recorded anywhere."""

    job_id: str  # "123_4" for an array task
    reason: str  # JobHeldUser: held as submitted (sweepgen submits every array held)
    name: str
    script: str  # the batch script it was submitted with (submitit writes it in the runs root's folder)


def pending_of(user: str) -> list[Queued]:
    """Every pending job (array tasks one by one) of ``user``."""
    out = _run(["squeue", "-h", "-r", "-u", user, "-t", "PENDING", "-o", "%i|%r|%j|%o"], retry=True)
    jobs: list[Queued] = []
    for line in out.splitlines():
        parts = line.strip().split("|", 3)  # the script last: a `|` in its path stays in it
        if len(parts) != 4:
            continue
        job_id, reason, name, script = parts
        jobs.extend(Queued(jid, "" if reason == "None" else reason, name, script) for jid in expand(job_id))
    return jobs


def sacct(job_ids: Iterable[str]) -> dict[str, JobInfo]:
    ids = _base_ids(job_ids)
    if not ids:
        return {}
    require("sacct")
    out = _run(
        ["sacct", "-X", "-P", "-n", "-o", SACCT_FIELDS, "-j", ",".join(ids)],
        retry=True,
    )
    return parse_sacct(out)


def query_jobs(job_ids: Iterable[str]) -> tuple[dict[str, JobInfo], str | None]:
    """squeue's view of live jobs over sacct's view of everything (squeue is current, sacct may lag).
    When sacct keeps failing (slurmdbd down) squeue alone answers, with a note saying so: live jobs
    are still known exactly; an ended job is then unknown, never guessed."""
    ids = list(job_ids)
    note = None
    try:
        info = sacct(ids)
    except UserError as err:
        info = {}
        note = f"Slurm accounting (sacct) is unavailable, so ended jobs are not known: {err.message}"
    for jid, live in squeue(ids).items():
        acct = info.get(jid)
        if live.state == "COMPLETING" and acct is not None and acct.state in REQUEUE_STATES:
            # a requeued job first completes its old run: squeue says COMPLETING, sacct already
            # REQUEUED; the latter is the one that says what comes next (it runs again)
            live = replace(live, state=acct.state)
        info[jid] = live
    return info, note


def scancel(job_ids: Iterable[str]) -> None:
    ids = sorted(set(job_ids))
    if ids:
        _run(["scancel", *ids])


def test_only(script: str) -> tuple[bool, str]:
    """``sbatch --test-only`` on a batch script (from stdin): whether Slurm could ever run it, and
    its words when it could not (e.g. "Requested node configuration is not available")."""
    require("sbatch")
    try:
        proc = subprocess.run(
            ["sbatch", "--test-only"], input=script, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"`sbatch --test-only` did not answer within {QUERY_TIMEOUT_S} s",
            hint="the Slurm controller is busy or down; check `scontrol ping` and retry",
        ) from None
    if proc.returncode == 0:
        return True, ""
    lines = [ln.strip() for ln in (proc.stderr + "\n" + proc.stdout).splitlines() if ln.strip()]
    return False, "; ".join(lines) or f"sbatch --test-only exited {proc.returncode}"


def release(array_job_id: str) -> None:
    _run(["scontrol", "release", array_job_id])


def parse_squeue(text: str) -> dict[str, JobInfo]:
    """``squeue -h -r -o %i|%T|%j|%r|%u|%Z`` lines (one per array task thanks to -r); the working
    folder last, so a ``|`` in it stays in it (lines without the last two fields are read too)."""
    jobs = {}
    for line in text.splitlines():
        parts = line.strip().split("|", 5)
        if len(parts) not in (4, 6):
            continue
        job_id, state, name, reason = parts[:4]
        user, workdir = parts[4:] if len(parts) == 6 else ("", "")
        reason = "" if reason == "None" else reason
        for jid in expand(job_id):
            jobs[jid] = JobInfo(
                jid,
                _clean_state(state),
                name=name,
                reason=reason,
                source="squeue",
                user=user,
                workdir=workdir,
            )
    return jobs


def parse_sacct(text: str) -> dict[str, JobInfo]:
    """``sacct -X -P -n -o`` SACCT_FIELDS lines; the working folder last, so a ``|`` in it stays in
    it (lines without the last two fields are read too). Pending array tasks come folded as
    ``123_[2-5%2]`` and are unfolded here."""
    jobs = {}
    for line in text.splitlines():
        parts = line.split("|", 6)
        if len(parts) not in (5, 7) or not parts[0] or "." in parts[0]:
            continue  # a job step (123.batch) or a blank line
        job_id, state, name, exit_code, elapsed = parts[:5]
        user, workdir = parts[5:] if len(parts) == 7 else ("", "")
        for jid in expand(job_id.strip()):
            jobs[jid] = JobInfo(
                jid,
                _clean_state(state),
                name=name,
                exit_code=exit_code,
                elapsed=elapsed,
                source="sacct",
                user=user,
                workdir=workdir,
            )
    return jobs


def expand(job_id: str) -> list[str]:
    """``123_[0-2,5%2]`` -> 123_0, 123_1, 123_2, 123_5; any other id is returned as it is."""
    match = _ARRAY_RANGE.match(job_id)
    if not match:
        return [job_id]
    out: list[str] = []
    for part in match["body"].split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            continue
        out.extend(f"{match['main']}_{i}" for i in range(int(lo), int(hi or lo) + 1))
    return out


def _clean_state(state: str) -> str:
    """``CANCELLED by 0`` -> ``CANCELLED``; ``RUNNING`` stays; squeue and sacct spell states alike."""
    return state.strip().split(" ", 1)[0].rstrip("+").upper()


# Slurm's words for a job it is ending (COMPLETING: scancel or a requeue signalled it) or has ended
ENDING = ENDED | REQUEUE_STATES | {"COMPLETING"}
ENDING_QUERY_S = 10  # the node's one look at its own job: a slow controller costs the job this, once


def ending_state(environ: Mapping[str, str] | None = None) -> str | None:
    """On the node, inside the job: Slurm's state of this job when it is being ended (COMPLETING
    after scancel or a requeue, TIMEOUT, PREEMPTED, ...); None while it runs, or when Slurm does not
    answer (one try: the run's end is not held up for long by a look that can only add a note)."""
    job_id = (os.environ if environ is None else environ).get("SLURM_JOB_ID")
    squeue_path = shutil.which("squeue")
    if not job_id or squeue_path is None:
        return None
    try:
        proc = subprocess.run(
            [squeue_path, "-h", "-j", job_id, "-o", "%T"],
            capture_output=True,
            text=True,
            timeout=ENDING_QUERY_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = proc.stdout.split()
    if proc.returncode != 0 or len(words) != 1:
        return None
    state = _clean_state(words[0])
    return state if state in ENDING else None
