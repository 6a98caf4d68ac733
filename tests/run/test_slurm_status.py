"""The Slurm executor's logic without a cluster: squeue/sacct parsing, how a run's state is
reconciled with Slurm's view, the node-side wrapper's signals (real processes), `--dry-run`, and
`sweepgen status` / `cancel` over status files. The real-cluster tests are in test_slurm_cluster.py."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_support import FAKE_COMMAND, LOADED_S, make_sweep
from slurm_support import journal_ids

from sweepgen.cli import main
from sweepgen.run.core.base import TIMEOUT_REASON, RunState, RunStatus, RunTask, read_status, write_status
from sweepgen.run.core.shape import RunShape
from sweepgen.run.logs import trainer_states
from sweepgen.run.slurm import query as slurm_query
from sweepgen.run.slurm.executor import _worth_keeping, observe, reconcile
from sweepgen.run.slurm.query import JobInfo, expand, parse_sacct, parse_squeue
from sweepgen.run.slurm.task import NodeTask, outcome
from sweepgen.run.sweep.status import RunView


@pytest.fixture
def sweep_root(cli_cwd):
    return cli_cwd


def add_resources(folder: Path, **resources) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = resources
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def task(tmp_path: Path, name: str = "r") -> RunTask:
    return RunTask(
        name=name,
        variant=name,
        config_path=tmp_path / f"{name}.yaml",
        run_dir=tmp_path / name,
        argv=("true",),
    )


def slurm_status(state=RunState.RUNNING, **ids) -> RunStatus:
    return RunStatus(
        state, "slurm", reason="submitted to Slurm", ids={"job_id": "7_1", "job_name": "sweepgen-s", **ids}
    )


# -- parsing ---------------------------------------------------------------------------------------


def test_expand_array_ranges():
    assert expand("12_[0-2,5%2]") == ["12_0", "12_1", "12_2", "12_5"]
    assert expand("12_3") == ["12_3"]
    assert expand("12") == ["12"]


def test_parse_sacct_unfolds_pending_arrays_and_skips_steps():
    text = (
        "7_0|COMPLETED|sweepgen-s|0:0|00:00:03\n"
        "7_0.batch|COMPLETED|batch|0:0|00:00:03\n"
        "7_1|CANCELLED by 0|sweepgen-s|0:15|00:00:06\n"
        "7_[2-3%2]|PENDING|sweepgen-s|0:0|00:00:00\n"
    )
    jobs = parse_sacct(text)
    assert sorted(jobs) == ["7_0", "7_1", "7_2", "7_3"]
    assert jobs["7_1"].state == "CANCELLED" and jobs["7_1"].ended
    assert jobs["7_3"].state == "PENDING" and not jobs["7_3"].ended


def test_parse_sacct_reads_who_submitted_an_ended_job_and_from_where():
    jobs = parse_sacct("7_0|FAILED|sweepgen-s|1:0|00:00:03|ann|/home/ann/a|b\n")
    assert jobs["7_0"].user == "ann" and jobs["7_0"].workdir == "/home/ann/a|b"  # a | stays in it
    assert parse_sacct("7_0|FAILED|sweepgen-s|1:0|00:00:03\n")["7_0"].user == ""  # older output


def test_parse_squeue_keeps_the_pending_reason():
    jobs = parse_squeue("7_2|PENDING|sweepgen-s|JobHeldUser\n7_0|RUNNING|sweepgen-s|None\n")
    assert jobs["7_2"].reason == "JobHeldUser"
    assert jobs["7_0"].reason == ""


def fake_tool(bin_dir: Path, name: str, stderr: str, code: int) -> None:
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\necho '{stderr}' >&2\nexit {code}\n")
    path.chmod(0o755)


def test_squeue_of_only_ended_jobs_means_none_is_live(tmp_path, monkeypatch):
    fake_tool(tmp_path / "bin", "squeue", "slurm_load_jobs error: Invalid job id specified", 1)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert slurm_query.squeue(["5_1"]) == {}


def test_sacct_without_accounting_says_what_is_missing(tmp_path, monkeypatch):
    from sweepgen.errors import UserError

    fake_tool(tmp_path / "bin", "sacct", "Slurm accounting storage is disabled", 1)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(UserError) as err:
        slurm_query.sacct(["5"])
    assert "slurmdbd" in err.value.hint


# -- reconciliation ------------------------------------------------------------------------------


def test_summary_json_is_the_proof_of_success(tmp_path):
    t = task(tmp_path)
    t.run_dir.mkdir()
    (t.run_dir / "summary.json").write_text("{}")
    new = reconcile(t, slurm_status(), JobInfo("7_1", "CANCELLED"))
    assert new.state is RunState.FINISHED


@pytest.mark.parametrize(
    "job", [JobInfo("7_1", "COMPLETED", source="sacct"), None], ids=["ended", "forgotten"]
)
def test_a_run_proved_finished_whose_job_ended_unrecorded_says_why(tmp_path, job):
    """The trainer wrote summary.json, then the job ended before its node task recorded the end (a
    node lost, the task killed): FINISHED, and said why the status file still said running (before:
    no reason at all). While the job still runs, its node records the end: nothing is said."""
    t = task(tmp_path)
    t.run_dir.mkdir()
    (t.run_dir / "summary.json").write_text("{}")
    new = reconcile(t, slurm_status(), job)
    assert new.state is RunState.FINISHED, new
    assert new.reason == (
        "finished: its summary.json proves it; its Slurm job 7_1 died before recording the run's end"
    )
    live = reconcile(t, slurm_status(), JobInfo("7_1", "RUNNING", source="squeue"))
    assert live.state is RunState.FINISHED and live.reason is None


@pytest.mark.parametrize(
    "slurm_state, state, label",
    [
        ("CANCELLED", RunState.CANCELLED, "CANCELLED"),
        ("TIMEOUT", RunState.FAILED, "TIMEOUT"),
        ("OUT_OF_MEMORY", RunState.FAILED, "OUT_OF_MEMORY"),
        ("NODE_FAIL", RunState.FAILED, "NODE_FAIL"),
        ("FAILED", RunState.FAILED, "FAILED"),
        ("COMPLETED", RunState.FAILED, "FAILED"),
    ],
)
def test_a_job_that_ended_without_recording_gets_slurms_verdict(tmp_path, slurm_state, state, label):
    t = task(tmp_path)
    new = reconcile(t, slurm_status(), JobInfo("7_1", slurm_state, exit_code="1:0"))
    assert new.state is state
    assert new.ids["slurm_state"] == slurm_state
    assert new.ended
    assert RunView(t, new).label == label


def test_live_jobs_are_shown_with_slurms_word_but_not_persisted(tmp_path):
    t = task(tmp_path)
    status = slurm_status()
    pending = reconcile(t, status, JobInfo("7_1", "PENDING", reason="JobHeldUser"))
    assert pending.state is RunState.PENDING and "JobHeldUser" in pending.reason
    assert reconcile(t, status, JobInfo("7_1", "RUNNING")).state is RunState.RUNNING
    assert reconcile(t, status, None) is status  # unknown to Slurm (yet): shown as it is


def test_what_the_node_recorded_stands_unless_slurm_knows_better(tmp_path):
    t = task(tmp_path)
    failed = slurm_status(RunState.FAILED)
    failed = replace(failed, reason="exit code 3")
    assert reconcile(t, failed, JobInfo("7_1", "FAILED")) is failed
    # the node saw SIGTERM at the time limit and thought it was cancelled: Slurm says TIMEOUT
    cancelled = replace(slurm_status(RunState.CANCELLED), reason="cancelled")
    new = reconcile(t, cancelled, JobInfo("7_1", "TIMEOUT"))
    assert new.state is RunState.FAILED and new.reason == TIMEOUT_REASON
    assert RunView(t, new).label == "TIMEOUT"


def test_observe_ignores_a_reused_job_id_of_another_job(tmp_path, monkeypatch):
    t = task(tmp_path)
    write_status(t.run_dir, slurm_status())
    monkeypatch.setattr(
        slurm_query, "query_jobs", lambda ids: ({"7_1": JobInfo("7_1", "CANCELLED", name="someone")}, None)
    )
    (view,) = observe([t])
    assert view.status.state is RunState.RUNNING and view.job is None
    monkeypatch.setattr(
        slurm_query, "query_jobs", lambda ids: ({"7_1": JobInfo("7_1", "CANCELLED", name="sweepgen-s")}, None)
    )
    (view,) = observe([t])
    assert view.status.state is RunState.CANCELLED
    assert read_status(t.run_dir).state is RunState.CANCELLED  # learned from Slurm, so written down


def test_what_slurm_said_is_not_written_over_a_start_the_node_recorded_meanwhile(tmp_path, monkeypatch):
    """A requeued job (the run recorded its stop, squeue holds it PENDING) whose next attempt
    records its start while `status` learns the requeue: before, `status` wrote the requeue over
    that start, so the file named the last attempt (its number, start time and the trainer states
    it found) while the new one ran, and the next requeue counted one attempt too few."""
    from sweepgen.run.slurm import executor as slurm_executor

    t = task(tmp_path)
    stopped = replace(slurm_status(RunState.CANCELLED), attempt=1, started="2026-01-01T00:00:00.000+00:00")
    write_status(t.run_dir, stopped)
    again = replace(slurm_status(), attempt=2, started="2026-01-01T01:00:00.000+00:00")
    monkeypatch.setattr(
        slurm_query, "query_jobs", lambda ids: ({"7_1": JobInfo("7_1", "PENDING", source="squeue")}, None)
    )
    learned = slurm_executor.reconcile

    def node_starts_meanwhile(task_, status, job):
        new = learned(task_, status, job)
        write_status(t.run_dir, again)  # the requeued job starts its next attempt now
        return new

    monkeypatch.setattr(slurm_executor, "reconcile", node_starts_meanwhile)
    observe([t])
    assert read_status(t.run_dir) == again
    # without the node in between, the requeue is recorded as before
    write_status(t.run_dir, stopped)
    monkeypatch.setattr(slurm_executor, "reconcile", learned)
    observe([t])
    recorded = read_status(t.run_dir)
    assert recorded.state is RunState.RUNNING and recorded.ids["slurm_state"] == "REQUEUED"


def test_node_outcome_rules():
    assert outcome(0, finished=True, timed_out=True, cancelled=False)[0] is RunState.FINISHED
    assert outcome(-12, finished=False, timed_out=True, cancelled=False) == (RunState.FAILED, TIMEOUT_REASON)
    assert outcome(-15, finished=False, timed_out=False, cancelled=True)[0] is RunState.CANCELLED
    assert (
        outcome(0, finished=False, timed_out=False, cancelled=False)[1]
        == "exited 0 but wrote no summary.json"
    )
    assert outcome(3, finished=False, timed_out=False, cancelled=False)[1] == "exit code 3"
    assert (
        outcome(-9, finished=False, timed_out=False, cancelled=False)[1]
        == "killed by SIGKILL (out of memory?)"
    )


# -- the node-side wrapper, as a real process ------------------------------------------------------


def start_node(tmp_path: Path, fake: dict) -> tuple[subprocess.Popen, Path]:
    folder = make_sweep(tmp_path, {"n": fake}, sweep="node")
    argv = tuple(FAKE_COMMAND.replace("{config}", str(folder / "n.yaml")).split())
    return subprocess.Popen(node_argv(tmp_path, argv), env=NODE_ENV), tmp_path / "runs/node/n"


SUMMARY = "summary.json"
# the job's environment on the node (array 40, task 1)
NODE_ENV = {**os.environ, "SLURM_JOB_ID": "41", "SLURM_ARRAY_JOB_ID": "40", "SLURM_ARRAY_TASK_ID": "1"}


def node_argv(
    tmp_path: Path,
    argv: tuple[str, ...],
    done_file: str | None = "summary.json",
    shape: RunShape | None = None,
) -> list[str]:
    """The command line of the node-side wrapper running ``argv`` as run runs/node/n, as a job does."""
    ids = journal_ids(tmp_path / "runs/node", "n", "40_1")  # NODE_ENV's job
    status = RunStatus(RunState.RUNNING, "slurm", ids=ids, done_file=done_file)
    node = NodeTask(name="n", argv=argv, cwd=str(tmp_path), run_dir="runs/node/n", status=status, shape=shape)
    blob = tmp_path / "node.pkl"
    blob.write_bytes(pickle.dumps(node))
    code = (
        "import pickle, sys; from sweepgen.run.slurm.task import run_on_node; "
        f"run_on_node(pickle.loads(open({str(blob)!r}, 'rb').read()))"
    )
    return [sys.executable, "-c", code]


# exits 0 (no done file) after appending a line to starts.txt: each start of the run is counted
COUNTER = (
    "import os, sys, yaml; out = yaml.safe_load(open(sys.argv[1]))['output_dir']; "
    "os.makedirs(out, exist_ok=True); open(os.path.join(out, 'starts.txt'), 'a').write('start\\n')"
)


@pytest.mark.parametrize("done_file", [None, "summary.json"])
def test_a_job_slurm_runs_again_after_its_run_finished_does_not_start_it_again(tmp_path, done_file):
    """`scontrol requeue` of a finished job (or a node lost after the run recorded its end): Slurm
    runs the same job again. The run has finished: it is not started a second time, its recorded
    end is kept and the job succeeds (before: a trainer held to exit 0 alone ran twice; the bundled
    one refused and its FINISHED status became FAILED, exit 1)."""
    folder = make_sweep(tmp_path, {"n": {"steps": 1}}, sweep="node")
    config = str(folder / "n.yaml")
    if done_file is None:
        argv: tuple[str, ...] = (sys.executable, "-c", COUNTER, config)
    else:
        argv = tuple(FAKE_COMMAND.replace("{config}", config).split())
    node = node_argv(tmp_path, argv, done_file)
    run_dir = tmp_path / "runs/node/n"
    first = subprocess.run(node, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    ended = read_status(run_dir)
    assert ended is not None and ended.state is RunState.FINISHED and ended.attempt == 1, ended
    again = subprocess.run(node, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "finished already" in again.stderr, again.stderr
    assert "Traceback" not in again.stderr
    assert read_status(run_dir) == ended  # its end kept, no second attempt recorded
    starts = run_dir / ("starts.txt" if done_file is None else "starts.jsonl")
    assert len(starts.read_text().splitlines()) == 1
    assert (run_dir / "run.log").read_text().count("=== sweepgen: attempt") == 1


def test_another_node_of_a_finished_two_node_run_run_again_starts_nothing(tmp_path):
    """Node 1 of a two-node run whose job Slurm runs again after the run finished: it starts none of
    its ranks either (before, it started them, to wait for node 0's until the time limit)."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    run_dir = tmp_path / "runs/node/n"
    run_dir.mkdir(parents=True)
    ended = RunStatus(RunState.FINISHED, "slurm", exit_code=0, done_file=None, ids={"job_id": "40_1"})
    write_status(run_dir, ended)
    shape = RunShape(nodes=2, procs_per_node=1, launcher="torchrun")
    node = node_argv(tmp_path, (sys.executable, "-c", COUNTER, str(folder / "n.yaml")), None, shape)
    done = subprocess.run(
        node, env={**NODE_ENV, "SLURM_NODEID": "1"}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "finished already" in done.stderr, done.stderr
    assert not (run_dir / "starts.txt").exists() and read_status(run_dir) == ended


def _node_with_journal(tmp_path: Path, journal: dict | None) -> list[str]:
    """The node wrapper of a job of array 40 (task 1) for run n, as submitted: its status names the
    runs root's Slurm folder, whose jobs journal is ``journal`` (None: none written)."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    root = tmp_path / "runs/node/.sweepgen_slurm"
    root.mkdir(parents=True)
    if journal is not None:
        (root / "jobs.json").write_text(json.dumps(journal))
    ids = {"job_name": "sweepgen-node", "submitit_folder": str(root)}
    status = RunStatus(RunState.RUNNING, "slurm", reason="submitted to Slurm", ids=ids, done_file=None)
    argv = (sys.executable, "-c", COUNTER, str(folder / "n.yaml"))
    node = NodeTask(name="n", argv=argv, cwd=str(tmp_path), run_dir="runs/node/n", status=status)
    blob = tmp_path / "node.pkl"
    blob.write_bytes(pickle.dumps(node))
    code = (
        "import pickle; from sweepgen.run.slurm.task import run_on_node; "
        f"run_on_node(pickle.loads(open({str(blob)!r}, 'rb').read()))"
    )
    return [sys.executable, "-c", code]


@pytest.mark.parametrize(
    ("journal", "said"),
    [
        (None, "is not named in the Slurm jobs journal"),
        ({"arrays": [{"array_job_id": "39", "runs": {"39_0": "n"}}]}, "job 39_0, not this job 40_1"),
        ({"arrays": [{"array_job_id": "40", "runs": {"40_0": "other"}}]}, "is not named in the Slurm jobs"),
    ],
    ids=["no-journal", "another-job", "another-run"],
)
def test_a_job_the_journal_does_not_name_starts_nothing_even_without_a_status_file(tmp_path, journal, said):
    """A held array a `sweepgen run` submitted and was killed before recording (no journal entry,
    no status file: the run's first submission), released by hand (`scontrol release`): its job
    starts no trainer and says why in its log (before: no status file meant "run it", and the run
    ran here and again from the next `run`'s own submission)."""
    node = _node_with_journal(tmp_path, journal)
    done = subprocess.run(node, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and said in done.stderr and "not starting it" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    run_dir = tmp_path / "runs/node/n"
    assert not (run_dir / "starts.txt").exists() and read_status(run_dir) is None


def test_a_node_task_with_no_journal_folder_or_no_job_is_refused(monkeypatch):
    """A node task whose status names no jobs journal folder cannot be checked against it, so it
    starts nothing and says why (before: it was not asked, and started its run)."""
    from sweepgen.run.slurm import task as node_task

    status = RunStatus(RunState.RUNNING, "slurm", ids={"job_name": "sweepgen-node"})
    node = NodeTask(name="n", argv=("true",), cwd="/", run_dir="runs/node/n", status=status)
    monkeypatch.setenv("SLURM_JOB_ID", "41")
    monkeypatch.delenv("SLURM_ARRAY_JOB_ID", raising=False)
    said = node_task._unnamed(node)
    assert said is not None and "no Slurm jobs journal folder" in said and "41" in said
    monkeypatch.delenv("SLURM_JOB_ID")
    said = node_task._unnamed(node)
    assert said is not None and "not in a Slurm job" in said


def test_a_job_that_cannot_take_the_submission_lock_refuses_and_says_so(tmp_path, monkeypatch):
    """A job released by hand while a `sweepgen run` holds the submission lock past the wait
    (SUBMIT_LOCK_WAIT_S, set here through its in-process seam) starts nothing and names the lock,
    not a journal it could read."""
    import fcntl

    from sweepgen.run.slurm import journal

    root = tmp_path / "runs/node/.sweepgen_slurm"
    root.mkdir(parents=True)
    (root / "jobs.json").write_text(json.dumps({"arrays": [{"array_job_id": "40", "runs": {"40_1": "n"}}]}))
    monkeypatch.setattr(journal, "SUBMIT_LOCK_WAIT_S", 0.3)
    with open(root / "submit.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the stuck submission
        said = journal.why_unnamed(root, "n", "40_1")
    assert said is not None and "could not take the submission lock" in said, said
    assert str(root / "submit.lock") in said and "40_1" in said
    assert journal.why_unnamed(root, "n", "40_1") is None  # released: the journal names it


def test_a_job_the_journal_names_starts_its_run(tmp_path):
    node = _node_with_journal(tmp_path, {"arrays": [{"array_job_id": "40", "runs": {"40_1": "n"}}]})
    done = subprocess.run(node, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "runs/node/n"
    assert (run_dir / "starts.txt").read_text() == "start\n"
    ended = read_status(run_dir)
    assert ended is not None and ended.state is RunState.FINISHED and ended.ids["job_id"] == "40_1"


def wait_for_step(run_dir: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not (run_dir / "metrics.jsonl").exists():
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)


def test_node_wrapper_records_a_finished_run(tmp_path):
    proc, run_dir = start_node(tmp_path, {"steps": 2})
    assert proc.wait(timeout=60) == 0
    status = read_status(run_dir)
    assert status.state is RunState.FINISHED and status.exit_code == 0
    assert status.ids["job_id"] == "40_1" and status.ids["job_name"] == "sweepgen-node"
    assert "=== sweepgen: attempt 1" in (run_dir / "run.log").read_text()


def test_a_second_job_for_a_locked_run_directory_does_not_run_it_twice(tmp_path):
    from sweepgen.run.core import runlock

    run_dir = tmp_path / "runs/node/n"
    run_dir.mkdir(parents=True)
    before = RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "39_0", "job_name": "sweepgen-node"})
    write_status(run_dir, before)
    fd = runlock.acquire(run_dir)  # the job already running this run (here: this test) holds it
    try:
        proc, _ = start_node(tmp_path, {"steps": 2})
        assert proc.wait(timeout=60) == 3
    finally:
        runlock.release(fd)
    assert read_status(run_dir) == before  # left to the holder
    assert not (run_dir / "starts.jsonl").exists() and not (run_dir / "run.log").exists()


def test_node_wrapper_fails_with_the_runs_exit_code(tmp_path):
    proc, run_dir = start_node(tmp_path, {"fail_at": 1, "exit_code": 5})
    assert proc.wait(timeout=60) == 5  # so Slurm records FAILED too
    status = read_status(run_dir)
    assert (status.state, status.reason) == (RunState.FAILED, "exit code 5")
    assert "failing at step 1" in (run_dir / "run.log").read_text()


@pytest.mark.parametrize(
    "sig, state, reason",
    [
        (signal.SIGUSR2, RunState.FAILED, TIMEOUT_REASON),
        (signal.SIGTERM, RunState.CANCELLED, "cancelled"),
    ],
)
def test_node_wrapper_turns_slurms_signals_into_states(tmp_path, sig, state, reason):
    proc, run_dir = start_node(tmp_path, {"steps": 500, "sleep": 0.1})
    wait_for_step(run_dir)
    proc.send_signal(sig)  # Slurm signals the wrapper; it stops the run and records why
    assert proc.wait(timeout=30) != 0
    status = read_status(run_dir)
    assert (status.state, status.reason) == (state, reason)
    assert status.exit_code == -sig  # the run was asked to stop, not killed hard
    assert (status.ids.get("slurm_state") == "TIMEOUT") == (sig == signal.SIGUSR2)


# -- the CLI without a cluster -----------------------------------------------------------------------


@pytest.mark.slurm  # needs the [slurm] extra (submitit), not a running Slurm
def test_dry_run_prints_the_sbatch_header_and_writes_nothing(sweep_root):
    folder = make_sweep(sweep_root, {"a": {}, "b": {}}, sweep="fake")
    add_resources(
        folder, time="01:30:00", cpus_per_run=2, mem="4G", partition="debug", sbatch_extra=["--qos=low"]
    )
    before = sorted(p for p in sweep_root.rglob("*"))
    result = CliRunner().invoke(
        main, ["run", "generated/fake", "--executor", "slurm", "--dry-run", "--command", FAKE_COMMAND]
    )
    assert result.exit_code == 0, result.output
    for line in (
        "#SBATCH --array=0-1%2",
        "#SBATCH --time=90",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --mem=4G",
        "#SBATCH --partition=debug",
        "#SBATCH --qos=low",
        "#SBATCH --hold",
        "#SBATCH --job-name=sweepgen-fake",
        "[0] a:",
        "[1] b:",
    ):
        assert line in result.output
    assert sorted(p for p in sweep_root.rglob("*")) == before


@pytest.mark.slurm  # needs the [slurm] extra (submitit), not a running Slurm
def test_jobs_caps_how_many_array_tasks_run_at_once(sweep_root):
    folder = make_sweep(sweep_root, {"a": {}, "b": {}, "c": {}}, sweep="fake")
    add_resources(folder, time=5)
    result = CliRunner().invoke(
        main,
        ["run", "generated/fake", "--executor", "slurm", "--dry-run", "-j", "2", "--command", FAKE_COMMAND],
    )
    assert result.exit_code == 0, result.output
    assert "#SBATCH --array=0-2%2" in result.output


def test_run_on_slurm_without_resources_is_a_user_error(sweep_root):
    make_sweep(sweep_root, {"a": {}}, sweep="fake")
    result = CliRunner().invoke(
        main, ["run", "generated/fake", "--executor", "slurm", "--command", FAKE_COMMAND]
    )
    assert result.exit_code == 2
    assert (
        "generated/fake/sweep.lock.json: error: the Slurm executor needs a `resources:` block"
        in result.output
    )
    assert "Traceback" not in result.output


def test_local_only_options_are_refused_on_slurm(sweep_root):
    folder = make_sweep(sweep_root, {"a": {}}, sweep="fake")
    add_resources(folder, time=5)
    result = CliRunner().invoke(
        main, ["run", "generated/fake", "--executor", "slurm", "--gpus", "0", "--command", FAKE_COMMAND]
    )
    assert result.exit_code == 2 and "resources.gpus_per_run" in result.output


@pytest.mark.slurm  # needs the [slurm] extra (submitit), not a running Slurm
def test_submitting_without_slurm_says_where_to_run(sweep_root, monkeypatch):
    folder = make_sweep(sweep_root, {"a": {}}, sweep="fake")
    add_resources(folder, time=5)
    monkeypatch.setenv("PATH", str(sweep_root))  # no sbatch here
    result = CliRunner().invoke(
        main, ["run", "generated/fake", "--executor", "slurm", "--command", FAKE_COMMAND]
    )
    assert result.exit_code == 2
    assert "`sbatch` is not on PATH" in result.output
    assert not (sweep_root / "runs/fake/a/sweepgen_status.json").exists()


def write_run(run_dir: Path, status: RunStatus, log: str = "", summary: bool = False) -> None:
    write_status(run_dir, status)
    if log:
        (run_dir / "run.log").write_text(log)
    if summary:
        (run_dir / "summary.json").write_text("{}")


def test_status_lists_states_and_the_log_tail_of_failed_runs(sweep_root):
    make_sweep(sweep_root, {"ok": {}, "bad": {}, "gone": {}, "new": {}}, sweep="fake")
    runs = sweep_root / "runs/fake"
    write_run(runs / "ok", RunStatus(RunState.FINISHED, "local", exit_code=0), summary=True)
    write_run(
        runs / "bad",
        RunStatus(RunState.FAILED, "local", exit_code=3, reason="exit code 3"),
        log="=== sweepgen: attempt 1 at x: cmd ===\nloading\nValueError: boom at step 2\n",
    )
    # a local run whose process is gone without writing an end: lost, shown as failed
    write_run(
        runs / "gone",
        RunStatus(RunState.RUNNING, "local", ids={"pid": 999999999, "host": os.uname().nodename}),
    )
    result = CliRunner().invoke(main, ["status", "generated/fake"])
    assert result.exit_code == 1
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if "│" in line}
    assert "FINISHED" in rows["ok"] and "FAILED" in rows["bad"] and "NOT STARTED" in rows["new"]
    assert "FAILED" in rows["gone"] and "lost" in rows["gone"]
    assert "── bad FAILED (exit code 3); last lines of runs/fake/bad/run.log:" in result.stderr
    assert "ValueError: boom at step 2" in result.stderr

    as_json = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json", "--only", "bad,ok"])
    data = {row["run"]: row for row in json.loads(as_json.stdout)}
    assert sorted(data) == ["bad", "ok"]
    assert data["bad"]["log_tail"] == ["loading", "ValueError: boom at step 2"]
    assert data["bad"]["log_tail_note"] is None
    assert data["ok"]["state"] == "FINISHED" and "log_tail" not in data["ok"]


def test_status_json_says_why_a_failed_runs_log_tail_is_empty(sweep_root, tmp_path):
    """The text names a log it refused to read (a link: another file's text); the JSON said only
    ``"log_tail": []``, as for an empty log."""
    make_sweep(sweep_root, {"linked": {}, "empty": {}}, sweep="fake")
    runs = sweep_root / "runs/fake"
    secret = tmp_path / "secret.txt"
    secret.write_text("not the run's\n")
    write_run(runs / "linked", RunStatus(RunState.FAILED, "local", exit_code=3, reason="exit code 3"))
    (runs / "linked" / "run.log").symlink_to(secret)
    write_run(runs / "empty", RunStatus(RunState.FAILED, "local", exit_code=3, reason="exit code 3"))
    (runs / "empty" / "run.log").write_text("")
    text = CliRunner().invoke(main, ["status", "generated/fake"])
    assert "runs/fake/linked/run.log not shown: it is a symbolic link" in text.stderr
    as_json = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json"])
    data = {row["run"]: row for row in json.loads(as_json.stdout)}
    assert data["linked"]["log_tail"] == [] and "not the run's" not in as_json.stdout
    linked, empty = data["linked"]["log_tail_note"], data["empty"]["log_tail_note"]
    assert linked.startswith("runs/fake/linked/run.log not shown: it is a symbolic link")
    assert data["empty"]["log_tail"] == [] and empty == "runs/fake/empty/run.log is empty"


def test_status_exit_0_when_nothing_failed_and_cancel_with_nothing_live(sweep_root):
    make_sweep(sweep_root, {"ok": {}}, sweep="fake")
    write_run(sweep_root / "runs/fake/ok", RunStatus(RunState.FINISHED, "local", exit_code=0), summary=True)
    assert CliRunner().invoke(main, ["status", "generated/fake"]).exit_code == 0
    result = CliRunner().invoke(main, ["cancel", "generated/fake"])
    assert result.exit_code == 0 and "nothing to cancel" in result.output


def test_status_of_a_slurm_run_shows_its_cancellation_from_slurm_and_run_records_it(sweep_root, monkeypatch):
    # `status` is a reader (SECURITY.md): Slurm's word is shown, the status file left as it was;
    # `run` (a writer) records it before it plans, since Slurm's accounting forgets it
    make_sweep(sweep_root, {"a": {}}, sweep="fake")
    run_dir = sweep_root / "runs/fake/a"
    write_run(
        run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "9_0", "job_name": "sweepgen-fake"})
    )
    monkeypatch.setattr(
        slurm_query,
        "query_jobs",
        lambda ids: ({"9_0": JobInfo("9_0", "CANCELLED", name="sweepgen-fake")}, None),
    )
    before = (run_dir / "sweepgen_status.json").read_bytes()
    result = CliRunner().invoke(main, ["status", "generated/fake"])
    assert result.exit_code == 1
    assert "CANCELLED" in result.stdout and "job 9_0" in result.stdout
    assert (run_dir / "sweepgen_status.json").read_bytes() == before
    assert sorted(p.name for p in run_dir.iterdir()) == ["sweepgen_status.json"]  # no lock made either
    add_resources(sweep_root / "generated/fake", time=1)
    monkeypatch.setattr(slurm_query, "squeue", lambda ids: {})
    result = CliRunner().invoke(
        main, ["run", "generated/fake", "--executor", "slurm", "--command", FAKE_COMMAND]
    )
    assert result.exit_code == 1 and "were not retried: a" in result.output, result.output
    assert read_status(run_dir).state is RunState.CANCELLED  # recorded, and not submitted again


# -- reconciliation as properties ----------------------------------------------------------------------


def test_a_recorded_stop_waits_for_slurms_word_while_squeue_still_holds_the_job(tmp_path):
    """At the time limit Slurm may kill the trainer before the node's handler runs (or send its
    warning late): the node records a plain failure while squeue says COMPLETING. Taken as final,
    `status` and a search said FAILED (or a requeued trial 'failed (cancelled)') before Slurm's
    TIMEOUT (or PENDING again) came."""
    t = task(tmp_path)
    failed = replace(slurm_status(RunState.FAILED), reason="exit code -15", exit_code=-15)
    ending = reconcile(t, failed, JobInfo("7_1", "COMPLETING", source="squeue"))
    assert (
        ending.state is RunState.RUNNING
        and ending.reason == "ending: the run recorded failed; Slurm COMPLETING"
    )
    assert not _worth_keeping(failed, ending)  # the file keeps what the node wrote
    timed_out = reconcile(t, failed, JobInfo("7_1", "TIMEOUT", source="squeue"))
    assert RunView(t, timed_out).label == "TIMEOUT"
    # sacct's RUNNING may only lag behind the end: the node's record stands
    assert reconcile(t, failed, JobInfo("7_1", "RUNNING", source="sacct")) is failed


@pytest.mark.parametrize("slurm", ["RUNNING", "COMPLETING"])
def test_a_run_that_recorded_its_time_limit_is_not_shown_ended_while_slurm_holds_it(tmp_path, slurm):
    """The node got the time limit's warning (SIGUSR2) and recorded its run timed out while squeue
    still holds the job (the wrapper exiting, the job completing): not settled, so `status` must not
    say TIMEOUT beside "ending" (the last CI's `status` row: state TIMEOUT, reason "ending: the run
    recorded failed; Slurm RUNNING", which a `wait_until` took for the end)."""
    t = task(tmp_path)
    timed_out = replace(
        slurm_status(RunState.FAILED),
        reason=TIMEOUT_REASON,
        exit_code=-12,
        ids={**slurm_status(RunState.FAILED).ids, "slurm_state": "TIMEOUT"},
    )
    ending = reconcile(t, timed_out, JobInfo("7_1", slurm, source="squeue"))
    view = RunView(t, ending)
    assert ending.state is RunState.RUNNING and view.label == "RUNNING" and view.live, ending
    ended = reconcile(t, timed_out, JobInfo("7_1", "FAILED", source="squeue"))
    assert ended is timed_out and RunView(t, ended).label == "TIMEOUT"


SLURM_STATES = sorted(
    slurm_query.ENDED | {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED", "SUSPENDED"}
)
RECORDED = [RunState.RUNNING, RunState.FINISHED, RunState.FAILED, RunState.CANCELLED]


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    recorded=st.sampled_from(RECORDED),
    slurm=st.none() | st.sampled_from(SLURM_STATES),
    finished=st.booleans(),
    source=st.sampled_from(["squeue", "sacct"]),
)
def test_reconcile_properties(tmp_path, recorded, slurm, finished, source):
    t = task(tmp_path, name=f"p{recorded.value}{slurm}{finished}")
    t.run_dir.mkdir(exist_ok=True)
    (t.run_dir / "summary.json").unlink(missing_ok=True)
    if finished:
        (t.run_dir / "summary.json").write_text("{}")
    status = slurm_status(recorded)
    job = JobInfo("7_1", slurm, source=source) if slurm else None
    new = reconcile(t, status, job)
    if finished:  # the proof of success wins over everything
        assert new.state is RunState.FINISHED
    elif recorded in (RunState.FAILED, RunState.CANCELLED) and (
        slurm == "REQUEUED" or (slurm == "PENDING" and source == "squeue")
    ):
        # the run recorded its stop but Slurm holds the same job to run again (scontrol requeue,
        # preemption): queued, never cancelled, so nothing submits it a second time
        assert new.state is RunState.RUNNING and new.ids["slurm_state"] == "REQUEUED"
        assert new.reason.startswith("requeued by Slurm")
    elif (
        recorded in (RunState.FAILED, RunState.CANCELLED) and job and job.source == "squeue" and not job.ended
    ):
        # recorded, but squeue (current) still holds the job live: how it ended is Slurm's word,
        # which may still say TIMEOUT or requeue it, so not settled yet; nothing written
        assert new.state is RunState.RUNNING and new.reason.startswith(
            f"ending: the run recorded {recorded.value}"
        )
        assert not _worth_keeping(status, new)
    elif recorded in (RunState.FAILED, RunState.CANCELLED):  # otherwise an ending is never undone
        assert new.state in (RunState.FAILED, RunState.CANCELLED)
    elif recorded is RunState.FINISHED:  # said finished but summary.json is gone: not finished
        assert new.state is RunState.FAILED and "summary.json is missing" in new.reason
    elif job is None:
        assert new is status  # nothing known: nothing guessed
    elif job.ended:  # the job is over and the run never recorded its end: Slurm's verdict, never FINISHED
        assert new.state in (RunState.FAILED, RunState.CANCELLED) and new.ids["slurm_state"] == slurm
    else:  # still queued or running
        assert new.state in (RunState.PENDING, RunState.RUNNING)
    assert status.ids.get("slurm_state") is None  # reconcile never mutates its input
    if new.state in (RunState.PENDING, RunState.RUNNING):  # a live run is never shown ended
        assert RunView(t, new).label in ("PENDING", "RUNNING"), new


def test_a_local_run_recorded_finished_without_summary_is_failed_in_status_as_in_run(tmp_path):
    from sweepgen.run.core.base import decide
    from sweepgen.run.sweep.status import collect

    run_dir = tmp_path / "fin"
    run_dir.mkdir()
    write_status(run_dir, RunStatus(RunState.FINISHED, "local", exit_code=0))
    t = RunTask("fin", "fin", Path("x.yaml"), run_dir, ("true",))
    (view,) = collect([t])
    assert view.status.state is RunState.FAILED
    assert view.status.reason == "recorded as finished but summary.json is missing"
    assert decide(t, rerun_failed=False, is_alive=lambda s: False).state is view.status.state
    (run_dir / "summary.json").write_text("{}")
    assert collect([t])[0].status.state is RunState.FINISHED


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGUSR2])
def test_a_stop_after_the_trainer_exited_leaves_its_finish_and_a_requeue_runs_nothing(tmp_path, sig):
    """scancel or `scontrol requeue` (SIGTERM), or the time limit's warning (SIGUSR2), reaching the
    job while the run's end is recorded, after its trainer (held to exit 0 alone) exited 0 by itself:
    too late to stop anything. Before, the run was recorded cancelled (or timed out) and the job
    failed, so the requeued job (or `--rerun-failed`) ran the finished trainer a second time."""
    folder = make_sweep(tmp_path, {"n": {"steps": 1}}, sweep="node")
    argv = (sys.executable, "-c", COUNTER, str(folder / "n.yaml"))
    node = node_argv(tmp_path, argv, None)
    # the signal is sent the moment the node's wait for the trainer returns (the trainer has exited)
    late = [
        *node[:2],
        "import os, sweepgen.run.slurm.task as t; wait = t._wait; "
        f"t._wait = lambda *a: (wait(*a), os.kill(os.getpid(), {int(sig)}))[0]; {node[2]}",
    ]
    run_dir = tmp_path / "runs/node/n"
    first = subprocess.run(late, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    ended = read_status(run_dir)
    assert ended is not None, first.stderr
    assert ended.state is RunState.FINISHED and ended.exit_code == 0, ended
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    again = subprocess.run(node, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "finished already" in again.stderr, again.stderr
    assert len((run_dir / "starts.txt").read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("sig", "state", "word"),
    [(signal.SIGTERM, RunState.CANCELLED, "CANCELLED"), (signal.SIGUSR2, RunState.FAILED, "TIMEOUT")],
)
def test_a_trainer_slurm_killed_before_the_wrappers_handler_ran_is_stopped_not_failed(
    tmp_path, sig, state, word
):
    """Slurm signals every process of the job, and may kill the trainer first: the wrapper reaps a
    trainer dead of SIGTERM, then gets its own signal. Before, the run was recorded FAILED (exit
    -15), and a cancelled run stayed FAILED (sacct's CANCELLED never outranks the node)."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    argv = (
        sys.executable,
        "-c",
        "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
        str(folder / "n.yaml"),
    )
    node = node_argv(tmp_path, argv, None)
    late = [
        *node[:2],
        "import os, sweepgen.run.slurm.task as t; wait = t._wait; "
        f"t._wait = lambda *a: (wait(*a), os.kill(os.getpid(), {int(sig)}))[0]; {node[2]}",
    ]
    done = subprocess.run(late, env=NODE_ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    status = read_status(tmp_path / "runs/node/n")
    assert status is not None and (status.state, status.exit_code) == (state, -signal.SIGTERM), status
    assert RunView(task(tmp_path), status).label == word


@pytest.mark.parametrize(
    ("sig", "state"), [(signal.SIGTERM, RunState.CANCELLED), (signal.SIGUSR2, RunState.FAILED)]
)
def test_a_stop_that_comes_while_the_trainer_is_started_reaches_it(tmp_path, sig, state):
    """scancel (or the time limit's warning) reaching the wrapper while it starts the trainer, before
    there is a child to pass it to: the trainer is stopped as soon as it exists. Before, it trained
    to its end (exit 0) and was recorded stopped, so --rerun-failed (or the requeued job) ran it
    all again."""
    folder = make_sweep(tmp_path, {"n": {"steps": 300, "sleep": 0.1}}, sweep="node")
    argv = tuple(FAKE_COMMAND.replace("{config}", str(folder / "n.yaml")).split())
    node = node_argv(tmp_path, argv, None)
    early = [
        *node[:2],
        "import os, sweepgen.run.slurm.task as t; start = t._start_or_exit; "
        f"t._start_or_exit = lambda *a: (os.kill(os.getpid(), {int(sig)}), start(*a))[1]; {node[2]}",
    ]
    done = subprocess.run(early, env=NODE_ENV, capture_output=True, text=True, timeout=LOADED_S)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    status = read_status(tmp_path / "runs/node/n")
    assert status is not None and (status.state, status.exit_code) == (state, -sig), status


@pytest.mark.parametrize(("sig", "word"), [(signal.SIGUSR2, "TIMEOUT"), (signal.SIGTERM, "CANCELLED")])
def test_a_trainer_dead_of_slurms_signal_is_that_stop_though_the_wrapper_never_got_it(tmp_path, sig, word):
    """Slurm's time-limit warning (SIGUSR2, whose default action ends a process) reaches the trainer
    first; the wrapper's own copy comes after the end is decided, or never. Before, the run read
    FAILED (exit -12) and the job, ended before its limit, was FAILED in Slurm too: TIMEOUT was never
    said (the last rehearsal's failure)."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    argv = (sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(sig)})", str(folder / "n.yaml"))
    done = subprocess.run(
        node_argv(tmp_path, argv, None), env=NODE_ENV, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    status = read_status(tmp_path / "runs/node/n")
    assert status is not None and status.exit_code == -sig, status
    assert RunView(task(tmp_path), status).label == word


# exits 0 on SIGTERM (as a trainer that saves and stops does), after saying it is ready for it
EXITS_0_ON_SIGTERM = (
    "import os, signal, sys, time, yaml; out = yaml.safe_load(open(sys.argv[1]))['output_dir']; "
    "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0)); os.makedirs(out, exist_ok=True); "
    "open(os.path.join(out, 'ready'), 'w').close(); time.sleep(600)"
)


def _all_threads_stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is in the stopped state (SIGSTOP is taken by each thread as it
    next runs: until then a thread may still act)."""
    states = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            states.append(stat.read_text().rsplit(")", 1)[1].split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return bool(states) and all(s in ("T", "t") for s in states)


def test_a_trainer_that_exits_0_on_slurms_own_sigterm_is_cancelled_not_finished(tmp_path):
    """Slurm's SIGTERM (scancel, requeue) reaches every process of the job, the trainer too, which
    may exit 0 on it before the wrapper's handler runs: still a stopped run, never a finished one
    (the wrapper is held stopped until the trainer has exited, then gets its SIGTERM)."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    argv = (sys.executable, "-c", EXITS_0_ON_SIGTERM, str(folder / "n.yaml"))
    proc = subprocess.Popen(node_argv(tmp_path, argv, None), env=NODE_ENV)
    run_dir = tmp_path / "runs/node/n"
    deadline = time.monotonic() + 60
    while not (run_dir / "ready").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the trainer never started"
        time.sleep(0.02)
    (trainer,) = map(int, Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split())
    proc.send_signal(signal.SIGSTOP)
    try:
        # every thread of the wrapper stopped first: one still in its wait would reap the trainer
        while not _all_threads_stopped(proc.pid):
            assert time.monotonic() < deadline, "the wrapper never stopped"
            time.sleep(0.02)
        os.kill(trainer, signal.SIGTERM)
        while Path(f"/proc/{trainer}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the trainer never exited"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
    finally:
        proc.send_signal(signal.SIGCONT)
    assert proc.wait(timeout=60) != 0
    status = read_status(run_dir)
    assert status is not None and (status.state, status.exit_code) == (RunState.CANCELLED, 0), status


@pytest.mark.parametrize(("said", "noted"), [("COMPLETING", True), ("RUNNING", False), ("", False)])
def test_a_trainer_exit_0_as_slurm_ends_the_job_is_finished_with_a_note(tmp_path, said, noted):
    """A trainer exits 0 while Slurm is ending its job (scancel or a requeue signalled it: squeue
    says COMPLETING): that exit may be its answer to Slurm's SIGTERM, half trained, and nothing tells
    it from a finish just before the stop. Kept finished (never run twice), but said: before, it was
    a plain finish, and a requeued job's run lost its training silently. A job Slurm runs (or a
    squeue that says nothing) adds nothing."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "squeue"  # the node's look at its own job
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' '{said}'\n")
    fake.chmod(0o755)
    env = {**NODE_ENV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    argv = (sys.executable, "-c", COUNTER, str(folder / "n.yaml"))
    node = node_argv(tmp_path, argv, None)
    done = subprocess.run(node, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    status = read_status(tmp_path / "runs/node/n")
    assert status is not None and (status.state, status.exit_code) == (RunState.FINISHED, 0), status
    if noted:
        assert status.reason is not None and "as Slurm ended the job (COMPLETING)" in status.reason
        assert "--done-file" in status.reason
    else:
        assert status.reason is None, status


def test_the_node_records_the_trainer_states_an_earlier_attempt_left(tmp_path):
    """So the step shown for a foreign trainer is never an earlier attempt's (trainer_states.py)."""
    run_dir = tmp_path / "runs/node/n"
    (run_dir / "checkpoint-5").mkdir(parents=True)
    (run_dir / "checkpoint-5" / "trainer_state.json").write_text('{"global_step": 5}')
    written = (run_dir / "checkpoint-5" / "trainer_state.json").stat().st_mtime_ns
    proc, run_dir = start_node(tmp_path, {"steps": 1})
    assert proc.wait(timeout=60) == 0
    status = read_status(run_dir)
    assert status.ids[trainer_states.BEFORE] == {"checkpoint-5/trainer_state.json": written}


# says it is ready, then exits 0 once `release` is beside the project (argv[2])
HELD = (
    "import os, sys, time, yaml; out = yaml.safe_load(open(sys.argv[1]))['output_dir']; "
    "os.makedirs(out, exist_ok=True); open(os.path.join(out, 'ready'), 'w').close()\n"
    "while not os.path.exists(os.path.join(sys.argv[2], 'release')): time.sleep(0.02)"
)


@pytest.mark.parametrize("link", [True, False], ids=["replaced-by-a-link", "moved"])
def test_a_run_folder_moved_while_its_slurm_job_runs_gets_its_end(tmp_path, link):
    """`mv n n.real` (and `ln -s n.real n`) while the job runs: its end is recorded in the folder it
    was moved to (and, where no link stands, in a new one where it was: not started there again).
    Before, the end's write met the link: a traceback in the job, the run `running` for ever in
    n.real, and --rerun-failed (which sees it failed) ran the finished trainer a second time."""
    folder = make_sweep(tmp_path, {"n": {}}, sweep="node")
    argv = (sys.executable, "-c", HELD, str(folder / "n.yaml"), str(tmp_path))
    proc = subprocess.Popen(node_argv(tmp_path, argv, None), env=NODE_ENV, stderr=subprocess.PIPE, text=True)
    run_dir, real = tmp_path / "runs/node/n", tmp_path / "runs/node/n.real"
    deadline = time.monotonic() + 60
    while not (run_dir / "ready").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the trainer never started"
        time.sleep(0.02)
    run_dir.rename(real)
    if link:
        run_dir.symlink_to("n.real")
    (tmp_path / "release").touch()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err
    ended = read_status(real)
    assert ended is not None and ended.state is RunState.FINISHED and ended.exit_code == 0, ended
    assert run_dir.is_symlink() == link
    if not link:
        assert read_status(run_dir) == ended


def test_a_job_that_declined_to_start_its_run_says_why_in_status_as_sacct_ends_it(sweep_root, monkeypatch):
    """The job's supervisor found the run's lock held by another process and exited 3, leaving its
    decline note (ranks.py); sacct says FAILED 3:0. `status` says why the job started nothing
    (before: "Slurm FAILED (exit 3) before the run recorded its end"); a note older than the status
    file (a later start recorded since) is not the job's last word."""
    from sweepgen.run.slurm import ranks
    from sweepgen.run.slurm.task import LOCK_HELD

    make_sweep(sweep_root, {"a": {}}, sweep="fake")
    run_dir = sweep_root / "runs/fake/a"
    write_run(
        run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "9_0", "job_name": "sweepgen-fake"})
    )
    ranks.write_note(run_dir, "1234.0", "node0", 3, why=LOCK_HELD, job="9_0")
    ended = JobInfo("9_0", "FAILED", name="sweepgen-fake", exit_code="3:0")
    monkeypatch.setattr(slurm_query, "query_jobs", lambda ids: ({"9_0": ended}, None))
    result = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json"])
    (row,) = json.loads(result.stdout)
    assert row["state"] == "FAILED" and row["exit_code"] == 3, row
    assert "its Slurm job 9_0 started nothing: the run is locked by another process" in row["reason"]
    note = run_dir / ".sweepgen_ranks" / "1234.0.node0.json"
    os.utime(note, (1, 1))  # older than the status file: a later attempt wrote since
    result = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json"])
    (row,) = json.loads(result.stdout)
    assert "before the run recorded its end" in row["reason"], row


def test_a_job_whose_participant_declined_with_exit_0_says_who_and_why_and_no_exit_code(
    sweep_root, monkeypatch
):
    """A two-node job whose node1 declined to start the run (exit 0: the run is not this job's to
    start) and whose supervisor left no end; sacct says COMPLETED 0:0. `status` says the job started
    nothing, who declined and why, and records no exit code (before: FAILED with exit code 0 and
    "(node1 declined, exit 0; ...)", a failure said with a success's exit code)."""
    from sweepgen.run.slurm import ranks

    make_sweep(sweep_root, {"a": {}}, sweep="fake")
    run_dir = sweep_root / "runs/fake/a"
    write_run(
        run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "9_0", "job_name": "sweepgen-fake"})
    )
    why = "is not the latest submission of this run (its status file names job 10_0)"
    ranks.write_note(run_dir, "1234.0", "node1", 0, why=why, job="9_0")
    ended = JobInfo("9_0", "COMPLETED", name="sweepgen-fake", exit_code="0:0")
    monkeypatch.setattr(slurm_query, "query_jobs", lambda ids: ({"9_0": ended}, None))
    result = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json"])
    (row,) = json.loads(result.stdout)
    assert row["state"] == "FAILED" and row["exit_code"] is None, row
    assert f"its Slurm job 9_0 started nothing: the run {why} (node1 declined" in row["reason"], row
    assert "exit 0" not in row["reason"] and "exit code" not in row["reason"], row
    text = CliRunner().invoke(main, ["status", "generated/fake"], env={"COLUMNS": "300"}).stdout
    assert "node1 declined" in text and "exit code 0" not in text and "exit 0" not in text, text
