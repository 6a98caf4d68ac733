"""The participants of a multi-process Slurm run that are not its supervisor, and how they all
learn that one of them ended badly.

A run of several nodes (or of srun ranks) has one supervisor (launch.py) that holds the run's lock
and writes its status; every other participant only runs its share under the launcher, its output
in ``run.<label>.log`` (``run.node1.log``, ``run.rank3.log``) beside ``run.log``.

When a participant's processes fail, the others would otherwise wait in a collective until a
timeout (gloo's and NCCL's are 30 minutes), and the supervisor would record whatever it saw last.
So a participant that ends badly leaves a *note* in ``<run>/.sweepgen_ranks/`` (its label, exit
code and host), written atomically before it exits; every participant watches the notes of its own
job attempt (job id and Slurm's restart count: a requeue starts a fresh set) and stops its
processes when another one's note appears, and the supervisor records the run as failed naming the
participant that failed first. A participant stopped by Slurm (scancel, requeue, time limit)
leaves no note: those ends are Slurm's to tell.

The supervisor leaves a note whenever its share ends by itself, a clean end included (exit 0):
the others then get END_GRACE_S to end too, and are stopped after it, so a participant that
would wait forever (a Ray worker's ``ray start --block``) never holds the job to its time limit;
stopped so, a participant exits 0, as the run did.

A participant that *declines* to start its share (its own look at the run's records says the job
may not start the run: finished already, not its latest submission, the submission lock busy; or,
for the supervisor, the run's lock held by another process) leaves a note of its own kind (``why``
set, saying so): the others stop at once rather than wait for its ranks until the job's time limit,
and ``status`` says why the job ended (``declined``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from sweepgen.fs import filenames, runfs
from sweepgen.run.core import runfiles
from sweepgen.run.core.base import this_host, write_json_atomic
from sweepgen.run.core.shape import RunShape
from sweepgen.run.slurm import launch

NOTES_DIR = filenames.RANK_NOTES
WATCH_INTERVAL_S = 1.0  # how often a participant looks at the others' notes while its run goes on
_PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
END_GRACE_S = 30.0  # after the supervisor's clean end, how long the others may take to end by themselves


@dataclass(frozen=True)
class Note:
    label: str
    exit_code: int
    host: str
    why: str | None = None  # set for a participant that declined to start its share: why it did
    job: str | None = None  # the declining job (its id as status files name it), for ``declined``


NOTE_BYTES = 64 << 10  # a note is one small JSON object


def attempt_key(env: dict[str, str] | os._Environ[str]) -> str:
    """This job attempt: its id and how often Slurm has restarted it (a requeue is a new attempt)."""
    return f"{env.get('SLURM_JOB_ID', '0')}.{env.get('SLURM_RESTART_COUNT', '0')}"


def write_note(
    run_dir: Path, key: str, label: str, exit_code: int, *, why: str | None = None, job: str | None = None
) -> None:
    """This participant's note; ``why`` (and the job's id) for one that declined to start its share."""
    # the notes folder is created and written without following a link (runfs via write_json_atomic)
    folder = run_dir / NOTES_DIR
    data: dict[str, object] = {"label": label, "exit_code": exit_code, "host": this_host()}
    if why is not None:
        data.update(why=why, job=job)
    write_json_atomic(folder / f"{key}.{label}.json", data)


def declined(run_dir: Path, job: str, *, after: float | None = None) -> Note | None:
    """The note a participant of the Slurm job ``job`` left when it declined to start the run (the
    supervisor's first, else the first written), written ``after`` that file time if given; None
    when none did. For `status`: a job that ended without recording the run's end says why, where
    it declined."""
    since = after if after is not None else float("-inf")
    mine = [note for when, note in _every_note(run_dir / NOTES_DIR) if _declined_by(note, job, when >= since)]
    return next((n for n in mine if n.label in ("node0", "rank0")), next(iter(mine), None))


def notes(run_dir: Path, key: str, *, besides: str) -> list[Note]:
    """The notes of this attempt left by participants other than ``besides``, first written first."""
    folder = run_dir / NOTES_DIR
    try:
        # a linked notes folder is never listed (runfs: ELOOP), a file there is no folder of notes
        names = [n for n in runfs.listdir(folder) if n.startswith(f"{key}.") and n.endswith(".json")]
    except OSError:
        return []
    found = [n for name in names if (n := _read_note(folder / name, besides)) is not None]
    return [note for _, note in sorted(found, key=lambda pair: pair[0])]


def _declined_by(note: Note, job: str, recent: bool) -> bool:
    return note.why is not None and note.job == job and recent


def _every_note(folder: Path) -> list[tuple[float, Note]]:
    """Every well-formed note in ``folder``, of any attempt, as (when it was written, the note), in
    that order."""
    try:
        names = [n for n in runfs.listdir(folder) if n.endswith(".json")]
    except OSError:
        return []
    found = [n for name in sorted(names) if (n := _read_note(folder / name, besides=""))]
    return sorted(found, key=lambda pair: pair[0])


def _read_note(path: Path, besides: str) -> tuple[float, Note] | None:
    """(when it was written, the note); None for ``besides``'s own note, for a note being replaced,
    or one not ours to judge (only well-formed notes count). Read as every run file is: never
    through a link, never blocking on a FIFO, bounded."""
    try:
        data = runfiles.read_json(path, limit=NOTE_BYTES)  # bounded in depth: no RecursionError
        when = runfs.lstat(path).st_mtime
    except (OSError, runfiles.RunFileError):
        return None
    if not isinstance(data, dict) or data.get("label") == besides:
        return None
    code = data.get("exit_code")
    return when, Note(
        str(data.get("label")),
        code if isinstance(code, int) else 1,
        str(data.get("host")),
        why=_text(data.get("why")),
        job=_text(data.get("job")),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def wait_watching(
    child: subprocess.Popen[bytes], run_dir: Path, key: str, me: str, *, stop: Callable[[], None]
) -> tuple[int, Note | None]:
    """Wait for ``child``; when another participant's note appears first, ``stop()`` the child (its
    process group gets SIGTERM) and keep waiting. The exit code, and the note that stopped it."""
    seen: Note | None = None
    stop_at: float | None = None
    while True:
        try:
            return child.wait(timeout=WATCH_INTERVAL_S), seen
        except subprocess.TimeoutExpired:
            pass
        if seen is None:
            others = notes(run_dir, key, besides=me)
            if others:
                seen = others[0]
                # the supervisor's clean end leaves the others a moment to end on their own; a
                # failure, or a participant that declined (its ranks never come), stops at once
                clean = seen.exit_code == 0 and seen.why is None
                stop_at = time.monotonic() + (END_GRACE_S if clean else 0.0)
        if stop_at is not None and time.monotonic() >= stop_at:
            stop()
            stop_at = None


def run_participant(
    argv: list[str], env: dict[str, str], run_dir: Path, part: launch.Participant, shape: RunShape
) -> str:
    """Run this participant's share to the end; its output goes to ``run.<label>.log``. Exits with
    the share's exit code unless it was 0; a bad end leaves a note for the others."""
    key = attempt_key(os.environ)
    child: subprocess.Popen[bytes] | None = None
    stopped = False

    def forward(signum: int, frame: FrameType | None) -> None:
        nonlocal stopped
        stopped = True  # Slurm's own stop (scancel, requeue, time limit): no note, Slurm tells it
        if child is not None and child.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, launch.forwarded(signum, shape))

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGUSR2, forward)
    become_subreaper()
    with os.fdopen(runfiles.open_append(run_dir / f"run.{part.label}.log"), "ab") as log:
        try:
            child = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )  # fmt: skip
        except OSError as err:
            log.write(f"sweepgen: could not start {part.label}'s share of the run: {err}\n".encode())
            write_note(run_dir, key, part.label, 127)
            sys.exit(127)
        code, seen = wait_watching(
            child, run_dir, key, part.label, stop=lambda: _signal_group(child, signal.SIGTERM)
        )
        _signal_group(child, signal.SIGKILL)  # what the share left behind, in its group
        end_leftovers()  # and in sessions of their own (torchrun's workers)
    ended_with = None if stopped else _ended_with(seen)
    if ended_with is not None:
        return ended_with
    if code != 0 and not stopped and seen is None:  # the first to fail says so; followers do not
        write_note(run_dir, key, part.label, code)
    if code != 0:
        sys.exit(code if code > 0 else 1)
    return "participant finished"


def _ended_with(seen: Note | None) -> str | None:
    """How a share that another participant's note stopped ended, where that is no failure of its
    own: the supervisor ended cleanly (so did its run), or a participant declined to start the run
    (the supervisor's end, or `status`, says why); None otherwise."""
    if seen is not None and seen.why is not None:
        return "participant stopped: another participant declined to start the run"
    if seen is not None and seen.exit_code == 0:
        return "participant ended with the run"
    return None


def become_subreaper() -> None:
    """Orphans of the run (torchrun starts each worker in a session of its own; a worker whose
    launcher died is reparented) become this process's children instead of init's, so
    ``end_leftovers`` finds them, and Slurm, which tracks a step's processes by parentage, too.
    Linux only; elsewhere nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def end_leftovers(wait_s: float = 10.0) -> list[int]:
    """SIGKILL every process still descending from this one (what the run left behind, its own
    sessions included) and reap them; the pids it killed."""
    killed = _descendants(os.getpid())
    for pid in killed:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break  # no child left
        if pid == 0:
            time.sleep(0.05)
    return killed


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _signal_group(child: subprocess.Popen[bytes] | None, signum: int) -> None:
    if child is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)
