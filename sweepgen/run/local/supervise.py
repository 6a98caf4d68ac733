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

The start is recorded (``running``, no trainer group yet) before the trainer exists, and room for
the end is kept on disk (end_room.py) before that: a supervisor killed at any point leaves either
no trace of a start (nothing was started) or a record of one, and a disk that fills up while the
run trains still takes its end.

Exit status: 0 once the end is recorded; 75 when it could not be (the status file could not be
written: the `sweepgen run` that started it, if alive, reports the fault), 76 when that end was
"finished" (its `sweepgen run` shows it finished, not failed), 77 when nothing was started (its
start could not be recorded), 78 when the end was recorded only in the room kept for it (the disk
is full), 79 when nothing was started or written because a `sweepgen cancel` asked to drop it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sweepgen.fs import filenames
from sweepgen.run.core import advice, boot_clock, end_room
from sweepgen.run.core.boot_clock import boot_id
from sweepgen.run.core.outcome import TRAINER_END, run_outcome, signal_name, succeeded
from sweepgen.run.core.stopping import queue_cancel, stop_request
from sweepgen.run.local import pgroup
from sweepgen.run.logs import trainer_states

STATUS_FILE = filenames.STATUS
LOG_FILE = filenames.LOG
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
NOT_RECORDED = 75  # EX_TEMPFAIL: the end could not be written
# the end could not be written, and it is "finished": its `sweepgen run` says so instead of "failed"
FINISHED_NOT_RECORDED = 76
# nothing was started: the run's start (or the room kept for its end, end_room.py) could not be
# written; the status file is as the supervisor found it
NOT_STARTED = 77
# the end is recorded, over the room kept for it (end_room.py): the disk is full, and its `sweepgen
# run` says so (exit 2) and starts nothing more
IN_SPARE = 78
# this process's name (/proc/PID/comm, `ps -o comm`; 15 bytes at most): with the run's lock held, what
# proves a process to be a run's supervisor (liveness.supervises) where its command line cannot
# (a supervisor forked from a `sweepgen run` whose command line was too short to rewrite)
COMM = "sweepgen-superv"
# in the ids of the status a supervisor writes before its trainer exists (no trainer group yet)
STARTING = "starting"
# in the ids of every status a supervisor writes: the run folder it was started for (a real path)
RUN_DIR = "run_dir"
# in the environment of the trainer, and so of whatever it starts (ranks in sessions of their own
# included): the supervisor that started it (mark_of). A supervisor killed with SIGKILL takes only
# its trainer with it; what the trainer started is found by this mark (liveness.leftovers)
MARK = "SWEEPGEN_SUPERVISOR"
# nothing was started and nothing written: a `sweepgen cancel` asked to drop the run while its
# start was under way (queue_cancel.py); its `sweepgen run` shows it dropped, as a queued one
DROPPED_UNSTARTED = 79
# the reason of a run a `sweepgen cancel` dropped once its start was on record: never started
DROPPED = f"not started: cancelled by `sweepgen cancel` as its start was under way; {advice.START.grid}"
# the same, asked by `sweepgen cancel --only RUN` (that run alone), as queue_cancel.DROPPED_ALONE
DROPPED_ALONE = (
    "not started: cancelled by `sweepgen cancel` (--only: this run alone) as its start was under way; "
    f"{advice.START.grid}"
)
# the reason a drop read once `running` is on record is recorded with, by who asked it
_RECORDED_DROP = {queue_cancel.DROPPED: DROPPED, queue_cancel.DROPPED_ALONE: DROPPED_ALONE}
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
        if self._limit_due(now):
            self.timed_out = True
            self._terminate()
        if self._kill_due(now):
            self._kill()
        due = [t - now for t in (self.limit_at, None if self.killed else self.kill_at) if t is not None]
        return max(0.01, min([_TICK_S, *due]))

    def _limit_due(self, now: float) -> bool:
        """Whether the time limit has passed on a trainer still running and not stopped already (a
        trainer that exited as the limit passed finished by itself: not timed out)."""
        return (
            self.limit_at is not None
            and now >= self.limit_at
            and not self.stopped
            and not self.trainer_ended()
        )

    def _kill_due(self, now: float) -> bool:
        return self.pgid is not None and self.kill_at is not None and now >= self.kill_at and not self.killed

    def _kill(self) -> None:
        assert self.pgid is not None
        self.killed = True
        pgroup.signal_group(self.pgid, signal.SIGKILL)


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


