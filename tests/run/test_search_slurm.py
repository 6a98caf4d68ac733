"""A small search on the real test Slurm (tests/slurm_cluster.py): every trial a job, exactly n."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from search_support import RUN_ARGS, study, sweepgen, write_search_project

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


def test_pruning_is_refused_off_the_local_executor(tmp_path):
    write_search_project(tmp_path, {"prune": {"method": "asha", "min_steps": 2}})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--executor", "slurm", *RUN_ARGS)
    assert done.returncode == 2 and "needs the local executor" in done.stderr
    assert not Path(tmp_path / "runs").exists()
