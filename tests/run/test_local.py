"""`sweepgen run` with the local executor, end to end through the CLI, on the fake trainer
(tests/fixtures/fake_trainer.py): real processes, real files, a few seconds in all."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import FAKE_COMMAND, LOADED_S, make_sweep, output_of

from sweepgen.cli import main


@pytest.fixture
def sweep_root(cli_cwd):
    return cli_cwd


def run_cli(*args: str):
    return CliRunner().invoke(main, ["run", "generated/fake", "--command", FAKE_COMMAND, *args])


def starts(name: str) -> list[dict]:
    path = Path("runs/fake") / name / "starts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def status(name: str) -> dict:
    return json.loads((Path("runs/fake") / name / "sweepgen_status.json").read_text())


def interval(name: str) -> tuple[float, float]:
    summary = json.loads((Path("runs/fake") / name / "summary.json").read_text())
    return starts(name)[-1]["t"], summary["t_end"]


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_all_runs_finish_and_the_table_lists_them(sweep_root):
    make_sweep(sweep_root, {"a": {"steps": 3}, "b": {"steps": 2, "reward_end": 0.5}})
    result = run_cli("--jobs", "2")
    assert result.exit_code == 0, result.output
    assert status("a")["state"] == status("b")["state"] == "finished"
    assert status("a")["exit_code"] == 0 and status("a")["command"][-1] == "generated/fake/a.yaml"
    table = result.stdout[result.stdout.index("results") :]
    assert "finished" in table and "0.900" in table and "0.500" in table
    log = (sweep_root / "runs/fake/a/run.log").read_text()
    assert "=== sweepgen: attempt 1" in log and "fake_trainer: done" in log  # stdout captured in run.log


def test_jobs_2_runs_two_at_once_and_jobs_1_one_at_a_time(sweep_root):
    # 2 s of "training" each: far longer than the difference in start-up of two processes started
    # together, even on a loaded machine
    make_sweep(sweep_root, {"a": {"steps": 4, "sleep": 0.5}, "b": {"steps": 4, "sleep": 0.5}})
    assert run_cli("--jobs", "2").exit_code == 0
    assert overlap(interval("a"), interval("b"))
    make_sweep(sweep_root, {"c": {"steps": 2, "sleep": 0.1}, "d": {"steps": 2, "sleep": 0.1}})
    assert run_cli("--jobs", "1", "--only", "c,d").exit_code == 0
    assert not overlap(interval("c"), interval("d"))


def test_only_runs_just_the_named_runs(sweep_root):
    make_sweep(sweep_root, {"a": {}, "b": {}, "c": {}})
    result = run_cli("--only", "b", "--only", "c")
    assert result.exit_code == 0, result.output
    assert not (sweep_root / "runs/fake/a").exists()
    assert len(starts("b")) == len(starts("c")) == 1


def test_only_with_a_typo_exits_2_with_a_suggestion(sweep_root):
    make_sweep(sweep_root, {"seed_42": {}})
    result = run_cli("--only", "seed_24")
    assert result.exit_code == 2
    assert "seed_42" in result.stderr and "Traceback" not in result.output


def test_dry_run_writes_nothing(sweep_root):
    make_sweep(sweep_root, {"a": {}, "b": {}})
    before = tree(sweep_root)
    result = run_cli("--dry-run", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert tree(sweep_root) == before
    assert (
        "start: not started yet" in result.stdout and "fake_trainer.py generated/fake/a.yaml" in result.stdout
    )


def test_finished_runs_are_skipped(sweep_root):
    make_sweep(sweep_root, {"a": {}, "b": {}})
    assert run_cli("--only", "a").exit_code == 0
    result = run_cli()
    assert result.exit_code == 0, result.output
    assert len(starts("a")) == 1 and len(starts("b")) == 1
    assert "skipped (finished before)" in result.stdout


def test_a_failing_run_exits_1_and_prints_its_log_tail(sweep_root):
    make_sweep(sweep_root, {"good": {}, "bad": {"steps": 5, "fail_at": 2, "exit_code": 7}})
    result = run_cli("--jobs", "2")
    assert result.exit_code == 1
    assert status("bad")["state"] == "failed" and status("bad")["exit_code"] == 7
    assert status("good")["state"] == "finished"
    assert "bad failed (exit code 7)" in result.stderr
    assert "failing at step 2 as configured" in result.stderr  # the tail of run.log


def test_exit_0_without_the_declared_done_file_is_a_failure(sweep_root):
    make_sweep(sweep_root, {"a": {"no_summary": True}})
    result = run_cli("--done-file", "summary.json")
    assert result.exit_code == 1
    assert status("a")["reason"] == "exited 0 but wrote no summary.json"


def test_a_foreign_trainer_finishes_on_exit_0_alone(sweep_root):
    make_sweep(sweep_root, {"a": {"no_summary": True}})
    result = run_cli()
    assert result.exit_code == 0, result.output
    assert status("a")["state"] == "finished" and status("a")["done_file"] is None
    assert "skipped (finished before)" in run_cli().stdout  # and stays finished for the next run


def test_rerun_failed_reruns_only_the_failed_run_from_its_checkpoint(sweep_root):
    make_sweep(sweep_root, {"ok": {"steps": 4}, "flaky": {"steps": 4, "fail_at": 3, "fail_attempts": 1}})
    assert run_cli("--jobs", "2").exit_code == 1
    # without the flag a failure is not retried behind the user's back, and the exit code says so
    again = run_cli()
    assert again.exit_code == 1 and "--rerun-failed" in again.stderr
    assert len(starts("flaky")) == 1
    result = run_cli("--rerun-failed")
    assert result.exit_code == 0, result.output
    assert len(starts("ok")) == 1  # the finished run was not touched
    assert [s["resumed_from"] for s in starts("flaky")] == [0, 2]  # resumed, not restarted
    assert status("flaky")["state"] == "finished" and status("flaky")["attempt"] == 2
    log = (sweep_root / "runs/fake/flaky/run.log").read_text()
    assert "attempt 1" in log and "attempt 2" in log  # the failed attempt's log is kept


def test_gpu_packing_never_puts_more_than_per_gpu_runs_on_a_gpu(sweep_root):
    runs = {f"r{i}": {"steps": 3, "sleep": 0.15} for i in range(5)}
    make_sweep(sweep_root, runs)
    result = run_cli("--gpus", "0,1", "--per-gpu", "1")
    assert result.exit_code == 0, result.output
    spans = {n: (interval(n), starts(n)[-1]["cuda"]) for n in runs}
    assert {gpu for _, gpu in spans.values()} == {"0", "1"}
    for a, b in ((a, b) for a in runs for b in runs if a < b):
        if spans[a][1] == spans[b][1]:
            assert not overlap(spans[a][0], spans[b][0]), (a, b)
    assert status("r0")["ids"]["gpu"] in ("0", "1")


def test_gpus_outside_the_shells_visible_devices_are_refused(sweep_root, monkeypatch):
    make_sweep(sweep_root, {"a": {}})
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    result = run_cli("--gpus", "0,3")
    assert result.exit_code == 2 and "--gpus 0 not in this shell's CUDA_VISIBLE_DEVICES=2,3" in result.stderr
    assert run_cli("--gpus", "3").exit_code == 0
    assert starts("a")[-1]["cuda"] == "3"


def test_jobs_beyond_the_gpu_slots_is_refused(sweep_root):
    make_sweep(sweep_root, {"a": {}})
    result = run_cli("--gpus", "0,1", "--per-gpu", "2", "--jobs", "5")
    assert result.exit_code == 2 and "4 GPU slots" in result.stderr
    assert run_cli("--per-gpu", "2").exit_code == 2  # --per-gpu without --gpus


def test_a_lost_run_counts_as_failed(sweep_root):
    make_sweep(sweep_root, {"a": {}})
    run_dir = sweep_root / "runs/fake/a"
    run_dir.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (run_dir / "sweepgen_status.json").write_text(
        json.dumps(
            {"state": "running", "executor": "local", "ids": {"pid": dead.pid, "host": os.uname().nodename}}
        )
    )
    result = run_cli()
    assert result.exit_code == 1 and "failed before" in result.output
    assert run_cli("--rerun-failed").exit_code == 0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # an unreaped zombie has exited


def _start_and_wait_for_children(sweep_root, runs, *extra):
    """`sweepgen run` as a real process; returns it and the pids of the runs and their children
    once every run has spawned its own child."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sweepgen",
            "run",
            "generated/fake",
            "--jobs",
            "2",
            "--command",
            FAKE_COMMAND,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + LOADED_S
    while not all((sweep_root / f"runs/fake/{n}/child.pid").exists() for n in runs):
        assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
        time.sleep(0.05)
    pids = [status(n)["ids"]["pid"] for n in runs]
    pids += [int((sweep_root / f"runs/fake/{n}/child.pid").read_text()) for n in runs]
    assert all(_alive(p) for p in pids)
    return proc, pids


