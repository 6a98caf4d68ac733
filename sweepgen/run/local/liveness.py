"""Whether a local run's supervisor is alive, and asking it to stop its run from any process of
this machine: the supervisor is the very process a status file names only if its pid exists and
started at the time recorded in this boot of the machine (a recycled pid belongs to another process;
after a reboot pids and start times count again from the start), and it stops and records
its run only if it wrote that status (a trainer group recorded beside its pid).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from sweepgen.errors import SweepgenError
from sweepgen.run.core import advice, runlock
from sweepgen.run.core.base import RunState, RunStatus, read_status, this_host, utc_now, write_status
from sweepgen.run.core.boot_clock import boot_id
from sweepgen.run.core.stopping import stop_request
from sweepgen.run.local.supervise import COMM, MARK, RUN_DIR, STARTING, mark_of

EXECUTOR = "local"  # LocalExecutor.name
# in the ids of the status `status` shows for a run whose folder was deleted under it (orphan_status)
ORPHAN = "orphan"


def supervisor_alive(status: RunStatus) -> bool:
    """Whether the supervisor a local ``running`` status names still exists, or, where it died
    (SIGKILL), processes its trainer started still run (ranks in sessions of their own, children
    the trainer left): the run is not over, and a second start would run beside them."""
    return _supervisor_process_alive(status) or bool(leftovers(status))


def _supervisor_process_alive(status: RunStatus) -> bool:
    """Whether the process a local ``running`` status names still exists."""
    pid, host = status.ids.get("pid"), status.ids.get("host")
    if host != this_host():
        return True  # cannot look at another machine: assume it runs rather than start it twice
    if not isinstance(pid, int):
        return False
    if _rebooted_since(status):
        return False  # the machine restarted since: a process of now only has the pid and start time
    started = proc_start_ticks(pid)
    if started is None:
        return False
    # a recycled pid belongs to a process that started at another time
    if status.ids.get("proc_start") not in (None, started):
        return False
    # the status file is data: a pid and start time read from /proc may name any live process,
    # which would keep the run `running` for ever (never started again, `cancel` unable to end it).
    # A status a supervisor wrote names a supervisor (an older sweepgen's run had none)
    return not by_supervisor(status) or is_supervisor(pid)


def supervisor_end_fd(status: RunStatus) -> int | None:
    """A pidfd of the supervisor a local ``running`` status names, readable once it has ended, while
    it lives on this machine; None otherwise (another host, no pid, no pidfd here, gone already, or
    only its trainer's leftovers run on). Opened first, then its liveness checked: a pid recycled
    before the open is never watched (one recycled after it names the supervisor that ended)."""
    pid = status.ids.get("pid")
    if status.ids.get("host") != this_host() or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # gone, or no pidfd on this platform or kernel
        return None
    if not _supervisor_process_alive(status):
        os.close(fd)
        return None
    return fd


def _rebooted_since(status: RunStatus) -> bool:
    """Whether the machine booted again since ``status`` was written (unknown either side: no)."""
    recorded, now = status.ids.get("boot_id"), boot_id()
    return recorded is not None and now is not None and recorded != now


def by_supervisor(status: RunStatus) -> bool:
    """Whether ``status`` says a supervisor that stops and records its run wrote it."""
    return "trainer_pgid" in status.ids or status.ids.get(STARTING) is True or RUN_DIR in status.ids


def is_supervisor(pid: int) -> bool:
    """Whether ``pid`` is a run's supervisor: named COMM, or run as ``python -m SUPERVISOR_MODULE``
    (Linux; elsewhere nothing more can be looked at, and it is taken to be one)."""
    if not os.path.isdir("/proc/self"):
        return True
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            if fh.read().strip() == COMM:
                return True
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return SUPERVISOR_MODULE.encode() in fh.read(_MAX_CMDLINE).split(b"\0")
    except OSError:
        return False


def request_stop(run_dir: Path, status: RunStatus, reason: str) -> bool:
    """Ask the supervisor a status file names to stop its run (the reason first, then SIGTERM):
    from any process of this machine, whether or not the `sweepgen run` that started it lives.
    False when it is not provably that run's live supervisor (another machine or executor, a
    recycled pid, a run recorded by an older sweepgen whose supervisor did not record its run)."""
    pid = status.ids.get("pid")
    if status.executor != EXECUTOR or status.ids.get("host") != this_host():
        return False
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
        return False
    if not _proven(run_dir, status, pid):
        return _end_leftovers(run_dir, status, reason)
    with contextlib.suppress(OSError):  # (a read-only run folder) the end then names the signal
        stop_request.ask(run_dir, reason)
    signal_pgid(pid, signal.SIGTERM)
    return True


def _proven(run_dir: Path, status: RunStatus, pid: int) -> bool:
    """Whether ``pid`` is provably the live supervisor of ``run_dir``'s run that ``status`` says."""
    if status.ids.get(ORPHAN) is True:  # proven by what it holds: the run's deleted lock
        return orphan_supervisor(run_dir) == pid
    if "trainer_pgid" not in status.ids and status.ids.get(STARTING) is not True:
        return False  # not written by a supervisor that stops and records its run (by_supervisor)
    # the status file is data: its pid may name any process. A folder moved while its run ran and
    # copied back (its status with it) holds a copy of the lock: the one held is where it was moved
    return _supervisor_process_alive(status) and (
        supervises(pid, run_dir) or orphan_supervisor(run_dir) == pid
    )


