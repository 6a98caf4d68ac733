"""The executor interface: what a run is, the states it moves through, and how its state is kept.

Every executor (local processes, Slurm) works on the same ``RunTask`` list, decides what to run
with the same ``plan`` function, and records each run's state in ``<run_dir>/sweepgen_status.json``
through ``write_status``. So `run`, `status`, `cancel` and `report` agree on what "finished",
"failed" and "cancelled" mean whichever executor ran the sweep.

The life of a run::

    pending ──start──▶ running ──exit 0 + done file──▶ finished
                          │────exit≠0, or exit 0 without its done file──▶ failed
                          └────Ctrl-C / `sweepgen cancel` / scancel──▶ cancelled
    (`skipped` is never written to disk: it is what `plan` says about a run it will not start)

The done file is the proof of success a run is held to, recorded in its status file when it starts
(``done_file``): ``summary.json`` for the bundled trainer (written last and atomically); for a
foreign trainer (`run --command`) none by default, so exit 0 alone is the proof, or the file
``--done-file`` names. Without a done file a run stopped by sweepgen is cancelled even if it exits 0.
Below, "summary.json" stands for the run's done file.

Deciding what to start (``plan``), in this order:

0. the status file says the directory was started from another version of the config (its
   ``config_fingerprint`` differs) → stale: never started, never skipped as finished; `run` refuses
   the sweep until the user moves that directory away or gives the changed run a new output_dir.
1. ``summary.json`` exists → finished: never started again, whatever its status file says
   (the trainer writes it last and atomically, so it is the one proof of success).
2. a live process holds the run directory's lock (runlock.py), or the status says ``running`` and
   the executor says the process/job is still alive → skipped (someone else is running it;
   starting it twice would corrupt its directory). Status ``running`` with neither → the run was
   lost (machine crash, sweepgen killed) and counts as failed.
3. status ``failed`` or ``cancelled`` → started again only with ``--rerun-failed``; otherwise skipped
   with that hint. A failure is never retried behind the user's back. If its job is still alive
   (a Slurm job requeued after the run recorded its stop) it is skipped even with --rerun-failed.

The plan is advice; the start is the decision. An executor starts a run only while holding its lock
(local: the run directory's flock, inherited by the run; Slurm: the sweep's submission lock, then
the run's flock on the node) and only if its status is still the one the plan saw; otherwise it
reports it as skipped. So two `sweepgen run` on one sweep start every run exactly once.
4. anything else (no status file, ``pending``) → started. The trainer itself resumes from its last
   checkpoint when one exists.

``--rerun-failed`` adds the failed and cancelled runs to what step 4 starts; it never restarts a
finished run. ``--only`` narrows the task list before any of this.
"""

from __future__ import annotations

import json
import socket
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sweepgen.compile.run_api import Lock
from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.fs import filenames, runfs
from sweepgen.run.core import advice, outcome, runfiles, runlock

if TYPE_CHECKING:  # annotations only: run_view imports this module
    from sweepgen.run.core.run_view import RunView

STATUS_FILE = filenames.STATUS
# the rule of a run's end lives in outcome.py (the supervisor imports it, and must start fast); its
# names stay here too, where the executors look for them
SUMMARY_FILE = outcome.SUMMARY_FILE
TIMEOUT_REASON = outcome.TIMEOUT_REASON
CANCEL_REASON = outcome.CANCEL_REASON
is_finished = outcome.is_finished
succeeded = outcome.succeeded
LOG_FILE = filenames.LOG
METRICS_FILE = filenames.METRICS
STATUS_VERSION = 1
PRUNED_REASON = "pruned at step"  # starts the reason of a search trial's run its pruner stopped


def is_pruned_reason(reason: str | None) -> bool:
    return bool(reason and reason.startswith(PRUNED_REASON))


