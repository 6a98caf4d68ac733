"""A small search on the real test Slurm (tests/slurm_cluster.py): every trial a job, exactly n; a
pruned trial's job (its own array task) is cancelled, also after its controller was killed."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from search_support import (
    PRUNED_BASE,
    PRUNED_SEARCH,
    RUN_ARGS,
    assert_t1_pruned_and_stopped,
    kill_run_once_trial_trains,
    logged_steps,
    study,
    sweepgen,
    write_search_project,
)
from slurm_support import start_requeued_now

from sweepgen.run.core.base import read_status

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm_cluster")]


def test_a_small_search_runs_its_trials_as_slurm_jobs(tmp_path):
    write_search_project(tmp_path, {"n": 3, "parallel": 2, "sampler": "random"}, resources={"time": 5})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE"] * 3
    for t in trials:
        run = tmp_path / "runs" / "fake_search" / f"t{t.number:04d}"
        status = json.loads((run / "sweepgen_status.json").read_text())
        assert status["executor"] == "slurm" and status["ids"].get("job_id"), status
        assert json.loads((run / "summary.json").read_text())["score"] == pytest.approx(t.value)


def _sacct_of(root: Path, trial: str, *, timeout: float = 60) -> Any:
    """sacct's record of the trial's job, once it holds the job's end (it lags the controller)."""
    from sweepgen.run.slurm import query as slurm_query

    job_id = str(read_status(root / "runs" / "fake_search" / trial).ids["job_id"])  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout
    while True:
        info = slurm_query.sacct([job_id]).get(job_id)
        if info is not None and info.ended:
            return info
        assert time.monotonic() < deadline, f"sacct never recorded the end of {trial}'s job {job_id}"
        time.sleep(1)


def _seconds(elapsed: str) -> int:
    hours, minutes, seconds = (int(p) for p in elapsed.split("-")[-1].split(":"))
    return hours * 3600 + minutes * 60 + seconds


def _assert_jobs_as_pruned(root: Path) -> None:
    """Slurm's own record agrees: t1's job was cancelled and ended early; t0's completed."""
    jobs = {t: _sacct_of(root, t) for t in ("t0000", "t0001")}
    assert jobs["t0001"].state == "CANCELLED" and jobs["t0000"].state == "COMPLETED", jobs
    assert _seconds(jobs["t0001"].elapsed) < _seconds(jobs["t0000"].elapsed), jobs


def test_pruned_trials_are_stopped_as_their_own_slurm_jobs_and_marked(tmp_path):
    write_search_project(tmp_path, PRUNED_SEARCH, base=PRUNED_BASE, resources={"time": 5})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "t0001: pruned at step" in done.stdout
    assert_t1_pruned_and_stopped(tmp_path, done.stdout)
    _assert_jobs_as_pruned(tmp_path)
    shown = sweepgen(tmp_path, "status", "generated/fake_search")
    assert shown.returncode == 0 and "PRUNED" in shown.stdout, shown.stdout + shown.stderr


# slower than PRUNED_BASE: the second controller's start-up and re-attach (seconds on a loaded
# machine) must come before t1's rung step, or t1 finishes before its stop lands (a finished run
# under a pruned trial, which the study records as pruned: the premise of this test is the stop)
REATTACH_BASE = {**PRUNED_BASE, "steps": 60, "step_s": 0.4}


