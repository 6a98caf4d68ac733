"""`sweepgen status` always answers: an unreadable status file is that run's row (UNREADABLE, with
why) and not the whole command's failure; a lost run's end time comes from its own files; when
Slurm does not answer, the status files answer within the bound, with a warning."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_sweep

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, RunStatus, write_status
from sweepgen.run.core.plan.tasks import load_sweep
from sweepgen.run.sweep import status as sweep_status


def status(*args: str):
    return CliRunner().invoke(main, ["status", "generated/fake", *args])


@pytest.fixture
def sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}, "b": {}})
    for name in ("a", "b"):
        run_dir = tmp_path / "runs" / "fake" / name
        run_dir.mkdir(parents=True)
        write_status(run_dir, RunStatus(RunState.FAILED, "local", exit_code=3, reason="exit code 3"))
    return tmp_path


def test_an_unreadable_status_file_is_shown_as_such_and_the_others_still_are(sweep):
    (sweep / "runs/fake/a/sweepgen_status.json").write_bytes(b"\xff\xfe not json")
    result = status("--format", "json")
    assert result.exit_code == 1, result.output  # a problem, not a crash (exit 2) nor "ok"
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    assert rows["a"]["state"] == "UNREADABLE" and "sweepgen_status.json" in rows["a"]["reason"]
    assert rows["b"]["state"] == "FAILED" and rows["b"]["reason"] == "exit code 3"
    text = status()
    assert "UNREADABLE" in text.stdout and "Traceback" not in text.output


def test_a_lost_run_ended_when_its_files_last_changed(sweep):
    from sweepgen.run.core.base import this_host

    run_dir = sweep / "runs/fake/a"
    # "running" on this host, but no such process (pid above Linux's pid_max): lost
    write_status(run_dir, RunStatus(RunState.RUNNING, "local", ids={"pid": 2**22 + 7, "host": this_host()}))
    (run_dir / "run.log").write_text("last words\n")
    old = time.time() - 3600
    for name in ("run.log", "sweepgen_status.json"):
        os.utime(run_dir / name, (old, old))
    before = (run_dir / "sweepgen_status.json").read_bytes()
    rows = {r["run"]: r for r in json.loads(status("--format", "json").stdout)}
    assert rows["a"]["state"] == "FAILED" and rows["a"]["reason"].startswith("lost")
    ended = rows["a"]["ended"]
    assert ended.startswith(time.strftime("%Y-%m-%dT%H", time.gmtime(old))), ended
    # a reading command writes nothing in a runs folder others may share: before, `status` made the
    # run's lock file and replaced its status with the lost end (`run` records it when it plans)
    assert (run_dir / "sweepgen_status.json").read_bytes() == before
    assert sorted(p.name for p in run_dir.iterdir()) == ["run.log", "sweepgen_status.json"]


def test_status_answers_from_the_files_when_slurm_does_not(sweep, monkeypatch):
    run_dir = sweep / "runs/fake/b"
    write_status(run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "123"}))

    def hung(tasks, **kwargs):
        time.sleep(30)  # slurmctld down: squeue retries for over a minute
        raise AssertionError("not reached in time")

    monkeypatch.setattr("sweepgen.run.slurm.executor.observe", hung)
    started = time.monotonic()
    views = sweep_status.collect(load_sweep(Path("generated/fake")).tasks, answer_s=0.5)
    assert time.monotonic() - started < 5
    by_name = {v.task.name: v for v in views}
    assert by_name["b"].label == "RUNNING"
    assert "Slurm did not answer within 0.5 s" in (by_name["b"].note or "")
    assert by_name["a"].label == "FAILED"  # the local run is unaffected


def test_a_submitted_run_whose_directory_vanished_is_named(sweep, monkeypatch):
    import shutil

    from sweepgen.run.slurm import executor as slurm
    from sweepgen.run.slurm.query import JobInfo

    journal = sweep / "runs/fake/.sweepgen_slurm/jobs.json"
    journal.parent.mkdir(parents=True)
    journal.write_text(json.dumps({"arrays": [{"array_job_id": "9", "runs": {"9_0": "a", "9_1": "b"}}]}))
    shutil.rmtree(sweep / "runs/fake/a")
    # Slurm still holds the job: the queue decides, not the missing folder
    held = {"a": JobInfo("9_0", "PENDING", source="squeue")}
    monkeypatch.setattr(slurm, "held_jobs", lambda names, root: {n: held[n] for n in names if n in held})
    rows = {r["run"]: r for r in json.loads(status("--format", "json").stdout)}
    assert rows["a"]["state"] == "PENDING", rows["a"]
    assert rows["a"]["reason"] == "its run directory runs/fake/a is gone; Slurm still holds job 9_0 (PENDING)"
    # the job is over
    monkeypatch.setattr(slurm, "held_jobs", lambda names, root: {})
    rows = {r["run"]: r for r in json.loads(status("--format", "json").stdout)}
    assert rows["a"]["state"] == "FAILED"
    assert rows["a"]["reason"] == "its run directory runs/fake/a is gone (submitted as Slurm job 9_0)"
    # Slurm cannot be asked: failed as the files say, and said that the job may still be held
    monkeypatch.setattr(slurm, "held_jobs", lambda names, root: slurm_query_fails())
    rows = {r["run"]: r for r in json.loads(status("--format", "json").stdout)}
    assert rows["a"]["state"] == "FAILED" and "Slurm did not answer" in rows["a"]["reason"]
    assert rows["b"]["state"] == "FAILED" and rows["b"]["reason"] == "exit code 3"
    journal.unlink()  # never submitted anywhere we know of: not started, as before
    rows = {r["run"]: r for r in json.loads(status("--format", "json").stdout)}
    assert rows["a"]["state"] == "NOT STARTED"


def slurm_query_fails():
    from sweepgen.errors import UserError

    raise UserError("`squeue` is not on PATH")


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_log_that_is_never_read_is_said_so_never_called_empty(sweep, kind):
    """A failed run's run.log that is a link, or a hard link in a folder others can write, is never
    printed; `status` said "runs/fake/a/run.log is empty", as if the run had written nothing."""
    secret = sweep.parent / f"{kind}-secret.txt"
    secret.write_text("SECRET outside the project\n")
    log = sweep / "runs/fake/a/run.log"
    if kind == "symlink":
        log.symlink_to(secret)
    else:
        os.link(secret, log)
        log.parent.chmod(0o777)
    (sweep / "runs/fake/b/run.log").write_text("")
    result = status()
    assert "SECRET" not in result.output
    assert "runs/fake/a/run.log not shown: it is a " in " ".join(result.stderr.split()), result.stderr
    assert "runs/fake/b/run.log is empty" in result.stderr
