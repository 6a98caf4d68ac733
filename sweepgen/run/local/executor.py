"""The local executor: each run its own process on this machine, ``jobs`` at a time, optionally
packed ``per_gpu`` to a GPU through CUDA_VISIBLE_DEVICES.

Each run is a supervisor process (sweepgen.run.local.supervise) that holds the run's lock and runs the
trainer; it starts in a new session (its own process group) so a terminal Ctrl-C reaches only
sweepgen, which then stops every run's whole group (supervisor, trainer and any worker it forked) in
order: SIGTERM, a grace period, SIGKILL. Nothing is left running and every stopped run is marked
cancelled. When a trainer exits, its supervisor kills what is left of the group, so a process the
trainer left behind neither outlives the run nor holds its lock.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from sweepgen.errors import UserError
from sweepgen.run.core import runfiles, runlock
from sweepgen.run.core.base import (
    LOG_FILE,
    STATUS_FILE,
    TERMINAL,
    Executor,
    ExecutorOptions,
    RunState,
    RunStatus,
    RunTask,
    is_finished,
    read_status,
    run_outcome,
    succeeded,
    this_host,
    utc_now,
    write_status,
)
from sweepgen.run.core.progress import (
    ATTEMPT_MARK,  # starts each attempt's section of run.log
)
from sweepgen.run.core.trackers import tracker_env

# how long a run may take to exit after SIGTERM before it is SIGKILLed: the bundled trainer uses it to
# finish its step and save a checkpoint (trainer/signals.py), which takes longer than a few seconds
# for real models on a GPU; an impatient second Ctrl-C kills at once anyway
KILL_GRACE_S = 60.0
# every run's process: holds its lock, runs the trainer, ends its process group (run/supervise.py)
SUPERVISOR = (sys.executable, "-m", "sweepgen.run.local.supervise")


@dataclass
class _Child:
    task: RunTask
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    gpu: str | None
    status: RunStatus
    lock_fd: int  # this process's copy of the run's lock (runlock.py); the run's supervisor holds another


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, options: ExecutorOptions) -> None:
        super().__init__(options)
        if options.wait is False:
            raise UserError("the local executor always waits for its runs", hint="drop --no-wait")
        if options.per_gpu < 1:
            raise UserError("--per-gpu must be at least 1")
        if len(set(options.gpus)) != len(options.gpus):
            raise UserError(f"--gpus lists a device twice: {','.join(options.gpus)}")
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if options.gpus and visible is not None:
            # --gpus ids replace this variable in each run, so they are physical ids; an id this
            # shell was not given is almost certainly meant relative to it: refuse to guess
            outside = [g for g in options.gpus if g not in visible.split(",")]
            if outside:
                raise UserError(
                    f"--gpus {','.join(outside)} not in this shell's CUDA_VISIBLE_DEVICES={visible}",
                    hint="--gpus takes physical device ids (as nvidia-smi numbers them); pick from "
                    "CUDA_VISIBLE_DEVICES or unset it",
                )
        slots = len(options.gpus) * options.per_gpu if options.gpus else None
        jobs = options.jobs if options.jobs is not None else (slots or 1)
        if jobs < 1:
            raise UserError("--jobs must be at least 1")
        if slots is not None and jobs > slots:
            raise UserError(
                f"--jobs {jobs} is more than the {slots} GPU slots (--gpus × --per-gpu)",
                hint="raise --per-gpu, add GPUs, or lower --jobs",
            )
        self.jobs = jobs
        self.stop_timeout = KILL_GRACE_S if options.stop_timeout_s is None else options.stop_timeout_s
        if self.stop_timeout < 0:
            raise UserError("--stop-timeout must not be negative")
        self._stopping = False
        self._queue: deque[RunTask] = deque()
        self._running: dict[str, _Child] = {}
        self._status: dict[str, RunStatus] = {}
        self._planned: dict[str, RunStatus | None] = {}
        self._gpu_load = dict.fromkeys(options.gpus, 0)
        self._stops: dict[str, tuple[float, str]] = {}  # run -> (SIGKILL deadline, reason): stop()
        # runs of a `sweepgen run` that died, stopped by stop_detached: run -> (SIGKILL deadline, status)
        self._detached: dict[str, tuple[float, RunStatus]] = {}

    # -- the Executor protocol ------------------------------------------------------------------

    def describe(self, tasks: Sequence[RunTask]) -> list[str]:
        lines = [f"local executor: {len(tasks)} run(s), {self.jobs} at a time, from {os.getcwd()}"]
        if self.options.gpus:
            lines.append(f"  GPUs {','.join(self.options.gpus)}, {self.options.per_gpu} run(s) per GPU")
        for task in tasks:
            lines.append(f"  {task.name}: {' '.join(task.argv)}  > {task.run_dir / LOG_FILE}")
        return lines

    def start(self, tasks: Sequence[RunTask], planned: Mapping[str, RunStatus | None] | None = None) -> None:
        for task in tasks:
            if task.name in self._status:
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
        self._fill()

    def poll(self) -> dict[str, RunStatus]:
        for name, child in list(self._running.items()):
            code = child.proc.poll()
            if code is not None:
                stop = self._stops.get(name)
                self._finish(child, code, cancelled=stop is not None, reason=stop[1] if stop else None)
                del self._running[name]
            elif name in self._stops and time.monotonic() > self._stops[name][0]:
                _signal_group(child, signal.SIGKILL)  # the grace period of stop() is over
        for name, (deadline, status) in list(self._detached.items()):
            if not self.is_alive(status):
                del self._detached[name]
            elif time.monotonic() > deadline:
                _signal_pgid(status.ids["pgid"], signal.SIGKILL)  # the grace period is over
                del self._detached[name]
        self._fill()
        return dict(self._status)

    def done(self) -> bool:
        return not self._queue and not self._running

    def cancel(self) -> None:
        while self._queue:
            # never started: left pending on disk, so a plain `sweepgen run` starts it next time
            task = self._queue.popleft()
            self._status[task.name] = replace(
                self._status[task.name], state=RunState.CANCELLED, reason="not started (interrupted)"
            )
        for name, child in list(self._running.items()):
            code = child.proc.poll()
            if code is not None:  # ended on its own before the interrupt: report what it did
                self._finish(child, code)
                del self._running[name]
        children = list(self._running.values())
        if not self._stopping:
            # first request: SIGTERM, and give each run stop_timeout to exit by itself. A
            # KeyboardInterrupt while waiting leaves here; the caller's second cancel() kills.
            self._stopping = True
            for child in children:
                _signal_group(child, signal.SIGTERM)
            deadline = time.monotonic() + self.stop_timeout
            for child in children:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for child in children:
            if child.proc.poll() is None:
                _signal_group(child, signal.SIGKILL)
        for child in children:
            child.proc.wait()
            # the group leader is gone; make sure nothing it forked outlives it
            _signal_group(child, signal.SIGKILL)
            self._finish(child, child.proc.returncode, cancelled=True)
        self._running.clear()

    def stop(self, names: Sequence[str], reason: str) -> None:
        for name in names:
            queued = next((t for t in self._queue if t.name == name), None)
            if queued is not None:
                self._queue.remove(queued)
                self._status[name] = replace(self._status[name], state=RunState.CANCELLED, reason=reason)
            child = self._running.get(name)
            if child is not None and name not in self._stops:
                self._stops[name] = (time.monotonic() + self.stop_timeout, reason)
                _signal_group(child, signal.SIGTERM)

    def stop_detached(self, task: RunTask, status: RunStatus, reason: str) -> bool:
        """SIGTERM to the run's process group (its supervisor leads it and waits for the trainer,
        which saves its checkpoint), SIGKILL after the grace period (at a later ``poll``). Only a
        run of this machine whose supervisor is the very process its status names (``is_alive``
        tells a recycled pid apart)."""
        pgid = status.ids.get("pgid")
        if status.executor != self.name or status.ids.get("host") != this_host() or not isinstance(pgid, int):
            return False
        if not self.is_alive(status):
            return False
        _signal_pgid(pgid, signal.SIGTERM)
        self._detached[task.name] = (time.monotonic() + self.stop_timeout, status)
        return True

    def stop_now(self) -> None:
        self._stopping = True  # skip the graceful SIGTERM stage: SIGKILL what is left
        self.cancel()

    @classmethod
    def is_alive(cls, status: RunStatus) -> bool:
        pid, host = status.ids.get("pid"), status.ids.get("host")
        if host != this_host():
            return True  # cannot look at another machine: assume it runs rather than start it twice
        if not isinstance(pid, int):
            return False
        started = _proc_start_ticks(pid)
        if started is None:
            return False
        # a recycled pid belongs to a process that started at another time
        return status.ids.get("proc_start") in (None, started)

    # -- internals ------------------------------------------------------------------------------

    def _fill(self) -> None:
        while self._queue and len(self._running) < self.jobs:
            self._launch(self._queue.popleft())

    def _pick_gpu(self) -> str | None:
        if not self._gpu_load:
            return None
        gpu = min(self._gpu_load, key=lambda g: (self._gpu_load[g], self.options.gpus.index(g)))
        self._gpu_load[gpu] += 1
        return gpu

    def _launch(self, task: RunTask) -> None:
        try:
            task.run_dir.mkdir(parents=True, exist_ok=True)
            lock_fd = runlock.acquire(task.run_dir)
        except OSError as err:
            # no run dir or lock, so no log or status file: the failure is kept in memory for this invocation
            self._status[task.name] = RunStatus(
                RunState.FAILED,
                self.name,
                exit_code=None,
                started=utc_now(),
                ended=utc_now(),
                reason=f"could not create the run directory or its lock: {err.strerror or err}",
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

    def _start_locked(self, task: RunTask, lock_fd: int) -> None:
        """Start ``task``, whose lock this process now holds, unless it changed since it was planned."""
        previous = read_status(task.run_dir)
        changed = self._changed_meanwhile(task, previous)
        if changed:
            runlock.release(lock_fd)
            self._status[task.name] = RunStatus(changed[0], self.name, reason=changed[1])
            return
        attempt = previous.attempt + 1 if previous else 1
        log_path = task.run_dir / LOG_FILE
        try:
            # append: an earlier attempt's log is evidence; never through a link, never a FIFO
            log = os.fdopen(runfiles.open_append(log_path), "ab")
            log.write(f"{ATTEMPT_MARK} {attempt} at {utc_now()}: {' '.join(task.argv)} ===\n".encode())
            log.flush()
        except OSError as err:
            runlock.release(lock_fd)
            self._fault(log_path, err)
            self._status[task.name] = RunStatus(
                RunState.SKIPPED, self.name, reason=f"not started: could not write {log_path}"
            )
            return
        gpu = self._pick_gpu()
        env = self._run_env(task, gpu)
        try:
            if shutil.which(task.argv[0]) is None:  # said here, in the run's reason, not as exit 127
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), task.argv[0])
            proc = subprocess.Popen(
                [*SUPERVISOR, str(lock_fd), "--", *task.argv],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                # the supervisor holds the lock while the run lives, even if sweepgen dies; the
                # trainer's own processes never get it
                pass_fds=(lock_fd,),
            )
        except OSError as err:
            self._not_started(task, lock_fd, log, gpu, attempt, err)
            return
        ids = {
            "pid": proc.pid,
            "pgid": proc.pid,
            "host": this_host(),
            "proc_start": _proc_start_ticks(proc.pid),
        }
        if gpu is not None:
            ids["gpu"] = gpu
        status = RunStatus(
            RunState.RUNNING,
            self.name,
            started=utc_now(),
            command=list(task.argv),
            config=task.config_path.as_posix(),
            sweep_dir=self.options.sweep_dir.as_posix(),
            attempt=attempt,
            ids=ids,
            config_fingerprint=task.fingerprint or None,
            done_file=task.done_file,
        )
        # registered before anything else can raise (a Ctrl-C now must still find it to stop it)
        self._running[task.name] = _Child(task, proc, log, gpu, status, lock_fd)
        self._status[task.name] = status
        self._write(task.run_dir, status)

    def _changed_meanwhile(self, task: RunTask, previous: RunStatus | None) -> tuple[RunState, str] | None:
        """Re-checked once the run's lock is held: another `sweepgen run` may have run it while it was
        queued. Reported with the state it ended in there (so a failure elsewhere still makes this
        exit 1); None when it is as planned."""
        if is_finished(task.run_dir, task.done_file):
            return RunState.FINISHED, "finished meanwhile (started by another process)"
        if previous != self._planned.get(task.name):
            now = previous.state if previous else RunState.SKIPPED
            state = now if now in TERMINAL else RunState.SKIPPED
            return state, f"its status changed since it was planned (now {now}; another process ran it)"
        return None

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
        if gpu is not None:
            self._gpu_load[gpu] -= 1
        try:
            log.write(f"sweepgen: could not start the run: {err}\n".encode())
            log.close()
        except OSError as log_err:
            self._fault(task.run_dir / LOG_FILE, log_err)
        self._write(task.run_dir, status)
        runlock.release(lock_fd)
        self._status[task.name] = status

    def _finish(
        self, child: _Child, code: int, *, cancelled: bool = False, reason: str | None = None
    ) -> None:
        try:
            child.log.close()
        except OSError as err:  # the last buffered bytes could not be written
            self._fault(child.task.run_dir / LOG_FILE, err)
        if child.gpu is not None:
            self._gpu_load[child.gpu] -= 1
        state, reason = run_outcome(
            code,
            finished=succeeded(code, child.task.run_dir, child.task.done_file, stopped=cancelled),
            cancelled=cancelled,
            cancel_reason=reason or "interrupted; resume with --rerun-failed",
            done_file=child.task.done_file,
        )
        status = replace(child.status, state=state, exit_code=code, ended=utc_now(), reason=reason)
        _signal_group(child, signal.SIGKILL)  # the supervisor ended it; nothing of the run outlives it
        self._write(child.task.run_dir, status)
        # released only now: until its end is recorded, nobody else may start the run
        runlock.release(child.lock_fd)
        self._status[child.task.name] = status

    def _write(self, run_dir: Path, status: RunStatus) -> None:
        """write_status, but a disk error is a fault of this invocation (reported at the end, exit 2),
        never a crash that would leave the other runs unwatched."""
        try:
            write_status(run_dir, status)
        except OSError as err:
            self._fault(run_dir / STATUS_FILE, err)

    def _fault(self, path: Path, err: OSError) -> None:
        self.faults.append(f"could not write {path}: {err.strerror or err}")
        # what failed here (a full or read-only disk) would fail every run started after it
        while self._queue:
            task = self._queue.popleft()
            self._status[task.name] = RunStatus(
                RunState.SKIPPED, self.name, reason="not started: sweepgen could not write its files"
            )


def _signal_group(child: _Child, sig: signal.Signals) -> None:
    _signal_pgid(child.proc.pid, sig)


def _signal_pgid(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group has already exited
        os.killpg(pgid, sig)


def _proc_start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks (Linux /proc), to tell a pid from a recycled one.
    None when the process does not exist; -1 where /proc is unavailable (then the pid alone decides)."""
    if not Path("/proc/self/stat").exists():
        return _pid_exists(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after its closing paren
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None  # a zombie has finished; it only waits to be reaped
    return int(fields[19])


def _pid_exists(pid: int) -> int | None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return -1
    return -1