class RunState(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"  # a plan decision, shown in tables; never persisted

    def __str__(self) -> str:
        return self.value


def state_word(state: RunState, *, started: bool = True) -> str:
    """The one set of state words `run`, `status` and `report` show: the state's own name, and `not
    started` for a run that never started (status prints them in capitals, Slurm's own words such as
    TIMEOUT where they say more)."""
    return "not started" if state is RunState.PENDING and not started else state.value


RETRYABLE = frozenset({RunState.FAILED, RunState.CANCELLED})
TERMINAL = frozenset({RunState.FINISHED, RunState.FAILED, RunState.CANCELLED})


@dataclass(frozen=True)
class RunTask:
    """One generated config to run. Paths are relative to the cwd `sweepgen run` was called in."""

    name: str  # the lock's run_name: unique within a sweep, shown in every table
    variant: str
    config_path: Path  # the generated file, e.g. generated/happy_grpo_cpu/happy_s42.yaml
    run_dir: Path  # the config's output_dir, e.g. runs/happy_grpo_cpu/happy_s42
    argv: tuple[str, ...]  # the command that runs it, placeholders already filled in
    values: Mapping[str, Any] = field(default_factory=dict)  # varying path -> value (from the lock)
    config: Mapping[str, Any] = field(default_factory=dict)  # the resolved config (from the lock)
    fingerprint: str = ""  # of the generated config's content (tasks.config_fingerprint); "" unknown
    # the file a finished run leaves, relative to run_dir; None: exit 0 alone proves success
    done_file: str | None = SUMMARY_FILE


@dataclass
class RunStatus:
    """What ``sweepgen_status.json`` holds. ``ids`` carries executor-specific handles
    (local: ``pid``, ``pgid``, ``host``, ``gpu``; Slurm: ``job_id``, ``array_index``, …)."""

    state: RunState
    executor: str
    exit_code: int | None = None
    started: str | None = None  # ISO-8601 UTC
    ended: str | None = None
    reason: str | None = None  # why it failed/was cancelled/skipped, one line for the user
    command: list[str] = field(default_factory=list)
    config: str | None = None  # the generated config path (posix, relative to cwd)
    sweep_dir: str | None = None  # the generated sweep folder holding sweep.lock.json
    attempt: int = 1
    ids: dict[str, Any] = field(default_factory=dict)
    # RunTask.fingerprint of the config this run was started from: a run directory made from another
    # version of the config is never skipped as "finished" nor reported as this config's result
    config_fingerprint: str | None = None
    # RunTask.done_file when the run started (files written before it existed: summary.json)
    done_file: str | None = SUMMARY_FILE
    version: int = STATUS_VERSION

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["state"] = self.state.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, path: Path) -> RunStatus:
        try:
            known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
            known["state"] = RunState(data["state"])
            for key, value in known.items():
                _check_status_field(key, value)
            return cls(**known)
        except (KeyError, ValueError, TypeError) as err:
            raise ConfigError(
                f"unreadable run status: {err}",
                location=Location(str(path)),
                hint="this file is written by sweepgen; delete it to treat the run as pending",
            ) from err


# What each field of a status file must hold: the file may come from anyone who can write the runs
# folder, and a number where a name belongs ended `status`, `report`, `cancel` or `run` in a traceback
_STATUS_TYPES: dict[str, tuple[type, ...]] = {
    "executor": (str,),
    "exit_code": (int, type(None)),
    "started": (str, type(None)),
    "ended": (str, type(None)),
    "reason": (str, type(None)),
    "config": (str, type(None)),
    "sweep_dir": (str, type(None)),
    "attempt": (int,),
    "ids": (dict,),
    "config_fingerprint": (str, type(None)),
    "done_file": (str, type(None)),
    "version": (int,),
}


