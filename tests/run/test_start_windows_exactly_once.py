"""Exactly once at the edges of a start: a process dies between "decided to start" and "recorded as
started", and the run is neither lost nor started twice, and is shown in its true state.

- A run's lock taken by a starter that dies before starting the run (a `sweepgen run` SIGKILLed
  between taking the lock and handing the run to its supervisor; a `status` probe that held the lock
  a moment too long): a `sweepgen run` that planned the run and was waiting for that holder starts
  it itself, once, instead of reporting a run nobody ran as failed.
- A supervisor that could not execute the command records "could not start", and the `sweepgen run`
  that started it keeps that end instead of overwriting it with "its supervisor ended without
  recording the run's end".
- A supervisor that died before writing its attempt's status leaves the earlier attempt's status on
  disk: the process group that status names belongs to nobody of this run any more, and is never
  signalled.

Real processes throughout; a start is counted by a line the command appends (a start never recorded
is seen); states are waited for, never slept for.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from run_support import LOADED_S, WAITER, hand_over, make_sweep, output_of, read_until, start_supervisor
from search_support import sweepgen

from sweepgen.run.core import runlock
from sweepgen.run.core.base import ExecutorOptions, RunState, RunStatus, read_status, write_status
from sweepgen.run.core.stopping.stop_request import CANCELLED_BY_COMMAND
from sweepgen.run.sweep.status import collect
from sweepgen.run.sweep.watch import locate

# appends one line per start, then works ``sleep`` s and exits 0 (no done file)
COUNTER = """\
import os, sys, time, yaml
config = yaml.safe_load(open(sys.argv[1]))
os.makedirs(config["output_dir"], exist_ok=True)
with open(os.path.join(config["output_dir"], "starts.txt"), "a") as fh:
    fh.write(f"{os.getpid()}\\n")
time.sleep(config["fake"]["sleep"])
"""

# a stand-in for a starter that has taken a run's lock (`sweepgen run` between its flock and its
# supervisor's start): holds the flock until killed
HOLDER = """\
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
while True:
    time.sleep(60)
"""


def _command(root: Path) -> str:
    script = root / "counter.py"
    script.write_text(COUNTER)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"


def _sweepgen(root: Path, *args: str) -> subprocess.Popen[str]:
    proc: subprocess.Popen[str] = sweepgen(root, *args, wait=False)  # search_support's CLI process
    return proc


def _hold_lock(run: Path) -> subprocess.Popen[str]:
    run.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run / runlock.RUN_LOCK_NAME)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _fail_once(root: Path) -> None:
    """r0's first attempt, really run: exit 3, recorded failed by its supervisor."""
    failing = f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)' {{config}}"
    proc = _sweepgen(root, "run", "generated/fake", "--command", failing)
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 1, out + err
    status = read_status(root / "runs" / "fake" / "r0")
    assert status is not None and status.state is RunState.FAILED and status.exit_code == 3, status


def _starts(run: Path) -> int:
    path = run / "starts.txt"
    return len(path.read_text().splitlines()) if path.is_file() else 0


def _shown(root: Path) -> dict:
    proc = _sweepgen(root, "status", "generated/fake", "--format", "json")
    out, err = proc.communicate(timeout=LOADED_S)
    (row,) = json.loads(out)
    return row


