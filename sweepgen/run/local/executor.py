"""The local executor: each run its own process on this machine, ``jobs`` at a time, optionally
packed ``per_gpu`` to a GPU through CUDA_VISIBLE_DEVICES.

Each run is a supervisor process (sweepgen.run.local.supervise) that holds the run's lock, runs the
trainer in a process group of its own and records the run's start and end; it starts in a new
session so a terminal Ctrl-C reaches only sweepgen, which then asks every supervisor to stop its run
(SIGTERM; the supervisor gives the trainer the stop timeout, then SIGKILLs its group). Nothing is
left running and every stopped run is recorded cancelled. This process reads the end each supervisor
recorded; it writes one itself only for a supervisor that died without recording it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from sweepgen.compile.run_api import LOCK_NAME, Lock
from sweepgen.errors import ConfigError, SweepgenError, UserError
from sweepgen.fs import runfs
from sweepgen.run.core import advice, end_room, runfiles, runlock
from sweepgen.run.core.base import (
    LOG_FILE,
    LOST_REASONS,
    STATUS_FILE,
    TERMINAL,
    TRAINER_UNKNOWN,
    Executor,
    ExecutorOptions,
    RunState,
    RunStatus,
    RunTask,
    is_finished,
    lost_end,
    read_status,
    run_outcome,
    this_host,
    trainer_exit,
    trainer_started,
    unchanged_since,
    utc_now,
    write_status,
)
from sweepgen.run.core.boot_clock import boot_id
from sweepgen.run.core.plan.resources import parse_time
from sweepgen.run.core.plan.trackers import tracker_env
from sweepgen.run.core.run_view import RunView
from sweepgen.run.core.shape import shape_from_lock
from sweepgen.run.core.stopping import queue_cancel, stop_request
from sweepgen.run.local import forked, gpu_share, launch, liveness
from sweepgen.run.local.liveness import signal_pgid as _signal_pgid
from sweepgen.run.local.supervise import (
    DROPPED_UNSTARTED,
    FINISHED_NOT_RECORDED,
    IN_SPARE,
    NOT_RECORDED,
    NOT_STARTED,
)
from sweepgen.run.logs.progress import (
    ATTEMPT_MARK,  # starts each attempt's section of run.log
)

# how long a run may take to exit after SIGTERM before it is SIGKILLed: the bundled trainer uses it to
# finish its step and save a checkpoint (trainer/training/signals.py), which takes longer than a few seconds
# for real models on a GPU; an impatient second Ctrl-C kills at once anyway
KILL_GRACE_S = 60.0
# every run's process: holds its lock, runs the trainer, ends its process group, records the run
# (run/local/supervise.py)
SUPERVISOR = forked.EXEC_PREFIX
# how long a supervisor may take to record its run's end once its trainer's group is dead
SUPERVISOR_GRACE_S = 10.0
INTERRUPTED = f"interrupted; {advice.RESUME.grid}"
NOT_WRITTEN = "not started: sweepgen could not write its files"
DISK_FAULTS = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT})
ORPHAN_LOOK_S = 0.5  # how long one look at /proc for supervisors of deleted run folders is reused


@dataclass
class _Child:
    task: RunTask
    proc: forked.SupervisorProcess
    log: IO[bytes]
    gpu: str | None
    status: RunStatus
    lock_fd: int  # this process's copy of the run's lock (runlock.py); the run's supervisor holds another


class LocalExecutor(Executor):
    name = "local"

    @classmethod
    def time_limit(cls, given: float | None, lock: Lock, lock_path: str) -> tuple[float | None, str | None]:
        """--time-limit, else the spec's resources.time (a Slurm time, honoured here too, and said
        so), else none."""
        time_ = (lock.resources or {}).get("time")
        if given is not None or time_ is None:
            return given, None
        minutes = parse_time(time_, key="resources.time", lock_path=lock_path)
        return (
            minutes * 60.0,
            f"each run is stopped after resources.time ({minutes} min); --time-limit overrides it",
        )

    def at_once(self, count: int) -> int:
        return min(self.jobs, count)

    def gpus_each(self) -> int | None:
        return self.gpus_per_run if self.options.gpus else None  # without --gpus: every GPU

    def __init__(self, options: ExecutorOptions) -> None:
        super().__init__(options)
        _check_options(options)
        lock_path = str(Path(options.sweep_dir) / LOCK_NAME)
        self.shape = shape_from_lock(options.lock, lock_path=lock_path)
        launch.check_local(self.shape, lock_path)
        self.gpus_per_run = max(1, self.shape.gpus_per_node)  # a run's share of --gpus
        _check_gpu_sets(options.gpus, options.per_gpu, self.gpus_per_run)
        self.jobs = _jobs(options, self.gpus_per_run)
        self.stop_timeout = KILL_GRACE_S if options.stop_timeout_s is None else options.stop_timeout_s
        if self.stop_timeout < 0:
            raise UserError("--stop-timeout must not be negative")
        self._stopping = False
        self._queue: deque[RunTask] = deque()
        self._running: dict[str, _Child] = {}
        self._status: dict[str, RunStatus] = {}
        self._planned: dict[str, RunStatus | None] = {}
        self._gpu_load = dict.fromkeys(options.gpus, 0)
        self._others: dict[str, int] = {}  # runs of another `sweepgen run` on each GPU (gpu_share.py)
        self._stops: set[str] = set()  # runs asked to stop (stop(), cancel()): their supervisors stop them
        self._orphans: tuple[float, dict[str, int]] | None = None  # (when, liveness.orphan_locks())

    # -- the Executor protocol ------------------------------------------------------------------

    def describe(self, tasks: Sequence[RunTask]) -> list[str]:
        lines = [f"local executor: {len(tasks)} run(s), {self.jobs} at a time, from {os.getcwd()}"]
        if self.options.gpus:
            per = f"{self.options.per_gpu} run(s) per GPU"
            if self.gpus_per_run > 1:
                per = f"{self.gpus_per_run} GPUs a run"
            lines.append(f"  GPUs {','.join(self.options.gpus)}, {per}")
        if self.shape.launched:
            lines.append(f"  each run: {self.shape.procs_per_node} process(es) under {self.shape.launcher}")
        for task in tasks:
            argv = launch.launched_argv(self.shape, task.argv)
            lines.append(f"  {task.name}: {' '.join(argv)}  > {task.run_dir / LOG_FILE}")
        return lines

    def start(self, tasks: Sequence[RunTask], planned: Mapping[str, RunStatus | None] | None = None) -> None:
        for task in tasks:
            seen = self._status.get(task.name)
            # a run skipped here (another process held it) was never started by this executor: a
            # search controller that followed it until its holder let it go hands it back
            if seen is not None and seen.state is not RunState.SKIPPED:
                raise ValueError(f"task {task.name} started twice")  # a caller bug, not user input
            # what the run looked like when it was planned: at its start it must still look so
            if planned is not None:
                self._planned[task.name] = planned.get(task.name)
            else:
                try:
                    self._planned[task.name] = read_status(task.run_dir)
                except OSError:  # e.g. a file where its directory should be: _launch reports it
                    self._planned[task.name] = None
            self._queue.append(task)
            self._status[task.name] = RunStatus(RunState.PENDING, self.name, reason="queued")
            # where `cancel` leaves its request for queued runs: there before any run waits
            with contextlib.suppress(OSError):  # _launch says what stands in the way
                runfs.makedirs(task.run_dir.parent)
        self._fill()

    def poll(self) -> dict[str, RunStatus]:
        for name, child in list(self._running.items()):
            code = child.proc.poll()
            if code is not None:
                self._finish(child, code)
                del self._running[name]
        self._drop_cancelled()
        self._fill()
        return dict(self._status)

    def _drop_cancelled(self) -> None:
        """Queued runs a `sweepgen cancel` asked to drop since this `run` started: never started,
        shown cancelled (their folders keep what they had, so a later `run` starts them)."""
        for folder in {task.run_dir.parent for task in self._queue}:
            asked = queue_cancel.asked_since(folder, self.options.started_s)
            for task in [t for t in self._queue if t.run_dir.parent == folder and t.run_dir.name in asked]:
                self._queue.remove(task)
                self._status[task.name] = self._dropped_or_changed(task, asked[task.run_dir.name])

    def _dropped_or_changed(self, task: RunTask, reason: str) -> RunStatus:
        """A queued run a `cancel` asked dropped, shown dropped; or, where another `sweepgen run`
        ran it meanwhile (this one stopped, SIGSTOP, while the cancel landed and a second `run`
        started the run it had not), as it ended there: before, this `run` said it dropped a run
        that had run and finished."""
        try:
            changed = self._changed_meanwhile(task, read_status(task.run_dir))
        except (OSError, ConfigError):  # unreadable: nothing known to have changed; dropped
            changed = None
        if changed is None:
            return self._dropped(reason)
        return RunStatus(changed[0], self.name, reason=changed[1])

    def _dropped(self, reason: str = queue_cancel.DROPPED) -> RunStatus:
        return RunStatus(RunState.CANCELLED, self.name, reason=reason)

    def _cancel_asked(self, task: RunTask) -> str | None:
        """Re-checked once the run's lock is held: a `cancel` that wrote its request after this look
        finds the lock taken and waits to stop the run once it is recorded started. The drop's
        reason; None where none was asked."""
        return queue_cancel.asked_since(task.run_dir.parent, self.options.started_s).get(task.run_dir.name)

    def done(self) -> bool:
        return not self._queue and not self._running

    def wait(self, timeout_s: float) -> None:
        """Up to ``timeout_s``, waking as soon as one of the runs' processes exits (a pidfd per
        run, readable once its process has ended), so a search refills the slot at once."""
        fds: list[int] = []
        try:
            for child in self._running.values():
                if child.proc.returncode is not None:
                    return  # reaped already: its pid may be another process's now
                try:
                    fds.append(os.pidfd_open(child.proc.pid))
                except OSError:
                    return  # already reaped, or no pidfd here: poll now
            if fds:
                select.select(fds, [], [], timeout_s)
            else:
                time.sleep(timeout_s)
        finally:
            for fd in fds:
                os.close(fd)

    def cancel(self) -> None:
        self._drop_queue()
        self._reap_ended()
        children = list(self._running.values())
        if not self._stopping:
            self._stopping = True
            self._stop_gracefully(children)
        for child in children:
            if child.proc.poll() is None:
                # asked again (a second stop signal is "now" to a supervisor), also where the first
                # request was cut short; the trainer killed from here too, in case it is not heard
                self._ask_to_stop(child, INTERRUPTED, again=True)
                _kill_trainer(child)  # the supervisor sees its trainer die and records the end
        deadline = time.monotonic() + SUPERVISOR_GRACE_S
        for child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            if child.proc.poll() is None:  # a supervisor that does not end: this process records it
                _signal_group(child, signal.SIGKILL)
            self._finish(child, child.proc.wait())
        self._running.clear()

    def _reap_ended(self) -> None:
        """The runs that ended on their own before the interrupt: reported as what they did."""
        for name, child in list(self._running.items()):
            code = child.proc.poll()
            if code is not None:
                self._finish(child, code)
                del self._running[name]

    def _stop_gracefully(self, children: Sequence[_Child]) -> None:
        """The first request: each supervisor gives its trainer stop_timeout to exit by itself, then
        kills its group. A KeyboardInterrupt while waiting leaves here; the caller's second cancel()
        (stop_now) kills at once."""
        for child in children:
            self._ask_to_stop(child, INTERRUPTED)
        deadline = time.monotonic() + self.stop_timeout + SUPERVISOR_GRACE_S
        for child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))

    def _drop_queue(self) -> None:
        """Runs never started: left pending on disk, so a plain `sweepgen run` starts them next time."""
        while self._queue:
            task = self._queue.popleft()
            self._status[task.name] = replace(
                self._status[task.name], state=RunState.CANCELLED, reason="not started (interrupted)"
            )

    def stop(self, names: Sequence[str], reason: str) -> None:
        for name in names:
            queued = next((t for t in self._queue if t.name == name), None)
            if queued is not None:
                self._queue.remove(queued)
                self._status[name] = replace(self._status[name], state=RunState.CANCELLED, reason=reason)
            child = self._running.get(name)
            if child is not None:
                self._ask_to_stop(child, reason)

    def stop_detached(self, task: RunTask, status: RunStatus, reason: str) -> bool:
        """Ask the run's supervisor to stop it (SIGTERM: it gives the trainer its stop timeout, then
        kills its group, and records the end with ``reason``). Only a run of this machine whose
        supervisor is the very process its status names (``is_alive`` tells a recycled pid apart)."""
        return liveness.request_stop(task.run_dir, status, reason)

    def stop_now(self) -> None:
        self._stopping = True  # skip the graceful SIGTERM stage: SIGKILL what is left
        self.cancel()

    @classmethod
    def cancel_runs(cls, runs: Sequence[tuple[RunTask, RunStatus]], reason: str) -> list[str]:
        """Ask each run's supervisor to stop it (``liveness.request_stop``), then wait until every one has
        recorded its end: its supervisor gives the trainer the stop timeout it was started with, then
        kills its group. A `sweepgen run` that started them reads those ends and goes on."""
        unreachable: list[tuple[RunTask, RunStatus]] = []
        asked: list[tuple[RunTask, RunStatus]] = []
        for task, status in runs:
            (asked if liveness.request_stop(task.run_dir, status, reason) else unreachable).append(
                (task, status)
            )
        for task, status in asked:
            cls._wait_recorded(task, status)
        return [task.name for task, _ in unreachable]

    @classmethod
    def _wait_recorded(cls, task: RunTask, status: RunStatus) -> None:
        """Until the run's supervisor has recorded its end (within the stop timeout the run was
        started with, and the supervisor's grace); exit 2 naming the supervisor after that."""
        grace = status.ids.get("stop_timeout_s")
        limit = (grace if isinstance(grace, (int, float)) else KILL_GRACE_S) + SUPERVISOR_GRACE_S
        deadline = time.monotonic() + limit
        while cls.is_alive(status) or (runlock.is_held(task.run_dir) and not _end_recorded(task, status)):
            if time.monotonic() > deadline:
                pid = status.ids.get("pid")
                paused = isinstance(pid, int) and liveness.is_stopped(pid)
                raise UserError(
                    f"{task.name}: its supervisor (pid {pid}) has not ended the run {limit:g} s after it "
                    f"was asked to{' (it is stopped: SIGSTOP or Ctrl-Z)' if paused else ''}",
                    hint=f"`kill -CONT {pid}` lets it stop the run (it has the request)"
                    if paused
                    else "look at the process with `ps`; the run's status file was left as it was",
                )
            time.sleep(0.05)

    @classmethod
    def is_alive(cls, status: RunStatus) -> bool:
        return liveness.supervisor_alive(status)

    @classmethod
    def end_fd(cls, status: RunStatus) -> int | None:
        return liveness.supervisor_end_fd(status)

    @classmethod
    def running_note(cls, status: RunStatus) -> str | None:
        return liveness.leftovers_note(status)

    @classmethod
    def vanished(
        cls, tasks: Sequence[RunTask], gone: Sequence[RunTask], answer_s: float
    ) -> dict[str, RunView]:
        """Runs whose folder was deleted under them (made again or not) while their supervisor, which
        still holds the deleted lock, runs them: running, not "not started"."""
        orphans = liveness.orphan_locks() if gone else {}
        views = {}
        for task in gone:
            pid = liveness.orphan_supervisor(task.run_dir, orphans)
            if pid is not None:
                moved = liveness.moved_to(pid, task.run_dir)
                status = liveness.orphan_status(pid, liveness.proc_start_ticks(pid), moved)
                views[task.name] = RunView(task, status)
        return views

    # -- internals ------------------------------------------------------------------------------

    def _ask_to_stop(self, child: _Child, reason: str, *, again: bool = False) -> None:
        if child.task.name in self._stops and not again:
            return
        self._stops.add(child.task.name)
        try:
            stop_request.ask(child.task.run_dir, reason, now=again)
        except OSError as err:  # the supervisor still stops it; its reason names the signal
            self._fault(child.task.run_dir / stop_request.STOP_FILE, err)
        _signal_pgid(child.proc.pid, signal.SIGTERM)

    def _fill(self) -> None:
        if not self._gpu_load:
            while self._queue and len(self._running) < self.jobs:
                self._launch(self._queue.popleft())
            return
        if not self._queue or len(self._running) >= self.jobs:
            return
        # another `sweepgen run` of these runs folders may run runs on the same GPUs: counted, and
        # each pick and start made under their GPU lock (gpu_share.py)
        folders = {task.run_dir.parent for task in self._queue}
        try:
            with gpu_share.held(folders):
                self._fill_gpus(folders)
        except gpu_share.Unavailable as err:  # no run can be started on that disk either
            self._gpu_lock_fault(err)

    def _gpu_lock_fault(self, err: gpu_share.Unavailable) -> None:
        """A GPU lock that cannot be opened: a disk fault of this invocation, else what stands there."""
        if err.errno not in DISK_FAULTS:
            raise UserError(
                f"could not open {err.filename}: {err.strerror or err}",
                hint="remove what stands there (sweepgen opens no link or FIFO), then run again",
            ) from None
        self._fault(Path(err.filename), err)

    def _fill_gpus(self, folders: set[Path]) -> None:
        ours = {child.task.run_dir for child in self._running.values()}
        self._others = gpu_share.others_load(folders, self.options.gpus, ours)
        while self._queue and len(self._running) < self.jobs and self._slot_free():
            task = self._queue.popleft()
            self._launch(task)
            child = self._running.get(task.name)
            if child is not None:  # its GPUs are in its status before the lock is let go
                gpu_share.wait_seen(task.run_dir, child.proc.pid, child.proc.poll)
        self._say_waiting_for_gpus()

    def _load(self, gpu: str) -> int:
        return self._gpu_load[gpu] + self._others.get(gpu, 0)

    def _slot_free(self) -> bool:
        """Whether a run can have its GPUs (counting another `sweepgen run`'s runs on them)."""
        return sum(self._load(g) < self.options.per_gpu for g in self._gpu_load) >= self.gpus_per_run

    def _say_waiting_for_gpus(self) -> None:
        """A queued run that waits for GPUs another `sweepgen run`'s runs take says so."""
        if self._queue and len(self._running) < self.jobs and any(self._others.values()):
            taken = ", ".join(f"{g}: {n}" for g, n in self._others.items() if n)
            why = f"queued: waiting for a GPU slot (runs of another `sweepgen run` on GPUs {taken})"
            for task in self._queue:
                self._status[task.name] = replace(self._status[task.name], reason=why)

    def _pick_gpu(self) -> str | None:
        """The run's GPUs as CUDA_VISIBLE_DEVICES: the least loaded one, or for a run of several
        GPUs that many idle ones (whole GPUs: --per-gpu is 1 then), disjoint from every other run's
        (another `sweepgen run`'s included)."""
        if not self._gpu_load:
            return None
        order = sorted(self._gpu_load, key=lambda g: (self._load(g), self.options.gpus.index(g)))
        chosen = sorted(order[: self.gpus_per_run], key=self.options.gpus.index)
        for gpu in chosen:
            self._gpu_load[gpu] += 1
        return ",".join(chosen)

    def _free_gpu(self, gpus: str | None) -> None:
        for gpu in (gpus or "").split(",") if gpus else []:
            self._gpu_load[gpu] -= 1

    def _launch(self, task: RunTask) -> None:
        short = _room_short(task.run_dir)
        if short is not None:  # its supervisor could not keep the room for its end: nothing is made
            self._fault(task.run_dir, short)
            self._status[task.name] = RunStatus(RunState.PENDING, self.name, reason=NOT_WRITTEN)
            return
        try:
            runfs.makedirs(task.run_dir)  # a linked folder on the way is ELOOP, never followed
            lock_fd = runlock.acquire(task.run_dir)
        except OSError as err:
            if err.errno in DISK_FAULTS:  # a read-only or full disk: every later run would fail alike
                self._fault(task.run_dir, err)
                self._status[task.name] = RunStatus(RunState.PENDING, self.name, reason=NOT_WRITTEN)
                return
            # no run dir or lock, so no log or status file: the failure is kept in memory for this invocation
            self._status[task.name] = RunStatus(
                RunState.FAILED,
                self.name,
                exit_code=None,
                started=utc_now(),
                ended=utc_now(),
                reason=_not_locked(err),
                command=list(task.argv),
                config=task.config_path.as_posix(),
                sweep_dir=self.options.sweep_dir.as_posix(),
                config_fingerprint=task.fingerprint or None,
                done_file=task.done_file,
            )
            return
        if lock_fd is None:
            self._status[task.name] = RunStatus(
                RunState.SKIPPED, self.name, reason="started by another process meanwhile (it holds the lock)"
            )
            return
        try:
            self._start_locked(task, lock_fd)
        except BaseException:
            if task.name not in self._running:
                runlock.release(lock_fd)  # the run never started: nobody else holds it for it
            raise

    def _open_log(self, task: RunTask, lock_fd: int, attempt: int, argv: list[str]) -> IO[bytes] | None:
        """The run's log, opened to append with this attempt's mark written; None when it cannot be
        written: the run then stays pending (its lock released, the fault said), never started blind."""
        log_path = task.run_dir / LOG_FILE
        try:
            # append: an earlier attempt's log is evidence; never through a link, never a FIFO
            log = os.fdopen(runfiles.open_append(log_path), "ab")
            log.write(f"{ATTEMPT_MARK} {attempt} at {utc_now()}: {' '.join(argv)} ===\n".encode())
            log.flush()
        except OSError as err:
            runlock.release(lock_fd)
            self._fault(log_path, err)
            self._status[task.name] = RunStatus(
                RunState.PENDING, self.name, reason=f"not started: could not write {log_path}"
            )
            return None
        return log

    def _record_home(self, task: RunTask, lock_fd: int, log: IO[bytes]) -> bool:
        """Where the run starts, written in the lock file its supervisor will hold; False (the lock
        released, the fault said, the run left pending) where it cannot be written: a run whose
        start folder only its status file told could be taken for moved by whoever writes there."""
        try:
            runlock.record_home(lock_fd, task.run_dir)
        except OSError as err:
            log.close()
            runlock.release(lock_fd)
            self._fault(task.run_dir / runlock.RUN_LOCK_NAME, err)
            self._status[task.name] = RunStatus(
                RunState.PENDING,
                self.name,
                reason=f"not started: could not write {task.run_dir / runlock.RUN_LOCK_NAME}",
            )
            return False
        return True

    def _start_locked(self, task: RunTask, lock_fd: int) -> None:
        """Start ``task``, whose lock this process now holds, unless it changed since it was planned."""
        previous = read_status(task.run_dir)
        changed = self._changed_meanwhile(task, previous)
        if changed:
            runlock.release(lock_fd)
            self._status[task.name] = RunStatus(changed[0], self.name, reason=changed[1])
            return
        dropped = self._cancel_asked(task)
        if dropped is not None:
            runlock.release(lock_fd)
            self._status[task.name] = self._dropped(dropped)
            return
        attempt = previous.attempt + 1 if previous else 1
        argv = launch.launched_argv(self.shape, task.argv)
        log = self._open_log(task, lock_fd, attempt, argv)
        if log is None:
            return
        if not self._record_home(task, lock_fd, log):
            return
        gpu = self._pick_gpu()
        env = self._run_env(task, gpu)
        stop_request.clear(task.run_dir)  # an old request must not stop this attempt
        status = RunStatus(
            RunState.RUNNING,
            self.name,
            started=utc_now(),
            command=list(task.argv),
            config=task.config_path.as_posix(),
            sweep_dir=self.options.sweep_dir.as_posix(),
            attempt=attempt,
            ids={"host": this_host(), **({"gpu": gpu} if gpu is not None else {}), **self._shape_ids()},
            config_fingerprint=task.fingerprint or None,
            done_file=task.done_file,
        )
        # fork, registration and hand-over as one step to a stop signal (held, then raised right
        # after): a Ctrl-C or SIGTERM in between found an unregistered supervisor it could not stop
        # and that waited for its job, holding the run's lock until this process exited
        with _stop_signals_held():
            job_read, job_write = os.pipe()
            try:
                _check_found({argv[0], task.argv[0]})
                # forked from this process where that is safe (forked.py), else started as
                # `python -m sweepgen.run.local.supervise`; the supervisor holds the lock while the run
                # lives, even if sweepgen dies; the trainer's own processes never get it
                proc = forked.start(argv, lock_fd=lock_fd, job_fd=job_read, log_fd=log.fileno(), env=env)
            except OSError as err:
                os.close(job_write)
                self._not_started(task, lock_fd, log, gpu, attempt, err)
                return
            finally:
                os.close(job_read)
            ids = {
                **status.ids,
                "pid": proc.pid,
                "pgid": proc.pid,
                "proc_start": liveness.proc_start_ticks(proc.pid),
                "boot_id": boot_id(),
            }
            status = replace(status, ids=ids)
            # registered before its job is handed over (a stop then finds it and stops it)
            self._running[task.name] = _Child(task, proc, log, gpu, status, lock_fd)
            self._status[task.name] = status
            self._hand_over(task, status, job_write)

    def _hand_over(self, task: RunTask, status: RunStatus, pipe: int) -> None:
        """What the supervisor records (its run's status as it starts, stop timeout, time limit),
        through the pipe it reads once; it writes the status file itself, so no write from here can
        overwrite the end of a run that was quicker than this process."""
        job = {
            "run_dir": task.run_dir.as_posix(),
            "status": {k: v for k, v in status.to_json().items() if k != "ids"}
            | {"ids": {k: v for k, v in status.ids.items() if k in ("host", "gpu", "launcher", "procs")}},
            "stop_timeout_s": self.stop_timeout,
            "time_limit_s": self.options.time_limit_s,
            # a `cancel` asked since then is honoured by the supervisor before its trainer starts
            "started_s": self.options.started_s,
        }
        try:
            with os.fdopen(pipe, "wb") as out:
                out.write(json.dumps(job).encode())
        except BrokenPipeError:  # the supervisor died at once: poll() finds it and records the end
            pass

    def _changed_meanwhile(self, task: RunTask, previous: RunStatus | None) -> tuple[RunState, str] | None:
        """Re-checked once the run's lock is held: another `sweepgen run` may have run it while it was
        queued, or its folder was deleted under a supervisor that still runs it. Reported with the
        state it ended in there (so a failure elsewhere still makes this exit 1); None when it is as
        planned."""
        if is_finished(task.run_dir, task.done_file):
            return RunState.FINISHED, "finished meanwhile (started by another process)"
        if not unchanged_since(self._planned.get(task.name), previous):
            now = previous.state if previous else RunState.SKIPPED
            state = now if now in TERMINAL else RunState.SKIPPED
            # how it ended there, said here too: a failure elsewhere names its cause in both `run`s
            how = f": {previous.reason}" if previous and previous.reason else ""
            return state, f"its status changed since it was planned (now {now}{how}; another process ran it)"
        orphan = self._orphan_of(task.run_dir) if previous is None else None
        if orphan is not None:  # its folder was deleted under it: a start here would be a second one
            return RunState.FAILED, _deleted_under(orphan, liveness.moved_to(orphan, task.run_dir))
        return None

    def _orphan_of(self, run_dir: Path) -> int | None:
        """liveness.orphan_supervisor, from one look at /proc per ORPHAN_LOOK_S (a look reads every
        process's name: a sweep's first burst of starts takes one, not one per run)."""
        now = time.monotonic()
        if self._orphans is None or now - self._orphans[0] > ORPHAN_LOOK_S:
            self._orphans = (now, liveness.orphan_locks())
        return liveness.orphan_supervisor(run_dir, self._orphans[1])

    def _shape_ids(self) -> dict[str, str | int]:
        """The launcher and its process count, in the status of a launched run."""
        if not self.shape.launched:
            return {}
        return {"launcher": self.shape.launcher, "procs": self.shape.procs_per_node}

    def _run_env(self, task: RunTask, gpu: str | None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(tracker_env(task, Path(self.options.sweep_dir).name))
        env.update(self.options.env)
        env["PYTHONUNBUFFERED"] = "1"  # so run.log and the live display follow the run as it goes
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpu
        return env

    def _not_started(
        self, task: RunTask, lock_fd: int, log: IO[bytes], gpu: str | None, attempt: int, err: OSError
    ) -> None:
        """The run's process could not be started: a failed attempt, said in its log and status."""
        status = RunStatus(
            RunState.FAILED,
            self.name,
            exit_code=None,
            started=utc_now(),
            ended=utc_now(),
            reason=f"could not start: {err.strerror or err}",
            command=list(task.argv),
            config=task.config_path.as_posix(),
            sweep_dir=self.options.sweep_dir.as_posix(),
            attempt=attempt,
            ids={"host": this_host(), "gpu": gpu},
            config_fingerprint=task.fingerprint or None,
            done_file=task.done_file,
        )
        self._free_gpu(gpu)
        try:
            log.write(f"sweepgen: could not start the run: {err}\n".encode())
            log.close()
        except OSError as log_err:
            self._fault(task.run_dir / LOG_FILE, log_err)
        self._write(task.run_dir, status)
        runlock.release(lock_fd)
        self._status[task.name] = status

    def _finish(self, child: _Child, code: int) -> None:
        """The supervisor exited: its run's end is the one it recorded; if it died without recording
        one (killed itself), the end is recorded here, with what is known."""
        try:
            child.log.close()
        except OSError as err:  # the last buffered bytes could not be written
            self._fault(child.task.run_dir / LOG_FILE, err)
        self._free_gpu(child.gpu)
        try:
            recorded = read_status(child.task.run_dir)
        except (OSError, SweepgenError):
            recorded = None
        status = self._end_of(child, code, recorded)
        # released only now: until its end is recorded, nobody else may start the run
        runlock.release(child.lock_fd)
        self._status[child.task.name] = status

    def _end_of(self, child: _Child, code: int, recorded: RunStatus | None) -> RunStatus:
        """The run's end: the one its supervisor recorded, or what its exit code says it left."""
        if _is_end_of(recorded, child):
            assert recorded is not None  # _is_end_of says so
            if code == IN_SPARE:  # recorded, but the disk is full: no other run starts on it
                self._recorded_in_spare(child)
            return recorded
        if code == DROPPED_UNSTARTED and not _written_by(recorded, child):
            # asked by `cancel` as it started: never started, nothing written; said as who asked it
            return self._dropped(self._cancel_asked(child.task) or queue_cancel.DROPPED)
        if code == NOT_STARTED and not _written_by(recorded, child):
            # its supervisor could not record the start, so it started nothing: pending, as on disk
            self.faults.append(
                f"could not write {child.task.run_dir / STATUS_FILE} (a full or read-only disk?): the "
                "run was not started"
            )
            self._fault_stops_queue()
            return RunStatus(RunState.PENDING, self.name, reason=NOT_WRITTEN)
        return self._end_unrecorded(child, code, recorded)

    def _recorded_in_spare(self, child: _Child) -> None:
        """The run's end was recorded only in the room kept for it: the disk is full, said as such
        ("could not write" its status would read as an end that is not true), and the queue stops."""
        self.faults.append(
            f"the disk under {child.task.run_dir} is full ({os.strerror(errno.ENOSPC)}): "
            f"the run's end was recorded in the room kept for it"
        )
        self._fault_stops_queue()

    def _end_unrecorded(self, child: _Child, code: int, recorded: RunStatus | None) -> RunStatus:
        """The supervisor died without recording the end: what it left running is killed (the
        trainer's group, its leftovers elsewhere) before the end known here is recorded."""
        pgid = _trainer_group(recorded, child)
        if pgid is not None:  # the trainer dies with its supervisor; its group too
            _signal_pgid(pgid, signal.SIGKILL)
        liveness.kill_leftovers(child.status)  # and what it started elsewhere (ranks, sessions)
        status = self._unrecorded_end(child, code, recorded)
        self._write(child.task.run_dir, status)
        return status

    def _unrecorded_end(self, child: _Child, code: int, own: RunStatus | None) -> RunStatus:
        """The end of a run whose supervisor exited (with ``code``) without recording one; ``own``:
        the status file, which (written by it) may say how its trainer ended (base.lost_end)."""
        if code == FINISHED_NOT_RECORDED:  # the run finished; only its record failed
            why = "its supervisor could not record its end (its reason is in run.log)"
            return replace(child.status, state=RunState.FINISHED, exit_code=0, ended=utc_now(), reason=why)
        known = _trainer_end(child, own)
        if known is not None:
            return known
        if is_finished(child.task.run_dir, child.task.done_file):
            return _proved_finished(child, code)
        stopped = child.task.name in self._stops
        state, reason = run_outcome(
            code,
            finished=False,
            cancelled=stopped,
            cancel_reason=INTERRUPTED,
            done_file=child.task.done_file,
        )
        if code == NOT_RECORDED:
            reason = "its supervisor could not record the run's end (its reason is in run.log)"
        elif not stopped:
            why = f"its supervisor (pid {child.proc.pid}) ended without recording the run's end"
            reason = f"{why}: {reason}{_maybe_finished(child, own)}"
        return replace(child.status, state=state, exit_code=code, ended=utc_now(), reason=reason)

    def _write(self, run_dir: Path, status: RunStatus) -> None:
        """write_status, but a disk error is a fault of this invocation (reported at the end, exit 2),
        never a crash that would leave the other runs unwatched."""
        try:
            write_status(run_dir, status)
        except OSError as err:
            self._fault(run_dir / STATUS_FILE, err)

    def _fault(self, path: Path, err: OSError) -> None:
        self.faults.append(f"could not write {path}: {err.strerror or err}")
        self._fault_stops_queue()

    def _fault_stops_queue(self) -> None:
        # what failed here (a full or read-only disk) would fail every run started after it
        while self._queue:
            task = self._queue.popleft()
            # pending, not skipped: nobody else holds them, they were never started
            self._status[task.name] = RunStatus(RunState.PENDING, self.name, reason=NOT_WRITTEN)


def _room_short(run_dir: Path) -> OSError | None:
    """ENOSPC where the disk under ``run_dir`` has less free than the room each run keeps for its end
    (end_room.SIZE), which its supervisor could not reserve: the run is not started and no folder or
    process is made for it (on a disk filled while runs trained, the next one's folder was made, its
    supervisor started, and only then was it found not startable). None where there is room, or the
    disk cannot be asked (the start says what fails)."""
    folder = run_dir
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return None
    if free >= end_room.SIZE:
        return None
    return OSError(
        errno.ENOSPC,
        f"{os.strerror(errno.ENOSPC)} ({free} bytes free; a run keeps {end_room.SIZE} for its end)",
    )


def _end_recorded(task: RunTask, status: RunStatus) -> bool:
    """The attempt ``status`` names has its end on record (its supervisor wrote it and exited). The
    run's lock may still be held then: by the `sweepgen run` that started it, whose copy of the
    lock is let go once it reads that end; a `run` stopped meanwhile (Ctrl-Z, SIGSTOP) holds it
    until it goes on. Before, `cancel` waited for that lock and failed after its grace, saying the
    supervisor had not ended a run it had ended and recorded."""
    try:
        now = read_status(task.run_dir)
    except (OSError, ConfigError):  # unreadable: not known to be recorded, waited for
        return False
    same = now is not None and (now.attempt, now.started) == (status.attempt, status.started)
    return same and now is not None and now.state in TERMINAL


def _check_found(programs: set[str]) -> None:
    """FileNotFoundError for a program not on PATH: said in the run's reason, not as the
    supervisor's exit 127."""
    for program in programs:
        if shutil.which(program) is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _deleted_under(pid: int, moved: str | None) -> str:
    if moved is not None:  # its end is recorded where it runs
        return (
            f"not started: its run folder was moved to {moved} while the run ran, and its supervisor "
            f"(pid {pid}) still runs it there (`kill {pid}` stops it); start it here again once it has "
            "ended, or move the folder back"
        )
    return (
        f"not started: its run folder was deleted while the run ran, and its supervisor (pid {pid}) "
        f"still runs it; that run records its end here when it ends (`kill {pid}` stops it)"
    )


def _check_options(options: ExecutorOptions) -> None:
    """What the local executor refuses before reading the lock: --no-wait, --per-gpu below 1, a
    device listed twice, a device this shell was not given."""
    if options.wait is False:
        raise UserError("the local executor always waits for its runs", hint="drop --no-wait")
    if options.per_gpu < 1:
        raise UserError("--per-gpu must be at least 1")
    if len(set(options.gpus)) != len(options.gpus):
        raise UserError(f"--gpus lists a device twice: {','.join(options.gpus)}")
    _check_visible(options.gpus)


def _check_visible(gpus: Sequence[str]) -> None:
    """--gpus ids replace CUDA_VISIBLE_DEVICES in each run, so they are physical ids; an id this
    shell was not given is almost certainly meant relative to it: refuse to guess."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not gpus or visible is None:
        return
    outside = [g for g in gpus if g not in visible.split(",")]
    if outside:
        raise UserError(
            f"--gpus {','.join(outside)} not in this shell's CUDA_VISIBLE_DEVICES={visible}",
            hint="--gpus takes physical device ids (as nvidia-smi numbers them); pick from "
            "CUDA_VISIBLE_DEVICES or unset it",
        )


def _jobs(options: ExecutorOptions, gpus_per_run: int) -> int:
    """How many runs at once: --jobs, else one per GPU slot (--gpus x --per-gpu), else one; never
    more than the GPU slots."""
    slots = len(options.gpus) // gpus_per_run * options.per_gpu if options.gpus else None
    jobs = options.jobs if options.jobs is not None else (slots or 1)
    if jobs < 1:
        raise UserError("--jobs must be at least 1")
    if slots is not None and jobs > slots:
        raise UserError(
            f"--jobs {jobs} is more than the {slots} GPU slots (--gpus × --per-gpu)"
            + (f", at {gpus_per_run} GPUs a run" if gpus_per_run > 1 else ""),
            hint="raise --per-gpu, add GPUs, or lower --jobs",
        )
    return jobs


def _check_gpu_sets(gpus: Sequence[str], per_gpu: int, gpus_per_run: int) -> None:
    """Runs of several GPUs take whole GPUs, as many as the lock's gpus_per_node."""
    if not gpus or gpus_per_run == 1:
        return
    if per_gpu != 1:
        raise UserError(
            f"--per-gpu {per_gpu} packs runs onto one GPU, but each run takes {gpus_per_run} GPUs",
            hint="drop --per-gpu: runs of several GPUs each get GPUs of their own",
        )
    if len(gpus) < gpus_per_run:
        raise UserError(
            f"--gpus {','.join(gpus)} has {len(gpus)} GPU(s); each run takes {gpus_per_run} "
            "(the spec's resources.gpus_per_node)",
            hint=f"give at least {gpus_per_run} GPUs, or lower gpus_per_node and render again",
        )


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held pending (blocked) inside the block, delivered when it ends."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _signal_group(child: _Child, sig: signal.Signals) -> None:
    _signal_pgid(child.proc.pid, sig)


def _written_by(recorded: RunStatus | None, child: _Child) -> bool:
    """Whether the status file was written by ``child``'s supervisor for this attempt: a status of
    an earlier attempt (its supervisor died before writing one) names another attempt's processes,
    whose pids may belong to anyone by now."""
    return (
        recorded is not None
        and recorded.attempt == child.status.attempt
        and recorded.ids.get("pid") == child.proc.pid
    )


def _is_end_of(recorded: RunStatus | None, child: _Child) -> bool:
    """Whether the status file holds the end that ``child``'s supervisor recorded."""
    return recorded is not None and recorded.state in TERMINAL and _written_by(recorded, child)


def _trainer_group(recorded: RunStatus | None, child: _Child) -> int | None:
    """The trainer's group as ``child``'s supervisor recorded it for this attempt; None when the
    status is not its (an earlier attempt's group number may be anyone's by now) or names none."""
    if recorded is None or not _written_by(recorded, child):
        return None
    pgid = recorded.ids.get("trainer_pgid")
    return pgid if isinstance(pgid, int) and not isinstance(pgid, bool) and pgid > 1 else None


def _trainer_end(child: _Child, own: RunStatus | None) -> RunStatus | None:
    """How the trainer ended, where its supervisor (dead now) wrote that in ``own`` before dying."""
    if own is None or own.state is not RunState.RUNNING or not _written_by(own, child):
        return None
    state, reason = lost_end(own)
    if reason in LOST_REASONS:
        return None
    return replace(child.status, state=state, exit_code=trainer_exit(own), ended=utc_now(), reason=reason)


def _maybe_finished(child: _Child, own: RunStatus | None) -> str:
    """Said of a run whose supervisor died after starting its trainer, nothing of the trainer's end
    on record: it may have exited 0 in the instant before (docs/RUN.md)."""
    started = own is not None and _written_by(own, child) and trainer_started(own)
    return f"; {TRAINER_UNKNOWN}" if started else ""


def _proved_finished(child: _Child, code: int) -> RunStatus:
    """A run whose supervisor died (exit ``code``) without recording its end or its trainer's, and
    whose done file is there: finished, as every reader takes it over a lost record (base.
    effective_state). Before, this `run` said "failed" and exited 1 while `status` showed it
    finished, and `--rerun-failed` then did not run it again."""
    _, how = run_outcome(code, finished=False, done_file=child.task.done_file)
    why = (
        f"its supervisor (pid {child.proc.pid}) ended without recording the run's end ({how}); its "
        f"{child.task.done_file} proves it finished"
    )
    return replace(child.status, state=RunState.FINISHED, exit_code=None, ended=utc_now(), reason=why)


def _kill_trainer(child: _Child) -> None:
    """SIGKILL the trainer's group, found in the status its supervisor wrote."""
    with contextlib.suppress(OSError, SweepgenError):
        pgid = _trainer_group(read_status(child.task.run_dir), child)
        if pgid is not None:
            _signal_pgid(pgid, signal.SIGKILL)


def _not_locked(err: OSError) -> str:
    """Why a run could not be started for want of its folder or lock: another user's lock file
    (a shared runs folder) said as runlock says it, whose it is and how to go on."""
    if isinstance(err, runlock.ForeignLockError):
        return f"not started: {err.strerror}"
    return f"could not create the run directory or its lock: {err.strerror or err}"
