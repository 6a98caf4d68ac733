"""The proof-of-success rule for foreign trainers, in the pure functions every executor shares:
exit 0 alone (no done file) or exit 0 plus a declared done file; the bundled trainer's summary.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepgen.run.core.base import RunState, RunStatus, RunTask, effective_state, read_status, succeeded
from sweepgen.run.slurm.executor import reconcile
from sweepgen.run.slurm.query import JobInfo
from sweepgen.run.slurm.task import outcome


def task(tmp_path: Path, done_file: str | None) -> RunTask:
    return RunTask("r", "r", tmp_path / "r.yaml", tmp_path / "run", ("x",), done_file=done_file)


def test_succeeded(tmp_path):
    assert succeeded(0, tmp_path, None) and not succeeded(1, tmp_path, None)
    assert not succeeded(0, tmp_path, None, stopped=True)  # exit 0 after SIGTERM proves nothing
    assert not succeeded(0, tmp_path, "done.txt")
    (tmp_path / "done.txt").write_text("")
    assert succeeded(0, tmp_path, "done.txt", stopped=True)  # the file is the proof, stopped or not


@pytest.mark.parametrize(
    ("done_file", "code", "timed_out", "cancelled", "state", "reason"),
    [
        (None, 0, False, False, RunState.FINISHED, None),
        (None, 0, False, True, RunState.CANCELLED, "cancelled"),
        (None, 0, True, False, RunState.FAILED, "timed out (Slurm time limit; raise resources.time)"),
        ("model.bin", 0, False, False, RunState.FAILED, "exited 0 but wrote no model.bin"),
        (None, 2, False, False, RunState.FAILED, "exit code 2"),
        # the done file is the proof whatever the exit (a failed teardown after it), and said
        ("model.bin", 1, False, False, RunState.FINISHED, "exit code 1 after it left its model.bin"),
        (
            "model.bin",
            -15,
            False,
            True,
            RunState.FINISHED,
            "killed by SIGTERM (stopped by someone, or by the system shutting down?) after it left its "
            "model.bin",
        ),
    ],
)
def test_node_outcome(tmp_path, done_file, code, timed_out, cancelled, state, reason):
    if state is RunState.FINISHED and done_file:
        (tmp_path / done_file).write_text("")
    finished = succeeded(code, tmp_path, done_file, stopped=timed_out or cancelled)
    got = outcome(code, finished=finished, timed_out=timed_out, cancelled=cancelled, done_file=done_file)
    assert got == (state, reason)


def test_exit_0_alone_stays_finished_for_status_and_slurm(tmp_path):
    t = task(tmp_path, None)
    done = RunStatus(RunState.FINISHED, "slurm", exit_code=0, done_file=None, ids={"job_id": "7_1"})
    assert effective_state(t.run_dir, done, lambda s: False) == (RunState.FINISHED, None)
    assert reconcile(t, done, JobInfo("7_1", "COMPLETED")) is done


def test_old_status_files_keep_summary_json_as_their_proof(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "sweepgen_status.json").write_text('{"state": "finished", "executor": "local", "exit_code": 0}')
    status = read_status(run)
    assert status is not None and status.done_file == "summary.json"
    state, reason = effective_state(run, status, lambda s: False)
    assert state is RunState.FAILED and reason == "recorded as finished but summary.json is missing"
