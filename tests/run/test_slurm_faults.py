"""On the real Slurm (tests/slurm_cluster.py): runs happen exactly once under faults.

- two `sweepgen run --executor slurm` on one sweep: one array, every run started once;
- a failing sacct (a wrapper earlier on PATH): nothing is cancelled, status degrades to squeue;
- `scontrol requeue` (what preemption does): RUNNING/REQUEUED, never CANCELLED, and
  --rerun-failed submits nothing for it; a requeue after the run finished runs nothing again;
- unsatisfiable memory: refused at submission with Slurm's reason, nothing recorded;
- a failed `scontrol release`: the held array is cancelled and the runs are left never-started.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, LOADED_S, make_sweep
from slurm_support import cli, start_requeued_now, status_json, wait_until

from sweepgen.run.slurm import query as slurm_query

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm_cluster")]


@pytest.fixture
def cwd(cli_cwd):
    return cli_cwd


def journal(sweep_root: Path) -> list[dict]:
    path = sweep_root / ".sweepgen_slurm" / "jobs.json"
    return json.loads(path.read_text())["arrays"] if path.exists() else []


def add_resources(folder: Path, **resources) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = resources
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def starts(run_dir: Path) -> int:
    path = run_dir / "starts.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def wrap_on_path(monkeypatch, tmp: Path, tool: str, script: str) -> Path:
    """A ``tool`` earlier on PATH (for sweepgen in this process and its children)."""
    bindir = tmp / "wrapped-bin"
    bindir.mkdir(exist_ok=True)
    path = bindir / tool
    path.write_text("#!/bin/bash\n" + script)
    path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def scancel_sweep(sweep_dir: str) -> None:
    assert cli("cancel", sweep_dir).exit_code in (0, 1)


def test_two_concurrent_submissions_make_one_array_and_start_every_run_once(cwd):
    runs = {f"c{i}": {"steps": 2, "sleep": 0.2} for i in range(3)}
    make_sweep(cwd, runs, sweep="twice")
    add_resources(Path("generated/twice"), time=5)
    argv = [sys.executable, "-m", "sweepgen", "run", "generated/twice", "--executor", "slurm"]
    argv += ["--command", FAKE_COMMAND]
    env = {**os.environ, "COLUMNS": "200"}
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=180) for p in procs]
    # the one that submitted exits 0; the other found the runs submitted: 1, "still running
    # elsewhere" (it does not wait), unless it planned only after they had finished
    assert 0 in [p.returncode for p in procs] and {p.returncode for p in procs} <= {0, 1}, outs
    said = "".join(o + e for o, e in outs)
    if 1 in [p.returncode for p in procs]:
        assert "still running elsewhere" in said
    assert "submitted 3 run(s)" in said
    # the second one either planned after the first had submitted (its plan skips them), or planned
    # at the same time and found them under the submission lock: either way it submitted nothing
    assert "submitted nothing" in said or "still running (" in said
    assert said.count("submitted 3 run(s)") == 1
    arrays = journal(cwd / "runs/twice")
    assert len(arrays) == 1 and sorted(arrays[0]["runs"].values()) == sorted(runs)
    rows = wait_until(
        "generated/twice", lambda r: all(x["state"] == "FINISHED" for x in r.values()), 120, "all to finish"
    )
    assert all(row["attempt"] == 1 for row in rows.values())
    for name in runs:
        assert starts(cwd / "runs/twice" / name) == 1
    # and once finished, a third submission submits nothing either
    again = cli("run", "generated/twice", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed")
    assert again.exit_code == 0, again.output
    assert len(journal(cwd / "runs/twice")) == 1


def test_a_failing_sacct_cancels_nothing_and_status_degrades_to_squeue(cwd, monkeypatch, tmp_path):
    monkeypatch.setattr(slurm_query, "RETRY_DELAYS_S", (0.1, 0.2))
    make_sweep(cwd, {"a": {"steps": 6, "sleep": 0.5}, "b": {"steps": 2}}, sweep="acct")
    add_resources(Path("generated/acct"), time=5)
    wrapper = wrap_on_path(
        monkeypatch,
        tmp_path,
        "sacct",
        'echo "sacct: error: Problem talking to the database: Connection refused" >&2\nexit 1\n',
    )
    result = cli("run", "generated/acct", "--executor", "slurm", "--command", FAKE_COMMAND, "--wait")
    # followed to the end through squeue and the status files the nodes wrote; nothing cancelled
    assert result.exit_code == 0, result.output
    assert "cancel" not in result.output.lower()
    shown = cli("status", "generated/acct", "--format", "json")
    assert shown.exit_code == 0, shown.output
    assert {r["run"]: r["state"] for r in json.loads(shown.stdout)} == {"a": "FINISHED", "b": "FINISHED"}
    # while a run is still live, status says what it cannot know and still shows the run
    make_sweep(cwd, {"live": {"steps": 1000, "sleep": 0.2}}, sweep="acct2")
    add_resources(Path("generated/acct2"), time=5)
    assert cli("run", "generated/acct2", "--executor", "slurm", "--command", FAKE_COMMAND).exit_code == 0
    wait_until("generated/acct2", lambda r: r["live"]["state"] == "RUNNING", 60, "live to run")
    text = cli("status", "generated/acct2")
    assert text.exit_code == 0 and "Slurm accounting (sacct) is unavailable" in text.stderr
    # --rerun-failed in this window submits nothing for a run whose job is alive
    again = cli("run", "generated/acct2", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed")
    assert again.exit_code == 1 and "still running elsewhere" in again.output, again.output
    assert len(journal(cwd / "runs/acct2")) == 1
    # a flaky sacct (fails twice, then answers) is retried with back-off, invisibly
    counter = tmp_path / "sacct-calls"
    wrapper.write_text(
        "#!/bin/bash\n"
        f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}\n"
        'if [ "$n" -lt 2 ]; then echo "sacct: error: slurmdbd: timeout" >&2; exit 1; fi\n'
        'exec /usr/bin/sacct "$@"\n'
    )
    text = cli("status", "generated/acct2")
    assert text.exit_code == 0 and "unavailable" not in text.stderr
    assert int(counter.read_text()) == 3
    scancel_sweep("generated/acct2")
    assert status_json("generated/acct2")["live"]["state"] == "CANCELLED"


def test_a_requeued_job_is_queued_not_cancelled_and_never_submitted_twice(cwd):
    make_sweep(cwd, {"q": {"steps": 1000, "sleep": 0.2}}, sweep="rq")
    add_resources(Path("generated/rq"), time=5)
    assert cli("run", "generated/rq", "--executor", "slurm", "--command", FAKE_COMMAND).exit_code == 0
    rows = wait_until(
        "generated/rq", lambda r: r["q"]["state"] == "RUNNING" and starts(cwd / "runs/rq/q"), 60, "q to run"
    )
    job_id = rows["q"]["job_id"]
    subprocess.run(["scontrol", "requeue", job_id], check=True, capture_output=True, timeout=30)
    seen = set()
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        row = status_json("generated/rq")["q"]
        slurm = slurm_query.squeue([job_id]).get(job_id)
        seen.add((row["state"], row["reason"], slurm.state if slurm else None))
        assert row["state"] != "CANCELLED", (row, seen)  # the issue: CANCELLED while Slurm held it
        if "requeued by Slurm" in (row["reason"] or ""):
            # --rerun-failed in this window submits no duplicate for the same directory
            again = cli(
                "run", "generated/rq", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed"
            )
            assert again.exit_code == 1 and "still running elsewhere" in again.output, again.output
            assert len(journal(cwd / "runs/rq")) == 1
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"status never said the job was requeued; states seen: {seen}")
    # Slurm runs the same job again (made eligible now: a requeued job waits about two minutes),
    # and the run resumes in its directory, started by that job only
    # only once the old instance is over (its run recorded the stop, Slurm has cleaned up): forcing
    # the start sooner makes Slurm kill the new one ("Job credential revoked"), which is why a
    # requeued job normally waits
    deadline = time.monotonic() + 60
    first_pid = json.loads((cwd / "runs/rq/q/starts.jsonl").read_text().splitlines()[0])["pid"]
    while getattr(slurm_query.squeue([job_id]).get(job_id), "state", None) != "PENDING" or _alive(first_pid):
        assert time.monotonic() < deadline, "the requeued job never became PENDING"
        time.sleep(0.5)
    # Slurm holds it PENDING: so does `status` (the file keeps "running": nothing resubmits it)
    row = status_json("generated/rq")["q"]
    assert row["state"] == "PENDING" and "requeued by Slurm" in row["reason"], row
    start_requeued_now(job_id)
    wait_until("generated/rq", lambda r: starts(cwd / "runs/rq/q") == 2, 90, "the requeued job to start")
    row = wait_until("generated/rq", lambda r: r["q"]["state"] == "RUNNING", 30, "the requeued job to run")
    assert row["q"]["job_id"] == job_id
    assert row["q"]["attempt"] == 2  # counted across the requeue (the same job id)
    assert len(journal(cwd / "runs/rq")) == 1
    scancel_sweep("generated/rq")


def test_a_job_requeued_after_its_run_finished_never_runs_it_again(cwd):
    """`scontrol requeue` (what preemption does) of the job of a run that had finished (a trainer
    held to exit 0 alone): Slurm runs the same job again. While it is queued, `status` keeps the run
    FINISHED and no `run` submits it; the job starts, finds the recorded end and starts nothing."""
    make_sweep(cwd, {"q": {"steps": 1}}, sweep="rqf")
    add_resources(Path("generated/rqf"), time=5)
    assert cli("run", "generated/rqf", "--executor", "slurm", "--command", FAKE_COMMAND).exit_code == 0
    rows = wait_until("generated/rqf", lambda r: r["q"]["state"] == "FINISHED", 90, "q to finish")
    job_id = rows["q"]["job_id"]
    deadline = time.monotonic() + LOADED_S
    while getattr(slurm_query.squeue([job_id]).get(job_id), "state", None) is not None:
        assert time.monotonic() < deadline, "the finished job never left the queue"
        time.sleep(0.5)
    done = subprocess.run(["scontrol", "requeue", job_id], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert status_json("generated/rqf")["q"]["state"] == "FINISHED"
    for extra in ((), ("--rerun-failed",)):
        again = cli("run", "generated/rqf", "--executor", "slurm", "--command", FAKE_COMMAND, *extra)
        assert again.exit_code == 0 and "Traceback" not in again.output, again.output
    assert len(journal(cwd / "runs/rqf")) == 1
    # Slurm runs it again (made eligible now: a requeued job waits about two minutes) and it ends;
    # a deadline of its own: the two `run`s above may take a while on a loaded machine
    deadline = time.monotonic() + LOADED_S
    while getattr(slurm_query.squeue([job_id]).get(job_id), "state", None) != "PENDING":
        assert time.monotonic() < deadline, "the requeued job never became PENDING"
        time.sleep(0.5)
    start_requeued_now(job_id)
    deadline = time.monotonic() + LOADED_S
    while slurm_query.squeue([job_id]).get(job_id) is not None:
        assert time.monotonic() < deadline, "the requeued job never ended"
        time.sleep(0.5)
    row = status_json("generated/rqf")["q"]
    assert (row["state"], row["attempt"]) == ("FINISHED", 1), row
    assert starts(cwd / "runs/rqf/q") == 1
    log = (cwd / "runs/rqf/q/run.log").read_text()
    assert log.count("=== sweepgen: attempt") == 1, log
    assert len(journal(cwd / "runs/rqf")) == 1
    # it did run again: the job's own log says why it started nothing
    said = "".join(p.read_text() for p in (cwd / "runs/rqf/.sweepgen_slurm").glob("*/*_log.err"))
    assert "finished already" in said, said


def test_unsatisfiable_memory_is_refused_at_submission_with_slurms_reason(cwd):
    make_sweep(cwd, {"big": {}}, sweep="mem")
    add_resources(Path("generated/mem"), time=5, mem="100000G")
    for extra in ((), ("--rerun-failed",)):
        result = cli("run", "generated/mem", "--executor", "slurm", "--command", FAKE_COMMAND, *extra)
        assert result.exit_code == 2, result.output
        assert "Slurm refuses the job array's resources" in result.output
        assert "Requested node configuration is not available" in result.output
        assert "Traceback" not in result.output
    assert not (cwd / "runs/mem/big/sweepgen_status.json").exists()
    assert journal(cwd / "runs/mem") == []
    assert status_json("generated/mem")["big"]["state"] == "NOT STARTED"


def test_a_failed_scontrol_release_leaves_the_runs_never_started(cwd, monkeypatch, tmp_path):
    make_sweep(cwd, {"r": {"steps": 1}}, sweep="rel")
    add_resources(Path("generated/rel"), time=5)
    wrap_on_path(
        monkeypatch,
        tmp_path,
        "scontrol",
        'if [ "$1" = release ]; then echo "scontrol: error: Unable to contact controller" >&2; exit 1; fi\n'
        'exec /usr/bin/scontrol "$@"\n',
    )
    result = cli("run", "generated/rel", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert result.exit_code == 2, result.output
    assert "could not be released" in result.output and "Traceback" not in result.output
    assert not (cwd / "runs/rel/r/sweepgen_status.json").exists()
    (array,) = journal(cwd / "runs/rel")
    live = slurm_query.squeue([array["array_job_id"]])
    assert not [j for j in live.values() if not j.ended]  # the held array was cancelled
    assert status_json("generated/rel")["r"]["state"] == "NOT STARTED"  # not CANCELLED
    monkeypatch.undo()


def test_a_pending_job_whose_run_folder_was_deleted_is_never_submitted_again(cwd):
    # held PENDING by its begin time: the folder (and its status file) deleted while Slurm holds it
    make_sweep(cwd, {"p": {"steps": 1}}, sweep="gone")
    add_resources(Path("generated/gone"), time=5, sbatch_extra=["--begin=now+3600"])
    assert cli("run", "generated/gone", "--executor", "slurm", "--command", FAKE_COMMAND).exit_code == 0
    rows = wait_until("generated/gone", lambda r: r["p"]["state"] == "PENDING", 60, "p to be queued")
    job_id = rows["p"]["job_id"]
    shutil.rmtree(cwd / "runs/gone/p")
    # the queue decides, not the missing folder: still pending, and said why
    row = status_json("generated/gone")["p"]
    assert row["state"] == "PENDING" and f"Slurm still holds job {job_id}" in row["reason"], row
    again = cli("run", "generated/gone", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code == 1 and "still running elsewhere" in again.output, again.output
    assert "not submitted again" in again.output
    assert len(journal(cwd / "runs/gone")) == 1  # one submission, ever
    again = cli("run", "generated/gone", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed")
    assert again.exit_code == 1 and len(journal(cwd / "runs/gone")) == 1, again.output
    # cancel reaches it through the journal's job id, though no status file names it
    cancelled = cli("cancel", "generated/gone")
    assert cancelled.exit_code == 0, cancelled.output
    wait_until("generated/gone", lambda r: r["p"]["state"] == "FAILED", 60, "the job to end")
    assert slurm_query.squeue([job_id]).get(job_id) is None or slurm_query.squeue([job_id])[job_id].ended
