"""render → run → report → check through the real commands: the lock `render` writes is the one
`run` and `report` read (the fake trainer stands in for training, so this stays fast)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest
from run_support import FAKE_COMMAND

SPEC = """\
sweepgen: 1
name: fake_grid
template: ../templates/fake.yaml.j2
output: "{{ variant.name }}.yaml"
base:
  output_dir: runs/fake_grid/base
  fake: {steps: 3}
  beta: 0.1
  seed: 1
grid:
  beta: [0.1, 0.2]
  seed: [1, 2]
"""
# the template computes each run's output_dir from its run name; `run` follows the rendered file
TEMPLATE = """\
output_dir: runs/{{ sweep.name }}/{{ variant.run_name }}
seed: {{ seed }}
beta: {{ beta }}
fake:
  steps: {{ fake.steps }}
  reward_end: {{ beta * 2 + seed / 10 }}
"""


def sweepgen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )


@pytest.mark.train  # report's PNG needs matplotlib, from the [train] extra
def test_render_run_report_check(project):
    (project / "specs/fake_grid.yaml").write_text(SPEC)
    (project / "templates/fake.yaml.j2").write_text(TEMPLATE)
    assert sweepgen("render", "specs/fake_grid.yaml").returncode == 0

    run = sweepgen("run", "generated/fake_grid", "--jobs", "2", "--command", FAKE_COMMAND)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.name for p in (project / "runs/fake_grid").iterdir()) == [
        "beta0.1_seed1",
        "beta0.1_seed2",
        "beta0.2_seed1",
        "beta0.2_seed2",
    ]

    report = sweepgen("report", "generated/fake_grid")
    assert report.returncode == 0, report.stderr
    with open(project / "runs/fake_grid/report.csv") as fh:
        rows = {r["run"]: r for r in csv.DictReader(fh)}
    # the varying values come from the lock render wrote; final rewards from each run's summary
    assert rows["beta0.2_seed1"]["beta"] == "0.2" and rows["beta0.2_seed1"]["seed"] == "1"
    assert float(rows["beta0.2_seed2"]["final_reward"]) == pytest.approx(0.6)
    # seeds folded per beta: the groups are named by the variant without its seed part
    assert "beta0.1 " in report.stdout and "beta0.2 " in report.stdout and "95% t interval" in report.stdout

    check = sweepgen("check", "specs/fake_grid.yaml")  # running and reporting touched no generated file
    assert check.returncode == 0, check.stdout + check.stderr
