"""Two `sweepgen run` on one sweep start every run exactly once.

Real processes (the sweepgen CLI and the fake trainer), real locks: every start of a run appends a
line to its starts.jsonl, so a run started twice in one directory is seen, not guessed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, LOADED_S, make_sweep, output_of, read_until

from sweepgen.run.core.base import RunState, read_status

RUNS = {f"r{i}": {"steps": 3, "sleep": 0.25} for i in range(4)}


def _sweepgen(cwd: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _assert_each_run_started_and_finished_once(root: Path) -> None:
    for name, fake in RUNS.items():
        run = root / "runs" / "fake" / name
        starts = (run / "starts.jsonl").read_text().splitlines()
        assert len(starts) == 1, f"{name} started {len(starts)} times: {starts}"
        steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
        assert steps == list(range(1, fake["steps"] + 1)), f"{name}: metrics rows {steps}"
        assert (run / "summary.json").is_file()
        status = read_status(run)
        assert status is not None and status.state is RunState.FINISHED and status.attempt == 1


@pytest.mark.parametrize("delay_s", [0.0, 0.4], ids=["together", "second-later"])
def test_two_concurrent_runs_start_every_run_exactly_once(tmp_path, delay_s):
    make_sweep(tmp_path, RUNS)
    first = _sweepgen(tmp_path, "run", "generated/fake", "--jobs", "1", "--command", FAKE_COMMAND)
    time.sleep(delay_s)  # "second-later": the first has started r0 and queued the others
    second = _sweepgen(tmp_path, "run", "generated/fake", "--jobs", "2", "--command", FAKE_COMMAND)
    outs = [p.communicate(timeout=120) for p in (first, second)]
    for proc, (out, err) in zip((first, second), outs):
        assert proc.returncode == 0, out + err
        assert "Traceback" not in err
    _assert_each_run_started_and_finished_once(tmp_path)
    # between them they started each run once; what one skipped, it says why
    said = outs[0][0] + outs[1][0]
    assert "another process" in said


def test_a_run_left_by_a_sigkilled_sweepgen_is_not_started_again(tmp_path):
    hold = tmp_path / "hold"  # the run goes on until the test removes it: still running below
    hold.touch()
    runs = {"slow": {"steps": 2, "sleep": 0.1, "hold_file": str(hold)}}
    make_sweep(tmp_path, runs)
    run = tmp_path / "runs" / "fake" / "slow"
    # held to its done file: with exit 0 alone as the proof, an exit nobody saw proves nothing
    first = _sweepgen(
        tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND, "--done-file", "summary.json"
    )
    deadline = time.monotonic() + 60
    while not (run / "metrics.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)  # sweepgen dies; its trainer goes on, holding the run's lock
    first.communicate()
    status = read_status(run)
    assert status is not None and status.state is RunState.RUNNING
    again = _sweepgen(
        tmp_path,
        "run",
        "generated/fake",
        "--command",
        FAKE_COMMAND,
        "--done-file",
        "summary.json",
        "--rerun-failed",
        "--no-wait",
    )
    out, err = again.communicate(timeout=60)
    # not started twice, and not reported as done: exit 1, "still running elsewhere"
    assert again.returncode == 1, out + err
    assert "another process holds its lock" in out and "still running elsewhere" in err
    shown = _sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    assert json.loads(shown.communicate(timeout=60)[0])[0]["state"] == "RUNNING"
    # the command remembered (.sweepgen-run.json): a plain `run` waits for it, then says how it ended
    waited = _sweepgen(tmp_path, "run", "generated/fake")
    seen = read_until(waited, "waiting for 1 run(s)")  # it saw the run still going...
    hold.unlink()  # ...and only now may the run end
    out, rest = waited.communicate(timeout=LOADED_S)
    err = seen + rest
    assert waited.returncode == 0, out + err
    assert "waiting for 1 run(s) another `sweepgen run` is running: slow" in err
    assert "slow: finished" in out
    assert (run / "summary.json").exists()
    # its supervisor, which outlived the killed `sweepgen run`, recorded the end itself
    shown = _sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    assert json.loads(shown.communicate(timeout=60)[0])[0]["state"] == "FINISHED"
    status = read_status(run)
    assert status.state is RunState.FINISHED and status.exit_code == 0 and status.ended
    assert len((run / "starts.jsonl").read_text().splitlines()) == 1


def test_a_queued_run_that_another_process_ran_meanwhile_is_not_started_and_keeps_its_ending(
    tmp_path, monkeypatch
):
    """The plan saw no status; by the time the queued run's turn came, another `sweepgen run` had
    run it and it failed: it is not started again (no --rerun-failed) and is reported as failed."""
    from sweepgen.run.core.base import ExecutorOptions, RunStatus, write_status
    from sweepgen.run.core.plan.tasks import load_sweep, parse_command
    from sweepgen.run.local.executor import LocalExecutor

    make_sweep(tmp_path, {"r": {"steps": 1}})
    monkeypatch.chdir(tmp_path)
    sweep = load_sweep(Path("generated/fake"), command=parse_command(FAKE_COMMAND))
    (task,) = sweep.tasks
    ex = LocalExecutor(ExecutorOptions(sweep_dir=sweep.dir, lock=sweep.lock))
    task.run_dir.mkdir(parents=True)
    write_status(task.run_dir, RunStatus(RunState.FAILED, "local", reason="exit code 3"))
    ex.start([task], {task.name: None})  # planned: never started
    status = ex.poll()[task.name]
    assert status.state is RunState.FAILED and "another process ran it" in status.reason
    assert "(now failed: exit code 3; another process ran it)" in status.reason  # how it ended there
    assert ex.done() and not (task.run_dir / "starts.jsonl").exists()


def _waiting_run(root: Path, plant: Callable[[Path], None] | None = None) -> tuple[subprocess.Popen, str]:
    """`sweepgen run` of run a, whose trainer waits for ``root``/release; once it has started; with
    the command it was given. ``plant``: called with run a's folder before the run starts."""
    import shlex

    from run_support import WAITER

    make_sweep(root, {"a": {"release": str(root / "release")}})
    if plant is not None:
        (root / "runs" / "fake" / "a").mkdir(parents=True)
        plant(root / "runs" / "fake" / "a")
    (root / "waiter.py").write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(root / 'waiter.py'))} {{config}}"
    first = _sweepgen(root, "run", "generated/fake", "--command", command)
    deadline = time.monotonic() + LOADED_S
    while not (root / "runs" / "fake" / "a" / "starts.txt").exists():
        if time.monotonic() > deadline or first.poll() is not None:
            first.kill()
            raise AssertionError(f"the run never started: {output_of(first)}")
        time.sleep(0.05)
    return first, command


