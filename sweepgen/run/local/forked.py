"""A run's supervisor forked from the `sweepgen run` that starts it, instead of a fresh Python.

Starting ``python -m sweepgen.run.local.supervise`` costs an interpreter start and its imports
(tens of ms on an idle core, most of a trial's refill on a loaded one); every module the supervisor
needs is already loaded in `sweepgen run`, so a ``fork`` without ``exec`` starts it in a few ms.
The child becomes exactly what the exec'd supervisor is, and nothing of `sweepgen run` is left in it:

- a session of its own (``setsid``), so a terminal's Ctrl-C or closing reaches only sweepgen, and it
  outlives `sweepgen run` as before (a child of it that is reparented when it dies);
- descriptors: stdin /dev/null, stdout and stderr the run's log, the run's lock and the job pipe;
  every other descriptor of `sweepgen run` (the search's owner lock, the journal, the terminal) is
  closed, so a supervisor never keeps a controller "alive" or a file open after `sweepgen run` died;
- its command line (``/proc/PID/cmdline``, what `ps` shows and ``liveness.supervises`` proves) is
  rewritten in place to the exec'd supervisor's, ``python -m sweepgen.run.local.supervise LOCK_FD
  JOB_FD -- ARGV...``, cut to the space the original had (the interpreter's path, then the
  trainer's arguments go first); its name (``/proc/PID/comm``) is ``supervise.COMM``, which with the
  run's lock proves it where even the module's name did not fit;
- the stop signals are blocked from before the fork until the supervisor's handlers are installed,
  so a SIGTERM at any moment is a stop, never the parent's handler or a death unrecorded;
- the objects inherited from `sweepgen run` are frozen out of the garbage collector (no finalizer of
  the parent's runs inside the child) and the child leaves through ``os._exit`` only.

Only where it is safe: a process with one thread (``fork`` copies only the calling thread; a lock
another thread held would stay held forever in the child) but for sweepgen's own idle ones (the
template sandbox's watchdog, which holds none), Linux with a writable own
``/proc/self/mem``. Anywhere else, or when neither its name nor its command line can be set, the
child ``exec``s the supervisor as before, so the result is the same process in every case.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Protocol

from sweepgen.run.local import supervise

MODULE = "sweepgen.run.local.supervise"
# the exec'd supervisor's command line (the fallback, and what the forked one shows)
# -P: the working folder (a checkout's, where `run` starts) is not put first on sys.path, so a
# committed `sweepgen/` (or any module the supervisor imports) is never run in place of the library's
EXEC_PREFIX = (sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-m", MODULE)
_STOPS = set(supervise.STOP_SIGNALS)
_INTERNAL = 70  # the child failed before supervising: the parent records the run's end
# threads of sweepgen that hold no lock a child could need: the template sandbox's watchdog
# (compile/template/sandbox.py) only sleeps and reads a deadline; the compile pipeline forks its
# render workers beside it too. Any other thread (one a caller of sweepgen started) rules a fork out.
_IDLE_THREADS = frozenset({"sweepgen-time-budget"})


class SupervisorProcess(Protocol):
    """What the local executor needs of a supervisor: ``subprocess.Popen``'s few members."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class Forked:
    """A forked supervisor, waited for as ``subprocess.Popen`` waits (``returncode`` negative for a
    signal; ``wait`` raises ``subprocess.TimeoutExpired``)."""

    def __init__(self, pid: int, args: Sequence[str]) -> None:
        self.pid = pid
        self.args = list(args)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            while self.returncode is None:
                self._reap(0)
            return self.returncode
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(min(left, 0.005))
        assert self.returncode is not None
        return self.returncode

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped elsewhere (never here): its end is then unknown
            self.returncode = 255
            return
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)