def _say(text: str) -> None:
    """A line in run.log (this process's stdout); lost, never fatal, where the disk takes none."""
    with contextlib.suppress(OSError, ValueError):
        print(text, flush=True)


def _write(run_dir: Path, status: dict[str, Any], spare: int | None = None) -> int | None:
    """Write ``status``: 0, or IN_SPARE where the disk is full and ``spare`` (end_room.py) took it;
    None (said in run.log) where it could not be written."""
    try:
        return IN_SPARE if end_room.write_status(run_dir, _encoded(status), spare) else 0
    except OSError as err:
        _say(f"sweepgen: could not write {run_dir / STATUS_FILE}: {err.strerror or err}")
        return None


def _encoded(status: dict[str, Any]) -> bytes:
    return (json.dumps(status, indent=2, sort_keys=True) + "\n").encode()


def _record_end(run_dir: Path, ended: dict[str, Any], spare: int) -> int:
    """Record the run's end; this process's exit status (above)."""
    ended = _with_elapsed(ended)
    written = _write(run_dir, ended, spare)
    if written is not None:
        return written
    # said in run.log, which the disk may still take: the status file keeps "running" (shown lost)
    how = ended["reason"] or f"exit code {ended['exit_code']}"
    _say(f"sweepgen: the run ended {ended['state']} ({how}); that could not be recorded")
    return FINISHED_NOT_RECORDED if ended["state"] == "finished" else NOT_RECORDED


def _with_elapsed(ended: dict[str, Any]) -> dict[str, Any]:
    """``ended`` with how long the run ran by the boot clock (boot_clock.py), where it can tell."""
    start, now = ended["ids"].get(boot_clock.BOOT_S), boot_clock.now_s()
    if not isinstance(start, float) or now is None:
        return ended
    return {**ended, "ids": {**ended["ids"], boot_clock.ELAPSED_S: round(max(0.0, now - start), 3)}}


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
    stopped it): the stop request's reason, read when a stop came, or when the trainer died of a
    signal and the request is one to stop at once (`sweepgen run`'s own hard stop, which kills the
    trainer itself), else the stop signal its supervisor got. A graceful request whose signal never
    came (its asker died in between) does not make a crash or an out-of-memory kill a cancel."""
    killed = code < 0 and not stop_request.is_graceful(run_dir)
    asked = stop_request.reason(run_dir) if stops.stopped or killed else None
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


def supervise(job: dict[str, Any], argv: list[str], lock_fd: int | None = None) -> int:
    """Run ``argv`` as the run ``job`` describes and record how it ended; the exit status above.
    ``lock_fd``: the run's lock, which tells where its folder is if it was moved while it ran."""
    run_dir = Path(job["run_dir"])
    stops = _Stops(run_dir, float(job.get("stop_timeout_s", 60.0)), job.get("time_limit_s"))
    for sig in STOP_SIGNALS:
        signal.signal(sig, stops.on_signal)
    # a supervisor forked from `sweepgen run` (forked.py) starts with them blocked, so that none is
    # lost or handled by the wrong handler before this point; a pending one is handled now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    pgroup.become_subreaper()
    dropped = _cancelled_while_starting(run_dir, job.get("started_s"))
    if dropped is not None:  # nothing written: as it was
        _say(f"sweepgen: {dropped}")
        return DROPPED_UNSTARTED
    status = _starting(job["status"], stops)
    try:
        spare = end_room.reserve(run_dir)  # no room for the end: the run is not started
    except OSError as err:
        _say(f"sweepgen: the run was not started: could not keep room for its record: {err.strerror or err}")
        return NOT_STARTED
    try:
        return _supervised(job, argv, status, stops, spare, lock_fd)
    finally:
        end_room.discard(run_dir, spare)


