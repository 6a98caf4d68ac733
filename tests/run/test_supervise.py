"""A local run records its own end: its supervisor, which outlives the `sweepgen run` that started
it, writes how the run ended, stops it when anyone asks (`sweepgen cancel`, ``kill PID``), names the
signal that killed a trainer, and releases the run's lock only once the trainer's whole group is gone.

Real processes throughout (the sweepgen CLI, the supervisor, the fake trainer or a tiny script).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, hand_over, make_sweep, start_supervisor

from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.local.supervise import FINISHED_NOT_RECORDED


def _sweepgen(cwd: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(what: str, done, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = done()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _running(run: Path) -> dict:
    """The status once the supervisor has recorded the run as running with its trainer."""

    def recorded():
        status = read_status(run) if (run / "sweepgen_status.json").exists() else None
        return status if status and "trainer_pgid" in status.ids else None

    return _wait_for(f"{run} to run", recorded)


def _ended(run: Path, timeout: float = 60.0):
    def ended():
        status = read_status(run)
        return status if status and status.state not in (RunState.RUNNING, RunState.PENDING) else None

    return _wait_for(f"{run} to end", ended, timeout)


def test_a_run_whose_sweepgen_was_killed_records_its_true_end_and_is_never_started_again(tmp_path):
    # a foreign trainer held to exit 0 alone: before, its end was "lost" and --rerun-failed ran it again
    make_sweep(tmp_path, {"slow": {"steps": 6, "sleep": 0.3}})
    run = tmp_path / "runs/fake/slow"
    first = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND)
    _running(run)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    status = _ended(run)
    assert status.state is RunState.FINISHED and status.exit_code == 0 and status.ended
    again = _sweepgen(tmp_path, "run", "generated/fake", "--rerun-failed")
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, out + err
    assert len((run / "starts.jsonl").read_text().splitlines()) == 1
    shown = _sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    assert json.loads(shown.communicate(timeout=60)[0])[0]["state"] == "FINISHED"


def test_a_trainer_killed_by_sigkill_is_named_with_its_likely_cause(tmp_path):
    make_sweep(tmp_path, {"oom": {}})
    script = tmp_path / "oom.py"
    script.write_text(
        "import os, signal, sys\nprint('allocating', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    status = read_status(tmp_path / "runs/fake/oom")
    assert status.state is RunState.FAILED and status.exit_code == -signal.SIGKILL
    assert status.reason == "killed by SIGKILL (out of memory?)"
    log = (tmp_path / "runs/fake/oom/run.log").read_text()
    assert "Traceback" not in log and "Traceback" not in err
    assert "killed by SIGKILL (out of memory?)" in out + err


def test_cancel_stops_a_run_whose_sweepgen_is_gone_and_records_it_cancelled(tmp_path):
    make_sweep(tmp_path, {n: {"steps": 400, "sleep": 0.1, "spawn_child": True} for n in ("a", "b")})
    first = _sweepgen(tmp_path, "run", "generated/fake", "--jobs", "2", "--command", FAKE_COMMAND)
    runs = {n: tmp_path / "runs/fake" / n for n in ("a", "b")}
    statuses = {n: _running(r) for n, r in runs.items()}
    _wait_for("the children", lambda: all((r / "child.pid").exists() for r in runs.values()))
    first.send_signal(signal.SIGKILL)
    first.communicate()
    children = {n: int((r / "child.pid").read_text()) for n, r in runs.items()}
    cancel = _sweepgen(tmp_path, "cancel", "generated/fake", "--only", "a")
    out, err = cancel.communicate(timeout=120)
    assert cancel.returncode == 0, out + err
    assert "cancelled 1 run(s)" in out and "--rerun-failed" in out
    a = read_status(runs["a"])
    assert a.state is RunState.CANCELLED and "sweepgen cancel" in a.reason
    assert not _alive(statuses["a"].ids["pid"]) and not _alive(children["a"])
    assert not runlock.is_held(runs["a"])
    # the other run goes on, untouched
    assert read_status(runs["b"]).state is RunState.RUNNING and _alive(children["b"])
    cancel = _sweepgen(tmp_path, "cancel", "generated/fake")
    out, err = cancel.communicate(timeout=120)
    assert cancel.returncode == 0, out + err
    assert read_status(runs["b"]).state is RunState.CANCELLED and not _alive(children["b"])


def test_sigterm_to_the_pid_status_shows_cancels_the_run_and_sweepgen_run_goes_on(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.1}, "b": {"steps": 4, "sleep": 0.2}})
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--jobs", "1", "--command", FAKE_COMMAND)
    shown = _sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    a = _running(tmp_path / "runs/fake/a")
    rows = json.loads(shown.communicate(timeout=60)[0])
    os.kill(a.ids["pid"], signal.SIGTERM)  # `kill PID`, the pid the status file (and `status`) shows
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err  # a run was cancelled; the other still ran to its end
    status = read_status(tmp_path / "runs/fake/a")
    assert status.state is RunState.CANCELLED and "SIGTERM" in status.reason, status
    assert read_status(tmp_path / "runs/fake/b").state is RunState.FINISHED
    assert rows[0]["run"] == "a"


def test_a_trainer_that_ignores_the_stop_is_killed_by_its_supervisor_after_the_stop_timeout(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.1, "ignore_sigterm": True, "spawn_child": True}})
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND, "--stop-timeout", "1")
    run = tmp_path / "runs/fake/a"
    status = _running(run)
    _wait_for("the child", lambda: (run / "child.pid").exists())
    proc.send_signal(signal.SIGKILL)  # nobody but the supervisor is left to stop it
    proc.communicate()
    t0 = time.monotonic()
    os.kill(status.ids["pid"], signal.SIGTERM)
    ended = _ended(run, timeout=30)
    assert ended.state is RunState.CANCELLED and ended.exit_code == -signal.SIGKILL
    assert time.monotonic() - t0 < 20
    assert not _alive(int((run / "child.pid").read_text()))
    _wait_for("the lock to be released", lambda: not runlock.is_held(run))


def test_the_lock_is_released_only_once_the_whole_group_is_gone(tmp_path):
    # the trainer exits at once, leaving a worker that ignores SIGTERM: when the lock is free (and
    # the end recorded), the worker is gone
    make_sweep(tmp_path, {"a": {}})
    script = tmp_path / "leaves_a_worker.py"
    script.write_text(
        "import subprocess, sys\n"
        "w = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
        "open(sys.argv[2], 'w').write(str(w.pid))\n"
    )
    pidfile = tmp_path / "worker.pid"
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}} {shlex.quote(str(pidfile))}"
    )
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert not _alive(int(pidfile.read_text()))
    assert not runlock.is_held(tmp_path / "runs/fake/a")


def test_a_killed_supervisor_takes_its_trainer_with_it_and_its_sweepgen_says_so(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.1}})
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND)
    run = tmp_path / "runs/fake/a"
    status = _running(run)
    trainer = status.ids["trainer_pgid"]
    os.kill(status.ids["pid"], signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    _wait_for("the trainer to die with its supervisor", lambda: not _alive(trainer), timeout=30)
    ended = read_status(run)
    assert ended.state is RunState.FAILED
    assert "supervisor" in ended.reason and "killed by SIGKILL" in ended.reason, ended.reason
    # nothing on record says how its trainer ended (it may have exited 0 in the instant before)
    assert "may have finished" in ended.reason and "--rerun-failed" in ended.reason, ended.reason


def test_a_local_time_limit_stops_the_run_and_records_it_timed_out(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.1}})
    proc = _sweepgen(
        tmp_path,
        "run",
        "generated/fake",
        "--command",
        FAKE_COMMAND,
        "--time-limit",
        "1",
        "--stop-timeout",
        "5",
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    status = read_status(tmp_path / "runs/fake/a")
    assert status.state is RunState.FAILED and status.reason.startswith("timed out (time limit 1 s")
    assert "exit code" not in status.reason


def test_a_run_whose_folder_was_deleted_while_it_ran_says_so(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.1}})
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND)
    run = tmp_path / "runs/fake/a"
    _running(run)
    _wait_for("a step", lambda: (run / "metrics.jsonl").exists())
    shutil.rmtree(run)  # the trainer's next metrics write fails: it exits 1
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err
    status = read_status(run)
    assert status.state is RunState.FAILED and status.exit_code == 1
    assert status.reason == f"exit code 1; its run directory {Path('runs/fake/a')} was deleted while it ran"


def test_cancel_only_one_run_of_a_live_sweepgen_run_which_goes_on_with_the_rest(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.1}, "b": {"steps": 8, "sleep": 0.25}})
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--jobs", "2", "--command", FAKE_COMMAND)
    _running(tmp_path / "runs/fake/a")
    _running(tmp_path / "runs/fake/b")
    cancel = _sweepgen(tmp_path, "cancel", "generated/fake", "--only", "a")
    out, err = cancel.communicate(timeout=120)
    assert cancel.returncode == 0, out + err
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err  # one run cancelled; the other ran to its end
    assert "a: cancelled (cancelled by `sweepgen cancel`" in out + err
    assert read_status(tmp_path / "runs/fake/a").state is RunState.CANCELLED
    assert read_status(tmp_path / "runs/fake/b").state is RunState.FINISHED


def _nothing_pending(pid: int) -> bool:
    """No signal waits for ``pid``: the last one sent has been taken by its handler."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["SigPnd"], 16) == 0 and int(fields["ShdPnd"], 16) == 0