def _read_until(stream, text: bytes, timeout: float) -> bytes:
    import select

    seen, deadline = b"", time.monotonic() + timeout
    while text not in seen:
        assert time.monotonic() < deadline, seen
        if select.select([stream], [], [], 0.1)[0]:
            seen += os.read(stream.fileno(), 4096)
    return seen


GRACE_S = 3.0  # a stop timeout: long enough to see a run still there inside it


def _wait_gone(pids: list[int]) -> list[int]:
    """The pids still alive once they all ended or the deadline passed (a killed group may take a
    moment to be reaped on a loaded machine)."""
    deadline = time.monotonic() + LOADED_S
    while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_every_child_and_marks_it_cancelled(sweep_root, sig):
    runs = {n: {"steps": 2000, "sleep": 0.1, "spawn_child": True} for n in ("a", "b")}
    make_sweep(sweep_root, {**runs, "c": {"steps": 1}})
    proc, pids = _start_and_wait_for_children(sweep_root, runs)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 130, err
    assert not _wait_gone(pids)  # trainers and their own children: all gone
    assert {status(n)["state"] for n in runs} == {"cancelled"}
    assert not (sweep_root / "runs/fake/c").exists()  # queued, never started: left pending
    assert b"--rerun-failed" in err and b"Traceback" not in err