def can_fork(*fds: int) -> bool:
    """Whether forking a supervisor from this process is safe (see the module's note); ``fds``
    must not be a standard stream's number (the child's 0, 1 and 2 are its own)."""
    return (
        min(fds, default=3) > 2
        and hasattr(os, "fork")
        and sys.platform.startswith("linux")
        and all(t is threading.main_thread() or t.name in _IDLE_THREADS for t in threading.enumerate())
        and os.access("/proc/self/mem", os.W_OK)
    )


def start(
    argv: Sequence[str], *, lock_fd: int, job_fd: int, log_fd: int, env: Mapping[str, str]
) -> SupervisorProcess:
    """Fork the supervisor of ``argv`` (the trainer's command line); its lock ``lock_fd`` and job
    pipe ``job_fd`` stay at those numbers in the child. ``subprocess.Popen`` of the exec'd
    supervisor where forking is not safe. OSError when no process could be started."""
    args = [*EXEC_PREFIX, str(lock_fd), str(job_fd), "--", *argv]
    if not can_fork(lock_fd, job_fd, log_fd):
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=subprocess.STDOUT,
            env=dict(env),
            start_new_session=True,
            pass_fds=(lock_fd, job_fd),
        )
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        pid = os.fork()
        if pid == 0:  # the child: never returns into `sweepgen run`'s frames
            code = _INTERNAL
            try:
                code = _child(args, lock_fd=lock_fd, job_fd=job_fd, log_fd=log_fd, env=env)
            except BaseException:  # noqa: BLE001 - the child must reach os._exit whatever happened
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
                    sys.stderr.flush()
            finally:
                with contextlib.suppress(BaseException):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return Forked(pid, args)


_kept: list[object] = []  # `sweepgen run`'s stream objects, never finalized in the child


def _child(args: list[str], *, lock_fd: int, job_fd: int, log_fd: int, env: Mapping[str, str]) -> int:
    gc.freeze()  # the parent's objects: never collected here, so no finalizer of theirs runs
    os.setsid()
    signal.set_wakeup_fd(-1)  # the parent's wakeup fd (if any) is closed below: never written to
    for sig in _STOPS:
        signal.signal(sig, signal.SIG_DFL)  # supervise installs its own; none of the parent's
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    _close_all_but(sorted({0, 1, 2, lock_fd, job_fd}))
    _kept.extend((sys.stdin, sys.stdout, sys.stderr))
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
    os.environ.clear()
    os.environ.update(env)  # the trainer inherits it, as it inherits the exec'd supervisor's
    titled = _retitle(args)
    if not (supervise.name_self() or titled):
        # nothing would show (or prove) what it is: be the exec'd supervisor instead
        for fd in (lock_fd, job_fd):
            os.set_inheritable(fd, True)
        # the stop signals stay blocked through the exec: the supervisor unblocks them once its
        # handlers are in place
        os.execve(args[0], args, dict(env))
    return supervise.main(args[args.index(MODULE) + 1 :])


def _close_all_but(keep: list[int]) -> None:
    low = 0
    for fd in keep:
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _max_fd())


def _max_fd() -> int:
    try:
        return max(int(name) for name in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        return os.sysconf("SC_OPEN_MAX")


def _retitle(args: list[str]) -> bool:
    """Write ``args`` over this process's command line (the kernel shows the bytes between its
    arg_start and arg_end): the arguments after ``--`` cut to what fits, and where the supervisor's
    own part does not fit with the interpreter's path, it from the module's name on. False when
    even that does not fit (a `python -m sweepgen run x`), or the memory cannot be written: its
    name (supervise.COMM) then says what it is."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # fields 48 and 49 of proc(5)
        cut = args.index("--") + 1
        head = b"\0".join(a.encode() for a in args[:cut]) + b"\0"
        if len(head) > end - start:
            head = b"\0".join(a.encode() for a in args[args.index(MODULE) : cut]) + b"\0"
        if len(head) > end - start:
            return False
        tail = b"\0".join(a.encode() for a in args[cut:])
        text = (head + tail)[: end - start - 1]
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            mem.write(text + b"\0" * (end - start - len(text)))
    except (OSError, ValueError, IndexError):
        return False
    return True