def test_a_graceful_stop_asked_twice_still_lets_the_trainer_save(tmp_path):
    # a search controller that takes over a pruned trial from one that died asks its run to stop
    # again (it cannot know whether the first request arrived): before, the supervisor read the
    # second SIGTERM as "now" and SIGKILLed the trainer in the middle of its checkpoint save
    from sweepgen.run.local import liveness

    hold = tmp_path / "hold"
    hold.touch()
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.05, "save_hold_file": str(hold)}})
    first = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND)
    run = tmp_path / "runs/fake/a"
    status = _running(run)
    _wait_for("the trainer's stop handler", lambda: (run / "starts.jsonl").exists())
    first.send_signal(signal.SIGKILL)  # the controller that asked first is gone
    first.communicate()
    reason = "pruned at step 3 (asha)"
    assert liveness.request_stop(run, status, reason)
    _wait_for("the trainer to start saving", lambda: (run / "term_seen").exists())
    assert liveness.request_stop(run, status, reason)  # asked again, by the one taking over
    _wait_for("the second request to be handled", lambda: _nothing_pending(status.ids["pid"]))
    hold.unlink()
    ended = _ended(run)
    assert ended.state is RunState.CANCELLED and ended.exit_code == 143, ended
    assert ended.reason == reason
    assert (run / "saved_on_term").exists()