@pytest.mark.parametrize("before", ["never-started", "failed", "cancelled"])
def test_a_run_whose_lock_holder_dies_unstarted_is_started_once_by_the_run_waiting_for_it(tmp_path, before):
    """A failed or cancelled run (an earlier attempt's end on record, its recorder gone) is waited
    for by `--rerun-failed` while its lock is held (a stopped `run` that has not read the end yet,
    one starting it again), and said to be what it is: before, "running: another process holds its
    lock" and "r0: running" for a run a `cancel` had ended."""
    make_sweep(tmp_path, {"r0": {"sleep": 0.1}})
    command = _command(tmp_path)
    run = tmp_path / "runs" / "fake" / "r0"
    if before != "never-started":  # an earlier attempt failed: only --rerun-failed starts it again
        _fail_once(tmp_path)
    if before == "cancelled":  # as `cancel` leaves it
        failed = read_status(run)
        write_status(
            run, replace(failed, state=RunState.CANCELLED, reason=CANCELLED_BY_COMMAND, exit_code=None)
        )
    holder = _hold_lock(run)
    args = ["--rerun-failed"] if before != "never-started" else []
    waiting = _sweepgen(tmp_path, "run", "generated/fake", "--command", command, *args)
    seen = read_until(waiting, "waiting for 1 run(s)")  # it planned the run and follows its holder
    if before != "never-started":
        said = read_until(waiting, "lets it go unstarted")
        assert "running" not in seen + said and "ended on record" in seen, seen + said
        assert f"r0: {before}: " in said, said
    holder.send_signal(signal.SIGKILL)  # the holder dies before it started anything
    holder.communicate()
    out, err = waiting.communicate(timeout=LOADED_S)
    assert waiting.returncode == 0 and "Traceback" not in err, out + seen + err
    assert "r0: finished" in out, out
    if before != "never-started":  # running once: as started here, never while its lock was held
        assert out.count("r0: running") == 1, out
    assert _starts(run) == 1
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, status
    assert status.attempt == (1 if before == "never-started" else 2), status
    assert _shown(tmp_path)["state"] == "FINISHED"


def test_a_failed_run_whose_lock_is_held_is_not_retried_without_rerun_failed_and_shown_failed(tmp_path):
    """r0 failed (on record, its recorder gone) and another process holds its lock (a stopped `run`
    that recorded it, or one about to retry it): a plain `run` never starts it again, and answers
    from the record at once, with the hint, while the lock is still held (it waited for the holder
    before, so a `run` stopped with Ctrl-Z held every later `run` up: h-once17)."""
    make_sweep(tmp_path, {"r0": {"sleep": 0.1}})
    command = _command(tmp_path)
    run = tmp_path / "runs" / "fake" / "r0"
    _fail_once(tmp_path)
    holder = _hold_lock(run)
    try:
        plain = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)
        out, err = plain.communicate(timeout=LOADED_S)
        assert holder.poll() is None, "the holder is gone: the answer may have waited for it"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate()
    # its own earlier failure, with the hint: not "ended elsewhere", not started behind the user's back
    assert plain.returncode == 1 and "Traceback" not in err, out + err
    assert "--rerun-failed" in err and "ended elsewhere" not in out + err, out + err
    assert _starts(run) == 0
    row = _shown(tmp_path)
    assert row["state"] == "FAILED" and row["reason"] == "exit code 3", row


def test_a_command_that_cannot_be_executed_is_recorded_with_the_supervisors_reason(tmp_path):
    make_sweep(tmp_path, {"r0": {"sleep": 0.1}})
    script = tmp_path / "bad.sh"
    script.write_text("#!/nonexistent/interpreter\nexit 0\n")  # found and executable; exec fails
    script.chmod(0o755)
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", f"{script} {{config}}")
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 1 and "Traceback" not in err, out + err
    status = read_status(tmp_path / "runs" / "fake" / "r0")
    assert status is not None and status.state is RunState.FAILED, status
    assert status.reason == "could not start: No such file or directory", status
    assert status.exit_code is None and "supervisor" not in out, out
    row = _shown(tmp_path)
    assert row["state"] == "FAILED" and row["reason"] == status.reason, row