def test_a_run_that_ignores_sigterm_is_killed_after_the_stop_timeout(sweep_root):
    # the runs would go on for 200 s: ending well before that is the stop timeout's doing, whatever
    # the machine's load
    runs = {n: {"steps": 2000, "sleep": 0.1, "spawn_child": True, "ignore_sigterm": True} for n in ("a", "b")}
    make_sweep(sweep_root, runs)
    proc, pids = _start_and_wait_for_children(sweep_root, runs, "--stop-timeout", "1")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 130 and time.monotonic() - t0 < LOADED_S, err
    assert not _wait_gone(pids)
    assert {status(n)["exit_code"] for n in runs} == {-9} and {status(n)["state"] for n in runs} == {
        "cancelled"
    }


def test_a_second_ctrl_c_kills_at_once(sweep_root):
    runs = {n: {"steps": 2000, "sleep": 0.1, "spawn_child": True, "ignore_sigterm": True} for n in ("a", "b")}
    make_sweep(sweep_root, runs)
    # a stop timeout no loaded machine reaches: ending at all is the second Ctrl-C's doing
    proc, pids = _start_and_wait_for_children(sweep_root, runs, "--stop-timeout", "600")
    proc.send_signal(signal.SIGINT)
    err = _read_until(proc.stderr, b"press Ctrl-C again", timeout=LOADED_S)
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 130, (err + rest).decode()
    assert b"killing the runs now" in err + rest
    assert not _wait_gone(pids)
    assert {status(n)["state"] for n in runs} == {"cancelled"}


def test_the_bundled_trainer_without_the_train_extra_is_refused_before_anything_starts(
    sweep_root, monkeypatch
):
    make_sweep(sweep_root, {"a": {}})
    monkeypatch.setitem(sys.modules, "trl", None)  # find_spec("trl") now finds nothing
    result = CliRunner().invoke(main, ["run", "generated/fake"])
    # trl is named (alone here; after torch and transformers where the [train] extra is not installed)
    assert result.exit_code == 2 and "sweepgen[train]" in result.stderr
    assert re.search(r"the bundled trainer needs (\w+, )*trl, which", result.stderr), result.stderr
    assert not (sweep_root / "runs").exists()