def _check_status_field(key: str, value: Any) -> None:
    """ValueError naming ``key`` when a status file's ``value`` is not what sweepgen writes there."""
    if key in ("state", "command"):  # the state is read as a RunState, the command as words
        _check_words(key, value)
        return
    if isinstance(value, bool) or not isinstance(value, _STATUS_TYPES[key]):
        raise ValueError(f"{key!r} is a {type(value).__name__}, not what sweepgen writes there")
    if isinstance(value, str) and key in ("started", "ended"):
        _check_time(key, value)
    if isinstance(value, str) and key == "done_file":
        _check_done_file(value)


def _check_words(key: str, value: Any) -> None:
    if key == "command" and not (isinstance(value, list) and all(isinstance(w, str) for w in value)):
        raise ValueError("'command' is not a list of strings")


def _check_done_file(value: str) -> None:
    """A done file is looked for in the run folder: a path out of it names another folder's file."""
    if not value or value.startswith("/") or "\0" in value or ".." in value.split("/"):
        raise ValueError(f"'done_file' {value!r} is not a file path inside the run directory")


def _check_time(key: str, value: str) -> None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{key!r} {value!r} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        raise ValueError(f"{key!r} {value!r} has no time zone (sweepgen writes UTC)")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def this_host() -> str:
    return socket.gethostname()


def write_json_atomic(path: Path, data: Any) -> None:
    """A reader never sees half a file; the mode follows the umask; a link in the way (at the file
    or a folder on the way) is replaced or refused, never written through (``runfs.write_atomic``)."""
    runfs.write_atomic(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def read_status(run_dir: Path, *, own_only: bool = False) -> RunStatus | None:
    """The run's status; None when there is none (``own_only``: or when the file is not this user's
    own, ``runfiles.read_bytes``)."""
    path = run_dir / STATUS_FILE
    # a FIFO there must not hang `run`
    raw = runfiles.read_bytes(path, limit=runfiles.MAX_JSON_BYTES, own_only=own_only)
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"), parse_int=runfiles.bounded_int)
    except RecursionError:
        raise runfiles.RunFileError(path, "is nested too deeply") from None
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"run status is not valid JSON: {err.msg}",
            location=Location(str(path), err.lineno, err.colno),
            hint="this file is written by sweepgen; delete it to treat the run as pending",
        ) from err
    return RunStatus.from_json(data, path=path)


def write_status(run_dir: Path, status: RunStatus) -> None:
    write_json_atomic(run_dir / STATUS_FILE, status.to_json())


@dataclass(frozen=True)
class Decision:
    task: RunTask
    start: bool
    state: RunState  # the state the run is in now (SKIPPED only for a live run owned elsewhere)
    reason: str  # why it is (not) started, shown in --dry-run and the final table
    previous: RunStatus | None = None
    stale: bool = False  # the run directory holds a run of another version of this config


def is_stale(task: RunTask, status: RunStatus | None) -> bool:
    """The run directory was started from a different config than the one generated now."""
    return bool(
        status
        and status.config_fingerprint
        and task.fingerprint
        and status.config_fingerprint != task.fingerprint
    )


LOST = "lost: its process is gone without recording an end"
# said of a run whose trainer had started when its recorder died with nothing of its end on record:
# the trainer's exit status is known only to its parent (the supervisor), so a trainer that exited
# 0 in the instant before its supervisor was SIGKILLed is lost like one killed with it (docs/RUN.md)
TRAINER_UNKNOWN = (
    "its trainer had started and may have finished (nothing on record says how it ended: "
    f"its exit was known only to its supervisor); {advice.LOOK_FIRST.grid}"
)
LOST_STARTED = f"{LOST}; {TRAINER_UNKNOWN}"
LOST_REASONS = (LOST, LOST_STARTED)