def test_a_supervisor_dead_before_its_status_never_signals_the_group_an_earlier_attempt_named(
    tmp_path, monkeypatch
):
    """The status file still holds attempt 1 (its supervisor and trainer group long gone, the group's
    number now another process's): the end of attempt 2 is recorded without signalling it."""
    from sweepgen.run.core.plan.tasks import load_sweep, parse_command
    from sweepgen.run.local.executor import LocalExecutor, _Child

    make_sweep(tmp_path, {"r0": {"sleep": 0.1}})
    monkeypatch.chdir(tmp_path)
    sweep = load_sweep(Path("generated/fake"), command=parse_command(_command(tmp_path)))
    (task,) = sweep.tasks
    task.run_dir.mkdir(parents=True)
    # an unrelated process group that now has the number attempt 1's trainer group had
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    old = RunStatus(RunState.FAILED, "local", attempt=1, ids={"pid": dead.pid, "trainer_pgid": victim.pid})
    write_status(task.run_dir, old)
    # attempt 2's supervisor, SIGKILLed before it wrote its status
    supervisor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    supervisor.kill()
    supervisor.wait()
    ex = LocalExecutor(ExecutorOptions(sweep_dir=sweep.dir, lock=sweep.lock))
    lock_fd = runlock.acquire(task.run_dir)
    assert lock_fd is not None
    attempt = RunStatus(RunState.RUNNING, "local", attempt=2, ids={"pid": supervisor.pid})
    log = open(task.run_dir / "run.log", "ab")  # noqa: SIM115 - _finish closes it
    try:
        ex._finish(_Child(task, supervisor, log, None, attempt, lock_fd), supervisor.returncode)
    finally:
        # a SIGKILL sent before (by _finish) wins over this SIGTERM, whenever the victim is scheduled
        victim.terminate()
        victim.wait()
    assert victim.returncode == -signal.SIGTERM, "an earlier attempt's process group was SIGKILLed"
    status = read_status(task.run_dir)
    assert status is not None and status.state is RunState.FAILED and status.attempt == 2, status
    assert "killed by SIGKILL" in (status.reason or ""), status
    assert not runlock.is_held(task.run_dir)


def test_a_run_recorded_running_before_a_reboot_is_lost_even_where_its_pid_and_start_time_recur(tmp_path):
    """After a reboot pids and start times count again from the boot: a process of now may have the
    very pid and start time a supervisor had then. The boot id tells them apart: the run is lost
    (FAILED), not running, and `run --rerun-failed` starts it once instead of waiting forever."""
    from sweepgen.run.core.base import this_host
    from sweepgen.run.local import liveness

    if not Path("/proc/sys/kernel/random/boot_id").is_file():
        pytest.skip("no boot id here (/proc/sys/kernel/random/boot_id)")
    make_sweep(tmp_path, {"r0": {"sleep": 0.1}})
    command = _command(tmp_path)
    run = tmp_path / "runs" / "fake" / "r0"
    run.mkdir(parents=True)
    # the process that now has the pid and start time the supervisor had before the reboot
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        ids = {
            "host": this_host(),
            "pid": other.pid,
            "pgid": other.pid,
            "proc_start": liveness.proc_start_ticks(other.pid),
            "boot_id": "00000000-0000-4000-8000-000000000000",  # the boot before this one
            "trainer_pgid": other.pid,
            "stop_timeout_s": 60.0,
        }
        write_status(
            run, RunStatus(RunState.RUNNING, "local", started="2026-01-01T00:00:00.000+00:00", ids=ids)
        )
        row = _shown(tmp_path)
        assert row["state"] == "FAILED" and "lost" in row["reason"], row
        again = _sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--rerun-failed")
        out, err = again.communicate(timeout=LOADED_S)
        assert again.returncode == 0 and "Traceback" not in err, out + err
        assert other.poll() is None, "the process of now was signalled"
    finally:
        other.kill()
        other.wait()
    assert _starts(run) == 1
    assert _shown(tmp_path)["state"] == "FINISHED"