def _starting(status: dict[str, Any], stops: _Stops) -> dict[str, Any]:
    """The run's status as this supervisor starts it: every status it writes names it (its pid), so
    its `sweepgen run` knows the end it finds for its own and never overwrites it
    (executor._is_end_of); no trainer group yet, so it says it is starting."""
    me = os.getpid()
    ids = {**status.get("ids", {}), "pid": me, "pgid": os.getpgrp(), "proc_start": _proc_start(me)}
    ids["boot_id"] = boot_id()  # a pid and start time name this process only until the next boot
    # where it started on the boot clock: its elapsed time is then right whatever the wall clock does
    ids[boot_clock.BOOT_S] = boot_clock.now_s()
    # the trainer states an earlier attempt left: the step shown is never one of theirs
    ids[trainer_states.BEFORE] = trainer_states.present(stops.run_dir)
    if ids[trainer_states.BEFORE] is None:
        _say(trainer_states.not_recorded())
    ids["stop_timeout_s"] = stops.stop_timeout_s  # how long `sweepgen cancel` waits for the end
    # the folder it was started for: one moved while it runs still says whose run it holds
    # (liveness.orphan_locks), so the next `sweepgen run` does not start that run a second time
    ids[RUN_DIR] = os.path.realpath(stops.run_dir)
    return {**status, "ids": {**ids, STARTING: True}}


def _supervised(
    job: dict[str, Any],
    argv: list[str],
    status: dict[str, Any],
    stops: _Stops,
    spare: int,
    lock_fd: int | None,
) -> int:
    run_dir = Path(job["run_dir"])
    # recorded before the trainer exists: a supervisor killed from here on leaves a run that is
    # `running` under a dead supervisor (lost, shown failed), never a start without a record
    if _write(run_dir, status) is None:
        return NOT_STARTED
    before = _ended_before_trainer(job, status, stops, spare)
    if before is not None:
        return before
    try:
        setup = pgroup.in_own_group_dying_with(os.getpid())  # a preexec_fn is safe here: one thread
        env = {**os.environ, MARK: mark_of(status["ids"]) or ""}
        trainer = subprocess.Popen(argv, stdin=subprocess.DEVNULL, preexec_fn=setup, env=env)
    except OSError as err:
        _say(f"sweepgen: could not start the run: {err}")
        why = f"could not start: {err.strerror or err}"
        return _record_end(run_dir, {**status, **_end("failed", None), "reason": why}, spare)
    stops.pgid = trainer.pid
    status = {**status, "ids": {**_without_starting(status), "trainer_pgid": trainer.pid}}
    if stops.signal is not None:  # a stop came before the trainer existed: it gets it now
        pgroup.signal_group(trainer.pid, signal.SIGTERM)
    if _write(run_dir, status) is None:  # its group unknown to a `cancel`: it is not let run
        pgroup.end_group(trainer.pid)
        code = trainer.wait()
        why = "its start could not be recorded (run.log says why); it was stopped"
        return _record_end(run_dir, {**status, **_end("failed", code), "reason": why}, spare)
    return _ran(job, status, trainer, stops, spare, lock_fd)


