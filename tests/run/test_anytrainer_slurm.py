"""The any-trainer paths on the real test Slurm (tests/slurm_cluster.py), in one module because the
session fixture may be imported by one test module only (a second import is a second fixture that
waits for the first one's lock): the rm_ablation ladder with the stand-in trainer and its report
table, and a foreign trainer's failed run, status with its log tail, and --rerun-failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from slurm_cluster import slurm_cluster  # noqa: F401 - the session fixture
from test_anytrainer_e2e import COMMAND as CSV_COMMAND
from test_anytrainer_e2e import cli, make, starts, status
from test_rm_ladder_run import COMMAND as RM_COMMAND
from test_rm_ladder_run import check_report, ladder  # noqa: F401 - fixture

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm_cluster")]


@pytest.mark.usefixtures("ladder")
def test_the_ladder_runs_on_slurm_and_reports_eval_accuracy():
    lock_path = Path("generated/rm_ablation/sweep.lock.json")
    lock = json.loads(lock_path.read_text())
    lock["resources"] = {"time": 5}  # what the spec's `resources:` block would say for the test cluster
    lock_path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    result = cli("run", "generated/rm_ablation", "--executor", "slurm", "--wait", "--command", RM_COMMAND)
    assert result.exit_code == 0, result.output
    statuses = [json.loads(p.read_text()) for p in Path("runs/rm_ablation").glob("*/sweepgen_status.json")]
    assert len(statuses) == 6 and {s["executor"] for s in statuses} == {"slurm"}
    assert all(s["state"] == "finished" and s["ids"].get("job_id") for s in statuses)
    print(check_report())


def test_a_foreign_trainer_on_slurm_fails_reports_and_reruns_only_its_failed_run(cli_cwd):
    make(cli_cwd)
    lock_path = Path("generated/csv/sweep.lock.json")
    lock = json.loads(lock_path.read_text())
    lock["resources"] = {"time": 5}  # what a spec's `resources:` block puts in the lock
    lock_path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    slurm = ("--executor", "slurm", "--wait", "--command", CSV_COMMAND)
    first = cli("run", "generated/csv", *slurm)
    assert first.exit_code == 1, first.output
    assert {n: status(n)["state"] for n in ("lr1", "lr2", "flaky", "nometric")} == {
        "lr1": "finished",
        "lr2": "finished",
        "flaky": "failed",
        "nometric": "finished",
    }
    shown = cli("status", "generated/csv")
    assert shown.exit_code == 1
    assert "csv_trainer: failing at step 1 as configured" in shown.stderr  # the log tail, from the node
    again = cli("run", "generated/csv", *slurm, "--rerun-failed")
    assert again.exit_code == 0, again.output
    assert {n: starts(n) for n in ("lr1", "lr2", "flaky", "nometric")} == {
        "lr1": 1,
        "lr2": 1,
        "flaky": 2,
        "nometric": 1,
    }
    report = cli("report", "generated/csv", "--metric", "acc", "--at", "best", "--no-plot")
    assert report.exit_code == 0
    best = "best run by best_acc (max is better: --mode min if a lower value is): "
    assert best + "lr1 = 0.800 at step 3" in report.stdout
