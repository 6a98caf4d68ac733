"""What one Slurm array task runs on the compute node: the run's command, with its status kept.

Each array task runs ``python -m sweepgen.run.slurm.task FILE SHA256`` (``main``): its ``NodeTask``
is read as data from the node tasks file ``run`` wrote, proven by the digest the batch script
carries (node_tasks.py; submitit's own pickle is never loaded), and ``run_on_node`` runs it inside
the allocation. It is the
node-side twin of the local executor's child handling: it appends the run's output to ``run.log``,
writes ``sweepgen_status.json`` when the run starts and when it ends, and turns Slurm's signals
into states a user can act on:

- SIGUSR2 arrives ``signal_delay_s`` before the time limit (sbatch ``--signal``). The run is sent
  SIGTERM (so the trainer can save a checkpoint) and is recorded as timed out. submitit's own
  handler would instead raise inside the wait and leave an "UncompletedJobError" in its pickle,
  which says nothing about the run.
- SIGTERM comes from ``scancel`` (``sweepgen cancel``). Slurm signals every process of the job, the
  run included; this records the run as cancelled before Slurm's SIGKILL (KillWait) arrives.

The exit status is the run's, so ``sacct`` agrees with the status file: a failed run is FAILED in
Slurm too, never a COMPLETED job that hides a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import IO, Any

from sweepgen.errors import SweepgenError
from sweepgen.fs import runfs
from sweepgen.run.core import end_room, runfiles, runlock
from sweepgen.run.core.base import (
    LOG_FILE,
    RunState,
    RunStatus,
    is_finished,
    read_status,
    run_outcome,
    succeeded,
    this_host,
    utc_now,
    write_status,
)
from sweepgen.run.core.shape import RunShape
from sweepgen.run.logs import trainer_states
from sweepgen.run.logs.progress import ATTEMPT_MARK
from sweepgen.run.slurm import journal, launch, node_tasks, query, ranks


@dataclass(frozen=True)
class NodeTask:
    """Everything the node needs, as plain data (it travels as JSON: node_tasks.py)."""

    name: str
    argv: tuple[str, ...]
    cwd: str  # absolute: where `sweepgen run` was called; the run's paths are relative to it
    run_dir: str  # relative to cwd (or absolute), as in the config's output_dir
    status: RunStatus  # the "submitted" status the client wrote; the node continues it
    env: dict[str, str] = field(default_factory=dict)
    # several processes or nodes (launch.py); None: the one process per job runs always were
    shape: RunShape | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, path: Path) -> NodeTask:
        """The task ``to_json`` wrote (its file's digest already proven: node_tasks.load)."""
        shape = data.get("shape")
        return cls(
            name=str(data["name"]),
            argv=tuple(str(a) for a in data["argv"]),
            cwd=str(data["cwd"]),
            run_dir=str(data["run_dir"]),
            status=RunStatus.from_json(data["status"], path=path),
            env={str(k): str(v) for k, v in data.get("env", {}).items()},
            shape=RunShape(**shape) if shape is not None else None,
        )


def _slurm_ids() -> dict[str, object]:
    """This job's ids, from the environment Slurm gives every job (array task or single job)."""
    env = os.environ
    array_id, index = env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID")
    ids: dict[str, object] = {"host": this_host(), "slurm_job": env.get("SLURM_JOB_ID")}
    ids["job_id"] = f"{array_id}_{index}" if array_id and index else env.get("SLURM_JOB_ID")
    return ids


class _Stops:
    """Slurm's signals to the job, as flags, each passed on to the run's process group as it came:
    SIGUSR2 ``signal_delay_s`` before the time limit (a timeout), SIGTERM from scancel (a cancel).
    The run has its own session (so its leftovers can be ended), so Slurm's signal to this task's
    group would not reach it otherwise."""

    def __init__(self, shape: RunShape | None = None) -> None:
        self.shape = shape
        self.timeout = False
        self.cancel = False
        self.child: subprocess.Popen[bytes] | None = None
        self.failed: ranks.Note | None = None  # another participant failed first (ranks.py)
        self.signum: int | None = None  # the last stop signal Slurm sent
        self.passed: int | None = None  # the last one passed on to the trainer's group
        self.late: int | None = None  # a stop that came after the trainer's exit 0 was reaped

    def install(self) -> None:
        # installed before the child exists so a signal during start-up is not lost
        signal.signal(signal.SIGUSR2, self._handler("timeout"))
        signal.signal(signal.SIGTERM, self._handler("cancel"))

    def _handler(self, kind: str) -> Callable[[int, FrameType | None], None]:
        def handler(signum: int, frame: FrameType | None) -> None:
            if slurm_stop(None if self.child is None else self.child.returncode, signum) is None:
                self.late = signum  # its exit 0 was reaped first: its finish stands (slurm_stop)
                return
            setattr(self, kind, True)
            self.signum = signum
            if self.child is not None:
                self._pass_on(self.child, signum)

        return handler

    def started(self, child: subprocess.Popen[bytes]) -> None:
        """The trainer is started: a stop that came while it was being started (no child to pass it
        to yet) reaches it now; before, it trained to its end and was then recorded stopped."""
        self.child = child
        if self.signum is not None and self.passed is None:  # (the handler passes on the later ones)
            self._pass_on(child, self.signum)

    def _pass_on(self, child: subprocess.Popen[bytes], signum: int) -> None:
        self.passed = signum
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, launch.forwarded(signum, self.shape))