def _cancel_stops(root: Path, first: subprocess.Popen) -> None:
    """`sweepgen cancel` stops run a, which ``first`` started: it ends cancelled, recorded so."""
    try:
        cancel = _sweepgen(root, "cancel", "generated/fake")
        out, err = cancel.communicate(timeout=LOADED_S)
        assert cancel.returncode == 0 and "cancelled 1 run(s)" in out, out + err
        out, err = first.communicate(timeout=LOADED_S)
    finally:
        (root / "release").touch()  # whatever failed, no trainer is left waiting
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 1 and "a: cancelled" in out, out + err
    status = read_status(root / "runs" / "fake" / "a")
    assert status is not None and status.state is RunState.CANCELLED, status


@pytest.mark.parametrize("how", ["deleted", "moved"])
def test_a_run_whose_folder_was_deleted_while_it_ran_is_not_started_a_second_time(tmp_path, how):
    """`rm -rf runs/fake/a` while a runs: its supervisor goes on with the deleted lock, so the lock
    the next `run` takes in a folder made again keeps nothing out. Before, that `run` started a
    second trainer beside the first (two writers, two ends); now it is refused and named (exit 1),
    `status` shows the run running, not "not started", and `cancel` reaches its supervisor. The same
    for `mv runs/fake/a elsewhere` (the supervisor holds the lock where it was moved): before, the
    next `run` started the run a second time, and `status` said it was not started."""
    import shutil

    run = tmp_path / "runs" / "fake" / "a"
    first, command = _waiting_run(tmp_path)
    try:
        if how == "deleted":
            shutil.rmtree(run)
        else:
            run.rename(tmp_path / "elsewhere")
        shown = _sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
        out, err = shown.communicate(timeout=LOADED_S)
        (row,) = json.loads(out)
        assert row["state"] == "RUNNING" and how in row["reason"], row
        second = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)
        out, err = second.communicate(timeout=LOADED_S)
        assert second.returncode == 1 and "Traceback" not in err, out + err
        assert f"its run folder was {how} " in out + err, out + err
        assert not (run / "starts.txt").exists()  # no second trainer: it would have written one
    except BaseException:
        (tmp_path / "release").touch()
        output_of(first)
        raise
    _cancel_stops(tmp_path, first)  # its end, in the folder made again
    if how == "moved":  # and where it was moved, which said `running` for ever
        status = read_status(tmp_path / "elsewhere")
        assert status is not None and status.state is RunState.CANCELLED, status


