"""The supervisor of one local run: ``python -m sweepgen.run.local.supervise LOCK_FD JOB_FD -- ARGV...``.

The local executor starts this small process (in a session of its own) instead of the trainer, hands
it the run's lock (runlock.py) and, through the pipe JOB_FD, the run's status as it starts (the
status file's fields), its stop timeout and time limit. The supervisor is what outlives the run, so
it is the one that records it:

- it holds the lock for the run's whole life, also when `sweepgen run` dies meanwhile; the trainer
  and whatever it forks never get it (the descriptor is not inheritable), so a logging service the
  trainer leaves behind cannot keep a failed run "running";
- it starts the trainer in a process group of its own (pgroup.py), which gets SIGKILL if the
  supervisor itself is killed, and writes the run's status, ``running`` with both pids;
- a stop signal to the supervisor (SIGTERM, SIGINT, SIGHUP: `sweepgen cancel`, a `sweepgen run`
  that is interrupted or prunes, or anyone's ``kill PID``) is passed to the trainer's group once as
  SIGTERM (the bundled trainer then saves a checkpoint); after the stop timeout, or at a second stop
  signal (unless the request on file is a graceful one, which may come twice: stop_request.py), the
  group gets SIGKILL. The run ends cancelled, with the reason its stopper left
  (stop_request.py) or the signal's name;
- past its time limit the trainer is stopped the same way and the run ends failed, "timed out";
- when the trainer exits, the rest of its group is killed and waited for, then the end (state, exit
  code or signal, end time, reason) is written to the status file, and only then, when the
  supervisor exits, is the lock released.

Exit status: 0 once the end is recorded; 75 when it could not be (the status file could not be
written: the `sweepgen run` that started it, if alive, reports the fault), 76 when that end was
"finished" (its `sweepgen run` shows it finished, not failed).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sweepgen import filenames, runfs
from sweepgen.run.core import stop_request
from sweepgen.run.core.outcome import run_outcome, signal_name, succeeded
from sweepgen.run.local import pgroup

STATUS_FILE = filenames.STATUS
LOG_FILE = filenames.LOG
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
NOT_RECORDED = 75  # EX_TEMPFAIL: the end could not be written
# the end could not be written, and it is "finished": its `sweepgen run` says so instead of "failed"
FINISHED_NOT_RECORDED = 76
# this process's name (/proc/PID/comm, `ps -o comm`; 15 bytes at most): with the run's lock held, what
# proves a process to be a run's supervisor (liveness.supervises) where its command line cannot
# (a supervisor forked from a `sweepgen run` whose command line was too short to rewrite)
COMM = "sweepgen-superv"
BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"
_TICK_S = 0.5  # the longest the wait for the trainer goes without looking at its deadlines


class _Stops:
    """What has been asked of the trainer: the stop signals that reached the supervisor, and the
    deadlines they set. Signal handlers only set fields and signal the group."""

    def __init__(self, run_dir: Path, stop_timeout_s: float, time_limit_s: float | None) -> None:
        self.run_dir = run_dir
        self.stop_timeout_s = stop_timeout_s
        self.limit_at = time.monotonic() + time_limit_s if time_limit_s is not None else None
        self.time_limit_s = time_limit_s
        self.pgid: int | None = None  # the trainer's group, once started
        self.signal: int | None = None  # the first stop signal received
        self.timed_out = False
        self.kill_at: float | None = None  # SIGKILL the group at this time
        self.killed = False

    @property
    def stopped(self) -> bool:
        """A stop signal came, or the time limit passed."""
        return self.signal is not None or self.timed_out

    def on_signal(self, signum: int, frame: object) -> None:
        if self.trainer_ended():
            # the stop came after the trainer had exited (while its end was being recorded): too
            # late to stop anything, so it does not turn a finished run into a cancelled one
            return
        if self.stopped:  # asked again: stop waiting for it, unless it is a graceful request again
            if not stop_request.is_graceful(self.run_dir):
                self.kill_at = time.monotonic()
        else:
            self.signal = signum
            self._terminate()
        self.act()

    def trainer_ended(self) -> bool:
        """Whether the trainer has exited (reaped or not; never reaped here)."""
        if self.pgid is None or not hasattr(os, "waitid"):
            return False
        try:
            return os.waitid(os.P_PID, self.pgid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # reaped already
            return True

    def _terminate(self) -> None:
        self.kill_at = time.monotonic() + self.stop_timeout_s
        if self.pgid is not None:
            pgroup.signal_group(self.pgid, signal.SIGTERM)

    def act(self) -> float:
        """Do what is due; the seconds until the next deadline (at most a tick)."""
        now = time.monotonic()
        if self.limit_at is not None and now >= self.limit_at and not self.stopped:
            self.timed_out = True
            self._terminate()
        if self.pgid is not None and self.kill_at is not None and now >= self.kill_at and not self.killed:
            self.killed = True
            pgroup.signal_group(self.pgid, signal.SIGKILL)
        due = [t - now for t in (self.limit_at, None if self.killed else self.kill_at) if t is not None]
        return max(0.01, min([_TICK_S, *due]))


def _utc_now() -> str:
    """base.utc_now's format, without importing datetime (a start-up cost for every run)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}+00:00"