def _ran(
    job: dict[str, Any],
    status: dict[str, Any],
    trainer: subprocess.Popen[bytes],
    stops: _Stops,
    spare: int,
    lock_fd: int | None,
) -> int:
    """The started trainer waited for, and its run's end recorded (where its folder went too)."""
    run_dir = Path(job["run_dir"])
    code = _wait(trainer, stops)
    ended = _ended(job, status, code, stops)
    # on record before the rest of its group is ended (a wait a process stuck in the kernel makes
    # long): a supervisor killed from here on leaves how its trainer ended, not a "lost" run
    with contextlib.suppress(OSError):  # (a full or read-only disk: the end's record says it)
        end_room.write_status(run_dir, _encoded(_with_trainer_end(status, ended)), None)
    pgroup.end_group(trainer.pid)  # whatever it left in its group: the run is over only when all is
    recorded = _record_end(run_dir, ended, spare)
    moved = _record_where_moved(run_dir, ended, lock_fd)
    if moved is not None and recorded in (NOT_RECORDED, FINISHED_NOT_RECORDED):
        # (a link put in the folder's place): this log is in the moved folder, beside that record
        _say(f"sweepgen: the end is recorded in {moved}, where the run's folder was moved while it ran")
    return recorded


def _ended_before_trainer(
    job: dict[str, Any], status: dict[str, Any], stops: _Stops, spare: int
) -> int | None:
    """A stop signal, or a `cancel`'s request to drop the run (asked in the instant since the look
    before the start was recorded), that came before the trainer exists: the run is recorded
    cancelled and never started (this process's exit status); None when neither came."""
    run_dir = Path(job["run_dir"])
    if stops.signal is not None:
        reason, _ = _asked(run_dir, 0, stops)
    else:
        dropped = _cancelled_while_starting(run_dir, job.get("started_s"))
        if dropped is None:
            return None
        reason = _RECORDED_DROP[dropped]
    ended = {**status, "ids": _without_starting(status), **_end("cancelled", None), "reason": reason}
    return _record_end(run_dir, ended, spare)


def _cancelled_while_starting(run_dir: Path, started_s: object) -> str | None:
    """The drop's reason (queue_cancel's: a whole cancel's or `--only`'s) where a `sweepgen cancel`
    asked since its `sweepgen run` started (``started_s``, on the boot clock) to drop this run
    (queue_cancel.py); None where none did. Read once `running` is on record: a `cancel`
    that looked before that, and found the run's start under way, wrote its request first, so it
    is read here; one that looks after sees the run running and stops it. However long the `run`
    was held up before handing the run over (SIGSTOP, a loaded machine: `cancel` stops waiting for
    the start after a while and says the run is dropped), its trainer is never started then."""
    if isinstance(started_s, bool) or not isinstance(started_s, (int, float)):
        return None  # a `run` that hears no request (a search's controller)
    return queue_cancel.asked_since(run_dir.parent, float(started_s)).get(run_dir.name)


def _record_where_moved(run_dir: Path, ended: dict[str, Any], lock_fd: int | None) -> str | None:
    """The end, also in the folder the run's folder was moved to while it ran (its log, its lock
    and its `running` status are there; the end went to the folder it was started in, as for a
    deleted one, so the run is not started there again); that folder where it took it."""
    moved = end_room.moved_to(lock_fd, ended["ids"].get(RUN_DIR) or os.path.realpath(run_dir))
    if moved is None:
        return None
    try:
        end_room.write_status(moved, _encoded(ended), None)
    except OSError:
        return None
    return str(moved)


def _with_trainer_end(status: dict[str, Any], ended: dict[str, Any]) -> dict[str, Any]:
    """``status``, still `running`, saying how its trainer ended (``ended``: the end to record)."""
    known = {k: ended[k] for k in ("state", "exit_code", "ended", "reason")}
    return {**status, "ids": {**status["ids"], TRAINER_END: known}}


def mark_of(ids: dict[str, Any]) -> str | None:
    """The MARK of the processes started by the supervisor ``ids`` name (a status's): its boot, pid
    and start time, which name one process of one boot."""
    pid, start = ids.get("pid"), ids.get("proc_start")
    if not isinstance(pid, int) or not isinstance(start, int):
        return None
    return f"{ids.get('boot_id')}/{pid}/{start}"


def _without_starting(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status["ids"].items() if k != STARTING}


def _end(state: str, code: int | None) -> dict[str, Any]:
    return {"state": state, "exit_code": code, "ended": _utc_now()}


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
    return supervise(job, argv[3:], lock_fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