def test_a_run_dir_from_another_version_of_its_config_is_refused_not_skipped(sweep_root):
    make_sweep(sweep_root, {"a": {"steps": 2}, "b": {"steps": 2}})
    assert run_cli().exit_code == 0
    # a comment is not a different config: both runs are still skipped as finished
    folder = sweep_root / "generated/fake"
    text = (folder / "a.yaml").read_text() + "# a note\n"
    (folder / "a.yaml").write_text(text)
    lock = json.loads((folder / "sweep.lock.json").read_text())
    lock["files"][0]["sha256"] = __import__("hashlib").sha256(text.encode()).hexdigest()
    (folder / "sweep.lock.json").write_text(json.dumps(lock))
    assert run_cli().exit_code == 0 and len(starts("a")) == 1
    # the spec changed a's steps: its finished result is not a's result any more
    make_sweep(sweep_root, {"a": {"steps": 5}, "b": {"steps": 2}})
    result = run_cli()
    assert (
        result.exit_code == 2
        and "another version of the config: a (runs/fake/a: its config changed)" in result.stderr
    )
    assert "new output_dir" in result.stderr
    assert len(starts("a")) == len(starts("b")) == 1  # nothing started
    report = CliRunner().invoke(main, ["report", "generated/fake", "--no-plot"])
    assert report.exit_code == 2 and "another version of their config: a" in report.stderr


def test_an_unexpected_error_while_following_stops_the_started_runs(sweep_root, monkeypatch):
    from sweepgen.run.local.executor import LocalExecutor

    runs = {n: {"steps": 200, "sleep": 0.1} for n in ("a", "b")}
    make_sweep(sweep_root, runs)

    def broken_poll(self):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(LocalExecutor, "poll", broken_poll)
    result = run_cli("--jobs", "2", "--stop-timeout", "5")
    assert result.exit_code == 70, result.output  # an internal error, reported as one
    pids = [status(n)["ids"]["pid"] for n in runs]
    assert not [p for p in pids if _alive(p)]
    assert {status(n)["state"] for n in runs} == {"cancelled"}


def test_a_run_dir_that_cannot_be_created_is_a_failed_run_not_a_crash(tmp_path):
    from sweepgen.run.core.base import ExecutorOptions, RunState, RunTask
    from sweepgen.run.local.executor import LocalExecutor

    ok = RunTask("a", "a", Path("a.yaml"), tmp_path / "a", (sys.executable, "-c", "pass"))
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    bad = RunTask("b", "b", Path("b.yaml"), blocked / "b", (sys.executable, "-c", "pass"))
    ex = LocalExecutor(ExecutorOptions(sweep_dir=tmp_path, lock={}, jobs=2))
    ex.start([bad, ok])  # must not raise, and must still start the run after it
    deadline = time.monotonic() + LOADED_S
    while not ex.done():
        assert time.monotonic() < deadline
        live = ex.poll()
        time.sleep(0.05)
    live = ex.poll()
    assert live["b"].state is RunState.FAILED and "could not create the run directory" in live["b"].reason
    assert live["a"].state is not RunState.RUNNING and not ex._running


def test_a_command_that_cannot_be_executed_is_a_failed_attempt_said_in_its_log_and_status(sweep_root):
    # found and executable, so `run` starts it (a missing program is refused before: test_run_program_found),
    # but its interpreter is not there: exec fails in the supervisor
    make_sweep(sweep_root, {"a": {}})
    script = Path("broken-xyz.sh")
    script.write_text("#!/nonexistent/interpreter\nexit 0\n")
    script.chmod(0o755)
    result = CliRunner().invoke(main, ["run", "generated/fake", "--command", "./broken-xyz.sh {config}"])
    assert result.exit_code == 1, result.output
    s = status("a")
    assert s["state"] == "failed" and s["attempt"] == 1
    assert s["reason"] == "could not start: No such file or directory"
    log = (Path("runs/fake/a") / "run.log").read_text()
    assert "could not start the run" in log and "broken-xyz" in log


