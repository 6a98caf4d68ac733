"""The trainer's process group, as the supervisor of a local run keeps it: started in a group of its
own that dies with the supervisor, signalled as a whole, and waited for until no process is left.

The trainer runs in a group apart from the supervisor's, so a signal anyone sends to the pid or the
group `status` shows reaches the supervisor alone, which decides what the trainer gets (SIGTERM
once, SIGKILL after the stop timeout): the trainer never gets a stop twice. Linux only where noted
(prctl); elsewhere the same without those guarantees.

Standard library only: the supervisor starts for every run and must start fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# how often the end waits re-send SIGKILL to what is left (a process stopped in the kernel, e.g. on
# a dying NFS mount, takes its time; a new fork in the group would escape a single SIGKILL)
_RESEND_S = 1.0


def _prctl(option: int, arg: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # this process's own symbols: libc's among them
        return bool(libc.prctl(option, arg, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Orphans of the trainer (a worker whose parent died) become this process's children, not
    init's, so the supervisor reaps them: a zombie would otherwise keep its group "alive"."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def in_own_group_dying_with(parent: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child leads a new process group, and gets SIGKILL if its parent (the
    supervisor) dies first, so a killed supervisor never leaves a trainer running unlocked."""

    def setup() -> None:
        os.setpgid(0, 0)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the supervisor died before the line above took effect
            os._exit(137)

    return setup


def signal_group(pgid: int, sig: int) -> bool:
    """``sig`` to every process of the group; False when the group is empty."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of the group is not ours any more (setuid): still a member
        return True
    return True


def reap_orphans() -> None:
    """Collect every child that has ended (orphans handed to this subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux: read from /proc; empty elsewhere). A launcher's ranks
    (torchrun starts each in a session of its own) are among them, also once their launcher died:
    the supervisor is a subreaper, so orphans of its tree stay in it."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat.rsplit(b")", 1)[1].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, []))
    return found


def _kill_tree(pgid: int) -> bool:
    """SIGKILL the group and every process below this one; False when none of them is left."""
    alive = signal_group(pgid, signal.SIGKILL)
    for pid in descendants(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            alive = True
    return alive


def _tree_left(pgid: int) -> bool:
    with contextlib.suppress(PermissionError):
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            pass
    return bool(descendants(os.getpid()))


def end_group(pgid: int) -> None:
    """SIGKILL the group, and every process below this one (the ranks a launcher started in
    sessions of their own, a service the trainer left), and return once none is left (reaping the
    orphans that came here): only then may the run's lock be released. Waits as long as that takes."""
    next_kill = 0.0
    while True:
        now = time.monotonic()
        if now >= next_kill:
            if not _kill_tree(pgid):
                return
            next_kill = now + _RESEND_S
        reap_orphans()
        if not _tree_left(pgid):
            return
        time.sleep(0.005)
