"""A run's supervisor forked from `sweepgen run` (sweepgen.run.local.forked) is the same process as
the exec'd one: its own session, only its own descriptors (never the search's owner lock or another
run's files of its parent), the supervisor's command line (what `ps` shows and `liveness.supervises`
proves), a stop at any moment recorded as a cancel; and where forking is unsafe (a second thread)
the supervisor is exec'd. Each case runs in a fresh Python, so pytest's own threads decide nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.local import liveness, supervise

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 60

# starts one supervisor as the local executor does (lock, job pipe, log), with an "owner lock" open
# as a controller holds it; prints the supervisor's pid and kind, then hands the job over when told
DRIVER = """
import sys
if sys.path[:1] == [""]:  # as the `sweepgen` command starts: its own folder first, not the working one
    del sys.path[0]
import json, os, threading, time, fcntl
from pathlib import Path
from sweepgen.run.core import runlock
from sweepgen.run.local import forked

given = sys.argv[1:]
if os.environ.get("DRIVER_NO_RETITLE"):  # as when the kernel's argv area is too short for the title
    forked._retitle = lambda args: False
run_dir, trainer, thread, term_first = Path(given[0]), given[1], given[2] == "1", given[3] == "1"
if thread:
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
run_dir.mkdir(parents=True, exist_ok=True)
owner = os.open(run_dir.parent / "owner", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
fcntl.flock(owner, fcntl.LOCK_EX)
lock_fd = runlock.acquire(run_dir)
log = open(run_dir / "run.log", "ab")
job_read, job_write = os.pipe()
argv, env = ["sh", "-c", trainer], dict(os.environ)
proc = forked.start(argv, lock_fd=lock_fd, job_fd=job_read, log_fd=log.fileno(), env=env)
os.close(job_read)
if term_first:  # a stop before the supervisor has even read its job
    os.kill(proc.pid, 15)
print(proc.pid, type(proc).__name__, flush=True)
sys.stdin.readline()
job = {"run_dir": str(run_dir), "status": {"state": "running", "executor": "local"}, "stop_timeout_s": 5}
os.write(job_write, json.dumps(job).encode())
os.close(job_write)
print(proc.wait(), flush=True)
"""


def _driver(
    tmp_path: Path, trainer: str, *, thread: bool = False, term_first: bool = False, untitled: bool = False
):
    """The driver in a fresh Python; ``untitled``: its supervisor's command line cannot be rewritten,
    as when the kernel's argv area is shorter than the supervisor's title (`python -m sweepgen run x`).
    Whether a real one is short enough depends on the interpreter's path (the clone's folder), so the
    test says so through the driver instead of through a path."""
    run_dir = tmp_path / "runs" / "a"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    given = [str(run_dir), trainer, "1" if thread else "0", "1" if term_first else "0"]
    if untitled:
        env["DRIVER_NO_RETITLE"] = "1"
    argv = [sys.executable, "-c", DRIVER, *given]
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    pid, kind = proc.stdout.readline().split()
    return proc, run_dir, int(pid), kind


def _hand_over(proc: subprocess.Popen[str]) -> None:
    """Tell the driver to write the supervisor's job."""
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()


def _recorded_end(proc: subprocess.Popen[str], run_dir: Path):
    """The driver's end (the supervisor exited 0: it recorded, not died) and the status it recorded."""
    out, err = proc.communicate(timeout=DEADLINE_S)
    assert out.split()[-1] == "0", out + err
    status = read_status(run_dir)
    assert status is not None, out + err
    return status


@contextlib.contextmanager
def _driven(tmp_path: Path, trainer: str, **how: bool):
    """The driver (see ``_driver``), killed if a failed assertion leaves it running."""
    proc, run_dir, pid, kind = _driver(tmp_path, trainer, **how)
    try:
        yield proc, run_dir, pid, kind
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _fds(pid: int) -> dict[int, str]:
    folder = Path(f"/proc/{pid}/fd")
    return {int(fd.name): os.readlink(fd) for fd in folder.iterdir()}


def _wait_status(run_dir: Path, predicate) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        status = read_status(run_dir) if (run_dir / "sweepgen_status.json").exists() else None
        if status is not None and predicate(status):
            return
        assert time.monotonic() < deadline, f"the supervisor never recorded it: {status}"
        time.sleep(0.02)


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, /proc and prctl: Linux")