def test_a_slurm_trial_re_attached_after_its_controller_died_is_pruned_and_stopped(tmp_path):
    write_search_project(tmp_path, PRUNED_SEARCH, base=REATTACH_BASE, resources={"time": 5})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    args = ("--executor", "slurm", *RUN_ARGS)
    seen = kill_run_once_trial_trains(tmp_path, "t0001", *args, timeout=300)
    assert seen[-1] < 10, "the controller must die before t1 reaches the rung"
    done = sweepgen(tmp_path, "run", "generated/fake_search", *args, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "t0001: taken over from a stopped controller" in done.stdout
    assert_t1_pruned_and_stopped(tmp_path, done.stdout, steps_all=REATTACH_BASE["steps"])
    _assert_jobs_as_pruned(tmp_path)


SLOW_BASE = {"x": 0.5, "y": 0.5, "steps": 60, "step_s": 0.2, "seed": 0, "noise": 0.0, "output_dir": None}


def _trial_jobs(root: Path) -> dict[str, str]:
    """Each trial's Slurm job id, as its run's status records it (a trial not submitted has none)."""
    jobs = {}
    for run in sorted((root / "runs" / "fake_search").glob("t*")):
        status = read_status(run)
        if status is not None and status.ids.get("job_id"):
            jobs[run.name] = str(status.ids["job_id"])
    return jobs


def test_cancel_of_a_slurm_search_stops_it_and_nothing_is_asked_or_submitted_after(tmp_path):
    """`sweepgen cancel` of a search on the real Slurm, its controller alive on the "login node":
    the running trials' jobs are cancelled and recorded so, the controller asks and submits nothing
    more (a cancelled job is the search stopping, never a failed trial to replace) and exits 1, and
    Slurm holds no job of the sweep afterwards."""
    from sweepgen.run.slurm import query as slurm_query

    write_search_project(
        tmp_path, {"n": 8, "parallel": 2, "sampler": "random"}, base=SLOW_BASE, resources={"time": 5}
    )
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    proc = sweepgen(tmp_path, "run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS, wait=False)
    deadline = time.monotonic() + 300
    while not logged_steps(tmp_path / "runs" / "fake_search" / "t0000"):
        assert time.monotonic() < deadline and proc.poll() is None, "t0000 never trained"
        time.sleep(0.2)
    cancel = sweepgen(tmp_path, "cancel", "generated/fake_search", timeout=300)
    cancelled_at = time.time()
    assert cancel.returncode == 0 and "Traceback" not in cancel.stderr, cancel.stdout + cancel.stderr
    assert "the search was asked to stop" in cancel.stdout, cancel.stdout
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "Traceback" not in err, out + err
    assert "the search was cancelled" in err, err
    trials = study(tmp_path).get_trials()
    jobs = _trial_jobs(tmp_path)
    # nothing asked after the cancel returned, and every trial asked was submitted once, before it
    assert len(trials) < 8, [t.state.name for t in trials]
    assert all(t.datetime_start.timestamp() <= cancelled_at for t in trials), trials
    assert sorted(jobs) == sorted(f"t{t.number:04d}" for t in trials), jobs
    # the cancelled trials are open in the study (the next `run` resumes them), their runs cancelled
    open_ = [f"t{t.number:04d}" for t in trials if t.state.name == "RUNNING"]
    assert open_ and all(t.state.name in ("RUNNING", "COMPLETE") for t in trials), trials
    for name in open_:
        status = read_status(tmp_path / "runs" / "fake_search" / name)
        assert status is not None and status.state.value == "cancelled", (name, status)
    # Slurm agrees: none of the sweep's jobs is left in the queue, and the open ones ended CANCELLED
    assert not slurm_query.squeue(jobs.values()), slurm_query.squeue(jobs.values())
    for name in open_:
        job = jobs[name]
        info = slurm_query.sacct([job]).get(job)
        deadline = time.monotonic() + 60
        while info is None or not info.ended:  # sacct lags the controller
            assert time.monotonic() < deadline, f"sacct never recorded the end of {name}'s job {job}"
            time.sleep(1)
            info = slurm_query.sacct([job]).get(job)
        assert info.state == "CANCELLED", (name, info)
    # and it stays stopped: a while later still no new trial, no new job
    time.sleep(3)
    assert len(study(tmp_path).get_trials()) == len(trials)
    assert _trial_jobs(tmp_path) == jobs


def test_a_search_trial_whose_slurm_job_is_requeued_is_followed_to_its_end_not_failed(tmp_path):
    """Preemption (`scontrol requeue`) of a trial's job while it trains: Slurm runs the same job
    again and the run resumes from its checkpoint. The controller follows it and tells the trial
    its real end (COMPLETE), never failed while Slurm still holds the job, and asks no extra trial."""
    from sweepgen.run.slurm import query as slurm_query

    write_search_project(
        tmp_path, {"n": 1, "parallel": 1, "sampler": "random"}, base=SLOW_BASE, resources={"time": 5}
    )
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    proc = sweepgen(tmp_path, "run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS, wait=False)
    run = tmp_path / "runs" / "fake_search" / "t0000"
    deadline = time.monotonic() + 300
    while not logged_steps(run):
        assert time.monotonic() < deadline and proc.poll() is None, "t0000 never trained"
        time.sleep(0.2)
    (job_id,) = _trial_jobs(tmp_path).values()
    subprocess.run(["scontrol", "requeue", job_id], check=True, capture_output=True, timeout=30)
    # started again only once the old instance is cleaned up, its node idle (sooner, Slurm revokes
    # the new one's credential)
    while getattr(slurm_query.squeue([job_id]).get(job_id), "state", None) != "PENDING" or not _idle():
        assert time.monotonic() < deadline and proc.poll() is None, "the requeued job never became PENDING"
        time.sleep(0.5)
    start_requeued_now(job_id)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "Traceback" not in err, out + err
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE"], (trials, out, err)
    status = read_status(run)
    assert status is not None and status.state.value == "finished" and status.attempt == 2, status
    starts = (run / "starts.jsonl").read_text().splitlines()
    assert len(starts) == 2, starts  # the first instance, and the requeued one (resumed)


def _idle() -> bool:
    """The test cluster's node runs nothing (no job, none completing)."""
    states = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30).stdout
    return states.split() == ["idle"]


def test_a_search_killed_before_releasing_its_trials_array_is_resumed_by_the_next_run(tmp_path, monkeypatch):
    """The `sweepgen run` of a search SIGKILLed after recording its first trial's job but before
    `scontrol release`: the next `run` releases that job (its trial then runs, once) instead of
    following a held job that would never start, and the search reaches exactly n."""
    write_search_project(tmp_path, {"n": 2, "parallel": 1, "sampler": "random"}, resources={"time": 5})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    bindir = tmp_path / "kill-at-release"
    bindir.mkdir()
    real = subprocess.run(
        ["bash", "-c", "command -v scontrol"], capture_output=True, text=True
    ).stdout.strip()
    (bindir / "scontrol").write_text(
        f'#!/bin/bash\n[ "$1" = release ] && kill -9 "$PPID" && exit 1\nexec {real} "$@"\n'
    )
    (bindir / "scontrol").chmod(0o755)
    run_args = ("run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS)
    with monkeypatch.context() as patched:
        patched.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
        killed = sweepgen(tmp_path, *run_args, timeout=120)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    done = sweepgen(tmp_path, *run_args, timeout=180)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "released job array" in done.stdout + done.stderr
    assert [t.state.name for t in study(tmp_path).get_trials()] == ["COMPLETE"] * 2
    journal = json.loads((tmp_path / "runs/fake_search/.sweepgen_slurm/jobs.json").read_text())
    assert len(journal["arrays"]) == 2  # one submission per trial, none twice


@pytest.mark.parametrize("withdrawn", [False, True])
def test_a_cancel_landing_at_a_slurm_trials_start_submits_none_of_its_runs(tmp_path, withdrawn):
    """test_search_ask_window's cancel at a trial's start, on Slurm: the cancel lands after the
    controller's last look at the stop request, before the submission lock (its request is read
    there, so nothing is submitted); ``withdrawn``: a second `run` withdrew the search's stop request
    meanwhile. The trial stays open, and the next `run` goes on to exactly n, each run once."""
    from test_search_ask_window import cancelled_as_a_trial_starts

    slurm = ("--executor", "slurm")
    cancelled_as_a_trial_starts(tmp_path, "after-the-stop-check", withdrawn, *slurm, resources={"time": 5})