def test_a_run_whose_folder_was_moved_and_copied_back_while_it_ran_is_cancelled_by_cancel(tmp_path):
    """`mv runs/fake/a x && cp -a x runs/fake/a` while a runs: the status is back, with a copy of
    the lock its supervisor holds in x. `cancel` finds that supervisor by the lock it holds (before:
    "cannot be stopped from here: run `sweepgen cancel` on its machine", exit 1, while it ran here)."""
    import shutil

    run = tmp_path / "runs" / "fake" / "a"
    first, _ = _waiting_run(tmp_path)
    try:
        run.rename(tmp_path / "x")
        shutil.copytree(tmp_path / "x", run)
    except BaseException:
        (tmp_path / "release").touch()
        output_of(first)
        raise
    _cancel_stops(tmp_path, first)
    assert (run / "starts.txt").read_text().count("\n") == 1  # the copy's line: no second trainer


def test_a_run_folder_replaced_by_a_link_while_it_ran_has_its_end_where_it_was_moved(tmp_path):
    """`mv runs/fake/a a.real && ln -s a.real runs/fake/a` while a runs: the link is never written
    through; the end is recorded in a.real, and its run.log (there) says so. Before, the log said only
    that the end "could not be recorded", beside a status that had it; the run is never started again
    (the next `run` refuses the link, naming it)."""
    run, real = tmp_path / "runs" / "fake" / "a", tmp_path / "runs" / "fake" / "a.real"
    first, command = _waiting_run(tmp_path)
    try:
        run.rename(real)
        run.symlink_to("a.real")
    finally:
        (tmp_path / "release").touch()
    out, err = first.communicate(timeout=LOADED_S)
    assert first.returncode == 2 and "Traceback" not in err, out + err
    ended = read_status(real)
    assert ended is not None and (ended.state, ended.exit_code) == (RunState.FINISHED, 0), ended
    assert f"the end is recorded in {os.path.realpath(real)}" in (real / "run.log").read_text()
    again = _sweepgen(tmp_path, "run", "generated/fake", "--command", command)
    out, err = again.communicate(timeout=LOADED_S)
    assert again.returncode == 2 and "symbolic link" in err and "Traceback" not in err, out + err
    assert (real / "starts.txt").read_text().count("\n") == 1


def _planted_lock(run: Path) -> None:
    """A lock file left in the run folder before the run, as another user of a shared runs folder
    leaves one: writable by others (a umask of 002 leaves group write), and a hard link to a file
    outside (what is written into a lock file in place is that file's bytes)."""
    outside = run.parents[2] / "outside.txt"
    outside.write_text("keep me\n")
    os.link(outside, run / ".sweepgen.lock")
    os.chmod(outside, 0o666)


@pytest.mark.parametrize("planted", [False, True], ids=["own-lock", "planted-lock"])
def test_a_status_forged_in_a_live_runs_folder_never_makes_another_run_look_moved(tmp_path, planted):
    """Whoever can write the folder of a live run of ours (a shared runs folder) rewrites its status
    to say its supervisor was started for another run's folder: `run` took that other run for moved
    there and never started it. Where a run started is now read from the lock file its supervisor
    holds (written by `run`, this user's own), never from the status beside it. A lock file found in
    the folder (``planted``: writable by others, a hard link to a file outside) is replaced by a new
    one of this user's before anything is written in it: before, the status was read for such a
    lock, and the path was written through the hard link (the file outside truncated)."""
    from sweepgen.run.core import runlock
    from sweepgen.run.local import liveness

    run = tmp_path / "runs" / "fake" / "a"
    other = tmp_path / "runs" / "fake" / "b"
    first, _ = _waiting_run(tmp_path, _planted_lock if planted else None)
    if planted:
        assert (tmp_path / "outside.txt").read_text() == "keep me\n"
        assert runlock.is_own(os.stat(run / ".sweepgen.lock"))
    try:
        path = run / "sweepgen_status.json"
        data = json.loads(path.read_text())
        pid = data["ids"]["pid"]
        assert liveness.moved_to(pid, other) is None
        data["ids"]["run_dir"] = os.path.realpath(other)
        forged = tmp_path / "forged.json"
        forged.write_text(json.dumps(data))
        forged.replace(path)  # as another user would: a new file in the folder, not ours written
        assert liveness.moved_to(pid, other) is None
        assert os.path.join(os.path.realpath(other), ".sweepgen.lock") not in liveness.orphan_locks()
        run.rename(tmp_path / "elsewhere")  # a real move is still found
        assert liveness.moved_to(pid, run) == os.path.realpath(tmp_path / "elsewhere")
        (tmp_path / "elsewhere").rename(run)
    finally:
        (tmp_path / "release").touch()
        output_of(first)