def _proc_start(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def boot_id() -> str | None:
    """This boot's id (Linux): a status written before the machine restarted names processes that
    are all gone, whatever process now has their pid and start time (both count from the boot)."""
    try:
        with open(BOOT_ID_FILE, encoding="ascii") as fh:
            return fh.read(64).strip() or None
    except (OSError, ValueError):
        return None


def _write(run_dir: Path, status: dict[str, Any]) -> bool:
    try:
        data = (json.dumps(status, indent=2, sort_keys=True) + "\n").encode()
        runfs.write_atomic(run_dir / STATUS_FILE, data)  # never through a link on the way
    except OSError as err:
        print(f"sweepgen: could not write {run_dir / STATUS_FILE}: {err.strerror or err}", flush=True)
        return False
    return True


def _ended(job: dict[str, Any], status: dict[str, Any], code: int, stops: _Stops) -> dict[str, Any]:
    run_dir, done_file = Path(job["run_dir"]), status.get("done_file")
    asked, cancelled = _asked(run_dir, code, stops)
    limit = f"{stops.time_limit_s:g} s" if stops.time_limit_s is not None else ""
    state, reason = run_outcome(
        code,
        finished=succeeded(code, run_dir, done_file, stopped=stops.stopped or cancelled),
        timed_out=stops.timed_out,
        cancelled=cancelled,
        cancel_reason=asked or "cancelled",
        done_file=done_file,
        timeout_reason=f"timed out (time limit {limit}; raise resources.time or --time-limit)",
    )
    if state != "finished" and not (run_dir / LOG_FILE).is_file():
        # the folder (or its log) went away under the run: the likeliest cause of its failure
        reason = f"{reason}; its run directory {run_dir} was deleted while it ran"
    return {**status, "state": state, "exit_code": code, "ended": _utc_now(), "reason": reason}


def _asked(run_dir: Path, code: int, stops: _Stops) -> tuple[str | None, bool]:
    """Why the run was stopped, and whether it counts as cancelled (never when its time limit
    stopped it): the stop request's reason, read when a stop came or the trainer died of a signal,
    else the stop signal its supervisor got."""
    asked = stop_request.reason(run_dir) if stops.stopped or code < 0 else None
    cancelled = not stops.timed_out and (stops.signal is not None or asked is not None)
    if asked is None and stops.signal is not None:
        asked = f"cancelled by {signal_name(stops.signal)} to its supervisor (pid {os.getpid()})"
    return asked, cancelled


def _wait(trainer: subprocess.Popen[bytes], stops: _Stops) -> int:
    """The trainer's exit status, doing what is due meanwhile. Woken the moment it exits (a pidfd,
    readable then), not by ``Popen.wait``'s polling (up to 50 ms late at each run's end); a stop
    signal is acted on by its handler."""
    try:
        fd: int | None = os.pidfd_open(trainer.pid)
    except (AttributeError, OSError):  # (no pidfd on this platform or kernel): Popen's polling
        fd = None
    try:
        while True:
            if fd is None:
                try:
                    return trainer.wait(timeout=stops.act())
                except subprocess.TimeoutExpired:
                    continue
            code = trainer.poll()
            if code is not None:
                return code
            select.select([fd], [], [], stops.act())
    finally:
        if fd is not None:
            os.close(fd)


def supervise(job: dict[str, Any], argv: list[str]) -> int:
    """Run ``argv`` as the run ``job`` describes and record how it ended; the exit status above."""
    run_dir = Path(job["run_dir"])
    status: dict[str, Any] = dict(job["status"])
    stops = _Stops(run_dir, float(job.get("stop_timeout_s", 60.0)), job.get("time_limit_s"))
    for sig in STOP_SIGNALS:
        signal.signal(sig, stops.on_signal)
    # a supervisor forked from `sweepgen run` (forked.py) starts with them blocked, so that none is
    # lost or handled by the wrong handler before this point; a pending one is handled now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    pgroup.become_subreaper()
    me = os.getpid()
    ids = {**status.get("ids", {}), "pid": me, "pgid": os.getpgrp(), "proc_start": _proc_start(me)}
    ids["boot_id"] = boot_id()  # a pid and start time name this process only until the next boot
    ids["stop_timeout_s"] = stops.stop_timeout_s  # how long `sweepgen cancel` waits for the end
    # every status this supervisor writes names it (its pid), so its `sweepgen run` knows the end it
    # finds for its own and never overwrites it (executor._is_end_of)
    status = {**status, "ids": ids}
    try:
        setup = pgroup.in_own_group_dying_with(me)  # a preexec_fn is safe here: one thread
        trainer = subprocess.Popen(argv, stdin=subprocess.DEVNULL, preexec_fn=setup)
    except OSError as err:
        print(f"sweepgen: could not start the run: {err}", flush=True)
        ended = {**status, "state": "failed", "exit_code": None, "ended": _utc_now()}
        written = _write(run_dir, {**ended, "reason": f"could not start: {err.strerror or err}"})
        return 0 if written else NOT_RECORDED
    stops.pgid = trainer.pid
    status = {**status, "ids": {**ids, "trainer_pgid": trainer.pid}}
    if stops.signal is not None:  # a stop came before the trainer existed: it gets it now
        pgroup.signal_group(trainer.pid, signal.SIGTERM)
    if not _write(run_dir, status):
        pgroup.end_group(trainer.pid)
        trainer.wait()
        return NOT_RECORDED
    code = _wait(trainer, stops)
    pgroup.end_group(trainer.pid)  # whatever it left in its group: the run is over only when all is
    ended = _ended(job, status, code, stops)
    if _write(run_dir, ended):
        return 0
    # said in run.log, which the disk may still take: the status file keeps "running" (shown lost)
    how = ended["reason"] or f"exit code {code}"
    print(f"sweepgen: the run ended {ended['state']} ({how}); that could not be recorded", flush=True)
    return FINISHED_NOT_RECORDED if ended["state"] == "finished" else NOT_RECORDED


def name_self() -> bool:
    """Name this process COMM (Linux); False where it cannot be."""
    try:
        with open("/proc/self/comm", "w", encoding="ascii") as fh:
            fh.write(COMM)
    except OSError:
        return False
    return True


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: python -m sweepgen.run.local.supervise LOCK_FD JOB_FD -- ARGV...", file=sys.stderr)
        return 2
    lock_fd, job_fd = int(argv[0]), int(argv[1])
    name_self()
    os.set_inheritable(lock_fd, False)  # the run's lock stays here, never in the trainer's processes
    with os.fdopen(job_fd, "rb") as pipe:
        raw = pipe.read()
    try:
        job = json.loads(raw)
    except ValueError:  # its `sweepgen run` died before handing the run over: nothing was started
        print("sweepgen: the `sweepgen run` that started this run died before handing it over", flush=True)
        return NOT_RECORDED
    return supervise(job, argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