def test_a_forked_supervisor_is_the_supervisor_and_holds_nothing_of_its_parent(tmp_path):
    with _driven(tmp_path, "sleep 30") as (proc, run_dir, pid, kind):
        assert kind == "Forked"
        _hand_over(proc)
        _wait_status(run_dir, lambda s: "trainer_pgid" in s.ids)
        assert os.getsid(pid) == pid != os.getsid(proc.pid)  # a session of its own
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        at = argv.index(b"sweepgen.run.local.supervise")  # after `-P -m` (no working folder on sys.path)
        assert argv[at - 1] == b"-m" and argv[at + 3] == b"--", argv
        assert b"-P" in argv[1:at] or sys.version_info < (3, 11), argv
        argv = [argv[0], *argv[at - 1 :]]  # as the fds below count it: the lock's fd at [3]
        assert liveness.supervises(pid, run_dir)
        fds = _fds(pid)
        # stdin, the log twice and the run's lock (and its own: a pidfd of the trainer, the room kept
        # for the run's end): not the owner lock, the journal or the job pipe
        own = {fd for fd, target in fds.items() if target == "anon_inode:[pidfd]"}
        spare = {fd for fd, target in fds.items() if target == str(run_dir / ".sweepgen-status.spare")}
        assert sorted(set(fds) - own - spare) == [0, 1, 2, int(argv[3])] and len(own) <= 1, fds
        assert len(spare) == 1, fds
        assert fds[0] == os.devnull and fds[1] == fds[2] == str(run_dir / "run.log"), fds
        assert fds[int(argv[3])] == str(run_dir / ".sweepgen.lock"), fds
        os.kill(pid, signal.SIGTERM)  # `sweepgen cancel`'s way: the supervisor records it
        assert _recorded_end(proc, run_dir).state is RunState.CANCELLED


def test_a_forked_supervisor_whose_command_line_cannot_be_rewritten_is_proven_by_its_name(tmp_path):
    with _driven(tmp_path, "sleep 30", untitled=True) as (proc, run_dir, pid, kind):
        assert kind == "Forked"
        _hand_over(proc)
        _wait_status(run_dir, lambda s: "trainer_pgid" in s.ids)
        assert b"sweepgen.run.local.supervise" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        assert Path(f"/proc/{pid}/comm").read_text().strip() == supervise.COMM
        assert liveness.supervises(pid, run_dir)
        other = tmp_path / "runs" / "b"
        other.mkdir()
        (other / ".sweepgen.lock").write_bytes(b"")
        assert not liveness.supervises(pid, other)  # its name alone proves nothing: the lock it holds does
        # its parent holds the lock too, but is no supervisor
        assert not liveness.supervises(proc.pid, run_dir)
        os.kill(pid, signal.SIGTERM)
        assert _recorded_end(proc, run_dir).state is RunState.CANCELLED


def test_a_stop_before_the_forked_supervisor_read_its_job_is_a_recorded_cancel(tmp_path):
    with _driven(tmp_path, "sleep 30", term_first=True) as (proc, run_dir, _pid, kind):
        assert kind == "Forked"
        _hand_over(proc)
        status = _recorded_end(proc, run_dir)  # recorded, not killed by the signal
        assert status.state is RunState.CANCELLED and "SIGTERM" in (status.reason or ""), status


def test_with_a_second_thread_the_supervisor_is_execed_and_records_the_same_end(tmp_path):
    with _driven(tmp_path, "echo trained; exit 3", thread=True) as (proc, run_dir, pid, kind):
        assert kind == "Popen"
        _hand_over(proc)
        status = _recorded_end(proc, run_dir)
        assert status.state is RunState.FAILED and status.exit_code == 3, status
        assert "trained" in (run_dir / "run.log").read_text()
        assert json.loads((run_dir / "sweepgen_status.json").read_text())["ids"]["pid"] == pid


def test_an_execed_supervisor_never_imports_a_sweepgen_committed_in_the_working_folder(tmp_path):
    """`sweepgen run` in a checkout that commits a `sweepgen/` folder: the supervisor it execs (where
    forking is not safe) ran `python -m sweepgen.run.local.supervise` from the working folder, and
    Python put that folder first on sys.path: the committed package ran in place of sweepgen. Now it
    is started with `-P` (as the bundled trainer is), and the installed sweepgen supervises."""
    canary = tmp_path / "canary"
    (tmp_path / "sweepgen").mkdir()
    (tmp_path / "sweepgen" / "__init__.py").write_text(f"open({str(canary)!r}, 'w').close()\n")
    with _driven(tmp_path, "echo trained; exit 3", thread=True) as (proc, run_dir, _, kind):
        assert kind == "Popen"
        _hand_over(proc)
        status = _recorded_end(proc, run_dir)
    assert status.exit_code == 3 and not canary.exists(), status


def test_a_stop_that_comes_before_the_trainer_exists_never_starts_it(tmp_path):
    """Stopped (Ctrl-C, `cancel`) before its trainer was started: recorded cancelled, and the
    trainer is never started at all (before: started, then sent SIGTERM at once; a trainer that
    registers a tracker run or writes its folder first had begun an attempt nobody wanted)."""
    with _driven(tmp_path, "echo started >> starts.txt; sleep 30", term_first=True) as (proc, run_dir, _, _):
        _hand_over(proc)
        status = _recorded_end(proc, run_dir)
    assert status.state is RunState.CANCELLED and "SIGTERM" in (status.reason or ""), status
    assert "starting" not in status.ids and "trainer_pgid" not in status.ids, status
    assert not (tmp_path / "starts.txt").exists()