def test_stop_detached_asks_only_the_supervisor_its_status_proves(tmp_path):
    # a run a dead `sweepgen run` left (a search re-attaches it and may prune it): its status names
    # its supervisor; the stop is asked of that process alone (the reason in the run folder, then
    # SIGTERM), and the supervisor does the rest (tests/run/test_supervise.py)
    from dataclasses import replace

    from sweepgen.run.core.base import ExecutorOptions, RunState, RunStatus, RunTask, this_host
    from sweepgen.run.core.stopping import stop_request
    from sweepgen.run.local.executor import LocalExecutor
    from sweepgen.run.local.liveness import proc_start_ticks as _proc_start_ticks

    code = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: (print('term', flush=True), "
        "sys.exit(0))); print(1, flush=True); time.sleep(60)"
    )
    from sweepgen.run.local.liveness import SUPERVISOR_MODULE

    task = RunTask("a", "a", Path("a.yaml"), tmp_path / "a", ("true",))
    task.run_dir.mkdir()
    # a stand-in supervisor: its command line is the supervisor's and it holds the run's lock at the
    # fd that command line names, which is what `liveness.supervises` proves (a status file alone
    # may name any process)
    lock_fd = os.open(task.run_dir / ".sweepgen.lock", os.O_RDWR | os.O_CREAT, 0o644)
    proc = subprocess.Popen(
        [sys.executable, "-c", code, SUPERVISOR_MODULE, str(lock_fd), "0", "--", "true"],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
        pass_fds=(lock_fd,),
    )
    os.close(lock_fd)
    try:
        assert proc.stdout is not None and proc.stdout.readline()
        started = _proc_start_ticks(proc.pid)
        assert started is not None
        ids = {"pid": proc.pid, "pgid": proc.pid, "host": this_host(), "proc_start": started}
        ids["trainer_pgid"] = proc.pid  # (a supervisor that records its run says where its trainer is)
        status = RunStatus(RunState.RUNNING, "local", ids=ids)
        other_run = RunTask("b", "b", Path("b.yaml"), tmp_path / "b", ("true",))
        other_run.run_dir.mkdir()
        (other_run.run_dir / ".sweepgen.lock").write_bytes(b"")
        assert not LocalExecutor(
            ExecutorOptions(sweep_dir=tmp_path, lock={}, stop_timeout_s=0.5)
        ).stop_detached(other_run, status, "x")  # that process supervises run a, not run b
        ex = LocalExecutor(ExecutorOptions(sweep_dir=tmp_path, lock={}, stop_timeout_s=0.5))
        # not provably this run's process: another machine, a recycled pid, another executor's run
        for other in (
            replace(status, ids={**ids, "host": "elsewhere"}),
            replace(status, ids={**ids, "proc_start": started + 1}),
            replace(status, executor="slurm"),
            replace(status, ids={k: v for k, v in ids.items() if k != "trainer_pgid"}),  # an older supervisor
        ):
            assert not ex.stop_detached(task, other, "pruned at step 3 (asha)")
        assert proc.poll() is None and stop_request.reason(task.run_dir) is None
        assert ex.stop_detached(task, status, "pruned at step 3 (asha)")
        assert stop_request.reason(task.run_dir) == "pruned at step 3 (asha)"
        assert proc.stdout.readline() == "term\n"
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="makes a file of another user's (chown needs root)")
def test_another_users_lock_file_says_whose_it_is_and_starts_and_touches_nothing(sweep_root, monkeypatch):
    """A shared runs folder: another user's 0644 lock file, which this user cannot write (root can,
    so the kernel's EACCES is played for that file alone). The run is not started, nothing of theirs
    is changed, and the failure says whose the file is and how to go on."""
    from sweepgen.run.core import runlock

    make_sweep(sweep_root, {"a": {}}, sweep="fake")
    run = sweep_root / "runs/fake/a"
    run.mkdir(parents=True)
    lock = run / ".sweepgen.lock"
    lock.write_text("")
    os.chown(lock, 65534, 65534)
    lock.chmod(0o644)
    before = os.stat(lock)
    real_open = runlock._open

    def as_this_user(run_dir: Path, *, create: bool) -> int | None:
        if create and os.stat(runlock._lock_path(run_dir)).st_uid != os.geteuid():
            raise PermissionError(13, "Permission denied", str(runlock._lock_path(run_dir)))
        return real_open(run_dir, create=create)

    monkeypatch.setattr(runlock, "_open", as_this_user)
    result = run_cli()
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert "runs/fake/a/.sweepgen.lock belongs to user" in said and "(uid 65534, mode 0644)" in said, said
    assert "runs folder is shared with" in said and "Nothing was started" in said, said
    assert starts("a") == [] and sorted(p.name for p in run.iterdir()) == [".sweepgen.lock"]
    after = os.stat(lock)
    assert (after.st_ino, after.st_uid, after.st_mode, after.st_mtime_ns) == (
        before.st_ino,
        before.st_uid,
        before.st_mode,
        before.st_mtime_ns,
    )