def run_on_node(task: NodeTask) -> str:
    """Run ``task`` to the end; return the final state, or exit non-zero if the run did not finish.
    In a multi-process run every participant calls this; only the supervisor keeps the status."""
    os.chdir(task.cwd)
    run_dir = Path(task.run_dir)
    runfs.makedirs(run_dir)  # no linked folder followed on the way (the job's cwd is the anchor)
    if launch.multi(task.shape):
        assert task.shape is not None  # (multi says so: mypy)
        part = launch.participant(task.shape, os.environ)
        if not part.supervisor:
            if _declined(run_dir, task, part.label):
                return RunState.FINISHED.value  # (its note stops the supervisor's ranks: ranks.py)
            try:
                argv, env = _launch(task)
            except (OSError, RuntimeError, subprocess.SubprocessError) as err:
                print(f"sweepgen: {part.label} could not start: {err}", file=sys.stderr, flush=True)
                ranks.write_note(run_dir, ranks.attempt_key(os.environ), part.label, 127)
                sys.exit(127)
            return ranks.run_participant(argv, env, run_dir, part, task.shape)
    lock_fd = _lock_or_exit(run_dir, task)  # its fd stays open, the lock held, until this task exits
    if _declined(run_dir, task, "the run"):
        return RunState.FINISHED.value
    stops = _Stops(task.shape)
    stops.install()
    if launch.multi(task.shape):
        ranks.become_subreaper()  # the launcher's workers live in sessions of their own
    ids = {**task.status.ids, **_slurm_ids()}
    # the trainer states an earlier attempt left: the step shown is never one of theirs
    ids[trainer_states.BEFORE] = trainer_states.present(run_dir)
    if ids[trainer_states.BEFORE] is None:
        print(trainer_states.not_recorded(), file=sys.stderr, flush=True)
    if launch.multi(task.shape):  # which nodes the run spans (its host is node 0's)
        ids["slurm_nodes"] = os.environ.get("SLURM_JOB_NODELIST")
    status = replace(
        task.status,
        attempt=_attempt(run_dir, task.status, ids),
        state=RunState.RUNNING,
        started=utc_now(),
        ended=None,
        reason=None,
        exit_code=None,
        ids=ids,
    )
    # room for the end first (end_room.py): a disk that fills up while the run trains still takes it
    spare = end_room.reserve(run_dir)
    where = _Where(run_dir, lock_fd, os.path.realpath(run_dir), spare)
    try:
        write_status(run_dir, status)
        return _run_started(task, where, status, stops)
    finally:
        end_room.discard(run_dir, spare)


@dataclass(frozen=True)
class _Where:
    """Where the run's end goes: its folder as started, the lock this task holds (which says where
    the folder is now, if it was moved while the run ran), its real path at the start, and the room
    kept for the end (end_room.py)."""

    run_dir: Path
    lock_fd: int
    home: str
    spare: int


