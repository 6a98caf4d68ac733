"""On the real Slurm (tests/slurm_cluster.py): the `sweepgen run --executor slurm` of a search
SIGKILLed at ask (right after `study.ask` returned: the trial in the journal, its run not submitted)
and at record (its job ended, the trial's result about to be told to Optuna, not told yet). The next
`run` takes the trial over: each trial's run is submitted and started once, each trial is told
once, and the study holds exactly n trials.

The kill lands at a known point: the `run` is started through a wrapper that replaces the one
function at the window and SIGKILLs its own process there (never a sleep).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from search_support import REPO, RUN_ARGS, study, sweepgen, write_search_project

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]

# asked: the real ask, then the kill; told: the kill before the first tell
KILLED_AT = """\
import os, signal, sys
import optuna.study
where, real_ask = sys.argv[1], optuna.study.Study.ask
def ask(*args, **kwargs):
    out = real_ask(*args, **kwargs)
    if where == "asked":
        os.kill(os.getpid(), signal.SIGKILL)
    return out
def tell(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
optuna.study.Study.ask = ask
if where == "told":
    optuna.study.Study.tell = tell
from sweepgen.cli import main
main(sys.argv[2:], prog_name="sweepgen")
"""


@pytest.mark.parametrize("window", ["asked", "told"])
def test_a_slurm_search_killed_at_ask_or_record_runs_and_tells_each_trial_once(
    tmp_path: Path, window: str
) -> None:
    n = 1  # the trial killed: the next `run` finishes it, and asks no other
    write_search_project(tmp_path, {"n": n, "parallel": 1, "sampler": "random"}, resources={"time": 5})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    run_args = ("run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", KILLED_AT, window, *run_args]
    killed = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert killed.returncode == -9, killed.stdout + killed.stderr  # killed in the window, as meant
    (asked,) = study(tmp_path).get_trials()
    assert asked.state.name == "RUNNING"
    done = sweepgen(tmp_path, *run_args, timeout=180)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    # exactly n trials, none asked twice: the killed one's number and point kept
    assert [(t.number, t.state.name) for t in trials] == [(i, "COMPLETE") for i in range(n)], trials
    assert trials[0].params == asked.params
    for trial in trials:
        run = tmp_path / "runs/fake_search" / f"t{trial.number:04d}"
        assert len((run / "starts.jsonl").read_text().splitlines()) == 1, trial.number
        assert json.loads((run / "summary.json").read_text())["score"] == pytest.approx(trial.value)
    journal = json.loads((tmp_path / "runs/fake_search/.sweepgen_slurm/jobs.json").read_text())
    assert len(journal["arrays"]) == n, journal  # each trial submitted once, whoever died
    shown = sweepgen(tmp_path, "status", "generated/fake_search")
    assert shown.returncode == 0 and f"{n}/{n}" in shown.stdout, shown.stdout