def _end_leftovers(run_dir: Path, status: RunStatus, reason: str) -> bool:
    """Where the run's supervisor died and processes its trainer started run on, kill them (nobody
    is left to give them a grace or record their end) and record the run cancelled. False when
    there are none."""
    if _supervisor_process_alive(status):
        return False  # alive, but not proven this run's: not ours to touch
    pids = kill_leftovers(status)
    if not pids:
        return False
    gone = status.ids.get("pid")
    why = f"{reason}; its supervisor (pid {gone}) had died: what it left running (pids {pids}) was killed"
    ended = replace(status, state=RunState.CANCELLED, ended=utc_now(), reason=why)
    _record_if_unchanged(run_dir, status, ended)
    return True


def _record_if_unchanged(run_dir: Path, seen: RunStatus, new: RunStatus) -> None:
    """Write ``new`` as the run's lock holder, only over the status ``seen`` (never another start's;
    its reason aside, which `status` may have said more in: running_note)."""
    with contextlib.suppress(OSError):  # (a read-only folder: `status` shows it lost, as it was)
        fd = runlock.acquire(run_dir, retry_s=0)
        if fd is None:
            return
        try:
            now = read_status(run_dir)
            if now is not None and replace(now, reason=seen.reason) == seen:
                write_status(run_dir, new)
        finally:
            runlock.release(fd)


# MARK of the processes of this machine, a look at /proc reused for this long (a sweep's statuses)
_MARKED_LOOK_S = 0.5
_marked: tuple[float, dict[str, list[int]]] | None = None


def leftovers(status: RunStatus, *, fresh: bool = False) -> list[int]:
    """The live processes of this machine that the supervisor ``status`` names started (its
    supervise.MARK in their environment), whether it lives or not: only this user's are visible."""
    global _marked
    mark = mark_of(status.ids)
    if mark is None or status.ids.get("host") != this_host() or not os.path.isdir("/proc/self"):
        return []
    now = time.monotonic()
    if fresh or _marked is None or now - _marked[0] > _MARKED_LOOK_S:
        _marked = (now, _marks())
    return sorted(_marked[1].get(mark, []))


def leftovers_note(status: RunStatus) -> str | None:
    """What is known of a ``running`` run whose supervisor died while what it started runs on."""
    if _supervisor_process_alive(status):
        return None
    pids = leftovers(status)
    if not pids:
        return None
    # a rank still training and a helper that never exits (a logging service such as wandb-core)
    # look alike from here (both are children of the trainer in sessions of their own, with its
    # environment and its log), so the run is kept running rather than started beside a rank;
    # the processes are named so the user can tell, and told what ends them
    return (
        f"its supervisor (pid {status.ids.get('pid')}) died and its trainer{_pid_of(status)} with "
        f"it; what its trainer started still runs "
        f"(pids {pids}: {_named(pids)}): if that is only a helper (a logging service) the run is "
        f"over and `sweepgen cancel --only RUN` ends it and records it cancelled{advice.AFTER_CANCEL.grid}; "
        f"a rank still trains: its end is recorded by nobody, so {advice.LET_IT_END.grid} "
        "`sweepgen cancel` it"
    )


def _pid_of(status: RunStatus) -> str:
    pgid = status.ids.get("trainer_pgid")
    return f" (pid {pgid})" if isinstance(pgid, int) else ""