def _run_started(task: NodeTask, where: _Where, status: RunStatus, stops: _Stops) -> str:
    """Run the trainer of a run recorded started, and record how it ended."""
    run_dir = where.run_dir
    ids = status.ids
    # append: earlier attempts are evidence; never through a link, never a FIFO
    with os.fdopen(runfiles.open_append(run_dir / LOG_FILE), "ab") as log:
        log.write(
            f"{ATTEMPT_MARK} {status.attempt} at {status.started} on {ids['host']} "
            f"(Slurm job {ids['job_id']}): {' '.join(task.argv)} ===\n".encode()
        )
        log.flush()
        child = _start_or_exit(task, log, run_dir, status)
        stops.started(child)
        code = _wait(task, run_dir, stops)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # what the run left behind
            os.killpg(child.pid, signal.SIGKILL)
        if launch.multi(task.shape):
            ranks.end_leftovers()  # and what it left in sessions of its own
    return _finish(where, status, code, stops)


def _wait(task: NodeTask, run_dir: Path, stops: _Stops) -> int:
    """The run's exit code. A multi-process run also watches the other participants' notes: one
    that failed stops the run here too, and is what the status names; a supervisor that ends by
    itself leaves its own note, so the others stop rather than wait in a collective or forever."""
    assert stops.child is not None
    if not launch.multi(task.shape):
        return stops.child.wait()
    key, me = (
        ranks.attempt_key(os.environ),
        "node0" if task.shape and task.shape.launcher != "srun" else "rank0",
    )
    child = stops.child

    def stop() -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGTERM)

    code, stops.failed = ranks.wait_watching(child, run_dir, key, me, stop=stop)
    if code != 0 and stops.failed is None:
        # the run may have failed *because* another participant did (node 0's torchrun ends when
        # node 1's does): that one's note, when there is one, says where it began
        stops.failed = next(iter(ranks.notes(run_dir, key, besides=me)), None)
    if stops.failed is None and not (stops.timeout or stops.cancel):
        # ended by itself, well or badly: the others end too (ranks.py), not at the time limit
        with contextlib.suppress(OSError):  # the status below says it all the same
            ranks.write_note(run_dir, key, me, code)
    return code


def _launch(task: NodeTask) -> tuple[list[str], dict[str, str]]:
    """The argv and environment this participant starts: the command itself, or under the
    launcher with the job's rendezvous (launch.py)."""
    env = dict(os.environ)
    env.update(task.env)
    env["PYTHONUNBUFFERED"] = "1"  # so run.log and `sweepgen status` follow the run as it goes
    if not launch.multi(task.shape):
        return list(task.argv), env
    assert task.shape is not None
    rdzv = launch.rendezvous(os.environ)
    env.update(launch.env_for(task.shape, rdzv, os.environ))
    argv = launch.argv_for(task.shape, task.argv, rdzv, launch.launcher_command(task.shape.launcher))
    return argv, env


# why a supervisor whose run's lock another process holds starts nothing (exit 3)
LOCK_HELD = "is locked by another process running this run (its status file is left to that process)"


def _lock_or_exit(run_dir: Path, task: NodeTask) -> int:
    """The run's lock (runlock.py), held by this task (the run's supervisor) and never handed to the
    run's processes: a second job for the same directory never runs it twice, and a process the
    trainer leaves behind cannot hold a finished run. Held elsewhere: exit 3, leaving its decline
    note (the other participants stop, `status` says why the job ended)."""
    try:
        lock_fd = runlock.acquire(run_dir)
    except runlock.ForeignLockError as err:  # a shared runs folder: whose lock, and how to go on
        print(f"sweepgen: {run_dir}: {err.strerror}", file=sys.stderr, flush=True)
        _note_declined(run_dir, task, _supervisor_label(task), str(err.strerror), exit_code=3)
        sys.exit(3)
    if lock_fd is None:
        print(f"sweepgen: {run_dir} {LOCK_HELD}; not starting it twice", file=sys.stderr, flush=True)
        _note_declined(run_dir, task, _supervisor_label(task), LOCK_HELD, exit_code=3)
        sys.exit(3)
    return lock_fd


def _declined(run_dir: Path, task: NodeTask, who: str) -> bool:
    """Whether the run has finished already, or is not this job's to start, said on stderr: a job
    Slurm runs again after its run recorded its end (`scontrol requeue` of a finished job, a node
    lost after the end was written) never starts it a second time, on any of its nodes (the others
    would wait for node 0's ranks until the time limit); nor does a job the jobs journal does not
    name as the run's latest submission (``_unnamed``)."""
    done = _finished_already(run_dir, task.status) or _superseded(run_dir) or _unnamed(task)
    if done is not None:
        print(f"sweepgen: {who} in {run_dir} {done}; not starting it here", file=sys.stderr, flush=True)
        label = who if who != "the run" else _supervisor_label(task)
        _note_declined(run_dir, task, label, done, exit_code=0)
    return done is not None


