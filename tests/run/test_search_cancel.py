"""`sweepgen cancel` of a search stops the search: its running `sweepgen run` asks no new trial,
exits 1 saying so and how to resume, and that command goes on to exactly n. Real processes (the
sweepgen CLI, the fake trainer, the local executor)."""

from __future__ import annotations

import select
import subprocess
import time
from pathlib import Path

import pytest
from run_support import LOADED_S, killed_at_end
from search_support import (
    RUN_ARGS,
    cli,
    kill_run_once_trial_trains,
    logged_steps,
    study,
    sweepgen,
    write_search_project,
)

from sweepgen.run.core.base import RunState, read_status

SWEEP = "generated/fake_search"
# long enough to train on through a second `run`'s start and a `cancel` on a loaded machine
LONG = {"x": 0.5, "y": 0.5, "steps": 3000, "step_s": 0.1, "seed": 0, "noise": 0.0, "output_dir": None}
SLOW = {"x": 0.5, "y": 0.5, "steps": 20, "step_s": 0.1, "seed": 0, "noise": 0.0, "output_dir": None}


def test_cancel_stops_the_search_and_its_command_line_resumes_it(tmp_path):
    # the trials train a step, then wait while `hold` exists: the cancel lands while they run, however
    # slowly a loaded machine starts it (their 2 s of training once ended first)
    hold = tmp_path / "hold"
    hold.touch()
    base = {**SLOW, "hold_while": str(hold)}
    spec = write_search_project(tmp_path, {"n": 8, "parallel": 2, "sampler": "random"}, base=base)
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    proc = sweepgen(tmp_path, "run", SWEEP, *RUN_ARGS, wait=False)
    deadline = time.monotonic() + 120
    while not logged_steps(tmp_path / "runs" / "fake_search" / "t0000"):
        assert time.monotonic() < deadline and proc.poll() is None, "t0000 never trained"
        time.sleep(0.05)
    cancel = sweepgen(tmp_path, "cancel", SWEEP)
    assert "Traceback" not in cancel.stderr, cancel.stderr
    assert "the search was asked to stop" in cancel.stdout, cancel.stdout + cancel.stderr
    assert "--command" in cancel.stdout.replace("\n", "")  # the resume command, spelled out
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, out + err
    assert "the search was cancelled" in err and "--command" in err.replace("\n", ""), err
    asked = study(tmp_path).get_trials()
    assert len(asked) < 8, "the search stopped asking"
    status = cli(tmp_path, "status", SWEEP)
    said = " ".join(status.stdout.split())  # (rich wraps long lines at spaces)
    assert "no `sweepgen run` drives this search now: `sweepgen run generated/fake_search --command" in said
    # the trials left open are not said running: their runs were cancelled (before, "2 running")
    left = sum(t.state.name == "RUNNING" for t in asked)
    assert left and f"0 running, {left} open (stopped: none of their runs runs)" in said, said
    assert f"0 running, {left} open (stopped: none of their runs runs)" in " ".join(out.split()), out
    # the recorded command line goes on: no option given again
    hold.unlink()
    done = sweepgen(tmp_path, "run", SWEEP, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert sorted(t.number for t in trials) == list(range(8))
    assert [t.state.name for t in trials] == ["COMPLETE"] * 8
    for t in trials:
        assert (tmp_path / "runs" / "fake_search" / f"t{t.number:04d}" / "summary.json").is_file()


def _reattached(root: Path, procs: list[subprocess.Popen[str]]) -> subprocess.Popen[str]:
    """A one-trial search whose first `run` was SIGKILLed while t0000 trains (its trainer trains on),
    and a second `run` that has taken t0000 over and follows it (re-attached, not started again)."""
    spec = write_search_project(root, {"n": 1, "parallel": 1, "sampler": "random"}, base=LONG)
    assert cli(root, "render", str(spec)).returncode == 0
    kill_run_once_trial_trains(root, "t0000", *RUN_ARGS)
    proc = sweepgen(root, "run", SWEEP, wait=False)  # the recorded command line
    procs.append(proc)
    assert proc.stdout is not None
    seen, deadline = "", time.monotonic() + LOADED_S
    while "t0000: taken over from a stopped controller" not in seen:
        assert time.monotonic() < deadline and proc.poll() is None, seen
        if select.select([proc.stdout], [], [], 0.1)[0]:
            seen += proc.stdout.readline()
    return proc


@pytest.fixture
def procs(tmp_path):
    """Processes a test started, killed at its end if still running; then the sweep's live runs
    cancelled (a run started again would otherwise train on after a failed test)."""
    with killed_at_end() as started:
        yield started
    if (tmp_path / SWEEP).is_dir():
        sweepgen(tmp_path, "cancel", SWEEP)


def _starts(root: Path) -> int:
    return len((root / "runs" / "fake_search" / "t0000" / "starts.jsonl").read_text().splitlines())


def test_cancel_of_a_search_whose_run_was_re_attached_leaves_it_stopped_and_open(tmp_path, procs):
    """The run `cancel` stopped is not started again by the controller that follows it (it had been
    started by a controller that died): the trial is left open, as a cancelled trial of its own is,
    and the recorded command resumes it later."""
    proc = _reattached(tmp_path, procs)
    cancel = sweepgen(tmp_path, "cancel", SWEEP)
    assert cancel.returncode == 0 and "the search was asked to stop" in cancel.stdout, (
        cancel.stdout + cancel.stderr
    )
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 1 and "the search was cancelled" in err, out + err
    assert _starts(tmp_path) == 1, "a run stopped by `sweepgen cancel` was started again"
    status = read_status(tmp_path / "runs" / "fake_search" / "t0000")
    assert status is not None and status.state is RunState.CANCELLED, status
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "RUNNING", "left open for the next `run` to resume"


def test_cancel_only_of_a_re_attached_run_fails_its_trial_and_never_restarts_it(tmp_path, procs):
    proc = _reattached(tmp_path, procs)
    cancel = sweepgen(tmp_path, "cancel", SWEEP, "--only", "t0000")
    assert cancel.returncode == 0, cancel.stdout + cancel.stderr
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 1 and "Traceback" not in err, out + err  # its one trial failed
    assert _starts(tmp_path) == 1, "a run stopped by `sweepgen cancel` was started again"
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "FAIL", trial
    told = trial.user_attrs["sweepgen_reason"]
    assert "cancelled by `sweepgen cancel`" in told, trial.user_attrs
    assert "--rerun-failed" not in told and "raise search.n" in told, told  # a search refuses it