def _named(pids: list[int]) -> str:
    """Each pid's command (its first word and the script it runs, as ``ps`` shows them)."""
    return ", ".join(f"{pid} {_command_of(pid)}" for pid in pids)


def _command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = [w.decode(errors="replace") for w in fh.read(4096).split(b"\0") if w]
    except OSError:
        return "(gone)"
    words = " ".join(os.path.basename(w) if i == 0 else w for i, w in enumerate(argv[:3]))
    return " ".join(words.split())[:80] or "?"


def kill_leftovers(status: RunStatus) -> list[int]:
    """SIGKILL the leftovers of the dead supervisor ``status`` names; their pids."""
    pids = leftovers(status, fresh=True)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return pids


_MARK_ENTRY = MARK.encode() + b"="


def _marks() -> dict[str, list[int]]:
    """Each supervisor MARK found in the environment of a live process, with those processes."""
    found: dict[str, list[int]] = {}
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        with contextlib.suppress(OSError):  # gone meanwhile, or another user's
            with open(f"{entry.path}/environ", "rb") as fh:
                env = fh.read(1 << 18)
            for var in env.split(b"\0"):
                if var.startswith(_MARK_ENTRY):
                    found.setdefault(var[len(_MARK_ENTRY) :].decode(errors="replace"), []).append(
                        int(entry.name)
                    )
    return found


SUPERVISOR_MODULE = "sweepgen.run.local.supervise"  # executor.SUPERVISOR's module
_MAX_CMDLINE = 1 << 16


def supervises(pid: int, run_dir: Path) -> bool:
    """Is ``pid`` the supervisor of ``run_dir``'s run? A status file (in a shared runs folder, from a
    pull request) may name any pid with its start time read from /proc, so the pid and time alone
    would let it have `sweepgen cancel` signal any process group of the user. Proven on Linux: the
    process runs ``python -m sweepgen.run.local.supervise LOCK_FD ...`` and its LOCK_FD is open on
    this run's lock file (same device and inode); or, for a supervisor forked from a `sweepgen run`
    whose command line was too short to rewrite (run/local/forked.py), its name is ``COMM`` and one
    of its descriptors is open on that lock file. Without /proc (macOS) nothing more can be looked
    at, and the pid and start time decide, as before."""
    if not Path("/proc/self/cmdline").exists():
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read(_MAX_CMDLINE).split(b"\0")
        ours = os.lstat(run_dir / runlock.RUN_LOCK_NAME)
        if SUPERVISOR_MODULE.encode() in argv:
            fds = [argv[argv.index(SUPERVISOR_MODULE.encode()) + 1].decode()]
        elif Path(f"/proc/{pid}/comm").read_text().strip() == COMM:
            fds = os.listdir(f"/proc/{pid}/fd")  # (a supervisor: a handful)
        else:
            return False
    except (OSError, ValueError, IndexError):
        return False
    for fd in fds:
        with contextlib.suppress(OSError, ValueError):
            held = os.stat(f"/proc/{pid}/fd/{int(fd)}")
            if (held.st_dev, held.st_ino) == (ours.st_dev, ours.st_ino):
                return True
    return False


def orphan_supervisor(run_dir: Path, found: dict[str, int] | None = None) -> int | None:
    """The pid of a live supervisor of this machine that runs ``run_dir``'s run from a lock file
    that is no longer there: deleted with the run folder (the folder may have been made again since)
    or moved with it (``mv``). That run is not over, though nothing in the folder says so, and the
    lock found at ``run_dir`` no longer keeps a second start out. None where there is none, or where
    /proc cannot tell (only this user's processes can be looked into: another user's supervisor holds
    their own runs). ``found``: orphan_locks() already looked up."""
    locks = orphan_locks() if found is None else found
    return locks.get(os.path.join(os.path.realpath(run_dir), runlock.RUN_LOCK_NAME))


def orphan_locks() -> dict[str, int]:
    """The run lock files (by the path each had when its run started) that live supervisors of this
    machine hold after they were deleted or moved away, each with the supervisor's pid: one look at
    /proc for every run of a sweep."""
    found: dict[str, int] = {}
    for pid, targets in _supervisors_locks():
        for target in targets:
            home = _started_at(pid, target)
            if home is not None:
                found[home] = pid
    return found


def supervised_folders() -> list[str]:
    """The run folders (where they are now) that live supervisors of this machine run: those of
    this user (/proc; none where there is no /proc)."""
    return [
        os.path.dirname(target)
        for _, targets in _supervisors_locks()
        for target in targets
        if not target.endswith(_DELETED_LOCK)
    ]