def _supervisor_label(task: NodeTask) -> str:
    """The supervisor's label among the participants' notes (ranks.py)."""
    return "rank0" if task.shape and task.shape.launcher == "srun" else "node0"


def _note_declined(run_dir: Path, task: NodeTask, label: str, why: str, *, exit_code: int) -> None:
    """A participant that declined leaves its decline note (ranks.py): each participant looks for
    itself (the journal may change, or the run's lock come free, between their looks), and one that
    started its share would otherwise wait for the decliner's ranks until the job's time limit; with
    the note it is stopped at once. `status` reads it too: a job that ended without recording the
    run's end says why (a one-process run leaves it for that alone)."""
    job = _slurm_ids().get("job_id")
    with contextlib.suppress(OSError):  # the decline is said on stderr all the same
        ranks.write_note(
            run_dir,
            ranks.attempt_key(os.environ),
            label,
            exit_code,
            why=why,
            job=job if isinstance(job, str) else None,
        )


def _finished_already(run_dir: Path, submitted: RunStatus) -> str | None:
    """Why the run, whose lock this task holds, has finished already (its done file, or its
    recorded exit 0 where none is expected); None when it has not. Read once the lock is held, so
    no other job can be writing it."""
    if is_finished(run_dir, submitted.done_file):
        return f"finished already ({submitted.done_file} exists)"
    try:
        recorded = read_status(run_dir)
    except (OSError, SweepgenError):
        return None  # unreadable: the start below writes a fresh one, as it always did
    if recorded is None or submitted.done_file is not None or recorded.done_file is not None:
        return None
    if recorded.state is RunState.FINISHED and recorded.exit_code == 0:  # exit 0 is its proof
        return f"finished already (recorded exit 0 in attempt {recorded.attempt})"
    return None


def _superseded(run_dir: Path) -> str | None:
    """Why this job is not the run's latest submission: its status file names another job (a later
    submission, a local run), or none. Every submission is recorded in the status file before its
    array is released, so a job the file does not name is one whose record was lost or replaced (an
    array a killed `sweepgen run` never recorded, released by hand; an old job Slurm requeued after
    `--rerun-failed` submitted the run again): it never starts the run a second time. No status
    file (the run folder deleted while the job waited): the job is the one the journal named."""
    mine = _slurm_ids().get("job_id")
    try:
        recorded = read_status(run_dir)
    except (OSError, SweepgenError):
        return None  # unreadable: the start below writes a fresh one, as it always did
    if mine is None or recorded is None:
        return None
    named = recorded.ids.get("job_id")
    if named == mine:
        return None
    return f"is recorded for {f'Slurm job {named}' if named else 'a run outside Slurm'}, not this job {mine}"


def _unnamed(task: NodeTask) -> str | None:
    """Why the jobs journal does not let this job start the run (None: it names this job as the
    run's latest submission). Every submission is recorded there, under the submission lock, before
    its array is released; so a job it does not name belongs to a held array whose `sweepgen run`
    died before recording it, released by hand (`scontrol release`) before a `run` or `cancel`
    cancelled it. Its run may have no status file yet (its first submission): the journal alone can
    tell. A task outside a Slurm job, or whose status names no journal folder (every submission
    names one), cannot be checked, so it starts nothing either."""
    mine = _slurm_ids().get("job_id")
    folder = task.status.ids.get("submitit_folder")
    if not isinstance(mine, str):
        return "is not in a Slurm job (no SLURM_JOB_ID) whose jobs journal could name it"
    if not isinstance(folder, str):
        return (
            f"was handed to this job {mine} with no Slurm jobs journal folder to check it against "
            "(every `sweepgen run` submission names one; submit it with `sweepgen run`)"
        )
    return journal.why_unnamed(Path(folder), task.name, mine)