def _process_state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _wait_until(what: str, done) -> None:
    deadline = time.monotonic() + LOADED_S
    while not done():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_stop_that_comes_after_the_trainer_exited_leaves_the_run_finished(tmp_path):
    """The trainer exits 0 (no done file: exit 0 is the proof) and only then, before its supervisor
    has recorded the end, `kill PID` of the supervisor comes: the run finished, and is recorded and
    shown finished, not cancelled (which `--rerun-failed` would run a second time)."""
    release = tmp_path / "release"
    make_sweep(tmp_path, {"r0": {"release": str(release)}})
    script = tmp_path / "waiter.py"
    script.write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    run = tmp_path / "runs" / "fake" / "r0"
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)

    def recorded_running() -> RunStatus | None:
        status = read_status(run) if run.is_dir() else None
        return status if status is not None and "trainer_pgid" in status.ids and _starts(run) else None

    _wait_until("the run's start", lambda: recorded_running() is not None or proc.poll() is not None)
    status = recorded_running()
    assert status is not None, output_of(proc)
    supervisor, trainer = int(status.ids["pid"]), int(status.ids["trainer_pgid"])
    os.kill(supervisor, signal.SIGSTOP)  # held between the trainer's exit and the record of its end
    try:
        release.touch()
        _wait_until("the trainer's exit", lambda: _process_state(trainer) in ("Z", None))
        os.kill(supervisor, signal.SIGTERM)  # the stop comes after the exit
    finally:
        os.kill(supervisor, signal.SIGCONT)
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 0 and "Traceback" not in err, out + err
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and status.exit_code == 0, status
    assert _shown(tmp_path)["state"] == "FINISHED"
    assert _starts(run) == 1


def _lost_attempt(run: Path) -> None:
    """Attempt 1 recorded `running` by a supervisor that is gone (killed with its `sweepgen run`)."""
    from sweepgen.run.core.base import this_host
    from sweepgen.run.local import liveness

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ids = {
        "host": this_host(),
        "pid": dead.pid,
        "pgid": dead.pid,
        "proc_start": 1,
        "boot_id": liveness.boot_id(),
        "trainer_pgid": dead.pid,
        "stop_timeout_s": 5.0,
    }
    write_status(run, RunStatus(RunState.RUNNING, "local", started="2026-01-01T00:00:00.000+00:00", ids=ids))


@pytest.mark.parametrize("before", ["never-started", "lost-running"])
def test_a_cancel_that_comes_while_a_run_is_being_started_cancels_it(tmp_path, before):
    """`sweepgen cancel --only r0` between a starter taking r0's lock and its supervisor recording
    `running` (the test is that starter: it holds the lock and hands the run to a real supervisor
    only once the cancel has seen the start under way): the run is cancelled, not left to train on
    after a cancel that said it had nothing to cancel. ``lost-running``: the start is a
    `--rerun-failed` of a run whose last status says `running` with its supervisor gone; that
    status's pid is nobody's (the cancel said the run could not be stopped from this machine)."""
    from sweepgen.run.core.plan.tasks import load_sweep, parse_command

    make_sweep(tmp_path, {"r0": {"sleep": 600.0}})
    command = _command(tmp_path)
    (task,) = load_sweep(tmp_path / "generated" / "fake", command=parse_command(command)).tasks
    run = tmp_path / "runs" / "fake" / "r0"
    run.mkdir(parents=True)
    if before == "lost-running":
        _lost_attempt(run)
    program = [sys.executable, "-m", "sweepgen.run.local.supervise"]
    supervisor, job_write = start_supervisor(tmp_path, run, program, task.argv)
    try:
        cancel = _sweepgen(tmp_path, "cancel", "generated/fake", "--only", "r0")
        seen = read_until(cancel, "waiting for the start of r0")
        hand_over(job_write, "runs/fake/r0")  # the start goes on: the run is handed over
        out, err = cancel.communicate(timeout=LOADED_S)
        assert cancel.returncode == 0 and "cancelled 1 run(s)" in out, out + seen + err
        assert supervisor.wait(timeout=LOADED_S) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
    status = read_status(run)
    assert status is not None and status.state is RunState.CANCELLED, status
    assert _starts(run) <= 1 and not runlock.is_held(run)
    assert _shown(tmp_path)["state"] == "CANCELLED"


