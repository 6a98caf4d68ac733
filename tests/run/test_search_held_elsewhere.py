"""A search trial whose run another process holds at the moment the controller's executor comes to
start it (the executor skips it: it never starts a run twice) ends: followed until its holder lets
it go, then started here once if nobody started it, or told as it ended there. Before, the trial
waited for an end its executor would never report, and `run` never returned.

Real processes: the sweepgen CLI (paused, by a wrapper around its lock's acquire, exactly between
deciding to start the trial's run and taking its lock, the window a second process must hit), a
second process holding the run's lock, the fake search trainer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import LOADED_S, killed_at_end, read_until
from search_support import REPO, RUN_ARGS, cli, study, sweepgen, write_search_project

from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status

SWEEP = "generated/fake_search"
FAST = {"x": 0.3, "y": 0.7, "steps": 3, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}

# `sweepgen ARGS...`, paused once at the first lock taken for run t0000 until the file `go` exists
PAUSED = """\
import sys, time
from pathlib import Path
from sweepgen.run.core import runlock
signals, real, paused = Path(sys.argv[1]), runlock.acquire, []
def acquire(run_dir, **kwargs):
    if run_dir.name == "t0000" and not paused:
        paused.append(True)
        (signals / "paused").touch()
        while not (signals / "go").exists():
            time.sleep(0.02)
    return real(run_dir, **kwargs)
runlock.acquire = acquire
sys.argv = ["sweepgen", *sys.argv[2:]]
from sweepgen.cli import main
main()
"""

# holds the run's lock; on a line on stdin records the run failed (as a `sweepgen run` that ran it
# there would have) and lets go
HOLDER = """\
import fcntl, os, sys
from pathlib import Path
from sweepgen.run.core.base import RunState, RunStatus, write_status
run = Path(sys.argv[1])
fd = os.open(run / sys.argv[2], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
write_status(run, RunStatus(RunState.FAILED, "local", exit_code=5, reason="exit code 5 (ran there)"))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}


def _paused_run(root: Path) -> subprocess.Popen[str]:
    (root / "signals").mkdir()
    return subprocess.Popen(
        [sys.executable, "-c", PAUSED, str(root / "signals"), "run", SWEEP, *RUN_ARGS],
        cwd=root,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(what: str, done, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + LOADED_S
    while not done():
        assert time.monotonic() < deadline and proc.poll() is None, f"{what} never happened"
        time.sleep(0.02)


def _hold(run: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run), runlock.RUN_LOCK_NAME],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _starts(run: Path) -> int:
    path = run / "starts.jsonl"
    return len(path.read_text().splitlines()) if path.is_file() else 0


def _skipped_while_held(
    root: Path, procs: list[subprocess.Popen[str]]
) -> tuple[subprocess.Popen[str], subprocess.Popen[str], str]:
    """`sweepgen run` on a one-trial search, its executor finding t0000's lock held by another
    process when it comes to start it; the run, the holder and what the run said of it."""
    spec = write_search_project(root, {"n": 1, "parallel": 1, "sampler": "random"}, base=FAST)
    assert cli(root, "render", str(spec)).returncode == 0
    proc = _paused_run(root)
    procs.append(proc)
    _wait_for("the start of t0000", (root / "signals" / "paused").exists, proc)
    holder = _hold(root / "runs" / "fake_search" / "t0000")  # the run's folder exists by now
    procs.append(holder)
    (root / "signals" / "go").touch()
    said = read_until(proc, "followed until its holder lets it go", proc.stdout)
    return proc, holder, said


@pytest.fixture
def procs():
    """Processes a test started, killed at its end if still running (a hang never outlives it)."""
    with killed_at_end() as started:
        yield started


def test_a_trial_whose_holder_lets_it_go_unstarted_is_started_here_once(tmp_path, procs):
    proc, holder, said = _skipped_while_held(tmp_path, procs)
    assert "t0000" in said and "holds the lock" in said, said
    holder.send_signal(signal.SIGKILL)  # it dies without starting anything
    holder.communicate()
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 0 and "Traceback" not in err, said + out + err
    assert "let go unstarted; started here" in said + out, said + out
    run = tmp_path / "runs" / "fake_search" / "t0000"
    assert _starts(run) == 1
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, status
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "COMPLETE", trial
    assert not runlock.is_held(run)


def test_a_trial_whose_run_ended_there_is_told_as_it_ended_never_started_here(tmp_path, procs):
    proc, holder, said = _skipped_while_held(tmp_path, procs)
    holder.communicate("end\n")  # it records the run failed there, then lets go
    assert holder.returncode == 0
    out, err = proc.communicate(timeout=LOADED_S)
    # the one trial failed (as it ended there): no trial complete, exit 1, nothing started here
    assert proc.returncode == 1 and "Traceback" not in err, said + out + err
    run = tmp_path / "runs" / "fake_search" / "t0000"
    assert _starts(run) == 0
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "FAIL", trial
    assert trial.user_attrs["sweepgen_reason"] == "exit code 5 (ran there)", trial.user_attrs


def test_a_trial_let_go_after_the_search_was_cancelled_is_left_open_never_started(tmp_path, procs):
    """`sweepgen cancel` asks the search to stop (its request written first, as cancel writes it)
    while the run is held elsewhere; its holder then lets it go: nothing starts it after the cancel,
    the trial stays open, and the next `run` runs it once."""
    from sweepgen.run.search import stop as search_stop
    from sweepgen.run.search.study import state_dir

    proc, holder, said = _skipped_while_held(tmp_path, procs)
    search_stop.request(state_dir(tmp_path / SWEEP))
    holder.send_signal(signal.SIGKILL)
    holder.communicate()
    out, err = proc.communicate(timeout=LOADED_S)
    assert proc.returncode == 1 and "the search was cancelled" in err, said + out + err
    run = tmp_path / "runs" / "fake_search" / "t0000"
    assert _starts(run) == 0, "started after the search was cancelled"
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "RUNNING", trial
    again = sweepgen(tmp_path, "run", SWEEP, timeout=LOADED_S)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _starts(run) == 1
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "COMPLETE", trial
