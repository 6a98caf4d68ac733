"""`--only` takes a seed group's name (the run name without its seed part, as `report` shows it), so
one naming scheme selects runs in `run`, `status` and `cancel`; run and variant names keep meaning
exactly their run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sweepgen.cli import main


@pytest.fixture
def sweep(project):
    (project / "cfg.yaml").write_text("seed: 1\nbeta: 0.0\nloss_type: grpo\noutput_dir: out\n")
    made = CliRunner().invoke(
        main,
        [
            "init",
            "--from",
            "cfg.yaml",
            "--grid",
            "beta=0,0.04",
            "--grid",
            "loss_type=grpo,dr_grpo",
            "--seeds",
            "2",
        ],
    )
    assert made.exit_code == 0, made.output
    return "generated/cfg"


def runs_of(sweep, *only):
    args = ["status", sweep, "--format", "json"] + [a for name in only for a in ("--only", name)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    return sorted(row["run"] for row in json.loads(done.stdout))


def test_a_group_name_selects_its_seeds(sweep):
    assert runs_of(sweep, "beta0.04-loss_type_dr_grpo") == [
        "beta0.04-loss_type_dr_grpo-seed1",
        "beta0.04-loss_type_dr_grpo-seed2",
    ]
    assert len(runs_of(sweep, "beta0-loss_type_grpo,beta0.04-loss_type_grpo-seed2")) == 3


def test_a_run_name_is_still_one_run_and_a_typo_still_an_error(sweep):
    assert runs_of(sweep, "beta0-loss_type_grpo-seed1") == ["beta0-loss_type_grpo-seed1"]
    done = CliRunner().invoke(main, ["status", sweep, "--only", "beta0.4-loss_type_grpo"])
    assert done.exit_code == 2 and "names no run of this sweep" in done.stderr


def test_run_takes_a_group_name_too(sweep):
    done = CliRunner().invoke(
        main, ["run", sweep, "--only", "beta0-loss_type_grpo", "--command", "echo {config}", "--dry-run"]
    )
    assert done.exit_code == 0, done.output
    assert "beta0-loss_type_grpo-seed2" in done.stdout and "beta0.04" not in done.stdout
