"""A config the bundled trainer does not read, run without --command, is refused before any run
starts (exit 2 naming its keys and --command), so the right --command later needs no --rerun-failed."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.core.plan.tasks import BUNDLED_SECTIONS
from sweepgen.run.sweep import grid
from sweepgen_trainer.config import RunConfig

TRL = {"model_name_or_path": "Qwen/Qwen2-0.5B", "dataset_name": "trl-lib/tldr", "beta": 0.0}


def test_the_bundled_sections_are_the_trainer_s_config_fields():
    assert set(RunConfig.model_fields) == BUNDLED_SECTIONS


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_trl_config_without_command_is_refused_and_no_run_starts(tmp_path, monkeypatch, dry_run):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(grid, "check_bundled_trainer", lambda: None)  # as with the train extra
    configs = {f"beta{b}": {**TRL, "beta": b, "output_dir": f"runs/t/beta{b}"} for b in (0, 1)}
    make_config_sweep(
        tmp_path, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()}
    )
    result = CliRunner().invoke(main, ["run", "generated/t", *(["--dry-run"] if dry_run else [])])
    assert result.exit_code == 2, result.output
    assert "`dataset_name`, `model_name_or_path`" in result.stderr and "--command" in result.stderr
    assert "Traceback" not in result.output
    assert not Path("runs").exists()  # untouched: no run dir, no status, nothing failed-before
    # the right command then runs every run, no --rerun-failed needed
    command = f"{shlex.quote(sys.executable)} -c pass {{config}}"
    ran = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert ran.exit_code == 0, ran.output