def effective_state(
    run_dir: Path, status: RunStatus | None, is_alive: Callable[[RunStatus], bool]
) -> tuple[RunState | None, str | None]:
    """What a recorded status means given the proof on disk, with the reason when it is overruled:
    summary.json makes a run finished whatever its status says; a status that says finished without
    it, or running with nothing running it any more, is failed. (None, None): nothing recorded.
    A run held to exit 0 alone (no done file) is finished when its status says it exited 0."""
    done_file = status.done_file if status is not None else SUMMARY_FILE
    if is_finished(run_dir, done_file):
        return RunState.FINISHED, _finished_unrecorded(run_dir, status, is_alive)
    if status is None:
        return None, None
    if status.state is RunState.FINISHED:
        return _finished_unproved(run_dir, status, done_file)
    if status.state is RunState.RUNNING and not (runlock.is_held(run_dir) or is_alive(status)):
        return lost_end(status)
    return status.state, status.reason


def _finished_unrecorded(
    run_dir: Path, status: RunStatus | None, is_alive: Callable[[RunStatus], bool]
) -> str | None:
    """Why a run its done file proves finished is shown so though its status still says `running`
    and nothing records it any more (its recorder died after the done file was written); None where
    its status is its end, or its recorder lives and will record it."""
    if status is None or status.state is not RunState.RUNNING or status.done_file is None:
        return None
    if runlock.is_held(run_dir) or is_alive(status):
        return None
    return unrecorded_finish(status)


def unrecorded_finish(status: RunStatus) -> str:
    """What is said of a run its done file proves finished while its status, still `running`, was
    left by a recorder that died (a supervisor, a Slurm job) before recording the end."""
    job = status.ids.get("job_id")
    recorder = f"its Slurm job {job}" if status.executor == "slurm" else "its supervisor"
    code = trainer_exit(status)
    how = f"its trainer exited {code} and " if code is not None else ""
    return f"finished: {how}its {status.done_file} proves it; {recorder} died before recording the run's end"


# said of a run whose supervisor recorded how its trainer ended but died before recording the end
RECORDER_DIED = "its supervisor died before recording this end, while it ended what its trainer left"
_ENDS = frozenset({"finished", "failed", "cancelled"})