def test_a_second_plain_kill_of_a_stopping_run_still_kills_at_once(tmp_path):
    # the rule above is for a request on file; a second `kill PID` with none stays "now"
    hold = tmp_path / "hold"
    hold.touch()
    make_sweep(tmp_path, {"a": {"steps": 400, "sleep": 0.05, "save_hold_file": str(hold)}})
    first = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND, "--stop-timeout", "600")
    run = tmp_path / "runs/fake/a"
    status = _running(run)
    _wait_for("the trainer's stop handler", lambda: (run / "starts.jsonl").exists())
    first.send_signal(signal.SIGKILL)
    first.communicate()
    os.kill(status.ids["pid"], signal.SIGTERM)
    _wait_for("the trainer to start saving", lambda: (run / "term_seen").exists())
    os.kill(status.ids["pid"], signal.SIGTERM)
    ended = _ended(run)
    assert ended.state is RunState.CANCELLED and ended.exit_code == -signal.SIGKILL, ended
    assert not (run / "saved_on_term").exists()


def test_a_trainer_killed_after_a_stop_request_whose_signal_never_came_is_failed_not_cancelled(tmp_path):
    """`sweepgen cancel` writes its reason to the run folder, then signals the supervisor; a cancel
    killed in between leaves the request on file with no stop under way. A trainer then killed by
    the kernel (out of memory) failed: before, its end read that stale request and was recorded
    cancelled, "cancelled by `sweepgen cancel`", which no cancel did."""
    make_sweep(tmp_path, {"oom": {}})
    script = tmp_path / "oom.py"
    script.write_text(
        "import json, os, signal, sys, yaml\n"
        "out = yaml.safe_load(open(sys.argv[1]))['output_dir']\n"
        "request = {'reason': 'cancelled by `sweepgen cancel`; resume with --rerun-failed', 'now': False}\n"
        "open(os.path.join(out, '.sweepgen-stop.json'), 'w').write(json.dumps(request))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    proc = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "Traceback" not in err, out + err
    status = read_status(tmp_path / "runs/fake/oom")
    assert status.state is RunState.FAILED and status.reason == "killed by SIGKILL (out of memory?)", status


# the supervisor, with the end of its trainer's group held until it is killed: the moment between
# the trainer's exit and the record of the run's end, made as long as a test needs to hit it
_HELD_AT_THE_END = """\
import os, signal, sys
from sweepgen.run.local import pgroup, supervise
def held(pgid):
    open(sys.argv[1], "w").close()
    while True:
        signal.pause()
pgroup.end_group = held
sys.exit(supervise.main(sys.argv[2:]))
"""


@pytest.mark.parametrize(("code", "shown"), [(0, "FINISHED"), (3, "FAILED")])
def test_a_supervisor_killed_between_its_trainers_exit_and_the_record_leaves_how_it_ended(
    tmp_path, code, shown
):
    """A supervisor SIGKILLed after its trainer exited, while it ends what the trainer left (its
    `sweepgen run` dead too): before, the run was "lost" (failed, exit code unknown) and a run held
    to exit 0 alone that had exited 0 was started again by `--rerun-failed`; now `status` shows how
    the trainer ended and says its supervisor died before recording it."""

    make_sweep(tmp_path, {"a": {}})
    run = tmp_path / "runs" / "fake" / "a"
    run.mkdir(parents=True)
    ending = tmp_path / "ending"
    (tmp_path / "held.py").write_text(_HELD_AT_THE_END)
    argv = [sys.executable, "-c", f"raise SystemExit({code})"]
    supervisor, job_write = start_supervisor(tmp_path, run, [sys.executable, "held.py", str(ending)], argv)
    try:
        hand_over(job_write, "runs/fake/a")
        _wait_for("the trainer's exit", ending.exists)
    finally:
        supervisor.kill()
        supervisor.wait()
    row = _status_row_once_released(tmp_path, run)
    assert row["state"] == shown and "lost" not in row["reason"], row
    assert "its supervisor died before recording this end" in row["reason"], row
    if code:
        assert "exit code 3" in row["reason"], row
    again = _sweepgen(
        tmp_path, "run", "generated/fake", "--rerun-failed", "--command", "false {config}", "--dry-run"
    )
    out, err = again.communicate(timeout=60)
    assert ("re-running" in out) == bool(code), out + err


def test_a_lost_run_whose_trainers_end_status_recorded_is_still_as_planned():
    """`run --rerun-failed` plans to start again a run whose supervisor died after writing how its
    trainer ended (exit 3); `sweepgen status` then records that end (failed, exit code 3). Nobody
    ran it meanwhile, so the start planned still holds (before, the record read as another
    process's run: "its status changed since it was planned", never started, exit 1)."""
    from dataclasses import replace

    from sweepgen.run.core.base import RunStatus, lost_end, trainer_exit, unchanged_since

    end = {
        "state": "failed",
        "exit_code": 3,
        "ended": "2026-01-01T00:01:00.000+00:00",
        "reason": "exit code 3",
    }
    planned = RunStatus(RunState.RUNNING, "local", ids={"pid": 1, "trainer_end": end})
    state, reason = lost_end(planned)
    recorded = replace(
        planned, state=state, reason=reason, ended=end["ended"], exit_code=trainer_exit(planned)
    )
    assert recorded.state is RunState.FAILED and recorded.exit_code == 3
    assert unchanged_since(planned, recorded)
    assert not unchanged_since(planned, replace(recorded, attempt=2))  # another attempt: changed


def test_cancel_of_a_run_whose_supervisor_is_stopped_says_so_and_it_stops_once_continued(tmp_path):
    """A supervisor stopped with SIGSTOP (Ctrl-Z of a shell it was moved to) is paused, not dead:
    `cancel` waits for it as for any supervisor, then says it is stopped and how to let it go on
    (before: only "look at the process with `ps`"); once continued, it stops and records the run."""
    make_sweep(tmp_path, {"slow": {"steps": 600, "sleep": 0.1}})
    run = tmp_path / "runs/fake/slow"
    first = _sweepgen(tmp_path, "run", "generated/fake", "--stop-timeout", "0", "--command", FAKE_COMMAND)
    pid = None
    try:
        pid = int(_running(run).ids["pid"])
        os.kill(pid, signal.SIGSTOP)
        cancel = _sweepgen(tmp_path, "cancel", "generated/fake")
        out, err = cancel.communicate(timeout=120)
        assert cancel.returncode == 2 and "Traceback" not in err, out + err
        assert "(it is stopped: SIGSTOP or Ctrl-Z)" in err and f"kill -CONT {pid}" in err, err
        assert read_status(run).state is RunState.RUNNING  # left as it was
        os.kill(pid, signal.SIGCONT)
        assert _ended(run).state is RunState.CANCELLED
        first.communicate(timeout=120)
    finally:
        if pid is not None:  # never left stopped, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if first.poll() is None:
            first.kill()
            first.communicate()


def test_a_run_folder_moved_and_replaced_by_a_link_while_it_ran_gets_its_end_where_it_is(tmp_path):
    """`mv r0 r0.real && ln -s r0.real r0` while the run runs: its end is never written through the
    link (refused), and is written in the folder the run now is in. Before, the link's target was
    taken for the folder the run started in (resolved now), so nothing was written there: it said
    `running` under a dead supervisor (lost, shown failed), and `--rerun-failed` ran it again."""
    run = tmp_path / "runs" / "r0"
    run.mkdir(parents=True)
    release = tmp_path / "release"
    wait = f"import os, time\nwhile not os.path.exists({str(release)!r}): time.sleep(0.02)"
    program = [sys.executable, "-m", "sweepgen.run.local.supervise"]
    supervisor, job = start_supervisor(tmp_path, run, program, [sys.executable, "-c", wait])
    hand_over(job, str(run))
    _running(run)
    moved = tmp_path / "runs" / "r0.real"
    run.rename(moved)
    run.symlink_to("r0.real")
    release.touch()
    # its end could not be written where it started: its `sweepgen run`, if alive, says finished
    assert supervisor.wait(timeout=120) == FINISHED_NOT_RECORDED
    status = read_status(moved)
    assert status is not None and status.state is RunState.FINISHED, status


# a trainer that writes its done file, says so, then exits 0 (``exit``) or trains on until killed
_DONE_THEN = (
    "import json, os, signal, sys, time; json.dump({{}}, open('runs/fake/a/summary.json', 'w')); "
    "open('done_written', 'w').close(); {}"
)


@pytest.mark.parametrize("when", ["trainer-running", "trainer-exited"])
def test_a_supervisor_killed_after_the_done_file_was_written_shows_finished_and_why(tmp_path, when):
    """The trainer wrote its done file; its supervisor was SIGKILLed (its `sweepgen run` dead too)
    before recording the end: while the trainer still ran (it dies with its supervisor), or after it
    exited 0, while its group was being ended. `status` shows it finished and says why the status
    file never said so (before: FINISHED with no reason at all), and nothing starts it again."""
    make_sweep(tmp_path, {"a": {}})
    run = tmp_path / "runs" / "fake" / "a"
    run.mkdir(parents=True)
    ending, written = tmp_path / "ending", tmp_path / "done_written"
    (tmp_path / "held.py").write_text(_HELD_AT_THE_END)
    then = "time.sleep(600)" if when == "trainer-running" else "sys.exit(0)"
    argv = [sys.executable, "-c", _DONE_THEN.format(then)]
    supervisor, job_write = start_supervisor(tmp_path, run, [sys.executable, "held.py", str(ending)], argv)
    try:
        hand_over(job_write, "runs/fake/a", done_file="summary.json")
        _wait_for("the done file", written.exists if when == "trainer-running" else ending.exists)
    finally:
        supervisor.kill()
        supervisor.wait()
    row = _status_row_once_released(tmp_path, run)
    assert row["state"] == "FINISHED", row
    assert "summary.json proves it; its supervisor died before recording the run's end" in row["reason"], row
    assert ("its trainer exited 0" in row["reason"]) == (when == "trainer-exited"), row
    again = _sweepgen(
        tmp_path, "run", "generated/fake", "--rerun-failed", "--command", "false {config}", "--dry-run"
    )
    out, err = again.communicate(timeout=60)
    assert "re-running" not in out, out + err


def _status_row_once_released(root, run):
    """`status --format json`'s one row, once the killed supervisor's lock on ``run`` is let go."""
    _wait_for("the lock's release", lambda: not runlock.is_held(run))
    shown_now = _sweepgen(root, "status", "generated/fake", "--format", "json")
    out, _ = shown_now.communicate(timeout=60)
    (row,) = json.loads(out)
    return row


# the supervisor, held once its trainer has exited and been reaped, before it writes how the
# trainer ended: the window where nothing durable knows the exit (only the trainer's parent did)
_HELD_BEFORE_THE_NOTE = """\
import os, signal, sys
from sweepgen.run.local import supervise
def held(*args):
    open(sys.argv[1], "w").close()
    while True:
        signal.pause()
supervise._ended = held
sys.exit(supervise.main(sys.argv[2:]))
"""


def test_a_supervisor_killed_before_it_noted_its_trainers_exit_says_the_run_may_have_finished(tmp_path):
    """A supervisor SIGKILLed after its trainer exited 0, before it wrote how it ended (its `sweepgen
    run` dead too; the trainer writes no done file): nothing durable knows the exit any more, so the
    run is lost, and `status` says it may have finished and to look before `--rerun-failed` starts
    it again (before: "lost" alone, read as a run that failed)."""
    make_sweep(tmp_path, {"a": {}})
    run = tmp_path / "runs" / "fake" / "a"
    run.mkdir(parents=True)
    ending = tmp_path / "ending"
    (tmp_path / "held.py").write_text(_HELD_BEFORE_THE_NOTE)
    argv = [sys.executable, "-c", "raise SystemExit(0)"]
    supervisor, job_write = start_supervisor(tmp_path, run, [sys.executable, "held.py", str(ending)], argv)
    try:
        hand_over(job_write, "runs/fake/a")
        _wait_for("the trainer's exit", ending.exists)
    finally:
        supervisor.kill()
        supervisor.wait()
    row = _status_row_once_released(tmp_path, run)
    assert row["state"] == "FAILED" and "lost" in row["reason"], row
    assert "may have finished" in row["reason"] and "--rerun-failed" in row["reason"], row