def test_a_lost_run_whose_loss_a_writer_recorded_while_it_was_queued_is_still_rerun_once(
    tmp_path, monkeypatch
):
    """`run --rerun-failed --jobs 1`: r1 (its last status `running`, its supervisor gone) is planned
    to start again and queued behind r0. Meanwhile `sweepgen status` shows r1 lost and writes
    nothing (a reading command), and a writer's look (what another `run`'s plan or a `cancel`
    records) records r1's loss (failed, "lost") in its status file. That is no other process running
    it: r1 starts once when r0 ends (before: "its status changed since it was planned (...; another
    process ran it)", never started, exit 1)."""

    release = tmp_path / "release"
    make_sweep(tmp_path, {"r0": {"release": str(release)}, "r1": {"release": str(release)}})
    (tmp_path / "waiter.py").write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'waiter.py'))} {{config}}"
    r0, r1 = (tmp_path / "runs" / "fake" / name for name in ("r0", "r1"))
    r1.mkdir(parents=True)
    _lost_attempt(r1)
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--rerun-failed", "--jobs", "1")
    try:
        _wait_until("r0's start", lambda: _starts(r0) == 1)
        row = next(r for r in json.loads(_status_json(tmp_path)) if r["run"] == "r1")
        assert row["state"] == "FAILED" and "lost" in row["reason"], row
        status = read_status(r1)
        assert status is not None and status.state is RunState.RUNNING, status  # `status` wrote nothing
        monkeypatch.chdir(tmp_path)
        collect(locate(Path("generated/fake"), ("r1",)).tasks, persist=True)  # a writer's look
        status = read_status(r1)
        assert status is not None and status.state is RunState.FAILED, status
        release.touch()
        out, err = proc.communicate(timeout=LOADED_S)
    finally:
        output_of(proc)
    assert proc.returncode == 0 and "Traceback" not in err, out + err
    assert _starts(r1) == 1 and read_status(r1).state is RunState.FINISHED, out + err


def _status_json(root: Path) -> str:
    proc = _sweepgen(root, "status", "generated/fake", "--format", "json")
    out, _ = proc.communicate(timeout=LOADED_S)
    return out


# a supervisor whose trainer start is looked at: the run's status file as it is the moment the
# trainer is started is copied to at_start.json
AT_START = """\
import json, subprocess, sys
from pathlib import Path
from sweepgen.run.core.base import RunState, RunStatus
from sweepgen.run.local import supervise
run_dir = Path(sys.argv[1])
real = subprocess.Popen
def popen(*args, **kwargs):
    status = run_dir / "sweepgen_status.json"
    (run_dir / "at_start.json").write_text(status.read_text() if status.exists() else "null")
    return real(*args, **kwargs)
subprocess.Popen = popen
status = RunStatus(
    RunState.RUNNING, "local", started="2026-01-01T00:00:00.000+00:00", attempt=1, done_file=None
).to_json()
job = {"run_dir": str(run_dir), "status": status, "stop_timeout_s": 5.0, "time_limit_s": None}
sys.exit(supervise.supervise(job, [sys.executable, "-c", "pass"]))
"""


def test_a_trainer_is_started_only_once_its_start_is_recorded(tmp_path):
    """A supervisor SIGKILLed between starting the trainer and recording it (its `sweepgen run` dead
    too) left a run whose status said nothing of that start: the next `run` started it again as if
    it had never run. The start is recorded before the trainer exists, naming the supervisor, so a
    supervisor killed at any moment leaves either no start or a lost one (FAILED, rerun only with
    --rerun-failed, as attempt 2)."""
    run = tmp_path / "r0"
    run.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", AT_START, str(run)], capture_output=True, text=True, timeout=LOADED_S
    )
    assert done.returncode == 0, done.stdout + done.stderr
    at_start = json.loads((run / "at_start.json").read_text())
    assert at_start is not None and at_start["state"] == "running" and at_start["attempt"] == 1, at_start
    assert at_start["ids"]["starting"] is True and isinstance(at_start["ids"]["pid"], int), at_start
    assert "trainer_pgid" not in at_start["ids"], at_start
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and "starting" not in status.ids, status
    assert not (run / ".sweepgen-status.spare").exists()