def trainer_exit(status: RunStatus) -> int | None:
    """The exit code (negative: the signal) of the trainer, where its supervisor wrote it in a
    `running` status before dying (outcome.TRAINER_END)."""
    code = _trainer_end(status).get("exit_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def trainer_started(status: RunStatus) -> bool:
    """Whether ``status`` names its trainer's process group: its supervisor had started it."""
    return "trainer_pgid" in status.ids


def known_exit(status: RunStatus) -> int | None:
    """The exit code recorded, else the trainer's that its supervisor wrote before dying."""
    return status.exit_code if status.exit_code is not None else trainer_exit(status)


def _trainer_end(status: RunStatus) -> dict[str, Any]:
    end = status.ids.get(outcome.TRAINER_END)
    return end if isinstance(end, dict) else {}


def lost_end(status: RunStatus) -> tuple[RunState, str]:
    """A `running` run whose recorder is gone: how its trainer ended, where its supervisor wrote
    that before it died (outcome.TRAINER_END), else lost (failed, nothing known of its end)."""
    end = _trainer_end(status)
    if end.get("state") not in _ENDS:
        return RunState.FAILED, LOST_STARTED if trainer_started(status) else LOST
    if end["state"] == "finished" and status.done_file is not None:  # (is_finished said no)
        how = f"its trainer exited {end.get('exit_code')}, but {status.done_file} is missing"
        return RunState.FAILED, f"{how}; {RECORDER_DIED}"
    how = str(end.get("reason") or f"exit code {end.get('exit_code')}")
    return RunState(end["state"]), f"{how}; {RECORDER_DIED}"


def _finished_unproved(
    run_dir: Path, status: RunStatus, done_file: str | None
) -> tuple[RunState, str | None]:
    """A status that says finished with no done file on disk: finished where the run is held to
    exit 0 alone (no done file) and exited 0, else failed (a done file behind a link said so)."""
    if done_file is None:
        if status.exit_code == 0:
            return RunState.FINISHED, None
        return RunState.FAILED, "recorded as finished but its exit code 0 is missing"
    why = outcome.done_file_missing(run_dir, done_file) or "missing"
    return RunState.FAILED, f"recorded as finished but {done_file} is {why}"


def unchanged_since(planned: RunStatus | None, now: RunStatus | None) -> bool:
    """Whether the status ``now`` is still the one ``planned`` from: the same, or the same with its
    loss recorded (a `running` run whose process is gone, written failed by `status`: nobody ran
    it meanwhile, so a start planned from it still holds)."""
    if now == planned:
        return True
    if planned is None or now is None or planned.state is not RunState.RUNNING:
        return False
    lost = (now.state, now.reason) == lost_end(planned)
    if not lost:
        return False
    return (
        replace(
            now, state=planned.state, reason=planned.reason, ended=planned.ended, exit_code=planned.exit_code
        )
        == planned
    )


def run_outcome(code: int, **how: Any) -> tuple[RunState, str | None]:
    """outcome.run_outcome with the state as a RunState: the one rule of every executor."""
    state, reason = outcome.run_outcome(code, **how)
    return RunState(state), reason


def decide(
    task: RunTask,
    *,
    rerun_failed: bool,
    is_alive: Callable[[RunStatus], bool],
) -> Decision:
    """One run's decision; the rules are in the module docstring."""
    status = read_status(task.run_dir)
    if is_stale(task, status):
        assert status is not None  # only a recorded run can be stale
        return Decision(
            task, False, status.state, "made from another version of its config", status, stale=True
        )
    state, _ = effective_state(task.run_dir, status, is_alive)
    if state is RunState.FINISHED:
        return _finished(task, status)
    return _not_finished(task, state, status, rerun_failed=rerun_failed, is_alive=is_alive)


def _not_finished(
    task: RunTask,
    state: RunState | None,
    status: RunStatus | None,
    *,
    rerun_failed: bool,
    is_alive: Callable[[RunStatus], bool],
) -> Decision:
    """The decision for a run not finished: held elsewhere, new, running, or ended otherwise."""
    if _held_elsewhere(task, state, status, rerun_failed=rerun_failed, is_alive=is_alive):
        return Decision(task, False, RunState.SKIPPED, _held_reason(state, status, is_alive), status)
    if state is None or state is RunState.PENDING:
        return Decision(task, True, RunState.PENDING, "not started yet", status)
    if state is RunState.RUNNING:
        assert status is not None  # only a recorded run can be running
        return Decision(task, False, RunState.SKIPPED, f"still running ({_ids(status)})", status)
    if state in RETRYABLE:
        return _retry(task, state, status, rerun_failed=rerun_failed, is_alive=is_alive)
    raise AssertionError(f"unhandled run state {state!r}")  # every RunState is covered above


def _held_elsewhere(
    task: RunTask,
    state: RunState | None,
    status: RunStatus | None,
    *,
    rerun_failed: bool,
    is_alive: Callable[[RunStatus], bool],
) -> bool:
    """Whatever its status file says, a live process holds the run (another `sweepgen run`); a run
    ended on record whose holder has not let go is --rerun-failed's to wait for, not held."""
    return runlock.is_held(task.run_dir) and not (
        ended_on_record(state, status, is_alive) and not rerun_failed
    )


def plan(
    tasks: Sequence[RunTask],
    *,
    rerun_failed: bool,
    is_alive: Callable[[RunStatus], bool],
) -> list[Decision]:
    return [decide(t, rerun_failed=rerun_failed, is_alive=is_alive) for t in tasks]


def _finished(task: RunTask, status: RunStatus | None) -> Decision:
    """A finished run is not started again; its proof is its done file, or its recorded exit 0."""
    done = status.done_file if status is not None else SUMMARY_FILE
    proof = f"{done} exists" if done else "exited 0"
    return Decision(task, False, RunState.FINISHED, f"finished ({proof})", status)


def ended_on_record(
    state: RunState | None, status: RunStatus | None, is_alive: Callable[[RunStatus], bool]
) -> bool:
    """A failed or cancelled run whose end is on record, its recorder gone: a lock still held on it
    is the copy of the `sweepgen run` that started it, let go once that `run` reads the end (held
    until it goes on where it was stopped, SIGSTOP), or another process's starting it again. A plain
    `run` answers such a run from its record at once (before, it showed the run running and waited
    for the stopped `run` to go on); `--rerun-failed` waits for the lock, saying why (HELD_ENDED)."""
    ended = status is not None and status.state in RETRYABLE and state in RETRYABLE
    return ended and status is not None and not is_alive(status)


# why a run ended on record is waited for: its lock is still held (ended_on_record)
HELD_ENDED = (
    "its end is on record, but another process still holds its lock (the `sweepgen run` that "
    "started it, stopped or not yet gone on, or another one starting it again): started here once "
    "that process lets it go unstarted"
)


def _held_reason(
    state: RunState | None, status: RunStatus | None, is_alive: Callable[[RunStatus], bool]
) -> str:
    """Why a run whose lock another process holds is not started now: running there, or ended on
    record (its state and reason said; before, a cancelled run was said to be running)."""
    if not ended_on_record(state, status, is_alive):
        return "running: another process holds its lock"
    assert status is not None and state is not None  # ended_on_record says so
    said = f"{state.value}: {status.reason}" if status.reason else state.value
    return f"{said}; {HELD_ENDED}"


def _retry(
    task: RunTask,
    state: RunState,
    status: RunStatus | None,
    *,
    rerun_failed: bool,
    is_alive: Callable[[RunStatus], bool],
) -> Decision:
    """A failed or cancelled run: started again with --rerun-failed, unless its job is alive (e.g. a
    Slurm job requeued after the run recorded its stop: Slurm will run it again)."""
    if status is not None and status.state in RETRYABLE and is_alive(status):
        why = f"{state} before, but its job is alive ({_ids(status)})"
        return Decision(task, False, RunState.SKIPPED, why, status)
    if rerun_failed:
        return Decision(task, True, state, f"{state} before; re-running", status)
    return Decision(task, False, state, f"{state} before; {advice.USE.grid}", status)


def _ids(status: RunStatus) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(status.ids.items())) or status.executor