def _start_or_exit(
    task: NodeTask, log: IO[bytes], run_dir: Path, status: RunStatus
) -> subprocess.Popen[bytes]:
    try:
        argv, env = _launch(task)
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own group: ended as a whole when it exits
        )
    except (OSError, RuntimeError, subprocess.SubprocessError) as err:
        log.write(f"sweepgen: could not start the run: {err}\n".encode())
        write_status(
            run_dir,
            replace(
                status,
                state=RunState.FAILED,
                ended=utc_now(),
                reason=f"could not start: {getattr(err, 'strerror', None) or err}",
            ),
        )
        sys.exit(127)


def _finish(where: _Where, status: RunStatus, code: int, stops: _Stops) -> str:
    """Record how the run ended; exit non-zero unless it finished."""
    state, reason = _end_of(where.run_dir, status, code, stops)
    if state is RunState.FINISHED and status.done_file is None:
        reason = _finished_as_slurm_stopped(stops)
    ids = {**status.ids, **({"slurm_state": "TIMEOUT"} if stops.timeout else {})}
    ended = replace(
        status,
        state=state,
        exit_code=_recorded_code(code, state, stops),
        ended=utc_now(),
        reason=reason,
        ids=ids,
    )
    _record(where, ended)
    if state is not RunState.FINISHED:
        # the job's exit status: Slurm records it as FAILED (or CANCELLED, when scancel's SIGKILL
        # comes first)
        sys.exit(code if code and code > 0 else 1)
    return str(state.value)


def _record(where: _Where, ended: RunStatus) -> None:
    """The end in the run's folder as started, and in the folder it was moved to while it ran (its
    log, its lock and its `running` status are there); a link put where it was is never written
    through. Where neither takes it, said on stderr (the job's log) and the job fails: Slurm's own
    end then stands for it (never a traceback, never a run left `running` unsaid)."""
    data = (json.dumps(ended.to_json(), indent=2, sort_keys=True) + "\n").encode("utf-8")
    moved = end_room.moved_to(where.lock_fd, where.home)
    errors: list[OSError] = []
    # the room kept for the end went with the folder
    places = (
        [(where.run_dir, where.spare)] if moved is None else [(where.run_dir, None), (moved, where.spare)]
    )
    for folder, spare in places:
        try:  # as write_status writes it, or over the spare
            if end_room.write_status(folder, data, spare):
                print(
                    "sweepgen: the disk is full: the run's end was written over the room kept for it",
                    flush=True,
                )
        except OSError as err:  # a link in the folder's place, a read-only disk
            errors.append(err)
    if len(errors) == 1 + (moved is not None):
        how = ended.reason or f"exit code {ended.exit_code}"
        print(
            f"sweepgen: the run ended {ended.state.value} ({how}); that could not be recorded: {errors[0]}",
            file=sys.stderr,
            flush=True,
        )
        code = ended.exit_code
        sys.exit(code if code and code > 0 else 1)


def _end_of(run_dir: Path, status: RunStatus, code: int, stops: _Stops) -> tuple[RunState, str | None]:
    """The run's state and reason: its own exit, or another process's failure that stopped it."""
    _killed_by_slurms_signal(code, stops)
    stopped = stops.timeout or stops.cancel
    state, reason = outcome(
        code,
        finished=succeeded(code, run_dir, status.done_file, stopped=stopped or stops.failed is not None),
        timed_out=stops.timeout,
        cancelled=stops.cancel,
        done_file=status.done_file,
    )
    if stops.failed is not None and state is not RunState.FINISHED and not stopped:
        failed = stops.failed
        if failed.why is not None:
            return RunState.FAILED, (
                f"{failed.label} (on {failed.host}) declined to start its share: the run {failed.why}; "
                "the other processes were stopped (see the job's submitit log)"
            )
        return RunState.FAILED, (
            f"{failed.label} (on {failed.host}) exited {failed.exit_code}; the other processes were "
            f"stopped (see run.{failed.label}.log)"
        )
    return state, reason


def _recorded_code(code: int, state: RunState, stops: _Stops) -> int | None:
    """The exit code the run's end records: its trainer's, except the 0 of a trainer stopped because
    another participant declined to start its share (it saved and exited 0 on the stop): the run
    failed for the decline its reason names, and no exit code of a success is said beside it."""
    declined = stops.failed is not None and stops.failed.why is not None
    return None if declined and code == 0 and state is RunState.FAILED else code