def test_a_supervisor_whose_lock_records_no_path_is_placed_only_by_its_own_status(tmp_path):
    """A supervisor started by an older sweepgen holds a lock that records no path (stood in for
    here by emptying the live lock): where it started could be told only from the status beside it,
    which whoever writes a shared runs folder can replace. Before, a forged status (a file the
    folder's other writers could have written: group-writable, as a umask of 002 leaves it) made
    `run` take another run for moved there and never start it. Now only a status that is this
    user's own file and names this very supervisor (pid and start time) places it: a real move is
    still found, a forged claim is not."""
    from sweepgen.run.local import liveness

    run = tmp_path / "runs" / "fake" / "a"
    other = tmp_path / "runs" / "fake" / "b"
    first, _ = _waiting_run(tmp_path)
    try:
        os.truncate(run / ".sweepgen.lock", 0)  # the same file, held on: as an older sweepgen left it
        path = run / "sweepgen_status.json"
        data = json.loads(path.read_text())
        pid = data["ids"]["pid"]
        run.rename(tmp_path / "elsewhere")  # its own status places a real move
        assert liveness.moved_to(pid, run) == os.path.realpath(tmp_path / "elsewhere")
        (tmp_path / "elsewhere").rename(run)
        data["ids"]["run_dir"] = os.path.realpath(other)
        forged = tmp_path / "forged.json"
        forged.write_text(json.dumps(data))
        os.chmod(forged, 0o664)
        forged.replace(path)
        assert liveness.moved_to(pid, other) is None
        assert os.path.join(os.path.realpath(other), ".sweepgen.lock") not in liveness.orphan_locks()
        os.chmod(path, 0o644)  # the same claim in a file only this user could have written
        assert liveness.moved_to(pid, other) == os.path.realpath(run)
        data["ids"]["proc_start"] += 1  # ... naming another process of that pid: not this one
        forged.write_text(json.dumps(data))
        forged.replace(path)
        assert liveness.moved_to(pid, other) is None
    finally:
        (tmp_path / "release").touch()
        output_of(first)


def test_a_lock_file_replaced_under_a_waiting_acquirer_keeps_one_holder(tmp_path, monkeypatch):
    """A lock file that is not this user's own is replaced by a new one as it is taken (``acquire``);
    an acquirer that had opened the old file and gets its flock once the old holder lets go must not
    take itself for the run's holder: it checks the file it locked is still the one named."""
    from sweepgen.run.core import runlock

    run = tmp_path / "run"
    run.mkdir()
    (run / ".sweepgen.lock").write_text("")
    (run / ".sweepgen.lock").chmod(0o666)  # writable by others: not this user's own
    waiting = os.open(run / ".sweepgen.lock", os.O_RDWR)  # another `run`, between its open and flock
    held = runlock.acquire(run)
    assert held is not None and runlock.is_own(os.stat(run / ".sweepgen.lock"))
    assert os.fstat(held).st_ino == os.stat(run / ".sweepgen.lock").st_ino != os.fstat(waiting).st_ino
    opened, real_open = iter([waiting]), runlock._open
    monkeypatch.setattr(
        runlock, "_open", lambda run_dir, *, create: next(opened, None) or real_open(run_dir, create=create)
    )
    # its flock on the old file is free now, but the file named is held: no second holder
    assert runlock.acquire(run, retry_s=0) is None
    runlock.release(held)
    again = runlock.acquire(run, retry_s=0)
    assert again is not None and os.fstat(again).st_ino == os.stat(run / ".sweepgen.lock").st_ino
    runlock.release(again)