@dataclass(frozen=True)
class ExecutorOptions:
    """Everything `sweepgen run` passes to an executor. Executors reject what they cannot honour
    (the Slurm executor refuses ``gpus``; the local one refuses ``wait=False``) instead of ignoring it."""

    sweep_dir: Path  # the generated folder holding sweep.lock.json
    lock: Lock  # the parsed lock, for executor-specific blocks such as resources
    jobs: int | None = None  # at most this many runs at once (None: executor default)
    gpus: tuple[str, ...] = ()  # CUDA device ids to pack runs onto
    per_gpu: int = 1
    wait: bool | None = None  # follow runs until they end; None: the executor's default (local: always)
    # how long a stopped run may take to exit (finish its step, save a checkpoint) before it is
    # killed; None: the executor's default
    stop_timeout_s: float | None = None
    # a run still running this long is stopped as a cancelled one is, and recorded failed ("timed
    # out"); None: no limit. The local executor applies it; Slurm has the spec's resources.time
    time_limit_s: float | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment for every run
    # this `sweepgen run`'s start on the boot clock: a `cancel` asked since drops the runs it has
    # queued (run/core/stopping/queue_cancel.py); None: none is heard
    started_s: float | None = None
    # a line for the user at once (stderr), while the executor waits (a Slurm submission lock held)
    note: Callable[[str], None] | None = None