def _killed_by_slurms_signal(code: int, stops: _Stops) -> None:
    """The stop a trainer reaped before the wrapper's handler ran died of (slurm_stop)."""
    if stops.timeout or stops.cancel or stops.failed is not None:
        return
    kind = slurm_stop(code, None)
    if kind is not None:
        setattr(stops, kind, True)


# Slurm's stops, by the signal it sends every process of the job
_STOP_KINDS: dict[int, str] = {signal.SIGUSR2: "timeout", signal.SIGTERM: "cancel"}


def slurm_stop(code: int | None, signum: int | None) -> str | None:
    """The one rule for which of Slurm's stops ("timeout" or "cancel") ended the run, if any, from
    the trainer's exit (``code``: None while it is not reaped) and the stop signal the wrapper got
    (``signum``: None when none came before the trainer was reaped).

    - A trainer whose exit 0 was reaped before the signal reached the wrapper (scancel, a requeue
      or the time limit's warning while its end is recorded): too late to stop it, so its finish
      stands (a finished run is never run again by the requeued job or --rerun-failed). Not asked
      of the kernel sooner (waitid): Slurm signals the trainer too, and one that exits 0 on the very
      SIGTERM this is must not be taken as finished by itself.
    - A signal to the wrapper while the trainer runs, or reaped with any other end (most likely
      killed by this same signal, which Slurm sent it first): the stop is what ended it.
    - No signal to the wrapper, the trainer killed by the signal Slurm sends every process of the
      job (SIGUSR2, whose default action ends a process; SIGTERM of scancel, a requeue or the
      limit): the wrapper's own copy comes after the end is decided, or never. The trainer's death
      by that signal says which stop it was (before, the run read FAILED, exit -12, where Slurm's
      time limit ended it)."""
    if code == 0:
        return None
    if signum is not None:
        return _STOP_KINDS[signum]
    return None if code is None else _STOP_KINDS.get(-code)


# a finished run's reason where Slurm was ending the job as its trainer exited 0: the exit may be the
# trainer's answer to Slurm's SIGTERM (one that saves and exits 0), which nothing here tells from a
# finish just before the stop; taken as finished (never run twice), and said
AMBIGUOUS_FINISH = (
    "exit 0 as Slurm ended the job ({how}): taken as finished; a trainer that exits 0 on SIGTERM "
    "may have stopped early here (give `--done-file` so that only its own end counts)"
)


def _finished_as_slurm_stopped(stops: _Stops) -> str | None:
    """The note a finished run's end carries when a Slurm stop came just as its trainer exited 0
    (its SIGTERM after the exit was reaped, or the job already ending in Slurm's word); None."""
    how = signal.Signals(stops.late).name if stops.late is not None else query.ending_state()
    return None if how is None else AMBIGUOUS_FINISH.format(how=how)


def _attempt(run_dir: Path, submitted: RunStatus, ids: dict[str, object]) -> int:
    """The submitted attempt, or one more for each time Slurm requeued this same job (its status
    file then already records a start of this job id)."""
    try:
        previous = read_status(run_dir)
    except (OSError, SweepgenError):
        return submitted.attempt
    if previous is not None and previous.started and previous.ids.get("job_id") == ids.get("job_id"):
        return max(submitted.attempt, previous.attempt + 1)
    return submitted.attempt


# the shared rule (base.run_outcome), under the name the node side always used
outcome = run_outcome


def main(argv: Sequence[str]) -> int:
    """The node program: ``FILE SHA256`` (node_tasks.command). The task at this job's array index,
    read as data once the file's digest is the one given, is run; anything else is said on stderr
    (the job's log) and nothing runs (exit 3)."""
    if len(argv) != 2:
        print(f"sweepgen: usage: python -m {node_tasks.MODULE} FILE SHA256", file=sys.stderr, flush=True)
        return 2
    path = Path(argv[0])
    try:
        index = node_tasks.array_index(os.environ)
        task = NodeTask.from_json(node_tasks.load(path, argv[1], index), path=path)
    except SweepgenError as err:
        print(f"sweepgen: {err.format()}", file=sys.stderr, flush=True)
        return 3
    except (ValueError, KeyError, TypeError) as err:  # proven, yet not a task: another sweepgen's file
        print(f"sweepgen: {path}: not a node task ({err!r}); nothing was run", file=sys.stderr, flush=True)
        return 3
    run_on_node(task)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