def _supervisors_locks() -> Iterator[tuple[int, list[str]]]:
    """Each live supervisor of this machine (named COMM) with the run lock files it holds."""
    if not os.path.isdir("/proc/self/fd"):
        return
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:  # gone meanwhile, or not ours to look into
            with open(f"{entry.path}/comm", encoding="utf-8", errors="replace") as fh:
                if fh.read().strip() != COMM:
                    continue
            held = _held_locks(int(entry.name))
        except OSError:
            continue
        yield int(entry.name), held


def _held_locks(pid: int) -> list[str]:
    """Where the run lock files ``pid`` holds open are now (/proc/PID/fd's names)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.endswith((_DELETED_LOCK, _LOCK)):
                found.append(target)
    return found


def _held_fd(pid: int, target: str) -> str | None:
    """The ``/proc/PID/fd/N`` by which supervisor ``pid`` holds the file now at ``target``."""
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return f"/proc/{pid}/fd/{fd}"
    return None


def _started_at(pid: int, target: str) -> str | None:
    """The path the lock file now at ``target`` had when supervisor ``pid`` started its run, where
    that is not ``target``: deleted (/proc names it by its last path), or moved (the status the
    supervisor wrote in the folder it holds names the folder it was started for)."""
    if target.endswith(_DELETED_LOCK):
        return target.removesuffix(_DELETED)
    folder = os.path.dirname(target)
    home = _recorded_home(pid, folder)
    return None if home in (None, folder) else os.path.join(str(home), runlock.RUN_LOCK_NAME)


def _recorded_home(pid: int, folder: str) -> str | None:
    """The run folder supervisor ``pid`` was started for: as the lock file it holds in ``folder``
    records it (``runlock.record_home``: only this user writes it), else (a lock written by an
    older sweepgen, or one another user could write) as the status in ``folder`` says, where that
    status proves it: this user's own file (``runfs.is_own``: nobody else wrote it) naming this very
    supervisor (its pid and start time). A status anyone else could have written (a shared runs
    folder's, left group-writable by a umask of 002, or planted) proves nothing: the supervisor is
    then taken as running the folder it holds, never as moved from where that status says."""
    held = _held_fd(pid, os.path.join(folder, runlock.RUN_LOCK_NAME))
    home = runlock.recorded_home(held) if held is not None else None
    if home is not None:
        return home
    try:
        status = read_status(Path(folder), own_only=True)
    except (OSError, SweepgenError):
        return None
    ids, started = (status.ids if status is not None else {}), proc_start_ticks(pid)
    if started is None or (ids.get("pid"), ids.get("proc_start")) != (pid, started):
        return None
    home = ids.get(RUN_DIR)
    return home if isinstance(home, str) else None


_LOCK = os.sep + runlock.RUN_LOCK_NAME
_DELETED = " (deleted)"  # how /proc/PID/fd names a file whose last name was removed
_DELETED_LOCK = _LOCK + _DELETED


def moved_to(pid: int, run_dir: Path) -> str | None:
    """The folder supervisor ``pid`` runs ``run_dir``'s run in now, where that folder was moved (not
    deleted) while it ran."""
    ours = os.path.join(os.path.realpath(run_dir), runlock.RUN_LOCK_NAME)
    with contextlib.suppress(OSError):
        for target in _held_locks(pid):
            if not target.endswith(_DELETED_LOCK) and _started_at(pid, target) == ours:
                return os.path.dirname(target)
    return None


def orphan_status(pid: int, proc_start: int | None = None, moved: str | None = None) -> RunStatus:
    """What `status` shows for a run an orphan supervisor runs (its folder's status file is gone, or
    is in the folder it was ``moved`` to)."""
    ids = {"pid": pid, "pgid": pid, "host": this_host(), "proc_start": proc_start, ORPHAN: True}
    how = f"moved to {moved}" if moved is not None else "deleted"
    reason = f"its run folder was {how} while it ran; its supervisor (pid {pid}) still runs it"
    return RunStatus(RunState.RUNNING, EXECUTOR, reason=reason, ids=ids)


def signal_pgid(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group has already exited
        os.killpg(pgid, sig)


def proc_start_ticks(pid: int) -> int | None:
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


def is_stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (SIGSTOP, Ctrl-Z): alive, but acting on nothing until SIGCONT."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")


def _pid_exists(pid: int) -> int | None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return -1
    return -1