class Executor(ABC):
    """Starts runs and reports their states; the CLI owns the display and the event loop.

    Protocol, as the CLI drives it::

        ex = make_executor(name, options)      # validates options, raises UserError if unusable
        ex.start(tasks, planned)               # non-blocking: queues/launches/submits
        while not ex.done():                   # (only when options.wait)
            states = ex.poll()                 # advances the queue, persists status files
            ... show states; sleep ...
        on KeyboardInterrupt: ex.cancel()      # stops everything it started, marks it cancelled

    ``poll`` returns the current status of every run passed to ``start``, keyed by task name.
    Executors see that ``sweepgen_status.json`` is written at every state change: by whatever
    outlives the run (the local run's supervisor, the Slurm task on its node), so the end is
    recorded even when the `sweepgen run` that started it is gone.
    """

    name: ClassVar[str]
    # whether an error in sweepgen itself (not Ctrl-C) must stop the runs: yes for local children,
    # which would be left unwatched; no for Slurm jobs, which outlive this command by design
    stop_runs_on_error: ClassVar[bool] = True

    def __init__(self, options: ExecutorOptions) -> None:
        self.options = options
        # problems of this invocation that did not stop it (e.g. a status file it could not write):
        # each names its path; the CLI reports them at the end and exits 2
        self.faults: list[str] = []
        # what this invocation did besides starting runs, said at the end (a submission a dead
        # `sweepgen run` left half done, finished or undone here)
        self.notes: list[str] = []

    def settle(self) -> None:  # noqa: B027 - a hook: most executors leave nothing half done
        """Before the plan: finish or undo what a `sweepgen run` of this sweep that died left half
        done where the runs' status files cannot show it (a Slurm array submitted held and never
        released), so the plan reads true states; said in ``notes``. Default: nothing is left so."""

    @abstractmethod
    def describe(self, tasks: Sequence[RunTask]) -> list[str]:
        """What ``start`` would do, one line per item, for ``--dry-run``; touches no file."""

    def gpus_each(self) -> int | None:
        """How many GPUs each run sees; None when that is not limited (every GPU of the machine)."""
        return None

    def at_once(self, count: int) -> int:
        """How many of ``count`` runs may run at the same time (Slurm: an array's parallelism)."""
        return count if self.options.jobs is None else min(self.options.jobs, count)

    @abstractmethod
    def start(self, tasks: Sequence[RunTask], planned: Mapping[str, RunStatus | None] | None = None) -> None:
        """Begin running ``tasks`` (already planned: every one is to be started). ``planned``: each
        run's status as the plan saw it; a run whose status differs when the executor gets to start
        it was taken by another `sweepgen run` meanwhile and is skipped (never started twice). A
        run this executor skipped may be passed again (its holder let it go unstarted)."""

    @abstractmethod
    def poll(self) -> dict[str, RunStatus]:
        """Advance and return the state of every started task."""

    @abstractmethod
    def done(self) -> bool:
        """True once every started task has reached a terminal state."""

    def wait(self, timeout_s: float) -> None:
        """Sleep until the next ``poll``: ``timeout_s``, or less where the executor can tell that a
        run ended sooner (the local executor wakes when a run's process exits). Default: sleep."""
        time.sleep(timeout_s)

    @abstractmethod
    def cancel(self) -> None:
        """Stop every task still queued or running and mark it cancelled; returns when they are.
        May be graceful (let runs save a checkpoint); the CLI lets a second Ctrl-C interrupt it."""

    def stop(self, names: Sequence[str], reason: str) -> None:
        """Stop these runs as ``cancel`` stops a run (gracefully first, so the trainer saves a
        checkpoint), without waiting: ``poll`` reports each as cancelled with ``reason`` once it has
        ended. A search prunes a trial so."""
        raise UserError(
            f"the {self.name} executor cannot stop a single run", hint="run the search with --executor local"
        )

    def stop_detached(self, task: RunTask, status: RunStatus, reason: str) -> bool:
        """Stop a run that a `sweepgen run` now gone started (``status`` is its status file) as
        ``stop`` stops one, without waiting; a search controller that took over its trial prunes it
        so, and records its end with ``reason`` itself (nothing here follows the run). False when
        this executor cannot reach it (another executor's run, a process on another machine)."""
        return False

    @classmethod
    def cancel_runs(cls, runs: Sequence[tuple[RunTask, RunStatus]], reason: str) -> list[str]:
        """`sweepgen cancel`: stop these live runs of this executor from any process, whether or not
        the `sweepgen run` that started them lives, and return once they have ended and their end is
        recorded (cancelled, with ``reason``). Returns the names of the runs it cannot reach (a
        process on another machine), which are left untouched."""
        return [task.name for task, _ in runs]

    @classmethod
    def settle_for_cancel(cls, sweep_dir: Path, tasks: Sequence[RunTask]) -> list[str]:
        """`sweepgen cancel` of the runs ``tasks`` of the sweep in ``sweep_dir``, before it looks at
        them: wait for a start of them under way to be recorded, and end what a `sweepgen run` that
        died left unrecorded (a job no status file names yet); what was done, one line each.
        Default: every start of this executor is recorded before it happens."""
        return []

    def stop_now(self) -> None:
        """Stop whatever is left at once (the second Ctrl-C), whether or not ``cancel`` ran or was
        interrupted. Default: ``cancel``, for executors whose cancel is already immediate."""
        self.cancel()

    # who `sweepgen status` asks about this executor's runs (e.g. "Slurm"); None: the run files say
    # everything there is to know (a local run's supervisor records its end itself)
    observer: ClassVar[str | None] = None

    @classmethod
    def observe(cls, tasks: Sequence[RunTask], *, persist: bool = True) -> list[RunView]:
        """`sweepgen status`: these runs (their status files name this executor) as ``observer`` sees
        them, one view per task in order; with ``persist`` (`run`, `cancel`: the writers), what only
        the observer knows (a job cancelled, out of memory) is written to their status files;
        without it (`status`, a reader) it is only shown. Called only when ``observer`` is set."""
        raise NotImplementedError(f"the {cls.name} executor has no observer")

    @classmethod
    def vanished(
        cls, tasks: Sequence[RunTask], gone: Sequence[RunTask], answer_s: float
    ) -> dict[str, RunView]:
        """`sweepgen status`: of ``gone`` (runs of ``tasks`` without a status file: their directory
        gone, or made again without one), those this executor's own records say it started, as it
        knows them now (asking its observer for at most ``answer_s`` seconds). Default: it keeps no
        records of its own."""
        return {}

    @classmethod
    def failure_log(cls, status: RunStatus) -> Path | None:
        """Where this executor reports a run that died before writing run.log (a batch system's own
        log of the job); None: nowhere but run.log."""
        return None

    @classmethod
    def time_limit(cls, given: float | None, lock: Lock, lock_path: str) -> tuple[float | None, str | None]:
        """Each run's time limit in seconds as this executor applies it (``given``: --time-limit), and
        a note saying where it came from. Default: as given (an executor that applies the spec's
        resources.time itself, like Slurm, refuses --time-limit where it cannot honour it)."""
        return given, None

    @classmethod
    def running_note(cls, status: RunStatus) -> str | None:
        """What `status` says of a run this executor records ``running`` beyond that, where there
        is more to know (a local run whose supervisor died while what it started runs on)."""
        return None

    @classmethod
    @abstractmethod
    def is_alive(cls, status: RunStatus) -> bool:
        """Whether the process/job a ``running`` status file (written by this executor) names still
        exists. A classmethod: `plan` and `sweepgen status` ask it without starting anything."""

    @classmethod
    def end_fd(cls, status: RunStatus) -> int | None:
        """A descriptor that becomes readable once the process a ``running`` status file (written by
        this executor) names has ended (a pidfd), so one who follows the run from outside (`status
        --wait`, a `run` following another's runs) looks again at its end, not at its next look;
        None where the executor cannot tell so (the follower looks again after its interval). The
        caller closes it. Default: None."""
        return None
